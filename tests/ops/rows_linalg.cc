// Conformance rows of linear algebra: matmul (numpy semantics: batch dims broadcast, 1-D
// operands are a row on the left and a column on the right, their dim dropped).
#include "families.h"

namespace relax::ops_test {

namespace {

RefResult matmul_ref(const RefInputs& in) { return matmul(in[0], in[1]); }

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
  };
}

}  // namespace relax::ops_test
