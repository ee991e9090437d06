// The machinery behind the conformance rows (op_rows.h): it turns a row into IR text, parses,
// builds and runs it, and compares with the reference. conformance_test.cc makes one gtest
// case per row of it; harness_test.cc tests the machinery itself.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "op_rows.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"

namespace relax::ops_test {

/// One row of the table, as a gtest parameter.
struct RowCase {
  size_t family = 0;  ///< index into op_families()
  size_t row = 0;     ///< index into that family's rows
  std::string name;   ///< "<op>_<k>": the k-th row of its kind for this op, in table order
};

/// Prints a case as its name (gtest shows the parameter of a failing case).
void PrintTo(const RowCase& c, std::ostream* os);

/// The rows of every family (made once).
const std::vector<OpRows>& all_rows();
/// The deduction rows, and the numerical rows, of every family as gtest parameters.
std::vector<RowCase> deduce_cases();
std::vector<RowCase> numeric_cases();

/// The text of the module a row builds: `func @<name>(<params>) -> <ret> { y = <call> ... }`.
std::string row_function_text(const std::string& name, const std::string& params, const std::string& call,
                              const std::string& ret);

/// Runs deduction row `row`: "" when it holds, else what went wrong (with the row's text).
std::string check_deduce_row(const DeduceRow& row);

/// Runs numerical row `row_index` of the family `family` whose rows are `rows` (building one
/// module of all its numerical rows the first time a row of `family` runs in the process):
/// "" when every run matches, else what went wrong.
std::string check_numeric_row(const std::string& family, const OpRows& rows, size_t row_index);

/// A call's result as host tensors: a tensor, the fields of a tuple, a shape (1-D int64) or
/// a scalar (rank 0, int64 or float64 whatever the Prim's dtype: `scalar` marks those).
struct CallResult {
  std::vector<HostTensor> fields;
  std::vector<bool> scalar;  ///< parallel to fields
  bool is_tuple = false;
};
CallResult result_of(const runtime::Value& v);

/// Compares a result with a reference: "" when they agree, else the first difference (the
/// shape, the dtype, or the first element out of tolerance and the count of such elements).
/// `tol` applies to float dtypes; integer and bool values must be equal.
std::string compare_results(const CallResult& got, const RefResult& want, Tolerance tol);

/// Conversions between runtime tensors and host tensors (every scalar dtype, float16 and
/// bfloat16 by their bit patterns).
HostTensor to_host(const runtime::Tensor& t);
runtime::Tensor to_runtime(const HostTensor& t);

/// The tolerance of float results of `dtype` when a row gives none: kDefaultTolerance for
/// float32, tighter for float64, looser for float16 and bfloat16.
Tolerance default_tolerance(DataType dtype);

}  // namespace relax::ops_test
