// The library functions of the cuda target: the families "cublas." and "cudnn." of
// call_dps_library, and the grammar of their names (docs/cuda.md).
//
//   cublas.matmul[+bias][+relu|+gelu_tanh]     cuBLASLt: a[..., M, K] x b[..., K, N] (+ bias[N])
//   cublas.linear[+bias][+relu|+gelu_tanh]     cuBLASLt: x[..., K] x w[N, K]^T (+ bias[N])
//   cublas.batch_matmul                        cuBLAS strided batched GEMM, equal batch dims
//   cudnn.conv2d{strides=..;padding=..;dilation=..;groups=..}[+bias][+relu]
//                                              cuDNN: NCHW data, OIHW weight (+ bias[O])
//
// Arguments: the inputs in that order, the output, then optionally a workspace (a compact
// uint8 device tensor); every tensor is on one CUDA device and compact. When the runtime is
// built with CUDA (RELAX_WITH_CUDA), the registry resolves these names to function objects
// that load cuBLASLt, cuBLAS or cuDNN with dlopen on their first call and run on the calling
// thread's stream of the output's device. The dispatch pass declares a workspace of
// library_workspace_bytes(name) for each call, so the memory plan holds it; a function given
// none (or a smaller one) picks only algorithms that fit in what it got.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace relax::runtime::cuda {

/// The workspace the library function `name` uses when it gets it: 32 MiB (cuBLASLt's and
/// cuBLAS's recommendation for Hopper, where split-K and stream-K kernels use it; cuDNN's
/// algorithms are chosen among those that fit). InvalidArgument for a name that is not one
/// of the grammar's (the message names the place and what was expected). Needs no device.
absl::StatusOr<int64_t> library_workspace_bytes(const std::string& name);

/// Loads cuBLASLt, cuBLAS and cuDNN (as the functions' first calls do) and resolves every
/// entry point the functions call. Needs no device or driver. FailedPrecondition naming the
/// library that cannot be loaded or the entry point it lacks, or saying the runtime is
/// built without CUDA.
absl::Status load_libraries();

}  // namespace relax::runtime::cuda
