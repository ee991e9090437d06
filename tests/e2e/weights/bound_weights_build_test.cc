// Weights joined at bind (combine-parallel-matmul, lift-weight-transforms, runtime::BoundWeights)
// through the default pipeline: three float32 projections of one operand, a gate and an up
// projection of bfloat16 weights widened in the graph, and two int4 projections, each group one
// product by weights that @transform_weights joins once. One compilation, called at several row
// counts (the generated rows kernels and oneDNN's tiles), against plain double loops over the
// separate weights; then the errors of binding and of arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/bound_weights.h"
#include "relax/support/half_float.h"

namespace relax {
namespace bound_weights_test {
namespace {

using runtime::BoundWeights;
using runtime::Tensor;
using runtime::Value;

constexpr int64_t kK = 64;

constexpr const char* kModule = R"(module {
  func @main(x: Tensor[(n, 64), float32], wq: Tensor[(64, 48), float32], wk: Tensor[(64, 16), float32],
             wv: Tensor[(64, 16), float32], wg: Tensor[(64, 40), bfloat16], wu: Tensor[(64, 40), bfloat16],
             pa: Tensor[(32, 24), uint8], sa: Tensor[(2, 24), float32], pb: Tensor[(32, 24), uint8],
             sb: Tensor[(2, 24), float32])
      -> Tuple[(Tensor[(n, 48), float32], Tensor[(n, 16), float32], Tensor[(n, 16), float32],
                Tensor[(n, 40), float32], Tensor[(n, 24), float32], Tensor[(n, 24), float32])]
      upper_bounds {n: 64} attrs {weights = "wq,wk,wv,wg,wu,pa,sa,pb,sb"} {
    dataflow {
      q = matmul(x, wq)
      k = matmul(x, wk)
      v = matmul(x, wv)
      g32 = astype(wg, dtype=float32)
      u32 = astype(wu, dtype=float32)
      g = matmul(x, g32)
      gate = silu(g)
      up = matmul(x, u32)
      mlp = multiply(gate, up)
      da = dequantize(pa, sa, group_size=32, axis=0, bits=4)
      db = dequantize(pb, sb, group_size=32, axis=0, bits=4)
      a = matmul(x, da)
      b = matmul(x, db)
      output gv = (q, k, v, mlp, a, b)
    }
    return gv
  }
})";

// A weight and its values as the module reads them (bf16 rounded, int4 dequantised), [k * n + j].
struct Weight {
  Tensor tensor;
  std::vector<double> values;
};

Weight float_weight(int64_t n, int seed) {
  Weight w{testing::random_tensor({kK, n}, seed), {}};
  const float* v = w.tensor.data_as_or_die<float>();
  w.values.assign(v, v + kK * n);
  return w;
}

Weight bf16_weight(int64_t n, int seed) {
  const Tensor f = testing::random_tensor({kK, n}, seed);
  Weight w{*Tensor::empty({kK, n}, DataType::bfloat16()), {}};
  auto* bits = static_cast<uint16_t*>(w.tensor.data());
  for (int64_t i = 0; i < kK * n; ++i) {
    const double value = f.data_as_or_die<float>()[i];
    bits[i] = bfloat16_bits(value);
    w.values.push_back(round_to_bfloat16(value));
  }
  return w;
}

// Packed int4 (32, n) and scales (2, n): value k of column j is nibble - 8 times its group's scale.
std::pair<Weight, Weight> int4_weight(int64_t n, int seed) {
  Weight packed{*Tensor::empty({kK / 2, n}, DataType{DataType::Code::kUInt, 8, 1}), {}};
  auto* q = static_cast<uint8_t*>(packed.tensor.data());
  for (int64_t i = 0; i < kK / 2 * n; ++i) q[i] = static_cast<uint8_t>((i * 151 + seed * 29 + 17) % 256);
  Weight scales{testing::random_tensor({kK / 32, n}, seed + 100), {}};
  const float* s = scales.tensor.data_as_or_die<float>();
  for (int64_t k = 0; k < kK; ++k) {
    for (int64_t j = 0; j < n; ++j) {
      const int nibble = (q[(k / 2) * n + j] >> (4 * (k % 2))) & 15;
      packed.values.push_back((nibble - 8) * static_cast<double>(s[(k / 32) * n + j]));
    }
  }
  return {std::move(packed), std::move(scales)};
}

// x (rows, kK) times w (kK, n), in double.
std::vector<double> product(const Tensor& x, const std::vector<double>& w, int64_t n) {
  const int64_t rows = x.shape()[0];
  const float* xv = x.data_as_or_die<float>();
  std::vector<double> out(static_cast<size_t>(rows * n), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < kK; ++k) {
      for (int64_t j = 0; j < n; ++j) out[static_cast<size_t>(r * n + j)] += xv[r * kK + k] * w[static_cast<size_t>(k * n + j)];
    }
  }
  return out;
}

void expect_near(const Value& got, const std::vector<double>& expected, const std::string& what) {
  const Tensor& t = got.tensor_or_die();
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expected.size())) << what;
  double scale = 1e-30;
  for (double e : expected) scale = std::max(scale, std::abs(e));
  const float* v = t.data_as_or_die<float>();
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_LE(std::abs(v[i] - expected[i]), 1e-4 * scale) << what << " element " << i;
  }
}

