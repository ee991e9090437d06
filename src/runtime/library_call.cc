// What every library family's names share (relax/runtime/library_call.h).
#include "relax/runtime/library_call.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace relax::runtime {

ConvWindow ConvWindow::identity(size_t spatial_dims) {
  ConvWindow w;
  w.strides.assign(spatial_dims, 1);
  w.padding_before.assign(spatial_dims, 0);
  w.padding_after.assign(spatial_dims, 0);
  w.dilation.assign(spatial_dims, 1);
  return w;
}

std::string conv_window_text(const ConvWindow& w) {
  std::vector<int64_t> padding = w.padding_before;
  padding.insert(padding.end(), w.padding_after.begin(), w.padding_after.end());
  return absl::StrCat("{strides=", absl::StrJoin(w.strides, ","), ";padding=", absl::StrJoin(padding, ","),
                      ";dilation=", absl::StrJoin(w.dilation, ","), ";groups=", w.groups, "}");
}

absl::Status bad_library_name(const std::string& name, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("library function name ", name, ": ", std::string(what)));
}

absl::Status parse_conv_window(const std::string& name, std::string_view kind, std::string_view text,
                               ConvWindow& window) {
  const size_t n = window.strides.size();
  std::vector<std::string> seen;
  for (absl::string_view attr : absl::StrSplit(absl::string_view(text.data(), text.size()), ';')) {
    const size_t eq = attr.find('=');
    if (eq == absl::string_view::npos) {
      return bad_library_name(name, absl::StrCat("attribute `", attr, "` is not key=values"));
    }
    const std::string key(attr.substr(0, eq));
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return bad_library_name(name, absl::StrCat("attribute `", key, "` is given twice"));
    }
    seen.push_back(key);
    size_t count = 0;
    int64_t min = 1;
    if (key == "strides" || key == "dilation") {
      count = n;
    } else if (key == "padding") {
      count = 2 * n;
      min = 0;
    } else if (key == "groups") {
      count = 1;
    } else {
      return bad_library_name(
          name, absl::StrCat("unknown attribute `", key, "` (expected strides, padding, dilation or groups)"));
    }
    std::vector<int64_t> values;
    for (absl::string_view part : absl::StrSplit(attr.substr(eq + 1), ',')) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
      if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
        return bad_library_name(name, absl::StrCat("attribute `", key, "`: `", part, "` is not an integer"));
      }
      values.push_back(v);
    }
    if (values.size() != count) {
      return bad_library_name(name, absl::StrCat("attribute `", key, "` of ", std::string(kind), " takes ", count,
                                                 " values, got ", values.size()));
    }
    for (int64_t v : values) {
      if (v < min) {
        return bad_library_name(name, absl::StrCat("attribute `", key, "` values must be >= ", min, ", got ", v));
      }
    }
    if (key == "strides") {
      window.strides = values;
    } else if (key == "dilation") {
      window.dilation = values;
    } else if (key == "padding") {
      window.padding_before.assign(values.begin(), values.begin() + static_cast<ptrdiff_t>(n));
      window.padding_after.assign(values.begin() + static_cast<ptrdiff_t>(n), values.end());
    } else {
      window.groups = values[0];
    }
  }
  return absl::OkStatus();
}

}  // namespace relax::runtime
