// fold-constant: pure calls whose arguments are all constants become constants.
//
// What it does. In every graph function (nested functions and If branches
// included) a call is replaced by its value, computed at compile time, when
// every argument is known:
//   - a Constant, a PrimValue or ShapeExpr whose values are constants, a Tuple
//     of such, or a variable bound to one of these earlier in the same
//     function (in any block: constants do not depend on dataflow scopes);
//   - call_tir of a PrimFunc of the module (a legalized kernel or a user's):
//     the kernel runs in the loop-level evaluator (relax/transform/prim_eval.h)
//     on the constant inputs, into fresh outputs; the call becomes a Constant,
//     or a Tuple of Constants for a tuple out_sinfo;
//   - a call of an operator that legalize-ops has a built-in rule for (add,
//     matmul, softmax, ...): that one call, its arguments replaced by the
//     constants, is legalized with the rule (legalize_kernel.h) and the kernel
//     evaluated the same way, without adding the kernel to the module; a rule
//     that gives a value directly (add of two known Prims) gives it;
//   - a tuple-get-item of a known tuple becomes the item.
// Folding runs binding by binding, so a chain of calls on constants folds in
// one pass (each result is known to the next call).
//
// Never folded (left exactly as they are; none of these is an error):
//   - calls of functions (GlobalVars of graph functions, ExternFuncs, Vars):
//     they may be impure, and graph-level code is not interpreted here;
//   - operators that are not pure, call_dps_library and call_tir_inplace, and
//     operators without a built-in legalization rule;
//   - a call whose result has more than `max-elements` elements in all (default
//     65536: 256 KiB of float32; constants live in the module's text and in
//     the executable, and docs/architecture.md keeps model weights out of the IR), or whose
//     evaluation takes more than `max-steps` statements (default 2^22);
//   - a call whose evaluation fails: a kernel error (division by zero, integer
//     overflow, an index out of bounds, an output element left unwritten), an
//     operand the rule refuses, or an out_sinfo whose shape or dtype is not
//     known or not on the host;
//   - values seen through a match_cast, and items of a tuple with an unknown
//     field (canonicalize-bindings forwards those).
// User rules given to legalize-ops are not seen here: an operator call folds
// with the built-in rule. Float results are those of the evaluator: each
// operation rounded to its dtype, math functions the double ones rounded once.
// The compiled kernel may differ in the last bits (the host compiler may fuse
// a * b + c, and calls the float versions of the math functions).
//
// Invariants. Relies on a normalised module. A binding keeps its variable when
// the variable's annotation is a base of the constant's (the usual case: the
// call was annotated with the shape and dtype the constant has, and the
// constant adds its device); otherwise the binding gets a fresh variable with
// the constant's annotation and later uses follow it (ExprMutator). PrimFuncs
// that no call uses any more are left for dce.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "relax/ir/normalize.h"
#include "relax/ir/op.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"
#include "relax/transform/prim_eval.h"

namespace relax::transform {
namespace {

constexpr int64_t kDefaultMaxElements = int64_t{1} << 16;
constexpr int64_t kDefaultMaxSteps = int64_t{1} << 22;

struct Limits {
  int64_t max_elements;
  int64_t max_steps;
};

struct Counts {
  int64_t calls = 0;
  int64_t tuple_items = 0;
  int64_t elements = 0;
  int64_t too_large = 0;
};

bool is_const_scalar(const SymExpr& e) {
  return e.kind() == SymKind::kIntImm || e.kind() == SymKind::kFloatImm;
}

/// `e` itself when it is a constant leaf or a Tuple of constants, else nullopt.
std::optional<Expr> as_constant(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kConstant:
      return e;
    case ExprKind::kPrimValue:
      if (is_const_scalar(e.as<PrimValueNode>()->value)) return e;
      return std::nullopt;
    case ExprKind::kShapeExpr:
      for (const SymExpr& d : e.as<ShapeExprNode>()->values) {
        if (d.kind() != SymKind::kIntImm) return std::nullopt;
      }
      return e;
    default:
      return std::nullopt;
  }
}

/// The tensor shape and dtype of an output annotation, when known, on the host.
struct OutputSpec {
  std::vector<int64_t> shape;
  DataType dtype;
  int64_t elements = 1;
};

std::optional<OutputSpec> output_spec(const StructInfo& sinfo) {
  const auto* t = sinfo.as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape || !t->dtype) return std::nullopt;
  if (t->device.type != Device::Type::kUnknown && t->device.type != Device::cpu().type) {
    return std::nullopt;
  }
  OutputSpec spec;
  spec.dtype = *t->dtype;
  for (const SymExpr& d : *t->shape) {
    std::optional<int64_t> v = d.as_const();
    if (!v || *v < 0) return std::nullopt;
    if (__builtin_mul_overflow(spec.elements, *v, &spec.elements)) return std::nullopt;
    spec.shape.push_back(*v);
  }
  return spec;
}

