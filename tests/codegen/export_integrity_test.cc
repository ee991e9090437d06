// Exported libraries and JIT cache entries that are damaged on disk: every
// case is an error before dlopen (so it runs in this process), a damaged cache
// entry is compiled again, and a bare file name is a file of the working
// directory. One module is built once for the whole file (SetUpTestSuite).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../runtime/library_file_test_util.h"
#include "absl/strings/str_cat.h"
#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/runtime/library_file.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using runtime::Tensor;
using runtime::Value;
using runtime::testing::read_bytes;
using runtime::testing::ScratchDir;
using runtime::testing::write_bytes;

// main(x: [n, 3] f32, y: [n, 3] f32) = x * y + x.
IRModule multiply_add() {
  SymVar n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 3}, DataType::float32()));
  Var y = f.param("y", tensor_sinfo({n, 3}, DataType::float32()));
  Var out;
  {
    auto df = f.dataflow();
    Var xy = f.emit(op::multiply(x, y), "xy");
    out = f.emit_output(op::add(xy, x), "out");
  }
  f.ret(out);
  absl::StatusOr<IRModule> mod = mb.build();
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

class ExportIntegrityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir();
    target_ = new Target();
    target_->cache_dir = scratch_->file("cache");
    absl::StatusOr<runtime::Module> m = build(multiply_add(), *target_, &info_);
    ASSERT_TRUE(m.ok()) << m.status();
    module_ = new runtime::Module(*std::move(m));
    exported_ = scratch_->file("exported.so");
    ASSERT_TRUE(module_->export_library(exported_).ok());
  }
  static void TearDownTestSuite() {
    delete module_;
    delete target_;
    delete scratch_;
  }

  // Calls main with n = 4 and checks x * y + x elementwise.
  static void expect_computes(const runtime::Module& m) {
    Tensor x = *Tensor::empty({4, 3}, DataType::float32());
    Tensor y = *Tensor::empty({4, 3}, DataType::float32());
    for (int i = 0; i < 12; ++i) {
      x.data_as_or_die<float>()[i] = 0.5f * static_cast<float>(i) - 2.0f;
      y.data_as_or_die<float>()[i] = 3.0f - 0.25f * static_cast<float>(i);
    }
    absl::StatusOr<Value> z = m["main"](x, y);
    ASSERT_TRUE(z.ok()) << z.status();
    absl::StatusOr<Tensor> t = z->tensor();
    ASSERT_TRUE(t.ok()) << t.status();
    for (int i = 0; i < 12; ++i) {
      const float xv = x.data_as_or_die<float>()[i], yv = y.data_as_or_die<float>()[i];
      EXPECT_FLOAT_EQ(t->data_as_or_die<float>()[i], xv * yv + xv) << "element " << i;
    }
  }

  static ScratchDir* scratch_;
  static Target* target_;
  static BuildInfo info_;
  static runtime::Module* module_;
  static std::string exported_;
};

ScratchDir* ExportIntegrityTest::scratch_ = nullptr;
Target* ExportIntegrityTest::target_ = nullptr;
BuildInfo ExportIntegrityTest::info_;
runtime::Module* ExportIntegrityTest::module_ = nullptr;
std::string ExportIntegrityTest::exported_;

// The AOT example of README.md and docs/ir.md, as written: a bare file name, relative to the working directory.
TEST_F(ExportIntegrityTest, ExportAndLoadByABareName) {
  ScratchDir dir;
  runtime::testing::WorkingDirectory cwd(dir.path());
  ASSERT_TRUE(module_->export_library("model.so").ok());
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.file("model.so")));
  absl::StatusOr<runtime::Module> loaded = runtime::load_module("model.so");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  expect_computes(*loaded);
  // No temporary file is left beside the export.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);

  absl::StatusOr<runtime::Module> missing = runtime::load_module("other.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("other.so: no such file"));
}

TEST_F(ExportIntegrityTest, TheExportIsSealedAndTheCacheEntryToo) {
  for (const std::string& path : {exported_, info_.library_path}) {
    const std::vector<uint8_t> bytes = read_bytes(path);
    ASSERT_GT(bytes.size(), runtime::kLibraryTrailerSize);
    EXPECT_EQ(std::string(bytes.end() - 8, bytes.end()), "RLXSEAL1") << path;
    absl::StatusOr<std::string> checked = runtime::check_library_file(path);
    EXPECT_TRUE(checked.ok()) << checked.status();
  }
}

