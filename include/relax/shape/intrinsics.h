// The scalar intrinsics in one table.
//
// Every Intrinsic (relax/shape/sym_expr.h) is one row of a table: its name in
// text and JSON, its arity, the dtypes it takes and gives, how it evaluates
// (over doubles, and over integers where it takes them) and how the C++ code
// generator spells it. The constructor checks (intrinsic_operand_mismatch), the
// text parser and printer, the JSON reader and writer, the Analyzer's evaluator
// (evaluate / evaluate_float), the loop-level evaluator (relax/transform/
// prim_eval.h) and the C++ code generator all read this table, so that a new
// intrinsic is one row here, one enumerator in sym_expr.h and one constructor
// function beside exp().
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

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "relax/shape/sym_expr.h"
#include "relax/support/data_type.h"

namespace relax {

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

/// How many intrinsics there are: the backends' spelling tables (the C++ and CUDA code
/// generators) have one row per enumerator and check their size against it at compile time.
inline constexpr size_t kNumIntrinsics = static_cast<size_t>(Intrinsic::kShiftRight) + 1;

/// The row of `op`.
const IntrinsicInfo& intrinsic_info(Intrinsic op);
/// Every row, in the order of the Intrinsic enumerators.
std::span<const IntrinsicInfo> intrinsic_table();
/// The intrinsic named `name` in text and JSON, or nullopt.
std::optional<Intrinsic> intrinsic_from_name(std::string_view name);
/// Whether `op` takes operands of dtype `t` (a scalar dtype).
bool intrinsic_takes(Intrinsic op, DataType t);
/// The dtype of a call of `op` over operands of dtype `operand`.
DataType intrinsic_result_dtype(Intrinsic op, DataType operand);

}  // namespace relax
