// The built-in micro-kernels (relax/ir/micro_kernel.h): hand-written float32
// loops a PrimFunc calls with `call_extern`, and the matmuls the matmul
// schedule calls: int4 weights against one row in float32 (exact float
// products) or int4 / int8 weights against many rows at once with the activations
// quantised to int8 and integer dot products (relax_int4_rows_i8,
// relax_int8_rows_i8), and float32 / bfloat16
// weights against many rows at once (relax_f32_rows, relax_bf16_rows): the
// "rows kernels", which read each weight once for all the rows of a call.
//
// The registry compiles this file into the library (the evaluator's host
// functions) and the C++ code generator copies its text verbatim, once, into
// each generated unit that calls one of them (embedded into the library at build time),
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

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__AVX512F__) || defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif
// The integer dot products of the int8 rows kernels: AVX-512 VNNI (64 columns a step), else
// AVX-VNNI on AVX2 (32 columns a step, the VEX form of vpdpbusd), else portable loops.
#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512F__)
#define RELAX_MK_VNNI512 1
#elif defined(__AVXVNNI__) && defined(__AVX2__)
#define RELAX_MK_VNNI256 1
#endif
#if defined(RELAX_MK_VNNI512) || defined(RELAX_MK_VNNI256)
#define RELAX_MK_VNNI 1
// GCC 12's intrinsics headers trip -Wmaybe-uninitialized in _mm512_set1_* at -O3 (their own
// `__Y`), a false alarm; the kernels below are compiled without it (popped at the end).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define RELAX_MK_DIAGNOSTIC_PUSHED 1
#endif
#endif

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

// Scratch memory for one call of a kernel, 64-byte aligned. In generated code (which defines
// RELAX_MK_RUNTIME_SCRATCH) it is the calling thread's block held by relax's runtime, kept for the
// thread's next call: a kernel called per column block would otherwise pay an allocation, and
// above glibc's mmap threshold page faults, per call. The header keeps no per-thread state
// itself: a library is dlclose'd while the runtime's threads live on, and a per-thread variable
// with a destructor left behind by it is what the leak sanitizer's thread scan crashed on. Elsewhere, or without a runtime, the block is allocated for the call.
// get() is null only when no memory could be had; the kernels then take a path without scratch.
class relax_mk_scratch {
 public:
  explicit relax_mk_scratch(size_t bytes) {
#if defined(RELAX_MK_RUNTIME_SCRATCH)
    p_ = RELAX_MK_RUNTIME_SCRATCH(bytes);
#endif
    if (p_ == nullptr) {
      p_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
      owned_ = true;
    }
  }
  ~relax_mk_scratch() {
    if (owned_) std::free(p_);
  }
  relax_mk_scratch(const relax_mk_scratch&) = delete;
  relax_mk_scratch& operator=(const relax_mk_scratch&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  bool owned_ = false;
};

/// The activations of relax_int4_rows_i8 and relax_int8_rows_i8: rows of x (row r at x + r *
/// ldx) quantised per group of 32 to int8, q = round(x * 127 / m), m the group's max |x| (a group
/// of zeros: all 0); the scale m / 127 in xd[r * groups + g], -`offset` times the sum of the
/// group's q in xo (the weights are multiplied as unsigned bytes, their value plus `offset`: 8 for
/// int4's nibbles, 128 for int8; the sum takes it off once per group). Within each 4 consecutive
/// k the bytes are stored in the order k0, k2, k1, k3: the order the kernels unpack the weights to.
static inline void relax_mk_quantize_rows(const float* RELAX_MK_RESTRICT x, int64_t rows, int64_t ldx, int64_t depth,
                                          int32_t offset, int8_t* RELAX_MK_RESTRICT xq, float* RELAX_MK_RESTRICT xd,
                                          int32_t* RELAX_MK_RESTRICT xo) {
  static const int kLane[4] = {0, 2, 1, 3};
  const int64_t groups = depth / 32;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* v = x + r * ldx + g * 32;
      float amax = 0.0f;
      bool finite = true;
      for (int k = 0; k < 32; ++k) {
        amax = std::fmax(amax, std::fabs(v[k]));
        finite = finite && std::isfinite(v[k]);
      }
      int8_t* out = xq + r * depth + g * 32;
      if (!finite) {
        // An infinity or NaN: the group's scale is NaN, so that every output of the row is
        // NaN, as the float product's would be non-finite (no finite garbage).
        for (int k = 0; k < 32; ++k) out[k] = 0;
        xd[r * groups + g] = std::numeric_limits<float>::quiet_NaN();
        xo[r * groups + g] = 0;
        continue;
      }
      const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
      int32_t sum = 0;
      for (int k = 0; k < 32; ++k) {
        const int32_t iv = static_cast<int32_t>(std::nearbyint(v[k] * inv));
        sum += iv;
        out[(k & ~3) + kLane[k & 3]] = static_cast<int8_t>(iv);
      }
      xd[r * groups + g] = amax / 127.0f;
      xo[r * groups + g] = -offset * sum;
    }
  }
}

