// Manipulation by index arithmetic: concat, split, strided_slice, take, pad,
// one_hot (the rest of the family is in manipulate.cc).
//
// concat(t, axis) takes one Tuple argument (a literal or a variable); the
// fields' dims other than `axis` must be provably equal and the result's
// `axis` dim is the sum of theirs. Its kernel copies each field into its place
// (one block per field, writing the result at an offset along `axis`):
//
//   concat((x: Tensor[(n, 4)], y: Tensor[(m, 4)]), axis=0)  becomes
//   for i0 in range(n) parallel { block concat_0 { Out[i0, i1] = A0[i0, i1] } }
//   for i0 in range(m) parallel { block concat_1 { Out[i0 + n, i1] = A1[i0, i1] } }
//
// split(x, indices_or_sections, axis) returns a Tuple: an int is that many
// equal sections (the dim must be provably divisible), a list the split points
// (numpy: section k is [p_k-1, p_k) clamped to the dim). Its kernel has one
// output buffer per section, one block each.
//
// strided_slice(x, axes, begin, end, strides): begin/end are symbolic lists
// (end exclusive); a negative constant counts from the end; bounds are
// clamped to [0, dim] like numpy, written as min/max only where the Analyzer
// cannot prove them in range. Strides are positive (flip reverses).
//
// take(x, indices, axis, mode): out = x[..., indices[...], ...] (without axis:
// the flattened x); out-of-range indices are clamped (mode "clip", default)
// or wrapped (mode "wrap", which makes -1 the last).
//
// pad(x, pad_width, pad_value): constant padding, pad_width flat
// [before_0, after_0, ...], non-negative. one_hot(indices, on_value,
// off_value, depth, axis): a new dim of `depth` at `axis` (default last),
// on_value where it equals the index, off_value elsewhere (an index out of
// [0, depth) gives all off_value); the result has the Prims' dtype.
#include <algorithm>

#include "ir/op/deduce_rules.h"
#include "ir/op/manipulate_util.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/manipulate.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

struct ConcatAttrs {
  int64_t axis = 0;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
  }
};

struct SplitAttrs {
  IntOrInts indices_or_sections = int64_t{1};
  int64_t axis = 0;
  template <typename V>
  void fields(V& v) {
    v.required("indices_or_sections", indices_or_sections);
    v("axis", axis);
  }
};

struct StridedSliceAttrs {
  std::vector<int64_t> axes;
  std::vector<SymExpr> begin;
  std::vector<SymExpr> end;
  std::optional<std::vector<int64_t>> strides;
  template <typename V>
  void fields(V& v) {
    v.required("axes", axes);
    v.required("begin", begin);
    v.required("end", end);
    v("strides", strides);
  }
};

struct TakeAttrs {
  std::optional<int64_t> axis;
  std::string mode = "clip";
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
    v("mode", mode, {"clip", "wrap"});
  }
};

struct PadAttrs {
  std::vector<int64_t> pad_width;
  double pad_value = 0;
  template <typename V>
  void fields(V& v) {
    v.required("pad_width", pad_width);
    v("pad_value", pad_value);
  }
};

struct OneHotAttrs {
  int64_t depth = 0;
  int64_t axis = -1;
  template <typename V>
  void fields(V& v) {
    v.required("depth", depth);
    v("axis", axis);
  }
};

// `axis` in [0, ndim), or an error naming `what` (the rank's owner).
absl::StatusOr<int64_t> axis_in(const std::string& op, int64_t axis, int64_t ndim,
                                const std::string& what) {
  const int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) {
    return op_error(op, "axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(ndim) + " (" + what + ")");
  }
  return a;
}

// ---------------------------------------------------------------------------
// concat

