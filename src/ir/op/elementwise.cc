// Elementwise operators: unary math, numpy-broadcasting binary ops and where.
//
// A unary op is one line: its name, the dtypes it takes, its scalar function
// (which is also its kernel) and a summary. A binary op's scalar function also
// folds two Prims of known value. Kernels are one block with spatial iteration
// variables only (compute::elementwise / compute::broadcast).
//
// Semantics where numpy and C++ leave a choice:
//   - divide and power take floats only (an integer operand is a deduction
//     error naming the dtypes): numpy's true division of integers gives floats,
//     so an integer divide would either change the dtype or silently truncate.
//     Integer quotients are floor_divide's.
//   - floor_divide and mod use floor semantics (the remainder has the
//     divisor's sign) for integers and floats. An integer divisor of 0 gives 0
//     for both, as numpy does (without its warning), instead of trapping in
//     the kernel; a signed divisor of -1 gives -a (wrapping) and 0.
//   - round is half-to-even; floor, ceil, round on integers are the identity.
//   - clip(x, min, max) = minimum(maximum(x, min), max) (so min > max gives
//     max everywhere, as numpy); on integers the bounds must be whole numbers
//     (they are clamped to the dtype's range).
//   - sign gives -1, 0 or 1 (0 keeps its sign bit, NaN stays NaN); neg of an
//     unsigned integer wraps; abs of an unsigned integer is the identity.
//   - Comparisons take numeric operands and give bool; logical_* take bool.
//   - where(cond, x, y): cond a bool Tensor, x and y Tensors or scalar Prims of
//     one dtype (the result's), all three broadcast together.
#include <cmath>
#include <limits>
#include <numbers>

#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/elementwise.h"

