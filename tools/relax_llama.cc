// relax-llama: random-weight Llama parameter files, and greedy generation from one.
//
//   relax-llama weights --shape=tiny-llama --weights=int4 --seed=1 --out=tiny-int4.safetensors
//   relax-llama generate tiny-int4.safetensors --prompt="1, 450, 4996" --max-new-tokens=32
//
// `weights` writes the file for a shape (small or tiny-llama, any size overridable by its flag);
// `generate` compiles the model the file describes (its metadata), prefills each prompt
// (comma-separated token ids; repeat the flag for several sequences, decoded together), streams
// the new tokens to stdout and prints the prefill and decode rates. Errors go to stderr, exit 1.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "list_flags.h"
#include "relax/models/llama.h"
#include "relax/models/llama_model.h"

ABSL_FLAG(std::string, shape, "small", "weights: the model's sizes, small or tiny-llama");
ABSL_FLAG(std::string, weights, "f32", "weights: the weight format, f32, bf16, int4 or f16");
ABSL_FLAG(int64_t, seed, 1, "weights: the seed of the pseudo-random weights");
ABSL_FLAG(std::string, out, "", "weights: the parameter file to write");
ABSL_FLAG(int64_t, layers, 0, "weights: override the shape's layer count");
ABSL_FLAG(int64_t, max_context, 0, "weights: override the shape's max context (spelled --max-context too)");
ABSL_FLAG(int64_t, max_batch, 0, "weights: override the shape's max batch (spelled --max-batch too)");
ABSL_FLAG(std::string, prompt, "",
          "generate: the token ids of one prompt, comma-separated; repeat for several sequences");
ABSL_FLAG(int64_t, max_new_tokens, 16, "generate: tokens to generate per prompt (spelled --max-new-tokens too)");
ABSL_FLAG(std::string, target, "", "generate: the compilation target, e.g. \"cpu -threads=2\" (default: cpu)");

namespace {

using relax::models::LlamaConfig;

absl::Status write_weights() {
  LlamaConfig c;
  const std::string shape = absl::GetFlag(FLAGS_shape);
  if (shape == "small") {
    c = LlamaConfig::small();
  } else if (shape != "tiny-llama") {
    return absl::InvalidArgumentError(absl::StrCat("--shape is '", shape, "', expected small or tiny-llama"));
  }
  absl::StatusOr<relax::models::WeightFormat> format = relax::models::parse_weight_format(absl::GetFlag(FLAGS_weights));
  if (!format.ok()) return format.status();
  c.weights = *format;
  if (absl::GetFlag(FLAGS_layers) > 0) c.layers = absl::GetFlag(FLAGS_layers);
  if (absl::GetFlag(FLAGS_max_context) > 0) c.max_context = absl::GetFlag(FLAGS_max_context);
  if (absl::GetFlag(FLAGS_max_batch) > 0) c.max_batch = absl::GetFlag(FLAGS_max_batch);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) return absl::InvalidArgumentError("weights: --out=FILE is required");
  std::cout << "writing " << out << ": " << c.to_string() << ", " << c.weight_bytes() / 1000000 << " MB\n";
  return relax::models::write_random_weights(c, static_cast<uint64_t>(absl::GetFlag(FLAGS_seed)), out);
}

absl::StatusOr<std::vector<int64_t>> parse_tokens(const std::string& text) {
  std::vector<int64_t> tokens;
  for (absl::string_view piece : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int64_t t = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(piece), &t)) {
      return absl::InvalidArgumentError(absl::StrCat("--prompt: '", std::string(piece), "' is not a token id"));
    }
    tokens.push_back(t);
  }
  if (tokens.empty()) return absl::InvalidArgumentError("--prompt: no token ids");
  return tokens;
}