absl::StatusOr<StructInfo> deduce_concat(const CallNode& call, const ConcatAttrs& attrs,
                                         DeduceContext& ctx) {
  const std::string op = "concat";
  const auto* tuple = call.args[0].struct_info().as<TupleStructInfoNode>();
  if (tuple->fields.empty()) return op_error(op, "the tuple has no fields, expected tensors");
  std::vector<const TensorStructInfoNode*> fields;
  std::optional<DataType> dtype;
  int ndim = kUnknownNDim;
  for (size_t k = 0; k < tuple->fields.size(); ++k) {
    const auto* t = tuple->fields[k].as<TensorStructInfoNode>();
    if (t == nullptr) {
      return op_error(op, "field " + std::to_string(k) + " is " + tuple->fields[k].to_string() +
                              ", expected a Tensor");
    }
    if (t->dtype && dtype && *t->dtype != *dtype) {
      return op_error(op, "field " + std::to_string(k) + " has dtype " + t->dtype->to_string() +
                              ", field 0's is " + dtype->to_string());
    }
    if (t->dtype) dtype = t->dtype;
    if (t->ndim != kUnknownNDim) {
      if (ndim != kUnknownNDim && t->ndim != ndim) {
        return op_error(op, "field " + std::to_string(k) + " " + tuple->fields[k].to_string() +
                                " has rank " + std::to_string(t->ndim) + ", expected " +
                                std::to_string(ndim));
      }
      ndim = t->ndim;
    }
    fields.push_back(t);
  }
  // A field of unknown dtype makes the result's unknown.
  for (const TensorStructInfoNode* t : fields) {
    if (!t->dtype) dtype = std::nullopt;
  }
  const Device device = fields[0]->device;
  if (ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, dtype, device);
  absl::StatusOr<int64_t> axis =
      axis_in(op, attrs.axis, ndim, "field 0 " + tuple->fields[0].to_string());
  if (!axis.ok()) return axis.status();
  for (const TensorStructInfoNode* t : fields) {
    if (!t->shape) return tensor_sinfo_rank(ndim, dtype, device);
  }
  std::vector<SymExpr> out = *fields[0]->shape;
  SymExpr total(0);
  for (size_t k = 0; k < fields.size(); ++k) {
    const std::vector<SymExpr>& dims = *fields[k]->shape;
    for (int j = 0; j < ndim; ++j) {
      if (j == *axis || ctx.analyzer.prove_equal(dims[j], out[j])) continue;
      return op_error(op, "dim " + std::to_string(j) + " of field " + std::to_string(k) + " " +
                              tuple->fields[k].to_string() + " is " + quoted(dims[j]) +
                              ", field 0's is " + quoted(out[j]) + " (only axis " +
                              std::to_string(*axis) + " may differ)");
    }
    total = total + dims[*axis];
  }
  out[*axis] = ctx.analyzer.simplify(total);
  return tensor_sinfo(std::move(out), dtype, device);
}

// The tensors a Tuple argument passes, field by field.
std::vector<Expr> tuple_fields(const Expr& arg) {
  const auto* sinfo = arg.struct_info().as<TupleStructInfoNode>();
  const auto* literal = arg.as<TupleNode>();
  std::vector<Expr> out;
  for (size_t j = 0; j < sinfo->fields.size(); ++j) {
    out.push_back(literal != nullptr
                      ? literal->fields[j]
                      : make_tuple_get_item(arg, static_cast<int>(j), sinfo->fields[j]));
  }
  return out;
}

absl::StatusOr<Lowering> legalize_concat(const CallNode& call, const ConcatAttrs& attrs,
                                         Analyzer&) {
  const std::string op = "concat";
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  const std::vector<Expr> fields = tuple_fields(call.args[0]);
  std::vector<std::vector<SymExpr>> buffer_dims;
  for (size_t k = 0; k < fields.size(); ++k) {
    const auto* t = fields[k].struct_info().as<TensorStructInfoNode>();
    if (t == nullptr || !t->shape || !t->dtype) {
      return error(op, "field " + std::to_string(k) + ": expected a Tensor of known shape and dtype, got " +
                           fields[k].struct_info().to_string());
    }
    buffer_dims.push_back(*t->shape);
  }
  buffer_dims.push_back(*(*out)->shape);
  const int64_t axis = attrs.axis < 0 ? attrs.axis + (*out)->ndim : attrs.axis;
  KernelBuilder kb(op, buffer_dims);
  std::vector<Buffer> inputs;
  for (size_t k = 0; k < fields.size(); ++k) {
    inputs.push_back(kb.input("A" + std::to_string(k), fields[k]));
  }
  Buffer b = kb.output("Out", **out);
  PrimFuncBuilder& pb = kb.body();
  SymExpr offset(0);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Buffer& a = inputs[k];
    loop_block(pb, op + "_" + std::to_string(k), a.shape(), {}, nullptr,
               [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
                 std::vector<SymExpr> index = as_indices(v);
                 if (k > 0) index[axis] = index[axis] + offset;
                 pb.store(b, std::move(index), buffer_load(a, as_indices(v)));
               });
    offset = k == 0 ? a.shape()[axis] : offset + a.shape()[axis];
  }
  return kb.finish();
}

