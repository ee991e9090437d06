// The CUDA code generator's kernels, run on the host by CudaEmulator
// (cuda_emulator.h: blocks of real threads, barriers for __syncthreads and
// warp shuffles), against the CPU code generator's kernels for the same
// lowered PrimFuncs: every operator family of cuda_test_util.h at bindings of
// its symbolic sizes that take each mapping's paths (a row of one, rows past a
// block's threads, a matmul of few rows -- the matvec -- and of many -- the
// tiles), every buffer filled with the same pseudo-random values, every buffer
// compared after the call. The generated launchers run too, with the
// emulator as their cuda_launch: grids, argument order and kernel choice are
// theirs. No device needed; NVRTC is not involved.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "cuda_emulator.h"
#include "cuda_test_util.h"
#include "relax/codegen/cpp_codegen.h"
#include "relax/codegen/cuda_codegen.h"
#include "relax/ir/prim_func.h"
#include "relax/runtime/kernel_abi.h"
#include "relax/runtime/kernel_library.h"
#include "relax/support/half_float.h"

namespace relax {
namespace {

using testing::CudaEmulator;

/// One buffer argument: its bytes and how to read an element back as a double.
struct HostBuffer {
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t count() const { return static_cast<int64_t>(bytes.size()) / element_bytes(dtype); }
  static int64_t element_bytes(DataType d) { return std::max<int64_t>(1, d.bits / 8); }
  double at(int64_t i) const {
    const uint8_t* p = bytes.data() + i * element_bytes(dtype);
    auto read = [p]<typename T>(T) {
      T v;
      std::memcpy(&v, p, sizeof v);
      return v;
    };
    if (dtype.code == DataType::Code::kBFloat) return bfloat16_value(read(uint16_t{}));
    if (dtype.is_float() && dtype.bits == 16) return float16_value(read(uint16_t{}));
    if (dtype.is_float()) return dtype.bits == 64 ? read(double{}) : read(float{});
    const bool is_signed = dtype.code == DataType::Code::kInt;
    switch (dtype.bits) {
      case 64: return is_signed ? static_cast<double>(read(int64_t{})) : static_cast<double>(read(uint64_t{}));
      case 32: return is_signed ? read(int32_t{}) : read(uint32_t{});
      case 16: return is_signed ? read(int16_t{}) : read(uint16_t{});
      default: return is_signed ? read(int8_t{}) : read(uint8_t{});
    }
  }
};

/// Pseudo-random contents for `dtype`: floats in [-1, 1], integers in [0, 8) (valid indices
/// and positions), bytes anywhere (packed int4 / int8 weights), bools 0 or 1.
void fill(HostBuffer& b, uint32_t seed) {
  uint32_t state = 2463534242u + seed * 7919u;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  const int64_t size = HostBuffer::element_bytes(b.dtype);
  for (int64_t i = 0; i < b.count(); ++i) {
    uint8_t* p = b.bytes.data() + i * size;
    const double unit = static_cast<double>(next() % 2001) / 1000.0 - 1.0;
    if (b.dtype.code == DataType::Code::kBFloat) {
      const uint16_t v = bfloat16_bits(unit);
      std::memcpy(p, &v, 2);
    } else if (b.dtype.is_float() && b.dtype.bits == 16) {
      const uint16_t v = float16_bits(unit);
      std::memcpy(p, &v, 2);
    } else if (b.dtype.is_float() && b.dtype.bits == 32) {
      const auto v = static_cast<float>(unit);
      std::memcpy(p, &v, 4);
    } else if (b.dtype.is_float()) {
      std::memcpy(p, &unit, 8);
    } else if (b.dtype.is_bool()) {
      p[0] = static_cast<uint8_t>(next() & 1);
    } else if (b.dtype.bits == 8) {
      p[0] = static_cast<uint8_t>(next());
    } else {
      const int64_t v = next() % 8;
      std::memcpy(p, &v, static_cast<size_t>(size));  // little-endian: the low bytes
    }
  }
}

/// A PrimFunc's arguments at `sizes` (symbolic sizes by name; 5 for any other name).
struct Call {
  std::vector<HostBuffer> buffers;
  std::vector<int64_t> scalars;  // per parameter: the value of a scalar one
  std::vector<bool> is_buffer;