#if RELAX_MK_VNNI
// The vector operations of the int8 rows kernels at one width. A step takes kCols columns as 4
// vectors of kLanes 32-bit lanes; unpacking the bytes of 4 consecutive k into one lane (unpacks
// within 128-bit blocks) leaves block L of vector m holding columns 16 L + 4 m + 0..3, so the
// scales go into that order (to_lanes) and the sums come back out of it (from_lanes).
#if RELAX_MK_VNNI512
struct relax_mk_vnni {
  using ints = __m512i;
  using floats = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kCols = 64;
  static ints load(const void* p) { return _mm512_loadu_si512(p); }
  static ints bytes(char v) { return _mm512_set1_epi8(v); }
  static ints words(int32_t v) { return _mm512_set1_epi32(v); }
  static ints and_(ints a, ints b) { return _mm512_and_si512(a, b); }
  static ints xor_(ints a, ints b) { return _mm512_xor_si512(a, b); }
  static ints high_nibbles(ints a) { return _mm512_srli_epi16(a, 4); }
  static ints lo8(ints a, ints b) { return _mm512_unpacklo_epi8(a, b); }
  static ints hi8(ints a, ints b) { return _mm512_unpackhi_epi8(a, b); }
  static ints lo16(ints a, ints b) { return _mm512_unpacklo_epi16(a, b); }
  static ints hi16(ints a, ints b) { return _mm512_unpackhi_epi16(a, b); }
  static ints dot(ints acc, ints u8, ints s8) { return _mm512_dpbusd_epi32(acc, u8, s8); }
  static floats loadu(const float* p) { return _mm512_loadu_ps(p); }
  static floats load_aligned(const float* p) { return _mm512_load_ps(p); }
  static void store_aligned(float* p, floats v) { _mm512_store_ps(p, v); }
  static void storeu(float* p, floats v) { _mm512_storeu_ps(p, v); }
  static floats splat(float v) { return _mm512_set1_ps(v); }
  static floats to_float(ints v) { return _mm512_cvtepi32_ps(v); }
  static floats mul(floats a, floats b) { return _mm512_mul_ps(a, b); }
  static floats fmadd(floats a, floats b, floats c) { return _mm512_fmadd_ps(a, b, c); }
  // The 4 x 4 transpose of the 128-bit blocks: block L of out[m] is block m of in[L]. Its own
  // inverse, so both directions.
  static void transpose(const floats in[4], floats out[4]) {
    const floats u0 = _mm512_shuffle_f32x4(in[0], in[1], 0x44), u1 = _mm512_shuffle_f32x4(in[0], in[1], 0xEE);
    const floats u2 = _mm512_shuffle_f32x4(in[2], in[3], 0x44), u3 = _mm512_shuffle_f32x4(in[2], in[3], 0xEE);
    out[0] = _mm512_shuffle_f32x4(u0, u2, 0x88);
    out[1] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
    out[2] = _mm512_shuffle_f32x4(u1, u3, 0x88);
    out[3] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
  }
  static void to_lanes(const floats in[4], floats out[4]) { transpose(in, out); }
  static void from_lanes(const floats in[4], floats out[4]) { transpose(in, out); }
};
#else
struct relax_mk_vnni {
  using ints = __m256i;
  using floats = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kCols = 32;
  static ints load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static ints bytes(char v) { return _mm256_set1_epi8(v); }
  static ints words(int32_t v) { return _mm256_set1_epi32(v); }
  static ints and_(ints a, ints b) { return _mm256_and_si256(a, b); }
  static ints xor_(ints a, ints b) { return _mm256_xor_si256(a, b); }
  static ints high_nibbles(ints a) { return _mm256_srli_epi16(a, 4); }
  static ints lo8(ints a, ints b) { return _mm256_unpacklo_epi8(a, b); }
  static ints hi8(ints a, ints b) { return _mm256_unpackhi_epi8(a, b); }
  static ints lo16(ints a, ints b) { return _mm256_unpacklo_epi16(a, b); }
  static ints hi16(ints a, ints b) { return _mm256_unpackhi_epi16(a, b); }
  static ints dot(ints acc, ints u8, ints s8) { return _mm256_dpbusd_avx_epi32(acc, u8, s8); }
  static floats loadu(const float* p) { return _mm256_loadu_ps(p); }
  static floats load_aligned(const float* p) { return _mm256_load_ps(p); }
  static void store_aligned(float* p, floats v) { _mm256_store_ps(p, v); }
  static void storeu(float* p, floats v) { _mm256_storeu_ps(p, v); }
  static floats splat(float v) { return _mm256_set1_ps(v); }
  static floats to_float(ints v) { return _mm256_cvtepi32_ps(v); }
  static floats mul(floats a, floats b) { return _mm256_mul_ps(a, b); }
  static floats fmadd(floats a, floats b, floats c) { return _mm256_fmadd_ps(a, b, c); }
  // Column order (in[i]: columns 8 i + 0..7) -> lane order: out[m] = columns 4 m + 0..3, then
  // 16 + 4 m + 0..3.
  static void to_lanes(const floats in[4], floats out[4]) {
    out[0] = _mm256_permute2f128_ps(in[0], in[2], 0x20);
    out[1] = _mm256_permute2f128_ps(in[0], in[2], 0x31);
    out[2] = _mm256_permute2f128_ps(in[1], in[3], 0x20);
    out[3] = _mm256_permute2f128_ps(in[1], in[3], 0x31);
  }
  static void from_lanes(const floats in[4], floats out[4]) {
    out[0] = _mm256_permute2f128_ps(in[0], in[1], 0x20);
    out[1] = _mm256_permute2f128_ps(in[2], in[3], 0x20);
    out[2] = _mm256_permute2f128_ps(in[0], in[1], 0x31);
    out[3] = _mm256_permute2f128_ps(in[2], in[3], 0x31);
  }
};
#endif