namespace relax {
namespace detail {
namespace {

struct GeluAttrs {
  std::string approximate = "none";
  template <typename V>
  void fields(V& v) {
    v("approximate", approximate, {"none", "tanh"});
  }
};

struct ClipAttrs {
  double min = 0;
  double max = 0;
  template <typename V>
  void fields(V& v) {
    v.required("min", min);
    v.required("max", max);
  }
};

// The constant `value` in x's dtype (an integer one is truncated).
SymExpr constant_like(double value, const SymExpr& x) {
  if (x.dtype().is_float()) return float_like(value, x);
  return SymExpr::int_imm(static_cast<int64_t>(value), x.dtype());
}

bool is_unsigned(DataType t) { return t.code == DataType::Code::kUInt; }

// `value` clamped to the range of the integer dtype `t`, as an integer.
int64_t clamp_to_int_dtype(double value, DataType t) {
  double lo = 0;
  double hi = 0;
  if (is_unsigned(t)) {
    hi = t.bits >= 64 ? 9.2233720368547748e18 : std::ldexp(1.0, t.bits) - 1;
  } else {
    lo = -std::ldexp(1.0, t.bits - 1);
    hi = t.bits >= 64 ? 9.2233720368547748e18 : std::ldexp(1.0, t.bits - 1) - 1;
  }
  if (value <= lo) return t.bits >= 64 && !is_unsigned(t) ? std::numeric_limits<int64_t>::min()
                                                          : static_cast<int64_t>(lo);
  if (value >= hi) return t.bits >= 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi);
  return static_cast<int64_t>(value);
}

SymExpr clip_value(const SymExpr& x, const ClipAttrs& attrs) {
  if (x.dtype().is_float()) return min(max(x, float_like(attrs.min, x)), float_like(attrs.max, x));
  const SymExpr lo = SymExpr::int_imm(clamp_to_int_dtype(attrs.min, x.dtype()), x.dtype());
  const SymExpr hi = SymExpr::int_imm(clamp_to_int_dtype(attrs.max, x.dtype()), x.dtype());
  return min(max(x, lo), hi);
}

SymExpr gelu_value(const SymExpr& x, const GeluAttrs& attrs) {
  const SymExpr half_x = float_like(0.5, x) * x;
  if (attrs.approximate == "tanh") {
    const double k = std::sqrt(2.0 / std::numbers::pi);
    const SymExpr inner = float_like(k, x) * (x + float_like(0.044715, x) * x * x * x);
    return half_x * (float_like(1, x) + tanh(inner));
  }
  return half_x * (float_like(1, x) + erf(x * float_like(1 / std::numbers::sqrt2, x)));
}

SymExpr sign_value(const SymExpr& x) {
  const SymExpr one = constant_like(1, x);
  if (is_unsigned(x.dtype())) return select(x > constant_like(0, x), one, constant_like(0, x));
  // Floats: 0, -0 and NaN are neither > 0 nor < 0 and stay themselves.
  const SymExpr rest = x.dtype().is_float() ? x : constant_like(0, x);
  return select(x > constant_like(0, x), one, select(x < constant_like(0, x), constant_like(-1, x), rest));
}

// Floor division and its remainder; integer divisors of 0 (and -1) are
// answered without dividing (see the top of the file).
SymExpr floor_divide_value(const SymExpr& a, const SymExpr& b) {
  if (a.dtype().is_float()) return floor(a / b);
  SymExpr q = floordiv(a, b);
  if (!is_unsigned(a.dtype())) q = select(b == constant_like(-1, b), constant_like(0, a) - a, q);
  return select(b == constant_like(0, b), constant_like(0, a), q);
}

SymExpr mod_value(const SymExpr& a, const SymExpr& b) {
  if (a.dtype().is_float()) return a - floor(a / b) * b;
  SymExpr r = floormod(a, b);
  if (!is_unsigned(a.dtype())) r = select(b == constant_like(-1, b), constant_like(0, a), r);
  return select(b == constant_like(0, b), constant_like(0, a), r);
}

// out = fn(x, attrs), with x's annotation (its shape and `result` when set).
template <typename A = NoAttrs>
OpDef<A> unary(OpTable& table, const char* name, DtypeClass dtypes,
               std::function<SymExpr(const SymExpr&, const A&)> fn, const char* summary,
               std::optional<DataType> result = std::nullopt) {
  OpDef<A> def = table.def<A>(name, summary);
  def.arg("x", ArgKind::kTensor, dtypes)
      .deduce(result ? rules::like_arg_with_dtype<A>(0, *result) : rules::same_as_arg<A>(0))
      .legalize([fn](const CallNode& call, const A& attrs, Analyzer& analyzer) {
        return compute::elementwise(call, analyzer, [&](const SymExpr& x) { return fn(x, attrs); });
      });
  return def;
}

// The attribute-free form: `fn(x)`.
void unary(OpTable& table, const char* name, DtypeClass dtypes, compute::UnaryFn fn,
           const char* summary, std::optional<DataType> result = std::nullopt) {
  unary<NoAttrs>(
      table, name, dtypes, [fn](const SymExpr& x, const NoAttrs&) { return fn(x); }, summary, result);
}

using BinaryFn = std::function<SymExpr(const SymExpr&, const SymExpr&)>;

// Deduction by broadcasting that also requires a float dtype (divide, power).
// The dtype is checked before Prims are folded, as the fold builds float ops.
TypedDeduceFn<NoAttrs> float_broadcast(BroadcastSpec spec) {
  return rules::without_attrs([spec = std::move(spec)](const CallNode& call, DeduceContext& ctx)
                                  -> absl::StatusOr<StructInfo> {
    BroadcastSpec unfolded = spec;
    unfolded.fold = nullptr;
    absl::StatusOr<StructInfo> out = deduce_broadcast(call, ctx, unfolded);
    if (!out.ok()) return out;
    std::optional<DataType> dtype;
    if (const auto* t = out->as<TensorStructInfoNode>()) dtype = t->dtype;
    if (const auto* p = out->as<PrimStructInfoNode>()) dtype = p->dtype;
    if (dtype && !dtype->is_float()) {
      const std::string op = call.callee.as<OpNode>()->name;
      return op_error(op, "expected float operands, got " + dtype->to_string() +
                              " (cast them with astype first" +
                              (op == "divide" ? "; floor_divide divides integers)" : ")"));
    }
    if (out->as<PrimStructInfoNode>() != nullptr) return deduce_broadcast(call, ctx, spec);
    return out;
  });
}

// out = fn(lhs, rhs) with numpy broadcasting; `result` overrides the dtype
// (bool for comparisons). `floats_only`: the operands must be floats.
/// A binary operator's kernel body for one call: `fn`, or one the call's constant operands allow.
using KernelChoice = std::function<BinaryFn(const CallNode& call, const BinaryFn& fn)>;

void binary(OpTable& table, const char* name, DtypeClass dtypes, BinaryFn fn, const char* summary,
            std::optional<DataType> result = std::nullopt, bool floats_only = false,
            KernelChoice choose = nullptr) {
  BroadcastSpec spec;
  spec.result_dtype = result;
  spec.fold = [fn](const std::vector<SymExpr>& v) { return fn(v[0], v[1]); };
  table.def(name, summary)
      .arg("lhs", ArgKind::kTensorOrScalar, dtypes)
      .arg("rhs", ArgKind::kTensorOrScalar, dtypes)
      .deduce(floats_only ? float_broadcast(spec) : rules::broadcast(spec))
      .legalize([fn, choose](const CallNode& call, const NoAttrs&, Analyzer& analyzer) {
        const BinaryFn body = choose ? choose(call, fn) : fn;
        return compute::broadcast(call, analyzer,
                                  [body](const std::vector<SymExpr>& v) { return body(v[0], v[1]); });
      });
}

// power by a constant exponent of 2 or 3 -- a float Prim, or a one-element float constant, as
// graph formats and variances hold them -- multiplies (x * x, x * x * x), which is what pow
// gives up to rounding, instead of a pow call per element.
BinaryFn power_kernel(const CallNode& call, const BinaryFn& fn) {
  std::optional<double> exponent;
  const Expr& rhs = call.args[1];
  if (const auto* p = rhs.as<PrimValueNode>()) exponent = p->value.as_float();
  if (const auto* c = rhs.as<ConstantNode>(); c != nullptr && c->data.numel() == 1) {
    if (c->data.dtype() == DataType::float32()) exponent = *static_cast<const float*>(c->data.data());
    if (c->data.dtype() == DataType::float64()) exponent = *static_cast<const double*>(c->data.data());
  }
  if (exponent == 2.0) return [](const SymExpr& a, const SymExpr&) { return a * a; };
  if (exponent == 3.0) return [](const SymExpr& a, const SymExpr&) { return a * a * a; };
  return fn;
}

// The attributes' bounds must be whole numbers when x is an integer tensor.
absl::StatusOr<StructInfo> deduce_clip(const CallNode& call, const ClipAttrs& attrs, DeduceContext&) {
  const StructInfo& x = call.args[0].struct_info();
  const auto* t = x.as<TensorStructInfoNode>();
  if (t != nullptr && t->dtype && t->dtype->is_int()) {
    for (auto [key, value] : {std::pair{"min", attrs.min}, std::pair{"max", attrs.max}}) {
      if (value != std::floor(value)) {
        return op_error("clip", std::string("attribute `") + key + "` = " + attr_value_text(value) +
                                    " is not a whole number, and x is " + x.to_string());
      }
    }
  }
  if (std::isnan(attrs.min) || std::isnan(attrs.max)) {
    return op_error("clip", "attributes `min` and `max` must be numbers, got NaN");
  }
  return x;
}

}  // namespace

void register_elementwise_ops(OpTable& table) {
  using DC = DtypeClass;
  const DataType kBool = DataType::boolean();
  // ---- Binary (add first: the registry lists it first).
  binary(table, "add", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a + b; },
         "elementwise lhs + rhs with numpy broadcasting (Prims are scalars)");
  binary(table, "subtract", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a - b; },
         "elementwise lhs - rhs with numpy broadcasting (Prims are scalars)");
  binary(table, "multiply", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a * b; },
         "elementwise lhs * rhs with numpy broadcasting (Prims are scalars)");
  binary(table, "divide", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a / b; },
         "elementwise true division lhs / rhs of floats with numpy broadcasting", std::nullopt,
         /*floats_only=*/true);
  binary(table, "floor_divide", DC::kNumeric, floor_divide_value,
         "elementwise floor(lhs / rhs) with numpy broadcasting (integer division by 0 gives 0)");
  binary(table, "mod", DC::kNumeric, mod_value,
         "elementwise lhs - floor(lhs / rhs) * rhs, the divisor's sign (integer mod 0 gives 0)");
  binary(table, "power", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return pow(a, b); },
         "elementwise lhs ** rhs of floats with numpy broadcasting", std::nullopt,
         /*floats_only=*/true, power_kernel);
  binary(table, "maximum", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return max(a, b); },
         "elementwise larger of lhs and rhs with numpy broadcasting");
  binary(table, "minimum", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return min(a, b); },
         "elementwise smaller of lhs and rhs with numpy broadcasting");
  binary(table, "equal", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a == b; },
         "elementwise lhs == rhs (bool) with numpy broadcasting", kBool);
  binary(table, "not_equal", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a != b; },
         "elementwise lhs != rhs (bool) with numpy broadcasting", kBool);
  binary(table, "less", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a < b; },
         "elementwise lhs < rhs (bool) with numpy broadcasting", kBool);
  binary(table, "less_equal", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a <= b; },
         "elementwise lhs <= rhs (bool) with numpy broadcasting", kBool);
  binary(table, "greater", DC::kNumeric, [](const SymExpr& a, const SymExpr& b) { return a > b; },
         "elementwise lhs > rhs (bool) with numpy broadcasting", kBool);
  binary(table, "greater_equal", DC::kNumeric,
         [](const SymExpr& a, const SymExpr& b) { return a >= b; },
         "elementwise lhs >= rhs (bool) with numpy broadcasting", kBool);
  binary(table, "logical_and", DC::kBool, [](const SymExpr& a, const SymExpr& b) { return a && b; },
         "elementwise lhs and rhs of bools with numpy broadcasting", kBool);
  binary(table, "logical_or", DC::kBool, [](const SymExpr& a, const SymExpr& b) { return a || b; },
         "elementwise lhs or rhs of bools with numpy broadcasting", kBool);

  // ---- Unary.
  unary(table, "neg", DC::kNumeric, [](const SymExpr& x) { return constant_like(0, x) - x; },
        "elementwise -x (unsigned integers wrap)");
  unary(table, "abs", DC::kNumeric,
        [](const SymExpr& x) { return is_unsigned(x.dtype()) ? x : abs(x); }, "elementwise |x|");
  unary(table, "exp", DC::kFloat, [](const SymExpr& x) { return exp(x); },
        "elementwise e^x of a float tensor");
  unary(table, "log", DC::kFloat, [](const SymExpr& x) { return log(x); },
        "elementwise natural logarithm of a float tensor");
  unary(table, "sqrt", DC::kFloat, [](const SymExpr& x) { return sqrt(x); },
        "elementwise square root of a float tensor");
  unary(table, "rsqrt", DC::kFloat, [](const SymExpr& x) { return rsqrt(x); },
        "elementwise 1 / sqrt(x) of a float tensor");
  unary(table, "sin", DC::kFloat, [](const SymExpr& x) { return sin(x); },
        "elementwise sine (radians) of a float tensor");
  unary(table, "cos", DC::kFloat, [](const SymExpr& x) { return cos(x); },
        "elementwise cosine (radians) of a float tensor");
  unary(table, "tanh", DC::kFloat, [](const SymExpr& x) { return tanh(x); },
        "elementwise hyperbolic tangent of a float tensor");
  unary(table, "sigmoid", DC::kFloat, [](const SymExpr& x) { return sigmoid(x); },
        "elementwise 1 / (1 + e^-x) of a float tensor");
  unary(table, "erf", DC::kFloat, [](const SymExpr& x) { return erf(x); },
        "elementwise error function of a float tensor");
  unary(table, "relu", DC::kNumeric, [](const SymExpr& x) { return max(x, constant_like(0, x)); },
        "elementwise max(x, 0)");
  unary<GeluAttrs>(table, "gelu", DC::kFloat, gelu_value,
                   "elementwise x * Phi(x) (approximate=\"none\": with erf; \"tanh\": the tanh "
                   "approximation)");
  unary(table, "silu", DC::kFloat, [](const SymExpr& x) { return x * sigmoid(x); },
        "elementwise x * sigmoid(x) of a float tensor");
  unary<ClipAttrs>(table, "clip", DC::kNumeric, clip_value,
                   "elementwise minimum(maximum(x, min), max) with float attributes min, max")
      .deduce(deduce_clip);
  unary(table, "floor", DC::kNumeric,
        [](const SymExpr& x) { return x.dtype().is_float() ? floor(x) : x; },
        "elementwise largest integer <= x (integers unchanged)");
  unary(table, "ceil", DC::kNumeric,
        [](const SymExpr& x) { return x.dtype().is_float() ? ceil(x) : x; },
        "elementwise smallest integer >= x (integers unchanged)");
  unary(table, "round", DC::kNumeric,
        [](const SymExpr& x) { return x.dtype().is_float() ? round(x) : x; },
        "elementwise nearest integer, ties to even (integers unchanged)");
  unary(table, "sign", DC::kNumeric, sign_value, "elementwise -1, 0 or 1 by the sign of x");
  unary(table, "square", DC::kNumeric, [](const SymExpr& x) { return x * x; }, "elementwise x * x");
  unary(table, "logical_not", DC::kBool, [](const SymExpr& x) { return !x; },
        "elementwise not of a bool tensor");
  unary(table, "isnan", DC::kFloat, [](const SymExpr& x) { return isnan(x); },
        "elementwise whether x is NaN (a bool tensor)", kBool);

  // ---- where.
  BroadcastSpec where_spec;
  where_spec.same_dtype = {1, 2};
  table.def("where", "elementwise x where cond, else y, all three broadcast together")
      .arg("cond", ArgKind::kTensor, DC::kBool)
      .arg("x", ArgKind::kTensorOrScalar, DC::kAny)
      .arg("y", ArgKind::kTensorOrScalar, DC::kAny)
      .deduce(rules::broadcast(where_spec))
      .legalize([](const CallNode& call, const NoAttrs&, Analyzer& analyzer) {
        return compute::broadcast(call, analyzer, [](const std::vector<SymExpr>& v) {
          return select(v[0], v[1], v[2]);
        });
      });
}

}  // namespace detail

