// Row reductions compiled end to end with the default schedule (schedule-cpu:
// merged parallel rows, reductions split into vector lanes by rfactor):
// softmax, rms_norm, layer_norm, sum and max from one compilation against
// plain double-precision loops, at row lengths below, at and above the 16
// lanes and not multiples of them; and the object code of the reduction
// kernels has packed float arithmetic on ymm/zmm registers where the
// reduction is (a packed max for the max, packed adds for the sum), which the
// scalar accumulator the schedule used before never had, and the softmax's
// normalisation in the same kernel is vectorised (a packed multiply by the
// row's reciprocal: no packed division, one exponential loop), and the
// rms_norm's scale is computed once per row (no packed square root). float16
// and bfloat16 softmax (which compute in float32 and round once) are within
// one unit in the last place of a double-precision softmax of the same
// 16-bit inputs, at row lengths up to 4096. The object-code test is skipped,
// visibly, when the host compiler is not g++ or objdump is missing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "object_code_util.h"
#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/ir/parser.h"
#include "relax/support/half_float.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

using runtime::Tensor;

constexpr const char* kReductionModule = R"(module {
  func @softmax(x: Tensor[(n, m), float32]) -> Tensor[(n, m), float32] {
    r = softmax(x)
    return r
  }
  func @rms(x: Tensor[(n, m), float32], w: Tensor[(m,), float32]) -> Tensor[(n, m), float32] {
    r = rms_norm(x, w)
    return r
  }
  func @ln(x: Tensor[(n, m), float32], g: Tensor[(m,), float32], b: Tensor[(m,), float32]) -> Tensor[(n, m), float32] {
    r = layer_norm(x, g, b)
    return r
  }
  func @row_sum(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    r = sum(x, axis=[1])
    return r
  }
  func @row_max(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    r = max(x, axis=[1])
    return r
  }
})";

std::vector<float> floats(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

using Rows = std::vector<std::vector<double>>;

Rows rows_of(const std::vector<float>& x, int64_t n, int64_t m) {
  Rows out(n);
  for (int64_t i = 0; i < n; ++i) out[i].assign(x.begin() + i * m, x.begin() + (i + 1) * m);
  return out;
}

std::vector<double> ref_softmax(const Rows& x) {
  std::vector<double> out;
  for (const std::vector<double>& row : x) {
    double mx = -INFINITY, sum = 0;
    for (double v : row) mx = std::max(mx, v);
    for (double v : row) sum += std::exp(v - mx);
    for (double v : row) out.push_back(std::exp(v - mx) / sum);
  }
  return out;
}

std::vector<double> ref_rms(const Rows& x, const std::vector<float>& w) {
  std::vector<double> out;
  for (const std::vector<double>& row : x) {
    double sq = 0;
    for (double v : row) sq += v * v;
    const double scale = 1 / std::sqrt(sq / static_cast<double>(row.size()) + 1e-5);
    for (size_t j = 0; j < row.size(); ++j) out.push_back(row[j] * scale * w[j]);
  }
  return out;
}

std::vector<double> ref_layer_norm(const Rows& x, const std::vector<float>& g, const std::vector<float>& b) {
  std::vector<double> out;
  for (const std::vector<double>& row : x) {
    const auto m = static_cast<double>(row.size());
    double mean = 0, var = 0;
    for (double v : row) mean += v;
    mean /= m;
    for (double v : row) var += (v - mean) * (v - mean);
    var /= m;
    for (size_t j = 0; j < row.size(); ++j) out.push_back((row[j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j]);
  }
  return out;
}

std::vector<double> ref_sum(const Rows& x) {
  std::vector<double> out;
  for (const std::vector<double>& row : x) {
    double s = 0;
    for (double v : row) s += v;
    out.push_back(s);
  }
  return out;
}

std::vector<double> ref_max(const Rows& x) {
  std::vector<double> out;
  for (const std::vector<double>& row : x) {
    double mx = -INFINITY;
    for (double v : row) mx = std::max(mx, v);
    out.push_back(mx);
  }
  return out;
}

/// Expects |got - want| <= tol * (1 + |want|) everywhere (exactly equal when tol is 0).
void expect_close(const std::vector<double>& want, const absl::StatusOr<runtime::Value>& got, double tol,
                  const std::string& what) {
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  const std::vector<float> y = floats(got->tensor_or_die());
  ASSERT_EQ(y.size(), want.size()) << what;
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool ok = tol == 0 ? static_cast<double>(y[i]) == want[i]
                             : std::fabs(y[i] - want[i]) <= tol * (1 + std::fabs(want[i]));
    if (!ok && ++wrong <= 5) ADD_FAILURE() << what << " at " << i << ": got " << y[i] << ", want " << want[i];
  }
  EXPECT_EQ(wrong, 0) << what << ": " << wrong << " of " << want.size() << " differ";
}

TEST(ReductionBuildTest, RowReductionsComputeWhatPlainLoopsDoAtEveryRowLength) {
  absl::StatusOr<IRModule> mod = parse_module(kReductionModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Target target = testing::generated_code_target();
  transform::PassContext ctx;
  absl::StatusOr<runtime::Module> module = build(*mod, target, transform::default_pipeline(target), ctx);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_GE(ctx.statistics().at("schedule-cpu").at("scheduled_kernels"), 5);
  for (int64_t n : {1, 3, 8}) {
    for (int64_t m : {1, 5, 15, 16, 17, 33, 100, 4096}) {
      const std::string at = " at (" + std::to_string(n) + ", " + std::to_string(m) + ")";
      Tensor x = testing::random_tensor({n, m}, 1);
      Tensor w = testing::random_tensor({m}, 2);
      Tensor b = testing::random_tensor({m}, 3);
      const Rows rows = rows_of(floats(x), n, m);
      expect_close(ref_softmax(rows), (*module)["softmax"](x), 1e-5, "softmax" + at);
      expect_close(ref_rms(rows, floats(w)), (*module)["rms"](x, w), 2e-5, "rms_norm" + at);
      // (m = 1: the variance is 0 and the output is b exactly.)
      expect_close(ref_layer_norm(rows, floats(w), floats(b)), (*module)["ln"](x, w, b), 5e-5, "layer_norm" + at);
      // A float32 sum in lanes against a double one in order.
      expect_close(ref_sum(rows), (*module)["row_sum"](x), 1e-5 * static_cast<double>(m), "sum" + at);
      expect_close(ref_max(rows), (*module)["row_max"](x), 0, "max" + at);
    }
  }
}

constexpr const char* kHalfModule = R"(module {
  func @softmax_f16(x: Tensor[(n, m), float16]) -> Tensor[(n, m), float16] {
    r = softmax(x)
    return r
  }
  func @softmax_bf16(x: Tensor[(n, m), bfloat16]) -> Tensor[(n, m), bfloat16] {
    r = softmax(x)
    return r
  }
})";

