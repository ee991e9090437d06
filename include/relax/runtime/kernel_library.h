// relax::runtime::KernelLibrary: a loaded shared object of compiled kernels.
//
// Opens a shared object written by relax's code generator (JIT or AOT) with
// dlopen (RTLD_LOCAL, so several libraries with the same exported names
// coexist in one process), checks its ABI version and reads its kernel table
// (see kernel_abi.h). It refuses a library whose recorded ISA features this CPU
// lacks (relax/support/cpu_features.h), and hands it the runtime's table
// (relax/runtime/thread_budget.h). The library stays loaded while any handle
// to it lives.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/runtime/kernel_abi.h"

namespace relax::runtime {

class KernelLibrary {
 public:
  /// Loads `path` (relative to the working directory when relative) after
  /// check_library_file (relax/runtime/library_file.h) has passed it. Errors
  /// name the path and say what is wrong: the file is missing ("no such
  /// file"), truncated, corrupt (DataLoss), unsealed, not a loadable shared
  /// object (with dlerror's text), it needs CPU features this CPU lacks
  /// (FailedPrecondition naming the ISA level, the features it needs and those
  /// missing and present), it lacks the relax entry points, or its ABI version
  /// differs from this runtime's.
  static absl::StatusOr<std::shared_ptr<const KernelLibrary>> open(const std::string& path);

  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  const std::string& path() const { return path_; }
  /// The kernel called `name`, or NotFound naming it and the library.
  absl::StatusOr<RelaxKernelFn> find(const std::string& name) const;
  /// The names of every kernel, in table order.
  std::vector<std::string> kernel_names() const;
  /// The serialised Executable an AOT library embeds; nullopt for a JIT one.
  std::optional<std::span<const uint8_t>> embedded_executable() const;
  /// The ISA level the library's target named ("x86-64-v3", "native"; empty
  /// when it named none or the library records no ISA).
  const std::string& isa_level() const { return isa_level_; }
  /// The CPU features the library's code may use, as it recorded them.
  const std::vector<std::string>& isa_features() const { return isa_features_; }

 private:
  KernelLibrary() = default;
  std::string path_;
  void* handle_ = nullptr;
  std::vector<RelaxKernelEntry> kernels_;
  std::optional<std::span<const uint8_t>> executable_;
  std::string isa_level_;
  std::vector<std::string> isa_features_;
};

}  // namespace relax::runtime
