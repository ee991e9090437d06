// End to end on the CPU: builder-made modules with symbolic shapes, compiled
// once by relax::build and called at several sizes, against Eigen.
#include "codegen_test_util.h"
#include "relax/codegen/build.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;

constexpr int64_t kSizes[] = {1, 7, 64, 300};

using relax::testing::random_tensor;

MatrixMap as_matrix(const Tensor& t, int64_t rows, int64_t cols) {
  return MatrixMap(t.data_as_or_die<float>(), rows, cols);
}

// Builds main(params...) = body(params) with one dataflow block.
IRModule one_function(std::vector<std::pair<std::string, StructInfo>> params,
                      const std::function<Expr(FunctionBuilder&, const std::vector<Var>&)>& body) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  std::vector<Var> vars;
  for (auto& [name, sinfo] : params) vars.push_back(f.param(name, sinfo));
  Var out;
  {
    auto df = f.dataflow();
    out = f.emit_output(body(f, vars), "out");
  }
  f.ret(out);
  absl::StatusOr<IRModule> mod = mb.build();
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

runtime::Module compile(const IRModule& mod, BuildInfo* info = nullptr) {
  absl::StatusOr<runtime::Module> m = build(mod, testing::build_test_target(), info);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : runtime::Module();
}

Tensor call(const runtime::Module& m, std::vector<Value> args) {
  absl::StatusOr<Value> y = m["main"].call(std::move(args));
  EXPECT_TRUE(y.ok()) << y.status();
  return y.ok() && y->is_tensor() ? y->tensor_or_die() : Tensor();
}

void expect_near(const RowMatrix& expected, const Tensor& got, float tol = 1e-4f) {
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.numel(), expected.size());
  MatrixMap g(got.data_as_or_die<float>(), expected.rows(), expected.cols());
  EXPECT_LE((g - expected).cwiseAbs().maxCoeff(), tol * (1 + expected.cwiseAbs().maxCoeff()));
}

TEST(BuildTest, AddBroadcastsARowOverSymbolicRows) {
  SymVar n("n");
  IRModule mod = one_function(
      {{"x", tensor_sinfo({n, 16}, DataType::float32())}, {"b", tensor_sinfo({16}, DataType::float32())}},
      [](FunctionBuilder&, const std::vector<Var>& p) { return op::add(p[0], p[1]); });
  runtime::Module m = compile(mod);
  for (int64_t rows : kSizes) {
    Tensor x = random_tensor({rows, 16}, 1), b = random_tensor({16}, 2);
    RowMatrix expected = as_matrix(x, rows, 16).rowwise() + as_matrix(b, 1, 16).row(0);
    expect_near(expected, call(m, {x, b}));
  }
}

TEST(BuildTest, MultiplyBroadcastsAColumnAgainstARow) {
  SymVar n("n"), k("k");
  IRModule mod = one_function(
      {{"x", tensor_sinfo({n, 1}, DataType::float32())}, {"y", tensor_sinfo({1, k}, DataType::float32())}},
      [](FunctionBuilder&, const std::vector<Var>& p) { return op::multiply(p[0], p[1]); });
  runtime::Module m = compile(mod);
  for (int64_t rows : kSizes) {
    int64_t cols = rows % 5 + 3;
    Tensor x = random_tensor({rows, 1}, 3), y = random_tensor({1, cols}, 4);
    RowMatrix expected = as_matrix(x, rows, 1) * as_matrix(y, 1, cols);
    expect_near(expected, call(m, {x, y}));
  }
}

TEST(BuildTest, MultiplyByAFloatScalarArgument) {
  SymVar n("n");
  IRModule mod = one_function(
      {{"x", tensor_sinfo({n, 4}, DataType::float32())}, {"s", prim_sinfo(DataType::float32())}},
      [](FunctionBuilder&, const std::vector<Var>& p) { return op::multiply(p[0], p[1]); });
  BuildInfo info;
  runtime::Module m = compile(mod, &info);
  // The legalized module (a kernel with a float scalar parameter) reads back from its text.
  absl::StatusOr<IRModule> reparsed = parse_module(to_text(info.lowered));
  ASSERT_TRUE(reparsed.ok()) << reparsed.status();
  EXPECT_TRUE(structural_equal(info.lowered, *reparsed));
  for (int64_t rows : kSizes) {
    Tensor x = random_tensor({rows, 4}, 14);
    RowMatrix expected = as_matrix(x, rows, 4) * 2.5f;
    expect_near(expected, call(m, {x, 2.5}));
  }
  absl::StatusOr<Value> wrong = m["main"](random_tensor({2, 4}, 14), int64_t{3});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("argument s"), absl::string_view::npos) << wrong.status();
}

