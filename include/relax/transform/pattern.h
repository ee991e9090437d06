// Graph rewriting with patterns: find sub-graphs of graph-level expressions by
// their shape and replace them.
//
//   using namespace relax::transform;
//   Pattern w = (is_param() | is_const()).has_rank(2).capture("w");
//   Pattern x = wildcard().capture("x");
//   Pattern p = is_op("matmul")({x, is_op("permute_dims")({w}).has_attr("axes",
//                                                                std::vector<int64_t>{1, 0})});
//   absl::StatusOr<IRModule> out = rewrite(mod, p, [](const Expr& matched, const Match& m) {
//     return make_call(..., {m["x"], m["w"]});   // or `matched` to decline
//   });
//
// Pattern kinds (each function below builds one):
//   wildcard()                 anything
//   is_expr(e)                 exactly the node e (identity, as Vars compare)
//   is_var(name?), is_param()  a Var (optionally by name hint); a parameter of the function
//   is_const(pred?)            a Constant (whose tensor satisfies pred, when given)
//   is_op(name)                the Op `name`; calling a pattern, p({a, b}), gives a pattern
//                              of a call of p with exactly those arguments
//   is_call_tir(name, args?)   call_tir of the module function @name (a PrimFunc), with
//                              argument patterns when given
//   is_tuple({...}), is_tuple_get_item(p, i)
//   a | b                      a, or else b (backtracking: b is tried when a, or anything
//                              matched after a, fails)
//   p.optional(wrap)           wrap(p) | p: an optional part around p; p.optional("exp") is
//                              the optional unary call exp(p)
// Constraints, which keep a pattern's kind and add a check of the matched expression:
//   .has_dtype(dt), .has_rank(r)        its StructInfo's dtype / rank (Tensor, Shape, Prim)
//   .has_shape({n, 4 * k})              its dims (see "Symbolic dims" below)
//   .has_attr(key, value), .lacks_attr(key)   a call's attribute
//   .where(pred)                        any predicate of the matched node (see "Predicates")
//   .capture(name)                      records the expression under `name` (Match)
//
// Looking through bindings. Graph functions are in A-normal form, so a call's
// argument is usually a variable. When a structural pattern (a call, call_tir,
// tuple, tuple item, constant, op) meets a DataflowVar bound earlier in the
// same dataflow block, it is matched against the bound value instead, so one
// pattern spans several bindings. It never looks through a Var that leaves its
// block (an `output`, which other blocks may use), a parameter, a match_cast,
// or a call that is impure; a call pattern never matches an impure call. A
// wildcard, a var pattern and a capture see the expression as written (the
// variable), so a replacement that uses a capture reuses the binding; the node
// a captured pattern matched -- the Call behind the variable, when the pattern
// looked through its binding -- is Match::matched(name):
//
//   Pattern p = is_op("add")({is_op("multiply")({wildcard(), is_const()}).capture("m"), wildcard()});
//   m["m"]           the DataflowVar `lv` of `lv = multiply(x, c)`, as the add's argument is written
//   m.matched("m")   the Call multiply(x, c) bound to it
//
// Predicates. `.where(pred)` runs after the pattern it is attached to has matched
// (its structure, its arguments, the constraints inside it), never before and
// never on a node whose structure failed, and is given the node that pattern
// matched: for a structural pattern (call, call_tir, tuple, tuple item, constant,
// op) the value it looked through to -- the Call, not the DataflowVar bound to it
// --, for a wildcard, var or param pattern the expression as written. Around an
// alternative it gets the node of the branch that matched; it may run more than
// once per match when backtracking revisits the pattern, so it must have no side
// effects that matter. The other constraints (dtype, rank, shape, attributes) are
// declarative checks of the expression as written (a variable's annotation is its
// value's; attributes are read through to the call) and run before the pattern
// under them, as cheap filters. A constant's predicate (is_const(pred)) runs on
// the constant found after looking through.
//
// Symbolic dims. Every SymVar in a has_shape constraint is a variable of the
// pattern: the first time it can be read off a dim (a bare variable, or a dim
// linear in it as relax/shape/solve.h defines, when the division is provably
// exact) it is bound to that value, and every dim is then proven equal to the
// actual one with the Analyzer. `.has_shape({n, n})` matches Tensor[(a, a)] but
// not Tensor[(a, b)] (a == b is not provable); `.has_shape({n, 4 * k})` matches
// Tensor[(a, 8 * c)] with k = 2 * c but not Tensor[(a, b)]. A variable no dim
// determines (only in `n * m`) fails the match. Match::sym gives the values.
// The same variable across several constraints of one pattern must agree.
//
// Captures. A name captured twice in one match must be the same node both
// times (so `add(x, x)` with x captured twice matches only one operand used
// twice).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/runtime/tensor.h"
#include "relax/shape/sym_expr.h"

