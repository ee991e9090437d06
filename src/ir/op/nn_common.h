// Helpers shared by the neural-network operator files (nn.cc, nn_norm.cc,
// nn_attention.cc); private to src/ir/op.
//
// Deduction helpers check what the argument specs cannot say (ranks, dims
// that must agree, dtypes that must match); each error reads
// "<op>: argument <i> (<role>) ..." with the annotation or the dims at fault.
// Kernel helpers give the arithmetic dtype of a kernel (float32 for float16
// and bfloat16 storage) and loads converted to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/op/op_def.h"
#include "relax/ir/compute.h"

namespace relax::detail {

/// "argument <index> (<role>)" with the role declared in the op's table entry.
std::string nn_arg_label(const CallNode& call, size_t index);

/// The name of the called operator.
std::string nn_op_name(const CallNode& call);

/// The dtype the tensor arguments `indices` share: unset when none is known;
/// an error naming two of them when two known dtypes differ.
absl::StatusOr<std::optional<DataType>> shared_dtype(const CallNode& call,
                                                     const std::vector<size_t>& indices);

/// OK when argument `index` has rank `rank` or an unknown rank; else an error.
absl::Status require_rank(const CallNode& call, size_t index, int rank);

/// OK when `dim` (dim `dim_index` of argument `index`) is provably equal to
/// `expected`, which `expected_what` describes ("x dim 1"); else an error
/// naming both dims and their values.
absl::Status require_dim(const CallNode& call, DeduceContext& ctx, size_t index, size_t dim_index,
                         const SymExpr& expected, const std::string& expected_what);

/// OK when `dividend` is provably a multiple of `divisor`; else an error
/// "<op>: <what>: <dividend> is not provably divisible by <divisor>".
absl::Status require_divisible(const CallNode& call, DeduceContext& ctx, const SymExpr& dividend,
                               const SymExpr& divisor, const std::string& what);

using compute::as_dtype;       // relax/ir/compute.h
using compute::compute_dtype;  // relax/ir/compute.h

/// buffer[index] converted to `dtype`.
SymExpr load_as(const Buffer& buffer, std::vector<SymExpr> index, DataType dtype);

/// The product of `dims` (an int64 expression; 1 for none).
SymExpr dims_product(const std::vector<SymExpr>& dims);

/// Registration of the families' parts (nn_norm.cc, nn_attention.cc, nn_recurrent.cc).
void register_nn_norm_ops(OpTable& table);
void register_nn_attention_ops(OpTable& table);
void register_nn_recurrent_ops(OpTable& table);

}  // namespace relax::detail
