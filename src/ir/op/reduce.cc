// Reductions (sum) and normalisations (softmax).
//
// A reduction takes `axis` (an int, a list, or absent for all axes; negative
// ones count from the end) and `keepdims`. With x known only by rank the
// result is rank-only; with x's rank unknown it is unknown too; a 0-d result
// (a full reduction without keepdims) is known anyway. softmax keeps x's
// annotation; its axis must lie within x's rank when known.
//
// Kernels:
//   sum(x: Tensor[(n, m), f32], axis=[1])  becomes
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

#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/reduce.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

struct ReduceAttrs {
  std::optional<std::vector<int64_t>> axis;
  bool keepdims = false;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
    v("keepdims", keepdims);
  }
};

struct SoftmaxAttrs {
  int64_t axis = -1;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
  }
};

// A reduction with `reducer`, e.g. sum.
void reduction(OpTable& table, const char* name, DtypeClass dtypes, Reducer (*reducer)(),
               const char* summary) {
  table.def<ReduceAttrs>(name, summary)
      .arg("x", ArgKind::kTensor, dtypes)
      .deduce(rules::reduce<ReduceAttrs>())
      .legalize([reducer](const CallNode& call, const ReduceAttrs& attrs, Analyzer& analyzer)
                    -> absl::StatusOr<Lowering> {
        absl::StatusOr<ReduceAxes> axes = reduce_axes(call, attrs.axis, attrs.keepdims);
        if (!axes.ok()) return axes.status();
        return compute::reduce(call, analyzer, *axes, reducer());
      });
}

absl::StatusOr<StructInfo> deduce_softmax(const CallNode& call, const SoftmaxAttrs& attrs,
                                          DeduceContext&) {
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  if (x.ndim != kUnknownNDim) {
    absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, x.ndim);
    if (!axis.ok()) return axis.status();
  }
  return call.args[0].struct_info();
}


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

absl::StatusOr<Lowering> legalize_softmax(const CallNode& call, const SoftmaxAttrs& attrs, Analyzer&) {
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
  const int64_t axis_attr = attrs.axis;
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

}  // namespace

void register_reduce_ops(OpTable& table) {
  reduction(table, "sum", DtypeClass::kNumeric, sum_reducer,
            "sum of x over axis (default: all), keepdims keeps them as 1");
  table.def<SoftmaxAttrs>("softmax", "exp(x) normalised to sum to 1 along axis (default -1)")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_softmax)
      .legalize(legalize_softmax);
}

}  // namespace detail

namespace op {

Expr sum(Expr x, std::optional<std::vector<int64_t>> axis, bool keepdims) {
  return make_call(make_op_or_die("sum"), {std::move(x)},
                   detail::encode_attrs(detail::ReduceAttrs{std::move(axis), keepdims}));
}

Expr softmax(Expr x, int64_t axis) {
  return make_call(make_op_or_die("softmax"), {std::move(x)},
                   detail::encode_attrs(detail::SoftmaxAttrs{axis}));
}

}  // namespace op
}  // namespace relax
