// Reduction kernels: sum, and softmax (max, sum of exponentials, normalise).
//
//   sum(x: Tensor[(n, m), f32], axes=[1])  becomes
//   prim_func @sum(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
//     for i0 in range(n) parallel {
//       for k0 in range(m) {
//         block sum(vi0 = spatial(n, i0), vk0 = reduce(m, k0)) {
//           init { B[vi0] = 0f32 }
//           B[vi0] = B[vi0] + A[vi0, vk0]
//         }
//       }
//     }
//   }
//
// softmax over axis a is three loop nests, each around one block, with the
// per-slice maximum and sum in two intermediate buffers over the other dims
// (Allocate'd in workspace scope, as their size is symbolic):
//   block max      max_elem[o] = max(max_elem[o], A[o, k])        (init -inf)
//   block sum      exp_sum[o] = exp_sum[o] + exp(A[o, k] - max_elem[o])   (init 0)
//   block softmax  B[o, v] = exp(A[o, v] - max_elem[o]) / exp_sum[o]
// (o: the dims other than a; the exponential is recomputed rather than stored,
// so that no block reads what a later one of the same nest writes.)
#include <limits>

#include "transform/legalize/legalize_kernel.h"

namespace relax::transform::legalize {
namespace {

// The dims of `dims` other than `axis`.
template <typename T>
std::vector<T> without(const std::vector<T>& dims, size_t axis) {
  std::vector<T> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != axis) out.push_back(dims[i]);
  }
  return out;
}

// `others` with `at` inserted at position `axis`.
std::vector<SymExpr> with(const std::vector<SymVar>& others, size_t axis, const SymExpr& at) {
  std::vector<SymExpr> out = as_indices(others);
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), at);
  return out;
}

}  // namespace

absl::StatusOr<Lowering> legalize_sum(const CallNode& call, Analyzer&) {
  const std::string op = "sum";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  if (absl::Status s = check_dtype(op, *(*x)->dtype, DtypeClass::kNumeric,
                                   "x " + call.args[0].struct_info().to_string());
      !s.ok()) {
    return s;
  }
  const size_t ndim = (*x)->shape->size();
  std::vector<bool> reduced(ndim, true);
  if (auto it = call.attrs.find("axes"); it != call.attrs.end()) {
    const auto* list = std::get_if<std::vector<int64_t>>(&it->second);
    if (list == nullptr) return rule_error(op, "attribute `axes` must be a list of ints");
    reduced.assign(ndim, false);
    for (int64_t a : *list) {
      absl::StatusOr<int64_t> axis = normalize_axis(op, a, static_cast<int64_t>(ndim));
      if (!axis.ok()) return axis.status();
      reduced[*axis] = true;
    }
  }
  bool keepdims = false;
  if (auto it = call.attrs.find("keepdims"); it != call.attrs.end()) {
    const bool* flag = std::get_if<bool>(&it->second);
    if (flag == nullptr) return rule_error(op, "attribute `keepdims` must be a bool");
    keepdims = *flag;
  }

  KernelBuilder kb(op, {*(*x)->shape, *(*out)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", **out);
  std::vector<SymExpr> spatial;
  std::vector<SymExpr> reduce;
  for (size_t i = 0; i < ndim; ++i) (reduced[i] ? reduce : spatial).push_back(a.shape()[i]);
  // The indices of the result and of x at a point of the block.
  auto out_index = [&](const std::vector<SymVar>& s) {
    std::vector<SymExpr> index;
    size_t next = 0;
    for (size_t i = 0; i < ndim; ++i) {
      if (!reduced[i]) {
        index.push_back(s[next++]);
      } else if (keepdims) {
        index.push_back(0);
      }
    }
    return index;
  };
  auto in_index = [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
    std::vector<SymExpr> index;
    size_t next_s = 0;
    size_t next_r = 0;
    for (size_t i = 0; i < ndim; ++i) index.push_back(reduced[i] ? r[next_r++] : s[next_s++]);
    return index;
  };
  PrimFuncBuilder& pb = kb.body();
  if (reduce.empty()) {  // nothing to reduce: a copy
    loop_block(pb, op, spatial, {}, nullptr,
               [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
                 pb.store(b, out_index(s), buffer_load(a, in_index(s, r)));
               });
    return kb.finish();
  }
  loop_block(
      pb, op, spatial, reduce,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(b, out_index(s), 0);
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        pb.store(b, out_index(s), buffer_load(b, out_index(s)) + buffer_load(a, in_index(s, r)));
      });
  return kb.finish();
}

absl::StatusOr<Lowering> legalize_softmax(const CallNode& call, Analyzer&) {
  const std::string op = "softmax";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  const DataType dtype = *(*x)->dtype;
  if (absl::Status s =
          check_dtype(op, dtype, DtypeClass::kFloat, "x " + call.args[0].struct_info().to_string());
      !s.ok()) {
    return s;
  }
  int64_t axis_attr = -1;
  if (auto it = call.attrs.find("axis"); it != call.attrs.end()) {
    const int64_t* value = std::get_if<int64_t>(&it->second);
    if (value == nullptr) return rule_error(op, "attribute `axis` must be an int");
    axis_attr = *value;
  }
  absl::StatusOr<int64_t> axis_or =
      normalize_axis(op, axis_attr, static_cast<int64_t>((*x)->shape->size()));
  if (!axis_or.ok()) return axis_or.status();
  const size_t axis = static_cast<size_t>(*axis_or);

  KernelBuilder kb(op, {*(*x)->shape, *(*out)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", **out);
  PrimFuncBuilder& pb = kb.body();
  const std::vector<SymExpr> others = without(a.shape(), axis);
  const SymExpr extent = a.shape()[axis];
  Buffer max_elem = pb.allocate("max_elem", others, dtype, BufferScope::kWorkspace);
  Buffer exp_sum = pb.allocate("exp_sum", others, dtype, BufferScope::kWorkspace);
  const SymExpr neg_inf = SymExpr::float_imm(-std::numeric_limits<double>::infinity(), dtype);
  loop_block(
      pb, "max", others, {extent},
      [&](const std::vector<SymVar>& o, const std::vector<SymVar>&) {
        pb.store(max_elem, as_indices(o), neg_inf);
      },
      [&](const std::vector<SymVar>& o, const std::vector<SymVar>& k) {
        pb.store(max_elem, as_indices(o),
                 max(buffer_load(max_elem, as_indices(o)), buffer_load(a, with(o, axis, k[0]))));
      });
  loop_block(
      pb, "sum", others, {extent},
      [&](const std::vector<SymVar>& o, const std::vector<SymVar>&) {
        pb.store(exp_sum, as_indices(o), 0);
      },
      [&](const std::vector<SymVar>& o, const std::vector<SymVar>& k) {
        SymExpr shifted =
            buffer_load(a, with(o, axis, k[0])) - buffer_load(max_elem, as_indices(o));
        pb.store(exp_sum, as_indices(o), buffer_load(exp_sum, as_indices(o)) + exp(shifted));
      });
  loop_block(pb, "softmax", a.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               std::vector<SymVar> o = without(v, axis);
               SymExpr shifted =
                   buffer_load(a, as_indices(v)) - buffer_load(max_elem, as_indices(o));
               pb.store(b, as_indices(v), exp(shifted) / buffer_load(exp_sum, as_indices(o)));
             });
  return kb.finish();
}

}  // namespace relax::transform::legalize
