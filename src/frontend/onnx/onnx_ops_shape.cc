// The ONNX importer's converters of shapes and layout (onnx_importer.h): Shape, Reshape, Flatten,
// Squeeze/Unsqueeze, Concat, Gather, Cast, Constant(OfShape), Transpose, Slice, Split, Expand,
// Tile, Pad, Range, NonZero, Resize.
//
// Shape computations are evaluated at import: an int64 value of rank 0 or 1 whose elements are
// known (a Shape of a tensor with known dims, a constant, and what Gather, Unsqueeze, Squeeze,
// Concat, Slice, Cast and integer arithmetic make of them) travels as symbolic expressions, and
// Reshape, ConstantOfShape, Expand, Range and the rest read it, so that shapes computed from the
// input's dims stay expressions of those dims.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_importer.h"
#include "relax/ir/op/create.h"
#include "relax/ir/op/dynamic.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/struct_info.h"

namespace relax::frontend::onnx_detail {
namespace {

using op::Operand;

Outputs convert_shape(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 1); !s.ok()) return s;
  std::optional<std::vector<SymExpr>> dims;
  if (in[0]->known && !in[0]->expr.defined()) {
    // The shape of a shape value: its length (or none for a scalar).
    dims.emplace();
    if (!in[0]->scalar) dims->push_back(SymExpr(static_cast<int64_t>(in[0]->known->size())));
  } else {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    dims = Importer::dims_of((*x)[0]);
  }
  if (!dims) return node_error(node, "its input's dims are not known at import (a data-dependent shape)");
  const int64_t rank = static_cast<int64_t>(dims->size());
  int64_t start = int_attr(node, "start", 0), end = int_attr(node, "end", rank);
  start = std::clamp(start < 0 ? start + rank : start, int64_t{0}, rank);
  end = std::clamp(end < 0 ? end + rank : end, int64_t{0}, rank);
  Value v;
  v.known = std::vector<SymExpr>(dims->begin() + start, dims->begin() + std::max(start, end));
  return std::vector<Value>{v};
}

Outputs convert_reshape(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<SymExpr>> shape = known_input(node, in, 1, "shape");
  if (!shape.ok()) return shape.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
  const bool allowzero = int_attr(node, "allowzero", 0) != 0;
  std::vector<SymExpr> target = *shape;
  for (size_t i = 0; i < target.size(); ++i) {
    if (!allowzero && target[i].is_const(0)) {
      if (!dims || i >= dims->size()) return node_error(node, absl::StrCat("0 at dim ", i, " copies an input dim it lacks"));
      target[i] = (*dims)[i];  // 0: the input's dim
    }
  }
  return std::vector<Value>{tensor_value(im.emit(op::reshape((*x)[0], target)))};
}

Outputs convert_flatten(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
  if (!dims) return node_error(node, "its input's dims are not known at import");
  const int64_t rank = static_cast<int64_t>(dims->size());
  int64_t axis = int_attr(node, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return node_error(node, absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  SymExpr outer(1), inner(1);
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) = (i < axis ? outer : inner) * (*dims)[i];
  return std::vector<Value>{tensor_value(im.emit(op::reshape((*x)[0], std::vector<SymExpr>{outer, inner})))};
}

// The axes of Squeeze/Unsqueeze: an attribute before opset 13, an input from 13 on.
absl::StatusOr<std::optional<std::vector<int64_t>>> axes_of(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (im.opset() < 13) return ints_attr(node, "axes");
  if (in.size() < 2 || in[1] == nullptr) return std::optional<std::vector<int64_t>>();
  absl::StatusOr<std::vector<SymExpr>> axes = known_input(node, in, 1, "axes");
  if (!axes.ok()) return axes.status();
  bool all = false;
  std::vector<int64_t> out = constants_of(*axes, &all);
  if (!all) return node_error(node, "its axes are not constants");
  return std::optional<std::vector<int64_t>>(out);
}

Outputs convert_unsqueeze(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 1); !s.ok()) return s;
  absl::StatusOr<std::optional<std::vector<int64_t>>> axes = axes_of(im, node, in);
  if (!axes.ok()) return axes.status();
  if (!*axes) return node_error(node, "needs its axes");
  // A known scalar made a 1-element vector: a shape being assembled.
  if (in[0]->known && in[0]->scalar && (**axes) == std::vector<int64_t>{0}) {
    Value v = *in[0];
    v.scalar = false;
    v.expr = Expr();
    return std::vector<Value>{v};
  }
  absl::StatusOr<Expr> x = im.tensor(*in[0], node);
  if (!x.ok()) return x.status();
  return std::vector<Value>{tensor_value(im.emit(op::expand_dims(*x, **axes)))};
}

