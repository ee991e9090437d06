// The DRAM read bandwidth, the roofline of weight-streaming code: a float sum over 256 MiB, each
// thread summing its slice with 4 x 8 independent float lanes. Three ways, because one stream per
// thread underestimates what a kernel can read (seen on 2026-12-07, a 2-core Intel Xeon VM: one
// stream per thread 14-15 GB/s, while a matmul kernel reading 16 rows of weights at a time read
// 22 GB/s): the hardware prefetchers follow a stream within a 4 KiB page and start again at the
// next one, so several streams at once keep more reads in flight, and 2 MiB pages take the page
// walks and the page-boundary restarts out:
//   streams = 1, 4 KiB pages       the plain sequential read;
//   streams = S                     each thread reads S parts of its slice side by side;
//   streams = S, huge pages         the same over memory madvise(MADV_HUGEPAGE)d (transparent
//                                   huge pages; where the kernel does not give them, as 4 KiB).
// The roofline the other rows divide by (last_dram_gbps) is the best of those run so far.
// Header-only: each bench/<name>.cc is its own program (matvec_bench, llama_bench).
#pragma once

#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace relax_bench {

using Lanes = float __attribute__((vector_size(32)));

// The sum of `streams` equal parts of p[0, n), read side by side 32 floats at a time each.
inline float sum_streams(const float* p, int64_t n, int streams) {
  Lanes a = {}, b = {}, c = {}, d = {};
  const int64_t part = n / streams / 32 * 32;
  for (int64_t i = 0; i + 32 <= part; i += 32) {
    for (int s = 0; s < streams; ++s) {
      const float* q = p + s * part + i;
      Lanes x, y, z, w;
      __builtin_memcpy(&x, q, 32);
      __builtin_memcpy(&y, q + 8, 32);
      __builtin_memcpy(&z, q + 16, 32);
      __builtin_memcpy(&w, q + 24, 32);
      a += x;
      b += y;
      c += z;
      d += w;
    }
  }
  const Lanes s = (a + b) + (c + d);
  float total = 0;
  for (int l = 0; l < 8; ++l) total += s[l];
  return total;
}

/// The best GB/s of the dram_read runs in this process so far (0 before any): the roofline that
/// other rows of the same run divide by.
inline double& last_dram_gbps() {
  static double gbps = 0;
  return gbps;
}

// 256 MiB of ones, 2 MiB aligned; `huge`: advised as transparent huge pages before it is touched.
inline float* dram_buffer(bool huge) {
  constexpr size_t kBytes = size_t{256} << 20;
  static float* plain = nullptr;
  static float* advised = nullptr;
  float*& p = huge ? advised : plain;
  if (p == nullptr) {
    p = static_cast<float*>(std::aligned_alloc(size_t{2} << 20, kBytes));
    if (p == nullptr) return nullptr;
    if (huge) madvise(p, kBytes, MADV_HUGEPAGE);
    std::fill(p, p + kBytes / 4, 1.0f);
  }
  return p;
}

/// The DRAM read bandwidth with `threads` reader threads (the calling one included), each
/// reading `streams` parts of its slice side by side, over huge pages when `huge`: GB/s.
inline void dram_read(benchmark::State& state, int threads, int streams = 1, bool huge = false) {
  constexpr int64_t kFloats = int64_t{256} << 20 >> 2;  // 256 MiB
  const float* buffer = dram_buffer(huge);
  if (buffer == nullptr) {
    state.SkipWithError("cannot allocate 256 MiB");
    return;
  }
  const int t = threads;
  std::vector<float> partial(static_cast<size_t>(t));
  auto slice = [&](int w) {
    const int64_t begin = kFloats / t * w, end = w + 1 == t ? kFloats : kFloats / t * (w + 1);
    partial[static_cast<size_t>(w)] = sum_streams(buffer + begin, end - begin, streams);
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
  const double gbps = static_cast<double>(kFloats * 4) * 1e-9 * static_cast<double>(state.iterations()) / seconds;
  last_dram_gbps() = std::max(last_dram_gbps(), gbps);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(kFloats * 4) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = t;
  state.counters["streams"] = streams;
  state.counters["huge_pages"] = huge ? 1 : 0;
}

}  // namespace relax_bench
