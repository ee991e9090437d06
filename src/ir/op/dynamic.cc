// Data-dependent operators: nonzero, unique, masked_select; and call_builtin,
// through which they run.
//
// The size of their result depends on the values of their inputs, so it is
// unknown at compile time: results are annotated by rank only
// (nonzero: Tensor[ndim=2, int64]; unique, masked_select: Tensor[ndim=1, <x's
// dtype>]) and a later match_cast names the count where code needs it.
//
// Lowering. A call_tir kernel cannot compute them: destination passing needs
// the output's shape before the call. Each op's legalization therefore
// replaces the call not with call_tir but with
//
//   call_builtin(extern_func("nonzero"), (x,), sinfo_args=[Tensor[ndim=2, int64]])
//
// which the VM code generator turns into one kCallBuiltin instruction: the
// runtime's builtin of that name (src/runtime/vm/builtins.cc) computes the result
// into a tensor it allocates itself, and the VM checks the result against the
// annotation (kind, dtype, rank) when run-time checks are on. Because the
// lowering is a legalization, legalize-ops is the one place where graph-level
// operators leave the graph level, and the VM knows only call_builtin, not
// these ops.
//
// masked_select requires mask to have x's shape: dims the Analyzer cannot
// prove equal (`n` vs `m`, as for broadcasting) are an error here; with either
// annotation rank-only or unknown the builtin checks the shapes at run time.
#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/op/dynamic.h"

namespace relax {
namespace detail {
namespace {

absl::StatusOr<StructInfo> deduce_nonzero(const CallNode& call, DeduceContext&) {
  return tensor_sinfo_rank(2, DataType::int64(), tensor_of(call, 0).device);
}

absl::StatusOr<StructInfo> deduce_unique(const CallNode& call, DeduceContext&) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  return tensor_sinfo_rank(1, x.dtype, x.device);
}

absl::StatusOr<StructInfo> deduce_masked_select(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "masked_select";
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const TensorStructInfoNode& mask = tensor_of(call, 1);
  absl::StatusOr<Device> device = join_devices(op, x, mask);
  if (!device.ok()) return device.status();
  auto mismatch = [&](const std::string& what) {
    return op_error(op, arg_label(1, "mask") + " " + call.args[1].struct_info().to_string() +
                            " must have the shape of " + arg_label(0, "x") + " " +
                            call.args[0].struct_info().to_string() + ": " + what);
  };
  if (x.ndim != kUnknownNDim && mask.ndim != kUnknownNDim && x.ndim != mask.ndim) {
    return mismatch("ranks " + std::to_string(mask.ndim) + " vs " + std::to_string(x.ndim));
  }
  if (x.shape && mask.shape) {
    for (size_t i = 0; i < x.shape->size(); ++i) {
      const SymExpr& a = (*mask.shape)[i];
      const SymExpr& b = (*x.shape)[i];
      if (!ctx.analyzer.prove_equal(a, b)) {
        return mismatch("dim " + std::to_string(i) + ": " + quoted(a) + " vs " + quoted(b));
      }
    }
  }
  return tensor_sinfo_rank(1, x.dtype, *device);
}

// call_builtin(extern_func(name), (args...), sinfo_args=[result]).
absl::StatusOr<StructInfo> deduce_call_builtin(const CallNode& call, DeduceContext&) {
  const std::string op = "call_builtin";
  if (call.args[0].as<ExternFuncNode>() == nullptr) {
    return op_error(op, arg_label(0, "builtin") + ": expected an ExternFunc naming the builtin, got a " +
                            std::string(expr_kind_name(call.args[0].kind())));
  }
  const StructInfo& packed = call.args[1].struct_info();
  const auto* tuple = packed.as<TupleStructInfoNode>();
  if (tuple == nullptr) {
    return op_error(op, arg_label(1, "args") + ": expected a Tuple of Tensors and Prims, got " +
                            packed.to_string());
  }
  for (size_t i = 0; i < tuple->fields.size(); ++i) {
    const StructInfoKind kind = tuple->fields[i].kind();
    if (kind != StructInfoKind::kTensor && kind != StructInfoKind::kPrim) {
      return op_error(op, arg_label(1, "args") + ": field " + std::to_string(i) +
                              ": expected a Tensor or a Prim, got " + tuple->fields[i].to_string());
    }
  }
  if (call.sinfo_args.size() != 1) {
    return op_error(op, "expected one sinfo_arg (the result's annotation), got " +
                            std::to_string(call.sinfo_args.size()));
  }
  return call.sinfo_args[0];
}

// The call replaced by call_builtin of the builtin `name` on the same arguments.
TypedLegalizeFn<NoAttrs> via_builtin(const char* name) {
  return [name](const CallNode& call, const NoAttrs&, Analyzer&) -> absl::StatusOr<Lowering> {
    Lowering lowering;
    lowering.replacement = op::call_builtin(name, call.args, call.struct_info());
    return lowering;
  };
}

}  // namespace

void register_dynamic_ops(OpTable& table) {
  table.def("nonzero", "int64 (x.ndim, count): the multi-indices of x's non-zero elements")
      .arg("x", ArgKind::kTensor)
      .deduce(rules::without_attrs(deduce_nonzero))
      .legalize(via_builtin("nonzero"));
  table.def("unique", "x's distinct values, sorted ascending, as a 1-D tensor")
      .arg("x", ArgKind::kTensor)
      .deduce(rules::without_attrs(deduce_unique))
      .legalize(via_builtin("unique"));
  table.def("masked_select", "the elements of x where the bool mask is true, as a 1-D tensor")
      .arg("x", ArgKind::kTensor)
      .arg("mask", ArgKind::kTensor, DtypeClass::kBool)
      .deduce(rules::without_attrs(deduce_masked_select))
      .legalize(via_builtin("masked_select"));
  table.def("call_builtin", "calls a runtime builtin that allocates its own (pure) result")
      .arg("builtin", ArgKind::kAny)
      .arg("args", ArgKind::kAny)
      .deduce(rules::without_attrs(deduce_call_builtin));
}

}  // namespace detail

namespace op {

Expr nonzero(Expr x) { return make_call(make_op_or_die("nonzero"), {std::move(x)}); }

Expr unique(Expr x) { return make_call(make_op_or_die("unique"), {std::move(x)}); }

Expr masked_select(Expr x, Expr mask) {
  return make_call(make_op_or_die("masked_select"), {std::move(x), std::move(mask)});
}

Expr call_builtin(std::string name, std::vector<Expr> args, StructInfo result_sinfo) {
  return make_call(make_op_or_die("call_builtin"),
                   {make_extern_func(std::move(name)), make_tuple(std::move(args))}, {},
                   {std::move(result_sinfo)});
}

}  // namespace op
}  // namespace relax
