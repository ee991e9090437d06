// The helpers at the top of every generated CUDA device source (see
// cuda_codegen_impl.h). NVRTC has no standard headers, so the source defines
// its own fixed-width integer types and the names the expression emitter
// writes (cpp_codegen_expr.cc in device mode):
//   - INT64_C and friends, NAN, HUGE_VALF and HUGE_VAL as the C headers spell
//     them (built from bit patterns with CUDA's reinterpreting intrinsics);
//   - relax_floordiv/floormod/abs/shift_left/shift_right/min/max: the host
//     prelude's own text (kIntegerHelpers), qualified for the device;
//   - relax_<intrinsic>(x) for every float intrinsic of relax/shape/
//     intrinsics.h (the device columns of the code generators' intrinsic table,
//     codegen/cpp/cpp_intrinsics.cc), over float (expf, the accurate CUDA functions, not the
//     __expf approximations) and double; rsqrt is 1 / sqrt as on the host;
//   - float16 and bfloat16: a load widens exactly (bit operations), a store
//     of a float rounds once to nearest even (PTX cvt.rn.f16.f32 /
//     cvt.rn.bf16.f32, sm_80 and later), and a cast of a double rounds once
//     (relax_round_format, the host's round_to_format written with CUDA's
//     double functions); int64 to double rounds to odd first, as on the host,
//     so that the cast to a half float rounds once;
//   - relax_load4(out, p, valid): four consecutive elements, one vector
//     load when they are inside and aligned (the matvec kernels);
//   - relax_block_reduce<Combine>(v): every thread of the block gets the
//     combination of all threads' v: warp shuffles (__shfl_down_sync) within
//     each warp, each warp's lane 0 into shared memory, then every thread
//     combines the warps' values in warp order (the same order on every
//     thread, so every thread holds the same bits). blockDim.x must be a
//     multiple of 32 (the launches use 32 to 256 threads).
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codegen/cpp/cpp_codegen_impl.h"
#include "codegen/cuda/cuda_codegen_impl.h"

namespace relax::cpp_codegen {

namespace {

// The fixed-width types and constants that NVRTC, without standard headers, lacks.
const char kDeviceTypes[] = R"cuda(// ---- Helpers shared by the device functions ----------------------------------
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT32_C(v) (v)
#define INT64_C(v) (v##LL)
#define UINT32_C(v) (v##U)
#define UINT64_C(v) (v##ULL)
#define NAN __int_as_float(0x7fc00000)
#define HUGE_VALF __int_as_float(0x7f800000)
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)

#define RELAX_DEVICE static __device__ __forceinline__
#define RELAX_HELPER RELAX_DEVICE

)cuda";

std::string device_intrinsics() {
  std::string out = "// Float intrinsics (relax/shape/intrinsics.h), float and double.\n";
  for (size_t i = 0; i < kNumIntrinsics; ++i) {
    const Intrinsic op = static_cast<Intrinsic>(i);
    const cpp_codegen::CppIntrinsic& f = cpp_codegen::cpp_intrinsic(op);
    if (f.device_params.empty()) continue;  // integers only
    const std::string name(intrinsic_info(op).name);
    for (const char* type : {"float", "double"}) {
      std::string params;
      for (absl::string_view p : absl::StrSplit(absl::string_view(f.device_params.data(), f.device_params.size()), ", ")) {
        absl::StrAppend(&params, params.empty() ? "" : ", ", type, " ", p);
      }
      const std::string_view body = std::string_view(type) == "float" ? f.device_float : f.device_double;
      absl::StrAppend(&out, "RELAX_DEVICE ", f.device_predicate ? "bool" : type, " relax_", name, "(", params,
                      ") { return ", std::string(body), "; }\n");
    }
  }
  return out;
}

const char kDeviceHalfFloatsAndReductions[] = R"cuda(
// float16 and bfloat16: 16-bit patterns, computed as float.
RELAX_DEVICE float relax_float16_load(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // 2^-24
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return __uint_as_float(sign | 0x7f800000u | (mantissa << 13));
  return __uint_as_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}
