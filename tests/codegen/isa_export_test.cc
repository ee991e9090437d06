// Portable AOT: a library records the ISA it was compiled for (kernel_abi.h: relax_isa_level and
// relax_isa_features, from the compiler's predefined macros), an export compiles for the
// target's level, and the loader refuses a library whose features this CPU lacks, with a
// message naming both (the check itself is tested on any CPU in
// tests/support/cpu_features_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/runtime/kernel_library.h"
#include "relax/support/cpu_features.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using runtime::Tensor;
using runtime::Value;


std::vector<std::string> level(const std::string& name) {
  std::vector<std::string> features;
  EXPECT_TRUE(isa_level_features(name, &features)) << name;
  return features;
}

bool host_has_all(const std::vector<std::string>& features) {
  const std::vector<std::string>& host = host_cpu_features();
  return std::all_of(features.begin(), features.end(),
                     [&](const std::string& f) { return std::find(host.begin(), host.end(), f) != host.end(); });
}

void expect_runs(const runtime::Module& m) {
  const int64_t n = 1000;
  const Tensor x = testing::random_tensor({n}, 1), y = testing::random_tensor({n}, 2);
  absl::StatusOr<Value> out = m["main"](x, y);
  ASSERT_TRUE(out.ok()) << out.status();
  const float* xs = x.data_as_or_die<float>();
  const float* ys = y.data_as_or_die<float>();
  const float* got = out->tensor_or_die().data_as_or_die<float>();
  for (int64_t i = 0; i < n; ++i) {
    const double expected = double{xs[i]} * ys[i] + xs[i];
    ASSERT_NEAR(got[i], expected, 1e-5 * (1.0 + std::abs(expected))) << "element " << i;
  }
}

#if defined(__x86_64__)

TEST(IsaExport, AnExportAtX86_64_V3RecordsItsLevelLoadsAndRuns) {
  Target target = testing::build_test_target();
  target.isa_flags = {"-march=x86-64-v3"};
  absl::StatusOr<runtime::Module> built = build(testing::multiply_add_module(), target);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->kernels()->isa_level(), "x86-64-v3");
  testing::TempDir dir;
  const std::string path = dir.path() + "/model_v3.so";
  ASSERT_TRUE(built->export_library(path).ok());
  absl::StatusOr<runtime::Module> loaded = runtime::load_module(path);
  if (!host_has_all(level("x86-64-v3"))) {
    ASSERT_FALSE(loaded.ok());
    EXPECT_THAT(loaded.status().message(), HasSubstr("was compiled for x86-64-v3"));
    return;
  }
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->kernels()->isa_level(), "x86-64-v3");
  // Exactly the level's features: the record comes from what -march=x86-64-v3 let the compiler use.
  EXPECT_EQ(loaded->kernels()->isa_features(), level("x86-64-v3"));
  expect_runs(*loaded);
}

// On a CPU with AVX-512 this loads; on one without, it is refused instead of dying with SIGILL.
TEST(IsaExport, AnX86_64_V4LibraryLoadsExactlyWhenTheCpuHasItsFeatures) {
  Target target = testing::build_test_target();
  target.isa_flags = {"-march=x86-64-v4"};
  absl::StatusOr<runtime::Module> built = build(testing::multiply_add_module(), target);
  if (host_has_all(level("x86-64-v4"))) {
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ(built->kernels()->isa_features(), level("x86-64-v4"));
    expect_runs(*built);
  } else {
    ASSERT_FALSE(built.ok());
    EXPECT_EQ(built.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(built.status().message(), HasSubstr("was compiled for x86-64-v4 (it needs "));
    EXPECT_THAT(built.status().message(), HasSubstr("but this CPU lacks avx512"));
  }
}

// The default target compiles for this machine and records what -march=native enabled.
TEST(IsaExport, ANativeBuildRecordsFeaturesThisCpuHas) {
  absl::StatusOr<runtime::Module> built = build(testing::multiply_add_module(), testing::build_test_target());
  ASSERT_TRUE(built.ok()) << built.status();
  const runtime::KernelLibrary& lib = *built->kernels();
  EXPECT_EQ(lib.isa_level(), "native");
  EXPECT_TRUE(host_has_all(lib.isa_features()));
  EXPECT_THAT(lib.isa_features(), IsSupersetOf(level("x86-64-v2")));
}

// A library that records a feature no CPU has stands for one compiled for a newer CPU.
TEST(IsaExport, ALibraryNeedingAFeatureThisCpuLacksIsRefusedBeforeAnyKernelRuns) {
  const std::string source = "#include <cstdint>\n#define ABI_VERSION " + std::to_string(RELAX_KERNEL_ABI_VERSION) +
                             R"cpp(
extern "C" int32_t relax_abi_version(void) { return ABI_VERSION; }
extern "C" const void* relax_kernels(int32_t* count) { *count = 0; return nullptr; }
extern "C" const char relax_isa_level[];
extern "C" const char relax_isa_features[];
const char relax_isa_level[] = "x86-64-v9";
const char relax_isa_features[] = " sse3 relax-test-absent-feature";
)cpp";
  Target target = testing::build_test_target();
  target.opt_level = "-O0";
  absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(source, target);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto lib = runtime::KernelLibrary::open(compiled->library_path);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(lib.status().message(),
              HasSubstr("kernel library " + compiled->library_path +
                        " was compiled for x86-64-v9 (it needs sse3 relax-test-absent-feature), but this CPU "
                        "lacks relax-test-absent-feature (it has: sse3 "));
  absl::StatusOr<runtime::Module> loaded = runtime::load_module(compiled->library_path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("load_module: kernel library "));
  EXPECT_THAT(loaded.status().message(), HasSubstr("lacks relax-test-absent-feature"));
}

#endif

}  // namespace
}  // namespace relax
