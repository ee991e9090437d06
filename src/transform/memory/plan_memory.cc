// plan-memory: the intermediate tensors of each graph function share one arena.
//
// What it does. After lower-alloc every intermediate has a storage of its own:
//
//   a_storage: Object = alloc_storage(prim(n * 16))
//   a: Tensor[(n, 4), float32] = alloc_tensor(a_storage, prim(0), shape(n, 4), dtype=float32)
//   _a: Tuple[()] = call_tir_dps(@k, (x,), (a,))
//   b_storage: Object = alloc_storage(prim(n * 16))
//   b: Tensor[(n, 4), float32] = alloc_tensor(b_storage, prim(0), shape(n, 4), dtype=float32)
//   _b: Tuple[()] = call_tir_dps(@k, (a,), (b,))
//   c_storage: ...                       (c written from b; c is returned)
//
// The pass gives the function ONE storage, the arena, sized by the memory planner
// (relax/transform/memory_planner.h), places each planned tensor at its offset in it, and
// kills each tensor after its last use and the arena after the last use of any of them:
//
//   arena: Object = alloc_storage(prim(n * 32))                  (a constant under bounds)
//   a: Tensor[(n, 4), float32] = alloc_tensor(arena, prim(0), shape(n, 4), dtype=float32)
//   _a: Tuple[()] = call_tir_dps(@k, (x,), (a,))
//   b: Tensor[(n, 4), float32] = alloc_tensor(arena, prim(n * 16), shape(n, 4), dtype=float32)
//   _b: Tuple[()] = call_tir_dps(@k, (a,), (b,))
//   _kill_a: Tuple[()] = kill_tensor(a)
//   ...                                  (c keeps its own storage: it is returned)
//   _kill_b: Tuple[()] = kill_tensor(b)
//   _kill_arena: Tuple[()] = kill_storage(arena)
//
// Stages, per graph function of the module:
//   1. Candidates: a top-level binding `t = alloc_tensor(s, prim(0), shape(...), dtype=...)`
//      in a plain block whose storage `s = alloc_storage(...)` is a top-level binding of a
//      plain block used by nothing else (a storage that is killed, or holds several tensors,
//      is already planned and left alone: this is what makes a second run change nothing),
//      with a known shape whose dims use only symbolic variables the parameters define (the
//      arena is allocated before the first of them; a variable a match_cast defines later
//      leaves its tensors unplanned).
//   2. Liveness, from the dataflow of the top-level bindings numbered in order: a candidate
//      is born at its alloc_tensor binding and lives to the last binding that mentions it or
//      anything that may alias it. A binding's variable may alias every candidate its value
//      mentions -- views, tuples, tuple items, call_tir_inplace's results (lower-alloc binds
//      them as tuples of the arguments written), calls of functions and nested functions, all
//      through the variables they mention -- unless its annotation can hold no memory (Prim,
//      Shape, tuples of them). An If uses every candidate it mentions (its branches included);
//      its result may alias what its branches' results may alias, read through the bindings
//      inside them (an allocation inside a branch is fresh). The destination-passing calls write their
//      destinations and are uses of them. A candidate that the function's result may alias
//      (an output, a field of a returned tuple, a view of one, an in-place output written
//      into it) escapes: it keeps its own storage.
//   3. Planning: plan_memory() over the remaining candidates (size = element bytes times the
//      dims, alignment = its storage's), with an Analyzer that knows each parameter-defined
//      variable is >= 0 and, where the function declares one, its upper bound. Bounded sizes
//      are planned at their bound (a constant arena when all are), others symbolically.
//   4. Rewrite: the arena `alloc_storage(arena_size, alignment=arena_alignment)` replaces the
//      first planned storage binding; the other planned storages go; each planned tensor is
//      `alloc_tensor(arena, prim(offset), ...)` with its shape, dtype and zero_init kept; after
//      the binding of each last use, `kill_tensor(t)` for every planned tensor that ends there,
//      then `kill_storage(arena)` after the last of them. A kill whose binding falls in a
//      dataflow block (kills are effects) goes into a plain block right after that block.
//
// Invariants. Relies on lowered IR (lower-alloc) and on the runtime checking the declared
// upper bounds at function entry (a constant arena is only valid under them). Keeps
// well-formedness and every annotation (no binding's variable changes). A function with
// nothing to plan stays pointer-identical; running the pass twice changes nothing more.
// check_memory_plan() (relax/transform/plan_memory.h) verifies a result from the IR alone.
//
// Not handled. Storages allocated inside If branches and nested functions are not planned
// (they keep their own storages; the tensors of the enclosing function that a branch uses are
// live across the whole If binding); neither are tensors whose sizes depend on variables
// defined after the function's entry. The planner's own limits apply (greedy, one tensor per
// block at a time, see memory_planner.h).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/normalize.h"
#include "relax/ir/op.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/visitor.h"
#include "relax/transform/memory_planner.h"
#include "relax/transform/passes.h"
#include "transform/memory/memory_ir.h"

