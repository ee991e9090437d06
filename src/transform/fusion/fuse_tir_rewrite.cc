// fuse-tir's per-member work (fuse_tir_merge.h): matching a callee's symbolic
// variables against what the group binds to its parameters, rewriting the
// callee's body into the fused kernel, and recognising a producer whose value
// can replace the loads of its output.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/ir/visitor.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/solve.h"
#include "relax/shape/sym_expr_search.h"
#include "transform/fusion/fuse_tir_merge.h"

namespace relax::transform::fusion {
namespace {

bool all_known(const SymExpr& e, const SymVarMap<SymExpr>& map) {
  bool known = true;
  for_each_var(e, [&](const SymVar& v) { known &= map.contains(v); });
  return known;
}

// Whether `e` reads `buffer` or mentions a variable of `vars`.
bool mentions(const SymExpr& e, const BufferNode* buffer, const absl::flat_hash_set<uint64_t>& vars) {
  return any_subexpr(e, [&](const SymExpr& x) {
    return (x.kind() == SymKind::kVar && vars.contains(SymVar::from_expr(x).id())) ||
           (x.kind() == SymKind::kBufferLoad && x->buffer_node() == buffer);
  });
}

}  // namespace

// ---------------------------------------------------------------------------
// ParamMatcher.

absl::Status ParamMatcher::bind_buffer(const Buffer& callee, const Buffer& actual, const std::string& what) {
  if (callee.dtype() != actual.dtype() || callee.ndim() != actual.ndim()) {
    return absl::FailedPreconditionError(absl::StrCat(what, " is a buffer of ", callee.dtype().to_string(), " with ",
                                                      callee.ndim(), " dims, bound to one of ",
                                                      actual.dtype().to_string(), " with ", actual.ndim(), " dims"));
  }
  for (size_t d = 0; d < callee.ndim(); ++d) {
    dims_.push_back({callee.shape()[d], actual.shape()[d], absl::StrCat(what, " dim ", d)});
  }
  return absl::OkStatus();
}

void ParamMatcher::bind_scalar(const SymVar& callee, const SymExpr& actual) {
  scalars_.emplace_back(callee, actual.dtype() == callee.dtype() ? actual : cast(callee.dtype(), actual));
}

absl::StatusOr<SymVarMap<SymExpr>> ParamMatcher::solve(Analyzer& analyzer) const {
  SymVarMap<SymExpr> map;
  for (const auto& [var, actual] : scalars_) map.emplace(var, actual);
  for (const Pair& p : dims_) {
    if (p.callee.is_var()) map.emplace(SymVar::from_expr(p.callee), p.actual);
  }
  // A dim such as `n - 1` or `n * 2` defines n when n appears nowhere as a whole dim.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Pair& p : dims_) {
      if (all_known(p.callee, map)) continue;
      std::optional<LinearSolution> s = solve_linear(p.callee, [&](const SymVar& v) { return map.contains(v); });
      if (!s) continue;
      const SymExpr numerator = analyzer.simplify(p.actual - substitute(s->rest, map));
      std::optional<SymExpr> image;
      if (s->coeff == 1) {
        image = numerator;
      } else if (s->coeff == -1) {
        image = analyzer.simplify(-numerator);
      } else {
        image = analyzer.exact_div(numerator, SymExpr(s->coeff));
      }
      if (!image) {
        return absl::FailedPreconditionError(absl::StrCat(p.what, " `", p.callee.to_string(), "` bound to `",
                                                          p.actual.to_string(), "` does not give ",
                                                          s->var.name(), " exactly"));
      }
      map.emplace(s->var, *image);
      changed = true;
    }
  }
  for (const Pair& p : dims_) {
    if (!all_known(p.callee, map)) {
      return absl::FailedPreconditionError(absl::StrCat(p.what, " `", p.callee.to_string(),
                                                        "` has a variable that no parameter determines"));
    }
    const SymExpr image = substitute(p.callee, map);
    if (!analyzer.prove_equal(image, p.actual)) {
      return absl::FailedPreconditionError(absl::StrCat(p.what, " is `", image.to_string(),
                                                        "`, not provably equal to the argument's `",
                                                        p.actual.to_string(), "`"));
    }
  }
  return map;
}

// ---------------------------------------------------------------------------
// MemberRewriter.

absl::StatusOr<Stmt> MemberRewriter::rewrite(const Stmt& body) {
  Stmt out = stmt(body);
  if (!error_.empty()) return absl::FailedPreconditionError(error_);
  return out;
}

SymVar MemberRewriter::fresh(const SymVar& old) {
  SymVar v(old.name(), old.dtype());
  vars_[old] = v;
  return v;
}