class ConstantFolder : public ExprMutator {
 public:
  ConstantFolder(const IRModule& mod, Limits limits)
      : ExprMutator(&mod), module_(mod), limits_(limits) {}

  const Counts& counts() const { return counts_; }

  // As ExprMutator's, except that the variable is kept when its annotation
  // is a base of the new value's: a Constant's annotation is exact (its
  // device included), and a binding annotated as the call was stays so.
  void visit_binding(const Binding& binding) override {
    if (binding.is_match_cast) return ExprMutator::visit_binding(binding);
    Expr value = visit_expr(binding.value);
    if (std::optional<Expr> known = known_value(binding.value, value)) {
      known_[binding.var.get()] = *std::move(known);
    }
    if (value.same_as(binding.value)) return emit_binding(binding);
    Var var = binding.var;
    if (!is_base_of(var.struct_info(), value.struct_info(), analyzer())) {
      var = var.is_dataflow() ? DataflowVar(var.name_hint(), value.struct_info())
                              : Var(var.name_hint(), value.struct_info());
      set_var_remap(binding.var, var);
    }
    emit_binding({var, value, false, StructInfo()});
  }

  Expr visit_call(const Expr& e, const CallNode& node) override {
    Expr visited = ExprMutator::visit_call(e, node);
    const auto* call = visited.as<CallNode>();
    const auto* op = call == nullptr ? nullptr : call->callee.as<OpNode>();
    if (op == nullptr) return visited;
    const OpInfo* info = find_op(op->name);
    if (info == nullptr || !info->pure) return visited;
    std::optional<Expr> folded;
    if (op->name == "call_tir") {
      folded = fold_call_tir(node, *call);
    } else if (info->legalize) {
      folded = fold_op(node, *call, info->legalize);
    }
    if (!folded) return visited;
    ++counts_.calls;
    return *folded;
  }

  Expr visit_tuple_get_item(const Expr& e, const TupleGetItemNode& node) override {
    Expr visited = ExprMutator::visit_tuple_get_item(e, node);
    const auto* item = visited.as<TupleGetItemNode>();
    if (item == nullptr) return visited;
    std::optional<Expr> tuple = known_value(node.tuple, item->tuple);
    const auto* fields = tuple ? tuple->as<TupleNode>() : nullptr;
    if (fields == nullptr || item->index < 0 ||
        static_cast<size_t>(item->index) >= fields->fields.size()) {
      return visited;
    }
    std::optional<Expr> out = normalized(fields->fields[static_cast<size_t>(item->index)]);
    if (!out) return visited;
    ++counts_.tuple_items;
    return *out;
  }

 private:
  /// The known value of an expression: `rewritten` when it is a constant, else
  /// (for a variable or a tuple of them) what `original` was bound to.
  std::optional<Expr> known_value(const Expr& original, const Expr& rewritten) {
    if (std::optional<Expr> c = as_constant(rewritten)) return c;
    if (const auto* tuple = rewritten.as<TupleNode>()) {
      const auto* before = original.as<TupleNode>();
      std::vector<Expr> fields;
      for (size_t i = 0; i < tuple->fields.size(); ++i) {
        const Expr& field_before =
            before != nullptr && i < before->fields.size() ? before->fields[i] : tuple->fields[i];
        std::optional<Expr> field = known_value(field_before, tuple->fields[i]);
        if (!field) return std::nullopt;
        fields.push_back(*std::move(field));
      }
      return make_tuple(std::move(fields));
    }
    for (const Expr* e : {&original, &rewritten}) {
      if (e->as<VarNode>() == nullptr) continue;
      if (auto it = known_.find(e->get()); it != known_.end()) return it->second;
    }
    return std::nullopt;
  }

