// Micro-kernels end to end: a user's micro-kernel (registered here) and the
// built-in relax_dot_f32, called with call_extern from PrimFuncs of a module,
// compiled once, run at several sizes of two symbolic dims, evaluated by the
// loop-level evaluator, exported as an AOT library and loaded again -- every
// result against a plain-loop reference written here. And the errors of
// generate_cpp for a call that does not fit the registry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "object_code_util.h"
#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/codegen/cpp_codegen.h"
#include "relax/ir/micro_kernel.h"
#include "relax/ir/parser.h"
#include "relax/transform/prim_eval.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using runtime::Tensor;
using runtime::Value;

// The user's kernel, defined once: compiled here (the evaluator's host
// function) and registered as text (what generated units get).
#define USER_MICRO_KERNEL(...)  \
  __VA_ARGS__                   \
  constexpr const char* kUserKernelSource = #__VA_ARGS__;

USER_MICRO_KERNEL(static inline void user_scale_add_f32(const float* x, const float* y, float alpha, int64_t n,
                                                        float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * alpha + y[i];
})

absl::Status register_user_kernel() {
  static const absl::Status status = register_micro_kernel(make_micro_kernel<&user_scale_add_f32>(
      "user_scale_add_f32", kUserKernelSource, {"x[n]", "y[n]", "alpha", "n", "out[n]"}));
  return status;
}

// a = x * 0.5 + y row by row (the user's kernel); b = a @ w^T (the built-in dot).
constexpr const char* kMicroKernelModule = R"(module {
  prim_func @scale_add_rows(X: Buffer[(n, 8), float32], Y: Buffer[(n, 8), float32], O: Buffer[(n, 8), float32]) {
    for i in range(n) parallel {
      call_extern user_scale_add_f32(&X[i, 0], &Y[i, 0], 0.5f32, 8, &O[i, 0])
    }
  }
  prim_func @dot_rows(A: Buffer[(n, 8), float32], W: Buffer[(m, 8), float32], C: Buffer[(n, m), float32]) {
    for i in range(n) {
      for j in range(m) {
        call_extern relax_dot_f32(&A[i, 0], &W[j, 0], 8, &C[i, j])
      }
    }
  }
  func @main(x: Tensor[(n, 8), float32], y: Tensor[(n, 8), float32], w: Tensor[(m, 8), float32])
      -> Tensor[(n, m), float32] {
    dataflow {
      a = call_tir(@scale_add_rows, (x, y), sinfo=Tensor[(n, 8), float32])
      output b = call_tir(@dot_rows, (a, w), sinfo=Tensor[(n, m), float32])
    }
    return b
  }
})";

std::vector<float> values(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

// The reference: plain loops in double.
std::vector<double> reference(const Tensor& x, const Tensor& y, const Tensor& w) {
  const std::vector<float> xv = values(x), yv = values(y), wv = values(w);
  const int64_t n = x.shape()[0], m = w.shape()[0];
  std::vector<double> out(static_cast<size_t>(n * m), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double sum = 0;
      for (int64_t r = 0; r < 8; ++r) {
        const size_t at = static_cast<size_t>(i * 8 + r);
        sum += (double{xv[at]} * 0.5 + yv[at]) * wv[static_cast<size_t>(j * 8 + r)];
      }
      out[static_cast<size_t>(i * m + j)] = sum;
    }
  }
  return out;
}

void expect_matches(const std::vector<double>& expected, const std::vector<float>& got, const std::string& what) {
  ASSERT_EQ(expected.size(), got.size()) << what;
  for (size_t k = 0; k < expected.size(); ++k) {
    ASSERT_NEAR(got[k], expected[k], 1e-5 * (1 + std::fabs(expected[k]))) << what << " at " << k;
  }
}

