// The converter table of the ONNX importer (onnx_importer.h): one row per op_type of the default
// domain, the families' rows added by their files; here, what the converters share, and the
// elementwise and linear-algebra rows. Elementwise integer arithmetic on shape values known at
// import (Add, Sub, Mul, Div) stays symbolic.
#include <map>

#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_importer.h"
#include "relax/ir/op/elementwise.h"
#include "relax/ir/op/linalg.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/op/nn.h"
#include "relax/ir/op/reduce.h"
#include "relax/ir/struct_info.h"
#include "relax/support/check.h"

namespace relax::frontend::onnx_detail {

absl::Status need_inputs(const onnx::NodeProto& node, const Inputs& in, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (i >= in.size() || in[i] == nullptr) {
      return node_error(node, absl::StrCat("needs input ", i, ", found ", in.size(), " inputs"));
    }
  }
  return absl::OkStatus();
}

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

Expr scalar(double value, DataType dtype) {
  // float64 and int64 as such, every other dtype from a float32 constant (a cast the graph folds).
  absl::StatusOr<runtime::Tensor> t =
      dtype == DataType::float64() ? runtime::Tensor::from_vector<double>({}, {value})
      : dtype == DataType::int64() ? runtime::Tensor::from_vector<int64_t>({}, {static_cast<int64_t>(value)})
                                   : runtime::Tensor::from_vector<float>({}, {static_cast<float>(value)});
  RELAX_CHECK(t.ok()) << "a rank-0 tensor: " << t.status();
  Expr c = Importer::constant(*std::move(t));
  const bool exact = dtype == DataType::float32() || dtype == DataType::float64() || dtype == DataType::int64();
  return exact ? c : op::astype(c, dtype);
}

std::optional<DataType> dtype_of_expr(const Expr& e) {
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->dtype) return std::nullopt;
  return *t->dtype;
}

