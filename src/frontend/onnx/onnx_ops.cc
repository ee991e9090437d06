// The converter table of the ONNX importer: one row per op_type of the default domain.
//
// Shape computations are evaluated at import: an int64 value of rank 0 or 1 whose elements
// are known (a Shape of a tensor with known dims, a constant, and what Gather, Unsqueeze,
// Squeeze, Concat, Cast, Identity and integer arithmetic make of them) travels as symbolic
// expressions, and Reshape, ConstantOfShape, Unsqueeze and Squeeze read it, so that shapes
// computed from the input's dims stay expressions of those dims. Everything else becomes
// relax operators over the graph's tensors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_importer.h"
#include "relax/ir/op/conv.h"
#include "relax/ir/op/create.h"
#include "relax/ir/op/dynamic.h"
#include "relax/ir/op/elementwise.h"
#include "relax/ir/op/linalg.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/op/nn.h"
#include "relax/ir/op/reduce.h"
#include "relax/ir/struct_info.h"

namespace relax::frontend::onnx_detail {
namespace {

using Outputs = absl::StatusOr<std::vector<Value>>;
using op::Operand;
using Inputs = std::vector<const Value*>;

Value tensor_value(Expr e) { return Value{std::move(e), std::nullopt, false}; }

absl::Status need_inputs(const onnx::NodeProto& node, const Inputs& in, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (i >= in.size() || in[i] == nullptr) {
      return node_error(node, absl::StrCat("needs input ", i, ", found ", in.size(), " inputs"));
    }
  }
  return absl::OkStatus();
}

// The graph tensors of inputs [0, count).
absl::StatusOr<std::vector<Expr>> tensors(Importer& im, const onnx::NodeProto& node, const Inputs& in,
                                          size_t count) {
  if (absl::Status s = need_inputs(node, in, count); !s.ok()) return s;
  std::vector<Expr> out;
  for (size_t i = 0; i < count; ++i) {
    absl::StatusOr<Expr> e = im.tensor(*in[i], node);
    if (!e.ok()) return e.status();
    out.push_back(*e);
  }
  return out;
}

// A rank-0 constant of `dtype` holding `value` (float dtypes and int64).
absl::StatusOr<Expr> scalar(double value, DataType dtype) {
  absl::StatusOr<runtime::Tensor> t =
      dtype == DataType::float64() ? runtime::Tensor::from_vector<double>({}, {value})
      : dtype == DataType::int64() ? runtime::Tensor::from_vector<int64_t>({}, {static_cast<int64_t>(value)})
                                   : runtime::Tensor::from_vector<float>({}, {static_cast<float>(value)});
  if (!t.ok()) return t.status();
  Expr c = Importer::constant(*std::move(t));
  const bool exact = dtype == DataType::float32() || dtype == DataType::float64() || dtype == DataType::int64();
  return exact ? c : op::astype(c, dtype);
}

std::optional<DataType> dtype_of_expr(const Expr& e) {
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->dtype) return std::nullopt;
  return *t->dtype;
}

// A normalised axis of a tensor of `rank` dims.
absl::StatusOr<int64_t> axis_in(const onnx::NodeProto& node, int64_t axis, int64_t rank) {
  if (rank < 0) return axis;
  if (axis < -rank || axis >= rank) {
    return node_error(node, absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// ---- Elementwise ------------------------------------------------------------------------------

ConvertFn unary(Expr (*fn)(Expr)) {
  return [fn](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    return std::vector<Value>{tensor_value(im.emit(fn((*x)[0])))};
  };
}

// Known int64 elements combined elementwise, a rank-0 side broadcast.
std::optional<Value> known_binary(const Value& a, const Value& b, SymExpr (*fn)(const SymExpr&, const SymExpr&)) {
  if (!a.known || !b.known) return std::nullopt;
  const std::vector<SymExpr>& x = *a.known;
  const std::vector<SymExpr>& y = *b.known;
  if (x.size() != y.size() && x.size() != 1 && y.size() != 1) return std::nullopt;
  Value out;
  out.scalar = a.scalar && b.scalar;
  out.known_dtype = a.known_dtype;
  out.known.emplace();
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    out.known->push_back(fn(x[x.size() == 1 ? 0 : i], y[y.size() == 1 ? 0 : i]));
  }
  return out;
}

SymExpr sym_add(const SymExpr& a, const SymExpr& b) { return a + b; }
SymExpr sym_sub(const SymExpr& a, const SymExpr& b) { return a - b; }
SymExpr sym_mul(const SymExpr& a, const SymExpr& b) { return a * b; }
// ONNX integer division truncates; shape values are dims (not negative), where it is floordiv.
SymExpr sym_div(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> x = a.as_const(), y = b.as_const();
  if (x && y && *y != 0) return SymExpr(*x / *y);
  return floordiv(a, b);
}

ConvertFn binary(Expr (*fn)(Operand, Operand), SymExpr (*known)(const SymExpr&, const SymExpr&) = nullptr) {
  return [fn, known](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    if (absl::Status s = need_inputs(node, in, 2); !s.ok()) return s;
    if (known != nullptr) {
      if (std::optional<Value> v = known_binary(*in[0], *in[1], known)) return std::vector<Value>{*v};
    }
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
    if (!x.ok()) return x.status();
    return std::vector<Value>{tensor_value(im.emit(fn((*x)[0], (*x)[1])))};
  };
}

// Max, Min, Sum: every input folded left to right.
ConvertFn variadic(Expr (*fn)(Operand, Operand)) {
  return [fn](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, in.size());
    if (!x.ok()) return x.status();
    if (x->empty()) return node_error(node, "needs at least one input");
    Expr acc = (*x)[0];
    for (size_t i = 1; i < x->size(); ++i) acc = im.emit(fn(acc, (*x)[i]));
    return std::vector<Value>{tensor_value(acc)};
  };
}

Expr reciprocal(Expr x) {
  const std::optional<DataType> t = dtype_of_expr(x);
  absl::StatusOr<Expr> one = scalar(1.0, t.value_or(DataType::float32()));
  return op::divide(*one, x);
}

Outputs convert_where(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 3);
  if (!x.ok()) return x.status();
  return std::vector<Value>{tensor_value(im.emit(op::where((*x)[0], (*x)[1], (*x)[2])))};
}

