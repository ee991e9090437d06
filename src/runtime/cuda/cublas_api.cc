// Loading cuBLASLt and cuBLAS, and the per-thread handles (cublas_api.h).
#if defined(RELAX_WITH_CUDA)

#include "cublas_api.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "cuda_library.h"

namespace relax::runtime::cuda {
namespace {

constexpr char kCublasLtLibrary[] = "libcublasLt.so.13";
constexpr char kCublasLibrary[] = "libcublas.so.13";

#define RELAX_CUDA_LIBRARY_RESOLVE(name) resolve(table.name, #name);

const absl::StatusOr<CublasLtApi>& lt_api() {
  static const absl::StatusOr<CublasLtApi>* api = new absl::StatusOr<CublasLtApi>(
      load_library_table<CublasLtApi>(kCublasLtLibrary, [](CublasLtApi& table, auto&& resolve) {
        RELAX_CUBLASLT_FUNCTIONS(RELAX_CUDA_LIBRARY_RESOLVE)
      }));
  return *api;
}

const absl::StatusOr<CublasApi>& blas_api() {
  static const absl::StatusOr<CublasApi>* api = new absl::StatusOr<CublasApi>(
      load_library_table<CublasApi>(kCublasLibrary, [](CublasApi& table, auto&& resolve) {
        RELAX_CUBLAS_FUNCTIONS(RELAX_CUDA_LIBRARY_RESOLVE)
      }));
  return *api;
}

#undef RELAX_CUDA_LIBRARY_RESOLVE

}  // namespace

absl::StatusOr<const CublasLtApi*> cublaslt() {
  const absl::StatusOr<CublasLtApi>& api = lt_api();
  if (!api.ok()) return api.status();
  return &*api;
}

absl::StatusOr<const CublasApi*> cublas() {
  const absl::StatusOr<CublasApi>& api = blas_api();
  if (!api.ok()) return api.status();
  return &*api;
}

absl::Status check_cublas(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const char* text = nullptr;
  if (absl::StatusOr<const CublasLtApi*> lt = cublaslt(); lt.ok()) text = (*lt)->cublasLtGetStatusString(status);
  return absl::InternalError(absl::StrCat(std::string(what), ": cuBLAS status ", static_cast<int>(status),
                                          text != nullptr ? absl::StrCat(" (", text, ")") : std::string()));
}

absl::StatusOr<cublasLtHandle_t> cublaslt_handle(int device) {
  thread_local std::map<int, cublasLtHandle_t> handles;
  if (auto it = handles.find(device); it != handles.end()) return it->second;
  absl::StatusOr<const CublasLtApi*> api = cublaslt();
  if (!api.ok()) return api.status();
  cublasLtHandle_t handle = nullptr;
  if (absl::Status s = check_cublas((*api)->cublasLtCreate(&handle), absl::StrCat("cublasLtCreate on cuda:", device));
      !s.ok()) {
    return s;
  }
  handles.emplace(device, handle);
  return handle;
}

absl::StatusOr<cublasHandle_t> cublas_handle(int device) {
  thread_local std::map<int, cublasHandle_t> handles;
  if (auto it = handles.find(device); it != handles.end()) return it->second;
  absl::StatusOr<const CublasApi*> api = cublas();
  if (!api.ok()) return api.status();
  cublasHandle_t handle = nullptr;
  if (absl::Status s = check_cublas((*api)->cublasCreate_v2(&handle), absl::StrCat("cublasCreate on cuda:", device));
      !s.ok()) {
    return s;
  }
  handles.emplace(device, handle);
  return handle;
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
