// generate_cpp without compiling: the unit's structure (the verbatim ABI
// header, standard includes only, the entry points), the pragmas each loop
// kind gets, and the error Status for what the generator does not translate.
#include "relax/codegen/cpp_codegen.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "relax/ir/parser.h"
#include "relax/ir/prim_func_builder.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr DataType kF32 = DataType::float32();

Expr build(const PrimFuncBuilder& b) {
  absl::StatusOr<Expr> f = b.build();
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : Expr();
}

/// copy(A: f32[n], B: f32[n]) with its loop of the given kind.
Expr copy_kernel(ForKind kind, int64_t extent = 0) {
  SymVar n("n");
  PrimFuncBuilder b("copy");
  Buffer A = b.buffer_param("A", {n}, kF32);
  Buffer B = b.buffer_param("B", {n}, kF32);
  b.for_("i", 0, extent > 0 ? SymExpr(extent) : SymExpr(n), kind,
         [&](SymVar i) { b.store(B, {i}, buffer_load(A, {i})); });
  return build(b);
}

std::string generate(const Expr& f, const Target& target = Target()) {
  absl::StatusOr<std::string> s = generate_cpp({{"copy", f}}, target);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : std::string();
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CppCodegen, CarriesTheAbiHeaderVerbatim) {
  // The header in the source tree (not found through __FILE__, which ccache's base_dir can make
  // relative to the build directory).
  const std::filesystem::path header =
      std::filesystem::path(RELAX_SOURCE_DIR) / "include/relax/runtime/kernel_abi.h";
  const std::string text = read_text(header);
  ASSERT_THAT(text, HasSubstr("typedef struct RelaxKernelArg")) << header;
  EXPECT_EQ(kernel_abi_text(), text);
  EXPECT_THAT(generate(copy_kernel(ForKind::kSerial)), HasSubstr(text));
}

TEST(CppCodegen, CarriesTheHalfFloatConversionsVerbatim) {
  // Kernels round float16/bfloat16 with the compiler's own code, not a copy of its algorithm.
  const std::filesystem::path header =
      std::filesystem::path(RELAX_SOURCE_DIR) / "include/relax/support/half_float.h";
  const std::string text = read_text(header);
  ASSERT_THAT(text, HasSubstr("inline uint16_t float16_bits(double v)")) << header;
  EXPECT_THAT(generate(copy_kernel(ForKind::kSerial)), HasSubstr(text));
}

TEST(CppCodegen, CarriesTheKernelMathVerbatim) {
  // Kernels run the very code whose error bounds kernel_math_test.cc measures.
  const std::filesystem::path header =
      std::filesystem::path(RELAX_SOURCE_DIR) / "include/relax/support/kernel_math.h";
  const std::string text = read_text(header);
  ASSERT_THAT(text, HasSubstr("float vec_exp(float x)")) << header;
  EXPECT_THAT(generate(copy_kernel(ForKind::kSerial)), HasSubstr(text));
}

TEST(CppCodegen, IncludesOnlyStandardHeadersAndExportsTheEntryPoints) {
  const std::string source = generate(copy_kernel(ForKind::kSerial));
  const std::regex include(R"(#include\s*<([^>]+)>)");
  // As a set: the verbatim copies of kernel_abi.h and half_float.h repeat some.
  std::set<std::string> headers;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), include); it != std::sregex_iterator(); ++it) {
    headers.insert((*it)[1]);
  }
  EXPECT_THAT(headers, ::testing::UnorderedElementsAre("algorithm", "cmath", "cstdint", "cstdio", "cstdlib",
                                                       "cstring", "stdint.h"));
  EXPECT_THAT(source, Not(HasSubstr("#include \"")));
  EXPECT_THAT(source, HasSubstr("extern \"C\" RELAX_EXPORT int32_t relax_abi_version(void)"));
  EXPECT_THAT(source, HasSubstr("extern \"C\" RELAX_EXPORT const RelaxKernelEntry* relax_kernels(int32_t* count)"));
  EXPECT_THAT(source, HasSubstr("static int32_t relax_kernel_copy(const RelaxKernelArg* args, int32_t num_args"));
}

