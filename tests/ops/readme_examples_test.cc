// The README's builder and operator examples, compiled and run as they are
// written there: each snippet is copied verbatim between the marked lines,
// with a comment naming its README section; what follows checks its result
// (for the IR example, that it prints the text the README shows, read from
// README.md itself). A change that breaks a README example breaks this test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "relax/ir/prim_func_builder.h"
#include "relax/relax.h"

namespace {

// The loop-level kernel the IR example adds ("built with PrimFuncBuilder"):
// Y = max(X, 0) over (n, 64), as examples/ir_demo.cc builds it.
relax::Expr relu_kernel() {
  relax::SymVar n("n");
  relax::PrimFuncBuilder b("relu");
  relax::Buffer x = b.buffer_param("X", {n, 64}, relax::DataType::float32());
  relax::Buffer y = b.buffer_param("Y", {n, 64}, relax::DataType::float32());
  b.for_("i", 0, n, relax::ForKind::kParallel, [&](relax::SymVar i) {
    b.for_("j", 0, 64, relax::ForKind::kVectorized, [&](relax::SymVar j) {
      b.block("relu",
              {relax::PrimFuncBuilder::spatial(n, i), relax::PrimFuncBuilder::spatial(64, j)},
              [&](const std::vector<relax::SymVar>& v) {
                relax::SymExpr value = b.load(x, {v[0], v[1]});
                b.store(y, {v[0], v[1]},
                        relax::max(value, relax::SymExpr::float_imm(0.0, relax::DataType::float32())));
              });
    });
  });
  absl::StatusOr<relax::Expr> built = b.build();
  EXPECT_TRUE(built.ok()) << built.status();
  return built.ok() ? *built : relax::Expr();
}

// The README's text between the line `after` and the next "```" fence after it.
std::string readme_block_after(const std::string& after) {
  std::ifstream file(std::filesystem::path(RELAX_SOURCE_DIR) / "README.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string readme = text.str();
  size_t at = readme.find(after);
  if (at == std::string::npos) return "<no `" + after + "` in README.md>";
  at = readme.find("```\n", at + after.size());
  if (at == std::string::npos) return "<no block>";
  at += 4;
  const size_t end = readme.find("```", at);
  return readme.substr(at, end - at);
}

relax::Target readme_target() {
  relax::Target t;
  t.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_readme_test_cache").string();
  return t;
}

// README "The IR: graph functions, loop-level kernels and library calls in one module".
TEST(ReadmeExamples, TheIrExamplePrintsWhatTheReadmeShows) {
  testing::internal::CaptureStdout();
  // ---- README snippet (verbatim, after its #includes) ----
  relax::ModuleBuilder mb;
  relax::Expr relu = mb.add_prim_func("relu", relu_kernel());  // built with PrimFuncBuilder
  const relax::DataType f32 = relax::DataType::float32();
  relax::SymVar n("n");
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n, 64}, relax::DataType::float32()));
  relax::Var w = f.param("w", relax::tensor_sinfo({64, 64}, relax::DataType::float32()));
  f.upper_bound(n, 4096);
  relax::Var out;
  {
    auto df = f.dataflow();
    relax::Var h = f.emit(relax::op::matmul(x, w), "h");
    relax::Var r = f.emit(relax::op::add(h, x), "r");
    relax::Var a = f.emit(relax::op::call_tir(relu, {r}, relax::tensor_sinfo({n, 64}, f32)), "a");
    out = f.emit_output(relax::op::reshape(a, {n * 4, 16}), "out");
  }
  f.ret(out);
  absl::StatusOr<relax::IRModule> mod = mb.build();  // every mistake, with file:line
  std::cout << relax::to_text(*mod);
  // ---- end of snippet ----
  const std::string printed = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(printed, readme_block_after("std::cout << relax::to_text(*mod);\n```\n\nprints"));
}

