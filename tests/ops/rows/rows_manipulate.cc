// Conformance rows of the manipulation operators: expand_dims, squeeze, flatten, broadcast_to,
// astype, flip, repeat, tile (manipulate.cc), concat, split, strided_slice, take, pad, one_hot
// (manipulate_index.cc), gather_elements, scatter_nd (manipulate_scatter.cc), resize
// (manipulate_resize.cc; references inline), reshape (a Shape argument, `-1` inferred as an exact quotient) and
// permute_dims (attribute `axes`; reversed when absent). References: reference.h,
// reference_manipulate.h.
#include <algorithm>
#include <cmath>

#include "families.h"
#include "reference/reference_manipulate.h"

namespace relax::ops_test {
namespace {

const DataType kF32 = DataType::float32();

// resize by the ONNX Resize definition in double: per axis, the output index's coordinate in x
// and the taps (index, weight) read there; the value is the sum over every choice of one tap per
// axis of the product of their weights times x there. `scales` empty: out / in per axis.
struct ResizeRef {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double a = -0.75;
  bool exclude = false;
  std::vector<double> scales;
};

ResizeRef resize_how(std::string mode, std::string coord = "half_pixel", std::string nearest = "round_prefer_floor") {
  ResizeRef r;
  r.mode = std::move(mode);
  r.coord = std::move(coord);
  r.nearest = std::move(nearest);
  return r;
}

std::vector<std::pair<int64_t, double>> resize_taps(const ResizeRef& r, int64_t o, int64_t in, int64_t out, double scale) {
  if (in == out && scale == 1.0) return {{o, 1.0}};
  double c = 0;
  if (r.coord == "half_pixel") c = (o + 0.5) / scale - 0.5;
  if (r.coord == "pytorch_half_pixel") c = out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (r.coord == "align_corners") c = out == 1 ? 0.0 : static_cast<double>(o) * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (r.coord == "asymmetric") c = o / scale;
  if (r.coord == "tf_half_pixel_for_nn") c = (o + 0.5) / scale;
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  if (r.mode == "nearest") {
    double k = 0;
    if (r.nearest == "round_prefer_floor") k = c - std::floor(c) == 0.5 ? std::floor(c) : std::round(c);
    if (r.nearest == "round_prefer_ceil") k = c - std::floor(c) == 0.5 ? std::ceil(c) : std::round(c);
    if (r.nearest == "floor") k = std::floor(c);
    if (r.nearest == "ceil") k = std::ceil(c);
    if (r.nearest == "simple") k = scale < 1 ? std::ceil(c) : std::trunc(c);
    return {{clamp(static_cast<int64_t>(k)), 1.0}};
  }
  if (r.mode == "linear") {
    c = std::clamp(c, 0.0, static_cast<double>(in - 1));
    const auto lo = static_cast<int64_t>(std::floor(c));
    return {{lo, 1.0 - (c - lo)}, {clamp(lo + 1), c - lo}};
  }
  const auto lo = static_cast<int64_t>(std::floor(c));
  const double s = c - lo;
  // Keys' kernel W(d) at the distances of the four neighbours lo-1 .. lo+2.
  auto w = [&](double d) {
    d = std::abs(d);
    if (d < 1) return (r.a + 2) * d * d * d - (r.a + 3) * d * d + 1;
    if (d < 2) return r.a * d * d * d - 5 * r.a * d * d + 8 * r.a * d - 4 * r.a;
    return 0.0;
  };
  std::vector<std::pair<int64_t, double>> taps;
  double total = 0;
  for (int64_t k = -1; k <= 2; ++k) {
    const bool inside = lo + k >= 0 && lo + k < in;
    const double weight = r.exclude && !inside ? 0.0 : w(s - static_cast<double>(k));
    taps.emplace_back(clamp(lo + k), weight);
    total += weight;
  }
  if (r.exclude) {
    for (auto& t : taps) t.second /= total;
  }
  return taps;
}

HostTensor resize_ref(const HostTensor& x, const std::vector<int64_t>& out_shape, const ResizeRef& r) {
  HostTensor y = HostTensor::filled(out_shape, x.dtype);
  for (int64_t flat = 0; flat < y.numel(); ++flat) {
    const std::vector<int64_t> o = unravel(flat, out_shape);
    std::vector<std::vector<std::pair<int64_t, double>>> taps;
    size_t combos = 1;
    for (size_t a = 0; a < o.size(); ++a) {
      const int64_t in = x.shape[a], out = out_shape[a];
      const double scale = r.scales.empty() ? static_cast<double>(out) / static_cast<double>(in) : r.scales[a];
      taps.push_back(resize_taps(r, o[a], in, out, scale));
      combos *= taps.back().size();
    }
    double sum = 0;
    for (size_t combo = 0; combo < combos; ++combo) {
      std::vector<int64_t> index(o.size());
      double weight = 1;
      size_t rest = combo;
      for (size_t a = 0; a < o.size(); ++a) {
        const auto& t = taps[a][rest % taps[a].size()];
        rest /= taps[a].size();
        index[a] = t.first;
        weight *= t.second;
      }
      sum += weight * x.at(index);
    }
    y.values[static_cast<size_t>(flat)] = sum;
  }
  return y;
}

Reference ref_reshape_to(std::function<std::vector<int64_t>(const RefInputs&)> shape) {
  return [shape](const RefInputs& in) { return reshape(in[0], shape(in)); };
}

}  // namespace

OpRows manipulate_rows() {
  return {
      // reshape.
      deduce("reshape", "x: Tensor[(n, 4096), float32]", "reshape(x, shape(n, 64, 64))",
             "Tensor[(n, 64, 64), float32]"),
      deduce("reshape", "x: Tensor[(n, m), float32]", "reshape(x, shape(m * n))", "Tensor[(m * n,), float32]"),
      deduce("reshape", "x: Tensor[(n, 4096), float32]", "reshape(x, shape(-1, 64))",
             "Tensor[(n * 64, 64), float32]"),
      deduce("reshape", "x: Tensor[(6, 4), int32]", "reshape(x, shape(3, -1))", "Tensor[(3, 8), int32]"),
      deduce("reshape", "x: Tensor[ndim=2, float32]", "reshape(x, shape(6, 4))", "Tensor[(6, 4), float32]"),
      deduce("reshape", "x: Tensor[ndim=2, float32]", "reshape(x, shape(-1, 4))", "Tensor[ndim=2, float32]"),
      deduce("reshape", "x: Tensor[(n,), float32], s: Shape[ndim=3]", "reshape(x, s)", "Tensor[ndim=3, float32]"),
      deduce("reshape", "s: Shape[(p, q)], x: Tensor[(q, p), float32]", "reshape(x, s)",
             "Tensor[(p, q), float32]"),
      deduce("reshape", "x: Tensor[(n, 4), ?]", "reshape(x, shape(4, n))", "Tensor[(4, n), ?]"),
      deduce("reshape", "x: Tensor[(n, 4), float32]", "reshape(x, shape(n, 3))",
             error("reshape: element counts differ: x Tensor[(n, 4), float32] has n * 4 elements, new shape "
                   "(n, 3) has n * 3")),
      deduce("reshape", "x: Tensor[(6,), float32]", "reshape(x, shape(-1, 4))",
             error("reshape: cannot infer dim 0 of (-1, 4)")),
      deduce("reshape", "x: Tensor[(6,), float32]", "reshape(x, shape(-1, -1))",
             error("reshape: new shape (-1, -1) has more than one -1 (dims 0 and 1)")),
      deduce("reshape", "x: Tensor[(n,), float32], y: Tensor[(n,), float32]", "reshape(x, y)",
             error("reshape: argument 1 (shape): expected a Shape, got Tensor[(n,), float32]")),
      numeric("reshape", "x: Tensor[(n, 6), float32]", "reshape(x, shape(n * 2, 3))",
              [](const RefInputs& in) { return reshape(in[0], {in.dim("n") * 2, 3}); }),
      numeric("reshape", "x: Tensor[(n, 4, 16), int32]", "reshape(x, shape(n, -1))",
              [](const RefInputs& in) { return reshape(in[0], {in.dim("n"), 64}); }),
      numeric("reshape", "s: Shape[(p, q)], x: Tensor[(q, p), float32]", "reshape(x, s)",
              {{"p", {1, 7, 300}}, {"q", {1, 3, 20}}},
              [](const RefInputs& in) { return reshape(in[1], {in.dim("p"), in.dim("q")}); }),

      // permute_dims.
      deduce("permute_dims", "x: Tensor[(n, m, 4), float32]", "permute_dims(x)", "Tensor[(4, m, n), float32]"),
      deduce("permute_dims", "x: Tensor[(n, m, 4), float32]", "permute_dims(x, axes=[0, 2, 1])",
             "Tensor[(n, 4, m), float32]"),
      deduce("permute_dims", "x: Tensor[(n, m, 4), float32]", "permute_dims(x, axes=[-1, 0, 1])",
             "Tensor[(4, n, m), float32]"),
      deduce("permute_dims", "x: Tensor[(2, 3), int64]", "permute_dims(x, axes=[1, 0])", "Tensor[(3, 2), int64]"),
      deduce("permute_dims", "x: Tensor[ndim=3, float32]", "permute_dims(x)", "Tensor[ndim=3, float32]"),
      deduce("permute_dims", "x: Tensor[ndim=?, float32]", "permute_dims(x)", "Tensor[ndim=?, float32]"),
      deduce("permute_dims", "x: Tensor[ndim=?, float32]", "permute_dims(x, axes=[1, 0])",
             "Tensor[ndim=2, float32]"),
      deduce("permute_dims", "x: Tensor[(n, m), ?]", "permute_dims(x)", "Tensor[(m, n), ?]"),
      deduce("permute_dims", "x: Tensor[(n, m, 4), float32]", "permute_dims(x, axes=[0, 1])",
             error("permute_dims: axes (0, 1) have 2 entries, expected 3")),
      deduce("permute_dims", "x: Tensor[(n, m), float32]", "permute_dims(x, axes=[0, 2])",
             error("permute_dims: axis 2 in (0, 2) is out of range for rank 2")),
      deduce("permute_dims", "x: Tensor[(n, m), float32]", "permute_dims(x, axes=[1, -1])",
             error("permute_dims: axis 1 appears twice in (1, -1)")),
      numeric("permute_dims", "x: Tensor[(n, m), float32]", "permute_dims(x)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, [](const RefInputs& in) { return permute_dims(in[0]); }),
      numeric("permute_dims", "x: Tensor[(b, n, 4), float32]", "permute_dims(x, axes=[0, 2, 1])",
              {{"b", {1, 3, 2}}, {"n", {1, 7, 300}}},
              [](const RefInputs& in) { return permute_dims(in[0], {0, 2, 1}); }),
      numeric("permute_dims", "x: Tensor[(a, 3, c, 2), int64]", "permute_dims(x, axes=[2, 0, -1, 1])",
              {{"a", {1, 5, 17}}, {"c", {1, 2, 31}}},
              [](const RefInputs& in) { return permute_dims(in[0], {2, 0, 3, 1}); }),
      // reshape: -1 is the quotient with common factors cancelled.
      deduce("reshape", "x: Tensor[(b, n, 32, 128), float32]", "reshape(x, shape(b, n, -1))",
             "Tensor[(b, n, 4096), float32]"),
      deduce("reshape", "x: Tensor[(n, 4, 16), float32]", "reshape(x, shape(n, -1))", "Tensor[(n, 64), float32]"),
      deduce("reshape", "x: Tensor[(n, m, 6), float32]", "reshape(x, shape(n * 3, -1))",
             "Tensor[(n * 3, m * 2), float32]"),
      numeric("reshape", "x: Tensor[(b, n, 8, 4), float32]", "reshape(x, shape(b, n, -1))",
              {{"b", {1, 2, 3}}, {"n", {1, 13, 300}}},
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{in.dim("b"), in.dim("n"), 32}; })),

      // expand_dims.
      deduce("expand_dims", "x: Tensor[(n, m), float32]", "expand_dims(x, axis=1)", "Tensor[(n, 1, m), float32]"),
      deduce("expand_dims", "x: Tensor[(n, m), float32]", "expand_dims(x, axis=[0, -1])",
             "Tensor[(1, n, m, 1), float32]"),
      deduce("expand_dims", "x: Tensor[ndim=2, int32]", "expand_dims(x, axis=0)", "Tensor[ndim=3, int32]"),
      deduce("expand_dims", "x: Tensor[ndim=?, float32]", "expand_dims(x, axis=0)", "Tensor[ndim=?, float32]"),
      deduce("expand_dims", "x: Tensor[(n, m), float32]", "expand_dims(x, axis=3)",
             error("expand_dims: axis 3 in [3] is out of range for the result's rank 3")),
      deduce("expand_dims", "x: Tensor[(n,), float32]", "expand_dims(x, axis=[1, -2])",
             error("expand_dims: axis 1 appears twice in [1, -2]")),
      deduce("expand_dims", "x: Tensor[(n,), float32]", "expand_dims(x)",
             error("expand_dims: attribute `axis` (int | [int]) is required")),
      numeric("expand_dims", "x: Tensor[(n, 3), float32]", "expand_dims(x, axis=[0, 2])",
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{1, in.dim("n"), 1, 3}; })),

      // squeeze.
      deduce("squeeze", "x: Tensor[(n, 1, 4, 1), float32]", "squeeze(x)", "Tensor[(n, 4), float32]"),
      deduce("squeeze", "x: Tensor[(n, 1, 4, 1), float32]", "squeeze(x, axis=1)", "Tensor[(n, 4, 1), float32]"),
      deduce("squeeze", "x: Tensor[(n, 1, 4, 1), float32]", "squeeze(x, axis=[1, -1])", "Tensor[(n, 4), float32]"),
      deduce("squeeze", "x: Tensor[ndim=3, float32]", "squeeze(x, axis=0)", "Tensor[ndim=2, float32]"),
      deduce("squeeze", "x: Tensor[ndim=3, float32]", "squeeze(x)", "Tensor[ndim=?, float32]"),
      deduce("squeeze", "x: Tensor[(n, m), float32]", "squeeze(x, axis=1)",
             error("squeeze: dim 1 of x Tensor[(n, m), float32] is `m`, not provably 1")),
      deduce("squeeze", "x: Tensor[(n, 1), float32]", "squeeze(x, axis=2)",
             error("squeeze: axis 2 is out of range for rank 2")),
      numeric("squeeze", "x: Tensor[(n, 1, 3, 1), float32]", "squeeze(x)",
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{in.dim("n"), 3}; })),

      // flatten.
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x)", "Tensor[(m * n * 4,), float32]"),
      deduce("flatten", "x: Tensor[(), int32]", "flatten(x)", "Tensor[(1,), int32]"),
      deduce("flatten", "x: Tensor[ndim=3, float32]", "flatten(x)", "Tensor[ndim=1, float32]"),
      deduce("flatten", "x: Tensor[(n,), float32], y: Tensor[(n,), float32]", "flatten(x, y)",
             error("`flatten` takes 1 argument, found 2")),
      numeric("flatten", "x: Tensor[(n, 3, m), int32]", "flatten(x)", {{"n", {1, 7, 30}}, {"m", {1, 5, 64}}},
              ref_reshape_to([](const RefInputs&) { return std::vector<int64_t>{-1}; })),
      // flatten with start_dim / end_dim (torch.flatten): the merged dim is the product.
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, start_dim=1)", "Tensor[(n, m * 4), float32]"),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, end_dim=1)", "Tensor[(n * 4, m), float32]"),
      deduce("flatten", "x: Tensor[(b, n, 4, m), float32]", "flatten(x, start_dim=-3, end_dim=-2)",
             "Tensor[(b, n * 4, m), float32]"),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, start_dim=1, end_dim=1)",
             "Tensor[(n, 4, m), float32]"),
      deduce("flatten", "x: Tensor[(), int32]", "flatten(x, start_dim=-1, end_dim=0)", "Tensor[(1,), int32]"),
      deduce("flatten", "x: Tensor[ndim=4, float32]", "flatten(x, start_dim=1)", "Tensor[ndim=2, float32]"),
      deduce("flatten", "x: Tensor[ndim=?, float32]", "flatten(x, start_dim=1)", "Tensor[ndim=?, float32]"),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, start_dim=3)",
             error("flatten: axis 3 is out of range for rank 3 (x Tensor[(n, 4, m), float32])")),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, end_dim=-4)",
             error("flatten: axis -4 is out of range for rank 3")),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, start_dim=2, end_dim=-2)",
             error("flatten: start_dim 2 (dim 2) comes after end_dim -2 (dim 1) for rank 3")),
      numeric("flatten", "x: Tensor[(n, 3, m), int32]", "flatten(x, start_dim=1)",
              {{"n", {1, 7, 30}}, {"m", {1, 5, 64}}},
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{in.dim("n"), -1}; })),
      numeric("flatten", "x: Tensor[(n, 2, 3, m), float32]", "flatten(x, start_dim=1, end_dim=-2)",
              {{"n", {1, 7, 30}}, {"m", {1, 5, 64}}},
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{in.dim("n"), 6, in.dim("m")}; })),

      // broadcast_to.
      deduce("broadcast_to", "x: Tensor[(1, m), float32], y: Tensor[(n,), float32]", "broadcast_to(x, shape(n, m))",
             "Tensor[(n, m), float32]"),
      deduce("broadcast_to", "x: Tensor[(m,), float32], s: Shape[(b, n, m)]", "broadcast_to(x, s)",
             "Tensor[(b, n, m), float32]"),
      deduce("broadcast_to", "x: Tensor[(n, 1), float32], s: Shape[ndim=3]", "broadcast_to(x, s)",
             "Tensor[ndim=3, float32]"),
      deduce("broadcast_to", "x: Tensor[ndim=?, float32]", "broadcast_to(x, shape(4, 5))", "Tensor[(4, 5), float32]"),
      deduce("broadcast_to", "x: Tensor[(n, 3), float32]", "broadcast_to(x, shape(n, 4))",
             error("broadcast_to: dim 1 of x Tensor[(n, 3), float32] is `3`, neither the target's dim 1 `4` nor 1")),
      deduce("broadcast_to", "x: Tensor[(n, 3), float32]", "broadcast_to(x, shape(3,))",
             error("broadcast_to: x Tensor[(n, 3), float32] has rank 2, more than the target shape (3,)")),
      numeric("broadcast_to", "x: Tensor[(n, 1), float32]", "broadcast_to(x, shape(3, n, 5))",
              [](const RefInputs& in) { return broadcast_to(in[0], {3, in.dim("n"), 5}); }),

      // astype.
      deduce("astype", "x: Tensor[(n, 4), float32]", "astype(x, dtype=int32)", "Tensor[(n, 4), int32]"),
      deduce("astype", "x: Tensor[ndim=2, float32]", "astype(x, dtype=float16)", "Tensor[ndim=2, float16]"),
      deduce("astype", "x: Tensor[(n,), ?]", "astype(x, dtype=bool)", "Tensor[(n,), bool]"),
      deduce("astype", "x: Tensor[(n,), float32]", "astype(x)",
             error("astype: attribute `dtype` (dtype) is required")),
      numeric("astype", "x: Tensor[(n, 3), float32]", "astype(x, dtype=int32)",
              [](const RefInputs& in) { return astype(in[0], DataType::int32()); }).range(-9.9, 9.9),
      numeric("astype", "x: Tensor[(n,), int32]", "astype(x, dtype=float32)",
              [](const RefInputs& in) { return astype(in[0], kF32); }),
      numeric("astype", "x: Tensor[(n,), float32]", "astype(x, dtype=bool)",
              [](const RefInputs& in) { return astype(in[0], DataType::boolean()); }).range(-1.5, 1.5),
      numeric("astype", "x: Tensor[(n,), bool]", "astype(x, dtype=float64)",
              [](const RefInputs& in) { return astype(in[0], DataType::float64()); }),
      numeric("astype", "x: Tensor[(n,), int64]", "astype(x, dtype=int8)",
              [](const RefInputs& in) { return astype(in[0], DataType{DataType::Code::kInt, 8, 1}); }).range(-500, 500),
      numeric("astype", "x: Tensor[(n,), uint8]", "astype(x, dtype=int64)",
              [](const RefInputs& in) { return astype(in[0], DataType::int64()); }),
      numeric("astype", "x: Tensor[(n,), float64]", "astype(x, dtype=uint8)",
              [](const RefInputs& in) { return astype(in[0], DataType{DataType::Code::kUInt, 8, 1}); }).range(0, 255),

      // flip.
      deduce("flip", "x: Tensor[(n, m), float32]", "flip(x, axis=1)", "Tensor[(n, m), float32]"),
      deduce("flip", "x: Tensor[ndim=?, float32]", "flip(x, axis=3)", "Tensor[ndim=?, float32]"),
      deduce("flip", "x: Tensor[(n, m), float32]", "flip(x, axis=2)", error("flip: axis 2 is out of range for rank 2")),
      numeric("flip", "x: Tensor[(n, 3), float32]", "flip(x, axis=0)",
              [](const RefInputs& in) { return flip(in[0], 0); }),
      numeric("flip", "x: Tensor[(2, n), int32]", "flip(x, axis=-1)",
              [](const RefInputs& in) { return flip(in[0], -1); }),

      // repeat.
      deduce("repeat", "x: Tensor[(n, 3), float32]", "repeat(x, repeats=2, axis=1)", "Tensor[(n, 6), float32]"),
      deduce("repeat", "x: Tensor[(n, 3), float32]", "repeat(x, repeats=2)", "Tensor[(n * 6,), float32]"),
      deduce("repeat", "x: Tensor[ndim=2, float32]", "repeat(x, repeats=2, axis=0)", "Tensor[ndim=2, float32]"),
      deduce("repeat", "x: Tensor[(n, 3), float32]", "repeat(x, repeats=-1, axis=1)",
             error("repeat: repeats [-1] has -1, expected counts >= 0")),
      numeric("repeat", "x: Tensor[(n, 3), float32]", "repeat(x, repeats=3, axis=0)",
              [](const RefInputs& in) { return repeat(in[0], 3, 0); }),
      numeric("repeat", "x: Tensor[(2, n), int64]", "repeat(x, repeats=2)",
              [](const RefInputs& in) { return repeat(in[0], 2, std::nullopt); }),

      // tile.
      deduce("tile", "x: Tensor[(n, 3), float32]", "tile(x, repeats=[2, 2])", "Tensor[(n * 2, 6), float32]"),
      deduce("tile", "x: Tensor[(n, 3), float32]", "tile(x, repeats=[2])", "Tensor[(n, 6), float32]"),
      deduce("tile", "x: Tensor[(n, 3), float32]", "tile(x, repeats=[2, 1, 1])", "Tensor[(2, n, 3), float32]"),
      deduce("tile", "x: Tensor[ndim=2, float32]", "tile(x, repeats=[2, 1, 1])", "Tensor[ndim=3, float32]"),
      deduce("tile", "x: Tensor[(n,), float32]", "tile(x, repeats=[-2])",
             error("tile: repeats [-2] has -2, expected counts >= 0")),
      numeric("tile", "x: Tensor[(n, 3), float32]", "tile(x, repeats=[2, 3])",
              [](const RefInputs& in) { return tile(in[0], {2, 3}); }),
      numeric("tile", "x: Tensor[(n,), int32]", "tile(x, repeats=[3, 1])",
              [](const RefInputs& in) { return tile(in[0], {3, 1}); }),

      // concat.
      deduce("concat", "x: Tensor[(n, 4), float32], y: Tensor[(m, 4), float32]", "concat((x, y))",
             "Tensor[(m + n, 4), float32]"),
      deduce("concat", "x: Tensor[(n, 2), float32], y: Tensor[(n, 3), float32]", "concat((x, y, x), axis=-1)",
             "Tensor[(n, 7), float32]"),
      deduce("concat", "x: Tensor[ndim=2, float32], y: Tensor[(n, 3), float32]", "concat((x, y), axis=1)",
             "Tensor[ndim=2, float32]"),
      deduce("concat", "x: Tensor[(n, 4), float32], y: Tensor[(n, 5), float32]", "concat((x, y))",
             error("concat: dim 1 of field 1 Tensor[(n, 5), float32] is `5`, field 0's is `4` (only axis 0 may differ)")),
      deduce("concat", "x: Tensor[(n, 4), float32], y: Tensor[(n, 4), int32]", "concat((x, y))",
             error("concat: field 1 has dtype int32, field 0's is float32")),
      deduce("concat", "x: Tensor[(n, 4), float32], y: Tensor[(4,), float32]", "concat((x, y))",
             error("concat: field 1 Tensor[(4,), float32] has rank 1, expected 2")),
      deduce("concat", "x: Tensor[(n, 4), float32]", "concat((x,), axis=2)",
             error("concat: axis 2 is out of range for rank 2")),
      deduce("concat", "x: Tensor[(n, 4), float32]", "concat(x)",
             error("concat: argument 0 (tensors): expected a Tuple")),
      numeric("concat", "x: Tensor[(n, 2), float32], y: Tensor[(n, 3), float32], z: Tensor[(n, k), float32]",
              "concat((x, y, z), axis=1)", {{"n", {1, 13, 300}}, {"k", {1, 4, 17}}},
              [](const RefInputs& in) { return concat({in[0], in[1], in[2]}, 1); }),
      numeric("concat", "x: Tensor[(n, 3), int32], y: Tensor[(m, 3), int32]", "concat((x, y))",
              {{"n", {1, 13, 300}}, {"m", {2, 1, 77}}},
              [](const RefInputs& in) { return concat({in[0], in[1]}, 0); }),

      // split.
      deduce("split", "x: Tensor[(n, 6), float32]", "split(x, indices_or_sections=3, axis=1)",
             "Tuple[(Tensor[(n, 2), float32], Tensor[(n, 2), float32], Tensor[(n, 2), float32])]"),
      deduce("split", "x: Tensor[(n * 4,), float32]", "split(x, indices_or_sections=2)",
             "Tuple[(Tensor[(n * 2,), float32], Tensor[(n * 2,), float32])]"),
      deduce("split", "x: Tensor[(n, 8), float32]", "split(x, indices_or_sections=[2, 5], axis=-1)",
             "Tuple[(Tensor[(n, 2), float32], Tensor[(n, 3), float32], Tensor[(n, 3), float32])]"),
      deduce("split", "x: Tensor[ndim=2, float32]", "split(x, indices_or_sections=2, axis=1)",
             "Tuple[(Tensor[ndim=2, float32], Tensor[ndim=2, float32])]"),
      deduce("split", "x: Tensor[(n, 5), float32]", "split(x, indices_or_sections=2, axis=1)",
             error("split: dim 1 of x Tensor[(n, 5), float32] is `5`, not provably divisible into 2 sections")),
      deduce("split", "x: Tensor[(n, m), float32]", "split(x, indices_or_sections=2)",
             error("split: dim 0 of x Tensor[(n, m), float32] is `n`, not provably divisible into 2 sections")),
      deduce("split", "x: Tensor[(n, 8), float32]", "split(x, indices_or_sections=[5, 2], axis=1)",
             error("split: split points [5, 2] must be non-negative and ascending")),
      deduce("split", "x: Tensor[(n, 8), float32]", "split(x, indices_or_sections=0)",
             error("split: indices_or_sections is 0, expected a number of sections >= 1")),
      numeric("split", "x: Tensor[(n, 6), float32]", "split(x, indices_or_sections=3, axis=1)",
              [](const RefInputs& in) { return RefResult::tuple(split_sections(in[0], 3, 1)); }),
      numeric("split", "x: Tensor[(9, n), int32]", "split(x, indices_or_sections=[2, 4, 12])",
              [](const RefInputs& in) { return RefResult::tuple(split_points(in[0], {2, 4, 12}, 0)); }),

      // strided_slice.
      deduce("strided_slice", "x: Tensor[(n, 64), float32]", "strided_slice(x, axes=[1], begin=[0], end=[32])",
             "Tensor[(n, 32), float32]"),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]",
             "strided_slice(x, axes=[1], begin=[-3], end=[100])", "Tensor[(n, 3), float32]"),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]",
             "strided_slice(x, axes=[1], begin=[1], end=[10], strides=[2])", "Tensor[(n, 5), float32]"),
      deduce("strided_slice", "x: Tensor[ndim=2, float32]", "strided_slice(x, axes=[1], begin=[1], end=[4])",
             "Tensor[ndim=2, float32]"),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]", "strided_slice(x, axes=[1], begin=[1, 2], end=[4])",
             error("strided_slice: axes [1] have 1 entries, begin (1, 2) 2, end (4,) 1")),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]",
             "strided_slice(x, axes=[1], begin=[1], end=[4], strides=[0])",
             error("strided_slice: stride 0 of axis 1 is not positive")),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]", "strided_slice(x, axes=[2], begin=[1], end=[4])",
             error("strided_slice: axis 2 is out of range for rank 2")),
      deduce("strided_slice", "x: Tensor[(n, 10), float32], p: Prim[int64, k]",
             "strided_slice(x, axes=[1], begin=sym[k], end=sym[k + 4])",
             "Tensor[(n, max(0, min(10, max(0, k + 4)) - min(10, max(0, k)))), float32]"),
      // Bounds the Analyzer cannot prove within [0, dim] keep numpy's clamping (n may be 0).
      deduce("strided_slice", "x: Tensor[(n, m), float32]", "strided_slice(x, axes=[0], begin=[1], end=sym[n])",
             "Tensor[(max(1, n) - 1, m), float32]"),
      numeric("strided_slice", "x: Tensor[(n, 10), float32]",
              "strided_slice(x, axes=[1, 0], begin=[-8, 0], end=[9, 200], strides=[3, 1])",
              [](const RefInputs& in) { return strided_slice(in[0], {1, 0}, {-8, 0}, {9, 200}, {3, 1}); }),
      numeric("strided_slice", "x: Tensor[(n, 4), float32], p: Prim[int64, k]",
              "strided_slice(x, axes=[0], begin=sym[k], end=sym[k + 3])", {{"n", {1, 13, 300}}, {"k", {0, 11, 290}}},
              [](const RefInputs& in) {
                const int64_t k = in.dim("k");
                return strided_slice(in[0], {0}, {k}, {k + 3}, {1});
              }),
      numeric("strided_slice", "x: Tensor[(n, m), int32]", "strided_slice(x, axes=[0, 1], begin=[1, 0], end=sym[n, m - 1])",
              [](const RefInputs& in) { return strided_slice(in[0], {0, 1}, {1, 0}, {in.dim("n"), in.dim("m") - 1}, {1, 1}); }),

      // take.
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(n,), int32]", "take(x, i, axis=0)",
             "Tensor[(n, d), float32]"),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(b, n), int64]", "take(x, i, axis=0)",
             "Tensor[(b, n, d), float32]"),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(b, n), int64]", "take(x, i, axis=1)",
             "Tensor[(v, b, n), float32]"),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(n,), int64]", "take(x, i)", "Tensor[(n,), float32]"),
      deduce("take", "x: Tensor[ndim=2, float32], i: Tensor[(n,), int64]", "take(x, i, axis=0)",
             "Tensor[ndim=2, float32]"),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(n,), float32]", "take(x, i, axis=0)",
             error("take: argument 1 (indices): expected")),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(n,), int64]", "take(x, i, axis=0, mode=\"raise\")",
             error("take: attribute `mode`")),
      numeric("take", "x: Tensor[(10, d), float32], i: Tensor[(n,), int32]", "take(x, i, axis=0)",
              {{"d", {1, 13, 64}}, {"n", {1, 7, 300}}},
              [](const RefInputs& in) { return take(in[0], in[1], 0, false); }).range(1, -3, 12),
      numeric("take", "x: Tensor[(3, 5), int32], i: Tensor[(n, 2), int64]", "take(x, i, axis=1, mode=\"wrap\")",
              [](const RefInputs& in) { return take(in[0], in[1], 1, true); }).range(1, -9, 9),
      numeric("take", "x: Tensor[(3, 5), float32], i: Tensor[(n,), int64]", "take(x, i)",
              [](const RefInputs& in) { return take(in[0], in[1], std::nullopt, false); }).range(1, 0, 14),

      // gather_elements: x at indices' positions, the index along axis read from indices.
      deduce("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(n, 3), int64]", "gather_elements(x, i, axis=1)",
             "Tensor[(n, 3), float32]"),
      deduce("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(m, 5), int32]", "gather_elements(x, i)",
             "Tensor[(m, 5), float32]"),
      deduce("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(n, 6), int64]", "gather_elements(x, i)",
             error("gather_elements: dim 1 of argument 1 (indices) is `6`, not provably at most x's `5`")),
      deduce("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(n,), int64]", "gather_elements(x, i)",
             error("gather_elements: argument 1 (indices) Tensor[(n,), int64] has rank 1, expected x's rank 2")),
      numeric("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(n, 3), int64]", "gather_elements(x, i, axis=1)",
              {{"n", {1, 4, 33}}},
              [](const RefInputs& in) {
                HostTensor out = HostTensor::filled(in[1].shape, in[0].dtype);
                for (int64_t r = 0; r < in[1].shape[0]; ++r) {
                  for (int64_t c = 0; c < in[1].shape[1]; ++c) {
                    auto k = static_cast<int64_t>(in[1].at({r, c}));
                    if (k < 0) k += 5;
                    out.at({r, c}) = in[0].at({r, k});
                  }
                }
                return out;
              }).range(1, -5, 4),
      numeric("gather_elements", "x: Tensor[(n, 4), int32], i: Tensor[(m, 4), int32]", "gather_elements(x, i, axis=0)",
              {{"n", {3, 7}}, {"m", {2, 9}}},
              [](const RefInputs& in) {
                HostTensor out = HostTensor::filled(in[1].shape, in[0].dtype);
                for (int64_t r = 0; r < in[1].shape[0]; ++r) {
                  for (int64_t c = 0; c < 4; ++c) {
                    auto k = static_cast<int64_t>(in[1].at({r, c}));
                    k = std::clamp<int64_t>(k, 0, in[0].shape[0] - 1);  // 0..2 are in range for both n
                    out.at({r, c}) = in[0].at({k, c});
                  }
                }
                return out;
              }).range(1, 0, 2),
      // scatter_nd: data with the rows (k = 1) or elements (k = 2) at indices' coordinates replaced
      // or combined, entry after entry.
      deduce("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 1), int64], u: Tensor[(m, 4), float32]",
             "scatter_nd(d, i, u)", "Tensor[(n, 4), float32]"),
      deduce("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 2), int64], u: Tensor[(m,), float32]",
             "scatter_nd(d, i, u, reduction=\"add\")", "Tensor[(n, 4), float32]"),
      deduce("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 1), int64], u: Tensor[(m, 3), float32]",
             "scatter_nd(d, i, u)",
             error("scatter_nd: argument 2 (updates) is Tensor[(m, 3), float32], expected the dims (m, 4)")),
      deduce("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 3), int64], u: Tensor[(m,), float32]",
             "scatter_nd(d, i, u)", error("scatter_nd: the last dim of argument 1 (indices) Tensor[(m, 3), int64] must be a constant from 1 to data's rank 2")),
      numeric("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 1), int64], u: Tensor[(m, 4), float32]",
              "scatter_nd(d, i, u)", {{"n", {3, 6}}, {"m", {1, 5}}},
              [](const RefInputs& in) {
                HostTensor out = in[0];
                for (int64_t e = 0; e < in[1].shape[0]; ++e) {
                  auto k = static_cast<int64_t>(in[1].at({e, 0}));
                  if (k < 0) k += in[0].shape[0];
                  for (int64_t c = 0; c < 4; ++c) out.at({k, c}) = in[2].at({e, c});
                }
                return out;
              }).range(1, -3, 2),
      numeric("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 2), int64], u: Tensor[(m,), float32]",
              "scatter_nd(d, i, u, reduction=\"add\")", {{"n", {3, 6}}, {"m", {4, 9}}},
              [](const RefInputs& in) {
                HostTensor out = in[0];
                for (int64_t e = 0; e < in[1].shape[0]; ++e) {
                  const auto r = static_cast<int64_t>(in[1].at({e, 0})), c = static_cast<int64_t>(in[1].at({e, 1}));
                  out.at({r, c}) += in[2].at({e});
                }
                return out;
              }).range(1, 0, 2),

      // pad.
      deduce("pad", "x: Tensor[(n, 3), float32]", "pad(x, pad_width=[1, 2, 0, 1])", "Tensor[(n + 3, 4), float32]"),
      deduce("pad", "x: Tensor[ndim=2, float32]", "pad(x, pad_width=[1, 2, 0, 1])", "Tensor[ndim=2, float32]"),
      deduce("pad", "x: Tensor[(n, 3), float32]", "pad(x, pad_width=[1, 2])",
             error("pad: pad_width [1, 2] has 2 entries, expected 4")),
      deduce("pad", "x: Tensor[(n,), float32]", "pad(x, pad_width=[1, -2])",
             error("pad: pad_width [1, -2] has -2, expected widths >= 0")),
      numeric("pad", "x: Tensor[(n, 3), float32]", "pad(x, pad_width=[1, 2, 0, 3], pad_value=1.5)",
              [](const RefInputs& in) { return pad(in[0], {1, 2, 0, 3}, 1.5); }),
      numeric("pad", "x: Tensor[(2, n), int32]", "pad(x, pad_width=[0, 0, 4, 0])",
              [](const RefInputs& in) { return pad(in[0], {0, 0, 4, 0}, 0); }),

      // one_hot.
      deduce("one_hot", "i: Tensor[(n,), int32], on: Prim[float32], off: Prim[float32]", "one_hot(i, on, off, depth=5)",
             "Tensor[(n, 5), float32]"),
      deduce("one_hot", "i: Tensor[(b, n), int64]", "one_hot(i, prim(1), prim(0), depth=3, axis=0)",
             "Tensor[(3, b, n), int64]"),
      deduce("one_hot", "i: Tensor[ndim=2, int64]", "one_hot(i, prim(1), prim(0), depth=3)", "Tensor[ndim=3, int64]"),
      deduce("one_hot", "i: Tensor[(n,), int32], on: Prim[float32], off: Prim[float16]", "one_hot(i, on, off, depth=5)",
             error("one_hot: on_value Prim[float32] and off_value Prim[float16] differ in dtype")),
      deduce("one_hot", "i: Tensor[(n,), int32]", "one_hot(i, prim(1), prim(0), depth=5, axis=2)",
             error("one_hot: axis 2 is out of range for rank 2")),
      deduce("one_hot", "i: Tensor[(n,), float32]", "one_hot(i, prim(1), prim(0), depth=5)",
             error("one_hot: argument 0 (indices): expected")),
      numeric("one_hot", "i: Tensor[(n,), int32], on: Prim[float32], off: Prim[float32]", "one_hot(i, on, off, depth=5)",
              [](const RefInputs& in) { return one_hot(in[0], 5, -1, in[1].values[0], in[2].values[0], kF32); })
          .range(0, -1, 6),
      numeric("one_hot", "i: Tensor[(2, n), int64]", "one_hot(i, prim(7), prim(-1), depth=4, axis=1)",
              [](const RefInputs& in) { return one_hot(in[0], 4, 1, 7, -1, DataType::int64()); })
          .range(0, 0, 4),

      // resize: sizes given by the shape, scales by out / in or stated.
      deduce("resize", "x: Tensor[(n, 3, h, w), float32]", "resize(x, shape(n, 3, h * 2, w * 2), mode=\"linear\")",
             "Tensor[(n, 3, h * 2, w * 2), float32]"),
      deduce("resize", "x: Tensor[(n, 3, h, w), float32], s: Shape[ndim=4]", "resize(x, s)", "Tensor[ndim=4, float32]"),
      deduce("resize", "x: Tensor[(n, 3, h, w), float32]", "resize(x, shape(h * 2, w * 2))",
             error("resize: shape has 2 dims, expected x's rank 4")),
      deduce("resize", "x: Tensor[(h, w), int32]", "resize(x, shape(h, w * 2), mode=\"linear\")",
             error("resize: linear interpolation needs a float x")),
      deduce("resize", "x: Tensor[(h, w), float32]", "resize(x, shape(h, w * 2), scale_num=[1, 2], scale_den=[1])",
             error("resize: scale_num has 2 values and scale_den 1, expected as many")),
      deduce("resize", "x: Tensor[(h, w), float32]", "resize(x, shape(h, w), mode=\"area\")",
             error("resize: attribute `mode`")),
      numeric("resize", "x: Tensor[(h, w), float32]", "resize(x, shape(h * 2, w * 3))", {{"h", {1, 3, 5}}, {"w", {2, 4, 7}}},
              [](const RefInputs& in) { return resize_ref(in[0], {in.dim("h") * 2, in.dim("w") * 3}, resize_how("nearest")); }),
      numeric("resize", "x: Tensor[(h, w), int32]",
              "resize(x, shape(floordiv(h, 2), w * 2), coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"simple\", "
              "scale_num=[1, 2], scale_den=[2, 1])",
              {{"h", {2, 5, 8}}, {"w", {1, 3, 2}}},
              [](const RefInputs& in) {
                ResizeRef r = resize_how("nearest", "asymmetric", "simple");
                r.scales = {0.5, 2.0};
                return resize_ref(in[0], {in.dim("h") / 2, in.dim("w") * 2}, r);
              }),
      numeric("resize", "x: Tensor[(n, 2, h, w), float32]", "resize(x, shape(n, 2, h * 2, w * 2), mode=\"linear\")",
              {{"n", {1, 2, 1}}, {"h", {1, 4, 9}}, {"w", {3, 5, 6}}},
              [](const RefInputs& in) {
                return resize_ref(in[0], {in.dim("n"), 2, in.dim("h") * 2, in.dim("w") * 2}, resize_how("linear"));
              }),
      numeric("resize", "x: Tensor[(h, w), float32]",
              "resize(x, shape(7, 5), mode=\"linear\", coordinate_transformation_mode=\"align_corners\")",
              {{"h", {1, 3, 12}}, {"w", {2, 5, 11}}},
              [](const RefInputs& in) { return resize_ref(in[0], {7, 5}, resize_how("linear", "align_corners")); }),
      numeric("resize", "x: Tensor[(h, w), float32]",
              "resize(x, shape(floordiv(h * 3, 2), w), mode=\"linear\", coordinate_transformation_mode=\"pytorch_half_pixel\", "
              "scale_num=[3, 1], scale_den=[2, 1])",
              {{"h", {1, 3, 10}}, {"w", {1, 4, 3}}},
              [](const RefInputs& in) {
                ResizeRef r = resize_how("linear", "pytorch_half_pixel");
                r.scales = {1.5, 1.0};
                return resize_ref(in[0], {in.dim("h") * 3 / 2, in.dim("w")}, r);
              }),
      numeric("resize", "x: Tensor[(1, h, w), float32]", "resize(x, shape(1, h * 2, w + 3), mode=\"cubic\")",
              {{"h", {1, 4, 6}}, {"w", {2, 5, 1}}},
              [](const RefInputs& in) {
                return resize_ref(in[0], {1, in.dim("h") * 2, in.dim("w") + 3}, resize_how("cubic"));
              }),
      numeric("resize", "x: Tensor[(h, w), float32]",
              "resize(x, shape(h * 2, floordiv(w, 2)), mode=\"cubic\", cubic_coeff_a=-0.5, exclude_outside=true, "
              "coordinate_transformation_mode=\"asymmetric\")",
              {{"h", {1, 3, 8}}, {"w", {2, 7, 9}}},
              [](const RefInputs& in) {
                ResizeRef r = resize_how("cubic", "asymmetric");
                r.a = -0.5;
                r.exclude = true;
                return resize_ref(in[0], {in.dim("h") * 2, in.dim("w") / 2}, r);
              }),
  };
}

}  // namespace relax::ops_test