// Runs main at several (n, m) and checks each result; also runs the two
// kernels through the evaluator when `evaluate`.
void run_sizes(const runtime::Module& module, const std::string& what, bool evaluate, const IRModule& ir) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {5, 3}, {33, 17}, {64, 2}}) {
    SCOPED_TRACE(what + ": n=" + std::to_string(n) + " m=" + std::to_string(m));
    const Tensor x = testing::random_tensor({n, 8}, 1 + static_cast<int>(n));
    const Tensor y = testing::random_tensor({n, 8}, 2 + static_cast<int>(m));
    const Tensor w = testing::random_tensor({m, 8}, 3);
    const std::vector<double> expected = reference(x, y, w);
    absl::StatusOr<Value> out = module["main"](x, y, w);
    ASSERT_TRUE(out.ok()) << out.status();
    expect_matches(expected, values(out->tensor_or_die()), what);
    if (!evaluate) continue;
    Tensor a = *Tensor::empty({n, 8}, DataType::float32());
    Tensor c = *Tensor::empty({n, m}, DataType::float32());
    using transform::BufferAccess;
    const transform::PrimEvalOptions options{
        .name = "", .access = {BufferAccess::kInput, BufferAccess::kInput, BufferAccess::kOutput}};
    absl::Status s = transform::run_prim_func(ir.lookup("scale_add_rows"), {x, y, a}, options);
    ASSERT_TRUE(s.ok()) << s;
    s = transform::run_prim_func(ir.lookup("dot_rows"), {a, w, c}, options);
    ASSERT_TRUE(s.ok()) << s;
    expect_matches(expected, values(c), what + " (evaluated)");
  }
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(MicroKernelBuild, AUserKernelAndABuiltinCompileEvaluateExportAndLoad) {
  ASSERT_TRUE(register_user_kernel().ok()) << register_user_kernel();
  absl::StatusOr<IRModule> mod = parse_module(kMicroKernelModule);
  ASSERT_TRUE(mod.ok()) << mod.status();

  BuildInfo info;
  absl::StatusOr<runtime::Module> built = build(*mod, testing::generated_code_target(), &info);
  ASSERT_TRUE(built.ok()) << built.status();
  run_sizes(*built, "compiled", /*evaluate=*/true, *mod);

  // Each source is in the unit once: the user's, and the built-ins' header.
  absl::StatusOr<std::string> source = generate_cpp(info.lowered, testing::generated_code_target());
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ(count_of(*source, kUserKernelSource), 1u);
  EXPECT_EQ(count_of(*source, "static inline void relax_dot_f32("), 1u);
  EXPECT_THAT(*source, HasSubstr("user_scale_add_f32(X + "));
  EXPECT_THAT(*source, HasSubstr("relax_dot_f32(A + "));

  testing::TempDir dir;
  const std::string path = dir.path() + "/micro_kernels.so";
  ASSERT_TRUE(built->export_library(path).ok());
  absl::StatusOr<runtime::Module> loaded = runtime::load_module(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  run_sizes(*loaded, "exported", /*evaluate=*/false, *mod);
}

TEST(MicroKernelBuild, GenerateCppRejectsCallsThatDoNotFitTheRegistry) {
  auto error_of = [](const std::string& body) {
    absl::StatusOr<IRModule> mod = parse_module(
        "module {\n  prim_func @k(A: Buffer[(n,), float32], C: Buffer[(1,), float32]) {\n    " + body + "\n  }\n}");
    EXPECT_TRUE(mod.ok()) << mod.status();
    if (!mod.ok()) return std::string();
    absl::StatusOr<std::string> cpp = generate_cpp(*mod, testing::build_test_target());
    return cpp.ok() ? std::string("generated") : std::string(cpp.status().message());
  };
  EXPECT_EQ(error_of("call_extern codegen_missing_kernel(&A[0], &C[0])"),
            "PrimFunc `k`: extern call of `codegen_missing_kernel`: no micro-kernel of that name is registered");
  EXPECT_THAT(error_of("call_extern relax_dot_f32(&A[0], &A[0], n)"),
              HasSubstr("PrimFunc `k`: extern call of `relax_dot_f32`: 3 arguments, but relax_dot_f32("));
  EXPECT_EQ(error_of("call_extern relax_dot_f32(&A[0], &A[0], 1.5f32, &C[0])"),
            "PrimFunc `k`: extern call of `relax_dot_f32`: argument 2 (`n`): expected an int64 scalar, found "
            "`1.5f32` of dtype float32");
  EXPECT_EQ(error_of("call_extern relax_dot_f32(&A[0], &A[0], n, &C[0])"), "generated");
}

// ---- The built-ins vectorise -------------------------------------------------

// g++ -O3 -march=native turns the built-ins' loops into packed float arithmetic
// (the fixed-size partial sums of relax_dot_f32 without -ffast-math). Read in
// the object code of a kernel that calls them (inlined into it).
TEST(MicroKernelBuild, TheBuiltinsCompileToPackedFloatArithmetic) {
  const Target target = testing::generated_code_target();
  const std::optional<std::string> version = testing::run_command("'" + resolve_compiler(target) + "' --version 2>&1");
  if (!version || version->find("Free Software Foundation") == std::string::npos) {
    GTEST_SKIP() << "the host compiler is not g++";
  }
  if (!testing::run_command("objdump --version >/dev/null 2>&1")) GTEST_SKIP() << "objdump is not installed";
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
    prim_func @dot_only(A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(1,), float32]) {
      call_extern relax_dot_f32(&A[0], &B[0], n, &C[0])
    }
    prim_func @axpy_only(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) {
      call_extern relax_axpy_f32(3f32, &A[0], n, &B[0])
    }
  })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<std::string> source = generate_cpp(*mod, target);
  ASSERT_TRUE(source.ok()) << source.status();
  absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(*source, target);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::regex packed(R"(\sv(fmadd|mul|add)\w*ps\s.*%[yz]mm)");
  for (const char* name : {"dot_only", "axpy_only"}) {
    std::string code = testing::disassembly_of(compiled->library_path, std::string("relax_kernel_") + name);
    // Where g++ kept a micro-kernel out of line, its own code is what runs.
    code += testing::disassembly_of(compiled->library_path, name == std::string("dot_only") ? "relax_dot_f32" : "relax_axpy_f32");
    ASSERT_FALSE(code.empty()) << name;
    EXPECT_TRUE(std::regex_search(code, packed)) << name << ": no packed float arithmetic:\n" << code;
  }
}

}  // namespace
}  // namespace relax
