// Layout manipulation: reshape, permute_dims, expand_dims, squeeze, flatten,
// broadcast_to, astype, flip, repeat, tile (the index-computing ones --
// concat, split, strided_slice, take, pad, one_hot -- are in
// manipulate_index.cc).
//
// reshape keeps the element count: with the input's dims known, the Analyzer
// must prove the counts equal (or infer the single -1 dim as the quotient, and
// reject a remainder it proves non-zero). With the input known only by rank the
// new shape is taken on trust and checked at run time.
// Kernels: reshape (a copy through the row-major element index; legalization
// emits a view instead wherever that is safe, see legalize_reshape) and
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
//
// The others are injective kernels (compute::injective): one spatial block over
// the result reading x at an index computed from the result's. Deduction:
// squeeze without axes removes the dims provably 1 and keeps symbolic ones (a
// dim 1 only at run time stays, so the result's rank never depends on sizes);
// with axes, a dim that is not provably 1 is an error. broadcast_to follows
// numpy (x's dims aligned at the right, each provably equal to the target's or
// provably 1). flatten merges the dims start_dim..end_dim (default all: one
// dim; a rank-0 x gives (1,)) into their product, as torch.flatten; repeat without
// an axis repeats the flattened x; tile follows numpy (the shorter of x's dims
// and repeats is padded with leading 1s). astype converts every value (float to
// integer truncates toward zero, to bool is `!= 0`).
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "ir/op/deduce_rules.h"
#include "ir/op/manipulate_util.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/op/memory.h"

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
  if (absl::Status s = check_defined(op, "new shape " + dims_string(dims), dims, ctx); !s.ok()) {
    return s;
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
    // The quotient with common factors cancelled: (n, 4, 16) -> (n, -1) gives
    // (n, 64), not floordiv(n * 64, n).
    std::optional<SymExpr> exact = exact_quotient(*x.shape, others, analyzer);
    dims[*infer] = exact ? *exact : analyzer.simplify(floordiv(old_count, rest));
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


// The copy kernel of a reshape (op::reshape_copy_kernel).
absl::StatusOr<Lowering> reshape_copy(const CallNode& call) {
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

// A reshape needs no copy: relax makes every tensor dense row-major, so x's elements in
// order are the result's. It becomes `view(x, shape)` when the element counts are proven
// equal (deduction proved them, or took a rank-only x on trust: that one stays a copy,
// whose kernel checks the dims), a constant of the new shape when x is a constant, and the
// copy kernel otherwise. legalize-ops keeps the copy in a module that writes tensors in
// place (call_tir_inplace), where a view would see a write its copy did not.
absl::StatusOr<Lowering> legalize_reshape(const CallNode& call, const NoAttrs&, Analyzer& analyzer) {
  const std::string op = "reshape";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  const std::vector<SymExpr>& dims = *(*out)->shape;
  if (!analyzer.prove_equal(product(*(*x)->shape, analyzer), product(dims, analyzer))) {
    return reshape_copy(call);
  }
  Lowering lowering;
  if (const auto* constant = call.args[0].as<ConstantNode>()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : dims) {
      if (std::optional<int64_t> c = d.as_const()) shape.push_back(*c);
    }
    if (shape.size() == dims.size()) {
      absl::StatusOr<runtime::Tensor> data = constant->data.view(0, shape, constant->data.dtype());
      if (data.ok()) {
        lowering.replacement = make_constant(*std::move(data));
        return lowering;
      }
    }
  }
  lowering.replacement = op::view(call.args[0], make_shape_expr(dims));
  return lowering;
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

// ---------------------------------------------------------------------------
// expand_dims, squeeze, flatten, broadcast_to, astype, flip, repeat, tile.

struct ExpandDimsAttrs {
  IntOrInts axis = int64_t{0};
  template <typename V>
  void fields(V& v) {
    v.required("axis", axis);
  }
};

struct SqueezeAttrs {
  std::optional<IntOrInts> axis;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
  }
};

struct FlattenAttrs {
  int64_t start_dim = 0;
  int64_t end_dim = -1;
  template <typename V>
  void fields(V& v) {
    v("start_dim", start_dim);
    v("end_dim", end_dim);
  }
};

struct FlipAttrs {
  int64_t axis = 0;
  template <typename V>
  void fields(V& v) {
    v.required("axis", axis);
  }
};

struct RepeatAttrs {
  int64_t repeats = 1;
  std::optional<int64_t> axis;
  template <typename V>
  void fields(V& v) {
    v.required("repeats", repeats);
    v("axis", axis);
  }
};

struct TileAttrs {
  std::vector<int64_t> repeats;
  template <typename V>
  void fields(V& v) {
    v.required("repeats", repeats);
  }
};

// The positions (in [0, out_ndim), ascending) that expand_dims inserts.
absl::StatusOr<std::vector<int64_t>> inserted_axes(const std::string& op, const IntOrInts& axis,
                                                   int64_t out_ndim) {
  const std::vector<int64_t> axes = as_list(axis);
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    const int64_t n = a < 0 ? a + out_ndim : a;
    if (n < 0 || n >= out_ndim) {
      return op_error(op, "axis " + std::to_string(a) + " in " + ints_string(axes) +
                              " is out of range for the result's rank " + std::to_string(out_ndim));
    }
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return op_error(op, "axis " + std::to_string(n) + " appears twice in " + ints_string(axes));
    }
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<StructInfo> deduce_expand_dims(const CallNode& call, const ExpandDimsAttrs& attrs,
                                              DeduceContext&) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const int64_t count = static_cast<int64_t>(as_list(attrs.axis).size());
  if (x.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
  const int64_t out_ndim = x.ndim + count;
  absl::StatusOr<std::vector<int64_t>> axes = inserted_axes("expand_dims", attrs.axis, out_ndim);
  if (!axes.ok()) return axes.status();
  if (!x.shape) return tensor_sinfo_rank(static_cast<int>(out_ndim), x.dtype, x.device);
  std::vector<SymExpr> out;
  size_t next = 0;
  for (int64_t i = 0; i < out_ndim; ++i) {
    const bool inserted = std::find(axes->begin(), axes->end(), i) != axes->end();
    out.push_back(inserted ? SymExpr(1) : (*x.shape)[next++]);
  }
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_expand_dims(const CallNode& call, const ExpandDimsAttrs& attrs,
                                              Analyzer& analyzer) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const int64_t out_ndim = x.ndim + static_cast<int64_t>(as_list(attrs.axis).size());
  absl::StatusOr<std::vector<int64_t>> axes = inserted_axes("expand_dims", attrs.axis, out_ndim);
  if (!axes.ok()) return axes.status();
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    std::vector<SymExpr> index;
    for (int64_t k = 0; k < out_ndim; ++k) {
      if (std::find(axes->begin(), axes->end(), k) == axes->end()) index.push_back(i[k]);
    }
    return in.load(0, std::move(index));
  });
}

