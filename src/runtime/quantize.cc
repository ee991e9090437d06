// Group-wise int4 weights at run time (relax/runtime/quantize.h).
//
// quantize_int4 makes two passes over each group of rows, both along rows of N contiguous
// floats so that they vectorise: the absolute maximum per column (with a probe that turns NaN
// when a weight is not finite, x * 0 being NaN exactly for those), then the packed bytes of
// each pair of rows. Rounding: the ratio is clamped to [-8, 7] first, so |ratio| < 2^22 and
// adding and subtracting 1.5 * 2^23 rounds it to the nearest integer, ties to even, in the
// default rounding mode -- what nearbyint does, without the library call that keeps the loop
// scalar. The divisions stay divisions (not products with reciprocals): op::quantize divides,
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
  r = r < -8.0f ? -8.0f : r;
  r = r > 7.0f ? 7.0f : r;
  r = (r + kRound) - kRound;
  return static_cast<uint8_t>(static_cast<int32_t>(r) + 8);
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
  std::vector<float> absmax(static_cast<size_t>(n));
  std::vector<float> probe(static_cast<size_t>(n));
  for (int64_t g = 0; g < k_rows / group_size; ++g) {
    const float* group = x + g * group_size * n;
    std::fill(absmax.begin(), absmax.end(), 0.0f);
    std::fill(probe.begin(), probe.end(), 0.0f);
    for (int64_t r = 0; r < group_size; ++r) {
      const float* row = group + r * n;
      for (int64_t j = 0; j < n; ++j) {
        const float a = std::fabs(row[j]);
        absmax[j] = a > absmax[j] ? a : absmax[j];
        probe[j] += row[j] * 0.0f;
      }
    }
    float* scale = scale_rows + g * n;
    for (int64_t j = 0; j < n; ++j) {
      if (probe[j] != 0.0f || absmax[j] > 3.4028235e38f) {  // NaN != 0; an infinite weight
        for (int64_t r = 0; r < group_size; ++r) {
          if (!std::isfinite(group[r * n + j])) {
            return absl::InvalidArgumentError(absl::StrCat("quantize_int4: weight [", g * group_size + r, ", ", j,
                                                           "] is ", group[r * n + j], ", expected a finite value"));
          }
        }
      }
      scale[j] = absmax[j] / 7.0f;
    }
    for (int64_t p = 0; p < group_size / 2; ++p) {
      const float* even = group + 2 * p * n;
      const float* odd = even + n;
      uint8_t* bytes = out + (g * group_size / 2 + p) * n;
      for (int64_t j = 0; j < n; ++j) {
        bytes[j] = static_cast<uint8_t>(nibble(even[j], scale[j]) | (nibble(odd[j], scale[j]) << 4));
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
