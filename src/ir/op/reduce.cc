// Reductions (sum, mean, max, min, prod, variance, std, argmax, argmin),
// scans (cumsum, cumprod) and softmax.
//
// A reduction takes `axis` (an int, a list, or absent for all axes; negative
// ones count from the end) and `keepdims`. With x known only by rank the
// result is rank-only; with x's rank unknown it is unknown too; a 0-d result
// (a full reduction without keepdims) is known anyway. mean, variance and std
// take float tensors (an integer mean would have to round); the others any
// numeric one and keep its dtype. variance and std are population statistics
// (numpy's ddof=0); over zero elements they are NaN, as the mean is.
//
// Empty reductions, as numpy and PyTorch decide them: over an empty axis sum
// gives 0 and prod 1 (their identities), mean, variance and std NaN (0 / 0),
// and max, min, argmax and argmin, which have no identity, are an error: a
// reduced dim that is 0 is rejected by deduction ("max: dim 1 of x is 0 ..."),
// and a symbolic one by the kernel when it runs ("argmax: dim 1 of x (a
// reduced dim) is 0 (m) ...", relax/ir/kernel_checks.h). A dim of 0 that is
// not reduced only makes the result empty. cumsum/cumprod and softmax over an
// empty axis give an empty result.
//
// argmax/argmin take `axis` as one int (or absent: the index into the
// flattened tensor, numpy's convention) and `keepdims`; the result is int64.
// Ties give the first index (the comparison is strict and the reduction runs
// in ascending order). NaN is not treated specially (numpy returns the first
// NaN's index; here a NaN never compares greater, so it is skipped).
//
// cumsum/cumprod take `axis` as one int; absent, x is flattened (numpy's
// default) and the result is 1-D with x's element count. The result keeps x's
// dtype (numpy widens small integers to int64; here a scan of int8 wraps like
// any int8 arithmetic). softmax keeps x's annotation; its axis must lie
// within x's rank when known.
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
// (mean, max, min, prod the same with their reducers; 16-bit floats
// accumulate in float32 in a workspace buffer).
//
// variance is two passes over x, each one block with the kept dims spatial and
// the reduced ones reduction variables, then an elementwise block:
//   block variance_sum  total[o] += A[o, k]                       (init 0)
//   block variance      sq[o] += (A[o, k] - total[o] / count)^2   (init 0)
//   block variance_out  B[o] = sq[o] / count         (std: sqrt of it)
// Two passes rather than a one-pass sum of squares, which cancels badly when
// the mean is large against the spread.
//
// argmax is one block whose body updates two accumulators, the index (in the
// output) before the value (in a workspace buffer), both under the same
// strict comparison against the value before this step:
//   block argmax   init { B[o] = 0; best[o] = lowest }
//                  B[o] = select(A[o, k] > best[o], k, B[o])
//                  best[o] = max(best[o], A[o, k])
// (k is the flat index of the reduced variables.)
//
// cumsum is a scan: a block spatial over the other dims whose body is a serial
// loop along the axis carrying the running total in a workspace buffer
// (float32 for 16-bit floats):
//   block cumsum(o...) { run[o] = 0; for k in range(n) { run[o] = run[o] + A[o, k]; B[o, k] = run[o] } }
// (the axis is not an iteration variable of the block: its iterations depend
// on each other, which neither spatial nor reduction describes).
//
// softmax over axis a is loop nests around one block each, with the per-slice
// maximum and sum in two intermediate buffers over the other dims
// (Allocate'd in workspace scope, as their size is symbolic; the sum in the
// compute dtype, float32 for 16-bit x). For float32 and float64 x the
// exponentials are computed once, into the output, and the sum reads them:
//   block max      max_elem[o] = max(max_elem[o], A[o, k])        (init -inf)
//   block exp      B[o, v] = exp(A[o, v] - max_elem[o])
//   block sum      exp_sum[o] = exp_sum[o] + B[o, k]              (init 0)
//   block softmax  B[o, v] = B[o, v] * (1 / exp_sum[o])
// (o: the dims other than a). Each block reads only what earlier blocks wrote,
// and the row's `1 / exp_sum[o]` is one value per row, which schedule-cpu
// computes once per row (hoist_invariants): one exponential and one multiply
// per element, one division per row. For float16 and bfloat16 x the output
// cannot hold the exponentials without rounding them to 11 (8) bits, which
// the sum and the result would inherit (about 1.5 ulp off instead of 0.5), so
// there they are computed twice, in float32, and rounded once at the end:
//   block sum      exp_sum[o] = exp_sum[o] + exp(A[o, k] - max_elem[o])   (init 0)
//   block softmax  B[o, v] = exp(A[o, v] - max_elem[o]) * (1 / exp_sum[o])
// A 16-bit kernel converts every element it loads and stores, so the second
// exponential costs it less than a float32 workspace of x's size would.
#include <limits>

