// Plain-loop references of the convolution, pooling and quantisation rows
// (rows_conv.cc, rows_quantize.cc), in double precision, written as the
// textbook definitions (conv1d_transpose as a scatter of each input element)
// rather than as the kernels compute them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "reference/reference.h"

namespace relax::ops_test {

/// The window parameters of one spatial dim.
struct WindowRef {
  int64_t stride = 1;
  int64_t pad_before = 0;
  int64_t pad_after = 0;
  int64_t dilation = 1;
};

/// conv2d of x (N, C, H, W) with w (O, C / groups, KH, KW); out of range taps read 0.
HostTensor conv2d_ref(const HostTensor& x, const HostTensor& w, WindowRef h, WindowRef wd,
                      int64_t groups = 1);
/// conv1d of x (N, C, W) with w (O, C / groups, K).
HostTensor conv1d_ref(const HostTensor& x, const HostTensor& w, WindowRef win, int64_t groups = 1);
/// conv1d_transpose of x (N, C, W) with w (C, O / groups, K): every x[n, c, i] adds
/// x * w[c, o, k] to out[n, g * O/g + o, i * stride - pad_before + k * dilation].
HostTensor conv1d_transpose_ref(const HostTensor& x, const HostTensor& w, WindowRef win,
                                int64_t output_padding, int64_t groups = 1);
/// `out` (N, O, ...) with bias[o] added to every element of channel o: a conv's bias.
HostTensor add_channel_bias(HostTensor out, const HostTensor& bias);
/// max_pool2d / avg_pool2d of NCHW x with a kh x kw window (floor mode).
HostTensor max_pool2d_ref(const HostTensor& x, int64_t kh, int64_t kw, WindowRef h, WindowRef wd);
HostTensor avg_pool2d_ref(const HostTensor& x, int64_t kh, int64_t kw, WindowRef h, WindowRef wd,
                          bool count_include_pad);
/// adaptive_avg_pool2d of NCHW x to (oh, ow).
HostTensor adaptive_avg_pool2d_ref(const HostTensor& x, int64_t oh, int64_t ow);

/// dequantize(packed, scales, group_size, axis, bits) (see quantize.cc).
HostTensor dequantize_ref(const HostTensor& packed, const HostTensor& scales, int64_t group_size,
                          int64_t axis, int64_t bits);
/// quantize(x, group_size, axis, bits): {packed, scales}; scales are rounded to float32
/// (x is float32) before dividing, as the kernel stores them.
RefResult quantize_ref(const HostTensor& x, int64_t group_size, int64_t axis, int64_t bits);

}  // namespace relax::ops_test
