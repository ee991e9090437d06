// Private to the runtime: what the VM needs to run a module on a device (Executable::device).
//
// The VM itself runs on the host for every device: it interprets bytecode, matches shapes and
// calls kernels, library functions and builtins. On a device other than the CPU, everything
// that touches tensor memory goes through here instead of the host's memset and loads: the
// check that the device can be used at all (when a Module is created), its allocator (for
// ExecutionContext storages), the upload of constants, zeroing a range of a storage, copies
// between the host and the device (the builtins and branch conditions that read values), and
// making the device current on the calling thread before a call's kernels run. Only this file
// and replay_graph.cc talk to the CUDA runtime code (src/runtime/cuda/); on the CPU every
// function here is the plain host operation.
#pragma once

#include <cstdint>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/allocator.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"
#include "relax/support/device.h"

namespace relax::runtime::vm_device {

/// OK when modules can run on `device`: always for the CPU; for a CUDA device, when the driver
/// loads and reports a device of that index (else the driver's FailedPrecondition, or a
/// FailedPrecondition naming the index and the number of devices).
absl::Status check_usable(Device device);

/// Where storages of `device` come from: default_allocator() for the CPU, the device's pooled
/// allocator for a CUDA device.
absl::StatusOr<Allocator*> allocator_for(Device device);

/// `value` with every tensor in it (through tuples) copied to `device`; tensors there already,
/// and values that are not tensors, are kept as they are.
absl::StatusOr<Value> copy_to(const Value& value, Device device);

/// A host copy of `tensor` (compact), or `tensor` itself when it is a host tensor.
absl::StatusOr<Tensor> to_host(const Tensor& tensor);

/// Sets `bytes` bytes at `data`, memory of `device`, to zero: on a CUDA device, queued on the
/// calling thread's stream of that device (so it is ordered with the call's kernels, and a CUDA
/// graph captures it).
absl::Status zero(void* data, int64_t bytes, Device device);

/// Makes `device` current on the calling thread before a call runs there (a CUDA device: its
/// primary context, and the thread's stream, on which the call's kernels and library calls
/// run). Nothing for the CPU.
absl::Status activate(Device device);

/// Orders the calls of one ExecutionContext on a device across threads. A call's kernels run
/// asynchronously on its thread's stream, so when the next call on the context comes from
/// another thread (another stream), reusing the context's storages at once could overwrite
/// memory the previous call's kernels still use: before_call makes the new thread's stream wait
/// for the end of the previous call's work (a device-side wait on an event recorded by
/// after_call; the host does not block). Nothing on the CPU.
class DeviceFence {
 public:
  DeviceFence() = default;
  ~DeviceFence();
  DeviceFence(const DeviceFence&) = delete;
  DeviceFence& operator=(const DeviceFence&) = delete;

  /// Before a call on `device` from the calling thread.
  absl::Status before_call(Device device);
  /// After the call: marks the end of the work it queued on the calling thread's stream.
  void after_call(Device device);

 private:
  void* event_ = nullptr;       // a CUevent, created on first use
  bool recorded_ = false;       // event_ marks the end of the previous call's work
  absl::Status record_error_;   // why the previous call's end could not be recorded
  std::thread::id last_thread_;
};

}  // namespace relax::runtime::vm_device
