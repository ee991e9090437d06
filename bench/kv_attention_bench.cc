// "kv_cache.attention" (relax/runtime/kv_cache.h) at TinyLlama's sizes: Hq 32, Hkv 4, d 64.
//
//   BM_Decode/ctx/b/threads     one new token per row over ctx keys (the row's cache holds
//                               ctx - 1): GB/s of keys and values read (b * ctx * Hkv * d * 4 * 2);
//   BM_DecodeLoop/ctx/b/1       the same with a plain loop (per query head: scores, a
//                               two-pass softmax, the weighted sum), one thread: the baseline;
//   BM_Prefill/n/1/threads      n new tokens into an empty cache, causal: GFLOP/s
//                               (4 * d * Hq * n (n + 1) / 2: the dot products and the weighted
//                               sums);
//   BM_PrefillLoop/n/1/1        the plain loop for the same.
// The cache is not advanced between iterations: every one writes the same positions.
// Threads: the kernel thread budget (relax/runtime/thread_budget.h); wall time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "relax/runtime/kv_cache.h"
#include "relax/runtime/thread_budget.h"

namespace {

using relax::runtime::KVCache;
using relax::runtime::Tensor;
using relax::runtime::Value;

constexpr int64_t kHq = 32, kHkv = 4, kD = 64;

Tensor random_tensor(std::vector<int64_t> shape, uint32_t seed) {
  int64_t count = 1;
  for (int64_t x : shape) count *= x;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = dist(gen);
  return *Tensor::from_vector(std::move(shape), v);
}

struct Step {
  KVCache cache;
  std::vector<Value> args;
};

// b rows of n new tokens on sequences 0..b-1, each holding `held` tokens of random keys.
Step make_step(int64_t b, int64_t n, int64_t held) {
  Step s;
  s.cache = *KVCache::create(1, b, held + n, kHkv, kD);
  Tensor keys = random_tensor({b, held + n, kHkv, kD}, 1);
  Tensor values = random_tensor({b, held + n, kHkv, kD}, 2);
  (void)s.cache.keys(0).copy_from(keys);
  (void)s.cache.values(0).copy_from(values);
  std::vector<int64_t> seqs;
  for (int64_t r = 0; r < b; ++r) seqs.push_back(r);
  (void)s.cache.advance(seqs, held);
  s.args = {random_tensor({b, n, kHq, kD}, 3), random_tensor({b, n, kHkv, kD}, 4),
            random_tensor({b, n, kHkv, kD}, 5), s.cache.keys(0),
            s.cache.values(0),                  s.cache.lengths(),
            *Tensor::from_vector({b}, seqs),    random_tensor({b, n, kHq, kD}, 6)};
  return s;
}

// The baseline: the same attention by plain loops (the cache already holds the new keys:
// the copy is left out).
void plain_loop(const Step& s, int64_t b, int64_t n, int64_t held, std::vector<float>& scores) {
  const float* q = s.args[0].tensor_or_die().data_as_or_die<float>();
  const float* keys = s.cache.keys(0).data_as_or_die<float>();
  const float* values = s.cache.values(0).data_as_or_die<float>();
  float* out = s.args[7].tensor_or_die().data_as_or_die<float>();
  const int64_t cap = s.cache.capacity();
  const float scale = 1.0f / std::sqrt(static_cast<float>(kD));
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t h = 0; h < kHq; ++h) {
        const int64_t g = h / (kHq / kHkv);
        const float* qrow = q + ((r * n + i) * kHq + h) * kD;
        const int64_t keys_seen = held + i + 1;
        float max_score = -INFINITY;
        for (int64_t j = 0; j < keys_seen; ++j) {
          const float* krow = keys + ((r * cap + j) * kHkv + g) * kD;
          float dot = 0;
          for (int64_t t = 0; t < kD; ++t) dot += qrow[t] * krow[t];
          scores[static_cast<size_t>(j)] = dot * scale;
          max_score = std::max(max_score, dot * scale);
        }
        float sum = 0;
        for (int64_t j = 0; j < keys_seen; ++j) sum += (scores[static_cast<size_t>(j)] = std::exp(scores[static_cast<size_t>(j)] - max_score));
        float* orow = out + ((r * n + i) * kHq + h) * kD;
        for (int64_t t = 0; t < kD; ++t) orow[t] = 0;
        for (int64_t j = 0; j < keys_seen; ++j) {
          const float* vrow = values + ((r * cap + j) * kHkv + g) * kD;
          const float p = scores[static_cast<size_t>(j)] / sum;
          for (int64_t t = 0; t < kD; ++t) orow[t] += p * vrow[t];
        }
      }
    }
  }
}

double decode_bytes(int64_t b, int64_t ctx) { return static_cast<double>(b * ctx * kHkv * kD * 4 * 2); }
double prefill_flops(int64_t b, int64_t n) { return 4.0 * kD * kHq * static_cast<double>(b * n * (n + 1) / 2); }

void BM_Decode(benchmark::State& state) {
  const int64_t ctx = state.range(0), b = state.range(1);
  relax::runtime::set_kernel_thread_budget(static_cast<int32_t>(state.range(2)));
  Step s = make_step(b, 1, ctx - 1);
  for (auto _ : state) {
    absl::Status status = relax::runtime::kv_cache_attention(s.args);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
  }
  state.counters["GB/s"] = benchmark::Counter(decode_bytes(b, ctx) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  relax::runtime::set_kernel_thread_budget(0);
}

void BM_DecodeLoop(benchmark::State& state) {
  const int64_t ctx = state.range(0), b = state.range(1);
  Step s = make_step(b, 1, ctx - 1);
  std::vector<float> scores(static_cast<size_t>(ctx));
  for (auto _ : state) plain_loop(s, b, 1, ctx - 1, scores);
  state.counters["GB/s"] = benchmark::Counter(decode_bytes(b, ctx) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Prefill(benchmark::State& state) {
  const int64_t n = state.range(0), b = state.range(1);
  relax::runtime::set_kernel_thread_budget(static_cast<int32_t>(state.range(2)));
  Step s = make_step(b, n, 0);
  for (auto _ : state) {
    absl::Status status = relax::runtime::kv_cache_attention(s.args);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(prefill_flops(b, n) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  relax::runtime::set_kernel_thread_budget(0);
}

void BM_PrefillLoop(benchmark::State& state) {
  const int64_t n = state.range(0), b = state.range(1);
  Step s = make_step(b, n, 0);
  std::vector<float> scores(static_cast<size_t>(n));
  for (auto _ : state) plain_loop(s, b, n, 0, scores);
  state.counters["GFLOP/s"] = benchmark::Counter(prefill_flops(b, n) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Decode)->ArgsProduct({{128, 1024}, {1, 4}, {1, 2}})->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_DecodeLoop)->ArgsProduct({{128, 1024}, {1, 4}, {1}})->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Prefill)->ArgsProduct({{128, 512}, {1}, {1, 2}})->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_PrefillLoop)->ArgsProduct({{128, 512}, {1}, {1}})->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