// ---------------------------------------------------------------------------
// split

// The sizes of split's sections of a dim `d`.
absl::StatusOr<std::vector<SymExpr>> split_sizes(const CallNode& call, const SplitAttrs& attrs,
                                                 const SymExpr& d, int64_t axis, Analyzer& analyzer) {
  const std::string op = "split";
  std::vector<SymExpr> sizes;
  if (const int64_t* sections = std::get_if<int64_t>(&attrs.indices_or_sections)) {
    std::optional<SymExpr> each = exact_quotient({d}, {SymExpr(*sections)}, analyzer);
    if (!each) {
      std::optional<int64_t> r = analyzer.simplify(floormod(d, *sections)).as_const();
      if (r && *r == 0) each = analyzer.simplify(floordiv(d, *sections));
    }
    if (!each) {
      return op_error(op, "dim " + std::to_string(axis) + " of x " +
                              call.args[0].struct_info().to_string() + " is " + quoted(d) +
                              ", not provably divisible into " + std::to_string(*sections) +
                              " sections");
    }
    sizes.assign(static_cast<size_t>(*sections), *each);
    return sizes;
  }
  const std::vector<int64_t>& points = std::get<std::vector<int64_t>>(attrs.indices_or_sections);
  // Numpy clamps the points to the dim; the clamping is written out only
  // where the Analyzer cannot prove the last point within it.
  const bool inside = points.empty() || analyzer.prove(d >= points.back());
  auto clamp = [&](int64_t p) { return inside ? SymExpr(p) : min(SymExpr(p), d); };
  SymExpr start(0);
  for (size_t k = 0; k <= points.size(); ++k) {
    const SymExpr stop = k < points.size() ? clamp(points[k]) : d;
    sizes.push_back(analyzer.simplify(stop - start));
    start = stop;
  }
  return sizes;
}

absl::Status check_split_attrs(const SplitAttrs& attrs) {
  if (const int64_t* sections = std::get_if<int64_t>(&attrs.indices_or_sections)) {
    if (*sections < 1) {
      return op_error("split", "indices_or_sections is " + std::to_string(*sections) +
                                   ", expected a number of sections >= 1 or a list of points");
    }
    return absl::OkStatus();
  }
  const std::vector<int64_t>& points = std::get<std::vector<int64_t>>(attrs.indices_or_sections);
  for (size_t k = 0; k < points.size(); ++k) {
    if (points[k] < 0 || (k > 0 && points[k] < points[k - 1])) {
      return op_error("split", "split points " + ints_string(points) +
                                   " must be non-negative and ascending");
    }
  }
  return absl::OkStatus();
}

size_t section_count(const SplitAttrs& attrs) {
  if (const int64_t* sections = std::get_if<int64_t>(&attrs.indices_or_sections)) {
    return static_cast<size_t>(*sections);
  }
  return std::get<std::vector<int64_t>>(attrs.indices_or_sections).size() + 1;
}