Outputs convert_identity(Importer&, const onnx::NodeProto& node, const Inputs& in) {
  if (absl::Status s = need_inputs(node, in, 1); !s.ok()) return s;
  return std::vector<Value>{*in[0]};
}

// ---- Linear algebra ---------------------------------------------------------------------------

Outputs convert_matmul(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  return std::vector<Value>{tensor_value(im.emit(op::matmul((*x)[0], (*x)[1])))};
}

// Y = alpha * A' B' + beta * C, A' = A or its transpose (transA), B' likewise.
Outputs convert_gemm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  Expr a = (*x)[0], b = (*x)[1];
  if (int_attr(node, "transA", 0) != 0) a = im.emit(op::permute_dims(a, {1, 0}));
  if (int_attr(node, "transB", 0) != 0) b = im.emit(op::permute_dims(b, {1, 0}));
  Expr y = im.emit(op::matmul(a, b));
  const DataType t = dtype_of_expr(y).value_or(DataType::float32());
  const float alpha = float_attr(node, "alpha", 1.0f);
  if (alpha != 1.0f) {
    absl::StatusOr<Expr> s = scalar(alpha, t);
    if (!s.ok()) return s.status();
    y = im.emit(op::multiply(y, *s));
  }
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> c = im.tensor(*in[2], node);
    if (!c.ok()) return c.status();
    Expr term = *c;
    const float beta = float_attr(node, "beta", 1.0f);
    if (beta != 1.0f) {
      absl::StatusOr<Expr> s = scalar(beta, t);
      if (!s.ok()) return s.status();
      term = im.emit(op::multiply(term, *s));
    }
    y = im.emit(op::add(y, term));
  }
  return std::vector<Value>{tensor_value(y)};
}

// Softmax and LogSoftmax: from opset 13 over one axis (default -1); before, over the dims from
// `axis` (default 1) on as one, which is one axis when it is the last.
ConvertFn softmax_like(Expr (*fn)(Expr, int64_t)) {
  return [fn](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    const int64_t rank = Importer::rank_of((*x)[0]);
    absl::StatusOr<int64_t> axis = axis_in(node, int_attr(node, "axis", im.opset() >= 13 ? -1 : 1), rank);
    if (!axis.ok()) return axis.status();
    if (im.opset() < 13 && (rank < 0 || *axis != rank - 1)) {
      // Before opset 13 the dims from `axis` on are one: flattened to 2-D, normalised, put back.
      std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
      if (!dims) return node_error(node, "needs its input's dims (before opset 13 it flattens them from axis on)");
      SymExpr outer(1), inner(1);
      for (int64_t i = 0; i < rank; ++i) (i < *axis ? outer : inner) = (i < *axis ? outer : inner) * (*dims)[static_cast<size_t>(i)];
      Expr flat = im.emit(op::reshape((*x)[0], std::vector<SymExpr>{outer, inner}));
      return std::vector<Value>{tensor_value(im.emit(op::reshape(im.emit(fn(flat, 1)), *dims)))};
    }
    return std::vector<Value>{tensor_value(im.emit(fn((*x)[0], *axis)))};
  };
}

// ---- Shapes -----------------------------------------------------------------------------------

// The int64 elements of a shape input known at import (a constant or a computed shape).
absl::StatusOr<std::vector<SymExpr>> known_input(const onnx::NodeProto& node, const Inputs& in, size_t i,
                                                 std::string_view what) {
  if (i >= in.size() || in[i] == nullptr) return node_error(node, absl::StrCat("needs its ", std::string(what)));
  if (!in[i]->known) {
    return node_error(node, absl::StrCat("its ", std::string(what),
                                         " is computed from tensor data at run time; relax needs it known at import "
                                         "(a constant or a computation on shapes)"));
  }
  return *in[i]->known;
}

