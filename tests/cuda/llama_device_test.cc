// The language model on a GPU (relax/models/llama_model.h with a cuda target): prefill and
// decode logits against the same model compiled for the CPU, from one compilation each, for
// float32, bfloat16 and int4 weights; the KV cache on the device; greedy generation choosing the
// CPU's tokens; the replayed decode steps captured as CUDA graphs around the attention calls.
// Skipped, visibly, without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cuda_device.h"
#include "relax/models/llama.h"
#include "relax/models/llama_model.h"
#include "relax/models/llama_reference.h"

namespace relax::models {
namespace {

using runtime::Tensor;

// Of the row's largest logit: two float32 computations in different orders (the GPU's tiled
// reductions, the CPU's lanes).
constexpr double kLlamaDeviceTolerance = 2e-3;

LlamaConfig llama_device_config(WeightFormat format) {
  LlamaConfig c = LlamaConfig::small();
  c.weights = format;
  c.max_context = 64;
  return c;
}

std::string llama_device_weights(const LlamaConfig& c) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            absl::StrCat("relax_cuda_llama_", weight_format_name(c.weights), ".safetensors"))
                               .string();
  if (!std::filesystem::exists(path)) {
    absl::Status s = write_random_weights(c, 5, path);
    EXPECT_TRUE(s.ok()) << s;
  }
  return path;
}

LlamaModel llama_device_load(const LlamaConfig& c, const char* target) {
  CompileOptions options;
  absl::StatusOr<Target> parsed = Target::parse(target);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  options.target = *parsed;
  options.target.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_cuda_llama_cache").string();
  absl::StatusOr<LlamaModel> m = LlamaModel::load(llama_device_weights(c), options);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

// The largest relative error of a row of `gpu` against the same row of `cpu` (rows, vocab).
double llama_device_error(const Tensor& gpu, const Tensor& cpu) {
  EXPECT_EQ(gpu.shape(), cpu.shape());
  const int64_t rows = cpu.shape()[0];
  const int64_t vocab = cpu.shape()[1];
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* expected = static_cast<const float*>(cpu.data()) + r * vocab;
    const std::vector<double> row(expected, expected + vocab);
    worst = std::max(worst,
                     ReferenceLlama::relative_error(static_cast<const float*>(gpu.data()) + r * vocab, row));
  }
  return worst;
}

class LlamaCudaDevice : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(LlamaCudaDevice, PrefillAndDecodeMatchTheCpuLogits) {
  RELAX_REQUIRE_CUDA_DEVICE();
  const LlamaConfig c = llama_device_config(GetParam());
  LlamaModel gpu = llama_device_load(c, "cuda");
  LlamaModel cpu = llama_device_load(c, "cpu");
  absl::StatusOr<runtime::KVCache> gpu_cache = gpu.new_cache();
  absl::StatusOr<runtime::KVCache> cpu_cache = cpu.new_cache();
  ASSERT_TRUE(gpu_cache.ok()) << gpu_cache.status();
  ASSERT_TRUE(cpu_cache.ok()) << cpu_cache.status();
  EXPECT_EQ(gpu_cache->device(), Device::cuda());
  // Two prompts of different lengths (prefill each), then three decode steps of both rows.
  const std::vector<std::vector<int64_t>> prompts = {{1, 17, 33, 4, 90, 12, 7}, {5, 3, 200, 41, 9, 11, 2, 8, 60, 13, 6}};
  std::vector<int64_t> next(prompts.size());
  for (size_t p = 0; p < prompts.size(); ++p) {
    const std::vector<int64_t> ids = {static_cast<int64_t>(p)};
    absl::StatusOr<Tensor> g = gpu.forward({prompts[p]}, ids, *gpu_cache);
    absl::StatusOr<Tensor> h = cpu.forward({prompts[p]}, ids, *cpu_cache);
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(g->device(), Device::cpu());
    EXPECT_LT(llama_device_error(*g, *h), kLlamaDeviceTolerance) << "prefill of prompt " << p;
    next[p] = LlamaModel::argmax(*h)[0];
  }
  for (int step = 0; step < 3; ++step) {
    const std::vector<std::vector<int64_t>> tokens = {{next[0]}, {next[1]}};
    absl::StatusOr<Tensor> g = gpu.forward(tokens, {0, 1}, *gpu_cache);
    absl::StatusOr<Tensor> h = cpu.forward(tokens, {0, 1}, *cpu_cache);
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_LT(llama_device_error(*g, *h), kLlamaDeviceTolerance) << "decode step " << step;
    const std::vector<int64_t> chosen = LlamaModel::argmax(*h);
    next = chosen;
  }
  EXPECT_EQ(gpu_cache->length(0), cpu_cache->length(0));
  EXPECT_EQ(gpu_cache->length(1), cpu_cache->length(1));
  // The replayed decode steps: their device work captured as CUDA graphs in the stretches
  // between the attention calls (which synchronise with the host and run directly), no
  // capture thrown away.
  const runtime::ReplayStats stats = gpu.module().replay_stats();
  EXPECT_GT(stats.replayed, 0);
  EXPECT_GT(stats.graph_captures, 0);
  EXPECT_EQ(stats.graph_failures, 0);
}

TEST_P(LlamaCudaDevice, GreedyGenerationChoosesTheCpuTokens) {
  RELAX_REQUIRE_CUDA_DEVICE();
  const LlamaConfig c = llama_device_config(GetParam());
  LlamaModel gpu = llama_device_load(c, "cuda");
  LlamaModel cpu = llama_device_load(c, "cpu");
  absl::StatusOr<runtime::KVCache> gpu_cache = gpu.new_cache();
  absl::StatusOr<runtime::KVCache> cpu_cache = cpu.new_cache();
  ASSERT_TRUE(gpu_cache.ok() && cpu_cache.ok());
  const std::vector<std::vector<int64_t>> prompts = {{1, 2, 3, 4}, {9, 8, 7}};
  absl::StatusOr<std::vector<std::vector<int64_t>>> g = gpu.generate(prompts, 8, *gpu_cache);
  absl::StatusOr<std::vector<std::vector<int64_t>>> h = cpu.generate(prompts, 8, *cpu_cache);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(*g, *h);
}

TEST(LlamaCudaDeviceErrors, ACacheOnTheOtherDeviceIsRefused) {
  RELAX_REQUIRE_CUDA_DEVICE();
  const LlamaConfig c = llama_device_config(WeightFormat::kFloat32);
  LlamaModel gpu = llama_device_load(c, "cuda");
  absl::StatusOr<runtime::KVCache> host_cache =
      runtime::KVCache::create(c.layers, c.max_batch, c.max_context, c.kv_heads, c.head_dim);
  ASSERT_TRUE(host_cache.ok());
  absl::StatusOr<Tensor> logits = gpu.forward({{1, 2}}, {0}, *host_cache);
  ASSERT_FALSE(logits.ok());
  EXPECT_NE(logits.status().message().find("the cache is on cpu, the model on cuda:0"), std::string::npos)
      << logits.status();
}

INSTANTIATE_TEST_SUITE_P(Formats, LlamaCudaDevice,
                         ::testing::Values(WeightFormat::kFloat32, WeightFormat::kBfloat16, WeightFormat::kInt4),
                         [](const ::testing::TestParamInfo<WeightFormat>& param_info) {
                           return std::string(weight_format_name(param_info.param));
                         });

}  // namespace
}  // namespace relax::models
