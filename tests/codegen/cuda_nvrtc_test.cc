// The CUDA code generator's output through NVRTC (which needs no device):
// every operator family's module, lowered by the cuda pipeline
// (cuda_test_util.h), generates device code that compiles for sm_80 and
// sm_90; a second compile of the same source is a cache hit; a source that
// does not compile returns NVRTC's log naming the device function; the host
// unit compiles with the host compiler against the cubin and, loaded with a
// recording cuda_launch in its runtime table, checks its arguments and
// launches its device functions in order with grids from the arguments' dims
// (and fails with "this runtime has no CUDA support" without one).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "codegen_test_util.h"
#include "cuda_test_util.h"
#include "relax/codegen/compiler.h"
#include "relax/codegen/cuda_codegen.h"

namespace relax {
namespace {

using testing::cuda_test_families;
using testing::cuda_test_family;
using testing::cuda_test_lowered;
using testing::cuda_test_target;

bool cuda_nvrtc_available() { return nvrtc_version().ok(); }

#define CUDA_NVRTC_REQUIRED()                                                   \
  do {                                                                          \
    if (absl::StatusOr<std::string> v = nvrtc_version(); !v.ok()) {             \
      GTEST_SKIP() << "needs NVRTC (no device needed): " << v.status().message(); \
    }                                                                           \
  } while (0)

TEST(CudaNvrtc, EveryOperatorFamilyCompilesForSm80AndSm90) {
  CUDA_NVRTC_REQUIRED();
  testing::TempDir cache;
  for (const auto& [family, text] : cuda_test_families()) {
    SCOPED_TRACE(family);
    const IRModule lowered = cuda_test_lowered(text);
    for (const std::string arch : {"sm_80", "sm_90"}) {
      Target target = cuda_test_target(arch);
      target.cache_dir = cache.path();
      absl::StatusOr<CudaUnit> unit = generate_cuda(lowered, target);
      ASSERT_TRUE(unit.ok()) << unit.status();
      EXPECT_FALSE(unit->kernel_names.empty());
      // RELAX_CUDA_TEST_DUMP=<dir>: the sources written there, to read them.
      if (const char* dump = std::getenv("RELAX_CUDA_TEST_DUMP"); dump != nullptr && arch == "sm_90") {
        std::ofstream(std::filesystem::path(dump) / (family + ".cu")) << unit->device_source;
        std::ofstream(std::filesystem::path(dump) / (family + "_host.cc")) << unit->host_source;
      }
      absl::StatusOr<CompiledCudaImage> image = compile_cuda_image(unit->device_source, target);
      ASSERT_TRUE(image.ok()) << image.status() << "\n" << unit->device_source;
      EXPECT_FALSE(image->cache_hit);
      EXPECT_EQ(image->log, "") << "NVRTC warned";
      EXPECT_GT(std::filesystem::file_size(image->image_path), 0u);
    }
  }
}

// The decode matvec reads its weights four columns at a time: in the PTX, one
// vector load of four elements (16 bytes of float32, 8 of bfloat16, 4 packed
// int8 / int4 bytes) -- the planner's choice, not the compiler's luck.
TEST(CudaNvrtc, DecodeMatvecReadsItsWeightsWithVectorLoads) {
  CUDA_NVRTC_REQUIRED();
  const Target target = cuda_test_target("sm_90");
  for (const auto& [family, load] : std::vector<std::pair<std::string, std::string>>{
           {"matvec_f32", ".v4.f32"}, {"matvec_bf16", ".v4.u16"}, {"matvec_int8", ".v4.u8"}, {"matvec_int4", ".v4.u8"}}) {
    SCOPED_TRACE(family);
    absl::StatusOr<CudaUnit> unit = generate_cuda(cuda_test_lowered(cuda_test_family(family)), target);
    ASSERT_TRUE(unit.ok()) << unit.status();
    ASSERT_NE(unit->device_source.find("relax_load4("), std::string::npos) << unit->device_source;
    absl::StatusOr<std::string> ptx = cuda_ptx(unit->device_source, target);
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    EXPECT_NE(ptx->find(".target sm_90"), std::string::npos) << *ptx;
    bool vector_load = false;
    for (const absl::string_view line : absl::StrSplit(*ptx, '\n')) {
      if (absl::StrContains(line, "ld.global") && absl::StrContains(line, load)) vector_load = true;
    }
    EXPECT_TRUE(vector_load) << "no ld.global" << load << " in\n" << *ptx;
  }
}

TEST(CudaNvrtc, PtxOfABadArchitectureOrSourceSaysWhy) {
  CUDA_NVRTC_REQUIRED();
  Target target = cuda_test_target("sm_90");
  target.cuda_arch = "kepler";
  absl::StatusOr<std::string> bad_arch = cuda_ptx("extern \"C\" __global__ void f() {}", target);
  ASSERT_FALSE(bad_arch.ok());
  EXPECT_EQ(bad_arch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_arch.status().message().find("\"kepler\", expected sm_<version>"), std::string::npos)
      << bad_arch.status();
  absl::StatusOr<std::string> bad_source =
      cuda_ptx("extern \"C\" __global__ void broken() { undeclared = 1; }", cuda_test_target("sm_90"));
  ASSERT_FALSE(bad_source.ok());
  EXPECT_NE(bad_source.status().message().find("in device function broken"), std::string::npos)
      << bad_source.status();
}

TEST(CudaNvrtc, SecondCompileIsACacheHitPerArchitecture) {
  CUDA_NVRTC_REQUIRED();
  testing::TempDir cache;
  Target target = cuda_test_target("sm_80");
  target.cache_dir = cache.path();
  absl::StatusOr<CudaUnit> unit = generate_cuda(cuda_test_lowered(cuda_test_family("softmax")), target);
  ASSERT_TRUE(unit.ok()) << unit.status();
  absl::StatusOr<CompiledCudaImage> first = compile_cuda_image(unit->device_source, target);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<CompiledCudaImage> again = compile_cuda_image(unit->device_source, target);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(first->cache_hit);
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(first->image_path, again->image_path);
  target.cuda_arch = "sm_90";
  absl::StatusOr<CompiledCudaImage> other = compile_cuda_image(unit->device_source, target);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->cache_hit);
  EXPECT_NE(other->image_path, first->image_path);
}

TEST(CudaNvrtc, CompileErrorNamesTheDeviceFunctionAndCarriesTheLog) {
  CUDA_NVRTC_REQUIRED();
  testing::TempDir cache;
  Target target = cuda_test_target("sm_90");
  target.cache_dir = cache.path();
  const std::string source =
      "extern \"C\" __global__ void fine(float* a) { a[0] = 1.0f; }\n"
      "extern \"C\" __global__ void broken(float* a) {\n  a[0] = undefined_name;\n}\n";
  absl::StatusOr<CompiledCudaImage> image = compile_cuda_image(source, target);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(image.status().message().find("in device function broken"), std::string::npos) << image.status();
  EXPECT_NE(image.status().message().find("undefined_name"), std::string::npos) << image.status();
  EXPECT_NE(image.status().message().find("sm_90"), std::string::npos) << image.status();
}

// ---- The host unit, with a recording cuda_launch -------------------------------

struct CudaNvrtcLaunch {
  std::string name;
  uint32_t grid[3];
  uint32_t block[3];
  uint64_t image_size;
};
std::vector<CudaNvrtcLaunch>& cuda_nvrtc_launches() {
  static std::vector<CudaNvrtcLaunch> launches;
  return launches;
}
int32_t cuda_nvrtc_record(const void*, uint64_t image_size, const char* name, const uint32_t grid[3],
                          const uint32_t block[3], uint32_t, void** params, char*, int32_t) {
  EXPECT_NE(params, nullptr);
  cuda_nvrtc_launches().push_back(
      {name, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, image_size});
  return 0;
}

/// The host unit of `family` compiled against its sm_90 cubin and loaded.
void* cuda_nvrtc_load_host(const std::string& family, const std::string& cache_dir, CudaUnit* unit_out) {
  Target target = cuda_test_target("sm_90");
  target.cache_dir = cache_dir;
  absl::StatusOr<CudaUnit> unit = generate_cuda(cuda_test_lowered(cuda_test_family(family)), target);
  EXPECT_TRUE(unit.ok()) << unit.status();
  if (!unit.ok()) return nullptr;
  absl::StatusOr<CompiledCudaImage> image = compile_cuda_image(unit->device_source, target);
  EXPECT_TRUE(image.ok()) << image.status();
  if (!image.ok()) return nullptr;
  Target host;
  host.cache_dir = cache_dir;
  absl::StatusOr<CompiledLibrary> lib =
      compile_shared_object(unit->host_source + cuda_image_appendix(image->image_path), host);
  EXPECT_TRUE(lib.ok()) << lib.status();
  if (!lib.ok()) return nullptr;
  *unit_out = *unit;
  void* handle = dlopen(lib->library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  return handle;
}

TEST(CudaNvrtc, HostUnitChecksArgumentsAndLaunchesInOrder) {
  CUDA_NVRTC_REQUIRED();
  testing::TempDir cache;
  CudaUnit unit;
  void* handle = cuda_nvrtc_load_host("softmax", cache.path(), &unit);
  ASSERT_NE(handle, nullptr);
  auto set_api = reinterpret_cast<RelaxSetRuntimeApiFn>(dlsym(handle, "relax_set_runtime_api"));
  auto kernels = reinterpret_cast<RelaxKernelTableFn>(dlsym(handle, "relax_kernels"));
  auto abi = reinterpret_cast<RelaxAbiVersionFn>(dlsym(handle, "relax_abi_version"));
  ASSERT_NE(set_api, nullptr);
  ASSERT_NE(kernels, nullptr);
  ASSERT_NE(abi, nullptr);
  EXPECT_EQ(abi(), RELAX_KERNEL_ABI_VERSION);
  int32_t count = 0;
  const RelaxKernelEntry* table = kernels(&count);
  ASSERT_EQ(count, 1);
  const RelaxKernelFn fn = table[0].fn;
  std::vector<float> x(5 * 300), y(5 * 300);
  // Without a runtime table, or with one without CUDA: a message, no launch.
  {
    testing::KernelArgs args;
    args.buffer(x, {5, 300}).buffer(y, {5, 300});
    EXPECT_EQ(args.call(fn), "this runtime has no CUDA support");
  }
  RelaxRuntimeApi api{};
  set_api(&api);
  {
    testing::KernelArgs args;
    args.buffer(x, {5, 300}).buffer(y, {5, 300});
    EXPECT_EQ(args.call(fn), "this runtime has no CUDA support");
  }
  api.cuda_launch = &cuda_nvrtc_record;
  // The same argument checks as a CPU kernel.
  {
    testing::KernelArgs args;
    args.buffer(x, {5, 300});
    EXPECT_EQ(args.call(fn), "expected 2 arguments, got 1");
    testing::KernelArgs wrong;
    wrong.buffer(x, {5, 300}).buffer(y, {5, 299});
    EXPECT_NE(wrong.call(fn).find("dim 1 is 299, expected 300"), std::string::npos) << wrong.call(fn);
  }
  EXPECT_TRUE(cuda_nvrtc_launches().empty());
  testing::KernelArgs args;
  args.buffer(x, {5, 300}).buffer(y, {5, 300});
  ASSERT_EQ(args.call(fn), "");
  // One launch per device function, in order: the softmax's rows, one block each.
  ASSERT_EQ(cuda_nvrtc_launches().size(), unit.kernel_names.size());
  for (size_t i = 0; i < unit.kernel_names.size(); ++i) {
    EXPECT_EQ(cuda_nvrtc_launches()[i].name, unit.kernel_names[i]);
    EXPECT_GT(cuda_nvrtc_launches()[i].image_size, 0u);
  }
  EXPECT_EQ(cuda_nvrtc_launches().back().grid[0], 5u);
  EXPECT_EQ(cuda_nvrtc_launches().back().block[0], 256u);
  set_api(nullptr);
  dlclose(handle);
}

// The matmul's rows are symbolic: 130 rows launch the tiled kernel on a grid
// of 64 x 64 tiles, 3 rows the matvec (128 columns per block).
TEST(CudaNvrtc, MatmulGridFollowsTheRowsAndColumnsAndFewRowsTakeTheMatvec) {
  CUDA_NVRTC_REQUIRED();
  testing::TempDir cache;
  CudaUnit unit;
  void* handle = cuda_nvrtc_load_host("matmul", cache.path(), &unit);
  ASSERT_NE(handle, nullptr);
  ASSERT_EQ(unit.kernel_names.size(), 2u);
  auto set_api = reinterpret_cast<RelaxSetRuntimeApiFn>(dlsym(handle, "relax_set_runtime_api"));
  auto kernels = reinterpret_cast<RelaxKernelTableFn>(dlsym(handle, "relax_kernels"));
  RelaxRuntimeApi api{};
  api.cuda_launch = &cuda_nvrtc_record;
  set_api(&api);
  int32_t count = 0;
  const RelaxKernelEntry* table = kernels(&count);
  ASSERT_EQ(count, 1);
  for (const int64_t rows : {130, 3, 8, 9}) {
    SCOPED_TRACE(rows);
    cuda_nvrtc_launches().clear();
    std::vector<float> x(rows * 128), w(128 * 96), y(rows * 96);
    testing::KernelArgs args;
    args.buffer(x, {rows, 128}).buffer(w, {128, 96}).buffer(y, {rows, 96});
    ASSERT_EQ(args.call(table[0].fn), "");
    ASSERT_EQ(cuda_nvrtc_launches().size(), 1u);
    const CudaNvrtcLaunch& launch = cuda_nvrtc_launches()[0];
    EXPECT_EQ(launch.block[0], 256u);
    if (rows <= 8) {
      EXPECT_EQ(launch.name, unit.kernel_names[0]);
      EXPECT_EQ(launch.grid[0], 1u);  // ceil(96 / 128) column blocks
      EXPECT_EQ(launch.grid[1], 1u);
    } else {
      EXPECT_EQ(launch.name, unit.kernel_names[1]);
      EXPECT_EQ(launch.grid[0], 2u);                               // ceil(96 / 64) column tiles
      EXPECT_EQ(launch.grid[1], static_cast<uint32_t>((rows + 63) / 64));  // row tiles
    }
  }
  set_api(nullptr);
  dlclose(handle);
}

TEST(CudaNvrtc, ImageAppendixDefinesTheImageSymbols) {
  const std::string text = cuda_image_appendix("/tmp/x.cubin");
  EXPECT_NE(text.find(".incbin \\\"/tmp/x.cubin\\\""), std::string::npos) << text;
  EXPECT_NE(text.find("relax_cuda_image_begin:"), std::string::npos);
  EXPECT_NE(text.find("relax_cuda_image_end:"), std::string::npos);
  EXPECT_NE(text.find(".hidden relax_cuda_image_begin"), std::string::npos);
}

TEST(CudaNvrtc, VersionIsReportedOrWhyNot) {
  absl::StatusOr<std::string> v = nvrtc_version();
  if (cuda_nvrtc_available()) {
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->rfind("13.", 0), 0u) << *v;
  } else {
    EXPECT_EQ(v.status().code(), absl::StatusCode::kFailedPrecondition);
  }
}

}  // namespace
}  // namespace relax
