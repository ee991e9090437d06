// relax::runtime::cuda: NVIDIA GPUs in the runtime.
//
//   if (absl::Status s = runtime::cuda::check_available(); !s.ok()) { ... s.message() ... }
//   absl::StatusOr<Tensor> x = Tensor::empty({n, 4096}, DataType::float32(), Device::cuda());
//   absl::StatusOr<Tensor> host = x->to(Device::cpu());          // a device-to-host copy
//
// Nothing here links the CUDA libraries: the driver (libcuda.so.1) is opened with dlopen the
// first time anything needs it, and cuBLAS(Lt) and cuDNN the first time a library call needs
// them. A process without a GPU, or without the driver, runs CPU modules as before; what needs
// the device fails with a FailedPrecondition naming what is missing ("the CUDA driver
// libcuda.so.1 cannot be loaded: ...", "no CUDA device (cuDeviceGetCount: 0)"). A runtime
// built without CUDA (RELAX_WITH_CUDA off) answers every call with a FailedPrecondition saying
// so.
//
// Device memory comes from one pooled allocator per device (the host pool's rules: size
// classes, a bound on cached bytes, statistics), so that a model called again and again
// allocates from the driver only on its first call. Work runs on one stream per device and
// thread of the caller; copies between host and device are synchronous with that stream.
// A pool reuses a freed block at once, for any thread: work queued on a stream must be
// waited for (synchronize) before another thread drops a tensor that work still uses.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/allocator.h"

namespace relax::runtime::cuda {

/// Whether this runtime was built with CUDA support (RELAX_WITH_CUDA).
bool built_with_cuda();

/// OK when the driver loads and reports at least one device; otherwise a FailedPrecondition
/// naming what is missing. Cheap after the first call (the answer is kept).
absl::Status check_available();

/// check_available().ok().
inline bool available() { return check_available().ok(); }

/// What a device is, from the driver.
struct DeviceInfo {
  std::string name;             ///< "NVIDIA H200"
  int compute_major = 0;        ///< 9 for sm_90
  int compute_minor = 0;
  int64_t total_memory = 0;     ///< bytes
  int multiprocessors = 0;
  /// The memory bus's peak rate in bytes per second (clock x width x 2), 0 when unknown.
  double peak_memory_bandwidth = 0;
  /// "sm_90": the architecture to compile for.
  std::string arch() const { return "sm_" + std::to_string(compute_major * 10 + compute_minor); }
};

/// The devices the driver sees (0 when CUDA is not available).
int device_count();
/// Device `index`; an error when CUDA is not available or the index is out of range.
absl::StatusOr<DeviceInfo> device_info(int index);

/// The pooled allocator of device `index` (created on first use; never destroyed): blocks of
/// cuMemAlloc (device pointers, 256-byte aligned at most), at most half the device's memory
/// cached. An error when CUDA is not available or the index is out of range.
absl::StatusOr<PooledAllocator*> device_allocator(int index);

/// Waits for the work queued on device `index` by the calling thread.
absl::Status synchronize(int index);

}  // namespace relax::runtime::cuda
