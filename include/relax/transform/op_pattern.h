// Loop patterns: what fusion needs to know of a kernel, read off its loop code.
//
// The pass annotate-op-pattern (create_annotate_op_pattern_pass() in passes.h)
// classifies every PrimFunc of a module from its loops — the index patterns of
// its stores and loads, the iteration-variable kinds of its compute blocks, the
// multiply-accumulate form — and writes the class on the PrimFunc as the
// attribute `op_pattern` (`attrs {op_pattern = "elementwise"}` in the text
// format). No operator carries a hand annotation: a kernel written by hand is
// classified like a legalized one. fuse-ops reads the attribute.
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "relax/ir/prim_func.h"

namespace relax::transform {

/// The classes, from the most to the least fusible. The order is meaningful: a
/// chain of kernels fuses as the largest class among them allows.
enum class OpPattern : uint8_t {
  /// Every output element is computed from the input elements at the same
  /// index, each input indexed exactly like the output (add of two same-shaped
  /// tensors, relu, a cast).
  kElementwise = 0,
  /// As elementwise, but some input is read at a subset of the output's
  /// indices, in order (a bias broadcast along rows: B[vi1]).
  kBroadcast = 1,
  /// Each output element is one function of input elements at index
  /// expressions of the output's indices, with no reduction (transpose,
  /// reshape, concat, a gather whose indices are known affine expressions).
  kInjective = 2,
  /// A reduction over some axes, whose output is written once per spatial
  /// point (sum, max, a row softmax's reductions).
  kReduction = 3,
  /// A reduction whose output elementwise consumers can be fused into its
  /// epilogue: a multiply-accumulate (matmul, conv, pooling).
  kOutputElementwiseFusible = 4,
  /// Anything else: side effects (a write through an in-place call, an extern
  /// call), data-dependent control or indexing, or several outputs of unrelated
  /// shapes. Never fused.
  kOpaque = 8,
};

/// The attribute key on PrimFuncs.
inline constexpr std::string_view kOpPatternAttr = "op_pattern";

/// "elementwise", "broadcast", "injective", "reduction",
/// "output-elementwise-fusible", "opaque".
std::string_view op_pattern_name(OpPattern pattern);
/// The class of `name`; an InvalidArgument naming the accepted names otherwise.
absl::StatusOr<OpPattern> parse_op_pattern(std::string_view name);

/// The class written on `func` (its `op_pattern` attribute), or nullopt when
/// it has none or the attribute does not name a class.
std::optional<OpPattern> op_pattern_of(const PrimFuncNode& func);

/// The class of `func` read off its loop code (what annotate-op-pattern
/// writes). Never fails: what it cannot classify is kOpaque.
OpPattern analyze_op_pattern(const PrimFuncNode& func);

}  // namespace relax::transform