// The bytes of k = 0..3 of a step's columns, as the bytes (k0, k2, k1, k3) of each column's lane
// (unsigned: the weight plus 8 or 128), given each k's bytes: the byte interleave both widths share.
static inline void relax_mk_interleave_quad(relax_mk_vnni::ints k0, relax_mk_vnni::ints k1, relax_mk_vnni::ints k2,
                                            relax_mk_vnni::ints k3, relax_mk_vnni::ints w[4]) {
  using V = relax_mk_vnni;
  const V::ints t0 = V::lo8(k0, k2), t1 = V::hi8(k0, k2);
  const V::ints t2 = V::lo8(k1, k3), t3 = V::hi8(k1, k3);
  w[0] = V::lo16(t0, t2);
  w[1] = V::hi16(t0, t2);
  w[2] = V::lo16(t1, t3);
  w[3] = V::hi16(t1, t3);
}

// Quad kq of a group's weights (qg: the group's first row of bytes at the step's columns):
// Bits 4, two k per byte (rows q[2 kq] and q[2 kq + 1] hold k0, k1 and k2, k3 as nibbles), or
// 8, one k per row of signed bytes (flipped to unsigned).
template <int Bits>
static inline void relax_mk_unpack_group_quad(const uint8_t* qg, int64_t stride, int kq, relax_mk_vnni::ints w[4]) {
  using V = relax_mk_vnni;
  if (Bits == 4) {
    const V::ints low = V::bytes(0x0F);
    const V::ints a = V::load(qg + 2 * kq * stride), b = V::load(qg + (2 * kq + 1) * stride);
    relax_mk_interleave_quad(V::and_(a, low), V::and_(V::high_nibbles(a), low), V::and_(b, low),
                             V::and_(V::high_nibbles(b), low), w);
  } else {
    const V::ints flip = V::bytes(static_cast<char>(0x80));
    const uint8_t* q = qg + 4 * kq * stride;
    relax_mk_interleave_quad(V::xor_(V::load(q), flip), V::xor_(V::load(q + stride), flip),
                             V::xor_(V::load(q + 2 * stride), flip), V::xor_(V::load(q + 3 * stride), flip), w);
  }
}

// acc[r] += float(dot[r]) * scale * d[r] for the R rows of one group (d: the rows' scales).
template <int R>
static inline void relax_mk_i8_scale_rows(const relax_mk_vnni::ints dot[R][4], const relax_mk_vnni::floats scale[4],
                                          const float* xd, int64_t groups, float* acc, int64_t ldacc) {
  using V = relax_mk_vnni;
  for (int r = 0; r < R; ++r) {
    const V::floats d = V::splat(xd[r * groups]);
    float* a = acc + r * ldacc;
    for (int m = 0; m < 4; ++m) {
      V::store_aligned(a + V::kLanes * m, V::fmadd(V::to_float(dot[r][m]), V::mul(scale[m], d),
                                                  V::load_aligned(a + V::kLanes * m)));
    }
  }
}

