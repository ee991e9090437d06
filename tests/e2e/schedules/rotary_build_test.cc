// rotary_embedding compiled end to end with the default pipeline (its tables
// of cos and sin per position and column pair, then the rotation over every
// head, scheduled by schedule-cpu): from one compilation, at several sequence
// lengths, against a plain loop in double; alone and fused after an add (the
// fused kernel keeps the tables' workspace); positions up to 2e5, so that the
// angles reach the range where vec_sin/vec_cos's reduction by pi/2 matters.
// The object code of the kernel has packed float arithmetic (the rotation)
// and packed double arithmetic (vec_sin/vec_cos in the table), and no libm
// sin/cos call: the kernel before computed pow, cos and sin with libm for
// every element of every head, and nothing vectorised. The object-code test
// is skipped, visibly, when the host compiler is not g++ or objdump is missing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "object_code_util.h"
#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/ir/parser.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

using runtime::Tensor;

constexpr const char* kRotaryModule = R"(module {
  func @rotary(x: Tensor[(1, n, 4, 64), float32], pos: Tensor[(n,), int64]) -> Tensor[(1, n, 4, 64), float32] {
    r = rotary_embedding(x, pos)
    return r
  }
  func @add_rotary(x: Tensor[(2, n, 3, 6), float32], y: Tensor[(2, n, 3, 6), float32], pos: Tensor[(n,), int32]) -> Tensor[(2, n, 3, 6), float32] {
    dataflow {
      s: Tensor[(2, n, 3, 6), float32] = add(x, y)
      output r: Tensor[(2, n, 3, 6), float32] = rotary_embedding(s, pos, theta=500000.0)
    }
    return r
  }
})";

std::vector<float> rotary_floats(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

/// Positions in [0, 2e5), from a xorshift generator.
std::vector<int64_t> positions(int64_t n, int seed) {
  std::vector<int64_t> out;
  uint32_t state = 88172645u + static_cast<uint32_t>(seed) * 7919u;
  for (int64_t i = 0; i < n; ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    out.push_back(static_cast<int64_t>(state % 200000));
  }
  return out;
}

/// The half-rotation embedding of x (b, s, h, d) in double. The angle is the
/// op's, in its compute dtype (float32): theta^(-2i/d) and its product with
/// the position rounded to float as the kernel does -- at positions of 1e5 a
/// float angle is off by up to 0.004 from the exact one, which is the op's
/// definition, not an error of the kernel -- and its cos and sin in double.
std::vector<double> reference(const std::vector<float>& x, const std::vector<int64_t>& pos, int64_t b, int64_t s,
                              int64_t h, int64_t d, double theta) {
  const int64_t half = d / 2;
  std::vector<double> out(x.size());
  for (int64_t p = 0; p < s; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const float freq = std::pow(static_cast<float>(theta), static_cast<float>(-2 * i) / static_cast<float>(d));
      const float angle = static_cast<float>(pos[static_cast<size_t>(p)]) * freq;
      const double c = std::cos(static_cast<double>(angle)), sn = std::sin(static_cast<double>(angle));
      for (int64_t bi = 0; bi < b; ++bi) {
        for (int64_t hi = 0; hi < h; ++hi) {
          const auto at = static_cast<size_t>(((bi * s + p) * h + hi) * d + i);
          const double first = x[at], second = x[at + static_cast<size_t>(half)];
          out[at] = first * c - second * sn;
          out[at + static_cast<size_t>(half)] = second * c + first * sn;
        }
      }
    }
  }
  return out;
}

