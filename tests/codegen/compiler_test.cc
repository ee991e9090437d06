// compile_shared_object (the JIT cache and the compiler driver) and
// KernelLibrary::open on files that are not what it wants. Every test uses
// its own temporary cache directory.
#include "relax/codegen/compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen_test_util.h"
#include "relax/runtime/kernel_library.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

namespace fs = std::filesystem;

/// The smallest valid kernel library: one kernel "one" that writes 1 into an int64 scalar buffer.
constexpr char kTinyLibrary[] = R"cpp(
#include <cstdint>
struct RelaxKernelArg { int32_t kind; int32_t ndim; uint8_t c, b; uint16_t l; void* data;
                        const int64_t* shape; const int64_t* strides; int64_t i; double f; };
typedef int32_t (*Fn)(const RelaxKernelArg*, int32_t, char*, int32_t);
struct Entry { const char* name; Fn fn; };
static int32_t one(const RelaxKernelArg* args, int32_t, char*, int32_t) {
  *static_cast<int64_t*>(args[0].data) = 1;
  return 0;
}
static const Entry table[] = {{"one", &one}};
extern "C" int32_t relax_abi_version(void) { return ABI_VERSION; }
extern "C" const Entry* relax_kernels(int32_t* count) { *count = 1; return table; }
)cpp";

std::string tiny_library(int version) {
  return "#define ABI_VERSION " + std::to_string(version) + "\n" + kTinyLibrary;
}

class CompilerTest : public ::testing::Test {
 protected:
  CompilerTest() {
    target_.cache_dir = cache_.path();
    target_.opt_level = "-O0";  // these sources need no optimisation; it keeps the tests fast
  }
  TempDir cache_;
  Target target_;
};

TEST_F(CompilerTest, SecondCompileOfTheSameSourceIsACacheHit) {
  absl::StatusOr<CompiledLibrary> first = compile_shared_object(tiny_library(1), target_);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cache_hit);
  EXPECT_TRUE(fs::exists(first->library_path));
  EXPECT_EQ(fs::path(first->library_path).parent_path(), fs::path(cache_.path()));
  EXPECT_EQ(first->source_path, "");  // not kept by default
  const auto written = fs::last_write_time(first->library_path);

  absl::StatusOr<CompiledLibrary> second = compile_shared_object(tiny_library(1), target_);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->library_path, first->library_path);
  EXPECT_EQ(fs::last_write_time(second->library_path), written);

  // Another source, or other flags, is another entry.
  absl::StatusOr<CompiledLibrary> other = compile_shared_object(tiny_library(1) + "\n", target_);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->cache_hit);
  EXPECT_NE(other->library_path, first->library_path);
  absl::StatusOr<CompiledLibrary> flagged = compile_shared_object(tiny_library(1), target_, {"-DUNUSED=1"});
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  EXPECT_FALSE(flagged->cache_hit);
  EXPECT_NE(flagged->library_path, first->library_path);
  // No temporary or log files are left behind.
  for (const auto& entry : fs::directory_iterator(cache_.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name.ends_with(".so") || name.ends_with(".lock")) << name;
  }
}

TEST_F(CompilerTest, KeepSourceKeepsIt) {
  target_.keep_source = true;
  absl::StatusOr<CompiledLibrary> lib = compile_shared_object(tiny_library(1), target_);
  ASSERT_TRUE(lib.ok()) << lib.status();
  ASSERT_NE(lib->source_path, "");
  std::ifstream in(lib->source_path);
  std::string first_line;
  std::getline(in, first_line);
  EXPECT_EQ(first_line, "#define ABI_VERSION 1");
  absl::StatusOr<CompiledLibrary> again = compile_shared_object(tiny_library(1), target_);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->source_path, lib->source_path);
}

TEST_F(CompilerTest, SyntaxErrorCarriesTheCompilerTextAndTheKeptSource) {
  absl::StatusOr<CompiledLibrary> lib = compile_shared_object("int main( { return 0; }\n", target_);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kInternal);
  const std::string message(lib.status().message());
  EXPECT_THAT(message, HasSubstr("error"));
  EXPECT_THAT(message, HasSubstr("exited with status 1"));
  const std::string marker = "source kept at: ";
  const size_t at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  const std::string path = message.substr(at + marker.size(), message.find('\n', at) - at - marker.size());
  EXPECT_TRUE(fs::exists(path)) << path;
  // The compiler's diagnostics name the kept source.
  EXPECT_THAT(message, HasSubstr(path + ":1:"));
}

