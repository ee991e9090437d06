// Conformance rows of the neural-network operators: softmax and log_softmax (attribute
// `axis`, default -1), layer_norm and rms_norm (`axes`, default [-1]; `epsilon`), group_norm
// (`num_groups`, channel axis 1), batch_norm (inference; `axis`, default 1), attention
// (`scale`, `causal_mask`) and rotary_embedding (`theta`). The attention rows keep their sizes
// moderate (n, m <= 64) so that the plain-loop reference stays fast.
#include "families.h"
#include "reference/reference_nn.h"
#include "rows/rows_nn.h"

namespace relax::ops_test {

namespace {

OpRows softmax_rows() {
  return {
      deduce("softmax", "x: Tensor[(n, 16), float32]", "softmax(x)", "Tensor[(n, 16), float32]"),
      deduce("softmax", "x: Tensor[(n, 16), float32]", "softmax(x, axis=0)", "Tensor[(n, 16), float32]"),
      deduce("softmax", "x: Tensor[(n,), float64]", "softmax(x, axis=-1)", "Tensor[(n,), float64]"),
      deduce("softmax", "x: Tensor[ndim=2, float32]", "softmax(x, axis=1)", "Tensor[ndim=2, float32]"),
      deduce("softmax", "x: Tensor[ndim=?, float32]", "softmax(x, axis=5)", "Tensor[ndim=?, float32]"),
      deduce("softmax", "x: Tensor[(n, 3), ?]", "softmax(x)", "Tensor[(n, 3), ?]"),
      deduce("softmax", "x: Tensor[(n, 4), float32]", "softmax(x, axis=2)",
             error("softmax: axis 2 is out of range for rank 2 (x Tensor[(n, 4), float32])")),
      deduce("softmax", "x: Tensor[(n, 4), float32]", "softmax(x, axis=-3)",
             error("softmax: axis -3 is out of range for rank 2")),
      deduce("softmax", "x: Tensor[(), float32]", "softmax(x)", error("softmax: axis -1 is out of range for rank 0")),
      deduce("softmax", "x: Tensor[(n,), int32]", "softmax(x)",
             error("softmax: argument 0 (x): expected a float tensor, got Tensor[(n,), int32]")),
      deduce("softmax", "x: Tensor[(n,), float32]", "softmax(x, axis=0.5)", error("softmax: attribute `axis`")),
      numeric("softmax", "x: Tensor[(n, 16), float32]", "softmax(x)",
              [](const RefInputs& in) { return softmax(in[0], -1); })
          .range(-5, 5),
      numeric("softmax", "x: Tensor[(n, m), float32]", "softmax(x, axis=0)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 33}}}, [](const RefInputs& in) { return softmax(in[0], 0); })
          .range(-5, 5),
      numeric("softmax", "x: Tensor[(b, n, 7), float32]", "softmax(x, axis=1)",
              {{"b", {1, 2, 3}}, {"n", {1, 13, 300}}}, [](const RefInputs& in) { return softmax(in[0], 1); })
          .range(-30, 30),
      // An empty axis, or empty other dims: an empty result.
      numeric("softmax", "x: Tensor[(n, m), float32]", "softmax(x, axis=1)", {{"n", {3, 4, 0}}, {"m", {5, 0, 2}}},
              [](const RefInputs& in) { return softmax(in[0], 1); }),
      numeric("log_softmax", "x: Tensor[(n, m), float32]", "log_softmax(x, axis=0)",
              {{"n", {3, 0, 4}}, {"m", {5, 2, 0}}}, [](const RefInputs& in) { return log_softmax(in[0], 0); }),
      numeric("softmax", "x: Tensor[(n,), float64]", "softmax(x)",
              [](const RefInputs& in) { return softmax(in[0], -1); })
          .range(-50, 50),
      // log_softmax
      deduce("log_softmax", "x: Tensor[(n, 16), float32]", "log_softmax(x)", "Tensor[(n, 16), float32]"),
      deduce("log_softmax", "x: Tensor[ndim=3, float16]", "log_softmax(x, axis=1)", "Tensor[ndim=3, float16]"),
      deduce("log_softmax", "x: Tensor[ndim=?, float32]", "log_softmax(x, axis=5)", "Tensor[ndim=?, float32]"),
      deduce("log_softmax", "x: Tensor[(n, 4), float32]", "log_softmax(x, axis=2)",
             error("log_softmax: axis 2 is out of range for rank 2 (x Tensor[(n, 4), float32])")),
      deduce("log_softmax", "x: Tensor[(n,), int32]", "log_softmax(x)",
             error("log_softmax: argument 0 (x): expected a float tensor, got Tensor[(n,), int32]")),
      deduce("log_softmax", "x: Tensor[(n,), float32]", "log_softmax(x, dim=0)",
             error("log_softmax: unknown attribute `dim`")),
      numeric("log_softmax", "x: Tensor[(n, 16), float32]", "log_softmax(x)",
              [](const RefInputs& in) { return log_softmax(in[0], -1); })
          .range(-5, 5),
      numeric("log_softmax", "x: Tensor[(b, n, 7), float32]", "log_softmax(x, axis=1)",
              {{"b", {1, 2, 3}}, {"n", {1, 13, 300}}}, [](const RefInputs& in) { return log_softmax(in[0], 1); })
          .range(-30, 30),
      numeric("log_softmax", "x: Tensor[(n, 33), float16]", "log_softmax(x)",
              [](const RefInputs& in) { return log_softmax(in[0], -1); })
          .range(-4, 4),
      numeric("log_softmax", "x: Tensor[(n, 33), bfloat16]", "log_softmax(x, axis=0)",
              [](const RefInputs& in) { return log_softmax(in[0], 0); })
          .range(-4, 4),
  };
}

}  // namespace

OpRows nn_rows() {
  OpRows rows = softmax_rows();
  for (OpRows more : {nn_norm_rows(), nn_attention_rows()}) {
    for (OpRow& row : more) rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace relax::ops_test
