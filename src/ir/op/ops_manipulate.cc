// Layout manipulation: reshape and permute_dims.
//
// reshape keeps the element count: with the input's dims known, the Analyzer
// must prove the counts equal (or infer the single -1 dim as the quotient, and
// reject a remainder it proves non-zero). With the input known only by rank the
// new shape is taken on trust and checked at run time.
#include <algorithm>

#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

absl::StatusOr<StructInfo> deduce_reshape(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "reshape";
  absl::StatusOr<const TensorStructInfoNode*> x_or = detail::tensor_arg(call, 0, op, "x");
  if (!x_or.ok()) return x_or.status();
  const TensorStructInfoNode& x = **x_or;
  const StructInfo& shape_sinfo_arg = call.args[1].struct_info();
  const auto* shape = shape_sinfo_arg.as<ShapeStructInfoNode>();
  if (shape == nullptr) {
    return detail::op_error(op, detail::arg_label(1, "shape") + ": expected a Shape, got " +
                                    shape_sinfo_arg.to_string());
  }
  if (!shape->values) return tensor_sinfo_rank(shape->ndim, x.dtype, x.device);

  std::vector<SymExpr> dims = *shape->values;
  // A variable the new shape uses but nothing defines would otherwise surface
  // as an element count that cannot be proven equal: name it instead.
  if (ctx.sym_in_scope) {
    for (const SymExpr& d : dims) {
      std::optional<SymVar> undefined;
      for_each_var(d, [&](const SymVar& v) {
        if (!undefined && !ctx.sym_in_scope(v)) undefined = v;
      });
      if (undefined) {
        return detail::op_error(op, "new shape " + detail::dims_string(dims) +
                                        ": symbolic variable `" + undefined->name() +
                                        "` is not defined here");
      }
    }
  }
  std::optional<size_t> infer;
  for (size_t i = 0; i < dims.size(); ++i) {
    std::optional<int64_t> c = dims[i].as_const();
    if (!c || *c >= 0) continue;
    if (*c != -1) {
      return detail::op_error(op, "new shape " + detail::dims_string(dims) + ": dim " +
                                      std::to_string(i) + " is " + std::to_string(*c) +
                                      ", expected a size >= 0 or -1");
    }
    if (infer) {
      return detail::op_error(op, "new shape " + detail::dims_string(dims) +
                                      " has more than one -1 (dims " + std::to_string(*infer) +
                                      " and " + std::to_string(i) + ")");
    }
    infer = i;
  }
  if (!x.shape) {
    if (infer) return tensor_sinfo_rank(static_cast<int>(dims.size()), x.dtype, x.device);
    return tensor_sinfo(std::move(dims), x.dtype, x.device);
  }

  Analyzer& analyzer = ctx.analyzer;
  SymExpr old_count = detail::product(*x.shape, analyzer);
  std::string x_text =
      "x " + call.args[0].struct_info().to_string() + " has " + old_count.to_string() + " elements";
  if (infer) {
    std::vector<SymExpr> others = dims;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(*infer));
    SymExpr rest = detail::product(others, analyzer);
    if (analyzer.prove_equal(rest, 0)) {
      return detail::op_error(op, "cannot infer dim " + std::to_string(*infer) + " of " +
                                      detail::dims_string(dims) +
                                      ": the other dims have 0 elements");
    }
    SymExpr remainder = analyzer.simplify(floormod(old_count, rest));
    std::optional<int64_t> r = remainder.as_const();
    if (r && *r != 0) {
      return detail::op_error(op, "cannot infer dim " + std::to_string(*infer) + " of " +
                                      detail::dims_string(dims) + ": " + x_text +
                                      ", not a multiple of " + rest.to_string());
    }
    dims[*infer] = analyzer.simplify(floordiv(old_count, rest));
    return tensor_sinfo(std::move(dims), x.dtype, x.device);
  }
  SymExpr new_count = detail::product(dims, analyzer);
  if (!analyzer.prove_equal(old_count, new_count)) {
    return detail::op_error(op, "element counts differ: " + x_text + ", new shape " +
                                    detail::dims_string(dims) + " has " + new_count.to_string());
  }
  return tensor_sinfo(std::move(dims), x.dtype, x.device);
}

absl::StatusOr<StructInfo> deduce_permute_dims(const CallNode& call, DeduceContext&) {
  const std::string op = "permute_dims";
  absl::StatusOr<const TensorStructInfoNode*> x_or = detail::tensor_arg(call, 0, op, "x");
  if (!x_or.ok()) return x_or.status();
  const TensorStructInfoNode& x = **x_or;
  std::optional<std::vector<int64_t>> axes;
  if (auto it = call.attrs.find("axes"); it != call.attrs.end()) {
    const auto* list = std::get_if<std::vector<int64_t>>(&it->second);
    if (list == nullptr) return detail::op_error(op, "attribute `axes` must be a list of ints");
    axes = *list;
  }
  if (x.ndim == kUnknownNDim) {
    int ndim = axes ? static_cast<int>(axes->size()) : kUnknownNDim;
    return tensor_sinfo_rank(ndim, x.dtype, x.device);
  }
  int ndim = x.ndim;
  std::vector<int64_t> perm;
  if (!axes) {
    for (int i = ndim - 1; i >= 0; --i) perm.push_back(i);
  } else {
    auto axes_text = [&] {
      std::vector<SymExpr> as_dims(axes->begin(), axes->end());
      return detail::dims_string(as_dims);
    };
    if (static_cast<int>(axes->size()) != ndim) {
      return detail::op_error(op, "axes " + axes_text() + " have " + std::to_string(axes->size()) +
                                      " entries, expected " + std::to_string(ndim) +
                                      " (the rank of x " + call.args[0].struct_info().to_string() +
                                      ")");
    }
    std::vector<bool> seen(ndim, false);
    for (int64_t a : *axes) {
      int64_t axis = a < 0 ? a + ndim : a;
      if (axis < 0 || axis >= ndim) {
        return detail::op_error(op, "axis " + std::to_string(a) + " in " + axes_text() +
                                        " is out of range for rank " + std::to_string(ndim));
      }
      if (seen[axis]) {
        return detail::op_error(
            op, "axis " + std::to_string(axis) + " appears twice in " + axes_text());
      }
      seen[axis] = true;
      perm.push_back(axis);
    }
  }
  if (!x.shape) return tensor_sinfo_rank(ndim, x.dtype, x.device);
  std::vector<SymExpr> out;
  for (int64_t axis : perm) out.push_back((*x.shape)[axis]);
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

}  // namespace

namespace detail {

void register_manipulate_ops(OpTable& table) {
  table.add("reshape", 2, deduce_reshape, "x with a new shape of the same element count");
  table.add("permute_dims", 1, deduce_permute_dims, "x with its dims permuted (default: reversed)");
}

}  // namespace detail

namespace op {

Expr reshape(Expr x, Expr shape) {
  return make_call(make_op_or_die("reshape"), {std::move(x), std::move(shape)});
}

Expr reshape(Expr x, std::vector<SymExpr> shape) {
  return reshape(std::move(x), make_shape_expr(std::move(shape)));
}

Expr permute_dims(Expr x, std::optional<std::vector<int64_t>> axes) {
  Attrs attrs;
  if (axes) attrs.emplace("axes", std::move(*axes));
  return make_call(make_op_or_die("permute_dims"), {std::move(x)}, std::move(attrs));
}

}  // namespace op
}  // namespace relax