TEST_F(CompilerTest, BogusFlagIsReportedWithTheCompilerText) {
  target_.isa_flags = {"-fno-such-relax-flag"};
  absl::StatusOr<CompiledLibrary> lib = compile_shared_object(tiny_library(1), target_);
  ASSERT_FALSE(lib.ok());
  // The flag appears in the command line and again in the compiler's complaint about it
  // (g++: "unrecognized command-line option", clang++: "unknown argument").
  const std::string message(lib.status().message());
  const size_t output = message.find("exited with status");
  ASSERT_NE(output, std::string::npos) << message;
  EXPECT_THAT(message.substr(output), HasSubstr("-fno-such-relax-flag")) << message;
  EXPECT_THAT(message.substr(output), HasSubstr("error")) << message;
}

TEST_F(CompilerTest, LongCompilerOutputIsTrimmed) {
  std::string source;
  // Long lines, so that even a compiler that stops after 20 errors says more than 4000 characters.
  for (int i = 0; i < 400; ++i) source += "int broken_" + std::string(300, 'x') + std::to_string(i) + " = ;\n";
  absl::StatusOr<CompiledLibrary> lib = compile_shared_object(source, target_);
  ASSERT_FALSE(lib.ok());
  const std::string message(lib.status().message());
  EXPECT_LT(message.size(), 6000u);
  EXPECT_THAT(message, HasSubstr("more characters]"));
  EXPECT_THAT(message, HasSubstr("compiler output in: "));
}

TEST_F(CompilerTest, MissingCompiler) {
  target_.compiler = "/nonexistent/relax-cxx";
  absl::StatusOr<CompiledLibrary> lib = compile_shared_object(tiny_library(1), target_);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(lib.status().message()), HasSubstr("cannot find the C++ compiler `/nonexistent/relax-cxx`"));
  target_.compiler = "no-such-relax-compiler-in-path";
  EXPECT_THAT(std::string(compile_shared_object(tiny_library(1), target_).status().message()),
              HasSubstr("`no-such-relax-compiler-in-path`"));
}

TEST_F(CompilerTest, NotACompiler) {
  target_.compiler = "false";  // runs, but fails `--version`
  absl::StatusOr<CompiledLibrary> lib = compile_shared_object(tiny_library(1), target_);
  ASSERT_FALSE(lib.ok());
  EXPECT_THAT(std::string(lib.status().message()), HasSubstr("--version` failed"));
}

/// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CompilerResolution, CompilerAndCacheDirectoryPrecedence) {
  Target t;
  {
    ScopedEnv relax_cxx("RELAX_CXX", "clang++");
    ScopedEnv cxx("CXX", "g++");
    EXPECT_EQ(resolve_compiler(t), "clang++");
    t.compiler = "my-cc";
    EXPECT_EQ(resolve_compiler(t), "my-cc");
    t.compiler.clear();
  }
  {
    ScopedEnv relax_cxx("RELAX_CXX", nullptr);
    ScopedEnv cxx("CXX", "g++");
    EXPECT_EQ(resolve_compiler(t), "g++");
  }
  {
    ScopedEnv relax_cxx("RELAX_CXX", nullptr);
    ScopedEnv cxx("CXX", nullptr);
    EXPECT_EQ(resolve_compiler(t), "c++");
  }
  {
    ScopedEnv dir("RELAX_CACHE_DIR", "/tmp/relax-a");
    ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(resolve_cache_dir(t), "/tmp/relax-a");
    t.cache_dir = "/tmp/mine";
    EXPECT_EQ(resolve_cache_dir(t), "/tmp/mine");
    t.cache_dir.clear();
  }
  {
    ScopedEnv dir("RELAX_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(resolve_cache_dir(t), "/tmp/xdg/relax");
  }
  {
    ScopedEnv dir("RELAX_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(resolve_cache_dir(t), "/home/someone/.cache/relax");
  }
}

TEST_F(CompilerTest, ConcurrentCompilesOfOneSourceBuildItOnce) {
  constexpr int kThreads = 4;
  std::vector<absl::StatusOr<CompiledLibrary>> results(kThreads, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      results[static_cast<size_t>(i)] = compile_shared_object(tiny_library(RELAX_KERNEL_ABI_VERSION), target_);
    });
  }
  for (std::thread& t : threads) t.join();
  int compiled = 0;
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->library_path, results[0]->library_path);
    compiled += r->cache_hit ? 0 : 1;
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_TRUE(runtime::KernelLibrary::open(results[0]->library_path).ok());
}

