// fuse-ops: groups of call_tir bindings, chosen by the loop-pattern classes of
// their kernels, become one call of a new graph function each.
//
// What it does. Inside each dataflow block of each graph function (nested
// functions and If branches included; functions marked `primitive`, which an
// earlier run made, are left alone), the call_tir bindings are grouped by the
// `op_pattern` class of their callee PrimFunc (op_pattern.h; no attribute:
// opaque) with the post-dominator rule of TVM's FuseOps and the Relax paper.
// For each node n in block order, with p the immediate post-dominator of n's
// value among the bindings of its segment (below) and r the largest pattern on
// the edges from n up to p, n's group fuses into p's group, together with every
// node on the paths between them, when:
//   - n's group is output-elementwise-fusible (a matmul, maybe with part of
//     its epilogue already): r is elementwise (p reads the result at its own
//     shape) and every node on the paths, p included, is at most broadcast --
//     so `matmul -> add bias -> relu` becomes one group, and two such ops never
//     share one (p's group would have to be at most broadcast);
//   - n's group is elementwise or broadcast: every node strictly between is at
//     most injective and p's group is anything but opaque -- chains, diamonds
//     and a reduction's or a matmul's producers (its prologue: a dequantisation
//     before a matmul fuses into the matmul's group);
//   - n's group is injective: the same, in a second phase (so that a matmul
//     has taken its elementwise epilogue before an injective op after it asks);
//   - n's group holds a reduction: never (nothing after a reduction fuses into
//     it); an opaque node never fuses.
// Edges carry the consumer's class, except that a broadcast consumer reading a
// value at its own output shape reads it elementwise. A group is always
// post-dominated by its root, so fusing never duplicates work: a value used by
// two consumers joins a group only with the node that post-dominates both,
// and then every node between joins too. A group holds at most one reduction
// or output-elementwise-fusible op. Option `max-fuse-size` (256) bounds the
// bindings of one group.
//
// Side effects. A binding that may have an effect splits its block into
// segments, and groups are formed only inside one segment: an impure call
// (purity.h; a well-formed dataflow block has none, but the pass does not rely
// on it), call_tir_inplace (it writes its argument), call_dps_library (an
// external function may have effects of its own) and match_cast (it checks,
// and defines symbolic variables later bindings may use). Effectful bindings
// keep their place and are never dropped; no binding moves across one.
//
// The rewrite (Interface 2 of the fusion design). Each group of two or more
// bindings becomes a private graph function `@fused_<callees joined by _>`
// (past 80 characters, the callees that fit and `_and_<k>_more`; uniquified
// against the module) with attributes `primitive = true, private =
// true`: its parameters are the group's inputs from outside it (variables and
// constants) in order of first use, annotated as in the caller, plus, when a
// call needs a symbolic variable that no parameter defines as a bare dim or
// Prim value (one used only in an extra_sym_args ShapeExpr such as the
// `shape(m)` of a rotary kernel indexing `positions[m + i]`, or only inside a
// dim such as `n - 1`), one trailing `s: Shape[(m, ...)]` parameter, to which
// the call site passes `shape(m, ...)`. The body is one dataflow block with the
// group's bindings in their original order (fresh variables of the same names)
// returning the group's one value used outside it, or a tuple of them. The
// caller's upper bounds of the symbolic variables it uses are copied. In the
// block the group becomes one binding at the position of its last member:
// `h2 = @fused_matmul_add_relu(x, w1, b1)` keeps the variable h2, or
// `t = @fused_...(...)` then `a = t[0]`, `b = t[1]` for several outputs.
// A binding between a group's members that uses one of its outputs (it cannot
// feed the group: groups are convex) moves after the group's call; bindings
// are placed by a topological sort that otherwise keeps block order.
//
// Invariants. Relies on a well-formed module with current annotations. Keeps
// well-formedness: the call site's arguments are all defined before the last
// member, the new functions define every symbolic variable they use, and their
// calls are pure. A module without fusible pairs comes back as the same nodes.
//
// Not handled: bindings other than call_tir of a module PrimFunc with a tuple
// of arguments and one Tensor output (multi-output kernels, operator calls,
// tuples, calls of graph functions) are opaque; blocks other than dataflow
// blocks are not fused; tuples are not fused through (TVM's third phase).
#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "relax/ir/normalize.h"
#include "relax/ir/visitor.h"
#include "relax/support/check.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/passes.h"
#include "transform/fusion/fusion_graph.h"
#include "transform/purity.h"