absl::StatusOr<StructInfo> deduce_split(const CallNode& call, const SplitAttrs& attrs,
                                        DeduceContext& ctx) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (absl::Status s = check_split_attrs(attrs); !s.ok()) return s;
  const size_t count = section_count(attrs);
  std::vector<StructInfo> fields;
  if (x.ndim == kUnknownNDim || !x.shape) {
    if (x.ndim != kUnknownNDim) {
      if (absl::StatusOr<int64_t> a = checked_axis(call, attrs.axis, x.ndim); !a.ok()) return a.status();
    }
    fields.assign(count, tensor_sinfo_rank(x.ndim, x.dtype, x.device));
    return tuple_sinfo(std::move(fields));
  }
  absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, x.ndim);
  if (!axis.ok()) return axis.status();
  absl::StatusOr<std::vector<SymExpr>> sizes =
      split_sizes(call, attrs, (*x.shape)[*axis], *axis, ctx.analyzer);
  if (!sizes.ok()) return sizes.status();
  for (const SymExpr& size : *sizes) {
    std::vector<SymExpr> dims = *x.shape;
    dims[*axis] = size;
    fields.push_back(tensor_sinfo(std::move(dims), x.dtype, x.device));
  }
  return tuple_sinfo(std::move(fields));
}

absl::StatusOr<Lowering> legalize_split(const CallNode& call, const SplitAttrs& attrs, Analyzer&) {
  const std::string op = "split";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, (*x)->ndim);
  if (!axis.ok()) return axis.status();
  const auto* result = call.struct_info().as<TupleStructInfoNode>();
  std::vector<const TensorStructInfoNode*> outs;
  std::vector<std::vector<SymExpr>> buffer_dims = {*(*x)->shape};
  for (size_t k = 0; result != nullptr && k < result->fields.size(); ++k) {
    const auto* t = result->fields[k].as<TensorStructInfoNode>();
    if (t == nullptr || !t->shape || !t->dtype) break;
    outs.push_back(t);
    buffer_dims.push_back(*t->shape);
  }
  if (result == nullptr || outs.size() != result->fields.size()) {
    return error(op, "the result " + call.struct_info().to_string() +
                         " is not a Tuple of Tensors of known shape and dtype");
  }
  KernelBuilder kb(op, buffer_dims);
  Buffer a = kb.input("A", call.args[0]);
  std::vector<Buffer> buffers;
  for (size_t k = 0; k < outs.size(); ++k) buffers.push_back(kb.output("Out" + std::to_string(k), *outs[k]));
  PrimFuncBuilder& pb = kb.body();
  // Section k starts where the sections before it end.
  SymExpr start(0);
  for (size_t k = 0; k < buffers.size(); ++k) {
    const Buffer& b = buffers[k];
    loop_block(pb, op + "_" + std::to_string(k), b.shape(), {}, nullptr,
               [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
                 std::vector<SymExpr> index = as_indices(v);
                 if (k > 0) index[*axis] = index[*axis] + start;
                 pb.store(b, as_indices(v), buffer_load(a, std::move(index)));
               });
    start = k == 0 ? b.shape()[*axis] : start + b.shape()[*axis];
  }
  return kb.finish();
}

// ---------------------------------------------------------------------------
// strided_slice

// One sliced axis: where it starts, its stride and the result's length.
struct SliceAxis {
  int64_t axis;
  SymExpr begin;
  int64_t stride;
  SymExpr length;
};

// `v` within [0, d]: a negative constant counts from the end; the clamp is
// written out only where it is not provably a no-op.
SymExpr clamp_bound(SymExpr v, const SymExpr& d, Analyzer& analyzer) {
  if (std::optional<int64_t> c = v.as_const(); c && *c < 0) v = d + v;
  v = analyzer.simplify(v);
  if (!analyzer.prove(v >= 0)) v = analyzer.prove(v <= 0) ? SymExpr(0) : max(v, SymExpr(0));
  if (!analyzer.prove(v <= d)) v = analyzer.prove(v >= d) ? d : min(v, d);
  return analyzer.simplify(v);
}

