// StructInfo: what relax knows statically about a graph-level value.
//
//   Object                       anything
//   Prim[dtype] / Prim[dtype, v] a scalar, optionally with a known symbolic value
//   Shape[(d0, d1, ...)]         a shape value with known dims; Shape[ndim=k] rank only;
//                                Shape[] unknown rank
//   Tensor[(d0, ...), dtype]     a tensor; shape as for Shape; dtype may be unknown;
//                                optionally on a device other than the host
//   Tuple[(s0, s1, ...)]         a tuple of values
//   Func[(p0, ...) -> r]         a function; `pure` unless marked impure; opaque params
//                                when only the return is known
//
// Dims are SymExprs: Tensor[(n * 4,), f32] and Tensor[(4 * n,), f32] are the same
// annotation because the Analyzer proves n * 4 == 4 * n. StructInfos are immutable
// handles, cheap to copy.
//
// Text form (StructInfo::to_string; the IR printer and parser use exactly this):
//
//   Object
//   Prim[int64]                      Prim[int64, n + 1]        (dtype, then the value)
//   Shape[(n, 4)]   Shape[(n,)]      Shape[()]                 (known dims)
//   Shape[ndim=2]                    Shape[]                   (rank only / unknown rank)
//   Tensor[(n, 4096), float32]       Tensor[(n,), ?]           (`?`: unknown dtype)
//   Tensor[ndim=2, float32]          Tensor[ndim=?, ?]         (rank only / unknown rank)
//   Tensor[(n, 4), float32, cuda:0]  Tensor[ndim=2, ?, cpu]    (device last, only when set)
//   Tuple[(a, b)]   Tuple[(a,)]      Tuple[()]
//   Func[(a, b) -> r]   Func[(a) -> r]   Func[() -> r]
//   Func[opaque -> r]   Func[(a) -> r, impure]   Func[opaque -> r, impure]
//
// Dims and values are SymExprs in their own text form (SymExpr::to_string). A
// parenthesised list of dims or tuple fields with one element takes a trailing
// comma, as in Python; a Func parameter list never does. Dtypes are spelled as
// DataType::to_string, devices as Device::to_string.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"
#include "relax/support/data_type.h"
#include "relax/support/device.h"

namespace relax {

enum class StructInfoKind : uint8_t { kObject, kPrim, kShape, kTensor, kTuple, kFunc };

class StructInfo;

/// Common part of every StructInfo node.
class StructInfoNode {
 public:
  virtual ~StructInfoNode() = default;
  StructInfoKind kind() const { return kind_; }

 protected:
  explicit StructInfoNode(StructInfoKind kind) : kind_(kind) {}