Outputs convert_squeeze(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 1); !s.ok()) return s;
  absl::StatusOr<std::optional<std::vector<int64_t>>> axes = axes_of(im, node, in);
  if (!axes.ok()) return axes.status();
  if (in[0]->known && !in[0]->scalar && in[0]->known->size() == 1) {
    Value v = *in[0];
    v.scalar = true;
    v.expr = Expr();
    return std::vector<Value>{v};
  }
  absl::StatusOr<Expr> x = im.tensor(*in[0], node);
  if (!x.ok()) return x.status();
  return std::vector<Value>{tensor_value(im.emit(op::squeeze(*x, *axes)))};
}

Outputs convert_concat(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  bool all_known = !in.empty();
  for (const Value* v : in) all_known = all_known && v != nullptr && v->known && !v->scalar;
  if (all_known) {
    Value out;
    out.known_dtype = in[0]->known_dtype;
    out.known.emplace();
    for (const Value* v : in) out.known->insert(out.known->end(), v->known->begin(), v->known->end());
    return std::vector<Value>{out};
  }
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, in.size());
  if (!x.ok()) return x.status();
  const int64_t rank = x->empty() ? -1 : Importer::rank_of((*x)[0]);
  absl::StatusOr<int64_t> axis = axis_in(node, int_attr(node, "axis", 0), rank);
  if (!axis.ok()) return axis.status();
  if (rank >= 0) *x = dims_checked(im, node, *std::move(x), *axis);
  return std::vector<Value>{tensor_value(im.emit(op::concat(*x, *axis)))};
}

Outputs convert_gather(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 2); !s.ok()) return s;
  const int64_t axis = int_attr(node, "axis", 0);
  // An element (or elements) of a known shape at constant indices.
  if (in[0]->known && !in[0]->scalar && in[1]->known && axis == 0) {
    bool all = false;
    const std::vector<int64_t> indices = constants_of(*in[1]->known, &all);
    if (all) {
      const auto n = static_cast<int64_t>(in[0]->known->size());
      Value v;
      v.scalar = in[1]->scalar;
      v.known_dtype = in[0]->known_dtype;
      v.known.emplace();
      for (int64_t i : indices) {
        const int64_t k = i < 0 ? i + n : i;
        if (k < 0 || k >= n) return node_error(node, absl::StrCat("index ", i, " is out of range for ", n, " elements"));
        v.known->push_back((*in[0]->known)[static_cast<size_t>(k)]);
      }
      return std::vector<Value>{v};
    }
  }
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  // Negative indices count from the end, as "wrap" takes them.
  return std::vector<Value>{tensor_value(im.emit(op::take((*x)[0], (*x)[1], axis, "wrap")))};
}

Outputs convert_cast(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 1); !s.ok()) return s;
  const std::optional<DataType> to = dtype_of(static_cast<int32_t>(int_attr(node, "to", 0)));
  if (!to) return node_error(node, absl::StrCat("casts to element type ", int_attr(node, "to", 0), ", which relax has no dtype of"));
  // A shape value stays known through integer casts (its elements are dims: they fit int32).
  bool constant = true;
  if (in[0]->known) constants_of(*in[0]->known, &constant);
  if (in[0]->known && (*to == DataType::int64() || *to == DataType::int32()) &&
      (!in[0]->known_dtype.is_bool() || constant)) {
    Value v = *in[0];
    v.expr = Expr();
    v.known_dtype = *to;
    return std::vector<Value>{v};
  }
  // To bool: each element's `!= 0` (a condition an If may decide at import).
  if (in[0]->known && to->is_bool()) {
    Value v = *in[0];
    v.expr = Expr();
    v.known_dtype = *to;
    for (SymExpr& e : *v.known) e = in[0]->known_dtype.is_bool() ? e : (e != SymExpr(0));
    return std::vector<Value>{v};
  }
  absl::StatusOr<Expr> x = im.tensor(*in[0], node);
  if (!x.ok()) return x.status();
  return std::vector<Value>{tensor_value(im.emit(op::astype(*x, *to)))};
}

