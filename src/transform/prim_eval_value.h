// The scalar part of the loop-level evaluator (prim_eval.h), private to
// src/transform: values of every dtype, the walk that evaluates a SymExpr, and
// reading and writing tensor elements.
//
// A Value carries no dtype: the node it was computed for has it. Integers and
// bools live in `i` (a uint64 as its bit pattern), floats in `f` (a double
// that is a value of the node's dtype).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "relax/shape/sym_expr.h"
#include "relax/support/data_type.h"

namespace relax::transform::prim_eval_detail {

struct Value {
  int64_t i = 0;
  double f = 0;
};

/// Whether a tensor or buffer of `t` can be evaluated: bool, int8-64,
/// uint8-64, float16/32/64, bfloat16 (one lane).
bool is_supported_dtype(DataType t);

/// Bytes of one element of a supported dtype.
inline size_t element_bytes(DataType t) { return t.is_bool() ? 1 : t.bits / 8; }

/// The element of dtype `t` at `p`.
Value read_element(const void* p, DataType t);
/// Stores `v` (a value of `t`) at `p`.
void write_element(void* p, DataType t, Value v);

/// "7i32", "-2.5f32", "true": a value of `t` in SymExpr's literal spelling.
std::string value_to_string(Value v, DataType t);

/// Whether the integer `v` of dtype `from` is a value of the integer dtype
/// `to`; if so, `out` is it as a value of `to`.
bool convert_int(Value v, DataType from, DataType to, Value& out);

/// Evaluates SymExprs over variables bound in `vars` (by node), reading buffer
/// loads through load(). The first error stops the walk: eval() then returns
/// a zero Value and failed() is true, with the message in error().
class ValueEvaluator {
 public:
  virtual ~ValueEvaluator() = default;

  /// The value of `e`, of e.dtype().
  Value eval(const SymExpr& e);
  /// eval() of an integer `e`, as an int128-free int64 (uint64 values above
  /// INT64_MAX are an error): loop bounds, indices, extents.
  int64_t eval_index(const SymExpr& e);

  /// The lane a vector value is evaluated at (0 <= lane < its lanes), or -1
  /// (the default) outside a vector store, where a vector is an error. A ramp
  /// gives its lane's index; every other node applies lane by lane.
  void set_lane(int lane) { lane_ = lane; }

  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  /// Clears the error (the evaluator is reused for the next statement).
  void clear_error() {
    failed_ = false;
    error_.clear();
  }

  void bind(const SymVar& var, Value v) { vars_[var.get()] = v; }
  void unbind(const SymVar& var) { vars_.erase(var.get()); }
  bool is_bound(const SymVar& var) const { return vars_.contains(var.get()); }

 protected:
  /// The element that `load` (a kBufferLoad node) reads at `indices`.
  virtual Value load(const SymExpr& load, const std::vector<int64_t>& indices) = 0;
  /// Records the first error; returns a zero Value.
  Value fail(std::string message);

 private:
  Value eval_arith(const SymExpr& e);
  Value eval_cast(const SymExpr& e);
  Value eval_call(const SymExpr& e);
  Value eval_load(const SymExpr& e);

  absl::flat_hash_map<const SymExprNode*, Value> vars_;
  bool failed_ = false;
  std::string error_;
  int depth_ = 0;
  int lane_ = -1;
};

}  // namespace relax::transform::prim_eval_detail
