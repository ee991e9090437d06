// simplify-loops: every loop-level kernel simplified under the facts its loops
// and branches establish.
//
// What it does. Each PrimFunc of the module is walked with one Analyzer. The
// facts in force at a statement are those of the statements around it:
//   - inside `for v in range(min, extent=e)`: min <= v < min + e;
//   - in the then-branch of `if c`: c; in the else-branch: !c;
//   - in the body of `let x = value`: x == value (int64 values);
//   - in a compute block: each iteration variable equals its binding, and in
//     its `init` part every reduction variable is 0;
//   - everywhere: a variable that is a dim of a buffer parameter is >= 0.
// Every expression (loop bounds, indices, stored values, conditions, let
// values, block bindings and extents) is replaced by Analyzer::simplify under
// the facts in force (relax/shape/analyzer.h, ConstraintScope). Then:
//   - an `if` whose condition is decided is replaced by its branch; a branch
//     whose condition contradicts the facts (ConstraintScope::contradicts) is
//     dropped; an `if` with nothing left in either branch disappears, and one
//     with only an else-branch becomes `if !c`;
//   - a loop whose extent is proven <= 0, or whose range contradicts the
//     facts, disappears, leaving only the inits that the reductions it
//     carries owe (relax/ir/empty_reduction.h: an empty sum is 0), and so
//     does a loop, let, allocation or block whose body became empty (a
//     block keeps an init); empty statements leave their sequences.
// The typical gain is the tail check of a tiled loop: in
// `for i in range(n) { for j in range(4) { if i*4 + j < n*4 { ... } } }` the
// condition is proven and the `if` goes; `floordiv(i*4 + j, 4)` becomes `i`.
//
// Invariants. Relies on a well-formed module. Keeps every value: each
// rewrite is a simplification the Analyzer guarantees under facts that hold
// wherever the rewritten code runs. Facts are taken only from expressions
// that read no buffer (a condition on A[0] could change inside its branch,
// when the branch writes A); such conditions are still simplified, and
// decided ones still pick their branch. A kernel that nothing changed keeps its
// node.
//
// Not handled: a loop of extent 1 keeps its loop (its variable is known to
// equal min, and expressions simplify accordingly, but it is not
// substituted); loops are not split, fused or reordered; facts of integer
// dtypes other than int64 (an int32 loop variable) are kept only as written
// (the Analyzer canonicalises int64 arithmetic only).
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "relax/ir/empty_reduction.h"
#include "relax/ir/visitor.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

/// Whether evaluating `e` reads a buffer (then it is no fact for the code it guards).
Stmt empty_stmt() { return make_seq({}); }

bool is_empty(const Stmt& s) {
  if (!s.defined()) return true;
  const auto* seq = s.as<SeqStmtNode>();
  return seq != nullptr && seq->stmts.empty();
}

class LoopSimplifier : public StmtMutator {
 public:
  struct Counts {
    int64_t simplified_values = 0;
    int64_t removed_ifs = 0;
    int64_t removed_loops = 0;
  };

  /// The PrimFunc `func` with its body simplified.
  Expr simplify_func(const Expr& func) {
    const auto* node = func.as<PrimFuncNode>();
    analyzer_ = Analyzer();
    for (const PrimParam& param : node->params) {
      if (!param.buffer) continue;
      for (const SymExpr& dim : param.buffer->shape()) {
        if (dim.is_var() && dim.dtype() == DataType::int64()) analyzer_.bind(SymVar::from_expr(dim), 0);
      }
    }
    return visit_prim_func(func);
  }

  const Counts& counts() const { return counts_; }

  SymExpr visit_value(const SymExpr& value) override {
    if (!value.defined()) return value;
    SymExpr simplified = analyzer_.simplify(value);
    if (structural_equal(simplified, value)) return value;
    ++counts_.simplified_values;
    return simplified;
  }

  Stmt visit_seq(const Stmt& s, const SeqStmtNode& node) override {
    bool changed = false;
    std::vector<Stmt> stmts;
    for (const Stmt& x : node.stmts) {
      Stmt y = visit_stmt(x);
      changed |= !y.same_as(x);
      if (is_empty(y)) {
        changed = true;
      } else {
        stmts.push_back(std::move(y));
      }
    }
    if (!changed) return s;
    if (stmts.size() == 1) return stmts[0];
    return make_seq(std::move(stmts));
  }

  Stmt visit_for(const Stmt& s, const ForNode& node) override {
    const SymExpr min = visit_value(node.min);
    const SymExpr extent = visit_value(node.extent);
    if (extent.dtype() == DataType::int64() && analyzer_.prove(extent <= 0)) return removed_loop(node, min);
    Stmt body;
    if (reads_memory(min) || reads_memory(extent)) {
      body = visit_stmt(node.body);
    } else {
      const SymExpr v = node.loop_var;
      Analyzer::ConstraintScope in_loop(analyzer_, min <= v && v < min + extent);
      if (in_loop.contradicts()) return removed_loop(node, min);
      body = visit_stmt(node.body);
    }
    if (is_empty(body)) return removed_loop();
    if (min.same_as(node.min) && extent.same_as(node.extent) && body.same_as(node.body)) return s;
    return make_for(node.loop_var, min, extent, node.for_kind, body);
  }