// Which dims of x squeeze keeps (ascending), or an error.
absl::StatusOr<std::vector<int64_t>> squeeze_kept(const CallNode& call, const SqueezeAttrs& attrs,
                                                  const std::vector<SymExpr>& dims, Analyzer& analyzer) {
  const int64_t ndim = static_cast<int64_t>(dims.size());
  std::vector<bool> removed(dims.size(), false);
  if (!attrs.axis) {
    for (int64_t i = 0; i < ndim; ++i) removed[i] = analyzer.prove_equal(dims[i], 1);
  } else {
    for (int64_t a : as_list(*attrs.axis)) {
      absl::StatusOr<int64_t> axis = checked_axis(call, a, static_cast<int>(ndim));
      if (!axis.ok()) return axis.status();
      if (!analyzer.prove_equal(dims[*axis], 1)) {
        return op_error("squeeze", "dim " + std::to_string(*axis) + " of x " +
                                       call.args[0].struct_info().to_string() + " is " +
                                       quoted(dims[*axis]) + ", not provably 1");
      }
      removed[*axis] = true;
    }
  }
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < ndim; ++i) {
    if (!removed[i]) kept.push_back(i);
  }
  return kept;
}

absl::StatusOr<StructInfo> deduce_squeeze(const CallNode& call, const SqueezeAttrs& attrs,
                                          DeduceContext& ctx) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (!x.shape) {
    if (x.ndim == kUnknownNDim || !attrs.axis) {
      return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
    }
    std::vector<int64_t> axes;
    for (int64_t a : as_list(*attrs.axis)) {
      absl::StatusOr<int64_t> axis = checked_axis(call, a, x.ndim);
      if (!axis.ok()) return axis.status();
      if (std::find(axes.begin(), axes.end(), *axis) == axes.end()) axes.push_back(*axis);
    }
    return tensor_sinfo_rank(x.ndim - static_cast<int>(axes.size()), x.dtype, x.device);
  }
  absl::StatusOr<std::vector<int64_t>> kept = squeeze_kept(call, attrs, *x.shape, ctx.analyzer);
  if (!kept.ok()) return kept.status();
  std::vector<SymExpr> out;
  for (int64_t i : *kept) out.push_back((*x.shape)[i]);
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_squeeze(const CallNode& call, const SqueezeAttrs& attrs,
                                          Analyzer& analyzer) {
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, "squeeze", "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<int64_t>> kept = squeeze_kept(call, attrs, *(*x)->shape, analyzer);
  if (!kept.ok()) return kept.status();
  const size_t ndim = (*x)->shape->size();
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    std::vector<SymExpr> index(ndim, SymExpr(0));
    for (size_t k = 0; k < kept->size(); ++k) index[(*kept)[k]] = i[k];
    return in.load(0, std::move(index));
  });
}

