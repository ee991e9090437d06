// Module and Function: binding kernels and library functions, lookup,
// loading AOT libraries, exporting, and calls from many threads at once.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "relax/runtime/kv_cache.h"
#include "relax/runtime/module.h"
#include "test_programs.h"
#include "vm_test_util.h"

namespace relax::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::f32;
using testing::message;
using testing::op;
using testing::reg;

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

TEST(ModuleTest, CreateNamesAMissingKernel) {
  Executable exec = testing::add_program();
  exec.kernel_names = {"no_such_kernel"};
  absl::StatusOr<Module> m = Module::create(exec, testing::test_kernels());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(message(m), HasSubstr("Module::create: "));
  EXPECT_THAT(message(m), HasSubstr("no_such_kernel"));
  EXPECT_THAT(message(m), HasSubstr(RELAX_TEST_KERNELS));

  m = Module::create(testing::add_program(), nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(message(m),
            "Module::create: the executable calls kernel add_kernel but no kernel library was given");
}

TEST(ModuleTest, CreateNamesAMissingLibraryFunction) {
  Executable exec = testing::add_program();
  exec.kernel_names.clear();
  exec.library_functions = {"module_test.missing"};
  exec.functions[0].code[2] = op(Opcode::kCallLibrary, -1, 0, {reg(0), reg(1), reg(2)});
  absl::StatusOr<Module> m = Module::create(exec, nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(message(m),
            "Module::create: library function module_test.missing is not registered (see "
            "register_library_function)");
}

// A function that writes `version` into its int64 argument.
LibraryFunction writing(int64_t version) {
  return [version](const std::vector<Value>& args) {
    const Tensor& t = args[0].tensor_or_die();
    for (int64_t i = 0; i < t.numel(); ++i) t.data_as_or_die<int64_t>()[i] = version;
    return absl::OkStatus();
  };
}

// main() = library function 0 into a new Tensor[(1,), int64].
Executable library_program(const std::string& name) {
  VMFunction fn;
  fn.name = "main";
  fn.num_registers = 1;
  fn.code = {op(Opcode::kAllocTensor, 0, 0, {testing::imm(1)}, DataType::int64()),
             op(Opcode::kCallLibrary, -1, 0, {reg(0)}), op(Opcode::kRet, -1, 0, {reg(0)})};
  Executable exec;
  exec.functions = {fn};
  exec.library_functions = {name};
  return exec;
}

int64_t run_version(const Executable& exec) {
  absl::StatusOr<Module> m = Module::create(exec, nullptr);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return -1;
  absl::StatusOr<Value> v = (*m)["main"]();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? testing::elements<int64_t>(v->tensor_or_die())[0] : -1;
}

TEST(ModuleTest, LibraryFamiliesResolveExactNamesFirstThenTheLongestPrefix) {
  std::atomic<int> resolved{0};
  auto family = [&resolved](int64_t version) {
    return [&resolved, version](const std::string& name) -> absl::StatusOr<LibraryFunction> {
      if (absl::StrContains(name, "bad")) return absl::InvalidArgumentError("a bad name");
      resolved.fetch_add(1);
      return writing(version);
    };
  };
  register_library_family("module_test_family.", family(1));
  register_library_family("module_test_family.long.", family(2));
  register_library_function("module_test_family.long.exact", writing(3));

  EXPECT_EQ(run_version(library_program("module_test_family.x")), 1);
  EXPECT_EQ(run_version(library_program("module_test_family.long.x")), 2);
  EXPECT_EQ(run_version(library_program("module_test_family.long.exact")), 3);
  EXPECT_EQ(resolved.load(), 2);
  // Each Module::create resolves anew: every module owns its function objects.
  EXPECT_EQ(run_version(library_program("module_test_family.x")), 1);
  EXPECT_EQ(resolved.load(), 3);
  // find_library_function knows exact names only.
  EXPECT_EQ(find_library_function("module_test_family.x"), nullptr);

  // A resolver's error is Module::create's, naming the calling function and the name.
  absl::StatusOr<Module> m = Module::create(library_program("module_test_family.bad"), nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(m),
            "Module::create: function main calls library function module_test_family.bad: a bad name");
  // A name of no family is still NotFound.
  m = Module::create(library_program("module_test_other.x"), nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
}

TEST(ModuleTest, FunctionsByName) {
  absl::StatusOr<Module> m = Module::create(testing::aot_program(), testing::test_kernels());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(m->function_names(), ElementsAre("main", "offset"));
  EXPECT_EQ(m->executable().functions.size(), 2u);
  EXPECT_EQ(m->kernels(), testing::test_kernels());

  absl::StatusOr<Function> f = m->get_function("offset");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->defined());
  EXPECT_EQ(f->name(), "offset");

  f = m->get_function("nope");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(message(f), "the module has no function nope (it has: main, offset)");

  Function missing = (*m)["nope"];
  EXPECT_EQ(missing.name(), "nope");
  absl::StatusOr<Value> v = missing(1);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(message(v), "the module has no function nope (it has: main, offset)");

  Function undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_EQ(undefined.name(), "");
  v = undefined.call({});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(Module().defined());
  EXPECT_TRUE(Module().function_names().empty());
}

TEST(ModuleTest, AFunctionKeepsItsModuleAlive) {
  Function main;
  {
    absl::StatusOr<Module> m = Module::create(testing::add_program(), testing::test_kernels());
    ASSERT_TRUE(m.ok()) << m.status();
    main = (*m)["main"];
  }
  absl::StatusOr<Value> v = main(f32({2}, {1, 2}), f32({2}, {3, 4}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<float>(v->tensor_or_die()), (std::vector<float>{4, 6}));
}

TEST(ModuleTest, ModulesCopyTheLibraryFunctionsTheyBind) {
  auto returning = [](int64_t version) {
    return [version](const std::vector<Value>& args) {
      for (int64_t i = 0; i < args[0].tensor_or_die().numel(); ++i) args[0].tensor_or_die().data_as_or_die<int64_t>()[i] = version;
      return absl::OkStatus();
    };
  };
  register_library_function("module_test.version", returning(1));
  const LibraryFunction* first = find_library_function("module_test.version");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(find_library_function("module_test.unknown"), nullptr);

  VMFunction fn;
  fn.name = "main";
  fn.num_registers = 1;
  fn.code = {op(Opcode::kAllocTensor, 0, 0, {testing::imm(1)}, DataType::int64()),
             op(Opcode::kCallLibrary, -1, 0, {reg(0)}), op(Opcode::kRet, -1, 0, {reg(0)})};
  Executable exec;
  exec.functions = {fn};
  exec.library_functions = {"module_test.version"};
  absl::StatusOr<Module> old_module = Module::create(exec, nullptr);
  ASSERT_TRUE(old_module.ok()) << old_module.status();

  register_library_function("module_test.version", returning(2));
  absl::StatusOr<Module> new_module = Module::create(exec, nullptr);
  ASSERT_TRUE(new_module.ok()) << new_module.status();

  absl::StatusOr<Value> v = (*old_module)["main"]();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<int64_t>(v->tensor_or_die())[0], 1);
  v = (*new_module)["main"]();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<int64_t>(v->tensor_or_die())[0], 2);
  // The replaced function is still alive behind the old pointer.
  Tensor t = *Tensor::empty({1}, DataType::int64());
  ASSERT_TRUE((*first)({Value(t)}).ok());
  EXPECT_EQ(t.data_as_or_die<int64_t>()[0], 1);
}

// Traits come with a registration: the runtime's attention synchronises with the host (a
// CUDA-graph capture is split around it), a function registered without traits does not, a
// re-registration replaces them, and a name nobody registered has the defaults.
TEST(ModuleTest, LibraryFunctionsCarryTheirTraits) {
  EXPECT_TRUE(library_function_traits(kKVCacheAttentionName).synchronises_host);
  auto nothing = [](const std::vector<Value>&) { return absl::OkStatus(); };
  register_library_function("module_test.traits", nothing);
  EXPECT_FALSE(library_function_traits("module_test.traits").synchronises_host);
  register_library_function("module_test.traits", nothing, LibraryFunctionTraits{.synchronises_host = true});
  EXPECT_TRUE(library_function_traits("module_test.traits").synchronises_host);
  EXPECT_FALSE(library_function_traits("module_test.never_registered").synchronises_host);
}

TEST(ModuleTest, RegistryIsThreadSafe) {
  std::vector<std::thread> threads;
  std::atomic<int> found{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &found] {
      for (int i = 0; i < 200; ++i) {
        const std::string name = absl::StrCat("module_test.concurrent.", (t + i) % 16);
        register_library_function(name, [](const std::vector<Value>&) { return absl::OkStatus(); });
        const LibraryFunction* fn = find_library_function(name);
        if (fn != nullptr && (*fn)({}).ok()) found.fetch_add(1);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(found.load(), 8 * 200);
}

// ---------------------------------------------------------------------------
// AOT libraries.

void expect_aot_module_works(const Module& m) {
  absl::StatusOr<Value> v = m["main"](f32({3}, {1, 2, 3}), f32({3}, {3, 2, 1}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<float>(v->tensor_or_die()), (std::vector<float>{2, 2, 2}));
  v = m["offset"](testing::i64({2}, {5, 6}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(testing::elements<int64_t>(v->fields_or_die()[0].tensor_or_die()), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(v->fields_or_die()[1].describe(), "Shape(2, 4)");
  v = m["main"](f32({3}, {1, 2, 3}), f32({4}, {}));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(message(v), "main: argument y: dimension 0 is 4, expected n = 3");
}

TEST(ModuleTest, LoadModuleRunsTheEmbeddedExecutable) {
  absl::StatusOr<Module> m = load_module(RELAX_TEST_AOT_MODULE);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->executable().disassemble(), testing::aot_program().disassemble());
  EXPECT_EQ(m->kernels()->path(), RELAX_TEST_AOT_MODULE);
  expect_aot_module_works(*m);
}

TEST(ModuleTest, ExportOfALoadedModuleCopiesItsLibrary) {
  absl::StatusOr<Module> m = load_module(RELAX_TEST_AOT_MODULE);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string copy = temp_path("module_test_export_copy.so");
  std::filesystem::remove(copy);
  ASSERT_TRUE(m->export_library(copy).ok());
  absl::StatusOr<Module> again = load_module(copy);
  ASSERT_TRUE(again.ok()) << again.status();
  expect_aot_module_works(*again);
  // Exporting onto the file itself is a no-op, not a truncation.
  ASSERT_TRUE(again->export_library(copy).ok());
  EXPECT_TRUE(load_module(copy).ok());
  std::filesystem::remove(copy);

  absl::Status s = m->export_library("/nonexistent-dir/x.so");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(message(s), HasSubstr("export_library: cannot copy "));
  EXPECT_THAT(message(s), HasSubstr("/nonexistent-dir/x.so"));
}

TEST(ModuleTest, ExportNeedsAnExporterOrALoadedLibrary) {
  absl::StatusOr<Module> m = Module::create(testing::add_program(), testing::test_kernels());
  ASSERT_TRUE(m.ok()) << m.status();
  absl::Status s = m->export_library(temp_path("never_written.so"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(message(s),
            "export_library: this module was neither built by relax::build nor loaded by load_module, "
            "so there is no shared object to write");
  std::string written;
  m->set_exporter([&written](const std::string& path, const Executable&) {
    written = path;
    return absl::OkStatus();
  });
  EXPECT_TRUE(m->export_library("out.so").ok());
  EXPECT_EQ(written, "out.so");
}

TEST(ModuleTest, LoadModuleErrorsNameThePath) {
  absl::StatusOr<Module> m = load_module(RELAX_TEST_KERNELS);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(message(m), absl::StrCat("load_module: ", RELAX_TEST_KERNELS,
                                     " embeds no executable (a JIT kernel library, not a module "
                                     "written by export_library)"));

  m = load_module(RELAX_TEST_AOT_CORRUPT);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(message(m), ::testing::StartsWith(absl::StrCat(
                              "load_module: ", RELAX_TEST_AOT_CORRUPT,
                              ": embedded executable: Executable::deserialize: at byte 20: checksum mismatch")));

  const std::string missing = temp_path("module_test_missing.so");
  m = load_module(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(message(m), ::testing::StartsWith("load_module: "));
  EXPECT_THAT(message(m), HasSubstr(missing));

  const std::string text = temp_path("module_test_not_a_library.so");
  std::ofstream(text) << "not a shared object\n";
  m = load_module(text);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(message(m), HasSubstr(text));
  std::filesystem::remove(text);
}

// ---------------------------------------------------------------------------
// Concurrency: one module, 8 threads x 200 calls of different sizes, every
// result checked; every tenth call has mismatched arguments and must fail
// with its own message.
TEST(ModuleTest, ConcurrentCallsAreIndependent) {
  absl::StatusOr<Module> m = Module::create(testing::add_program(), testing::test_kernels());
  ASSERT_TRUE(m.ok()) << m.status();
  const Function main = (*m)["main"];
  constexpr int kThreads = 8;
  constexpr int kCalls = 200;
  std::atomic<int> good{0};
  std::atomic<int> bad{0};
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const int64_t n = 1 + (t * kCalls + i) % 37;
        std::vector<float> x(static_cast<size_t>(n));
        std::vector<float> y(static_cast<size_t>(n));
        for (int64_t k = 0; k < n; ++k) {
          x[static_cast<size_t>(k)] = static_cast<float>(k + t);
          y[static_cast<size_t>(k)] = static_cast<float>(2 * k + i);
        }
        if (i % 10 == 9) {
          absl::StatusOr<Value> v = main(f32({n}, x), f32({n + 1}, {}));
          const std::string expected =
              absl::StrCat("main: argument y: dimension 0 is ", n + 1, ", expected n = ", n);
          if (!v.ok() && message(v) == expected) {
            bad.fetch_add(1);
          } else {
            failures[static_cast<size_t>(t)] = "expected failure: " + expected;
          }
          continue;
        }
        absl::StatusOr<Value> v = main(f32({n}, x), f32({n}, y));
        bool ok = v.ok() && v->is_tensor() && v->tensor_or_die().shape() == std::vector<int64_t>{n};
        if (ok) {
          const std::vector<float> out = testing::elements<float>(v->tensor_or_die());
          for (int64_t k = 0; k < n; ++k) {
            ok = ok && out[static_cast<size_t>(k)] == static_cast<float>(3 * k + t + i);
          }
        }
        if (ok) {
          good.fetch_add(1);
        } else {
          failures[static_cast<size_t>(t)] = absl::StrCat("thread ", t, " call ", i, " n ", n, ": ",
                                                          v.ok() ? v->describe() : message(v));
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
  EXPECT_EQ(good.load(), kThreads * kCalls * 9 / 10);
  EXPECT_EQ(bad.load(), kThreads * kCalls / 10);
}

}  // namespace
}  // namespace relax::runtime
