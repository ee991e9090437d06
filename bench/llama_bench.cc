// The language model end to end (relax/models/llama_model.h) against the machine, in one run:
//   BM_DramRead/streams:S[/huge] the DRAM read bandwidth (GB/s), one or 8 streams per thread,
//                               4 KiB or huge pages (bandwidth.h): the best is decode's roofline;
//   BM_Compile/<w>              build_llama compiled with an empty JIT cache (cold_s) and again
//                               (cached_s), once;
//   BM_Decode/<w>/b:B/ctx:C     one decode step of B (1, 4, 8, 16) sequences holding C tokens
//                               each: tokens/s,
//                               GB/s of weights read, roofline = GB/s / BM_DramRead's GB/s
//                               (shown with Google Benchmark's "/s" suffix: it is a fraction);
//   BM_OneDnnGemm/n:N           oneDNN sgemm over the model's matmul shapes at M = N rows (every
//                               layer's seven, and the LM head's one row): the prefill yardstick;
//   BM_Prefill/<w>/n:N          one prompt of N tokens: tokens/s, sgemm_fraction = the sgemm
//                               time of the same shapes / the prefill time;
// and in every row peak_rss_MB (the process's peak so far) and arena_MB (the memory plan's
// intermediate storage of one call). <w> is the weight format (f32, bf16, int4, f16).
//
// The model: RELAX_LLAMA_SHAPE (tiny-llama, the default: TinyLlama-1.1B's shape; or small),
// weights seeded random in RELAX_LLAMA_DIR (default /tmp/relax_llama_bench; written on first
// use: 4.4 GB for f32), formats RELAX_LLAMA_FORMATS (default f32,bf16,int4,f16), the target
// RELAX_LLAMA_TARGET (default "cpu"; the model's max batch is 16); RELAX_LLAMA_PREPACK=1
// lets oneDNN keep prepacked copies of the float32 weights (twice the memory); RELAX_LLAMA_JOIN=0
// keeps each projection on its own weight (q/k/v and gate/up not joined at bind);
// RELAX_LLAMA_REPACK (timed, the default; always; never) is oneDNN's repacking policy for plain
// weights of many rows (relax/runtime/onednn.h), its copies' bytes shown as repacked_MB. Threads:
// OMP_NUM_THREADS (the kernels' budget, oneDNN's, the DRAM readers). The cache holds zeros: a
// decode step at context C costs what it costs on real keys.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bandwidth.h"
#include "relax/models/llama.h"
#include "relax/models/llama_model.h"
#include "relax/runtime/onednn.h"

#ifdef RELAX_BENCH_ONEDNN
#include "oneapi/dnnl/dnnl.h"
#endif

namespace {

using relax::models::LlamaConfig;
using relax::models::LlamaModel;
using relax::models::WeightFormat;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "llama_bench: %s\n", message.c_str());
  std::abort();
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

int threads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  const int n = env != nullptr ? std::atoi(env) : 0;
  return n > 0 ? n : static_cast<int>(std::thread::hardware_concurrency());
}

LlamaConfig config_for(WeightFormat format) {
  const std::string shape = env_or("RELAX_LLAMA_SHAPE", "tiny-llama");
  LlamaConfig c = shape == "small" ? LlamaConfig::small() : LlamaConfig::tiny_llama();
  c.weights = format;
  c.max_batch = 16;  // decode rows b = 1, 4, 8, 16
  return c;
}

std::string weights_path(const LlamaConfig& c) {
  const std::filesystem::path dir = env_or("RELAX_LLAMA_DIR", "/tmp/relax_llama_bench");
  std::filesystem::create_directories(dir);
  return (dir / absl::StrCat("llama_h", c.hidden, "_l", c.layers, "_", relax::models::weight_format_name(c.weights),
                             ".safetensors"))
      .string();
}

// RELAX_LLAMA_TARGET: the target in its text form (default "cpu"; "cpu -exact-float" keeps
// float products for int4 weights, the kernels before int8 activations).
relax::Target target() {
  absl::StatusOr<relax::Target> parsed = relax::Target::parse(env_or("RELAX_LLAMA_TARGET", "cpu"));
  if (!parsed.ok()) fail(std::string(parsed.status().message()));
  relax::Target t = *parsed;
  t.threads = threads();
  return t;
}

