// relax-docs: writes the generated pages of docs/ (docs/operators.md, docs/passes.md) from their
// templates in tools/doc_templates/ and the operator and pass tables of this build
// (docs_pages.h).
//
//   relax-docs [--check] [SOURCE_DIR]     (SOURCE_DIR: the repository root, default ".")
//
// Without --check it rewrites the pages that changed and names them; with --check it writes
// nothing and exits 1 naming each page that is out of date. Errors (a missing template or
// source tree) exit 2.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "docs_pages.h"
#include "list_flags.h"

ABSL_FLAG(bool, check, false, "write nothing; exit 1 when a generated page differs from what the tree generates");

int main(int argc, char** argv) {
  relax::tools::set_usage("relax_docs.cc",
                          "relax-docs [--check] [SOURCE_DIR]: writes docs/operators.md and docs/passes.md from "
                          "tools/doc_templates/ and the operator and pass tables");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 2) {
    std::fprintf(stderr, "relax-docs: expected at most one SOURCE_DIR, got %zu arguments\n", args.size() - 1);
    return 2;
  }
  const std::filesystem::path source_dir = args.size() == 2 ? args[1] : ".";
  const bool check = absl::GetFlag(FLAGS_check);
  int stale = 0;
  for (const std::string& name : relax::tools::generated_page_names()) {
    absl::StatusOr<std::string> page = relax::tools::render_page(source_dir, name);
    if (!page.ok()) {
      std::fprintf(stderr, "relax-docs: %s\n", std::string(page.status().message()).c_str());
      return 2;
    }
    const std::filesystem::path path = relax::tools::page_path(source_dir, name);
    std::stringstream current;
    if (std::ifstream in(path); in) current << in.rdbuf();
    if (current.str() == *page) continue;
    ++stale;
    if (check) {
      std::printf("%s is out of date\n", path.string().c_str());
      continue;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << *page;
    if (!out) {
      std::fprintf(stderr, "relax-docs: cannot write %s\n", path.string().c_str());
      return 2;
    }
    std::printf("wrote %s\n", path.string().c_str());
  }
  return check && stale > 0 ? 1 : 0;
}
