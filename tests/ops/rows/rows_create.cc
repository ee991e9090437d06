// Conformance rows of the creation operators: zeros, ones (a Shape and the attribute `dtype`),
// full (a Shape and a Prim value), zeros_like, ones_like, full_like, arange (Prim start, end,
// step) and tril/triu (an optional Prim k).
#include <cmath>

#include "families.h"
#include "reference/reference_create.h"

namespace relax::ops_test {
namespace {

// A tensor of parameter 0's dims (a Shape parameter) filled with `value`.
Reference filled_of_shape(double value, DataType dtype) {
  return [=](const RefInputs& in) {
    std::vector<int64_t> dims;
    for (double d : in[0].values) dims.push_back(static_cast<int64_t>(d));
    return HostTensor::filled(dims, dtype, value);
  };
}

}  // namespace

OpRows create_rows() {
  const Sizes nm = {{"n", {1, 7, 300}}, {"m", {1, 13, 33}}};
  return {
      // zeros, ones.
      deduce("zeros", "s: Shape[(n, m)]", "zeros(s, dtype=float32)", "Tensor[(n, m), float32]"),
      deduce("ones", "x: Tensor[(n,), int8]", "ones(shape(n, 4), dtype=int32)", "Tensor[(n, 4), int32]"),
      deduce("zeros", "s: Shape[ndim=2]", "zeros(s, dtype=bool)", "Tensor[ndim=2, bool]"),
      deduce("ones", "s: Shape[]", "ones(s, dtype=float16)", "Tensor[ndim=?, float16]"),
      deduce("zeros", "s: Shape[(n, m)]", "zeros(s)", error("zeros: attribute `dtype` (dtype) is required")),
      deduce("zeros", "x: Tensor[(n,), int8]", "zeros(shape(n, -1), dtype=float32)",
             error("zeros: shape (n, -1): dim 1 is -1, expected a size >= 0")),
      deduce("ones", "x: Tensor[(n,), float32]", "ones(x, dtype=float32)",
             error("ones: argument 0 (shape): expected a Shape, got Tensor[(n,), float32]")),
      numeric("zeros", "s: Shape[(n, m)]", "zeros(s, dtype=float32)", nm, filled_of_shape(0, DataType::float32())),
      numeric("ones", "s: Shape[(n, m)]", "ones(s, dtype=int32)", nm, filled_of_shape(1, DataType::int32())),
      numeric("ones", "s: Shape[(n,)]", "ones(s, dtype=float64)", filled_of_shape(1, DataType::float64())),

      // full.
      deduce("full", "s: Shape[(n, 3)], v: Prim[float32]", "full(s, v)", "Tensor[(n, 3), float32]"),
      deduce("full", "s: Shape[(n, 3)], v: Prim[float32]", "full(s, v, dtype=int64)", "Tensor[(n, 3), int64]"),
      deduce("full", "s: Shape[(n,)]", "full(s, prim(2))", "Tensor[(n,), int64]"),
      deduce("full", "s: Shape[(n,)], x: Tensor[(n,), float32]", "full(s, x)",
             error("full: argument 1 (value): expected a Prim, got Tensor[(n,), float32]")),
      numeric("full", "s: Shape[(n, m)], v: Prim[float32]", "full(s, v)", nm,
              [](const RefInputs& in) {
                return HostTensor::filled({in.dim("n"), in.dim("m")}, DataType::float32(), in[1].values[0]);
              }),
      // A symbolic value: each element is n.
      numeric("full", "s: Shape[(n, 2)], v: Prim[int64, n]", "full(s, v, dtype=int32)",
              [](const RefInputs& in) {
                return HostTensor::filled({in.dim("n"), 2}, DataType::int32(), static_cast<double>(in.dim("n")));
              }),

      // zeros_like, ones_like, full_like.
      deduce("zeros_like", "x: Tensor[(n, m), float32]", "zeros_like(x)", "Tensor[(n, m), float32]"),
      deduce("ones_like", "x: Tensor[(n, m), float32]", "ones_like(x, dtype=int64)", "Tensor[(n, m), int64]"),
      deduce("zeros_like", "x: Tensor[ndim=3, float32]", "zeros_like(x)", "Tensor[ndim=3, float32]"),
      deduce("full_like", "x: Tensor[(n,), ?], v: Prim[float32]", "full_like(x, v)", "Tensor[(n,), ?]"),
      deduce("full_like", "x: Tensor[(n,), int32]", "full_like(x, prim(1.5f64), dtype=float32)",
             "Tensor[(n,), float32]"),
      deduce("zeros_like", "s: Shape[(n,)]", "zeros_like(s)",
             error("zeros_like: argument 0 (x): expected a Tensor, got Shape[(n,)]")),
      numeric("zeros_like", "x: Tensor[(n, m), float32]", "zeros_like(x)", nm, ref_unary([](double) { return 0.0; })),
      numeric("ones_like", "x: Tensor[(n, m), float32]", "ones_like(x, dtype=int64)", nm,
              ref_unary([](double) { return 1.0; }, DataType::int64())),
      numeric("full_like", "x: Tensor[(n, m), int32], v: Prim[float64]", "full_like(x, v)", nm,
              [](const RefInputs& in) {
                // Converted to x's int32: rounded toward zero.
                return map_unary(in[0], [&](double) { return std::trunc(in[1].values[0]); });
              })
          .range(1, -7.9, 7.9),

      // arange.
      deduce("arange", "e: Prim[int64, n]", "arange(prim(0), e)", "Tensor[(n,), int64]"),
      deduce("arange", "b: Prim[int64, a], e: Prim[int64, n]", "arange(b, e)", "Tensor[(n - a,), int64]"),
      deduce("arange", "e: Prim[int64, n]", "arange(prim(2), e, prim(3))", "Tensor[(floordiv(n, 3),), int64]"),
      deduce("arange", "e: Prim[int64, n]", "arange(e, prim(0), prim(-2))", "Tensor[(floordiv(n + 1, 2),), int64]"),
      deduce("arange", "x: Tensor[(1,), int8]", "arange(prim(0), prim(10), prim(3))", "Tensor[(4,), int64]"),
      deduce("arange", "x: Tensor[(1,), int8]", "arange(prim(10), prim(0), prim(-3))", "Tensor[(4,), int64]"),
      deduce("arange", "x: Tensor[(1,), int8]", "arange(prim(5), prim(2))", "Tensor[(0,), int64]"),
      deduce("arange", "x: Tensor[(1,), int8]", "arange(prim(0.5f64), prim(2.0f64), prim(0.25f64))",
             "Tensor[(6,), float64]"),
      deduce("arange", "e: Prim[int64, n]", "arange(prim(0), e, dtype=float32)", "Tensor[(n,), float32]"),
      deduce("arange", "e: Prim[float32]", "arange(prim(0), e)", "Tensor[ndim=1, float32]"),
      deduce("arange", "e: Prim[int64, n], t: Prim[int64, t]", "arange(prim(0), e, t)", "Tensor[ndim=1, int64]"),
      deduce("arange", "e: Prim[int64, n]", "arange(prim(0), e, prim(0))", error("arange: step is 0")),
      deduce("arange", "e: Prim[bool]", "arange(prim(0), e)",
             error("arange: argument 1 (end): expected a numeric Prim")),
      numeric("arange", "e: Prim[int64, n]", "arange(prim(0), e)",
              [](const RefInputs& in) { return arange(0, static_cast<double>(in.dim("n")), 1, DataType::int64()); }),
      numeric("arange", "b: Prim[int64, a], e: Prim[int64, n]", "arange(b, e, prim(3))",
              {{"a", {0, 3, 5}}, {"n", {1, 13, 300}}},
              [](const RefInputs& in) {
                return arange(static_cast<double>(in.dim("a")), static_cast<double>(in.dim("n")), 3,
                              DataType::int64());
              }),
      numeric("arange", "e: Prim[int64, n]", "arange(e, prim(-1), prim(-2), dtype=int32)",
              [](const RefInputs& in) { return arange(static_cast<double>(in.dim("n")), -1, -2, DataType::int32()); }),
      numeric("arange", "e: Prim[int64, n]", "arange(prim(1), e, dtype=float32)",
              [](const RefInputs& in) { return arange(1, static_cast<double>(in.dim("n")), 1, DataType::float32()); }),
      numeric("arange", "x: Tensor[(n,), int8]", "arange(prim(0.5f64), prim(2.0f64), prim(0.25f64))",
              [](const RefInputs&) { return arange(0.5, 2.0, 0.25, DataType::float64()); }),

      // tril, triu.
      deduce("tril", "x: Tensor[(n, m), float32]", "tril(x)", "Tensor[(n, m), float32]"),
      deduce("triu", "x: Tensor[(b, n, n), int32], k: Prim[int64]", "triu(x, k)", "Tensor[(b, n, n), int32]"),
      deduce("tril", "x: Tensor[ndim=?, float32]", "tril(x, prim(1))", "Tensor[ndim=?, float32]"),
      deduce("tril", "x: Tensor[(n,), float32]", "tril(x)",
             error("tril: x Tensor[(n,), float32] has rank 1, expected at least 2")),
      deduce("triu", "x: Tensor[(n, n), float32], k: Prim[float32]", "triu(x, k)",
             error("triu: argument 1 (k): expected an integer Prim")),
      numeric("tril", "x: Tensor[(n, m), float32]", "tril(x)", nm,
              [](const RefInputs& in) { return triangle(in[0], 0, true); }),
      numeric("triu", "x: Tensor[(n, m), int32]", "triu(x)", nm,
              [](const RefInputs& in) { return triangle(in[0], 0, false); }),
      numeric("tril", "x: Tensor[(b, n, m), float64]", "tril(x, prim(-1))", {{"b", {1, 2, 3}}, {"n", {1, 7, 40}}},
              [](const RefInputs& in) { return triangle(in[0], -1, true); }),
      numeric("triu", "x: Tensor[(n, m), float32], k: Prim[int64]", "triu(x, k)", nm,
              [](const RefInputs& in) {
                return triangle(in[0], static_cast<int64_t>(in[1].values[0]), false);
              }),
      numeric("tril", "x: Tensor[(n, m), bool], k: Prim[int64, m]", "tril(x, k)", nm,
              [](const RefInputs& in) { return triangle(in[0], in.dim("m"), true); }),
  };
}

}  // namespace relax::ops_test