std::vector<int64_t> constants_of(const std::vector<SymExpr>& dims, bool* all) {
  std::vector<int64_t> out;
  *all = true;
  for (const SymExpr& d : dims) {
    std::optional<int64_t> c = d.as_const();
    *all = *all && c.has_value();
    out.push_back(c.value_or(0));
  }
  return out;
}

Outputs convert_shape(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
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
  return std::vector<Value>{tensor_value(im.emit(op::concat(*x, int_attr(node, "axis", 0))))};
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
  if (in[0]->known && (*to == DataType::int64() || *to == DataType::int32())) {
    Value v = *in[0];
    v.expr = Expr();
    v.known_dtype = *to;
    return std::vector<Value>{v};
  }
  absl::StatusOr<Expr> x = im.tensor(*in[0], node);
  if (!x.ok()) return x.status();
  return std::vector<Value>{tensor_value(im.emit(op::astype(*x, *to)))};
}

Outputs convert_constant(Importer&, const onnx::NodeProto& node, const Inputs&) {
  runtime::Tensor t;
  if (const onnx::AttributeProto* a = find_attr(node, "value")) {
    absl::StatusOr<runtime::Tensor> v = tensor_of(a->t(), "");
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
  if ((t.dtype() == DataType::int64() || t.dtype() == DataType::int32()) && t.ndim() <= 1 && t.numel() <= 64) {
    v.known_dtype = t.dtype();
    v.known.emplace();
    for (int64_t k = 0; k < t.numel(); ++k) {
      v.known->push_back(SymExpr(t.dtype() == DataType::int64() ? static_cast<const int64_t*>(t.data())[k]
                                                                : static_cast<const int32_t*>(t.data())[k]));
    }
  }
  v.expr = Importer::constant(std::move(t));
  return std::vector<Value>{v};
}

Outputs convert_constant_of_shape(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<SymExpr>> shape = known_input(node, in, 0, "shape");
  if (!shape.ok()) return shape.status();
  DataType dtype = DataType::float32();
  double value = 0;
  if (const onnx::AttributeProto* a = find_attr(node, "value")) {
    absl::StatusOr<runtime::Tensor> t = tensor_of(a->t(), "");
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


// ---- Convolution and pooling (1-D and 2-D, NC...) ---------------------------------------------

// The spatial dims of a (N, C, ...) tensor, when constant (auto_pad SAME needs them).
std::optional<std::vector<int64_t>> constant_spatial(const Expr& x) {
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of(x);
  if (!dims || dims->size() < 3) return std::nullopt;
  std::vector<int64_t> out;
  for (size_t i = 2; i < dims->size(); ++i) {
    std::optional<int64_t> c = (*dims)[i].as_const();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

// A window's geometry: kernel, strides, dilations and pads (every dim's before, then after),
// auto_pad resolved.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool symmetric() const {
    const size_t n = kernel.size();
    for (size_t i = 0; i < n; ++i) {
      if (pads[i] != pads[i + n]) return false;
    }
    return true;
  }
  std::vector<int64_t> before() const { return std::vector<int64_t>(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(kernel.size())); }
};

absl::StatusOr<Window> window_of(const onnx::NodeProto& node, const Expr& x, std::vector<int64_t> kernel) {
  const size_t n = kernel.size();
  Window w;
  w.kernel = std::move(kernel);
  w.strides = ints_attr(node, "strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = ints_attr(node, "dilations").value_or(std::vector<int64_t>(n, 1));
  w.pads = ints_attr(node, "pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || w.pads.size() != 2 * n) {
    return node_error(node, absl::StrCat("strides, dilations and pads must have ", n, ", ", n, " and ", 2 * n,
                                         " values for a ", n, "-D window"));
  }
  const std::string auto_pad = string_attr(node, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    std::optional<std::vector<int64_t>> spatial = constant_spatial(x);
    if (!spatial) return node_error(node, absl::StrCat("auto_pad ", auto_pad, " needs the input's spatial dims known"));
    for (size_t i = 0; i < n; ++i) {
      const int64_t out = ((*spatial)[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - (*spatial)[i]);
      const int64_t small = total / 2, large = total - small;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads[i + n] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "NOTSET") {
    return node_error(node, absl::StrCat("auto_pad ", auto_pad, " is not NOTSET, VALID, SAME_UPPER or SAME_LOWER"));
  }
  return w;
}

// `x` padded explicitly by the window's pads (when a relax window takes only symmetric ones).
Expr padded(Importer& im, const Expr& x, const Window& w, double value) {
  const size_t n = w.kernel.size();
  std::vector<int64_t> widths = {0, 0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    widths.push_back(w.pads[i]);
    widths.push_back(w.pads[i + n]);
  }
  return im.emit(op::pad(x, widths, value));
}

Outputs convert_conv(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  Expr data = (*x)[0];
  const Expr& weight = (*x)[1];
  const int64_t rank = Importer::rank_of(weight);
  if (rank != 3 && rank != 4) return node_error(node, absl::StrCat("a weight of rank ", rank, ": relax converts 1-D and 2-D Conv"));
  std::optional<std::vector<SymExpr>> wdims = Importer::dims_of(weight);
  std::vector<int64_t> kernel;
  if (std::optional<std::vector<int64_t>> k = ints_attr(node, "kernel_shape")) {
    kernel = *k;
  } else {
    bool all = false;
    if (wdims) kernel = constants_of(std::vector<SymExpr>(wdims->begin() + 2, wdims->end()), &all);
    if (!all) return node_error(node, "needs kernel_shape or a weight of constant spatial dims");
  }
  absl::StatusOr<Window> w = window_of(node, data, kernel);
  if (!w.ok()) return w.status();
  std::vector<int64_t> padding = w->before();
  if (!w->symmetric()) {
    data = padded(im, data, *w, 0.0);
    std::fill(padding.begin(), padding.end(), 0);
  }
  const int64_t groups = int_attr(node, "group", 1);
  std::optional<Expr> bias;
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> b = im.tensor(*in[2], node);
    if (!b.ok()) return b.status();
    bias = *b;
  }
  Expr y = rank == 3 ? (bias ? op::conv1d(data, weight, *bias, w->strides, padding, w->dilations, groups)
                             : op::conv1d(data, weight, w->strides, padding, w->dilations, groups))
                     : (bias ? op::conv2d(data, weight, *bias, w->strides, padding, w->dilations, groups)
                             : op::conv2d(data, weight, w->strides, padding, w->dilations, groups));
  return std::vector<Value>{tensor_value(im.emit(y))};
}

// MaxPool and AveragePool over 2-D windows (floor mode).
ConvertFn pool(bool is_max) {
  return [is_max](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    Expr data = (*x)[0];
    std::optional<std::vector<int64_t>> kernel = ints_attr(node, "kernel_shape");
    if (!kernel || kernel->size() != 2) return node_error(node, "relax converts 2-D pools (kernel_shape of two values)");
    if (int_attr(node, "ceil_mode", 0) != 0) return node_error(node, "ceil_mode 1 is not converted yet");
    if (node.output_size() > 1) return node_error(node, "the Indices output of MaxPool is not converted");
    absl::StatusOr<Window> w = window_of(node, data, *kernel);
    if (!w.ok()) return w.status();
    std::vector<int64_t> padding = w->before();
    const bool include_pad = int_attr(node, "count_include_pad", 0) != 0;
    if (!w->symmetric()) {
      if (!is_max && !include_pad) return node_error(node, "uneven pads of an AveragePool that excludes them are not converted yet");
      data = padded(im, data, *w, is_max ? -std::numeric_limits<double>::infinity() : 0.0);
      std::fill(padding.begin(), padding.end(), 0);
    }
    Expr y = is_max ? op::max_pool2d(data, *kernel, w->strides, padding, w->dilations)
                    : op::avg_pool2d(data, *kernel, w->strides, padding, w->dilations, include_pad);
    return std::vector<Value>{tensor_value(im.emit(y))};
  };
}

// GlobalAveragePool and GlobalMaxPool: over every spatial dim, kept as 1.
ConvertFn global_pool(bool is_max) {
  return [is_max](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    const int64_t rank = Importer::rank_of((*x)[0]);
    if (rank < 3) return node_error(node, absl::StrCat("an input of rank ", rank, ", not (N, C, ...)"));
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
    Expr y = is_max ? op::max((*x)[0], axes, true) : op::mean((*x)[0], axes, true);
    return std::vector<Value>{tensor_value(im.emit(y))};
  };
}

// ---- Normalization ----------------------------------------------------------------------------

Outputs convert_batch_norm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 5);
  if (!x.ok()) return x.status();
  if (int_attr(node, "training_mode", 0) != 0 || node.output_size() > 1) {
    return node_error(node, "training mode (the running statistics as outputs) is not converted");
  }
  const double eps = float_attr(node, "epsilon", 1e-5f);
  return std::vector<Value>{tensor_value(im.emit(op::batch_norm((*x)[0], (*x)[1], (*x)[2], (*x)[3], (*x)[4], 1, eps)))};
}

Outputs convert_layer_norm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  if (node.output_size() > 1) return node_error(node, "the Mean and InvStdDev outputs are not converted");
  const int64_t rank = Importer::rank_of((*x)[0]);
  absl::StatusOr<int64_t> axis = axis_in(node, int_attr(node, "axis", -1), rank);
  if (!axis.ok()) return axis.status();
  if (rank < 0) return node_error(node, "needs its input's rank");
  std::vector<int64_t> axes;
  for (int64_t i = *axis; i < rank; ++i) axes.push_back(i);
  Expr beta;
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> b = im.tensor(*in[2], node);
    if (!b.ok()) return b.status();
    beta = *b;
  } else {
    beta = im.emit(op::zeros_like((*x)[1]));
  }
  const double eps = float_attr(node, "epsilon", 1e-5f);
  return std::vector<Value>{tensor_value(im.emit(op::layer_norm((*x)[0], (*x)[1], beta, axes, eps)))};
}

// ---- Reductions -------------------------------------------------------------------------------

// ReduceSum (axes an input from opset 13), ReduceMean/Max/Min/Prod (an attribute up to 17).
ConvertFn reduction(Expr (*fn)(Expr, op::OptionalInts, bool), bool axes_input_from_13) {
  return [fn, axes_input_from_13](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    std::optional<std::vector<int64_t>> axes;
    if (axes_input_from_13 && im.opset() >= 13) {
      if (in.size() > 1 && in[1] != nullptr) {
        absl::StatusOr<std::vector<SymExpr>> known = known_input(node, in, 1, "axes");
        if (!known.ok()) return known.status();
        bool all = false;
        axes = constants_of(*known, &all);
        if (!all) return node_error(node, "its axes are not constants");
      }
    } else {
      axes = ints_attr(node, "axes");
    }
    const bool keepdims = int_attr(node, "keepdims", 1) != 0;
    if (axes && axes->empty()) axes.reset();
    if (!axes && int_attr(node, "noop_with_empty_axes", 0) != 0) return std::vector<Value>{tensor_value((*x)[0])};
    return std::vector<Value>{tensor_value(im.emit(fn((*x)[0], op::OptionalInts(axes), keepdims)))};
  };
}

ConvertFn arg_reduction(Expr (*fn)(Expr, std::optional<int64_t>, bool)) {
  return [fn](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    if (int_attr(node, "select_last_index", 0) != 0) return node_error(node, "select_last_index 1 is not converted yet");
    const bool keepdims = int_attr(node, "keepdims", 1) != 0;
    return std::vector<Value>{tensor_value(im.emit(fn((*x)[0], int_attr(node, "axis", 0), keepdims)))};
  };
}

Outputs convert_cumsum(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  if (int_attr(node, "exclusive", 0) != 0 || int_attr(node, "reverse", 0) != 0) {
    return node_error(node, "exclusive and reverse sums are not converted yet");
  }
  absl::StatusOr<std::vector<SymExpr>> axis = known_input(node, in, 1, "axis");
  if (!axis.ok()) return axis.status();
  if (axis->size() != 1 || !(*axis)[0].as_const()) return node_error(node, "its axis is not one constant");
  return std::vector<Value>{tensor_value(im.emit(op::cumsum((*x)[0], *(*axis)[0].as_const())))};
}

// ---- More shape and layout --------------------------------------------------------------------


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
  if (mode != "constant") return node_error(node, absl::StrCat("mode ", mode, " is not converted yet (constant is)"));
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
  return std::vector<Value>{tensor_value(im.emit(op::pad((*x)[0], widths, value)))};
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

// Clip: bounds as attributes (before opset 11) or constant inputs.
Outputs convert_clip(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (im.opset() < 11) {
    lo = float_attr(node, "min", -std::numeric_limits<float>::infinity());
    hi = float_attr(node, "max", std::numeric_limits<float>::infinity());
    return std::vector<Value>{tensor_value(im.emit(op::clip((*x)[0], lo, hi)))};
  }
  Expr y = (*x)[0];
  for (size_t i = 1; i <= 2; ++i) {
    if (i >= in.size() || in[i] == nullptr) continue;
    absl::StatusOr<Expr> bound = im.tensor(*in[i], node);
    if (!bound.ok()) return bound.status();
    y = im.emit(i == 1 ? op::maximum(y, *bound) : op::minimum(y, *bound));  // tensor bounds too
  }
  return std::vector<Value>{tensor_value(y)};
}

// HardSigmoid: max(0, min(1, alpha * x + beta)); HardSwish: x * HardSigmoid(x) with 1/6, 1/2.
ConvertFn hard_sigmoid(bool swish) {
  return [swish](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    const DataType t = dtype_of_expr((*x)[0]).value_or(DataType::float32());
    const double alpha = swish ? 1.0 / 6 : float_attr(node, "alpha", 0.2f);
    const double beta = swish ? 0.5 : float_attr(node, "beta", 0.5f);
    absl::StatusOr<Expr> a = scalar(alpha, t), b = scalar(beta, t);
    if (!a.ok() || !b.ok()) return node_error(node, "a scalar of its dtype");
    Expr y = im.emit(op::add(im.emit(op::multiply((*x)[0], *a)), *b));
    y = im.emit(op::clip(y, 0.0, 1.0));
    if (swish) y = im.emit(op::multiply((*x)[0], y));
    return std::vector<Value>{tensor_value(y)};
  };
}


// ---- Quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger) ----

// `scale` (a scalar or a vector along `axis` of a rank-`rank` tensor) shaped to broadcast.
absl::StatusOr<Expr> along_axis(Importer& im, const onnx::NodeProto& node, const Expr& scale, int64_t axis, int64_t rank) {
  if (Importer::rank_of(scale) != 1) return scale;
  absl::StatusOr<int64_t> a = axis_in(node, axis, rank);
  if (!a.ok()) return a.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of(scale);
  if (!dims) return node_error(node, "needs its scale's length");
  std::vector<SymExpr> shape(static_cast<size_t>(rank), SymExpr(1));
  shape[static_cast<size_t>(*a)] = (*dims)[0];
  return im.emit(op::reshape(scale, shape));
}

// The range of a quantized dtype.
std::pair<double, double> quantized_range(DataType t) {
  return t.code == DataType::Code::kUInt ? std::pair<double, double>(0, 255) : std::pair<double, double>(-128, 127);
}

Outputs convert_quantize_linear(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  const int64_t rank = Importer::rank_of((*x)[0]);
  absl::StatusOr<Expr> scale = along_axis(im, node, (*x)[1], int_attr(node, "axis", 1), rank);
  if (!scale.ok()) return scale.status();
  DataType q = DataType{DataType::Code::kUInt, 8, 1};
  Expr y = im.emit(op::round(im.emit(op::divide((*x)[0], *scale))));
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> zp = im.tensor(*in[2], node);
    if (!zp.ok()) return zp.status();
    q = dtype_of_expr(*zp).value_or(q);
    absl::StatusOr<Expr> z = along_axis(im, node, *zp, int_attr(node, "axis", 1), rank);
    if (!z.ok()) return z.status();
    y = im.emit(op::add(y, im.emit(op::astype(*z, dtype_of_expr(y).value_or(DataType::float32())))));
  }
  if (q != DataType{DataType::Code::kUInt, 8, 1} && q != DataType{DataType::Code::kInt, 8, 1}) {
    return node_error(node, absl::StrCat("quantizes to ", q.to_string(), "; relax converts uint8 and int8"));
  }
  const auto [lo, hi] = quantized_range(q);
  return std::vector<Value>{tensor_value(im.emit(op::astype(im.emit(op::clip(y, lo, hi)), q)))};
}