// The dims [first, last] of a rank-`ndim` x that flatten merges (torch.flatten:
// negative dims count from the end; a rank-0 x is taken as rank 1).
absl::StatusOr<std::pair<int64_t, int64_t>> flattened_dims(const CallNode& call,
                                                           const FlattenAttrs& attrs, int ndim) {
  const int rank = std::max(ndim, 1);
  absl::StatusOr<int64_t> first = checked_axis(call, attrs.start_dim, rank);
  if (!first.ok()) return first.status();
  absl::StatusOr<int64_t> last = checked_axis(call, attrs.end_dim, rank);
  if (!last.ok()) return last.status();
  if (*first > *last) {
    return op_error("flatten", "start_dim " + std::to_string(attrs.start_dim) + " (dim " +
                                   std::to_string(*first) + ") comes after end_dim " +
                                   std::to_string(attrs.end_dim) + " (dim " +
                                   std::to_string(*last) + ") for rank " + std::to_string(rank));
  }
  return std::make_pair(*first, *last);
}

absl::StatusOr<StructInfo> deduce_flatten(const CallNode& call, const FlattenAttrs& attrs,
                                          DeduceContext& ctx) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (x.ndim == kUnknownNDim) {
    const bool whole = attrs.start_dim == 0 && attrs.end_dim == -1;
    return tensor_sinfo_rank(whole ? 1 : kUnknownNDim, x.dtype, x.device);
  }
  absl::StatusOr<std::pair<int64_t, int64_t>> dims = flattened_dims(call, attrs, x.ndim);
  if (!dims.ok()) return dims.status();
  const int64_t first = dims->first;
  const int64_t last = dims->second;
  if (x.ndim == 0) return tensor_sinfo({SymExpr(1)}, x.dtype, x.device);
  if (!x.shape) return tensor_sinfo_rank(x.ndim - static_cast<int>(last - first), x.dtype, x.device);
  const std::vector<SymExpr>& in = *x.shape;
  std::vector<SymExpr> out(in.begin(), in.begin() + first);
  out.push_back(product(std::vector<SymExpr>(in.begin() + first, in.begin() + last + 1), ctx.analyzer));
  out.insert(out.end(), in.begin() + last + 1, in.end());
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_flatten(const CallNode& call, const FlattenAttrs& attrs,
                                          Analyzer& analyzer) {
  const int ndim = tensor_of(call, 0).ndim;
  absl::StatusOr<std::pair<int64_t, int64_t>> dims = flattened_dims(call, attrs, ndim);
  if (!dims.ok()) return dims.status();
  const int64_t first = dims->first;
  const int64_t last = dims->second;
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    if (ndim == 0) return in.load(0, unflatten_index(i[0], in.shape(0)));
    const std::vector<SymExpr>& x = in.shape(0);
    std::vector<SymExpr> index(i.begin(), i.begin() + first);
    for (SymExpr& k : unflatten_index(i[first], std::vector<SymExpr>(x.begin() + first,
                                                                     x.begin() + last + 1))) {
      index.push_back(std::move(k));
    }
    index.insert(index.end(), i.begin() + first + 1, i.end());
    return in.load(0, std::move(index));
  });
}