  Stmt visit_if_then_else(const Stmt& s, const IfThenElseNode& node) override {
    const SymExpr cond = visit_value(node.cond);
    if (auto decided = cond.as_const()) {
      ++counts_.removed_ifs;
      const Stmt& taken = *decided != 0 ? node.then_case : node.else_case;
      return taken.defined() ? visit_stmt(taken) : empty_stmt();
    }
    const bool is_fact = !reads_memory(cond);
    Stmt then_case = branch(node.then_case, cond, is_fact);
    Stmt else_case = node.else_case.defined() ? branch(node.else_case, !cond, is_fact) : Stmt();
    if (is_empty(then_case) && is_empty(else_case)) {
      ++counts_.removed_ifs;
      return empty_stmt();
    }
    if (is_empty(else_case)) else_case = Stmt();
    if (is_empty(then_case)) {
      return make_if_then_else(analyzer_.simplify(!cond), else_case);
    }
    if (cond.same_as(node.cond) && then_case.same_as(node.then_case) &&
        else_case.same_as(node.else_case)) {
      return s;
    }
    return make_if_then_else(cond, then_case, else_case);
  }

  Stmt visit_let(const Stmt& s, const LetStmtNode& node) override {
    const SymExpr value = visit_value(node.value);
    Stmt body;
    if (value.dtype() == DataType::int64() && !reads_memory(value)) {
      Analyzer::ConstraintScope bound(analyzer_, SymExpr(node.var) == value);
      body = visit_stmt(node.body);
    } else {
      body = visit_stmt(node.body);
    }
    if (is_empty(body)) return empty_stmt();
    if (value.same_as(node.value) && body.same_as(node.body)) return s;
    return make_let(node.var, value, body);
  }

  Stmt visit_allocate(const Stmt& s, const AllocateNode& node) override {
    Stmt out = StmtMutator::visit_allocate(s, node);
    const auto* alloc = out.as<AllocateNode>();
    return alloc != nullptr && is_empty(alloc->body) ? empty_stmt() : out;
  }

  Stmt visit_block(const Stmt& s, const BlockNode& node) override {
    bool changed = false;
    std::vector<IterVar> iter_vars = node.iter_vars;
    SymExpr bindings = SymExpr::boolean(true);  // each iteration variable == its binding
    SymExpr at_init = SymExpr::boolean(true);   // each reduction variable == 0
    for (IterVar& iv : iter_vars) {
      SymExpr extent = visit_value(iv.extent);
      SymExpr binding = visit_value(iv.binding);
      changed |= !extent.same_as(iv.extent) || !binding.same_as(iv.binding);
      iv.extent = std::move(extent);
      iv.binding = std::move(binding);
      if (iv.var.dtype() != DataType::int64() || iv.binding.dtype() != DataType::int64()) continue;
      if (!reads_memory(iv.binding)) bindings = bindings && SymExpr(iv.var) == iv.binding;
      if (iv.type == IterType::kReduction) at_init = at_init && SymExpr(iv.var) == 0;
    }
    Stmt init, body;
    {
      Analyzer::ConstraintScope bound(analyzer_, bindings);
      if (node.init.defined()) {
        Analyzer::ConstraintScope first(analyzer_, at_init);
        init = visit_stmt(node.init);
        if (is_empty(init)) init = Stmt();
      }
      body = visit_stmt(node.body);
    }
    if (is_empty(body) && !init.defined()) return empty_stmt();
    if (!changed && init.same_as(node.init) && body.same_as(node.body)) return s;
    return make_block(node.name, std::move(iter_vars), init, body);
  }

 private:
  /// `branch` visited with `cond` in force (when it is a fact); empty when
  /// `cond` contradicts the facts (the branch never runs).
  Stmt branch(const Stmt& stmt, const SymExpr& cond, bool is_fact) {
    if (!is_fact) return visit_stmt(stmt);
    Analyzer::ConstraintScope scope(analyzer_, cond);
    if (scope.contradicts()) return empty_stmt();
    return visit_stmt(stmt);
  }

  Stmt removed_loop() {
    ++counts_.removed_loops;
    return empty_stmt();
  }
  // A loop that never runs, removed: what remains are the inits its
  // reductions owe (relax/ir/empty_reduction.h), its variable at `min`.
  Stmt removed_loop(const ForNode& node, const SymExpr& min) {
    std::optional<Stmt> inits = inits_when_empty(node);
    if (!inits) return removed_loop();
    ++counts_.removed_loops;
    const SymExpr start = min.dtype() == node.loop_var.dtype() ? min : cast(node.loop_var.dtype(), min);
    return visit_stmt(make_let(node.loop_var, start, *inits));
  }

  Analyzer analyzer_;
  Counts counts_;
};

class SimplifyLoopsPass : public Pass {
 public:
  SimplifyLoopsPass()
      : Pass(PassInfo("simplify-loops",
                      "loop-level kernels simplified under their loop ranges and branch conditions; "
                      "decided ifs and empty loops removed")
                 .with_statistic("simplified_values", "expressions that changed")
                 .with_statistic("removed_ifs", "ifs replaced by a branch or removed")
                 .with_statistic("removed_loops", "loops that never run or do nothing, removed")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule out = mod;
    LoopSimplifier simplifier;
    for (const auto& [name, func] : mod.functions()) {
      if (func.as<PrimFuncNode>() == nullptr) continue;
      Expr simplified = simplifier.simplify_func(func);
      if (!simplified.same_as(func)) out.add(name, simplified);
    }
    ctx.add_statistic("simplified_values", simplifier.counts().simplified_values);
    ctx.add_statistic("removed_ifs", simplifier.counts().removed_ifs);
    ctx.add_statistic("removed_loops", simplifier.counts().removed_loops);
    return out;
  }
};

}  // namespace

PassPtr create_simplify_loops_pass() { return std::make_shared<SimplifyLoopsPass>(); }

}  // namespace relax::transform
