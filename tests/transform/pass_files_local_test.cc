// TEMPORARY: runs tests/transform/passes/<pass>/<case>.relax until the lead's
// pass_file_test.cc (main) replaces it. Same file format.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_registry.h"

namespace relax::transform {
namespace {
namespace fs = std::filesystem;

fs::path root() { return fs::path(__FILE__).parent_path() / "passes"; }

std::vector<std::string> files() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(root(), ec)) {
    if (e.is_regular_file() && e.path().extension() == ".relax") out.push_back(fs::relative(e.path(), root()).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class LocalPassFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LocalPassFileTest, Runs) {
  std::ifstream in(root() / GetParam());
  std::stringstream buf;
  buf << in.rdbuf();
  std::string passes, error, input, expected;
  std::vector<std::string> options;
  bool header = true, in_expected = false;
  for (absl::string_view line : absl::StrSplit(buf.str(), '\n')) {
    absl::string_view s = absl::StripAsciiWhitespace(line);
    if (header && absl::ConsumePrefix(&s, "//")) {
      s = absl::StripLeadingAsciiWhitespace(s);
      if (absl::ConsumePrefix(&s, "passes:")) passes = std::string(absl::StripAsciiWhitespace(s));
      else if (absl::ConsumePrefix(&s, "option:")) options.emplace_back(absl::StripAsciiWhitespace(s));
      else if (absl::ConsumePrefix(&s, "expect-error:")) error = std::string(absl::StripAsciiWhitespace(s));
      continue;
    }
    header = false;
    if (s == "// expected:") { in_expected = true; continue; }
    (in_expected ? expected : input) += std::string(line) + "\n";
  }
  absl::StatusOr<IRModule> mod = parse_module(input);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<PassManager> pm = parse_pipeline(passes);
  ASSERT_TRUE(pm.ok()) << pm.status();
  PassContext ctx;
  for (const std::string& o : options) {
    size_t eq = o.find('=');
    ASSERT_TRUE(ctx.set_option_text(o.substr(0, eq), o.substr(eq + 1)).ok());
  }
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = pm->run(*mod, ctx);
  if (!error.empty()) {
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(absl::StrContains(out.status().message(), error)) << out.status();
    return;
  }
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<IRModule> want = parse_module(expected);
  ASSERT_TRUE(want.ok()) << want.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*want, *out);
}

std::string name_of(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.size() - 6);
  for (char& c : n) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Passes, LocalPassFileTest, ::testing::ValuesIn(files()), name_of);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LocalPassFileTest);

}  // namespace
}  // namespace relax::transform
