// The C++ examples of README.md and docs/, compiled and run as they are written there. Each
// example is copied into a test between a marker line naming its page and block ("snippet
// docs/ir.md#2": the page's second C++ block) and an end marker; ExamplesAreThoseOfTheirPages
// compares every such copy with its block (the block's #include lines left out), so an example
// that drifts from its page fails like one that stops compiling. What follows a snippet checks
// its result (for the IR example, that it prints the text the page shows).
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
absl::StatusOr<relax::Expr> relu_kernel() {
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
  return b.build();
}

std::string read_source_file(const std::string& relative) {
  std::ifstream file(std::filesystem::path(RELAX_SOURCE_DIR) / relative);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The text of `page` between the line `after` and the next "```" fence after it.
std::string block_after(const std::string& page, const std::string& after) {
  const std::string text = read_source_file(page);
  size_t at = text.find(after);
  if (at == std::string::npos) return "<no `" + after + "` in " + page + ">";
  at = text.find("```\n", at + after.size());
  if (at == std::string::npos) return "<no block>";
  at += 4;
  const size_t end = text.find("```", at);
  return text.substr(at, end - at);
}

// The C++ blocks of `page`, each without its #include lines and the blank lines after them.
std::vector<std::string> cpp_blocks(const std::string& page) {
  std::vector<std::string> out;
  std::istringstream in(read_source_file(page));
  bool inside = false;
  std::string block;
  for (std::string line; std::getline(in, line);) {
    const size_t indent = line.find_first_not_of(' ');
    const std::string trimmed = indent == std::string::npos ? "" : line.substr(indent);
    if (!inside && trimmed == "```cpp") {
      inside = true;
      block.clear();
      continue;
    }
    if (inside && trimmed == "```") {
      inside = false;
      out.push_back(block);
      continue;
    }
    if (!inside) continue;
    if (trimmed.rfind("#include", 0) == 0 || (trimmed.empty() && block.empty())) continue;
    block += line + "\n";
  }
  return out;
}

relax::Target docs_target() {
  relax::Target t;
  t.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_docs_examples_cache").string();
  return t;
}

// README.md, "A first program".
TEST(DocsExamples, TheFirstProgramRunsAtTwoSizesAndExports) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "relax_docs_first_program";
  std::filesystem::create_directories(dir);
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);  // the snippet writes model.so to the working directory
  testing::internal::CaptureStdout();
  // ---- snippet README.md#1 ----
  // y = softmax(x @ w) for any number of rows n: one symbolic dim, one compilation.
  relax::SymVar n("n");
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n, 32}, relax::DataType::float32()));
  relax::Var w = f.param("w", relax::tensor_sinfo({32, 8}, relax::DataType::float32()));
  relax::Var h = f.emit(relax::op::matmul(x, w));  // deduced: Tensor[(n, 8), float32]
  f.ret(f.emit(relax::op::softmax(h, -1)));

  absl::StatusOr<relax::runtime::Module> m = relax::build(*mb.build(), "cpu");  // JIT, once
  using relax::runtime::Tensor;
  Tensor ws = *Tensor::from_vector({32, 8}, std::vector<float>(32 * 8, 0.5f));
  for (int64_t rows : {3, 1000}) {  // any n, no recompilation
    Tensor xs = *Tensor::from_vector({rows, 32}, std::vector<float>(rows * 32, 1.0f));
    absl::StatusOr<relax::runtime::Value> y = (*m)["main"](xs, ws);  // errors are a Status
    std::cout << y->tensor_or_die().describe() << "\n";
  }
  absl::Status saved = m->export_library("model.so");  // AOT: a self-contained library,
  // which a process linking only relax::runtime loads:
  absl::StatusOr<relax::runtime::Module> loaded = relax::runtime::load_module("model.so");
  // ---- end of snippet ----
  const std::string printed = testing::internal::GetCapturedStdout();
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(printed, ::testing::HasSubstr("(3, 8)"));
  EXPECT_THAT(printed, ::testing::HasSubstr("(1000, 8)"));
  EXPECT_TRUE(saved.ok()) << saved;
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // Equal rows through equal weights: each softmax row is 1/8 everywhere, at any size, from
  // the loaded library too.
  for (int64_t rows : {1, 5}) {
    Tensor xs = *Tensor::from_vector({rows, 32}, std::vector<float>(static_cast<size_t>(rows) * 32, 1.0f));
    absl::StatusOr<relax::runtime::Value> y = (*loaded)["main"](xs, ws);
    ASSERT_TRUE(y.ok()) << y.status();
    const float* data = y->tensor_or_die().data_as_or_die<float>();
    for (int64_t i = 0; i < rows * 8; ++i) EXPECT_FLOAT_EQ(data[i], 0.125f) << "rows " << rows << ", element " << i;
  }
}

