// Creation operators: zeros, ones, full (of a Shape), zeros_like, ones_like,
// full_like (of a tensor), arange (of Prim start/end/step), tril, triu.
//
// zeros/ones take the result's dims as a Shape argument and its dtype as the
// required attribute `dtype`; full takes the fill value as a Prim argument
// (it may be symbolic, `full(shape(n), n_prim)`) and `dtype` defaults to the
// value's. The *_like forms take x's shape and, unless `dtype` is given, its
// dtype. A Shape known only by rank gives a rank-only result; a constant
// negative dim is an error.
//
// arange(start, end, step) takes Prim arguments (step may be left out: 1);
// the result is 1-D of length ceil((end - start) / step), 0 when that is
// negative. `dtype` defaults to int64, or to the first float argument's dtype
// when there is one. The length is symbolic for integer arguments whose step
// is a constant (floordiv(end - start + step - 1, step); `end - start` for
// step 1); a symbolic length is taken as it stands, so arange(s, e) with
// e < s at run time is an error of the shape checks, not an empty tensor.
// Float arguments need constant values for a known length; otherwise, and for
// a symbolic step, the result is rank-only (Tensor[ndim=1]), which cannot be
// legalized. A step that is the constant 0 is an error.
//
// tril(x, k) / triu(x, k) keep the elements on and below / on and above the
// k-th diagonal of the last two dims (k: an optional integer Prim, default 0,
// may be symbolic) and zero the others; x has rank >= 2.
//
// Kernels are injective (one spatial block over the result):
//   zeros:  Out[v...] = 0           full: Out[v...] = value (converted)
//   arange: Out[v] = start + v * step (int64 arithmetic for integer results,
//           float64 for float ones, then converted)
//   tril:   Out[..., i, j] = select(j - i <= k, A[..., i, j], 0)   (bool: `and`)
// The kernels of zeros/ones/full(_like) read no tensor (the *_like ones
// take x as an unused parameter).
#include <cmath>

#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/create.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

struct OptionalDtypeAttrs {
  std::optional<DataType> dtype;
  template <typename V>
  void fields(V& v) {
    v("dtype", dtype);
  }
};

// The name of the called operator (deductions run only for operator calls).
std::string op_of(const CallNode& call) { return call.callee.as<OpNode>()->name; }

SymExpr cast_to(const SymExpr& v, DataType t) { return v.dtype() == t ? v : cast(t, v); }
SymExpr as_int64(const SymExpr& v) { return cast_to(v, DataType::int64()); }

SymExpr constant_of(double value, DataType t) {
  if (t.is_float()) return SymExpr::float_imm(value, t);
  if (t.is_bool()) return SymExpr::boolean(value != 0);
  return SymExpr::int_imm(static_cast<int64_t>(value), t);
}

// A tensor of the dims in the Shape argument `index`, of `dtype`.
absl::StatusOr<StructInfo> deduce_of_shape(const CallNode& call, size_t index,
                                           std::optional<DataType> dtype) {
  const std::string op = op_of(call);
  const auto& shape = *call.args[index].struct_info().as<ShapeStructInfoNode>();
  if (!shape.values) return tensor_sinfo_rank(shape.ndim, dtype);
  const std::vector<SymExpr>& dims = *shape.values;
  for (size_t i = 0; i < dims.size(); ++i) {
    std::optional<int64_t> c = dims[i].as_const();
    if (c && *c < 0) {
      return op_error(op, "shape " + dims_string(dims) + ": dim " + std::to_string(i) + " is " +
                              std::to_string(*c) + ", expected a size >= 0");
    }
  }
  return tensor_sinfo(dims, dtype);
}

// The dtype of the Prim argument `index` (its declared kind is checked).
DataType prim_dtype(const CallNode& call, size_t index) {
  return call.args[index].struct_info().as<PrimStructInfoNode>()->dtype;
}

// out = value everywhere; `value` is the call's Prim argument (scalar 0) when
// unset.
absl::StatusOr<Lowering> legalize_fill(const CallNode& call, Analyzer& analyzer,
                                       std::optional<double> value) {
  return injective(call, analyzer, [value](const std::vector<SymExpr>&, const Inputs& in) {
    if (!value) return in.scalar(0);
    return SymExpr::float_imm(*value, DataType::float64());
  });
}

// ---------------------------------------------------------------------------
// arange.

struct ArangeArgs {
  SymExpr start, end, step;  // undefined: a value not known at compile time
  DataType dtype;
};

ArangeArgs arange_args(const CallNode& call, const std::optional<DataType>& dtype_attr) {
  ArangeArgs out;
  auto value = [&](size_t i) { return call.args[i].struct_info().as<PrimStructInfoNode>()->value; };
  out.start = value(0);
  out.end = value(1);
  out.step = call.args.size() > 2 ? value(2) : SymExpr(1);
  if (dtype_attr) {
    out.dtype = *dtype_attr;
  } else {
    out.dtype = DataType::int64();
    for (size_t i = call.args.size(); i-- > 0;) {
      if (prim_dtype(call, i).is_float()) out.dtype = prim_dtype(call, i);
    }
  }
  return out;
}