absl::StatusOr<std::vector<SliceAxis>> slice_axes(const CallNode& call,
                                                  const StridedSliceAttrs& attrs,
                                                  const std::vector<SymExpr>* dims, int ndim,
                                                  Analyzer& analyzer) {
  const std::string op = "strided_slice";
  const size_t n = attrs.axes.size();
  if (attrs.begin.size() != n || attrs.end.size() != n || (attrs.strides && attrs.strides->size() != n)) {
    return op_error(op, "axes " + ints_string(attrs.axes) + " have " + std::to_string(n) +
                            " entries, begin " + dims_string(attrs.begin) + " " +
                            std::to_string(attrs.begin.size()) + ", end " + dims_string(attrs.end) +
                            " " + std::to_string(attrs.end.size()) +
                            (attrs.strides ? ", strides " + ints_string(*attrs.strides) + " " +
                                                 std::to_string(attrs.strides->size())
                                           : std::string()) +
                            "; expected one each per axis");
  }
  std::vector<SliceAxis> out;
  for (size_t k = 0; k < n; ++k) {
    absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axes[k], ndim);
    if (!axis.ok()) return axis.status();
    for (const SliceAxis& s : out) {
      if (s.axis == *axis) {
        return op_error(op, "axis " + std::to_string(*axis) + " appears twice in " + ints_string(attrs.axes));
      }
    }
    const int64_t stride = attrs.strides ? (*attrs.strides)[k] : 1;
    if (stride < 1) {
      return op_error(op, "stride " + std::to_string(stride) + " of axis " + std::to_string(*axis) +
                              " is not positive (flip reverses a dim)");
    }
    for (const SymExpr* e : {&attrs.begin[k], &attrs.end[k]}) {
      if (!e->dtype().is_int()) {
        return op_error(op, "bound " + quoted(*e) + " of axis " + std::to_string(*axis) +
                                " is " + e->dtype().to_string() + ", expected an integer");
      }
    }
    SliceAxis s{*axis, SymExpr(0), stride, SymExpr(0)};
    if (dims != nullptr) {
      const SymExpr& d = (*dims)[*axis];
      s.begin = clamp_bound(attrs.begin[k], d, analyzer);
      const SymExpr end = clamp_bound(attrs.end[k], d, analyzer);
      SymExpr length = stride == 1 ? end - s.begin : floordiv(end - s.begin + (stride - 1), stride);
      if (!analyzer.prove(end >= s.begin)) length = max(length, SymExpr(0));
      s.length = analyzer.simplify(length);
    }
    out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<StructInfo> deduce_strided_slice(const CallNode& call, const StridedSliceAttrs& attrs,
                                                DeduceContext& ctx) {
  const std::string op = "strided_slice";
  const TensorStructInfoNode& x = tensor_of(call, 0);
  for (const auto* list : {&attrs.begin, &attrs.end}) {
    if (absl::Status s = check_defined(op, list == &attrs.begin ? "begin" : "end", *list, ctx); !s.ok()) {
      return s;
    }
  }
  if (x.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
  absl::StatusOr<std::vector<SliceAxis>> axes =
      slice_axes(call, attrs, x.shape ? &*x.shape : nullptr, x.ndim, ctx.analyzer);
  if (!axes.ok()) return axes.status();
  if (!x.shape) return tensor_sinfo_rank(x.ndim, x.dtype, x.device);
  std::vector<SymExpr> out = *x.shape;
  for (const SliceAxis& s : *axes) out[s.axis] = s.length;
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_strided_slice(const CallNode& call, const StridedSliceAttrs& attrs,
                                                Analyzer& analyzer) {
  const std::string op = "strided_slice";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  absl::StatusOr<std::vector<SliceAxis>> axes =
      slice_axes(call, attrs, &*(*x)->shape, (*x)->ndim, analyzer);
  if (!axes.ok()) return axes.status();
  std::vector<std::vector<SymExpr>> buffer_dims = {*(*x)->shape, *(*out)->shape, {}};
  for (const SliceAxis& s : *axes) buffer_dims.back().push_back(index_only(s.begin));
  KernelBuilder kb(op, buffer_dims);
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("Out", **out);
  std::vector<SymExpr> begins;
  for (const SliceAxis& s : *axes) begins.push_back(kb.dims({s.begin})[0]);
  PrimFuncBuilder& pb = kb.body();
  loop_block(pb, op, b.shape(), {}, nullptr, [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
    std::vector<SymExpr> index = as_indices(v);
    for (size_t k = 0; k < axes->size(); ++k) {
      const SliceAxis& s = (*axes)[k];
      SymExpr i = s.stride == 1 ? index[s.axis] : index[s.axis] * s.stride;
      index[s.axis] = begins[k].as_const() == 0 ? i : begins[k] + i;
    }
    pb.store(b, as_indices(v), buffer_load(a, std::move(index)));
  });
  return kb.finish();
}

// ---------------------------------------------------------------------------
// take

absl::StatusOr<StructInfo> deduce_take(const CallNode& call, const TakeAttrs& attrs, DeduceContext&) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const TensorStructInfoNode& indices = tensor_of(call, 1);
  if (!attrs.axis) {
    if (indices.shape && x.ndim != kUnknownNDim) return tensor_sinfo(*indices.shape, x.dtype, x.device);
    return tensor_sinfo_rank(indices.ndim, x.dtype, x.device);
  }
  if (x.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
  absl::StatusOr<int64_t> axis = checked_axis(call, *attrs.axis, x.ndim);
  if (!axis.ok()) return axis.status();
  if (indices.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
  if (!x.shape || !indices.shape) {
    return tensor_sinfo_rank(x.ndim - 1 + indices.ndim, x.dtype, x.device);
  }
  std::vector<SymExpr> out(x.shape->begin(), x.shape->begin() + *axis);
  out.insert(out.end(), indices.shape->begin(), indices.shape->end());
  out.insert(out.end(), x.shape->begin() + *axis + 1, x.shape->end());
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_take(const CallNode& call, const TakeAttrs& attrs, Analyzer& analyzer) {
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, "take", "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> indices = known_tensor(call, 1, "take", "indices");
  if (!indices.ok()) return indices.status();
  std::optional<int64_t> axis;
  if (attrs.axis) {
    absl::StatusOr<int64_t> a = checked_axis(call, *attrs.axis, (*x)->ndim);
    if (!a.ok()) return a.status();
    axis = *a;
  }
  const size_t index_ndim = (*indices)->shape->size();
  const bool wrap = attrs.mode == "wrap";
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    const size_t first = axis ? static_cast<size_t>(*axis) : 0;
    std::vector<SymExpr> at(i.begin() + static_cast<std::ptrdiff_t>(first),
                            i.begin() + static_cast<std::ptrdiff_t>(first + index_ndim));
    SymExpr k = in.load(1, std::move(at));
    if (k.dtype() != DataType::int64()) k = cast(DataType::int64(), k);
    const std::vector<SymExpr>& dims = in.shape(0);
    SymExpr d = axis ? dims[*axis] : SymExpr(1);
    if (!axis) {
      for (const SymExpr& dim : dims) d = d * dim;
    }
    k = wrap ? floormod(k, d) : min(max(k, SymExpr(0)), d - 1);
    if (!axis) return in.load(0, unflatten_index(k, dims));
    std::vector<SymExpr> index(i.begin(), i.begin() + *axis);
    index.push_back(k);
    index.insert(index.end(), i.begin() + static_cast<std::ptrdiff_t>(first + index_ndim), i.end());
    return in.load(0, std::move(index));
  });
}

// ---------------------------------------------------------------------------
// pad

absl::StatusOr<StructInfo> deduce_pad(const CallNode& call, const PadAttrs& attrs, DeduceContext& ctx) {
  const std::string op = "pad";
  const TensorStructInfoNode& x = tensor_of(call, 0);
  for (int64_t p : attrs.pad_width) {
    if (p < 0) {
      return op_error(op, "pad_width " + ints_string(attrs.pad_width) + " has " + std::to_string(p) +
                              ", expected widths >= 0");
    }
  }
  if (x.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device);
  if (attrs.pad_width.size() != 2 * static_cast<size_t>(x.ndim)) {
    return op_error(op, "pad_width " + ints_string(attrs.pad_width) + " has " +
                            std::to_string(attrs.pad_width.size()) + " entries, expected " +
                            std::to_string(2 * x.ndim) + " (before and after each dim of x " +
                            call.args[0].struct_info().to_string() + ")");
  }
  if (!x.shape) return tensor_sinfo_rank(x.ndim, x.dtype, x.device);
  std::vector<SymExpr> out = *x.shape;
  for (size_t j = 0; j < out.size(); ++j) {
    out[j] = ctx.analyzer.simplify(out[j] + (attrs.pad_width[2 * j] + attrs.pad_width[2 * j + 1]));
  }
  return tensor_sinfo(std::move(out), x.dtype, x.device);
}

// `value` as a constant of `dtype`.
SymExpr constant_of(double value, DataType dtype) {
  if (dtype.is_float()) return SymExpr::float_imm(value, dtype);
  if (dtype.is_bool()) return SymExpr::boolean(value != 0);
  return SymExpr::int_imm(static_cast<int64_t>(value), dtype);
}

absl::StatusOr<Lowering> legalize_pad(const CallNode& call, const PadAttrs& attrs, Analyzer& analyzer) {
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, "pad");
  if (!out.ok()) return out.status();
  const DataType dtype = *(*out)->dtype;
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    std::vector<SymExpr> index = i;
    SymExpr inside;
    for (size_t j = 0; j < i.size(); ++j) {
      const int64_t before = attrs.pad_width[2 * j];
      const int64_t after = attrs.pad_width[2 * j + 1];
      if (before == 0 && after == 0) continue;
      if (before != 0) index[j] = i[j] - before;
      SymExpr cond = before == 0 ? (index[j] < in.shape(0)[j])
                                 : (i[j] >= before && index[j] < in.shape(0)[j]);
      inside = inside.defined() ? (inside && cond) : cond;
    }
    // The load is evaluated only where the condition holds.
    SymExpr value = in.load(0, std::move(index));
    return inside.defined() ? select(inside, value, constant_of(attrs.pad_value, dtype)) : value;
  });
}

