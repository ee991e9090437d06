// End to end: the data-dependent operators (nonzero, unique, masked_select)
// through relax::build. Their results are annotated by rank only; a match_cast
// names the count, later legalized ops use it, and a false assertion fails the
// call with the expected and actual values. Legalization lowers them to
// call_builtin (the runtime's builtins allocate the result), not to kernels.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/transform/legalize_ops.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using runtime::Tensor;
using runtime::Value;

IRModule parse(std::string_view text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

runtime::Module compile(const IRModule& mod) {
  absl::StatusOr<runtime::Module> m = build(mod, testing::build_test_target());
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : runtime::Module();
}

Tensor f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  Tensor t = *Tensor::empty(std::move(shape), DataType::float32());
  std::copy(values.begin(), values.end(), t.data_as_or_die<float>());
  return t;
}

std::vector<int64_t> i64_values(const Tensor& t) {
  const int64_t* p = t.data_as_or_die<int64_t>();
  return std::vector<int64_t>(p, p + t.numel());
}
std::vector<float> f32_values(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

// y = nonzero(x) is (1, count); the match_cast names count k, which the add
// kernel's destination (1, k) is allocated with. @pair asserts that x and v
// select the same count: its k is bound by one match_cast and checked by the next.
constexpr std::string_view kModule = R"(module {
  func @main(x: Tensor[(n,), float32]) -> Tensor[ndim=2, int64] {
    y = nonzero(x)
    z = match_cast(y, Tensor[(1, k), int64])
    w = add(z, z)
    return w
  }
  func @matrix(x: Tensor[(n, m), float32]) -> Tensor[ndim=2, int64] {
    y = nonzero(x)
    z = match_cast(y, Tensor[(1, k), int64])
    return z
  }
  func @pair(x: Tensor[(n,), float32], v: Tensor[(m,), float32]) -> Tensor[ndim=1, float32] {
    y = nonzero(x)
    z = match_cast(y, Tensor[(1, k), int64])
    u = unique(v)
    s = match_cast(u, Tensor[(k,), float32])
    t = add(s, s)
    return t
  }
})";

// The indices of x's non-zero entries, by a plain loop.
std::vector<int64_t> nonzero_1d(const std::vector<float>& x) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] != 0) out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

TEST(DynamicOpsBuildTest, MatchCastNamesTheCountForLaterKernels) {
  runtime::Module m = compile(parse(kModule));
  const std::vector<std::vector<float>> inputs = {
      {0, 1.5f, 0, -2, 0, 0, 3},  // three non-zero
      {0, 0, 0},                  // none: (1, 0)
      {4},                        // all
      {},                         // n = 0
  };
  for (const std::vector<float>& x : inputs) {
    absl::StatusOr<Value> w = m["main"](f32({static_cast<int64_t>(x.size())}, x));
    ASSERT_TRUE(w.ok()) << w.status();
    std::vector<int64_t> expected = nonzero_1d(x);
    for (int64_t& v : expected) v *= 2;
    EXPECT_EQ(w->tensor_or_die().shape(), (std::vector<int64_t>{1, static_cast<int64_t>(expected.size())}));
    EXPECT_EQ(i64_values(w->tensor_or_die()), expected);
  }
}

