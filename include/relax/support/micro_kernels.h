// The built-in micro-kernels (relax/ir/micro_kernel.h): hand-written float32
// loops a PrimFunc calls with `call_extern`, and the one-row int4 matmul the
// matmul schedule calls (src/transform/schedule/matmul_schedule.cc).
//
// The registry compiles this file into the library (the evaluator's host
// functions) and the C++ code generator copies its text verbatim, once, into
// each generated unit that calls one of them (embedded by src/CMakeLists.txt),
// so that the two are the same code. Hence the constraints: C++17, no relax
// includes, `static inline` functions, include guards (the generated source is a
// main file, not a header).
//
// The loops are written for the compiler's vectoriser without -ffast-math: a
// reduction keeps 16 independent partial sums (a fixed-size inner loop g++ turns
// into packed FMAs), summed in a fixed order at the end, so the result does not
// depend on the ISA the unit is compiled for.
#ifndef RELAX_SUPPORT_MICRO_KERNELS_H_
#define RELAX_SUPPORT_MICRO_KERNELS_H_

#include <cstdint>

#if defined(__GNUC__)
#define RELAX_MK_RESTRICT __restrict__
#else
#define RELAX_MK_RESTRICT
#endif

/// *out = sum over i < n of x[i] * y[i].
static inline void relax_dot_f32(const float* RELAX_MK_RESTRICT x, const float* RELAX_MK_RESTRICT y,
                                 int64_t n, float* RELAX_MK_RESTRICT out) {
  float partial[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int k = 0; k < 16; ++k) partial[k] += x[i + k] * y[i + k];
  }
  float tail = 0.0f;
  for (; i < n; ++i) tail += x[i] * y[i];
  float sum = 0.0f;
  for (int k = 0; k < 16; ++k) sum += partial[k];
  *out = sum + tail;
}

/// y[i] += a * x[i] for i < n.
static inline void relax_axpy_f32(float a, const float* RELAX_MK_RESTRICT x, int64_t n,
                                  float* RELAX_MK_RESTRICT y) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

/// One row against group-wise int4 weights (two 4-bit weights per byte, the
/// low nibble first, and a float scale per 32 rows), for j < cols:
///   y[j] = sum over k < depth of
///          x[k] * (((q[k / 2 * stride + j] >> 4 * (k % 2)) & 15) - 8) * s[k / 32 * stride + j]
/// with depth a multiple of 32 and the rows of q and s `stride` elements apart.
/// Per group of 32 k it sums x[k] * nibble and x[k] apart and applies the
/// offset and the scale once, (sum x * nibble - 8 * sum x) * s: the float sums
/// are reassociated. 128 columns at a time go through vectors (GCC and clang
/// vector extensions): a 32-bit lane holds the bytes of 4 neighbouring
/// columns, each nibble is masked in place (a value times a power of two) and
/// converted exactly, and the powers of two are taken out once per group; the
/// accumulators of column 4l + b are lane l of vector b, reordered with the
/// scales once per group. The remaining columns go one at a time.
#if defined(__GNUC__)
typedef float relax_mk_f32x16 __attribute__((vector_size(64)));
typedef int32_t relax_mk_i32x16 __attribute__((vector_size(64)));
typedef uint32_t relax_mk_u32x16 __attribute__((vector_size(64)));
#if defined(__clang__)
#define RELAX_MK_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define RELAX_MK_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, relax_mk_i32x16{__VA_ARGS__})
#endif
// Lane l of the result is element 4 l + B of the 64 floats v[0..3].
#define RELAX_MK_STRIDE4(v, B)                                                                              \
  RELAX_MK_SHUFFLE(RELAX_MK_SHUFFLE(v[0], v[1], B, 4 + B, 8 + B, 12 + B, 16 + B, 20 + B, 24 + B, 28 + B, B,  \
                                    B, B, B, B, B, B, B),                                                   \
                   RELAX_MK_SHUFFLE(v[2], v[3], B, 4 + B, 8 + B, 12 + B, 16 + B, 20 + B, 24 + B, 28 + B, B,  \
                                    B, B, B, B, B, B, B),                                                   \
                   0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)
#endif

