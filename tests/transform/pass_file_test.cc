// The pass-file tests: every tests/transform/passes/<pass>/<case>.relax is one
// test, so that a new pass test is a new file, not new C++.
//
// A file holds header lines, an input module and (unless an error is
// expected) the expected module:
//
//   // passes: canonicalize-bindings,dce          the pipeline (pass_registry.h)
//   // option: fold-constant.max-elements=4       zero or more pass options; `%S` in
//                                                one stands for the file's folder
//   // expect-error: not well formed              instead of an expected module
//   module { ... }                                the input
//   // expected:
//   module { ... }                                the expected result
//
// The pipeline runs through relax-opt's library entry point (transform/opt.h)
// with the well-formedness and annotation check after every pass; the result
// is compared structurally, and a mismatch prints both modules and the first
// difference.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/testing.h"
#include "relax/transform/opt.h"
#include "relax/transform/pass_registry.h"

namespace relax::transform {
namespace {

namespace fs = std::filesystem;

fs::path pass_file_root() { return fs::path(RELAX_SOURCE_DIR) / "tests" / "transform" / "passes"; }

// Every pass file, as a path relative to the root ("dce/unused_call.relax").
std::vector<std::string> pass_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(pass_file_root(), ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".relax") {
      files.push_back(fs::relative(entry.path(), pass_file_root()).string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct PassFile {
  std::string passes;
  std::vector<std::string> options;
  std::string expect_error;
  std::string input;
  std::string expected;
  bool has_expected = false;
};

absl::StatusOr<PassFile> read_pass_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot open " + path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  PassFile file;
  bool in_expected = false;
  bool in_header = true;
  for (absl::string_view line : absl::StrSplit(buffer.str(), '\n')) {
    absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (in_header && absl::ConsumePrefix(&stripped, "//")) {
      stripped = absl::StripLeadingAsciiWhitespace(stripped);
      if (absl::ConsumePrefix(&stripped, "passes:")) {
        file.passes = std::string(absl::StripAsciiWhitespace(stripped));
      } else if (absl::ConsumePrefix(&stripped, "option:")) {
        file.options.emplace_back(absl::StripAsciiWhitespace(stripped));
      } else if (absl::ConsumePrefix(&stripped, "expect-error:")) {
        file.expect_error = std::string(absl::StripAsciiWhitespace(stripped));
      }
      continue;  // other comment lines describe the case
    }
    in_header = false;
    if (stripped == "// expected:") {
      in_expected = true;
      file.has_expected = true;
      continue;
    }
    std::string& target = in_expected ? file.expected : file.input;
    target.append(line.data(), line.size());
    target.push_back('\n');
  }
  if (file.passes.empty()) return absl::InvalidArgumentError(path.string() + ": no `// passes:` line");
  if (file.has_expected == !file.expect_error.empty()) {
    return absl::InvalidArgumentError(path.string() +
                                      ": needs either `// expected:` and a module or `// expect-error:`");
  }
  return file;
}

class PassFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PassFileTest, GivesTheExpectedModule) {
  const fs::path path = pass_file_root() / GetParam();
  absl::StatusOr<PassFile> file = read_pass_file(path);
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<IRModule> input = read_module(file->input, GetParam());
  ASSERT_TRUE(input.ok()) << "the input: " << input.status();
  OptOptions options;
  options.passes = file->passes;
  for (const std::string& option : file->options) {
    options.pass_options.push_back(absl::StrReplaceAll(option, {{"%S", path.parent_path().string()}}));
  }
  options.verify_each = true;
  std::ostringstream log;
  absl::StatusOr<IRModule> out = run_opt(*input, options, log);
  if (!file->expect_error.empty()) {
    ASSERT_FALSE(out.ok()) << "expected an error containing `" << file->expect_error << "`, got\n"
                           << to_text(*out);
    EXPECT_TRUE(absl::StrContains(out.status().message(), file->expect_error))
        << "expected an error containing `" << file->expect_error << "`, got: " << out.status().message();
    return;
  }
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<IRModule> expected = read_module(file->expected, GetParam() + " (expected)");
  ASSERT_TRUE(expected.ok()) << "the expected module: " << expected.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*out, *expected);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  if (absl::EndsWith(name, ".relax")) name.resize(name.size() - 6);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Passes, PassFileTest, ::testing::ValuesIn(pass_files()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PassFileTest);

TEST(PassFileFormat, EveryBuiltInPassHasPassFiles) {
  // A pass without before/after files is untested as a pipeline step.
  // The built-in table, not list_passes(): tests beside this one register passes of their own.
  for (const PassFactory& factory : builtin_pass_factories()) {
    const PassPtr pass = factory();
    const PassInfo& info = pass->info();
    const fs::path folder = pass_file_root() / info.name;
    int files = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) files += entry.path().extension() == ".relax";
    EXPECT_GE(files, 2) << "pass " << info.name << " has fewer than two test files in " << folder;
  }
}

}  // namespace
}  // namespace relax::transform
