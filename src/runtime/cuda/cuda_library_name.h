// The names of the cuda target's library functions (the contract with the dispatch pass,
// src/transform/dispatch/cuda_rules.cc; relax/runtime/cuda_library.h lists them):
//
//   name   := family "." kind [ "{" attr { ";" attr } "}" ] { "+" post }
//   family := cublas | cudnn
//   kind   := matmul | linear | batch_matmul      (cublas)
//           | conv2d                              (cudnn)
//   attr   := key "=" int { "," int }             (conv2d only: strides, padding, dilation, groups)
//   post   := bias | relu | gelu_tanh             (bias first; at most one activation;
//                                                  gelu_tanh for cublas only; none for batch_matmul)
//
// A conv attribute left out takes relax's default (strides 1, padding 0, dilation 1, groups
// 1); one given has two values (height, width), padding four (top, left, bottom, right).
// Parsing needs no CUDA: it is compiled into every runtime.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace relax::runtime::cuda {

enum class LibraryKind { kMatmul, kLinear, kBatchMatmul, kConv2d };
enum class Activation { kNone, kRelu, kGeluTanh };

/// A conv2d's window (height, then width).
struct Conv2dAttrs {
  std::array<int64_t, 2> strides = {1, 1};
  std::array<int64_t, 2> padding_before = {0, 0};  ///< top, left
  std::array<int64_t, 2> padding_after = {0, 0};   ///< bottom, right
  std::array<int64_t, 2> dilation = {1, 1};
  int64_t groups = 1;
};

/// A parsed name.
struct LibrarySpec {
  std::string name;  ///< the whole name, for messages
  LibraryKind kind = LibraryKind::kMatmul;
  Conv2dAttrs conv;  ///< conv2d only
  bool bias = false;
  Activation activation = Activation::kNone;

  bool is_cudnn() const { return kind == LibraryKind::kConv2d; }
  /// Inputs in call order: the two operands, then the bias.
  size_t num_inputs() const { return bias ? 3 : 2; }
};

/// "cublas.matmul", ...: the family and kind as the name starts.
const char* kind_name(LibraryKind kind);

/// Parses `name`; InvalidArgument naming the name, the place and what was expected.
absl::StatusOr<LibrarySpec> parse_library_name(const std::string& name);

/// The label of input or output `index` of `spec` in messages: "argument 0 (a)", ...,
/// "argument 3 (output)", "argument 4 (workspace)".
std::string argument_label(const LibrarySpec& spec, size_t index);

}  // namespace relax::runtime::cuda
