// LlamaModel end to end on small random-weight models: logits against the plain C++ reference
// (ReferenceLlama) at several prompt lengths and batches from one compilation, decode after
// prefill against one prefill, per-row sequence lengths, greedy generation, the KV cache's
// capacity, and the loader's and the calls' errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "relax/models/llama.h"
#include "relax/models/llama_model.h"
#include "relax/models/llama_reference.h"
#include "relax/runtime/onednn.h"
#include "relax/runtime/safetensors.h"
#include "relax/transform/schedule.h"

namespace relax::models {
namespace {

using runtime::Tensor;

constexpr double kTolerance = 1e-4;  // of the row's largest logit (float32 against double)
// int4 weights with int8-quantised activations (the default CPU schedule with AVX-512 VNNI):
// each activation rounded to 1/254 of its group's largest; measured 1.2-1.6e-2 on this model.
constexpr double kInt8Tolerance = 3e-2;
// bfloat16 weights where prefill multiplies in bf16 (bf16-products, the default CPU pipeline with
// AVX512-BF16): each row element rounded to bf16 (2^-9 of it); measured 1.5-5.7e-3 on this model.
constexpr double kBf16ProductsTolerance = 1.5e-2;

LlamaConfig small(WeightFormat format) {
  LlamaConfig c = LlamaConfig::small();
  c.weights = format;
  c.max_context = 64;
  return c;
}

CompileOptions test_options() {
  CompileOptions options;
  options.target.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_models_test_cache").string();
  return options;
}

std::string weights_file(const LlamaConfig& c, uint64_t seed = 3) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            absl::StrCat("relax_models_test_", weight_format_name(c.weights), "_l", c.layers, "_c",
                                         c.max_context, "_", seed, ".safetensors"))
                               .string();
  if (!std::filesystem::exists(path)) {
    absl::Status s = write_random_weights(c, seed, path);
    EXPECT_TRUE(s.ok()) << s;
  }
  return path;
}

LlamaModel load(const LlamaConfig& c) {
  absl::StatusOr<LlamaModel> m = LlamaModel::load(weights_file(c), test_options());
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

ReferenceLlama reference(const LlamaConfig& c) {
  absl::StatusOr<runtime::SafetensorsFile> file = runtime::SafetensorsFile::open(weights_file(c));
  EXPECT_TRUE(file.ok()) << file.status();
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : file->names()) tensors[name] = *file->tensor(name);
  absl::StatusOr<ReferenceLlama> r = ReferenceLlama::create(c, tensors);
  EXPECT_TRUE(r.ok()) << r.status();
  return *std::move(r);
}

std::vector<int64_t> tokens(int64_t n, int64_t salt, int64_t vocab) {
  std::vector<int64_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back((i * 97 + salt * 31 + 5) % vocab);
  return t;
}

// Row r of (rows, vocab) logits against the reference's logits.
double relative_error(const Tensor& logits, int64_t r, const std::vector<double>& expected) {
  return ReferenceLlama::relative_error(static_cast<const float*>(logits.data()) + r * logits.shape()[1], expected);
}

class LlamaModelFormats : public ::testing::TestWithParam<WeightFormat> {};

// The tolerance of a model of `c` compiled with `options`.
double tolerance(const LlamaConfig& c, const CompileOptions& options) {
  const transform::schedule::CpuScheduleOptions cpu = transform::schedule::cpu_schedule_options(options.target);
  if (c.weights == WeightFormat::kInt4 && cpu.int8_rows > 0) return kInt8Tolerance;
  if (c.weights == WeightFormat::kBfloat16 && cpu.bf16_products) return kBf16ProductsTolerance;
  return kTolerance;
}

