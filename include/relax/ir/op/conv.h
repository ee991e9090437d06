// Constructors of convolution and pooling calls (NCW / NCHW data).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/op/optional_ints.h"

namespace relax::op {

/// 1-D convolution of data (N, C, W) with weight (O, C / groups, K) (OIW):
/// out (N, O, floordiv(W + pb + pa - dilation * (K - 1) - 1, stride) + 1).
/// `padding` is one value (both sides) or [before, after].
Expr conv1d(Expr data, Expr weight, std::vector<int64_t> strides = {1},
            std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
            int64_t groups = 1);
/// The same plus `bias` (O,), added to every output element of its channel:
/// `conv1d(x, w, b, {2})`.
Expr conv1d(Expr data, Expr weight, Expr bias, std::vector<int64_t> strides = {1},
            std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
            int64_t groups = 1);

/// 2-D convolution of data (N, C, H, W) with weight (O, C / groups, KH, KW)
/// (OIHW). `strides`, `padding` (both sides of a dim) and `dilation` take one
/// value for both spatial dims or one per dim.
Expr conv2d(Expr data, Expr weight, std::vector<int64_t> strides = {1, 1},
            std::vector<int64_t> padding = {0, 0}, std::vector<int64_t> dilation = {1, 1},
            int64_t groups = 1);
/// The same plus `bias` (O,), added per output channel: `conv2d(x, w, b, {1, 1}, {1, 1})`.
Expr conv2d(Expr data, Expr weight, Expr bias, std::vector<int64_t> strides = {1, 1},
            std::vector<int64_t> padding = {0, 0}, std::vector<int64_t> dilation = {1, 1},
            int64_t groups = 1);

/// 1-D transposed convolution of data (N, C, W) with weight (C, O / groups, K)
/// (IOW): out (N, O, (W - 1) * stride - pb - pa + dilation * (K - 1) +
/// output_padding + 1). `output_padding` must be below the stride or the dilation.
Expr conv1d_transpose(Expr data, Expr weight, std::vector<int64_t> strides = {1},
                      std::vector<int64_t> padding = {0}, std::vector<int64_t> output_padding = {0},
                      std::vector<int64_t> dilation = {1}, int64_t groups = 1);
/// The same plus `bias` (O,), added per output channel.
Expr conv1d_transpose(Expr data, Expr weight, Expr bias, std::vector<int64_t> strides = {1},
                      std::vector<int64_t> padding = {0}, std::vector<int64_t> output_padding = {0},
                      std::vector<int64_t> dilation = {1}, int64_t groups = 1);

/// 2-D transposed convolution (the gradient of conv2d) of data (N, C, H, W) with weight
/// (C, O / groups, KH, KW) (IOHW), plus an optional bias (O,): out (N, O, (H - 1) * sh - pt - pb +
/// dh * (KH - 1) + oph + 1, likewise W). `strides`, `padding` (both sides of a dim),
/// `output_padding` and `dilation` take one value or one per dim.
Expr conv2d_transpose(Expr data, Expr weight, std::optional<Expr> bias = std::nullopt,
                      std::vector<int64_t> strides = {1, 1}, std::vector<int64_t> padding = {0, 0},
                      std::vector<int64_t> output_padding = {0, 0}, std::vector<int64_t> dilation = {1, 1},
                      int64_t groups = 1);

/// The maximum over pool_size windows of NCHW data (floor mode; padding reads -inf).
Expr max_pool2d(Expr data, std::vector<int64_t> pool_size, std::vector<int64_t> strides = {1, 1},
                std::vector<int64_t> padding = {0, 0}, std::vector<int64_t> dilation = {1, 1});

/// The mean over pool_size windows of NCHW data (floor mode), dividing by the
/// number of in-bounds taps unless `count_include_pad`.
Expr avg_pool2d(Expr data, std::vector<int64_t> pool_size, std::vector<int64_t> strides = {1, 1},
                std::vector<int64_t> padding = {0, 0}, std::vector<int64_t> dilation = {1, 1},
                bool count_include_pad = false);

/// The mean of NCHW data over output_size bins per spatial dim (bin i of H over
/// [floor(i * H / OH), ceil((i + 1) * H / OH))); absent keeps the input's size.
Expr adaptive_avg_pool2d(Expr data, OptionalInts output_size = std::nullopt);

}  // namespace relax::op
