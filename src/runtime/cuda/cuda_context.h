// Runtime-private access to the CUDA driver (src/runtime/cuda/), for the runtime's files that
// talk to the device: tensors, kernel launches, library calls (cuBLAS, cuDNN), graph capture.
//
// Only compiled with RELAX_WITH_CUDA (the toolkit's cuda.h gives the types; the functions come
// from libcuda.so.1, opened with dlopen on first use). Every entry point of the driver that the
// runtime calls is one row of RELAX_CUDA_DRIVER_FUNCTIONS in cuda_driver.cc, so a new call is
// one line there.
#pragma once

#if defined(RELAX_WITH_CUDA)

#include <cuda.h>

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace relax::runtime::cuda {

struct DriverApi;  // cuda_driver.h: one function pointer per driver entry point used

/// The loaded driver with cuInit done, or the FailedPrecondition of check_available().
absl::StatusOr<const DriverApi*> driver();

/// OK for CUDA_SUCCESS; otherwise an error naming `what` (the call and its subject, e.g.
/// "cuMemAlloc of 1048576 bytes on cuda:0") and the driver's name and text for `result`.
absl::Status check(CUresult result, std::string_view what);

/// Makes the primary context of `device` current on the calling thread (retaining it on first
/// use) and returns the calling thread's stream on that device (created on first use, a
/// non-blocking stream; the same one for every later call from this thread). Library calls and
/// kernel launches of a call run on it, in order.
absl::StatusOr<CUstream> stream_for(int device);

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
