// LlamaModel: compile, bind the mapped weights, prefill / decode over a KV cache, generate.
#include "relax/models/llama_model.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/codegen/build.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pipeline.h"

namespace relax::models {
namespace {

using runtime::Tensor;
using runtime::Value;

// Reports each step of the pipeline as it starts: "pass k/N name", N the pipeline's top-level
// passes (a group, such as a fixed point, is one step; its passes are not listed).
class ProgressInstrument final : public transform::PassInstrument {
 public:
  ProgressInstrument(std::function<void(const std::string&)> report, const transform::PassManager& passes)
      : report_(std::move(report)) {
    for (const auto& pass : passes.passes()) top_.insert(pass.get());
  }
  void before_pass(const transform::Pass& pass, const IRModule&, const transform::PassContext&) override {
    if (!top_.contains(&pass)) return;
    ++seen_;
    report_(absl::StrCat("pass ", seen_, "/", top_.size(), " ", pass.info().name));
  }

 private:
  std::function<void(const std::string&)> report_;
  std::set<const transform::Pass*> top_;
  size_t seen_ = 0;
};

absl::Status wrong_rows(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("LlamaModel: ", what));
}

}  // namespace

absl::StatusOr<LlamaModel> LlamaModel::compile(const LlamaConfig& config, const CompileOptions& options) {
  absl::StatusOr<IRModule> mod = build_llama(config, options.prepack_weights);
  if (!mod.ok()) return mod.status();
  transform::PassManager passes = transform::default_pipeline(options.target);
  transform::PassContext ctx;
  if (!options.join_projections) ctx.disable_pass("combine-parallel-matmul");
  auto timing = std::make_shared<transform::TimingInstrument>();
  ctx.add_instrument(timing);
  if (options.progress) ctx.add_instrument(std::make_shared<ProgressInstrument>(options.progress, passes));
  BuildInfo info;
  absl::StatusOr<runtime::Module> module = build(*mod, options.target, passes, ctx, &info);
  if (!module.ok()) return module.status();
  if (options.progress) {
    options.progress(absl::StrCat("kernels: ", module->executable().kernel_names.size(),
                                  " distinct (each layer calls the same ones), one ",
                                  options.target.is_cuda() ? "CUDA" : "C++", " unit, ",
                                  info.cache_hit ? "found in the JIT cache" : "compiled now"));
  }
  if (options.report != nullptr) {
    *options.report = timing->report();
    const std::string stats = transform::statistics_report(ctx);
    if (!stats.empty()) absl::StrAppend(options.report, "\n", stats);
  }
  LlamaModel m;
  m.config_ = config;
  m.module_ = *std::move(module);
  m.device_ = options.target.is_cuda() ? Device::cuda() : Device::cpu();
  return m;
}

absl::StatusOr<LlamaModel> LlamaModel::load(const std::string& path, const CompileOptions& options) {
  absl::StatusOr<runtime::SafetensorsFile> file = runtime::SafetensorsFile::open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<LlamaConfig> config = LlamaConfig::from_metadata(file->metadata());
  if (!config.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", config.status().message()));
  absl::StatusOr<LlamaModel> m = compile(*config, options);
  if (!m.ok()) return m.status();
  if (absl::Status s = m->bind_weights(path); !s.ok()) return s;
  return m;
}

absl::Status LlamaModel::bind_weights(const std::string& path) {
  absl::StatusOr<runtime::SafetensorsFile> file = runtime::SafetensorsFile::open(path);
  if (!file.ok()) return file.status();
  // The file's own description of the model, when it has one, must be this model.
  absl::StatusOr<LlamaConfig> described = LlamaConfig::from_metadata(file->metadata());
  if (described.ok() && described->to_string() != config_.to_string()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the file holds a model of ", described->to_string(),
                                                   "; this one is ", config_.to_string()));
  }
  auto shared = std::make_shared<const runtime::SafetensorsFile>(*std::move(file));
  std::map<std::string, Value> weights;
  std::map<std::string, std::string> file_name;  // parameter -> tensor of the file
  for (const WeightSpec& w : weight_specs(config_)) {
    file_name.emplace(w.param, w.name);
    absl::StatusOr<Tensor> t = shared->tensor(w.name, w.shape, w.dtype);
    if (!t.ok()) return t.status();
    // A GPU model gets a device copy of each weight (the mapping is then only read once).
    if (device_.type != Device::Type::kCPU) {
      t = t->to(device_);
      if (!t.ok()) return t.status();
    }
    weights.emplace(w.param, *std::move(t));
  }
  absl::StatusOr<runtime::BoundWeights> bound = runtime::BoundWeights::bind(module_, std::move(weights));
  if (!bound.ok()) return bound.status();
  // The file's pages of weights that only the bind read (joined into new matrices) go back
  // to the page cache; a later read would fault them in again.
  if (device_.type == Device::Type::kCPU) {
    for (const std::string& param : bound->unread_by_functions(module_)) shared->release_pages(file_name.at(param));
  }
  file_ = std::move(shared);
  weights_ = *std::move(bound);
  return absl::OkStatus();
}