// How x's dims follow the target's in broadcast_to (see compute::broadcast_map).
absl::StatusOr<BroadcastMap> broadcast_to_map(const std::vector<SymExpr>& x,
                                              const std::vector<SymExpr>& target,
                                              const std::string& x_text, Analyzer& analyzer) {
  const std::string op = "broadcast_to";
  if (x.size() > target.size()) {
    return op_error(op, "x " + x_text + " has rank " + std::to_string(x.size()) +
                            ", more than the target shape " + dims_string(target));
  }
  const size_t offset = target.size() - x.size();
  BroadcastMap map;
  for (size_t j = 0; j < x.size(); ++j) {
    const SymExpr& t = target[offset + j];
    if (analyzer.prove_equal(x[j], t)) {
      map.push_back(static_cast<int64_t>(offset + j));
    } else if (analyzer.prove_equal(x[j], 1)) {
      map.push_back(-1);
    } else {
      return op_error(op, "dim " + std::to_string(j) + " of x " + x_text + " is " + quoted(x[j]) +
                              ", neither the target's dim " + std::to_string(offset + j) + " " +
                              quoted(t) + " nor 1");
    }
  }
  return map;
}

absl::StatusOr<StructInfo> deduce_broadcast_to(const CallNode& call, const NoAttrs&,
                                               DeduceContext& ctx) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const auto& shape = *call.args[1].struct_info().as<ShapeStructInfoNode>();
  if (!shape.values) return tensor_sinfo_rank(shape.ndim, x.dtype, x.device);
  const std::vector<SymExpr>& target = *shape.values;
  if (absl::Status s = check_defined("broadcast_to", "shape " + dims_string(target), target, ctx);
      !s.ok()) {
    return s;
  }
  if (x.ndim != kUnknownNDim && x.ndim > static_cast<int>(target.size())) {
    return op_error("broadcast_to", "x " + call.args[0].struct_info().to_string() + " has rank " +
                                        std::to_string(x.ndim) + ", more than the target shape " +
                                        dims_string(target));
  }
  if (x.shape) {
    absl::StatusOr<BroadcastMap> map =
        broadcast_to_map(*x.shape, target, call.args[0].struct_info().to_string(), ctx.analyzer);
    if (!map.ok()) return map.status();
  }
  return tensor_sinfo(target, x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_broadcast_to(const CallNode& call, const NoAttrs&,
                                               Analyzer& analyzer) {
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, "broadcast_to", "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, "broadcast_to");
  if (!out.ok()) return out.status();
  absl::StatusOr<BroadcastMap> map = broadcast_to_map(
      *(*x)->shape, *(*out)->shape, call.args[0].struct_info().to_string(), analyzer);
  if (!map.ok()) return map.status();
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    std::vector<SymExpr> index;
    for (int64_t pos : *map) index.push_back(pos < 0 ? SymExpr(0) : i[pos]);
    return in.load(0, std::move(index));
  });
}

absl::StatusOr<StructInfo> deduce_astype(const CallNode& call, const DtypeAttrs& attrs,
                                         DeduceContext&) {
  return deduce_like_arg(call, 0, attrs.dtype);
}

absl::StatusOr<Lowering> legalize_astype(const CallNode& call, const DtypeAttrs&,
                                         Analyzer& analyzer) {
  // injective converts the loaded value to the result's dtype.
  return injective(call, analyzer, [](const std::vector<SymExpr>& i, const Inputs& in) {
    return in.load(0, i);
  });
}

absl::StatusOr<StructInfo> deduce_flip(const CallNode& call, const FlipAttrs& attrs, DeduceContext&) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (x.ndim != kUnknownNDim) {
    if (absl::StatusOr<int64_t> a = checked_axis(call, attrs.axis, x.ndim); !a.ok()) return a.status();
  }
  return deduce_like_arg(call, 0);
}

