// The generated pages of docs/: each a hand-written template under tools/doc_templates/ whose
// marker lines ({{operator-table}}, {{pass-table}}, {{default-pipeline}}) are replaced by what
// the libraries generate from their tables (op_table_markdown, pass_table_markdown, the default
// pipeline's text). The tool relax-docs writes them; a test fails when a committed page differs
// from what the source tree generates, so a new operator or pass shows up in the docs or the
// tests fail.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace relax::tools {

/// The generated pages, by name ("operators", "passes"): docs/<name>.md from
/// tools/doc_templates/<name>.md.in.
std::vector<std::string> generated_page_names();

/// Page `name` as the source tree at `source_dir` generates it. NotFound when the template is
/// missing; InvalidArgument for an unknown page or a template that lacks its marker line.
absl::StatusOr<std::string> render_page(const std::filesystem::path& source_dir, const std::string& name);

/// Where page `name` is committed: <source_dir>/docs/<name>.md.
std::filesystem::path page_path(const std::filesystem::path& source_dir, const std::string& name);

}  // namespace relax::tools
