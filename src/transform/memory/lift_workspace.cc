// lift-workspace: scratch buffers become graph-level tensors, so that they
// join the function's memory plan instead of being heap-allocated per call.
//
// What it does. It runs on lowered IR (after lower-alloc). Two kinds of scratch:
//
// (1) Kernels. An `Allocate` of a non-local buffer (scope workspace or global;
// the C++ code generator heap-allocates these on every call) at the top level
// of a PrimFunc called through call_tir_dps becomes an extra buffer parameter
// of the PrimFunc, placed after its last buffer parameter (the outputs) and
// before its trailing scalars:
//
//   prim_func @softmax(A: Buffer[(a, 16), float32], B: Buffer[(a, 16), float32]) {
//     allocate max_elem: Buffer[(a,), float32, workspace] { ... }
//   }
//   _y: Tuple[()] = call_tir_dps(@softmax, (x,), (y,))
//
// becomes
//
//   prim_func @softmax(A: Buffer[(a, 16), float32], B: Buffer[(a, 16), float32],
//                      max_elem: Buffer[(a,), float32, workspace]) { ... }
//   y_max_elem_storage: Object = alloc_storage(prim(n * 4))
//   y_max_elem: Tensor[(n,), float32] = alloc_tensor(y_max_elem_storage, prim(0), shape(n), dtype=float32)
//   _y: Tuple[()] = call_tir_dps(@softmax, (x,), (y, y_max_elem))
//
// The workspace's dims are over the kernel's variables; a call site maps them
// to its own values through the dims of its argument and output annotations
// (a bare variable dim of a buffer parameter takes the argument's dim), its
// scalar Prim arguments and its extra_sym_args. "Top level" means reached from
// the body through other Allocates, sequences and lets only: such an Allocate
// runs once per call, so one tensor per call serves it. The parameter keeps
// the buffer (and its `workspace` scope), so loads and stores are unchanged.
//
// Which PrimFunc is rewritten. When every use of the kernel in the module is a
// call_tir_dps whose workspace dims all map, the kernel is rewritten in place;
// otherwise (a call_tir not lowered, a call site whose dims do not map, another
// use of the GlobalVar) the lifted kernel is a new PrimFunc `<name>_ws` that
// only the rewritten call sites call, and the original stays for the rest.
//
// (2) Library calls. call_library_dps with a declared workspace (a last int
// Prim argument of bytes, possibly symbolic) loses that argument and gets a
// uint8 tensor of that many bytes as an extra destination after its outputs
// (the ABI: relax/runtime/module.h, register_library_function):
//
//   _y: Tuple[()] = call_library_dps(extern_func("lib.f"), (x,), (y,), prim(n * 8))
//
// becomes
//
//   y_workspace_storage: Object = alloc_storage(prim(n * 8))
//   y_workspace: Tensor[(n * 8,), uint8] = alloc_tensor(y_workspace_storage, prim(0), shape(n * 8), dtype=uint8)
//   _y: Tuple[()] = call_library_dps(extern_func("lib.f"), (x,), (y, y_workspace))
//
// The VM code generator runs this library half by itself (lift_library_workspaces)
// on a module that still declares one; it never lifts kernels there, since the
// C++ code generator compiles the PrimFuncs it is given.
//
// Invariants. Relies on a normalised, lowered module. Workspaces are not zeroed
// (a heap block was not either). Keeps well-formedness; a module without
// liftable scratch stays the same; running the pass twice changes nothing more
// (a lifted kernel has no top-level Allocate left to lift).
//
// Not handled (stay as they are): Allocates under a loop, a branch or a compute
// block (one per iteration: lifting would need one slice per iteration);
// buffers of local scope (kernel-private, on the stack when small); buffers
// with declared strides; dims that use a variable only a let or a non-bare
// dim defines; kernels called only through call_tir / call_tir_inplace (run
// lower-alloc first). A library workspace whose byte count is not known as an
// expression is an error naming the function and the binding.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/op.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"
#include "transform/memory/memory_ir.h"