absl::StatusOr<int64_t> axis_in(const onnx::NodeProto& node, int64_t axis, int64_t rank) {
  if (rank < 0) return axis;
  if (axis < -rank || axis >= rank) {
    return node_error(node, absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

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

std::vector<Expr> broadcast_checked(Importer& im, const onnx::NodeProto& node, std::vector<Expr> operands) {
  return dims_checked(im, node, std::move(operands), std::nullopt);
}

std::vector<Expr> dims_checked(Importer& im, const onnx::NodeProto& node, std::vector<Expr> operands,
                               std::optional<int64_t> concat_axis) {
  std::vector<std::vector<SymExpr>> dims;
  size_t rank = 0;
  for (const Expr& e : operands) {
    std::optional<std::vector<SymExpr>> d = Importer::dims_of(e);
    if (!d) return operands;  // a rank-only operand: deduction decides
    rank = std::max(rank, d->size());
    dims.push_back(*std::move(d));
  }
  Analyzer& analyzer = im.builder().analyzer();
  std::vector<bool> changed(operands.size(), false);
  std::vector<std::string> checks;
  if (concat_axis) {
    // A concatenation: operands of one rank, every dim but the axis equal (no 1 broadcasts).
    for (const std::vector<SymExpr>& d : dims) {
      if (d.size() != rank || *concat_axis < 0 || *concat_axis >= static_cast<int64_t>(rank)) return operands;
    }
  }
  const bool ones_broadcast = !concat_axis;
  for (size_t k = 0; k < rank; ++k) {
    if (concat_axis && k == rank - 1 - static_cast<size_t>(*concat_axis)) continue;
    // Dim k from the right of every operand that has it; the reference is the shortest one that
    // is not 1 (`n` rather than `min(1500, n)`).
    auto at = [&](size_t i) -> SymExpr* {
      return dims[i].size() > k ? &dims[i][dims[i].size() - 1 - k] : nullptr;
    };
    std::optional<SymExpr> ref;
    for (size_t i = 0; i < operands.size(); ++i) {
      const SymExpr* d = at(i);
      if (d == nullptr || (ones_broadcast && d->is_const(1))) continue;
      if (!ref || d->to_string().size() < ref->to_string().size()) ref = *d;
    }
    if (!ref) continue;
    for (size_t i = 0; i < operands.size(); ++i) {
      SymExpr* d = at(i);
      if (d == nullptr || (ones_broadcast && d->is_const(1)) || analyzer.prove_equal(*d, *ref)) continue;
      // Provably unequal: deduction reports it. Otherwise equal is asserted, so a dim that is 1
      // only at run time is an error there, not the broadcast ONNX would make of it.
      if (analyzer.prove(*d != *ref)) continue;
      checks.push_back(absl::StrCat(d->to_string(), " == ", ref->to_string()));
      *d = *ref;
      changed[i] = true;
    }
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!changed[i]) continue;
    const auto* t = operands[i].struct_info().as<TensorStructInfoNode>();
    operands[i] = im.builder().match_cast(operands[i], tensor_sinfo(dims[i], t->dtype, t->device));
  }
  for (std::string& c : checks) im.note_runtime_check(absl::StrCat(node_text(node), ": ", c));
  return operands;
}

namespace {

using op::Operand;

// ---- Elementwise ------------------------------------------------------------------------------

ConvertFn unary(Expr (*fn)(Expr)) {
  return [fn](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 1);
    if (!x.ok()) return x.status();
    return std::vector<Value>{tensor_value(im.emit(fn((*x)[0])))};
  };
}

// Known integer elements combined elementwise, a rank-0 side broadcast; a comparison's are bool.
std::optional<Value> known_binary(const Value& a, const Value& b, SymExpr (*fn)(const SymExpr&, const SymExpr&),
                                  bool compare) {
  if (!a.known || !b.known) return std::nullopt;
  const std::vector<SymExpr>& x = *a.known;
  const std::vector<SymExpr>& y = *b.known;
  if (x.size() != y.size() && x.size() != 1 && y.size() != 1) return std::nullopt;
  Value out;
  out.scalar = a.scalar && b.scalar;
  out.known_dtype = compare ? DataType::boolean() : a.known_dtype;
  out.known.emplace();
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    out.known->push_back(fn(x[x.size() == 1 ? 0 : i], y[y.size() == 1 ? 0 : i]));
  }
  return out;
}

SymExpr sym_add(const SymExpr& a, const SymExpr& b) { return a + b; }
SymExpr sym_sub(const SymExpr& a, const SymExpr& b) { return a - b; }
SymExpr sym_mul(const SymExpr& a, const SymExpr& b) { return a * b; }
SymExpr sym_eq(const SymExpr& a, const SymExpr& b) { return a == b; }
SymExpr sym_lt(const SymExpr& a, const SymExpr& b) { return a < b; }
SymExpr sym_le(const SymExpr& a, const SymExpr& b) { return a <= b; }
SymExpr sym_gt(const SymExpr& a, const SymExpr& b) { return b < a; }
SymExpr sym_ge(const SymExpr& a, const SymExpr& b) { return b <= a; }
// ONNX integer division truncates; shape values are dims (not negative), where it is floordiv.
SymExpr sym_div(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> x = a.as_const(), y = b.as_const();
  if (x && y && *y != 0) return SymExpr(*x / *y);
  return floordiv(a, b);
}

ConvertFn binary(Expr (*fn)(Operand, Operand), SymExpr (*known)(const SymExpr&, const SymExpr&) = nullptr,
                 bool compare = false) {
  return [fn, known, compare](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    if (absl::Status s = need_inputs(node, in, 2); !s.ok()) return s;
    if (known != nullptr) {
      if (std::optional<Value> v = known_binary(*in[0], *in[1], known, compare)) return std::vector<Value>{*v};
    }
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 2);
    if (!x.ok()) return x.status();
    *x = broadcast_checked(im, node, *std::move(x));
    return std::vector<Value>{tensor_value(im.emit(fn((*x)[0], (*x)[1])))};
  };
}