 private:
  StructInfoKind kind_;
};

/// Handle to an immutable StructInfo node; null when default-constructed.
class StructInfo {
 public:
  StructInfo() = default;
  explicit StructInfo(std::shared_ptr<const StructInfoNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  StructInfoKind kind() const { return node_->kind(); }
  const StructInfoNode* get() const { return node_.get(); }
  bool same_as(const StructInfo& other) const { return node_ == other.node_; }

  /// The node as its concrete class, or nullptr when it is another kind.
  template <typename T>
  const T* as() const {
    return node_ && node_->kind() == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

  /// The text form, e.g. `Tensor[(n, 4096), float32]`.
  std::string to_string() const;

 private:
  std::shared_ptr<const StructInfoNode> node_;
};

std::ostream& operator<<(std::ostream& os, const StructInfo& sinfo);

class ObjectStructInfoNode : public StructInfoNode {
 public:
  static constexpr StructInfoKind kKind = StructInfoKind::kObject;
  ObjectStructInfoNode() : StructInfoNode(kKind) {}
};

class PrimStructInfoNode : public StructInfoNode {
 public:
  static constexpr StructInfoKind kKind = StructInfoKind::kPrim;
  PrimStructInfoNode(DataType dtype, SymExpr value)
      : StructInfoNode(kKind), dtype(dtype), value(std::move(value)) {}
  DataType dtype;
  SymExpr value;  ///< the known value, or undefined
};

class ShapeStructInfoNode : public StructInfoNode {
 public:
  static constexpr StructInfoKind kKind = StructInfoKind::kShape;
  ShapeStructInfoNode(std::optional<std::vector<SymExpr>> values, int ndim)
      : StructInfoNode(kKind), values(std::move(values)), ndim(ndim) {}
  std::optional<std::vector<SymExpr>> values;  ///< the dims, when known
  int ndim;                                     ///< rank; kUnknownNDim when unknown
};

class TensorStructInfoNode : public StructInfoNode {
 public:
  static constexpr StructInfoKind kKind = StructInfoKind::kTensor;
  TensorStructInfoNode(std::optional<std::vector<SymExpr>> shape, int ndim,
                       std::optional<DataType> dtype, Device device)
      : StructInfoNode(kKind), shape(std::move(shape)), ndim(ndim), dtype(dtype), device(device) {}
  std::optional<std::vector<SymExpr>> shape;  ///< the dims, when known
  int ndim;                                    ///< rank; kUnknownNDim when unknown
  std::optional<DataType> dtype;               ///< element type, when known
  Device device;
};

class TupleStructInfoNode : public StructInfoNode {
 public:
  static constexpr StructInfoKind kKind = StructInfoKind::kTuple;
  explicit TupleStructInfoNode(std::vector<StructInfo> fields)
      : StructInfoNode(kKind), fields(std::move(fields)) {}
  std::vector<StructInfo> fields;
};

class FuncStructInfoNode : public StructInfoNode {
 public:
  static constexpr StructInfoKind kKind = StructInfoKind::kFunc;
  FuncStructInfoNode(std::optional<std::vector<StructInfo>> params, StructInfo ret, bool pure)
      : StructInfoNode(kKind), params(std::move(params)), ret(std::move(ret)), pure(pure) {}
  std::optional<std::vector<StructInfo>> params;  ///< nullopt: opaque (any arguments)
  StructInfo ret;
  bool pure;
};

inline constexpr int kUnknownNDim = -1;

// ---------------------------------------------------------------------------
// Constructors.

StructInfo object_sinfo();
StructInfo prim_sinfo(DataType dtype, SymExpr value = SymExpr());
StructInfo shape_sinfo(std::vector<SymExpr> values);
StructInfo shape_sinfo_rank(int ndim);
StructInfo tensor_sinfo(std::vector<SymExpr> shape, std::optional<DataType> dtype,
                        Device device = Device());
/// A tensor whose rank (or nothing, for kUnknownNDim) is known but not its dims.
StructInfo tensor_sinfo_rank(int ndim, std::optional<DataType> dtype, Device device = Device());
StructInfo tuple_sinfo(std::vector<StructInfo> fields);
StructInfo func_sinfo(std::vector<StructInfo> params, StructInfo ret, bool pure = true);
StructInfo opaque_func_sinfo(StructInfo ret, bool pure = false);

// ---------------------------------------------------------------------------
// Relations.

/// How a value annotated `derived` fits where `base` is expected.
enum class BaseCheck : uint8_t {
  kFail,          ///< never fits (different kinds, ranks, dtypes, or dims proven unequal)
  kRuntimeCheck,  ///< may fit: dims or ranks not provably equal, decided at run time
  kPass,          ///< always fits
};

/// Does every value described by `derived` fit `base`? Dims are compared with the Analyzer.
BaseCheck check_base_of(const StructInfo& base, const StructInfo& derived, Analyzer& analyzer);
inline bool is_base_of(const StructInfo& base, const StructInfo& derived, Analyzer& analyzer) {
  return check_base_of(base, derived, analyzer) == BaseCheck::kPass;
}

/// Whether a value of `sinfo` can be an If's condition: a Prim[bool], or a
/// bool tensor of one element (rank 0, or every known dim 1; a tensor of
/// unknown rank or dims is checked to hold one element when the If runs), the
/// form ONNX and other graph formats give their conditions. An Object
/// annotation passes too (it is checked at run time).
bool is_if_condition(const StructInfo& sinfo);

/// The most precise annotation that describes every value of `a` and of `b`
/// (used where an If joins its branches).
StructInfo struct_info_lca(const StructInfo& a, const StructInfo& b, Analyzer& analyzer);

/// Replaces what refers to symbolic variables outside `in_scope` by a coarser
/// form: a tensor dim mentioning such a var drops the whole shape to rank only,
/// a Prim value is dropped, and so on recursively.
StructInfo erase_to_scope(const StructInfo& sinfo,
                          const std::function<bool(const SymVar&)>& in_scope);

/// Substitutes symbolic variables inside an annotation (and simplifies the dims).
StructInfo substitute_sinfo(const StructInfo& sinfo, const SymVarMap<SymExpr>& map,
                            Analyzer& analyzer);

/// Exact structural equality (dims by structural_equal, vars by identity).
bool struct_info_equal(const StructInfo& a, const StructInfo& b);

// ---------------------------------------------------------------------------
// Symbolic variables of an annotation.

/// The symbolic variables that a list of annotations defines: the parameters
/// of a function (or of a Func annotation), or the one pattern of a match_cast.
/// The rule has two steps:
///   1. every dim of a Tensor or Shape that is a bare variable, and the value of
///      a Prim that is one, through tuples (not through Func annotations, whose
///      variables are their own), in first-occurrence order;
///   2. then, repeatedly until nothing changes, every variable v that some
///      Tensor or Shape dim solves for (relax/shape/solve.h) when the variables
///      defined so far, and those `outer_known` accepts, are known: a parameter
///      `Tensor[(n * 2,)]` defines n, `Tensor[(n * n,)]` does not.
/// `outer_known` says what the enclosing scope defines (for a match_cast; a
/// function's parameters see none). No repeats. A variable defined by step 2 is
/// never one `outer_known` accepts; one defined by step 1 may be (a match_cast
/// pattern `Tensor[(n,)]` in the scope of n checks n rather than defining it).
std::vector<SymVar> defined_sym_vars(
    const std::vector<StructInfo>& sinfos,
    const std::function<bool(const SymVar&)>& outer_known = nullptr);

/// defined_sym_vars({sinfo}): what one annotation defines on its own.
std::vector<SymVar> defined_sym_vars(const StructInfo& sinfo);

/// Every variable that `sinfo` could define in some scope: the bare dims and
/// Prim values of step 1 above, then each variable that some dim solves for
/// when every other variable is known. A superset of
/// defined_sym_vars({sinfo}, outer_known) for every `outer_known`, for walkers
/// that do not track the enclosing scope (the extra variables are the ones an
/// enclosing scope must define). First-occurrence order, no repeats.
std::vector<SymVar> definable_sym_vars(const StructInfo& sinfo);

/// Every variable that is a whole Tensor or Shape dim of `sinfos` (through tuples, in
/// order, repeats kept): sizes, which an Analyzer may bind to >= 0 where they are defined.
std::vector<SymVar> bare_dim_vars(const std::vector<StructInfo>& sinfos);

/// Every symbolic variable that `sinfo` mentions, through tuples; for a Func
/// annotation only those that its parameters do not define. First-occurrence
/// order, no repeats.
std::vector<SymVar> used_sym_vars(const StructInfo& sinfo);

}  // namespace relax
