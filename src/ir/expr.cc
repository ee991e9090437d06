// Constructors of graph-level expression nodes.
#include "relax/ir/expr.h"

#include "absl/strings/str_cat.h"
#include "relax/ir/op.h"
#include "relax/support/check.h"

namespace relax {

Var::Var(std::string name_hint, StructInfo sinfo)
    : Expr(std::make_shared<const VarNode>(std::move(name_hint), std::move(sinfo), false)) {}

DataflowVar::DataflowVar(std::string name_hint, StructInfo sinfo)
    : Var(std::make_shared<const VarNode>(std::move(name_hint), std::move(sinfo), true)) {}

Var Var::from_expr(const Expr& e) {
  RELAX_CHECK(e.as<VarNode>() != nullptr)
      << "expected a Var, got " << (e.defined() ? expr_kind_name(e.kind()) : "undefined");
  return Var(e.node_);
}

Expr make_global_var(std::string name, StructInfo sinfo) {
  return Expr(std::make_shared<const GlobalVarNode>(std::move(name), std::move(sinfo)));
}

Expr make_constant(runtime::Tensor data) {
  RELAX_CHECK(data.defined()) << "a Constant needs a tensor";
  std::vector<SymExpr> shape;
  for (int64_t d : data.shape()) shape.push_back(SymExpr(d));
  StructInfo sinfo = tensor_sinfo(std::move(shape), data.dtype(), data.device());
  return Expr(std::make_shared<const ConstantNode>(std::move(data), std::move(sinfo)));
}

Expr make_shape_expr(std::vector<SymExpr> values) {
  StructInfo sinfo = shape_sinfo(values);
  return Expr(std::make_shared<const ShapeExprNode>(std::move(values), std::move(sinfo)));
}

Expr make_prim_value(SymExpr value) {
  StructInfo sinfo = prim_sinfo(value.dtype(), value);
  return Expr(std::make_shared<const PrimValueNode>(std::move(value), std::move(sinfo)));
}

Expr make_string_imm(std::string value) {
  return Expr(std::make_shared<const StringImmNode>(std::move(value), object_sinfo()));
}

Expr make_extern_func(std::string symbol, StructInfo sinfo) {
  if (!sinfo.defined()) sinfo = opaque_func_sinfo(object_sinfo());
  return Expr(std::make_shared<const ExternFuncNode>(std::move(symbol), std::move(sinfo)));
}

absl::StatusOr<Expr> make_op(std::string_view name) {
  const OpInfo* info = find_op(name);
  if (info == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("make_op: no operator named `", std::string(name), "` is registered (all_ops() lists them)"));
  }
  return info->op;
}

Expr make_op_or_die(std::string_view name) {
  const OpInfo* info = find_op(name);
  RELAX_CHECK(info != nullptr) << "make_op_or_die: no operator named `" << std::string(name) << "` is registered";
  return info->op;
}

Expr make_tuple(std::vector<Expr> fields, StructInfo sinfo) {
  return Expr(std::make_shared<const TupleNode>(std::move(fields), std::move(sinfo)));
}

Expr make_tuple_get_item(Expr tuple, int index, StructInfo sinfo) {
  return Expr(std::make_shared<const TupleGetItemNode>(std::move(tuple), index, std::move(sinfo)));
}

Expr make_call(Expr callee, std::vector<Expr> args, Attrs attrs,
               std::vector<StructInfo> sinfo_args, StructInfo sinfo) {
  return Expr(std::make_shared<const CallNode>(std::move(callee), std::move(args),
                                               std::move(attrs), std::move(sinfo_args),
                                               std::move(sinfo)));
}

Expr make_seq_expr(std::vector<BindingBlock> blocks, Expr body, StructInfo sinfo) {
  return Expr(std::make_shared<const SeqExprNode>(std::move(blocks), std::move(body),
                                                  std::move(sinfo)));
}

Expr make_if(Expr cond, Expr then_branch, Expr else_branch, StructInfo sinfo) {
  return Expr(std::make_shared<const IfNode>(std::move(cond), std::move(then_branch),
                                             std::move(else_branch), std::move(sinfo)));
}

Expr make_function(std::vector<Var> params, Expr body, StructInfo ret, bool pure,
                   std::vector<SymBound> upper_bounds, Attrs attrs) {
  std::vector<StructInfo> param_sinfo;
  for (const Var& p : params) param_sinfo.push_back(p.struct_info());
  StructInfo sinfo = func_sinfo(std::move(param_sinfo), ret, pure);
  return Expr(std::make_shared<const FunctionNode>(std::move(params), std::move(body),
                                                   std::move(ret), pure, std::move(upper_bounds),
                                                   std::move(attrs), std::move(sinfo)));
}

std::string_view expr_kind_name(ExprKind kind) {
  switch (kind) {
    case ExprKind::kVar: return "Var";
    case ExprKind::kDataflowVar: return "DataflowVar";
    case ExprKind::kGlobalVar: return "GlobalVar";
    case ExprKind::kConstant: return "Constant";
    case ExprKind::kTuple: return "Tuple";
    case ExprKind::kTupleGetItem: return "TupleGetItem";
    case ExprKind::kCall: return "Call";
    case ExprKind::kShapeExpr: return "ShapeExpr";
    case ExprKind::kPrimValue: return "PrimValue";
    case ExprKind::kStringImm: return "StringImm";
    case ExprKind::kIf: return "If";
    case ExprKind::kSeqExpr: return "SeqExpr";
    case ExprKind::kFunction: return "Function";
    case ExprKind::kExternFunc: return "ExternFunc";
    case ExprKind::kOp: return "Op";
    case ExprKind::kPrimFunc: return "PrimFunc";
  }
  return "?";
}

}  // namespace relax
