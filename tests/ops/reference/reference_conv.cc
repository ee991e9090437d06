// Plain-loop references of convolution, pooling and quantisation (reference_conv.h).
#include "reference/reference_conv.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "relax/support/check.h"

namespace relax::ops_test {
namespace {

int64_t window_out(int64_t in, int64_t k, const WindowRef& r) {
  return (in + r.pad_before + r.pad_after - r.dilation * (k - 1) - 1) / r.stride + 1;
}

}  // namespace

HostTensor add_channel_bias(HostTensor out, const HostTensor& bias) {
  const int64_t channels = out.shape[1];
  RELAX_CHECK(bias.shape.size() == 1 && bias.shape[0] == channels) << "bias";
  int64_t inner = 1;
  for (size_t d = 2; d < out.shape.size(); ++d) inner *= out.shape[d];
  for (int64_t i = 0; i < out.numel(); ++i) out.values[i] += bias.values[(i / inner) % channels];
  return out;
}

HostTensor conv2d_ref(const HostTensor& x, const HostTensor& w, WindowRef h, WindowRef wd,
                      int64_t groups) {
  const int64_t n = x.shape[0], c = x.shape[1], ih = x.shape[2], iw = x.shape[3];
  const int64_t o = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  RELAX_CHECK(cg * groups == c) << "channels";
  const int64_t oh = window_out(ih, kh, h), ow = window_out(iw, kw, wd);
  const int64_t og = o / groups;
  HostTensor out = HostTensor::filled({n, o, oh, ow}, x.dtype);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < o; ++oc) {
      const int64_t g = oc / og;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xx = 0; xx < ow; ++xx) {
          double sum = 0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t iy = y * h.stride - h.pad_before + ky * h.dilation;
              if (iy < 0 || iy >= ih) continue;
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t ix = xx * wd.stride - wd.pad_before + kx * wd.dilation;
                if (ix < 0 || ix >= iw) continue;
                sum += x.at({b, g * cg + ci, iy, ix}) * w.at({oc, ci, ky, kx});
              }
            }
          }
          out.at({b, oc, y, xx}) = sum;
        }
      }
    }
  }
  return out;
}

HostTensor conv1d_ref(const HostTensor& x, const HostTensor& w, WindowRef win, int64_t groups) {
  HostTensor out = conv2d_ref(reshape(x, {x.shape[0], x.shape[1], 1, x.shape[2]}),
                              reshape(w, {w.shape[0], w.shape[1], 1, w.shape[2]}), WindowRef{}, win,
                              groups);
  return reshape(out, {out.shape[0], out.shape[1], out.shape[3]});
}

HostTensor conv1d_transpose_ref(const HostTensor& x, const HostTensor& w, WindowRef win,
                                int64_t output_padding, int64_t groups) {
  const int64_t n = x.shape[0], c = x.shape[1], iw = x.shape[2];
  const int64_t og = w.shape[1], k = w.shape[2];
  const int64_t cg = c / groups;
  const int64_t ow = (iw - 1) * win.stride - win.pad_before - win.pad_after +
                     win.dilation * (k - 1) + output_padding + 1;
  HostTensor out = HostTensor::filled({n, og * groups, ow}, x.dtype);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ci = 0; ci < c; ++ci) {
      const int64_t g = ci / cg;
      for (int64_t i = 0; i < iw; ++i) {
        for (int64_t oc = 0; oc < og; ++oc) {
          for (int64_t t = 0; t < k; ++t) {
            const int64_t j = i * win.stride - win.pad_before + t * win.dilation;
            if (j < 0 || j >= ow) continue;
            out.at({b, g * og + oc, j}) += x.at({b, ci, i}) * w.at({ci, oc, t});
          }
        }
      }
    }
  }
  return out;
}

namespace {

// Calls f(out index, values in the window, in-bounds count) per output element.
template <typename F>
HostTensor pool2d(const HostTensor& x, int64_t kh, int64_t kw, WindowRef h, WindowRef wd, F f) {
  const int64_t n = x.shape[0], c = x.shape[1], ih = x.shape[2], iw = x.shape[3];
  const int64_t oh = window_out(ih, kh, h), ow = window_out(iw, kw, wd);
  HostTensor out = HostTensor::filled({n, c, oh, ow}, x.dtype);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xx = 0; xx < ow; ++xx) {
          std::vector<double> window;
          for (int64_t ky = 0; ky < kh; ++ky) {
            const int64_t iy = y * h.stride - h.pad_before + ky * h.dilation;
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t ix = xx * wd.stride - wd.pad_before + kx * wd.dilation;
              if (iy >= 0 && iy < ih && ix >= 0 && ix < iw) window.push_back(x.at({b, ch, iy, ix}));
            }
          }
          out.at({b, ch, y, xx}) = f(window);
        }
      }
    }
  }
  return out;
}

}  // namespace

