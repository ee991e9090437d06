// The default CPU schedule of a matmul-like loop nest (matmul_match.cc finds
// one, matmul_schedule.cc rebuilds it); schedule_cpu.cc calls these.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/prim_func.h"

namespace relax::transform::schedule {

/// A nest of three loops around one compute block that computes
///   out[vi, vj] (+)= sum over vk of lhs(vi, vk) * rhs(vk, vj)
/// read off its code: `lhs` mentions no vj, `rhs` no vi (the weights, possibly
/// an expression such as a fused dequantisation of packed bytes).
struct MatmulNest {
  const ForNode* outer = nullptr;  ///< the nest's outermost loop
  SymVar vi{"vi"}, vj{"vj"}, vk{"vk"};  ///< the block's iteration variables
  SymExpr rows, cols, depth;       ///< their extents (m, n, k)
  Buffer out;                      ///< out[vi, vj]
  SymExpr init;                    ///< the accumulator's start, of vi and vj
  SymExpr lhs, rhs;                ///< the factors
  /// Whether the weights' loads vary fastest with vk (`W[vj, vk]`, as linear
  /// reads them) rather than with vj (`W[vk, vj]`).
  bool weights_k_contiguous = false;
};

/// The matmul computed by the nest whose loop variables are `chain`
/// (outermost first), or nullopt when the nest is not one.
std::optional<MatmulNest> match_matmul(const Expr& func, const std::vector<SymVar>& chain);

/// The sizes of the matmul schedule.
struct MatmulTiles {
  int64_t rows = 8;            ///< mr: output rows per register tile (then tiles of mr / 2)
  int64_t cols = 32;           ///< nr: output columns per register tile (a multiple of the lanes)
  int64_t stream_cols = 1024;  ///< columns per parallel block of the one-row kernel
  int64_t stream_unroll = 4;   ///< steps of k per pass over the one-row kernel's columns
  int64_t dot_rows = 4;        ///< rows of W[n, k] per block of the one-row kernel
  int64_t lanes = 16;          ///< the vector width in elements
  /// > 0: a matmul against group-wise int4 / int8 weights runs as calls of relax_int4_rows_i8 /
  /// relax_int8_rows_i8 (activations quantised to int8, integer dot products), at most this many rows per call
  /// (the weights read once per that many rows), one per column block; 0: the exact float
  /// kernels.
  int64_t int8_rows = 0;
  /// > 0: a matmul against compact float32 or bfloat16 weights W[k, j] whose row count is at
  /// most this runs as calls of relax_f32_rows / relax_bf16_rows (float products, one pass over
  /// the weights for all the rows), one per column block; 0: tiles and single rows.
  int64_t stream_rows = 0;
  /// The threads the kernel's parallel loops will have, when known (> 0): the rows kernels'
  /// column blocks are then as wide as one thread's share of the columns (up to 4096).
  int64_t threads = 0;
};

/// `func` with the nest of `nest` replaced by the register-blocked schedule
/// (see matmul_schedule.cc).
absl::StatusOr<Expr> schedule_matmul(const Expr& func, const MatmulNest& nest, const MatmulTiles& tiles);

}  // namespace relax::transform::schedule