// ---- KernelLibrary on good and bad files ----------------------------------------

TEST_F(CompilerTest, OpenAndCallAHandWrittenLibrary) {
  absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(tiny_library(RELAX_KERNEL_ABI_VERSION), target_);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto lib = runtime::KernelLibrary::open(compiled->library_path);
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_EQ((*lib)->path(), compiled->library_path);
  EXPECT_EQ((*lib)->kernel_names(), std::vector<std::string>{"one"});
  EXPECT_FALSE((*lib)->embedded_executable().has_value());
  absl::StatusOr<RelaxKernelFn> one = (*lib)->find("one");
  ASSERT_TRUE(one.ok());
  int64_t out = 0;
  RelaxKernelArg arg{};
  arg.data = &out;
  EXPECT_EQ((*one)(&arg, 1, nullptr, 0), 0);
  EXPECT_EQ(out, 1);
  absl::StatusOr<RelaxKernelFn> missing = (*lib)->find("two");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("no kernel named `two`"));
}

TEST_F(CompilerTest, OpenReadsAnEmbeddedExecutable) {
  const std::string source = tiny_library(RELAX_KERNEL_ABI_VERSION) + R"cpp(
static const uint8_t blob[] = {1, 2, 3};
extern "C" const uint8_t* relax_executable(uint64_t* size) { *size = 3; return blob; }
)cpp";
  absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(source, target_);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto lib = runtime::KernelLibrary::open(compiled->library_path);
  ASSERT_TRUE(lib.ok()) << lib.status();
  std::optional<std::span<const uint8_t>> exe = (*lib)->embedded_executable();
  ASSERT_TRUE(exe.has_value());
  EXPECT_EQ(std::vector<uint8_t>(exe->begin(), exe->end()), (std::vector<uint8_t>{1, 2, 3}));
}

TEST_F(CompilerTest, OpenMissingFile) {
  const std::string path = cache_.path() + "/missing.so";
  auto lib = runtime::KernelLibrary::open(path);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(lib.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(lib.status().message()), HasSubstr("no such file"));
}

TEST_F(CompilerTest, OpenSomethingThatIsNotASharedObject) {
  const std::string path = cache_.path() + "/text.so";
  std::ofstream(path) << "not an ELF file\n";
  auto lib = runtime::KernelLibrary::open(path);
  ASSERT_FALSE(lib.ok());
  EXPECT_THAT(std::string(lib.status().message()), HasSubstr("is not a loadable shared object"));
}

TEST_F(CompilerTest, OpenASharedObjectThatIsNotRelax) {
  absl::StatusOr<CompiledLibrary> compiled =
      compile_shared_object("extern \"C\" int relax_unrelated(void) { return 7; }\n", target_);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto lib = runtime::KernelLibrary::open(compiled->library_path);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(lib.status().message()),
              HasSubstr("is not a relax kernel library: it does not export relax_abi_version"));
}

TEST_F(CompilerTest, OpenALibraryOfAnotherAbiVersion) {
  absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(tiny_library(RELAX_KERNEL_ABI_VERSION + 1), target_);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto lib = runtime::KernelLibrary::open(compiled->library_path);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(lib.status().message()),
              HasSubstr("has kernel ABI version " + std::to_string(RELAX_KERNEL_ABI_VERSION + 1) +
                        ", but this runtime implements version " + std::to_string(RELAX_KERNEL_ABI_VERSION)));
}

}  // namespace
}  // namespace relax
