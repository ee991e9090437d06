// Constructors of shape-manipulation operator calls.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/op/optional_ints.h"
#include "relax/ir/op/operand.h"

namespace relax::op {

/// `x` with a new shape of the same element count; one dim may be -1, inferred.
Expr reshape(Expr x, Expr shape);
/// As above with the new shape given as dims (built into a ShapeExpr).
Expr reshape(Expr x, std::vector<SymExpr> shape);

/// `x` with its dims permuted: result dim i is x's dim axes[i]; without axes the
/// dims are reversed. Negative axes count from the end.
Expr permute_dims(Expr x, OptionalInts axes = std::nullopt);

/// `x` with a dim of 1 inserted at each of the result's axes `axis`
/// (negative ones count from the end of the result).
Expr expand_dims(Expr x, std::vector<int64_t> axis);
Expr expand_dims(Expr x, int64_t axis);

/// `x` without the dims at `axis`, each of which must be provably 1; without
/// axis, without every dim that is provably 1 (symbolic dims stay).
Expr squeeze(Expr x, OptionalInts axis = std::nullopt);

/// `x` with its dims start_dim..end_dim (both included; negative ones count
/// from the end) merged into one, their product, in row-major order, as
/// torch.flatten: by default the whole of x as one dim; a rank-0 x gives (1,).
/// A dim out of range or a start after the end is an error.
Expr flatten(Expr x, int64_t start_dim = 0, int64_t end_dim = -1);

/// `x` broadcast (numpy, aligned at the right) to `shape` (a Shape value).
Expr broadcast_to(Expr x, Expr shape);
/// As above with the shape given as dims.
Expr broadcast_to(Expr x, std::vector<SymExpr> shape);

/// `x` converted to `dtype` (float to integer truncates toward zero, to bool is `!= 0`).
Expr astype(Expr x, DataType dtype);

/// `x` reversed along `axis`.
Expr flip(Expr x, int64_t axis);

/// Each element of `x` repeated `repeats` times along `axis` (without axis: of
/// the flattened x), as numpy.repeat.
Expr repeat(Expr x, int64_t repeats, std::optional<int64_t> axis = std::nullopt);

/// `x` repeated `repeats[i]` times along each dim, as numpy.tile.
Expr tile(Expr x, std::vector<int64_t> repeats);

/// The tensors of the Tuple `tensors` joined along `axis`; every other dim must agree.
Expr concat(Expr tensors, int64_t axis = 0);
/// As above with the tensors given (built into a Tuple).
Expr concat(std::vector<Expr> tensors, int64_t axis = 0);

/// A Tuple of `sections` equal parts of `x` along `axis` (the dim must be
/// provably divisible).
Expr split(Expr x, int64_t sections, int64_t axis = 0);
/// A Tuple of the parts of `x` between the split points `indices` along `axis`
/// (numpy.split: ascending points, clamped to the dim).
Expr split(Expr x, std::vector<int64_t> indices, int64_t axis = 0);
/// The same for a braced list of points (`split(x, {4}, 1)` is the points [4],
/// not 4 sections).
Expr split(Expr x, std::initializer_list<int64_t> indices, int64_t axis = 0);

/// `x[begin:end:stride]` along each of `axes`: begin and end symbolic, end
/// exclusive, negative constants counting from the end, both clamped to the
/// dim as in numpy; strides positive (default 1).
Expr strided_slice(Expr x, std::vector<int64_t> axes, std::vector<SymExpr> begin,
                   std::vector<SymExpr> end,
                   OptionalInts strides = std::nullopt);

/// The elements of `x` at the integer `indices` along `axis` (without axis: of
/// the flattened x); the result's dims are x's with `axis` replaced by the
/// indices' dims (an embedding lookup is take(table, ids, 0)). Out-of-range
/// indices are clamped (`mode` "clip") or wrapped ("wrap": -1 is the last).
Expr take(Expr x, Expr indices, std::optional<int64_t> axis = std::nullopt,
          std::string mode = "clip");

/// `x` padded with `pad_value` (constant mode); `pad_width` is flat
/// [before_0, after_0, before_1, ...], one pair per dim.
Expr pad(Expr x, std::vector<int64_t> pad_width, double pad_value = 0);

/// x at the positions of `indices` (x's rank; its dims at most x's off `axis`), with the index
/// along `axis` read from indices: out[i] = x[i with i[axis] = indices[i]] (ONNX
/// GatherElements, torch.gather). A negative index counts from the end; one still out of range
/// is clamped.
Expr gather_elements(Expr x, Expr indices, int64_t axis = 0);

/// data with the slices at the coordinates of `indices` (..., k) replaced by `updates`
/// (indices' leading dims, then data's dims from k on), entry after entry, or combined with
/// them (`reduction` "add", "mul"): ONNX ScatterND. Negative coordinates count from the end; one
/// still out of range is clamped.
Expr scatter_nd(Expr data, Expr indices, Expr updates, std::string reduction = "none");

/// How resize samples (ONNX Resize's attributes, opsets 10-17).
struct ResizeOptions {
  /// "nearest", "linear" (bilinear over two resized axes, trilinear over three) or "cubic".
  std::string mode = "nearest";
  /// How an output index maps to a coordinate of x: "half_pixel", "pytorch_half_pixel",
  /// "align_corners", "asymmetric" or "tf_half_pixel_for_nn".
  std::string coordinate_transformation_mode = "half_pixel";
  /// How nearest rounds a coordinate: "round_prefer_floor", "round_prefer_ceil", "floor",
  /// "ceil" or "simple" (ceil along a shrinking axis, else truncated: ONNX Resize before
  /// opset 11 and Upsample).
  std::string nearest_mode = "round_prefer_floor";
  /// Keys' cubic convolution coefficient (-0.75 as ONNX, -0.5 as PIL/OpenCV's "a").
  double cubic_coeff_a = -0.75;
  /// Whether cubic gives neighbours outside x no weight (the others renormalised).
  bool exclude_outside = false;
  /// Each axis' scale as the exact ratio scale_num[a] / scale_den[a] (a model's float scale);
  /// empty: each axis' output dim over its input dim.
  std::vector<int64_t> scale_num;
  std::vector<int64_t> scale_den;
};

/// `x` resampled to `shape` (x's rank): each output index along an axis maps to a coordinate
/// of x (options.coordinate_transformation_mode), read by nearest, linear or cubic
/// interpolation (ONNX Resize, torch's interpolate). Axes of equal dims and unit scale are
/// copied.
Expr resize(Expr x, Expr shape, ResizeOptions options = {});

/// A new dim of `depth` inserted into the integer `indices` at `axis` (default
/// last): `on_value` where its index equals the index, else `off_value` (two
/// Prims of one dtype, the result's).
Expr one_hot(Expr indices, Operand on_value, Operand off_value, int64_t depth, int64_t axis = -1);

}  // namespace relax::op