Outputs convert_dequantize_linear(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  const int64_t rank = Importer::rank_of((*x)[0]);
  const DataType f = dtype_of_expr((*x)[1]).value_or(DataType::float32());
  Expr v = im.emit(op::astype((*x)[0], f));
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> zp = im.tensor(*in[2], node);
    if (!zp.ok()) return zp.status();
    absl::StatusOr<Expr> z = along_axis(im, node, im.emit(op::astype(*zp, f)), int_attr(node, "axis", 1), rank);
    if (!z.ok()) return z.status();
    v = im.emit(op::subtract(v, *z));
  }
  absl::StatusOr<Expr> scale = along_axis(im, node, (*x)[1], int_attr(node, "axis", 1), rank);
  if (!scale.ok()) return scale.status();
  return std::vector<Value>{tensor_value(im.emit(op::multiply(v, *scale)))};
}

// y = saturate(round(x / s) + zp) with s = (max(0, max x) - min(0, min x)) / 255 and
// zp = saturate(round(-min(0, min x) / s)), uint8; the three outputs.
Outputs convert_dynamic_quantize_linear(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  const Expr& v = (*x)[0];
  absl::StatusOr<Expr> zero = scalar(0.0, DataType::float32()), range = scalar(255.0, DataType::float32());
  if (!zero.ok() || !range.ok()) return node_error(node, "constants");
  Expr hi = im.emit(op::maximum(im.emit(op::max(v)), *zero));
  Expr lo = im.emit(op::minimum(im.emit(op::min(v)), *zero));
  Expr scale = im.emit(op::divide(im.emit(op::subtract(hi, lo)), *range));
  Expr zp_float = im.emit(op::clip(im.emit(op::round(im.emit(op::divide(im.emit(op::neg(lo)), scale)))), 0, 255));
  const DataType u8{DataType::Code::kUInt, 8, 1};
  Expr y = im.emit(op::add(im.emit(op::round(im.emit(op::divide(v, scale)))), zp_float));
  y = im.emit(op::astype(im.emit(op::clip(y, 0, 255)), u8));
  return std::vector<Value>{tensor_value(y), tensor_value(scale), tensor_value(im.emit(op::astype(zp_float, u8)))};
}

