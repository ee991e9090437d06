// The run-time int4 quantiser (relax/runtime/quantize.h) against the operator it stands in for:
// op::quantize(x, group_size, axis=0, bits=4) and op::dequantize, built once with relax::build
// (symbolic K and N) and run at several sizes. The results must agree bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/quantize.h"

namespace relax::ops_test {
namespace {

constexpr const char* kModule = R"(module {
  func @quantize_g8(x: Tensor[(g * 8, n), float32]) -> Object {
    y = quantize(x, group_size=8, axis=0)
    return y
  }
  func @quantize_g32(x: Tensor[(g * 32, n), float32]) -> Object {
    y = quantize(x, group_size=32, axis=0)
    return y
  }
  func @dequantize_g32(p: Tensor[(g * 16, n), uint8], s: Tensor[(g, n), float32]) -> Object {
    y = dequantize(p, s, group_size=32, axis=0)
    return y
  }
}
)";

const runtime::Module& built_module() {
  static const runtime::Module module = [] {
    absl::StatusOr<IRModule> mod = parse_module(kModule);
    EXPECT_TRUE(mod.ok()) << mod.status();
    if (!mod.ok()) return runtime::Module();
    Target target;
    target.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_ops_test_cache").string();
    absl::StatusOr<runtime::Module> m = build(*mod, target);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : runtime::Module();
  }();
  return module;
}

runtime::Tensor random_weights(int64_t k, int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::vector<float> w(static_cast<size_t>(k * n));
  for (float& x : w) x = normal(rng);
  for (int64_t j = 0; j < n; j += 4) {  // zero groups: the first 8 rows of every fourth column
    for (int64_t r = 0; r < 8 && r < k; ++r) w[static_cast<size_t>(r * n + j)] = 0.0f;
  }
  return *runtime::Tensor::from_vector({k, n}, w);
}

bool same_bytes(const runtime::Tensor& a, const runtime::Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && a.is_contiguous() && b.is_contiguous() &&
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(QuantizeInt4OpTest, TheRuntimeQuantiserIsOpQuantizeBitForBit) {
  const runtime::Module& m = built_module();
  ASSERT_TRUE(m.defined());
  struct Case {
    const char* function;
    int64_t group, k, n;
  };
  for (const Case& c : {Case{"quantize_g8", 8, 8, 1}, Case{"quantize_g8", 8, 24, 13}, Case{"quantize_g32", 32, 32, 64},
                        Case{"quantize_g32", 32, 128, 37}}) {
    SCOPED_TRACE(testing::Message() << c.function << " K=" << c.k << " N=" << c.n);
    const runtime::Tensor w = random_weights(c.k, c.n, static_cast<unsigned>(c.k * 7 + c.n));
    absl::StatusOr<runtime::Value> op = m[c.function].call({w});
    ASSERT_TRUE(op.ok()) << op.status();
    const std::vector<runtime::Value>& fields = op->fields_or_die();
    ASSERT_EQ(fields.size(), 2u);
    absl::StatusOr<std::pair<runtime::Tensor, runtime::Tensor>> rt = runtime::quantize_int4(w, c.group);
    ASSERT_TRUE(rt.ok()) << rt.status();
    EXPECT_TRUE(same_bytes(rt->first, fields[0].tensor_or_die())) << "packed";
    EXPECT_TRUE(same_bytes(rt->second, fields[1].tensor_or_die())) << "scales";

    if (c.group == 32) {
      absl::StatusOr<runtime::Value> deq = m["dequantize_g32"].call({rt->first, rt->second});
      ASSERT_TRUE(deq.ok()) << deq.status();
      absl::StatusOr<runtime::Tensor> back = runtime::dequantize_int4(rt->first, rt->second, 32);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_TRUE(same_bytes(*back, deq->tensor_or_die())) << "dequantized";
    }
  }
}

}  // namespace
}  // namespace relax::ops_test
