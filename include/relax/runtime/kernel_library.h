// relax::runtime::KernelLibrary: a loaded shared object of compiled kernels.
//
// Opens a shared object written by relax's code generator (JIT or AOT) with
// dlopen (RTLD_LOCAL, so several libraries with the same exported names
// coexist in one process), checks its ABI version and reads its kernel table
// (see kernel_abi.h). The library stays loaded while any handle to it lives.
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
  /// object (with dlerror's text), it lacks the relax entry points, or its ABI
  /// version differs from this runtime's.
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

 private:
  KernelLibrary() = default;
  std::string path_;
  void* handle_ = nullptr;
  std::vector<RelaxKernelEntry> kernels_;
  std::optional<std::span<const uint8_t>> executable_;
};

}  // namespace relax::runtime
