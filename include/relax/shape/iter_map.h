// relax::detect_iter_map: whether index expressions over loop variables are an
// affine, bijective (or surjective) map of the loops' iteration space, with the
// map's structure and its inverse; relax::fuse_loops, the converse.
//
// The loops are variables v_0 ... v_{L-1}, each ranging over [0, extent_v)
// (extents are SymExprs: constants or expressions of other, bound variables).
// Each index expression is read as a sum of *splits* plus an offset:
//
//   index = sum_k  floormod(floordiv(source_k, lower_k), extent_k) * scale_k  +  offset
//
// where a source is a loop variable or a *fused* sum of splits (`i*4 + j` read
// as one iterator of extent 4*extent_i when j has extent 4); floordiv(x, lower)
// with lower * extent == extent of x is the split at the top of x, and x itself
// is the split with lower 1 and the whole extent. Divisions of a fused sum give
// splits of the fused iterator: floordiv(i*3 + j, 2) with j in [0, 3) is the
// split (lower 2) of `i*3 + j`. Where a division lines up with the fused
// sum's terms the splits are the loops' own: floordiv(i*4 + j, 8) with j in
// [0, 4) is floordiv(i, 2), floormod(i*4 + j, 8) is floormod(i, 2)*4 + j. The map is
//   - bijective onto the box [offset_0, offset_0 + extent_0) x ... when every
//     source's splits tile its range exactly (sorted by lower: lower_0 = 1,
//     lower_{k+1} = lower_k * extent_k, the product of their extents the
//     source's extent), no split is used twice, every loop (of extent other
//     than 1) is used, and each index's splits form a mixed radix (sorted by
//     scale: scale_0 = 1, scale_{k+1} = scale_k * extent_k; the index's extent
//     is the product of its splits' extents);
//   - surjective onto that box when the same holds except that a source's
//     splits may leave gaps (floordiv(i, 4) alone: every value is hit, some
//     many times) and a loop may be unused.
// Every equality and divisibility is proven with the Analyzer (prove_equal,
// exact_div), under the ranges the caller's analyzer declares for the extents'
// variables; what is not proven makes the map "not bijective" with the reason.
//
// Not supported (reported as kNone with a reason): negative scales (a
// reversed loop, `n - 1 - i`), a division whose divisor's multiples do not
// line up with the splits (floordiv(i, 3) with i in [0, 8): the last quotient
// has fewer values), offsets inside a division that are not a multiple of its
// divisor (floordiv(i + 3, 4)), products of loop variables, min/max/select of
// loop variables, and loop variables in a divisor or an extent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax {

/// A loop variable ranging over [0, extent).
struct LoopRange {
  SymVar var;
  SymExpr extent;
};

/// One split in an index: floormod(floordiv(source, lower), extent) * scale.
struct IterSplit {
  /// The loop variable, or the fused sum (an expression of loop variables).
  SymExpr source;
  /// The position of `source` in the loops, or -1 for a fused sum.
  int loop = -1;
  /// The number of values `source` takes.
  SymExpr source_extent;
  SymExpr lower;
  SymExpr extent;
  SymExpr scale;
  /// The split's value without its scale, in its shortest spelling: `i`,
  /// `floordiv(i, 4)`, `floormod(i, 4)` or `floormod(floordiv(i, 4), 8)`.
  SymExpr value;
};

/// One index as the detector read it: offset + its splits, by increasing scale.
struct IterIndex {
  std::vector<IterSplit> splits;
  SymExpr offset;
  /// The number of values it takes: the product of its splits' extents.
  SymExpr extent;
};

enum class IterMapKind {
  kNone,        ///< not read as a surjective affine map (see reason())
  kSurjective,  ///< every point of the index box is hit, some more than once
  kBijective,   ///< every point of the index box is hit exactly once
};

/// The result of detect_iter_map. Cheap to copy (shares its state).
class IterMap {
 public:
  IterMapKind kind() const;
  bool bijective() const { return kind() == IterMapKind::kBijective; }
  /// True for bijective maps as well.
  bool surjective() const { return kind() != IterMapKind::kNone; }
  /// Why the map is not bijective (`index 1: split i of i is used twice (also
  /// by index 0)`); empty when it is.
  const std::string& reason() const;
  /// The indices as read; empty when kind() is kNone.
  const std::vector<IterIndex>& indices() const;
  /// Each index's extent (the shape of the index box); empty when kNone.
  std::vector<SymExpr> extents() const;
  /// Each index's offset (0 unless an index has a constant part); empty when kNone.
  std::vector<SymExpr> offsets() const;

  /// The loop variables, in the order of the loops given, as expressions of
  /// the index values `values` (one per index; variables or expressions) --
  /// exact for values inside the index box. Simplified with the detector's
  /// analyzer; a value that is a variable unknown to it is taken to lie in its
  /// index's range. An error when the map is not bijective or `values` does not
  /// match the indices in number or dtype (int64).
  absl::StatusOr<std::vector<SymExpr>> inverse(const std::vector<SymExpr>& values) const;

  /// The structure, one index a line, or the reason.
  std::string to_string() const;

  struct State;

 private:
  std::shared_ptr<const State> state_;
  friend absl::StatusOr<IterMap> detect_iter_map(const std::vector<SymExpr>& indices,
                                                 const std::vector<LoopRange>& loops,
                                                 const Analyzer& analyzer);
};

/// Reads `indices` (int64 expressions of the loop variables and of other
/// variables bound in `analyzer`) as a map of the loops' iteration space; see
/// the top of this file. A map outside the supported form is not an error but
/// kNone with a reason. Errors: a loop variable listed twice or not int64, an
/// index not int64, an extent that uses a loop variable. `analyzer` is copied
/// (the loops' ranges are added to the copy).
absl::StatusOr<IterMap> detect_iter_map(const std::vector<SymExpr>& indices,
                                        const std::vector<LoopRange>& loops,
                                        const Analyzer& analyzer);

/// Loops fused into one, outermost first: the fused index
/// (((v_0 * e_1) + v_1) * e_2 + v_2 ..., canonical), its extent e_0 * e_1 * ...,
/// and each loop variable as an expression of a fused value `fused_value`
/// (v_k = floormod(floordiv(fused, e_{k+1} * ... ), e_k), the outermost without
/// the floormod), simplified under `analyzer` (a variable `fused_value` unknown
/// to it is taken to lie in [0, extent)).
struct FusedLoops {
  SymExpr index;
  SymExpr extent;
  std::vector<SymExpr> loop_values;
};
FusedLoops fuse_loops(const std::vector<LoopRange>& loops, const SymExpr& fused_value,
                      const Analyzer& analyzer);

}  // namespace relax