Outputs convert_matmul_integer(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  std::vector<Expr> sides;
  for (size_t i = 0; i < 2; ++i) {
    Expr side = im.emit(op::astype((*x)[i], DataType::int32()));
    if (in.size() > 2 + i && in[2 + i] != nullptr) {
      absl::StatusOr<Expr> zp = im.tensor(*in[2 + i], node);
      if (!zp.ok()) return zp.status();
      if (Importer::rank_of(*zp) > 0) {
        // a's zero point per row (M,) and b's per column (N,): the matching broadcast.
        std::optional<std::vector<SymExpr>> d = Importer::dims_of(*zp);
        if (!d) return node_error(node, "needs its zero points' lengths");
        Expr shaped = i == 0 ? im.emit(op::reshape(*zp, std::vector<SymExpr>{(*d)[0], SymExpr(1)})) : *zp;
        side = im.emit(op::subtract(side, im.emit(op::astype(shaped, DataType::int32()))));
      } else {
        side = im.emit(op::subtract(side, im.emit(op::astype(*zp, DataType::int32()))));
      }
    }
    sides.push_back(side);
  }
  return std::vector<Value>{tensor_value(im.emit(op::matmul(sides[0], sides[1], DataType::int32())))};
}

Outputs convert_instance_norm(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 3);
  if (!x.ok()) return x.status();
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
  std::optional<int64_t> channels = dims && dims->size() >= 3 ? (*dims)[1].as_const() : std::nullopt;
  if (!channels) return node_error(node, "needs a constant channel dim (dim 1)");
  const double eps = float_attr(node, "epsilon", 1e-5f);
  return std::vector<Value>{tensor_value(im.emit(op::group_norm((*x)[0], (*x)[1], (*x)[2], *channels, eps)))};
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