namespace op {
namespace {

Expr call1(const char* name, Expr x) { return make_call(make_op_or_die(name), {std::move(x)}); }
Expr call2(const char* name, Operand lhs, Operand rhs) {
  return make_call(make_op_or_die(name), {std::move(lhs).expr(), std::move(rhs).expr()});
}

}  // namespace

Expr neg(Expr x) { return call1("neg", std::move(x)); }
Expr abs(Expr x) { return call1("abs", std::move(x)); }
Expr exp(Expr x) { return call1("exp", std::move(x)); }
Expr log(Expr x) { return call1("log", std::move(x)); }
Expr sqrt(Expr x) { return call1("sqrt", std::move(x)); }
Expr rsqrt(Expr x) { return call1("rsqrt", std::move(x)); }
Expr sin(Expr x) { return call1("sin", std::move(x)); }
Expr cos(Expr x) { return call1("cos", std::move(x)); }
Expr tanh(Expr x) { return call1("tanh", std::move(x)); }
Expr sigmoid(Expr x) { return call1("sigmoid", std::move(x)); }
Expr erf(Expr x) { return call1("erf", std::move(x)); }
Expr relu(Expr x) { return call1("relu", std::move(x)); }
Expr gelu(Expr x, std::string approximate) {
  return make_call(make_op_or_die("gelu"), {std::move(x)},
                   detail::encode_attrs(detail::GeluAttrs{std::move(approximate)}));
}
Expr silu(Expr x) { return call1("silu", std::move(x)); }
Expr clip(Expr x, double min, double max) {
  return make_call(make_op_or_die("clip"), {std::move(x)},
                   detail::encode_attrs(detail::ClipAttrs{min, max}));
}
Expr floor(Expr x) { return call1("floor", std::move(x)); }
Expr ceil(Expr x) { return call1("ceil", std::move(x)); }
Expr round(Expr x) { return call1("round", std::move(x)); }
Expr sign(Expr x) { return call1("sign", std::move(x)); }
Expr square(Expr x) { return call1("square", std::move(x)); }
Expr logical_not(Expr x) { return call1("logical_not", std::move(x)); }
Expr isnan(Expr x) { return call1("isnan", std::move(x)); }

Expr add(Operand lhs, Operand rhs) { return call2("add", std::move(lhs), std::move(rhs)); }
Expr subtract(Operand lhs, Operand rhs) { return call2("subtract", std::move(lhs), std::move(rhs)); }
Expr multiply(Operand lhs, Operand rhs) { return call2("multiply", std::move(lhs), std::move(rhs)); }
Expr divide(Operand lhs, Operand rhs) { return call2("divide", std::move(lhs), std::move(rhs)); }
Expr floor_divide(Operand lhs, Operand rhs) {
  return call2("floor_divide", std::move(lhs), std::move(rhs));
}
Expr mod(Operand lhs, Operand rhs) { return call2("mod", std::move(lhs), std::move(rhs)); }
Expr power(Operand lhs, Operand rhs) { return call2("power", std::move(lhs), std::move(rhs)); }
Expr maximum(Operand lhs, Operand rhs) { return call2("maximum", std::move(lhs), std::move(rhs)); }
Expr minimum(Operand lhs, Operand rhs) { return call2("minimum", std::move(lhs), std::move(rhs)); }
Expr equal(Operand lhs, Operand rhs) { return call2("equal", std::move(lhs), std::move(rhs)); }
Expr not_equal(Operand lhs, Operand rhs) { return call2("not_equal", std::move(lhs), std::move(rhs)); }
Expr less(Operand lhs, Operand rhs) { return call2("less", std::move(lhs), std::move(rhs)); }
Expr less_equal(Operand lhs, Operand rhs) {
  return call2("less_equal", std::move(lhs), std::move(rhs));
}
Expr greater(Operand lhs, Operand rhs) { return call2("greater", std::move(lhs), std::move(rhs)); }
Expr greater_equal(Operand lhs, Operand rhs) {
  return call2("greater_equal", std::move(lhs), std::move(rhs));
}
Expr logical_and(Operand lhs, Operand rhs) {
  return call2("logical_and", std::move(lhs), std::move(rhs));
}
Expr logical_or(Operand lhs, Operand rhs) {
  return call2("logical_or", std::move(lhs), std::move(rhs));
}
Expr where(Expr cond, Operand x, Operand y) {
  return make_call(make_op_or_die("where"), {std::move(cond), std::move(x).expr(), std::move(y).expr()});
}

}  // namespace op
}  // namespace relax