#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/kernel_checks.h"
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

// argmax/argmin: one axis or none (the flattened tensor).
struct ArgReduceAttrs {
  std::optional<int64_t> axis;
  bool keepdims = false;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
    v("keepdims", keepdims);
  }
};

// cumsum/cumprod: one axis or none (the flattened tensor).
struct ScanAttrs {
  std::optional<int64_t> axis;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
  }
};

std::string callee_name(const CallNode& call) { return call.callee.as<OpNode>()->name; }

// The dims of x that `axis` reduces (all when absent), normalised; x's rank
// must be known and the axes valid (deduction checked them).
std::vector<size_t> reduced_dims(size_t ndim, const std::optional<std::vector<int64_t>>& axis) {
  std::vector<size_t> out;
  if (!axis) {
    for (size_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : *axis) out.push_back(static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(ndim) : a));
  return out;
}

// For the reductions without an identity (max, min, argmax, argmin): an
// error when a dim they reduce is provably 0.
absl::Status check_reduced_not_empty(const CallNode& call, const std::optional<std::vector<int64_t>>& axis,
                                     Analyzer& analyzer) {
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  if (!x.shape) return absl::OkStatus();
  for (size_t d : reduced_dims(x.shape->size(), axis)) {
    if (!analyzer.prove((*x.shape)[d] == 0)) continue;
    const std::string op = callee_name(call);
    return op_error(op, "dim " + std::to_string(d) + " of x is 0, and " + op +
                            " over an empty extent has no value (x " + call.args[0].struct_info().to_string() +
                            ")");
  }
  return absl::OkStatus();
}

// The same at run time: the kernel `lowering` requires each reduced dim of x
// (`dims`, over the kernel's variables) nonzero.
absl::StatusOr<Lowering> require_reduced_not_empty(absl::StatusOr<Lowering> lowering, const std::string& op,
                                                   const std::vector<SymExpr>& dims,
                                                   const std::optional<std::vector<int64_t>>& axis,
                                                   Analyzer& analyzer) {
  std::vector<NonemptyExtent> extents;
  for (size_t d : reduced_dims(dims.size(), axis)) {
    extents.push_back({dims[d], op + ": dim " + std::to_string(d) + " of x (a reduced dim)"});
  }
  return require_nonempty(std::move(lowering), extents, analyzer);
}