TEST(BuildTest, MatmulMatchesEigen) {
  SymVar n("n");
  IRModule mod = one_function(
      {{"x", tensor_sinfo({n, 32}, DataType::float32())}, {"w", tensor_sinfo({32, 24}, DataType::float32())}},
      [](FunctionBuilder&, const std::vector<Var>& p) { return op::matmul(p[0], p[1]); });
  runtime::Module m = compile(mod);
  for (int64_t rows : kSizes) {
    Tensor x = random_tensor({rows, 32}, 5), w = random_tensor({32, 24}, 6);
    RowMatrix expected = as_matrix(x, rows, 32) * as_matrix(w, 32, 24);
    expect_near(expected, call(m, {x, w}));
  }
}

TEST(BuildTest, AStridedInputIsCopiedCompactBeforeTheKernelsSeeIt) {
  SymVar n("n");
  IRModule mod = one_function(
      {{"x", tensor_sinfo({n, 32}, DataType::float32())}, {"w", tensor_sinfo({32, 24}, DataType::float32())}},
      [](FunctionBuilder&, const std::vector<Var>& p) { return op::matmul(p[0], p[1]); });
  absl::StatusOr<runtime::Module> built = build(mod, testing::generated_code_target());
  ASSERT_TRUE(built.ok()) << built.status();
  const runtime::Module& m = *built;
  // Every other row of a (6, 32) buffer: a (3, 32) view with row stride 64.
  Tensor storage = random_tensor({6, 32}, 7);
  Tensor strided = Tensor::borrow(storage.data(), {3, 32}, DataType::float32(), {64, 1});
  Tensor w = random_tensor({32, 24}, 8);
  RowMatrix rows(3, 32);
  for (int64_t r = 0; r < 3; ++r) rows.row(r) = as_matrix(storage, 6, 32).row(2 * r);
  const RowMatrix expected = rows * as_matrix(w, 32, 24);
  expect_near(expected, call(m, {strided, w}));
  // Twice: the second call may replay a recorded plan, which must take the copy too.
  expect_near(expected, call(m, {strided, w}));
  // The argument itself is left as it was.
  EXPECT_EQ(strided.strides(), (std::vector<int64_t>{64, 1}));

  // A strided argument of the wrong shape is reported against the user's parameter, never
  // with a kernel's internal argument names.
  Tensor narrow = Tensor::borrow(storage.data(), {3, 31}, DataType::float32(), {64, 1});
  absl::StatusOr<Value> y = m["main"](narrow, w);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(y.status().message()), ::testing::StartsWith("main: argument x"));
  EXPECT_THAT(std::string(y.status().message()), ::testing::Not(::testing::HasSubstr("kernel")));
}

// A binding annotation that deduction cannot prove is checked at run time
// (the parser makes it a match_cast), so legalization keeps it.
TEST(BuildTest, CheckedBindingAnnotationSurvivesLegalizationAndIsChecked) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  func @main(x: Tensor[(n, 4, 16), float32], w: Tensor[(64, 8), float32]) -> Tensor[(n, 8), float32] {
    h: Tensor[(n, 64), float32] = reshape(x, shape(n, -1))
    y = matmul(h, w)
    return y
  }
  func @other_rows(x: Tensor[(n, 4, 16), float32], r: Tensor[(m,), float32], w: Tensor[(64, 8), float32]) -> Tensor[(n, 8), float32] {
    h: Tensor[(n, 64), float32] = reshape(x, shape(m, -1))
    y = matmul(h, w)
    return y
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  runtime::Module m = compile(*mod);
  for (int64_t rows : {1, 3}) {
    Tensor x = random_tensor({rows, 4, 16}, 31), w = random_tensor({64, 8}, 32);
    RowMatrix expected = as_matrix(x, rows, 64) * as_matrix(w, 64, 8);
    expect_near(expected, call(m, {x, w}));
    absl::StatusOr<Value> same = m["other_rows"](x, random_tensor({rows}, 33), w);
    ASSERT_TRUE(same.ok()) << same.status();
    expect_near(expected, same->tensor_or_die());
  }
  absl::StatusOr<Value> wrong = m["other_rows"](random_tensor({2, 4, 16}, 34), random_tensor({4}, 35),
                                                random_tensor({64, 8}, 36));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "other_rows: match_cast of h: dimension 0 is 4, expected n = 2");
}