// Max, Min, Sum: every input folded left to right.
ConvertFn variadic(Expr (*fn)(Operand, Operand)) {
  return [fn](Importer& im, const onnx::NodeProto& node, const Inputs& in) -> Outputs {
    absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, in.size());
    if (!x.ok()) return x.status();
    if (x->empty()) return node_error(node, "needs at least one input");
    *x = broadcast_checked(im, node, *std::move(x));
    Expr acc = (*x)[0];
    for (size_t i = 1; i < x->size(); ++i) acc = im.emit(fn(acc, (*x)[i]));
    return std::vector<Value>{tensor_value(acc)};
  };
}

Expr reciprocal(Expr x) {
  const std::optional<DataType> t = dtype_of_expr(x);
  return op::divide(scalar(1.0, t.value_or(DataType::float32())), x);
}

Outputs convert_where(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, 3);
  if (!x.ok()) return x.status();
  *x = broadcast_checked(im, node, *std::move(x));
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
    y = im.emit(op::multiply(y, scalar(alpha, t)));
  }
  if (in.size() > 2 && in[2] != nullptr) {
    absl::StatusOr<Expr> c = im.tensor(*in[2], node);
    if (!c.ok()) return c.status();
    Expr term = *c;
    const float beta = float_attr(node, "beta", 1.0f);
    if (beta != 1.0f) {
      term = im.emit(op::multiply(term, scalar(beta, t)));
    }
    y = im.emit(op::add(y, term));
  }
  return std::vector<Value>{tensor_value(y)};
}

