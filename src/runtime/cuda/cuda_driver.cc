// Loading the CUDA driver (cuda_driver.h) and turning its results into absl::Status.
//
// The first call of driver() opens libcuda.so.1 (RTLD_LOCAL; never closed: the driver's
// threads and contexts live as long as the process), resolves every row of
// RELAX_CUDA_DRIVER_FUNCTIONS, runs cuInit(0) and counts the devices. The outcome, good or
// bad, is kept for the process: a machine without the driver answers every later call with
// the same FailedPrecondition at the cost of reading it. Nothing here runs before something
// needs the device, so a process that never touches CUDA never loads the driver.
#if defined(RELAX_WITH_CUDA)

#include "cuda_driver.h"

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cuda_context.h"

// Two-level stringize: the argument is macro-expanded first (cuMemAlloc -> cuMemAlloc_v2).
#define RELAX_CUDA_STRINGIZE(x) #x
#define RELAX_CUDA_SYMBOL(x) RELAX_CUDA_STRINGIZE(x)

namespace relax::runtime::cuda {
namespace {

constexpr const char* kDriverLibrary = "libcuda.so.1";

struct LoadedDriver {
  DriverApi api;
  absl::Status status;  // OK when api is usable
};

/// Looks `symbol` up; records it in `missing` when the library lacks it.
template <typename Fn>
void resolve(void* handle, const char* symbol, Fn* out, std::vector<std::string>* missing) {
  void* address = ::dlsym(handle, symbol);
  if (address == nullptr) {
    missing->emplace_back(symbol);
    return;
  }
  static_assert(sizeof(Fn) == sizeof(void*));
  std::memcpy(out, &address, sizeof address);  // object to function pointer, as dlsym intends
}

/// The status code of a failed driver call: out of memory is ResourceExhausted (a pool
/// returns its cached blocks and tries again), a bad argument InvalidArgument, what the
/// machine or the image cannot do FailedPrecondition, the rest Internal.
absl::StatusCode code_of(CUresult result) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_FOUND:
      return absl::StatusCode::kInvalidArgument;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

/// check() with the error names of `api` (load() cannot call check(): the driver is not
/// published yet).
absl::Status check_with(const DriverApi& api, CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString != nullptr) api.cuGetErrorString(result, &text);
  return absl::Status(
      code_of(result),
      absl::StrCat(std::string(what), ": ",
                   name != nullptr ? std::string(name) : absl::StrCat("CUresult ", result),
                   text != nullptr ? absl::StrCat(" (", text, ")") : std::string()));
}

absl::Status load(DriverApi& api) {
  void* handle = ::dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver ", kDriverLibrary,
                     " cannot be loaded: ", e != nullptr ? e : "unknown dlopen error"));
  }
  std::vector<std::string> missing;
#define RELAX_CUDA_RESOLVE(name) resolve(handle, RELAX_CUDA_SYMBOL(name), &api.name, &missing);
  RELAX_CUDA_DRIVER_FUNCTIONS(RELAX_CUDA_RESOLVE)
#undef RELAX_CUDA_RESOLVE
  if (api.cuDriverGetVersion != nullptr) api.cuDriverGetVersion(&api.version);
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver ", kDriverLibrary, " (version ", api.version / 1000, ".",
                     api.version % 1000 / 10, ") lacks ", absl::StrJoin(missing, ", "),
                     ": relax needs a driver of CUDA ", CUDA_VERSION / 1000, " or newer"));
  }
  const CUresult init = api.cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) {
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA device (", check_with(api, init, "cuInit").message(), ")"));
  }
  if (absl::Status s = check_with(api, init, "cuInit"); !s.ok()) {
    return absl::FailedPreconditionError(s.message());
  }
  if (absl::Status s = check_with(api, api.cuDeviceGetCount(&api.device_count), "cuDeviceGetCount");
      !s.ok()) {
    return absl::FailedPreconditionError(s.message());
  }
  if (api.device_count <= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA device (cuDeviceGetCount: ", api.device_count, ")"));
  }
  return absl::OkStatus();
}

// Never destroyed: streams and pools of other threads may still call the driver at exit.
const LoadedDriver& loaded() {
  static const LoadedDriver* const driver = [] {
    auto* d = new LoadedDriver();
    d->status = load(d->api);
    return d;
  }();
  return *driver;
}

}  // namespace

absl::StatusOr<const DriverApi*> driver() {
  const LoadedDriver& d = loaded();
  if (!d.status.ok()) return d.status;
  return &d.api;
}

absl::Status check(CUresult result, std::string_view what) {
  // The names come from the driver when it loaded (it produced `result`).
  return check_with(loaded().api, result, what);
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