Outputs convert_constant(Importer&, const onnx::NodeProto& node, const Inputs&) {
  runtime::Tensor t;
  if (const onnx::AttributeProto* a = find_attr(node, "value")) {
    absl::StatusOr<runtime::Tensor> v = tensor_of(a->t(), nullptr);
    if (!v.ok()) return node_error(node, std::string(v.status().message()));
    t = *std::move(v);
  } else if (const onnx::AttributeProto* f = find_attr(node, "value_float")) {
    t = *runtime::Tensor::from_vector<float>({}, {f->f()});
  } else if (const onnx::AttributeProto* i = find_attr(node, "value_int")) {
    t = *runtime::Tensor::from_vector<int64_t>({}, {i->i()});
  } else if (const onnx::AttributeProto* is = find_attr(node, "value_ints")) {
    std::vector<int64_t> values(is->ints().begin(), is->ints().end());
    t = *runtime::Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values);
  } else if (const onnx::AttributeProto* fs = find_attr(node, "value_floats")) {
    std::vector<float> values(fs->floats().begin(), fs->floats().end());
    t = *runtime::Tensor::from_vector<float>({static_cast<int64_t>(values.size())}, values);
  } else {
    return node_error(node, "has none of the attributes value, value_float(s), value_int(s)");
  }
  Value v;
  v.scalar = t.ndim() == 0;
  v.known = known_ints(t);
  v.known_dtype = t.dtype();
  v.expr = Importer::constant(std::move(t));
  return std::vector<Value>{v};
}

Outputs convert_constant_of_shape(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<SymExpr>> shape = known_input(node, in, 0, "shape");
  if (!shape.ok()) return shape.status();
  DataType dtype = DataType::float32();
  double value = 0;
  if (const onnx::AttributeProto* a = find_attr(node, "value")) {
    absl::StatusOr<runtime::Tensor> t = tensor_of(a->t(), nullptr);
    if (!t.ok()) return node_error(node, std::string(t.status().message()));
    if (t->numel() != 1) return node_error(node, absl::StrCat("its value has ", t->numel(), " elements, not 1"));
    dtype = t->dtype();
    if (dtype == DataType::float32()) value = *static_cast<const float*>(t->data());
    else if (dtype == DataType::int64()) value = static_cast<double>(*static_cast<const int64_t*>(t->data()));
    else if (dtype == DataType::float64()) value = *static_cast<const double*>(t->data());
    else if (dtype == DataType::int32()) value = *static_cast<const int32_t*>(t->data());
    else return node_error(node, absl::StrCat("a value of dtype ", dtype.to_string(), " is not converted yet"));
  }
  return std::vector<Value>{tensor_value(im.emit(op::full(make_shape_expr(*shape), Operand(value), dtype)))};
}

Outputs convert_transpose(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  return std::vector<Value>{tensor_value(im.emit(op::permute_dims((*x)[0], op::OptionalInts(ints_attr(node, "perm")))))};
}



