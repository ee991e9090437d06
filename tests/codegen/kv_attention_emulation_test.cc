// The device kernels of "kv_cache.attention" on CUDA tensors
// (src/runtime/cuda/kv_cache_attention.cu, compiled by nvcc at build time) run
// on the host emulator of cuda_emulator.h, launched with the grids
// kv_cache_attention_cuda.cc gives them, against the runtime's CPU function on
// the same arguments: the caches after the append and the attention output, at
// head dims on each path of the kernel (several threads per dim, one, several
// dims per thread), grouped query heads, a prefill and a decode, and a
// sequence longer than one key tile. No device needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "cuda_emulator.h"
#include "relax/runtime/kv_cache.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;
using testing::CudaEmulator;

// The kernels' signatures span lines: their trampolines by hand, parameters as declared in
// the .cu file.
constexpr char kTrampolines[] = R"(
extern "C" void relax_emu_call_relax_kv_append(void** p) {
  relax_kv_append(*static_cast<const float**>(p[0]), *static_cast<const float**>(p[1]),
                  *static_cast<float**>(p[2]), *static_cast<float**>(p[3]),
                  *static_cast<const long long**>(p[4]), *static_cast<const long long**>(p[5]),
                  *static_cast<long long*>(p[6]), *static_cast<long long*>(p[7]),
                  *static_cast<long long*>(p[8]), *static_cast<long long*>(p[9]),
                  *static_cast<long long*>(p[10]));
}
extern "C" void relax_emu_call_relax_kv_attend(void** p) {
  relax_kv_attend(*static_cast<const float**>(p[0]), *static_cast<const float**>(p[1]),
                  *static_cast<const float**>(p[2]), *static_cast<const long long**>(p[3]),
                  *static_cast<const long long**>(p[4]), *static_cast<float**>(p[5]),
                  *static_cast<long long*>(p[6]), *static_cast<long long*>(p[7]),
                  *static_cast<long long*>(p[8]), *static_cast<long long*>(p[9]),
                  *static_cast<long long*>(p[10]));
}
)";

struct Case {
  int64_t b, n, hq, hkv, d, max_batch, cap;
  std::vector<int64_t> lengths;  // per sequence
  std::vector<int64_t> seq_ids;  // per row
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << "b" << c.b << " n" << c.n << " hq" << c.hq << " hkv" << c.hkv << " d" << c.d << " cap" << c.cap;
}

class KVAttentionEmulation : public ::testing::TestWithParam<Case> {};

