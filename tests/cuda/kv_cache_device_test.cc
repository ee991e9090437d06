// "kv_cache.attention" on CUDA tensors against the CPU function on the same inputs: the
// appended keys and values and the attention output, for decode and prefill steps, grouped
// query heads, contexts longer than one key tile (128) and head dims 64 and 256. Skipped,
// visibly, without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <random>
#include <vector>

#include "cuda_device.h"
#include "relax/runtime/kv_cache.h"
#include "relax/runtime/value.h"

namespace relax::runtime {
namespace {

struct AttentionDeviceCase {
  int64_t b, n, hq, hkv, d, capacity;
  std::vector<int64_t> lengths;  // per sequence of the cache, before the step
  std::vector<int64_t> seq_ids;  // per row
};

// Names the case in test listings ("b3 n1 hq4 hkv4 d64 cap512") instead of a byte dump.
void PrintTo(const AttentionDeviceCase& c, std::ostream* os) {
  *os << "b" << c.b << " n" << c.n << " hq" << c.hq << " hkv" << c.hkv << " d" << c.d << " cap" << c.capacity;
}

Tensor attention_device_random(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = dist(gen);
  absl::StatusOr<Tensor> t = Tensor::from_vector(std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

Tensor attention_device_to(const Tensor& t, Device device) {
  absl::StatusOr<Tensor> copy = t.to(device);
  EXPECT_TRUE(copy.ok()) << copy.status();
  return *copy;
}

float attention_device_max_difference(const Tensor& gpu, const Tensor& cpu) {
  const Tensor host = attention_device_to(gpu, Device::cpu());
  const auto* a = static_cast<const float*>(host.data());
  const auto* b = static_cast<const float*>(cpu.data());
  float worst = 0;
  for (int64_t i = 0; i < cpu.numel(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

class KVCacheAttentionDevice : public ::testing::TestWithParam<AttentionDeviceCase> {};

TEST_P(KVCacheAttentionDevice, MatchesTheCpuFunction) {
  RELAX_REQUIRE_CUDA_DEVICE();
  const AttentionDeviceCase& c = GetParam();
  const int64_t batch = static_cast<int64_t>(c.lengths.size());
  // The cache's old contents, random everywhere (positions past a length too).
  Tensor keys = attention_device_random({batch, c.capacity, c.hkv, c.d}, 1);
  Tensor values = attention_device_random({batch, c.capacity, c.hkv, c.d}, 2);
  Tensor q = attention_device_random({c.b, c.n, c.hq, c.d}, 3);
  Tensor k = attention_device_random({c.b, c.n, c.hkv, c.d}, 4);
  Tensor v = attention_device_random({c.b, c.n, c.hkv, c.d}, 5);
  absl::StatusOr<Tensor> lengths = Tensor::from_vector({batch}, c.lengths);
  absl::StatusOr<Tensor> ids = Tensor::from_vector({c.b}, c.seq_ids);
  absl::StatusOr<Tensor> out = Tensor::empty({c.b, c.n, c.hq, c.d}, DataType::float32());
  ASSERT_TRUE(lengths.ok() && ids.ok() && out.ok());

  const Device gpu = Device::cuda();
  std::vector<Value> device_args = {attention_device_to(q, gpu),       attention_device_to(k, gpu),
                                    attention_device_to(v, gpu),       attention_device_to(keys, gpu),
                                    attention_device_to(values, gpu),  attention_device_to(*lengths, gpu),
                                    attention_device_to(*ids, gpu),    attention_device_to(*out, gpu)};
  std::vector<Value> host_args = {q, k, v, keys, values, *lengths, *ids, *out};
  ASSERT_TRUE(kv_cache_attention(host_args).ok());
  absl::Status s = kv_cache_attention(device_args);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_LT(attention_device_max_difference(device_args[7].tensor_or_die(), *out), 1e-4f);
  EXPECT_EQ(attention_device_max_difference(device_args[3].tensor_or_die(), keys), 0.f);
  EXPECT_EQ(attention_device_max_difference(device_args[4].tensor_or_die(), values), 0.f);
}

INSTANTIATE_TEST_SUITE_P(
    Steps, KVCacheAttentionDevice,
    ::testing::Values(AttentionDeviceCase{1, 1, 8, 2, 64, 256, {100}, {0}},                  // decode, GQA
                      AttentionDeviceCase{3, 1, 4, 4, 64, 512, {0, 300, 129}, {2, 0, 1}},    // rows out of order
                      AttentionDeviceCase{2, 17, 8, 2, 64, 256, {5, 130}, {1, 0}},           // prefill over 2 tiles
                      AttentionDeviceCase{1, 3, 2, 1, 256, 64, {20}, {0}},                    // d = 256
                      AttentionDeviceCase{1, 40, 4, 2, 32, 64, {0}, {0}}));                   // first prompt

TEST(KVCacheAttentionDevice, ACacheOnTheDeviceStartsEmptyAndAdvances) {
  RELAX_REQUIRE_CUDA_DEVICE();
  absl::StatusOr<KVCache> cache = KVCache::create(2, 3, 16, 2, 8, Device::cuda());
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->keys(1).device(), Device::cuda());
  const std::vector<int64_t> seqs = {2};
  ASSERT_TRUE(cache->advance(seqs, 5).ok());
  const Tensor lengths = attention_device_to(cache->lengths(), Device::cpu());
  EXPECT_EQ(static_cast<const int64_t*>(lengths.data())[2], 5);
  EXPECT_EQ(cache->length(2), 5);
  cache->reset_all();
  const Tensor cleared = attention_device_to(cache->lengths(), Device::cpu());
  EXPECT_EQ(static_cast<const int64_t*>(cleared.data())[2], 0);
}

}  // namespace
}  // namespace relax::runtime