  testing::KernelArgs args() {
    testing::KernelArgs a;
    size_t b = 0;
    for (size_t i = 0; i < is_buffer.size(); ++i) {
      if (is_buffer[i]) {
        HostBuffer& h = buffers[b++];
        a.buffer(h.bytes.data(), h.dtype, h.shape);
      } else {
        a.integer(scalars[i]);
      }
    }
    return a;
  }
};

absl::StatusOr<Call> make_call(const PrimFuncNode& func, const std::map<std::string, int64_t>& sizes) {
  SymVarMap<int64_t> bindings;
  auto bind = [&](const SymVar& v) {
    auto it = sizes.find(v.name());
    bindings[v] = it == sizes.end() ? 5 : it->second;
  };
  for (const PrimParam& p : func.params) {
    if (p.scalar) bind(*p.scalar);
    if (!p.buffer) continue;
    for (const SymExpr& d : p.buffer->shape()) {
      if (d.is_var()) bind(SymVar::from_expr(d));
    }
  }
  Call call;
  uint32_t seed = 1;
  for (const PrimParam& p : func.params) {
    call.is_buffer.push_back(p.buffer.has_value());
    call.scalars.push_back(p.scalar ? bindings.at(*p.scalar) : 0);
    if (!p.buffer) continue;
    HostBuffer h;
    h.dtype = p.buffer->dtype();
    int64_t count = 1;
    for (const SymExpr& d : p.buffer->shape()) {
      absl::StatusOr<int64_t> v = evaluate(d, bindings);
      if (!v.ok()) return v.status();
      h.shape.push_back(*v);
      count *= *v;
    }
    h.bytes.assign(static_cast<size_t>(count * HostBuffer::element_bytes(h.dtype)), 0);
    fill(h, seed++);
    call.buffers.push_back(std::move(h));
  }
  return call;
}

/// The kernel table of a library opened with dlopen.
std::map<std::string, RelaxKernelFn> kernel_table(void* handle) {
  std::map<std::string, RelaxKernelFn> out;
  auto kernels = reinterpret_cast<RelaxKernelTableFn>(dlsym(handle, "relax_kernels"));
  if (kernels == nullptr) return out;
  int32_t count = 0;
  const RelaxKernelEntry* table = kernels(&count);
  for (int32_t i = 0; i < count; ++i) out[table[i].name] = table[i].fn;
  return out;
}

/// Every kernel of `family`'s lowered module, CUDA (emulated) against CPU, at each binding.
void check_family(const std::string& family, const std::vector<std::map<std::string, int64_t>>& bindings) {
  SCOPED_TRACE(family);
  const Target cache_target = testing::build_test_target();
  const IRModule lowered = testing::cuda_test_lowered(testing::cuda_test_family(family));
  // The CPU kernels of the same PrimFuncs.
  absl::StatusOr<std::string> cpu_source = generate_cpp(lowered, cache_target);
  ASSERT_TRUE(cpu_source.ok()) << cpu_source.status();
  absl::StatusOr<CompiledLibrary> cpu_lib = compile_shared_object(*cpu_source, cache_target);
  ASSERT_TRUE(cpu_lib.ok()) << cpu_lib.status();
  absl::StatusOr<std::shared_ptr<const runtime::KernelLibrary>> cpu = runtime::KernelLibrary::open(cpu_lib->library_path);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  // The CUDA unit: its device functions on the emulator, its launcher as generated.
  Target cuda_target = testing::cuda_test_target("sm_90");
  cuda_target.cache_dir = cache_target.cache_dir;
  absl::StatusOr<CudaUnit> unit = generate_cuda(lowered, cuda_target);
  ASSERT_TRUE(unit.ok()) << unit.status();
  CudaEmulator emulator;
  ASSERT_TRUE(emulator.load(unit->device_source, cache_target.cache_dir).ok())
      << CudaEmulator::host_source(unit->device_source).value_or("");
  const std::string image = (std::filesystem::path(cache_target.cache_dir) / (family + "_image.cu")).string();
  std::ofstream(image) << unit->device_source;  // the launcher embeds some image; the emulator ignores it
  absl::StatusOr<CompiledLibrary> host_lib =
      compile_shared_object(unit->host_source + cuda_image_appendix(image), cache_target);
  ASSERT_TRUE(host_lib.ok()) << host_lib.status();
  void* host = dlopen(host_lib->library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(host, nullptr) << dlerror();
  auto set_api = reinterpret_cast<RelaxSetRuntimeApiFn>(dlsym(host, "relax_set_runtime_api"));
  ASSERT_NE(set_api, nullptr);
  RelaxRuntimeApi api{};
  api.cuda_launch = &CudaEmulator::cuda_launch;
  set_api(&api);
  const std::map<std::string, RelaxKernelFn> gpu = kernel_table(host);
  int checked = 0;
  for (const auto& [name, expr] : lowered.functions()) {
    const auto* func = expr.as<PrimFuncNode>();
    if (func == nullptr) continue;
    SCOPED_TRACE(name);
    ASSERT_TRUE(gpu.contains(name));
    absl::StatusOr<RelaxKernelFn> cpu_fn = (*cpu)->find(name);
    ASSERT_TRUE(cpu_fn.ok()) << cpu_fn.status();
    for (const auto& sizes : bindings) {
      absl::StatusOr<Call> on_cpu = make_call(*func, sizes);
      ASSERT_TRUE(on_cpu.ok()) << on_cpu.status();
      Call on_gpu = *on_cpu;
      SCOPED_TRACE(::testing::PrintToString(sizes));
      ASSERT_EQ(on_cpu->args().call(*cpu_fn), "");
      ASSERT_EQ(on_gpu.args().call(gpu.at(name)), "");
      for (size_t b = 0; b < on_cpu->buffers.size(); ++b) {
        const HostBuffer& want = on_cpu->buffers[b];
        const HostBuffer& got = on_gpu.buffers[b];
        const double tolerance = want.dtype.is_float() ? (want.dtype.bits == 16 ? 1e-2 : 1e-4) : 0.0;
        int64_t wrong = 0;
        for (int64_t i = 0; i < want.count(); ++i) {
          const double w = want.at(i), g = got.at(i);
          const bool same = (std::isnan(w) && std::isnan(g)) || std::abs(w - g) <= tolerance * (1 + std::abs(w));
          if (!same && wrong++ < 3) ADD_FAILURE() << "buffer " << b << " element " << i << ": cuda " << g << ", cpu " << w;
        }
        EXPECT_EQ(wrong, 0) << "buffer " << b << " of " << want.count() << " elements";
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_FALSE(emulator.launches().empty());
  set_api(nullptr);
  dlclose(host);
}

// Few and many rows (the matvec and the tiles of a symbolic-row matmul; a single row and rows
// of more elements than a block has threads).
const std::vector<std::map<std::string, int64_t>> kBindings = {{{"n", 3}, {"m", 37}, {"s", 2}},
                                                               {{"n", 70}, {"m", 300}, {"s", 9}}};

class CudaEmulation : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaEmulation, KernelsMatchTheCpuKernels) { check_family(GetParam(), kBindings); }

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& [family, text] : testing::cuda_test_families()) names.push_back(family);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Families, CudaEmulation, ::testing::ValuesIn(family_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

// The emulator itself: a launch of a device function it does not have is an error, not a run.
TEST(CudaEmulatorTest, AnUnknownDeviceFunctionIsAnError) {
  testing::TempDir cache;
  CudaEmulator emulator;
  ASSERT_TRUE(emulator.load("extern \"C\" __global__ void __launch_bounds__(32) relax_cuda_one(float* x) {\n"
                            "  x[threadIdx.x] = 1.0f;\n}\n",
                            cache.path())
                  .ok());
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t block[3] = {32, 1, 1};
  char error[128] = {0};
  std::vector<float> x(32, 0.0f);
  float* data = x.data();
  void* params[] = {&data};
  EXPECT_EQ(CudaEmulator::cuda_launch(nullptr, 0, "relax_cuda_one", grid, block, 0, params, error, sizeof error), 0);
  EXPECT_EQ(x, std::vector<float>(32, 1.0f));
  EXPECT_EQ(CudaEmulator::cuda_launch(nullptr, 0, "relax_cuda_two", grid, block, 0, params, error, sizeof error), 1);
  EXPECT_STREQ(error, "no device function relax_cuda_two");
}

}  // namespace
}  // namespace relax