std::optional<double> constant_value(const SymExpr& e) {
  if (!e.defined()) return std::nullopt;
  if (std::optional<int64_t> c = e.as_const()) return static_cast<double>(*c);
  return e.as_float();
}

absl::StatusOr<StructInfo> deduce_arange(const CallNode& call, const OptionalDtypeAttrs& attrs,
                                         DeduceContext& ctx) {
  const std::string op = "arange";
  const ArangeArgs a = arange_args(call, attrs.dtype);
  const StructInfo rank_only = tensor_sinfo_rank(1, a.dtype);
  const std::optional<double> step_value = constant_value(a.step);
  if (step_value && *step_value == 0) {
    return op_error(op, "step is 0 (argument 2 (step) " +
                            (call.args.size() > 2 ? call.args[2].struct_info().to_string()
                                                  : std::string("absent: 1")) +
                            "), expected a non-zero step");
  }
  if (!a.start.defined() || !a.end.defined() || !a.step.defined()) return rank_only;
  bool all_int = true;
  for (size_t i = 0; i < call.args.size(); ++i) all_int = all_int && !prim_dtype(call, i).is_float();
  const std::optional<double> start_value = constant_value(a.start);
  const std::optional<double> end_value = constant_value(a.end);
  if (start_value && end_value && step_value) {
    const double n = std::ceil((*end_value - *start_value) / *step_value);
    return tensor_sinfo({SymExpr(static_cast<int64_t>(n > 0 ? n : 0))}, a.dtype);
  }
  std::optional<int64_t> step = a.step.as_const();
  if (!all_int || !step) return rank_only;
  SymExpr start = as_int64(a.start);
  SymExpr end = as_int64(a.end);
  SymExpr length = *step > 0 ? floordiv(end - start + (*step - 1), *step)
                             : floordiv(start - end + (-*step - 1), -*step);
  return tensor_sinfo({ctx.analyzer.simplify(length)}, a.dtype);
}

absl::StatusOr<Lowering> legalize_arange(const CallNode& call, const OptionalDtypeAttrs& attrs,
                                         Analyzer& analyzer) {
  const DataType dtype = arange_args(call, attrs.dtype).dtype;
  const DataType work = dtype.is_float() ? DataType::float64() : DataType::int64();
  const bool has_step = call.args.size() > 2;
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    SymExpr start = cast_to(in.scalar(0), work);
    SymExpr step = has_step ? cast_to(in.scalar(2), work) : constant_of(1, work);
    return start + cast_to(i[0], work) * step;
  });
}

// ---------------------------------------------------------------------------
// tril / triu.

absl::StatusOr<StructInfo> deduce_triangle(const CallNode& call, const NoAttrs&, DeduceContext&) {
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  if (x.ndim != kUnknownNDim && x.ndim < 2) {
    return op_error(op_of(call), "x " + call.args[0].struct_info().to_string() + " has rank " +
                                       std::to_string(x.ndim) + ", expected at least 2");
  }
  return call.args[0].struct_info();
}

absl::StatusOr<Lowering> legalize_triangle(const CallNode& call, Analyzer& analyzer, bool lower) {
  const bool has_k = call.args.size() > 1;
  return injective(call, analyzer, [&](const std::vector<SymExpr>& v, const Inputs& in) {
    const size_t n = v.size();
    SymExpr k = has_k ? cast_to(in.scalar(0), DataType::int64()) : SymExpr(0);
    SymExpr offset = v[n - 1] - v[n - 2];  // j - i
    SymExpr keep = lower ? offset <= k : offset >= k;
    const DataType dtype = in.buffer(0).dtype();
    // select takes numbers only; for bool, keeping is `and`.
    if (dtype.is_bool()) return keep && in.load(0, v);
    return select(keep, in.load(0, v), constant_of(0, dtype));
  });
}

}  // namespace

