// Group-wise int4 weights at run time (relax/runtime/quantize.h).
//
// quantize_int4 walks each group of rows in blocks of 16 columns (GCC vector types; a scalar
// loop for the last N % 16), making two passes over the block's rows, which then sit in L1: the
// absolute maximum per column (with a probe that turns NaN when a weight is not finite, x * 0
// being NaN exactly for those), then the packed bytes of each pair of rows. Rounding: the ratio
// is clamped to [-8, 7] first, so |ratio| < 2^22 and adding and subtracting 1.5 * 2^23 rounds
// it to the nearest integer, ties to even, in the default rounding mode -- what nearbyint does,
// without the library call that keeps a loop scalar. The divisions stay divisions (not products with reciprocals): op::quantize divides,
// and the results must agree bit for bit.
#include "relax/runtime/quantize.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace relax::runtime {

namespace {

constexpr DataType kUInt8{DataType::Code::kUInt, 8, 1};

std::string shape_text(const std::vector<int64_t>& shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), shape.size() == 1 ? ",)" : ")");
}

absl::Status check_host_tensor(const Tensor& t, const char* what, DataType dtype, const std::string& shape_hint) {
  if (!t.defined()) return absl::InvalidArgumentError(absl::StrCat(what, " is undefined"));
  if (t.device().type != Device::Type::kCPU || t.dtype() != dtype || t.ndim() != 2 || !t.is_contiguous()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": expected a contiguous host ", dtype.to_string(),
                                                   " tensor of shape ", shape_hint, ", got ", t.describe(),
                                                   t.is_contiguous() ? "" : " (strided)"));
  }
  return absl::OkStatus();
}

// q of x for a group of scale s, as the nibble value q + 8.
inline uint8_t nibble(float x, float s) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  float r = s == 0.0f ? 0.0f : x / s;
  r = r >= -8.0f ? r : -8.0f;  // NaN (a non-finite weight, reported by the caller) becomes -8
  r = r <= 7.0f ? r : 7.0f;
  r = (r + kRound) - kRound;
  return static_cast<uint8_t>(static_cast<int32_t>(r) + 8);
}

// Blocks of 16 columns (a cache line of floats) as four vectors of 4 in GCC vector types, which
// g++ and clang lower to SSE2 or better; g++ -O2 alone vectorises none of these loops.
constexpr int64_t kBlock = 16;
constexpr int kVectors = 4;
using F32x4 = float __attribute__((vector_size(16)));
using I32x4 = int32_t __attribute__((vector_size(16)));
using U8x4 = uint8_t __attribute__((vector_size(4)));

F32x4 load(const float* p) {
  F32x4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Lanes of `a` where `mask` is set (all ones), of `b` elsewhere.
F32x4 select(I32x4 mask, F32x4 a, F32x4 b) {
  return reinterpret_cast<F32x4>((mask & reinterpret_cast<I32x4>(a)) | (~mask & reinterpret_cast<I32x4>(b)));
}

// nibble() on 4 lanes: q + 8 as int32.
I32x4 nibbles(F32x4 x, F32x4 s) {
  const F32x4 zero = {}, lo = zero - 8.0f, hi = zero + 7.0f, round = zero + 12582912.0f;
  F32x4 r = select(s == zero, zero, x / s);
  r = select(r >= lo, r, lo);  // NaN becomes -8, as in nibble()
  r = select(r <= hi, r, hi);
  r = (r + round) - round;
  return __builtin_convertvector(r, I32x4) + 8;
}

// Quantises 16 columns of one group of rows starting at `group` (row stride n): their scales
// to `scale`, their bytes to `bytes` (row stride n). False when a weight is not finite (the
// probe: x * 0 is NaN exactly then).
bool quantize_block(const float* group, int64_t n, int64_t group_size, float* scale, uint8_t* bytes) {
  const I32x4 abs_mask = I32x4{} + 0x7fffffff;
  F32x4 absmax[kVectors] = {}, probe[kVectors] = {};
  for (int64_t r = 0; r < group_size; ++r) {
    for (int c = 0; c < kVectors; ++c) {
      const F32x4 x = load(group + r * n + 4 * c);
      const F32x4 a = reinterpret_cast<F32x4>(reinterpret_cast<I32x4>(x) & abs_mask);
      absmax[c] = select(a > absmax[c], a, absmax[c]);
      probe[c] += x * 0.0f;
    }
  }
  F32x4 s[kVectors];
  bool finite = true;
  for (int c = 0; c < kVectors; ++c) {
    s[c] = absmax[c] / 7.0f;
    std::memcpy(scale + 4 * c, &s[c], sizeof(s[c]));
    for (int l = 0; l < 4; ++l) finite &= probe[c][l] == 0.0f;
  }
  for (int64_t p = 0; p < group_size / 2; ++p) {
    const float* even = group + 2 * p * n;
    for (int c = 0; c < kVectors; ++c) {
      const I32x4 byte = nibbles(load(even + 4 * c), s[c]) | (nibbles(load(even + n + 4 * c), s[c]) << 4);
      const U8x4 packed = __builtin_convertvector(byte, U8x4);
      std::memcpy(bytes + p * n + 4 * c, &packed, sizeof(packed));
    }
  }
  return finite;
}

// The same for `width` < 16 columns, one at a time.
bool quantize_tail(const float* group, int64_t n, int64_t group_size, int64_t width, float* scale, uint8_t* bytes) {
  bool finite = true;
  for (int64_t j = 0; j < width; ++j) {
    float absmax = 0.0f;
    for (int64_t r = 0; r < group_size; ++r) {
      const float a = std::fabs(group[r * n + j]);
      finite &= std::isfinite(a);
      absmax = a > absmax ? a : absmax;
    }
    scale[j] = absmax / 7.0f;
    for (int64_t p = 0; p < group_size / 2; ++p) {
      const float* even = group + 2 * p * n;
      bytes[p * n + j] = static_cast<uint8_t>(nibble(even[j], scale[j]) | (nibble(even[n + j], scale[j]) << 4));
    }
  }
  return finite;
}

}  // namespace

