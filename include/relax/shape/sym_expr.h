// relax::SymExpr: symbolic scalar expressions -- shape dimensions and loop-level values.
//
// Every tensor dimension in relax is a SymExpr: a constant, a symbolic
// variable (SymVar) or an expression over them. Loop-level code (PrimFunc,
// see relax/ir/prim_func.h) computes with the same family, extended with float
// constants, true division, casts, intrinsic calls (exp, sqrt, ...) and buffer
// loads; shapes use only its int64 part. SymExprs are immutable,
// reference-counted handles; copying one copies a pointer. Two handles can be
// compared three ways:
//   - a.same_as(b): the same node in memory;
//   - structural_equal(a, b): the same tree (variables compared by identity);
//   - analyzer.prove_equal(a, b): provably the same value (see analyzer.h).
// `a == b` does NOT compare: like `a + b` it builds an expression (EQ).
//
// Integer division is floor division (as in Python): floordiv(-7, 2) == -4 and
// floormod(-7, 2) == 1. Comparisons and logical operators produce boolean
// expressions; select(cond, a, b) picks a or b.
//
// Dtypes. Every node has a dtype; most are scalars (lanes == 1). Arithmetic (+ - * min
// max, the branches of select) takes operands of one dtype and has that dtype;
// floordiv and floormod take integers only, `/` (true division) floats only;
// comparisons take two operands of one integer or float dtype and give bool;
// && || ! take bools. Integer dtypes other than int64 (int32, uint8, ...) are
// allowed -- they appear as buffer element dtypes -- but only the int64 part
// is simplified algebraically (see analyzer.h). SymExpr::make and the other
// constructors are strict and abort on a dtype mismatch; the C++ operators add
// one convenience: an int64 *constant* meeting an operand of another numeric
// dtype becomes a constant of that dtype (`x * 2` for a float32 x multiplies
// by 2f32), and a C++ floating-point value becomes a float constant of the
// other operand's dtype (`x * 0.5`).
//
// Vectors. Loop-level code also computes on vectors of `lanes` values
// (a power of two, 2 to kMaxLanes; the dtype says how many: float32x16).
// Two kinds make them: ramp(base, stride, lanes), the int64 vector base,
// base + stride, ..., and broadcast(value, lanes), one scalar in every lane.
// A load whose indices include an int64 vector yields a vector of the
// buffer's element dtype with that many lanes (all vector indices must have
// the same lanes); a store with such an index stores a vector value. Every
// other operator (arithmetic, comparisons, logic, select, casts, intrinsic
// calls) applies lane by lane to operands of one dtype, lanes included:
// mixing a scalar and a vector, or two lane counts, is a dtype mismatch
// (broadcast the scalar). Variables are always scalars. Vector nodes are not
// simplified algebraically; only their scalar parts (a ramp's base) are.
//
// Text form (to_string / parse). Infix with the usual precedence (`* /` over
// `+ -` over comparisons over `&&` over `||`) and calls for the rest:
//   n * 4 + 1     floordiv(n + 15, 16)     select(n < 8, n, 8)     x / y
//   cast<float32>(n)     exp(x)     pow(x, y)     fma(a, b, c)     A[i, j + 1]
// Constants other than int64 carry their dtype as a suffix so that they read
// back exactly: `5i32`, `255u8`, `1.5f32`, `0.1f64`, `2f16`, `1bf16` (a float
// literal is the shortest decimal that reads back to the same value of its
// dtype); infinities and NaN are `inf_f32`, `-inf_f32`, `nan_bf16`. A float
// literal always has a suffix, so `1.5` alone is an error. Names print bare
// when plain and quoted ("a b") otherwise; a variable's dtype is not printed,
// so text reads back to the same variables only through the caller's map, and
// loads need a ParseContext naming their buffers.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/sym_kind.h"
#include "relax/support/data_type.h"

namespace relax {


/// The most lanes a vector SymExpr may have (see "Vectors" above).
inline constexpr int kMaxLanes = 64;
/// Whether `lanes` is a lane count of a vector: a power of two in [2, kMaxLanes].
constexpr bool is_vector_lanes(int64_t lanes) {
  return lanes >= 2 && lanes <= kMaxLanes && (lanes & (lanes - 1)) == 0;
}


class SymExpr;
class SymVar;
class SymExprNode;
class Buffer;
class BufferNode;
struct ParseContext;  // relax/shape/buffer.h
namespace detail {
struct SymNodeFactory;  // makes the nodes; private to the implementation
}  // namespace detail

/// A handle to an immutable SymExpr node. Default-constructed handles are null
/// (`defined()` is false) and may only be assigned to or tested.
class SymExpr {
 public:
  SymExpr() = default;
  /// An int64 constant. Implicit so that `n * 4 + 1` reads naturally.
  SymExpr(int64_t value);  // NOLINT(google-explicit-constructor)
  SymExpr(int value) : SymExpr(static_cast<int64_t>(value)) {}  // NOLINT