// kernel_abi.h version 2: the ISA record (the target's level; one #ifdef per known feature, so
// the compiler's own macros say what it was allowed to use) and the runtime's table.
TEST(CppCodegen, TheUnitRecordsItsIsaAndTakesTheRuntimesTable) {
  Target target;
  target.isa_flags = {"-march=x86-64-v3"};
  const std::string source = generate(copy_kernel(ForKind::kSerial), target);
  EXPECT_THAT(source, HasSubstr("const char relax_isa_level[] = \"x86-64-v3\";\n"));
  EXPECT_THAT(source, HasSubstr("#ifdef __AVX2__\n    \" avx2\"\n#endif\n"));
  EXPECT_THAT(source, HasSubstr("#ifdef __AVX512F__\n    \" avx512f\"\n#endif\n"));
  EXPECT_THAT(source, HasSubstr("extern \"C\" RELAX_EXPORT void relax_set_runtime_api(const RelaxRuntimeApi* api)"));
  EXPECT_THAT(generate(copy_kernel(ForKind::kSerial)), HasSubstr("const char relax_isa_level[] = \"native\";\n"));
}

TEST(CppCodegen, LoopKindsGetTheirPragmas) {
  Target target;
  // A parallel loop is outlined into a lambda over a range of its iterations, run by the
  // runtime's thread pool (relax/runtime/thread_pool.h): 0 asks for what the budget allows,
  // Target::threads > 1 for at most that many.
  const std::string parallel = generate(copy_kernel(ForKind::kParallel), target);
  EXPECT_THAT(parallel, HasSubstr("auto i_body = [&](int64_t i_lo, int64_t i_hi) -> int32_t {\n"));
  EXPECT_THAT(parallel, HasSubstr("relax_parallel_for(0, n, 0, i_body) != 0) return 1;\n"));
  EXPECT_THAT(parallel, Not(HasSubstr("omp parallel")));
  target.threads = 3;
  EXPECT_THAT(generate(copy_kernel(ForKind::kParallel), target), HasSubstr("relax_parallel_for(0, n, 3, i_body) != 0) return 1;\n"));
  target.threads = 1;
  EXPECT_THAT(generate(copy_kernel(ForKind::kParallel), target), Not(HasSubstr("if (relax_parallel_for(")));
  EXPECT_THAT(generate(copy_kernel(ForKind::kVectorized)), HasSubstr("#pragma omp simd\n"));
  EXPECT_THAT(generate(copy_kernel(ForKind::kUnrolled, 16)), HasSubstr("#pragma GCC unroll 16\n"));
  EXPECT_THAT(generate(copy_kernel(ForKind::kUnrolled)), HasSubstr("#pragma GCC unroll 8\n"));
  EXPECT_THAT(generate(copy_kernel(ForKind::kSerial)), Not(HasSubstr("#pragma")));
}