absl::StatusOr<std::pair<Tensor, Tensor>> quantize_int4(const Tensor& w, int64_t group_size) {
  if (absl::Status s = check_host_tensor(w, "quantize_int4: the weight", DataType::float32(), "(K, N)"); !s.ok()) {
    return s;
  }
  const int64_t k_rows = w.shape()[0], n = w.shape()[1];
  if (group_size < 2 || group_size % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantize_int4: group_size must be even and >= 2 (two values per byte), got ", group_size));
  }
  if (k_rows % group_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("quantize_int4: the weight ", w.describe(), " has K = ", k_rows,
                                                   " rows, not a multiple of group_size ", group_size));
  }
  absl::StatusOr<Tensor> packed = Tensor::empty({k_rows / 2, n}, kUInt8);
  if (!packed.ok()) return packed.status();
  absl::StatusOr<Tensor> scales = Tensor::empty({k_rows / group_size, n}, DataType::float32());
  if (!scales.ok()) return scales.status();
  const float* x = w.data_as_or_die<float>();
  auto* out = static_cast<uint8_t*>(packed->data());
  float* scale_rows = scales->data_as_or_die<float>();
  for (int64_t g = 0; g < k_rows / group_size; ++g) {
    const float* group = x + g * group_size * n;
    int64_t j0 = 0;
    bool finite = true;
    for (; j0 + kBlock <= n; j0 += kBlock) {
      finite &= quantize_block(group + j0, n, group_size, scale_rows + g * n + j0, out + g * (group_size / 2) * n + j0);
    }
    if (j0 < n) {
      finite &= quantize_tail(group + j0, n, group_size, n - j0, scale_rows + g * n + j0,
                              out + g * (group_size / 2) * n + j0);
    }
    if (!finite) {
      for (int64_t i = 0; i < group_size * n; ++i) {
        if (!std::isfinite(group[i])) {
          return absl::InvalidArgumentError(absl::StrCat("quantize_int4: weight [", g * group_size + i / n, ", ",
                                                         i % n, "] is ", group[i], ", expected a finite value"));
        }
      }
    }
  }
  return std::pair<Tensor, Tensor>{*std::move(packed), *std::move(scales)};
}

absl::StatusOr<Tensor> dequantize_int4(const Tensor& packed, const Tensor& scales, int64_t group_size) {
  if (absl::Status s = check_host_tensor(packed, "dequantize_int4: packed", kUInt8, "(K / 2, N)"); !s.ok()) return s;
  if (absl::Status s = check_host_tensor(scales, "dequantize_int4: scales", DataType::float32(), "(K / group_size, N)");
      !s.ok()) {
    return s;
  }
  if (group_size < 2 || group_size % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dequantize_int4: group_size must be even and >= 2 (two values per byte), got ", group_size));
  }
  const int64_t k_rows = packed.shape()[0] * 2, n = packed.shape()[1];
  const std::vector<int64_t> want = {k_rows / group_size, n};
  if (k_rows % group_size != 0 || scales.shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dequantize_int4: packed ", shape_text(packed.shape()), " holds K = ", k_rows, " rows: with group_size ",
        group_size, " scales must be ",
        k_rows % group_size == 0 ? shape_text(want) : absl::StrCat("(K / group_size, N), but K is not a multiple"),
        ", got ", shape_text(scales.shape())));
  }
  absl::StatusOr<Tensor> w = Tensor::empty({k_rows, n}, DataType::float32());
  if (!w.ok()) return w.status();
  const auto* bytes = static_cast<const uint8_t*>(packed.data());
  const float* s = scales.data_as_or_die<float>();
  float* y = w->data_as_or_die<float>();
  for (int64_t k = 0; k < k_rows; ++k) {
    const uint8_t* row = bytes + (k / 2) * n;
    const float* scale = s + (k / group_size) * n;
    const int shift = k % 2 == 0 ? 0 : 4;
    for (int64_t j = 0; j < n; ++j) {
      y[k * n + j] = static_cast<float>(((row[j] >> shift) & 15) - 8) * scale[j];
    }
  }
  return w;
}

}  // namespace relax::runtime