Buffer MemberRewriter::buffer(const BufferNode* node) {
  auto it = buffers_.find(node);
  if (it != buffers_.end()) return it->second;
  if (error_.empty()) error_ = absl::StrCat("buffer `", node->name, "` is neither a parameter nor allocated");
  return Buffer();
}

SymExpr MemberRewriter::value(const SymExpr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
    case SymKind::kIntImm:
    case SymKind::kFloatImm:
      return e;
    case SymKind::kVar: {
      auto it = vars_.find(SymVar::from_expr(e));
      if (it != vars_.end()) return it->second;
      if (error_.empty()) error_ = absl::StrCat("variable `", e.to_string(), "` is used but not defined");
      return e;
    }
    case SymKind::kBufferLoad: {
      std::vector<SymExpr> indices;
      for (size_t i = 0; i < e.num_operands(); ++i) indices.push_back(value(e.operand(i)));
      const Buffer b = buffer(e->buffer_node());
      if (!b.defined()) return e;
      auto inl = inlined_.find(b.get());
      if (inl == inlined_.end()) return buffer_load(b, std::move(indices));
      SymVarMap<SymExpr> at;
      for (size_t i = 0; i < indices.size(); ++i) at.emplace(inl->second.vars[i], indices[i]);
      return substitute(inl->second.value, at);
    }
    default: {
      std::vector<SymExpr> operands;
      for (size_t i = 0; i < e.num_operands(); ++i) operands.push_back(value(e.operand(i)));
      return e.with_operands(std::move(operands));
    }
  }
}

Stmt MemberRewriter::stmt(const Stmt& s) {
  if (!s.defined() || !error_.empty()) return s;
  switch (s.kind()) {
    case StmtKind::kFor: {
      const auto* n = s.as<ForNode>();
      SymExpr min = value(n->min), extent = value(n->extent);
      SymVar v = fresh(n->loop_var);
      return make_for(v, min, extent, n->for_kind, stmt(n->body));
    }
    case StmtKind::kSeq: {
      std::vector<Stmt> stmts;
      for (const Stmt& x : s.as<SeqStmtNode>()->stmts) stmts.push_back(stmt(x));
      return make_seq(std::move(stmts));
    }
    case StmtKind::kBufferStore: {
      const auto* n = s.as<BufferStoreNode>();
      std::vector<SymExpr> indices;
      for (const SymExpr& i : n->indices) indices.push_back(value(i));
      SymExpr v = value(n->value);
      Buffer b = buffer(n->buffer.get());
      if (!b.defined()) return s;
      return make_store(b, std::move(indices), v);
    }
    case StmtKind::kIfThenElse: {
      const auto* n = s.as<IfThenElseNode>();
      SymExpr cond = value(n->cond);
      Stmt then_case = stmt(n->then_case);
      return make_if_then_else(cond, then_case, stmt(n->else_case));
    }
    case StmtKind::kLetStmt: {
      const auto* n = s.as<LetStmtNode>();
      SymExpr v = value(n->value);
      SymVar var = fresh(n->var);
      return make_let(var, v, stmt(n->body));
    }
    case StmtKind::kAllocate: {
      const auto* n = s.as<AllocateNode>();
      std::vector<SymExpr> shape, strides;
      for (const SymExpr& d : n->buffer.shape()) shape.push_back(value(d));
      for (const SymExpr& d : n->buffer->strides) strides.push_back(value(d));
      Buffer b(n->buffer.name(), n->buffer.dtype(), std::move(shape), std::move(strides), n->buffer->scope);
      buffers_[n->buffer.get()] = b;
      return make_allocate(b, stmt(n->body));
    }
    case StmtKind::kEvaluate:
      return make_evaluate(value(s.as<EvaluateNode>()->value));
    case StmtKind::kExternCall: {
      const auto* n = s.as<ExternCallNode>();
      std::vector<ExternArg> args;
      for (const ExternArg& a : n->args) {
        if (!a.is_region()) {
          args.push_back(extern_scalar(value(a.value)));
          continue;
        }
        std::vector<SymExpr> indices;
        for (const SymExpr& i : a.indices) indices.push_back(value(i));
        Buffer b = buffer(a.buffer.get());
        if (!b.defined()) return s;
        args.push_back(extern_region(b, std::move(indices)));
      }
      return make_extern_call(n->name, std::move(args));
    }
    case StmtKind::kBlock: {
      const auto* n = s.as<BlockNode>();
      std::vector<IterVar> ivs;
      for (const IterVar& iv : n->iter_vars) {
        SymExpr extent = value(iv.extent), binding = value(iv.binding);
        ivs.push_back({fresh(iv.var), extent, iv.type, binding});
      }
      std::string name = n->name;
      for (int k = 1; block_names_.contains(name); ++k) name = absl::StrCat(n->name, "_", k);
      block_names_.insert(name);
      Stmt init = stmt(n->init);
      return make_block(name, std::move(ivs), init, stmt(n->body));
    }
  }
  return s;
}