// Every few hundred bytes, and at the end: inside the trailer, and exactly before it (the
// export carries the seal marker). Always DataLoss naming the missing bytes.
TEST_F(ExportIntegrityTest, ATruncatedExportIsAnErrorEveryFewHundredBytes) {
  const std::vector<uint8_t> bytes = read_bytes(exported_);
  const size_t content = bytes.size() - runtime::kLibraryTrailerSize;
  ScratchDir dir;
  const std::string path = dir.file("truncated.so");
  std::vector<size_t> cuts;
  for (size_t cut = 0; cut < bytes.size(); cut += cut < 1024 ? 97 : 257) cuts.push_back(cut);
  for (size_t cut : {content, content + 1, content + 16, bytes.size() - 1}) cuts.push_back(cut);
  for (size_t cut : cuts) {
    write_bytes(path, bytes, cut);
    absl::StatusOr<runtime::Module> m = runtime::load_module(path);
    ASSERT_FALSE(m.ok()) << "cut at " << cut;
    const std::string message(m.status().message());
    EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << "cut at " << cut << ": " << message;
    EXPECT_THAT(message, HasSubstr(absl::StrCat(path, ": truncated: "))) << "cut at " << cut;
    EXPECT_THAT(message, HasSubstr(absl::StrCat("but the file ends at byte ", cut))) << "cut at " << cut;
    if (cut >= content) {
      EXPECT_THAT(message, HasSubstr(absl::StrCat("bytes [", cut, ", ", bytes.size(), ") are missing")))
          << "cut at " << cut;
    }
  }
}

TEST_F(ExportIntegrityTest, FlippedBytesInTextAndDynamicAreDataLoss) {
  const std::vector<uint8_t> bytes = read_bytes(exported_);
  const auto text = runtime::testing::elf_section(bytes, ".text");
  const auto dynamic = runtime::testing::elf_section(bytes, ".dynamic");
  // The linker merges .rodata.relax_executable (the embedded Executable) into .rodata.
  const auto rodata = runtime::testing::elf_section(bytes, ".rodata");
  ASSERT_TRUE(text.has_value());
  ASSERT_TRUE(dynamic.has_value());
  ASSERT_TRUE(rodata.has_value());
  std::vector<size_t> positions;
  for (size_t i = 0; i < dynamic->size; i += 3) positions.push_back(dynamic->offset + i);
  for (size_t i = 0; i < text->size; i += 11) positions.push_back(text->offset + i);
  for (size_t i = 0; i < rodata->size; i += 5) positions.push_back(rodata->offset + i);
  for (size_t i = 0; i < bytes.size(); i += 499) positions.push_back(i);
  ScratchDir dir;
  const std::string path = dir.file("flipped.so");
  for (size_t at : positions) {
    std::vector<uint8_t> damaged = bytes;
    damaged[at] ^= static_cast<uint8_t>(1u << (at % 8));
    write_bytes(path, damaged, damaged.size());
    absl::StatusOr<runtime::Module> m = runtime::load_module(path);
    ASSERT_FALSE(m.ok()) << "byte " << at;
    ASSERT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << "byte " << at << ": " << m.status();
    EXPECT_THAT(std::string(m.status().message()), HasSubstr("the file is corrupt"));
  }
}

// A damaged JIT cache entry is a cache miss: build compiles it again, over the damaged file.
TEST_F(ExportIntegrityTest, ADamagedCacheEntryIsCompiledAgain) {
  const std::string entry = info_.library_path;
  const std::vector<uint8_t> good = read_bytes(entry);
  const auto text = runtime::testing::elf_section(good, ".text");
  ASSERT_TRUE(text.has_value());
  std::vector<uint8_t> flipped = good;
  flipped[text->offset + text->size / 2] ^= 0x04;
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> damages = {
      {"a flipped byte in .text", flipped},
      {"a file cut in half", std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2)},
  };
  for (const auto& [what, damaged] : damages) {
    // Replaced by rename, not rewritten in place: this process still has the entry mapped.
    const std::string tmp = entry + ".damaged";
    write_bytes(tmp, damaged, damaged.size());
    std::filesystem::rename(tmp, entry);
    absl::StatusOr<std::string> checked = runtime::check_library_file(entry);
    ASSERT_FALSE(checked.ok()) << what;
    BuildInfo info;
    absl::StatusOr<runtime::Module> m = build(multiply_add(), *target_, &info);
    ASSERT_TRUE(m.ok()) << what << ": " << m.status();
    EXPECT_FALSE(info.cache_hit) << what;
    EXPECT_EQ(info.library_path, entry) << what;
    checked = runtime::check_library_file(entry);
    EXPECT_TRUE(checked.ok()) << what << ": " << checked.status();
    expect_computes(*m);
  }
}

}  // namespace
}  // namespace relax
