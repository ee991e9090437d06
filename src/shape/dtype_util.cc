// Dtype helpers of the shape layer (see dtype_util.h).
#include "dtype_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace relax::shape_detail {
namespace {

/// Rounds a finite `v` to a binary format with `precision` significand bits
/// (the implicit one included) and normal exponents emin..emax.
double round_to_format(double v, int precision, int emin, int emax) {
  if (!std::isfinite(v) || v == 0) return v;
  int exponent = 0;
  std::frexp(v, &exponent);  // v = m * 2^exponent with 0.5 <= |m| < 1
  // The weight of the last significand bit; below emin the format is subnormal
  // and the weight stays that of the smallest normal binade.
  const int lead = std::max(exponent - 1, emin);
  const double quantum = std::ldexp(1.0, lead - (precision - 1));
  // Scaling by a power of two is exact; nearbyint rounds ties to even.
  const double rounded = std::nearbyint(v / quantum) * quantum;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), emax);
  if (std::fabs(rounded) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return rounded;
}

}  // namespace

int64_t wrap_to(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0 ? 1 : 0;
  if (t.bits >= 64) return v;
  const uint64_t mask = (uint64_t{1} << t.bits) - 1;
  const uint64_t low = static_cast<uint64_t>(v) & mask;
  if (t.code == DataType::Code::kUInt) return static_cast<int64_t>(low);
  const uint64_t sign = uint64_t{1} << (t.bits - 1);
  // Sign-extend the low bits.
  return static_cast<int64_t>((low ^ sign) - sign);
}

double round_to_float(double v, DataType t) {
  if (t.code == DataType::Code::kBFloat) return round_to_format(v, 8, -126, 127);
  switch (t.bits) {
    case 16:
      return round_to_format(v, 11, -14, 15);
    case 32:
      return round_to_format(v, 24, -126, 127);
    default:
      return v;
  }
}

std::string literal_suffix(DataType t) {
  if (t == DataType::int64()) return "";
  std::string prefix;
  switch (t.code) {
    case DataType::Code::kInt:
      prefix = "i";
      break;
    case DataType::Code::kUInt:
      prefix = "u";
      break;
    case DataType::Code::kFloat:
      prefix = "f";
      break;
    case DataType::Code::kBFloat:
      prefix = "bf";
      break;
    default:
      return "";
  }
  return prefix + std::to_string(t.bits);
}

std::optional<DataType> dtype_of_suffix(std::string_view suffix) {
  static constexpr struct {
    std::string_view suffix;
    DataType dtype;
  } kSuffixes[] = {
      {"i8", {DataType::Code::kInt, 8, 1}},     {"i16", {DataType::Code::kInt, 16, 1}},
      {"i32", {DataType::Code::kInt, 32, 1}},   {"i64", {DataType::Code::kInt, 64, 1}},
      {"u8", {DataType::Code::kUInt, 8, 1}},    {"u16", {DataType::Code::kUInt, 16, 1}},
      {"u32", {DataType::Code::kUInt, 32, 1}},  {"u64", {DataType::Code::kUInt, 64, 1}},
      {"f16", {DataType::Code::kFloat, 16, 1}}, {"f32", {DataType::Code::kFloat, 32, 1}},
      {"f64", {DataType::Code::kFloat, 64, 1}}, {"bf16", {DataType::Code::kBFloat, 16, 1}},
  };
  for (const auto& entry : kSuffixes) {
    if (entry.suffix == suffix) return entry.dtype;
  }
  return std::nullopt;
}

}  // namespace relax::shape_detail
