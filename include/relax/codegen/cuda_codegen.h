// relax::generate_cuda: loop-level PrimFuncs as CUDA device code plus a host
// launcher unit, and compile_cuda_image: that device code through NVRTC.
//
//   absl::StatusOr<CudaUnit> unit = generate_cuda(module, target);          // target.kind "cuda"
//   absl::StatusOr<CompiledCudaImage> image = compile_cuda_image(unit->device_source, target);
//   compile_shared_object(unit->host_source + cuda_image_appendix(image->image_path), host_target);
//
// The device source is self-contained CUDA C (no #include: NVRTC has no
// standard headers): a prelude of helpers (fixed-width integers, the IR's
// integer helpers, float intrinsics, float16/bfloat16 conversions by bit
// operations and PTX cvt, a block-wide reduction), then one `extern "C"
// __global__` function per top-level nest of each kernel. The host source is a
// C++ unit following relax/runtime/kernel_abi.h like generate_cpp's (the ABI
// copy, relax_abi_version, relax_kernels, relax_set_runtime_api, the ISA
// record): one launcher per PrimFunc with the RelaxKernelFn signature, which
// checks and binds its arguments exactly as a CPU kernel does, then launches
// its device functions in order through the runtime's cuda_launch (failing
// with "this runtime has no CUDA support" when that is null). It refers to
// the image as `extern "C" const uint8_t relax_cuda_image_begin[],
// relax_cuda_image_end[]`, which cuda_image_appendix defines.
//
// Each top-level nest maps by its loops as schedule-gpu leaves them (the
// contract with the schedule-gpu pass, relax/transform/schedule.h): a parallel loop is a
// grid-stride loop over threads; in a row-reduction kernel, a parallel row
// loop whose rows reduce into one-element locals is one block per row (warp
// shuffles and shared memory combine the threads' partials); a matmul nest is
// a tiled shared-memory kernel (its weight expression, such as an int4
// dequantisation, inlined into the tile loads), a matvec kernel for at most 8
// rows; anything else runs on one thread (correct, slow).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/module.h"
#include "relax/support/target.h"

namespace relax {

/// The two texts of a module's CUDA kernels.
struct CudaUnit {
  std::string device_source;              ///< CUDA C for NVRTC (compile_cuda_image)
  std::string host_source;                ///< C++ for the host compiler (compile_shared_object)
  /// The device functions, in launch order per kernel (a matmul with a symbolic
  /// row count has two, the matvec and the tiled one, launched one or the other).
  std::vector<std::string> kernel_names;
};

/// The CUDA kernels of every PrimFunc of `module` (in its order, under its
/// names). `target.kind` must be "cuda"; an error names the PrimFunc and the
/// construct the generator cannot translate.
absl::StatusOr<CudaUnit> generate_cuda(const IRModule& module, const Target& target);

/// The text to append to a host_source: an assembler `.incbin` of the image
/// file between the symbols relax_cuda_image_begin and relax_cuda_image_end
/// (hidden), followed by a NUL byte (so a PTX image is a C string).
std::string cuda_image_appendix(const std::string& image_path);

/// A device image compiled by NVRTC.
struct CompiledCudaImage {
  std::string image_path;  ///< the cubin in the JIT cache directory
  bool cache_hit = false;  ///< found in the cache (NVRTC did not run)
  std::string log;         ///< NVRTC's log (warnings) when it ran
};

/// `device_source` compiled by NVRTC (libnvrtc.so.13, loaded on first use) for
/// target.cuda_arch (--gpu-architecture=<arch> -default-device --std=c++17,
/// unreferenced-variable remarks suppressed) to a cubin, cached in resolve_cache_dir(target) under a key of the source,
/// the architecture and NVRTC's version. A compile error returns NVRTC's log,
/// naming the device function the first error is in. FailedPrecondition when
/// NVRTC cannot be loaded or relax was built without CUDA.
absl::StatusOr<CompiledCudaImage> compile_cuda_image(const std::string& device_source, const Target& target);

/// `device_source` as PTX text, compiled by NVRTC with the options of
/// compile_cuda_image for the virtual architecture of target.cuda_arch
/// (sm_90 -> compute_90); not cached. For reading what the generator's code
/// became (vector loads, shuffles) without a device.
absl::StatusOr<std::string> cuda_ptx(const std::string& device_source, const Target& target);

/// NVRTC's version ("13.0"), or why it cannot be loaded.
absl::StatusOr<std::string> nvrtc_version();

}  // namespace relax
