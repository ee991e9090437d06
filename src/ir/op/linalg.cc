// Linear algebra: matmul, linear.
//
// Deduction: numpy.matmul. A rank-1 lhs (rhs) is a vector without a row
// (column) dim; the leading batch dims broadcast like elementwise operands;
// the inner dims must be provably equal.
//
// Legalization: one compute block with a reduction over the inner dim.
//   matmul(x: Tensor[(b, n, k), f32], w: Tensor[(k, m), f32])  becomes
//   prim_func @matmul(A: Buffer[(b, n, k), float32], B: Buffer[(k, m), float32],
//                     C: Buffer[(b, n, m), float32]) {
//     for i0 in range(b) parallel {
//       for i1 in range(n) { for i2 in range(m) { for k0 in range(k) {
//         block matmul(vi0 = spatial(b, i0), vi1 = spatial(n, i1), vi2 = spatial(m, i2),
//                      vk0 = reduce(k, k0)) {
//           init { C[vi0, vi1, vi2] = 0f32 }
//           C[vi0, vi1, vi2] = C[vi0, vi1, vi2] + A[vi0, vi1, vk0] * B[vk0, vi2]
//         }
//       } } }
//     }
//   }
//
// Batch dims broadcast like elementwise operands (a dim of 1 is indexed 0); a
// rank-1 lhs (rhs) has no row (column) dim, so the result lacks it too. An
// inner dim of 0 gives zeros, the empty sum (numpy, PyTorch): the init runs
// though its reduction loop does not (relax/ir/empty_reduction.h).
//
// Mixed precision: `out_dtype` (unset: the operands' dtype) is the result's
// dtype; the operands share a dtype, and float operands need a float
// out_dtype (float16 x float16 -> float32, int8 x int8 -> int32). Products
// and sums are computed in the result's dtype, or in float32 for a float16 or
// bfloat16 result, whose block then accumulates in a workspace buffer and a
// second block (`<op>_out`) rounds it into the result.
//
// linear(x, weight, bias) = x . weight^T + bias: x (..., k), weight (m, k),
// bias (optional) broadcasting to the result (..., m) without changing it and
// of the result's dtype. One block, reducing k, whose init step loads the bias:
//   block linear(vi..., vj = spatial(m), vk = reduce(k)) {
//     init { C[vi..., vj] = Bias[vj] }
//     C[vi..., vj] = C[vi..., vj] + X[vi..., vk] * W[vj, vk]
//   }
#include <algorithm>

#include "ir/op/deduce_rules.h"
#include "ir/op/nn_common.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/linalg.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

struct MatmulAttrs {
  std::optional<DataType> out_dtype;
  template <typename V>
  void fields(V& v) {
    v("out_dtype", out_dtype);
  }
};

// The result's dtype: out_dtype when set (numeric, and a float for float
// operands), else the operands' joined dtype.
absl::StatusOr<std::optional<DataType>> result_dtype(const std::string& op,
                                                     std::optional<DataType> operands,
                                                     const MatmulAttrs& attrs) {
  if (!attrs.out_dtype) return operands;
  const DataType out = *attrs.out_dtype;
  if (out.lanes != 1 || !(out.is_int() || out.is_float())) {
    return op_error(op, "out_dtype must be an integer or float dtype, got " + out.to_string());
  }
  if (operands && operands->is_float() && !out.is_float()) {
    return op_error(op, "out_dtype " + out.to_string() + " is not a float dtype, but the operands are " +
                            operands->to_string());
  }
  return attrs.out_dtype;
}

