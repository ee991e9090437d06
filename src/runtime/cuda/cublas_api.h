// The entry points of cuBLASLt (libcublasLt.so.13) and cuBLAS (libcublas.so.13) that the
// library functions call, loaded with dlopen on first use (cuda_library.h): one row of an
// X-macro per entry point, the member's type taken from the toolkit's header with decltype.
// Handles are per thread and device (a cuBLAS handle is not to be shared between threads
// that set different streams); they are created in the device's primary context, which
// stream_for makes current, and kept for the life of the thread (never destroyed: the
// driver may be shut down before thread-exit destructors run).
#pragma once

#if defined(RELAX_WITH_CUDA)

#include <cublasLt.h>
#include <cublas_api.h>

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace relax::runtime::cuda {

#define RELAX_CUBLASLT_FUNCTIONS(X)      \
  X(cublasLtCreate)                      \
  X(cublasLtGetStatusString)             \
  X(cublasLtMatmulDescCreate)            \
  X(cublasLtMatmulDescDestroy)           \
  X(cublasLtMatmulDescSetAttribute)      \
  X(cublasLtMatrixLayoutCreate)          \
  X(cublasLtMatrixLayoutDestroy)         \
  X(cublasLtMatrixLayoutSetAttribute)    \
  X(cublasLtMatmulPreferenceCreate)      \
  X(cublasLtMatmulPreferenceDestroy)     \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)      \
  X(cublasLtMatmul)

#define RELAX_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate_v2)              \
  X(cublasGetStatusString)        \
  X(cublasSetStream_v2)           \
  X(cublasSetWorkspace_v2)        \
  X(cublasSetMathMode)            \
  X(cublasGemmStridedBatchedEx_64)

#define RELAX_CUDA_LIBRARY_MEMBER(name) decltype(&::name) name = nullptr;

/// cuBLASLt's entry points.
struct CublasLtApi {
  RELAX_CUBLASLT_FUNCTIONS(RELAX_CUDA_LIBRARY_MEMBER)
};
/// cuBLAS's entry points.
struct CublasApi {
  RELAX_CUBLAS_FUNCTIONS(RELAX_CUDA_LIBRARY_MEMBER)
};

/// The loaded cuBLASLt (libcublasLt.so.13), or the FailedPrecondition naming what is missing.
absl::StatusOr<const CublasLtApi*> cublaslt();
/// The loaded cuBLAS (libcublas.so.13), or the FailedPrecondition naming what is missing.
absl::StatusOr<const CublasApi*> cublas();

/// The calling thread's cuBLASLt handle for `device` (created on first use; the device's
/// context must be current: call stream_for first).
absl::StatusOr<cublasLtHandle_t> cublaslt_handle(int device);
/// The calling thread's cuBLAS handle for `device`, as cublaslt_handle.
absl::StatusOr<cublasHandle_t> cublas_handle(int device);

/// OK for CUBLAS_STATUS_SUCCESS; otherwise an Internal error naming `what` and the status.
absl::Status check_cublas(cublasStatus_t status, std::string_view what);

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
