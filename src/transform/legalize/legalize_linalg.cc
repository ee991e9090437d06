// The matmul kernel: numpy.matmul as one compute block with a reduction.
//
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
#include "transform/legalize/legalize_kernel.h"

namespace relax::transform::legalize {

absl::StatusOr<Lowering> legalize_matmul(const CallNode& call, Analyzer& analyzer) {
  const std::string op = "matmul";
  absl::StatusOr<const TensorStructInfoNode*> lhs = known_tensor(call, 0, op, "lhs");
  if (!lhs.ok()) return lhs.status();
  absl::StatusOr<const TensorStructInfoNode*> rhs = known_tensor(call, 1, op, "rhs");
  if (!rhs.ok()) return rhs.status();
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op, DtypeClass::kNumeric);
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

}  // namespace relax::transform::legalize
