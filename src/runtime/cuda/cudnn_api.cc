// Loading cuDNN, and the per-thread handles (cudnn_api.h).
#if defined(RELAX_WITH_CUDA)

#include "cudnn_api.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "cuda_library.h"

namespace relax::runtime::cuda {
namespace {

constexpr char kCudnnLibrary[] = "libcudnn.so.9";

#define RELAX_CUDNN_RESOLVE(name) resolve(table.name, #name);

absl::StatusOr<CudnnApi> load_cudnn() {
  return load_library_table<CudnnApi>(kCudnnLibrary, [](CudnnApi& table, auto&& resolve) {
    RELAX_CUDNN_FUNCTIONS(RELAX_CUDNN_RESOLVE)
  });
}

#undef RELAX_CUDNN_RESOLVE

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
