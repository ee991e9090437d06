// The main demo (./dev.sh demo): a small Llama-architecture model end to end.
//
//   llama_demo [f32|bf16|int4|f16]
//
// 1. writes a seeded random-weight parameter file (safetensors) for a small config;
// 2. compiles prefill and decode once, showing each pass as it runs, then prints the per-pass
//    timings and the memory planner's figures;
// 3. maps the weights (no copy) and makes a KV cache;
// 4. prefills two sequences of different lengths, one call each, then decodes both together,
//    token by token, streaming the tokens, all without recompiling;
// 5. checks every logit against the plain C++ reference (relax/models/llama_reference.h) and
//    prints the rates. Exit status 1 on any error or mismatch.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "relax/models/llama.h"
#include "relax/models/llama_model.h"
#include "relax/models/llama_reference.h"
#include "relax/transform/schedule.h"

namespace {

using relax::models::LlamaConfig;
using relax::models::LlamaModel;
using relax::runtime::Tensor;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int fail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "llama_demo: %s: %s\n", what.c_str(), std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  LlamaConfig config = LlamaConfig::small();
  if (argc > 1) {
    absl::StatusOr<relax::models::WeightFormat> format = relax::models::parse_weight_format(argv[1]);
    if (!format.ok()) return fail("argument", format.status());
    config.weights = *format;
  }
  const std::string path = (std::filesystem::temp_directory_path() /
                            (std::string("relax_llama_demo_") + relax::models::weight_format_name(config.weights) +
                             ".safetensors"))
                               .string();
  std::printf("== model: %s (%.1f M parameters)\n", config.to_string().c_str(),
              static_cast<double>(config.parameter_count()) * 1e-6);
  if (absl::Status s = relax::models::write_random_weights(config, /*seed=*/7, path); !s.ok()) {
    return fail("writing the weights", s);
  }
  std::printf("   weights: %s (%.1f MB, seeded random)\n", path.c_str(), static_cast<double>(config.weight_bytes()) * 1e-6);

  std::printf("== compile (prefill and decode, once)\n");
  std::string report;
  relax::models::CompileOptions options;
  options.report = &report;
  options.progress = [](const std::string& line) { std::printf("   %s\n", line.c_str()); };
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<LlamaModel> model = LlamaModel::compile(config, options);
  if (!model.ok()) return fail("compiling", model.status());
  std::printf("   compiled in %.2f s\n%s\n", seconds_since(start), report.c_str());
  if (absl::Status s = model->bind_weights(path); !s.ok()) return fail("binding the weights", s);
  absl::StatusOr<relax::runtime::KVCache> cache = model->new_cache();
  if (!cache.ok()) return fail("making the cache", cache.status());
  std::printf("== KV cache: %lld sequences x %lld tokens, %.1f MB\n", static_cast<long long>(cache->max_batch()),
              static_cast<long long>(cache->capacity()), static_cast<double>(cache->bytes()) * 1e-6);

  // Two prompts of different lengths (pseudo-random token ids), one prefill call each.
  std::vector<std::vector<int64_t>> sequences = {{}, {}};
  for (int64_t i = 0; i < 11; ++i) sequences[0].push_back((i * 37 + 5) % config.vocab);
  for (int64_t i = 0; i < 40; ++i) sequences[1].push_back((i * 101 + 3) % config.vocab);
  std::vector<std::vector<std::vector<float>>> logits(2);  // per sequence, per step
  auto keep = [&](size_t seq, const Tensor& t, int64_t row) {
    const float* data = static_cast<const float*>(t.data()) + row * config.vocab;
    logits[seq].emplace_back(data, data + config.vocab);
  };
  std::printf("== prefill\n");
  for (size_t s = 0; s < 2; ++s) {
    start = std::chrono::steady_clock::now();
    relax::runtime::CallMemoryStats stats;
    absl::StatusOr<Tensor> out = model->forward({sequences[s]}, {static_cast<int64_t>(s)}, *cache, &stats);
    if (!out.ok()) return fail("prefill", out.status());
    const double t = seconds_since(start);
    std::printf("   sequence %zu: %zu tokens in %.1f ms (%.0f tokens/s)%s\n", s, sequences[s].size(), t * 1e3,
                static_cast<double>(sequences[s].size()) / t,
                s == 0 ? "  (the first call also prepares the library calls)" : "");
    if (s == 1) {
      std::printf("   intermediates: one arena of %.1f MB for every prompt length (planned against the declared "
                  "bounds b <= %lld, n <= %lld)\n",
                  static_cast<double>(stats.arena_bytes) * 1e-6, static_cast<long long>(config.max_batch),
                  static_cast<long long>(config.max_context));
    }
    keep(s, *out, 0);
    sequences[s].push_back(LlamaModel::argmax(*out)[0]);
  }
  const int steps = 8;
  std::printf("== decode: both sequences together, %d steps\n   tokens:", steps);
  start = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    absl::StatusOr<Tensor> out = model->forward({{sequences[0].back()}, {sequences[1].back()}}, {0, 1}, *cache);
    if (!out.ok()) return fail("decode", out.status());
    const std::vector<int64_t> next = LlamaModel::argmax(*out);
    for (size_t s = 0; s < 2; ++s) {
      keep(s, *out, static_cast<int64_t>(s));
      sequences[s].push_back(next[s]);
    }
    std::printf(" (%lld, %lld)", static_cast<long long>(next[0]), static_cast<long long>(next[1]));
    std::fflush(stdout);
  }
  const double decode_s = seconds_since(start);
  std::printf("\n   %d steps x 2 sequences in %.1f ms (%.0f tokens/s)\n", steps, decode_s * 1e3,
              2.0 * steps / decode_s);

  std::printf("== check against the plain C++ reference\n");
  absl::StatusOr<relax::runtime::SafetensorsFile> file = relax::runtime::SafetensorsFile::open(path);
  if (!file.ok()) return fail("reading the weights", file.status());
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : file->names()) tensors[name] = *file->tensor(name);
  absl::StatusOr<relax::models::ReferenceLlama> reference = relax::models::ReferenceLlama::create(config, tensors);
  if (!reference.ok()) return fail("the reference", reference.status());
  double worst = 0;
  for (size_t s = 0; s < 2; ++s) {
    // The reference runs the whole sequence at once (no cache); logit k of ours follows the
    // prompt and k generated tokens.
    const std::vector<int64_t> all(sequences[s].begin(), sequences[s].end() - 1);
    const std::vector<std::vector<double>> expected = reference->logits(all);
    const size_t prompt = all.size() - (logits[s].size() - 1);
    for (size_t k = 0; k < logits[s].size(); ++k) {
      worst = std::max(worst, relax::models::ReferenceLlama::relative_error(logits[s][k].data(), expected[prompt - 1 + k]));
    }
  }
  // float32 against double: 1e-4; int4 weights times int8-quantised activations (the default
  // on CPUs with AVX-512 VNNI; `-exact-float` in the target keeps float products): 3e-2.
  const bool int8 = config.weights == relax::models::WeightFormat::kInt4 &&
                    relax::transform::schedule::cpu_schedule_options(options.target).int8_rows > 0;
  const double tolerance = int8 ? 3e-2 : 1e-4;
  std::printf("   %zu logit rows, largest difference %.2e of the largest logit (tolerance %.0e%s): %s\n",
              logits[0].size() + logits[1].size(), worst, tolerance, int8 ? ", int8 activations" : "",
              worst <= tolerance ? "match" : "MISMATCH");
  std::filesystem::remove(path);
  return worst <= tolerance ? 0 : 1;
}