namespace relax::transform {
namespace {

using memory::MemoryPlan;
using memory::PlannedTensor;
using memory_ir::element_bytes;
using memory_ir::op_call;

// A top-level binding and where it stands.
struct Site {
  const Binding* binding;
  size_t block;
  bool dataflow;
};

struct Candidate {
  size_t storage_at;  // binding index of its alloc_storage
  size_t tensor_at;   // binding index of its alloc_tensor
  SymExpr bytes;
  int64_t alignment;
  size_t last;
  bool escapes = false;
};

class FunctionPlanner {
 public:
  FunctionPlanner(const IRModule& mod, std::string name, const FunctionNode& fn)
      : mod_(mod), name_(std::move(name)), fn_(fn), seq_(*fn.body.as<SeqExprNode>()) {
    for (size_t b = 0; b < seq_.blocks.size(); ++b) {
      for (const Binding& binding : seq_.blocks[b].bindings) {
        sites_.push_back(Site{&binding, b, seq_.blocks[b].is_dataflow});
      }
    }
    std::vector<StructInfo> params;
    for (const Var& p : fn.params) params.push_back(p.struct_info());
    for (const SymVar& v : defined_sym_vars(params)) {
      int64_t upper = ConstIntBound::kPosInf;
      for (const SymBound& b : fn.upper_bounds) {
        if (structural_equal(b.var, v)) upper = std::min(upper, b.upper);
      }
      analyzer_.bind(v, 0, upper);
      entry_vars_.insert(v);
    }
  }

  // The rewritten function, the function itself when nothing is planned, or an error.
  absl::StatusOr<Expr> run(const Expr& fn_expr) {
    find_candidates();
    compute_liveness();
    std::vector<size_t> planned;
    for (size_t c = 0; c < candidates_.size(); ++c) {
      if (!candidates_[c].escapes) planned.push_back(c);
    }
    if (planned.empty()) return fn_expr;
    std::vector<PlannedTensor> tensors;
    for (size_t c : planned) {
      const Candidate& cand = candidates_[c];
      tensors.push_back(PlannedTensor{sites_[cand.tensor_at].binding->var.name_hint(), cand.bytes,
                                      cand.alignment, static_cast<int64_t>(cand.tensor_at),
                                      static_cast<int64_t>(cand.last)});
    }
    absl::StatusOr<MemoryPlan> plan = memory::plan_memory(tensors, analyzer_);
    if (!plan.ok()) return absl::Status(plan.status().code(), absl::StrCat("@", name_, ": ", plan.status().message()));
    planned_tensors_ = static_cast<int64_t>(planned.size());
    constant_arena_ = plan->constant_arena();
    return rewrite(planned, *plan, fn_expr);
  }

  int64_t planned_tensors() const { return planned_tensors_; }
  bool constant_arena() const { return constant_arena_; }

 private:
  void find_candidates() {
    absl::flat_hash_map<const ExprNode*, int64_t> mentions;
    for (const ExprNode* v : memory_ir::mentioned_vars(fn_.body)) ++mentions[v];
    absl::flat_hash_map<const ExprNode*, size_t> storage_at;
    for (size_t i = 0; i < sites_.size(); ++i) {
      const Binding& b = *sites_[i].binding;
      if (b.is_match_cast || sites_[i].dataflow) continue;
      if (op_call(b.value, "alloc_storage") != nullptr) {
        storage_at[b.var.get()] = i;
        continue;
      }
      const CallNode* alloc = op_call(b.value, "alloc_tensor");
      if (alloc == nullptr) continue;
      auto s = storage_at.find(alloc->args[0].get());
      if (s == storage_at.end() || mentions[s->first] != 1) continue;
      const auto* offset = alloc->args[1].struct_info().as<PrimStructInfoNode>();
      const auto* tensor = b.var.struct_info().as<TensorStructInfoNode>();
      if (offset == nullptr || !offset->value.defined() || offset->value.as_const() != std::optional<int64_t>(0) || tensor == nullptr ||
          !tensor->shape || !tensor->dtype) {
        continue;
      }
      SymExpr bytes = element_bytes(*tensor->dtype);
      bool at_entry = true;
      for (const SymExpr& d : *tensor->shape) {
        bytes = bytes * d;
        for_each_var(d, [&](const SymVar& v) { at_entry = at_entry && entry_vars_.contains(v); });
      }
      if (!at_entry) continue;
      int64_t alignment = 64;
      const CallNode& storage = *op_call(sites_[s->second].binding->value, "alloc_storage");
      if (auto it = storage.attrs.find("alignment"); it != storage.attrs.end()) {
        alignment = std::get<int64_t>(it->second);
      }
      candidate_of_[b.var.get()] = candidates_.size();
      candidates_.push_back(Candidate{s->second, i, analyzer_.simplify(bytes), alignment, i});
    }
  }