// ConvTranspose (2-D; data NCHW, weight IOHW): uneven pads crop the full output explicitly.
Outputs convert_conv_transpose(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
  if (!x.ok()) return x.status();
  if (Importer::rank_of((*x)[1]) != 4) return node_error(node, "relax converts 2-D ConvTranspose (a weight of rank 4)");
  if (find_attr(node, "output_shape") != nullptr) return node_error(node, "output_shape is not converted yet (give pads)");
  const std::string auto_pad = string_attr(node, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return node_error(node, absl::StrCat("auto_pad ", auto_pad, " is not converted yet"));
  const std::vector<int64_t> strides = ints_attr(node, "strides").value_or(std::vector<int64_t>{1, 1});
  const std::vector<int64_t> dilations = ints_attr(node, "dilations").value_or(std::vector<int64_t>{1, 1});
  const std::vector<int64_t> output_padding = ints_attr(node, "output_padding").value_or(std::vector<int64_t>{0, 0});
  std::vector<int64_t> pads = ints_attr(node, "pads").value_or(std::vector<int64_t>{0, 0, 0, 0});
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  if (strides.size() != 2 || dilations.size() != 2 || output_padding.size() != 2 || pads.size() != 4) {
    return node_error(node, "strides, dilations and output_padding take 2 values, pads 4");
  }
  std::optional<Expr> bias;
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> b = im.tensor(*in[2], node);
    if (!b.ok()) return b.status();
    bias = *b;
  }
  const bool even = pads[0] == pads[2] && pads[1] == pads[3];
  const std::vector<int64_t> padding = even ? std::vector<int64_t>{pads[0], pads[1]} : std::vector<int64_t>{0, 0};
  Expr y = im.emit(op::conv2d_transpose((*x)[0], (*x)[1], bias, strides, padding, output_padding, dilations,
                                        int_attr(node, "group", 1)));
  if (!even) {
    std::optional<std::vector<SymExpr>> dims = Importer::dims_of(y);
    if (!dims) return node_error(node, "uneven pads need the output's dims");
    y = im.emit(op::strided_slice(y, {2, 3}, {SymExpr(pads[0]), SymExpr(pads[1])},
                                  {(*dims)[2] - pads[2], (*dims)[3] - pads[3]}));
  }
  return std::vector<Value>{tensor_value(y)};
}