  std::optional<Expr> normalized(const Expr& e) {
    absl::StatusOr<Expr> out = normalize(e, deduce_context());
    if (!out.ok()) return std::nullopt;
    return *out;
  }

  /// call_tir(@kernel, (args...), [shape(extra...)]) with every argument known.
  std::optional<Expr> fold_call_tir(const CallNode& original, const CallNode& call) {
    if (call.args.size() < 2 || call.args.size() > 3 || call.sinfo_args.size() != 1) {
      return std::nullopt;
    }
    const auto* gvar = call.args[0].as<GlobalVarNode>();
    if (gvar == nullptr) return std::nullopt;
    Expr kernel = module_.lookup(gvar->name);
    if (kernel.as<PrimFuncNode>() == nullptr) return std::nullopt;
    std::optional<Expr> args = known_value(original.args[1], call.args[1]);
    if (!args || args->as<TupleNode>() == nullptr) return std::nullopt;
    std::vector<int64_t> extra;
    if (call.args.size() == 3) {
      std::optional<Expr> shape = known_value(original.args[2], call.args[2]);
      const auto* values = shape ? shape->as<ShapeExprNode>() : nullptr;
      if (values == nullptr) return std::nullopt;
      for (const SymExpr& v : values->values) extra.push_back(*v.as_const());
    }
    return evaluate_kernel(kernel, gvar->name, args->as<TupleNode>()->fields, extra,
                           call.sinfo_args[0]);
  }

  /// An operator call with every argument known, legalized with `rule`.
  std::optional<Expr> fold_op(const CallNode& original, const CallNode& call,
                              const LegalizeFn& rule) {
    std::vector<Expr> args;
    for (size_t i = 0; i < call.args.size(); ++i) {
      const Expr& before = i < original.args.size() ? original.args[i] : call.args[i];
      std::optional<Expr> arg = known_value(before, call.args[i]);
      if (!arg) return std::nullopt;
      args.push_back(*std::move(arg));
    }
    // The call over the constants themselves: its annotation has their exact
    // shapes, which the rule needs (a variable's may be coarser).
    Analyzer analyzer;
    DeduceContext ctx{analyzer, &module_};
    absl::StatusOr<Expr> concrete =
        normalize(make_call(call.callee, std::move(args), call.attrs, call.sinfo_args), ctx);
    if (!concrete.ok()) return std::nullopt;
    const auto* concrete_call = concrete->as<CallNode>();
    absl::StatusOr<Lowering> lowered = rule(*concrete_call, analyzer);
    if (!lowered.ok()) return std::nullopt;
    if (lowered->replacement.defined()) {
      std::optional<Expr> value = normalized(lowered->replacement);
      if (!value || !as_constant(*value)) return std::nullopt;
      return value;
    }
    std::vector<int64_t> extra;
    for (const SymExpr& v : lowered->extra_sym_args) {
      absl::StatusOr<int64_t> value = evaluate(v, {});
      if (!value.ok()) return std::nullopt;
      extra.push_back(*value);
    }
    const auto* op = call.callee.as<OpNode>();
    return evaluate_kernel(lowered->prim_func, op->name, lowered->args, extra,
                           concrete->struct_info());
  }