// A reduction with `reducer`, e.g. sum; `has_identity` false (max, min) makes
// an empty reduced extent an error.
void reduction(OpTable& table, const char* name, DtypeClass dtypes, Reducer (*reducer)(),
               const char* summary, bool has_identity = true) {
  table.def<ReduceAttrs>(name, summary)
      .arg("x", ArgKind::kTensor, dtypes)
      .deduce([has_identity](const CallNode& call, const ReduceAttrs& attrs,
                             DeduceContext& ctx) -> absl::StatusOr<StructInfo> {
        absl::StatusOr<StructInfo> out = deduce_reduce(call, attrs.axis, attrs.keepdims, std::nullopt);
        if (!out.ok() || has_identity) return out;
        if (absl::Status s = check_reduced_not_empty(call, attrs.axis, ctx.analyzer); !s.ok()) return s;
        return out;
      })
      .legalize([reducer, has_identity](const CallNode& call, const ReduceAttrs& attrs, Analyzer& analyzer)
                    -> absl::StatusOr<Lowering> {
        absl::StatusOr<ReduceAxes> axes = reduce_axes(call, attrs.axis, attrs.keepdims);
        if (!axes.ok()) return axes.status();
        absl::StatusOr<Lowering> lowering = compute::reduce(call, analyzer, *axes, reducer());
        if (!lowering.ok() || has_identity || !lowering->prim_func.defined()) return lowering;
        // The kernel's first parameter is x.
        const Buffer& a = *lowering->prim_func.as<PrimFuncNode>()->params[0].buffer;
        std::vector<int64_t> reduced(axes->axes.begin(), axes->axes.end());
        return require_reduced_not_empty(std::move(lowering), callee_name(call), a.shape(), reduced, analyzer);
      });
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

// ---------------------------------------------------------------------------
// Hand-written reduction kernels (variance, std, argmax, argmin) share the
// split of x's dims into kept (spatial) and reduced ones.

SymExpr zero_of(DataType t) {
  if (t.is_float()) return SymExpr::float_imm(0, t);
  if (t.is_bool()) return SymExpr::boolean(false);
  return SymExpr::int_imm(0, t);
}

// x's dims (over the kernel's variables) split by the reduced axes.
struct ReduceSplit {
  std::vector<bool> reduced;
  bool keepdims = false;
  std::vector<SymExpr> spatial;      ///< the kept dims, in order
  std::vector<SymExpr> reduce_dims;  ///< the reduced dims, in order

  // x's index for a block's spatial and reduction variables.
  std::vector<SymExpr> in_index(const std::vector<SymVar>& s, const std::vector<SymVar>& r) const {
    std::vector<SymExpr> index;
    size_t next_s = 0;
    size_t next_r = 0;
    for (bool red : reduced) index.push_back(red ? SymExpr(r[next_r++]) : SymExpr(s[next_s++]));
    return index;
  }
  // The result's index for a block's spatial variables.
  std::vector<SymExpr> out_index(const std::vector<SymVar>& s) const {
    std::vector<SymExpr> index;
    size_t next = 0;
    for (bool red : reduced) {
      if (!red) {
        index.push_back(s[next++]);
      } else if (keepdims) {
        index.push_back(0);
      }
    }
    return index;
  }
  // The number of reduced elements (int64).
  SymExpr count() const {
    SymExpr c(1);
    for (const SymExpr& d : reduce_dims) c = c * d;
    return c;
  }
};

ReduceSplit split_dims(const std::vector<SymExpr>& dims, const ReduceAxes& axes) {
  ReduceSplit out;
  out.reduced.assign(dims.size(), false);
  out.keepdims = axes.keepdims;
  for (int64_t a : axes.axes) out.reduced[static_cast<size_t>(a)] = true;
  for (size_t i = 0; i < dims.size(); ++i) {
    (out.reduced[i] ? out.reduce_dims : out.spatial).push_back(dims[i]);
  }
  return out;
}

// The checked parts every hand-written reduction kernel starts from.
struct ReduceKernel {
  const TensorStructInfoNode* x = nullptr;
  const TensorStructInfoNode* out = nullptr;
  ReduceAxes axes;
};

absl::StatusOr<ReduceKernel> reduce_kernel(const CallNode& call, const std::string& op,
                                           const std::optional<std::vector<int64_t>>& axis,
                                           bool keepdims) {
  ReduceKernel k;
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  absl::StatusOr<ReduceAxes> axes = reduce_axes(call, axis, keepdims);
  if (!axes.ok()) return axes.status();
  k.x = *x;
  k.out = *out;
  k.axes = *std::move(axes);
  return k;
}

absl::StatusOr<Lowering> legalize_variance(const CallNode& call, const ReduceAttrs& attrs,
                                           bool take_sqrt) {
  const std::string op = take_sqrt ? "std" : "variance";
  absl::StatusOr<ReduceKernel> k = reduce_kernel(call, op, attrs.axis, attrs.keepdims);
  if (!k.ok()) return k.status();
  KernelBuilder kb(op, {*k->x->shape, *k->out->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", *k->out);
  PrimFuncBuilder& pb = kb.body();
  const ReduceSplit split = split_dims(a.shape(), k->axes);
  const DataType out_dtype = *k->out->dtype;
  const DataType acc_dtype = compute_dtype(out_dtype);
  const SymExpr count = cast(acc_dtype, split.count());
  Buffer total = pb.allocate("total", split.spatial, acc_dtype, BufferScope::kWorkspace);
  Buffer squares = pb.allocate("squares", split.spatial, acc_dtype, BufferScope::kWorkspace);
  auto x_at = [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
    return as_dtype(buffer_load(a, split.in_index(s, r)), acc_dtype);
  };
  loop_block(
      pb, op + "_sum", split.spatial, split.reduce_dims,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(total, as_indices(s), zero_of(acc_dtype));
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        pb.store(total, as_indices(s), buffer_load(total, as_indices(s)) + x_at(s, r));
      });
  loop_block(
      pb, op, split.spatial, split.reduce_dims,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(squares, as_indices(s), zero_of(acc_dtype));
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        SymExpr d = x_at(s, r) - buffer_load(total, as_indices(s)) / count;
        pb.store(squares, as_indices(s), buffer_load(squares, as_indices(s)) + d * d);
      });
  loop_block(pb, op + "_out", split.spatial, {}, nullptr,
             [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
               SymExpr v = buffer_load(squares, as_indices(s)) / count;
               if (take_sqrt) v = sqrt(v);
               pb.store(b, split.out_index(s), as_dtype(v, out_dtype));
             });
  return kb.finish();
}

absl::StatusOr<StructInfo> deduce_arg_reduce(const CallNode& call, const ArgReduceAttrs& attrs,
                                             DeduceContext& ctx) {
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  std::optional<std::vector<int64_t>> axes;
  if (attrs.axis) {
    if (x.ndim != kUnknownNDim) {
      absl::StatusOr<int64_t> axis = checked_axis(call, *attrs.axis, x.ndim);
      if (!axis.ok()) return axis.status();
    }
    axes = std::vector<int64_t>{*attrs.axis};
  }
  absl::StatusOr<StructInfo> out = deduce_reduce(call, axes, attrs.keepdims, DataType::int64());
  if (!out.ok()) return out;
  if (absl::Status s = check_reduced_not_empty(call, axes, ctx.analyzer); !s.ok()) return s;
  return out;
}

absl::StatusOr<Lowering> legalize_arg_reduce(const CallNode& call, const ArgReduceAttrs& attrs,
                                             bool is_max, Analyzer& analyzer) {
  const std::string op = is_max ? "argmax" : "argmin";
  std::optional<std::vector<int64_t>> axes;
  if (attrs.axis) axes = std::vector<int64_t>{*attrs.axis};
  absl::StatusOr<ReduceKernel> k = reduce_kernel(call, op, axes, attrs.keepdims);
  if (!k.ok()) return k.status();
  KernelBuilder kb(op, {*k->x->shape, *k->out->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", *k->out);
  PrimFuncBuilder& pb = kb.body();
  const ReduceSplit split = split_dims(a.shape(), k->axes);
  const DataType acc_dtype = compute_dtype(*k->x->dtype);
  const Reducer extreme = is_max ? max_reducer() : min_reducer();
  Buffer best = pb.allocate("best", split.spatial, acc_dtype, BufferScope::kWorkspace);
  loop_block(
      pb, op, split.spatial, split.reduce_dims,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(b, split.out_index(s), SymExpr::int_imm(0, DataType::int64()));
        pb.store(best, as_indices(s), extreme.init(acc_dtype));
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        SymExpr x = as_dtype(buffer_load(a, split.in_index(s, r)), acc_dtype);
        SymExpr current = buffer_load(best, as_indices(s));
        // Strict, so that a tie keeps the earlier index.
        SymExpr better = is_max ? x > current : x < current;
        SymExpr index = as_dtype(flat_index(as_indices(r), split.reduce_dims), DataType::int64());
        pb.store(b, split.out_index(s), select(better, index, buffer_load(b, split.out_index(s))));
        pb.store(best, as_indices(s), extreme.combine(current, x));
      });
  return require_reduced_not_empty(kb.finish(), op, a.shape(), axes, analyzer);
}

absl::StatusOr<StructInfo> deduce_scan(const CallNode& call, const ScanAttrs& attrs,
                                       DeduceContext& ctx) {
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  if (attrs.axis) {
    if (x.ndim != kUnknownNDim) {
      absl::StatusOr<int64_t> axis = checked_axis(call, *attrs.axis, x.ndim);
      if (!axis.ok()) return axis.status();
    }
    return call.args[0].struct_info();
  }
  // Flattened: one dim of x's element count.
  if (!x.shape) return tensor_sinfo_rank(1, x.dtype, x.device);
  return tensor_sinfo({product(*x.shape, ctx.analyzer)}, x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_scan(const CallNode& call, const ScanAttrs& attrs, bool is_sum) {
  const std::string op = is_sum ? "cumsum" : "cumprod";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  KernelBuilder kb(op, {*(*x)->shape, *(*out)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", **out);
  PrimFuncBuilder& pb = kb.body();
  const DataType dtype = *(*out)->dtype;
  const DataType acc_dtype = compute_dtype(dtype);
  const Reducer reducer = is_sum ? sum_reducer() : prod_reducer();
  // The scanned view: without an axis, the result's one dim over x's
  // flattened elements; with one, x's own dims.
  std::vector<SymExpr> dims = b.shape();
  size_t axis = 0;
  if (attrs.axis) {
    absl::StatusOr<int64_t> a_or = normalize_axis(op, *attrs.axis, static_cast<int64_t>(dims.size()));
    if (!a_or.ok()) return a_or.status();
    axis = static_cast<size_t>(*a_or);
  }
  auto x_at = [&](const std::vector<SymExpr>& index) {
    SymExpr v = attrs.axis ? buffer_load(a, index)
                           : buffer_load(a, unflatten_index(index[0], a.shape()));
    return as_dtype(v, acc_dtype);
  };
  const std::vector<SymExpr> others = without(dims, axis);
  const SymExpr extent = dims[axis];
  Buffer run = pb.allocate("run", others, acc_dtype, BufferScope::kWorkspace);
  loop_block(pb, op, others, {}, nullptr,
             [&](const std::vector<SymVar>& o, const std::vector<SymVar>&) {
               pb.store(run, as_indices(o), reducer.init(acc_dtype));
               pb.for_("k", 0, extent, [&](SymVar k) {
                 std::vector<SymExpr> index = with(o, axis, k);
                 SymExpr next = reducer.combine(buffer_load(run, as_indices(o)), x_at(index));
                 pb.store(run, as_indices(o), next);
                 pb.store(b, index, as_dtype(buffer_load(run, as_indices(o)), dtype));
               });
             });
  return kb.finish();
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
  // See the comment at the top: 16-bit floats compute in float32 and keep
  // the two-exponential form.
  const DataType acc = compute_dtype(dtype);
  const bool store_exp = acc == dtype;
  Buffer max_elem = pb.allocate("max_elem", others, dtype, BufferScope::kWorkspace);
  Buffer exp_sum = pb.allocate("exp_sum", others, acc, BufferScope::kWorkspace);
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
  // exp(A[index] - max_elem[o]) in the compute dtype.
  auto shifted_exp = [&](const std::vector<SymExpr>& index, const std::vector<SymVar>& o) {
    return exp(as_dtype(buffer_load(a, index), acc) - as_dtype(buffer_load(max_elem, as_indices(o)), acc));
  };
  if (store_exp) {
    loop_block(pb, "exp", a.shape(), {}, nullptr,
               [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
                 pb.store(b, as_indices(v), shifted_exp(as_indices(v), without(v, axis)));
               });
  }
  loop_block(
      pb, "sum", others, {extent},
      [&](const std::vector<SymVar>& o, const std::vector<SymVar>&) {
        pb.store(exp_sum, as_indices(o), SymExpr::float_imm(0, acc));
      },
      [&](const std::vector<SymVar>& o, const std::vector<SymVar>& k) {
        const std::vector<SymExpr> index = with(o, axis, k[0]);
        SymExpr term = store_exp ? buffer_load(b, index) : shifted_exp(index, o);
        pb.store(exp_sum, as_indices(o), buffer_load(exp_sum, as_indices(o)) + term);
      });
  loop_block(pb, "softmax", a.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               std::vector<SymVar> o = without(v, axis);
               SymExpr e = store_exp ? buffer_load(b, as_indices(v)) : shifted_exp(as_indices(v), o);
               SymExpr inverse = SymExpr::float_imm(1, acc) / buffer_load(exp_sum, as_indices(o));
               pb.store(b, as_indices(v), as_dtype(e * inverse, dtype));
             });
  return kb.finish();
}

}  // namespace

void register_reduce_ops(OpTable& table) {
  reduction(table, "sum", DtypeClass::kNumeric, sum_reducer,
            "sum of x over axis (default: all), keepdims keeps them as 1");
  reduction(table, "mean", DtypeClass::kFloat, mean_reducer,
            "mean of x over axis (default: all), keepdims keeps them as 1");
  reduction(table, "max", DtypeClass::kNumeric, max_reducer,
            "maximum of x over axis (default: all), keepdims keeps them as 1", /*has_identity=*/false);
  reduction(table, "min", DtypeClass::kNumeric, min_reducer,
            "minimum of x over axis (default: all), keepdims keeps them as 1", /*has_identity=*/false);
  reduction(table, "prod", DtypeClass::kNumeric, prod_reducer,
            "product of x over axis (default: all), keepdims keeps them as 1");
  for (bool take_sqrt : {false, true}) {
    table
        .def<ReduceAttrs>(take_sqrt ? "std" : "variance",
                          take_sqrt ? "population standard deviation of x over axis (default: all)"
                                    : "population variance of x over axis (default: all)")
        .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
        .deduce(rules::reduce<ReduceAttrs>())
        .legalize([take_sqrt](const CallNode& call, const ReduceAttrs& attrs, Analyzer&) {
          return legalize_variance(call, attrs, take_sqrt);
        });
  }
  for (bool is_max : {true, false}) {
    table
        .def<ArgReduceAttrs>(is_max ? "argmax" : "argmin",
                             is_max ? "int64 index of the first maximum along axis (default: flattened)"
                                    : "int64 index of the first minimum along axis (default: flattened)")
        .arg("x", ArgKind::kTensor, DtypeClass::kNumeric)
        .deduce(deduce_arg_reduce)
        .legalize([is_max](const CallNode& call, const ArgReduceAttrs& attrs, Analyzer& analyzer) {
          return legalize_arg_reduce(call, attrs, is_max, analyzer);
        });
  }
  for (bool is_sum : {true, false}) {
    table
        .def<ScanAttrs>(is_sum ? "cumsum" : "cumprod",
                        is_sum ? "running sum of x along axis (default: flattened), x's dtype"
                               : "running product of x along axis (default: flattened), x's dtype")
        .arg("x", ArgKind::kTensor, DtypeClass::kNumeric)
        .deduce(deduce_scan)
        .legalize([is_sum](const CallNode& call, const ScanAttrs& attrs, Analyzer&) {
          return legalize_scan(call, attrs, is_sum);
        });
  }
  table.def<SoftmaxAttrs>("softmax", "exp(x) normalised to sum to 1 along axis (default -1)")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_softmax)
      .legalize(legalize_softmax);
  register_topk_ops(table);
}

}  // namespace detail

namespace op {

Expr sum(Expr x, OptionalInts axis, bool keepdims) {
  return make_call(make_op_or_die("sum"), {std::move(x)},
                   detail::encode_attrs(detail::ReduceAttrs{std::move(axis), keepdims}));
}

namespace {
Expr reduce_call(const char* name, Expr x, std::optional<std::vector<int64_t>> axis, bool keepdims) {
  return make_call(make_op_or_die(name), {std::move(x)},
                   detail::encode_attrs(detail::ReduceAttrs{std::move(axis), keepdims}));
}
Expr arg_reduce_call(const char* name, Expr x, std::optional<int64_t> axis, bool keepdims) {
  return make_call(make_op_or_die(name), {std::move(x)},
                   detail::encode_attrs(detail::ArgReduceAttrs{axis, keepdims}));
}
Expr scan_call(const char* name, Expr x, std::optional<int64_t> axis) {
  return make_call(make_op_or_die(name), {std::move(x)}, detail::encode_attrs(detail::ScanAttrs{axis}));
}
}  // namespace

Expr mean(Expr x, OptionalInts axis, bool keepdims) {
  return reduce_call("mean", std::move(x), std::move(axis), keepdims);
}
Expr max(Expr x, OptionalInts axis, bool keepdims) {
  return reduce_call("max", std::move(x), std::move(axis), keepdims);
}
Expr min(Expr x, OptionalInts axis, bool keepdims) {
  return reduce_call("min", std::move(x), std::move(axis), keepdims);
}
Expr prod(Expr x, OptionalInts axis, bool keepdims) {
  return reduce_call("prod", std::move(x), std::move(axis), keepdims);
}
Expr variance(Expr x, OptionalInts axis, bool keepdims) {
  return reduce_call("variance", std::move(x), std::move(axis), keepdims);
}
Expr std(Expr x, OptionalInts axis, bool keepdims) {
  return reduce_call("std", std::move(x), std::move(axis), keepdims);
}
Expr argmax(Expr x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduce_call("argmax", std::move(x), axis, keepdims);
}
Expr argmin(Expr x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduce_call("argmin", std::move(x), axis, keepdims);
}
Expr cumsum(Expr x, std::optional<int64_t> axis) { return scan_call("cumsum", std::move(x), axis); }
Expr cumprod(Expr x, std::optional<int64_t> axis) { return scan_call("cumprod", std::move(x), axis); }

Expr softmax(Expr x, int64_t axis) {
  return make_call(make_op_or_die("softmax"), {std::move(x)},
                   detail::encode_attrs(detail::SoftmaxAttrs{axis}));
}

}  // namespace op
}  // namespace relax
