// relax::SymExpr: symbolic integer (and boolean) expressions.
//
// Every tensor dimension in relax is a SymExpr: a constant, a symbolic
// variable (SymVar) or an expression over them. SymExprs are immutable,
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
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "relax/support/data_type.h"

namespace relax {

/// The kinds of SymExpr node.
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
};

/// The operator spelling of a kind ("+", "floordiv", "<=", ...).
std::string_view sym_kind_name(SymKind kind);

class SymExpr;
class SymVar;
class SymExprNode;

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

  /// Builds a node of `kind` over `operands` exactly as given (no folding).
  /// Aborts when the operand count or dtypes do not fit the kind.
  static SymExpr make(SymKind kind, const SymExpr& a, const SymExpr& b = SymExpr(),
                      const SymExpr& c = SymExpr());

  /// Reads the text form written by to_string(). Names map to variables:
  /// when `vars` is given, names found there reuse those variables and new
  /// names are added to it; otherwise each distinct name gets a fresh SymVar.
  /// Errors name the offset and what was expected.
  static absl::StatusOr<SymExpr> parse(std::string_view text,
                                       absl::flat_hash_map<std::string, SymVar>* vars = nullptr);

  bool defined() const { return node_ != nullptr; }
  const SymExprNode* get() const { return node_.get(); }
  const SymExprNode* operator->() const { return node_.get(); }
  const SymExprNode& operator*() const { return *node_; }

  SymKind kind() const;
  DataType dtype() const;
  /// The constant's value when this is an integer or boolean constant.
  std::optional<int64_t> as_const() const;
  bool is_const(int64_t value) const;
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
};

/// A named symbolic variable of dtype int64. Identity, not the name, makes a
/// variable: two SymVars named "n" are different variables.
class SymVar : public SymExpr {
 public:
  /// Creates a fresh variable. The name must not be empty.
  explicit SymVar(std::string name);
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
  SymKind kind() const { return kind_; }
  DataType dtype() const { return dtype_; }
  /// Structural hash, computed once at construction.
  size_t hash() const { return hash_; }
  /// Constant value (kIntImm) or variable id (kVar).
  int64_t value() const { return value_; }
  const std::string& name() const { return name_; }
  size_t num_operands() const { return num_operands_; }
  const SymExpr& operand(size_t i) const { return operands_[i]; }

 private:
  SymExprNode() = default;
  SymKind kind_ = SymKind::kIntImm;
  DataType dtype_ = DataType::int64();
  uint8_t num_operands_ = 0;
  size_t hash_ = 0;
  int64_t value_ = 0;
  std::string name_;
  std::array<SymExpr, 3> operands_;

  friend class SymExpr;
  friend class SymVar;
};

inline SymKind SymExpr::kind() const { return node_->kind(); }
inline DataType SymExpr::dtype() const { return node_->dtype(); }
inline size_t SymExpr::num_operands() const { return node_->num_operands(); }
inline const SymExpr& SymExpr::operand(size_t i) const { return node_->operand(i); }

// ---------------------------------------------------------------------------
// Building expressions. These build the tree as written; they never fold.
// Arithmetic takes integer operands, logic takes boolean ones.

SymExpr operator+(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a, const SymExpr& b);
SymExpr operator*(const SymExpr& a, const SymExpr& b);
/// Negation, built as `a * -1` (`-c` of a constant c is the constant -c).
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

// ---------------------------------------------------------------------------
// Structure.

/// Same tree, with variables compared by identity.
bool structural_equal(const SymExpr& a, const SymExpr& b);
/// Hash consistent with structural_equal.
size_t structural_hash(const SymExpr& e);
/// A deterministic total order consistent with structural_equal: <0, 0, >0.
/// Variables order by name, then by creation.
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

/// Evaluates `e` with every variable taken from `bindings`. Booleans evaluate
/// to 0 or 1. Errors: an unbound variable, division or modulo by zero, and
/// int64 overflow, each naming the subexpression.
absl::StatusOr<int64_t> evaluate(const SymExpr& e, const SymVarMap<int64_t>& bindings);

/// Replaces each variable found in `map` by its image; the rest is rebuilt
/// only where something changed (unchanged subtrees are shared).
SymExpr substitute(const SymExpr& e, const SymVarMap<SymExpr>& map);
/// As above, with the image given by a function (std::nullopt keeps the var).
SymExpr substitute(const SymExpr& e,
                   const std::function<std::optional<SymExpr>(const SymVar&)>& image);

/// Calls `visit` on every distinct variable of `e`, in first-occurrence order.
void for_each_var(const SymExpr& e, const std::function<void(const SymVar&)>& visit);

}  // namespace relax
