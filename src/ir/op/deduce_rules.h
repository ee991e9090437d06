// Deduction rules that many operators share (private to src/ir/op).
//
// Each rule is a plain function of the call; the `rules::` wrappers turn it
// into the typed form an OpDef takes, for ops whose rule needs no attribute:
//
//   table.def("tanh", "...").arg("x", ArgKind::kTensor, DtypeClass::kFloat)
//       .deduce(rules::same_as_arg(0));
//
// Rank-only and unknown inputs degrade to rank-only and unknown results.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ir/op/op_def.h"

namespace relax::detail {

/// How a numpy-broadcasting op (add, less, where, ...) types its result.
struct BroadcastSpec {
  /// The arguments whose dtypes must agree (a Prim adapts when it is an int64
  /// or float64 constant); empty: all.
  std::vector<size_t> same_dtype;
  /// The result's dtype; unset: the agreed dtype.
  std::optional<DataType> result_dtype;
  /// For calls whose arguments are all Prims: the result's value from theirs
  /// (converted to the agreed dtype); unset: the value is unknown.
  std::function<SymExpr(const std::vector<SymExpr>&)> fold;
};

/// Numpy broadcasting of every argument (Tensors and scalar Prims, aligned at
/// the right): a pair of dims broadcasts when the Analyzer proves them equal
/// or one of them 1; a pair that is neither (`n` vs `m`, 3 vs 4) is an error
/// naming the dims, as the result's shape would depend on run-time values.
/// All-Prim calls give a Prim.
absl::StatusOr<StructInfo> deduce_broadcast(const CallNode& call, DeduceContext& ctx,
                                            const BroadcastSpec& spec);

/// The tensor argument `index` with dtype `dtype` (unset: its own).
absl::StatusOr<StructInfo> deduce_like_arg(const CallNode& call, size_t index,
                                           std::optional<DataType> dtype = std::nullopt);

/// A reduction of argument 0 over `axis` (unset: every axis; negative ones count
/// from the end); the reduced dims disappear, or stay as 1 with `keepdims`.
/// `dtype`: the result's (unset: x's).
absl::StatusOr<StructInfo> deduce_reduce(const CallNode& call,
                                         const std::optional<std::vector<int64_t>>& axis,
                                         bool keepdims, std::optional<DataType> dtype = std::nullopt);

/// `axis` counted from the front, or an error "<op>: axis <a> is out of range
/// for rank <ndim>" naming argument 0's annotation.
absl::StatusOr<int64_t> checked_axis(const CallNode& call, int64_t axis, int ndim);

namespace rules {

/// Wraps an attribute-free rule.
template <typename A = NoAttrs, typename F>
TypedDeduceFn<A> without_attrs(F f) {
  return [f](const CallNode& call, const A&, DeduceContext& ctx) { return f(call, ctx); };
}

/// The annotation of argument `index`.
template <typename A = NoAttrs>
TypedDeduceFn<A> same_as_arg(size_t index) {
  return without_attrs<A>(
      [index](const CallNode& call, DeduceContext&) { return deduce_like_arg(call, index); });
}

/// Argument `index`'s shape with another dtype (bool for isnan).
template <typename A = NoAttrs>
TypedDeduceFn<A> like_arg_with_dtype(size_t index, DataType dtype) {
  return without_attrs<A>([index, dtype](const CallNode& call, DeduceContext&) {
    return deduce_like_arg(call, index, dtype);
  });
}

/// Numpy broadcasting (see deduce_broadcast).
template <typename A = NoAttrs>
TypedDeduceFn<A> broadcast(BroadcastSpec spec = {}) {
  return without_attrs<A>([spec = std::move(spec)](const CallNode& call, DeduceContext& ctx) {
    return deduce_broadcast(call, ctx, spec);
  });
}

/// A reduction driven by A's `axis` (optional int | list) and `keepdims`.
template <typename A>
TypedDeduceFn<A> reduce(std::optional<DataType> dtype = std::nullopt) {
  return [dtype](const CallNode& call, const A& attrs, DeduceContext&) {
    return deduce_reduce(call, attrs.axis, attrs.keepdims, dtype);
  };
}

}  // namespace rules
}  // namespace relax::detail