// R rows of one group against the unpacked weights w of a step's columns: the integer dot
// products (from the rows' offsets xo), scaled by the rows' and the weights' scales into acc.
template <int R>
static inline void relax_mk_i8_group_rows(const relax_mk_vnni::ints w[8][4], const relax_mk_vnni::floats scale[4],
                                          const int8_t* xq, int64_t depth, const float* xd, const int32_t* xo,
                                          int64_t groups, float* acc, int64_t ldacc) {
  using V = relax_mk_vnni;
  V::ints dot[R][4];
  for (int r = 0; r < R; ++r) {
    for (int m = 0; m < 4; ++m) dot[r][m] = V::words(xo[r * groups]);
  }
  for (int kq = 0; kq < 8; ++kq) {
    for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, xq + r * depth + 4 * kq, 4);
      const V::ints b = V::words(quad);
      for (int m = 0; m < 4; ++m) dot[r][m] = V::dot(dot[r][m], w[kq][m], b);
    }
  }
  relax_mk_i8_scale_rows<R>(dot, scale, xd, groups, acc, ldacc);
}

// One row of one group against a step's columns, each quad of k unpacked and multiplied at once
// (no copy of the unpacked weights to memory, which makes the one-row case read faster).
template <int Bits>
static inline void relax_mk_i8_group_fused(const uint8_t* qg, int64_t stride, const relax_mk_vnni::floats scale[4],
                                           const int8_t* xq, const float* xd, const int32_t* xo, int64_t groups,
                                           float* acc, int64_t ldacc) {
  using V = relax_mk_vnni;
  V::ints dot[1][4];
  for (int m = 0; m < 4; ++m) dot[0][m] = V::words(xo[0]);
  for (int kq = 0; kq < 8; ++kq) {
    V::ints w[4];
    relax_mk_unpack_group_quad<Bits>(qg, stride, kq, w);
    int32_t quad;
    std::memcpy(&quad, xq + 4 * kq, 4);
    const V::ints x4 = V::words(quad);
    for (int m = 0; m < 4; ++m) dot[0][m] = V::dot(dot[0][m], w[m], x4);
  }
  relax_mk_i8_scale_rows<1>(dot, scale, xd, groups, acc, ldacc);
}

// The scales of a step's columns of one group in lane order.
static inline void relax_mk_i8_scales(const float* sg, relax_mk_vnni::floats scale[4]) {
  using V = relax_mk_vnni;
  const V::floats sv[4] = {V::loadu(sg), V::loadu(sg + V::kLanes), V::loadu(sg + 2 * V::kLanes),
                           V::loadu(sg + 3 * V::kLanes)};
  V::to_lanes(sv, scale);
}
#endif

