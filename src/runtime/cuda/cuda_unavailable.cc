// relax/runtime/cuda.h (and the runtime-private cuda_memory.h, cuda_launch.h) in a runtime
// built without CUDA (RELAX_WITH_CUDA off): every call that needs a device answers the same
// FailedPrecondition, so callers need no #if of their own.
#if !defined(RELAX_WITH_CUDA)

#include "cuda_launch.h"
#include "cuda_memory.h"
#include "relax/runtime/cuda.h"

namespace relax::runtime::cuda {
namespace {

absl::Status built_without_cuda() {
  return absl::FailedPreconditionError("relax was built without CUDA");
}

}  // namespace

bool built_with_cuda() { return false; }
absl::Status check_available() { return built_without_cuda(); }
int device_count() { return 0; }
absl::StatusOr<DeviceInfo> device_info(int /*index*/) { return built_without_cuda(); }
absl::StatusOr<PooledAllocator*> device_allocator(int /*index*/) { return built_without_cuda(); }
absl::Status synchronize(int /*index*/) { return built_without_cuda(); }

absl::Status copy_bytes(void* /*dst*/, Device /*dst_device*/, const void* /*src*/,
                        Device /*src_device*/, size_t /*bytes*/) {
  return built_without_cuda();
}
absl::Status zero_bytes(void* /*data*/, int /*device*/, size_t /*bytes*/) {
  return built_without_cuda();
}

void forget_images_of_object(const void* /*address*/) {}

}  // namespace relax::runtime::cuda

#endif  // !RELAX_WITH_CUDA