TEST(BuildTest, ReshapeThenPermuteDimsMovesElements) {
  SymVar n("n");
  // x: (n, 6) -> reshape (n * 2, 3) -> transpose (3, n * 2)
  IRModule mod = one_function({{"x", tensor_sinfo({n, 6}, DataType::float32())}},
                              [&](FunctionBuilder& f, const std::vector<Var>& p) {
                                Var r = f.emit(op::reshape(p[0], {n * 2, 3}));
                                return op::permute_dims(r, std::vector<int64_t>{1, 0});
                              });
  runtime::Module m = compile(mod);
  for (int64_t rows : kSizes) {
    Tensor x = random_tensor({rows, 6}, 7);
    RowMatrix expected = as_matrix(x, rows * 2, 3).transpose();
    Tensor y = call(m, {x});
    ASSERT_TRUE(y.defined());
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{3, rows * 2}));
    expect_near(expected, y);
  }
}

TEST(BuildTest, ExpSumAndSoftmaxMatchEigen) {
  SymVar n("n"), m_("m");
  IRModule mod = one_function({{"x", tensor_sinfo({n, m_}, DataType::float32())}},
                              [](FunctionBuilder& f, const std::vector<Var>& p) {
                                Var e = f.emit(op::exp(p[0]));
                                Var s = f.emit(op::softmax(p[0], -1));
                                Var total = f.emit(op::sum(e, std::vector<int64_t>{1}));
                                return make_tuple({s, total});
                              });
  runtime::Module m = compile(mod);
  for (int64_t rows : kSizes) {
    int64_t cols = 300 / rows + 1;
    Tensor x = random_tensor({rows, cols}, 8);
    absl::StatusOr<Value> y = m["main"](x);
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_TRUE(y->is_tuple());
    RowMatrix in = as_matrix(x, rows, cols);
    RowMatrix e = in.array().exp();
    RowMatrix shifted = (in.colwise() - in.rowwise().maxCoeff()).array().exp();
    RowMatrix softmax = shifted.array().colwise() / shifted.rowwise().sum().array();
    expect_near(softmax, y->fields_or_die()[0].tensor_or_die());
    expect_near(e.rowwise().sum(), y->fields_or_die()[1].tensor_or_die());
  }
}

TEST(BuildTest, ArgumentShapeMismatchNamesTheExpression) {
  SymVar n("n");
  IRModule mod = one_function({{"x", tensor_sinfo({n, n * 4}, DataType::float32())}},
                              [](FunctionBuilder&, const std::vector<Var>& p) { return op::exp(p[0]); });
  runtime::Module m = compile(mod);
  absl::StatusOr<Value> bad = m["main"](random_tensor({3, 13}, 9));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "main: argument x: dimension 1 is 13, expected n * 4 = 12 (n = 3)");
  absl::StatusOr<Value> wrong_dtype = m["main"](*Tensor::empty({3, 12}, DataType::int32()));
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_EQ(wrong_dtype.status().message(), "main: argument x: expected a float32 tensor, got int32");
  EXPECT_TRUE(m["main"](random_tensor({3, 12}, 9)).ok());
}

TEST(BuildTest, ParameterDimSolvesForItsVariable) {
  SymVar n("n");
  // main(x: (n * 2,)) -> reshape(x, (n, 2)): n is solved from x's length.
  IRModule mod = one_function({{"x", tensor_sinfo({n * 2}, DataType::float32())}},
                              [&](FunctionBuilder&, const std::vector<Var>& p) {
                                return op::reshape(p[0], {n, 2});
                              });
  runtime::Module m = compile(mod);
  Tensor y = call(m, {random_tensor({10}, 10)});
  ASSERT_TRUE(y.defined());
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{5, 2}));
  absl::StatusOr<Value> odd = m["main"](random_tensor({7}, 10));
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("argument x: dimension 0 is 7"), absl::string_view::npos)
      << odd.status();
}