// Rows r < rows of x (row r at x + r * ldx, depth elements) against group-wise weights of Bits
// 4 (relax_int4_rows_i8) or 8 (relax_int8_rows_i8), for j < cols: y[r * ldy + j]. One pass over
// the weights for all the rows, the rows quantised to int8 per group of 32
// (relax_mk_quantize_rows), so the result is
//   sum over groups g of s[g, j] * d[r, g] * sum over k in g of q_x[r, k] * w(k, j)
// with exact integer inner sums: it differs from the float product by the activations'
// rounding, at most d[r, g] / 2 = max |x in the group| / 254 per element.
// With AVX-512 VNNI and BW, 64 columns at a time (with AVX-VNNI on AVX2, 32): the weights of 4
// consecutive k of a column are
// unpacked into the 4 bytes of a 32-bit lane as unsigned bytes (their value plus 8 or 128,
// taken off through the rows' sums; a fixed permutation of the columns, undone on the scales and
// on the way out) and multiplied by vpdpbusd; the other columns (all of them without VNNI)
// compute the same sums one column at a time.
template <int Bits>
static inline void relax_mk_rows_i8(const float* RELAX_MK_RESTRICT x, int64_t rows, int64_t ldx,
                                    const uint8_t* RELAX_MK_RESTRICT q, const float* RELAX_MK_RESTRICT s,
                                    int64_t depth, int64_t cols, int64_t stride, float* RELAX_MK_RESTRICT y,
                                    int64_t ldy) {
  constexpr int32_t kOffset = Bits == 4 ? 8 : 128;
  // Weight (k, j) as the unsigned byte the products take (its value plus kOffset).
  auto unsigned_weight = [&](int64_t k, int64_t j) -> int32_t {
    if (Bits == 4) return (q[k / 2 * stride + j] >> (4 * (k % 2))) & 15;
    return static_cast<int32_t>(static_cast<int8_t>(q[k * stride + j])) + 128;
  };
  if (rows <= 0 || cols <= 0) return;
  const int64_t groups = depth / 32;
  const int64_t ldacc = (cols + 63) / 64 * 64;
  const size_t bytes_q = static_cast<size_t>(rows * depth + 63) / 64 * 64;
  const size_t bytes_g = static_cast<size_t>(rows * groups * 4 + 63) / 64 * 64;
  const relax_mk_scratch block(bytes_q + 2 * bytes_g + static_cast<size_t>(rows * ldacc) * 4);
  char* scratch = static_cast<char*>(block.get());
  if (scratch == nullptr) {  // no memory for the int8 rows: float products, one row at a time
    for (int64_t r = 0; r < rows; ++r) {
      if (Bits == 4) {
        relax_int4_row_f32(x + r * ldx, q, s, depth, cols, stride, y + r * ldy);
        continue;
      }
      for (int64_t j = 0; j < cols; ++j) {
        float total = 0.0f;
        for (int64_t k = 0; k < depth; ++k) {
          total += x[r * ldx + k] * (static_cast<float>(unsigned_weight(k, j) - kOffset) * s[k / 32 * stride + j]);
        }
        y[r * ldy + j] = total;
      }
    }
    return;
  }
  int8_t* xq = reinterpret_cast<int8_t*>(scratch);
  float* xd = reinterpret_cast<float*>(scratch + bytes_q);
  int32_t* xo = reinterpret_cast<int32_t*>(scratch + bytes_q + bytes_g);
  relax_mk_quantize_rows(x, rows, ldx, depth, kOffset, xq, xd, xo);
  int64_t vector_cols = 0;
#if RELAX_MK_VNNI
  using V = relax_mk_vnni;
  constexpr int64_t kGroupRows = Bits == 4 ? 16 : 32;  // rows of bytes per group of 32 k
  vector_cols = cols / V::kCols * V::kCols;
  float* acc = reinterpret_cast<float*>(scratch + bytes_q + 2 * bytes_g);
  std::memset(acc, 0, static_cast<size_t>(rows * ldacc) * 4);
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* qg = q + g * kGroupRows * stride;
    for (int64_t j0 = 0; j0 < vector_cols; j0 += V::kCols) {
      // The bytes and scales of these columns two groups on, into L2 (each of a group's rows
      // of bytes is another page, which the hardware prefetcher does not follow in time).
      if (g + 2 < groups) {
        const uint8_t* ahead = q + (g + 2) * kGroupRows * stride + j0;
        for (int kp = 0; kp < kGroupRows; ++kp) __builtin_prefetch(ahead + kp * stride, 0, 2);
        for (int line = 0; line < V::kCols / 16; ++line) __builtin_prefetch(s + (g + 2) * stride + j0 + 16 * line, 0, 2);
      }
      V::floats scale[4];
      relax_mk_i8_scales(s + g * stride + j0, scale);
      if (rows == 1) {
        relax_mk_i8_group_fused<Bits>(qg + j0, stride, scale, xq + g * 32, xd + g, xo + g, groups, acc + j0, ldacc);
        continue;
      }
      // k = 4 kq + 0..3 of the step's columns in lane order, as the bytes (k0, k2, k1, k3) of
      // each column's lane.
      V::ints w[8][4];
      for (int kq = 0; kq < 8; ++kq) relax_mk_unpack_group_quad<Bits>(qg + j0, stride, kq, w[kq]);
      int64_t r = 0;
      for (; r + 4 <= rows; r += 4) {
        relax_mk_i8_group_rows<4>(w, scale, xq + r * depth + g * 32, depth, xd + r * groups + g,
                                  xo + r * groups + g, groups, acc + r * ldacc + j0, ldacc);
      }
      const int64_t left = rows - r;
      const int8_t* xr = xq + r * depth + g * 32;
      if (left == 3) relax_mk_i8_group_rows<3>(w, scale, xr, depth, xd + r * groups + g, xo + r * groups + g, groups, acc + r * ldacc + j0, ldacc);
      if (left == 2) relax_mk_i8_group_rows<2>(w, scale, xr, depth, xd + r * groups + g, xo + r * groups + g, groups, acc + r * ldacc + j0, ldacc);
      if (left == 1) relax_mk_i8_group_rows<1>(w, scale, xr, depth, xd + r * groups + g, xo + r * groups + g, groups, acc + r * ldacc + j0, ldacc);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j0 = 0; j0 < vector_cols; j0 += V::kCols) {
      const float* a = acc + r * ldacc + j0;
      const V::floats v[4] = {V::load_aligned(a), V::load_aligned(a + V::kLanes), V::load_aligned(a + 2 * V::kLanes),
                              V::load_aligned(a + 3 * V::kLanes)};
      V::floats out[4];
      V::from_lanes(v, out);
      for (int m = 0; m < 4; ++m) V::storeu(y + r * ldy + j0 + V::kLanes * m, out[m]);
    }
  }