namespace relax::transform {
namespace {

// ---------------------------------------------------------------------------
// The kernel side: which Allocates a PrimFunc gives up, and its lifted form.

struct KernelPlan {
  std::vector<Buffer> workspaces;  // in order of appearance
  size_t insert_at = 0;            // the index of the first workspace parameter
  Expr lifted;                     // the PrimFunc with the workspaces as parameters
};

// The variables a call site can give values to: bare-variable dims of buffer
// parameters and scalar parameters.
SymVarMap<bool> param_defined_vars(const PrimFuncNode& func) {
  SymVarMap<bool> vars;
  for (const PrimParam& p : func.params) {
    if (p.buffer) {
      for (const SymExpr& d : p.buffer->shape()) {
        if (d.is_var()) vars.emplace(SymVar::from_expr(d), true);
      }
    } else if (p.scalar) {
      vars.emplace(*p.scalar, true);
    }
  }
  return vars;
}

// Removes the liftable top-level Allocates of a body, collecting their buffers.
class TopLevelAllocs {
 public:
  explicit TopLevelAllocs(const PrimFuncNode& func) : defined_(param_defined_vars(func)) {}

  std::vector<Buffer> lifted;

  Stmt strip(const Stmt& s) {
    if (!s.defined()) return s;
    if (const auto* alloc = s.as<AllocateNode>()) {
      const bool lift = liftable(alloc->buffer);
      if (lift) lifted.push_back(alloc->buffer);  // before those of its body: appearance order
      Stmt body = strip(alloc->body);
      if (lift) return body;
      return body.same_as(alloc->body) ? s : make_allocate(alloc->buffer, body);
    }
    if (const auto* seq = s.as<SeqStmtNode>()) {
      std::vector<Stmt> stmts;
      bool changed = false;
      for (const Stmt& st : seq->stmts) {
        stmts.push_back(strip(st));
        changed |= !stmts.back().same_as(st);
      }
      return changed ? make_seq(std::move(stmts)) : s;
    }
    if (const auto* let = s.as<LetStmtNode>()) {
      Stmt body = strip(let->body);
      return body.same_as(let->body) ? s : make_let(let->var, let->value, body);
    }
    return s;  // loops, branches, blocks, stores: what they hold runs per iteration or maybe not
  }

 private:
  bool liftable(const Buffer& b) const {
    if (b->scope == BufferScope::kLocal || !b->strides.empty()) return false;
    bool ok = true;
    for (const SymExpr& d : b.shape()) {
      for_each_var(d, [&](const SymVar& v) { ok &= defined_.contains(v); });
    }
    return ok;
  }

