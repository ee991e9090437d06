// ListFlags (list_flags.h).
#include "list_flags.h"

#include <string_view>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"

namespace relax::tools {
namespace {

// "--disable-pass" -> "disable_pass"; "" when `arg` is not a flag.
std::string flag_name(std::string_view arg, std::string_view& value, bool& has_value) {
  if (arg.size() < 3 || arg.substr(0, 2) != "--") return "";
  arg.remove_prefix(2);
  size_t eq = arg.find('=');
  has_value = eq != std::string_view::npos;
  if (has_value) value = arg.substr(eq + 1);
  std::string name(arg.substr(0, eq));
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

}  // namespace

ListFlags::ListFlags(int argc, char** argv, std::set<std::string> names, std::set<std::string> no_split) {
  for (int i = 0; i < argc; ++i) {
    std::string_view value;
    bool has_value = false;
    std::string name = i == 0 ? "" : flag_name(argv[i], value, has_value);
    if (name.empty() || !names.contains(name)) {
      if (name.empty()) {
        rest_.push_back(argv[i]);
      } else {
        // Abseil spells flags with underscores; the tools' documented spelling has dashes.
        storage_.push_back("--" + name + (has_value ? "=" + std::string(value) : ""));
        rest_.push_back(storage_.back().data());
      }
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        rest_.push_back(argv[i]);  // Abseil reports the missing value
        continue;
      }
      value = argv[++i];
    }
    std::vector<std::string>& out = values_[name];
    if (no_split.contains(name)) {
      out.emplace_back(value);
      continue;
    }
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      if (comma == std::string_view::npos) comma = value.size();
      if (comma > start) out.emplace_back(value.substr(start, comma - start));
      start = comma + 1;
    }
  }
  rest_.push_back(nullptr);
  rest_.pop_back();
}

void set_usage(const std::string& source_file, const std::string& usage) {
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [source_file](absl::string_view file) {
    return absl::EndsWith(file, source_file);
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  // --help names the file that defines each flag: its name only, never the build's path to
  // relax's source tree ("Flags from relax_opt.cc", not "../../tools/relax_opt.cc").
  config.normalize_filename = [](absl::string_view file) {
    const size_t slash = file.find_last_of('/');
    return std::string(slash == absl::string_view::npos ? file : file.substr(slash + 1));
  };
  absl::SetFlagsUsageConfig(config);
  absl::SetProgramUsageMessage(usage);
}

std::vector<std::string> ListFlags::values(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace relax::tools