absl::StatusOr<Lowering> legalize_flip(const CallNode& call, const FlipAttrs& attrs,
                                       Analyzer& analyzer) {
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, "flip", "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, (*x)->ndim);
  if (!axis.ok()) return axis.status();
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    std::vector<SymExpr> index = i;
    index[*axis] = in.shape(0)[*axis] - 1 - i[*axis];
    return in.load(0, std::move(index));
  });
}

absl::Status check_repeats(const std::string& op, const std::vector<int64_t>& repeats) {
  for (int64_t r : repeats) {
    if (r < 0) {
      return op_error(op, "repeats " + ints_string(repeats) + " has " + std::to_string(r) +
                              ", expected counts >= 0");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<StructInfo> deduce_repeat(const CallNode& call, const RepeatAttrs& attrs,
                                         DeduceContext& ctx) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (absl::Status s = check_repeats("repeat", {attrs.repeats}); !s.ok()) return s;
  if (!attrs.axis) {
    if (!x.shape) return tensor_sinfo_rank(1, x.dtype, x.device);
    return tensor_sinfo({ctx.analyzer.simplify(product(*x.shape, ctx.analyzer) * attrs.repeats)},
                        x.dtype, x.device);
  }
  if (x.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
  absl::StatusOr<int64_t> axis = checked_axis(call, *attrs.axis, x.ndim);
  if (!axis.ok()) return axis.status();
  if (!x.shape) return tensor_sinfo_rank(x.ndim, x.dtype, x.device);
  std::vector<SymExpr> out = *x.shape;
  out[*axis] = ctx.analyzer.simplify(out[*axis] * attrs.repeats);
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_repeat(const CallNode& call, const RepeatAttrs& attrs,
                                         Analyzer& analyzer) {
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, "repeat", "x");
  if (!x.ok()) return x.status();
  std::optional<int64_t> axis;
  if (attrs.axis) {
    absl::StatusOr<int64_t> a = checked_axis(call, *attrs.axis, (*x)->ndim);
    if (!a.ok()) return a.status();
    axis = *a;
  }
  // With 0 repeats the result is empty and the index is never computed.
  const int64_t r = std::max<int64_t>(attrs.repeats, 1);
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    if (!axis) return in.load(0, unflatten_index(floordiv(i[0], r), in.shape(0)));
    std::vector<SymExpr> index = i;
    index[*axis] = floordiv(i[*axis], r);
    return in.load(0, std::move(index));
  });
}

absl::StatusOr<StructInfo> deduce_tile(const CallNode& call, const TileAttrs& attrs,
                                       DeduceContext& ctx) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (absl::Status s = check_repeats("tile", attrs.repeats); !s.ok()) return s;
  if (x.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
  const size_t out_ndim = std::max(static_cast<size_t>(x.ndim), attrs.repeats.size());
  if (!x.shape) return tensor_sinfo_rank(static_cast<int>(out_ndim), x.dtype, x.device);
  std::vector<SymExpr> out(out_ndim);
  for (size_t k = 0; k < out_ndim; ++k) {
    // Both aligned at the right, padded with 1s.
    const size_t x_pad = out_ndim - x.shape->size();
    const size_t r_pad = out_ndim - attrs.repeats.size();
    const SymExpr d = k < x_pad ? SymExpr(1) : (*x.shape)[k - x_pad];
    const int64_t r = k < r_pad ? 1 : attrs.repeats[k - r_pad];
    out[k] = ctx.analyzer.simplify(d * r);
  }
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_tile(const CallNode& call, const TileAttrs&, Analyzer& analyzer) {
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    const std::vector<SymExpr>& dims = in.shape(0);
    const size_t offset = i.size() - dims.size();
    std::vector<SymExpr> index;
    for (size_t j = 0; j < dims.size(); ++j) {
      // A dim of 1 reads index 0; one of 0 gives an empty result (never read).
      std::optional<int64_t> c = dims[j].as_const();
      index.push_back(c && *c <= 1 ? SymExpr(0) : floormod(i[offset + j], dims[j]));
    }
    return in.load(0, std::move(index));
  });
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
  table.def<ExpandDimsAttrs>("expand_dims", "x with dims of 1 inserted at the result's axes `axis`")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_expand_dims)
      .legalize(legalize_expand_dims);
  table.def<SqueezeAttrs>("squeeze", "x without its dims of 1 at `axis` (default: all provably 1)")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_squeeze)
      .legalize(legalize_squeeze);
  table.def<FlattenAttrs>("flatten", "x's dims start_dim..end_dim (default: all) merged into one")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_flatten)
      .legalize(legalize_flatten);
  table.def("broadcast_to", "x broadcast (numpy) to `shape`")
      .arg("x", ArgKind::kTensor)
      .arg("shape", ArgKind::kShape)
      .deduce(deduce_broadcast_to)
      .legalize(legalize_broadcast_to);
  table.def<DtypeAttrs>("astype", "x converted to `dtype` (float to integer truncates)")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_astype)
      .legalize(legalize_astype);
  table.def<FlipAttrs>("flip", "x reversed along `axis`")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_flip)
      .legalize(legalize_flip);
  table.def<RepeatAttrs>("repeat", "each element repeated `repeats` times along `axis` (default: flattened)")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_repeat)
      .legalize(legalize_repeat);
  table.def<TileAttrs>("tile", "x tiled `repeats` times per dim (numpy)")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_tile)
      .legalize(legalize_tile);
  register_manipulate_index_ops(table);
  register_manipulate_scatter_ops(table);
  register_manipulate_resize_ops(table);
}

}  // namespace detail

