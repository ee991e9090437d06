// Runtime-private byte copies and fills on CUDA devices, for Tensor (tensor.cc).
//
// Declared in every build: without RELAX_WITH_CUDA they answer the FailedPrecondition
// "relax was built without CUDA" (cuda_unavailable.cc), so tensor.cc needs no #if.
//
// A copy that involves the host, or two devices, is complete when it returns. A copy within
// one device, and a fill, is queued on the calling thread's stream of that device
// (stream_for): later work of the same thread on that device sees the result; the host sees
// it after synchronize() or a copy to the host.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "relax/support/device.h"

namespace relax::runtime::cuda {

/// Copies `bytes` bytes from `src` (memory of `src_device`) to `dst` (of `dst_device`); each
/// device is the host or a CUDA device, not both the host. Errors name the call and devices.
absl::Status copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                        size_t bytes);

/// Sets `bytes` bytes at `data`, memory of CUDA device `device`, to zero.
absl::Status zero_bytes(void* data, int device, size_t bytes);

}  // namespace relax::runtime::cuda