#endif
  static const int kLane[4] = {0, 2, 1, 3};
  for (int64_t j = vector_cols; j < cols; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      float total = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        int32_t dot = xo[r * groups + g];
        for (int k = 0; k < 32; ++k) {
          dot += unsigned_weight(g * 32 + k, j) * xq[r * depth + g * 32 + (k & ~3) + kLane[k & 3]];
        }
        total += static_cast<float>(dot) * (s[g * stride + j] * xd[r * groups + g]);
      }
      y[r * ldy + j] = total;
    }
  }
}

/// Rows r < rows of x against the group-wise int4 weights of relax_int4_row_f32 (q[k / 2 *
/// stride + j], the nibble minus 8; scales s[k / 32 * stride + j], depth a multiple of 32), for j
/// < cols: y[r * ldy + j], the rows quantised to int8 (relax_mk_rows_i8 and its bound).
static inline void relax_int4_rows_i8(const float* RELAX_MK_RESTRICT x, int64_t rows, int64_t ldx,
                                      const uint8_t* RELAX_MK_RESTRICT q, const float* RELAX_MK_RESTRICT s,
                                      int64_t depth, int64_t cols, int64_t stride, float* RELAX_MK_RESTRICT y,
                                      int64_t ldy) {
  relax_mk_rows_i8<4>(x, rows, ldx, q, s, depth, cols, stride, y, ldy);
}

/// The same for group-wise int8 weights: q[k * stride + j] (signed bytes), scales s[k / 32 *
/// stride + j] (op::dequantize's layout with bits=8, group_size=32, axis=0).
static inline void relax_int8_rows_i8(const float* RELAX_MK_RESTRICT x, int64_t rows, int64_t ldx,
                                      const int8_t* RELAX_MK_RESTRICT q, const float* RELAX_MK_RESTRICT s,
                                      int64_t depth, int64_t cols, int64_t stride, float* RELAX_MK_RESTRICT y,
                                      int64_t ldy) {
  relax_mk_rows_i8<8>(x, rows, ldx, reinterpret_cast<const uint8_t*>(q), s, depth, cols, stride, y, ldy);
}

// ---------------------------------------------------------------------------
// Float weights, up to 16 rows in one pass: relax_f32_rows, relax_f16_rows and relax_bf16_rows.

// float16 weights (IEEE binary16, their bits): a type of their own so that the loads below
// widen them as float16, not as bfloat16.
struct relax_mk_half {
  uint16_t bits;
};

#if defined(__GNUC__)
typedef uint16_t relax_mk_u16x32 __attribute__((vector_size(64)));

// The 64 columns of row k of the weights as 4 vectors of floats: float32 in column order;
// bfloat16 (its 16 bits the high half of a float) as the even then the odd columns of each 32.
static inline void relax_mk_load_weights(const float* w, relax_mk_f32x16 out[4]) {
  // Each vector copied into a local first: copied into out[] directly, g++ 12 moves the bytes
  // through the stack and keeps the sums there too, which makes the kernel much slower.
  for (int m = 0; m < 4; ++m) {
    relax_mk_f32x16 v;
    __builtin_memcpy(&v, w + 16 * m, sizeof v);
    out[m] = v;
  }
}
static inline void relax_mk_load_weights(const uint16_t* w, relax_mk_f32x16 out[4]) {
  for (int h = 0; h < 2; ++h) {
    relax_mk_u32x16 pairs;
    __builtin_memcpy(&pairs, w + 32 * h, sizeof pairs);
    const relax_mk_u32x16 even = pairs << 16, odd = pairs & 0xFFFF0000u;
    __builtin_memcpy(&out[2 * h], &even, sizeof even);
    __builtin_memcpy(&out[2 * h + 1], &odd, sizeof odd);
  }
}

