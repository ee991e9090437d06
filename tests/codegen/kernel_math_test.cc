// relax/support/kernel_math.h: the error bounds of the vectorisable exp,
// log, sigmoid, tanh, erf, sin and cos, and that the kernels using them
// vectorise.
//
// The bounds are measured against libm in double over a sweep of float32 bit
// patterns (every 4093rd one over all of them, every 1021st one over
// [-100, 100] and over +-[100, 2e5] -- the angles of rotary embeddings --,
// and the special values), in ulp of the exact result's float32
// spacing (subnormal spacing below FLT_MIN). They are measured twice: on the
// header compiled into this test (no -march flags: the FMA-free path) and on a
// kernel the code generator emits and the host compiler builds with the
// default target (-O3 -march=native: FMA where the host has it, and the loop
// vectorised), so the numbers hold for the code that runs in models.
//
// The vectorisation test builds silu(x) * z through relax::build and reads
// the kernel library's object code (objdump): no libm call may remain in the
// kernels and their loop must use packed float arithmetic on ymm/zmm
// registers; so must a kernel of each function alone. It is skipped, visibly, when the host compiler is not g++ or
// objdump is missing.
#include "relax/support/kernel_math.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "object_code_util.h"
#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/codegen/cpp_codegen.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

using testing::JitTest;
using testing::KernelArgs;

constexpr float kUnbounded = std::numeric_limits<float>::infinity();

struct MathRow {
  const char* name;
  float (*fast)(float);
  double (*reference)(double);
  SymExpr (*intrinsic)(const SymExpr&);  ///< the loop-level intrinsic the code generator spells as `fast`
  double max_ulp;                        ///< the bound kernel_math.h documents
  /// The bound holds for |x| <= domain (and for +-inf, NaN); beyond it (sin
  /// and cos of finite |x| > 1.6e9) the result must only lie in [-1, 1].
  float domain = kUnbounded;
};

const MathRow kRows[] = {
    {"exp", [](float x) { return vec_exp(x); }, [](double x) { return std::exp(x); },
     [](const SymExpr& x) { return exp(x); }, 1.5},
    {"sigmoid", [](float x) { return vec_sigmoid(x); }, [](double x) { return 1 / (1 + std::exp(-x)); },
     [](const SymExpr& x) { return sigmoid(x); }, 3},
    {"tanh", [](float x) { return vec_tanh(x); }, [](double x) { return std::tanh(x); },
     [](const SymExpr& x) { return tanh(x); }, 2},
    {"erf", [](float x) { return vec_erf(x); }, [](double x) { return std::erf(x); },
     [](const SymExpr& x) { return erf(x); }, 3},
    {"log", [](float x) { return vec_log(x); }, [](double x) { return std::log(x); },
     [](const SymExpr& x) { return log(x); }, 2},
    {"sin", [](float x) { return vec_sin(x); }, [](double x) { return std::sin(x); },
     [](const SymExpr& x) { return sin(x); }, 1, 1.6e9f},
    {"cos", [](float x) { return vec_cos(x); }, [](double x) { return std::cos(x); },
     [](const SymExpr& x) { return cos(x); }, 1, 1.6e9f},
};
constexpr size_t kNumRows = std::size(kRows);

float float_of(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

uint32_t bits_of(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

/// The inputs of the sweep (see the top of this file).
std::vector<float> sweep_inputs() {
  std::vector<float> xs;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4093) xs.push_back(float_of(static_cast<uint32_t>(b)));
  for (uint32_t b = 0; b <= bits_of(2e5f); b += 1021) {
    xs.push_back(float_of(b));
    xs.push_back(-float_of(b));
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, inf, std::numeric_limits<float>::quiet_NaN(), FLT_MIN, FLT_MAX, FLT_TRUE_MIN, 1e-30f,
                  88.72283f, 88.72284f, 89.0f, 103.97f, 104.0f, 200.0f, 0.625f, 0.875f, 3.92f, 4.0f, 9.0f, 1.0f,
                  // sin and cos: multiples of pi/2 and pi/4 (the quadrant edges), the float
                  // nearest to pi, large angles up to the end of the domain and beyond it.
                  1.57079637f, 0.785398185f, 2.35619450f, 3.14159274f, 4.71238899f, 6.28318548f, 1e5f, 102943.7f,
                  1e6f, 1e9f, 1.6e9f, 1.7e9f, 1e20f}) {
    xs.push_back(v);
    xs.push_back(-v);
  }
  return xs;
}

