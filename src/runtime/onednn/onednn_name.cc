// Parsing of oneDNN library-function names (see onednn_name.h).
#ifdef RELAX_WITH_ONEDNN

#include "onednn_name.h"

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
                                {"conv2d", OpKind::kConv2d}};

struct PostEntry {
  absl::string_view text;
  PostKind post;
};
constexpr PostEntry kPosts[] = {
    {"bias", PostKind::kBias},          {"relu", PostKind::kRelu}, {"gelu_erf", PostKind::kGeluErf},
    {"gelu_tanh", PostKind::kGeluTanh}, {"silu", PostKind::kSilu}, {"sigmoid", PostKind::kSigmoid},
    {"tanh", PostKind::kTanh},          {"add", PostKind::kAdd}};

absl::Status bad_name(const std::string& name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("library function name ", name, ": ", what));
}

// One conv attribute: "key=v,v,..." into `spec.conv`.
absl::Status parse_attr(const std::string& name, absl::string_view text, OpSpec& spec,
                        std::vector<std::string>& seen) {
  const size_t eq = text.find('=');
  if (eq == absl::string_view::npos) {
    return bad_name(name, absl::StrCat("attribute `", text, "` is not key=values"));
  }
  const std::string key(text.substr(0, eq));
  if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
    return bad_name(name, absl::StrCat("attribute `", key, "` is given twice"));
  }
  seen.push_back(key);
  std::vector<int64_t> values;
  for (absl::string_view part : absl::StrSplit(text.substr(eq + 1), ',')) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      return bad_name(name, absl::StrCat("attribute `", key, "`: `", part, "` is not an integer"));
    }
    values.push_back(v);
  }
  const size_t n = static_cast<size_t>(spec.spatial_dims());
  auto expect_count = [&](size_t count) -> absl::Status {
    if (values.size() == count) return absl::OkStatus();
    return bad_name(name, absl::StrCat("attribute `", key, "` of ", kind_name(spec.kind), " takes ",
                                       count, " values, got ", values.size()));
  };
  auto expect_min = [&](int64_t min) -> absl::Status {
    for (int64_t v : values) {
      if (v < min) {
        return bad_name(name,
                        absl::StrCat("attribute `", key, "` values must be >= ", min, ", got ", v));
      }
    }
    return absl::OkStatus();
  };
  absl::Status s;
  if (key == "strides" || key == "dilation") {
    if (s = expect_count(n); !s.ok()) return s;
    if (s = expect_min(1); !s.ok()) return s;
    (key == "strides" ? spec.conv.strides : spec.conv.dilation) = values;
  } else if (key == "padding") {
    if (s = expect_count(2 * n); !s.ok()) return s;
    if (s = expect_min(0); !s.ok()) return s;
    spec.conv.padding_before.assign(values.begin(), values.begin() + static_cast<ptrdiff_t>(n));
    spec.conv.padding_after.assign(values.begin() + static_cast<ptrdiff_t>(n), values.end());
  } else if (key == "groups") {
    if (s = expect_count(1); !s.ok()) return s;
    if (s = expect_min(1); !s.ok()) return s;
    spec.conv.groups = values[0];
  } else {
    return bad_name(name, absl::StrCat("unknown attribute `", key,
                                       "` (expected strides, padding, dilation or groups)"));
  }
  return absl::OkStatus();
}

}  // namespace

const char* kind_name(OpKind kind) {
  for (const KindEntry& e : kKinds) {
    if (e.kind == kind) return e.text.data();
  }
  return "?";
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
                                       "` (expected matmul, linear, conv1d or conv2d)"));
  }
  rest.remove_prefix(kind_end);
  if (spec.is_conv()) {
    const size_t n = static_cast<size_t>(spec.spatial_dims());
    spec.conv.strides.assign(n, 1);
    spec.conv.padding_before.assign(n, 0);
    spec.conv.padding_after.assign(n, 0);
    spec.conv.dilation.assign(n, 1);
  }

  // {attrs}
  if (!rest.empty() && rest.front() == '{') {
    const size_t close = rest.find('}');
    if (close == absl::string_view::npos) return bad_name(name, "`{` without a closing `}`");
    if (!spec.is_conv()) {
      return bad_name(name, absl::StrCat("attributes are for conv1d and conv2d only, not ",
                                         kind_name(spec.kind)));
    }
    std::vector<std::string> seen;
    for (absl::string_view attr : absl::StrSplit(rest.substr(1, close - 1), ';')) {
      if (absl::Status s = parse_attr(name, attr, spec, seen); !s.ok()) return s;
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

  // :packed
  if (rest == ":packed") {
    spec.packed = true;
    rest = {};
  }
  if (!rest.empty()) {
    return bad_name(name, absl::StrCat("unexpected `", rest, "` (expected `+post` or `:packed`)"));
  }
  return spec;
}

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
