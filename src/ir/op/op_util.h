// Helpers shared by the deduction functions of src/ir/op/ops_*.cc (private).
//
// Every deduction error reads "<op>: <what is wrong>", naming the argument
// (by position and role) and the expected and actual annotations or values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/op.h"
#include "relax/shape/analyzer.h"

namespace relax::detail {

/// InvalidArgument "<op>: <message>".
absl::Status op_error(const std::string& op, const std::string& message);

/// "argument <index> (<role>)".
std::string arg_label(size_t index, const std::string& role);

/// The Tensor annotation of argument `index`, which the operator's argument specs made sure is
/// one (kTensor).
const TensorStructInfoNode& tensor_of(const CallNode& call, size_t index);

/// The Tensor annotation of call.args[index], or an error naming the argument
/// and the annotation it has.
absl::StatusOr<const TensorStructInfoNode*> tensor_arg(const CallNode& call, size_t index,
                                                       const std::string& op,
                                                       const std::string& role);

/// "(n, 4)", as in the text form of an annotation.
std::string dims_string(const std::vector<SymExpr>& dims);
/// "`e`".
std::string quoted(const SymExpr& e);

/// The dtype of an elementwise result: unknown when either is, an error when
/// both are known and differ.
absl::StatusOr<std::optional<DataType>> join_dtypes(const std::string& op,
                                                    const TensorStructInfoNode& lhs,
                                                    const TensorStructInfoNode& rhs);
/// The device of a result: the known one, an error when both are known and differ.
absl::StatusOr<Device> join_devices(const std::string& op, const TensorStructInfoNode& lhs,
                                    const TensorStructInfoNode& rhs);

/// Numpy broadcasting of two shapes aligned at the right: dims broadcast when
/// provably equal or when one is 1. `what` names the dims in errors ("dim",
/// "batch dim"); `context` is appended to them.
absl::StatusOr<std::vector<SymExpr>> broadcast_shapes(const std::vector<SymExpr>& lhs,
                                                      const std::vector<SymExpr>& rhs,
                                                      Analyzer& analyzer, const std::string& op,
                                                      const std::string& what,
                                                      const std::string& context);

/// The product of `dims`, simplified (1 for no dims).
SymExpr product(const std::vector<SymExpr>& dims, Analyzer& analyzer);

/// Whether a scalar annotated `prim` may stand where a value of `dtype` is
/// expected: the same dtype, or a constant that adapts to it (an int64 constant
/// that fits any integer dtype or is converted to a float one, a float64
/// constant converted to another float dtype).
bool prim_adapts_to(const PrimStructInfoNode& prim, DataType dtype);
/// Whether `prim` is a constant that adapts (see prim_adapts_to) to other dtypes.
bool is_adapting_constant(const PrimStructInfoNode& prim);

/// The `name` attribute of `call` when it is set and holds a T; nullopt when
/// unset; an error "<op>: attribute `name` must be <what>" when of another kind.
template <typename T>
absl::StatusOr<std::optional<T>> attr_of(const CallNode& call, const std::string& name,
                                         const std::string& op, const std::string& what) {
  auto it = call.attrs.find(name);
  if (it == call.attrs.end()) return std::optional<T>();
  const T* value = std::get_if<T>(&it->second);
  if (value == nullptr) return op_error(op, "attribute `" + name + "` must be " + what);
  return std::optional<T>(*value);
}

/// Checks the out_sinfo of a destination-passing call (sinfo_args[0]): a Tensor
/// or a Tuple of Tensors, each with known shape and dtype. Returns the output
/// tensors in order.
absl::StatusOr<std::vector<StructInfo>> dps_outputs(const CallNode& call, const std::string& op);

}  // namespace relax::detail
