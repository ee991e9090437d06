// CPU features, ISA levels and the check that refuses a library built for a CPU this one is
// not (relax/support/cpu_features.h). The check takes the CPU's features as an argument, so
// the refusal is tested here on any CPU.
#include "relax/support/cpu_features.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace relax {
namespace {

using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

std::vector<std::string> level(const std::string& name) {
  std::vector<std::string> features;
  EXPECT_TRUE(isa_level_features(name, &features)) << name;
  return features;
}

#if defined(__x86_64__)

TEST(CpuFeatures, LevelsAreCumulativeAndRequireThePsAbiFeatures) {
  EXPECT_TRUE(level("x86-64").empty());
  const std::vector<std::string> v2 = level("x86-64-v2"), v3 = level("x86-64-v3"), v4 = level("x86-64-v4");
  EXPECT_THAT(v2, IsSupersetOf({"popcnt", "sse4.2", "ssse3", "sse4.1", "sse3"}));
  EXPECT_THAT(v3, IsSupersetOf(v2));
  EXPECT_THAT(v3, IsSupersetOf({"avx", "avx2", "fma", "bmi", "bmi2", "lzcnt", "movbe", "f16c"}));
  EXPECT_THAT(v4, IsSupersetOf(v3));
  EXPECT_THAT(v4, IsSupersetOf({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}));
  EXPECT_EQ(v4.size(), v3.size() + 5);
  EXPECT_EQ(v3.size(), v2.size() + 8);
  std::vector<std::string> none;
  EXPECT_FALSE(isa_level_features("native", &none));
  EXPECT_FALSE(isa_level_features("x86-64-v5", &none));
  EXPECT_EQ(isa_level_names().size(), 4u);
}

TEST(CpuFeatures, NamesAndMacrosAreUnique) {
  std::vector<std::string> names, macros;
  for (const CpuFeature& f : known_cpu_features()) {
    names.emplace_back(f.name);
    macros.emplace_back(f.macro);
    EXPECT_EQ(f.macro.substr(0, 2), "__") << f.name;
  }
  std::sort(names.begin(), names.end());
  std::sort(macros.begin(), macros.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_EQ(std::adjacent_find(macros.begin(), macros.end()), macros.end());
}

// The CPUID reading against the compiler's own detection (libgcc's / compiler-rt's), for the
// features both know.
TEST(CpuFeatures, HostFeaturesAgreeWithTheCompilersDetection) {
  const std::vector<std::string>& host = host_cpu_features();
  auto has = [&](const char* name) { return std::find(host.begin(), host.end(), name) != host.end(); };
  __builtin_cpu_init();
  EXPECT_EQ(has("sse4.2"), __builtin_cpu_supports("sse4.2") != 0);
  EXPECT_EQ(has("popcnt"), __builtin_cpu_supports("popcnt") != 0);
  EXPECT_EQ(has("avx"), __builtin_cpu_supports("avx") != 0);
  EXPECT_EQ(has("avx2"), __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(has("fma"), __builtin_cpu_supports("fma") != 0);
  EXPECT_EQ(has("bmi"), __builtin_cpu_supports("bmi") != 0);
  EXPECT_EQ(has("bmi2"), __builtin_cpu_supports("bmi2") != 0);
  EXPECT_EQ(has("avx512f"), __builtin_cpu_supports("avx512f") != 0);
  EXPECT_EQ(has("avx512bw"), __builtin_cpu_supports("avx512bw") != 0);
  EXPECT_EQ(has("avx512vl"), __builtin_cpu_supports("avx512vl") != 0);
  // Every x86-64 CPU relax runs on has at least the v2 level.
  EXPECT_THAT(host, IsSupersetOf(level("x86-64-v2")));
}

TEST(CpuFeatures, TheCheckRefusesALevelTheCpuLacksNamingBoth) {
  const std::vector<std::string> v3 = level("x86-64-v3"), v4 = level("x86-64-v4");
  EXPECT_TRUE(check_cpu_features("lib.so", "x86-64-v3", v3, v4).ok());
  EXPECT_TRUE(check_cpu_features("lib.so", "x86-64-v3", v3, v3).ok());
  EXPECT_TRUE(check_cpu_features("lib.so", "x86-64", {}, {}).ok());
  const absl::Status s = check_cpu_features("kernel library lib.so", "x86-64-v4", v4, v3);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("kernel library lib.so was compiled for x86-64-v4 (it needs sse3 "));
  EXPECT_THAT(s.message(), HasSubstr("but this CPU lacks avx512f avx512bw avx512cd avx512dq avx512vl (it has: sse3 "));
  EXPECT_THAT(s.message(), HasSubstr("movbe f16c); compile it for a lower ISA level"));
  // A CPU without AVX2 and a native library that used it: the level is named as the target did.
  std::vector<std::string> no_avx2 = v3;
  no_avx2.erase(std::find(no_avx2.begin(), no_avx2.end(), "avx2"));
  const absl::Status n = check_cpu_features("m.so", "native", {"avx2", "fma"}, no_avx2);
  EXPECT_THAT(n.message(), HasSubstr("m.so was compiled for native (it needs avx2 fma), but this CPU lacks avx2 ("));
  const absl::Status custom = check_cpu_features("m.so", "", {"avx2"}, {});
  EXPECT_THAT(custom.message(),
              HasSubstr("compiled for a custom ISA (it needs avx2), but this CPU lacks avx2 (it has: no extension"));
}

#endif

}  // namespace
}  // namespace relax
