// Cross-level calls in destination-passing style: call_tir, call_tir_inplace,
// call_dps_library; and their explicit forms call_tir_dps, call_library_dps
// (relax/ir/op/memory.h), whose destinations are arguments.
//
// The graph level stays pure: such a call's value is the output tensor(s)
// described by its out_sinfo (sinfo_args[0]), which the caller allocates and
// passes after the inputs. The out_sinfo is therefore required to know its
// shapes and dtypes. The inputs of call_tir and call_tir_inplace are Tensors
// (buffer parameters) or Prims (scalar parameters of their dtype; a bool Prim is passed as an
// integer, 0 or 1).
// When the callee is a PrimFunc of the module being built, its parameter
// count is checked against inputs + outputs + symbolic arguments.
//
// A library call may declare the scratch its function needs: an optional last
// argument `workspace`, an int Prim of bytes (symbolic allowed, proven >= 0
// where it can be). The pass lift-workspace makes it a uint8 tensor of that
// many bytes, passed after the outputs (the ABI: relax/runtime/module.h).
#include <algorithm>

#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/module.h"
#include "relax/ir/op/memory.h"
#include "relax/ir/ops.h"
#include "relax/ir/prim_func.h"

namespace relax {
namespace {

// The attribute of call_tir_inplace (its rules are checked by the deduction).
struct InplaceAttrs {
  std::vector<int64_t> inplace_indices;
  template <typename V>
  void fields(V& v) {
    v.required("inplace_indices", inplace_indices);
  }
};

// The fields of the packed argument tuple (call.args[1]): each a Tensor, or,
// with `allow_prims` (the scalar parameters of a PrimFunc), a Prim of an int, float or bool.
absl::StatusOr<std::vector<StructInfo>> packed_args(const CallNode& call, const std::string& op,
                                                    bool allow_prims) {
  const std::string expected = allow_prims ? "a Tensor or a Prim (int, float or bool)" : "a Tensor";
  const StructInfo& sinfo = call.args[1].struct_info();
  const auto* tuple = sinfo.as<TupleStructInfoNode>();
  if (tuple == nullptr) {
    return detail::op_error(op, detail::arg_label(1, "args") + ": expected a Tuple of " +
                                    (allow_prims ? "Tensors and Prims" : "Tensors") + ", got " +
                                    sinfo.to_string());
  }
  for (size_t i = 0; i < tuple->fields.size(); ++i) {
    const StructInfo& field = tuple->fields[i];
    const auto* prim = field.as<PrimStructInfoNode>();
    bool ok = field.kind() == StructInfoKind::kTensor ||
              (allow_prims && prim != nullptr &&
               (prim->dtype.is_int() || prim->dtype.is_float() || prim->dtype.is_bool()));
    if (!ok) {
      return detail::op_error(op, detail::arg_label(1, "args") + ": field " + std::to_string(i) +
                                      ": expected " + expected + ", got " + field.to_string());
    }
  }
  return tuple->fields;
}

absl::Status check_arity(const CallNode& call, const std::string& op, size_t lo, size_t hi) {
  if (call.args.size() < lo || call.args.size() > hi) {
    return detail::op_error(op, "expected " + std::to_string(lo) +
                                    (hi != lo ? " or " + std::to_string(hi) : "") +
                                    " arguments, got " + std::to_string(call.args.size()));
  }
  return absl::OkStatus();
}

// The callee must be a GlobalVar; when the module holds it, it must be a
// PrimFunc taking `num_params` parameters.
absl::Status check_prim_callee(const CallNode& call, const std::string& op, DeduceContext& ctx,
                               size_t num_params, const std::string& passed) {
  const auto* gvar = call.args[0].as<GlobalVarNode>();
  if (gvar == nullptr) {
    return detail::op_error(op, detail::arg_label(0, "callee") +
                                    ": expected a GlobalVar naming a PrimFunc, got a " +
                                    std::string(expr_kind_name(call.args[0].kind())));
  }
  if (ctx.module == nullptr) return absl::OkStatus();
  Expr func = ctx.module->lookup(gvar->name);
  if (!func.defined()) return absl::OkStatus();  // added later; checked when the module is
  const auto* prim = func.as<PrimFuncNode>();
  if (prim == nullptr) {
    return detail::op_error(op, "callee `" + gvar->name + "` is a " +
                                    std::string(expr_kind_name(func.kind())) + ", not a PrimFunc");
  }
  if (prim->params.size() != num_params) {
    return detail::op_error(op, "`" + gvar->name + "` has " + std::to_string(prim->params.size()) +
                                    " parameters, but the call passes " + passed);
  }
  return absl::OkStatus();
}

StructInfo out_sinfo_of(const CallNode& call) { return call.sinfo_args[0]; }

/// Checks a call of a kernel: its extra symbolic arguments (argument `sym_index`, when the call
/// has it) are a Shape of known values, and the kernel takes `args` + `outs` + that many
/// parameters.
absl::Status check_kernel_call(const CallNode& call, const std::string& op, DeduceContext& ctx, size_t args,
                               size_t outs, size_t sym_index) {
  size_t num_sym = 0;
  if (call.args.size() > sym_index) {
    const StructInfo& sinfo = call.args[sym_index].struct_info();
    const auto* shape = sinfo.as<ShapeStructInfoNode>();
    if (shape == nullptr || !shape->values) {
      return detail::op_error(op, detail::arg_label(sym_index, "extra_sym_args") +
                                      ": expected a Shape with known values, got " + sinfo.to_string());
    }
    num_sym = shape->values->size();
  }
  const std::string passed = std::to_string(args) + " arguments, " + std::to_string(outs) + " outputs and " +
                             std::to_string(num_sym) + " symbolic arguments";
  return check_prim_callee(call, op, ctx, args + outs + num_sym, passed);
}

absl::StatusOr<StructInfo> deduce_call_tir(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "call_tir";
  if (absl::Status s = check_arity(call, op, 2, 3); !s.ok()) return s;
  absl::StatusOr<std::vector<StructInfo>> args = packed_args(call, op, /*allow_prims=*/true);
  if (!args.ok()) return args.status();
  absl::StatusOr<std::vector<StructInfo>> outs = detail::dps_outputs(call, op);
  if (!outs.ok()) return outs.status();
  if (absl::Status s = check_kernel_call(call, op, ctx, args->size(), outs->size(), 2); !s.ok()) return s;
  return out_sinfo_of(call);
}

absl::StatusOr<StructInfo> deduce_call_tir_inplace(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "call_tir_inplace";
  if (absl::Status s = check_arity(call, op, 2, 2); !s.ok()) return s;
  absl::StatusOr<std::vector<StructInfo>> args = packed_args(call, op, /*allow_prims=*/true);
  if (!args.ok()) return args.status();
  absl::StatusOr<std::vector<StructInfo>> outs = detail::dps_outputs(call, op);
  if (!outs.ok()) return outs.status();
  auto it = call.attrs.find("inplace_indices");
  const std::vector<int64_t>* indices =
      it == call.attrs.end() ? nullptr : std::get_if<std::vector<int64_t>>(&it->second);
  if (indices == nullptr) {
    return detail::op_error(op, "attribute `inplace_indices` (a list of ints) is required");
  }
  if (indices->size() != outs->size()) {
    return detail::op_error(op, "inplace_indices has " + std::to_string(indices->size()) +
                                    " entries, expected one per output (" +
                                    std::to_string(outs->size()) + ")");
  }
  std::vector<bool> used(args->size(), false);
  size_t fresh = 0;
  for (size_t i = 0; i < indices->size(); ++i) {
    int64_t index = (*indices)[i];
    if (index == -1) {
      ++fresh;
      continue;
    }
    if (index < 0 || index >= static_cast<int64_t>(args->size())) {
      return detail::op_error(op, "inplace_indices[" + std::to_string(i) + "] is " +
                                      std::to_string(index) +
                                      ", expected -1 or an argument index "
                                      "below " +
                                      std::to_string(args->size()));
    }
    if (used[index]) {
      return detail::op_error(
          op, "argument " + std::to_string(index) + " is the destination of two outputs");
    }
    used[index] = true;
    const StructInfo& arg = (*args)[index];
    if (check_base_of((*outs)[i], arg, ctx.analyzer) == BaseCheck::kFail) {
      return detail::op_error(op, "output " + std::to_string(i) + " " + (*outs)[i].to_string() +
                                      " is written into argument " + std::to_string(index) +
                                      ", which is " + arg.to_string());
    }
  }
  if (fresh == indices->size()) {
    return detail::op_error(op, "inplace_indices are all -1; use call_tir");
  }
  std::string passed =
      std::to_string(args->size()) + " arguments and " + std::to_string(fresh) + " fresh outputs";
  if (absl::Status s = check_prim_callee(call, op, ctx, args->size() + fresh, passed); !s.ok()) {
    return s;
  }
  return out_sinfo_of(call);
}

/// The arguments of a library call (its callee an ExternFunc, its arguments packed tensors).
absl::StatusOr<std::vector<StructInfo>> library_call_args(const CallNode& call, const std::string& op) {
  if (call.args[0].as<ExternFuncNode>() == nullptr) {
    return detail::op_error(op, detail::arg_label(0, "callee") + ": expected an ExternFunc, got a " +
                                    std::string(expr_kind_name(call.args[0].kind())));
  }
  return packed_args(call, op, /*allow_prims=*/false);
}

/// The declared workspace of a library call (argument `index`, when the call has it): an int
/// Prim of bytes, not proven negative.
absl::Status check_workspace(const CallNode& call, const std::string& op, DeduceContext& ctx, size_t index) {
  if (call.args.size() <= index) return absl::OkStatus();
  const StructInfo& sinfo = call.args[index].struct_info();
  const auto* prim = sinfo.as<PrimStructInfoNode>();
  if (prim == nullptr || !prim->dtype.is_int()) {
    return detail::op_error(op, detail::arg_label(index, "workspace") + ": expected an integer Prim (bytes), got " +
                                    sinfo.to_string());
  }
  if (prim->value.defined() && ctx.analyzer.prove(prim->value < 0)) {
    return detail::op_error(op, detail::arg_label(index, "workspace") + ": " + detail::quoted(prim->value) +
                                    " bytes is negative, expected a size >= 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<StructInfo> deduce_call_dps_library(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "call_dps_library";
  if (absl::Status s = check_arity(call, op, 2, 3); !s.ok()) return s;
  absl::StatusOr<std::vector<StructInfo>> args = library_call_args(call, op);
  if (!args.ok()) return args.status();
  if (absl::Status s = check_workspace(call, op, ctx, 2); !s.ok()) return s;
  absl::StatusOr<std::vector<StructInfo>> outs = detail::dps_outputs(call, op);
  if (!outs.ok()) return outs.status();
  return out_sinfo_of(call);
}

// The destinations of an explicit call (call.args[2]): a Tuple of Tensors.
absl::StatusOr<size_t> explicit_outputs(const CallNode& call, const std::string& op) {
  const StructInfo& sinfo = call.args[2].struct_info();
  const auto* tuple = sinfo.as<TupleStructInfoNode>();
  if (tuple == nullptr) {
    return detail::op_error(op, detail::arg_label(2, "outs") + ": expected a Tuple of Tensors, got " +
                                    sinfo.to_string());
  }
  for (size_t i = 0; i < tuple->fields.size(); ++i) {
    if (tuple->fields[i].kind() != StructInfoKind::kTensor) {
      return detail::op_error(op, detail::arg_label(2, "outs") + ": field " + std::to_string(i) +
                                      ": expected a Tensor, got " + tuple->fields[i].to_string());
    }
  }
  return tuple->fields.size();
}

absl::StatusOr<StructInfo> deduce_call_tir_dps(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "call_tir_dps";
  if (absl::Status s = check_arity(call, op, 3, 4); !s.ok()) return s;
  absl::StatusOr<std::vector<StructInfo>> args = packed_args(call, op, /*allow_prims=*/true);
  if (!args.ok()) return args.status();
  absl::StatusOr<size_t> outs = explicit_outputs(call, op);
  if (!outs.ok()) return outs.status();
  if (absl::Status s = check_kernel_call(call, op, ctx, args->size(), *outs, 3); !s.ok()) return s;
  return tuple_sinfo({});
}

absl::StatusOr<StructInfo> deduce_call_library_dps(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "call_library_dps";
  if (absl::Status s = check_arity(call, op, 3, 4); !s.ok()) return s;
  absl::StatusOr<std::vector<StructInfo>> args = library_call_args(call, op);
  if (!args.ok()) return args.status();
  if (absl::Status s = check_workspace(call, op, ctx, 3); !s.ok()) return s;
  absl::StatusOr<size_t> outs = explicit_outputs(call, op);
  if (!outs.ok()) return outs.status();
  return tuple_sinfo({});
}

}  // namespace

namespace detail {

void register_call_ops(OpTable& table) {
  table.def("call_tir", "calls a PrimFunc in destination-passing style; the value is its output(s)")
      .arg("callee", ArgKind::kAny)
      .arg("args", ArgKind::kAny)
      .optional_arg("sym_args", ArgKind::kAny)
      .deduce(rules::without_attrs(deduce_call_tir));
  table.def<InplaceAttrs>("call_tir_inplace",
                          "calls a PrimFunc that writes some outputs into its arguments")
      .arg("callee", ArgKind::kAny)
      .arg("args", ArgKind::kAny)
      .deduce(rules::without_attrs<InplaceAttrs>(deduce_call_tir_inplace));
  table.def("call_dps_library", "calls an external library function in destination-passing style")
      .arg("callee", ArgKind::kAny)
      .arg("args", ArgKind::kAny)
      .optional_arg("workspace", ArgKind::kAny)
      .deduce(rules::without_attrs(deduce_call_dps_library));
  table.def("call_tir_dps",
            "calls a PrimFunc on args and the destinations outs, which it writes (lowered call_tir)")
      .arg("callee", ArgKind::kAny)
      .arg("args", ArgKind::kAny)
      .arg("outs", ArgKind::kAny)
      .optional_arg("sym_args", ArgKind::kAny)
      .impure()
      .deduce(rules::without_attrs(deduce_call_tir_dps));
  table.def("call_library_dps",
            "calls a library function on args and the destinations outs (lowered call_dps_library)")
      .arg("callee", ArgKind::kAny)
      .arg("args", ArgKind::kAny)
      .arg("outs", ArgKind::kAny)
      .optional_arg("workspace", ArgKind::kAny)
      .impure()
      .deduce(rules::without_attrs(deduce_call_library_dps));
}

}  // namespace detail

namespace op {

Expr call_tir(Expr callee, std::vector<Expr> args, StructInfo out_sinfo,
              std::vector<SymExpr> extra_sym_args) {
  std::vector<Expr> call_args = {std::move(callee), make_tuple(std::move(args))};
  if (!extra_sym_args.empty()) call_args.push_back(make_shape_expr(std::move(extra_sym_args)));
  return make_call(make_op_or_die("call_tir"), std::move(call_args), {}, {std::move(out_sinfo)});
}

Expr call_tir_inplace(Expr callee, std::vector<Expr> args, std::vector<int64_t> inplace_indices,
                      StructInfo out_sinfo) {
  Attrs attrs;
  attrs.emplace("inplace_indices", std::move(inplace_indices));
  return make_call(make_op_or_die("call_tir_inplace"), {std::move(callee), make_tuple(std::move(args))},
                   std::move(attrs), {std::move(out_sinfo)});
}

Expr call_dps_library(std::string symbol, std::vector<Expr> args, StructInfo out_sinfo) {
  return make_call(make_op_or_die("call_dps_library"),
                   {make_extern_func(std::move(symbol)), make_tuple(std::move(args))}, {},
                   {std::move(out_sinfo)});
}

Expr call_tir_dps(Expr callee, std::vector<Expr> args, std::vector<Expr> outs,
                  std::vector<SymExpr> extra_sym_args) {
  std::vector<Expr> call_args = {std::move(callee), make_tuple(std::move(args)),
                                 make_tuple(std::move(outs))};
  if (!extra_sym_args.empty()) call_args.push_back(make_shape_expr(std::move(extra_sym_args)));
  return make_call(make_op_or_die("call_tir_dps"), std::move(call_args));
}

Expr call_dps_library(std::string symbol, std::vector<Expr> args, StructInfo out_sinfo,
                      SymExpr workspace_bytes) {
  std::vector<Expr> call_args = {make_extern_func(std::move(symbol)), make_tuple(std::move(args))};
  if (workspace_bytes.defined()) call_args.push_back(make_prim_value(std::move(workspace_bytes)));
  return make_call(make_op_or_die("call_dps_library"), std::move(call_args), {}, {std::move(out_sinfo)});
}

Expr call_library_dps(std::string symbol, std::vector<Expr> args, std::vector<Expr> outs,
                      SymExpr workspace_bytes) {
  std::vector<Expr> call_args = {make_extern_func(std::move(symbol)), make_tuple(std::move(args)),
                                 make_tuple(std::move(outs))};
  if (workspace_bytes.defined()) call_args.push_back(make_prim_value(std::move(workspace_bytes)));
  return make_call(make_op_or_die("call_library_dps"), std::move(call_args));
}

}  // namespace op
}  // namespace relax