// ---------------------------------------------------------------------------
// one_hot

absl::StatusOr<StructInfo> deduce_one_hot(const CallNode& call, const OneHotAttrs& attrs,
                                          DeduceContext&) {
  const std::string op = "one_hot";
  const TensorStructInfoNode& indices = tensor_of(call, 0);
  const auto& on = *call.args[1].struct_info().as<PrimStructInfoNode>();
  const auto& off = *call.args[2].struct_info().as<PrimStructInfoNode>();
  if (on.dtype != off.dtype) {
    return op_error(op, "on_value " + call.args[1].struct_info().to_string() + " and off_value " +
                            call.args[2].struct_info().to_string() + " differ in dtype");
  }
  if (attrs.depth < 0) {
    return op_error(op, "depth is " + std::to_string(attrs.depth) + ", expected >= 0");
  }
  if (indices.ndim == kUnknownNDim) return tensor_sinfo_rank(kUnknownNDim, on.dtype, indices.device);
  absl::StatusOr<int64_t> axis = axis_in(op, attrs.axis, indices.ndim + 1,
                                         "the result; indices " + call.args[0].struct_info().to_string());
  if (!axis.ok()) return axis.status();
  if (!indices.shape) return tensor_sinfo_rank(indices.ndim + 1, on.dtype, indices.device);
  std::vector<SymExpr> out = *indices.shape;
  out.insert(out.begin() + *axis, SymExpr(attrs.depth));
  return tensor_sinfo(std::move(out), on.dtype, indices.device);
}

