// build_llama and LlamaConfig: the module's functions and parameters, the config's checks and
// its round trip through a parameter file's metadata.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "relax/ir/printer.h"
#include "relax/ir/well_formed.h"
#include "relax/models/llama.h"

namespace relax::models {
namespace {

TEST(LlamaConfigTest, MetadataRoundTrip) {
  LlamaConfig c = LlamaConfig::small();
  c.weights = WeightFormat::kInt4;
  c.rope_theta = 500000.0;
  absl::StatusOr<LlamaConfig> back = LlamaConfig::from_metadata(c.to_metadata());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->to_string(), c.to_string());
  EXPECT_EQ(back->rope_theta, 500000.0);
  std::map<std::string, std::string> m = c.to_metadata();
  m.erase("kv_heads");
  EXPECT_EQ(LlamaConfig::from_metadata(m).status().message(), "Llama parameter file metadata: no key 'kv_heads'");
  m = c.to_metadata();
  m["hidden"] = "2k";
  EXPECT_EQ(LlamaConfig::from_metadata(m).status().message(),
            "Llama parameter file metadata: hidden is '2k', expected an integer");
  m = c.to_metadata();
  m["weights"] = "fp8";
  EXPECT_TRUE(absl::StrContains(LlamaConfig::from_metadata(m).status().message(), "unknown weight format 'fp8'"));
}

TEST(LlamaConfigTest, ValidateNamesTheField) {
  LlamaConfig c = LlamaConfig::small();
  c.kv_heads = 3;
  EXPECT_EQ(c.validate().message(), "Llama config: heads is 8, expected a multiple of kv_heads (3)");
  c = LlamaConfig::small();
  c.head_dim = 33;
  EXPECT_EQ(c.validate().message(), "Llama config: head_dim is 33, expected an even size (rotary pairs)");
  c = LlamaConfig::small();
  c.weights = WeightFormat::kInt4;
  c.intermediate = 500;
  EXPECT_EQ(c.validate().message(),
            "Llama config: intermediate is 500, expected a multiple of group_size (32) for int4 weights");
  c = LlamaConfig::small();
  c.max_context = 0;
  EXPECT_EQ(build_llama(c).status().message(), "Llama config: max_context is 0, expected a positive size");
}

TEST(LlamaConfigTest, TinyLlamaSizes) {
  const LlamaConfig c = LlamaConfig::tiny_llama();
  EXPECT_EQ(c.parameter_count(), 1100048384);  // TinyLlama-1.1B's published count
  EXPECT_EQ(c.weight_bytes(), 4 * c.parameter_count());
  LlamaConfig q = c;
  q.weights = WeightFormat::kInt4;
  // Matrices at half a byte plus a float32 scale per 32: 0.625 bytes per weight.
  EXPECT_LT(q.weight_bytes(), c.weight_bytes() / 4);
  EXPECT_EQ(c.decode_bytes_per_step(1), c.weight_bytes() - 4 * (c.vocab - 1) * c.hidden);
}

TEST(LlamaBuilderTest, PrefillAndDecodeTakeTheSameParameters) {
  for (WeightFormat format : {WeightFormat::kFloat32, WeightFormat::kBfloat16, WeightFormat::kInt4, WeightFormat::kFloat16}) {
    LlamaConfig c = LlamaConfig::small();
    c.weights = format;
    absl::StatusOr<IRModule> mod = build_llama(c);
    ASSERT_TRUE(mod.ok()) << mod.status();
    EXPECT_TRUE(well_formed(*mod).ok());
    const std::string text = to_text(*mod);
    EXPECT_TRUE(absl::StrContains(text, "func @prefill(tokens: Tensor[(b, n), int64]")) << text.substr(0, 400);
    EXPECT_TRUE(absl::StrContains(text, "func @decode(tokens: Tensor[(b, 1), int64]"));
    EXPECT_TRUE(absl::StrContains(text, "func @decode_one(tokens: Tensor[(1, 1), int64]"));
    EXPECT_TRUE(absl::StrContains(text, "-> Tensor[(b, 512), float32]"));
    EXPECT_TRUE(absl::StrContains(text, "call_dps_library(extern_func(\"kv_cache.attention\")"));
    const size_t params = 3 + 2 * 2 + weight_specs(c).size();
    EXPECT_EQ(leading_params(c) + static_cast<int64_t>(weight_specs(c).size()), static_cast<int64_t>(params));
  }
}

}  // namespace
}  // namespace relax::models
