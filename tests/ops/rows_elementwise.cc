// Conformance rows of the elementwise operators: add, multiply (numpy broadcasting, Prim
// operands on either side) and exp.
#include <cmath>
#include <functional>

#include "families.h"

namespace relax::ops_test {

namespace {

const auto kPlus = std::plus<double>();
const auto kTimes = std::multiplies<double>();

}  // namespace

OpRows elementwise_rows() {
  return {
      // add: broadcasting.
      deduce("add", "x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]", "add(x, y)",
             "Tensor[(n, 4), float32]"),
      deduce("add", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "add(x, y)",
             "Tensor[(n, m), float32]"),
      deduce("add", "x: Tensor[(n, 1), float32], y: Tensor[(4,), float32]", "add(x, y)",
             "Tensor[(n, 4), float32]"),
      deduce("add", "x: Tensor[(3, 1), float32], y: Tensor[(1, 5), float32]", "add(x, y)",
             "Tensor[(3, 5), float32]"),
      deduce("add", "x: Tensor[(n * 2,), float32], y: Tensor[(2 * n,), float32]", "add(x, y)",
             "Tensor[(n * 2,), float32]"),
      deduce("add", "x: Tensor[(n, 4), float32], y: Tensor[ndim=3, float32]", "add(x, y)",
             "Tensor[ndim=3, float32]"),
      deduce("add", "x: Tensor[ndim=?, float32], y: Tensor[(n,), float32]", "add(x, y)",
             "Tensor[ndim=?, float32]"),
      deduce("add", "x: Tensor[(n,), ?], y: Tensor[(n,), float32]", "add(x, y)", "Tensor[(n,), float32]"),
      deduce("add", "x: Tensor[(2, n), float32], y: Tensor[(2, m), float32]", "add(x, y)",
             error("add: cannot broadcast dim 1: `n` vs `m`")),
      deduce("add", "x: Tensor[(n,), float32], y: Tensor[(n,), int32]", "add(x, y)",
             error("add: dtypes differ: lhs is float32, rhs is int32")),
      // add: Prim operands.
      deduce("add", "x: Tensor[(n, 4), float32], s: Prim[float32]", "add(x, s)", "Tensor[(n, 4), float32]"),
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

      // multiply.
      deduce("multiply", "x: Tensor[(k, n, m), float32], y: Tensor[(), float32]", "multiply(x, y)",
             "Tensor[(k, n, m), float32]"),
      deduce("multiply", "s: Prim[float32], x: Tensor[(n, 4), float32]", "multiply(s, x)",
             "Tensor[(n, 4), float32]"),
      deduce("multiply", "x: Tensor[(n,), float16]", "multiply(prim(0.5f64), x)", "Tensor[(n,), float16]"),
      deduce("multiply", "x: Tensor[ndim=2, float32], s: Prim[float32]", "multiply(x, s)",
             "Tensor[ndim=2, float32]"),
      deduce("multiply", "a: Prim[int64, n]", "multiply(prim(2), a)", "Prim[int64, n * 2]"),
      deduce("multiply", "x: Tensor[(3, 2), float32], y: Tensor[(4, 2), float32]", "multiply(x, y)",
             error("multiply: cannot broadcast dim 0: `3` vs `4`")),
      deduce("multiply", "x: Tensor[(2,), float32], s: Shape[(2,)]", "multiply(x, s)",
             error("multiply: argument 1 (rhs): expected a Tensor or a Prim, got Shape[(2,)]")),
      deduce("multiply", "s: Prim[float64], x: Tensor[(n,), float32]", "multiply(s, x)",
             error("multiply: dtypes differ: lhs is Prim[float64], rhs is float32")),
      numeric("multiply", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "multiply(x, y)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary(kTimes)),
      numeric("multiply", "s: Prim[float32], x: Tensor[(n, 4), float32]", "multiply(s, x)", ref_binary(kTimes)),
      numeric("multiply", "x: Tensor[(k, n), float32], y: Tensor[(), float32]", "multiply(x, y)",
              {{"k", {1, 3, 11}}, {"n", {1, 7, 64}}}, ref_binary(kTimes)),
      numeric("multiply", "x: Tensor[(n, 5), int32], y: Tensor[(n, 1), int32]", "multiply(x, y)",
              ref_binary(kTimes)),

      // exp.
      deduce("exp", "x: Tensor[(n, 4), float32]", "exp(x)", "Tensor[(n, 4), float32]"),
      deduce("exp", "x: Tensor[(n,), float64]", "exp(x)", "Tensor[(n,), float64]"),
      deduce("exp", "x: Tensor[ndim=3, float32]", "exp(x)", "Tensor[ndim=3, float32]"),
      deduce("exp", "x: Tensor[ndim=?, float32]", "exp(x)", "Tensor[ndim=?, float32]"),
      deduce("exp", "x: Tensor[(n,), ?]", "exp(x)", "Tensor[(n,), ?]"),
      deduce("exp", "x: Tensor[(n,), int32]", "exp(x)",
             error("exp: argument 0 (x): expected a float tensor, got Tensor[(n,), int32]")),
      deduce("exp", "s: Prim[float32]", "exp(s)", error("exp: argument 0 (x): expected a Tensor, got Prim[float32]")),
      numeric("exp", "x: Tensor[(n, 3), float32]", "exp(x)", ref_unary([](double v) { return std::exp(v); }))
          .range(-4, 4),
      numeric("exp", "x: Tensor[(n,), float64]", "exp(x)", ref_unary([](double v) { return std::exp(v); }))
          .range(-20, 20),
  };
}

}  // namespace relax::ops_test