absl::Status generate(const std::string& path, const std::vector<std::string>& prompt_texts) {
  const int64_t max_new = absl::GetFlag(FLAGS_max_new_tokens);
  if (max_new < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-new-tokens=", max_new, ": expected at least 1 token to generate"));
  }
  std::vector<std::vector<int64_t>> prompts;
  for (const std::string& text : prompt_texts) {
    absl::StatusOr<std::vector<int64_t>> p = parse_tokens(text);
    if (!p.ok()) return p.status();
    prompts.push_back(*std::move(p));
  }
  if (prompts.empty()) return absl::InvalidArgumentError("generate: at least one --prompt is required");
  relax::models::CompileOptions options;
  if (!absl::GetFlag(FLAGS_target).empty()) {
    absl::StatusOr<relax::Target> target = relax::Target::parse(absl::GetFlag(FLAGS_target));
    if (!target.ok()) return target.status();
    options.target = *target;
  }
  // Progress on one rewritten line of a terminal; one line per step otherwise.
  const bool tty = isatty(STDERR_FILENO) != 0;
  options.progress = [tty](const std::string& line) {
    if (tty) {
      std::cerr << "\r\033[K" << line << std::flush;
    } else {
      std::cerr << line << "\n";
    }
  };
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<relax::models::LlamaModel> model = relax::models::LlamaModel::load(path, options);
  if (tty) std::cerr << "\r\033[K";
  if (!model.ok()) return model.status();
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "model: " << model->config().to_string() << " (compiled and loaded in " << compile_s << " s)\n";
  absl::StatusOr<relax::runtime::KVCache> cache = model->new_cache();
  if (!cache.ok()) return cache.status();
  auto t0 = std::chrono::steady_clock::now();
  size_t emitted = 0;
  auto first_done = t0;
  absl::StatusOr<std::vector<std::vector<int64_t>>> out =
      model->generate(prompts, max_new, *cache, [&](size_t p, int64_t token) {
        if (++emitted == prompts.size()) first_done = std::chrono::steady_clock::now();
        std::cout << "[" << p << "] " << token << "\n" << std::flush;
        return true;
      });
  if (!out.ok()) return out.status();
  const auto t1 = std::chrono::steady_clock::now();
  size_t prompt_tokens = 0, new_tokens = 0;
  for (const auto& p : prompts) prompt_tokens += p.size();
  for (const auto& o : *out) new_tokens += o.size();
  const double prefill_s = std::chrono::duration<double>(first_done - t0).count();
  const double decode_s = std::chrono::duration<double>(t1 - first_done).count();
  // A rate only over a measured time (a clock too coarse for the step gives 0 s).
  std::cout << "prefill: " << prompt_tokens << " tokens in " << prefill_s << " s";
  if (prefill_s > 0) std::cout << " (" << static_cast<double>(prompt_tokens) / prefill_s << " tokens/s)";
  std::cout << "\n";
  if (new_tokens > prompts.size() && decode_s > 0) {
    std::cout << "decode: " << new_tokens - prompts.size() << " tokens in " << decode_s << " s ("
              << static_cast<double>(new_tokens - prompts.size()) / decode_s << " tokens/s)\n";
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  relax::tools::ListFlags lists(argc, argv, {"prompt"}, {"prompt"});
  relax::tools::set_usage("relax_llama.cc",
                          "relax-llama weights --shape=small|tiny-llama --weights=f32|bf16|int4|f16 [--seed=N] "
                          "[--layers=N] [--max-context=N] [--max-batch=N] --out=FILE\n"
                          "relax-llama generate FILE --prompt=\"1, 2, 3\" [--prompt=...] [--max-new-tokens=N] "
                          "[--target=cpu]\n"
                          "Writes a random-weight Llama parameter file, or generates greedily from one.");
  std::vector<char*> positional = absl::ParseCommandLine(lists.argc(), lists.argv());
  absl::Status s;
  const std::string command = positional.size() > 1 ? positional[1] : "";
  if (command == "weights" && positional.size() == 2) {
    s = write_weights();
  } else if (command == "generate" && positional.size() == 3) {
    s = generate(positional[2], lists.values("prompt"));
  } else {
    std::cerr << "relax-llama: expected `weights` or `generate FILE`; usage: " << absl::ProgramUsageMessage()
              << "\n";
    return 1;
  }
  if (!s.ok()) {
    std::cerr << "relax-llama: " << s.message() << "\n";
    return 1;
  }
  return 0;
}