Outputs convert_slice(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 1); !s.ok()) return s;
  std::vector<SymExpr> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  if (im.opset() < 10) {
    std::optional<std::vector<int64_t>> st = ints_attr(node, "starts"), en = ints_attr(node, "ends");
    if (!st || !en) return node_error(node, "needs starts and ends");
    for (int64_t v : *st) starts.push_back(SymExpr(v));
    for (int64_t v : *en) ends.push_back(SymExpr(v));
    axes = ints_attr(node, "axes");
  } else {
    absl::StatusOr<std::vector<SymExpr>> st = known_input(node, in, 1, "starts");
    if (!st.ok()) return st.status();
    absl::StatusOr<std::vector<SymExpr>> en = known_input(node, in, 2, "ends");
    if (!en.ok()) return en.status();
    starts = *st;
    ends = *en;
    bool all = true;
    if (in.size() > 3 && in[3] != nullptr) {
      absl::StatusOr<std::vector<SymExpr>> a = known_input(node, in, 3, "axes");
      if (!a.ok()) return a.status();
      axes = constants_of(*a, &all);
      if (!all) return node_error(node, "its axes are not constants");
    }
    if (in.size() > 4 && in[4] != nullptr) {
      absl::StatusOr<std::vector<SymExpr>> t = known_input(node, in, 4, "steps");
      if (!t.ok()) return t.status();
      steps = constants_of(*t, &all);
      if (!all) return node_error(node, "its steps are not constants");
    }
  }
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts.size(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  // A slice of a known shape value stays known.
  if (in[0]->known && !in[0]->scalar && axes->size() == 1 && (*axes)[0] == 0 && (!steps || (*steps)[0] == 1)) {
    const auto n = static_cast<int64_t>(in[0]->known->size());
    std::optional<int64_t> b = starts[0].as_const(), e = ends[0].as_const();
    if (b && e) {
      const int64_t lo = std::clamp(*b < 0 ? *b + n : *b, int64_t{0}, n);
      const int64_t hi = std::clamp(*e < 0 ? *e + n : *e, int64_t{0}, n);
      Value v;
      v.known_dtype = in[0]->known_dtype;
      v.known = std::vector<SymExpr>(in[0]->known->begin() + lo, in[0]->known->begin() + std::max(lo, hi));
      return std::vector<Value>{v};
    }
  }
  absl::StatusOr<Expr> x = im.tensor(*in[0], node);
  if (!x.ok()) return x.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of(*x);
  // A negative step walks the axis backwards: the axis flipped, then sliced forwards from the
  // mirrored start to the mirrored end (index i of x is d - 1 - i of the flipped one).
  if (steps) {
    for (size_t i = 0; i < steps->size(); ++i) {
      if ((*steps)[i] == 0) return node_error(node, "a step of 0");
      if ((*steps)[i] > 0) continue;
      if (!dims) return node_error(node, "a negative step needs its input's dims");
      std::optional<int64_t> b = starts[i].as_const(), e = ends[i].as_const();
      if (!b || !e) return node_error(node, "a negative step needs constant starts and ends");
      const int64_t rank = static_cast<int64_t>(dims->size());
      const int64_t a = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
      if (a < 0 || a >= rank) return node_error(node, absl::StrCat("axis ", (*axes)[i], " is out of range for rank ", rank));
      const SymExpr& d = (*dims)[static_cast<size_t>(a)];
      *x = im.emit(op::flip(*x, a));
      // start: clamped to [0, d - 1]; end: clamped to [-1, d - 1] (below -d: before the first).
      starts[i] = *b < 0 ? min(SymExpr(-1 - *b), d) : max(d - 1 - *b, SymExpr(0));
      ends[i] = *e < 0 ? (*e < -(int64_t{1} << 40) ? d : min(SymExpr(-1 - *e), d)) : max(d - 1 - *e, SymExpr(0));
      (*axes)[i] = a;
      (*steps)[i] = -(*steps)[i];
    }
  }
  // ONNX clamps INT64 extremes meaning "to the end": the dim itself.
  for (size_t i = 0; i < ends.size(); ++i) {
    std::optional<int64_t> e = ends[i].as_const();
    if (e && *e >= (int64_t{1} << 40) && dims) {
      const int64_t rank = static_cast<int64_t>(dims->size());
      const int64_t a = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
      if (a >= 0 && a < rank) ends[i] = (*dims)[static_cast<size_t>(a)];
    }
  }
  return std::vector<Value>{tensor_value(im.emit(op::strided_slice(*x, *axes, starts, ends, op::OptionalInts(steps))))};
}

