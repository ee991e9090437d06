// relax::SymKind: the kinds of scalar-expression node, and the one table that
// says what each kind is.
//
// Every reader of a kind's fixed facts -- SymExpr's constructors (how many
// operands, of which dtypes), the printer and the parser (spelling, syntax,
// precedence), the analyzer (commutativity, the negation and mirror of a
// comparison) and both evaluators (the strict binary operators' arithmetic) --
// looks them up here rather than switching over the enum, and so does the JSON
// form. A new kind is its enumerator and its row here, then its row in each
// code generator's own table (the C++ and CUDA generators' spellings, the VM's
// shape-program instructions), each checked complete at compile time; rules
// that simplify it are extra, not required.
#pragma once

#include <cstdint>
#include <string_view>

namespace relax {

/// The kinds of SymExpr node. The order is the row order of the table and part
/// of structural_compare's order (so of canonical forms): append new kinds.
enum class SymKind : uint8_t {
  kIntImm,     ///< integer or boolean constant
  kVar,        ///< symbolic variable
  kAdd,        ///< a + b
  kSub,        ///< a - b
  kMul,        ///< a * b
  kFloorDiv,   ///< floordiv(a, b), rounding toward negative infinity
  kFloorMod,   ///< floormod(a, b) == a - b * floordiv(a, b)
  kMin,        ///< min(a, b)
  kMax,        ///< max(a, b)
  kEQ,         ///< a == b
  kNE,         ///< a != b
  kLT,         ///< a < b
  kLE,         ///< a <= b
  kGT,         ///< a > b
  kGE,         ///< a >= b
  kAnd,        ///< a && b
  kOr,         ///< a || b
  kNot,        ///< !a
  kSelect,     ///< select(cond, a, b)
  kFloatImm,   ///< float constant of a float dtype
  kDiv,        ///< a / b, true division of floats
  kCast,       ///< cast<dtype>(a): conversion to the node's dtype
  kCall,       ///< an intrinsic (see Intrinsic) applied to its operands
  kBufferLoad, ///< buffer[i0, i1, ...]: the operands are the indices
  kRamp,       ///< ramp(base, stride, lanes): int64 lanes base + l * stride
  kBroadcast,  ///< broadcast(value, lanes): `value` in every lane
};

/// How many kinds there are: the table's row count.
inline constexpr int kNumSymKinds = static_cast<int>(SymKind::kBroadcast) + 1;

/// What operands a kind takes; SymExpr::make checks the fixed-arity ones.
enum class SymOperands : uint8_t {
  kArith,    ///< + - * min max: two numeric operands of one dtype, that dtype
  kInteger,  ///< floordiv floormod: two integer operands of one dtype
  kFloat,    ///< /: two float operands of one dtype
  kCompare,  ///< == != < <= > >=: two numeric operands of one dtype; bool
  kLogic,    ///< && ||: two bools
  kNot,      ///< !: one bool
  kSelect,   ///< a bool, then two operands of one dtype
  kOwn,      ///< leaves, casts, calls, loads and vectors: their own constructors
};

/// How the text form writes a kind.
enum class SymSyntax : uint8_t {
  kLeaf,      ///< a constant or a name
  kInfix,     ///< `a + b`, by the row's spelling and precedence
  kPrefix,    ///< `!a`
  kFunction,  ///< `floordiv(a, b)`, `select(c, a, b)`: the spelling is the name
  kOwn,       ///< cast<dtype>(a), intrinsic calls, A[i], ramp/broadcast: the printer's own
};

/// Binding strength in the text form, loosest first.
enum SymPrecedence : uint8_t {
  kSymPrecOr = 1,
  kSymPrecAnd,
  kSymPrecCompare,
  kSymPrecAdd,
  kSymPrecMul,
  kSymPrecUnary,
  kSymPrecPrimary,
};

/// Integers of a strict binary kind are computed exactly in 128 bits from the
/// operands' values (every int64 and uint64 value fits); the caller checks the
/// result against the node's dtype.
__extension__ typedef __int128 SymInt128;  // NOLINT: exact products of 64-bit values

/// Why an integer evaluation has no value.
enum class SymEvalError : uint8_t {
  kNone,
  kByZero,    ///< floordiv or floormod by zero
  kOverflow,  ///< beyond 128 bits (a product of two uint64 values)
};

/// The integer arithmetic of a strict binary kind (comparisons give 1 or 0).
using SymIntEval = SymEvalError (*)(SymInt128 a, SymInt128 b, SymInt128* result);
/// The float arithmetic of a strict binary kind, unrounded (comparisons give
/// 1 or 0). min and max are those of the generated code (std::min/std::max):
/// `b < a ? b : a`, so a NaN first operand propagates and a NaN second one not.
using SymFloatEval = double (*)(double a, double b);

/// One row of the table.
struct SymKindInfo {
  SymKind kind;
  /// The text spelling: the operator ("+", "<="), the function name
  /// ("floordiv", "select") or the kind's word ("const", "cast", "load").
  std::string_view name;
  /// The kind's name in serialized modules (the JSON form): "sym.add", "sym.load".
  std::string_view serial_name;
  /// Operands of the fixed-arity kinds; 0 for the kinds with their own constructors.
  uint8_t arity;
  SymOperands operands;
  SymSyntax syntax;
  /// Binding strength in text: an infix or prefix kind's; kSymPrecPrimary otherwise.
  SymPrecedence precedence;
  /// a k b == b k a.
  bool commutative;
  /// Comparisons: the kind of !(a k b) and the kind k' with (a k b) == (b k' a).
  /// Other kinds: the kind itself.
  SymKind negated;
  SymKind mirrored;
  /// The strict binary kinds' arithmetic (null for the others, and for the
  /// dtype class a kind does not take: floordiv of floats, `/` of integers).
  /// && and || are not strict (their right side is evaluated only when the
  /// left does not decide), nor is select: evaluators walk those themselves.
  SymIntEval eval_int;
  SymFloatEval eval_float;
};

namespace sym_kind_detail {

using Int = SymInt128;
using K = SymKind;
using O = SymOperands;
using S = SymSyntax;
inline constexpr SymEvalError kOk = SymEvalError::kNone;

// ---- The strict binary kinds' arithmetic ----------------------------------

inline SymEvalError add(Int a, Int b, Int* r) { return *r = a + b, kOk; }
inline SymEvalError sub(Int a, Int b, Int* r) { return *r = a - b, kOk; }
inline SymEvalError mul(Int a, Int b, Int* r) {
  return __builtin_mul_overflow(a, b, r) ? SymEvalError::kOverflow : kOk;
}
/// floordiv and floormod: the quotient rounded toward negative infinity.
inline Int floor_quotient(Int a, Int b) {
  Int q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
inline SymEvalError floordiv(Int a, Int b, Int* r) {
  if (b == 0) return SymEvalError::kByZero;
  return *r = floor_quotient(a, b), kOk;
}
inline SymEvalError floormod(Int a, Int b, Int* r) {
  if (b == 0) return SymEvalError::kByZero;
  return *r = a - floor_quotient(a, b) * b, kOk;
}
inline SymEvalError min_int(Int a, Int b, Int* r) { return *r = b < a ? b : a, kOk; }
inline SymEvalError max_int(Int a, Int b, Int* r) { return *r = a < b ? b : a, kOk; }
inline SymEvalError eq_int(Int a, Int b, Int* r) { return *r = a == b, kOk; }
inline SymEvalError ne_int(Int a, Int b, Int* r) { return *r = a != b, kOk; }
inline SymEvalError lt_int(Int a, Int b, Int* r) { return *r = a < b, kOk; }
inline SymEvalError le_int(Int a, Int b, Int* r) { return *r = a <= b, kOk; }
inline SymEvalError gt_int(Int a, Int b, Int* r) { return *r = a > b, kOk; }
inline SymEvalError ge_int(Int a, Int b, Int* r) { return *r = a >= b, kOk; }

inline double add_f(double a, double b) { return a + b; }
inline double sub_f(double a, double b) { return a - b; }
inline double mul_f(double a, double b) { return a * b; }
inline double div_f(double a, double b) { return a / b; }
inline double min_f(double a, double b) { return b < a ? b : a; }
inline double max_f(double a, double b) { return a < b ? b : a; }
inline double eq_f(double a, double b) { return a == b ? 1 : 0; }
inline double ne_f(double a, double b) { return a != b ? 1 : 0; }
inline double lt_f(double a, double b) { return a < b ? 1 : 0; }
inline double le_f(double a, double b) { return a <= b ? 1 : 0; }
inline double gt_f(double a, double b) { return a > b ? 1 : 0; }
inline double ge_f(double a, double b) { return a >= b ? 1 : 0; }


/// A kind with its own constructor and printer form (no arithmetic here).
constexpr SymKindInfo own(K kind, std::string_view name, std::string_view serial, S syntax) {
  return {kind, name, serial, 0, O::kOwn, syntax, kSymPrecPrimary, false, kind, kind, nullptr, nullptr};
}

inline constexpr SymKindInfo kRows[] = {
    own(K::kIntImm, "const", "sym.int", S::kLeaf),
    own(K::kVar, "var", "sym.var", S::kLeaf),
    {K::kAdd, "+", "sym.add", 2, O::kArith, S::kInfix, kSymPrecAdd, true, K::kAdd, K::kAdd, add, add_f},
    {K::kSub, "-", "sym.sub", 2, O::kArith, S::kInfix, kSymPrecAdd, false, K::kSub, K::kSub, sub, sub_f},
    {K::kMul, "*", "sym.mul", 2, O::kArith, S::kInfix, kSymPrecMul, true, K::kMul, K::kMul, mul, mul_f},
    {K::kFloorDiv, "floordiv", "sym.floordiv", 2, O::kInteger, S::kFunction, kSymPrecPrimary, false, K::kFloorDiv,
     K::kFloorDiv, floordiv, nullptr},
    {K::kFloorMod, "floormod", "sym.floormod", 2, O::kInteger, S::kFunction, kSymPrecPrimary, false, K::kFloorMod,
     K::kFloorMod, floormod, nullptr},
    {K::kMin, "min", "sym.min", 2, O::kArith, S::kFunction, kSymPrecPrimary, true, K::kMin, K::kMin, min_int, min_f},
    {K::kMax, "max", "sym.max", 2, O::kArith, S::kFunction, kSymPrecPrimary, true, K::kMax, K::kMax, max_int, max_f},
    {K::kEQ, "==", "sym.eq", 2, O::kCompare, S::kInfix, kSymPrecCompare, true, K::kNE, K::kEQ, eq_int, eq_f},
    {K::kNE, "!=", "sym.ne", 2, O::kCompare, S::kInfix, kSymPrecCompare, true, K::kEQ, K::kNE, ne_int, ne_f},
    {K::kLT, "<", "sym.lt", 2, O::kCompare, S::kInfix, kSymPrecCompare, false, K::kGE, K::kGT, lt_int, lt_f},
    {K::kLE, "<=", "sym.le", 2, O::kCompare, S::kInfix, kSymPrecCompare, false, K::kGT, K::kGE, le_int, le_f},
    {K::kGT, ">", "sym.gt", 2, O::kCompare, S::kInfix, kSymPrecCompare, false, K::kLE, K::kLT, gt_int, gt_f},
    {K::kGE, ">=", "sym.ge", 2, O::kCompare, S::kInfix, kSymPrecCompare, false, K::kLT, K::kLE, ge_int, ge_f},
    {K::kAnd, "&&", "sym.and", 2, O::kLogic, S::kInfix, kSymPrecAnd, true, K::kAnd, K::kAnd, nullptr, nullptr},
    {K::kOr, "||", "sym.or", 2, O::kLogic, S::kInfix, kSymPrecOr, true, K::kOr, K::kOr, nullptr, nullptr},
    {K::kNot, "!", "sym.not", 1, O::kNot, S::kPrefix, kSymPrecUnary, false, K::kNot, K::kNot, nullptr, nullptr},
    {K::kSelect, "select", "sym.select", 3, O::kSelect, S::kFunction, kSymPrecPrimary, false, K::kSelect, K::kSelect,
     nullptr, nullptr},
    own(K::kFloatImm, "float", "sym.float", S::kLeaf),
    {K::kDiv, "/", "sym.div", 2, O::kFloat, S::kInfix, kSymPrecMul, false, K::kDiv, K::kDiv, nullptr, div_f},
    own(K::kCast, "cast", "sym.cast", S::kOwn),
    own(K::kCall, "call", "sym.call", S::kOwn),
    own(K::kBufferLoad, "load", "sym.load", S::kOwn),
    own(K::kRamp, "ramp", "sym.ramp", S::kOwn),
    own(K::kBroadcast, "broadcast", "sym.broadcast", S::kOwn),
};

constexpr bool rows_in_enum_order() {
  for (int i = 0; i < kNumSymKinds; ++i) {
    if (static_cast<int>(kRows[i].kind) != i) return false;
  }
  return true;
}
static_assert(sizeof(kRows) / sizeof(kRows[0]) == kNumSymKinds, "one row per SymKind");
static_assert(rows_in_enum_order(), "the rows of the SymKind table are in enumerator order");

}  // namespace sym_kind_detail

/// The row of `kind`.
constexpr const SymKindInfo& sym_kind_info(SymKind kind) {
  return sym_kind_detail::kRows[static_cast<uint8_t>(kind)];
}

/// The operator spelling of a kind ("+", "floordiv", "<=", "cast", ...).
constexpr std::string_view sym_kind_name(SymKind kind) { return sym_kind_info(kind).name; }

/// == != < <= > >=.
constexpr bool is_comparison(SymKind kind) {
  return sym_kind_info(kind).operands == SymOperands::kCompare;
}

/// The kind whose text spelling is `name` among the rows of syntax `syntax`
/// ("<=" among kInfix, "floordiv" among kFunction); kIntImm when none.
constexpr SymKind sym_kind_of_name(std::string_view name, SymSyntax syntax) {
  for (const SymKindInfo& row : sym_kind_detail::kRows) {
    if (row.syntax == syntax && row.name == name) return row.kind;
  }
  return SymKind::kIntImm;
}

}  // namespace relax
