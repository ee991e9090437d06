// relax::models::LlamaModel: a compiled Llama decoder bound to a memory-mapped parameter file,
// with prefill, decode and greedy generation over a runtime::KVCache.
//
//   absl::StatusOr<LlamaModel> m = LlamaModel::load("model.safetensors");   // config from the file
//   absl::StatusOr<runtime::KVCache> cache = m->new_cache();
//   absl::StatusOr<std::vector<std::vector<int64_t>>> out =
//       m->generate({{1, 15, 27}, {1, 9}}, /*max_new_tokens=*/16, *cache,
//                   [](size_t seq, int64_t token) {
//                     std::printf("%zu: %lld\n", seq, (long long)token);
//                     return true;  // false stops that prompt
//                   });
//
// The weights are the file's bytes (runtime::SafetensorsFile maps it; no copy, no IR constant):
// every call passes them to the compiled functions after the tokens and the cache. Compiled for
// a cuda target (CompileOptions::target = *Target::parse("cuda -arch=sm_90")), the model copies the weights to
// the GPU when they are bound, keeps its cache there (new_cache), sends each call's tokens and
// ids over and brings the logits back to the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/models/llama.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/kv_cache.h"
#include "relax/runtime/module.h"
#include "relax/runtime/safetensors.h"
#include "relax/runtime/bound_weights.h"
#include "relax/support/target.h"

namespace relax::models {

struct CompileOptions {
  Target target;
  /// Called with one line per step of the compilation: each pass as it starts
  /// ("pass 12/31 fuse-ops"), then the kernels ("kernels: 41 distinct of 93 ...").
  std::function<void(const std::string&)> progress;
  /// When set, receives the per-pass timing table and the memory plan's statistics.
  std::string* report = nullptr;
  /// Let library calls keep prepacked copies of the weights (build_llama's prepack_weights).
  bool prepack_weights = false;
  /// Join each layer's q/k/v and gate/up weights into one matrix each when they are bound (one
  /// product per group; the joined copies replace the file's pages of the separate ones).
  /// Off: combine-parallel-matmul is disabled and each projection reads its own weight.
  bool join_projections = true;
};

/// Called for each generated token: the index of the prompt, the token; false stops that prompt.
using TokenCallback = std::function<bool(size_t prompt, int64_t token)>;

class LlamaModel {
 public:
  /// Compiles build_llama(config) (a second compile of the same config and target is a JIT
  /// cache hit) without weights; bind_weights must follow.
  static absl::StatusOr<LlamaModel> compile(const LlamaConfig& config, const CompileOptions& options = {});
  /// Maps the parameter file, reads the config from its metadata, compiles and binds.
  static absl::StatusOr<LlamaModel> load(const std::string& path, const CompileOptions& options = {});

  /// Maps `path` and checks that it holds every tensor of weight_specs(config()) with its
  /// shape and dtype (errors name the file and the tensor) and that its metadata describe the
  /// same model.
  absl::Status bind_weights(const std::string& path);

  const LlamaConfig& config() const { return config_; }
  const runtime::Module& module() const { return module_; }
  /// The bound weights and what the module computed from them at bind (the joined q/k/v and
  /// gate/up matrices: bound_weights().computed_bytes() is the memory that took; the file's
  /// pages of the weights only the join read are given back to the kernel).
  const runtime::BoundWeights& bound_weights() const { return weights_; }

  /// An empty cache of max_batch sequences of max_context tokens.
  absl::StatusOr<runtime::KVCache> new_cache() const;

  /// Appends tokens[r] to sequence seq_ids[r] of `cache` (every row the same length n >= 1;
  /// decode when n == 1, prefill otherwise) and returns the float32 logits (rows, vocab) of
  /// each row's last token. Errors (nothing appended): no weights bound, rows of different
  /// lengths, a token outside the vocabulary, a sequence id out of range or repeated, more
  /// rows than max_batch, the cache's capacity exceeded.
  /// `stats`, when given, receives the call's memory figures (the memory plan's arena).
  absl::StatusOr<runtime::Tensor> forward(const std::vector<std::vector<int64_t>>& tokens,
                                          const std::vector<int64_t>& seq_ids, runtime::KVCache& cache,
                                          runtime::CallMemoryStats* stats = nullptr) const;

  /// Greedy generation: prompt i becomes sequence i of `cache` (which is reset), prefilled one
  /// prompt at a time (their lengths may differ), then decoded together, one token per step,
  /// until each has max_new_tokens or its callback returned false. Returns the new tokens.
  /// Before the first step: InvalidArgument when max_new_tokens < 0, or when a prompt's
  /// length + max_new_tokens - 1 (the positions it needs: the last new token is not cached)
  /// exceeds the cache's capacity, naming the prompt, both numbers and the capacity.
  absl::StatusOr<std::vector<std::vector<int64_t>>> generate(const std::vector<std::vector<int64_t>>& prompts,
                                                             int64_t max_new_tokens, runtime::KVCache& cache,
                                                             const TokenCallback& on_token = {}) const;

  /// The index of the largest of each row of (rows, vocab) logits.
  static std::vector<int64_t> argmax(const runtime::Tensor& logits);

 private:
  LlamaConfig config_;
  runtime::Module module_;
  std::shared_ptr<const runtime::SafetensorsFile> file_;
  runtime::BoundWeights weights_;
  Device device_ = Device::cpu();         // where the module runs: cpu, or cuda:0 for a cuda target
};

}  // namespace relax::models