namespace relax::transform {
namespace {

using fusion::FusionEdge;
using fusion::FusionGraph;

constexpr int64_t kDefaultMaxFuseSize = 256;

bool bool_attr(const Attrs& attrs, const std::string& key) {
  auto it = attrs.find(key);
  return it != attrs.end() && std::holds_alternative<bool>(it->second) && std::get<bool>(it->second);
}

bool is_op_call(const Expr& e, std::string_view name) {
  const auto* call = e.as<CallNode>();
  const auto* op = call != nullptr ? call->callee.as<OpNode>() : nullptr;
  return op != nullptr && op->name == name;
}

// The variables a value uses (not those its nested functions bind).
class VarUseCollector : public ExprVisitor {
 public:
  std::vector<const ExprNode*> uses;
  void visit_var(const Var& var) override { uses.push_back(var.get()); }
};

// Whether fusion must not move anything across the binding: a match_cast (a run-time check),
// an effect (an impure call, a write through call_tir_inplace), or a call that leaves the
// module (call_dps_library).
bool is_barrier(const Binding& b) {
  return b.is_match_cast || has_side_effects(b.value, /*count_library_calls=*/true);
}

// Every symbolic variable mentioned by values and annotations, in first-use order.
class SymVarCollector : public ExprVisitor {
 public:
  SymVarCollector() : ExprVisitor(/*visit_annotations=*/true) {}
  void visit_sym_expr(const SymExpr& value) override { add(value); }
  void add(const SymExpr& value) {
    if (!value.defined()) return;
    for_each_var(value, [&](const SymVar& v) {
      if (seen_.insert(v).second) vars.push_back(v);
    });
  }
  void add(const StructInfo& sinfo) {
    if (sinfo.defined()) visit_struct_info(sinfo);
  }
  std::vector<SymVar> vars;

 private:
  absl::flat_hash_set<SymVar, SymExprHash, SymExprEqual> seen_;
};

// A call_tir that fusion may group: a module PrimFunc called with a tuple of
// variables, constants and Prim values, producing one Tensor.
struct KernelCall {
  const CallNode* call = nullptr;
  std::string callee;
  OpPattern pattern = OpPattern::kOpaque;
};

std::optional<KernelCall> kernel_call(const Binding& b, const IRModule& mod) {
  if (b.is_match_cast || !is_op_call(b.value, "call_tir")) return std::nullopt;
  const auto* call = b.value.as<CallNode>();
  if (call->args.size() < 2 || call->sinfo_args.size() != 1 ||
      call->sinfo_args[0].kind() != StructInfoKind::kTensor) {
    return std::nullopt;
  }
  const auto* gvar = call->args[0].as<GlobalVarNode>();
  const auto* tuple = call->args[1].as<TupleNode>();
  if (gvar == nullptr || tuple == nullptr) return std::nullopt;
  for (const Expr& field : tuple->fields) {
    if (field.as<VarNode>() == nullptr && field.as<ConstantNode>() == nullptr &&
        field.as<PrimValueNode>() == nullptr) {
      return std::nullopt;
    }
  }
  const auto* prim = mod.lookup(gvar->name).as<PrimFuncNode>();
  if (prim == nullptr) return std::nullopt;
  return KernelCall{call, gvar->name, op_pattern_of(*prim).value_or(OpPattern::kOpaque)};
}

bool same_shape(const StructInfo& a, const StructInfo& b) {
  const auto* ta = a.as<TensorStructInfoNode>();
  const auto* tb = b.as<TensorStructInfoNode>();
  if (ta == nullptr || tb == nullptr || !ta->shape || !tb->shape || ta->shape->size() != tb->shape->size()) {
    return false;
  }
  for (size_t i = 0; i < ta->shape->size(); ++i) {
    if (!structural_equal((*ta->shape)[i], (*tb->shape)[i])) return false;
  }
  return true;
}

// "fused_" and the callees joined by "_"; past kMaxNameLength, the callees that
// fit and "_and_<k>_more" (a group of 256 calls would have a name of 1,000s of
// characters).
constexpr size_t kMaxNameLength = 80;
std::string function_name(const std::vector<std::string>& callees) {
  std::string name = "fused";
  size_t used = 0;
  while (used < callees.size() && (used == 0 || name.size() + 1 + callees[used].size() <= kMaxNameLength)) {
    name += "_" + callees[used++];
  }
  if (used < callees.size()) name += "_and_" + std::to_string(callees.size() - used) + "_more";
  return name;
}

// Rewrites the dataflow blocks of one graph function, adding the grouped
// functions to `out` as it makes them.
class BlockFuser : public ExprMutator {
 public:
  BlockFuser(IRModule& out, int64_t max_fuse_size)
      : ExprMutator(&out), out_(out), max_fuse_size_(max_fuse_size) {}