/// The values of a float16 or bfloat16 tensor (exact in float).
std::vector<float> half_values(const Tensor& t) {
  const auto* bits = static_cast<const uint16_t*>(t.data());
  std::vector<float> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    out.push_back(static_cast<float>(t.dtype() == DataType::bfloat16() ? bfloat16_value(bits[i])
                                                                        : float16_value(bits[i])));
  }
  return out;
}

// A 16-bit softmax sums its row in float32 and rounds each output once: every
// output is within one unit in the last place (2^-10 of its value for
// float16, 2^-7 for bfloat16) of the double-precision softmax of the same
// 16-bit inputs. Summed in the 16-bit dtype, a row of 4096 loses most of its
// terms (a float16 sum above 1024 moves in steps of 1).
TEST(ReductionBuildTest, HalfPrecisionSoftmaxIsWithinOneUlpOfDouble) {
  absl::StatusOr<IRModule> mod = parse_module(kHalfModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Target target = testing::generated_code_target();
  absl::StatusOr<runtime::Module> module = build(*mod, target);
  ASSERT_TRUE(module.ok()) << module.status();
  for (const DataType dtype : {DataType::float16(), DataType::bfloat16()}) {
    const bool brain = dtype == DataType::bfloat16();
    const double ulp = brain ? 0x1p-7 : 0x1p-10;
    const double smallest = brain ? 0x1p-133 : 0x1p-24;  // the subnormal spacing
    for (int64_t n : {1, 3}) {
      for (int64_t m : {1, 7, 16, 33, 1000, 4096}) {
        const std::string at = dtype.to_string() + " at (" + std::to_string(n) + ", " + std::to_string(m) + ")";
        // Inputs in [-4, 4]: exponentials from e^-8 to 1 in every row.
        std::vector<float> values = floats(testing::random_tensor({n, m}, 5));
        for (float& v : values) v *= 4;
        absl::StatusOr<Tensor> x = Tensor::from_vector({n, m}, values, dtype);
        ASSERT_TRUE(x.ok()) << x.status();
        const std::vector<double> want = ref_softmax(rows_of(half_values(*x), n, m));
        absl::StatusOr<runtime::Value> y = (*module)[brain ? "softmax_bf16" : "softmax_f16"](*x);
        ASSERT_TRUE(y.ok()) << at << ": " << y.status();
        const std::vector<float> got = half_values(y->tensor_or_die());
        ASSERT_EQ(got.size(), want.size()) << at;
        int wrong = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          if (std::fabs(got[i] - want[i]) <= ulp * std::fabs(want[i]) + smallest) continue;
          if (++wrong <= 5) ADD_FAILURE() << at << " at " << i << ": got " << got[i] << ", want " << want[i];
        }
        EXPECT_EQ(wrong, 0) << at << ": " << wrong << " of " << want.size() << " differ";
      }
    }
  }
}

