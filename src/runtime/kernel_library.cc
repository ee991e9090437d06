// KernelLibrary (relax/runtime/kernel_library.h): a dlopen'ed shared object of
// kernels that follows kernel_abi.h.
//
// open() checks, in order, the file itself (check_library_file: the path
// taken relative to the working directory, the integrity trailer's checksum,
// the ELF structure; nothing reaches dlopen before that passes), that it
// loads (RTLD_NOW, so that a missing symbol shows now rather than at the first
// call; RTLD_LOCAL,
// so that libraries exporting the same entry points coexist), that this CPU
// has every feature its ISA record names (read as data: no code of the
// library runs before that check, and a library compiled for a newer CPU
// would die with SIGILL in its first kernel), that it exports
// relax_abi_version and relax_kernels, that the version is this runtime's,
// and that the kernel table is well formed (names non-null and unique,
// functions non-null). Then it hands the library the runtime's table
// (relax_set_runtime_api: the process's kernel thread budget). The kernel
// table is copied; the names point into the library, which stays loaded
// until the KernelLibrary is destroyed. An OpenMP runtime
// that a library brings in stays loaded for good (see pin_openmp_runtime).
//
// This file is part of the runtime: it knows nothing of the compiler.
#include "relax/runtime/kernel_library.h"

#include <dlfcn.h>

#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cuda/cuda_launch.h"
#include "relax/runtime/library_file.h"
#include "relax/runtime/thread_budget.h"
#include "relax/support/cpu_features.h"

namespace relax::runtime {
namespace {

std::string dl_error() {
  const char* e = ::dlerror();
  return e == nullptr ? std::string("unknown dlopen error") : std::string(e);
}

/// Closes a handle unless released (for the error paths of open()).
class HandleGuard {
 public:
  explicit HandleGuard(void* handle) : handle_(handle) {}
  ~HandleGuard() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  HandleGuard(const HandleGuard&) = delete;
  HandleGuard& operator=(const HandleGuard&) = delete;
  void* release() { return std::exchange(handle_, nullptr); }

 private:
  void* handle_;
};

/// Kernels built with OpenMP leave the OpenMP runtime's worker threads parked
/// inside it after a parallel loop. dlclose of the last library that needed
/// that runtime would unmap it under those threads and crash the process, so
/// an OpenMP runtime that is loaded is made permanent (RTLD_NODELETE; with
/// RTLD_NOLOAD nothing new is loaded, and the extra reference is dropped).
void pin_openmp_runtime() {
  for (const char* name : {"libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so"}) {
    if (void* h = ::dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) ::dlclose(h);
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<const KernelLibrary>> KernelLibrary::open(const std::string& path) {
  // The absolute path: a bare name handed to dlopen would be searched for on
  // the library path instead of being read from the working directory.
  absl::StatusOr<std::string> checked = check_library_file(path);
  if (!checked.ok()) {
    return absl::Status(checked.status().code(), absl::StrCat("kernel library ", checked.status().message()));
  }
  ::dlerror();  // clear a stale error
  void* handle = ::dlopen(checked->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel library ", path, " is not a loadable shared object: ", dl_error()));
  }
  HandleGuard guard(handle);
  pin_openmp_runtime();
  std::string isa_level;
  std::vector<std::string> isa_features;
  if (const auto* features = static_cast<const char*>(::dlsym(handle, "relax_isa_features"))) {
    isa_features = absl::StrSplit(features, ' ', absl::SkipEmpty());
    if (const auto* level = static_cast<const char*>(::dlsym(handle, "relax_isa_level"))) isa_level = level;
    if (absl::Status s = check_cpu_features(absl::StrCat("kernel library ", path), isa_level, isa_features,
                                            host_cpu_features());
        !s.ok()) {
      return s;
    }
  }
  // dlsym gives a void*; POSIX guarantees it converts to a function pointer.
  auto version_fn = reinterpret_cast<RelaxAbiVersionFn>(::dlsym(handle, "relax_abi_version"));
  auto table_fn = reinterpret_cast<RelaxKernelTableFn>(::dlsym(handle, "relax_kernels"));
  if (version_fn == nullptr || table_fn == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel library ", path, " is not a relax kernel library: it does not export ",
        version_fn == nullptr ? "relax_abi_version" : "relax_kernels", " (see relax/runtime/kernel_abi.h)"));
  }
  const int32_t version = version_fn();
  if (version != RELAX_KERNEL_ABI_VERSION) {
    return absl::FailedPreconditionError(absl::StrCat("kernel library ", path, " has kernel ABI version ", version,
                                                      ", but this runtime implements version ",
                                                      RELAX_KERNEL_ABI_VERSION, "; rebuild it"));
  }
  int32_t count = -1;
  const RelaxKernelEntry* table = table_fn(&count);
  if (count < 0 || (count > 0 && table == nullptr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel library ", path, " returned a malformed kernel table (count ", count, ")"));
  }
  if (auto set_api = reinterpret_cast<RelaxSetRuntimeApiFn>(::dlsym(handle, "relax_set_runtime_api"))) {
    set_api(kernel_runtime_api());
  }
  std::shared_ptr<KernelLibrary> library(new KernelLibrary());
  library->path_ = path;
  library->isa_level_ = std::move(isa_level);
  library->isa_features_ = std::move(isa_features);
  for (int32_t i = 0; i < count; ++i) {
    const RelaxKernelEntry& entry = table[i];
    if (entry.name == nullptr || entry.fn == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel library ", path, ": kernel table entry ", i, " has no name or no function"));
    }
    for (const RelaxKernelEntry& seen : library->kernels_) {
      if (std::string_view(seen.name) == entry.name) {
        return absl::InvalidArgumentError(
            absl::StrCat("kernel library ", path, " has two kernels named `", entry.name, "`"));
      }
    }
    library->kernels_.push_back(entry);
  }
  if (auto exe_fn = reinterpret_cast<RelaxExecutableFn>(::dlsym(handle, "relax_executable"))) {
    uint64_t size = 0;
    const uint8_t* data = exe_fn(&size);
    if (data == nullptr && size > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel library ", path, ": relax_executable returned no data for ", size, " bytes"));
    }
    library->executable_ = std::span<const uint8_t>(data, static_cast<size_t>(size));
  }
  library->handle_ = guard.release();
  return std::shared_ptr<const KernelLibrary>(std::move(library));
}

KernelLibrary::~KernelLibrary() {
  if (handle_ == nullptr) return;
  // CUDA images loaded from this library's data go with it: another library may later be
  // mapped at the same addresses (cuda_launch caches images by address).
  if (void* table = ::dlsym(handle_, "relax_kernels")) cuda::forget_images_of_object(table);
  ::dlclose(handle_);
}

absl::StatusOr<RelaxKernelFn> KernelLibrary::find(const std::string& name) const {
  for (const RelaxKernelEntry& entry : kernels_) {
    if (name == entry.name) return entry.fn;
  }
  return absl::NotFoundError(absl::StrCat("kernel library ", path_, " has no kernel named `", name, "`"));
}

std::vector<std::string> KernelLibrary::kernel_names() const {
  std::vector<std::string> names;
  names.reserve(kernels_.size());
  for (const RelaxKernelEntry& entry : kernels_) names.emplace_back(entry.name);
  return names;
}

std::optional<std::span<const uint8_t>> KernelLibrary::embedded_executable() const { return executable_; }

}  // namespace relax::runtime
