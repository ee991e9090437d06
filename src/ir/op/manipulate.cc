// Layout manipulation: reshape and permute_dims.
//
// reshape keeps the element count: with the input's dims known, the Analyzer
// must prove the counts equal (or infer the single -1 dim as the quotient, and
// reject a remainder it proves non-zero). With the input known only by rank the
// new shape is taken on trust and checked at run time.
// Kernels: reshape (a copy through the row-major element index) and
// permute_dims (a copy with permuted indices).
//
//   reshape(x: Tensor[(n, 4), f32], shape(n * 4,))  becomes
//   prim_func @reshape(A: Buffer[(n, 4), float32], B: Buffer[(n * 4,), float32]) {
//     for i0 in range(n * 4) parallel {
//       block reshape(vi0 = spatial(n * 4, i0)) {
//         B[vi0] = A[floordiv(vi0, 4), floormod(vi0, 4)]
//       }
//     }
//   }
//
// The shape argument of reshape is not passed: the result's dims (over the
// kernel's variables) are the output buffer's.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/manipulate.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

struct PermuteDimsAttrs {
  std::optional<std::vector<int64_t>> axes;
  template <typename V>
  void fields(V& v) {
    v("axes", axes);
  }
};

absl::StatusOr<StructInfo> deduce_reshape(const CallNode& call, const NoAttrs&, DeduceContext& ctx) {
  const std::string op = "reshape";
  const TensorStructInfoNode& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  const auto* shape = call.args[1].struct_info().as<ShapeStructInfoNode>();
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
        return op_error(op, "new shape " + dims_string(dims) +
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
      return op_error(op, "new shape " + dims_string(dims) + ": dim " +
                                      std::to_string(i) + " is " + std::to_string(*c) +
                                      ", expected a size >= 0 or -1");
    }
    if (infer) {
      return op_error(op, "new shape " + dims_string(dims) +
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
  SymExpr old_count = product(*x.shape, analyzer);
  std::string x_text =
      "x " + call.args[0].struct_info().to_string() + " has " + old_count.to_string() + " elements";
  if (infer) {
    std::vector<SymExpr> others = dims;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(*infer));
    SymExpr rest = product(others, analyzer);
    if (analyzer.prove_equal(rest, 0)) {
      return op_error(op, "cannot infer dim " + std::to_string(*infer) + " of " +
                                      dims_string(dims) +
                                      ": the other dims have 0 elements");
    }
    SymExpr remainder = analyzer.simplify(floormod(old_count, rest));
    std::optional<int64_t> r = remainder.as_const();
    if (r && *r != 0) {
      return op_error(op, "cannot infer dim " + std::to_string(*infer) + " of " +
                                      dims_string(dims) + ": " + x_text +
                                      ", not a multiple of " + rest.to_string());
    }
    dims[*infer] = analyzer.simplify(floordiv(old_count, rest));
    return tensor_sinfo(std::move(dims), x.dtype, x.device);
  }
  SymExpr new_count = product(dims, analyzer);
  if (!analyzer.prove_equal(old_count, new_count)) {
    return op_error(op, "element counts differ: " + x_text + ", new shape " +
                                    dims_string(dims) + " has " + new_count.to_string());
  }
  return tensor_sinfo(std::move(dims), x.dtype, x.device);
}

absl::StatusOr<StructInfo> deduce_permute_dims(const CallNode& call, const PermuteDimsAttrs& attrs, DeduceContext&) {
  const std::string op = "permute_dims";
  const TensorStructInfoNode& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  const std::optional<std::vector<int64_t>>& axes = attrs.axes;
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
      return dims_string(as_dims);
    };
    if (static_cast<int>(axes->size()) != ndim) {
      return op_error(op, "axes " + axes_text() + " have " + std::to_string(axes->size()) +
                                      " entries, expected " + std::to_string(ndim) +
                                      " (the rank of x " + call.args[0].struct_info().to_string() +
                                      ")");
    }
    std::vector<bool> seen(ndim, false);
    for (int64_t a : *axes) {
      int64_t axis = a < 0 ? a + ndim : a;
      if (axis < 0 || axis >= ndim) {
        return op_error(op, "axis " + std::to_string(a) + " in " + axes_text() +
                                        " is out of range for rank " + std::to_string(ndim));
      }
      if (seen[axis]) {
        return op_error(
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


// The row-major strides of `dims`: stride[i] is the product of dims[i+1:].
std::vector<SymExpr> strides(const std::vector<SymExpr>& dims) {
  std::vector<SymExpr> out(dims.size());
  SymExpr s(1);
  for (size_t i = dims.size(); i-- > 0;) {
    out[i] = s;
    s = s * dims[i];
  }
  return out;
}


absl::StatusOr<Lowering> legalize_reshape(const CallNode& call, const NoAttrs&, Analyzer&) {
  const std::string op = "reshape";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();

  KernelBuilder kb(op, {*(*x)->shape, *(*out)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", **out);
  const std::vector<SymExpr> in_strides = strides(a.shape());
  const std::vector<SymExpr> out_strides = strides(b.shape());
  PrimFuncBuilder& pb = kb.body();
  loop_block(pb, op, b.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               // Index arithmetic is simplified knowing each variable's range,
               // which turns floordiv(vi0 * 4 + vi1, 4) into vi0.
               Analyzer analyzer;
               absl::flat_hash_set<uint64_t> bound;
               auto bind_dims = [&](const std::vector<SymExpr>& dims) {
                 for (const SymExpr& d : dims) {
                   for_each_var(d, [&](const SymVar& var) {
                     if (bound.insert(var.id()).second) analyzer.bind(var, 0);
                   });
                 }
               };
               bind_dims(a.shape());
               bind_dims(b.shape());
               SymExpr flat(0);
               for (size_t i = 0; i < v.size(); ++i) {
                 std::optional<int64_t> extent = b.shape()[i].as_const();
                 analyzer.bind(v[i], 0, extent ? *extent - 1 : ConstIntBound::kPosInf);
                 flat = flat + v[i] * out_strides[i];
               }
               std::vector<SymExpr> in_index;
               for (size_t j = 0; j < a.ndim(); ++j) {
                 SymExpr index = floordiv(flat, in_strides[j]);
                 if (j > 0) index = floormod(index, a.shape()[j]);
                 in_index.push_back(analyzer.simplify(index));
               }
               pb.store(b, as_indices(v), buffer_load(a, in_index));
             });
  return kb.finish();
}

absl::StatusOr<Lowering> legalize_permute_dims(const CallNode& call, const PermuteDimsAttrs& attrs, Analyzer&) {
  const std::string op = "permute_dims";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  const int64_t ndim = static_cast<int64_t>((*x)->shape->size());
  std::vector<int64_t> axes;
  if (attrs.axes) {
    for (int64_t a : *attrs.axes) {
      absl::StatusOr<int64_t> axis = normalize_axis(op, a, ndim);
      if (!axis.ok()) return axis.status();
      axes.push_back(*axis);
    }
  } else {
    for (int64_t i = ndim - 1; i >= 0; --i) axes.push_back(i);
  }
  if (static_cast<int64_t>(axes.size()) != ndim) {
    return error(
        op, "expected " + std::to_string(ndim) + " axes, got " + std::to_string(axes.size()));
  }

  KernelBuilder kb(op, {*(*x)->shape, *(*out)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", **out);
  PrimFuncBuilder& pb = kb.body();
  loop_block(pb, op, b.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               std::vector<SymExpr> in_index(v.size());
               for (size_t i = 0; i < v.size(); ++i) in_index[axes[i]] = v[i];
               pb.store(b, as_indices(v), buffer_load(a, in_index));
             });
  return kb.finish();
}

}  // namespace

void register_manipulate_ops(OpTable& table) {
  table.def("reshape", "x with a new shape of the same element count")
      .arg("x", ArgKind::kTensor)
      .arg("shape", ArgKind::kShape)
      .deduce(deduce_reshape)
      .legalize(legalize_reshape);
  table.def<PermuteDimsAttrs>("permute_dims", "x with its dims permuted (default: reversed)")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_permute_dims)
      .legalize(legalize_permute_dims);
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
  return make_call(make_op_or_die("permute_dims"), {std::move(x)},
                   detail::encode_attrs(detail::PermuteDimsAttrs{std::move(axes)}));
}

}  // namespace op
}  // namespace relax
