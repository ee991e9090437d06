// Reading and checking memory plans in the IR (see relax/transform/plan_memory.h).
//
// This file shares no liveness or aliasing code with the pass plan-memory on purpose (only the
// plain IR readers of memory_ir.h): the checker is the oracle of the pass's tests, so it reads
// the storages, offsets, sizes and uses from the IR with its own walk (its own variable
// collector and "may hold memory" rule below), and a mistake in the pass's liveness does not
// hide itself here.
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/visitor.h"
#include "relax/transform/plan_memory.h"
#include "transform/memory/memory_ir.h"

namespace relax::transform::memory {
namespace {

using memory_ir::element_bytes;
using memory_ir::op_call;

// Whether a value of this annotation can hold (or refer to) memory.
bool may_hold_memory(const StructInfo& sinfo) {
  if (!sinfo.defined()) return true;
  switch (sinfo.kind()) {
    case StructInfoKind::kPrim:
    case StructInfoKind::kShape:
      return false;
    case StructInfoKind::kTuple:
      for (const StructInfo& f : sinfo.as<TupleStructInfoNode>()->fields) {
        if (may_hold_memory(f)) return true;
      }
      return false;
    default:
      return true;
  }
}

// Every variable an expression mentions, nested functions and branches included.
class VarUses : public ExprVisitor {
 public:
  std::vector<const ExprNode*> vars;
  void visit_var(const Var& var) override { vars.push_back(var.get()); }
};

std::vector<const ExprNode*> uses_of(const Expr& e) {
  VarUses uses;
  uses.visit_expr(e);
  return uses.vars;
}

SymExpr int_value(const Expr& e) {
  if (const auto* prim = e.struct_info().as<PrimStructInfoNode>()) return prim->value;
  if (const auto* shape = e.struct_info().as<ShapeStructInfoNode>()) {
    if (shape->values && shape->values->size() == 1) return (*shape->values)[0];
  }
  return SymExpr();
}

struct IrStorage {
  std::string name;
  SymExpr size;  // undefined when not known
  int64_t alignment = 64;
  std::optional<size_t> killed_at;
};

struct IrTensor {
  std::string name;
  size_t storage;
  SymExpr offset;  // undefined when not known
  SymExpr bytes;   // undefined when the shape is not known
  int64_t element = 1;
  size_t first = 0;
  size_t last = 0;
};

// The storages and tensors of a function's top-level bindings, with liveness.
struct IrPlan {
  std::vector<IrStorage> storages;
  std::vector<IrTensor> tensors;
  size_t bindings = 0;  // the number of top-level bindings; the result is read at this index
};

// Adds to `out` the tensors that the value of an If may alias: those its branches' results
// may alias through the bindings inside them (allocations there are fresh); any other value
// aliases what it mentions.
void result_aliases(const Expr& value, absl::flat_hash_map<const ExprNode*, std::vector<size_t>>& aliases,
                    std::vector<size_t>& out) {
  const auto* branch = value.as<IfNode>();
  auto add_mentioned = [&](const Expr& e, std::vector<size_t>& into) {
    for (const ExprNode* v : uses_of(e)) {
      if (auto it = aliases.find(v); it != aliases.end()) into.insert(into.end(), it->second.begin(), it->second.end());
    }
  };
  if (branch == nullptr) {
    add_mentioned(value, out);
    return;
  }
  for (const Expr& side : {branch->then_branch, branch->else_branch}) {
    const auto* seq = side.as<SeqExprNode>();
    if (seq == nullptr) {
      add_mentioned(side, out);
      continue;
    }
    for (const BindingBlock& block : seq->blocks) {
      for (const Binding& b : block.bindings) {
        if (op_call(b.value, "alloc_storage") != nullptr || op_call(b.value, "alloc_tensor") != nullptr) continue;
        std::vector<size_t> inner;
        result_aliases(b.value, aliases, inner);
        if (!inner.empty() && may_hold_memory(b.var.struct_info())) aliases[b.var.get()] = std::move(inner);
      }
    }
    add_mentioned(seq->body, out);
  }
}

IrPlan read_plan(const FunctionNode& fn) {
  IrPlan out;
  const auto& seq = *fn.body.as<SeqExprNode>();
  absl::flat_hash_map<const ExprNode*, size_t> storage_of;             // storage variable
  absl::flat_hash_map<const ExprNode*, std::vector<size_t>> aliases;   // variable -> tensors
  auto use = [&](const std::vector<const ExprNode*>& vars, size_t at, std::vector<size_t>* into) {
    for (const ExprNode* v : vars) {
      if (auto s = storage_of.find(v); s != storage_of.end()) {
        // A use of a storage after its kill is a use of a dead value; report it as a use of
        // each of its tensors after the kill (the tensors' last uses extend to here).
        for (IrTensor& t : out.tensors) {
          if (t.storage == s->second) t.last = std::max(t.last, at);
        }
      }
      auto it = aliases.find(v);
      if (it == aliases.end()) continue;
      for (size_t t : it->second) {
        out.tensors[t].last = std::max(out.tensors[t].last, at);
        if (into != nullptr) into->push_back(t);
      }
    }
  };
  size_t index = 0;
  for (const BindingBlock& block : seq.blocks) {
    for (const Binding& b : block.bindings) {
      const size_t at = index++;
      if (const CallNode* call = op_call(b.value, "alloc_storage"); call && !b.is_match_cast) {
        IrStorage s;
        s.name = b.var.name_hint();
        s.size = int_value(call->args[0]);
        if (auto it = call->attrs.find("alignment"); it != call->attrs.end()) {
          s.alignment = std::get<int64_t>(it->second);
        }
        storage_of[b.var.get()] = out.storages.size();
        out.storages.push_back(std::move(s));
        continue;
      }
      const CallNode* alloc = op_call(b.value, "alloc_tensor");
      if (alloc != nullptr && !b.is_match_cast) {
        if (auto s = storage_of.find(alloc->args[0].get()); s != storage_of.end()) {
          IrTensor t;
          t.name = b.var.name_hint();
          t.storage = s->second;
          t.offset = int_value(alloc->args[1]);
          const auto* tensor = b.var.struct_info().as<TensorStructInfoNode>();
          if (tensor != nullptr && tensor->shape && tensor->dtype) {
            t.element = element_bytes(*tensor->dtype);
            SymExpr bytes = t.element;
            for (const SymExpr& d : *tensor->shape) bytes = bytes * d;
            t.bytes = bytes;
          }
          t.first = t.last = at;
          aliases[b.var.get()] = {out.tensors.size()};
          out.tensors.push_back(std::move(t));
          use(uses_of(alloc->args[1]), at, nullptr);
          use(uses_of(alloc->args[2]), at, nullptr);
          continue;
        }
      }
      if (const CallNode* kill = op_call(b.value, "kill_storage")) {
        if (auto s = storage_of.find(kill->args[0].get()); s != storage_of.end()) {
          out.storages[s->second].killed_at = at;
          continue;
        }
      }
      std::vector<size_t> reached;
      use(uses_of(b.value), at, &reached);
      if (b.value.as<IfNode>() != nullptr) {
        reached.clear();
        result_aliases(b.value, aliases, reached);
      }
      if (may_hold_memory(b.var.struct_info()) && !reached.empty()) {
        std::sort(reached.begin(), reached.end());
        reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
        aliases[b.var.get()] = std::move(reached);
      }
    }
  }
  out.bindings = index;
  use(uses_of(seq.body), index, nullptr);  // the result: live to the end
  return out;
}

absl::StatusOr<int64_t> value_at(const SymExpr& e, const SymVarMap<int64_t>& values, const std::string& what) {
  if (!e.defined()) return absl::InvalidArgumentError(what + " is not known");
  absl::StatusOr<int64_t> v = evaluate(e, values);
  if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(what, " (", e.to_string(), "): ", v.status().message()));
  return *v;
}

std::string range(int64_t begin, int64_t end) { return absl::StrCat("[", begin, ", ", end, ")"); }
std::string interval(const IrTensor& t) { return absl::StrCat("live [", t.first, ", ", t.last, "]"); }

const FunctionNode* graph_function(const IRModule& mod, const std::string& name) {
  return mod.lookup(name).as<FunctionNode>();
}

int64_t largest_power_of_two_dividing(int64_t v) { return v <= 0 ? 1 : v & -v; }

}  // namespace

