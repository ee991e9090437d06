// Conformance rows of convolution and pooling: conv1d, conv2d (NCW/NCHW data, OIW/OIHW
// weights), conv1d_transpose (IOW weights), max_pool2d, avg_pool2d, adaptive_avg_pool2d.
// Numeric rows run spatial sizes 1, 7 and 32 (the smallest a row's window allows).
#include "families.h"
#include "reference/reference_conv.h"

namespace relax::ops_test {

namespace {

WindowRef win(int64_t stride, int64_t pad, int64_t dilation = 1) { return {stride, pad, pad, dilation}; }

}  // namespace

OpRows conv_rows() {
  return {
      // conv2d: deduction.
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]", "conv2d(x, k)",
             "Tensor[(n, 8, h - 2, w - 2), float32]"),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]",
             "conv2d(x, k, padding=[1, 1])", "Tensor[(n, 8, h, w), float32]"),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]",
             "conv2d(x, k, strides=[2, 2], padding=[1, 1])",
             "Tensor[(n, 8, floordiv(h + 1, 2), floordiv(w + 1, 2)), float32]"),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]",
             "conv2d(x, k, dilation=2, padding=1)", "Tensor[(n, 8, h - 2, w - 2), float32]"),
      deduce("conv2d", "x: Tensor[(1, 4, 10, 12), float32], k: Tensor[(6, 2, 3, 5), float32]",
             "conv2d(x, k, strides=[3, 2], padding=[0, 2], groups=2)", "Tensor[(1, 6, 3, 6), float32]"),
      deduce("conv2d", "x: Tensor[(n, c, h, w), float32], k: Tensor[(o, c, kh, kw), float32]", "conv2d(x, k)",
             "Tensor[(n, o, h - kh + 1, w - kw + 1), float32]"),
      deduce("conv2d", "x: Tensor[ndim=4, float32], k: Tensor[(8, 3, 3, 3), float32]", "conv2d(x, k)",
             "Tensor[ndim=4, float32]"),
      deduce("conv2d", "x: Tensor[ndim=?, float32], k: Tensor[ndim=?, float32]", "conv2d(x, k)",
             "Tensor[ndim=4, float32]"),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), ?], k: Tensor[(8, 3, 3, 3), ?]", "conv2d(x, k)",
             "Tensor[(n, 8, h - 2, w - 2), ?]"),
      deduce("conv2d", "x: Tensor[(n, 4, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]", "conv2d(x, k)",
             error("conv2d: in channels differ: data dim 1 is `4`, weight dim 1 is `3` times groups 1 = `3`")),
      deduce("conv2d", "x: Tensor[(n, c, h, w), float32], k: Tensor[(8, d, 3, 3), float32]", "conv2d(x, k)",
             error("conv2d: in channels differ: data dim 1 is `c`, weight dim 1 is `d`")),
      deduce("conv2d", "x: Tensor[(n, 4, h, w), float32], k: Tensor[(6, 2, 3, 3), float32]",
             "conv2d(x, k, groups=4)", error("conv2d: in channels differ: data dim 1 is `4`, weight dim 1 is `2` times groups 4 = `8`")),
      deduce("conv2d", "x: Tensor[(n, 6, h, w), float32], k: Tensor[(5, 2, 3, 3), float32]",
             "conv2d(x, k, groups=3)", error("conv2d: out channels (weight dim 0) `5` is not a multiple of groups 3")),
      deduce("conv2d", "x: Tensor[(n, 3, 2, 8), float32], k: Tensor[(8, 3, 3, 3), float32]", "conv2d(x, k)",
             error("conv2d: output dim 2 would be `0` (< 1): data dim 2 is `2`, window `3`")),
      deduce("conv2d", "x: Tensor[(n, 3, h), float32], k: Tensor[(8, 3, 3, 3), float32]", "conv2d(x, k)",
             error("conv2d: argument 0 (data): expected a tensor of rank 4 (NCHW), got Tensor[(n, 3, h), float32]")),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3), float32]", "conv2d(x, k)",
             error("conv2d: argument 1 (weight): expected a tensor of rank 4 (OIHW)")),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float16]", "conv2d(x, k)",
             error("conv2d:")),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]",
             "conv2d(x, k, strides=[1, 1, 1])", error("conv2d: attribute `strides` must have 1 or 2 values, got [1, 1, 1]")),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]",
             "conv2d(x, k, strides=0)", error("conv2d: attribute `strides` must be >= 1, got [0]")),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]",
             "conv2d(x, k, padding=[1, 2, 3])", error("conv2d: attribute `padding` must have 1 or 2 values, got [1, 2, 3]")),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]",
             "conv2d(x, k, data_layout=\"NHWC\")", error("conv2d: attribute `data_layout`")),
      deduce("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32]",
             "conv2d(x, k, group=2)", error("conv2d:")),
      // conv2d with a bias (O,), added per output channel.
      deduce("conv2d",
             "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32], b: Tensor[(8,), float32]",
             "conv2d(x, k, b, padding=[1, 1])", "Tensor[(n, 8, h, w), float32]"),
      deduce("conv2d",
             "x: Tensor[(n, c, h, w), float32], k: Tensor[(o, c, 3, 3), float32], b: Tensor[(o,), float32]",
             "conv2d(x, k, b)", "Tensor[(n, o, h - 2, w - 2), float32]"),
      deduce("conv2d",
             "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32], b: Tensor[ndim=1, float32]",
             "conv2d(x, k, b)", "Tensor[(n, 8, h - 2, w - 2), float32]"),
      deduce("conv2d",
             "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32], b: Tensor[(4,), float32]",
             "conv2d(x, k, b)",
             error("conv2d: argument 2 (bias): expected a tensor of shape (8,) (one value per out channel), "
                   "got Tensor[(4,), float32]")),
      deduce("conv2d",
             "x: Tensor[(n, 3, h, w), float32], k: Tensor[(o, 3, 3, 3), float32], b: Tensor[(m,), float32]",
             "conv2d(x, k, b)",
             error("conv2d: argument 2 (bias): expected a tensor of shape (o,) (one value per out channel), "
                   "got Tensor[(m,), float32]")),
      deduce("conv2d",
             "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32], b: Tensor[(1, 8, 1, 1), float32]",
             "conv2d(x, k, b)",
             error("conv2d: argument 2 (bias): expected a tensor of rank 1 (O), got Tensor[(1, 8, 1, 1), float32]")),
      deduce("conv2d",
             "x: Tensor[(n, 3, h, w), float32], k: Tensor[(8, 3, 3, 3), float32], b: Tensor[(8,), float16]",
             "conv2d(x, k, b)", error("conv2d:")),
      // conv1d: deduction.
      deduce("conv1d", "x: Tensor[(n, 4, w), float32], k: Tensor[(2, 4, 3), float32]", "conv1d(x, k)",
             "Tensor[(n, 2, w - 2), float32]"),
      deduce("conv1d", "x: Tensor[(n, 4, w), float32], k: Tensor[(2, 4, 3), float32]",
             "conv1d(x, k, padding=[2, 0])", "Tensor[(n, 2, w), float32]"),
      deduce("conv1d", "x: Tensor[(n, 4, w), float32], k: Tensor[(6, 2, 3), float32]",
             "conv1d(x, k, strides=2, padding=[0, 1], dilation=2, groups=2)",
             "Tensor[(n, 6, floordiv(w, 2) - 1), float32]"),
      deduce("conv1d", "x: Tensor[ndim=3, float32], k: Tensor[(2, 4, 3), float32]", "conv1d(x, k)",
             "Tensor[ndim=3, float32]"),
      deduce("conv1d", "x: Tensor[(n, 4, w), float32], k: Tensor[(2, 4, 3), float32]",
             "conv1d(x, k, padding=[1, 2, 3])",
             error("conv1d: attribute `padding` must have 1 or 2 ([before, after]) values, got [1, 2, 3]")),
      deduce("conv1d", "x: Tensor[(n, 3, w), float32], k: Tensor[(2, 4, 3), float32]", "conv1d(x, k)",
             error("conv1d: in channels differ: data dim 1 is `3`, weight dim 1 is `4`")),
      // conv2d_transpose: deduction and values, against the plain loops below.
      deduce("conv2d_transpose", "x: Tensor[(n, 4, h, w), float32], k: Tensor[(4, 3, 2, 2), float32]",
             "conv2d_transpose(x, k, strides=2)", "Tensor[(n, 3, h * 2, w * 2), float32]"),
      deduce("conv2d_transpose", "x: Tensor[(n, 4, h, w), float32], k: Tensor[(5, 3, 2, 2), float32]",
             "conv2d_transpose(x, k)", error("conv2d_transpose: in channels differ: data dim 1 is `4`, weight dim 0 is `5`")),
      numeric("conv2d_transpose", "x: Tensor[(n, 4, h, w), float32], k: Tensor[(4, 3, 2, 3), float32]",
              "conv2d_transpose(x, k, strides=[2, 1], padding=[0, 1], output_padding=[1, 0])",
              {{"n", {1, 2, 1}}, {"h", {1, 5, 9}}, {"w", {1, 4, 8}}},
              [](const RefInputs& in) {
                // out[b, o, y, x] += x[b, c, i, j] * k[c, o, ky, kx] where y = 2i - 0 + ky, x = j - 1 + kx.
                const HostTensor& x = in[0];
                const HostTensor& k = in[1];
                const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
                const int64_t oh = (h - 1) * 2 + 1 + 1 + 1, ow = (w - 1) * 1 - 2 + 2 + 1;
                HostTensor out = HostTensor::filled({n, 3, oh, ow}, x.dtype);
                for (int64_t b = 0; b < n; ++b)
                  for (int64_t ci = 0; ci < c; ++ci)
                    for (int64_t i = 0; i < h; ++i)
                      for (int64_t j = 0; j < w; ++j)
                        for (int64_t o = 0; o < 3; ++o)
                          for (int64_t ky = 0; ky < 2; ++ky)
                            for (int64_t kx = 0; kx < 3; ++kx) {
                              const int64_t y = i * 2 + ky, xx = j - 1 + kx;
                              if (y < oh && xx >= 0 && xx < ow) out.at({b, o, y, xx}) += x.at({b, ci, i, j}) * k.at({ci, o, ky, kx});
                            }
                return RefResult(out);
              })
          .tolerance(1e-5, 1e-5),
      // conv1d_transpose: deduction.
      deduce("conv1d_transpose", "x: Tensor[(n, 4, w), float32], k: Tensor[(4, 3, 3), float32]",
             "conv1d_transpose(x, k)", "Tensor[(n, 3, w + 2), float32]"),
      deduce("conv1d_transpose", "x: Tensor[(n, 4, w), float32], k: Tensor[(4, 3, 3), float32]",
             "conv1d_transpose(x, k, strides=2, padding=1, output_padding=1, groups=2)",
             "Tensor[(n, 6, w * 2), float32]"),
      deduce("conv1d_transpose", "x: Tensor[(n, 4, w), float32], k: Tensor[(5, 3, 3), float32]",
             "conv1d_transpose(x, k)", error("conv1d_transpose: in channels differ: data dim 1 is `4`, weight dim 0 is `5`")),
      deduce("conv1d_transpose", "x: Tensor[(n, 3, w), float32], k: Tensor[(3, 3, 3), float32]",
             "conv1d_transpose(x, k, groups=2)",
             error("conv1d_transpose: in channels (data dim 1) `3` is not a multiple of groups 2")),
      deduce("conv1d_transpose", "x: Tensor[(n, 4, w), float32], k: Tensor[(4, 3, 3), float32]",
             "conv1d_transpose(x, k, strides=2, output_padding=2)",
             error("conv1d_transpose: attribute `output_padding` 2 must be smaller than the stride 2 or the dilation 1")),
      deduce("conv1d",
             "x: Tensor[(n, 4, w), float32], k: Tensor[(2, 4, 3), float32], b: Tensor[(2,), float32]",
             "conv1d(x, k, b)", "Tensor[(n, 2, w - 2), float32]"),
      deduce("conv1d_transpose",
             "x: Tensor[(n, 4, w), float32], k: Tensor[(4, 3, 3), float32], b: Tensor[(6,), float32]",
             "conv1d_transpose(x, k, b, groups=2)", "Tensor[(n, 6, w + 2), float32]"),
      deduce("conv1d_transpose",
             "x: Tensor[(n, 4, w), float32], k: Tensor[(4, 3, 3), float32], b: Tensor[(3,), float32]",
             "conv1d_transpose(x, k, b, groups=2)",
             error("conv1d_transpose: argument 2 (bias): expected a tensor of shape (6,)")),
      // Pools: deduction.
      deduce("max_pool2d", "x: Tensor[(n, c, h, w), float32]", "max_pool2d(x, pool_size=[2, 2], strides=[2, 2])",
             "Tensor[(n, c, floordiv(h, 2), floordiv(w, 2)), float32]"),
      deduce("max_pool2d", "x: Tensor[(n, c, h, w), float32]", "max_pool2d(x, pool_size=3, padding=1)",
             "Tensor[(n, c, h, w), float32]"),
      deduce("max_pool2d", "x: Tensor[ndim=4, int32]", "max_pool2d(x, pool_size=3)", "Tensor[ndim=4, int32]"),
      deduce("max_pool2d", "x: Tensor[(n, c, h, w), float32]", "max_pool2d(x)",
             error("max_pool2d: attribute `pool_size` ([int]) is required")),
      deduce("max_pool2d", "x: Tensor[(n, c, h), float32]", "max_pool2d(x, pool_size=2)",
             error("max_pool2d: argument 0 (data): expected a tensor of rank 4 (NCHW)")),
      deduce("max_pool2d", "x: Tensor[(n, c, 2, 2), float32]", "max_pool2d(x, pool_size=3)",
             error("max_pool2d: output dim 2 would be `0` (< 1): data dim 2 is `2`, window `3`")),
      deduce("avg_pool2d", "x: Tensor[(n, c, 7, 9), float16]",
             "avg_pool2d(x, pool_size=[3, 2], strides=2, padding=[1, 0], count_include_pad=true)",
             "Tensor[(n, c, 4, 4), float16]"),
      deduce("avg_pool2d", "x: Tensor[(n, c, h, w), int32]", "avg_pool2d(x, pool_size=2)",
             error("avg_pool2d: argument 0 (data): expected a float tensor")),
      deduce("adaptive_avg_pool2d", "x: Tensor[(n, c, h, w), float32]", "adaptive_avg_pool2d(x, output_size=[1, 1])",
             "Tensor[(n, c, 1, 1), float32]"),
      deduce("adaptive_avg_pool2d", "x: Tensor[(n, c, h, w), float32]", "adaptive_avg_pool2d(x, output_size=3)",
             "Tensor[(n, c, 3, 3), float32]"),
      deduce("adaptive_avg_pool2d", "x: Tensor[(n, c, h, w), float32]", "adaptive_avg_pool2d(x)",
             "Tensor[(n, c, h, w), float32]"),
      deduce("adaptive_avg_pool2d", "x: Tensor[ndim=?, float32]", "adaptive_avg_pool2d(x, output_size=2)",
             "Tensor[ndim=4, float32]"),
      // A window over nothing: an empty height or width (PyTorch rejects it too).
      deduce("max_pool2d", "x: Tensor[(n, c, 0, w), float32]", "max_pool2d(x, pool_size=1, padding=1)",
             error("max_pool2d: dim 2 of data is 0, and a window over nothing has no value (data "
                   "Tensor[(n, c, 0, w), float32])")),
      deduce("avg_pool2d", "x: Tensor[(n, c, h, 0), float32]", "avg_pool2d(x, pool_size=2, padding=1)",
             error("avg_pool2d: dim 3 of data is 0")),
      deduce("adaptive_avg_pool2d", "x: Tensor[(n, c, 0, w), float32]", "adaptive_avg_pool2d(x, output_size=2)",
             error("adaptive_avg_pool2d: dim 2 of data is 0")),
      deduce("adaptive_avg_pool2d", "x: Tensor[(n, c, 0, w), float32]", "adaptive_avg_pool2d(x)",
             "Tensor[(n, c, 0, w), float32]"),
      deduce("max_pool2d", "x: Tensor[(0, 0, h, w), float32]", "max_pool2d(x, pool_size=2)",
             "Tensor[(0, 0, h - 1, w - 1), float32]"),
      deduce("adaptive_avg_pool2d", "x: Tensor[(n, c, h, w), float32]", "adaptive_avg_pool2d(x, output_size=[0, 2])",
             error("adaptive_avg_pool2d: attribute `output_size` must be >= 1, got [0, 2]")),

      // conv2d: numerics (spatial 1, 7, 32).
      numeric("conv2d", "x: Tensor[(n, 3, h, w), float32], k: Tensor[(4, 3, 3, 3), float32]",
              "conv2d(x, k, padding=1)", {{"n", {1, 2, 1}}, {"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv2d_ref(in[0], in[1], win(1, 1), win(1, 1)); })
          .tolerance(1e-5, 1e-5),
      numeric("conv2d", "x: Tensor[(n, c, h, w), float32], k: Tensor[(o, c, 2, 3), float32]",
              "conv2d(x, k, strides=[2, 1], padding=[0, 1], dilation=[1, 2])",
              {{"n", {1, 1, 2}}, {"c", {1, 3, 5}}, {"o", {1, 2, 7}}, {"h", {2, 7, 32}}, {"w", {3, 7, 32}}},
              [](const RefInputs& in) { return conv2d_ref(in[0], in[1], win(2, 0), win(1, 1, 2)); }),
      numeric("conv2d", "x: Tensor[(1, 6, h, h), float32], k: Tensor[(4, 3, 3, 3), float32]",
              "conv2d(x, k, strides=2, padding=1, groups=2)", {{"h", {1, 7, 32}}},
              [](const RefInputs& in) { return conv2d_ref(in[0], in[1], win(2, 1), win(2, 1), 2); }),
      numeric("conv2d", "x: Tensor[(1, 4, h, w), float32], k: Tensor[(4, 1, 3, 3), float32]",
              "conv2d(x, k, padding=1, groups=4)", {{"h", {1, 7, 32}}, {"w", {1, 13, 32}}},
              [](const RefInputs& in) { return conv2d_ref(in[0], in[1], win(1, 1), win(1, 1), 4); }),
      numeric("conv2d", "x: Tensor[(1, 3, h, w), float64], k: Tensor[(2, 3, 3, 3), float64]", "conv2d(x, k)",
              {{"h", {3, 7, 32}}, {"w", {3, 11, 32}}},
              [](const RefInputs& in) { return conv2d_ref(in[0], in[1], win(1, 0), win(1, 0)); }),
      numeric("conv2d", "x: Tensor[(1, 3, h, w), int32], k: Tensor[(2, 3, 3, 3), int32]", "conv2d(x, k, padding=1)",
              {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv2d_ref(in[0], in[1], win(1, 1), win(1, 1)); }),
      numeric("conv2d", "x: Tensor[(1, 3, h, w), float16], k: Tensor[(2, 3, 3, 3), float16]",
              "conv2d(x, k, padding=1)", {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv2d_ref(in[0], in[1], win(1, 1), win(1, 1)); })
          .tolerance(1e-2, 1e-2),
      numeric("conv2d", "x: Tensor[(1, 3, h, w), bfloat16], k: Tensor[(2, 3, 3, 3), bfloat16]",
              "conv2d(x, k, padding=1)", {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv2d_ref(in[0], in[1], win(1, 1), win(1, 1)); })
          .tolerance(2e-2, 2e-2),
      numeric("conv2d",
              "x: Tensor[(n, 3, h, w), float32], k: Tensor[(4, 3, 3, 3), float32], b: Tensor[(4,), float32]",
              "conv2d(x, k, b, padding=1)", {{"n", {1, 2, 1}}, {"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) {
                return add_channel_bias(conv2d_ref(in[0], in[1], win(1, 1), win(1, 1)), in[2]);
              })
          .tolerance(1e-5, 1e-5),
      numeric("conv2d",
              "x: Tensor[(1, 6, h, h), float32], k: Tensor[(4, 3, 3, 3), float32], b: Tensor[(4,), float32]",
              "conv2d(x, k, b, strides=2, padding=1, groups=2)", {{"h", {1, 7, 32}}},
              [](const RefInputs& in) {
                return add_channel_bias(conv2d_ref(in[0], in[1], win(2, 1), win(2, 1), 2), in[2]);
              }),
      numeric("conv2d",
              "x: Tensor[(1, 3, h, w), float16], k: Tensor[(2, 3, 3, 3), float16], b: Tensor[(2,), float16]",
              "conv2d(x, k, b, padding=1)", {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) {
                return add_channel_bias(conv2d_ref(in[0], in[1], win(1, 1), win(1, 1)), in[2]);
              })
          .tolerance(1e-2, 1e-2),
      numeric("conv2d",
              "x: Tensor[(1, 3, h, w), int32], k: Tensor[(2, 3, 3, 3), int32], b: Tensor[(2,), int32]",
              "conv2d(x, k, b)", {{"h", {3, 7, 32}}, {"w", {3, 7, 32}}},
              [](const RefInputs& in) {
                return add_channel_bias(conv2d_ref(in[0], in[1], win(1, 0), win(1, 0)), in[2]);
              }),
      // conv1d.
      numeric("conv1d",
              "x: Tensor[(n, 4, w), float32], k: Tensor[(3, 4, 3), float32], b: Tensor[(3,), float32]",
              "conv1d(x, k, b, padding=1)", {{"n", {1, 2, 3}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return add_channel_bias(conv1d_ref(in[0], in[1], win(1, 1)), in[2]); }),
      numeric("conv1d", "x: Tensor[(n, 4, w), float32], k: Tensor[(3, 4, 3), float32]", "conv1d(x, k, padding=1)",
              {{"n", {1, 2, 3}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv1d_ref(in[0], in[1], win(1, 1)); }),
      numeric("conv1d", "x: Tensor[(n, 4, w), float32], k: Tensor[(6, 2, 3), float32]",
              "conv1d(x, k, strides=2, padding=[2, 1], dilation=2, groups=2)", {{"n", {1, 2, 1}}, {"w", {2, 7, 32}}},
              [](const RefInputs& in) { return conv1d_ref(in[0], in[1], WindowRef{2, 2, 1, 2}, 2); }),
      numeric("conv1d", "x: Tensor[(1, c, w), float16], k: Tensor[(2, c, 3), float16]", "conv1d(x, k, padding=1)",
              {{"c", {1, 3, 8}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv1d_ref(in[0], in[1], win(1, 1)); })
          .tolerance(1e-2, 1e-2),
      // conv1d_transpose.
      numeric("conv1d_transpose", "x: Tensor[(n, 4, w), float32], k: Tensor[(4, 3, 3), float32]",
              "conv1d_transpose(x, k)", {{"n", {1, 2, 1}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv1d_transpose_ref(in[0], in[1], win(1, 0), 0); }),
      numeric("conv1d_transpose", "x: Tensor[(n, 4, w), float32], k: Tensor[(4, 3, 3), float32]",
              "conv1d_transpose(x, k, strides=2, padding=1, output_padding=1, groups=2)",
              {{"n", {1, 2, 1}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv1d_transpose_ref(in[0], in[1], win(2, 1), 1, 2); }),
      numeric("conv1d_transpose", "x: Tensor[(1, c, w), float32], k: Tensor[(c, 2, 4), float32]",
              "conv1d_transpose(x, k, strides=3, padding=[1, 2], dilation=2)", {{"c", {1, 5, 3}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv1d_transpose_ref(in[0], in[1], WindowRef{3, 1, 2, 2}, 0); }),
      numeric("conv1d_transpose", "x: Tensor[(1, 2, w), bfloat16], k: Tensor[(2, 3, 3), bfloat16]",
              "conv1d_transpose(x, k, strides=2)", {{"w", {1, 7, 32}}},
              [](const RefInputs& in) { return conv1d_transpose_ref(in[0], in[1], win(2, 0), 0); })
          .tolerance(2e-2, 2e-2),
      numeric("conv1d_transpose",
              "x: Tensor[(n, 4, w), float32], k: Tensor[(4, 3, 3), float32], b: Tensor[(6,), float32]",
              "conv1d_transpose(x, k, b, strides=2, padding=1, output_padding=1, groups=2)",
              {{"n", {1, 2, 1}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) {
                return add_channel_bias(conv1d_transpose_ref(in[0], in[1], win(2, 1), 1, 2), in[2]);
              }),
      // Pools.
      numeric("max_pool2d", "x: Tensor[(n, 3, h, w), float32]", "max_pool2d(x, pool_size=3, padding=1)",
              {{"n", {1, 2, 1}}, {"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return max_pool2d_ref(in[0], 3, 3, win(1, 1), win(1, 1)); }),
      numeric("max_pool2d", "x: Tensor[(1, c, h, w), float32]",
              "max_pool2d(x, pool_size=[2, 3], strides=[2, 1], dilation=[1, 2], padding=[0, 1])",
              {{"c", {1, 3, 2}}, {"h", {2, 7, 32}}, {"w", {3, 7, 32}}},
              [](const RefInputs& in) { return max_pool2d_ref(in[0], 2, 3, win(2, 0), win(1, 1, 2)); }),
      numeric("max_pool2d", "x: Tensor[(1, 2, h, h), int32]", "max_pool2d(x, pool_size=2, strides=2)",
              {{"h", {2, 7, 32}}},
              [](const RefInputs& in) { return max_pool2d_ref(in[0], 2, 2, win(2, 0), win(2, 0)); }),
      numeric("max_pool2d", "x: Tensor[(1, 2, h, h), float16]", "max_pool2d(x, pool_size=3, strides=2, padding=1)",
              {{"h", {1, 7, 32}}},
              [](const RefInputs& in) { return max_pool2d_ref(in[0], 3, 3, win(2, 1), win(2, 1)); }),
      numeric("avg_pool2d", "x: Tensor[(n, 3, h, w), float32]", "avg_pool2d(x, pool_size=3, padding=1)",
              {{"n", {1, 2, 1}}, {"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return avg_pool2d_ref(in[0], 3, 3, win(1, 1), win(1, 1), false); }),
      numeric("avg_pool2d", "x: Tensor[(1, 3, h, w), float32]",
              "avg_pool2d(x, pool_size=3, strides=2, padding=1, count_include_pad=true)",
              {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return avg_pool2d_ref(in[0], 3, 3, win(2, 1), win(2, 1), true); }),
      numeric("avg_pool2d", "x: Tensor[(1, 2, h, w), float32]",
              "avg_pool2d(x, pool_size=[3, 2], strides=[1, 3], padding=[2, 1], dilation=[2, 1])",
              {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return avg_pool2d_ref(in[0], 3, 2, win(1, 2, 2), win(3, 1), false); }),
      // Empty heights or widths in one compilation with nonzero ones: a window over nothing
      // fails when the kernel runs; an empty batch or channel count gives an empty result.
      numeric("max_pool2d", "x: Tensor[(n, 2, h, w), float32]", "max_pool2d(x, pool_size=2, padding=1)",
              {{"n", {1, 2, 0}}, {"h", {3, 0, 4}}, {"w", {4, 5, 2}}},
              fails_when_zero("h", "max_pool2d: dim 2 of data (the windows' extent) is 0",
                              [](const RefInputs& in) { return max_pool2d_ref(in[0], 2, 2, win(1, 1), win(1, 1)); })),
      numeric("avg_pool2d", "x: Tensor[(1, c, h, w), float32]", "avg_pool2d(x, pool_size=2, padding=1)",
              {{"c", {2, 3, 0}}, {"h", {3, 4, 2}}, {"w", {4, 0, 3}}},
              fails_when_zero("w", "avg_pool2d: dim 3 of data (the windows' extent) is 0", [](const RefInputs& in) {
                return avg_pool2d_ref(in[0], 2, 2, win(1, 1), win(1, 1), false);
              })),
      numeric("adaptive_avg_pool2d", "x: Tensor[(n, 2, h, w), float32]", "adaptive_avg_pool2d(x, output_size=[2, 3])",
              {{"n", {1, 2, 0}}, {"h", {5, 0, 4}}, {"w", {7, 3, 6}}},
              fails_when_zero("h", "adaptive_avg_pool2d: dim 2 of data (the windows' extent) is 0",
                              [](const RefInputs& in) { return adaptive_avg_pool2d_ref(in[0], 2, 3); })),
      numeric("adaptive_avg_pool2d", "x: Tensor[(1, 2, h, w), float32]", "adaptive_avg_pool2d(x)",
              {{"h", {3, 0, 2}}, {"w", {4, 5, 0}}},
              [](const RefInputs& in) { return adaptive_avg_pool2d_ref(in[0], in[0].shape[2], in[0].shape[3]); }),
      numeric("avg_pool2d", "x: Tensor[(1, 2, h, w), bfloat16]", "avg_pool2d(x, pool_size=2, padding=1)",
              {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return avg_pool2d_ref(in[0], 2, 2, win(1, 1), win(1, 1), false); })
          .tolerance(1e-2, 1e-2),
      numeric("adaptive_avg_pool2d", "x: Tensor[(n, 3, h, w), float32]", "adaptive_avg_pool2d(x, output_size=1)",
              {{"n", {1, 2, 1}}, {"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return adaptive_avg_pool2d_ref(in[0], 1, 1); }),
      numeric("adaptive_avg_pool2d", "x: Tensor[(1, 2, h, w), float32]", "adaptive_avg_pool2d(x, output_size=[3, 5])",
              {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return adaptive_avg_pool2d_ref(in[0], 3, 5); }),
      numeric("adaptive_avg_pool2d", "x: Tensor[(1, 2, h, w), float32]", "adaptive_avg_pool2d(x, output_size=4)",
              {{"h", {4, 8, 32}}, {"w", {8, 12, 32}}},
              [](const RefInputs& in) { return adaptive_avg_pool2d_ref(in[0], 4, 4); }),
      numeric("adaptive_avg_pool2d", "x: Tensor[(1, 2, h, w), float32]", "adaptive_avg_pool2d(x)",
              {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return adaptive_avg_pool2d_ref(in[0], in[0].shape[2], in[0].shape[3]); }),
      numeric("adaptive_avg_pool2d", "x: Tensor[(1, 2, h, w), float16]", "adaptive_avg_pool2d(x, output_size=[2, 3])",
              {{"h", {1, 7, 32}}, {"w", {1, 7, 32}}},
              [](const RefInputs& in) { return adaptive_avg_pool2d_ref(in[0], 2, 3); })
          .tolerance(1e-2, 1e-2),
  };
}

}  // namespace relax::ops_test