struct Model {
  std::map<std::string, Weight> w;
  Model() {
    w["wq"] = float_weight(48, 1);
    w["wk"] = float_weight(16, 2);
    w["wv"] = float_weight(16, 3);
    w["wg"] = bf16_weight(40, 4);
    w["wu"] = bf16_weight(40, 5);
    auto [pa, sa] = int4_weight(24, 6);
    auto [pb, sb] = int4_weight(24, 7);
    w["pa"] = std::move(pa);
    w["sa"] = std::move(sa);
    w["pb"] = std::move(pb);
    w["sb"] = std::move(sb);
  }
  std::map<std::string, Value> values() const {
    std::map<std::string, Value> out;
    for (const auto& [name, weight] : w) out.emplace(name, weight.tensor);
    return out;
  }
};

runtime::Module build_module() {
  absl::StatusOr<IRModule> mod = parse_module(kModule);
  EXPECT_TRUE(mod.ok()) << mod.status();
  // Exact float products (no bf16 or int8 rounding of the rows): the reference is a plain loop.
  // Generated code only: with a library for the products of many rows, float weights would
  // stay separate (combine-parallel-matmul's library-rows).
  Target target = testing::generated_code_target();
  target.exact_float = true;
  absl::StatusOr<runtime::Module> built = mod.ok() ? build(*mod, target) : absl::StatusOr<runtime::Module>(mod.status());
  EXPECT_TRUE(built.ok()) << built.status();
  return built.ok() ? *built : runtime::Module();
}

TEST(BoundWeightsBuildTest, JoinedProjectionsEqualTheSeparateProductsAtEveryRowCount) {
  runtime::Module module = build_module();
  ASSERT_TRUE(module.defined());
  const Model model;
  absl::StatusOr<BoundWeights> bound = BoundWeights::bind(module, model.values());
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->computed(), (std::vector<std::string>{"wq_wk_wv", "wg_wu", "pa_pb", "sa_sb"}));
  // The joined tensors: 64 x 80 float32, 64 x 80 bf16, 32 x 48 bytes, 2 x 48 float32.
  EXPECT_EQ(bound->computed_bytes(), 64 * 80 * 4 + 64 * 80 * 2 + 32 * 48 + 2 * 48 * 4);
  EXPECT_EQ(bound->unread_by_functions(module),
            (std::vector<std::string>{"pa", "pb", "sa", "sb", "wg", "wk", "wq", "wu", "wv"}));
  const std::vector<std::string>& params =
      module.executable().functions[static_cast<size_t>(module.executable().find_function("main"))].param_names;
  EXPECT_EQ(params, (std::vector<std::string>{"x", "wq_wk_wv", "wg_wu", "pa_pb", "sa_sb"}));

  for (int64_t rows : {1, 5, 16, 40}) {
    const Tensor x = testing::random_tensor({rows, kK}, static_cast<int>(rows) + 50);
    absl::StatusOr<std::vector<Value>> args = bound->arguments(module, "main", {x});
    ASSERT_TRUE(args.ok()) << args.status();
    absl::StatusOr<Value> out = module["main"].call(*std::move(args));
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<Value> fields = *out->fields();
    const std::string at = " at " + std::to_string(rows) + " rows";
    expect_near(fields[0], product(x, model.w.at("wq").values, 48), "q" + at);
    expect_near(fields[1], product(x, model.w.at("wk").values, 16), "k" + at);
    expect_near(fields[2], product(x, model.w.at("wv").values, 16), "v" + at);
    std::vector<double> mlp = product(x, model.w.at("wg").values, 40);
    const std::vector<double> up = product(x, model.w.at("wu").values, 40);
    for (size_t i = 0; i < mlp.size(); ++i) mlp[i] = mlp[i] / (1 + std::exp(-mlp[i])) * up[i];
    expect_near(fields[3], mlp, "silu(gate) * up" + at);
    expect_near(fields[4], product(x, model.w.at("pa").values, 24), "int4 a" + at);
    expect_near(fields[5], product(x, model.w.at("pb").values, 24), "int4 b" + at);
  }
}

TEST(BoundWeightsBuildTest, MissingWeightsAndParametersAreNamed) {
  runtime::Module module = build_module();
  ASSERT_TRUE(module.defined());
  std::map<std::string, Value> weights = Model().values();
  weights.erase("wk");
  absl::StatusOr<BoundWeights> missing = BoundWeights::bind(module, weights);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "reads the weight `wk`, which is not among the 8 given"))
      << missing.status();

  // A weight of the wrong shape: the transform's own argument check names it.
  weights = Model().values();
  weights["wv"] = testing::random_tensor({kK, 17}, 9);
  absl::StatusOr<BoundWeights> wrong = BoundWeights::bind(module, weights);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(absl::StrContains(wrong.status().message(), "BoundWeights::bind: ")) << wrong.status();
  EXPECT_TRUE(absl::StrContains(wrong.status().message(), "wv")) << wrong.status();

  absl::StatusOr<BoundWeights> bound = BoundWeights::bind(module, Model().values());
  ASSERT_TRUE(bound.ok()) << bound.status();
  absl::StatusOr<std::vector<Value>> unknown = bound->arguments(module, "mian", {});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "no function `mian` (functions: ")) << unknown.status();
  // Passing no leading argument leaves `x` to the bound values, which have none.
  absl::StatusOr<std::vector<Value>> unbound = bound->arguments(module, "main", {});
  EXPECT_EQ(unbound.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unbound.status().message(), "BoundWeights::arguments: @main's parameter 0 `x` is not a bound weight");
}

}  // namespace
}  // namespace bound_weights_test
}  // namespace relax