  SymVarMap<bool> defined_;
};

std::optional<KernelPlan> plan_kernel(const PrimFuncNode& func) {
  size_t insert_at = 0;
  for (size_t i = 0; i < func.params.size(); ++i) {
    if (func.params[i].buffer) insert_at = i + 1;
  }
  TopLevelAllocs allocs(func);
  Stmt body = allocs.strip(func.body);
  if (allocs.lifted.empty()) return std::nullopt;
  KernelPlan plan;
  plan.workspaces = allocs.lifted;
  plan.insert_at = insert_at;
  std::vector<PrimParam> params(func.params.begin(), func.params.begin() + static_cast<std::ptrdiff_t>(insert_at));
  for (const Buffer& b : plan.workspaces) params.push_back({b, std::nullopt});
  params.insert(params.end(), func.params.begin() + static_cast<std::ptrdiff_t>(insert_at), func.params.end());
  plan.lifted = make_prim_func(std::move(params), body, func.attrs);
  return plan;
}

// The dims of each workspace at a call site (over the caller's variables), or
// nothing when the site cannot give every kernel variable they use a value.
std::optional<std::vector<std::vector<SymExpr>>> site_dims(const CallNode& call, const PrimFuncNode& func,
                                                           const KernelPlan& plan) {
  const std::vector<Expr>& args = call.args[1].as<TupleNode>()->fields;
  const std::vector<Expr>& outs = call.args[2].as<TupleNode>()->fields;
  std::vector<SymExpr> sym_args;
  if (call.args.size() > 3) sym_args = call.args[3].as<ShapeExprNode>()->values;
  if (args.size() + outs.size() != plan.insert_at ||
      plan.insert_at + sym_args.size() != func.params.size()) {
    return std::nullopt;
  }
  SymVarMap<SymExpr> image;
  for (size_t i = 0; i < func.params.size(); ++i) {
    const PrimParam& p = func.params[i];
    if (i >= plan.insert_at) {
      if (p.scalar) image.emplace(*p.scalar, sym_args[i - plan.insert_at]);
      continue;
    }
    const Expr& value = i < args.size() ? args[i] : outs[i - args.size()];
    if (p.scalar) {
      const auto* prim = value.struct_info().as<PrimStructInfoNode>();
      if (prim != nullptr && prim->value.defined()) image.emplace(*p.scalar, prim->value);
      continue;
    }
    const auto* tensor = value.struct_info().as<TensorStructInfoNode>();
    if (tensor == nullptr || !tensor->shape || tensor->shape->size() != p.buffer->ndim()) continue;
    for (size_t d = 0; d < p.buffer->ndim(); ++d) {
      const SymExpr& dim = p.buffer->shape()[d];
      if (dim.is_var()) image.emplace(SymVar::from_expr(dim), (*tensor->shape)[d]);
    }
  }
  std::vector<std::vector<SymExpr>> result;
  for (const Buffer& b : plan.workspaces) {
    std::vector<SymExpr> dims;
    for (const SymExpr& d : b.shape()) {
      bool mapped = true;
      for_each_var(d, [&](const SymVar& v) { mapped &= image.contains(v); });
      if (!mapped) return std::nullopt;
      dims.push_back(substitute(d, image));
    }
    result.push_back(std::move(dims));
  }
  return result;
}

// Every use of each kernel in the graph functions: the call_tir_dps sites (and
// their workspace dims, when they map) and whether any other use exists.
class UseScanner : public ExprVisitor {
 public:
  explicit UseScanner(const absl::flat_hash_map<std::string, KernelPlan>& plans, const IRModule& mod)
      : plans_(plans), mod_(mod) {}

  struct Uses {
    int64_t references = 0;  // GlobalVar occurrences
    int64_t mapped_sites = 0;
  };
  absl::flat_hash_map<std::string, Uses> uses;
  absl::flat_hash_map<const CallNode*, std::vector<std::vector<SymExpr>>> sites;

  void visit_global_var(const Expr& e, const GlobalVarNode& node) override {
    if (plans_.contains(node.name)) ++uses[node.name].references;
    ExprVisitor::visit_global_var(e, node);
  }
  void visit_call(const Expr& e, const CallNode& node) override {
    if (memory_ir::op_call(e, "call_tir_dps") != nullptr) {
      const auto* gvar = node.args[0].as<GlobalVarNode>();
      auto it = gvar != nullptr ? plans_.find(gvar->name) : plans_.end();
      if (it != plans_.end()) {
        const auto& func = *mod_.lookup(gvar->name).as<PrimFuncNode>();
        if (auto dims = site_dims(node, func, it->second)) {
          sites.emplace(&node, *std::move(dims));
          ++uses[gvar->name].mapped_sites;
        }
      }
    }
    ExprVisitor::visit_call(e, node);
  }

 private:
  const absl::flat_hash_map<std::string, KernelPlan>& plans_;
  const IRModule& mod_;
};

// ---------------------------------------------------------------------------
// The graph side: allocations at the call sites.

class CallSiteRewriter : public ExprMutator {
 public:
  // `kernels` maps a kernel name to the name of its lifted form in `mod`.
  CallSiteRewriter(const IRModule& mod, absl::flat_hash_map<const CallNode*, std::vector<std::vector<SymExpr>>> sites,
                   absl::flat_hash_map<std::string, std::string> kernels, absl::flat_hash_map<std::string, KernelPlan> plans)
      : ExprMutator(&mod),
        mod_(mod),
        sites_(std::move(sites)),
        kernels_(std::move(kernels)),
        plans_(std::move(plans)) {}