TEST(DynamicOpsBuildTest, FalseMatchCastFailsNamingExpectedAndActual) {
  runtime::Module m = compile(parse(kModule));
  // nonzero of a matrix has two rows, not one.
  absl::StatusOr<Value> z = m["matrix"](f32({2, 2}, {1, 0, 0, 1}));
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(z.status().message(), "matrix: match_cast of z: dimension 0 is 2, expected 1");

  // Two non-zero entries in x, three distinct values in v: k is 2, then 3.
  absl::StatusOr<Value> t = m["pair"](f32({4}, {0, 1, 0, 1}), f32({4}, {5, 7, 5, 6}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "pair: match_cast of s: dimension 0 is 3, expected k = 2");

  // The same module with the counts equal: unique(v) sorted, doubled.
  t = m["pair"](f32({4}, {0, 1, 0, 1}), f32({4}, {5, 7, 5, 7}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(f32_values(t->tensor_or_die()), (std::vector<float>{10, 14}));
}

TEST(DynamicOpsBuildTest, LegalizationLowersToCallBuiltinNotKernels) {
  IRModule mod = parse(R"(module {
  func @main(x: Tensor[ndim=2, float32], m: Tensor[ndim=2, bool]) -> Tensor[ndim=1, float32] {
    y = masked_select(x, m)
    u = unique(y)
    return u
  }
})");
  absl::StatusOr<IRModule> legal = transform::legalize_ops(mod);
  ASSERT_TRUE(legal.ok()) << legal.status();
  const std::string text = to_text(*legal);
  EXPECT_THAT(text, HasSubstr("call_builtin(extern_func(\"masked_select\"), (x, m)"));
  EXPECT_THAT(text, HasSubstr("call_builtin(extern_func(\"unique\"), (y,)"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("prim_func")));
  // The lowered form reads back as it prints, and legalize-ops leaves it alone.
  absl::StatusOr<IRModule> reparsed = parse_module(text);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << text;
  absl::StatusOr<IRModule> again = transform::legalize_ops(*reparsed);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(to_text(*again), text);

  // Rank-only operands are fine: the builtins read any shape.
  runtime::Module compiled = compile(mod);
  Tensor x = f32({2, 3}, {3, 1, 3, 2, 9, 1});
  Tensor mask = *Tensor::empty({2, 3}, DataType::boolean());
  bool* b = mask.data_as_or_die<bool>();
  const bool picks[] = {true, true, false, true, false, true};
  std::copy(std::begin(picks), std::end(picks), b);
  absl::StatusOr<Value> u = compiled["main"](x, mask);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(f32_values(u->tensor_or_die()), (std::vector<float>{1, 2, 3}));
  // A mask of another shape is refused by the builtin at run time.
  absl::StatusOr<Value> bad = compiled["main"](x, *Tensor::empty({3, 2}, DataType::boolean()));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "main: builtin masked_select: argument 1 (mask) is Tensor[(3, 2), bool], expected the "
            "shape of argument 0 (x), Tensor[(2, 3), float32]");
}

// A rank-only result flows through the deduction of later ops; legalizing one
// of them without a match_cast is an error naming the binding, not a crash.
TEST(DynamicOpsBuildTest, RankOnlyResultsFlowThroughDeduction) {
  SymVar n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 3}, DataType::float32()));
  Var y = f.emit(op::nonzero(x), "y");
  Var z = f.emit(op::add(y, 1), "z");
  Var u = f.emit(op::unique(z), "u");
  Var v = f.emit(op::unique(y), "v");
  Var s = f.emit(op::add(u, v), "s");
  f.ret(s);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(z.struct_info().to_string(), "Tensor[ndim=2, int64]");
  EXPECT_EQ(u.struct_info().to_string(), "Tensor[ndim=1, int64]");
  EXPECT_EQ(s.struct_info().to_string(), "Tensor[ndim=1, int64]");
  absl::StatusOr<runtime::Module> m = build(*mod, testing::build_test_target());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("binding `z`"));
}

TEST(DynamicOpsBuildTest, ExportedLibraryRunsTheBuiltins) {
  runtime::Module m = compile(parse(kModule));
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "relax_dynamic_ops_export.so").string();
  ASSERT_TRUE(m.export_library(path).ok());
  absl::StatusOr<runtime::Module> loaded = runtime::load_module(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  absl::StatusOr<Value> w = (*loaded)["main"](f32({5}, {0, 0, 2, 0, std::nanf("")}));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(i64_values(w->tensor_or_die()), (std::vector<int64_t>{4, 8}));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace relax
