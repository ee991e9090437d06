// Conformance rows of linear algebra: matmul (numpy semantics: batch dims broadcast, 1-D
// operands are a row on the left and a column on the right, their dim dropped; `out_dtype`
// for mixed precision) and linear (x . weight^T + optional bias).
#include "families.h"
#include "reference/reference_nn.h"

namespace relax::ops_test {

namespace {

RefResult matmul_ref(const RefInputs& in) { return matmul(in[0], in[1]); }

Reference matmul_to(DataType out) {
  return [out](const RefInputs& in) -> RefResult {
    HostTensor y = matmul(in[0], in[1]);
    y.dtype = out;
    return y;
  };
}

Reference linear_ref(DataType out) {
  return [out](const RefInputs& in) -> RefResult {
    return linear(in[0], in[1], in.args.size() > 2 ? &in[2] : nullptr, out);
  };
}

}  // namespace

OpRows linalg_rows() {
  return {
      deduce("matmul", "a: Tensor[(n, k), float32], b: Tensor[(k, m), float32]", "matmul(a, b)",
             "Tensor[(n, m), float32]"),
      deduce("matmul", "a: Tensor[(2, 3), float32], b: Tensor[(3, 4), float32]", "matmul(a, b)",
             "Tensor[(2, 4), float32]"),
      deduce("matmul", "a: Tensor[(b, 1, n, k), float32], w: Tensor[(h, k, m), float32]", "matmul(a, w)",
             "Tensor[(b, h, n, m), float32]"),
      deduce("matmul", "a: Tensor[(b, n, k), float32], w: Tensor[(k, m), float32]", "matmul(a, w)",
             "Tensor[(b, n, m), float32]"),
      deduce("matmul", "v: Tensor[(k,), float32], w: Tensor[(k, m), float32]", "matmul(v, w)",
             "Tensor[(m,), float32]"),
      deduce("matmul", "a: Tensor[(n, k), float32], v: Tensor[(k,), float32]", "matmul(a, v)",
             "Tensor[(n,), float32]"),
      deduce("matmul", "u: Tensor[(k,), float32], v: Tensor[(k,), float32]", "matmul(u, v)", "Tensor[(), float32]"),
      deduce("matmul", "a: Tensor[(n, k * 2), float32], b: Tensor[(2 * k, 4), float32]", "matmul(a, b)",
             "Tensor[(n, 4), float32]"),
      deduce("matmul", "a: Tensor[ndim=3, float32], b: Tensor[(k, m), float32]", "matmul(a, b)",
             "Tensor[ndim=3, float32]"),
      deduce("matmul", "a: Tensor[ndim=1, float32], b: Tensor[ndim=2, float32]", "matmul(a, b)",
             "Tensor[ndim=1, float32]"),
      deduce("matmul", "a: Tensor[ndim=?, float32], b: Tensor[(k, m), float32]", "matmul(a, b)",
             "Tensor[ndim=?, float32]"),
      deduce("matmul", "a: Tensor[(n, k), ?], b: Tensor[(k, m), ?]", "matmul(a, b)", "Tensor[(n, m), ?]"),
      deduce("matmul", "a: Tensor[(n, k), float32], b: Tensor[(m, 4), float32]", "matmul(a, b)",
             error("matmul: inner dims differ: lhs dim 1 is `k`, rhs dim 0 is `m`")),
      deduce("matmul", "a: Tensor[(2, n, 8), float32], b: Tensor[(2, 7, 4), float32]", "matmul(a, b)",
             error("matmul: inner dims differ: lhs dim 2 is `8`, rhs dim 1 is `7`")),
      deduce("matmul", "a: Tensor[(3, n, k), float32], b: Tensor[(5, k, m), float32]", "matmul(a, b)",
             error("matmul: cannot broadcast batch dim 0: `3` vs `5`")),
      deduce("matmul", "s: Tensor[(), float32], b: Tensor[(k, m), float32]", "matmul(s, b)",
             error("matmul: argument 0 (lhs): expected a tensor of rank >= 1, got Tensor[(), float32]")),
      numeric("matmul", "a: Tensor[(n, k), float32], b: Tensor[(k, m), float32]", "matmul(a, b)",
              {{"n", {1, 7, 50}}, {"k", {1, 13, 64}}, {"m", {1, 5, 33}}}, matmul_ref)
          .tolerance(1e-5, 1e-4),
      // An empty inner dim: the sum over nothing, zeros (numpy, PyTorch); k is 0 in run 1, beside
      // runs where it is not, and n, then m, is 0 in run 2 (an empty result).
      numeric("matmul", "a: Tensor[(n, k), float32], b: Tensor[(k, m), float32]", "matmul(a, b)",
              {{"n", {3, 5, 0}}, {"k", {4, 0, 2}}, {"m", {6, 7, 3}}}, matmul_ref),
      numeric("matmul", "a: Tensor[(b, n, k), float64], w: Tensor[(k, m), float64]", "matmul(a, w)",
              {{"b", {2, 1, 3}}, {"n", {3, 5, 4}}, {"k", {4, 0, 2}}, {"m", {6, 7, 0}}}, matmul_ref),
      numeric("matmul", "u: Tensor[(k,), float32], v: Tensor[(k,), float32]", "matmul(u, v)", {{"k", {3, 0, 1}}},
              matmul_ref),
      numeric("matmul", "a: Tensor[(n, k), int32], b: Tensor[(k, m), int32]", "matmul(a, b)",
              {{"n", {3, 5, 2}}, {"k", {4, 0, 2}}, {"m", {6, 7, 3}}}, matmul_ref),
      numeric("matmul", "a: Tensor[(b, 1, n, 8), float32], w: Tensor[(h, 8, m), float32]", "matmul(a, w)",
              {{"b", {1, 2, 3}}, {"h", {1, 3, 2}}, {"n", {1, 7, 40}}, {"m", {1, 5, 17}}}, matmul_ref),
      numeric("matmul", "a: Tensor[(b, n, 16), float32], w: Tensor[(16, 4), float32]", "matmul(a, w)",
              {{"b", {1, 3, 2}}, {"n", {1, 11, 100}}}, matmul_ref),
      numeric("matmul", "v: Tensor[(k,), float32], w: Tensor[(k, m), float32]", "matmul(v, w)",
              {{"k", {1, 13, 64}}, {"m", {1, 5, 70}}}, matmul_ref)
          .tolerance(1e-5, 1e-4),
      numeric("matmul", "a: Tensor[(n, k), float32], v: Tensor[(k,), float32]", "matmul(a, v)",
              {{"n", {1, 5, 70}}, {"k", {1, 13, 64}}}, matmul_ref)
          .tolerance(1e-5, 1e-4),
      numeric("matmul", "u: Tensor[(k,), float32], v: Tensor[(k,), float32]", "matmul(u, v)",
              {{"k", {1, 13, 300}}}, matmul_ref)
          .tolerance(1e-5, 1e-4),
      numeric("matmul", "v: Tensor[(k,), float32], w: Tensor[(b, k, m), float32]", "matmul(v, w)",
              {{"k", {1, 13, 32}}, {"b", {1, 2, 3}}, {"m", {1, 5, 9}}}, matmul_ref),
      numeric("matmul", "a: Tensor[(n, k), float64], b: Tensor[(k, m), float64]", "matmul(a, b)",
              {{"n", {1, 7, 50}}, {"k", {1, 13, 64}}, {"m", {1, 5, 33}}}, matmul_ref),
      // Mixed precision.
      deduce("matmul", "a: Tensor[(n, k), float16], b: Tensor[(k, m), float16]", "matmul(a, b, out_dtype=float32)",
             "Tensor[(n, m), float32]"),
      deduce("matmul", "a: Tensor[(b, n, k), int8], b: Tensor[(k, m), int8]", "matmul(a, b, out_dtype=int32)",
             "Tensor[(b, n, m), int32]"),
      deduce("matmul", "a: Tensor[ndim=3, ?], b: Tensor[(k, m), ?]", "matmul(a, b, out_dtype=float32)",
             "Tensor[ndim=3, float32]"),
      deduce("matmul", "a: Tensor[(n, k), float16], b: Tensor[(k, m), float16]", "matmul(a, b, out_dtype=int32)",
             error("matmul: out_dtype int32 is not a float dtype, but the operands are float16")),
      deduce("matmul", "a: Tensor[(n, k), int8], b: Tensor[(k, m), int8]", "matmul(a, b, out_dtype=bool)",
             error("matmul: out_dtype must be an integer or float dtype, got bool")),
      deduce("matmul", "a: Tensor[(n, k), int8], b: Tensor[(k, m), int8]", "matmul(a, b, out_type=int32)",
             error("matmul: unknown attribute `out_type`")),
      numeric("matmul", "a: Tensor[(n, k), float16], b: Tensor[(k, m), float16]", "matmul(a, b, out_dtype=float32)",
              {{"n", {1, 7, 50}}, {"k", {1, 13, 256}}, {"m", {1, 5, 33}}}, matmul_to(DataType::float32()))
          .tolerance(1e-5, 1e-4),
      numeric("matmul", "a: Tensor[(b, n, k), int8], w: Tensor[(k, m), int8]", "matmul(a, w, out_dtype=int32)",
              {{"b", {1, 2, 3}}, {"n", {1, 7, 30}}, {"k", {1, 13, 256}}, {"m", {1, 5, 33}}},
              matmul_to(DataType::int32()))
          .range(-128, 127),
      numeric("matmul", "a: Tensor[(n, k), float16], b: Tensor[(k, m), float16]", "matmul(a, b)",
              {{"n", {1, 7, 50}}, {"k", {1, 13, 256}}, {"m", {1, 5, 33}}}, matmul_ref)
          .tolerance(2e-3, 5e-3),
      numeric("matmul", "a: Tensor[(n, k), bfloat16], b: Tensor[(k, m), bfloat16]", "matmul(a, b)",
              {{"n", {1, 7, 50}}, {"k", {1, 13, 256}}, {"m", {1, 5, 33}}}, matmul_ref)
          .tolerance(1e-2, 3e-2),

      // linear
      deduce("linear", "x: Tensor[(b, n, k), float32], w: Tensor[(m, k), float32], c: Tensor[(m,), float32]",
             "linear(x, w, c)", "Tensor[(b, n, m), float32]"),
      deduce("linear", "x: Tensor[(n, 4096), float16], w: Tensor[(11008, 4096), float16]", "linear(x, w)",
             "Tensor[(n, 11008), float16]"),
      deduce("linear", "x: Tensor[(k,), float32], w: Tensor[(m, k), float32]", "linear(x, w)",
             "Tensor[(m,), float32]"),
      deduce("linear",
             "x: Tensor[(n, k), float16], w: Tensor[(m, k), float16], c: Tensor[(m,), float32]",
             "linear(x, w, c, out_dtype=float32)", "Tensor[(n, m), float32]"),
      deduce("linear", "x: Tensor[(n, k), int8], w: Tensor[(m, k), int8]", "linear(x, w, out_dtype=int32)",
             "Tensor[(n, m), int32]"),
      deduce("linear", "x: Tensor[ndim=3, float32], w: Tensor[(m, k), float32]", "linear(x, w)",
             "Tensor[ndim=3, float32]"),
      deduce("linear", "x: Tensor[ndim=?, float32], w: Tensor[(m, k), float32]", "linear(x, w)",
             "Tensor[ndim=?, float32]"),
      deduce("linear", "x: Tensor[(n, k), float32], w: Tensor[(m, j), float32]", "linear(x, w)",
             error("linear: argument 1 (weight) dim 1 is `j`, expected `k` (x dim 1)")),
      deduce("linear", "x: Tensor[(n, k), float32], w: Tensor[(k,), float32]", "linear(x, w)",
             error("linear: argument 1 (weight): expected a tensor of rank 2, got Tensor[(k,), float32]")),
      deduce("linear", "x: Tensor[(n, k), float32], w: Tensor[(m, k), float32], c: Tensor[(p,), float32]",
             "linear(x, w, c)", error("linear: cannot broadcast bias dim")),
      deduce("linear", "x: Tensor[(n, k), float32], w: Tensor[(m, k), float32], c: Tensor[(n, 1, m), float32]",
             "linear(x, w, c)", error("linear: argument 2 (bias): rank 3 exceeds the result's rank 2")),
      deduce("linear", "x: Tensor[(n, k), float16], w: Tensor[(m, k), float16], c: Tensor[(m,), float16]",
             "linear(x, w, c, out_dtype=float32)",
             error("linear: argument 2 (bias): expected dtype float32 (the result's), got Tensor[(m,), float16]")),
      deduce("linear", "x: Tensor[(n, k), float16], w: Tensor[(m, k), float32]", "linear(x, w)",
             error("linear: dtypes differ: argument 0 (x) is float16, argument 1 (weight) is float32")),
      deduce("linear", "x: Tensor[(), float32], w: Tensor[(m, k), float32]", "linear(x, w)",
             error("linear: argument 0 (x): expected a tensor of rank >= 1, got Tensor[(), float32]")),
      numeric("linear", "x: Tensor[(b, n, k), float32], w: Tensor[(m, k), float32], c: Tensor[(m,), float32]",
              "linear(x, w, c)", {{"b", {1, 2, 3}}, {"n", {1, 7, 40}}, {"k", {1, 13, 64}}, {"m", {1, 5, 33}}},
              linear_ref(DataType::float32()))
          .tolerance(1e-5, 1e-4),
      numeric("linear", "x: Tensor[(n, k), float32], w: Tensor[(m, k), float32]", "linear(x, w)",
              {{"n", {1, 7, 300}}, {"k", {1, 13, 64}}, {"m", {1, 5, 33}}}, linear_ref(DataType::float32()))
          .tolerance(1e-5, 1e-4),
      numeric("linear", "x: Tensor[(n, k), float32], w: Tensor[(m, k), float32], c: Tensor[(n, 1), float32]",
              "linear(x, w, c)", {{"n", {1, 7, 30}}, {"k", {1, 13, 64}}, {"m", {1, 5, 33}}},
              linear_ref(DataType::float32()))
          .tolerance(1e-5, 1e-4),
      numeric("linear", "x: Tensor[(n, k), float16], w: Tensor[(m, k), float16], c: Tensor[(m,), float32]",
              "linear(x, w, c, out_dtype=float32)", {{"n", {1, 7, 30}}, {"k", {1, 13, 256}}, {"m", {1, 5, 33}}},
              linear_ref(DataType::float32()))
          .tolerance(1e-5, 1e-4),
      numeric("linear", "x: Tensor[(n, k), float16], w: Tensor[(m, k), float16], c: Tensor[(m,), float16]",
              "linear(x, w, c)", {{"n", {1, 7, 30}}, {"k", {1, 13, 256}}, {"m", {1, 5, 33}}},
              linear_ref(DataType::float16()))
          .tolerance(2e-3, 5e-3),
      numeric("linear", "x: Tensor[(n, k), int8], w: Tensor[(m, k), int8], c: Tensor[(m,), int32]",
              "linear(x, w, c, out_dtype=int32)", {{"n", {1, 7, 30}}, {"k", {1, 13, 256}}, {"m", {1, 5, 33}}},
              linear_ref(DataType::int32()))
          .range(0, -128, 127)
          .range(1, -128, 127),
  };
}

}  // namespace relax::ops_test
