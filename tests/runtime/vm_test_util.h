// Helpers of the VM, module and shape-check tests: run a hand-built
// Executable, open the test kernel library, register a fill library function, read a status
// message.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "relax/runtime/kernel_library.h"
#include "relax/runtime/module.h"
#include "test_programs.h"

namespace relax::runtime::testing {

/// The kernel library built from tests/runtime/kernels/test_kernels.c, opened once.
inline std::shared_ptr<const KernelLibrary> test_kernels() {
  static const std::shared_ptr<const KernelLibrary> lib = [] {
    absl::StatusOr<std::shared_ptr<const KernelLibrary>> l = KernelLibrary::open(RELAX_TEST_KERNELS);
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? *l : nullptr;
  }();
  return lib;
}

/// Creates a module of `exec` (with the test kernels) and calls `function` on `args`.
inline absl::StatusOr<Value> run(Executable exec, std::vector<Value> args,
                                 const std::string& function = "main") {
  std::shared_ptr<const KernelLibrary> lib = exec.kernel_names.empty() ? nullptr : test_kernels();
  absl::StatusOr<Module> m = Module::create(std::move(exec), std::move(lib));
  if (!m.ok()) return m.status();
  return (*m)[function].call(std::move(args));
}

/// The library function kFillInt64 (for call_dps_library / kCallLibrary): fills the int64
/// tensor of its first argument with the int of its second. Registered once per process.
inline constexpr char kFillInt64[] = "vm_test.fill_int64";
inline void register_fill_int64() {
  static const bool registered = [] {
    register_library_function(kFillInt64, [](const std::vector<Value>& args) {
      const Tensor& out = args[0].tensor_or_die();
      for (int64_t i = 0; i < out.numel(); ++i) out.data_as_or_die<int64_t>()[i] = args[1].int_value_or_die();
      return absl::OkStatus();
    });
    return true;
  }();
  (void)registered;
}

inline std::string message(const absl::Status& s) { return std::string(s.message()); }
template <typename T>
std::string message(const absl::StatusOr<T>& s) {
  return std::string(s.status().message());
}

}  // namespace relax::runtime::testing