absl::StatusOr<runtime::KVCache> LlamaModel::new_cache() const {
  return runtime::KVCache::create(config_.layers, config_.max_batch, config_.max_context, config_.kv_heads,
                                  config_.head_dim, device_);
}

absl::StatusOr<Tensor> LlamaModel::forward(const std::vector<std::vector<int64_t>>& tokens,
                                           const std::vector<int64_t>& seq_ids, runtime::KVCache& cache,
                                           runtime::CallMemoryStats* stats) const {
  if (weights_.values().empty()) return absl::FailedPreconditionError("LlamaModel: no weights bound (bind_weights)");
  if (tokens.empty()) return wrong_rows("no rows of tokens");
  if (tokens.size() != seq_ids.size()) {
    return wrong_rows(absl::StrCat(tokens.size(), " rows of tokens but ", seq_ids.size(), " sequence ids"));
  }
  const auto rows = static_cast<int64_t>(tokens.size());
  if (rows > config_.max_batch) {
    return wrong_rows(absl::StrCat(rows, " rows, over the declared max_batch ", config_.max_batch));
  }
  const auto n = static_cast<int64_t>(tokens[0].size());
  if (n == 0) return wrong_rows("row 0 has no tokens");
  std::vector<int64_t> flat;
  flat.reserve(static_cast<size_t>(rows * n));
  for (size_t r = 0; r < tokens.size(); ++r) {
    if (static_cast<int64_t>(tokens[r].size()) != n) {
      return wrong_rows(absl::StrCat("row ", r, " has ", tokens[r].size(), " tokens, row 0 has ", n,
                                     " (rows of one call have the same length)"));
    }
    for (size_t i = 0; i < tokens[r].size(); ++i) {
      const int64_t t = tokens[r][i];
      if (t < 0 || t >= config_.vocab) {
        return wrong_rows(absl::StrCat("token ", i, " of row ", r, " is ", t, ", outside the vocabulary [0, ",
                                       config_.vocab, ")"));
      }
      flat.push_back(t);
    }
  }
  if (absl::Status s = cache.check_room(seq_ids, n); !s.ok()) return s;
  if (cache.device() != device_) {
    return wrong_rows(absl::StrCat("the cache is on ", cache.device().to_string(), ", the model on ",
                                   device_.to_string(), " (new_cache makes one on the model's device)"));
  }
  absl::StatusOr<Tensor> token_tensor = Tensor::from_vector({rows, n}, flat);
  if (!token_tensor.ok()) return token_tensor.status();
  absl::StatusOr<Tensor> ids = Tensor::from_vector({rows}, seq_ids);
  if (!ids.ok()) return ids.status();
  if (device_.type != Device::Type::kCPU) {
    token_tensor = token_tensor->to(device_);
    if (!token_tensor.ok()) return token_tensor.status();
    ids = ids->to(device_);
    if (!ids.ok()) return ids.status();
  }
  std::vector<Value> args = {*token_tensor, *ids, cache.lengths()};
  for (int64_t l = 0; l < config_.layers; ++l) {
    args.emplace_back(cache.keys(l));
    args.emplace_back(cache.values(l));
  }
  const char* function = n > 1 ? "prefill" : rows == 1 ? "decode_one" : "decode";
  absl::StatusOr<std::vector<Value>> all = weights_.arguments(module_, function, std::move(args));
  if (!all.ok()) return all.status();
  absl::StatusOr<Value> logits = module_[function].call(*std::move(all), stats);
  if (!logits.ok()) return logits.status();
  if (absl::Status s = cache.advance(seq_ids, n); !s.ok()) return s;
  // The logits come back to the host (argmax, sampling and the caller read them there).
  absl::StatusOr<Tensor> out = logits->tensor();
  if (!out.ok() || device_.type == Device::Type::kCPU) return out;
  return out->to(Device::cpu());
}

