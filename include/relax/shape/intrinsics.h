// The scalar intrinsics in one table.
//
// Every Intrinsic (the functions a kCall SymExpr applies) is an enumerator and
// one row of the table below: its name in text and JSON, its arity, the dtypes
// it takes and gives, and how it evaluates (over doubles, and over integers
// where it takes them). The constructor checks (intrinsic_operand_mismatch),
// the text parser and printer, the JSON reader and writer, the Analyzer's
// evaluator (evaluate / evaluate_float) and the loop-level evaluator
// (relax/transform/prim_eval.h) all read it; the code generators spell each
// intrinsic in one table of their own (C++ and CUDA, one row per enumerator,
// checked complete at compile time). A new intrinsic is its enumerator and row
// here and its row there; `call(Intrinsic::kX, operands)` builds it (a named
// constructor such as exp() is a convenience, not a requirement).
//
// Semantics the rows fix:
//   - round is half to even (numpy's `round`), computed with the default
//     rounding mode: round(2.5) == 2, round(-0.5) == -0;
//   - trunc rounds toward zero, floor toward -inf, ceil toward +inf;
//   - isnan and isinf take a float and give bool;
//   - bitwise_and/or/xor/not act on the two's-complement bits of an integer
//     dtype; shift_left(a, n) shifts the bits of `a` left by n, dropping those
//     that leave the dtype (so it wraps as numpy's left_shift does);
//     shift_right is arithmetic for signed dtypes and logical for unsigned
//     ones. A shift count outside [0, bits of the dtype) is undefined: the
//     evaluators report it, the generated code must not meet it;
//   - abs of the lowest value of a signed dtype overflows (an evaluator error).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "relax/support/data_type.h"
#include "relax/support/dtype_util.h"

