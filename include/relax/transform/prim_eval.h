// Evaluating loop-level code without the code generator.
//
//   relax::runtime::Tensor a = ..., out = ...;            // host tensors
//   absl::Status s = relax::transform::run_prim_func(kernel, {a, out});
//
// A small interpreter of PrimFuncs over runtime::Tensors, for passes that must
// know what a kernel computes (fold-constant) and for tests that check kernels
// numerically. It never calls codegen: the transform layer stays below it.
//
// Values. Every dtype of the IR: bool, int8-64, uint8-64, float16, bfloat16,
// float32, float64. Integer arithmetic is exact (computed in 128 bits, then
// checked against the node's dtype: a result outside it is an overflow error,
// as in SymExpr's evaluate(), never a wrapped value); casts between integer
// dtypes wrap as in C++. Float arithmetic is computed in double and rounded to
// the node's dtype after each operation, so a float32 kernel gives what IEEE
// float32 gives for + - * / (one rounding each); the math intrinsics (exp,
// tanh, ...) are the double ones rounded once. float16 and bfloat16 values are
// computed as float32, as the generated code computes them: 16-bit storage,
// float32 arithmetic, rounding to 16 bits (nearest, ties to even) only where a
// value is stored or cast to the 16-bit dtype. A cast of a float to an integer
// truncates and is an error when the value does not fit; a cast of an integer
// to a float rounds once.
//
// Statements: For, SeqStmt, BufferStore, IfThenElse, LetStmt, Allocate,
// Evaluate and Block (its iteration variables take their bindings, which must
// lie in [0, extent); its init part runs when every reduction variable is 0).
//
// Errors (InvalidArgument, naming the kernel and the statement:
// "@add: in `C[vi, vj] = A[vi, vj] + B[vi, vj]`: index [3, 0] is out of bounds
// of `A` (shape (3, 4))"): arguments that do not fit the parameters (count,
// kind, rank, dims, dtype, device), indices out of bounds, a block binding
// outside its extent, division or modulo by zero, integer overflow, a float
// cast out of range, a store into an input, a read of an output element or of
// allocated storage before it was written, an output element never written;
// ResourceExhausted when
// PrimEvalOptions::max_steps is exceeded.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/runtime/tensor.h"
#include "relax/shape/sym_expr.h"

namespace relax::transform {

/// A scalar value of a loop-level dtype, held exactly: an integer or bool as
/// its value (a uint64 above INT64_MAX as its two's complement bit pattern), a
/// float as a double that is a value of its dtype.
class PrimScalar {
 public:
  /// An int64 0.
  PrimScalar() = default;
  /// `value` of the integer or bool dtype `dtype`; aborts when it does not fit.
  static PrimScalar from_int(int64_t value, DataType dtype = DataType::int64());
  /// `value` as a uint64.
  static PrimScalar from_uint64(uint64_t value);
  /// `value` rounded to the float dtype `dtype`.
  static PrimScalar from_float(double value, DataType dtype = DataType::float64());
  static PrimScalar from_bool(bool value) { return from_int(value ? 1 : 0, DataType::boolean()); }

  DataType dtype() const { return dtype_; }
  bool is_float() const { return dtype_.is_float(); }
  /// The value of an integer or bool scalar (uint64: the bit pattern).
  int64_t int_value() const { return int_; }
  /// The value of a float scalar; an integer or bool one converted (rounding).
  double float_value() const;
  /// "7i32", "1.5f32", "true": the SymExpr literal spelling.
  std::string to_string() const;

  friend bool operator==(const PrimScalar& a, const PrimScalar& b) {
    return a.dtype_ == b.dtype_ && a.int_ == b.int_ &&
           (a.float_ == b.float_ || (a.float_ != a.float_ && b.float_ != b.float_));
  }

 private:
  DataType dtype_ = DataType::int64();
  int64_t int_ = 0;
  double float_ = 0;
};

/// Evaluates a scalar expression (no buffer loads) with its variables taken
/// from `bindings`, exactly as run_prim_func evaluates the values of a kernel.
absl::StatusOr<PrimScalar> evaluate_scalar(const SymExpr& value,
                                           const SymVarMap<PrimScalar>& bindings = {});

/// How a kernel may use a buffer argument.
enum class BufferAccess : uint8_t {
  kReadWrite,  ///< read and written (the default)
  kInput,      ///< read only: a store into it is an error
  kOutput,     ///< undefined at entry: reading an element the kernel has not written, or
               ///< leaving one unwritten, is an error
};

/// A PrimFunc argument: a tensor for a buffer parameter, a scalar for a scalar one.
using PrimArg = std::variant<runtime::Tensor, PrimScalar>;

struct PrimEvalOptions {
  /// The kernel's name in errors; its "global_symbol" attribute when empty.
  std::string name;
  /// The access of each parameter by position (empty, or shorter than the
  /// parameter list: kReadWrite for the rest; ignored for scalars).
  std::vector<BufferAccess> access;
  /// Statements executed (loop iterations included) before giving up with
  /// ResourceExhausted; -1 for no limit.
  int64_t max_steps = -1;
};

/// Runs the PrimFunc `func` with one argument per parameter, in order: host
/// tensors of the buffers' dtypes, whose shapes bind the buffers' bare-variable
/// dims (the other dims must evaluate to them), and scalars, which bind the
/// scalar parameters (of their dtype; an integer converts to another integer
/// dtype that holds it). Outputs are written into the tensors given (strided
/// ones included); on an error the tensors may be partly written.
absl::Status run_prim_func(const Expr& func, const std::vector<PrimArg>& args,
                           const PrimEvalOptions& options = {});

}  // namespace relax::transform
