// Layout kernels: reshape (a copy through the row-major element index) and
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
#include "absl/container/flat_hash_set.h"
#include "transform/legalize/legalize_kernel.h"

namespace relax::transform::legalize {
namespace {

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

}  // namespace

absl::StatusOr<Lowering> legalize_reshape(const CallNode& call, Analyzer&) {
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

absl::StatusOr<Lowering> legalize_permute_dims(const CallNode& call, Analyzer&) {
  const std::string op = "permute_dims";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  const int64_t ndim = static_cast<int64_t>((*x)->shape->size());
  std::vector<int64_t> axes;
  if (auto it = call.attrs.find("axes"); it != call.attrs.end()) {
    const auto* list = std::get_if<std::vector<int64_t>>(&it->second);
    if (list == nullptr) return rule_error(op, "attribute `axes` must be a list of ints");
    for (int64_t a : *list) {
      absl::StatusOr<int64_t> axis = normalize_axis(op, a, ndim);
      if (!axis.ok()) return axis.status();
      axes.push_back(*axis);
    }
  } else {
    for (int64_t i = ndim - 1; i >= 0; --i) axes.push_back(i);
  }
  if (static_cast<int64_t>(axes.size()) != ndim) {
    return rule_error(
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

}  // namespace relax::transform::legalize