absl::Status check_memory_plan(const Expr& fn_expr, const SymVarMap<int64_t>& values) {
  const auto* fn = fn_expr.as<FunctionNode>();
  if (fn == nullptr) return absl::InvalidArgumentError("check_memory_plan: expected a graph function");
  const IrPlan plan = read_plan(*fn);
  std::vector<int64_t> sizes(plan.storages.size());
  for (size_t s = 0; s < plan.storages.size(); ++s) {
    const std::string what = "the size of storage `" + plan.storages[s].name + "`";
    absl::StatusOr<int64_t> v = value_at(plan.storages[s].size, values, what);
    if (!v.ok()) return v.status();
    if (*v < 0) return absl::InvalidArgumentError(absl::StrCat(what, " is negative: ", *v));
    sizes[s] = *v;
  }
  struct Range {
    int64_t begin;
    int64_t end;
  };
  std::vector<Range> ranges(plan.tensors.size());
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const IrTensor& t = plan.tensors[i];
    const IrStorage& s = plan.storages[t.storage];
    const std::string where = "tensor `" + t.name + "` in storage `" + s.name + "`";
    absl::StatusOr<int64_t> offset = value_at(t.offset, values, "the offset of " + where);
    if (!offset.ok()) return offset.status();
    absl::StatusOr<int64_t> bytes = value_at(t.bytes, values, "the byte size of " + where);
    if (!bytes.ok()) return bytes.status();
    if (*offset < 0 || *offset % t.element != 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": offset ", *offset,
                                                     " is negative or not a multiple of its element size ",
                                                     t.element));
    }
    ranges[i] = Range{*offset, *offset + *bytes};
    if (ranges[i].end > sizes[t.storage]) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": bytes ", range(ranges[i].begin, ranges[i].end),
                                                     " do not fit the storage's ", sizes[t.storage],
                                                     " bytes"));
    }
    if (s.killed_at && t.last > *s.killed_at) {
      return absl::InvalidArgumentError(absl::StrCat(where, " (", interval(t), ") is used after binding ",
                                                     *s.killed_at, " killed its storage"));
    }
  }
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    for (size_t j = i + 1; j < plan.tensors.size(); ++j) {
      const IrTensor& a = plan.tensors[i];
      const IrTensor& b = plan.tensors[j];
      if (a.storage != b.storage || a.last < b.first || b.last < a.first) continue;
      const Range& ra = ranges[i];
      const Range& rb = ranges[j];
      if (ra.begin >= ra.end || rb.begin >= rb.end || ra.end <= rb.begin || rb.end <= ra.begin) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "storage `", plan.storages[a.storage].name, "`: tensors `", a.name, "` bytes ",
          range(ra.begin, ra.end), " ", interval(a), " and `", b.name, "` bytes ", range(rb.begin, rb.end),
          " ", interval(b), " are live at once and overlap"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<FunctionMemoryPlan> read_memory_plan(const IRModule& mod, const std::string& function) {
  const FunctionNode* fn = graph_function(mod, function);
  if (fn == nullptr) return absl::NotFoundError("memory plan: no graph function @" + function);
  const IrPlan ir = read_plan(*fn);
  std::vector<size_t> counts(ir.storages.size());
  for (const IrTensor& t : ir.tensors) ++counts[t.storage];
  if (counts.empty()) {
    return absl::NotFoundError("memory plan: @" + function + " has no storage in its top-level bindings");
  }
  const size_t arena = static_cast<size_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  FunctionMemoryPlan out;
  out.storage = ir.storages[arena].name;
  out.plan.arena_size = ir.storages[arena].size;
  out.plan.arena_alignment = ir.storages[arena].alignment;
  for (const IrTensor& t : ir.tensors) {
    if (t.storage != arena) continue;
    if (!t.offset.defined() || !t.bytes.defined()) {
      return absl::InvalidArgumentError("memory plan: @" + function + ": tensor `" + t.name +
                                        "` has no known offset or shape");
    }
    PlannedTensor p;
    p.name = t.name;
    p.size_bytes = t.bytes;
    p.alignment = largest_power_of_two_dividing(t.element);
    p.first_use = static_cast<int64_t>(t.first);
    p.last_use = static_cast<int64_t>(t.last);
    size_t block = out.plan.blocks.size();
    for (size_t b = 0; b < out.plan.blocks.size(); ++b) {
      if (structural_equal(out.plan.blocks[b].offset, t.offset)) block = b;
    }
    if (block == out.plan.blocks.size()) {
      out.plan.blocks.push_back(PlannedBlock{t.bytes, p.alignment, t.offset});
    } else {
      PlannedBlock& b = out.plan.blocks[block];
      if (!structural_equal(b.size, t.bytes)) b.size = max(b.size, t.bytes);
      b.alignment = std::max(b.alignment, p.alignment);
    }
    out.plan.tensors.push_back(TensorPlacement{block, SymExpr(0)});
    out.tensors.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<SymVarMap<int64_t>> function_sym_values(const IRModule& mod, const std::string& function,
                                                       const std::map<std::string, int64_t>& given) {
  const FunctionNode* fn = graph_function(mod, function);
  if (fn == nullptr) return absl::NotFoundError("no graph function @" + function);
  std::vector<StructInfo> params;
  for (const Var& p : fn->params) params.push_back(p.struct_info());
  SymVarMap<int64_t> values;
  std::map<std::string, bool> used;
  for (const SymVar& v : defined_sym_vars(params)) {
    if (auto it = given.find(v.name()); it != given.end()) {
      values[v] = it->second;
      used[v.name()] = true;
      continue;
    }
    std::optional<int64_t> bound;
    for (const SymBound& b : fn->upper_bounds) {
      if (structural_equal(b.var, v)) bound = b.upper;
    }
    if (!bound) {
      return absl::InvalidArgumentError("@" + function + ": symbolic variable `" + v.name() +
                                        "` has no declared upper bound; give its value");
    }
    values[v] = *bound;
  }
  for (const auto& [name, value] : given) {
    if (!used.contains(name)) {
      return absl::InvalidArgumentError("@" + function + " has no symbolic variable `" + name + "`");
    }
  }
  return values;
}

}  // namespace relax::transform::memory
