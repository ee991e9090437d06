// runtime::cuda::load_libraries (relax/runtime/cuda_library.h): every library table of the
// cuda target's library functions, loaded up front.
#include "relax/runtime/cuda_library.h"

#if defined(RELAX_WITH_CUDA)

#include "cublas_api.h"
#include "cudnn_api.h"

namespace relax::runtime::cuda {

absl::Status load_libraries() {
  if (absl::StatusOr<const CublasLtApi*> lt = cublaslt(); !lt.ok()) return lt.status();
  if (absl::StatusOr<const CublasApi*> blas = cublas(); !blas.ok()) return blas.status();
  if (absl::StatusOr<const CudnnApi*> dnn = cudnn(); !dnn.ok()) return dnn.status();
  return absl::OkStatus();
}

}  // namespace relax::runtime::cuda

#else  // !RELAX_WITH_CUDA

namespace relax::runtime::cuda {

absl::Status load_libraries() {
  return absl::FailedPreconditionError("cuBLAS and cuDNN: this runtime was built without CUDA");
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