// ---------------------------------------------------------------------------
// Producers that can be inlined.

std::optional<InlinedValue> inlinable_value(const Stmt& body, const Buffer& out, Analyzer& analyzer) {
  std::vector<const ForNode*> loops;
  Stmt s = body;
  while (const auto* f = s.as<ForNode>()) {
    loops.push_back(f);
    s = f->body;
  }
  const auto* block = s.as<BlockNode>();
  if (block == nullptr || block->init.defined()) return std::nullopt;
  const auto* store = block->body.as<BufferStoreNode>();
  const size_t rank = out.ndim();
  if (store == nullptr || !store->buffer.same_as(out) || block->iter_vars.size() != rank ||
      loops.size() != rank) {
    return std::nullopt;
  }
  absl::flat_hash_set<uint64_t> loop_vars;
  for (const ForNode* f : loops) {
    if (!analyzer.prove_equal(f->min, 0)) return std::nullopt;
    loop_vars.insert(f->loop_var.id());
  }
  // Each iteration variable spatial, bound to its own loop, ranging over the
  // loop's extent and the output's dim, and the store's index in its place:
  // the block writes every element of `out` exactly once.
  absl::flat_hash_set<uint64_t> bound_loops;
  InlinedValue result;
  for (size_t d = 0; d < rank; ++d) {
    const IterVar& iv = block->iter_vars[d];
    if (iv.type != IterType::kSpatial || !iv.binding.is_var() || !store->indices[d].same_as(iv.var)) {
      return std::nullopt;
    }
    const SymVar loop_var = SymVar::from_expr(iv.binding);
    const ForNode* loop = nullptr;
    for (const ForNode* f : loops) {
      if (f->loop_var.id() == loop_var.id()) loop = f;
    }
    if (loop == nullptr || !bound_loops.insert(loop_var.id()).second ||
        !analyzer.prove_equal(loop->extent, iv.extent) || !analyzer.prove_equal(iv.extent, out.shape()[d])) {
      return std::nullopt;
    }
    result.vars.push_back(iv.var);
  }
  if (mentions(store->value, out.get(), loop_vars)) return std::nullopt;
  result.value = store->value;
  return result;
}

bool calls_float_functions(const SymExpr& value) {
  if (value.kind() == SymKind::kCall && intrinsic_info(value->intrinsic()).dtypes == IntrinsicDtypes::kFloat) {
    return true;
  }
  for (size_t i = 0; i < value.num_operands(); ++i) {
    if (calls_float_functions(value.operand(i))) return true;
  }
  return false;
}

namespace {

// Finds a load of `buffer` outside a compute block, or inside one with an index list that
// leaves out one of the block's spatial iteration variables.
class ReuseFinder : public StmtVisitor {
 public:
  explicit ReuseFinder(const Buffer& buffer) : buffer_(buffer) {}
  bool found = false;

  void visit_block(const Stmt& s, const BlockNode& node) override {
    std::optional<std::vector<SymVar>> outer = std::move(spatial_);
    spatial_.emplace();
    for (const IterVar& iv : node.iter_vars) {
      if (iv.type == IterType::kSpatial) spatial_->push_back(iv.var);
    }
    StmtVisitor::visit_block(s, node);
    spatial_ = std::move(outer);
  }

  void visit_value(const SymExpr& value) override {
    if (found) return;
    if (value.kind() == SymKind::kBufferLoad && value->buffer().same_as(buffer_)) {
      found = !spatial_ || std::any_of(spatial_->begin(), spatial_->end(), [&](const SymVar& v) {
                return !uses_var(value, v);
              });
    }
    StmtVisitor::visit_value(value);
  }

 private:
  static bool uses_var(const SymExpr& load, const SymVar& v) {
    for (size_t i = 0; i < load.num_operands(); ++i) {
      if (mentions_var(load.operand(i), v)) return true;
    }
    return false;
  }

  const Buffer& buffer_;
  std::optional<std::vector<SymVar>> spatial_;  ///< the enclosing block's, none outside blocks
};

}  // namespace

bool reads_with_reuse(const Stmt& body, const Buffer& buffer) {
  ReuseFinder finder(buffer);
  finder.visit_stmt(body);
  return finder.found;
}

}  // namespace relax::transform::fusion