void expect_logits_equal_the_reference(const LlamaConfig& c, const CompileOptions& options) {
  absl::StatusOr<LlamaModel> loaded = LlamaModel::load(weights_file(c), options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  LlamaModel& m = *loaded;
  const double limit = tolerance(c, options);
  ReferenceLlama ref = reference(c);
  absl::StatusOr<runtime::KVCache> cache = m.new_cache();
  ASSERT_TRUE(cache.ok()) << cache.status();
  // Sequences 2 and 0 prefilled alone at 5 and 13 tokens, then both extended by 3 and by 1
  // token in one call each: rows of one call at different positions (per-row rotary and
  // attention lengths), ids out of order.
  std::map<int64_t, std::vector<int64_t>> seqs = {{2, tokens(5, 1, c.vocab)}, {0, tokens(13, 2, c.vocab)}};
  for (const auto& [id, t] : seqs) {
    absl::StatusOr<Tensor> logits = m.forward({t}, {id}, *cache);
    ASSERT_TRUE(logits.ok()) << logits.status();
    EXPECT_LE(relative_error(*logits, 0, ref.logits(t).back()), limit) << "prefill of " << t.size();
  }
  for (int64_t n : {3, 1}) {
    std::vector<std::vector<int64_t>> rows = {tokens(n, 7, c.vocab), tokens(n, 8, c.vocab)};
    absl::StatusOr<Tensor> logits = m.forward(rows, {2, 0}, *cache);
    ASSERT_TRUE(logits.ok()) << logits.status();
    ASSERT_EQ(logits->shape(), (std::vector<int64_t>{2, c.vocab}));
    seqs[2].insert(seqs[2].end(), rows[0].begin(), rows[0].end());
    seqs[0].insert(seqs[0].end(), rows[1].begin(), rows[1].end());
    EXPECT_LE(relative_error(*logits, 0, ref.logits(seqs[2]).back()), limit) << "n = " << n;
    EXPECT_LE(relative_error(*logits, 1, ref.logits(seqs[0]).back()), limit) << "n = " << n;
  }
  EXPECT_EQ(cache->length(2), 9);
  EXPECT_EQ(cache->length(0), 17);
  EXPECT_EQ(cache->length(1), 0);
}

TEST_P(LlamaModelFormats, LogitsEqualTheReferenceAtSeveralLengthsAndBatches) {
  expect_logits_equal_the_reference(small(GetParam()), test_options());
}

// -exact-float: int4 weights with float products, as close as the other formats.
TEST(LlamaModelTest, ExactFloatInt4LogitsEqualTheReference) {
  CompileOptions options = test_options();
  options.target.exact_float = true;
  expect_logits_equal_the_reference(small(WeightFormat::kInt4), options);
}

// -exact-float: bf16 weights with float32 products in prefill too, as close as float32.
TEST(LlamaModelTest, ExactFloatBfloat16LogitsEqualTheReference) {
  CompileOptions options = test_options();
  options.target.exact_float = true;
  expect_logits_equal_the_reference(small(WeightFormat::kBfloat16), options);
}

// int4: each layer's q/k/v and gate/up weights are joined once, at bind (combine-parallel-matmul
// and lift-weight-transforms): every function reads the joined matrices, the separate ones are
// read by the bind alone, and the joined bytes are those of the separate tensors. Float weights
// stay separate (prefill's products are oneDNN's, measured slower on joined matrices, and
// decode joining alone would keep both copies).
TEST_P(LlamaModelFormats, Int4ProjectionsAreJoinedOnceAtBind) {
  const LlamaConfig c = small(GetParam());
  const LlamaModel m = load(c);
  const runtime::BoundWeights& bound = m.bound_weights();
  const bool int4 = c.weights == WeightFormat::kInt4;
  if (!int4) {
    // (Without oneDNN every product is generated code, and float weights are joined too.)
    if (runtime::onednn_available()) {
      EXPECT_TRUE(bound.computed().empty());
      EXPECT_EQ(bound.computed_bytes(), 0);
      EXPECT_TRUE(bound.unread_by_functions(m.module()).empty());
    }
    return;
  }
  std::vector<std::string> expected;
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = absl::StrCat("layers_", l, "_");
    if (int4) {
      for (const char* part : {"q4", "scales"}) {
        expected.push_back(absl::StrCat(p, "wq_", part, "_wk_", part, "_wv_", part));
        expected.push_back(absl::StrCat(p, "w_gate_", part, "_up_", part));
      }
    } else {
      expected.push_back(p + "wq_wk_wv");
      expected.push_back(p + "w_gate_up");
    }
  }
  std::vector<std::string> computed = bound.computed();
  std::sort(computed.begin(), computed.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(computed, expected);
  // The joined tensors hold the separate ones' bytes (no copy per function).
  int64_t joined_bytes = 0;
  for (const WeightSpec& w : weight_specs(c)) {
    for (const char* m_name : {"wq", "wk", "wv", "w_gate", "w_up"}) {
      if (absl::StrContains(w.name, absl::StrCat(".", m_name))) {
        int64_t n = w.dtype.bits / 8;
        for (int64_t d : w.shape) n *= d;
        joined_bytes += n;
      }
    }
  }
  EXPECT_EQ(bound.computed_bytes(), joined_bytes);
  std::vector<std::string> unread = bound.unread_by_functions(m.module());
  EXPECT_EQ(unread.size(), (int4 ? 10u : 5u) * static_cast<size_t>(c.layers));
  for (const char* fn : {"prefill", "decode", "decode_one"}) {
    const runtime::Executable& exec = m.module().executable();
    const auto& params = exec.functions[static_cast<size_t>(exec.find_function(fn))].param_names;
    for (const std::string& name : expected) {
      EXPECT_NE(std::find(params.begin(), params.end(), name), params.end()) << fn << " lacks " << name;
    }
    for (const std::string& name : unread) {
      EXPECT_EQ(std::find(params.begin(), params.end(), name), params.end()) << fn << " reads " << name;
    }
  }
}

TEST_P(LlamaModelFormats, DecodeAfterPrefillEqualsOnePrefill) {
  const LlamaConfig c = small(GetParam());
  LlamaModel m = load(c);
  const std::vector<int64_t> all = tokens(10, 4, c.vocab);
  absl::StatusOr<runtime::KVCache> stepwise = m.new_cache();
  absl::StatusOr<runtime::KVCache> whole = m.new_cache();
  ASSERT_TRUE(stepwise.ok() && whole.ok());
  absl::StatusOr<Tensor> step = m.forward({{all.begin(), all.begin() + 6}}, {1}, *stepwise);
  for (size_t i = 6; i < all.size() && step.ok(); ++i) step = m.forward({{all[i]}}, {1}, *stepwise);
  ASSERT_TRUE(step.ok()) << step.status();
  absl::StatusOr<Tensor> once = m.forward({all}, {1}, *whole);
  ASSERT_TRUE(once.ok()) << once.status();
  const auto* a = static_cast<const float*>(step->data());
  const auto* b = static_cast<const float*>(once->data());
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < c.vocab; ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b[i])));
  }
  // Decode and prefill run the same kernels, except bf16-products prefill (bf16 x bf16 in the
  // library, the decode rows kernel in float32): those differ by the rows' rounding.
  const bool bf16_products = c.weights == WeightFormat::kBfloat16 &&
                             transform::schedule::cpu_schedule_options(test_options().target).bf16_products;
  EXPECT_LE(diff / scale, bf16_products ? kBf16ProductsTolerance : 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Weights, LlamaModelFormats,
                         ::testing::Values(WeightFormat::kFloat32, WeightFormat::kBfloat16, WeightFormat::kInt4, WeightFormat::kFloat16),
                         [](const ::testing::TestParamInfo<WeightFormat>& param) {
                           return std::string(weight_format_name(param.param));
                         });