RELAX_DEVICE float relax_bfloat16_load(uint16_t h) { return __uint_as_float(static_cast<uint32_t>(h) << 16); }
RELAX_DEVICE uint16_t relax_float16_store(float v) {
  uint16_t r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(v));
  return r;
}
RELAX_DEVICE uint16_t relax_bfloat16_store(float v) {
  uint16_t r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(v));
  return r;
}
// The value nearest to v with `precision` significand bits and normal exponents
// [min_exp, max_exp] (relax/support/half_float.h's round_to_format).
RELAX_DEVICE double relax_round_format(double v, int precision, int min_exp, int max_exp) {
  if (v != v || v == 0.0 || fabs(v) == HUGE_VAL) return v;
  const int e = static_cast<int>((__double_as_longlong(v) >> 52) & 0x7ff) - 1023;
  const int exponent = e < min_exp ? min_exp : e;
  const double rounded = ldexp(rint(ldexp(v, (precision - 1) - exponent)), exponent - (precision - 1));
  const double max_finite = ldexp(2.0 - ldexp(1.0, 1 - precision), max_exp);
  if (fabs(rounded) > max_finite) return copysign(HUGE_VAL, v);
  return rounded;
}
RELAX_DEVICE float relax_round_float16(double v) { return static_cast<float>(relax_round_format(v, 11, -14, 15)); }
RELAX_DEVICE float relax_round_bfloat16(double v) { return static_cast<float>(relax_round_format(v, 8, -126, 127)); }
// |v| as a double rounded to odd (exact below 2^53), so that a later rounding
// to 16 bits rounds as if from the integer itself.
RELAX_DEVICE double relax_unsigned_to_double_odd(uint64_t magnitude, bool negative) {
  double d;
  if ((magnitude >> 53) == 0) {
    d = static_cast<double>(magnitude);
  } else {
    const int shift = 11 - __clzll(static_cast<long long>(magnitude));
    uint64_t kept = magnitude >> shift;
    if ((kept << shift) != magnitude) kept |= 1;
    d = ldexp(static_cast<double>(kept), shift);
  }
  return negative ? -d : d;
}
RELAX_DEVICE double relax_int64_to_double_odd(int64_t v) {
  return relax_unsigned_to_double_odd(v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), v < 0);
}
RELAX_DEVICE double relax_uint64_to_double_odd(uint64_t v) { return relax_unsigned_to_double_odd(v, false); }

// Four consecutive elements at p: one vector load when all four are inside (valid >= 4) and p
// is aligned to their size, else element loads, zero past `valid`.
template <typename T>
RELAX_DEVICE void relax_load4(T (&out)[4], const T* p, int64_t valid) {
  struct alignas(4 * sizeof(T)) relax_four {
    T v[4];
  };
  if (valid >= 4 && reinterpret_cast<uint64_t>(p) % (4 * sizeof(T)) == 0) {
    const relax_four f = *reinterpret_cast<const relax_four*>(p);
    out[0] = f.v[0];
    out[1] = f.v[1];
    out[2] = f.v[2];
    out[3] = f.v[3];
    return;
  }
#pragma unroll
  for (int c = 0; c < 4; ++c) out[c] = c < valid ? p[c] : static_cast<T>(0);
}

// Block-wide reductions: every thread gets the combination of all threads' values.
struct relax_combine_add {
  template <typename T>
  static __device__ __forceinline__ T apply(T a, T b) { return a + b; }
};
struct relax_combine_mul {
  template <typename T>
  static __device__ __forceinline__ T apply(T a, T b) { return a * b; }
};
struct relax_combine_max {
  template <typename T>
  static __device__ __forceinline__ T apply(T a, T b) { return relax_max<T>(a, b); }
};
struct relax_combine_min {
  template <typename T>
  static __device__ __forceinline__ T apply(T a, T b) { return relax_min<T>(a, b); }
};
template <typename C, typename T>
static __device__ __forceinline__ T relax_block_reduce(T v) {
  __shared__ T relax_warp_values[32];
  for (int offset = 16; offset > 0; offset >>= 1) v = C::apply(v, __shfl_down_sync(0xffffffffu, v, offset));
  __syncthreads();  // the previous reduction's readers are done with relax_warp_values
  if ((threadIdx.x & 31u) == 0) relax_warp_values[threadIdx.x >> 5] = v;
  __syncthreads();
  T total = relax_warp_values[0];
  const unsigned warps = (blockDim.x + 31u) >> 5;
  for (unsigned w = 1; w < warps; ++w) total = C::apply(total, relax_warp_values[w]);
  return total;
}
)cuda";

}  // namespace

const std::string& cuda_device_prelude() {
  static const std::string* const text = new std::string(
      absl::StrCat(kDeviceTypes, kIntegerHelpers, "\n", device_intrinsics(), kDeviceHalfFloatsAndReductions));
  return *text;
}

}  // namespace relax::cpp_codegen