Outputs convert_split(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  const int64_t axis = int_attr(node, "axis", 0);
  std::optional<std::vector<int64_t>> sizes;
  if (im.opset() < 13) {
    sizes = ints_attr(node, "split");
  } else if (in.size() > 1 && in[1] != nullptr) {
    absl::StatusOr<std::vector<SymExpr>> s = known_input(node, in, 1, "split");
    if (!s.ok()) return s.status();
    bool all = false;
    sizes = constants_of(*s, &all);
    if (!all) return node_error(node, "its split sizes are not constants");
  }
  Expr parts;
  if (sizes) {
    std::vector<int64_t> points;
    int64_t at = 0;
    for (size_t i = 0; i + 1 < sizes->size(); ++i) points.push_back(at += (*sizes)[i]);
    parts = im.emit(op::split((*x)[0], points, axis));
  } else {
    parts = im.emit(op::split((*x)[0], static_cast<int64_t>(node.output_size()), axis));
  }
  std::vector<Value> out;
  for (int i = 0; i < node.output_size(); ++i) out.push_back(tensor_value(im.emit(make_tuple_get_item(parts, i))));
  return out;
}

// Expand: numpy broadcasting of x against the (known) shape, in both directions.
Outputs convert_expand(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<SymExpr>> shape = known_input(node, in, 1, "shape");
  if (!shape.ok()) return shape.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
  if (!dims) return node_error(node, "needs its input's dims");
  const size_t rank = std::max(dims->size(), shape->size());
  std::vector<SymExpr> target(rank);
  for (size_t i = 0; i < rank; ++i) {
    const size_t from_end = rank - 1 - i;
    const std::optional<SymExpr> a = from_end < dims->size() ? std::optional<SymExpr>((*dims)[dims->size() - 1 - from_end]) : std::nullopt;
    const std::optional<SymExpr> b = from_end < shape->size() ? std::optional<SymExpr>((*shape)[shape->size() - 1 - from_end]) : std::nullopt;
    target[i] = !a ? *b : !b ? *a : b->is_const(1) ? *a : *b;
  }
  return std::vector<Value>{tensor_value(im.emit(op::broadcast_to((*x)[0], target)))};
}

Outputs convert_gather_elements(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  absl::StatusOr<int64_t> axis = axis_in(node, int_attr(node, "axis", 0), Importer::rank_of((*x)[0]));
  if (!axis.ok()) return axis.status();
  return std::vector<Value>{tensor_value(im.emit(op::gather_elements((*x)[0], (*x)[1], *axis)))};
}

Outputs convert_scatter_nd(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 3);
  if (!x.ok()) return x.status();
  const std::string reduction = string_attr(node, "reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul") {
    return node_error(node, absl::StrCat("reduction `", reduction, "` is not converted (none, add and mul are)"));
  }
  return std::vector<Value>{tensor_value(im.emit(op::scatter_nd((*x)[0], (*x)[1], (*x)[2], reduction)))};
}

// Trilu: the upper (upper = 1, the default) or lower triangle of the last two dims from the k-th
// diagonal (k known at import, default 0); the rest zeroed.
Outputs convert_trilu(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  SymExpr k(0);
  if (in.size() > 1 && in[1] != nullptr) {
    absl::StatusOr<std::vector<SymExpr>> given = known_input(node, in, 1, "k");
    if (!given.ok()) return given.status();
    if (given->size() != 1) return node_error(node, absl::StrCat("k has ", given->size(), " elements, expected one"));
    k = (*given)[0];
  }
  const bool upper = int_attr(node, "upper", 1) != 0;
  return std::vector<Value>{tensor_value(im.emit(upper ? op::triu((*x)[0], make_prim_value(k)) : op::tril((*x)[0], make_prim_value(k))))};
}

Outputs convert_tile(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<SymExpr>> repeats = known_input(node, in, 1, "repeats");
  if (!repeats.ok()) return repeats.status();
  bool all = false;
  std::vector<int64_t> r = constants_of(*repeats, &all);
  if (!all) return node_error(node, "its repeats are not constants");
  return std::vector<Value>{tensor_value(im.emit(op::tile((*x)[0], r)))};
}