  int64_t groups() const { return groups_; }
  int64_t fused_bindings() const { return fused_bindings_; }
  const absl::Status& error() const { return error_; }

  Expr visit_function(const Expr& e, const FunctionNode& node) override {
    if (bool_attr(node.attrs, "primitive")) return e;
    functions_.push_back(&node);
    Expr out = ExprMutator::visit_function(e, node);
    functions_.pop_back();
    return out;
  }

  BindingBlock visit_binding_block(const BindingBlock& block) override {
    BindingBlock visited = ExprMutator::visit_binding_block(block);
    if (!visited.is_dataflow || !error_.ok()) return visited;
    return fuse_block(visited);
  }

 private:
  // One group of a block: its members (indices into the block, in order).
  struct Group {
    std::vector<int> members;
  };

  BindingBlock fuse_block(const BindingBlock& block);
  // The bindings that replace `group` (one call, then tuple items), or none
  // when the group cannot be expressed (a symbolic variable no Shape can hold).
  std::optional<std::vector<Binding>> make_group_call(const BindingBlock& block, const Group& group,
                                                      const std::vector<std::vector<int>>& users);
  std::string unique_name(const std::string& base) const;

  IRModule& out_;
  int64_t max_fuse_size_;
  std::vector<const FunctionNode*> functions_;  ///< enclosing functions, outermost first
  int64_t groups_ = 0;
  int64_t fused_bindings_ = 0;
  absl::Status error_;
};

BindingBlock BlockFuser::fuse_block(const BindingBlock& block) {
  const int n = static_cast<int>(block.bindings.size());
  absl::flat_hash_map<const ExprNode*, int> def;
  for (int i = 0; i < n; ++i) def[block.bindings[i].var.get()] = i;
  // uses[i]: the earlier bindings of the block that binding i reads (no repeats);
  // users[i]: the later ones that read binding i.
  std::vector<std::vector<int>> uses(n), users(n);
  for (int i = 0; i < n; ++i) {
    VarUseCollector collector;
    collector.visit_expr(block.bindings[i].value);
    for (const ExprNode* v : collector.uses) {
      auto it = def.find(v);
      if (it == def.end() || it->second >= i) continue;
      if (std::find(uses[i].begin(), uses[i].end(), it->second) == uses[i].end()) {
        uses[i].push_back(it->second);
        users[it->second].push_back(i);
      }
    }
  }
  std::vector<bool> barrier(n);
  std::vector<std::optional<KernelCall>> kernels(n);
  for (int i = 0; i < n; ++i) {
    barrier[i] = is_barrier(block.bindings[i]);
    if (!barrier[i]) kernels[i] = kernel_call(block.bindings[i], out_);
  }

  // Partition each segment between barriers.
  std::vector<int> group_of(n, -1);
  std::vector<Group> groups;
  for (int start = 0; start < n;) {
    if (barrier[start]) {
      ++start;
      continue;
    }
    int end = start;
    while (end < n && !barrier[end]) ++end;
    FusionGraph graph;
    graph.nodes.resize(end - start);
    for (int i = start; i < end; ++i) {
      fusion::FusionNode& node = graph.nodes[i - start];
      node.pattern = kernels[i] ? kernels[i]->pattern : OpPattern::kOpaque;
      for (int user : users[i]) {
        if (user >= end) continue;
        OpPattern edge = kernels[user] ? kernels[user]->pattern : OpPattern::kOpaque;
        if (edge == OpPattern::kBroadcast &&
            same_shape(block.bindings[i].var.struct_info(), kernels[user]->call->sinfo_args[0])) {
          edge = OpPattern::kElementwise;
        }
        node.consumers.push_back(FusionEdge{user - start, edge});
      }
    }
    std::vector<int> roots = fusion::partition_fusion_graph(graph, max_fuse_size_);
    std::map<int, std::vector<int>> members;
    for (int i = start; i < end; ++i) members[roots[i - start]].push_back(i);
    for (auto& [root, m] : members) {
      if (m.size() < 2) continue;
      for (int i : m) group_of[i] = static_cast<int>(groups.size());
      groups.push_back(Group{std::move(m)});
    }
    start = end;
  }
  if (groups.empty()) return block;

  // The replacement of each group; a group that cannot be expressed stays as it is.
  std::vector<std::optional<std::vector<Binding>>> calls(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    calls[g] = make_group_call(block, groups[g], users);
    if (!error_.ok()) return block;
    if (!calls[g]) {
      for (int i : groups[g].members) group_of[i] = -1;
    } else {
      ++groups_;
      fused_bindings_ += static_cast<int64_t>(groups[g].members.size());
    }
  }

  // Place the units (a group, or a binding of its own) in topological order,
  // smallest key first, the key being the position of the unit's last binding:
  // a group stands at its last member, a binding that reads a group's output
  // after the group, everything else in block order. Barriers stay where they
  // are: the units of the segments before a barrier have smaller keys and
  // depend only on one another, so they are all placed before it, and every
  // unit after it has a larger key.
  auto unit_of = [&](int i) { return group_of[i] >= 0 ? n + group_of[i] : i; };
  const int units = n + static_cast<int>(groups.size());
  std::vector<int> key(units, -1), pending(units, 0);
  std::vector<std::vector<int>> successors(units);
  for (int i = 0; i < n; ++i) key[unit_of(i)] = std::max(key[unit_of(i)], i);
  for (int i = 0; i < n; ++i) {
    for (int u : uses[i]) {
      if (unit_of(u) == unit_of(i)) continue;
      successors[unit_of(u)].push_back(unit_of(i));
      ++pending[unit_of(i)];
    }
  }
  using Entry = std::pair<int, int>;  // (key, unit)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (int u = 0; u < units; ++u) {
    if (key[u] >= 0 && pending[u] == 0) ready.emplace(key[u], u);
  }
  BindingBlock result;
  result.is_dataflow = true;
  int placed = 0;
  while (!ready.empty()) {
    const int u = ready.top().second;
    ready.pop();
    ++placed;
    if (u < n) {
      result.bindings.push_back(block.bindings[u]);
    } else {
      for (Binding& b : *calls[u - n]) result.bindings.push_back(std::move(b));
    }
    for (int s : successors[u]) {
      if (--pending[s] == 0) ready.emplace(key[s], s);
    }
  }
  int expected_units = 0;
  for (int u = 0; u < units; ++u) expected_units += key[u] >= 0;
  RELAX_CHECK(placed == expected_units) << "fuse-ops: a fusion group is not convex";
  return result;
}

std::string BlockFuser::unique_name(const std::string& base) const {
  if (!out_.contains(base)) return base;
  for (int i = 1;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (!out_.contains(name)) return name;
  }
}

std::optional<std::vector<Binding>> BlockFuser::make_group_call(
    const BindingBlock& block, const Group& group, const std::vector<std::vector<int>>& users) {
  absl::flat_hash_set<int> in_group(group.members.begin(), group.members.end());
  // Inputs from outside, in order of first use, and the fused function's
  // variables standing for the group's own.
  std::vector<Expr> inputs;
  std::vector<Var> params;
  absl::flat_hash_map<const ExprNode*, Expr> replace;
  auto input = [&](const Expr& value) -> Expr {
    if (auto it = replace.find(value.get()); it != replace.end()) return it->second;
    std::string name = "c" + std::to_string(inputs.size());
    if (const auto* var = value.as<VarNode>()) name = var->name_hint;
    Var param(name, value.struct_info());
    inputs.push_back(value);
    params.push_back(param);
    replace.emplace(value.get(), param);
    return param;
  };
  // The outputs: members whose value is used after the group's call (a block
  // output, or a binding outside the group).
  std::vector<int> outputs;
  for (int i : group.members) {
    const Binding& b = block.bindings[i];
    bool used_outside = !b.var.is_dataflow();
    for (int user : users[i]) used_outside = used_outside || !in_group.contains(user);
    if (used_outside) outputs.push_back(i);
  }
  if (outputs.empty()) outputs.push_back(group.members.back());  // all dead: keep the last

  SymVarCollector needed;
  std::vector<Binding> body;
  std::vector<std::string> callees;
  for (int i : group.members) {
    const Binding& b = block.bindings[i];
    const auto* call = b.value.as<CallNode>();
    const auto* tuple = call->args[1].as<TupleNode>();
    std::vector<Expr> fields;
    for (const Expr& field : tuple->fields) {
      if (field.as<PrimValueNode>() != nullptr) {
        fields.push_back(field);
      } else if (auto it = replace.find(field.get()); it != replace.end()) {
        fields.push_back(it->second);
      } else {
        fields.push_back(input(field));
      }
    }
    std::vector<Expr> args = call->args;
    args[1] = make_tuple(std::move(fields), call->args[1].struct_info());
    Expr value = make_call(call->callee, std::move(args), call->attrs, call->sinfo_args, call->struct_info());
    const bool is_output = std::find(outputs.begin(), outputs.end(), i) != outputs.end();
    Var var = is_output ? Var(b.var.name_hint(), b.var.struct_info())
                        : DataflowVar(b.var.name_hint(), b.var.struct_info());
    replace.emplace(b.var.get(), var);
    needed.visit_expr(value);
    needed.add(b.var.struct_info());
    body.push_back(Binding{var, value, false, StructInfo()});
    callees.push_back(call->args[0].as<GlobalVarNode>()->name);
  }
  const std::string name = function_name(callees);
  for (const Var& p : params) needed.add(p.struct_info());

  // Symbolic variables that no parameter defines as a bare dim or Prim value
  // travel in one trailing Shape parameter.
  absl::flat_hash_set<SymVar, SymExprHash, SymExprEqual> plain;
  for (const Var& p : params) {
    if (const auto* t = p.struct_info().as<TensorStructInfoNode>(); t != nullptr && t->shape) {
      for (const SymExpr& d : *t->shape) {
        if (d.is_var()) plain.insert(SymVar::from_expr(d));
      }
    } else if (const auto* prim = p.struct_info().as<PrimStructInfoNode>();
               prim != nullptr && prim->value.defined() && prim->value.is_var()) {
      plain.insert(SymVar::from_expr(prim->value));
    }
  }
  std::vector<SymExpr> extra;
  for (const SymVar& v : needed.vars) {
    if (plain.contains(v)) continue;
    if (v.dtype() != DataType::int64()) return std::nullopt;  // no Shape holds it
    extra.push_back(v);
  }
  if (!extra.empty()) {
    params.push_back(Var("s", shape_sinfo(extra)));
    inputs.push_back(make_shape_expr(std::move(extra)));  // normalised with the call
  }

  Expr result;
  if (outputs.size() == 1) {
    result = replace.at(block.bindings[outputs[0]].var.get());
  } else {
    std::vector<Expr> fields;
    std::vector<StructInfo> field_sinfo;
    for (int i : outputs) {
      fields.push_back(replace.at(block.bindings[i].var.get()));
      field_sinfo.push_back(block.bindings[i].var.struct_info());
    }
    result = make_tuple(std::move(fields), tuple_sinfo(field_sinfo));
  }
  std::vector<SymBound> bounds;
  absl::flat_hash_set<SymVar, SymExprHash, SymExprEqual> used(needed.vars.begin(), needed.vars.end());
  for (const FunctionNode* f : functions_) {
    for (const SymBound& bound : f->upper_bounds) {
      if (used.contains(bound.var)) bounds.push_back(bound);
    }
  }
  Attrs attrs;
  attrs.emplace("primitive", true);
  attrs.emplace("private", true);
  BindingBlock body_block{std::move(body), true};
  StructInfo ret = result.struct_info();
  Expr func = make_function(params, make_seq_expr({std::move(body_block)}, result, ret), ret,
                            /*pure=*/true, std::move(bounds), std::move(attrs));
  const std::string func_name = unique_name(name);
  out_.add(func_name, func);

  DeduceContext ctx{analyzer(), &out_};
  absl::StatusOr<Expr> call = normalize(make_call(out_.global_var(func_name), inputs), ctx);
  if (!call.ok()) {
    error_ = absl::InternalError("fuse-ops: the call of @" + func_name +
                                 " does not deduce: " + std::string(call.status().message()));
    return std::nullopt;
  }
  std::vector<Binding> site;
  if (outputs.size() == 1) {
    site.push_back(Binding{block.bindings[outputs[0]].var, *call, false, StructInfo()});
    return site;
  }
  Var tuple_var = DataflowVar(func_name, call->struct_info());
  site.push_back(Binding{tuple_var, *call, false, StructInfo()});
  for (size_t k = 0; k < outputs.size(); ++k) {
    absl::StatusOr<Expr> item = normalize(make_tuple_get_item(tuple_var, static_cast<int>(k)), ctx);
    RELAX_CHECK(item.ok()) << item.status();
    site.push_back(Binding{block.bindings[outputs[k]].var, *item, false, StructInfo()});
  }
  return site;
}

class FuseOpsPass : public Pass {
 public:
  FuseOpsPass()
      : Pass(PassInfo("fuse-ops",
                      "groups call_tir bindings by their kernels' loop patterns (post-dominator rule) "
                      "into primitive graph functions")
                 .with_option("max-fuse-size", kDefaultMaxFuseSize, "most bindings in one group")
                 .with_statistic("groups", "grouped functions made")
                 .with_statistic("fused_bindings", "bindings moved into grouped functions")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    const int64_t max_fuse_size = ctx.int_option(*this, "max-fuse-size");
    IRModule out = mod;
    int64_t groups = 0;
    int64_t fused = 0;
    for (const auto& [name, func] : mod.functions()) {
      const auto* f = func.as<FunctionNode>();
      if (f == nullptr || bool_attr(f->attrs, "primitive")) continue;
      BlockFuser fuser(out, max_fuse_size);
      Expr rewritten = fuser.visit_expr(func);
      if (!fuser.error().ok()) return fuser.error();
      if (absl::Status s = fuser.status(); !s.ok()) {
        return absl::InternalError("fuse-ops: @" + name + ": " + std::string(s.message()));
      }
      if (rewritten.same_as(func)) continue;
      groups += fuser.groups();
      fused += fuser.fused_bindings();
      out.add(name, rewritten);
    }
    ctx.add_statistic("groups", groups);
    ctx.add_statistic("fused_bindings", fused);
    return out;
  }
};

}  // namespace

PassPtr create_fuse_ops_pass() { return std::make_shared<FuseOpsPass>(); }

}  // namespace relax::transform