  /// Runs `kernel` on the constant `args` (then fresh outputs of `out_sinfo`,
  /// then the `extra` int64 scalars); the outputs as a Constant or a Tuple of
  /// Constants, or nullopt when anything is unknown, too large or fails.
  std::optional<Expr> evaluate_kernel(const Expr& kernel, const std::string& name,
                                      const std::vector<Expr>& args, const std::vector<int64_t>& extra,
                                      const StructInfo& out_sinfo) {
    std::vector<OutputSpec> outputs;
    const auto* tuple_out = out_sinfo.as<TupleStructInfoNode>();
    for (const StructInfo& field :
         tuple_out != nullptr ? tuple_out->fields : std::vector<StructInfo>{out_sinfo}) {
      std::optional<OutputSpec> spec = output_spec(field);
      if (!spec) return std::nullopt;
      outputs.push_back(*std::move(spec));
    }
    int64_t elements = 0;
    for (const OutputSpec& spec : outputs) {
      if (__builtin_add_overflow(elements, spec.elements, &elements)) elements = INT64_MAX;
    }
    if (elements > limits_.max_elements) {
      ++counts_.too_large;
      return std::nullopt;
    }

    std::vector<PrimArg> prim_args;
    PrimEvalOptions options;
    options.name = name;
    options.max_steps = limits_.max_steps;
    for (const Expr& arg : args) {
      std::optional<PrimArg> value = prim_arg(arg);
      if (!value) return std::nullopt;
      prim_args.push_back(*std::move(value));
      options.access.push_back(BufferAccess::kInput);
    }
    std::vector<runtime::Tensor> results;
    for (const OutputSpec& spec : outputs) {
      absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(spec.shape, spec.dtype);
      if (!t.ok()) return std::nullopt;
      results.push_back(*t);
      prim_args.emplace_back(*t);
      options.access.push_back(BufferAccess::kOutput);
    }
    for (int64_t v : extra) prim_args.emplace_back(PrimScalar::from_int(v));
    if (!run_prim_func(kernel, prim_args, options).ok()) return std::nullopt;

    std::vector<Expr> constants;
    for (runtime::Tensor& t : results) constants.push_back(make_constant(std::move(t)));
    Expr value = tuple_out != nullptr ? make_tuple(std::move(constants)) : constants[0];
    std::optional<Expr> out = normalized(value);
    if (out) counts_.elements += elements;
    return out;
  }

  /// A constant call_tir argument as the evaluator takes it.
  static std::optional<PrimArg> prim_arg(const Expr& arg) {
    if (const auto* c = arg.as<ConstantNode>()) return PrimArg(c->data);
    const auto* pv = arg.as<PrimValueNode>();
    if (pv == nullptr) return std::nullopt;
    const SymExpr& v = pv->value;
    if (v.kind() == SymKind::kFloatImm) return PrimArg(PrimScalar::from_float(*v.as_float(), v.dtype()));
    if (v.kind() == SymKind::kIntImm) return PrimArg(PrimScalar::from_int(*v.as_const(), v.dtype()));
    return std::nullopt;
  }

  const IRModule& module_;
  Limits limits_;
  Counts counts_;
  /// Variables bound to a known value, by node.
  absl::flat_hash_map<const ExprNode*, Expr> known_;
};

class FoldConstantPass : public FunctionPass {
 public:
  FoldConstantPass()
      : FunctionPass(
            PassInfo("fold-constant",
                     "evaluates pure calls whose arguments are all constants (call_tir through "
                     "the loop-level evaluator, operators through their legalization)")
                .with_option("max-elements", kDefaultMaxElements,
                             "largest result folded, in elements over all outputs")
                .with_option("max-steps", kDefaultMaxSteps,
                             "most loop-level statements one fold may execute")
                .with_statistic("folded_calls", "calls replaced by a constant")
                .with_statistic("folded_tuple_items", "items of known tuples replaced by the item")
                .with_statistic("folded_elements", "elements of the constants that folding made")
                .with_statistic("too_large", "calls not folded because the result exceeds max-elements")) {}

 protected:
  absl::StatusOr<Expr> run_on_function(const FunctionRef& f, PassContext& ctx) override {
    Limits limits{ctx.int_option(*this, "max-elements"), ctx.int_option(*this, "max-steps")};
    ConstantFolder folder(f.module, limits);
    Expr out = folder.visit_expr(f.func);
    if (absl::Status s = folder.status(); !s.ok()) return s;
    const Counts& c = folder.counts();
    ctx.add_statistic("folded_calls", c.calls);
    ctx.add_statistic("folded_tuple_items", c.tuple_items);
    ctx.add_statistic("folded_elements", c.elements);
    ctx.add_statistic("too_large", c.too_large);
    return out;
  }
};

}  // namespace

PassPtr create_fold_constant_pass() { return std::make_shared<FoldConstantPass>(); }

}  // namespace relax::transform