Outputs convert_pad(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  const std::string mode = string_attr(node, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    return node_error(node, absl::StrCat("mode ", mode, " is not an ONNX Pad mode (constant, reflect, edge, wrap)"));
  }
  std::vector<int64_t> pads;
  if (im.opset() < 11) {
    pads = ints_attr(node, "pads").value_or(std::vector<int64_t>());
  } else {
    absl::StatusOr<std::vector<SymExpr>> p = known_input(node, in, 1, "pads");
    if (!p.ok()) return p.status();
    bool all = false;
    pads = constants_of(*p, &all);
    if (!all) return node_error(node, "its pads are not constants");
  }
  double value = float_attr(node, "value", 0.0f);
  if (im.opset() >= 11 && in.size() > 2 && in[2] != nullptr) {
    if (!in[2]->expr.defined() || !in[2]->expr.as<ConstantNode>()) return node_error(node, "its constant_value is not a constant");
    const runtime::Tensor& t = in[2]->expr.as<ConstantNode>()->data;
    value = t.dtype() == DataType::float32() ? *static_cast<const float*>(t.data())
                                             : static_cast<double>(*static_cast<const int64_t*>(t.data()));
  }
  const size_t rank = pads.size() / 2;
  std::vector<int64_t> widths;
  for (size_t i = 0; i < rank; ++i) {
    if (pads[i] < 0 || pads[i + rank] < 0) return node_error(node, "negative pads (cropping) are not converted yet");
    widths.push_back(pads[i]);
    widths.push_back(pads[i + rank]);
  }
  if (mode == "constant") return std::vector<Value>{tensor_value(im.emit(op::pad((*x)[0], widths, value)))};
  // reflect: the elements next to each edge, mirrored (the edge itself not repeated); edge: the
  // edge element repeated; wrap: the other end's elements (the last `before` ahead, the first
  // `after` behind). Axis by axis, as concatenations of slices of what came before.
  Expr y = (*x)[0];
  for (size_t i = 0; i < rank; ++i) {
    const int64_t before = pads[i], after = pads[i + rank];
    if (before == 0 && after == 0) continue;
    std::optional<std::vector<SymExpr>> dims = Importer::dims_of(y);
    if (!dims || dims->size() != rank) return node_error(node, "needs its input's dims known for mode " + mode);
    const auto axis = static_cast<int64_t>(i);
    const SymExpr n = (*dims)[i];
    // A slice of `count` elements: reflect needs n > the pad (ONNX Runtime refuses less too),
    // asserted when the call runs, so that the result's dim is n + before + after.
    auto slice = [&](const SymExpr& from, const SymExpr& to) {
      Expr part = im.emit(op::strided_slice(y, {axis}, {from}, {to}));
      std::vector<SymExpr> part_dims = *dims;
      part_dims[i] = im.builder().analyzer().simplify(to - from);
      if (Importer::dims_of(part) && im.builder().analyzer().prove_equal((*Importer::dims_of(part))[i], part_dims[i])) return part;
      im.note_runtime_check(absl::StrCat(node_text(node), ": dim ", i, " (", n.to_string(), ") > ",
                                         std::max(before, after), " for mode ", mode));
      const auto* t = part.struct_info().as<TensorStructInfoNode>();
      return Expr(im.builder().match_cast(part, tensor_sinfo(part_dims, t->dtype, t->device)));
    };
    std::vector<Expr> parts;
    if (before > 0) {
      parts.push_back(mode == "reflect" ? im.emit(op::flip(slice(1, SymExpr(before + 1)), axis))
                      : mode == "wrap"  ? slice(n - before, n)
                                        : im.emit(op::repeat(slice(0, 1), before, axis)));
    }
    parts.push_back(y);
    if (after > 0) {
      parts.push_back(mode == "reflect" ? im.emit(op::flip(slice(n - (after + 1), n - 1), axis))
                      : mode == "wrap"  ? slice(0, SymExpr(after))
                                        : im.emit(op::repeat(slice(n - 1, n), after, axis)));
    }
    y = im.emit(op::concat(parts, axis));
  }
  return std::vector<Value>{tensor_value(y)};
}

