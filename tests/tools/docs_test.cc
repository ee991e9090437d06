// The documentation against the source tree: the generated pages of docs/ are what the operator
// and pass tables generate now (relax-docs), every relative link of README.md and docs/ resolves
// inside the repository (files, and headings for #anchors), nothing points at the design notes
// outside the repository, and the README stays short.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "docs_pages.h"

namespace relax::tools {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = RELAX_SOURCE_DIR;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// README.md and every page of docs/.
std::vector<fs::path> doc_files() {
  std::vector<fs::path> out = {kRoot / "README.md"};
  for (const fs::directory_entry& e : fs::directory_iterator(kRoot / "docs")) {
    if (e.path().extension() == ".md") out.push_back(e.path());
  }
  return out;
}

// The lines of `text` outside ``` fences.
std::vector<std::string> prose_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("```") != std::string::npos && line.find_first_not_of(' ') == line.find("```")) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) out.push_back(line);
  }
  return out;
}

// The anchors of a page's headings as GitHub writes them: lower case, punctuation (and
// anything outside ASCII) dropped, spaces as hyphens; a repeated heading gets -1, -2, ...
std::set<std::string> anchors(const std::string& text) {
  std::set<std::string> out;
  for (const std::string& line : prose_lines(text)) {
    const size_t level = line.find_first_not_of('#');
    if (level == 0 || level == std::string::npos || level > 6 || line[level] != ' ') continue;
    std::string slug;
    for (char c : line.substr(level + 1)) {
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x80) continue;
      if (std::isalnum(u) || c == '-' || c == '_') slug += static_cast<char>(std::tolower(u));
      if (c == ' ') slug += '-';
    }
    while (!slug.empty() && slug.back() == '-') slug.pop_back();
    std::string unique = slug;
    for (int i = 1; out.count(unique) > 0; ++i) unique = slug + "-" + std::to_string(i);
    out.insert(unique);
  }
  return out;
}

TEST(Docs, GeneratedPagesAreCurrent) {
  for (const std::string& name : generated_page_names()) {
    absl::StatusOr<std::string> page = render_page(kRoot, name);
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_EQ(read(page_path(kRoot, name)), *page)
        << "docs/" << name << ".md is out of date: run `build/dev/tools/relax-docs .` from the repository root";
  }
}

TEST(Docs, RenderingNamesWhatIsMissing) {
  EXPECT_EQ(render_page(kRoot, "nothing").status().message(),
            "unknown generated page `nothing` (known: operators, passes)");
  const fs::path empty = fs::path(::testing::TempDir()) / "relax_docs_empty_tree";
  fs::remove_all(empty);
  fs::create_directories(empty / "tools" / "doc_templates");
  EXPECT_EQ(render_page(empty, "operators").status().code(), absl::StatusCode::kNotFound);
  std::ofstream(empty / "tools" / "doc_templates" / "operators.md.in") << "# Operators\n\nno table here\n";
  EXPECT_EQ(render_page(empty, "operators").status().message(),
            (empty / "tools" / "doc_templates" / "operators.md.in").string() + ": no marker {{operator-table}}");
}

TEST(Docs, EveryRelativeLinkResolvesInsideTheRepository) {
  const std::regex link(R"(\]\(([^)\s]+)\))");
  const fs::path root = fs::weakly_canonical(kRoot);
  int checked = 0;
  for (const fs::path& file : doc_files()) {
    const std::string text = read(file);
    for (const std::string& line : prose_lines(text)) {
      for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
        const std::string target = (*it)[1].str();
        if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 || target.rfind("mailto:", 0) == 0) {
          continue;
        }
        ++checked;
        const size_t hash = target.find('#');
        const std::string path_part = target.substr(0, hash);
        const std::string anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
        const fs::path resolved = path_part.empty() ? file : fs::weakly_canonical(file.parent_path() / path_part);
        const std::string where = fs::relative(file, root).string() + ": link " + target;
        if (resolved.string().rfind(root.string(), 0) != 0) {
          ADD_FAILURE() << where << " leaves the repository";
          continue;
        }
        if (!fs::exists(resolved)) {
          ADD_FAILURE() << where << ": no such file " << resolved.string();
          continue;
        }
        if (!anchor.empty() && resolved.extension() == ".md" && anchors(read(resolved)).count(anchor) == 0) {
          ADD_FAILURE() << where << ": no heading with the anchor #" << anchor;
        }
      }
    }
  }
  EXPECT_GT(checked, 20) << "the README and docs/ should link to each other";
}

TEST(Docs, NothingPointsOutsideTheRepositoryForTheDesign) {
  // The design lives in docs/architecture.md; the notes it came from are not part of the product.
  std::vector<fs::path> files = doc_files();
  for (const char* top : {"CMakeLists.txt", "dev.sh"}) files.push_back(kRoot / top);
  for (const char* dir : {"include", "src", "tools", "tests", "bench", "examples", "cmake"}) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(kRoot / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".h" || ext == ".cc" || ext == ".txt" || ext == ".cmake" || ext == ".md" ||
                                  ext == ".sh" || ext == ".in")) {
        files.push_back(e.path());
      }
    }
  }
  const std::string outside = std::string("../") + "shared";
  for (const fs::path& file : files) {
    EXPECT_EQ(read(file).find(outside), std::string::npos) << file.string() << " points at " << outside;
  }
}

TEST(Docs, PublicHeadersCiteNoSourceFile) {
  // A public header says what a type is for; where it is implemented is not its reader's
  // business and goes stale when the sources regroup.
  std::regex source_file(R"((^|[\s(`"])(src/|[A-Za-z_/]+\.cc\b))");
  int headers = 0;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(kRoot / "include")) {
    if (!e.is_regular_file() || e.path().extension() != ".h") continue;
    ++headers;
    std::istringstream lines(read(e.path()));
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
      EXPECT_FALSE(std::regex_search(line, source_file))
          << fs::relative(e.path(), kRoot).string() << ":" << n << " cites a source file: " << line;
    }
  }
  EXPECT_GT(headers, 50);
}

TEST(Docs, TheReadmeIsReadInFiveMinutes) {
  const std::string readme = read(kRoot / "README.md");
  const auto lines = static_cast<int64_t>(std::count(readme.begin(), readme.end(), '\n'));
  EXPECT_LE(lines, 250) << "README.md has " << lines << " lines: move the detail into docs/";
}

}  // namespace
}  // namespace relax::tools
