// The `weights` attribute (weight_params.h).
#include "transform/weights/weight_params.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace relax::transform::weights_detail {

absl::StatusOr<std::vector<Var>> weight_params(const std::string& name, const FunctionNode& fn) {
  auto it = fn.attrs.find(kWeightsAttr);
  if (it == fn.attrs.end()) return std::vector<Var>{};
  const auto* text = std::get_if<std::string>(&it->second);
  if (text == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("@", name, ": attribute `", kWeightsAttr,
                                                   "` must be a string of parameter names "
                                                   "(e.g. weights = \"w1, w2\")"));
  }
  absl::flat_hash_set<std::string> wanted;
  for (absl::string_view piece : absl::StrSplit(*text, ',')) {
    const absl::string_view w = absl::StripAsciiWhitespace(piece);
    if (w.empty()) continue;
    const bool found = std::any_of(fn.params.begin(), fn.params.end(),
                                   [&](const Var& p) { return p.name_hint() == w; });
    if (!found) {
      std::vector<std::string> names;
      for (const Var& p : fn.params) names.push_back(p.name_hint());
      return absl::InvalidArgumentError(absl::StrCat("@", name, ": attribute `", kWeightsAttr, "` names `", w,
                                                     "`, which is not a parameter (parameters: ",
                                                     absl::StrJoin(names, ", "), ")"));
    }
    wanted.insert(std::string(w));
  }
  std::vector<Var> out;
  for (const Var& p : fn.params) {
    if (wanted.contains(p.name_hint())) out.push_back(p);
  }
  return out;
}

std::string weights_attr_text(const std::vector<Var>& params) {
  return absl::StrJoin(params, ",", [](std::string* out, const Var& v) { out->append(v.name_hint()); });
}

std::string attrs_text(const Attrs& attrs) {
  return absl::StrJoin(attrs, " ", [](std::string* out, const auto& attr) {
    absl::StrAppend(out, attr.first, "=", attr_value_text(attr.second));
  });
}

}  // namespace relax::transform::weights_detail