void register_create_ops(OpTable& table) {
  for (bool one : {false, true}) {
    table.def<DtypeAttrs>(one ? "ones" : "zeros", one ? "a tensor of shape filled with 1"
                                                      : "a tensor of shape filled with 0")
        .arg("shape", ArgKind::kShape)
        .deduce([](const CallNode& call, const DtypeAttrs& attrs, DeduceContext&) {
          return deduce_of_shape(call, 0, attrs.dtype);
        })
        .legalize([one](const CallNode& call, const DtypeAttrs&, Analyzer& analyzer) {
          return legalize_fill(call, analyzer, one ? 1.0 : 0.0);
        });
    table.def<OptionalDtypeAttrs>(one ? "ones_like" : "zeros_like",
                                  one ? "a tensor like x filled with 1 (dtype: x's unless given)"
                                      : "a tensor like x filled with 0 (dtype: x's unless given)")
        .arg("x", ArgKind::kTensor)
        .deduce([](const CallNode& call, const OptionalDtypeAttrs& attrs, DeduceContext&) {
          return deduce_like_arg(call, 0, attrs.dtype);
        })
        .legalize([one](const CallNode& call, const OptionalDtypeAttrs&, Analyzer& analyzer) {
          return legalize_fill(call, analyzer, one ? 1.0 : 0.0);
        });
  }
  table.def<OptionalDtypeAttrs>("full", "a tensor of shape filled with value (dtype: value's unless given)")
      .arg("shape", ArgKind::kShape)
      .arg("value", ArgKind::kPrim)
      .deduce([](const CallNode& call, const OptionalDtypeAttrs& attrs, DeduceContext&) {
        return deduce_of_shape(call, 0, attrs.dtype ? *attrs.dtype : prim_dtype(call, 1));
      })
      .legalize([](const CallNode& call, const OptionalDtypeAttrs&, Analyzer& analyzer) {
        return legalize_fill(call, analyzer, std::nullopt);
      });
  table.def<OptionalDtypeAttrs>("full_like", "a tensor like x filled with value (dtype: x's unless given)")
      .arg("x", ArgKind::kTensor)
      .arg("value", ArgKind::kPrim)
      .deduce([](const CallNode& call, const OptionalDtypeAttrs& attrs, DeduceContext&) {
        return deduce_like_arg(call, 0, attrs.dtype);
      })
      .legalize([](const CallNode& call, const OptionalDtypeAttrs&, Analyzer& analyzer) {
        return legalize_fill(call, analyzer, std::nullopt);
      });
  table.def<OptionalDtypeAttrs>("arange", "start, start + step, ... up to end (excluded), 1-D")
      .arg("start", ArgKind::kPrim, DtypeClass::kNumeric)
      .arg("end", ArgKind::kPrim, DtypeClass::kNumeric)
      .optional_arg("step", ArgKind::kPrim, DtypeClass::kNumeric)
      .deduce(deduce_arange)
      .legalize(legalize_arange);
  for (bool lower : {true, false}) {
    table.def(lower ? "tril" : "triu",
              lower ? "x with the elements above the k-th diagonal of the last two dims zeroed"
                    : "x with the elements below the k-th diagonal of the last two dims zeroed")
        .arg("x", ArgKind::kTensor)
        .optional_arg("k", ArgKind::kPrim, DtypeClass::kInt)
        .deduce(deduce_triangle)
        .legalize([lower](const CallNode& call, const NoAttrs&, Analyzer& analyzer) {
          return legalize_triangle(call, analyzer, lower);
        });
  }
}

}  // namespace detail

namespace op {

Expr zeros(Expr shape, DataType dtype) {
  return make_call(make_op_or_die("zeros"), {std::move(shape)},
                   detail::encode_attrs(detail::DtypeAttrs{dtype}));
}
Expr ones(Expr shape, DataType dtype) {
  return make_call(make_op_or_die("ones"), {std::move(shape)},
                   detail::encode_attrs(detail::DtypeAttrs{dtype}));
}
Expr full(Expr shape, Operand value, std::optional<DataType> dtype) {
  return make_call(make_op_or_die("full"), {std::move(shape), std::move(value).expr()},
                   detail::encode_attrs(detail::OptionalDtypeAttrs{dtype}));
}
Expr zeros_like(Expr x, std::optional<DataType> dtype) {
  return make_call(make_op_or_die("zeros_like"), {std::move(x)},
                   detail::encode_attrs(detail::OptionalDtypeAttrs{dtype}));
}
Expr ones_like(Expr x, std::optional<DataType> dtype) {
  return make_call(make_op_or_die("ones_like"), {std::move(x)},
                   detail::encode_attrs(detail::OptionalDtypeAttrs{dtype}));
}
Expr full_like(Expr x, Operand value, std::optional<DataType> dtype) {
  return make_call(make_op_or_die("full_like"), {std::move(x), std::move(value).expr()},
                   detail::encode_attrs(detail::OptionalDtypeAttrs{dtype}));
}
Expr arange(Operand start, Operand end, Operand step, std::optional<DataType> dtype) {
  return make_call(make_op_or_die("arange"),
                   {std::move(start).expr(), std::move(end).expr(), std::move(step).expr()},
                   detail::encode_attrs(detail::OptionalDtypeAttrs{dtype}));
}
Expr tril(Expr x, Operand k) {
  return make_call(make_op_or_die("tril"), {std::move(x), std::move(k).expr()});
}
Expr triu(Expr x, Operand k) {
  return make_call(make_op_or_die("triu"), {std::move(x), std::move(k).expr()});
}

}  // namespace op
}  // namespace relax