Outputs convert_range(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 3); !s.ok()) return s;
  std::vector<Operand> bounds;
  for (size_t i = 0; i < 3; ++i) {
    if (in[i]->known && in[i]->known->size() == 1) {
      bounds.emplace_back(make_prim_value((*in[i]->known)[0]));
    } else if (in[i]->expr.defined() && in[i]->expr.as<ConstantNode>() &&
               in[i]->expr.as<ConstantNode>()->data.dtype() == DataType::float32()) {
      bounds.emplace_back(static_cast<double>(*static_cast<const float*>(in[i]->expr.as<ConstantNode>()->data.data())));
    } else {
      return node_error(node, "its start, limit and delta must be known at import (constants or shape values)");
    }
  }
  return std::vector<Value>{tensor_value(im.emit(op::arange(bounds[0], bounds[1], bounds[2])))};
}


// NonZero: the count of non-zero elements is known only at run time; the result is cast to
// (rank, <output>_count), a symbolic dim bound when the call runs, so that what follows is
// deduced in terms of it instead of rank only.
Outputs convert_nonzero(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  const int64_t rank = Importer::rank_of((*x)[0]);
  if (rank < 0) return node_error(node, "needs its input's rank");
  Expr y = im.emit(op::nonzero((*x)[0]));
  const SymVar count(node.output(0) + "_count");
  Expr cast = im.builder().match_cast(y, tensor_sinfo({SymExpr(rank), count}, DataType::int64()));
  im.note_data_dependent(count.name());
  return std::vector<Value>{tensor_value(cast)};
}

bool one_of(const std::string& value, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (value == name) return true;
  }
  return false;
}

// A float scale as the exact ratio num / den (den a power of two: every float is one), or
// nullopt when it is not positive or not that small.
std::optional<std::pair<int64_t, int64_t>> exact_ratio(float scale) {
  if (!(scale > 0) || !std::isfinite(scale) || scale > 1e9F) return std::nullopt;
  double num = scale;
  int64_t den = 1;
  while (num != std::floor(num)) {
    if (den >= (int64_t{1} << 30)) return std::nullopt;
    num *= 2;
    den *= 2;
  }
  return std::make_pair(static_cast<int64_t>(num), den);
}