/// |got - want| in units of the float32 spacing at |want|; infinite when the
/// special-value cases disagree (NaN vs number, or the wrong infinity).
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  const float rounded = static_cast<float>(want);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  int exponent = 0;
  (void)std::frexp(std::max(std::fabs(want), static_cast<double>(FLT_MIN)), &exponent);
  const double spacing = std::ldexp(1.0, exponent - 24);  // 2^-149 for subnormals
  return std::fabs(static_cast<double>(got) - want) / spacing;
}

/// Checks `got[i]` = row(xs[i]) within the row's bound; reports the worst input.
void expect_within_bound(const MathRow& row, const std::vector<float>& xs, const float* got,
                         const std::string& where) {
  double worst = 0;
  float worst_x = 0;
  size_t checked = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::isfinite(xs[i]) && std::fabs(xs[i]) > row.domain) {
      EXPECT_TRUE(got[i] >= -1.0f && got[i] <= 1.0f)
          << where << ": " << row.name << "(" << xs[i] << ") = " << got[i] << ", beyond its domain, is not in [-1, 1]";
      continue;
    }
    ++checked;
    const double e = ulp_error(got[i], row.reference(static_cast<double>(xs[i])));
    if (!(e <= worst)) {
      worst = e;
      worst_x = xs[i];
    }
  }
  EXPECT_LE(worst, row.max_ulp) << where << ": " << row.name << " is " << worst << " ulp off at x = "
                                << worst_x << " (bit pattern 0x" << std::hex << bits_of(worst_x) << std::dec
                                << "): reference " << row.reference(static_cast<double>(worst_x));
  std::printf("[ kernel_math ] %s, %s: max %.3f ulp (bound %.1f) over %zu inputs\n", where.c_str(), row.name,
              worst, row.max_ulp, checked);
}

TEST(KernelMathTest, ErrorBoundsOfTheHeader) {
  const std::vector<float> xs = sweep_inputs();
  std::vector<float> got(xs.size());
  for (const MathRow& row : kRows) {
    for (size_t i = 0; i < xs.size(); ++i) got[i] = row.fast(xs[i]);
    expect_within_bound(row, xs, got.data(), "header");
  }
}

TEST(KernelMathTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(vec_exp(inf), inf);
  EXPECT_EQ(vec_exp(-inf), 0.0f);
  EXPECT_EQ(vec_exp(88.8f), inf);
  EXPECT_EQ(vec_exp(-104.0f), 0.0f);
  EXPECT_EQ(vec_exp(0.0f), 1.0f);
  EXPECT_GT(vec_exp(-100.0f), 0.0f);  // subnormal, not flushed
  EXPECT_EQ(vec_sigmoid(inf), 1.0f);
  EXPECT_EQ(vec_sigmoid(-inf), 0.0f);
  EXPECT_EQ(vec_sigmoid(0.0f), 0.5f);
  EXPECT_EQ(vec_tanh(inf), 1.0f);
  EXPECT_EQ(vec_tanh(-inf), -1.0f);
  EXPECT_EQ(vec_erf(inf), 1.0f);
  EXPECT_EQ(vec_erf(-inf), -1.0f);
  EXPECT_TRUE(std::signbit(vec_tanh(-0.0f)) && vec_tanh(-0.0f) == 0.0f);
  EXPECT_TRUE(std::signbit(vec_erf(-0.0f)) && vec_erf(-0.0f) == 0.0f);
  EXPECT_EQ(vec_log(0.0f), -inf);
  EXPECT_EQ(vec_log(-0.0f), -inf);
  EXPECT_EQ(vec_log(inf), inf);
  EXPECT_EQ(vec_log(1.0f), 0.0f);
  EXPECT_TRUE(std::isnan(vec_log(-1.0f)));
  EXPECT_TRUE(std::isnan(vec_log(-inf)));
  EXPECT_NEAR(vec_log(FLT_TRUE_MIN), std::log(static_cast<double>(FLT_TRUE_MIN)), 1e-5);
  EXPECT_EQ(vec_sin(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(vec_sin(-0.0f)) && vec_sin(-0.0f) == 0.0f);
  EXPECT_EQ(vec_cos(0.0f), 1.0f);
  EXPECT_EQ(vec_cos(-0.0f), 1.0f);
  EXPECT_EQ(vec_sin(FLT_TRUE_MIN), FLT_TRUE_MIN);  // sin(x) = x below 2^-12 or so
  EXPECT_EQ(vec_sin(-1e-20f), -1e-20f);
  for (float v : {inf, -inf}) {
    EXPECT_TRUE(std::isnan(vec_sin(v))) << v;
    EXPECT_TRUE(std::isnan(vec_cos(v))) << v;
  }
  // Beyond the accurate domain (|x| > 1.6e9) a value in [-1, 1].
  for (float v : {FLT_MAX, -FLT_MAX, 1e30f, -3e9f}) {
    EXPECT_LE(std::fabs(vec_sin(v)), 1.0f) << v;
    EXPECT_LE(std::fabs(vec_cos(v)), 1.0f) << v;
  }
  for (const MathRow& row : kRows) {
    EXPECT_TRUE(std::isnan(row.fast(nan))) << row.name;
    EXPECT_TRUE(std::isnan(row.fast(-nan))) << row.name;
  }
}

using KernelMathJitTest = JitTest;

// Y[f, i] = function f of X[i], through the code generator and the host compiler.
TEST_F(KernelMathJitTest, ErrorBoundsOfTheEmittedKernel) {
  SymVar n("n");
  PrimFuncBuilder b("math");
  Buffer X = b.buffer_param("X", {n}, DataType::float32());
  Buffer Y = b.buffer_param("Y", {static_cast<int64_t>(kNumRows), n}, DataType::float32());
  b.for_("i", 0, n, [&](SymVar i) {
    const SymExpr x = buffer_load(X, {i});
    for (size_t f = 0; f < kNumRows; ++f) b.store(Y, {static_cast<int64_t>(f), i}, kRows[f].intrinsic(x));
  });
  RelaxKernelFn fn = jit_one(b, "math");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, ::testing::HasSubstr("relax::vec_sigmoid("));
  EXPECT_THAT(last_source_, ::testing::HasSubstr("relax::vec_cos("));
  std::vector<float> xs = sweep_inputs();
  const auto count = static_cast<int64_t>(xs.size());
  std::vector<float> ys(kNumRows * xs.size());
  ASSERT_EQ(KernelArgs().buffer(xs, {count}).buffer(ys, {static_cast<int64_t>(kNumRows), count}).call(fn), "");
  for (size_t f = 0; f < kNumRows; ++f) expect_within_bound(kRows[f], xs, ys.data() + f * xs.size(), "kernel");
}

