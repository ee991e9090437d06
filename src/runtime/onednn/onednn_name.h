// The names of oneDNN's library functions (the contract with the dispatch pass):
//
//   name := "onednn." kind [ "{" attr { ";" attr } "}" ] { "+" post } [ ":packed" ]
//   kind := matmul | linear | conv1d | conv2d
//   attr := key "=" int { "," int }      (conv only: strides, padding, dilation, groups)
//   post := bias | relu | gelu_erf | gelu_tanh | silu | sigmoid | tanh | add
//
// `bias` may only come first. A conv attribute left out takes relax's default (strides 1,
// padding 0, dilation 1, groups 1); one given has one value per spatial dim, padding two per
// spatial dim (conv1d: left,right; conv2d: top,left,bottom,right).
#pragma once

#ifdef RELAX_WITH_ONEDNN

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace relax::runtime::onednn {

inline constexpr char kFamilyPrefix[] = "onednn.";

enum class OpKind { kMatmul, kLinear, kConv1d, kConv2d };
enum class PostKind { kBias, kRelu, kGeluErf, kGeluTanh, kSilu, kSigmoid, kTanh, kAdd };

/// "matmul", "linear", "conv1d", "conv2d".
const char* kind_name(OpKind kind);
/// As written in a name: "bias", "relu", ...
const char* post_name(PostKind post);

/// A convolution's window, per spatial dim (oneDNN's order: height before width).
struct ConvAttrs {
  std::vector<int64_t> strides;
  std::vector<int64_t> padding_before;  ///< top (conv2d), left
  std::vector<int64_t> padding_after;   ///< bottom (conv2d), right
  std::vector<int64_t> dilation;        ///< relax's: 1 is no dilation
  int64_t groups = 1;
};

/// A parsed name.
struct OpSpec {
  std::string name;  ///< the whole name, for messages
  OpKind kind = OpKind::kMatmul;
  ConvAttrs conv;  ///< conv kinds only
  bool bias = false;
  std::vector<PostKind> posts;  ///< in order, `bias` excluded
  int num_adds = 0;             ///< residual tensors (one per `add` post)
  bool packed = false;

  bool is_conv() const { return kind == OpKind::kConv1d || kind == OpKind::kConv2d; }
  int spatial_dims() const { return kind == OpKind::kConv2d ? 2 : 1; }
  /// Inputs in call order: the two operands, the bias, the residuals.
  size_t num_inputs() const { return 2 + (bias ? 1 : 0) + static_cast<size_t>(num_adds); }
};

/// Parses `name`; InvalidArgument naming the name, the place and what was expected.
absl::StatusOr<OpSpec> parse_name(const std::string& name);

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
