// The CUDA driver's entry points, loaded from libcuda.so.1 with dlopen (never linked).
//
// RELAX_CUDA_DRIVER_FUNCTIONS is the one list of the driver functions the runtime calls; it
// declares DriverApi's members and drives the dlsym of each (cuda_driver.cc), so a new call is
// one row here. Each member's type is decltype(&::cuXxx) of the toolkit's cuda.h, so a call
// through it is type-checked like a linked call.
//
// cuda.h #defines many names to their versioned symbols (cuMemAlloc -> cuMemAlloc_v2,
// cuMemcpyHtoDAsync -> cuMemcpyHtoDAsync_v2): the rows name the plain function, the macro
// turns the member into the versioned name everywhere (so `api.cuMemAlloc(...)` reads as
// usual), and the loader looks up the expanded name, which is the symbol the library exports
// for the ABI these headers describe.
#pragma once

#if defined(RELAX_WITH_CUDA)

#include <cuda.h>

// One row per driver entry point: X(name).
#define RELAX_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                             \
  X(cuDriverGetVersion)                 \
  X(cuGetErrorName)                     \
  X(cuGetErrorString)                   \
  X(cuDeviceGetCount)                   \
  X(cuDeviceGet)                        \
  X(cuDeviceGetName)                    \
  X(cuDeviceGetAttribute)               \
  X(cuDeviceTotalMem)                   \
  X(cuDevicePrimaryCtxRetain)           \
  X(cuCtxSetCurrent)                    \
  X(cuStreamCreate)                     \
  X(cuStreamDestroy)                    \
  X(cuStreamSynchronize)                \
  X(cuMemAlloc)                         \
  X(cuMemFree)                          \
  X(cuMemsetD8Async)                    \
  X(cuMemcpyHtoDAsync)                  \
  X(cuMemcpyDtoHAsync)                  \
  X(cuMemcpyDtoDAsync)                  \
  X(cuMemcpyPeerAsync)                  \
  X(cuModuleLoadDataEx)                 \
  X(cuModuleUnload)                     \
  X(cuModuleGetFunction)                \
  X(cuFuncSetAttribute)                 \
  X(cuLaunchKernel)

namespace relax::runtime::cuda {

/// One function pointer per row of RELAX_CUDA_DRIVER_FUNCTIONS, all non-null once loaded.
struct DriverApi {
#define RELAX_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  RELAX_CUDA_DRIVER_FUNCTIONS(RELAX_CUDA_DRIVER_MEMBER)
#undef RELAX_CUDA_DRIVER_MEMBER
  /// cuDeviceGetCount's answer after cuInit.
  int device_count = 0;
  /// cuDriverGetVersion's (12080 for CUDA 12.8).
  int version = 0;
};

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
