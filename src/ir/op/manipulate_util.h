// Helpers shared by the manipulation family (private to src/ir/op; defined in
// manipulate_util.cc):
// manipulate.cc (reshape, permute_dims, expand_dims, squeeze, flatten,
// broadcast_to, astype, flip, repeat, tile), manipulate_index.cc (concat,
// split, strided_slice, take, pad, one_hot) and manipulate_scatter.cc
// (gather_elements, scatter_nd).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/op/op_def.h"

namespace relax::detail {

/// Declares the ops of manipulate_index.cc, manipulate_scatter.cc and manipulate_resize.cc
/// (called by register_manipulate_ops).
void register_manipulate_index_ops(OpTable& table);
void register_manipulate_scatter_ops(OpTable& table);
void register_manipulate_resize_ops(OpTable& table);

/// "[0, 2]", as in the text form of an int list attribute.
std::string ints_string(const std::vector<int64_t>& values);

/// An int-or-list attribute as a list.
std::vector<int64_t> as_list(const IntOrInts& value);

/// The product of `numerator` divided by the product of `denominator` when the
/// division is exact as polynomials (Analyzer::exact_div: (b, n, 32, 128) /
/// (b, n) = 4096, (n, 4, 16) / (n) = 64, n * 6 / 3 = n * 2); nullopt when it is
/// not provably exact.
std::optional<SymExpr> exact_quotient(const std::vector<SymExpr>& numerator,
                                      const std::vector<SymExpr>& denominator, Analyzer& analyzer);

/// OK when every variable of `dims` is defined where the call stands; else an
/// error naming `what` and the variable.
absl::Status check_defined(const std::string& op, const std::string& what,
                           const std::vector<SymExpr>& dims, const DeduceContext& ctx);

/// `e` as an entry of the dims list handed to KernelBuilder for variables that
/// only index arithmetic uses (a slice's begin): KernelBuilder takes a bare
/// variable in that list for a buffer dim that defines it, so the entry is
/// wrapped (`e * 1`, never folded) to make it pass them as scalar parameters.
SymExpr index_only(const SymExpr& e);

}  // namespace relax::detail
