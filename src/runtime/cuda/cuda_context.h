// Runtime-private access to the CUDA driver (src/runtime/cuda/), for the runtime's files that
// talk to the device: tensors, kernel launches, library calls (cuBLAS, cuDNN), graph capture.
//
//   absl::StatusOr<const DriverApi*> api = driver();               // cuda_driver.h
//   absl::StatusOr<CUstream> stream = stream_for(device);          // context made current
//   if (absl::Status s = check((*api)->cuStreamSynchronize(*stream), "..."); !s.ok()) ...
//
// Only compiled with RELAX_WITH_CUDA (the toolkit's cuda.h gives the types; the functions come
// from libcuda.so.1, opened with dlopen on first use). Every entry point of the driver that the
// runtime calls is one row of RELAX_CUDA_DRIVER_FUNCTIONS in cuda_driver.h, so a new call is
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

/// OK when `device` is a device the driver sees; InvalidArgument naming it and the count
/// otherwise ("cuda:3 does not exist: the driver sees 1 device"), or driver()'s error.
absl::Status check_device(int device);

/// Retains the primary context of `device` (on first use; it stays retained for the process)
/// and makes it current on the calling thread.
absl::StatusOr<CUcontext> context_for(int device);

/// The calling thread's current device: the one generated CUDA kernels launch on (a kernel's
/// launcher does not name a device; the caller of kernels, the VM, sets it). 0 until set.
int current_device();
/// Sets the calling thread's current device (not checked here: a launch on a device that does
/// not exist fails with check_device's message).
void set_current_device(int device);

/// Makes the primary context of `device` current on the calling thread (retaining it on first
/// use) and returns the calling thread's stream on that device (created on first use, a
/// non-blocking stream; the same one for every later call from this thread). Library calls and
/// kernel launches of a call run on it, in order.
absl::StatusOr<CUstream> stream_for(int device);

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
