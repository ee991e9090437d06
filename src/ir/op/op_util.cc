// Helpers shared by the operator deduction functions.
#include "ir/op/op_util.h"

#include <algorithm>

#include "relax/support/dtype_util.h"

namespace relax::detail {

const TensorStructInfoNode& tensor_of(const CallNode& call, size_t index) {
  return *call.args[index].struct_info().as<TensorStructInfoNode>();
}

absl::Status op_error(const std::string& op, const std::string& message) {
  return absl::InvalidArgumentError(op + ": " + message);
}

std::string arg_label(size_t index, const std::string& role) {
  return "argument " + std::to_string(index) + " (" + role + ")";
}

absl::StatusOr<const TensorStructInfoNode*> tensor_arg(const CallNode& call, size_t index,
                                                       const std::string& op,
                                                       const std::string& role) {
  const StructInfo& sinfo = call.args[index].struct_info();
  const auto* tensor = sinfo.as<TensorStructInfoNode>();
  if (tensor == nullptr) {
    return op_error(op, arg_label(index, role) + ": expected a Tensor, got " + sinfo.to_string());
  }
  return tensor;
}

std::string dims_string(const std::vector<SymExpr>& dims) {
  // The text form of a Shape annotation is "Shape[<dims>]".
  std::string s = shape_sinfo(dims).to_string();
  return s.substr(6, s.size() - 7);
}

std::string quoted(const SymExpr& e) { return "`" + e.to_string() + "`"; }

absl::StatusOr<std::optional<DataType>> join_dtypes(const std::string& op,
                                                    const TensorStructInfoNode& lhs,
                                                    const TensorStructInfoNode& rhs) {
  if (!lhs.dtype || !rhs.dtype) return std::optional<DataType>();
  if (*lhs.dtype != *rhs.dtype) {
    return op_error(op, "dtypes differ: lhs is " + lhs.dtype->to_string() + ", rhs is " +
                            rhs.dtype->to_string());
  }
  return lhs.dtype;
}

absl::StatusOr<Device> join_devices(const std::string& op, const TensorStructInfoNode& lhs,
                                    const TensorStructInfoNode& rhs) {
  if (lhs.device.type == Device::Type::kUnknown) return rhs.device;
  if (rhs.device.type == Device::Type::kUnknown) return lhs.device;
  if (lhs.device != rhs.device) {
    return op_error(op, "devices differ: lhs is on " + lhs.device.to_string() + ", rhs on " +
                            rhs.device.to_string());
  }
  return lhs.device;
}

absl::StatusOr<std::vector<SymExpr>> broadcast_shapes(const std::vector<SymExpr>& lhs,
                                                      const std::vector<SymExpr>& rhs,
                                                      Analyzer& analyzer, const std::string& op,
                                                      const std::string& what,
                                                      const std::string& context) {
  size_t ndim = std::max(lhs.size(), rhs.size());
  std::vector<SymExpr> out(ndim);
  for (size_t k = 0; k < ndim; ++k) {  // k counts from the right
    size_t i = ndim - 1 - k;
    bool has_l = k < lhs.size();
    bool has_r = k < rhs.size();
    if (!has_l || !has_r) {
      out[i] = has_l ? lhs[lhs.size() - 1 - k] : rhs[rhs.size() - 1 - k];
      continue;
    }
    const SymExpr& a = lhs[lhs.size() - 1 - k];
    const SymExpr& b = rhs[rhs.size() - 1 - k];
    if (structural_equal(a, b) || analyzer.prove_equal(a, b)) {
      out[i] = a;
    } else if (analyzer.prove_equal(a, 1)) {
      out[i] = b;
    } else if (analyzer.prove_equal(b, 1)) {
      out[i] = a;
    } else {
      return op_error(op, "cannot broadcast " + what + " " + std::to_string(i) + ": " + quoted(a) +
                              " vs " + quoted(b) + context);
    }
  }
  return out;
}

SymExpr product(const std::vector<SymExpr>& dims, Analyzer& analyzer) {
  SymExpr p(1);
  for (const SymExpr& d : dims) p = p * d;
  return analyzer.simplify(p);
}

bool is_adapting_constant(const PrimStructInfoNode& prim) {
  if (!prim.value.defined()) return false;
  if (prim.dtype == DataType::int64()) return prim.value.as_const().has_value();
  if (prim.dtype == DataType::float64()) return prim.value.as_float().has_value();
  return false;
}

bool prim_adapts_to(const PrimStructInfoNode& prim, DataType dtype) {
  if (prim.dtype == dtype) return true;
  if (!is_adapting_constant(prim)) return false;
  if (prim.dtype == DataType::int64()) {
    // bool takes no integer constant (true and false are written as such).
    return dtype.is_float() || (!dtype.is_bool() && fits_dtype(*prim.value.as_const(), dtype));
  }
  return dtype.is_float();  // a float64 constant
}

absl::StatusOr<std::vector<StructInfo>> dps_outputs(const CallNode& call, const std::string& op) {
  if (call.sinfo_args.size() != 1 || !call.sinfo_args[0].defined()) {
    return op_error(op, "expected one output annotation (out_sinfo), got " +
                            std::to_string(call.sinfo_args.size()));
  }
  const StructInfo& out = call.sinfo_args[0];
  std::vector<StructInfo> tensors;
  if (const auto* tuple = out.as<TupleStructInfoNode>()) {
    tensors = tuple->fields;
  } else {
    tensors.push_back(out);
  }
  for (const StructInfo& t : tensors) {
    const auto* tensor = t.as<TensorStructInfoNode>();
    if (tensor == nullptr || !tensor->shape || !tensor->dtype) {
      return op_error(op,
                      "out_sinfo: expected a Tensor (or a Tuple of Tensors) with known shape "
                      "and dtype, got " +
                          out.to_string());
    }
  }
  return tensors;
}

}  // namespace relax::detail
