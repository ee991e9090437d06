// Loading cuDNN, and the per-thread handles (cudnn_api.h).
#if defined(RELAX_WITH_CUDA)

#include "cudnn_api.h"

#include <map>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "cuda_library.h"

namespace relax::runtime::cuda {
namespace {

constexpr char kCudnnLibrary[] = "libcudnn.so.9";

absl::StatusOr<CudnnApi> load_cudnn() {
  absl::StatusOr<void*> handle = open_library(kCudnnLibrary);
  if (!handle.ok()) return handle.status();
  CudnnApi api;
  absl::Status status;
  auto resolve = [&](auto& member, const char* symbol) {
    if (!status.ok()) return;
    absl::StatusOr<void*> fn = find_symbol(*handle, kCudnnLibrary, symbol);
    if (!fn.ok()) {
      status = fn.status();
      return;
    }
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(*fn);
  };
#define RELAX_CUDNN_RESOLVE(name) resolve(api.name, #name);
  RELAX_CUDNN_FUNCTIONS(RELAX_CUDNN_RESOLVE)
#undef RELAX_CUDNN_RESOLVE
  if (!status.ok()) return status;
  return api;
}

}  // namespace

absl::StatusOr<const CudnnApi*> cudnn() {
  static const absl::StatusOr<CudnnApi>* api = new absl::StatusOr<CudnnApi>(load_cudnn());
  if (!api->ok()) return api->status();
  return &**api;
}

absl::Status check_cudnn(cudnnStatus_t status, std::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const char* text = nullptr;
  if (absl::StatusOr<const CudnnApi*> api = cudnn(); api.ok()) text = (*api)->cudnnGetErrorString(status);
  return absl::InternalError(absl::StrCat(std::string(what), ": cuDNN status ", static_cast<int>(status),
                                          text != nullptr ? absl::StrCat(" (", text, ")") : std::string()));
}

absl::StatusOr<cudnnHandle_t> cudnn_handle(int device) {
  thread_local std::map<int, cudnnHandle_t> handles;
  if (auto it = handles.find(device); it != handles.end()) return it->second;
  absl::StatusOr<const CudnnApi*> api = cudnn();
  if (!api.ok()) return api.status();
  cudnnHandle_t handle = nullptr;
  if (absl::Status s = check_cudnn((*api)->cudnnCreate(&handle), absl::StrCat("cudnnCreate on cuda:", device)); !s.ok()) {
    return s;
  }
  handles.emplace(device, handle);
  return handle;
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