  void compute_liveness() {
    absl::flat_hash_map<const ExprNode*, std::vector<size_t>> aliases;  // variable -> candidates
    auto reach = [&](const Expr& e, size_t at, std::vector<size_t>& into) {
      for (const ExprNode* v : memory_ir::mentioned_vars(e)) {
        auto it = aliases.find(v);
        if (it == aliases.end()) continue;
        for (size_t c : it->second) {
          candidates_[c].last = std::max(candidates_[c].last, at);
          into.push_back(c);
        }
      }
    };
    for (size_t i = 0; i < sites_.size(); ++i) {
      const Binding& b = *sites_[i].binding;
      if (auto c = candidate_of_.find(b.var.get()); c != candidate_of_.end()) {
        aliases[b.var.get()] = {c->second};
        continue;  // its storage is not a candidate's alias
      }
      std::vector<size_t> reached;
      reach(b.value, i, reached);
      if (b.value.as<IfNode>() != nullptr) reached = branch_aliases(b.value, aliases);
      if (!reached.empty() && memory_ir::may_hold_memory(b.var.struct_info())) {
        std::sort(reached.begin(), reached.end());
        reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
        aliases[b.var.get()] = std::move(reached);
      }
    }
    std::vector<size_t> returned;
    reach(seq_.body, sites_.size(), returned);
    for (size_t c : returned) candidates_[c].escapes = true;
  }