/// The disassembly of each function of `library` whose name contains
/// "relax_kernel_" (the kernels and their OpenMP outlined bodies), by name.
std::map<std::string, std::string> kernel_disassembly(const std::string& library) {
  std::map<std::string, std::string> out;
  std::optional<std::string> text = testing::run_command("objdump -d --no-show-raw-insn '" + library + "' 2>/dev/null");
  if (!text) return out;
  std::string* current = nullptr;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    const std::string_view line(text->data() + start, end - start);
    const size_t open = line.find(" <");
    if (line.size() > 2 && line.back() == ':' && open != std::string_view::npos) {
      const std::string name(line.substr(open + 2, line.size() - open - 4));
      current = name.find("relax_kernel_") != std::string::npos ? &out[name] : nullptr;
    }
    if (current != nullptr) current->append(line).append("\n");
    start = end + 1;
  }
  return out;
}

/// Why the tests below cannot read `target`'s code, or "" when they can.
std::string why_not_inspectable(const Target& target) {
  const std::optional<std::string> version = testing::run_command("'" + resolve_compiler(target) + "' --version 2>&1");
  if (!version || version->find("Free Software Foundation") == std::string::npos ||
      version->find("clang") != std::string::npos) {
    return "the host compiler (" + resolve_compiler(target) + ") is not g++: these tests read g++'s vectorised code";
  }
  if (!testing::run_command("objdump --version >/dev/null 2>&1")) return "objdump is not installed";
  return "";
}

const std::regex kLibmCall(R"(call.*<_*(exp|log|tanh|erf|sin|cos|sincos)f?[@>])");
// Packed single or double arithmetic: sin and cos compute in double.
const std::regex kPackedFloat(R"(\sv(fmadd|fnmadd|fmsub|fnmsub|mul|add|sub|div)\w*p[sd]\s.*%[yz]mm)");

/// Expects `code` to have packed float (or, for sin and cos, double) arithmetic and no libm call.
void expect_vectorised(const std::string& code, const std::string& what) {
  EXPECT_FALSE(std::regex_search(code, kLibmCall)) << what << ": a libm call remains:\n" << code;
  EXPECT_TRUE(std::regex_search(code, kPackedFloat))
      << what << ": no packed float arithmetic on ymm/zmm registers:\n" << code;
}

