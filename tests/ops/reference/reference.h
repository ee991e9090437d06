// The references of the operator conformance rows (op_rows.h): a host tensor of doubles and
// plain-loop implementations of what operators compute, independent of relax's legalization
// and kernels. A reference computes in double precision; the harness compares the operator's
// result with it under the row's tolerance (exactly for integers and bool).
//
// A row's reference is a Reference: a function from the row's inputs (RefInputs: one
// HostTensor per parameter of the row's function, and the sizes of the run) to the expected
// result. The ref_* factories at the end build the common forms; anything else is a lambda:
//
//   ref_unary([](double x) { return std::exp(x); })
//   ref_binary([](double a, double b) { return a + b; })
//   [](const RefInputs& in) { return matmul(in[0], in[1]); }
//   [](const RefInputs& in) { return reshape(in[0], {in.dim("n") * 2, 3}); }
//
// New families add their plain loops here (conv, pooling, attention...), each a function of
// HostTensors, so that rows and later references can reuse them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "relax/support/data_type.h"

namespace relax::ops_test {

/// A dense row-major tensor on the host with its values as doubles (exact for every integer
/// of up to 53 bits, every bool and every float32/float16/bfloat16 value).
struct HostTensor {
  std::vector<int64_t> shape;
  DataType dtype = DataType::float32();
  std::vector<double> values;

  /// A tensor of `shape` filled with `fill`.
  static HostTensor filled(std::vector<int64_t> shape, DataType dtype, double fill = 0);
  /// A rank-0 tensor holding `value`.
  static HostTensor scalar(double value, DataType dtype);

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return static_cast<int64_t>(values.size()); }
  /// The element at a full multi-index (one entry per dim).
  double at(const std::vector<int64_t>& index) const;
  double& at(const std::vector<int64_t>& index);
  /// "Tensor[(2, 3), float32]".
  std::string describe() const;
};

/// Number of elements of `shape` (1 for rank 0).
int64_t numel_of(const std::vector<int64_t>& shape);
/// Row-major strides of `shape`, in elements.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
/// The multi-index of flat position `flat` in `shape` (row-major).
std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape);
/// `axis` in [-rank, rank) as an index in [0, rank).
int64_t normalize_axis(int64_t axis, int64_t rank);

// ---------------------------------------------------------------------------
// Plain-loop implementations.

/// f applied to every element; the result has `out` dtype (x's when absent).
HostTensor map_unary(const HostTensor& x, const std::function<double(double)>& f,
                     std::optional<DataType> out = std::nullopt);
/// numpy broadcasting of two shapes (dims aligned at the end, 1 stretches); aborts when they
/// do not broadcast (the harness only calls it on shapes the operator accepted).
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
/// f(a, b) elementwise under numpy broadcasting; `out` dtype, else a's.
HostTensor map_binary(const HostTensor& a, const HostTensor& b, const std::function<double(double, double)>& f,
                      std::optional<DataType> out = std::nullopt);
/// Folds `combine` from `init` over `axes` (all dims when empty), keeping them as dims of 1
/// when `keepdims`; `out` dtype, else x's.
HostTensor reduce(const HostTensor& x, std::vector<int64_t> axes, bool keepdims, double init,
                  const std::function<double(double, double)>& combine,
                  std::optional<DataType> out = std::nullopt);
/// numpy matmul: 1-D operands are promoted to a matrix and the added dim is removed from the
/// result; batch dims broadcast. Accumulates in double.
HostTensor matmul(const HostTensor& a, const HostTensor& b);
/// exp(x - max) / sum(exp(x - max)) along `axis`.
HostTensor softmax(const HostTensor& x, int64_t axis);
/// The same values in `shape` (one -1 is inferred from the element count).
HostTensor reshape(const HostTensor& x, std::vector<int64_t> shape);
/// Dims permuted: result dim i is x's dim axes[i]; empty axes reverse the dims.
HostTensor permute_dims(const HostTensor& x, std::vector<int64_t> axes = {});

// ---------------------------------------------------------------------------
// References of rows.

/// What a reference receives: one tensor per parameter of the row's function, in order (a
/// Prim parameter as a rank-0 tensor, a Shape parameter as a 1-D int64 tensor of its dims),
/// and the value of each symbolic variable in this run.
struct RefInputs {
  std::vector<HostTensor> args;
  std::map<std::string, int64_t> dims;

  const HostTensor& operator[](size_t i) const;
  /// The value of the symbolic variable `var` in this run (aborts when there is none).
  int64_t dim(const std::string& var) const;
};

/// What a reference returns: one tensor, the fields of a tuple result, or the error the call
/// must fail with in this run (an op without a value for these sizes: argmax over an empty
/// axis).
struct RefResult {
  RefResult(HostTensor t) : fields{std::move(t)} {}  // NOLINT(google-explicit-constructor)
  static RefResult tuple(std::vector<HostTensor> fields);
  /// The call must fail with a message containing `substring`, which must name the op.
  static RefResult failure(std::string substring);

  std::vector<HostTensor> fields;
  bool is_tuple = false;
  std::optional<std::string> error;  ///< set by failure()

 private:
  RefResult() = default;
};

/// The reference of a numeric row.
using Reference = std::function<RefResult(const RefInputs&)>;

/// `ref`, except in a run where the symbolic variable `var` is 0: there the call must fail with
/// a message containing `error` (an op without a value over an empty extent).
Reference fails_when_zero(std::string var, std::string error, Reference ref);

/// f on every element of parameter 0; dtype `out`, else parameter 0's.
Reference ref_unary(std::function<double(double)> f, std::optional<DataType> out = std::nullopt);
/// f on parameters 0 and 1 under numpy broadcasting (a Prim is a rank-0 operand); dtype `out`,
/// else parameter 0's.
Reference ref_binary(std::function<double(double, double)> f, std::optional<DataType> out = std::nullopt);
/// `combine` folded from `init` over `axes` of parameter 0 (all when empty).
Reference ref_reduce(std::vector<int64_t> axes, bool keepdims, double init,
                     std::function<double(double, double)> combine, std::optional<DataType> out = std::nullopt);

}  // namespace relax::ops_test