void expect_close(const std::vector<double>& want, const absl::StatusOr<runtime::Value>& got, const std::string& what) {
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  const std::vector<float> y = rotary_floats(got->tensor_or_die());
  ASSERT_EQ(y.size(), want.size()) << what;
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(y[i] - want[i]) <= 2e-6) && ++wrong <= 5) {
      ADD_FAILURE() << what << " at " << i << ": got " << y[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(wrong, 0) << what << ": " << wrong << " of " << want.size() << " differ";
}

TEST(RotaryBuildTest, ComputesWhatAPlainLoopDoesAtEverySequenceLength) {
  absl::StatusOr<IRModule> mod = parse_module(kRotaryModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Target target = testing::generated_code_target();
  BuildInfo info;
  absl::StatusOr<runtime::Module> module = build(*mod, target, &info);
  ASSERT_TRUE(module.ok()) << module.status();
  size_t kernels = 0;
  for (const auto& [name, func] : info.lowered.functions()) kernels += func.as<PrimFuncNode>() != nullptr;
  EXPECT_EQ(kernels, 2u) << "the add is fused into its rotary embedding";
  for (int64_t n : {1, 7, 16, 300}) {
    const std::string at = " at n = " + std::to_string(n);
    const std::vector<int64_t> pos = positions(n, static_cast<int>(n));
    Tensor x = testing::random_tensor({1, n, 4, 64}, 1);
    Tensor pos64 = *Tensor::from_vector({n}, pos);
    expect_close(reference(rotary_floats(x), pos, 1, n, 4, 64, 10000), (*module)["rotary"](x, pos64), "rotary" + at);

    Tensor a = testing::random_tensor({2, n, 3, 6}, 2);
    Tensor b = testing::random_tensor({2, n, 3, 6}, 3);
    std::vector<float> sum = rotary_floats(a);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += rotary_floats(b)[i];
    const std::vector<int32_t> pos32(pos.begin(), pos.end());
    expect_close(reference(sum, pos, 2, n, 3, 6, 500000), (*module)["add_rotary"](a, b, *Tensor::from_vector({n}, pos32)),
                 "add_rotary" + at);
  }
}

TEST(RotaryBuildTest, TheKernelIsVectorisedWithoutLibmSinOrCos) {
  if (const std::string why = testing::why_no_packed_kernels(); !why.empty()) GTEST_SKIP() << why;
  const Target target = testing::generated_code_target();
  const std::optional<std::string> version = testing::run_command("'" + resolve_compiler(target) + "' --version 2>&1");
  if (!version || version->find("Free Software Foundation") == std::string::npos) {
    GTEST_SKIP() << "the host compiler (" << resolve_compiler(target) << ") is not g++: this test reads g++'s code";
  }
  if (!testing::objdump_available()) GTEST_SKIP() << "objdump is not installed";
  absl::StatusOr<IRModule> mod = parse_module(kRotaryModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  BuildInfo info;
  absl::StatusOr<runtime::Module> module = build(*mod, target, &info);
  ASSERT_TRUE(module.ok()) << module.status();
  std::string kernel;
  for (const auto& [name, func] : info.lowered.functions()) {
    if (func.as<PrimFuncNode>() != nullptr && name.rfind("rotary", 0) == 0) kernel = name;
  }
  ASSERT_FALSE(kernel.empty()) << "no rotary kernel";
  const std::string code = testing::disassembly_of(info.library_path, "relax_kernel_" + kernel);
  ASSERT_FALSE(code.empty()) << "no code for " << kernel << " in " << info.library_path;
  EXPECT_FALSE(std::regex_search(code, std::regex(R"(call.*<_*(sin|cos|sincos)f?[@>])")))
      << "a libm sin or cos call remains:\n" << code;
  EXPECT_TRUE(std::regex_search(code, std::regex(R"(\sv(fmadd|fmsub|fnmadd|fnmsub|mul)\w*ps\s.*%[yz]mm)")))
      << "no packed float multiply (the rotation) on ymm/zmm:\n" << code;
  EXPECT_TRUE(std::regex_search(code, std::regex(R"(\sv(fmadd|fnmadd|mul)\w*pd\s.*%[yz]mm)")))
      << "no packed double arithmetic (vec_sin/vec_cos in the table) on ymm/zmm:\n" << code;
}

}  // namespace
}  // namespace relax
