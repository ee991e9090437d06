// oneDNN library-function names, read and written (relax/runtime/onednn_call.h). Needs no oneDNN.
#include "relax/runtime/onednn_call.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace relax::runtime::onednn {
namespace {

struct KindEntry {
  absl::string_view text;
  OpKind kind;
};
constexpr KindEntry kKinds[] = {{"matmul", OpKind::kMatmul},
                                {"linear", OpKind::kLinear},
                                {"conv1d", OpKind::kConv1d},
                                {"conv2d", OpKind::kConv2d},
                                {"conv2d_transpose", OpKind::kConv2dTranspose}};

struct PostEntry {
  absl::string_view text;
  PostKind post;
};
constexpr PostEntry kPosts[] = {
    {"bias", PostKind::kBias},          {"relu", PostKind::kRelu}, {"gelu_erf", PostKind::kGeluErf},
    {"gelu_tanh", PostKind::kGeluTanh}, {"silu", PostKind::kSilu}, {"sigmoid", PostKind::kSigmoid},
    {"tanh", PostKind::kTanh},          {"add", PostKind::kAdd}};

absl::Status bad_name(const std::string& name, absl::string_view what) {
  return bad_library_name(name, std::string(what));
}

}  // namespace

const char* kind_name(OpKind kind) {
  for (const KindEntry& e : kKinds) {
    if (e.kind == kind) return e.text.data();
  }
  return "?";
}

std::optional<PostKind> post_from_name(std::string_view text) {
  for (const PostEntry& e : kPosts) {
    if (e.text == absl::string_view(text.data(), text.size())) return e.post;
  }
  return std::nullopt;
}

OpSpec& OpSpec::then(PostKind post) {
  if (post == PostKind::kBias) {
    bias = true;
    return *this;
  }
  posts.push_back(post);
  if (post == PostKind::kAdd) ++num_adds;
  return *this;
}

std::string to_name(const OpSpec& spec) {
  std::string name = absl::StrCat(kFamilyPrefix, kind_name(spec.kind));
  if (spec.is_conv()) name += conv_window_text(spec.conv);
  if (spec.bias) absl::StrAppend(&name, "+", post_name(PostKind::kBias));
  for (PostKind post : spec.posts) absl::StrAppend(&name, "+", post_name(post));
  if (spec.packed) name += ":packed";
  if (spec.nhwc_in) name += ":nhwc_in";
  if (spec.nhwc_out) name += ":nhwc_out";
  return name;
}

const char* post_name(PostKind post) {
  for (const PostEntry& e : kPosts) {
    if (e.post == post) return e.text.data();
  }
  return "?";
}

absl::StatusOr<OpSpec> parse_name(const std::string& name) {
  if (!absl::StartsWith(name, kFamilyPrefix)) {
    return bad_name(name, absl::StrCat("does not start with ", kFamilyPrefix));
  }
  OpSpec spec;
  spec.name = name;
  absl::string_view rest = absl::string_view(name).substr(sizeof(kFamilyPrefix) - 1);

  // kind
  const size_t kind_end = std::min(rest.find_first_of("{+:"), rest.size());
  const absl::string_view kind = rest.substr(0, kind_end);
  bool known = false;
  for (const KindEntry& e : kKinds) {
    if (e.text == kind) {
      spec.kind = e.kind;
      known = true;
    }
  }
  if (!known) {
    return bad_name(name, absl::StrCat("unknown kind `", kind,
                                       "` (expected matmul, linear, conv1d, conv2d or conv2d_transpose)"));
  }
  rest.remove_prefix(kind_end);
  if (spec.is_conv()) spec.conv = ConvWindow::identity(static_cast<size_t>(spec.spatial_dims()));

  // {attrs}
  if (!rest.empty() && rest.front() == '{') {
    const size_t close = rest.find('}');
    if (close == absl::string_view::npos) return bad_name(name, "`{` without a closing `}`");
    if (!spec.is_conv()) {
      return bad_name(name, absl::StrCat("attributes are for the convolutions only, not ",
                                         kind_name(spec.kind)));
    }
    const absl::string_view attrs = rest.substr(1, close - 1);
    if (absl::Status s = parse_conv_window(name, kind_name(spec.kind), std::string_view(attrs.data(), attrs.size()),
                                           spec.conv);
        !s.ok()) {
      return s;
    }
    rest.remove_prefix(close + 1);
  }

  // +posts
  while (!rest.empty() && rest.front() == '+') {
    rest.remove_prefix(1);
    const size_t end = std::min(rest.find_first_of("+:{}"), rest.size());
    const absl::string_view post = rest.substr(0, end);
    const PostEntry* found = nullptr;
    for (const PostEntry& e : kPosts) {
      if (e.text == post) found = &e;
    }
    if (found == nullptr) {
      std::vector<absl::string_view> names;
      for (const PostEntry& e : kPosts) names.push_back(e.text);
      return bad_name(name, absl::StrCat("unknown post-op `", post, "` (expected one of ",
                                         absl::StrJoin(names, ", "), ")"));
    }
    if (found->post == PostKind::kBias) {
      if (spec.bias || !spec.posts.empty()) {
        return bad_name(name, "`bias` may only be the first post-op");
      }
      spec.bias = true;
    } else {
      spec.posts.push_back(found->post);
      if (found->post == PostKind::kAdd) ++spec.num_adds;
    }
    rest.remove_prefix(end);
  }

  // :packed, :nhwc_in, :nhwc_out, in that order
  for (const auto& [suffix, flag] : {std::pair<absl::string_view, bool*>{":packed", &spec.packed},
                                     {":nhwc_in", &spec.nhwc_in},
                                     {":nhwc_out", &spec.nhwc_out}}) {
    if (absl::StartsWith(rest, suffix) && (rest.size() == suffix.size() || rest[suffix.size()] == ':')) {
      *flag = true;
      rest.remove_prefix(suffix.size());
    }
  }
  if (!rest.empty()) {
    return bad_name(name, absl::StrCat("unexpected `", rest,
                                       "` (expected `+post`, `:packed`, `:nhwc_in` or `:nhwc_out`)"));
  }
  if ((spec.nhwc_in || spec.nhwc_out) && spec.kind != OpKind::kConv1d && spec.kind != OpKind::kConv2d) {
    return bad_name(name, absl::StrCat("NHWC layouts are for conv1d and conv2d only, not ", kind_name(spec.kind)));
  }
  return spec;
}

}  // namespace relax::runtime::onednn