TEST(ReductionBuildTest, TheReductionLoopsUsePackedFloatArithmetic) {
  if (const std::string why = testing::why_no_packed_kernels(); !why.empty()) GTEST_SKIP() << why;
  const Target target = testing::generated_code_target();
  const std::optional<std::string> version = testing::run_command("'" + resolve_compiler(target) + "' --version 2>&1");
  if (!version || version->find("Free Software Foundation") == std::string::npos) {
    GTEST_SKIP() << "the host compiler (" << resolve_compiler(target) << ") is not g++: this test reads g++'s code";
  }
  if (!testing::run_command("objdump --version >/dev/null 2>&1")) GTEST_SKIP() << "objdump is not installed";
  absl::StatusOr<IRModule> mod = parse_module(kReductionModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  BuildInfo info;
  absl::StatusOr<runtime::Module> module = build(*mod, target, &info);
  ASSERT_TRUE(module.ok()) << module.status();
  // The kernels by the function that calls them (the lowered names carry suffixes).
  std::map<std::string, std::string> kernel_of;
  for (const auto& [name, func] : info.lowered.functions()) {
    if (func.as<PrimFuncNode>() == nullptr) continue;
    for (const char* op : {"softmax", "rms_norm", "layer_norm", "sum", "max"}) {
      if (name.rfind(op, 0) == 0) kernel_of[op] = name;
    }
  }
  const std::regex packed_max(R"(\svmaxps\s.*%[yz]mm)");
  const std::regex packed_add(R"(\svaddps\s.*%[yz]mm)");
  const std::regex packed_fma_or_mul(R"(\sv(fmadd\w*|mul)ps\s.*%[yz]mm)");
  const std::regex libm_exp(R"(call.*<_*expf?[@>])");
  auto code_of = [&](const std::string& op) {
    EXPECT_TRUE(kernel_of.count(op)) << "no kernel for " << op;
    const std::string code = testing::disassembly_of(info.library_path, "relax_kernel_" + kernel_of[op]);
    EXPECT_FALSE(code.empty()) << "no code for " << kernel_of[op] << " in " << info.library_path;
    return code;
  };
  // The sum and the max kernels are the reduction alone.
  const std::string sum = code_of("sum");
  EXPECT_TRUE(std::regex_search(sum, packed_add)) << "sum: no packed add on ymm/zmm:\n" << sum;
  const std::string max = code_of("max");
  EXPECT_TRUE(std::regex_search(max, packed_max)) << "max: no packed max on ymm/zmm:\n" << max;
  // Softmax: its max reduction is the only max in it; exp stays inline.
  const std::string softmax = code_of("softmax");
  EXPECT_TRUE(std::regex_search(softmax, packed_max)) << "softmax: no packed max on ymm/zmm:\n" << softmax;
  EXPECT_TRUE(std::regex_search(softmax, packed_add)) << "softmax: no packed add on ymm/zmm:\n" << softmax;
  EXPECT_FALSE(std::regex_search(softmax, libm_exp)) << "softmax: a libm exp call remains:\n" << softmax;
  // Its normalisation vectorised too, a packed multiply by the row's
  // reciprocal of the sum, computed once per row: no packed division.
  EXPECT_TRUE(std::regex_search(softmax, std::regex(R"(\svmulps\s.*%[yz]mm)")))
      << "softmax: no packed multiply on ymm/zmm:\n" << softmax;
  EXPECT_FALSE(std::regex_search(softmax, std::regex(R"(\svdivps\s.*%[yz]mm)")))
      << "softmax: a packed division:\n" << softmax;
  // rms_norm: the sum of squares (a packed multiply or fma into the lanes).
  const std::string rms = code_of("rms_norm");
  EXPECT_TRUE(std::regex_search(rms, packed_fma_or_mul)) << "rms_norm: no packed fma/mul on ymm/zmm:\n" << rms;
  // Its scale, rsqrt of the row's mean square, is computed once per row, not
  // as a packed square root and division for every vector of the row.
  EXPECT_FALSE(std::regex_search(rms, std::regex(R"(\svsqrtps\s)"))) << "rms_norm: a packed square root:\n" << rms;
}

}  // namespace
}  // namespace relax
