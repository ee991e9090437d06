// relax::runtime::onednn: the names of oneDNN's library functions, typed.
//
//   name := "onednn." kind [ "{" attr { ";" attr } "}" ] { "+" post } [ ":packed" ]
//           [ ":nhwc_in" ] [ ":nhwc_out" ]
//   kind := matmul | linear | conv1d | conv2d | conv2d_transpose
//   attr := key "=" int { "," int }      (conv only: strides, padding, dilation, groups)
//   post := bias | relu | gelu_erf | gelu_tanh | silu | sigmoid | tanh | add
//
// `bias` may only come first. A conv attribute left out takes relax's default (strides 1,
// padding 0, dilation 1, groups 1); one given has one value per spatial dim, padding two per
// spatial dim (conv1d: left,right; conv2d: top,left,bottom,right). conv2d_transpose (oneDNN's
// deconvolution) takes relax's weights (I, O / groups, kH, kW) and no output padding.
// `:nhwc_in` / `:nhwc_out` (conv1d, conv2d): the data / the output is N[H]WC instead of
// NC[H]W, in a tensor of the same dims and bytes (dispatch-library's nhwc-chains step marks
// chains of convolutions joined by elementwise ops, which do not care about the layout). The dispatch rules build an
// OpSpec and write its name with to_name; the runtime reads it back with parse_name (see
// relax/runtime/library_call.h). Both need no oneDNN.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/runtime/library_call.h"

namespace relax::runtime::onednn {

inline constexpr char kFamilyPrefix[] = "onednn.";

enum class OpKind { kMatmul, kLinear, kConv1d, kConv2d, kConv2dTranspose };
enum class PostKind { kBias, kRelu, kGeluErf, kGeluTanh, kSilu, kSigmoid, kTanh, kAdd };

/// "matmul", "linear", "conv1d", "conv2d", "conv2d_transpose".
const char* kind_name(OpKind kind);
/// As written in a name: "bias", "relu", ...
const char* post_name(PostKind post);
/// The post written `text`, if any.
std::optional<PostKind> post_from_name(std::string_view text);

/// A convolution's window (relax/runtime/library_call.h).
using ConvAttrs = ConvWindow;

/// A oneDNN call as its name says it.
struct OpSpec {
  std::string name;  ///< the whole name, for messages (set by parse_name)
  OpKind kind = OpKind::kMatmul;
  ConvAttrs conv;  ///< conv kinds only: one value per spatial dim
  bool bias = false;
  std::vector<PostKind> posts;  ///< in order, `bias` excluded
  int num_adds = 0;             ///< residual tensors (one per `add` post)
  bool packed = false;
  bool nhwc_in = false;   ///< the data is N[H]WC
  bool nhwc_out = false;  ///< the output is N[H]WC

  bool is_conv() const { return kind == OpKind::kConv1d || kind == OpKind::kConv2d || kind == OpKind::kConv2dTranspose; }
  int spatial_dims() const { return kind == OpKind::kConv1d ? 1 : 2; }
  /// Inputs in call order: the two operands, the bias, the residuals.
  size_t num_inputs() const { return 2 + (bias ? 1 : 0) + static_cast<size_t>(num_adds); }
  /// Appends a post (kBias sets `bias`; kAdd counts a residual).
  OpSpec& then(PostKind post);
};

/// The name of `spec`: every attribute of a conv written out, posts in order.
std::string to_name(const OpSpec& spec);

/// Parses `name`; InvalidArgument naming the name, the place and what was expected.
absl::StatusOr<OpSpec> parse_name(const std::string& name);

}  // namespace relax::runtime::onednn