// rows(A: f32[n, 6, m], B: f32[n, 6, m], k: i64): a loop over the n * 6 rows taken apart by
// floordiv and floormod, around a loop over m. The row's indices are computed once per row, at
// the top of its body (the divisor 6 cannot be 0), not for every element; a division by k, which
// may be 0 and is not a factor of the loops' extents, stays where the program has it.
TEST(CppCodegen, ARowIndexIsTakenApartOncePerRow) {
  SymVar n("n"), m("m");
  PrimFuncBuilder b("rows");
  Buffer A = b.buffer_param("A", {n, SymExpr(6), m}, kF32);
  Buffer B = b.buffer_param("B", {n, SymExpr(6), m}, kF32);
  const SymVar k = b.scalar_param("k");
  b.for_("r", 0, SymExpr(n) * 6, ForKind::kSerial, [&](SymVar r) {
    b.for_("j", 0, SymExpr(m), ForKind::kSerial, [&](SymVar j) {
      const std::vector<SymExpr> at = {floordiv(SymExpr(r), SymExpr(6)), floormod(SymExpr(r), SymExpr(6)), SymExpr(j)};
      b.store(B, at, buffer_load(A, at) + cast(kF32, floordiv(SymExpr(r), SymExpr(k))));
    });
  });
  const std::string source = generate(build(b));
  const size_t row = source.find("const int64_t ix = ");
  const size_t inner = source.find("for (int64_t j = 0;");
  ASSERT_NE(row, std::string::npos) << source;
  ASSERT_NE(inner, std::string::npos) << source;
  EXPECT_LT(row, inner) << source;
  EXPECT_LT(source.find("const int64_t ix_1 = "), inner) << source;
  EXPECT_EQ(source.find("const int64_t ix_2 = "), std::string::npos) << source;
  EXPECT_THAT(source.substr(inner), HasSubstr("[ix")) << source;
}

// par(A: f32[n, m], B: f32[n, m]): a parallel loop over n around a serial
// loop over m, or (triangular) over i + 1.
Expr nested_kernel(bool triangular) {
  SymVar n("n"), m("m");
  PrimFuncBuilder b("copy");
  Buffer A = b.buffer_param("A", {n, m}, kF32);
  Buffer B = b.buffer_param("B", {n, m}, kF32);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, triangular ? SymExpr(i) + 1 : SymExpr(m), ForKind::kSerial,
           [&](SymVar j) { b.store(B, {i, j}, buffer_load(A, {i, j})); });
  });
  return build(b);
}

TEST(CppCodegen, ParallelLoopForksOnlyAboveItsWorkThreshold) {
  Target target;
  target.parallel_min_work = 5000;
  // Work known only at run time: iterations times the inner loop's extent.
  // The outlined loop above the threshold, a serial copy below it.
  const std::string nested = generate(nested_kernel(false), target);
  EXPECT_THAT(nested, HasSubstr("const double i_work = static_cast<double>(n) * (static_cast<double>(m));\n"));
  const size_t fork = nested.find("if (i_work >= 5000.0) {\n");
  const size_t body = nested.find("auto i_body = [&](int64_t i_lo, int64_t i_hi) -> int32_t {\n");
  const size_t call = nested.find("relax_parallel_for(0, n, 0, i_body) != 0) return 1;\n");
  const size_t serial = nested.find("} else {\n", fork);
  ASSERT_NE(fork, std::string::npos) << nested;
  EXPECT_TRUE(fork < body && body < call && call < serial && serial != std::string::npos) << nested;
  EXPECT_EQ(nested.find("if (relax_parallel_for(", call + 1), std::string::npos) << nested;
  // Constant work is decided now: below the threshold a plain loop, above it the outlined loop alone.
  EXPECT_THAT(generate(copy_kernel(ForKind::kParallel, 4999), target), Not(HasSubstr("if (relax_parallel_for(")));
  const std::string big = generate(copy_kernel(ForKind::kParallel, 5000), target);
  EXPECT_THAT(big, HasSubstr("relax_parallel_for(0, 5000, 0, i_body) != 0) return 1;\n"));
  EXPECT_THAT(big, Not(HasSubstr("i_work")));
  // An inner extent that depends on the parallel loop's variable: always parallel.
  const std::string triangular = generate(nested_kernel(true), target);
  EXPECT_THAT(triangular, HasSubstr("relax_parallel_for(0, n, 0, i_body) != 0) return 1;\n"));
  EXPECT_THAT(triangular, Not(HasSubstr("i_work")));
  // 0: always parallel, as before the threshold existed.
  target.parallel_min_work = 0;
  EXPECT_THAT(generate(nested_kernel(false), target), Not(HasSubstr("i_work")));
  EXPECT_THAT(generate(nested_kernel(false), target), HasSubstr("relax_parallel_for(0, n, 0, i_body) != 0) return 1;\n"));
  EXPECT_THAT(generate(copy_kernel(ForKind::kParallel, 16), target), HasSubstr("if (relax_parallel_for("));
}