absl::StatusOr<Lowering> legalize_one_hot(const CallNode& call, const OneHotAttrs& attrs,
                                          Analyzer& analyzer) {
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, "one_hot");
  if (!out.ok()) return out.status();
  const int64_t axis = attrs.axis < 0 ? attrs.axis + (*out)->ndim : attrs.axis;
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    std::vector<SymExpr> index = i;
    index.erase(index.begin() + axis);
    SymExpr k = in.load(0, std::move(index));
    if (k.dtype() != DataType::int64()) k = cast(DataType::int64(), k);
    return select(k == i[axis], in.scalar(0), in.scalar(1));
  });
}

}  // namespace

void register_manipulate_index_ops(OpTable& table) {
  table.def<ConcatAttrs>("concat", "the tensors of a tuple joined along `axis`")
      .arg("tensors", ArgKind::kTuple)
      .deduce(deduce_concat)
      .legalize(legalize_concat);
  table.def<SplitAttrs>("split", "x cut along `axis` into a tuple of sections")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_split)
      .legalize(legalize_split);
  table.def<StridedSliceAttrs>("strided_slice", "x[begin:end:stride] along each of `axes`")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_strided_slice)
      .legalize(legalize_strided_slice);
  table.def<TakeAttrs>("take", "the elements of x at `indices` along `axis` (embedding lookup)")
      .arg("x", ArgKind::kTensor)
      .arg("indices", ArgKind::kTensor, DtypeClass::kInt)
      .deduce(deduce_take)
      .legalize(legalize_take);
  table.def<PadAttrs>("pad", "x padded with `pad_value` by pad_width [before_0, after_0, ...]")
      .arg("x", ArgKind::kTensor)
      .deduce(deduce_pad)
      .legalize(legalize_pad);
  table.def<OneHotAttrs>("one_hot", "on_value where a new dim of `depth` equals indices, else off_value")
      .arg("indices", ArgKind::kTensor, DtypeClass::kInt)
      .arg("on_value", ArgKind::kPrim)
      .arg("off_value", ArgKind::kPrim)
      .deduce(deduce_one_hot)
      .legalize(legalize_one_hot);
}

}  // namespace detail

