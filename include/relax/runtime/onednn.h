// oneDNN library functions: the family "onednn." of call_dps_library.
//
// When the runtime is built with oneDNN (CMake option RELAX_WITH_ONEDNN), every name
//
//   "onednn." kind [ "{" attr { ";" attr } "}" ] { "+" post } [ ":packed" ]
//
// resolves at Module::create to a function object of that Module (kinds matmul, linear,
// conv1d, conv2d; posts bias, relu, gelu_erf, gelu_tanh, silu, sigmoid, tanh, add; see the
// contract with the dispatch pass for the argument order). Each function object keeps a
// bounded cache of oneDNN primitives keyed by the concrete shapes and dtypes it was called
// with, and, for `:packed`, the weights reordered once into the primitive's layout. Calls are
// thread-safe. oneDNN's scratchpad is the call's workspace when one of at least
// onednn_workspace_bytes is passed, else allocated for that call (and counted below).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/support/data_type.h"

namespace relax::runtime {

/// Whether this runtime was built with oneDNN (the family "onednn." resolves).
bool onednn_available();

/// The scratchpad bytes the primitive for `name` needs at these concrete shapes and dtypes
/// (the inputs in call order, then the output; no workspace). InvalidArgument for a
/// malformed name or shapes and dtypes the function would reject at a call (the message
/// names the argument); Unimplemented without oneDNN or when oneDNN has no primitive for it.
absl::StatusOr<int64_t> onednn_workspace_bytes(const std::string& name,
                                               const std::vector<std::vector<int64_t>>& shapes,
                                               const std::vector<DataType>& dtypes);

/// What the oneDNN functions of this process did, counted since start-up or the last
/// reset_onednn_stats().
struct OnednnStats {
  int64_t primitives_created = 0;     ///< cache misses: a primitive made for new shapes
  int64_t primitive_cache_hits = 0;   ///< calls that found their primitive cached
  int64_t weights_packed = 0;         ///< `:packed` weights reordered into a primitive's layout
  int64_t scratchpads_allocated = 0;  ///< calls whose workspace was missing or too small
  /// Calls of plain weights and many rows that ran on the weights in oneDNN's own layout (each
  /// such call shape times both ways on its first calls and keeps the faster: see
  /// set_onednn_repack).
  int64_t calls_repacked = 0;
  /// Plain weights copied once into oneDNN's layout after their calls chose it.
  int64_t weights_repacked = 0;
  /// Bytes held now (not reset) by the copies of `:packed` weights, by the copies of plain
  /// weights their calls chose, and by the buffers the timed trials reorder into.
  int64_t packed_weight_bytes = 0;
  int64_t repacked_weight_bytes = 0;
  int64_t repack_buffer_bytes = 0;
};

/// The counters (all zero without oneDNN).
OnednnStats onednn_stats();
/// Sets the counters to zero (for tests and benchmarks); the byte counts stay.
void reset_onednn_stats();

/// Plain weights of a matmul or linear of many rows: oneDNN may read its own blocked layout of
/// them far faster. How a process's calls of such shapes choose (set_onednn_repack):
/// - kTimed (the default): the first calls of each shape time the plain primitive against the
///   weights reordered into oneDNN's layout (into a reused buffer, the reorder not timed) and
///   keep the faster;
/// - kAlways: oneDNN's layout without timing; kNever: the plain weights, no trials.
/// Once oneDNN's layout is chosen, each weights tensor is copied into it once and its later
/// calls read the copy, which the function object keeps: a second copy of those weights
/// (`repacked_weight_bytes`), never a reorder per call. `limit_bytes` >= 0 bounds the bytes all
/// such copies of the process may hold: a copy that would pass it is not made, and its calls read
/// the plain weights.
struct OnednnRepack {
  enum class Mode { kTimed, kAlways, kNever };
  Mode mode = Mode::kTimed;
  int64_t limit_bytes = -1;
};
void set_onednn_repack(OnednnRepack repack);
OnednnRepack onednn_repack();

}  // namespace relax::runtime