  int64_t lifted_buffers = 0;
  int64_t library_workspaces = 0;
  std::vector<std::string> errors;

  void set_function(const std::string& name) { function_ = name; }

  void visit_binding(const Binding& binding) override {
    const auto* call = binding.value.as<CallNode>();
    const bool kernel_site = call != nullptr && sites_.contains(call);
    const bool library_site = memory_ir::op_call(binding.value, "call_library_dps") != nullptr && call->args.size() > 3;
    if (binding.is_match_cast || (!kernel_site && !library_site)) {
      ExprMutator::visit_binding(binding);
      return;
    }
    std::string name = binding.var.name_hint();
    if (name.size() > 1 && name[0] == '_') name = name.substr(1);
    Expr value = visit_expr(binding.value);
    const CallNode& c = *value.as<CallNode>();
    std::vector<Expr> args = c.args[1].as<TupleNode>()->fields;
    std::vector<Expr> outs = c.args[2].as<TupleNode>()->fields;
    Expr rewritten;
    if (kernel_site) {
      const std::string& kernel = c.args[0].as<GlobalVarNode>()->name;
      const KernelPlan& plan = plans_.at(kernel);
      const std::vector<std::vector<SymExpr>>& dims = sites_.at(call);
      for (size_t i = 0; i < plan.workspaces.size(); ++i) {
        const Buffer& b = plan.workspaces[i];
        outs.push_back(allocate(name + "_" + b.name(), dims[i], b.dtype()));
        ++lifted_buffers;
      }
      std::vector<SymExpr> sym_args;
      if (c.args.size() > 3) sym_args = c.args[3].as<ShapeExprNode>()->values;
      rewritten = op::call_tir_dps(mod_.global_var(kernels_.at(kernel)), std::move(args), std::move(outs),
                                   std::move(sym_args));
    } else {
      const auto* prim = c.args[3].struct_info().as<PrimStructInfoNode>();
      if (prim == nullptr || !prim->value.defined()) {
        errors.push_back(absl::StrCat("lift-workspace: function `", function_, "`, binding `",
                                      binding.var.name_hint(), "`: the workspace of library function `",
                                      c.args[0].as<ExternFuncNode>()->symbol,
                                      "` has no known byte count (", c.args[3].struct_info().to_string(), ")"));
        ExprMutator::visit_binding(binding);
        return;
      }
      outs.push_back(allocate(name + "_workspace", {prim->value}, DataType{DataType::Code::kUInt, 8, 1}));
      ++library_workspaces;
      rewritten = make_call(make_op_or_die("call_library_dps"), {c.args[0], make_tuple(std::move(args)),
                                                                 make_tuple(std::move(outs))});
    }
    set_var_remap(binding.var, emit(rewritten, binding.var.name_hint()));
  }

 private:
  Var allocate(const std::string& name, const std::vector<SymExpr>& dims, DataType dtype) {
    SymExpr bytes = memory_ir::element_bytes(dtype);
    for (const SymExpr& d : dims) bytes = bytes * d;
    bytes = analyzer().simplify(bytes);
    Var storage = emit(op::alloc_storage(make_prim_value(bytes)), name + "_storage");
    return emit(op::alloc_tensor(storage, make_prim_value(0), make_shape_expr(dims), dtype), name);
  }