TEST(BuildTest, ConcurrentCallsAtDifferentSizesAreIndependent) {
  SymVar n("n");
  IRModule mod = one_function(
      {{"x", tensor_sinfo({n, 32}, DataType::float32())}, {"w", tensor_sinfo({32, 8}, DataType::float32())}},
      [](FunctionBuilder& f, const std::vector<Var>& p) {
        Var h = f.emit(op::matmul(p[0], p[1]));
        return op::softmax(h, -1);
      });
  runtime::Module m = compile(mod);
  Tensor w = random_tensor({32, 8}, 11);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        int64_t rows = 1 + (t * 50 + i) % 37;
        Tensor x = random_tensor({rows, 32}, t * 100 + i);
        absl::StatusOr<Value> y = m["main"](x, w);
        if (!y.ok() || y->tensor_or_die().shape() != std::vector<int64_t>{rows, 8}) {
          ++failures;
          continue;
        }
        RowMatrix h = as_matrix(x, rows, 32) * as_matrix(w, 32, 8);
        RowMatrix e = (h.colwise() - h.rowwise().maxCoeff()).array().exp();
        RowMatrix expected = e.array().colwise() / e.rowwise().sum().array();
        MatrixMap got(y->tensor_or_die().data_as_or_die<float>(), rows, 8);
        if ((got - expected).cwiseAbs().maxCoeff() > 1e-5f) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(BuildTest, SecondBuildOfTheSameModuleIsACacheHit) {
  SymVar n("n");
  IRModule mod = one_function({{"x", tensor_sinfo({n, 5}, DataType::float32())}},
                              [](FunctionBuilder&, const std::vector<Var>& p) { return op::exp(p[0]); });
  Target target = testing::build_test_target();
  target.cache_dir += "_hit";
  std::filesystem::remove_all(target.cache_dir);
  BuildInfo first, second;
  ASSERT_TRUE(build(mod, target, &first).ok());
  ASSERT_TRUE(build(mod, target, &second).ok());
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(first.library_path, second.library_path);
}

TEST(BuildTest, ExportedLibraryLoadsAndRunsWithConstants) {
  SymVar n("n");
  Tensor w = random_tensor({8, 4}, 12);
  IRModule mod = one_function({{"x", tensor_sinfo({n, 8}, DataType::float32())}},
                              [&](FunctionBuilder&, const std::vector<Var>& p) {
                                return op::matmul(p[0], make_constant(w));
                              });
  runtime::Module m = compile(mod);
  std::string path = (std::filesystem::path(::testing::TempDir()) / "relax_build_test_export.so").string();
  ASSERT_TRUE(m.export_library(path).ok());
  absl::StatusOr<runtime::Module> loaded = runtime::load_module(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (int64_t rows : kSizes) {
    Tensor x = random_tensor({rows, 8}, 13);
    expect_near(as_matrix(x, rows, 8) * as_matrix(w, 8, 4), call(*loaded, {x}));
  }
  std::filesystem::remove(path);
}

// A module whose annotations deduction refuses (matmul of (n, 8) and (2, 2)
// annotated (n, 2), as a JSON document may write it) is refused before any
// kernel is generated, with well_formed's reason.
TEST(BuildTest, IllFormedModuleIsRefusedBeforeLegalization) {
  SymVar n("n");
  Var x("x", tensor_sinfo({n, 8}, DataType::float32()));
  Var w("w", tensor_sinfo({2, 2}, DataType::float32()));
  const StructInfo lie = tensor_sinfo({n, 2}, DataType::float32());
  Expr call = make_call(make_op_or_die("matmul"), {x, w}, {}, {}, lie);
  Var out("out", lie);
  Expr body = make_seq_expr({BindingBlock{{Binding{out, call, false, StructInfo()}}, false}}, out,
                            lie);
  IRModule mod;
  mod.add("main", make_function({x, w}, body, lie));
  absl::StatusOr<runtime::Module> m = build(mod, testing::build_test_target());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("matmul: inner dims differ"), absl::string_view::npos)
      << m.status();
}

TEST(BuildTest, UnlegalizableOperatorIsAnError) {
  SymVar n("n");
  // A rank-only input has no loop nest to generate.
  IRModule mod = one_function({{"x", tensor_sinfo_rank(2, DataType::float32())}},
                              [](FunctionBuilder&, const std::vector<Var>& p) { return op::exp(p[0]); });
  absl::StatusOr<runtime::Module> m = build(mod, testing::build_test_target());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("exp"), absl::string_view::npos) << m.status();
}

