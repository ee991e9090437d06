// Contexts, streams and the current device (cuda_context.h).
//
// Each device's primary context is retained once, on first use, and kept for the process
// (the driver shares it with every other user of the runtime API in the process, so
// cuBLAS and cuDNN see the same memory). Every call makes the context current again
// instead of trusting what the thread had: other code in the process may switch contexts.
//
// Streams are per (thread, device): work of concurrent calls from different threads does
// not serialise on one queue, and the work of one call stays in order. They are
// non-blocking (they do not synchronise with the legacy default stream) and are destroyed
// when their thread ends.
#if defined(RELAX_WITH_CUDA)

#include "cuda_context.h"

#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cuda_driver.h"

namespace relax::runtime::cuda {
namespace {

struct PrimaryContexts {
  std::mutex mu;
  std::vector<CUcontext> by_device;  // null until retained
};

// Never destroyed: contexts stay retained for the process.
PrimaryContexts& primary_contexts() {
  static auto* const contexts = new PrimaryContexts();
  return *contexts;
}

/// The calling thread's streams, by device; destroyed with the thread.
struct ThreadStreams {
  std::vector<CUstream> by_device;
  ThreadStreams() = default;
  ThreadStreams(const ThreadStreams&) = delete;
  ThreadStreams& operator=(const ThreadStreams&) = delete;
  ~ThreadStreams() {
    if (by_device.empty()) return;  // this thread never used a device
    absl::StatusOr<const DriverApi*> api = driver();
    if (!api.ok()) return;
    // At process exit the driver may already be shutting down: nothing to report to.
    for (CUstream s : by_device) {
      if (s != nullptr) (void)(*api)->cuStreamDestroy(s);
    }
  }
};

thread_local ThreadStreams t_streams;
thread_local int t_current_device = 0;

}  // namespace

absl::Status check_device(int device) {
  absl::StatusOr<const DriverApi*> api = driver();
  if (!api.ok()) return api.status();
  const int count = (*api)->device_count;
  if (device < 0 || device >= count) {
    return absl::InvalidArgumentError(absl::StrCat("cuda:", device,
                                                   " does not exist: the driver sees ", count,
                                                   count == 1 ? " device" : " devices"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CUcontext> context_for(int device) {
  if (absl::Status s = check_device(device); !s.ok()) return s;
  const DriverApi& api = **driver();
  CUcontext context = nullptr;
  {
    PrimaryContexts& contexts = primary_contexts();
    std::lock_guard<std::mutex> lock(contexts.mu);
    if (contexts.by_device.size() < static_cast<size_t>(api.device_count)) {
      contexts.by_device.resize(static_cast<size_t>(api.device_count), nullptr);
    }
    CUcontext& slot = contexts.by_device[static_cast<size_t>(device)];
    if (slot == nullptr) {
      CUdevice handle = 0;
      const std::string where = absl::StrCat(" of cuda:", device);
      if (absl::Status s = check(api.cuDeviceGet(&handle, device), "cuDeviceGet" + where);
          !s.ok()) {
        return s;
      }
      if (absl::Status s = check(api.cuDevicePrimaryCtxRetain(&slot, handle),
                                 "cuDevicePrimaryCtxRetain" + where);
          !s.ok()) {
        slot = nullptr;
        return s;
      }
    }
    context = slot;
  }
  if (absl::Status s =
          check(api.cuCtxSetCurrent(context), absl::StrCat("cuCtxSetCurrent of cuda:", device));
      !s.ok()) {
    return s;
  }
  return context;
}

absl::StatusOr<CUstream> stream_for(int device) {
  if (absl::StatusOr<CUcontext> context = context_for(device); !context.ok()) {
    return context.status();
  }
  std::vector<CUstream>& streams = t_streams.by_device;
  if (streams.size() <= static_cast<size_t>(device)) {
    streams.resize(static_cast<size_t>(device) + 1, nullptr);
  }
  CUstream& stream = streams[static_cast<size_t>(device)];
  if (stream == nullptr) {
    if (absl::Status s = check((*driver())->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                               absl::StrCat("cuStreamCreate on cuda:", device));
        !s.ok()) {
      stream = nullptr;
      return s;
    }
  }
  return stream;
}

int current_device() { return t_current_device; }
void set_current_device(int device) { t_current_device = device; }

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
