// The entry points of cuDNN 9 (libcudnn.so.9, whose shim forwards the legacy API to its
// sub-libraries) that the conv2d function calls, loaded with dlopen on first use
// (cuda_library.h): one row of an X-macro per entry point, typed with decltype from the
// toolkit's header. Handles are per thread and device, as cuBLAS's (cublas_api.h).
#pragma once

#if defined(RELAX_WITH_CUDA)

#include <cudnn.h>

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace relax::runtime::cuda {

#define RELAX_CUDNN_FUNCTIONS(X)                   \
  X(cudnnCreate)                                   \
  X(cudnnGetErrorString)                           \
  X(cudnnSetStream)                                \
  X(cudnnCreateTensorDescriptor)                   \
  X(cudnnDestroyTensorDescriptor)                  \
  X(cudnnSetTensor4dDescriptor)                    \
  X(cudnnCreateFilterDescriptor)                   \
  X(cudnnDestroyFilterDescriptor)                  \
  X(cudnnSetFilter4dDescriptor)                    \
  X(cudnnCreateConvolutionDescriptor)              \
  X(cudnnDestroyConvolutionDescriptor)             \
  X(cudnnSetConvolution2dDescriptor)               \
  X(cudnnSetConvolutionGroupCount)                 \
  X(cudnnSetConvolutionMathType)                   \
  X(cudnnGetConvolution2dForwardOutputDim)         \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount)   \
  X(cudnnGetConvolutionForwardAlgorithm_v7)        \
  X(cudnnGetConvolutionForwardWorkspaceSize)       \
  X(cudnnConvolutionForward)                       \
  X(cudnnAddTensor)                                \
  X(cudnnCreateActivationDescriptor)               \
  X(cudnnDestroyActivationDescriptor)              \
  X(cudnnSetActivationDescriptor)                  \
  X(cudnnActivationForward)

#define RELAX_CUDNN_MEMBER(name) decltype(&::name) name = nullptr;

/// cuDNN's entry points.
struct CudnnApi {
  RELAX_CUDNN_FUNCTIONS(RELAX_CUDNN_MEMBER)
};

#undef RELAX_CUDNN_MEMBER

/// The loaded cuDNN (libcudnn.so.9), or the FailedPrecondition naming what is missing.
absl::StatusOr<const CudnnApi*> cudnn();

/// The calling thread's cuDNN handle for `device` (created on first use; the device's
/// context must be current: call stream_for first).
absl::StatusOr<cudnnHandle_t> cudnn_handle(int device);

/// OK for CUDNN_STATUS_SUCCESS; otherwise an Internal error naming `what` and cuDNN's text.
absl::Status check_cudnn(cudnnStatus_t status, std::string_view what);

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
