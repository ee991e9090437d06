// The cuda target's library-function names, read and written (relax/runtime/cuda_library_call.h), and
// library_workspace_bytes (relax/runtime/cuda_library.h). Needs no CUDA.
#include "relax/runtime/cuda_library_call.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "relax/runtime/cuda_library.h"

namespace relax::runtime::cuda {
namespace {

constexpr int64_t kWorkspaceBytes = int64_t{32} << 20;

struct KindEntry {
  absl::string_view text;
  LibraryKind kind;
};
constexpr KindEntry kKinds[] = {{"cublas.matmul", LibraryKind::kMatmul},
                                {"cublas.linear", LibraryKind::kLinear},
                                {"cublas.batch_matmul", LibraryKind::kBatchMatmul},
                                {"cudnn.conv2d", LibraryKind::kConv2d}};

absl::Status bad_name(const std::string& name, absl::string_view what) {
  return bad_library_name(name, std::string(what));
}

}  // namespace

const char* kind_name(LibraryKind kind) {
  for (const KindEntry& e : kKinds) {
    if (e.kind == kind) return e.text.data();
  }
  return "?";
}

absl::StatusOr<LibrarySpec> parse_library_name(const std::string& name) {
  LibrarySpec spec;
  spec.name = name;
  absl::string_view rest(name);
  const size_t kind_end = std::min(rest.find_first_of("{+:"), rest.size());
  const absl::string_view kind = rest.substr(0, kind_end);
  const KindEntry* found = nullptr;
  for (const KindEntry& e : kKinds) {
    if (e.text == kind) found = &e;
  }
  if (found == nullptr) {
    return bad_name(name, absl::StrCat("unknown function `", kind,
                                       "` (expected cublas.matmul, cublas.linear, cublas.batch_matmul or "
                                       "cudnn.conv2d)"));
  }
  spec.kind = found->kind;
  rest.remove_prefix(kind_end);

  if (!rest.empty() && rest.front() == '{') {
    const size_t close = rest.find('}');
    if (close == absl::string_view::npos) return bad_name(name, "`{` without a closing `}`");
    if (spec.kind != LibraryKind::kConv2d) {
      return bad_name(name, absl::StrCat("attributes are for cudnn.conv2d only, not ", kind_name(spec.kind)));
    }
    const absl::string_view attrs = rest.substr(1, close - 1);
    if (absl::Status s = parse_conv_window(name, "conv2d", std::string_view(attrs.data(), attrs.size()), spec.conv);
        !s.ok()) {
      return s;
    }
    rest.remove_prefix(close + 1);
  }

  while (!rest.empty() && rest.front() == '+') {
    rest.remove_prefix(1);
    const size_t end = std::min(rest.find_first_of("+{}"), rest.size());
    const absl::string_view post = rest.substr(0, end);
    if (spec.kind == LibraryKind::kBatchMatmul) {
      return bad_name(name, absl::StrCat("cublas.batch_matmul takes no post-ops, got `", post, "`"));
    }
    if (post == "bias") {
      if (spec.bias || spec.activation != Activation::kNone) return bad_name(name, "`bias` may only be the first post-op");
      spec.bias = true;
    } else if (post == "relu" || (post == "gelu_tanh" && !spec.is_cudnn())) {
      if (spec.activation != Activation::kNone) return bad_name(name, "at most one activation");
      spec.activation = post == "relu" ? Activation::kRelu : Activation::kGeluTanh;
    } else {
      return bad_name(name, absl::StrCat("unknown post-op `", post, "` (expected bias, relu",
                                         spec.is_cudnn() ? "" : " or gelu_tanh", ")"));
    }
    rest.remove_prefix(end);
  }
  if (!rest.empty()) return bad_name(name, absl::StrCat("unexpected `", rest, "` (expected `+post`)"));
  return spec;
}

std::string to_name(const LibrarySpec& spec) {
  std::string name = kind_name(spec.kind);
  if (spec.is_cudnn()) name += conv_window_text(spec.conv);
  if (spec.bias) name += "+bias";
  if (spec.activation == Activation::kRelu) name += "+relu";
  if (spec.activation == Activation::kGeluTanh) name += "+gelu_tanh";
  return name;
}

std::string argument_label(const LibrarySpec& spec, size_t index) {
  static constexpr const char* kMatmulNames[] = {"a", "b"};
  static constexpr const char* kLinearNames[] = {"x", "weight"};
  static constexpr const char* kConvNames[] = {"data", "weight"};
  const char* what = "?";
  if (index < 2) {
    what = spec.kind == LibraryKind::kLinear ? kLinearNames[index]
           : spec.is_cudnn()                ? kConvNames[index]
                                            : kMatmulNames[index];
  } else if (index < spec.num_inputs()) {
    what = "bias";
  } else if (index == spec.num_inputs()) {
    what = "output";
  } else if (index == spec.num_inputs() + 1) {
    what = "workspace";
  }
  return absl::StrCat("argument ", index, " (", what, ")");
}

absl::StatusOr<int64_t> library_workspace_bytes(const std::string& name) {
  absl::StatusOr<LibrarySpec> spec = parse_library_name(name);
  if (!spec.ok()) return spec.status();
  return kWorkspaceBytes;
}

}  // namespace relax::runtime::cuda