// A micro-kernel's work per call is unknown: four iterations that each call one still fork
// (the int4 row kernel's column blocks ran on one thread when an extern call counted as one
// unit of work).
TEST(CppCodegen, AParallelLoopAroundAnExternCallAlwaysForks) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  prim_func @rows(A: Buffer[(4, 4096), float32], W: Buffer[(4, 4096), float32], C: Buffer[(4, 4), float32]) {
    for i in range(4) parallel {
      call_extern relax_dot_f32(&A[i, 0], &W[i, 0], 4096, &C[i, i])
    }
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  Target target;
  target.parallel_min_work = 5000;
  absl::StatusOr<std::string> s = generate_cpp(*mod, target);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(*s, HasSubstr("if (relax_parallel_for(0, 4, 0, i_body) != 0) return 1;\n"));
  EXPECT_THAT(*s, Not(HasSubstr("i_work")));
}

TEST(CppCodegen, IntegerArithmeticUsesFloorHelpersAndTypedConstants) {
  SymVar n("n");
  PrimFuncBuilder b("idx");
  Buffer A = b.buffer_param("A", {n}, DataType::int64());
  b.for_("i", 0, n, [&](SymVar i) {
    b.store(A, {i}, floordiv(i - 3, 2) + floormod(i, 4) + SymExpr(100000) * SymExpr(100000));
  });
  absl::StatusOr<std::string> s = generate_cpp({{"idx", build(b)}}, Target());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(*s, HasSubstr("relax_floordiv<int64_t>(i - 3, 2)"));
  EXPECT_THAT(*s, HasSubstr("relax_floormod<int64_t>(i, 4)"));
  // Two constants multiply as int64, not as int.
  EXPECT_THAT(*s, HasSubstr("INT64_C(100000) * INT64_C(100000)"));
}

TEST(CppCodegen, ModuleOverloadTakesEveryPrimFunc) {
  IRModule module;
  module.add("first", copy_kernel(ForKind::kSerial));
  module.add("second", copy_kernel(ForKind::kSerial));
  absl::StatusOr<std::string> s = generate_cpp(module, Target());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(*s, HasSubstr("{\"first\", &relax_kernel_first},\n    {\"second\", &relax_kernel_second},"));
  EXPECT_THAT(*s, HasSubstr("*count = 2;"));
  absl::StatusOr<std::string> empty = generate_cpp(IRModule(), Target());
  ASSERT_TRUE(empty.ok());
  EXPECT_THAT(*empty, HasSubstr("*count = 0;"));
}

// ---- what the generator refuses ----------------------------------------------

void expect_error(const absl::StatusOr<std::string>& s, absl::StatusCode code, const std::string& text) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << text;
  EXPECT_EQ(s.status().code(), code) << s.status();
  EXPECT_THAT(std::string(s.status().message()), HasSubstr(text));
}

TEST(CppCodegen, Float16IsStoredIn16BitsAndComputedAsFloat) {
  // Numerics are in cpp_half_intrinsics_test.cc; here the form of the text.
  SymVar n("n");
  PrimFuncBuilder b("half");
  Buffer A = b.buffer_param("A", {n}, DataType::float16());
  Buffer B = b.buffer_param("B", {n}, DataType::bfloat16());
  b.for_("i", 0, n, [&](SymVar i) {
    b.store(A, {i}, buffer_load(A, {i}) * 2.0);
    b.store(B, {i}, cast(DataType::bfloat16(), buffer_load(A, {i})));
  });
  absl::StatusOr<std::string> src = generate_cpp({{"half", build(b)}}, Target());
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("uint16_t* const A = static_cast<uint16_t*>(args[0].data);"));
  EXPECT_THAT(*src, HasSubstr("A[i] = relax_float16_store(relax_float16_load(A[i]) * 2.0f);"));
  EXPECT_THAT(*src, HasSubstr("B[i] = relax_bfloat16_store(relax_round_bfloat16_of_float(relax_float16_load(A[i])));"));
  // The one implementation of the 16-bit roundings travels with the kernels.
  EXPECT_THAT(*src, HasSubstr("inline uint16_t float16_bits(double v) {"));
}

