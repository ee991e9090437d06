// relax::runtime library calls: the typed form of a library function's name.
//
// A graph-level call of a vendor library (`call_dps_library("onednn.matmul+bias+gelu_erf:packed",
// ...)`) names the function and everything fixed about it in one string, so that a module
// serialises as plain text and the runtime builds the right primitive from the name alone.
// The grammar of every family:
//
//   name := family "." kind [ "{" attr { ";" attr } "}" ] { "+" post } [ ":packed" ]
//   attr := key "=" int { "," int }     (convolutions: strides, padding, dilation, groups)
//
// The runtime owns it: each family's spec (onednn::OpSpec in relax/runtime/onednn_call.h,
// cuda::LibrarySpec in relax/runtime/cuda_library_call.h) is parsed from a name by the
// runtime and written to one by the same header's to_name, which is what the dispatch
// rules call: no name is assembled by string concatenation outside these files, and
// parse(to_name(spec)) gives spec back. This file holds the parts every family shares.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace relax::runtime {

/// A convolution's window, per spatial dim (height before width). padding_before is top
/// (2-D), left; padding_after bottom (2-D), right; dilation is relax's (1: none).
struct ConvWindow {
  std::vector<int64_t> strides;
  std::vector<int64_t> padding_before;
  std::vector<int64_t> padding_after;
  std::vector<int64_t> dilation;
  int64_t groups = 1;

  /// relax's defaults for `spatial_dims` dims: strides 1, padding 0, dilation 1, groups 1.
  static ConvWindow identity(size_t spatial_dims);
  bool operator==(const ConvWindow&) const = default;
};

/// The attribute block of a name: "{strides=2,2;padding=1,1,1,1;dilation=1,1;groups=1}"
/// (every attribute, padding as every dim's before, then every dim's after).
std::string conv_window_text(const ConvWindow& window);

/// Reads the attributes between a name's braces ("strides=2,2;groups=4") into `window`,
/// which holds the defaults for its dims; `kind` names the function in messages ("conv2d").
/// An unknown, repeated or malformed attribute, a wrong count of values or one below its
/// minimum is InvalidArgument naming `name`.
absl::Status parse_conv_window(const std::string& name, std::string_view kind, std::string_view text,
                               ConvWindow& window);

/// InvalidArgument "library function name <name>: <what>".
absl::Status bad_library_name(const std::string& name, std::string_view what);

}  // namespace relax::runtime
