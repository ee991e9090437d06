// The device pools of relax/runtime/cuda.h: a PooledAllocator per device over a BlockSource of
// cuMemAlloc / cuMemFree, so device memory has the host pool's size classes, bounds and
// statistics, and a model called again and again allocates from the driver (and pays
// cuMemFree's implicit device synchronisation) only on its first call.
//
// A pool caches at most half of its device's memory; when the driver runs out, the pool
// returns its cached blocks to the driver and asks once more (cuMemAlloc's
// CUDA_ERROR_OUT_OF_MEMORY is ResourceExhausted). Blocks are reused without stream
// ordering: a block is free for any thread as soon as its tensor dies, so work still queued
// on a stream must be waited for (synchronize) before a tensor it uses is dropped by a
// thread other than the one that queued it.
#if defined(RELAX_WITH_CUDA)

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cuda_context.h"
#include "cuda_driver.h"
#include "relax/runtime/cuda.h"

namespace relax::runtime::cuda {
namespace {

/// cuMemAlloc's documented alignment.
constexpr size_t kDriverAlignment = 256;

class DeviceBlockSource final : public BlockSource {
 public:
  explicit DeviceBlockSource(int device) : device_(device) {}

  absl::StatusOr<void*> allocate(size_t bytes, size_t alignment) override {
    if (alignment > kDriverAlignment) {
      return absl::InvalidArgumentError(absl::StrCat("cuda:", device_, " blocks are aligned to ",
                                                     kDriverAlignment, " bytes, not ", alignment));
    }
    if (absl::StatusOr<CUcontext> context = context_for(device_); !context.ok()) {
      return context.status();
    }
    CUdeviceptr block = 0;
    if (absl::Status s = check((*driver())->cuMemAlloc(&block, bytes),
                               absl::StrCat("cuMemAlloc of ", bytes, " bytes on cuda:", device_));
        !s.ok()) {
      return s;
    }
    return reinterpret_cast<void*>(static_cast<uintptr_t>(block));
  }

  void free(void* block, size_t /*bytes*/) override {
    // A failure here (a driver shutting down at exit) has no caller to go to.
    if (!context_for(device_).ok()) return;
    (void)(*driver())->cuMemFree(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(block)));
  }

  std::string name() const override { return absl::StrCat("cuda:", device_); }

 private:
  const int device_;
};

struct DevicePools {
  std::mutex mu;
  std::vector<PooledAllocator*> by_device;  // null until first use; never destroyed
};

DevicePools& device_pools() {
  static auto* const pools = new DevicePools();
  return *pools;
}

}  // namespace

absl::StatusOr<PooledAllocator*> device_allocator(int index) {
  if (absl::Status s = check_device(index); !s.ok()) return s;
  DevicePools& pools = device_pools();
  std::lock_guard<std::mutex> lock(pools.mu);
  if (pools.by_device.size() <= static_cast<size_t>(index)) {
    pools.by_device.resize(static_cast<size_t>(index) + 1, nullptr);
  }
  PooledAllocator*& pool = pools.by_device[static_cast<size_t>(index)];
  if (pool == nullptr) {
    absl::StatusOr<DeviceInfo> info = device_info(index);
    if (!info.ok()) return info.status();
    PooledAllocatorOptions options;
    options.max_cached_bytes = static_cast<size_t>(info->total_memory / 2);
    // Leaked on purpose: tensors in static storage may free their blocks at exit.
    pool = new PooledAllocator(options, std::make_shared<DeviceBlockSource>(index));
  }
  return pool;
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
