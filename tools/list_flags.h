// Repeatable list flags for the tools: Abseil keeps only the last occurrence of
// a flag, but `--input=a --input=b` must mean both. ListFlags takes the named
// flags out of argv (as `--name=value` or `--name value`, with `-` or `_` in
// the name), splits their values at commas unless asked not to, and hands the
// rest of argv to absl::ParseCommandLine, with every other flag's dashes
// turned into the underscores Abseil expects (`--list-passes` is
// `--list_passes`).
#pragma once

#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace relax::tools {

/// Sets the program's usage message, and makes --help list the flags defined
/// in `source_file` (Abseil's default looks for a file named after the
/// program, which a dashed tool name never matches).
void set_usage(const std::string& source_file, const std::string& usage);

class ListFlags {
 public:
  /// `names` in the flag's declared spelling (underscores); those in
  /// `no_split` keep commas inside one value (e.g. "shape(3, 4)").
  ListFlags(int argc, char** argv, std::set<std::string> names, std::set<std::string> no_split = {});

  int argc() { return static_cast<int>(rest_.size()); }
  char** argv() { return rest_.data(); }
  /// Every value given for `name`, in order.
  std::vector<std::string> values(const std::string& name) const;

 private:
  std::deque<std::string> storage_;  ///< rewritten arguments (stable addresses)
  std::vector<char*> rest_;
  std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace relax::tools
