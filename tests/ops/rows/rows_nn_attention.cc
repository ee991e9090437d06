// Conformance rows of attention and rotary_embedding (part of the nn family, rows_nn.cc).
#include "families.h"
#include "reference/reference_nn.h"
#include "rows/rows_nn.h"

namespace relax::ops_test {

namespace {

Reference attention_ref(std::optional<double> scale, std::string mask) {
  return [=](const RefInputs& in) -> RefResult { return attention(in[0], in[1], in[2], scale, mask); };
}

Reference rotary_ref(double theta) {
  return [=](const RefInputs& in) -> RefResult { return rotary_embedding(in[0], in[1], theta); };
}

}  // namespace

OpRows nn_attention_rows() {
  const std::string qkv =
      "q: Tensor[(b, n, 32, 128), float16], k: Tensor[(b, m, 8, 128), float16], "
      "v: Tensor[(b, m, 8, 128), float16]";
  return {
      // attention
      deduce("attention", qkv, "attention(q, k, v)", "Tensor[(b, n, 32, 128), float16]"),
      deduce("attention", qkv, "attention(q, k, v, causal_mask=\"BottomRight\")",
             "Tensor[(b, n, 32, 128), float16]"),
      deduce("attention",
             "q: Tensor[(b, n, h, 64), float32], k: Tensor[(b, m, h, 64), float32], "
             "v: Tensor[(b, m, h, 32), float32]",
             "attention(q, k, v, scale=0.125, causal_mask=\"TopLeft\")", "Tensor[(b, n, h, 32), float32]"),
      deduce("attention",
             "q: Tensor[(b, n, 2 * h, 64), float32], k: Tensor[(b, m, h, 64), float32], "
             "v: Tensor[(b, m, h, 64), float32]",
             "attention(q, k, v)", "Tensor[(b, n, 2 * h, 64), float32]"),
      deduce("attention",
             "q: Tensor[(b, n, 4 * h, 64), float32], k: Tensor[(b, m, 2 * h, 64), float32], "
             "v: Tensor[(b, m, 2 * h, 64), float32]",
             "attention(q, k, v)", "Tensor[(b, n, 4 * h, 64), float32]"),
      deduce("attention",
             "q: Tensor[(b, n, h, 64), float32], k: Tensor[(b, m, 2 * h, 64), float32], "
             "v: Tensor[(b, m, 2 * h, 64), float32]",
             "attention(q, k, v)", error("attention: the query heads (query dim 2) must be a multiple of the KV "
                                         "heads (key dim 2): `h` is not provably divisible by `2 * h`")),
      deduce("attention",
             "q: Tensor[ndim=4, float32], k: Tensor[(b, m, 8, 64), float32], v: Tensor[(b, m, 8, 64), float32]",
             "attention(q, k, v)", "Tensor[ndim=4, float32]"),
      deduce("attention",
             "q: Tensor[ndim=?, float32], k: Tensor[ndim=?, float32], v: Tensor[ndim=?, float32]",
             "attention(q, k, v)", "Tensor[ndim=4, float32]"),
      deduce("attention",
             "q: Tensor[(b, n, 12, 64), float32], k: Tensor[(b, m, 8, 64), float32], "
             "v: Tensor[(b, m, 8, 64), float32]",
             "attention(q, k, v)",
             error("attention: the query heads (query dim 2) must be a multiple of the KV heads (key dim 2): "
                   "`12` is not provably divisible by `8`")),
      deduce("attention",
             "q: Tensor[(b, n, h, 64), float32], k: Tensor[(b, m, g, 64), float32], "
             "v: Tensor[(b, m, g, 64), float32]",
             "attention(q, k, v)", error("attention: the query heads (query dim 2) must be a multiple")),
      deduce("attention",
             "q: Tensor[(b, n, 8, 64), float32], k: Tensor[(b, m, 8, 32), float32], "
             "v: Tensor[(b, m, 8, 64), float32]",
             "attention(q, k, v)",
             error("attention: argument 1 (key) dim 3 is `32`, expected `64` (the head dim: argument 0 (query) dim 3)")),
      deduce("attention",
             "q: Tensor[(b, n, 8, 64), float32], k: Tensor[(b, m, 8, 64), float32], "
             "v: Tensor[(b, p, 8, 64), float32]",
             "attention(q, k, v)",
             error("attention: argument 2 (value) dim 1 is `p`, expected `m` (the KV length: argument 1 (key) dim 1)")),
      deduce("attention",
             "q: Tensor[(2, n, 8, 64), float32], k: Tensor[(3, m, 8, 64), float32], "
             "v: Tensor[(3, m, 8, 64), float32]",
             "attention(q, k, v)", error("attention: argument 1 (key) dim 0 is `3`, expected `2` (the batch")),
      deduce("attention",
             "q: Tensor[(n, 8, 64), float32], k: Tensor[(b, m, 8, 64), float32], v: Tensor[(b, m, 8, 64), float32]",
             "attention(q, k, v)",
             error("attention: argument 0 (query): expected a tensor of rank 4, got Tensor[(n, 8, 64), float32]")),
      deduce("attention", qkv, "attention(q, k, v, causal_mask=\"Causal\")", error("attention: attribute `causal_mask`")),
      deduce("attention", qkv, "attention(q, k, v, scale=-1.0)", error("attention: scale must be positive")),
      deduce("attention",
             "q: Tensor[(b, n, 8, 64), float16], k: Tensor[(b, m, 8, 64), float32], v: Tensor[(b, m, 8, 64), float32]",
             "attention(q, k, v)",
             error("attention: dtypes differ: argument 0 (query) is float16, argument 1 (key) is float32")),
      numeric("attention",
              "q: Tensor[(b, n, 4, 16), float32], k: Tensor[(b, m, 4, 16), float32], v: Tensor[(b, m, 4, 16), float32]",
              "attention(q, k, v)", {{"b", {1, 2, 1}}, {"n", {1, 7, 64}}, {"m", {1, 11, 64}}},
              attention_ref(std::nullopt, "none"))
          .range(-2, 2)
          .tolerance(1e-4),
      numeric("attention",
              "q: Tensor[(1, n, 8, 8), float32], k: Tensor[(1, n, 2, 8), float32], v: Tensor[(1, n, 2, 8), float32]",
              "attention(q, k, v, causal_mask=\"TopLeft\")", {{"n", {1, 7, 64}}},
              attention_ref(std::nullopt, "TopLeft"))
          .range(-2, 2)
          .tolerance(1e-4),
      numeric("attention",
              "q: Tensor[(1, n, 4, 16), float32], k: Tensor[(1, m, 2, 16), float32], "
              "v: Tensor[(1, m, 2, 16), float32]",
              "attention(q, k, v, causal_mask=\"BottomRight\")", {{"n", {1, 7, 16}}, {"m", {1, 13, 64}}},
              attention_ref(std::nullopt, "BottomRight"))
          .range(-2, 2)
          .tolerance(1e-4),
      // m < n in the last run: the first n - m queries see no key and give zeros.
      numeric("attention",
              "q: Tensor[(2, n, 2, 8), float32], k: Tensor[(2, m, 1, 8), float32], v: Tensor[(2, m, 1, 8), float32]",
              "attention(q, k, v, causal_mask=\"BottomRight\")", {{"n", {1, 7, 40}}, {"m", {1, 7, 13}}},
              attention_ref(std::nullopt, "BottomRight"))
          .range(-2, 2)
          .tolerance(1e-4),
      numeric("attention",
              "q: Tensor[(b, n, 6, 16), float32], k: Tensor[(b, m, 3, 16), float32], v: Tensor[(b, m, 3, 8), float32]",
              "attention(q, k, v, scale=0.5, causal_mask=\"TopLeft\")",
              {{"b", {1, 3, 1}}, {"n", {1, 5, 64}}, {"m", {1, 13, 47}}}, attention_ref(0.5, "TopLeft"))
          .range(-2, 2)
          .tolerance(1e-4),
      numeric("attention",
              "q: Tensor[(1, n, 8, 32), float16], k: Tensor[(1, n, 2, 32), float16], v: Tensor[(1, n, 2, 32), float16]",
              "attention(q, k, v, causal_mask=\"TopLeft\")", {{"n", {1, 7, 64}}},
              attention_ref(std::nullopt, "TopLeft"))
          .range(-2, 2),
      numeric("attention",
              "q: Tensor[(1, n, 4, 32), bfloat16], k: Tensor[(1, m, 4, 32), bfloat16], "
              "v: Tensor[(1, m, 4, 32), bfloat16]",
              "attention(q, k, v)", {{"n", {1, 7, 64}}, {"m", {1, 5, 64}}}, attention_ref(std::nullopt, "none"))
          .range(-2, 2),
      numeric("attention",
              "q: Tensor[(1, n, 2, 8), float64], k: Tensor[(1, m, 2, 8), float64], v: Tensor[(1, m, 2, 8), float64]",
              "attention(q, k, v, causal_mask=\"BottomRight\")", {{"n", {1, 7, 64}}, {"m", {1, 13, 64}}},
              attention_ref(std::nullopt, "BottomRight"))
          .range(-2, 2),

      // rotary_embedding
      deduce("rotary_embedding", "x: Tensor[(b, s, 32, 128), float16], p: Tensor[(s,), int64]",
             "rotary_embedding(x, p)", "Tensor[(b, s, 32, 128), float16]"),
      deduce("rotary_embedding", "x: Tensor[(b, s, h, 2 * k), float32], p: Tensor[(s,), int64]",
             "rotary_embedding(x, p, theta=500000.0)", "Tensor[(b, s, h, 2 * k), float32]"),
      deduce("rotary_embedding", "x: Tensor[ndim=4, float32], p: Tensor[(s,), int64]", "rotary_embedding(x, p)",
             "Tensor[ndim=4, float32]"),
      deduce("rotary_embedding", "x: Tensor[ndim=?, float32], p: Tensor[ndim=?, int64]", "rotary_embedding(x, p)",
             "Tensor[ndim=4, float32]"),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, 7), float32], p: Tensor[(s,), int64]", "rotary_embedding(x, p)",
             error("rotary_embedding: the head dim (x dim 3) must be even: `7` is not provably divisible by `2`")),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, d), float32], p: Tensor[(s,), int64]", "rotary_embedding(x, p)",
             error("rotary_embedding: the head dim (x dim 3) must be even: `d` is not provably divisible by `2`")),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, 64), float32], p: Tensor[(t,), int64]", "rotary_embedding(x, p)",
             error("rotary_embedding: argument 1 (positions) dim 0 is `t`, expected `s` (x dim 1, the sequence)")),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, 64), float32], p: Tensor[(s,), float32]",
             "rotary_embedding(x, p)",
             error("rotary_embedding: argument 1 (positions): expected an integer tensor, got Tensor[(s,), float32]")),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, 64), float32], p: Tensor[(b, s), int64]",
             "rotary_embedding(x, p)", "Tensor[(b, s, 8, 64), float32]"),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, 64), float32], p: Tensor[(c, s), int64]", "rotary_embedding(x, p)",
             error("rotary_embedding: argument 1 (positions) dim 0 is `c`, expected `b` (x dim 0, the batch)")),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, 64), float32], p: Tensor[(b, t), int64]", "rotary_embedding(x, p)",
             error("rotary_embedding: argument 1 (positions) dim 1 is `t`, expected `s` (x dim 1, the sequence)")),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, 64), float32], p: Tensor[(1, b, s), int64]",
             "rotary_embedding(x, p)",
             error("rotary_embedding: argument 1 (positions): expected a tensor of rank 1 (s,) or 2 (b, s)")),
      deduce("rotary_embedding", "x: Tensor[(s, 8, 64), float32], p: Tensor[(s,), int64]", "rotary_embedding(x, p)",
             error("rotary_embedding: argument 0 (x): expected a tensor of rank 4, got Tensor[(s, 8, 64), float32]")),
      deduce("rotary_embedding", "x: Tensor[(b, s, 8, 64), float32], p: Tensor[(s,), int64]",
             "rotary_embedding(x, p, theta=0.0)", error("rotary_embedding: theta must be positive")),
      numeric("rotary_embedding", "x: Tensor[(b, s, 4, 64), float32], p: Tensor[(s,), int64]",
              "rotary_embedding(x, p)", {{"b", {1, 2, 1}}, {"s", {1, 7, 300}}}, rotary_ref(10000))
          .range(1, 0, 512)
          .tolerance(1e-4),
      numeric("rotary_embedding", "x: Tensor[(b, s, 4, 64), float32], p: Tensor[(b, s), int64]",
              "rotary_embedding(x, p)", {{"b", {1, 3, 2}}, {"s", {1, 5, 130}}}, rotary_ref(10000))
          .range(1, 0, 512)
          .tolerance(1e-4),
      numeric("rotary_embedding", "x: Tensor[(1, s, 2, 8), float32], p: Tensor[(s,), int32]",
              "rotary_embedding(x, p, theta=500000.0)", {{"s", {1, 13, 64}}}, rotary_ref(500000))
          .range(1, 0, 100)
          .tolerance(1e-4),
      numeric("rotary_embedding", "x: Tensor[(1, s, 3, 2), float64], p: Tensor[(s,), int64]",
              "rotary_embedding(x, p, theta=100.0)", {{"s", {1, 13, 300}}}, rotary_ref(100))
          .range(1, 0, 1000),
      numeric("rotary_embedding", "x: Tensor[(1, s, 4, 32), float16], p: Tensor[(s,), int64]",
              "rotary_embedding(x, p)", {{"s", {1, 7, 64}}}, rotary_ref(10000))
          .range(1, 0, 64),
      numeric("rotary_embedding", "x: Tensor[(1, s, 4, 32), bfloat16], p: Tensor[(s,), int64]",
              "rotary_embedding(x, p)", {{"s", {1, 7, 64}}}, rotary_ref(10000))
          .range(1, 0, 64),
  };
}

}  // namespace relax::ops_test
