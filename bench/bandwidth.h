// The DRAM read bandwidth, the roofline of weight-streaming code: a streaming float sum over
// 256 MiB, each thread summing its slice with 4 x 8 independent float lanes. Header-only: each
// bench/<name>.cc is its own program (matvec_bench, llama_bench).
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace relax_bench {

using Lanes = float __attribute__((vector_size(32)));

inline float sum_slice(const float* p, int64_t n) {
  Lanes a = {}, b = {}, c = {}, d = {};
  for (int64_t i = 0; i + 32 <= n; i += 32) {
    Lanes x, y, z, w;
    __builtin_memcpy(&x, p + i, 32);
    __builtin_memcpy(&y, p + i + 8, 32);
    __builtin_memcpy(&z, p + i + 16, 32);
    __builtin_memcpy(&w, p + i + 24, 32);
    a += x;
    b += y;
    c += z;
    d += w;
  }
  const Lanes s = (a + b) + (c + d);
  float total = 0;
  for (int l = 0; l < 8; ++l) total += s[l];
  return total;
}

/// The GB/s of the last dram_read run in this process (0 before any): the roofline that other
/// rows of the same run divide by.
inline double& last_dram_gbps() {
  static double gbps = 0;
  return gbps;
}

/// The DRAM read bandwidth with `threads` reader threads (the calling one included): GB/s.
inline void dram_read(benchmark::State& state, int threads) {
  constexpr int64_t kFloats = int64_t{256} << 20 >> 2;  // 256 MiB
  static std::vector<float> buffer(kFloats, 1.0f);
  const int t = threads;
  std::vector<float> partial(static_cast<size_t>(t));
  auto slice = [&](int w) {
    const int64_t begin = kFloats / t * w, end = w + 1 == t ? kFloats : kFloats / t * (w + 1);
    partial[static_cast<size_t>(w)] = sum_slice(buffer.data() + begin, end - begin);
  };
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    // The calling thread reads a slice too (with one thread, the only one: its CPU time is
    // then comparable with that of the one-thread kernels).
    std::vector<std::thread> workers;
    for (int w = 1; w < t; ++w) workers.emplace_back(slice, w);
    slice(0);
    for (std::thread& w : workers) w.join();
    benchmark::DoNotOptimize(partial.data());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  last_dram_gbps() = static_cast<double>(kFloats * 4) * 1e-9 * static_cast<double>(state.iterations()) / seconds;
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(kFloats * 4) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = t;
}

}  // namespace relax_bench