// A self-recursive function, declared first: main(x, k) = k > 0 ? main(x + x, k - 1) : x.
TEST(BuildTest, RecursiveCountdownDoublesKTimes) {
  SymVar n("n"), k("k");
  StructInfo xs = tensor_sinfo({n}, DataType::float32());
  StructInfo ks = prim_sinfo(DataType::int64(), k);
  ModuleBuilder mb;
  Expr self = mb.declare_function("main", func_sinfo({xs, ks}, xs));
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", xs);
  f.param("k", ks);
  Var r = f.emit_if(
      make_prim_value(SymExpr(k) > 0),
      [&] {
        Var y = f.emit(op::add(x, x), "y");
        return make_call(self, {y, make_prim_value(SymExpr(k) - 1)});
      },
      [&] { return Expr(x); }, "r");
  f.ret(r);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  runtime::Module m = compile(*mod);
  Tensor x0 = random_tensor({5}, 21);
  Tensor y = call(m, {x0, int64_t{3}});
  expect_near(as_matrix(x0, 1, 5) * 8.0f, y);
  Tensor same = call(m, {x0, int64_t{0}});
  expect_near(as_matrix(x0, 1, 5), same);
}

// An If on a one-element bool tensor the graph computes (the form ONNX gives its conditions):
// sum(x) > 0 ? x * x : -x, both branches run from one compilation.
TEST(BuildTest, IfOnAComputedBoolTensorTakesEachBranch) {
  SymVar n("n");
  StructInfo xs = tensor_sinfo({n}, DataType::float32());
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", xs);
  Var c = f.emit(op::greater(op::sum(x), op::zeros_like(op::sum(x))), "c");
  EXPECT_EQ(c.struct_info().to_string(), "Tensor[(), bool]");
  Var r = f.emit_if(
      c, [&] { return op::multiply(x, x); }, [&] { return op::neg(x); }, "r");
  f.ret(r);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  runtime::Module m = compile(*mod);
  Tensor positive = *Tensor::from_vector<float>({3}, {1, 2, 3});
  expect_near(as_matrix(positive, 1, 3).array().square().matrix(), call(m, {positive}));
  Tensor negative = *Tensor::from_vector<float>({2}, {-1, -4});
  expect_near(-as_matrix(negative, 1, 2), call(m, {negative}));
}

// call_tir_inplace: output 0 is written into argument 0 (A += B), output 1 is fresh (C = A * B
// with the updated A). The PrimFunc takes the arguments, then the fresh outputs only.
TEST(BuildTest, CallTirInplaceWritesIntoItsArgumentAndAllocatesOnlyFreshOutputs) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  prim_func @accumulate(A: Buffer[(m, 4), float32], B: Buffer[(m, 4), float32], C: Buffer[(m, 4), float32]) {
    for i in range(m) {
      for j in range(4) {
        block acc(vi = spatial(m, i), vj = spatial(4, j)) {
          A[vi, vj] = A[vi, vj] + B[vi, vj]
          C[vi, vj] = A[vi, vj] * B[vi, vj]
        }
      }
    }
  }
  func @main(a: Tensor[(n, 4), float32], b: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] {
    r = call_tir_inplace(@accumulate, (a, b), inplace_indices=[0, -1],
                         sinfo=Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])])
    return r
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  runtime::Module m = compile(*mod);
  for (int64_t n : kSizes) {
    SCOPED_TRACE(n);
    Tensor a = random_tensor({n, 4}, 40), b = random_tensor({n, 4}, 41);
    const RowMatrix sum = as_matrix(a, n, 4) + as_matrix(b, n, 4);
    const RowMatrix product = sum.cwiseProduct(as_matrix(b, n, 4));
    absl::StatusOr<Value> r = m["main"].call({a, b});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->is_tuple());
    ASSERT_EQ(r->fields_or_die().size(), 2u);
    expect_near(sum, r->fields_or_die()[0].tensor_or_die());
    expect_near(product, r->fields_or_die()[1].tensor_or_die());
  }
}

}  // namespace
}  // namespace relax
