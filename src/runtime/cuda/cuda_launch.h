// Runtime-private: the kernel ABI's cuda_launch (kernel_abi.h, "CUDA") and the cache of the
// device images it loads.
//
// An image is loaded into a device's context on its first launch there and kept, keyed by
// (device, image address): the ABI promises the address stays valid while its library is
// loaded. A library that is unloaded takes its images with it, and another library may later
// be mapped at the same address, so KernelLibrary calls forget_images_of_object() before
// dlclose.
#pragma once

#include <cstdint>

namespace relax::runtime::cuda {

#if defined(RELAX_WITH_CUDA)
/// RelaxRuntimeApi::cuda_launch: launches `name` of `image` on the calling thread's current
/// device (cuda_context.h's current_device()) and its stream (stream_for). Returns 0, or 1
/// after writing a message of at most `error_capacity` bytes into `error`. Never throws.
int32_t launch_kernel(const void* image, uint64_t image_size, const char* name,
                      const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                      void** params, char* error, int32_t error_capacity);
#endif

/// Unloads, from every device, the images loaded from inside the shared object (or
/// executable) that contains `address`. Does nothing when no image was loaded, and always
/// in a runtime built without CUDA.
void forget_images_of_object(const void* address);

}  // namespace relax::runtime::cuda