// Einsum of one or two operands without ellipses or a letter repeated within an operand: a
// letter in one operand only and not in the output is summed out first; then, for two operands,
// A is permuted to (batch, A's kept, contracted) and B to (batch, contracted, B's kept), each
// group merged into one dim, one matmul, the groups split again and permuted to the output's
// order (`bhqd,bhkd->bhqk` is a batched q k^T; `ij,jk->ik` a matmul; `i,i->` a dot product).
Outputs convert_einsum(Importer& im, const onnx::NodeProto& node, const Inputs& in) {
  absl::StatusOr<std::vector<Expr>> x = tensors(im, node, in, in.size());
  if (!x.ok()) return x.status();
  std::string equation;
  for (char c : string_attr(node, "equation", "")) {
    if (c != ' ') equation += c;
  }
  const size_t arrow = equation.find("->");
  if (arrow == std::string::npos) return node_error(node, "an equation without `->` (implicit output) is not converted");
  if (equation.find("...") != std::string::npos) return node_error(node, "an equation with `...` is not converted");
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = equation.find(',', start);
    terms.push_back(equation.substr(start, std::min(comma, arrow) - start));
    if (comma == std::string::npos || comma > arrow) break;
    start = comma + 1;
  }
  const std::string output = equation.substr(arrow + 2);
  if (terms.size() != x->size() || terms.size() > 2) {
    return node_error(node, absl::StrCat("equation `", equation, "` has ", terms.size(), " operand terms for ", x->size(),
                                         " inputs (one or two are converted)"));
  }
  std::vector<std::vector<SymExpr>> dims;
  for (size_t t = 0; t < terms.size(); ++t) {
    std::optional<std::vector<SymExpr>> d = Importer::dims_of((*x)[t]);
    if (!d || d->size() != terms[t].size()) {
      return node_error(node, absl::StrCat("operand ", t, " ", (*x)[t].struct_info().to_string(), " does not have the ",
                                           terms[t].size(), " dims of `", terms[t], "`"));
    }
    for (size_t i = 0; i < terms[t].size(); ++i) {
      if (terms[t].find(terms[t][i], i + 1) != std::string::npos) {
        return node_error(node, absl::StrCat("the letter `", std::string(1, terms[t][i]), "` repeats in `", terms[t],
                                             "` (a diagonal), which is not converted"));
      }
    }
    dims.push_back(*std::move(d));
  }
  auto in_term = [](const std::string& term, char c) { return term.find(c) != std::string::npos; };
  // Sum out what only one operand has and the output lacks.
  for (size_t t = 0; t < terms.size(); ++t) {
    std::vector<int64_t> axes;
    std::string kept;
    std::vector<SymExpr> kept_dims;
    for (size_t i = 0; i < terms[t].size(); ++i) {
      const char c = terms[t][i];
      const bool elsewhere = in_term(output, c) || (terms.size() == 2 && in_term(terms[1 - t], c));
      if (elsewhere) {
        kept += c;
        kept_dims.push_back(dims[t][i]);
      } else {
        axes.push_back(static_cast<int64_t>(i));
      }
    }
    if (!axes.empty()) {
      (*x)[t] = im.emit(op::sum((*x)[t], axes));
      terms[t] = kept;
      dims[t] = kept_dims;
    }
  }
  auto dim_of = [&](char c) {
    for (size_t t = 0; t < terms.size(); ++t) {
      const size_t i = terms[t].find(c);
      if (i != std::string::npos) return dims[t][i];
    }
    return SymExpr(1);
  };
  auto permuted = [&](const Expr& e, const std::string& from, const std::string& to) {
    std::vector<int64_t> perm;
    for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    return identity ? e : im.emit(op::permute_dims(e, perm));
  };
  std::string result = terms[0];
  Expr y = (*x)[0];
  if (terms.size() == 2) {
    std::string batch, a_kept, contracted, b_kept;
    for (char c : terms[0]) (in_term(terms[1], c) ? (in_term(output, c) ? batch : contracted) : a_kept) += c;
    for (char c : terms[1]) {
      if (!in_term(terms[0], c)) b_kept += c;
    }
    auto product = [&](const std::string& letters) {
      SymExpr p(1);
      for (char c : letters) p = p * dim_of(c);
      return im.builder().analyzer().simplify(p);
    };
    std::vector<SymExpr> batch_dims;
    for (char c : batch) batch_dims.push_back(dim_of(c));
    auto merged = [&](std::vector<SymExpr> tail) {
      std::vector<SymExpr> out = batch_dims;
      out.insert(out.end(), tail.begin(), tail.end());
      return out;
    };
    Expr a = im.emit(op::reshape(permuted((*x)[0], terms[0], batch + a_kept + contracted),
                                 merged({product(a_kept), product(contracted)})));
    Expr b = im.emit(op::reshape(permuted((*x)[1], terms[1], batch + contracted + b_kept),
                                 merged({product(contracted), product(b_kept)})));
    std::vector<SymExpr> split = batch_dims;
    for (char c : a_kept + b_kept) split.push_back(dim_of(c));
    y = im.emit(op::reshape(im.emit(op::matmul(a, b)), split));
    result = batch + a_kept + b_kept;
  }
  for (char c : output) {
    if (!in_term(result, c)) return node_error(node, absl::StrCat("the output letter `", std::string(1, c), "` is in no operand"));
  }
  return std::vector<Value>{tensor_value(permuted(y, result, output))};
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

const std::map<std::string_view, OpConverter>& table() {
  static const auto* rows = [] {
    auto* m = new std::map<std::string_view, OpConverter>();
    const AddConverter add = [m](std::string_view op_type, ConvertFn fn) {
      m->emplace(op_type, OpConverter{op_type, std::move(fn)});
    };
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
    add("Equal", binary(op::equal, sym_eq, true));
    add("Less", binary(op::less, sym_lt, true));
    add("LessOrEqual", binary(op::less_equal, sym_le, true));
    add("Greater", binary(op::greater, sym_gt, true));
    add("GreaterOrEqual", binary(op::greater_equal, sym_ge, true));
    add("And", binary(op::logical_and));
    add("Or", binary(op::logical_or));
    add("Max", variadic(op::maximum));
    add("Min", variadic(op::minimum));
    add("Sum", variadic(op::add));
    add("Where", convert_where);
    add("MatMul", convert_matmul);
    add("Einsum", convert_einsum);
    add("Gemm", convert_gemm);
    add("Softmax", softmax_like(op::softmax));
    add("LogSoftmax", softmax_like(op::log_softmax));
    add_shape_converters(add);
    add_nn_converters(add);
    add_control_converters(add);
    add_recurrent_converters(add);
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