static inline void relax_int4_row_f32(const float* RELAX_MK_RESTRICT x, const uint8_t* RELAX_MK_RESTRICT q,
                                      const float* RELAX_MK_RESTRICT s, int64_t depth, int64_t cols, int64_t stride,
                                      float* RELAX_MK_RESTRICT y) {
  const int64_t groups = depth / 32;
  int64_t j0 = 0;
#if defined(__GNUC__)
  constexpr int kChunks = 2;  // 64 columns each
  for (; j0 + 64 * kChunks <= cols; j0 += 64 * kChunks) {
    relax_mk_f32x16 out[kChunks][4] = {};
    for (int64_t g = 0; g < groups; ++g) {
      const float* xg = x + g * 32;
      float xsum = 0.0f;
      for (int k = 0; k < 32; ++k) xsum += xg[k];
      // lo[c][b] lane l: 2^(8 b) * sum of x[even k] * nibble, column j0 + 64 c + 4 l + b;
      // hi[c][b]: 2^(8 b + 4) * the same over odd k (b = 3: 2^24, from the word shifted by 4).
      relax_mk_f32x16 lo[kChunks][4] = {}, hi[kChunks][4] = {};
      const uint8_t* rows = q + g * 16 * stride + j0;
      for (int kp = 0; kp < 16; ++kp) {
        const float x0 = xg[2 * kp], x1 = xg[2 * kp + 1];
        for (int c = 0; c < kChunks; ++c) {
          relax_mk_u32x16 word;
          __builtin_memcpy(&word, rows + kp * stride + 64 * c, 64);
          const relax_mk_i32x16 w = (relax_mk_i32x16)word, w4 = (relax_mk_i32x16)(word >> 4);
          lo[c][0] += x0 * __builtin_convertvector(w & 0xF, relax_mk_f32x16);
          hi[c][0] += x1 * __builtin_convertvector(w & 0xF0, relax_mk_f32x16);
          lo[c][1] += x0 * __builtin_convertvector(w & 0xF00, relax_mk_f32x16);
          hi[c][1] += x1 * __builtin_convertvector(w & 0xF000, relax_mk_f32x16);
          lo[c][2] += x0 * __builtin_convertvector(w & 0xF0000, relax_mk_f32x16);
          hi[c][2] += x1 * __builtin_convertvector(w & 0xF00000, relax_mk_f32x16);
          lo[c][3] += x0 * __builtin_convertvector(w & 0xF000000, relax_mk_f32x16);
          hi[c][3] += x1 * __builtin_convertvector(w4 & 0xF000000, relax_mk_f32x16);
        }
      }
      const float offset = -8.0f * xsum;
      for (int c = 0; c < kChunks; ++c) {
        relax_mk_f32x16 scale[4];
        __builtin_memcpy(scale, s + g * stride + j0 + 64 * c, sizeof scale);
        out[c][0] += (lo[c][0] + hi[c][0] * 0x1p-4f + offset) * RELAX_MK_STRIDE4(scale, 0);
        out[c][1] += (lo[c][1] * 0x1p-8f + hi[c][1] * 0x1p-12f + offset) * RELAX_MK_STRIDE4(scale, 1);
        out[c][2] += (lo[c][2] * 0x1p-16f + hi[c][2] * 0x1p-20f + offset) * RELAX_MK_STRIDE4(scale, 2);
        out[c][3] += ((lo[c][3] + hi[c][3]) * 0x1p-24f + offset) * RELAX_MK_STRIDE4(scale, 3);
      }
    }
    for (int c = 0; c < kChunks; ++c) {
      for (int b = 0; b < 4; ++b) {
        for (int l = 0; l < 16; ++l) y[j0 + 64 * c + 4 * l + b] = out[c][b][l];
      }
    }
  }
#endif
  for (; j0 < cols; ++j0) {
    float total = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      float dot = 0.0f, xsum = 0.0f;
      for (int64_t k = g * 32; k < g * 32 + 32; ++k) {
        dot += x[k] * static_cast<float>((q[k / 2 * stride + j0] >> (4 * (k % 2))) & 15);
        xsum += x[k];
      }
      total += (dot - 8.0f * xsum) * s[g * stride + j0];
    }
    y[j0] = total;
  }
}

#endif  // RELAX_SUPPORT_MICRO_KERNELS_H_
