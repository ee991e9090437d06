// Private parts of the CUDA code generator (src/codegen/cuda/): what the CUDA
// mode of cpp_codegen::KernelEmitter writes besides the host launchers, and
// the text every device source starts with.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp/cpp_codegen_impl.h"

namespace relax::cpp_codegen {

/// The device side of a module being generated.
struct CudaSink {
  /// The device functions, in order (after the prelude).
  std::string device_functions;
  /// Their names, in order.
  std::vector<std::string> kernel_names;
  /// Unique device function names across the module.
  NameTable names;
};

/// The helpers of every device source (cuda_prelude.cc): fixed-width integer
/// types, the IR's integer helpers, relax_<intrinsic> overloads over float and
/// double, float16/bfloat16 loads, stores and roundings, and the block-wide
/// reduction relax_block_reduce (warp shuffles, then shared memory).
const std::string& cuda_device_prelude();

/// Threads per block of the mappings (cuda_launch_emit.cc).
inline constexpr int kCudaThreads = 256;
/// Tile sizes of the shared-memory matmul: rows and columns of a block's
/// output tile, steps of k per tile load.
inline constexpr int kMatmulTile = 64;
inline constexpr int kMatmulDepth = 16;
/// The most rows the matvec kernel takes (a constant row count, or a symbolic
/// one checked by the launcher, which takes the tiled kernel beyond).
inline constexpr int64_t kMatvecMaxRows = 8;

/// How the matvec kernel of a nest reads memory (cuda_matmul_emit.cc): with
/// four consecutive elements per thread along the weights' contiguous
/// dimension (vj for W[vk, vj], vk for W[vj, vk]), the loads along it as
/// vector loads, when some load qualifies; otherwise one element at a time.
struct MatvecPlan {
  /// The loads read four at a time: of a global compact buffer, the last
  /// index the contiguous variable itself, no other index mentioning it.
  std::vector<SymExpr> loads;
  /// Whether the kernel reads four elements per thread (some load qualifies).
  bool vector() const { return !loads.empty(); }
  /// Output columns per block (the launch's grid divides the columns by it).
  int block_columns = 32;
};
MatvecPlan plan_matvec(const transform::schedule::MatmulNest& nest);

}  // namespace relax::cpp_codegen