std::vector<int64_t> LlamaModel::argmax(const Tensor& logits) {
  const int64_t rows = logits.shape()[0], vocab = logits.shape()[1];
  const auto* data = static_cast<const float*>(logits.data());
  std::vector<int64_t> out;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = data + r * vocab;
    out.push_back(std::max_element(row, row + vocab) - row);
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> LlamaModel::generate(
    const std::vector<std::vector<int64_t>>& prompts, int64_t max_new_tokens, runtime::KVCache& cache,
    const TokenCallback& on_token) const {
  if (static_cast<int64_t>(prompts.size()) > cache.max_batch()) {
    return wrong_rows(absl::StrCat(prompts.size(), " prompts, over the cache's ", cache.max_batch(), " sequences"));
  }
  if (max_new_tokens < 0) return wrong_rows(absl::StrCat("max_new_tokens is ", max_new_tokens, ", expected >= 0"));
  // The cache holds a prompt and every new token but the last (which is never fed back):
  // check that before the first step, not after streaming what fits.
  for (size_t p = 0; p < prompts.size() && max_new_tokens > 0; ++p) {
    const int64_t length = static_cast<int64_t>(prompts[p].size());
    if (length > cache.capacity() || max_new_tokens - 1 > cache.capacity() - length) {
      return wrong_rows(absl::StrCat("prompt ", p, " has ", length, " tokens and ", max_new_tokens,
                                     " new tokens were asked for, which need ", length, " + ", max_new_tokens,
                                     " - 1 = ", length + max_new_tokens - 1,
                                     " positions of the KV cache, over its capacity ", cache.capacity(),
                                     " (at most ", std::max<int64_t>(0, cache.capacity() - length + 1),
                                     " new tokens for this prompt)"));
    }
  }
  std::vector<std::vector<int64_t>> out(prompts.size());
  std::vector<int64_t> next(prompts.size());
  std::vector<bool> live(prompts.size(), max_new_tokens > 0);
  auto emit = [&](size_t p, int64_t token) {
    out[p].push_back(token);
    next[p] = token;
    if (static_cast<int64_t>(out[p].size()) >= max_new_tokens) live[p] = false;
    if (on_token && !on_token(p, token)) live[p] = false;
  };
  cache.reset_all();
  for (size_t p = 0; p < prompts.size() && max_new_tokens > 0; ++p) {
    absl::StatusOr<Tensor> logits = forward({prompts[p]}, {static_cast<int64_t>(p)}, cache);
    if (!logits.ok()) return absl::Status(logits.status().code(), absl::StrCat("prompt ", p, ": ", logits.status().message()));
    emit(p, argmax(*logits)[0]);
  }
  while (true) {
    std::vector<std::vector<int64_t>> rows;
    std::vector<int64_t> ids;
    for (size_t p = 0; p < prompts.size(); ++p) {
      if (!live[p]) continue;
      rows.push_back({next[p]});
      ids.push_back(static_cast<int64_t>(p));
    }
    if (rows.empty()) break;
    absl::StatusOr<Tensor> logits = forward(rows, ids, cache);
    if (!logits.ok()) return logits.status();
    const std::vector<int64_t> tokens = argmax(*logits);
    for (size_t r = 0; r < ids.size(); ++r) emit(static_cast<size_t>(ids[r]), tokens[r]);
  }
  return out;
}

}  // namespace relax::models