namespace op {

absl::StatusOr<Lowering> reshape_copy_kernel(const CallNode& call) { return detail::reshape_copy(call); }

Expr reshape(Expr x, Expr shape) {
  return make_call(make_op_or_die("reshape"), {std::move(x), std::move(shape)});
}

Expr reshape(Expr x, std::vector<SymExpr> shape) {
  return reshape(std::move(x), make_shape_expr(std::move(shape)));
}

Expr permute_dims(Expr x, OptionalInts axes) {
  return make_call(make_op_or_die("permute_dims"), {std::move(x)},
                   detail::encode_attrs(detail::PermuteDimsAttrs{std::move(axes)}));
}

Expr expand_dims(Expr x, std::vector<int64_t> axis) {
  return make_call(make_op_or_die("expand_dims"), {std::move(x)},
                   detail::encode_attrs(detail::ExpandDimsAttrs{std::move(axis)}));
}

Expr expand_dims(Expr x, int64_t axis) {
  return make_call(make_op_or_die("expand_dims"), {std::move(x)},
                   detail::encode_attrs(detail::ExpandDimsAttrs{axis}));
}

Expr squeeze(Expr x, OptionalInts axis) {
  detail::SqueezeAttrs attrs;
  if (axis.has_value()) attrs.axis = *std::move(axis).get();
  return make_call(make_op_or_die("squeeze"), {std::move(x)}, detail::encode_attrs(attrs));
}

Expr flatten(Expr x, int64_t start_dim, int64_t end_dim) {
  return make_call(make_op_or_die("flatten"), {std::move(x)},
                   detail::encode_attrs(detail::FlattenAttrs{start_dim, end_dim}));
}

Expr broadcast_to(Expr x, Expr shape) {
  return make_call(make_op_or_die("broadcast_to"), {std::move(x), std::move(shape)});
}

Expr broadcast_to(Expr x, std::vector<SymExpr> shape) {
  return broadcast_to(std::move(x), make_shape_expr(std::move(shape)));
}

Expr astype(Expr x, DataType dtype) {
  return make_call(make_op_or_die("astype"), {std::move(x)},
                   detail::encode_attrs(detail::DtypeAttrs{dtype}));
}

Expr flip(Expr x, int64_t axis) {
  return make_call(make_op_or_die("flip"), {std::move(x)}, detail::encode_attrs(detail::FlipAttrs{axis}));
}

Expr repeat(Expr x, int64_t repeats, std::optional<int64_t> axis) {
  return make_call(make_op_or_die("repeat"), {std::move(x)},
                   detail::encode_attrs(detail::RepeatAttrs{repeats, axis}));
}

Expr tile(Expr x, std::vector<int64_t> repeats) {
  return make_call(make_op_or_die("tile"), {std::move(x)},
                   detail::encode_attrs(detail::TileAttrs{std::move(repeats)}));
}

}  // namespace op
}  // namespace relax