  const IRModule& mod_;
  absl::flat_hash_map<const CallNode*, std::vector<std::vector<SymExpr>>> sites_;
  absl::flat_hash_map<std::string, std::string> kernels_;
  absl::flat_hash_map<std::string, KernelPlan> plans_;
  std::string function_;
};

struct LiftStats {
  int64_t lifted_buffers = 0;
  int64_t library_workspaces = 0;
  int64_t kernels_copied = 0;
};

std::string fresh_name(const IRModule& mod, const std::string& base) {
  std::string name = base + "_ws";
  for (int i = 1; mod.contains(name); ++i) name = absl::StrCat(base, "_ws_", i);
  return name;
}

absl::StatusOr<IRModule> lift(const IRModule& mod, bool kernels, LiftStats& stats) {
  absl::flat_hash_map<std::string, KernelPlan> plans;
  if (kernels) {
    for (const auto& [name, func] : mod.functions()) {
      if (const auto* prim = func.as<PrimFuncNode>()) {
        if (std::optional<KernelPlan> plan = plan_kernel(*prim)) plans.emplace(name, *std::move(plan));
      }
    }
  }
  UseScanner scanner(plans, mod);
  scanner.visit_module(mod);

  // The lifted kernels: in place when every use is a mapped call site, else a new PrimFunc.
  IRModule out = mod;
  absl::flat_hash_map<std::string, std::string> lifted_names;
  for (const auto& [name, func] : mod.functions()) {
    auto plan = plans.find(name);
    if (plan == plans.end()) continue;
    const UseScanner::Uses& uses = scanner.uses[name];
    if (uses.mapped_sites == 0) continue;
    if (uses.mapped_sites == uses.references) {
      out.add(name, plan->second.lifted);
      lifted_names.emplace(name, name);
      continue;
    }
    const std::string copy = fresh_name(out, name);
    const auto& lifted = *plan->second.lifted.as<PrimFuncNode>();
    Attrs attrs = lifted.attrs;
    if (attrs.contains("global_symbol")) attrs["global_symbol"] = copy;
    out.add(copy, make_prim_func(lifted.params, lifted.body, std::move(attrs)));
    lifted_names.emplace(name, copy);
    ++stats.kernels_copied;
  }
  // Call sites of kernels that keep their scratch are left alone.
  absl::flat_hash_map<const CallNode*, std::vector<std::vector<SymExpr>>> sites;
  for (auto& [call, dims] : scanner.sites) {
    if (lifted_names.contains(call->args[0].as<GlobalVarNode>()->name)) sites.emplace(call, std::move(dims));
  }
  CallSiteRewriter rewriter(out, std::move(sites), std::move(lifted_names), std::move(plans));
  IRModule result = out;
  for (const auto& [name, func] : out.functions()) {
    if (func.as<FunctionNode>() == nullptr) continue;
    rewriter.set_function(name);
    Expr rewritten = rewriter.visit_expr(func);
    if (!rewritten.same_as(func)) result.add(name, rewritten);
  }
  if (absl::Status s = rewriter.status(); !s.ok()) return s;
  if (!rewriter.errors.empty()) {
    std::string message;
    for (const std::string& e : rewriter.errors) absl::StrAppend(&message, message.empty() ? "" : "\n", e);
    return absl::InvalidArgumentError(message);
  }
  stats.lifted_buffers = rewriter.lifted_buffers;
  stats.library_workspaces = rewriter.library_workspaces;
  return result;
}

class LiftWorkspacePass : public Pass {
 public:
  LiftWorkspacePass()
      : Pass(PassInfo("lift-workspace",
                      "top-level scratch Allocates of kernels and declared workspaces of library calls "
                      "become graph-level alloc_storage + alloc_tensor passed as extra destinations")
                 .with_statistic("lifted_buffers", "kernel scratch buffers allocated at a call site")
                 .with_statistic("library_workspaces", "library workspaces allocated at a call site")
                 .with_statistic("kernels_copied",
                                 "lifted kernels added beside an original that other uses keep")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    LiftStats stats;
    absl::StatusOr<IRModule> out = lift(mod, /*kernels=*/true, stats);
    if (!out.ok()) return out.status();
    ctx.add_statistic("lifted_buffers", stats.lifted_buffers);
    ctx.add_statistic("library_workspaces", stats.library_workspaces);
    ctx.add_statistic("kernels_copied", stats.kernels_copied);
    return out;
  }
};

}  // namespace

PassPtr create_lift_workspace_pass() { return std::make_shared<LiftWorkspacePass>(); }

absl::StatusOr<IRModule> lift_library_workspaces(const IRModule& mod) {
  LiftStats stats;
  return lift(mod, /*kernels=*/false, stats);
}

}  // namespace relax::transform