absl::StatusOr<StructInfo> deduce_matmul(const CallNode& call, const MatmulAttrs& attrs,
                                         DeduceContext& ctx) {
  const std::string op = "matmul";
  const TensorStructInfoNode& lhs = *call.args[0].struct_info().as<TensorStructInfoNode>();
  const TensorStructInfoNode& rhs = *call.args[1].struct_info().as<TensorStructInfoNode>();
  absl::StatusOr<std::optional<DataType>> joined = join_dtypes(op, lhs, rhs);
  if (!joined.ok()) return joined.status();
  absl::StatusOr<std::optional<DataType>> dtype = result_dtype(op, *joined, attrs);
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<Device> device = join_devices(op, lhs, rhs);
  if (!device.ok()) return device.status();

  const char* roles[] = {"lhs", "rhs"};
  const TensorStructInfoNode* operands[] = {&lhs, &rhs};
  for (size_t i = 0; i < 2; ++i) {
    if (operands[i]->ndim == 0) {
      return op_error(op, arg_label(i, roles[i]) +
                                      ": expected a tensor of rank >= 1, got " +
                                      call.args[i].struct_info().to_string());
    }
  }
  if (lhs.ndim == kUnknownNDim || rhs.ndim == kUnknownNDim) {
    return tensor_sinfo_rank(kUnknownNDim, *dtype, *device);
  }
  int lhs_batch = std::max(lhs.ndim - 2, 0);
  int rhs_batch = std::max(rhs.ndim - 2, 0);
  int out_ndim = std::max(lhs_batch, rhs_batch) + (lhs.ndim > 1) + (rhs.ndim > 1);
  if (!lhs.shape || !rhs.shape) return tensor_sinfo_rank(out_ndim, *dtype, *device);

  const std::vector<SymExpr>& a = *lhs.shape;
  const std::vector<SymExpr>& b = *rhs.shape;
  std::string context = " (lhs " + call.args[0].struct_info().to_string() + ", rhs " +
                        call.args[1].struct_info().to_string() + ")";
  size_t a_inner = a.size() - 1;
  size_t b_inner = b.size() == 1 ? 0 : b.size() - 2;
  if (!structural_equal(a[a_inner], b[b_inner]) &&
      !ctx.analyzer.prove_equal(a[a_inner], b[b_inner])) {
    return op_error(op, "inner dims differ: lhs dim " + std::to_string(a_inner) + " is " +
                                    quoted(a[a_inner]) + ", rhs dim " +
                                    std::to_string(b_inner) + " is " + quoted(b[b_inner]) +
                                    context);
  }
  std::vector<SymExpr> a_batch(a.begin(), a.begin() + lhs_batch);
  std::vector<SymExpr> b_batch(b.begin(), b.begin() + rhs_batch);
  absl::StatusOr<std::vector<SymExpr>> out =
      broadcast_shapes(a_batch, b_batch, ctx.analyzer, op, "batch dim", context);
  if (!out.ok()) return out.status();
  if (lhs.ndim > 1) out->push_back(a[a.size() - 2]);
  if (rhs.ndim > 1) out->push_back(b.back());
  return tensor_sinfo(std::move(*out), *dtype, *device);
}


// C[s] = init(s) + sum over r of term(s, r): one block `name`, accumulating in
// C when `acc` is C's dtype, else in a workspace of dtype `acc` that a second
// block `<name>_out` converts into C.
void contraction(PrimFuncBuilder& pb, const std::string& name, const Buffer& c,
                 const std::vector<SymExpr>& reduce_dims, DataType acc,
                 const std::function<SymExpr(const std::vector<SymVar>&)>& init,
                 const std::function<SymExpr(const std::vector<SymVar>&, const std::vector<SymVar>&)>& term) {
  const bool direct = acc == c.dtype();
  Buffer target = direct ? c : pb.allocate(name + "_acc", c.shape(), acc, BufferScope::kWorkspace);
  loop_block(
      pb, name, c.shape(), reduce_dims,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(target, as_indices(s), init(s));
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        pb.store(target, as_indices(s), buffer_load(target, as_indices(s)) + term(s, r));
      });
  if (direct) return;
  loop_block(pb, name + "_out", c.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
               pb.store(c, as_indices(s), as_dtype(buffer_load(target, as_indices(s)), c.dtype()));
             });
}

SymExpr zero_of(DataType t) { return t.is_float() ? SymExpr::float_imm(0, t) : SymExpr::int_imm(0, t); }

