// Target::parse and Target::to_string.
#include "relax/support/target.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

namespace relax {
namespace {

using ::testing::HasSubstr;

Target parsed(const std::string& text) {
  absl::StatusOr<Target> t = Target::parse(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status();
  return t.ok() ? *t : Target();
}

TEST(Target, Defaults) {
  const Target t = parsed("cpu");
  EXPECT_EQ(t.kind, "cpu");
  EXPECT_EQ(t.opt_level, "-O3");
  EXPECT_EQ(t.isa_flags, std::vector<std::string>{"-march=native"});
  EXPECT_EQ(t.threads, 0);
  EXPECT_TRUE(t.runtime_checks);
  EXPECT_EQ(t.to_string(), "cpu");
}

TEST(Target, LlvmIsASynonymOfCpu) { EXPECT_EQ(parsed("llvm").kind, "cpu"); }

TEST(Target, Options) {
  const Target t = parsed("cpu -mavx2 -threads=1 -O2");
  EXPECT_EQ(t.isa_flags, std::vector<std::string>{"-mavx2"});
  EXPECT_EQ(t.threads, 1);
  EXPECT_EQ(t.opt_level, "-O2");
  const Target u = parsed("  cpu   -march=x86-64-v3\t-mfma -no-runtime-checks  ");
  EXPECT_EQ(u.isa_flags, (std::vector<std::string>{"-march=x86-64-v3", "-mfma"}));
  EXPECT_FALSE(u.runtime_checks);
  EXPECT_EQ(parsed("cpu -no-isa-flags").isa_flags, std::vector<std::string>{});
  EXPECT_EQ(parsed("cpu -threads=16").threads, 16);
  EXPECT_EQ(parsed("cpu -parallel-min-work=123").parallel_min_work, 123);
  EXPECT_EQ(parsed("cpu -libs=onednn").libraries, std::vector<std::string>{"onednn"});
  EXPECT_EQ(parsed("cpu -libs=onednn,mylib").libraries, (std::vector<std::string>{"onednn", "mylib"}));
  EXPECT_EQ(parsed("cpu -libs=none").libraries, std::vector<std::string>{});
  EXPECT_FALSE(parsed("cpu").exact_float);
  EXPECT_TRUE(parsed("cpu -exact-float").exact_float);
}

// The default libraries are the runtime's (oneDNN when it is built in, else none;
// the definition that says so is private to the runtime library).
TEST(Target, DefaultLibrariesAreTheRuntimes) {
  const std::vector<std::string> defaults = Target::default_libraries();
  EXPECT_TRUE(defaults.empty() || defaults == std::vector<std::string>{"onednn"});
  EXPECT_EQ(Target().libraries, defaults);
  EXPECT_EQ(parsed("cpu").libraries, defaults);
}

TEST(Target, RoundTrip) {
  for (const char* text : {"cpu", "cpu -O2", "cpu -threads=4", "cpu -no-runtime-checks", "cpu -no-isa-flags",
                           "cpu -parallel-min-work=0", "cpu -threads=8 -parallel-min-work=100000", "cpu -exact-float",
                           "cpu -O1 -threads=2 -no-runtime-checks -mavx2 -mfma"}) {
    EXPECT_EQ(parsed(text).to_string(), text);
  }
  // Libraries other than the build's default are written out, none as `none`.
  for (const std::vector<std::string>& libraries :
       {std::vector<std::string>{}, std::vector<std::string>{"onednn"}, std::vector<std::string>{"onednn", "mylib"}}) {
    Target with_libraries;
    with_libraries.libraries = libraries;
    EXPECT_EQ(parsed(with_libraries.to_string()).libraries, libraries) << with_libraries.to_string();
  }
  Target none;
  none.libraries = {};
  if (!Target::default_libraries().empty()) {
    EXPECT_EQ(none.to_string(), "cpu -libs=none");
  }
  Target mine;
  mine.libraries = {"mylib"};
  EXPECT_EQ(mine.to_string(), "cpu -libs=mylib");
  Target t;
  t.kind = "llvm";
  t.isa_flags = {"-mavx512f"};
  t.threads = 3;
  const Target back = parsed(t.to_string());
  EXPECT_EQ(back.kind, "cpu");
  EXPECT_EQ(back.isa_flags, t.isa_flags);
  EXPECT_EQ(back.threads, 3);
}

TEST(Target, IsaLevelsRoundTrip) {
  EXPECT_EQ(parsed("cpu").isa_level(), "native");
  EXPECT_EQ(parsed("cpu -no-isa-flags").isa_level(), "");
  EXPECT_EQ(parsed("cpu -mavx2").isa_level(), "");
  for (const char* level : {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "native"}) {
    const Target t = parsed(std::string("cpu -threads=2 -march=") + level);
    EXPECT_EQ(t.isa_level(), level);
    const Target back = parsed(t.to_string());
    EXPECT_EQ(back.isa_level(), level) << t.to_string();
    EXPECT_EQ(back.isa_flags, t.isa_flags);
    EXPECT_EQ(back.threads, 2);
  }
  // The last -march wins, as it does for the compiler.
  EXPECT_EQ(parsed("cpu -march=x86-64-v4 -mno-avx512f -march=x86-64-v2").isa_level(), "x86-64-v2");
}

TEST(Target, Errors) {
  auto error = [](const std::string& text) {
    absl::StatusOr<Target> t = Target::parse(text);
    EXPECT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(t.status().message());
  };
  EXPECT_THAT(error(""), HasSubstr("empty target"));
  EXPECT_THAT(error("rocm"), HasSubstr("unknown target kind \"rocm\""));
  EXPECT_THAT(error("rocm"), HasSubstr("(known: cpu, llvm, cuda)"));
  EXPECT_THAT(error("cpu -threads=x"), HasSubstr("the thread count must be an integer >= 0"));
  EXPECT_THAT(error("cpu -threads=-2"), HasSubstr("-threads=-2"));
  EXPECT_THAT(error("cpu avx2"), HasSubstr("\"avx2\""));
  EXPECT_THAT(error("cpu -parallel-min-work=-1"),
              HasSubstr("\"-parallel-min-work=-1\": the parallel work threshold must be an integer >= 0"));
  EXPECT_THAT(error("cpu -no-isa-flags -mavx2"), HasSubstr("both -no-isa-flags and ISA flags"));
  EXPECT_THAT(error("cpu -libs="), HasSubstr("\"-libs=\": expected library names separated by commas"));
  EXPECT_THAT(error("cpu -libs=onednn,,x"), HasSubstr("\"-libs=onednn,,x\""));
  EXPECT_THAT(error("cpu -libs=onednn,none"), HasSubstr("-libs=none"));
}

TEST(Target, CpuNamesAreCheckedWhenParsed) {
#if defined(__x86_64__)
  auto error = [](const std::string& text) {
    absl::StatusOr<Target> t = Target::parse(text);
    EXPECT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
    return std::string(t.status().message());
  };
  // A typo is refused at parse time, naming the flag and listing the valid names.
  const std::string typo = error("cpu -O2 -march=skylake-avx51");
  EXPECT_THAT(typo, HasSubstr("target option \"-march=skylake-avx51\" in \"cpu -O2 -march=skylake-avx51\": "
                              "unknown x86-64 CPU \"skylake-avx51\" for -march= (valid: native, x86-64, "));
  EXPECT_THAT(typo, HasSubstr(" skylake-avx512,"));
  EXPECT_THAT(error("cpu -mtune=zen9"), HasSubstr("(valid: native, generic, intel, x86-64,"));
  EXPECT_THAT(error("cpu -march="), HasSubstr("expected a CPU name after -march= (e.g. -march=native)"));
  EXPECT_THAT(error("cpu -mcpu=haswell"), HasSubstr("-mcpu= is not an x86-64 option"));
  // Known names, "native" and the tuning-only names pass, as do other flags.
  for (const char* ok : {"cpu -march=haswell -mtune=generic", "cpu -march=znver3 -mtune=intel",
                         "cpu -march=native -mtune=native", "cpu -march=x86-64-v3 -mavx2 -mno-fma"}) {
    EXPECT_TRUE(Target::parse(ok).ok()) << ok << ": " << Target::parse(ok).status();
  }
  // Every CPU the host's GCC lists for -march= is known (the table must grow with the compiler).
  FILE* pipe = ::popen("g++ -march=relax-no-such-cpu -E -x c /dev/null 2>&1", "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  ::pclose(pipe);
  const size_t at = output.find("switch are: ");
  if (at == std::string::npos) GTEST_SKIP() << "no GCC option list to compare with: " << output;
  const std::string names = output.substr(at + 12, output.find('\n', at) - at - 12);
  for (absl::string_view name : absl::StrSplit(names, ' ', absl::SkipEmpty())) {
    EXPECT_TRUE(Target::parse("cpu -march=" + std::string(name)).ok()) << name;
  }
#else
  GTEST_SKIP() << "CPU names are checked on x86-64 hosts";
#endif
}

}  // namespace
}  // namespace relax