  /// A boolean constant (`true` / `false` in text).
  static SymExpr boolean(bool value);
  /// An integer constant of an integer dtype (int8 ... uint64, or bool for 0/1).
  /// Aborts when `value` does not fit the dtype (uint64 constants must fit int64).
  static SymExpr int_imm(int64_t value, DataType dtype);
  /// A float constant of a float dtype (float16, bfloat16, float32, float64).
  /// The value is rounded to the nearest value of the dtype (ties to even;
  /// too large a magnitude becomes an infinity) and every NaN becomes the one
  /// quiet NaN, so that equal constants are equal bit for bit.
  static SymExpr float_imm(double value, DataType dtype);

  /// Builds a node of `kind` over `operands` exactly as given (no folding), for
  /// the kinds with a fixed operand count and a dtype that follows from the
  /// operands: arithmetic, floordiv/floormod, `/`, comparisons, logic, select.
  /// Aborts when the operand count or dtypes do not fit the kind.
  static SymExpr make(SymKind kind, const SymExpr& a, const SymExpr& b = SymExpr(),
                      const SymExpr& c = SymExpr());

  /// A node like this one (same kind, dtype, intrinsic or buffer) over other
  /// operands; `this` itself when they are the same nodes. Works for every kind
  /// with operands (the way mutators rebuild); aborts on a count or dtype the
  /// kind does not take. Constants and variables take no operands.
  SymExpr with_operands(std::vector<SymExpr> operands) const;

  /// Reads the text form written by to_string(). Names map to variables:
  /// when `vars` is given, names found there reuse those variables and new
  /// names are added to it; otherwise each distinct name gets a fresh SymVar.
  /// Errors name the offset and what was expected.
  static absl::StatusOr<SymExpr> parse(std::string_view text,
                                       absl::flat_hash_map<std::string, SymVar>* vars = nullptr);
  /// As above, resolving names through `context` (relax/shape/buffer.h): its
  /// variables, as `vars` above (new names are added on success), and its
  /// buffers, which a load `A[i, j]` must name.
  static absl::StatusOr<SymExpr> parse(std::string_view text, ParseContext& context);

  bool defined() const { return node_ != nullptr; }
  const SymExprNode* get() const { return node_.get(); }
  const SymExprNode* operator->() const { return node_.get(); }
  const SymExprNode& operator*() const { return *node_; }

  SymKind kind() const;
  DataType dtype() const;
  /// The constant's value when this is an integer or boolean constant.
  std::optional<int64_t> as_const() const;
  bool is_const(int64_t value) const;
  /// The constant's value when this is a float constant.
  std::optional<double> as_float() const;
  bool is_var() const { return defined() && kind() == SymKind::kVar; }
  /// Number of operands (0 for constants and variables).
  size_t num_operands() const;
  const SymExpr& operand(size_t i) const;

  /// Pointer identity.
  bool same_as(const SymExpr& other) const { return node_ == other.node_; }

  /// The text form, readable by parse().
  std::string to_string() const;

 protected:
  explicit SymExpr(std::shared_ptr<const SymExprNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const SymExprNode> node_;

  friend class SymExprNode;
  friend class SymVar;
  friend struct detail::SymNodeFactory;
};

/// A named symbolic variable, of dtype int64 unless said otherwise (loop-level
/// code also has variables of other dtypes: a float32 `let`, an int32 scalar
/// parameter). Identity, not the name, makes a variable: two SymVars named "n"
/// are different variables. The text form shows only the name.
class SymVar : public SymExpr {
 public:
  /// Creates a fresh variable. The name must not be empty; the dtype must be a
  /// scalar integer, float or bool.
  explicit SymVar(std::string name, DataType dtype = DataType::int64());
  /// Views `expr` as a variable; aborts unless expr.is_var().
  static SymVar from_expr(const SymExpr& expr);

  const std::string& name() const;
  /// Creation-ordered id, unique within the process; orders variables that share a name.
  uint64_t id() const;

 private:
  SymVar() = default;
};

/// The node behind a SymExpr. Fields are fixed at construction.
class SymExprNode {
 public:
  using Operands = absl::InlinedVector<SymExpr, 3>;