// RELAX_LLAMA_PREPACK=1: oneDNN keeps prepacked copies of the float32 weights.
// RELAX_LLAMA_JOIN=0: each projection reads its own weight (no q/k/v, gate/up joined at bind).
relax::models::CompileOptions compile_options(const relax::Target& t) {
  relax::models::CompileOptions options;
  options.target = t;
  options.prepack_weights = env_or("RELAX_LLAMA_PREPACK", "0") == "1";
  options.join_projections = env_or("RELAX_LLAMA_JOIN", "1") == "1";
  return options;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// The model of the current format (one at a time: a TinyLlama f32 model maps 4.4 GB).
struct Loaded {
  WeightFormat format;
  std::unique_ptr<LlamaModel> model;
  std::unique_ptr<relax::runtime::KVCache> cache;
};

LlamaModel& model_for(WeightFormat format, relax::runtime::KVCache** cache) {
  static std::optional<Loaded> current;
  if (!current || current->format != format) {
    current.reset();
    const LlamaConfig c = config_for(format);
    const std::string path = weights_path(c);
    if (!std::filesystem::exists(path)) {
      std::fprintf(stderr, "llama_bench: writing %s (%s)\n", path.c_str(), c.to_string().c_str());
      if (absl::Status s = relax::models::write_random_weights(c, 1, path); !s.ok()) fail(std::string(s.message()));
    }
    absl::StatusOr<LlamaModel> m = LlamaModel::compile(c, compile_options(target()));
    if (!m.ok()) fail(std::string(m.status().message()));
    if (absl::Status s = m->bind_weights(path); !s.ok()) fail(std::string(s.message()));
    absl::StatusOr<relax::runtime::KVCache> kv = m->new_cache();
    if (!kv.ok()) fail(std::string(kv.status().message()));
    current = Loaded{format, std::make_unique<LlamaModel>(*std::move(m)),
                     std::make_unique<relax::runtime::KVCache>(*std::move(kv))};
  }
  *cache = current->cache.get();
  return *current->model;
}

void BM_DramRead(benchmark::State& state, int streams, bool huge) {
  relax_bench::dram_read(state, threads(), streams, huge);
}

void BM_Compile(benchmark::State& state, WeightFormat format) {
  const LlamaConfig c = config_for(format);
  relax::Target t = target();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "relax_llama_bench_cold_cache";
  double cold = 0, cached = 0;
  size_t kernels = 0;
  for (auto _ : state) {
    std::filesystem::remove_all(dir);
    t.cache_dir = dir.string();
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<LlamaModel> m = LlamaModel::compile(c, compile_options(t));
    if (!m.ok()) fail(std::string(m.status().message()));
    cold = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    kernels = m->module().executable().kernel_names.size();
    start = std::chrono::steady_clock::now();
    absl::StatusOr<LlamaModel> again = LlamaModel::compile(c, compile_options(t));
    if (!again.ok()) fail(std::string(again.status().message()));
    cached = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::filesystem::remove_all(dir);
  state.counters["cold_s"] = cold;
  state.counters["cached_s"] = cached;
  state.counters["kernels"] = static_cast<double>(kernels);
}

void BM_Decode(benchmark::State& state, WeightFormat format, int64_t batch, int64_t context) {
  relax::runtime::KVCache* cache = nullptr;
  LlamaModel& m = model_for(format, &cache);
  std::vector<int64_t> seqs;
  std::vector<std::vector<int64_t>> tokens;
  for (int64_t r = 0; r < batch; ++r) {
    seqs.push_back(r);
    tokens.push_back({(r * 131 + 7) % m.config().vocab});
  }
  auto fill = [&] {
    cache->reset_all();
    if (absl::Status s = cache->advance(seqs, context); !s.ok()) fail(std::string(s.message()));
  };
  relax::runtime::CallMemoryStats stats;
  fill();
  if (!m.forward(tokens, seqs, *cache, &stats).ok()) fail("decode failed");  // warm: plans, packed weights
  for (auto _ : state) {
    state.PauseTiming();
    fill();
    state.ResumeTiming();
    absl::StatusOr<relax::runtime::Tensor> logits = m.forward(tokens, seqs, *cache);
    if (!logits.ok()) fail(std::string(logits.status().message()));
  }
  const double bytes = static_cast<double>(m.config().decode_bytes_per_step(batch));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // The roofline: a step can take no less than its weight bytes at the best DRAM read rate of
  // the BM_DramRead rows, which run first.
  if (relax_bench::last_dram_gbps() > 0) {
    state.counters["roofline"] = benchmark::Counter(bytes * 1e-9 / relax_bench::last_dram_gbps(),
                                                    benchmark::Counter::kIsIterationInvariantRate);
  }
  state.counters["arena_MB"] = static_cast<double>(stats.arena_bytes) * 1e-6;
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

// The model's matmul shapes at M rows: every layer's seven, and the LM head's one row.
struct Gemm {
  int64_t m, k, n, times;
};
std::vector<Gemm> model_gemms(const LlamaConfig& c, int64_t rows) {
  const int64_t q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  return {{rows, c.hidden, q, c.layers},  {rows, c.hidden, kv, 2 * c.layers}, {rows, q, c.hidden, c.layers},
          {rows, c.hidden, c.intermediate, 2 * c.layers}, {rows, c.intermediate, c.hidden, c.layers},
          {1, c.hidden, c.vocab, 1}};
}

double sgemm_seconds = 0;  // of the last BM_OneDnnGemm, for the BM_Prefill after it

#ifdef RELAX_BENCH_ONEDNN
void BM_OneDnnGemm(benchmark::State& state, int64_t rows) {
  const LlamaConfig c = config_for(WeightFormat::kFloat32);
  std::vector<Gemm> gemms = model_gemms(c, rows);
  std::vector<std::vector<float>> a, b, out;
  for (const Gemm& g : gemms) {
    a.emplace_back(static_cast<size_t>(g.m * g.k), 0.01f);
    b.emplace_back(static_cast<size_t>(g.k * g.n), 0.02f);
    out.emplace_back(static_cast<size_t>(g.m * g.n));
  }
  double total = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < gemms.size(); ++i) {
      const Gemm& g = gemms[i];
      // Each layer's weights are other bytes: one product per layer, the same buffers (the
      // weights of a 1.1 B model do not stay in cache between layers either way at these M).
      for (int64_t t = 0; t < g.times; ++t) {
        dnnl_sgemm('N', 'N', g.m, g.n, g.k, 1.0f, a[i].data(), g.k, b[i].data(), g.n, 0.0f, out[i].data(), g.n);
      }
    }
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++runs;
  }
  sgemm_seconds = total / static_cast<double>(runs);
  double flops = 0;
  for (const Gemm& g : gemms) flops += 2.0 * static_cast<double>(g.m * g.k * g.n * g.times);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
#endif

void BM_Prefill(benchmark::State& state, WeightFormat format, int64_t n) {
  relax::runtime::KVCache* cache = nullptr;
  LlamaModel& m = model_for(format, &cache);
  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < n; ++i) prompt.push_back((i * 37 + 11) % m.config().vocab);
  relax::runtime::CallMemoryStats stats;
  // Warm, three times: the first call compiles nothing (done at load) but touches the mapped
  // weights and creates oneDNN's primitives; the second lets the plain-weights calls make their
  // per-shape choice of repacking (timed on calls after a weights tensor's first); the third
  // makes the copies of the weights that chose it.
  for (int warm = 0; warm < 3; ++warm) {
    cache->reset_all();
    if (!m.forward({prompt}, {0}, *cache, &stats).ok()) fail("prefill failed");
  }
  double total = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    cache->reset_all();
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<relax::runtime::Tensor> logits = m.forward({prompt}, {0}, *cache);
    if (!logits.ok()) fail(std::string(logits.status().message()));
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++runs;
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  if (sgemm_seconds > 0) state.counters["sgemm_fraction"] = sgemm_seconds / (total / static_cast<double>(runs));
  state.counters["arena_MB"] = static_cast<double>(stats.arena_bytes) * 1e-6;
  state.counters["peak_rss_MB"] = peak_rss_mb();
  state.counters["repacked_MB"] = static_cast<double>(relax::runtime::onednn_stats().repacked_weight_bytes) * 1e-6;
}

[[maybe_unused]] const bool registered = [] {
  using relax::runtime::OnednnRepack;
  const std::string repack = env_or("RELAX_LLAMA_REPACK", "timed");
  if (repack != "timed" && repack != "always" && repack != "never") {
    fail("RELAX_LLAMA_REPACK: expected timed, always or never, got " + repack);
  }
  relax::runtime::set_onednn_repack({repack == "always"  ? OnednnRepack::Mode::kAlways
                                     : repack == "never" ? OnednnRepack::Mode::kNever
                                                         : OnednnRepack::Mode::kTimed,
                                     -1});
  auto add = [](const std::string& name, auto fn) {
    return benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  // The roofline: one stream per thread, 8 streams, 8 streams over huge pages; the best is the
  // denominator of every decode row's `roofline`.
  add("BM_DramRead/streams:1", [](benchmark::State& s) { BM_DramRead(s, 1, false); });
  add("BM_DramRead/streams:8", [](benchmark::State& s) { BM_DramRead(s, 8, false); });
  add("BM_DramRead/streams:8/huge", [](benchmark::State& s) { BM_DramRead(s, 8, true); });
  for (absl::string_view name : absl::StrSplit(env_or("RELAX_LLAMA_FORMATS", "f32,bf16,int4,f16"), ',')) {
    absl::StatusOr<WeightFormat> format = relax::models::parse_weight_format(std::string(name));
    if (!format.ok()) fail(std::string(format.status().message()));
    const std::string w = relax::models::weight_format_name(*format);
    add("BM_Compile/" + w, [f = *format](benchmark::State& s) { BM_Compile(s, f); })->Iterations(1);
    for (int64_t context : {128, 1024}) {
      if (context >= config_for(*format).max_context) continue;  // (the small shape holds 256)
      for (int64_t batch : {1, 4, 8, 16}) {
        add(absl::StrCat("BM_Decode/", w, "/b:", batch, "/ctx:", context),
            [f = *format, batch, context](benchmark::State& s) { BM_Decode(s, f, batch, context); })
            ->MinTime(2.0);
      }
    }
    for (int64_t n : {128, 512}) {
      if (n > config_for(*format).max_context) continue;
#ifdef RELAX_BENCH_ONEDNN
      add(absl::StrCat("BM_OneDnnGemm/n:", n), [n](benchmark::State& s) { BM_OneDnnGemm(s, n); })->MinTime(2.0);
#endif
      add(absl::StrCat("BM_Prefill/", w, "/n:", n), [f = *format, n](benchmark::State& s) { BM_Prefill(s, f, n); })
          ->MinTime(2.0);
    }
  }
  return true;
}();

}  // namespace
