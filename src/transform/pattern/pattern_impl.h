// The inside of patterns (relax/transform/pattern.h), shared by the files that
// build them (pattern.cc), match them (pattern_match.cc) and rewrite with them
// (pattern_rewrite.cc). Private to src/transform.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "transform/purity.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/shape/analyzer.h"
#include "relax/transform/pattern.h"

namespace relax::transform {

enum class PatternKind : uint8_t {
  kWildcard,
  kExpr,          ///< `expr` by identity
  kVar,           ///< a Var; `name` when not empty
  kParam,         ///< a parameter of the enclosing function
  kConstant,      ///< a Constant; `const_pred` when set
  kOp,            ///< the Op `name`
  kCall,          ///< children[0] the callee, the rest the arguments
  kCallTir,       ///< call_tir of @name; children the arguments unless `any_args`
  kTuple,         ///< children the fields
  kTupleGetItem,  ///< children[0] the tuple, `index`
  kAlt,           ///< children[0], or else children[1]
  kConstraint,    ///< children[0] and `constraint`
  kCapture,       ///< children[0], recorded under `name`
};

enum class ConstraintKind : uint8_t { kDtype, kRank, kShape, kAttr, kLacksAttr, kWhere };

/// A check of the matched expression that a constraint pattern adds.
struct Constraint {
  ConstraintKind kind = ConstraintKind::kWhere;
  DataType dtype;                          ///< kDtype
  int ndim = 0;                            ///< kRank
  std::vector<SymExpr> dims;               ///< kShape
  std::string key;                         ///< kAttr, kLacksAttr
  AttrValue value;                         ///< kAttr
  std::function<bool(const Expr&)> where;  ///< kWhere
};

/// One node of a pattern; the fields used depend on `kind` (see PatternKind).
class PatternNode {
 public:
  explicit PatternNode(PatternKind kind) : kind(kind) {}
  PatternKind kind;
  Expr expr;
  std::string name;
  std::function<bool(const runtime::Tensor&)> const_pred;
  std::vector<Pattern> children;
  bool any_args = false;
  int index = 0;
  Constraint constraint;
};

/// The bindings a match may look through: DataflowVar node -> its value.
using LookThrough = absl::flat_hash_map<const ExprNode*, Expr>;
/// Nodes of the variables that are parameters of the enclosing function.
using ParamSet = absl::flat_hash_set<const ExprNode*>;

/// The bindings of `block` (a dataflow block) that a match may look through:
/// each DataflowVar bound, not by match_cast, to a value that is not an impure
/// call.
LookThrough look_through_bindings(const BindingBlock& block);

/// Matches patterns against expressions, with backtracking. One Matcher serves
/// many matches within one block (its Analyzer keeps what it learnt).
class Matcher {
 public:
  /// `bindings` and `params` may be null (nothing is looked through; no
  /// parameter is known); they must outlive the matcher.
  Matcher(const LookThrough* bindings, const ParamSet* params)
      : bindings_(bindings), params_(params) {}

  /// The first match of `pattern` against `expr`, or nullopt. `binding_var`
  /// and `module` are recorded in the Match (see Match::binding_var and
  /// Match::add_function).
  std::optional<Match> match(const Pattern& pattern, const Expr& expr,
                             const Var& binding_var = Var(), IRModule* module = nullptr);

 private:
  using Cont = absl::FunctionRef<bool()>;

  // Each returns whether the pattern matched and the continuation `k` then
  // succeeded; on false, the state (captures, symbolic values, looked-through
  // bindings) is as it was on entry.
  bool match_node(const PatternNode& p, const Expr& e, Cont k);
  bool match_list(const std::vector<Pattern>& patterns, size_t first,
                  const std::vector<Expr>& exprs, size_t offset, Cont k);
  bool match_constraint(const Constraint& c, const Expr& e, Cont k);
  bool match_shape(const std::vector<SymExpr>& pattern, const std::vector<SymExpr>& actual,
                   Cont k);

  // `e` with the bindings it names looked through (recorded in the state).
  Expr resolve(const Expr& e);
  // As resolve, recording nothing.
  Expr peek(const Expr& e) const;

  const LookThrough* bindings_;
  const ParamSet* params_;
  Analyzer analyzer_;
  std::map<std::string, Expr, std::less<>> captures_;
  // The node each capture's pattern matched (Match::matched).
  std::map<std::string, Expr, std::less<>> matched_captures_;
  // The node the pattern that matched last matched (pattern_match.cc, "The matched node").
  Expr matched_;
  SymVarMap<SymExpr> syms_;
  std::vector<Var> looked_through_;
};

}  // namespace relax::transform