namespace relax {

/// The functions a kCall node applies. Each is one row of the intrinsic table
/// (relax/shape/intrinsics.h), which gives its name, arity, dtype rule and
/// evaluation; each code generator spells it in a table of its own, checked
/// complete at compile time. In short: operands share one dtype; the math
/// functions take and give floats (abs also integers); isnan/isinf take a
/// float and give bool; the bitwise functions and shifts take and give
/// integers. pow takes two operands, fma three (fma(a, b, c) == a * b + c,
/// rounded once), the bitwise binary functions and shifts two, the rest one.
enum class Intrinsic : uint8_t {
  kExp,
  kLog,
  kSqrt,
  kRsqrt,    ///< 1 / sqrt(x)
  kTanh,
  kErf,
  kSigmoid,  ///< 1 / (1 + exp(-x))
  kPow,
  kAbs,
  kFma,
  kSin,
  kCos,
  kFloor,
  kCeil,
  kRound,    ///< to the nearest integer, ties to even
  kTrunc,    ///< toward zero
  kIsNan,
  kIsInf,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kBitwiseNot,
  kShiftLeft,   ///< bits shifted out of the dtype are dropped
  kShiftRight,  ///< arithmetic for signed dtypes, logical for unsigned ones
};

/// The dtypes an intrinsic takes and gives. All operands share one dtype.
enum class IntrinsicDtypes : uint8_t {
  kFloat,        ///< floats; the result has their dtype
  kNumeric,      ///< integers or floats; the result has their dtype
  kInteger,      ///< integers; the result has their dtype
  kFloatToBool,  ///< floats; the result is bool
};

/// One row of the intrinsic table.
struct IntrinsicInfo {
  Intrinsic op;
  /// The function name in text, JSON and messages ("exp", "shift_right").
  std::string_view name;
  /// How many operands it takes (1 to 3).
  uint8_t arity;
  IntrinsicDtypes dtypes;
  /// The value over float operands (x[0..arity)), in double; a predicate gives
  /// 1 or 0. Null when the intrinsic takes no floats (kInteger).
  double (*eval_float)(const double* x);
  /// The value over integer operands of dtype `t`, each given as an int64 (a
  /// uint64 above INT64_MAX as its bit pattern); the result likewise, a value of
  /// `t`. nullopt where the result is undefined: abs of the lowest signed value,
  /// a shift count outside [0, bits). Null when it takes no integers.
  std::optional<int64_t> (*eval_int)(const int64_t* x, DataType t);
  /// What an undefined integer result is called in an evaluator's message
  /// ("overflow", "shift count out of range").
  std::string_view int_undefined;
};

namespace intrinsic_detail {

using T = IntrinsicDtypes;

// ---- evaluators over doubles ----------------------------------------------

inline double f_exp(const double* x) { return std::exp(x[0]); }
inline double f_log(const double* x) { return std::log(x[0]); }
inline double f_sqrt(const double* x) { return std::sqrt(x[0]); }
inline double f_rsqrt(const double* x) { return 1.0 / std::sqrt(x[0]); }
inline double f_tanh(const double* x) { return std::tanh(x[0]); }
inline double f_erf(const double* x) { return std::erf(x[0]); }
inline double f_sigmoid(const double* x) { return 1.0 / (1.0 + std::exp(-x[0])); }
inline double f_pow(const double* x) { return std::pow(x[0], x[1]); }
inline double f_abs(const double* x) { return std::fabs(x[0]); }
inline double f_fma(const double* x) { return std::fma(x[0], x[1], x[2]); }
inline double f_sin(const double* x) { return std::sin(x[0]); }
inline double f_cos(const double* x) { return std::cos(x[0]); }
inline double f_floor(const double* x) { return std::floor(x[0]); }
inline double f_ceil(const double* x) { return std::ceil(x[0]); }
// nearbyint under the default rounding mode: ties to even, as numpy rounds.
inline double f_round(const double* x) { return std::nearbyint(x[0]); }
inline double f_trunc(const double* x) { return std::trunc(x[0]); }
inline double f_isnan(const double* x) { return std::isnan(x[0]) ? 1.0 : 0.0; }
inline double f_isinf(const double* x) { return std::isinf(x[0]) ? 1.0 : 0.0; }

// ---- evaluators over integers ---------------------------------------------
// Operands are values of `t` held in int64 (uint64 by bit pattern), so the
// bitwise operators act on the right bits; results are wrapped back to `t`.

inline bool is_unsigned(DataType t) { return t.code == DataType::Code::kUInt; }

inline std::optional<int64_t> i_abs(const int64_t* x, DataType t) {
  if (is_unsigned(t) || x[0] >= 0) return x[0];
  if (x[0] == INT64_MIN || !fits_dtype(-x[0], t)) return std::nullopt;
  return -x[0];
}

inline std::optional<int64_t> i_and(const int64_t* x, DataType) { return x[0] & x[1]; }
inline std::optional<int64_t> i_or(const int64_t* x, DataType) { return x[0] | x[1]; }
inline std::optional<int64_t> i_xor(const int64_t* x, DataType) { return x[0] ^ x[1]; }
inline std::optional<int64_t> i_not(const int64_t* x, DataType t) {
  return wrap_to_dtype(~x[0], t);
}

/// Whether the shift count `n` (of dtype t) is in [0, bits).
inline bool shift_count_ok(int64_t n, DataType t) {
  if (is_unsigned(t) && t.bits == 64) return static_cast<uint64_t>(n) < 64;
  return n >= 0 && n < t.bits;
}

inline std::optional<int64_t> i_shl(const int64_t* x, DataType t) {
  if (!shift_count_ok(x[1], t)) return std::nullopt;
  return wrap_to_dtype(static_cast<int64_t>(static_cast<uint64_t>(x[0]) << x[1]), t);
}

inline std::optional<int64_t> i_shr(const int64_t* x, DataType t) {
  if (!shift_count_ok(x[1], t)) return std::nullopt;
  if (is_unsigned(t)) {
    // A uint64 value is its bit pattern; narrower unsigned values are non-negative.
    return static_cast<int64_t>(static_cast<uint64_t>(x[0]) >> x[1]);
  }
  // Signed: arithmetic (C++20 defines >> on negative values so).
  return x[0] >> x[1];
}

inline constexpr std::string_view kOverflow = "overflow";
inline constexpr std::string_view kShiftRange = "shift count out of range";

// The table. Rows are in the order of the enumerators (checked at compile time). How the
// backends spell an intrinsic is the code generators' own table.
// name, arity, dtypes, eval_float, eval_int, int_undefined
inline constexpr IntrinsicInfo kTable[] = {
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
  return true;
}
static_assert(rows_in_order(), "one row per Intrinsic, in enumerator order");

}  // namespace intrinsic_detail

/// How many intrinsics there are: the backends' spelling tables (the C++ and CUDA code
/// generators) have one row per enumerator and check their size against it at compile time.
inline constexpr size_t kNumIntrinsics = std::size(intrinsic_detail::kTable);
static_assert(kNumIntrinsics == static_cast<size_t>(Intrinsic::kShiftRight) + 1,
              "a row for every Intrinsic (the last enumerator is kShiftRight)");

/// The row of `op`.
constexpr const IntrinsicInfo& intrinsic_info(Intrinsic op) {
  return intrinsic_detail::kTable[static_cast<size_t>(op)];
}
/// Every row, in the order of the Intrinsic enumerators.
inline std::span<const IntrinsicInfo> intrinsic_table() { return intrinsic_detail::kTable; }
/// The function name of an intrinsic in text, JSON and messages ("exp", "rsqrt", ...).
constexpr std::string_view intrinsic_name(Intrinsic op) { return intrinsic_info(op).name; }
/// How many operands an intrinsic takes.
constexpr size_t intrinsic_arity(Intrinsic op) { return intrinsic_info(op).arity; }
/// The intrinsic named `name` in text and JSON, or nullopt.
constexpr std::optional<Intrinsic> intrinsic_from_name(std::string_view name) {
  for (const IntrinsicInfo& row : intrinsic_detail::kTable) {
    if (row.name == name) return row.op;
  }
  return std::nullopt;
}
/// Whether `op` takes operands of dtype `t` (a scalar dtype).
inline bool intrinsic_takes(Intrinsic op, DataType t) {
  switch (intrinsic_info(op).dtypes) {
    case IntrinsicDtypes::kFloat:
    case IntrinsicDtypes::kFloatToBool:
      return is_scalar_float(t);
    case IntrinsicDtypes::kNumeric:
      return is_scalar_numeric(t);
    case IntrinsicDtypes::kInteger:
      return is_scalar_int(t);
  }
  return false;
}
/// The dtype of a call of `op` over operands of dtype `operand`.
inline DataType intrinsic_result_dtype(Intrinsic op, DataType operand) {
  return intrinsic_info(op).dtypes == IntrinsicDtypes::kFloatToBool ? DataType::boolean() : operand;
}

}  // namespace relax