// Resize (opsets 10-17) and Upsample (7-9): op::resize with the node's mode, coordinate
// transformation and rounding. The output dims are `sizes` when given (symbolic ones computed from
// shapes too), else floor(dim * scale) of the constant scales, exact as a ratio; the kernel maps
// coordinates with the stated scales (out / in when sizes are given), as ONNX defines.
Outputs resize_like(Importer& im, const onnx::NodeProto& node, const Inputs& in, bool upsample) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
  if (!dims) return node_error(node, "its input's dims are not known at import");
  op::ResizeOptions options;
  options.mode = string_attr(node, "mode", "nearest");
  if (options.mode == "bilinear" || options.mode == "trilinear") options.mode = "linear";  // Upsample-7's names
  const bool before11 = upsample || im.opset() < 11;
  options.coordinate_transformation_mode = before11 ? "asymmetric" : string_attr(node, "coordinate_transformation_mode", "half_pixel");
  options.nearest_mode = before11 ? "simple" : string_attr(node, "nearest_mode", "round_prefer_floor");
  options.cubic_coeff_a = float_attr(node, "cubic_coeff_a", -0.75F);
  options.exclude_outside = int_attr(node, "exclude_outside", 0) != 0;
  const std::string& ct = options.coordinate_transformation_mode;
  if (options.mode != "nearest" && options.mode != "linear" && (options.mode != "cubic" || before11)) {
    return node_error(node, absl::StrCat("mode ", options.mode, " is not an ONNX Resize mode of opset ", im.opset()));
  }
  if (ct == "tf_crop_and_resize") return node_error(node, "coordinate_transformation_mode tf_crop_and_resize: relax does not convert it (yet)");
  if (!one_of(ct, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"})) {
    return node_error(node, absl::StrCat("coordinate_transformation_mode ", ct, " is not an ONNX one"));
  }
  if (options.mode == "nearest" && !one_of(options.nearest_mode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"})) {
    return node_error(node, absl::StrCat("nearest_mode ", options.nearest_mode, " is not an ONNX one"));
  }
  // The scales: Upsample-7's attribute; else the input after X (opset 9-10) or after roi (11+).
  std::vector<float> scales;
  const size_t at = im.opset() >= 11 && !upsample ? 2 : 1;
  if (upsample && im.opset() < 9) {
    const onnx::AttributeProto* attr = find_attr(node, "scales");
    if (attr == nullptr) return node_error(node, "has no scales attribute");
    scales.assign(attr->floats().begin(), attr->floats().end());
  } else if (at < in.size() && in[at] != nullptr && in[at]->expr.defined()) {
    const auto* constant = in[at]->expr.as<ConstantNode>();
    if (constant == nullptr) return node_error(node, "its scales are computed at run time: relax needs them at import");
    const runtime::Tensor& t = constant->data;
    if (t.dtype() != DataType::float32()) return node_error(node, "its scales are not float32");
    for (int64_t i = 0; i < t.numel(); ++i) scales.push_back(static_cast<const float*>(t.data())[i]);
  }
  std::vector<SymExpr> out;
  if (!scales.empty()) {
    if (scales.size() != dims->size()) {
      return node_error(node, absl::StrCat("has ", scales.size(), " scales, expected the input's rank ", dims->size()));
    }
    for (size_t a = 0; a < scales.size(); ++a) {
      std::optional<std::pair<int64_t, int64_t>> ratio = exact_ratio(scales[a]);
      if (!ratio) return node_error(node, absl::StrCat("scale ", scales[a], " of axis ", a, " is not a positive float"));
      options.scale_num.push_back(ratio->first);
      options.scale_den.push_back(ratio->second);
      const SymExpr scaled = ratio->first == 1 ? (*dims)[a] : (*dims)[a] * ratio->first;
      out.push_back(ratio->second == 1 ? scaled : floordiv(scaled, SymExpr(ratio->second)));
    }
  } else if (at + 1 < in.size() && in[at + 1] != nullptr) {
    absl::StatusOr<std::vector<SymExpr>> sizes = known_input(node, in, at + 1, "sizes");
    if (!sizes.ok()) return sizes.status();
    if (sizes->size() != dims->size()) {
      return node_error(node, absl::StrCat("has ", sizes->size(), " sizes, expected the input's rank ", dims->size()));
    }
    out = *sizes;
  } else {
    return node_error(node, "has neither scales nor sizes");
  }
  return std::vector<Value>{tensor_value(im.emit(op::resize((*x)[0], make_shape_expr(out), std::move(options))))};
}

Outputs convert_resize(Importer& im, const onnx::NodeProto& node, const Inputs& in) { return resize_like(im, node, in, false); }
Outputs convert_upsample(Importer& im, const onnx::NodeProto& node, const Inputs& in) { return resize_like(im, node, in, true); }

}  // namespace

void add_shape_converters(const AddConverter& add) {
  add("Shape", convert_shape);
  add("Reshape", convert_reshape);
  add("Flatten", convert_flatten);
  add("Squeeze", convert_squeeze);
  add("Unsqueeze", convert_unsqueeze);
  add("Concat", convert_concat);
  add("Gather", convert_gather);
  add("Cast", convert_cast);
  add("Constant", convert_constant);
  add("ConstantOfShape", convert_constant_of_shape);
  add("GatherElements", convert_gather_elements);
  add("ScatterND", convert_scatter_nd);
  add("Transpose", convert_transpose);
  add("Trilu", convert_trilu);
  add("Slice", convert_slice);
  add("Split", convert_split);
  add("Expand", convert_expand);
  add("Tile", convert_tile);
  add("Pad", convert_pad);
  add("Range", convert_range);
  add("NonZero", convert_nonzero);
  add("Resize", convert_resize);
  add("Upsample", convert_upsample);
}

}  // namespace relax::frontend::onnx_detail
