// relax::runtime::cuda: the names of the cuda target's library functions, typed
// (relax/runtime/cuda_library.h lists them; relax/runtime/library_call.h the grammar):
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
// The dispatch rules build a LibrarySpec and write its name with to_name; the runtime reads
// it back with parse_library_name. Neither needs CUDA: they are in every runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "relax/runtime/library_call.h"

namespace relax::runtime::cuda {

enum class LibraryKind { kMatmul, kLinear, kBatchMatmul, kConv2d };
enum class Activation { kNone, kRelu, kGeluTanh };

/// A conv2d's window (height, then width): relax/runtime/library_call.h.
using Conv2dAttrs = ConvWindow;

/// A parsed name.
struct LibrarySpec {
  std::string name;  ///< the whole name, for messages
  LibraryKind kind = LibraryKind::kMatmul;
  Conv2dAttrs conv = ConvWindow::identity(2);  ///< conv2d only
  bool bias = false;
  Activation activation = Activation::kNone;

  bool is_cudnn() const { return kind == LibraryKind::kConv2d; }
  /// Inputs in call order: the two operands, then the bias.
  size_t num_inputs() const { return bias ? 3 : 2; }
};

/// "cublas.matmul", ...: the family and kind as the name starts.
const char* kind_name(LibraryKind kind);

/// The name of `spec` (its `name` field is not read): a conv2d's every attribute written out.
std::string to_name(const LibrarySpec& spec);

/// Parses `name`; InvalidArgument naming the name, the place and what was expected.
absl::StatusOr<LibrarySpec> parse_library_name(const std::string& name);

/// The label of input or output `index` of `spec` in messages: "argument 0 (a)", ...,
/// "argument 3 (output)", "argument 4 (workspace)".
std::string argument_label(const LibrarySpec& spec, size_t index);

}  // namespace relax::runtime::cuda