namespace relax::transform {

class PatternNode;  // the pattern's representation, private to the pattern library

/// An immutable pattern; cheap to copy. Constraint methods return a new
/// pattern and leave this one unchanged.
class Pattern {
 public:
  /// Wraps a node (for the constructors below; users build patterns with them).
  explicit Pattern(std::shared_ptr<const PatternNode> node) : node_(std::move(node)) {}

  /// A call whose callee matches this pattern and whose arguments match `args`,
  /// one each (the call has exactly as many arguments).
  Pattern operator()(std::vector<Pattern> args) const;

  /// The expression's dtype is `dtype` (a Tensor's element type or a Prim's).
  Pattern has_dtype(DataType dtype) const;
  /// The expression is a Tensor or Shape of rank `ndim`.
  Pattern has_rank(int ndim) const;
  /// The expression is a Tensor (or Shape) whose dims are provably `dims`; the
  /// SymVars in `dims` are variables of the pattern (see the file comment).
  Pattern has_shape(std::vector<SymExpr> dims) const;
  /// The expression is a call whose attribute `key` equals `value` (a list of
  /// SymExprs is compared structurally).
  Pattern has_attr(std::string key, AttrValue value) const;
  /// The expression is a call without the attribute `key`.
  Pattern lacks_attr(std::string key) const;
  /// `pred` holds for the node this pattern matched: run after this pattern matched,
  /// given the looked-through value for a structural pattern (see "Predicates").
  Pattern where(std::function<bool(const Expr&)> pred) const;
  /// Records the expression under `name` in the Match.
  Pattern capture(std::string name) const;

  /// wrap(*this) | *this: the part that `wrap` adds around this pattern is
  /// optional; the match with it is tried first.
  Pattern optional(const std::function<Pattern(const Pattern&)>& wrap) const;
  /// The optional call `op_name(*this)` (a unary elementwise op around this pattern).
  Pattern optional(const std::string& op_name) const;

  const PatternNode& node() const { return *node_; }

 private:
  std::shared_ptr<const PatternNode> node_;
};

/// `a`, or else `b`.
Pattern operator|(const Pattern& a, const Pattern& b);

/// Matches anything.
Pattern wildcard();
/// Matches exactly the node `e` (pointer identity, as Vars are compared).
Pattern is_expr(Expr e);
/// Matches a Var or DataflowVar; with a name, only one of that name hint.
Pattern is_var(std::string name_hint = "");
/// Matches a parameter of the function in which the match is made.
Pattern is_param();
/// Matches a Constant; with `pred`, only one whose tensor satisfies it.
Pattern is_const(std::function<bool(const runtime::Tensor&)> pred = nullptr);
/// Matches the Op `name` (a callee); is_op(name)({args...}) matches its calls.
/// The name is not checked against the registry: an unknown one never matches.
Pattern is_op(std::string name);
/// Matches call_tir of the module function @prim_func with arguments matching
/// `args`, one each (any arguments when not given).
Pattern is_call_tir(std::string prim_func, std::optional<std::vector<Pattern>> args = std::nullopt);
/// Matches a Tuple whose fields match `fields`, one each.
Pattern is_tuple(std::vector<Pattern> fields);
/// Matches item `index` of a tuple matching `tuple`.
Pattern is_tuple_get_item(Pattern tuple, int index);

/// One match: the matched expression, its captures and the values of the
/// pattern's symbolic variables.
class Match {
 public:
  /// The matched expression (a binding's value, for matches made inside blocks).
  const Expr& expr() const { return expr_; }
  /// The variable bound to expr() (undefined for match()).
  const Var& binding_var() const { return binding_var_; }