static inline float relax_mk_weight(const relax_mk_half* w, int64_t at);
// float16 in column order, each widened exactly: vcvtph2ps with AVX-512 or F16C (g++ 12 turns
// __builtin_convertvector of _Float16 into one scalar conversion per element); one at a time
// elsewhere.
static inline void relax_mk_load_weights(const relax_mk_half* w, relax_mk_f32x16 out[4]) {
#if defined(__AVX512F__)
  for (int m = 0; m < 4; ++m) {
    const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 * m)));
    __builtin_memcpy(&out[m], &v, sizeof v);
  }
#elif defined(__F16C__)
  for (int m = 0; m < 4; ++m) {
    for (int h = 0; h < 2; ++h) {
      const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16 * m + 8 * h)));
      __builtin_memcpy(reinterpret_cast<char*>(&out[m]) + 32 * h, &v, sizeof v);
    }
  }
#else
  for (int m = 0; m < 4; ++m) {
    for (int l = 0; l < 16; ++l) out[m][l] = relax_mk_weight(w, 16 * m + l);
  }
#endif
}

// Whether relax_mk_load_weights gives a block's columns interleaved (bfloat16: the even then
// the odd columns of each 32) rather than in order.
static constexpr bool relax_mk_interleaved(const float*) { return false; }
static constexpr bool relax_mk_interleaved(const uint16_t*) { return true; }
static constexpr bool relax_mk_interleaved(const relax_mk_half*) { return false; }

// acc[r * ldacc + 0..63] += sum over k < kn of x[r * ldx + k] * w(k, 0..63) for r < R, the
// sums of the block in registers (in the order of k), added to acc once.
// `next`, when given: the same columns of the next block of k, whose cache lines are asked for
// (into L2) on the way, a block ahead of their use.
template <int R, typename W>
static inline void relax_mk_rows_block(const float* x, int64_t ldx, const W* w, int64_t kn, int64_t stride,
                                       float* acc, int64_t ldacc, const W* next) {
  relax_mk_f32x16 sum[R][4] = {};
  for (int64_t k = 0; k < kn; ++k) {
    if (next != nullptr) {
      for (int line = 0; line < static_cast<int>(64 * sizeof(W) / 64); ++line) {
        __builtin_prefetch(reinterpret_cast<const char*>(next + k * stride) + 64 * line, 0, 2);
      }
    }
    relax_mk_f32x16 wv[4];
    relax_mk_load_weights(w + k * stride, wv);
    for (int r = 0; r < R; ++r) {
      const float xv = x[r * ldx + k];
      for (int m = 0; m < 4; ++m) sum[r][m] += xv * wv[m];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int m = 0; m < 4; ++m) {
      relax_mk_f32x16 a;
      __builtin_memcpy(&a, acc + r * ldacc + 16 * m, sizeof a);
      a += sum[r][m];
      __builtin_memcpy(acc + r * ldacc + 16 * m, &a, sizeof a);
    }
  }
}
#endif

// The weight at (k, j) as a float.
static inline float relax_mk_weight(const float* w, int64_t at) { return w[at]; }
static inline float relax_mk_weight(const uint16_t* w, int64_t at) {
  const uint32_t bits = static_cast<uint32_t>(w[at]) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}
// (half_float.h's float16_value, on the bits: this header includes nothing of relax's, as it is
// copied into generated sources.)
static inline float relax_mk_weight(const relax_mk_half* w, int64_t at) {
  const uint32_t h = w[at].bits, sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  uint32_t bits = 0;
  if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // infinity or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {
    // Zero or subnormal: mantissa * 2^-24, exact in float32.
    const float v = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    std::memcpy(&bits, &v, 4);
    bits |= sign;
  }
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

