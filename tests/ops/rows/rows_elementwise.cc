// Conformance rows of the elementwise operators: the unary math ops, the numpy-broadcasting
// binary ops (Prim operands on either side) and where. References: reference_elementwise.h and
// the scalar functions of <cmath>, in double precision.
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "families.h"
#include "reference/reference_elementwise.h"

namespace relax::ops_test {

namespace {

const auto kPlus = std::plus<double>();
const auto kTimes = std::multiplies<double>();
const DataType kBool = DataType::boolean();

double sigmoid_ref(double v) { return 1 / (1 + std::exp(-v)); }

// Inputs k / 2 for k in [-9, 9]: exact ties for round, and whole numbers.
HostTensor half_steps(const InputSpec& spec, Rng& rng) {
  HostTensor x = HostTensor::filled(spec.shape, spec.dtype);
  for (double& v : x.values) v = static_cast<double>(rng.integer(-9, 9)) / 2;
  return x;
}

// Floats in [-1, 1] with about one in four a NaN (and some infinities).
HostTensor with_nans(const InputSpec& spec, Rng& rng) {
  HostTensor x = HostTensor::filled(spec.shape, spec.dtype);
  for (double& v : x.values) {
    const int64_t pick = rng.integer(0, 7);
    v = pick < 2   ? std::numeric_limits<double>::quiet_NaN()
        : pick == 2 ? std::numeric_limits<double>::infinity()
                    : std::round(rng.uniform(-1, 1) * 256) / 256;
  }
  return x;
}

// Floats of magnitude in [0.25, 4] and either sign (divisors away from 0), rounded to 1/64.
HostTensor away_from_zero(const InputSpec& spec, Rng& rng) {
  HostTensor x = HostTensor::filled(spec.shape, spec.dtype);
  for (double& v : x.values) {
    const double m = std::round(rng.uniform(0.25, 4) * 64) / 64;
    v = rng.integer(0, 1) ? m : -m;
  }
  return x;
}

// The deduction rows every unary op gets: symbolic, concrete, rank-only, unknown rank and
// dtype, a dtype outside its class (`bad`, the message's expected class `cls`), and a Prim.
// `result` is the result dtype (empty: x's); `attrs` follows x in the call.
void unary_deduce(OpRows& rows, const std::string& op, const std::string& dtype, const std::string& result,
                  const std::string& bad, const std::string& cls, const std::string& attrs = "",
                  const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const std::string call = op + "(x" + attrs + ")";
  const std::string out = result.empty() ? dtype : result;
  const std::string unknown_out = result.empty() ? "?" : result;
  rows.push_back(deduce(op, "x: Tensor[(n, 4), " + dtype + "]", call, "Tensor[(n, 4), " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[(2, 3), " + dtype + "]", call, "Tensor[(2, 3), " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[ndim=3, " + dtype + "]", call, "Tensor[ndim=3, " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[ndim=?, " + dtype + "]", call, "Tensor[ndim=?, " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[(n,), ?]", call, "Tensor[(n,), " + unknown_out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[(n,), " + bad + "]", call,
                        error(op + ": argument 0 (x): expected " + cls + " tensor, got Tensor[(n,), " + bad + "]"),
                        file, line));
  rows.push_back(deduce(op, "s: Prim[" + dtype + "]", op + "(s" + attrs + ")",
                        error(op + ": argument 0 (x): expected a Tensor, got Prim[" + dtype + "]"), file, line));
}

// The deduction rows every binary op gets: broadcasting (symbolic and concrete), a Prim on
// either side, rank-only, unknown, and the broadcasting and dtype errors. `dtype` is an
// operand dtype the op takes, `result` the result's (empty: the operands').
void binary_deduce(OpRows& rows, const std::string& op, const std::string& dtype, const std::string& result,
                   const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const std::string out = result.empty() ? dtype : result;
  const std::string other = dtype == "bool" ? "float32" : dtype == "int32" ? "float32" : "int32";
  const std::string call = op + "(x, y)";
  rows.push_back(deduce(op, "x: Tensor[(n, 1), " + dtype + "], y: Tensor[(1, m), " + dtype + "]", call,
                        "Tensor[(n, m), " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[(3, 1), " + dtype + "], y: Tensor[(5,), " + dtype + "]", call,
                        "Tensor[(3, 5), " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[(n, 4), " + dtype + "], y: Prim[" + dtype + "]", call,
                        "Tensor[(n, 4), " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Prim[" + dtype + "], y: Tensor[(n, 4), " + dtype + "]", call,
                        "Tensor[(n, 4), " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[(n, 4), " + dtype + "], y: Tensor[ndim=3, " + dtype + "]", call,
                        "Tensor[ndim=3, " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[ndim=?, " + dtype + "], y: Tensor[(n,), " + dtype + "]", call,
                        "Tensor[ndim=?, " + out + "]", file, line));
  rows.push_back(deduce(op, "x: Tensor[(2, n), " + dtype + "], y: Tensor[(2, m), " + dtype + "]", call,
                        error(op + ": cannot broadcast dim 1: `n` vs `m`"), file, line));
  rows.push_back(deduce(op, "x: Tensor[(3, 2), " + dtype + "], y: Tensor[(4, 2), " + dtype + "]", call,
                        error(op + ": cannot broadcast dim 0: `3` vs `4`"), file, line));
  if (dtype != "bool") {
    rows.push_back(deduce(op, "x: Tensor[(n,), " + dtype + "], y: Tensor[(n,), " + other + "]", call,
                          error(op + ": dtypes differ: lhs is " + dtype + ", rhs is " + other), file, line));
  }
  rows.push_back(deduce(op, "x: Tensor[(2,), " + dtype + "], s: Shape[(2,)]", op + "(x, s)",
                        error(op + ": argument 1 (rhs): expected a Tensor or a"), file, line));
}

OpRows unary_rows() {
  OpRows rows;
  // Float math ops: deduction, then float32 rows at the default sizes and a float64 one.
  struct FloatOp {
    const char* name;
    double (*ref)(double);
    double lo, hi;
  };
  const FloatOp float_ops[] = {
      {"exp", [](double v) { return std::exp(v); }, -4, 4},
      {"log", [](double v) { return std::log(v); }, 0.01, 10},
      {"sqrt", [](double v) { return std::sqrt(v); }, 0, 10},
      {"rsqrt", [](double v) { return 1 / std::sqrt(v); }, 0.01, 10},
      {"sin", [](double v) { return std::sin(v); }, -7, 7},
      {"cos", [](double v) { return std::cos(v); }, -7, 7},
      {"tanh", [](double v) { return std::tanh(v); }, -5, 5},
      {"sigmoid", sigmoid_ref, -8, 8},
      {"erf", [](double v) { return std::erf(v); }, -3, 3},
      {"silu", [](double v) { return v * sigmoid_ref(v); }, -6, 6},
  };
  for (const FloatOp& f : float_ops) {
    const std::string op = f.name;
    unary_deduce(rows, op, "float32", "", "int32", "a float");
    rows.push_back(numeric(op, "x: Tensor[(n, 3), float32]", op + "(x)", ref_unary(f.ref)).range(f.lo, f.hi));
    rows.push_back(numeric(op, "x: Tensor[(n,), float64]", op + "(x)", ref_unary(f.ref)).range(f.lo, f.hi));
  }
  // 16-bit storage, float32 arithmetic.
  for (const FloatOp& f : float_ops) {
    const std::string op = f.name;
    if (op != "exp" && op != "rsqrt" && op != "sigmoid" && op != "silu" && op != "tanh") continue;
    rows.push_back(numeric(op, "x: Tensor[(n, 3), float16]", op + "(x)", ref_unary(f.ref)).range(f.lo, f.hi));
    rows.push_back(numeric(op, "x: Tensor[(n, 3), bfloat16]", op + "(x)", ref_unary(f.ref)).range(f.lo, f.hi));
  }

  // gelu.
  unary_deduce(rows, "gelu", "float32", "", "int32", "a float");
  unary_deduce(rows, "gelu", "float16", "", "int64", "a float", ", approximate=\"tanh\"");
  rows.push_back(deduce("gelu", "x: Tensor[(n,), float32]", "gelu(x, approximate=\"exact\")",
                        error("gelu: attribute `approximate`")));
  rows.push_back(deduce("gelu", "x: Tensor[(n,), float32]", "gelu(x, approx=\"tanh\")", error("gelu")));
  for (const char* dtype : {"float32", "float16", "bfloat16"}) {
    const std::string p = std::string("x: Tensor[(n, 5), ") + dtype + "]";
    rows.push_back(numeric("gelu", p, "gelu(x)", ref_unary([](double v) { return gelu_ref(v, false); })).range(-5, 5));
    rows.push_back(numeric("gelu", p, "gelu(x, approximate=\"tanh\")",
                           ref_unary([](double v) { return gelu_ref(v, true); }))
                       .range(-5, 5));
  }

  // clip.
  unary_deduce(rows, "clip", "float32", "", "bool", "a numeric", ", min=-0.5, max=0.5");
  rows.push_back(deduce("clip", "x: Tensor[(n,), int32]", "clip(x, min=0, max=6)", "Tensor[(n,), int32]"));
  rows.push_back(deduce("clip", "x: Tensor[(n,), int32]", "clip(x, min=0.5, max=6)",
                        error("clip: attribute `min` = 0.5 is not a whole number, and x is Tensor[(n,), int32]")));
  rows.push_back(deduce("clip", "x: Tensor[(n,), float32]", "clip(x, min=0)",
                        error("clip: attribute `max` (float) is required")));
  rows.push_back(deduce("clip", "x: Tensor[(n,), float32]", "clip(x, min=0, max=\"a\")", error("clip: attribute `max`")));
  rows.push_back(numeric("clip", "x: Tensor[(n, 3), float32]", "clip(x, min=-0.25, max=0.5)",
                         ref_unary([](double v) { return std::min(std::max(v, -0.25), 0.5); })));
  rows.push_back(numeric("clip", "x: Tensor[(n, 3), int32]", "clip(x, min=-3, max=4)",
                         ref_unary([](double v) { return std::min(std::max(v, -3.0), 4.0); })));
  // Bounds beyond the dtype are clamped to it; min > max gives max.
  rows.push_back(numeric("clip", "x: Tensor[(n,), uint8]", "clip(x, min=-100, max=1000)",
                         ref_unary([](double v) { return v; })));
  rows.push_back(numeric("clip", "x: Tensor[(n,), float32]", "clip(x, min=0.5, max=-0.5)",
                         ref_unary([](double) { return -0.5; })));
  rows.push_back(numeric("clip", "x: Tensor[(n, 3), bfloat16]", "clip(x, min=-0.25, max=0.5)",
                         ref_unary([](double v) { return std::min(std::max(v, -0.25), 0.5); })));

  // Numeric ops: ints and floats.
  struct NumericOp {
    const char* name;
    double (*ref)(double);
  };
  const NumericOp numeric_ops[] = {
      {"neg", [](double v) { return -v; }},
      {"abs", [](double v) { return std::fabs(v); }},
      {"relu", [](double v) { return std::max(v, 0.0); }},
      {"sign", sign_ref},
      {"square", [](double v) { return v * v; }},
      {"floor", [](double v) { return std::floor(v); }},
      {"ceil", [](double v) { return std::ceil(v); }},
      // nearbyint rounds ties to even in the default rounding mode.
      {"round", [](double v) { return std::nearbyint(v); }},
  };
  for (const NumericOp& f : numeric_ops) {
    const std::string op = f.name;
    unary_deduce(rows, op, "float32", "", "bool", "a numeric");
    rows.push_back(deduce(op, "x: Tensor[(n, 2), int8]", op + "(x)", "Tensor[(n, 2), int8]"));
    rows.push_back(numeric(op, "x: Tensor[(n, 3), float32]", op + "(x)", ref_unary(f.ref)).range(-4, 4));
    rows.push_back(numeric(op, "x: Tensor[(n, 3), float32]", op + "(x)", ref_unary(f.ref)).inputs(half_steps));
    rows.push_back(numeric(op, "x: Tensor[(n,), int32]", op + "(x)", ref_unary(f.ref)));
    rows.push_back(numeric(op, "x: Tensor[(n,), float64]", op + "(x)", ref_unary(f.ref)).range(-4, 4));
  }
  rows.push_back(numeric("round", "x: Tensor[(n,), bfloat16]", "round(x)", ref_unary([](double v) {
                           return std::nearbyint(v);
                         })).inputs(half_steps));
  rows.push_back(numeric("abs", "x: Tensor[(n,), uint8]", "abs(x)", ref_unary([](double v) { return v; })));
  rows.push_back(numeric("neg", "x: Tensor[(n,), uint8]", "neg(x)",
                         ref_unary([](double v) { return v == 0 ? 0 : 256 - v; })));
  rows.push_back(numeric("sign", "x: Tensor[(n,), uint8]", "sign(x)",
                         ref_unary([](double v) { return v > 0 ? 1.0 : 0.0; })));
  rows.push_back(numeric("sign", "x: Tensor[(n,), float32]", "sign(x)", ref_unary(sign_ref)).inputs(with_nans));

  // logical_not, isnan.
  unary_deduce(rows, "logical_not", "bool", "", "int32", "a bool");
  rows.push_back(numeric("logical_not", "x: Tensor[(n, 3), bool]", "logical_not(x)",
                         ref_unary([](double v) { return v != 0 ? 0.0 : 1.0; })));
  unary_deduce(rows, "isnan", "float32", "bool", "int32", "a float");
  rows.push_back(numeric("isnan", "x: Tensor[(n, 3), float32]", "isnan(x)",
                         ref_unary([](double v) { return std::isnan(v) ? 1.0 : 0.0; }, kBool))
                     .inputs(with_nans));
  rows.push_back(numeric("isnan", "x: Tensor[(n,), float16]", "isnan(x)",
                         ref_unary([](double v) { return std::isnan(v) ? 1.0 : 0.0; }, kBool))
                     .inputs(with_nans));
  return rows;
}

OpRows binary_rows() {
  OpRows rows = {
      // add: broadcasting.
      deduce("add", "x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]", "add(x, y)",
             "Tensor[(n, 4), float32]"),
      deduce("add", "x: Tensor[(n, 1), float32], y: Tensor[(4,), float32]", "add(x, y)",
             "Tensor[(n, 4), float32]"),
      deduce("add", "x: Tensor[(n * 2,), float32], y: Tensor[(2 * n,), float32]", "add(x, y)",
             "Tensor[(n * 2,), float32]"),
      deduce("add", "x: Tensor[(n,), ?], y: Tensor[(n,), float32]", "add(x, y)",
             "Tensor[(n,), float32]"),
      // add: Prim operands.
      deduce("add", "x: Tensor[(n,), int32]", "add(x, prim(2))", "Tensor[(n,), int32]"),
      deduce("add", "x: Tensor[(n,), ?]", "add(x, prim(2))", "Tensor[(n,), ?]"),
      deduce("add", "x: Tensor[(n,), ?], s: Prim[int32]", "add(x, s)", "Tensor[(n,), int32]"),
      deduce("add", "a: Prim[int64, n]", "add(a, prim(1))", "Prim[int64, n + 1]"),
      deduce("add", "x: Tensor[(n,), int32]", "add(x, prim(0.5f64))",
             error("add: dtypes differ: lhs is int32, rhs is Prim[float64, 0.5f64]")),
      deduce("add", "x: Tensor[(n,), uint8]", "add(x, prim(300))",
             error("add: dtypes differ: lhs is uint8, rhs is Prim[int64, 300]")),
      deduce("add", "x: Tensor[(n,), float32], c: Prim[bool]", "add(x, c)",
             error("add: argument 1 (rhs): expected a numeric Prim, got Prim[bool]")),
      numeric("add", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "add(x, y)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary(kPlus)),
      numeric("add", "x: Tensor[(n, 16), float32], b: Tensor[(16,), float32]", "add(x, b)", ref_binary(kPlus)),
      numeric("add", "x: Tensor[(n,), float64], y: Tensor[(n,), float64]", "add(x, y)", ref_binary(kPlus)),
      numeric("add", "x: Tensor[(n, 3), int32], y: Tensor[(n, 3), int32]", "add(x, y)", ref_binary(kPlus)),
      numeric("add", "x: Tensor[(n, 4), float32], s: Prim[float32]", "add(x, s)", ref_binary(kPlus)),
      numeric("add", "x: Tensor[(n,), float32]", "add(x, prim(2.5f32))",
              ref_unary([](double v) { return v + 2.5; })),
      numeric("add", "x: Tensor[(n, 2), int64]", "add(prim(3), x)", ref_unary([](double v) { return v + 3; })),
      numeric("add", "a: Prim[int64, n]", "add(a, prim(1))", ref_unary([](double v) { return v + 1; })),
      numeric("add", "x: Tensor[(n, 4), float16], y: Tensor[(4,), float16]", "add(x, y)", ref_binary(kPlus)),
      numeric("add", "x: Tensor[(n, 4), bfloat16]", "add(x, prim(1))", ref_unary([](double v) { return v + 1; })),

      // multiply.
      deduce("multiply", "x: Tensor[(k, n, m), float32], y: Tensor[(), float32]", "multiply(x, y)",
             "Tensor[(k, n, m), float32]"),
      deduce("multiply", "x: Tensor[(n,), float16]", "multiply(prim(0.5f64), x)", "Tensor[(n,), float16]"),
      deduce("multiply", "a: Prim[int64, n]", "multiply(prim(2), a)", "Prim[int64, n * 2]"),
      deduce("multiply", "s: Prim[float64], x: Tensor[(n,), float32]", "multiply(s, x)",
             error("multiply: dtypes differ: lhs is Prim[float64], rhs is float32")),
      numeric("multiply", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "multiply(x, y)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary(kTimes)),
      numeric("multiply", "s: Prim[float32], x: Tensor[(n, 4), float32]", "multiply(s, x)", ref_binary(kTimes)),
      numeric("multiply", "x: Tensor[(k, n), float32], y: Tensor[(), float32]", "multiply(x, y)",
              {{"k", {1, 3, 11}}, {"n", {1, 7, 64}}}, ref_binary(kTimes)),
      numeric("multiply", "x: Tensor[(n, 5), int32], y: Tensor[(n, 1), int32]", "multiply(x, y)",
              ref_binary(kTimes)),
      numeric("multiply", "x: Tensor[(n, 5), bfloat16], y: Tensor[(n, 1), bfloat16]", "multiply(x, y)",
              ref_binary(kTimes)),
      numeric("multiply", "x: Tensor[(n, 5), float16]", "multiply(x, prim(0.125f64))",
              ref_unary([](double v) { return v * 0.125; })),

      // subtract.
      deduce("subtract", "a: Prim[int64, n], b: Prim[int64, m]", "subtract(a, b)", "Prim[int64, n - m]"),
      numeric("subtract", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "subtract(x, y)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary(std::minus<double>())),
      numeric("subtract", "x: Tensor[(n, 3), int64]", "subtract(prim(1), x)", ref_unary([](double v) { return 1 - v; })),
      numeric("subtract", "x: Tensor[(n, 3), float16], y: Tensor[(n, 3), float16]", "subtract(x, y)",
              ref_binary(std::minus<double>())),

      // divide: floats only.
      deduce("divide", "x: Tensor[(n,), int32], y: Tensor[(n,), int32]", "divide(x, y)",
             error("divide: expected float operands, got int32")),
      deduce("divide", "a: Prim[int64, n]", "divide(a, prim(2))", error("divide: expected float operands, got int64")),
      deduce("divide", "x: Tensor[(n,), float32]", "divide(x, prim(2))", "Tensor[(n,), float32]"),
      deduce("divide", "x: Tensor[(n,), ?], y: Tensor[(n,), ?]", "divide(x, y)", "Tensor[(n,), ?]"),
      numeric("divide", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "divide(x, y)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary(std::divides<double>()))
          .inputs(away_from_zero),
      numeric("divide", "x: Tensor[(n, 3), float64]", "divide(x, prim(4))", ref_unary([](double v) { return v / 4; })),
      numeric("divide", "x: Tensor[(n, 3), float16], y: Tensor[(3,), float16]", "divide(x, y)",
              ref_binary(std::divides<double>()))
          .inputs(away_from_zero),
      numeric("divide", "x: Tensor[(n, 3), bfloat16], y: Tensor[(3,), bfloat16]", "divide(x, y)",
              ref_binary(std::divides<double>()))
          .inputs(away_from_zero),

      // floor_divide, mod: floor semantics; integer divisors of 0 give 0.
      deduce("floor_divide", "a: Prim[int64, n]", "floor_divide(a, prim(4))", "Prim[int64, floordiv(n, 4)]"),
      deduce("floor_divide", "x: Tensor[(n,), int32]", "floor_divide(x, prim(0))", "Tensor[(n,), int32]"),
      deduce("mod", "a: Prim[int64, n]", "mod(a, prim(4))", "Prim[int64, floormod(n, 4)]"),
      deduce("floor_divide", "x: Tensor[(n,), bool], y: Tensor[(n,), bool]", "floor_divide(x, y)",
             error("floor_divide: argument 0 (lhs): expected a numeric tensor, got Tensor[(n,), bool]")),
      numeric("floor_divide", "x: Tensor[(n, 4), int32], y: Tensor[(4,), int32]", "floor_divide(x, y)",
              ref_binary([](double a, double b) { return floor_divide_ref(a, b, true); })),
      numeric("floor_divide", "x: Tensor[(n, 4), int64]", "floor_divide(x, prim(-3))",
              ref_unary([](double a) { return floor_divide_ref(a, -3, true); })),
      numeric("floor_divide", "x: Tensor[(n,), int8], y: Tensor[(n,), int8]", "floor_divide(x, y)",
              ref_binary([](double a, double b) { return floor_divide_ref(a, b, true); }))
          .range(-128, 127),
      numeric("floor_divide", "x: Tensor[(n,), uint8], y: Tensor[(n,), uint8]", "floor_divide(x, y)",
              ref_binary([](double a, double b) { return floor_divide_ref(a, b, true); }))
          .range(0, 255),
      numeric("floor_divide", "x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]", "floor_divide(x, y)",
              ref_binary([](double a, double b) { return floor_divide_ref(a, b, false); }))
          .inputs(away_from_zero),
      numeric("mod", "x: Tensor[(n, 4), int32], y: Tensor[(4,), int32]", "mod(x, y)",
              ref_binary([](double a, double b) { return mod_ref(a, b, true); })),
      numeric("mod", "x: Tensor[(n,), int8], y: Tensor[(n,), int8]", "mod(x, y)",
              ref_binary([](double a, double b) { return mod_ref(a, b, true); }))
          .range(-128, 127),
      numeric("mod", "x: Tensor[(n, 4), int64]", "mod(x, prim(-3))",
              ref_unary([](double a) { return mod_ref(a, -3, true); })),
      numeric("mod", "x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]", "mod(x, y)",
              ref_binary([](double a, double b) { return mod_ref(a, b, false); }))
          .inputs(away_from_zero),
      numeric("mod", "x: Tensor[(n, 4), float64]", "mod(x, prim(0.75f64))",
              ref_unary([](double a) { return mod_ref(a, 0.75, false); }))
          .range(-5, 5),

      // power: floats only.
      deduce("power", "x: Tensor[(n,), int32], y: Tensor[(n,), int32]", "power(x, y)",
             error("power: expected float operands, got int32")),
      deduce("power", "x: Tensor[(n, 2), float16]", "power(x, prim(2))", "Tensor[(n, 2), float16]"),
      numeric("power", "x: Tensor[(n, 3), float32], y: Tensor[(3,), float32]", "power(x, y)",
              ref_binary([](double a, double b) { return std::pow(a, b); }))
          .range(0, 0.1, 4)
          .range(1, -2, 2),
      numeric("power", "x: Tensor[(n,), float64]", "power(x, prim(0.5f64))",
              ref_unary([](double a) { return std::sqrt(a); }))
          .range(0, 9),
      numeric("power", "x: Tensor[(n, 3), bfloat16]", "power(x, prim(2))", ref_unary([](double a) { return a * a; })),

      // maximum, minimum.
      deduce("maximum", "a: Prim[int64, n]", "maximum(a, prim(1))", "Prim[int64, max(1, n)]"),
      numeric("maximum", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "maximum(x, y)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary([](double a, double b) { return std::max(a, b); })),
      numeric("maximum", "x: Tensor[(n, 3), int32]", "maximum(x, prim(0))",
              ref_unary([](double a) { return std::max(a, 0.0); })),
      numeric("minimum", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "minimum(x, y)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary([](double a, double b) { return std::min(a, b); })),
      numeric("minimum", "x: Tensor[(n, 3), int64], y: Tensor[(n, 3), int64]", "minimum(x, y)",
              ref_binary([](double a, double b) { return std::min(a, b); })),
      numeric("minimum", "x: Tensor[(n, 3), float16]", "minimum(x, prim(0.25f64))",
              ref_unary([](double a) { return std::min(a, 0.25); })),
  };
  binary_deduce(rows, "add", "float32", "");
  binary_deduce(rows, "subtract", "int32", "");
  binary_deduce(rows, "multiply", "float32", "");
  binary_deduce(rows, "divide", "float32", "");
  binary_deduce(rows, "floor_divide", "int32", "");
  binary_deduce(rows, "mod", "float32", "");
  binary_deduce(rows, "power", "float32", "");
  binary_deduce(rows, "maximum", "int32", "");
  binary_deduce(rows, "minimum", "float32", "");

  // Comparisons: bool results.
  struct Comparison {
    const char* name;
    bool (*ref)(double, double);
  };
  const Comparison comparisons[] = {
      {"equal", [](double a, double b) { return a == b; }},
      {"not_equal", [](double a, double b) { return a != b; }},
      {"less", [](double a, double b) { return a < b; }},
      {"less_equal", [](double a, double b) { return a <= b; }},
      {"greater", [](double a, double b) { return a > b; }},
      {"greater_equal", [](double a, double b) { return a >= b; }},
  };
  for (const Comparison& c : comparisons) {
    const std::string op = c.name;
    auto ref = [f = c.ref](double a, double b) { return f(a, b) ? 1.0 : 0.0; };
    binary_deduce(rows, op, "float32", "bool");
    rows.push_back(deduce(op, "x: Tensor[(n,), int8]", op + "(x, prim(3))", "Tensor[(n,), bool]"));
    rows.push_back(deduce(op, "x: Tensor[(n,), ?], y: Tensor[(n,), ?]", op + "(x, y)", "Tensor[(n,), bool]"));
    rows.push_back(deduce(op, "x: Tensor[(n,), bool], y: Tensor[(n,), bool]", op + "(x, y)",
                          error(op + ": argument 0 (lhs): expected a numeric tensor, got Tensor[(n,), bool]")));
    // Integers in [-10, 10] meet often, so ties are tested.
    rows.push_back(numeric(op, "x: Tensor[(n, 1), int32], y: Tensor[(1, m), int32]", op + "(x, y)",
                           {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary(ref, kBool)));
    rows.push_back(numeric(op, "x: Tensor[(n, 4), float32], y: Tensor[(4,), float32]", op + "(x, y)",
                           ref_binary(ref, kBool))
                       .inputs(half_steps));
    rows.push_back(numeric(op, "x: Tensor[(n, 4), float16]", op + "(x, prim(0.5f64))",
                           ref_unary([ref](double a) { return ref(a, 0.5); }, kBool))
                       .inputs(half_steps));
  }

  // logical_and, logical_or.
  for (const char* name : {"logical_and", "logical_or"}) {
    const std::string op = name;
    const bool is_and = op == "logical_and";
    auto ref = [is_and](double a, double b) { return (is_and ? (a != 0 && b != 0) : (a != 0 || b != 0)) ? 1.0 : 0.0; };
    binary_deduce(rows, op, "bool", "bool");
    rows.push_back(deduce(op, "x: Tensor[(n,), int32], y: Tensor[(n,), int32]", op + "(x, y)",
                          error(op + ": argument 0 (lhs): expected a bool tensor, got Tensor[(n,), int32]")));
    rows.push_back(numeric(op, "x: Tensor[(n, 1), bool], y: Tensor[(1, m), bool]", op + "(x, y)",
                           {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary(ref, kBool)));
    // A bool Prim on either side, a parameter or a constant (kernels take it as an integer).
    rows.push_back(deduce(op, "x: Tensor[(n, 3), bool]", op + "(prim(true), x)", "Tensor[(n, 3), bool]"));
    rows.push_back(numeric(op, "s: Prim[bool], x: Tensor[(n, 3), bool]", op + "(s, x)", ref_binary(ref, kBool)));
    rows.push_back(numeric(op, "x: Tensor[(n, 3), bool]", op + "(x, prim(true))",
                           ref_unary([ref](double a) { return ref(a, 1); }, kBool)));
    rows.push_back(numeric(op, "x: Tensor[(n, 3), bool]", op + "(prim(false), x)",
                           ref_unary([ref](double a) { return ref(0, a); }, kBool)));
  }
  return rows;
}

OpRows where_rows() {
  const auto where3 = [](double c, double x, double y) { return c != 0 ? x : y; };
  return {
      deduce("where", "c: Tensor[(n, 1), bool], x: Tensor[(1, m), float32], y: Tensor[(m,), float32]",
             "where(c, x, y)", "Tensor[(n, m), float32]"),
      deduce("where", "c: Tensor[(2, 3), bool], x: Tensor[(3,), int32], y: Tensor[(2, 1), int32]",
             "where(c, x, y)", "Tensor[(2, 3), int32]"),
      deduce("where", "c: Tensor[(n,), bool], x: Tensor[(n,), float16]", "where(c, x, prim(0))",
             "Tensor[(n,), float16]"),
      deduce("where", "c: Tensor[(n, 4), bool]", "where(c, prim(1.5f32), prim(0))", "Tensor[(n, 4), float32]"),
      deduce("where", "c: Tensor[(n, 4), bool], x: Tensor[ndim=3, float32], y: Tensor[(4,), float32]",
             "where(c, x, y)", "Tensor[ndim=3, float32]"),
      deduce("where", "c: Tensor[ndim=?, bool], x: Tensor[(4,), float32], y: Tensor[(4,), float32]",
             "where(c, x, y)", "Tensor[ndim=?, float32]"),
      deduce("where", "c: Tensor[(n,), ?], x: Tensor[(n,), ?], y: Tensor[(n,), ?]", "where(c, x, y)",
             "Tensor[(n,), ?]"),
      deduce("where", "c: Tensor[(n,), bool], x: Tensor[(m,), float32], y: Tensor[(n,), float32]",
             "where(c, x, y)", error("where: cannot broadcast dim 0: `n` vs `m`")),
      deduce("where", "c: Tensor[(n,), bool], x: Tensor[(n,), float32], y: Tensor[(n,), int32]",
             "where(c, x, y)", error("where: dtypes differ: x is float32, y is int32")),
      deduce("where", "c: Tensor[(n,), int32], x: Tensor[(n,), float32], y: Tensor[(n,), float32]",
             "where(c, x, y)", error("where: argument 0 (cond): expected a bool tensor, got Tensor[(n,), int32]")),
      deduce("where", "c: Prim[bool], x: Tensor[(n,), float32], y: Tensor[(n,), float32]", "where(c, x, y)",
             error("where: argument 0 (cond): expected a Tensor, got Prim[bool]")),
      numeric("where", "c: Tensor[(n, 1), bool], x: Tensor[(1, m), float32], y: Tensor[(m,), float32]",
              "where(c, x, y)", {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_where()),
      numeric("where", "c: Tensor[(n, 3), bool], x: Tensor[(n, 3), int64], y: Tensor[(), int64]", "where(c, x, y)",
              ref_where()),
      numeric("where", "c: Tensor[(n, 3), bool], x: Tensor[(n, 3), bfloat16], y: Tensor[(n, 3), bfloat16]",
              "where(c, x, y)", ref_where()),
      numeric("where", "c: Tensor[(n, 3), bool], x: Tensor[(3,), float32]", "where(c, x, prim(0))",
              [where3](const RefInputs& in) -> RefResult {
                return map_ternary(in[0], in[1], HostTensor::scalar(0, in[1].dtype), where3, in[1].dtype);
              }),
      numeric("where", "c: Tensor[(n, 3), bool], y: Tensor[(n, 1), float32]", "where(c, prim(-1.5f32), y)",
              [where3](const RefInputs& in) -> RefResult {
                return map_ternary(in[0], HostTensor::scalar(-1.5, in[1].dtype), in[1], where3, in[1].dtype);
              }),
      numeric("where", "c: Tensor[(n, 2), bool]", "where(c, prim(2), prim(7))",
              ref_unary([](double c) { return c != 0 ? 2.0 : 7.0; }, DataType::int64())),
  };
}

}  // namespace

OpRows elementwise_rows() {
  OpRows rows = unary_rows();
  for (OpRows part : {binary_rows(), where_rows()}) {
    for (OpRow& row : part) rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace relax::ops_test