absl::StatusOr<Lowering> legalize_matmul(const CallNode& call, const MatmulAttrs&, Analyzer& analyzer) {
  const std::string op = "matmul";
  absl::StatusOr<const TensorStructInfoNode*> lhs = known_tensor(call, 0, op, "lhs");
  if (!lhs.ok()) return lhs.status();
  absl::StatusOr<const TensorStructInfoNode*> rhs = known_tensor(call, 1, op, "rhs");
  if (!rhs.ok()) return rhs.status();
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op);
  if (!out_or.ok()) return out_or.status();
  const TensorStructInfoNode& out = **out_or;
  const std::vector<SymExpr>& a = *(*lhs)->shape;
  const std::vector<SymExpr>& b = *(*rhs)->shape;
  const std::vector<SymExpr>& o = *out.shape;
  const bool has_row = a.size() > 1;
  const bool has_col = b.size() > 1;
  const size_t out_batch = o.size() - has_row - has_col;
  const std::vector<SymExpr> o_batch(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(out_batch));
  auto batch_of = [](const std::vector<SymExpr>& dims) {
    size_t n = dims.size() > 2 ? dims.size() - 2 : 0;
    return std::vector<SymExpr>(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(n));
  };
  absl::StatusOr<BroadcastMap> a_map =
      broadcast_map(op, "lhs batch", batch_of(a), o_batch, analyzer);
  if (!a_map.ok()) return a_map.status();
  absl::StatusOr<BroadcastMap> b_map =
      broadcast_map(op, "rhs batch", batch_of(b), o_batch, analyzer);
  if (!b_map.ok()) return b_map.status();

  // B's reduction dim is written as A's, so that the kernel's entry check
  // rejects a B whose dim differs (the loop runs over A's) instead of
  // reading past it.
  // C's row and column dims likewise are A's and B's.
  std::vector<SymExpr> b_shared = b;
  b_shared[b.size() - (has_col ? 2 : 1)] = a.back();
  std::vector<SymExpr> o_shared = o;
  if (has_row) o_shared[out_batch] = a[a.size() - 2];
  if (has_col) o_shared.back() = b.back();
  KernelBuilder kb(op, {a, b_shared, o_shared});
  Buffer ab = kb.input("A", call.args[0]);
  Buffer bb = kb.input("B", call.args[1], b_shared);
  Buffer c = kb.output("C", out, o_shared);
  PrimFuncBuilder& pb = kb.body();
  const DataType acc = compute_dtype(*out.dtype);
  contraction(
      pb, op, c, {ab.shape().back()}, acc, [&](const std::vector<SymVar>&) { return zero_of(acc); },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        std::vector<SymExpr> a_idx = broadcast_index(*a_map, s);
        if (has_row) a_idx.push_back(s[out_batch]);
        a_idx.push_back(r[0]);
        std::vector<SymExpr> b_idx = broadcast_index(*b_map, s);
        b_idx.push_back(r[0]);
        if (has_col) b_idx.push_back(s.back());
        return load_as(ab, a_idx, acc) * load_as(bb, b_idx, acc);
      });
  return kb.finish();
}

absl::StatusOr<StructInfo> deduce_linear(const CallNode& call, const MatmulAttrs& attrs,
                                         DeduceContext& ctx) {
  const std::string op = "linear";
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const TensorStructInfoNode& w = tensor_of(call, 1);
  absl::StatusOr<std::optional<DataType>> joined = shared_dtype(call, {0, 1});
  if (!joined.ok()) return joined.status();
  absl::StatusOr<std::optional<DataType>> dtype = result_dtype(op, *joined, attrs);
  if (!dtype.ok()) return dtype.status();
  if (x.ndim == 0) {
    return op_error(op, nn_arg_label(call, 0) + ": expected a tensor of rank >= 1, got " +
                            call.args[0].struct_info().to_string());
  }
  if (absl::Status s = require_rank(call, 1, 2); !s.ok()) return s;
  const bool has_bias = call.args.size() > 2;
  if (has_bias) {
    const TensorStructInfoNode& bias = tensor_of(call, 2);
    if (*dtype && bias.dtype && *bias.dtype != **dtype) {
      return op_error(op, nn_arg_label(call, 2) + ": expected dtype " + (*dtype)->to_string() +
                              " (the result's), got " + call.args[2].struct_info().to_string());
    }
  }
  if (x.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, *dtype, x.device);
  if (!x.shape || !w.shape) return tensor_sinfo_rank(x.ndim, *dtype, x.device);
  if (absl::Status s = require_dim(call, ctx, 1, 1, x.shape->back(),
                                   "x dim " + std::to_string(x.shape->size() - 1));
      !s.ok()) {
    return s;
  }
  std::vector<SymExpr> out = *x.shape;
  out.back() = (*w.shape)[0];
  if (has_bias) {
    const TensorStructInfoNode& bias = tensor_of(call, 2);
    if (bias.ndim != kUnknownNDim && bias.ndim > static_cast<int>(out.size())) {
      return op_error(op, nn_arg_label(call, 2) + ": rank " + std::to_string(bias.ndim) +
                              " exceeds the result's rank " + std::to_string(out.size()));
    }
    if (bias.shape) {
      const std::string context = " (bias " + call.args[2].struct_info().to_string() +
                                  ", result " + dims_string(out) + ")";
      absl::StatusOr<std::vector<SymExpr>> joined_shape =
          broadcast_shapes(out, *bias.shape, ctx.analyzer, op, "bias dim", context);
      if (!joined_shape.ok()) return joined_shape.status();
      for (size_t i = 0; i < out.size(); ++i) {
        if (!ctx.analyzer.prove_equal((*joined_shape)[i], out[i])) {
          return op_error(op, "bias does not broadcast to the result without changing it" + context);
        }
      }
    }
  }
  return tensor_sinfo(std::move(out), *dtype, x.device);
}