template <typename W>
static inline void relax_mk_float_rows(const float* RELAX_MK_RESTRICT x, int64_t rows, int64_t ldx,
                                       const W* RELAX_MK_RESTRICT w, int64_t depth, int64_t cols, int64_t stride,
                                       float* RELAX_MK_RESTRICT y, int64_t ldy) {
  if (rows <= 0 || cols <= 0) return;
  int64_t vector_cols = 0;
#if defined(__GNUC__)
  const int64_t ldacc = cols / 64 * 64;
  const relax_mk_scratch block(static_cast<size_t>(rows * ldacc) * 4 + 64);
  float* acc = static_cast<float*>(block.get());
  if (acc != nullptr) {  // else every column by the plain loop below
    vector_cols = ldacc;
    std::memset(acc, 0, static_cast<size_t>(rows * ldacc) * 4);
  }
  // Blocks of 16 k: a block's weights of a 64-column chunk (4 KiB of float32) stay in L1 while
  // every 4 rows go over them, and consecutive chunks read on along the block's 16 rows of
  // weights: 16 pages at a time, which the L2 streamer follows (with 64 the streams exceed its
  // trackers and the weights are read more slowly, software prefetch or not).
  constexpr int64_t kBlock = 16;
  for (int64_t k0 = 0; k0 < depth; k0 += kBlock) {
    const int64_t kn = depth - k0 < kBlock ? depth - k0 : kBlock;
    for (int64_t j0 = 0; j0 < vector_cols; j0 += 64) {
      const W* wb = w + k0 * stride + j0;
      // The first 4 rows prefetch the next block of k: few rows are bound by the weights'
      // reads, which the prefetch speeds up (float32 and bfloat16 alike); 16 rows of float32
      // are compute-bound, lose more to the prefetch instructions than they gain, and go
      // without.
      const bool prefetch = k0 + kBlock < depth;
      const W* next = prefetch ? wb + kBlock * stride : nullptr;
      int64_t r = 0;
      for (; r + 4 <= rows; r += 4) {
        relax_mk_rows_block<4>(x + r * ldx + k0, ldx, wb, kn, stride, acc + r * ldacc + j0, ldacc, r == 0 ? next : nullptr);
      }
      const int64_t left = rows - r;
      const float* xr = x + r * ldx + k0;
      float* ar = acc + r * ldacc + j0;
      const W* nx = r == 0 ? next : nullptr;
      if (left == 3) relax_mk_rows_block<3>(xr, ldx, wb, kn, stride, ar, ldacc, nx);
      if (left == 2) relax_mk_rows_block<2>(xr, ldx, wb, kn, stride, ar, ldacc, nx);
      if (left == 1) relax_mk_rows_block<1>(xr, ldx, wb, kn, stride, ar, ldacc, nx);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j0 = 0; j0 < vector_cols; j0 += 64) {
      const float* a = acc + r * ldacc + j0;
      float* out = y + r * ldy + j0;
      if (!relax_mk_interleaved(w)) {
        std::memcpy(out, a, 64 * 4);
      } else {
        for (int h = 0; h < 2; ++h) {
          for (int l = 0; l < 16; ++l) {
            out[32 * h + 2 * l] = a[32 * h + l];
            out[32 * h + 2 * l + 1] = a[32 * h + 16 + l];
          }
        }
      }
    }
  }
#endif
  for (int64_t j = vector_cols; j < cols; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      float total = 0.0f;
      for (int64_t k = 0; k < depth; ++k) total += x[r * ldx + k] * relax_mk_weight(w, k * stride + j);
      y[r * ldy + j] = total;
    }
  }
}

/// Rows r < rows of x (row r at x + r * ldx) times float32 weights w[k * stride + j], for
/// j < cols: y[r * ldy + j]. One pass over the weights for all the rows (up to 16 by the
/// schedule): blocks of 16 k by 64 columns, 4 rows at a time in registers. Float products,
/// summed per block of 16 k in the order of k, then across blocks (a float sum reassociated).
static inline void relax_f32_rows(const float* RELAX_MK_RESTRICT x, int64_t rows, int64_t ldx,
                                  const float* RELAX_MK_RESTRICT w, int64_t depth, int64_t cols, int64_t stride,
                                  float* RELAX_MK_RESTRICT y, int64_t ldy) {
  relax_mk_float_rows(x, rows, ldx, w, depth, cols, stride, y, ldy);
}

/// As relax_f32_rows with float16 weights (their bits), each widened exactly to float32.
static inline void relax_f16_rows(const float* RELAX_MK_RESTRICT x, int64_t rows, int64_t ldx,
                                  const uint16_t* RELAX_MK_RESTRICT w, int64_t depth, int64_t cols, int64_t stride,
                                  float* RELAX_MK_RESTRICT y, int64_t ldy) {
  relax_mk_float_rows(x, rows, ldx, reinterpret_cast<const relax_mk_half*>(w), depth, cols, stride, y, ldy);
}

/// As relax_f32_rows with bfloat16 weights (their bits), each widened exactly to float32.
static inline void relax_bf16_rows(const float* RELAX_MK_RESTRICT x, int64_t rows, int64_t ldx,
                                   const uint16_t* RELAX_MK_RESTRICT w, int64_t depth, int64_t cols, int64_t stride,
                                   float* RELAX_MK_RESTRICT y, int64_t ldy) {
  relax_mk_float_rows(x, rows, ldx, w, depth, cols, stride, y, ldy);
}

#if defined(RELAX_MK_DIAGNOSTIC_PUSHED)
#pragma GCC diagnostic pop
#endif

#endif  // RELAX_SUPPORT_MICRO_KERNELS_H_