namespace op {

Expr concat(Expr tensors, int64_t axis) {
  return make_call(make_op_or_die("concat"), {std::move(tensors)},
                   detail::encode_attrs(detail::ConcatAttrs{axis}));
}

Expr concat(std::vector<Expr> tensors, int64_t axis) {
  return concat(make_tuple(std::move(tensors)), axis);
}

Expr split(Expr x, int64_t sections, int64_t axis) {
  return make_call(make_op_or_die("split"), {std::move(x)},
                   detail::encode_attrs(detail::SplitAttrs{sections, axis}));
}

Expr split(Expr x, std::vector<int64_t> indices, int64_t axis) {
  return make_call(make_op_or_die("split"), {std::move(x)},
                   detail::encode_attrs(detail::SplitAttrs{std::move(indices), axis}));
}

Expr split(Expr x, std::initializer_list<int64_t> indices, int64_t axis) {
  return split(std::move(x), std::vector<int64_t>(indices), axis);
}

Expr strided_slice(Expr x, std::vector<int64_t> axes, std::vector<SymExpr> begin,
                   std::vector<SymExpr> end, OptionalInts strides) {
  return make_call(make_op_or_die("strided_slice"), {std::move(x)},
                   detail::encode_attrs(detail::StridedSliceAttrs{
                       std::move(axes), std::move(begin), std::move(end), std::move(strides)}));
}

Expr take(Expr x, Expr indices, std::optional<int64_t> axis, std::string mode) {
  return make_call(make_op_or_die("take"), {std::move(x), std::move(indices)},
                   detail::encode_attrs(detail::TakeAttrs{axis, std::move(mode)}));
}

Expr pad(Expr x, std::vector<int64_t> pad_width, double pad_value) {
  return make_call(make_op_or_die("pad"), {std::move(x)},
                   detail::encode_attrs(detail::PadAttrs{std::move(pad_width), pad_value}));
}

Expr one_hot(Expr indices, Operand on_value, Operand off_value, int64_t depth, int64_t axis) {
  return make_call(make_op_or_die("one_hot"),
                   {std::move(indices), std::move(on_value).expr(), std::move(off_value).expr()},
                   detail::encode_attrs(detail::OneHotAttrs{depth, axis}));
}

}  // namespace op
}  // namespace relax