// docs/ir.md, "Building a module".
TEST(DocsExamples, TheIrExamplePrintsWhatItsPageShows) {
  testing::internal::CaptureStdout();
  // ---- snippet docs/ir.md#1 ----
  relax::ModuleBuilder mb;
  absl::StatusOr<relax::Expr> kernel = relu_kernel();     // a PrimFunc, see "Loop level"
  relax::Expr relu = mb.add_prim_func("relu", *kernel);
  const relax::DataType f32 = relax::DataType::float32();
  relax::SymVar n("n");
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n, 64}, f32));
  relax::Var w = f.param("w", relax::tensor_sinfo({64, 64}, f32));
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
  EXPECT_EQ(printed, block_after("docs/ir.md", "std::cout << relax::to_text(*mod);\n```\n\nprints"));
}

// docs/ir.md, "From IR to a Module".
TEST(DocsExamples, TheBuildExampleCompilesRunsAndExports) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "relax_docs_build_example";
  std::filesystem::create_directories(dir);
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);  // the snippet writes model.so to the working directory
  // ---- snippet docs/ir.md#2 ----
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
  // y->tensor() is a StatusOr<Tensor>, tensor.data_as<float>() a StatusOr<float*>; *_or_die abort.
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

// Every snippet of this file is the block of its page it names.
TEST(DocsExamples, ExamplesAreThoseOfTheirPages) {
  const std::string source = read_source_file("tests/ops/docs_examples_test.cc");
  const std::string open = std::string("// ---- ") + "snippet ";
  const std::string close = std::string("// ---- ") + "end of snippet ----";
  int compared = 0;
  for (size_t at = source.find(open); at != std::string::npos; at = source.find(open, at + 1)) {
    const size_t id_end = source.find(" ----\n", at);
    const std::string id = source.substr(at + open.size(), id_end - at - open.size());
    const size_t hash = id.rfind('#');
    const std::string page = id.substr(0, hash);
    const int index = std::stoi(id.substr(hash + 1));
    const size_t body = id_end + 6;
    const size_t end = source.find(close, body);
    ASSERT_NE(end, std::string::npos) << id;
    // The snippet's lines without the test body's indentation (two spaces).
    std::string snippet;
    std::istringstream lines(source.substr(body, source.rfind('\n', end) + 1 - body));
    for (std::string line; std::getline(lines, line);) snippet += (line.rfind("  ", 0) == 0 ? line.substr(2) : line) + "\n";
    const std::vector<std::string> blocks = cpp_blocks(page);
    ASSERT_LE(static_cast<size_t>(index), blocks.size()) << id << ": " << page << " has " << blocks.size() << " C++ blocks";
    EXPECT_EQ(snippet, blocks[static_cast<size_t>(index) - 1]) << id << " differs from its copy in this test";
    ++compared;
  }
  EXPECT_GE(compared, 3);
}

// docs/operators.md, "Conventions": numbers as operands, braced
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

  absl::StatusOr<relax::runtime::Module> m = relax::build(*mod, docs_target());
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