/// The disassembly of the kernels of `mb`'s module built for `target` ("" after a failure,
/// which it reports); `kernels`, when given, receives the module's kernel count.
std::string built_kernel_code(ModuleBuilder& mb, const Target& target, size_t* kernels = nullptr) {
  absl::StatusOr<IRModule> mod = mb.build();
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return "";
  BuildInfo info;
  absl::StatusOr<runtime::Module> built = build(*mod, target, &info);
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) return "";
  if (kernels != nullptr) {
    *kernels = 0;
    for (const auto& [name, func] : info.lowered.functions()) *kernels += func.as<PrimFuncNode>() != nullptr;
  }
  std::string code;
  for (const auto& [name, text] : kernel_disassembly(info.library_path)) code += text;
  EXPECT_FALSE(code.empty()) << "no relax_kernel_ function in the disassembly of " << info.library_path;
  return code;
}

TEST(KernelMathVectoriseTest, SiluTimesMulKernelUsesPackedFloatArithmetic) {
  if (const std::string why = testing::why_no_packed_kernels(); !why.empty()) GTEST_SKIP() << why;
  const Target target = testing::build_test_target();
  if (const std::string why = why_not_inspectable(target); !why.empty()) GTEST_SKIP() << why;
  SymVar n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, DataType::float32()));
  Var z = f.param("z", tensor_sinfo({n}, DataType::float32()));
  Var out;
  {
    auto df = f.dataflow();  // one fused kernel
    out = f.emit_output(op::multiply(f.emit(op::silu(x)), z), "out");
  }
  f.ret(out);
  size_t kernels = 0;
  const std::string code = built_kernel_code(mb, target, &kernels);
  EXPECT_EQ(kernels, 1u) << "silu and multiply are fused into one kernel";
  expect_vectorised(code, "silu(x) * z");
}

// Over (b, n, 64) the schedule fuses the b and n loops into one parallel loop, whose variable
// gives b and n back through floordiv/floormod: declared inside the vectorised loop, they kept
// g++ from vectorising it (the language model's silu ran scalar). No scalar float arithmetic.
TEST(KernelMathVectoriseTest, SiluOverFusedRowsHasNoScalarLoop) {
  if (const std::string why = testing::why_no_packed_kernels(); !why.empty()) GTEST_SKIP() << why;
  const Target target = testing::build_test_target();
  if (const std::string why = why_not_inspectable(target); !why.empty()) GTEST_SKIP() << why;
  SymVar b("b"), n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({b, n, 64}, DataType::float32()));
  Var out;
  {
    auto df = f.dataflow();
    out = f.emit_output(op::silu(x), "out");
  }
  f.ret(out);
  const std::string code = built_kernel_code(mb, target);
  expect_vectorised(code, "silu over (b, n, 64)");
  const std::regex scalar_float(R"(\sv(fmadd|fnmadd|fmsub|fnmsub|mul|add|sub|div)\w*ss\s)");
  EXPECT_FALSE(std::regex_search(code, scalar_float)) << "a scalar copy of the loop remains:\n" << code;
}

// One kernel per function, Y[i] = f(X[i]), serial (no OpenMP outlining): each
// loop vectorises on its own (g++ turns some selects into branches, which
// keeps a loop scalar; and an inlined error path once made the whole kernel
// body cold, which kept every loop scalar).
TEST_F(KernelMathJitTest, EachFunctionsKernelUsesPackedFloatArithmetic) {
  if (const std::string why = testing::why_no_packed_kernels(); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = why_not_inspectable(target_); !why.empty()) GTEST_SKIP() << why;
  std::vector<std::pair<std::string, Expr>> funcs;
  for (size_t f = 0; f < kNumRows; ++f) {
    SymVar n("n");
    PrimFuncBuilder b(std::string("k_") + kRows[f].name);
    Buffer X = b.buffer_param("X", {n}, DataType::float32());
    Buffer Y = b.buffer_param("Y", {n}, DataType::float32());
    b.for_("i", 0, n, [&](SymVar i) { b.store(Y, {i}, kRows[f].intrinsic(buffer_load(X, {i}))); });
    funcs.emplace_back(std::string("k_") + kRows[f].name, build(b));
  }
  absl::StatusOr<std::string> source = generate_cpp(funcs, target_);
  ASSERT_TRUE(source.ok()) << source.status();
  absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(*source, target_);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::map<std::string, std::string> code = kernel_disassembly(compiled->library_path);
  for (const MathRow& row : kRows) {
    std::string text;
    for (const auto& [name, body] : code) {
      if (name.find(std::string("relax_kernel_k_") + row.name) != std::string::npos) text += body;
    }
    ASSERT_FALSE(text.empty()) << "no kernel for " << row.name;
    expect_vectorised(text, row.name);
  }
}

}  // namespace
}  // namespace relax