  /// Whether `name` was captured.
  bool has(std::string_view name) const { return captures_.find(name) != captures_.end(); }
  /// The capture `name`; aborts when there is none (check has() for optional parts).
  const Expr& operator[](std::string_view name) const;
  /// Every capture, by name.
  const std::map<std::string, Expr, std::less<>>& captures() const { return captures_; }
  /// The node the pattern captured as `name` matched: the value bound to the captured
  /// variable when that pattern looked through its binding (a Call, a Constant, a Tuple...),
  /// else the capture itself (operator[]). Aborts when there is no such capture.
  const Expr& matched(std::string_view name) const;

  /// The value a has_shape variable took; undefined when it is not one of the
  /// pattern's variables (or sat in an alternative that did not match).
  SymExpr sym(const SymVar& var) const;

  /// The DataflowVars whose bindings the match looked through, in the order met.
  const std::vector<Var>& looked_through() const { return looked_through_; }

  /// Inside a rewrite callback: adds `func` (a PrimFunc, Function or
  /// ExternFunc) to the module being rewritten and returns its GlobalVar. A
  /// structurally equal function already in the module is reused; otherwise
  /// `name` gets a suffix when taken. FailedPrecondition outside a module
  /// rewrite.
  absl::StatusOr<Expr> add_function(const std::string& name, const Expr& func) const;

 private:
  friend class Matcher;
  Expr expr_;
  Var binding_var_;
  std::map<std::string, Expr, std::less<>> captures_;
  std::map<std::string, Expr, std::less<>> matched_;
  SymVarMap<SymExpr> syms_;
  std::vector<Var> looked_through_;
  IRModule* module_ = nullptr;
};

/// Matches `pattern` against `expr` alone: nothing is looked through and is_param() never
/// matches. The first match in backtracking order, or nullopt.
std::optional<Match> match(const Pattern& pattern, const Expr& expr);

/// Every binding value inside the dataflow blocks of `function` (a Function)
/// that `pattern` matches, looking through bindings (see the file comment), in
/// binding order. A value whose match looked through another binding does not
/// hide that binding: it is reported too when it matches on its own.
std::vector<Match> find_matches(const Expr& function, const Pattern& pattern);

/// What the rewriter makes of one match: a replacement for the matched
/// expression (normalised by the rewriter), the matched expression itself to
/// decline, or an error, which stops the rewrite.
using RewriteCallback = std::function<absl::StatusOr<Expr>(const Expr& matched, const Match& match)>;

/// Rewrites every match of `pattern` inside the dataflow blocks of the module's
/// graph functions with `callback`.
///
/// Each block is matched as it was before the rewrite, from its last binding to
/// its first, so that a larger match (an optional part, a chain of bindings)
/// is found before the smaller ones inside it: a binding that an accepted match
/// looked through is not matched again on its own. The accepted replacements
/// then become the new values of their bindings, normalised (deduction gives
/// them their StructInfo; a binding whose annotation changes gets a fresh
/// variable and its uses follow, see ExprMutator). A replacement is not matched
/// again: for a fixed point run the rewrite (or the pass using it) again.
///
/// Dead bindings: a DataflowVar binding that was used before the rewrite and
/// is unused after it (the bindings a match looked through, typically) is
/// removed, transitively; bindings that were already dead are left to dce.
///
/// Errors: a callback's error, or a replacement whose StructInfo cannot be
/// deduced, with its message prefixed by `@function: binding var: `.
/// `rewrites`, when given, is increased by the number of accepted matches.
absl::StatusOr<IRModule> rewrite(const IRModule& mod, const Pattern& pattern,
                                 const RewriteCallback& callback, int64_t* rewrites = nullptr);

/// As above for one Function (outside a module: Match::add_function fails).
absl::StatusOr<Expr> rewrite(const Expr& function, const Pattern& pattern,
                             const RewriteCallback& callback, int64_t* rewrites = nullptr);

}  // namespace relax::transform
