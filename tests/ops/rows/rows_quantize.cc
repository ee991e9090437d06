// Conformance rows of quantised weights: dequantize(packed, scales, group_size, axis, bits)
// and quantize(x, group_size, axis, bits) -> (packed, scales), group-wise symmetric int4
// (uint8, two values per byte along axis, low nibble first, q = nibble - 8) and int8.
#include "families.h"
#include "reference/reference_conv.h"

namespace relax::ops_test {

namespace {

Reference dequantize_with(int64_t group_size, int64_t axis, int64_t bits) {
  return [=](const RefInputs& in) { return dequantize_ref(in[0], in[1], group_size, axis, bits); };
}

Reference quantize_with(int64_t group_size, int64_t axis, int64_t bits) {
  return [=](const RefInputs& in) { return quantize_ref(in[0], group_size, axis, bits); };
}

}  // namespace

OpRows quantize_rows() {
  return {
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(n, 2), float16]", "dequantize(p, s, group_size=32)",
             "Tensor[(n, 64), float16]"),
      deduce("dequantize", "p: Tensor[(n, 64), int8], s: Tensor[(n, 2), float32]",
             "dequantize(p, s, group_size=32, bits=8)", "Tensor[(n, 64), float32]"),
      deduce("dequantize", "p: Tensor[(k * 16, m), uint8], s: Tensor[(k, m), float32]",
             "dequantize(p, s, group_size=32, axis=0)", "Tensor[(k * 32, m), float32]"),
      deduce("dequantize", "p: Tensor[(n, k), uint8], s: Tensor[(n, k), bfloat16]",
             "dequantize(p, s, group_size=2)", "Tensor[(n, k * 2), bfloat16]"),
      deduce("dequantize", "p: Tensor[(4, 5), uint8], s: Tensor[(4, 4), float32]",
             "dequantize(p, s, group_size=3)", "Tensor[(4, 10), float32]"),
      deduce("dequantize", "p: Tensor[ndim=2, uint8], s: Tensor[(n, 2), float32]", "dequantize(p, s, group_size=32)",
             "Tensor[ndim=2, float32]"),
      deduce("dequantize", "p: Tensor[ndim=?, uint8], s: Tensor[ndim=?, float32]", "dequantize(p, s, group_size=32)",
             "Tensor[ndim=?, float32]"),
      deduce("dequantize", "p: Tensor[(n, 32), int8], s: Tensor[(n, 2), float32]", "dequantize(p, s, group_size=32)",
             error("dequantize: argument 0 (packed): expected uint8 for bits=4, got Tensor[(n, 32), int8]")),
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(n, 2), float32]",
             "dequantize(p, s, group_size=32, bits=3)", error("dequantize: attribute `bits` must be 4 or 8, got 3")),
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(n, 2), float32]",
             "dequantize(p, s, group_size=0)", error("dequantize: attribute `group_size` must be >= 1, got 0")),
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(n, 2), float32]", "dequantize(p, s)",
             error("dequantize: attribute `group_size` (int) is required")),
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(n, 4), float32]", "dequantize(p, s, group_size=32)",
             error("dequantize: scales dim 1 is `4`, expected `2` (ceil of K `64` / group_size 32)")),
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(m, 2), float32]", "dequantize(p, s, group_size=32)",
             error("dequantize: scales dim 0 is `m`, expected `n` (packed dim 0)")),
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(n, 2, 1), float32]", "dequantize(p, s, group_size=32)",
             error("dequantize: ranks differ")),
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(n, 2), float32]",
             "dequantize(p, s, group_size=32, axis=2)", error("dequantize: axis 2 is out of range for rank 2")),
      deduce("dequantize", "p: Tensor[(n, 32), uint8], s: Tensor[(n, 2), int32]", "dequantize(p, s, group_size=32)",
             error("dequantize: argument 1 (scales): expected a float tensor")),
      deduce("quantize", "x: Tensor[(n, 64), float32]", "quantize(x, group_size=32)",
             "Tuple[(Tensor[(n, 32), uint8], Tensor[(n, 2), float32])]"),
      deduce("quantize", "x: Tensor[(k * 2, m), float16]", "quantize(x, group_size=6, axis=0, bits=8)",
             "Tuple[(Tensor[(k * 2, m), int8], Tensor[(floordiv(k + 2, 3), m), float16])]"),
      deduce("quantize", "x: Tensor[ndim=3, float32]", "quantize(x, group_size=32)",
             "Tuple[(Tensor[ndim=3, uint8], Tensor[ndim=3, float32])]"),
      deduce("quantize", "x: Tensor[(n, k), float32]", "quantize(x, group_size=32)",
             error("quantize: bits=4 packs two values per byte: x dim 1 is `k`, not provably even")),
      deduce("quantize", "x: Tensor[(n, 8), int32]", "quantize(x, group_size=4)",
             error("quantize: argument 0 (x): expected a float tensor")),

      numeric("dequantize", "p: Tensor[(n, 16), uint8], s: Tensor[(n, 1), float32]", "dequantize(p, s, group_size=32)",
              {{"n", {1, 7, 32}}}, dequantize_with(32, -1, 4))
          .range(0, 0, 255),
      numeric("dequantize", "p: Tensor[(n, k), uint8], s: Tensor[(n, k), float32]", "dequantize(p, s, group_size=2)",
              {{"n", {1, 7, 32}}, {"k", {1, 13, 32}}}, dequantize_with(2, -1, 4))
          .range(0, 0, 255),
      numeric("dequantize", "p: Tensor[(k * 4, m), uint8], s: Tensor[(k, m), float32]",
              "dequantize(p, s, group_size=8, axis=0)", {{"k", {1, 7, 32}}, {"m", {1, 3, 5}}}, dequantize_with(8, 0, 4))
          .range(0, 0, 255),
      numeric("dequantize", "p: Tensor[(n, 12), uint8], s: Tensor[(n, 3), float32]", "dequantize(p, s, group_size=10)",
              {{"n", {1, 7, 32}}}, dequantize_with(10, -1, 4))
          .range(0, 0, 255),
      numeric("dequantize", "p: Tensor[(n, k * 4), int8], s: Tensor[(n, k), float32]",
              "dequantize(p, s, group_size=4, bits=8)", {{"n", {1, 7, 32}}, {"k", {1, 13, 32}}},
              dequantize_with(4, -1, 8))
          .range(0, -128, 127),
      numeric("dequantize", "p: Tensor[(n, 16), uint8], s: Tensor[(n, 2), float16]", "dequantize(p, s, group_size=16)",
              {{"n", {1, 7, 32}}}, dequantize_with(16, -1, 4))
          .range(0, 0, 255)
          .tolerance(1e-3, 1e-3),
      numeric("dequantize", "p: Tensor[(n, 16), int8], s: Tensor[(n, 1), bfloat16]",
              "dequantize(p, s, group_size=16, bits=8)", {{"n", {1, 7, 32}}}, dequantize_with(16, -1, 8))
          .range(0, -128, 127)
          .tolerance(1e-2, 1e-2),
      numeric("quantize", "x: Tensor[(n, 64), float32]", "quantize(x, group_size=32)", {{"n", {1, 7, 32}}},
              quantize_with(32, -1, 4)),
      numeric("quantize", "x: Tensor[(n, k * 2), float32]", "quantize(x, group_size=6)",
              {{"n", {1, 7, 32}}, {"k", {1, 7, 32}}}, quantize_with(6, -1, 4))
          .range(-3, 3),
      numeric("quantize", "x: Tensor[(k * 2, m), float32]", "quantize(x, group_size=4, axis=0)",
              {{"k", {1, 7, 32}}, {"m", {1, 13, 5}}}, quantize_with(4, 0, 4)),
      numeric("quantize", "x: Tensor[(n, k), float32]", "quantize(x, group_size=5, bits=8)",
              {{"n", {1, 7, 32}}, {"k", {1, 13, 32}}}, quantize_with(5, -1, 8)),
  };
}

}  // namespace relax::ops_test