TEST(LlamaModelTest, GenerateIsGreedyOverTheReferenceAndStreams) {
  const LlamaConfig c = small(WeightFormat::kFloat32);
  LlamaModel m = load(c);
  ReferenceLlama ref = reference(c);
  absl::StatusOr<runtime::KVCache> cache = m.new_cache();
  ASSERT_TRUE(cache.ok());
  const std::vector<std::vector<int64_t>> prompts = {tokens(4, 1, c.vocab), tokens(9, 2, c.vocab)};
  std::vector<std::vector<int64_t>> streamed(2);
  absl::StatusOr<std::vector<std::vector<int64_t>>> out = m.generate(prompts, 5, *cache, [&](size_t p, int64_t t) {
    streamed[p].push_back(t);
    return !(p == 0 && streamed[0].size() == 3);  // prompt 0 stops after 3
  });
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, streamed);
  ASSERT_EQ((*out)[0].size(), 3u);
  ASSERT_EQ((*out)[1].size(), 5u);
  for (size_t p = 0; p < 2; ++p) {
    std::vector<int64_t> seq = prompts[p];
    for (int64_t token : (*out)[p]) {
      const std::vector<double> logits = ref.logits(seq).back();
      EXPECT_EQ(token, std::max_element(logits.begin(), logits.end()) - logits.begin()) << "prompt " << p;
      seq.push_back(token);
    }
  }
}

TEST(LlamaModelTest, CapacityExceededIsAnErrorAndAppendsNothing) {
  LlamaConfig c = small(WeightFormat::kFloat32);
  c.max_context = 16;
  LlamaModel m = load(c);
  absl::StatusOr<runtime::KVCache> cache = m.new_cache();
  ASSERT_TRUE(cache.ok());
  ASSERT_TRUE(m.forward({tokens(10, 1, c.vocab)}, {0}, *cache).ok());
  absl::StatusOr<Tensor> over = m.forward({tokens(7, 1, c.vocab)}, {0}, *cache);
  EXPECT_TRUE(absl::StrContains(
      over.status().message(),
      "KV cache capacity exceeded: sequence 0 holds 10 tokens; 7 more would make 17, over the capacity 16"))
      << over.status();
  EXPECT_EQ(cache->length(0), 10);
  EXPECT_TRUE(m.forward({tokens(6, 1, c.vocab)}, {0}, *cache).ok());  // exactly full
  EXPECT_FALSE(m.forward({{1}}, {0}, *cache).ok());
}