absl::StatusOr<Lowering> legalize_linear(const CallNode& call, const MatmulAttrs&, Analyzer& analyzer) {
  const std::string op = "linear";
  const char* roles[] = {"x", "weight", "bias"};
  std::vector<std::vector<SymExpr>> dims;
  for (size_t i = 0; i < call.args.size(); ++i) {
    absl::StatusOr<const TensorStructInfoNode*> t = known_tensor(call, i, op, roles[i]);
    if (!t.ok()) return t.status();
    dims.push_back(*(*t)->shape);
  }
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op);
  if (!out_or.ok()) return out_or.status();
  const TensorStructInfoNode& out = **out_or;
  const bool has_bias = call.args.size() > 2;
  BroadcastMap bias_map;
  if (has_bias) {
    absl::StatusOr<BroadcastMap> map = broadcast_map(op, "bias", dims[2], *out.shape, analyzer);
    if (!map.ok()) return map.status();
    bias_map = *std::move(map);
  }
  // The weight's reduction dim is written as x's, the result's last dim as
  // the weight's rows (see matmul).
  const std::vector<SymExpr>& xd = dims[0];
  const std::vector<SymExpr> w_shared = {dims[1][0], xd.back()};
  std::vector<SymExpr> o_shared = xd;
  o_shared.back() = dims[1][0];
  std::vector<std::vector<SymExpr>> buffer_dims = {xd, w_shared};
  if (has_bias) buffer_dims.push_back(dims[2]);
  buffer_dims.push_back(o_shared);
  KernelBuilder kb(op, buffer_dims);
  Buffer x = kb.input("X", call.args[0]);
  Buffer w = kb.input("W", call.args[1], w_shared);
  Buffer bias;
  if (has_bias) bias = kb.input("Bias", call.args[2]);
  Buffer c = kb.output("C", out, o_shared);
  PrimFuncBuilder& pb = kb.body();
  const DataType acc = compute_dtype(*out.dtype);
  contraction(
      pb, op, c, {x.shape().back()}, acc,
      [&](const std::vector<SymVar>& s) {
        return has_bias ? load_as(bias, broadcast_index(bias_map, s), acc) : zero_of(acc);
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        std::vector<SymExpr> x_idx = as_indices(s);
        x_idx.back() = r[0];
        return load_as(x, x_idx, acc) * load_as(w, {s.back(), r[0]}, acc);
      });
  return kb.finish();
}

}  // namespace

void register_linalg_ops(OpTable& table) {
  table.def<MatmulAttrs>("matmul", "matrix product with numpy.matmul semantics, result dtype out_dtype")
      .arg("lhs", ArgKind::kTensor, DtypeClass::kNumeric)
      .arg("rhs", ArgKind::kTensor, DtypeClass::kNumeric)
      .deduce(deduce_matmul)
      .legalize(legalize_matmul);
  table.def<MatmulAttrs>("linear", "x . weight^T + bias (bias optional), result dtype out_dtype")
      .arg("x", ArgKind::kTensor, DtypeClass::kNumeric)
      .arg("weight", ArgKind::kTensor, DtypeClass::kNumeric)
      .optional_arg("bias", ArgKind::kTensor, DtypeClass::kNumeric)
      .deduce(deduce_linear)
      .legalize(legalize_linear);
}

}  // namespace detail

namespace op {

Expr matmul(Expr lhs, Expr rhs, std::optional<DataType> out_dtype) {
  return make_call(make_op_or_die("matmul"), {std::move(lhs), std::move(rhs)},
                   detail::encode_attrs(detail::MatmulAttrs{out_dtype}));
}

Expr linear(Expr x, Expr weight, std::optional<Expr> bias, std::optional<DataType> out_dtype) {
  std::vector<Expr> args = {std::move(x), std::move(weight)};
  if (bias) args.push_back(std::move(*bias));
  return make_call(make_op_or_die("linear"), std::move(args),
                   detail::encode_attrs(detail::MatmulAttrs{out_dtype}));
}

}  // namespace op
}  // namespace relax
