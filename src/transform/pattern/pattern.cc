// Building patterns (relax/transform/pattern.h) and reading matches.
//
// A pattern is a tree of PatternNodes (pattern_impl.h); every method that adds
// a constraint or a capture wraps the pattern in a new node, so patterns are
// immutable and share their parts. Matching is in pattern_match.cc, the
// rewriter in pattern_rewrite.cc.
#include <utility>

#include "transform/pattern/pattern_impl.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/structural_equal.h"
#include "relax/support/check.h"

namespace relax::transform {
namespace {

std::shared_ptr<PatternNode> node_of(PatternKind kind, std::vector<Pattern> children = {}) {
  auto node = std::make_shared<PatternNode>(kind);
  node->children = std::move(children);
  return node;
}

Pattern constrained(const Pattern& inner, Constraint c) {
  auto node = node_of(PatternKind::kConstraint, {inner});
  node->constraint = std::move(c);
  return Pattern(std::move(node));
}

// `func` with its "global_symbol" set to `symbol`, when it is a PrimFunc
// (erased when `symbol` is empty); other functions unchanged.
Expr with_symbol(const Expr& func, const std::string& symbol) {
  const auto* prim = func.as<PrimFuncNode>();
  if (prim == nullptr) return func;
  Attrs attrs = prim->attrs;
  attrs.erase("global_symbol");
  if (!symbol.empty()) attrs.emplace("global_symbol", symbol);
  return make_prim_func(prim->params, prim->body, std::move(attrs));
}

}  // namespace

// ---------------------------------------------------------------------------
// Pattern

Pattern Pattern::operator()(std::vector<Pattern> args) const {
  std::vector<Pattern> children;
  children.reserve(args.size() + 1);
  children.push_back(*this);
  for (Pattern& a : args) children.push_back(std::move(a));
  return Pattern(node_of(PatternKind::kCall, std::move(children)));
}

Pattern Pattern::has_dtype(DataType dtype) const {
  Constraint c;
  c.kind = ConstraintKind::kDtype;
  c.dtype = dtype;
  return constrained(*this, std::move(c));
}

Pattern Pattern::has_rank(int ndim) const {
  Constraint c;
  c.kind = ConstraintKind::kRank;
  c.ndim = ndim;
  return constrained(*this, std::move(c));
}

Pattern Pattern::has_shape(std::vector<SymExpr> dims) const {
  for (const SymExpr& d : dims) {
    RELAX_CHECK(d.defined() && d.dtype() == DataType::int64())
        << "Pattern::has_shape: dims are int64 expressions, got "
        << (d.defined() ? d.to_string() : std::string("an undefined SymExpr"));
  }
  Constraint c;
  c.kind = ConstraintKind::kShape;
  c.dims = std::move(dims);
  return constrained(*this, std::move(c));
}

Pattern Pattern::has_attr(std::string key, AttrValue value) const {
  Constraint c;
  c.kind = ConstraintKind::kAttr;
  c.key = std::move(key);
  c.value = std::move(value);
  return constrained(*this, std::move(c));
}

Pattern Pattern::lacks_attr(std::string key) const {
  Constraint c;
  c.kind = ConstraintKind::kLacksAttr;
  c.key = std::move(key);
  return constrained(*this, std::move(c));
}

Pattern Pattern::where(std::function<bool(const Expr&)> pred) const {
  RELAX_CHECK(pred != nullptr) << "Pattern::where needs a predicate";
  Constraint c;
  c.kind = ConstraintKind::kWhere;
  c.where = std::move(pred);
  return constrained(*this, std::move(c));
}

Pattern Pattern::capture(std::string name) const {
  auto node = node_of(PatternKind::kCapture, {*this});
  node->name = std::move(name);
  return Pattern(std::move(node));
}

Pattern Pattern::optional(const std::function<Pattern(const Pattern&)>& wrap) const {
  return wrap(*this) | *this;
}

Pattern Pattern::optional(const std::string& op_name) const {
  return optional([&](const Pattern& p) { return is_op(op_name)({p}); });
}

Pattern operator|(const Pattern& a, const Pattern& b) {
  return Pattern(node_of(PatternKind::kAlt, {a, b}));
}

Pattern wildcard() { return Pattern(node_of(PatternKind::kWildcard)); }

Pattern is_expr(Expr e) {
  auto node = node_of(PatternKind::kExpr);
  node->expr = std::move(e);
  return Pattern(std::move(node));
}

Pattern is_var(std::string name_hint) {
  auto node = node_of(PatternKind::kVar);
  node->name = std::move(name_hint);
  return Pattern(std::move(node));
}

Pattern is_param() { return Pattern(node_of(PatternKind::kParam)); }

Pattern is_const(std::function<bool(const runtime::Tensor&)> pred) {
  auto node = node_of(PatternKind::kConstant);
  node->const_pred = std::move(pred);
  return Pattern(std::move(node));
}

Pattern is_op(std::string name) {
  auto node = node_of(PatternKind::kOp);
  node->name = std::move(name);
  return Pattern(std::move(node));
}

Pattern is_call_tir(std::string prim_func, std::optional<std::vector<Pattern>> args) {
  auto node = node_of(PatternKind::kCallTir);
  node->name = std::move(prim_func);
  node->any_args = !args.has_value();
  if (args) node->children = *std::move(args);
  return Pattern(std::move(node));
}

Pattern is_tuple(std::vector<Pattern> fields) {
  return Pattern(node_of(PatternKind::kTuple, std::move(fields)));
}

Pattern is_tuple_get_item(Pattern tuple, int index) {
  auto node = node_of(PatternKind::kTupleGetItem, {std::move(tuple)});
  node->index = index;
  return Pattern(std::move(node));
}

// ---------------------------------------------------------------------------
// Match

const Expr& Match::operator[](std::string_view name) const {
  auto it = captures_.find(name);
  RELAX_CHECK(it != captures_.end()) << "the match has no capture `" << name << "`";
  return it->second;
}

const Expr& Match::matched(std::string_view name) const {
  auto it = matched_.find(name);
  RELAX_CHECK(it != matched_.end()) << "the match has no capture `" << name << "`";
  return it->second;
}

SymExpr Match::sym(const SymVar& var) const {
  auto it = syms_.find(var);
  return it == syms_.end() ? SymExpr() : it->second;
}

absl::StatusOr<Expr> Match::add_function(const std::string& name, const Expr& func) const {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("add_function(`" + name +
                                         "`): the match is not part of a module rewrite");
  }
  if (name.empty()) return absl::InvalidArgumentError("add_function: the name is empty");
  ExprKind kind = func.defined() ? func.kind() : ExprKind::kVar;
  if (kind != ExprKind::kFunction && kind != ExprKind::kPrimFunc && kind != ExprKind::kExternFunc) {
    return absl::InvalidArgumentError(
        "add_function(`" + name + "`): expected a Function, PrimFunc or ExternFunc, got " +
        (func.defined() ? std::string(expr_kind_name(kind)) : std::string("an undefined Expr")));
  }
  // A PrimFunc's "global_symbol" follows the name it gets, so it is left out
  // of the comparison.
  Expr key = with_symbol(func, "");
  for (const auto& [existing, f] : module_->functions()) {
    if (f.kind() == kind && structural_equal(with_symbol(f, ""), key)) {
      return module_->global_var(existing);
    }
  }
  std::string unique = name;
  for (int i = 1; module_->contains(unique); ++i) unique = name + "_" + std::to_string(i);
  module_->add(unique, with_symbol(func, func.as<PrimFuncNode>() != nullptr ? unique : ""));
  return module_->global_var(unique);
}

}  // namespace relax::transform