// Resize: nearest with integer scales and asymmetric coordinates rounded down is each element
// repeated `scale` times along its axis (numpy.repeat); other modes are refused naming the node.
Outputs convert_resize(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
  if (!x.ok()) return x.status();
  const std::string mode = string_attr(node, "mode", "nearest");
  const std::string coordinates = string_attr(node, "coordinate_transformation_mode", "half_pixel");
  const std::string nearest = string_attr(node, "nearest_mode", "round_prefer_floor");
  if (mode != "nearest" || coordinates != "asymmetric" || nearest != "floor") {
    return node_error(node, absl::StrCat("mode ", mode, ", coordinate_transformation_mode ", coordinates, ", nearest_mode ",
                                         nearest, ": relax converts nearest, asymmetric, floor (yet)"));
  }
  // The scales: an input (opset 11+: roi, scales, sizes; opset 10: scales) of constants.
  const size_t at = im.opset() >= 11 ? 2 : 1;
  std::vector<double> scales;
  if (at < in.size() && in[at] != nullptr && in[at]->expr.defined() && in[at]->expr.as<ConstantNode>()) {
    const runtime::Tensor& t = in[at]->expr.as<ConstantNode>()->data;
    if (t.dtype() != DataType::float32()) return node_error(node, "its scales are not float32");
    for (int64_t i = 0; i < t.numel(); ++i) scales.push_back(static_cast<const float*>(t.data())[i]);
  }
  std::optional<std::vector<SymExpr>> dims = Importer::dims_of((*x)[0]);
  if (scales.empty() && at + 1 < in.size() && in[at + 1] != nullptr && in[at + 1]->known && dims) {
    // sizes: each a whole multiple of the input dim.
    for (size_t i = 0; i < in[at + 1]->known->size(); ++i) {
      std::optional<int64_t> want = (*in[at + 1]->known)[i].as_const(), have = (*dims)[i].as_const();
      if (!want || !have || *have == 0 || *want % *have != 0) return node_error(node, "its sizes are not constant multiples of the input's dims");
      scales.push_back(static_cast<double>(*want / *have));
    }
  }
  if (scales.empty()) return node_error(node, "needs constant scales (or sizes)");
  Expr y = (*x)[0];
  for (size_t axis = 0; axis < scales.size(); ++axis) {
    const double s = scales[axis];
    if (s == 1.0) continue;
    if (s < 1.0 || s != std::floor(s)) return node_error(node, absl::StrCat("a scale of ", s, ": relax converts whole scales (yet)"));
    y = im.emit(op::repeat(y, static_cast<int64_t>(s), static_cast<int64_t>(axis)));
  }
  return std::vector<Value>{tensor_value(y)};
}