TEST(CppCodegenErrors, UndefinedVariable) {
  SymVar n("n"), stray("stray"), i("i");
  Buffer A("A", kF32, {n});
  Stmt body = make_for(i, 0, stray, ForKind::kSerial, make_store(A, {i}, SymExpr::float_imm(0, kF32)));
  expect_error(generate_cpp({{"f", make_prim_func({PrimParam{A, std::nullopt}}, body)}}, Target()),
               absl::StatusCode::kInvalidArgument, "PrimFunc `f`: variable `stray` is used where it is not defined");
}

TEST(CppCodegenErrors, UnknownBuffer) {
  SymVar n("n"), i("i");
  Buffer A("A", kF32, {n});
  Buffer other("other", kF32, {n});
  Stmt body = make_for(i, 0, n, ForKind::kSerial, make_store(A, {i}, buffer_load(other, {i})));
  expect_error(generate_cpp({{"f", make_prim_func({PrimParam{A, std::nullopt}}, body)}}, Target()),
               absl::StatusCode::kInvalidArgument,
               "PrimFunc `f`: load from buffer `other`, which is neither a parameter nor allocated");
  Stmt store = make_for(i, 0, n, ForKind::kSerial, make_store(other, {i}, buffer_load(A, {i})));
  expect_error(generate_cpp({{"g", make_prim_func({PrimParam{A, std::nullopt}}, store)}}, Target()),
               absl::StatusCode::kInvalidArgument, "PrimFunc `g`: store to buffer `other`");
}

TEST(CppCodegenErrors, DimVariableDefinedByNothing) {
  SymVar n("n"), i("i");
  // n * n does not determine n linearly (n * 2 would: see the kernel tests).
  Buffer A("A", kF32, {n * n});
  Stmt body = make_store(A, {SymExpr(0)}, SymExpr::float_imm(0, kF32));
  expect_error(generate_cpp({{"f", make_prim_func({PrimParam{A, std::nullopt}}, body)}}, Target()),
               absl::StatusCode::kInvalidArgument,
               "PrimFunc `f`: dim 0 of buffer parameter `A` (`n * n`) uses `n`, which no parameter defines");
}

TEST(CppCodegenErrors, InitWithoutReduction) {
  SymVar n("n"), i("i"), vi("vi");
  Buffer A("A", kF32, {n});
  Stmt store = make_store(A, {vi}, SymExpr::float_imm(0, kF32));
  Stmt block = make_block("b", {IterVar{vi, n, IterType::kSpatial, i}}, store, store);
  Stmt body = make_for(i, 0, n, ForKind::kSerial, block);
  expect_error(generate_cpp({{"f", make_prim_func({PrimParam{A, std::nullopt}}, body)}}, Target()),
               absl::StatusCode::kInvalidArgument, "block `b` has an init part but no reduction iteration variable");
}

TEST(CppCodegenErrors, BadInputs) {
  expect_error(generate_cpp({{"x", Expr()}}, Target()), absl::StatusCode::kInvalidArgument, "`x` is not a PrimFunc");
  Expr f = copy_kernel(ForKind::kSerial);
  expect_error(generate_cpp({{"a", f}, {"a", f}}, Target()), absl::StatusCode::kInvalidArgument,
               "two PrimFuncs are named `a`");
  expect_error(generate_cpp({{"", f}}, Target()), absl::StatusCode::kInvalidArgument, "without a name");
  Target cuda;
  cuda.kind = "cuda";
  expect_error(generate_cpp({{"a", f}}, cuda), absl::StatusCode::kInvalidArgument, "not \"cuda\"");
}

}  // namespace
}  // namespace relax