  // The candidates an If's result may alias: what its branches' results may alias, through
  // the bindings inside them (a fresh allocation inside a branch aliases nothing). Every
  // candidate the If mentions is used by it (the caller records that).
  static std::vector<size_t> branch_aliases(const Expr& value,
                                            absl::flat_hash_map<const ExprNode*, std::vector<size_t>>& aliases) {
    auto mentioned_aliases = [&](const Expr& e) {
      std::vector<size_t> out;
      for (const ExprNode* v : memory_ir::mentioned_vars(e)) {
        if (auto it = aliases.find(v); it != aliases.end()) out.insert(out.end(), it->second.begin(), it->second.end());
      }
      return out;
    };
    const auto* branch = value.as<IfNode>();
    if (branch == nullptr) return mentioned_aliases(value);
    std::vector<size_t> out;
    for (const Expr& side : {branch->then_branch, branch->else_branch}) {
      const auto* seq = side.as<SeqExprNode>();
      if (seq == nullptr) {
        std::vector<size_t> more = mentioned_aliases(side);
        out.insert(out.end(), more.begin(), more.end());
        continue;
      }
      for (const BindingBlock& block : seq->blocks) {
        for (const Binding& b : block.bindings) {
          if (op_call(b.value, "alloc_storage") || op_call(b.value, "alloc_tensor")) continue;
          std::vector<size_t> inner = branch_aliases(b.value, aliases);
          if (!inner.empty() && memory_ir::may_hold_memory(b.var.struct_info())) aliases[b.var.get()] = std::move(inner);
        }
      }
      std::vector<size_t> more = mentioned_aliases(seq->body);
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

  absl::StatusOr<Expr> normalized(const Expr& e) {
    DeduceContext ctx{analyzer_, &mod_};
    return normalize(e, ctx);
  }

  absl::StatusOr<Binding> kill(const Var& v, bool storage) {
    absl::StatusOr<Expr> value = normalized(storage ? op::kill_storage(v) : op::kill_tensor(v));
    if (!value.ok()) return value.status();
    return Binding{Var("_kill_" + v.name_hint(), value->struct_info()), *value, false, StructInfo()};
  }

  absl::StatusOr<Expr> rewrite(const std::vector<size_t>& planned, const MemoryPlan& plan, const Expr& fn_expr) {
    absl::StatusOr<Expr> arena_value = normalized(op::alloc_storage(make_prim_value(plan.arena_size), plan.arena_alignment));
    if (!arena_value.ok()) return arena_value.status();
    const Var arena("arena", arena_value->struct_info());

    // What happens at each binding index.
    std::vector<std::optional<Binding>> replaced(sites_.size());  // planned alloc_tensor bindings
    std::vector<bool> dropped(sites_.size(), false);               // planned storages
    std::vector<std::vector<Binding>> kills_after(sites_.size() + 1);
    size_t arena_at = sites_.size();
    size_t arena_last = 0;
    for (size_t p = 0; p < planned.size(); ++p) {
      const Candidate& c = candidates_[planned[p]];
      dropped[c.storage_at] = true;
      arena_at = std::min(arena_at, c.storage_at);
      arena_last = std::max(arena_last, c.last);
      const Binding& b = *sites_[c.tensor_at].binding;
      const CallNode& alloc = *b.value.as<CallNode>();
      const SymExpr offset = analyzer_.simplify(plan.arena_offset(p));
      absl::StatusOr<Expr> value =
          normalized(make_call(alloc.callee, {arena, make_prim_value(offset), alloc.args[2]}, alloc.attrs));
      if (!value.ok()) return value.status();
      replaced[c.tensor_at] = Binding{b.var, *value, false, StructInfo()};
    }
    // Kills in order of the tensors' births, then the arena's.
    std::vector<size_t> by_birth = planned;
    std::sort(by_birth.begin(), by_birth.end(),
              [&](size_t a, size_t b) { return candidates_[a].tensor_at < candidates_[b].tensor_at; });
    for (size_t c : by_birth) {
      absl::StatusOr<Binding> k = kill(sites_[candidates_[c].tensor_at].binding->var, false);
      if (!k.ok()) return k.status();
      kills_after[candidates_[c].last].push_back(*k);
    }
    absl::StatusOr<Binding> k = kill(arena, true);
    if (!k.ok()) return k.status();
    kills_after[arena_last].push_back(*k);

    std::vector<BindingBlock> blocks;
    size_t i = 0;
    for (const BindingBlock& block : seq_.blocks) {
      BindingBlock out;
      out.is_dataflow = block.is_dataflow;
      std::vector<Binding> deferred;
      for (const Binding& b : block.bindings) {
        const size_t at = i++;
        if (at == arena_at) out.bindings.push_back(Binding{arena, *arena_value, false, StructInfo()});
        if (replaced[at]) {
          out.bindings.push_back(*replaced[at]);
        } else if (!dropped[at]) {
          out.bindings.push_back(b);
        }
        std::vector<Binding>& into = block.is_dataflow ? deferred : out.bindings;
        into.insert(into.end(), kills_after[at].begin(), kills_after[at].end());
      }
      if (!out.bindings.empty()) blocks.push_back(std::move(out));
      if (!deferred.empty()) blocks.push_back(BindingBlock{std::move(deferred), false});
    }
    Expr body = make_seq_expr(std::move(blocks), seq_.body, fn_.body.struct_info());
    Expr fn = make_function(fn_.params, body, fn_.ret, fn_.pure, fn_.upper_bounds, fn_.attrs);
    return with_struct_info(fn, fn_expr.struct_info());
  }

  const IRModule& mod_;
  const std::string name_;
  const FunctionNode& fn_;
  const SeqExprNode& seq_;
  Analyzer analyzer_;
  absl::flat_hash_set<SymVar, SymExprHash, SymExprEqual> entry_vars_;
  std::vector<Site> sites_;
  std::vector<Candidate> candidates_;
  absl::flat_hash_map<const ExprNode*, size_t> candidate_of_;  // alloc_tensor variable -> candidate
  int64_t planned_tensors_ = 0;
  bool constant_arena_ = false;
};

class PlanMemoryPass : public Pass {
 public:
  PlanMemoryPass()
      : Pass(PassInfo("plan-memory",
                      "the intermediate tensors of each graph function share one arena storage, "
                      "placed by the memory planner (a constant size under declared upper bounds)")
                 .with_statistic("planned_tensors", "tensors placed in an arena")
                 .with_statistic("constant_arenas", "functions whose arena has one size for every call")
                 .with_statistic("symbolic_arenas", "functions whose arena size is evaluated per call")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule out = mod;
    for (const auto& [name, fn] : mod.functions()) {
      const auto* node = fn.as<FunctionNode>();
      if (node == nullptr || node->body.as<SeqExprNode>() == nullptr) continue;
      FunctionPlanner planner(mod, name, *node);
      absl::StatusOr<Expr> planned = planner.run(fn);
      if (!planned.ok()) return planned.status();
      if (planned->same_as(fn)) continue;
      out.add(name, *planned);
      ctx.add_statistic("planned_tensors", planner.planned_tensors());
      ctx.add_statistic(planner.constant_arena() ? "constant_arenas" : "symbolic_arenas");
    }
    return out;
  }
};

}  // namespace

PassPtr create_plan_memory_pass() { return std::make_shared<PlanMemoryPass>(); }

}  // namespace relax::transform