TEST_P(KVAttentionEmulation, MatchesTheCpuFunction) {
  const Case& c = GetParam();
  std::ifstream file(std::string(RELAX_SOURCE_DIR) + "/src/runtime/cuda/kv_cache_attention.cu");
  ASSERT_TRUE(file.good());
  std::stringstream source;
  source << file.rdbuf();
  CudaEmulator emulator;  // compiled once for the test binary (its JIT cache)
  const absl::Status loaded = emulator.load(source.str(), testing::build_test_target().cache_dir, kTrampolines);
  ASSERT_TRUE(loaded.ok()) << loaded;

  Tensor q = testing::random_tensor({c.b, c.n, c.hq, c.d}, 1);
  Tensor k = testing::random_tensor({c.b, c.n, c.hkv, c.d}, 2);
  Tensor v = testing::random_tensor({c.b, c.n, c.hkv, c.d}, 3);
  Tensor keys = testing::random_tensor({c.max_batch, c.cap, c.hkv, c.d}, 4);
  Tensor values = testing::random_tensor({c.max_batch, c.cap, c.hkv, c.d}, 5);
  Tensor lengths = *Tensor::empty({c.max_batch}, DataType::int64());
  Tensor seq_ids = *Tensor::empty({c.b}, DataType::int64());
  std::copy(c.lengths.begin(), c.lengths.end(), lengths.data_as_or_die<int64_t>());
  std::copy(c.seq_ids.begin(), c.seq_ids.end(), seq_ids.data_as_or_die<int64_t>());
  Tensor out = *Tensor::empty({c.b, c.n, c.hq, c.d}, DataType::float32());
  // The emulated kernels write copies of the caches and an output of their own.
  auto copy_of = [](const Tensor& t) {
    Tensor copy = *Tensor::empty(t.shape(), t.dtype());
    EXPECT_TRUE(copy.copy_from(t).ok());
    return copy;
  };
  Tensor gpu_keys = copy_of(keys), gpu_values = copy_of(values);
  Tensor gpu_out = *Tensor::empty({c.b, c.n, c.hq, c.d}, DataType::float32());

  ASSERT_TRUE(runtime::kv_cache_attention({Value(q), Value(k), Value(v), Value(keys), Value(values), Value(lengths),
                                           Value(seq_ids), Value(out)})
                  .ok());

  // The launches of kv_cache_attention_cuda.cc: the append's grid-stride loop (at most 4096
  // blocks of 256), then a block of 128 per (row, position, head).
  const float* pq = q.data_as_or_die<float>();
  const float* pk = k.data_as_or_die<float>();
  const float* pv = v.data_as_or_die<float>();
  float* pkeys = gpu_keys.data_as_or_die<float>();
  float* pvalues = gpu_values.data_as_or_die<float>();
  const int64_t* plengths = lengths.data_as_or_die<int64_t>();
  const int64_t* pseq = seq_ids.data_as_or_die<int64_t>();
  float* pout = gpu_out.data_as_or_die<float>();
  long long b = c.b, n = c.n, hq = c.hq, hkv = c.hkv, d = c.d, cap = c.cap;
  char error[256] = {0};
  const long long elements = b * n * hkv * d;
  const uint32_t append_grid[3] = {static_cast<uint32_t>(std::min<long long>(4096, (elements + 255) / 256)), 1, 1};
  const uint32_t append_block[3] = {256, 1, 1};
  void* append_params[] = {&pk, &pv, &pkeys, &pvalues, &plengths, &pseq, &b, &n, &hkv, &d, &cap};
  ASSERT_EQ(CudaEmulator::cuda_launch(nullptr, 0, "relax_kv_append", append_grid, append_block, 0, append_params,
                                      error, sizeof error),
            0)
      << error;
  const uint32_t attend_grid[3] = {static_cast<uint32_t>(b * n * hq), 1, 1};
  const uint32_t attend_block[3] = {128, 1, 1};
  void* attend_params[] = {&pq, &pkeys, &pvalues, &plengths, &pseq, &pout, &n, &hq, &hkv, &d, &cap};
  ASSERT_EQ(CudaEmulator::cuda_launch(nullptr, 0, "relax_kv_attend", attend_grid, attend_block, 0, attend_params,
                                      error, sizeof error),
            0)
      << error;

  auto expect_close = [](const Tensor& want, const Tensor& got, const char* what) {
    const float* w = want.data_as_or_die<float>();
    const float* g = got.data_as_or_die<float>();
    int64_t wrong = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      if (std::abs(w[i] - g[i]) > 1e-5f + 1e-4f * std::abs(w[i]) && wrong++ < 3) {
        ADD_FAILURE() << what << " element " << i << ": cuda " << g[i] << ", cpu " << w[i];
      }
    }
    EXPECT_EQ(wrong, 0) << what;
  };
  expect_close(keys, gpu_keys, "cache_keys");
  expect_close(values, gpu_values, "cache_values");
  expect_close(out, gpu_out, "out");
}

INSTANTIATE_TEST_SUITE_P(
    Steps, KVAttentionEmulation,
    ::testing::Values(Case{2, 1, 8, 2, 64, 3, 40, {5, 0, 17}, {2, 0}},       // decode, 2 threads per dim
                      Case{1, 5, 4, 4, 32, 1, 24, {3}, {0}},                 // prefill, 4 threads per dim
                      Case{1, 2, 2, 1, 200, 2, 16, {0, 7}, {1}},             // several dims per thread
                      Case{1, 1, 2, 1, 128, 1, 200, {150}, {0}},             // two key tiles
                      Case{3, 2, 4, 2, 16, 4, 12, {1, 9, 0, 4}, {3, 0, 1}}),  // three rows, one not the first
    [](const ::testing::TestParamInfo<Case>& param_info) {
      const Case& c = param_info.param;
      return "b" + std::to_string(c.b) + "n" + std::to_string(c.n) + "hq" + std::to_string(c.hq) + "d" +
             std::to_string(c.d) + "cap" + std::to_string(c.cap);
    });

}  // namespace
}  // namespace relax