  SymKind kind() const { return kind_; }
  DataType dtype() const { return dtype_; }
  /// Structural hash, computed once at construction.
  size_t hash() const { return hash_; }
  /// The number of nodes on the longest path from this node to a leaf (a constant
  /// or a variable has depth 1), computed once at construction. Readers of outside
  /// input compare it with kMaxNestingDepth (relax/support/limits.h).
  uint32_t depth() const { return depth_; }
  /// The node's scalar payload: the constant (kIntImm), the variable id
  /// (kVar), the bit pattern of the double (kFloatImm), the Intrinsic
  /// (kCall); 0 otherwise. Two nodes of one kind and dtype with equal
  /// operands (and buffer) are structurally equal exactly when these agree.
  int64_t value() const { return value_; }
  /// The value of a kFloatImm.
  double float_value() const;
  /// The function of a kCall.
  Intrinsic intrinsic() const { return static_cast<Intrinsic>(value_); }
  /// The buffer of a kBufferLoad (undefined for other kinds).
  Buffer buffer() const;
  const BufferNode* buffer_node() const { return buffer_.get(); }
  const std::string& name() const { return name_; }
  size_t num_operands() const { return operands_.size(); }
  const SymExpr& operand(size_t i) const { return operands_[i]; }
  const Operands& operands() const { return operands_; }

 private:
  SymExprNode() = default;
  SymKind kind_ = SymKind::kIntImm;
  DataType dtype_ = DataType::int64();
  uint32_t depth_ = 1;
  size_t hash_ = 0;
  int64_t value_ = 0;
  std::string name_;
  std::shared_ptr<const BufferNode> buffer_;
  Operands operands_;