HostTensor max_pool2d_ref(const HostTensor& x, int64_t kh, int64_t kw, WindowRef h, WindowRef wd) {
  return pool2d(x, kh, kw, h, wd, [](const std::vector<double>& v) {
    double m = -std::numeric_limits<double>::infinity();
    for (double e : v) m = std::max(m, e);
    return m;
  });
}

HostTensor avg_pool2d_ref(const HostTensor& x, int64_t kh, int64_t kw, WindowRef h, WindowRef wd,
                          bool count_include_pad) {
  return pool2d(x, kh, kw, h, wd, [&](const std::vector<double>& v) {
    double sum = 0;
    for (double e : v) sum += e;
    const double count = count_include_pad ? static_cast<double>(kh * kw) : static_cast<double>(v.size());
    return sum / count;
  });
}

HostTensor adaptive_avg_pool2d_ref(const HostTensor& x, int64_t oh, int64_t ow) {
  const int64_t n = x.shape[0], c = x.shape[1], ih = x.shape[2], iw = x.shape[3];
  HostTensor out = HostTensor::filled({n, c, oh, ow}, x.dtype);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < oh; ++y) {
        const int64_t y0 = y * ih / oh, y1 = ((y + 1) * ih + oh - 1) / oh;
        for (int64_t xx = 0; xx < ow; ++xx) {
          const int64_t x0 = xx * iw / ow, x1 = ((xx + 1) * iw + ow - 1) / ow;
          double sum = 0;
          for (int64_t iy = y0; iy < y1; ++iy) {
            for (int64_t ix = x0; ix < x1; ++ix) sum += x.at({b, ch, iy, ix});
          }
          out.at({b, ch, y, xx}) = sum / static_cast<double>((y1 - y0) * (x1 - x0));
        }
      }
    }
  }
  return out;
}

HostTensor dequantize_ref(const HostTensor& packed, const HostTensor& scales, int64_t group_size,
                          int64_t axis, int64_t bits) {
  axis = normalize_axis(axis, packed.ndim());
  std::vector<int64_t> shape = packed.shape;
  if (bits == 4) shape[static_cast<size_t>(axis)] *= 2;
  HostTensor out = HostTensor::filled(shape, scales.dtype);
  for (int64_t flat = 0; flat < out.numel(); ++flat) {
    std::vector<int64_t> idx = unravel(flat, shape);
    const int64_t k = idx[static_cast<size_t>(axis)];
    std::vector<int64_t> byte_at = idx;
    std::vector<int64_t> scale_at = idx;
    scale_at[static_cast<size_t>(axis)] = k / group_size;
    double q;
    if (bits == 4) {
      byte_at[static_cast<size_t>(axis)] = k / 2;
      const auto byte = static_cast<unsigned>(packed.at(byte_at));
      q = static_cast<double>(k % 2 == 0 ? (byte & 15u) : (byte >> 4)) - 8;
    } else {
      q = packed.at(byte_at);
    }
    out.values[static_cast<size_t>(flat)] = q * scales.at(scale_at);
  }
  return out;
}

RefResult quantize_ref(const HostTensor& x, int64_t group_size, int64_t axis, int64_t bits) {
  axis = normalize_axis(axis, x.ndim());
  const auto a = static_cast<size_t>(axis);
  const int64_t k = x.shape[a];
  const double qmax = bits == 4 ? 7 : 127;
  std::vector<int64_t> scale_shape = x.shape;
  scale_shape[a] = (k + group_size - 1) / group_size;
  HostTensor scales = HostTensor::filled(scale_shape, x.dtype);
  for (int64_t flat = 0; flat < x.numel(); ++flat) {
    std::vector<int64_t> idx = unravel(flat, x.shape);
    idx[a] /= group_size;
    double& s = scales.at(idx);
    s = std::max(s, std::fabs(x.values[static_cast<size_t>(flat)]));
  }
  for (double& s : scales.values) s = static_cast<float>(s / qmax);
  std::vector<int64_t> packed_shape = x.shape;
  if (bits == 4) packed_shape[a] /= 2;
  const DataType packed_dtype{bits == 4 ? DataType::Code::kUInt : DataType::Code::kInt, 8, 1};
  HostTensor packed = HostTensor::filled(packed_shape, packed_dtype);
  for (int64_t flat = 0; flat < x.numel(); ++flat) {
    std::vector<int64_t> idx = unravel(flat, x.shape);
    std::vector<int64_t> scale_at = idx;
    scale_at[a] /= group_size;
    const double scale = scales.at(scale_at);
    const double ratio = scale == 0 ? 0 : x.values[static_cast<size_t>(flat)] / scale;
    const double q = std::clamp(std::nearbyint(ratio), -qmax - 1, qmax);  // ties to even
    if (bits == 8) {
      packed.at(idx) = q;
      continue;
    }
    const int64_t k_at = idx[a];
    idx[a] /= 2;
    packed.at(idx) += (q + 8) * (k_at % 2 == 0 ? 1 : 16);
  }
  return RefResult::tuple({packed, scales});
}

}  // namespace relax::ops_test
