// The intrinsic table (relax/shape/intrinsics.h): one row per Intrinsic.
#include "relax/shape/intrinsics.h"

#include <cmath>
#include <cstdint>

#include "dtype_util.h"
#include "relax/support/check.h"

namespace relax {
namespace {

using T = IntrinsicDtypes;

// ---- evaluators over doubles ----------------------------------------------

double f_exp(const double* x) { return std::exp(x[0]); }
double f_log(const double* x) { return std::log(x[0]); }
double f_sqrt(const double* x) { return std::sqrt(x[0]); }
double f_rsqrt(const double* x) { return 1.0 / std::sqrt(x[0]); }
double f_tanh(const double* x) { return std::tanh(x[0]); }
double f_erf(const double* x) { return std::erf(x[0]); }
double f_sigmoid(const double* x) { return 1.0 / (1.0 + std::exp(-x[0])); }
double f_pow(const double* x) { return std::pow(x[0], x[1]); }
double f_abs(const double* x) { return std::fabs(x[0]); }
double f_fma(const double* x) { return std::fma(x[0], x[1], x[2]); }
double f_sin(const double* x) { return std::sin(x[0]); }
double f_cos(const double* x) { return std::cos(x[0]); }
double f_floor(const double* x) { return std::floor(x[0]); }
double f_ceil(const double* x) { return std::ceil(x[0]); }
// nearbyint under the default rounding mode: ties to even, as numpy rounds.
double f_round(const double* x) { return std::nearbyint(x[0]); }
double f_trunc(const double* x) { return std::trunc(x[0]); }
double f_isnan(const double* x) { return std::isnan(x[0]) ? 1.0 : 0.0; }
double f_isinf(const double* x) { return std::isinf(x[0]) ? 1.0 : 0.0; }

// ---- evaluators over integers ---------------------------------------------
// Operands are values of `t` held in int64 (uint64 by bit pattern), so the
// bitwise operators act on the right bits; results are wrapped back to `t`.

bool is_unsigned(DataType t) { return t.code == DataType::Code::kUInt; }

std::optional<int64_t> i_abs(const int64_t* x, DataType t) {
  if (is_unsigned(t) || x[0] >= 0) return x[0];
  if (x[0] == INT64_MIN || !fits_dtype(-x[0], t)) return std::nullopt;
  return -x[0];
}

std::optional<int64_t> i_and(const int64_t* x, DataType) { return x[0] & x[1]; }
std::optional<int64_t> i_or(const int64_t* x, DataType) { return x[0] | x[1]; }
std::optional<int64_t> i_xor(const int64_t* x, DataType) { return x[0] ^ x[1]; }
std::optional<int64_t> i_not(const int64_t* x, DataType t) {
  return shape_detail::wrap_to(~x[0], t);
}

/// Whether the shift count `n` (of dtype t) is in [0, bits).
bool shift_count_ok(int64_t n, DataType t) {
  if (is_unsigned(t) && t.bits == 64) return static_cast<uint64_t>(n) < 64;
  return n >= 0 && n < t.bits;
}

std::optional<int64_t> i_shl(const int64_t* x, DataType t) {
  if (!shift_count_ok(x[1], t)) return std::nullopt;
  return shape_detail::wrap_to(static_cast<int64_t>(static_cast<uint64_t>(x[0]) << x[1]), t);
}

std::optional<int64_t> i_shr(const int64_t* x, DataType t) {
  if (!shift_count_ok(x[1], t)) return std::nullopt;
  if (is_unsigned(t)) {
    // A uint64 value is its bit pattern; narrower unsigned values are non-negative.
    return static_cast<int64_t>(static_cast<uint64_t>(x[0]) >> x[1]);
  }
  // Signed: arithmetic (C++20 defines >> on negative values so).
  return x[0] >> x[1];
}

constexpr std::string_view kOverflow = "overflow";
constexpr std::string_view kShiftRange = "shift count out of range";

// The table. Rows are in the order of the enumerators (checked at compile time). How each
// backend spells an intrinsic is the backend's own table (the C++ and CUDA code generators).
// name, arity, dtypes, eval_float, eval_int, int_undefined
constexpr IntrinsicInfo kTable[] = {
    {Intrinsic::kExp, "exp", 1, T::kFloat, f_exp, nullptr, {}},
    {Intrinsic::kLog, "log", 1, T::kFloat, f_log, nullptr, {}},
    {Intrinsic::kSqrt, "sqrt", 1, T::kFloat, f_sqrt, nullptr, {}},
    {Intrinsic::kRsqrt, "rsqrt", 1, T::kFloat, f_rsqrt, nullptr, {}},
    {Intrinsic::kTanh, "tanh", 1, T::kFloat, f_tanh, nullptr, {}},
    {Intrinsic::kErf, "erf", 1, T::kFloat, f_erf, nullptr, {}},
    {Intrinsic::kSigmoid, "sigmoid", 1, T::kFloat, f_sigmoid, nullptr, {}},
    {Intrinsic::kPow, "pow", 2, T::kFloat, f_pow, nullptr, {}},
    {Intrinsic::kAbs, "abs", 1, T::kNumeric, f_abs, i_abs, kOverflow},
    {Intrinsic::kFma, "fma", 3, T::kFloat, f_fma, nullptr, {}},
    {Intrinsic::kSin, "sin", 1, T::kFloat, f_sin, nullptr, {}},
    {Intrinsic::kCos, "cos", 1, T::kFloat, f_cos, nullptr, {}},
    {Intrinsic::kFloor, "floor", 1, T::kFloat, f_floor, nullptr, {}},
    {Intrinsic::kCeil, "ceil", 1, T::kFloat, f_ceil, nullptr, {}},
    {Intrinsic::kRound, "round", 1, T::kFloat, f_round, nullptr, {}},
    {Intrinsic::kTrunc, "trunc", 1, T::kFloat, f_trunc, nullptr, {}},
    {Intrinsic::kIsNan, "isnan", 1, T::kFloatToBool, f_isnan, nullptr, {}},
    {Intrinsic::kIsInf, "isinf", 1, T::kFloatToBool, f_isinf, nullptr, {}},
    {Intrinsic::kBitwiseAnd, "bitwise_and", 2, T::kInteger, nullptr, i_and, {}},
    {Intrinsic::kBitwiseOr, "bitwise_or", 2, T::kInteger, nullptr, i_or, {}},
    {Intrinsic::kBitwiseXor, "bitwise_xor", 2, T::kInteger, nullptr, i_xor, {}},
    {Intrinsic::kBitwiseNot, "bitwise_not", 1, T::kInteger, nullptr, i_not, {}},
    {Intrinsic::kShiftLeft, "shift_left", 2, T::kInteger, nullptr, i_shl, kShiftRange},
    {Intrinsic::kShiftRight, "shift_right", 2, T::kInteger, nullptr, i_shr, kShiftRange},
};

constexpr bool rows_in_order() {
  for (size_t i = 0; i < std::size(kTable); ++i) {
    if (static_cast<size_t>(kTable[i].op) != i) return false;
  }
  return kNumIntrinsics == std::size(kTable);
}
static_assert(rows_in_order(), "one row per Intrinsic, in enumerator order");

}  // namespace

const IntrinsicInfo& intrinsic_info(Intrinsic op) {
  const auto i = static_cast<size_t>(op);
  RELAX_CHECK(i < std::size(kTable)) << "unknown intrinsic " << i;
  return kTable[i];
}

std::span<const IntrinsicInfo> intrinsic_table() { return kTable; }

std::optional<Intrinsic> intrinsic_from_name(std::string_view name) {
  for (const IntrinsicInfo& row : kTable) {
    if (row.name == name) return row.op;
  }
  return std::nullopt;
}

bool intrinsic_takes(Intrinsic op, DataType t) {
  switch (intrinsic_info(op).dtypes) {
    case T::kFloat:
    case T::kFloatToBool:
      return is_scalar_float(t);
    case T::kNumeric:
      return is_scalar_numeric(t);
    case T::kInteger:
      return is_scalar_int(t);
  }
  return false;
}

DataType intrinsic_result_dtype(Intrinsic op, DataType operand) {
  return intrinsic_info(op).dtypes == T::kFloatToBool ? DataType::boolean() : operand;
}

std::string_view intrinsic_name(Intrinsic op) { return intrinsic_info(op).name; }

size_t intrinsic_arity(Intrinsic op) { return intrinsic_info(op).arity; }

}  // namespace relax
