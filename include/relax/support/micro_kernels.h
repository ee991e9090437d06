// The built-in micro-kernels (relax/ir/micro_kernel.h): hand-written float32
// loops a PrimFunc calls with `call_extern`.
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

#endif  // RELAX_SUPPORT_MICRO_KERNELS_H_
