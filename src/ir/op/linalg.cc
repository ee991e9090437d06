// Linear algebra: matmul.
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
// rank-1 lhs (rhs) has no row (column) dim, so the result lacks it too.
#include <algorithm>

#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/linalg.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

absl::StatusOr<StructInfo> deduce_matmul(const CallNode& call, const NoAttrs&, DeduceContext& ctx) {
  const std::string op = "matmul";
  const TensorStructInfoNode& lhs = *call.args[0].struct_info().as<TensorStructInfoNode>();
  const TensorStructInfoNode& rhs = *call.args[1].struct_info().as<TensorStructInfoNode>();
  absl::StatusOr<std::optional<DataType>> dtype = join_dtypes(op, lhs, rhs);
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


absl::StatusOr<Lowering> legalize_matmul(const CallNode& call, const NoAttrs&, Analyzer& analyzer) {
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
  const SymExpr inner = ab.shape().back();
  loop_block(
      pb, op, c.shape(), {inner},
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(c, as_indices(s), 0);
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        std::vector<SymExpr> a_idx = broadcast_index(*a_map, s);
        if (has_row) a_idx.push_back(s[out_batch]);
        a_idx.push_back(r[0]);
        std::vector<SymExpr> b_idx = broadcast_index(*b_map, s);
        b_idx.push_back(r[0]);
        if (has_col) b_idx.push_back(s.back());
        SymExpr acc = buffer_load(c, as_indices(s));
        pb.store(c, as_indices(s), acc + buffer_load(ab, a_idx) * buffer_load(bb, b_idx));
      });
  return kb.finish();
}

}  // namespace

void register_linalg_ops(OpTable& table) {
  table.def("matmul", "matrix product with numpy.matmul semantics")
      .arg("lhs", ArgKind::kTensor, DtypeClass::kNumeric)
      .arg("rhs", ArgKind::kTensor, DtypeClass::kNumeric)
      .deduce(deduce_matmul)
      .legalize(legalize_matmul);
}

}  // namespace detail

namespace op {

Expr matmul(Expr lhs, Expr rhs) {
  return make_call(make_op_or_die("matmul"), {std::move(lhs), std::move(rhs)});
}

}  // namespace op
}  // namespace relax