// ---- The table --------------------------------------------------------------------------------

const std::map<std::string_view, OpConverter>& table() {
  static const auto* rows = [] {
    auto* m = new std::map<std::string_view, OpConverter>();
    auto add = [&](std::string_view op_type, ConvertFn fn) { m->emplace(op_type, OpConverter{op_type, std::move(fn)}); };
    add("Abs", unary(op::abs));
    add("Ceil", unary(op::ceil));
    add("Erf", unary(op::erf));
    add("Exp", unary(op::exp));
    add("Floor", unary(op::floor));
    add("Log", unary(op::log));
    add("Neg", unary(op::neg));
    add("Not", unary(op::logical_not));
    add("Reciprocal", unary(reciprocal));
    add("Relu", unary(op::relu));
    add("Sigmoid", unary(op::sigmoid));
    add("Sqrt", unary(op::sqrt));
    add("Tanh", unary(op::tanh));
    add("Identity", convert_identity);
    add("Add", binary(op::add, sym_add));
    add("Sub", binary(op::subtract, sym_sub));
    add("Mul", binary(op::multiply, sym_mul));
    add("Div", binary(op::divide, sym_div));
    add("Pow", binary(op::power));
    add("Equal", binary(op::equal));
    add("Less", binary(op::less));
    add("LessOrEqual", binary(op::less_equal));
    add("Greater", binary(op::greater));
    add("GreaterOrEqual", binary(op::greater_equal));
    add("And", binary(op::logical_and));
    add("Or", binary(op::logical_or));
    add("Max", variadic(op::maximum));
    add("Min", variadic(op::minimum));
    add("Sum", variadic(op::add));
    add("Where", convert_where);
    add("MatMul", convert_matmul);
    add("Gemm", convert_gemm);
    add("Softmax", softmax_like(op::softmax));
    add("LogSoftmax", softmax_like(op::log_softmax));
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
    add("Transpose", convert_transpose);
    add("Conv", convert_conv);
    add("MaxPool", pool(true));
    add("AveragePool", pool(false));
    add("GlobalAveragePool", global_pool(false));
    add("GlobalMaxPool", global_pool(true));
    add("BatchNormalization", convert_batch_norm);
    add("LayerNormalization", convert_layer_norm);
    add("ReduceSum", reduction(op::sum, true));
    add("ReduceMean", reduction(op::mean, false));
    add("ReduceMax", reduction(op::max, false));
    add("ReduceMin", reduction(op::min, false));
    add("ReduceProd", reduction(op::prod, false));
    add("ArgMax", arg_reduction(op::argmax));
    add("ArgMin", arg_reduction(op::argmin));
    add("CumSum", convert_cumsum);
    add("Slice", convert_slice);
    add("Split", convert_split);
    add("Expand", convert_expand);
    add("Tile", convert_tile);
    add("Pad", convert_pad);
    add("Range", convert_range);
    add("Clip", convert_clip);
    add("HardSigmoid", hard_sigmoid(false));
    add("HardSwish", hard_sigmoid(true));
    add("QuantizeLinear", convert_quantize_linear);
    add("DequantizeLinear", convert_dequantize_linear);
    add("DynamicQuantizeLinear", convert_dynamic_quantize_linear);
    add("MatMulInteger", convert_matmul_integer);
    add("InstanceNormalization", convert_instance_norm);
    add("NonZero", convert_nonzero);
    add("ConvTranspose", convert_conv_transpose);
    add("Resize", convert_resize);
    return m;
  }();
  return *rows;
}

}  // namespace

const OpConverter* find_converter(std::string_view op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> out;
  for (const auto& [name, row] : table()) out.emplace_back(name);
  return out;
}

}  // namespace relax::frontend::onnx_detail
