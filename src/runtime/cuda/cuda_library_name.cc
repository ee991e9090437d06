// Parsing of the cuda target's library-function names (cuda_library_name.h) and
// library_workspace_bytes (relax/runtime/cuda_library.h). Needs no CUDA.
#include "cuda_library_name.h"

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
  return absl::InvalidArgumentError(absl::StrCat("library function name ", name, ": ", what));
}

// "v,v,..." as integers of at least `min`, exactly `count` of them.
absl::StatusOr<std::vector<int64_t>> parse_values(const std::string& name, const std::string& key,
                                                  absl::string_view text, size_t count, int64_t min) {
  std::vector<int64_t> values;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      return bad_name(name, absl::StrCat("attribute `", key, "`: `", part, "` is not an integer"));
    }
    if (v < min) return bad_name(name, absl::StrCat("attribute `", key, "` values must be >= ", min, ", got ", v));
    values.push_back(v);
  }
  if (values.size() != count) {
    return bad_name(name, absl::StrCat("attribute `", key, "` of conv2d takes ", count, " values, got ", values.size()));
  }
  return values;
}

absl::Status parse_attrs(const std::string& name, absl::string_view text, Conv2dAttrs& conv) {
  std::vector<std::string> seen;
  for (absl::string_view attr : absl::StrSplit(text, ';')) {
    const size_t eq = attr.find('=');
    if (eq == absl::string_view::npos) return bad_name(name, absl::StrCat("attribute `", attr, "` is not key=values"));
    const std::string key(attr.substr(0, eq));
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return bad_name(name, absl::StrCat("attribute `", key, "` is given twice"));
    }
    seen.push_back(key);
    const absl::string_view values_text = attr.substr(eq + 1);
    absl::StatusOr<std::vector<int64_t>> v;
    if (key == "strides" || key == "dilation") {
      v = parse_values(name, key, values_text, 2, 1);
      if (v.ok()) (key == "strides" ? conv.strides : conv.dilation) = {(*v)[0], (*v)[1]};
    } else if (key == "padding") {
      v = parse_values(name, key, values_text, 4, 0);
      if (v.ok()) {
        conv.padding_before = {(*v)[0], (*v)[1]};
        conv.padding_after = {(*v)[2], (*v)[3]};
      }
    } else if (key == "groups") {
      v = parse_values(name, key, values_text, 1, 1);
      if (v.ok()) conv.groups = (*v)[0];
    } else {
      return bad_name(name, absl::StrCat("unknown attribute `", key, "` (expected strides, padding, dilation or groups)"));
    }
    if (!v.ok()) return v.status();
  }
  return absl::OkStatus();
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
    if (absl::Status s = parse_attrs(name, rest.substr(1, close - 1), spec.conv); !s.ok()) return s;
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