TEST(LlamaModelTest, BadCallsAreErrors) {
  const LlamaConfig c = small(WeightFormat::kFloat32);
  LlamaModel m = load(c);
  absl::StatusOr<runtime::KVCache> cache = m.new_cache();
  ASSERT_TRUE(cache.ok());
  EXPECT_EQ(m.forward({{1, 2, 512}}, {0}, *cache).status().message(),
            "LlamaModel: token 2 of row 0 is 512, outside the vocabulary [0, 512)");
  EXPECT_EQ(m.forward({{1, 2}, {3}}, {0, 1}, *cache).status().message(),
            "LlamaModel: row 1 has 1 tokens, row 0 has 2 (rows of one call have the same length)");
  EXPECT_EQ(m.forward({{1}, {2}, {3}, {4}, {5}}, {0, 1, 2, 3, 4}, *cache).status().message(),
            "LlamaModel: 5 rows, over the declared max_batch 4");
  EXPECT_EQ(m.forward({{}}, {0}, *cache).status().message(), "LlamaModel: row 0 has no tokens");
  EXPECT_TRUE(absl::StrContains(m.forward({{1}, {2}}, {1, 1}, *cache).status().message(), "1"));
  EXPECT_EQ(cache->length(1), 0);
  absl::StatusOr<LlamaModel> bare = LlamaModel::compile(c, test_options());
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->forward({{1}}, {0}, *cache).status().message(), "LlamaModel: no weights bound (bind_weights)");
}

TEST(LlamaModelTest, TheLoaderNamesTheFileAndTheTensor) {
  const LlamaConfig c = small(WeightFormat::kFloat32);
  const std::string good = weights_file(c);
  absl::StatusOr<LlamaModel> m = LlamaModel::compile(c, test_options());
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string dir = ::testing::TempDir();
  // A tensor of another shape (and a file that does not describe a Llama model).
  absl::StatusOr<runtime::SafetensorsFile> file = runtime::SafetensorsFile::open(good);
  ASSERT_TRUE(file.ok());
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string& name : file->names()) {
    Tensor t = *file->tensor(name);
    if (name == "layers.1.wk") t = *Tensor::empty({c.hidden, 32}, DataType::float32());
    tensors.emplace_back(name, t);
  }
  const std::string reshaped = dir + "/relax_models_test_reshaped.safetensors";
  ASSERT_TRUE(runtime::write_safetensors(reshaped, tensors).ok());
  absl::Status s = m->bind_weights(reshaped);
  EXPECT_TRUE(absl::StrContains(s.message(), "layers.1.wk")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "is [256, 32] float32, expected [256, 64] float32")) << s;
  // A missing tensor.
  for (auto& [name, t] : tensors) {
    if (name == "layers.1.wk") t = *file->tensor(name);
  }
  tensors.erase(std::remove_if(tensors.begin(), tensors.end(), [](const auto& p) { return p.first == "final_norm"; }),
                tensors.end());
  const std::string missing = dir + "/relax_models_test_missing.safetensors";
  ASSERT_TRUE(runtime::write_safetensors(missing, tensors).ok());
  EXPECT_TRUE(absl::StrContains(m->bind_weights(missing).message(), "final_norm")) << m->bind_weights(missing);
  // Metadata of another model: the file's description is refused before any tensor is read.
  LlamaConfig other = c;
  other.layers = 3;
  const std::string three = weights_file(other);
  EXPECT_TRUE(absl::StrContains(m->bind_weights(three).message(), "the file holds a model of")) << m->bind_weights(three);
  // A truncated file.
  const std::string cut = dir + "/relax_models_test_cut.safetensors";
  std::filesystem::copy_file(good, cut, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(cut, std::filesystem::file_size(good) / 2);
  EXPECT_TRUE(absl::StrContains(m->bind_weights(cut).message(), cut)) << m->bind_weights(cut);
  EXPECT_EQ(LlamaModel::load(dir + "/no_such.safetensors").status().code(), absl::StatusCode::kNotFound);
  // The good file binds.
  EXPECT_TRUE(m->bind_weights(good).ok());
}

TEST(LlamaModelTest, WeightsAreSeededAndDeterministic) {
  LlamaConfig c = small(WeightFormat::kInt4);
  const std::string a = (std::filesystem::path(::testing::TempDir()) / "relax_models_test_a.safetensors").string();
  const std::string b = (std::filesystem::path(::testing::TempDir()) / "relax_models_test_b.safetensors").string();
  ASSERT_TRUE(write_random_weights(c, 11, a).ok());
  ASSERT_TRUE(write_random_weights(c, 11, b).ok());
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  const std::string da((std::istreambuf_iterator<char>(fa)), {}), db((std::istreambuf_iterator<char>(fb)), {});
  EXPECT_EQ(da, db);
  EXPECT_EQ(static_cast<int64_t>(std::filesystem::file_size(a)) > c.weight_bytes(), true);
  absl::StatusOr<runtime::SafetensorsFile> file = runtime::SafetensorsFile::open(a);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->metadata().at("weights"), "int4");
  EXPECT_EQ(file->names().size(), weight_specs(c).size());
}

}  // namespace
}  // namespace relax::models
