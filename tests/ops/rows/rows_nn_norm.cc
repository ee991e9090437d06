// Conformance rows of the normalisations (part of the nn family, rows_nn.cc): layer_norm,
// rms_norm, group_norm, batch_norm.
#include "families.h"
#include "reference/reference_nn.h"
#include "rows/rows_nn.h"

namespace relax::ops_test {

namespace {

constexpr double kEps = 1e-5;

Reference layer_norm_ref(std::vector<int64_t> axes, double eps = kEps) {
  return [=](const RefInputs& in) -> RefResult { return layer_norm(in[0], in[1], in[2], axes, eps); };
}

Reference rms_norm_ref(std::vector<int64_t> axes, double eps = kEps) {
  return [=](const RefInputs& in) -> RefResult { return rms_norm(in[0], in[1], axes, eps); };
}

Reference group_norm_ref(int64_t groups, double eps = kEps) {
  return [=](const RefInputs& in) -> RefResult { return group_norm(in[0], in[1], in[2], groups, eps); };
}

Reference batch_norm_ref(int64_t axis, double eps = kEps) {
  return [=](const RefInputs& in) -> RefResult {
    return batch_norm(in[0], in[1], in[2], in[3], in[4], axis, eps);
  };
}

}  // namespace

OpRows nn_norm_rows() {
  const std::string ln2 = "x: Tensor[(n, 64), float32], g: Tensor[(64,), float32], b: Tensor[(64,), float32]";
  return {
      // layer_norm
      deduce("layer_norm", ln2, "layer_norm(x, g, b)", "Tensor[(n, 64), float32]"),
      deduce("layer_norm",
             "x: Tensor[(b, n, d), float32], g: Tensor[(n, d), float32], b2: Tensor[(n, d), float32]",
             "layer_norm(x, g, b2, axes=[1, 2])", "Tensor[(b, n, d), float32]"),
      deduce("layer_norm",
             "x: Tensor[(b, n, d), float32], g: Tensor[(d, n), float32], b2: Tensor[(d, n), float32]",
             "layer_norm(x, g, b2, axes=[-1, 1], epsilon=1e-6)", "Tensor[(b, n, d), float32]"),
      deduce("layer_norm", "x: Tensor[ndim=3, float16], g: Tensor[(d,), float16], b: Tensor[(d,), float16]",
             "layer_norm(x, g, b)", "Tensor[ndim=3, float16]"),
      deduce("layer_norm", "x: Tensor[ndim=?, float32], g: Tensor[(d,), float32], b: Tensor[(d,), float32]",
             "layer_norm(x, g, b)", "Tensor[ndim=?, float32]"),
      deduce("layer_norm", "x: Tensor[(n, d), ?], g: Tensor[(d,), float32], b: Tensor[(d,), ?]",
             "layer_norm(x, g, b)", "Tensor[(n, d), float32]"),
      deduce("layer_norm", "x: Tensor[(n, 64), float32], g: Tensor[(32,), float32], b: Tensor[(64,), float32]",
             "layer_norm(x, g, b)",
             error("layer_norm: argument 1 (gamma) dim 0 is `32`, expected `64` (x dim 1)")),
      deduce("layer_norm", "x: Tensor[(n, d), float32], g: Tensor[(d,), float32], b: Tensor[(e,), float32]",
             "layer_norm(x, g, b)", error("layer_norm: argument 2 (beta) dim 0 is `e`, expected `d` (x dim 1)")),
      deduce("layer_norm", "x: Tensor[(n, 64), float32], g: Tensor[(n, 64), float32], b: Tensor[(64,), float32]",
             "layer_norm(x, g, b)",
             error("layer_norm: argument 1 (gamma): expected a tensor of rank 1, got Tensor[(n, 64), float32]")),
      deduce("layer_norm", "x: Tensor[(n, 64), float32], g: Tensor[(64,), float16], b: Tensor[(64,), float32]",
             "layer_norm(x, g, b)",
             error("layer_norm: dtypes differ: argument 0 (x) is float32, argument 1 (gamma) is float16")),
      deduce("layer_norm", ln2, "layer_norm(x, g, b, axes=[2])",
             error("layer_norm: axis 2 is out of range for rank 2 (x Tensor[(n, 64), float32])")),
      deduce("layer_norm",
             "x: Tensor[(n, 64), float32], g: Tensor[(64, 64), float32], b: Tensor[(64, 64), float32]",
             "layer_norm(x, g, b, axes=[1, -1])", error("layer_norm: axis 1 appears twice in axes")),
      deduce("layer_norm", ln2, "layer_norm(x, g, b, axis=[1])", error("layer_norm: unknown attribute `axis`")),
      deduce("layer_norm", "x: Tensor[(n, 4), int32], g: Tensor[(4,), int32], b: Tensor[(4,), int32]",
             "layer_norm(x, g, b)", error("layer_norm: argument 0 (x): expected a float tensor")),
      numeric("layer_norm", ln2, "layer_norm(x, g, b)", layer_norm_ref({-1})).range(0, -3, 5),
      numeric("layer_norm",
              "x: Tensor[(b, n, d), float32], g: Tensor[(n, d), float32], b2: Tensor[(n, d), float32]",
              "layer_norm(x, g, b2, axes=[1, 2], epsilon=0.001)",
              {{"b", {1, 2, 3}}, {"n", {1, 7, 20}}, {"d", {1, 5, 64}}}, layer_norm_ref({1, 2}, 1e-3))
          .tolerance(1e-4),
      numeric("layer_norm",
              "x: Tensor[(n, 5, d), float32], g: Tensor[(d, 5), float32], b2: Tensor[(d, 5), float32]",
              "layer_norm(x, g, b2, axes=[2, 1])", {{"n", {1, 3, 4}}, {"d", {1, 13, 128}}},
              layer_norm_ref({2, 1}))
          .tolerance(1e-4),
      numeric("layer_norm", "x: Tensor[(n, 128), float16], g: Tensor[(128,), float16], b: Tensor[(128,), float16]",
              "layer_norm(x, g, b)", layer_norm_ref({-1}))
          .range(0, -3, 5),
      numeric("layer_norm",
              "x: Tensor[(n, 96), bfloat16], g: Tensor[(96,), bfloat16], b: Tensor[(96,), bfloat16]",
              "layer_norm(x, g, b)", layer_norm_ref({-1})),
      // An empty normalized extent (d = 0 in run 1) or batch (n = 0 in run 2): an empty result,
      // as in PyTorch.
      numeric("layer_norm", "x: Tensor[(n, d), float32], g: Tensor[(d,), float32], b: Tensor[(d,), float32]",
              "layer_norm(x, g, b)", {{"n", {3, 4, 0}}, {"d", {5, 0, 2}}}, layer_norm_ref({-1})),
      numeric("layer_norm", "x: Tensor[(n, 64), float64], g: Tensor[(64,), float64], b: Tensor[(64,), float64]",
              "layer_norm(x, g, b)", layer_norm_ref({-1})),

      // rms_norm
      deduce("rms_norm", "x: Tensor[(b, n, 4096), float16], w: Tensor[(4096,), float16]", "rms_norm(x, w)",
             "Tensor[(b, n, 4096), float16]"),
      deduce("rms_norm", "x: Tensor[(n, h, d), float32], w: Tensor[(h, d), float32]",
             "rms_norm(x, w, axes=[-2, -1], epsilon=1e-6)", "Tensor[(n, h, d), float32]"),
      deduce("rms_norm", "x: Tensor[ndim=2, float32], w: Tensor[ndim=1, float32]", "rms_norm(x, w)",
             "Tensor[ndim=2, float32]"),
      deduce("rms_norm", "x: Tensor[(n, d), float32], w: Tensor[(n,), float32]", "rms_norm(x, w)",
             error("rms_norm: argument 1 (weight) dim 0 is `n`, expected `d` (x dim 1)")),
      deduce("rms_norm", "x: Tensor[(n, d), float32], w: Tensor[ndim=2, float32]", "rms_norm(x, w)",
             error("rms_norm: argument 1 (weight): expected a tensor of rank 1, got Tensor[ndim=2, float32]")),
      deduce("rms_norm", "x: Tensor[(n, d), float32], w: Tensor[(d,), float32]", "rms_norm(x, w, axes=[])",
             error("rms_norm: axes must not be empty")),
      numeric("rms_norm", "x: Tensor[(n, 64), float32], w: Tensor[(64,), float32]", "rms_norm(x, w)",
              rms_norm_ref({-1})),
      numeric("rms_norm", "x: Tensor[(b, n, d), float32], w: Tensor[(d,), float32]",
              "rms_norm(x, w, epsilon=1e-6)", {{"b", {1, 2, 1}}, {"n", {1, 7, 33}}, {"d", {1, 13, 256}}},
              rms_norm_ref({-1}, 1e-6))
          .tolerance(1e-4),
      numeric("rms_norm", "x: Tensor[(n, h, d), float32], w: Tensor[(h, d), float32]",
              "rms_norm(x, w, axes=[1, 2])", {{"n", {1, 5, 40}}, {"h", {1, 3, 4}}, {"d", {1, 7, 32}}},
              rms_norm_ref({1, 2}))
          .tolerance(1e-4),
      numeric("rms_norm", "x: Tensor[(n, d), float32], w: Tensor[(d,), float32]", "rms_norm(x, w)",
              {{"n", {3, 4, 0}}, {"d", {5, 0, 2}}}, rms_norm_ref({-1})),
      numeric("rms_norm", "x: Tensor[(n, 256), float16], w: Tensor[(256,), float16]", "rms_norm(x, w)",
              rms_norm_ref({-1})),
      numeric("rms_norm", "x: Tensor[(n, 256), bfloat16], w: Tensor[(256,), bfloat16]", "rms_norm(x, w)",
              rms_norm_ref({-1})),

      // group_norm
      deduce("group_norm", "x: Tensor[(n, 32, h, w), float32], g: Tensor[(32,), float32], b: Tensor[(32,), float32]",
             "group_norm(x, g, b, num_groups=8)", "Tensor[(n, 32, h, w), float32]"),
      deduce("group_norm", "x: Tensor[(n, c), float32], g: Tensor[(c,), float32], b: Tensor[(c,), float32]",
             "group_norm(x, g, b, num_groups=1)", "Tensor[(n, c), float32]"),
      deduce("group_norm", "x: Tensor[ndim=4, float32], g: Tensor[(c,), float32], b: Tensor[(c,), float32]",
             "group_norm(x, g, b, num_groups=4)", "Tensor[ndim=4, float32]"),
      deduce("group_norm", "x: Tensor[(n, 30, h), float32], g: Tensor[(30,), float32], b: Tensor[(30,), float32]",
             "group_norm(x, g, b, num_groups=4)",
             error("group_norm: the channel dim (x dim 1) must split into num_groups: `30` is not provably "
                   "divisible by `4`")),
      deduce("group_norm", "x: Tensor[(n, c), float32], g: Tensor[(c,), float32], b: Tensor[(c,), float32]",
             "group_norm(x, g, b, num_groups=2)",
             error("group_norm: the channel dim (x dim 1) must split into num_groups: `c` is not provably")),
      deduce("group_norm", "x: Tensor[(n, 8), float32], g: Tensor[(4,), float32], b: Tensor[(8,), float32]",
             "group_norm(x, g, b, num_groups=2)",
             error("group_norm: argument 1 (gamma) dim 0 is `4`, expected `8` (x dim 1)")),
      deduce("group_norm", "x: Tensor[(8,), float32], g: Tensor[(8,), float32], b: Tensor[(8,), float32]",
             "group_norm(x, g, b, num_groups=2)",
             error("group_norm: argument 0 (x): expected a tensor of rank >= 2 (N, C, ...), got Tensor[(8,), float32]")),
      deduce("group_norm", "x: Tensor[(n, 8), float32], g: Tensor[(8,), float32], b: Tensor[(8,), float32]",
             "group_norm(x, g, b)", error("group_norm: attribute `num_groups` (int) is required")),
      deduce("group_norm", "x: Tensor[(n, 8), float32], g: Tensor[(8,), float32], b: Tensor[(8,), float32]",
             "group_norm(x, g, b, num_groups=0)", error("group_norm: num_groups must be at least 1, got 0")),
      numeric("group_norm", "x: Tensor[(n, 6, h, w), float32], g: Tensor[(6,), float32], b: Tensor[(6,), float32]",
              "group_norm(x, g, b, num_groups=3)", {{"n", {1, 2, 3}}, {"h", {1, 5, 16}}, {"w", {1, 3, 16}}},
              group_norm_ref(3))
          .tolerance(1e-4),
      numeric("group_norm", "x: Tensor[(n, c), float32], g: Tensor[(c,), float32], b: Tensor[(c,), float32]",
              "group_norm(x, g, b, num_groups=1, epsilon=0.01)", {{"n", {1, 7, 20}}, {"c", {1, 13, 300}}},
              group_norm_ref(1, 0.01))
          .tolerance(1e-4),
      numeric("group_norm", "x: Tensor[(n, 6, h, w), float32], g: Tensor[(6,), float32], b: Tensor[(6,), float32]",
              "group_norm(x, g, b, num_groups=2)", {{"n", {2, 1, 0}}, {"h", {3, 0, 2}}, {"w", {4, 5, 3}}},
              group_norm_ref(2)),
      numeric("group_norm", "x: Tensor[(n, 8, s), float16], g: Tensor[(8,), float16], b: Tensor[(8,), float16]",
              "group_norm(x, g, b, num_groups=4)", {{"n", {1, 3, 2}}, {"s", {1, 13, 100}}}, group_norm_ref(4)),

      // batch_norm
      deduce("batch_norm",
             "x: Tensor[(n, 16, h, w), float32], g: Tensor[(16,), float32], b: Tensor[(16,), float32], "
             "m: Tensor[(16,), float32], v: Tensor[(16,), float32]",
             "batch_norm(x, g, b, m, v)", "Tensor[(n, 16, h, w), float32]"),
      deduce("batch_norm",
             "x: Tensor[(n, c), float32], g: Tensor[(c,), float32], b: Tensor[(c,), float32], "
             "m: Tensor[(c,), float32], v: Tensor[(c,), float32]",
             "batch_norm(x, g, b, m, v, axis=-1, epsilon=0.001)", "Tensor[(n, c), float32]"),
      deduce("batch_norm",
             "x: Tensor[ndim=?, float32], g: Tensor[(c,), float32], b: Tensor[(c,), float32], "
             "m: Tensor[(c,), float32], v: Tensor[(c,), float32]",
             "batch_norm(x, g, b, m, v)", "Tensor[ndim=?, float32]"),
      deduce("batch_norm",
             "x: Tensor[(n, 16, h), float32], g: Tensor[(16,), float32], b: Tensor[(16,), float32], "
             "m: Tensor[(16,), float32], v: Tensor[(h,), float32]",
             "batch_norm(x, g, b, m, v)", error("batch_norm: argument 4 (var) dim 0 is `h`, expected `16` (x dim 1)")),
      deduce("batch_norm",
             "x: Tensor[(n, 16), float32], g: Tensor[(16,), float32], b: Tensor[(16,), float32], "
             "m: Tensor[(16,), float32], v: Tensor[(16,), float32]",
             "batch_norm(x, g, b, m, v, axis=2)", error("batch_norm: axis 2 is out of range for rank 2")),
      deduce("batch_norm",
             "x: Tensor[(n, 16), float32], g: Tensor[(16,), float32], b: Tensor[(16,), float32], "
             "m: Tensor[(16,), float64], v: Tensor[(16,), float32]",
             "batch_norm(x, g, b, m, v)",
             error("batch_norm: dtypes differ: argument 2 (beta) is float32, argument 3 (mean) is float64")),
      numeric("batch_norm",
              "x: Tensor[(n, 8, h, w), float32], g: Tensor[(8,), float32], b: Tensor[(8,), float32], "
              "m: Tensor[(8,), float32], v: Tensor[(8,), float32]",
              "batch_norm(x, g, b, m, v)", {{"n", {1, 2, 3}}, {"h", {1, 5, 30}}, {"w", {1, 7, 30}}},
              batch_norm_ref(1))
          .range(4, 0.1, 2),
      numeric("batch_norm",
              "x: Tensor[(n, c), float64], g: Tensor[(c,), float64], b: Tensor[(c,), float64], "
              "m: Tensor[(c,), float64], v: Tensor[(c,), float64]",
              "batch_norm(x, g, b, m, v, axis=-1, epsilon=0.001)", {{"n", {1, 13, 300}}, {"c", {1, 5, 64}}},
              batch_norm_ref(-1, 1e-3))
          .range(4, 0.1, 2),
      numeric("batch_norm",
              "x: Tensor[(n, 4, s), float16], g: Tensor[(4,), float16], b: Tensor[(4,), float16], "
              "m: Tensor[(4,), float16], v: Tensor[(4,), float16]",
              "batch_norm(x, g, b, m, v)", batch_norm_ref(1))
          .range(4, 0.1, 2),
  };
}

}  // namespace relax::ops_test