// README "End to end: build once, call at any size, ship one file".
TEST(ReadmeExamples, TheBuildExampleCompilesRunsAndExports) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "relax_readme_build_example";
  std::filesystem::create_directories(dir);
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);  // the snippet writes model.so to the working directory
  // ---- README snippet (verbatim, after its #include) ----
  relax::SymVar n("n");
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n, 32}, relax::DataType::float32()));
  relax::Var w = f.param("w", relax::tensor_sinfo({32, 8}, relax::DataType::float32()));
  relax::Var h = f.emit(relax::op::matmul(x, w));
  f.ret(f.emit(relax::op::softmax(h, -1)));

  absl::StatusOr<relax::runtime::Module> m = relax::build(*mb.build(), "cpu");  // compiled once

  using relax::runtime::Tensor;
  Tensor xs = *Tensor::empty({7, 32}, relax::DataType::float32());   // n = 7 here, any n works
  Tensor ws = *Tensor::empty({32, 8}, relax::DataType::float32());
  absl::StatusOr<relax::runtime::Value> y = (*m)["main"](xs, ws);   // y->tensor(): (7, 8)
  // Accessors return a Status on the wrong kind or dtype: y->tensor() is a StatusOr<Tensor>,
  // tensor.data_as<float>() a StatusOr<float*>; the *_or_die forms abort instead.
  absl::Status s = m->export_library("model.so");

  // In a deployed process that links only relax::runtime:
  absl::StatusOr<relax::runtime::Module> loaded = relax::runtime::load_module("model.so");
  // ---- end of snippet ----
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(y.ok()) << y.status();
  absl::StatusOr<Tensor> result = y->tensor();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->shape(), (std::vector<int64_t>{7, 8}));
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(loaded.ok()) << loaded.status();
}

// README "Operators", item "The builder as users write it": numbers as operands, braced
// lists for axes, Tensor::from_vector; and numbers of any C++ integer type (issue 30).
TEST(ReadmeExamples, TheBuilderAsUsersWriteIt) {
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var s = f.param("s", relax::tensor_sinfo({2, 2}, relax::DataType::float32()));
  relax::Var x = f.param("x", relax::tensor_sinfo({2, 2}, relax::DataType::float32()));
  relax::Var k = f.param("k", relax::tensor_sinfo({2, 2}, relax::DataType::float32()));
  const std::vector<int> v = {1, 2, 3};
  relax::Var a = f.emit(relax::op::multiply(s, 0.125));
  relax::Var b = f.emit(relax::op::add(x, 1));
  relax::Var kt = f.emit(relax::op::permute_dims(k, {1, 0}));
  relax::Var e = f.emit(relax::op::add(relax::op::add(a, b), kt));
  relax::Var sum = f.emit(relax::op::sum(e, {-1}));
  f.ret(f.emit(relax::op::multiply(sum, v.size())));
  absl::StatusOr<relax::IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();

  absl::StatusOr<relax::runtime::Module> m = relax::build(*mod, readme_target());
  ASSERT_TRUE(m.ok()) << m.status();
  using relax::runtime::Tensor;
  absl::StatusOr<Tensor> t = relax::runtime::Tensor::from_vector({2, 2}, std::vector<float>{1, 2, 3, 4});
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<relax::runtime::Value> y = (*m)["main"](*t, *t, *t);
  ASSERT_TRUE(y.ok()) << y.status();
  absl::StatusOr<Tensor> out = y->tensor();
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<float*> data = out->data_as<float>();
  ASSERT_TRUE(data.ok()) << data.status();
  // e[i][j] = t[i][j] / 8 + t[i][j] + 1 + t[j][i]; rows summed, times 3.
  const float t_[2][2] = {{1, 2}, {3, 4}};
  for (int i = 0; i < 2; ++i) {
    float row = 0;
    for (int j = 0; j < 2; ++j) row += t_[i][j] * 0.125f + t_[i][j] + 1 + t_[j][i];
    EXPECT_FLOAT_EQ((*data)[i], row * 3) << "row " << i;
  }
}

}  // namespace