  friend class SymExpr;
  friend class SymVar;
  friend struct detail::SymNodeFactory;
};

inline SymKind SymExpr::kind() const { return node_->kind(); }
inline DataType SymExpr::dtype() const { return node_->dtype(); }
inline size_t SymExpr::num_operands() const { return node_->num_operands(); }
inline const SymExpr& SymExpr::operand(size_t i) const { return node_->operand(i); }

// ---------------------------------------------------------------------------
// Building expressions. These build the tree as written; they never fold.
// Arithmetic takes numeric operands of one dtype (see the top of this file for
// the constant conversion), logic takes boolean ones.

SymExpr operator+(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a, const SymExpr& b);
SymExpr operator*(const SymExpr& a, const SymExpr& b);
/// True division; both operands floats of one dtype.
SymExpr operator/(const SymExpr& a, const SymExpr& b);
/// Negation, built as `a * -1` (`-c` of a constant c is the constant -c; a
/// float `a` is multiplied by the float constant -1).
SymExpr operator-(const SymExpr& a);
SymExpr floordiv(const SymExpr& a, const SymExpr& b);
SymExpr floormod(const SymExpr& a, const SymExpr& b);
SymExpr min(const SymExpr& a, const SymExpr& b);
SymExpr max(const SymExpr& a, const SymExpr& b);
SymExpr operator==(const SymExpr& a, const SymExpr& b);
SymExpr operator!=(const SymExpr& a, const SymExpr& b);
SymExpr operator<(const SymExpr& a, const SymExpr& b);
SymExpr operator<=(const SymExpr& a, const SymExpr& b);
SymExpr operator>(const SymExpr& a, const SymExpr& b);
SymExpr operator>=(const SymExpr& a, const SymExpr& b);
SymExpr operator&&(const SymExpr& a, const SymExpr& b);
SymExpr operator||(const SymExpr& a, const SymExpr& b);
SymExpr operator!(const SymExpr& a);
SymExpr select(const SymExpr& cond, const SymExpr& then_value, const SymExpr& else_value);

/// Converts `value` to `dtype` (any scalar integer, float or bool dtype; a cast to
/// bool is `value != 0`, from float to integer rounds toward zero). A vector
/// converts lane by lane: `dtype` then has the value's lanes.
SymExpr cast(DataType dtype, const SymExpr& value);

/// Intrinsic calls (see Intrinsic and relax/shape/intrinsics.h). Operands
/// share one dtype, int64 constants converted as for the arithmetic operators;
/// the result has their dtype (bool for isnan and isinf). Aborts on a count or
/// dtype the intrinsic does not take.
SymExpr call(Intrinsic op, std::vector<SymExpr> operands);
SymExpr exp(const SymExpr& x);
SymExpr log(const SymExpr& x);
SymExpr sqrt(const SymExpr& x);
SymExpr rsqrt(const SymExpr& x);
SymExpr tanh(const SymExpr& x);
SymExpr erf(const SymExpr& x);
SymExpr sigmoid(const SymExpr& x);
SymExpr pow(const SymExpr& x, const SymExpr& y);
SymExpr abs(const SymExpr& x);
SymExpr fma(const SymExpr& a, const SymExpr& b, const SymExpr& c);
SymExpr sin(const SymExpr& x);
SymExpr cos(const SymExpr& x);
SymExpr floor(const SymExpr& x);
SymExpr ceil(const SymExpr& x);
/// To the nearest integer, ties to even (numpy's round).
SymExpr round(const SymExpr& x);
SymExpr trunc(const SymExpr& x);
/// A bool: whether the float `x` is a NaN.
SymExpr isnan(const SymExpr& x);
/// A bool: whether the float `x` is an infinity (of either sign).
SymExpr isinf(const SymExpr& x);
/// Bitwise operations on integers of one dtype.
SymExpr bitwise_and(const SymExpr& a, const SymExpr& b);
SymExpr bitwise_or(const SymExpr& a, const SymExpr& b);
SymExpr bitwise_xor(const SymExpr& a, const SymExpr& b);
SymExpr bitwise_not(const SymExpr& a);
/// `a` shifted left by `n` bits (0 <= n < bits of the dtype); bits leaving the dtype are dropped.
SymExpr shift_left(const SymExpr& a, const SymExpr& n);
/// `a` shifted right by `n` bits (0 <= n < bits): arithmetic when signed, logical when unsigned.
SymExpr shift_right(const SymExpr& a, const SymExpr& n);

/// buffer[indices...]: the element's value, of the buffer's dtype. Aborts
/// unless there is one integer index per dimension (the PrimFuncBuilder's
/// load() reports the same mistakes as errors instead). An index may be an
/// int64 vector (a ramp); then the load is a vector of the buffer's dtype
/// with its lanes (every vector index must have the same lanes).
SymExpr buffer_load(const Buffer& buffer, std::vector<SymExpr> indices);

/// The int64 vector (base, base + stride, ..., base + (lanes-1) * stride).
/// base and stride are int64 scalars; aborts unless is_vector_lanes(lanes).
SymExpr ramp(const SymExpr& base, const SymExpr& stride, int64_t lanes);
/// The scalar `value` in each of `lanes` lanes; aborts unless `value` is a
/// scalar and is_vector_lanes(lanes).
SymExpr broadcast(const SymExpr& value, int64_t lanes);
/// Why ramp(base, stride, lanes) (kind kRamp) or broadcast(value, lanes)
/// (kBroadcast, `operands` = {value}) cannot be built; empty when it can.
/// Readers of outside input report it, the constructors abort with it.
std::string vector_operand_mismatch(SymKind kind, const std::vector<SymExpr>& operands,
                                    int64_t lanes);
/// Why `indices` cannot index `buffer` (count, integer dtypes, vector lanes);
/// empty when they can. buffer_load aborts with it; readers report it.
std::string load_index_mismatch(const Buffer& buffer, const std::vector<SymExpr>& indices);

namespace detail {
/// `value` as a float constant of `like`'s dtype, which must be a float dtype.
SymExpr float_like(double value, const SymExpr& like);
}  // namespace detail

// A C++ floating-point value next to a SymExpr becomes a float constant of the
// SymExpr's dtype: `x * 0.5`, `1.0 - x`, `x > 0.0`. (Integer literals already
// convert through SymExpr(int64_t); see the top of the file.)
#define RELAX_SYM_FLOAT_OPERATOR(op)                                        \
  template <std::floating_point F>                                          \
  SymExpr operator op(const SymExpr& a, F b) {                              \
    return a op detail::float_like(static_cast<double>(b), a);              \
  }                                                                         \
  template <std::floating_point F>                                          \
  SymExpr operator op(F a, const SymExpr& b) {                              \
    return detail::float_like(static_cast<double>(a), b) op b;              \
  }
RELAX_SYM_FLOAT_OPERATOR(+)
RELAX_SYM_FLOAT_OPERATOR(-)
RELAX_SYM_FLOAT_OPERATOR(*)
RELAX_SYM_FLOAT_OPERATOR(/)
RELAX_SYM_FLOAT_OPERATOR(<)
RELAX_SYM_FLOAT_OPERATOR(<=)
RELAX_SYM_FLOAT_OPERATOR(>)
RELAX_SYM_FLOAT_OPERATOR(>=)
RELAX_SYM_FLOAT_OPERATOR(==)
RELAX_SYM_FLOAT_OPERATOR(!=)
#undef RELAX_SYM_FLOAT_OPERATOR
template <std::floating_point F>
SymExpr min(const SymExpr& a, F b) {
  return min(a, detail::float_like(static_cast<double>(b), a));
}
template <std::floating_point F>
SymExpr max(const SymExpr& a, F b) {
  return max(a, detail::float_like(static_cast<double>(b), a));
}

// ---------------------------------------------------------------------------
// Structure.

/// Same tree, with variables and buffers compared by identity and float
/// constants by bit pattern.
bool structural_equal(const SymExpr& a, const SymExpr& b);
/// Hash consistent with structural_equal.
size_t structural_hash(const SymExpr& e);
/// A deterministic total order consistent with structural_equal: <0, 0, >0.
/// Variables (and the buffers of loads) order by name, then by creation.
int structural_compare(const SymExpr& a, const SymExpr& b);

struct SymExprHash {
  size_t operator()(const SymExpr& e) const { return structural_hash(e); }
};
struct SymExprEqual {
  bool operator()(const SymExpr& a, const SymExpr& b) const { return structural_equal(a, b); }
};
struct SymExprLess {
  bool operator()(const SymExpr& a, const SymExpr& b) const {
    return structural_compare(a, b) < 0;
  }
};

/// A map keyed by variable identity.
template <typename V>
using SymVarMap = absl::flat_hash_map<SymVar, V, SymExprHash, SymExprEqual>;

// ---------------------------------------------------------------------------
// Text, evaluation, substitution.

std::string to_string(const SymExpr& e);
std::ostream& operator<<(std::ostream& os, const SymExpr& e);

/// How many operands SymExpr::make takes for `kind`: 1 (!), 3 (select), 2 for
/// the other operators; 0 for a kind make does not build (constants, variables,
/// casts, calls, loads).
size_t sym_operator_arity(SymKind kind);
/// Why `operands` cannot be the operands of the operator `kind` (their count,
/// then their dtypes: booleans for && || ! and select's condition, integers for
/// floordiv / floormod, floats for /, otherwise numeric, all of one dtype), with
/// the operator called `name` in the message; empty when they can. SymExpr::make
/// aborts with this message; readers of outside input report it. `kind` must be
/// one make builds (sym_operator_arity > 0).
std::string sym_operand_mismatch(SymKind kind, const std::vector<SymExpr>& operands,
                                 std::string_view name);
/// The same for a call of the intrinsic `op`: its arity, then its dtype rule
/// (relax/shape/intrinsics.h), all operands of one dtype.
std::string intrinsic_operand_mismatch(Intrinsic op, const std::vector<SymExpr>& operands,
                                       std::string_view name);

/// Evaluates `e` with every variable taken from `bindings`. Booleans evaluate
/// to 0 or 1. Errors: an unbound variable, division or modulo by zero, and
/// overflow of the node's integer dtype, each naming the subexpression.
/// Only integer and boolean values evaluate: a float constant or variable,
/// `/`, an intrinsic call other than one of integers (abs, the bitwise
/// functions, the shifts) or a buffer load is the error
/// "not an integer expression: `...`". Casts between integer and bool
/// dtypes evaluate (narrowing wraps, as in C++).
absl::StatusOr<int64_t> evaluate(const SymExpr& e, const SymVarMap<int64_t>& bindings);

/// Evaluates a float (or integer, or boolean) expression in double precision,
/// integer variables taken from `int_bindings` and float ones from
/// `float_bindings`. Integer parts follow evaluate(); float arithmetic, casts to
/// float and the intrinsics are computed in double and then rounded to the
/// node's dtype, so the result is what a float16/32 kernel computing in double
/// and rounding each step would give. A buffer load is an error.
absl::StatusOr<double> evaluate_float(const SymExpr& e, const SymVarMap<int64_t>& int_bindings,
                                      const SymVarMap<double>& float_bindings = {});

/// Replaces each variable found in `map` by its image; the rest is rebuilt
/// only where something changed (unchanged subtrees are shared). An image
/// must have its variable's dtype. Buffers are not looked into: a load's
/// indices are substituted, its buffer's shape is not.
SymExpr substitute(const SymExpr& e, const SymVarMap<SymExpr>& map);
/// As above, with the image given by a function (std::nullopt keeps the var).
SymExpr substitute(const SymExpr& e,
                   const std::function<std::optional<SymExpr>(const SymVar&)>& image);

/// Calls `visit` on every distinct variable of `e`, in first-occurrence order
/// (the indices of a load, not the shape of its buffer).
void for_each_var(const SymExpr& e, const std::function<void(const SymVar&)>& visit);

}  // namespace relax
