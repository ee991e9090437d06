// The operator conformance table: every operator is tested by rows, written in the IR text
// format, not by a test file of its own. A family of operators keeps its rows in
// tests/ops/rows/rows_<family>.cc, one function returning OpRows, listed once in families.cc.
//
// Two kinds of rows. Both give the operator's name, the parameters of a function (the text
// between the parentheses of `func @main(...)`) and one call of the operator over them:
//
//   deduce(op, params, call, annotation)
//   deduce(op, params, call, error(substring))
//       Parses `func @main(<params>) -> Object { y = <call>  return y }` (parsing deduces every
//       binding) and compares y's annotation, as text, with `annotation`; or expects the parse
//       to fail with a message that contains `substring`, which must name the op (so that a
//       syntax error in the row cannot pass for the op's error).
//
//   numeric(op, params, call, reference)
//   numeric(op, params, call, sizes, reference)
//       Builds the function (its return annotation is the deduced one), compiles it with
//       relax::build -- once, together with every numeric row of its family, as one module --
//       and calls it once per size set: each symbolic variable of the parameters takes its
//       i-th listed value in run i (zipped, not a product; every list has the same length).
//       A variable not listed takes kDefaultSizes. Inputs are random (deterministic per row,
//       run and input; floats in [-1, 1], signed ints in [-10, 10], unsigned in [0, 20], bool
//       half true); Prim parameters get a random scalar, Shape parameters their dims. The
//       result is compared with `reference` (reference.h) on the same inputs: shape, dtype,
//       and values within rtol/atol for floats (kDefaultTolerance unless the row says), exactly
//       for integers and bool.
//       A reference may instead return RefResult::failure(substring) for a run (an op with
//       no value at those sizes: argmax over an axis of extent 0): the call must then fail
//       with a message containing `substring`, which names the op.
//       Options, chained on the row: .tolerance(rtol, atol) .range(lo, hi) (every input)
//       .range(input, lo, hi) (one input, by position) .inputs(generator) (reference.h).
//
// For example (rows_elementwise.cc):
//
//   OpRows elementwise_rows() {
//     return {
//       deduce("add", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "add(x, y)",
//              "Tensor[(n, m), float32]"),
//       deduce("add", "x: Tensor[(2, n), float32], y: Tensor[(2, m), float32]", "add(x, y)",
//              error("add: cannot broadcast dim 1: `n` vs `m`")),
//       numeric("add", "x: Tensor[(n, 1), float32], y: Tensor[(1, m), float32]", "add(x, y)",
//               {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, ref_binary(std::plus<double>())),
//       numeric("exp", "x: Tensor[(n, 3), float32]", "exp(x)",
//               ref_unary([](double v) { return std::exp(v); })).range(-4, 4),
//     };
//   }
//
// Each row is one gtest case, `Op/Deduce.Row/<op>_<k>` or `Op/Numeric.Row/<op>_<k>` (k counts
// the rows of that kind of the op in table order: --gtest_filter='*/matmul_*'); a failure names
// the row's file and line, its text and both sides. A family whose module fails to build
// falls back to one build per row, so that only the rows at fault fail.
//
// Keep the suite fast: every numeric row of a family shares one compilation, a run costs the
// reference's plain loops, and an input of more than kMaxInputElements is refused. Under
// ctest each row is a process of its own; the kernels come from the JIT cache in the test
// temporary directory after the family's first row.
//
// Rules: `call` is one call of the op (nested calls would make several bindings); parameters
// must not be named `row_result` (the binding's name); symbolic variables are named by the
// parameters (they define them, as in any function) and sized by name.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "reference/reference.h"

namespace relax::ops_test {

/// Where a row was written (filled in by the row constructors' default arguments).
struct RowSite {
  const char* file = "";
  int line = 0;
};

/// The expected failure of a deduction row: a substring of the message, naming the op.
struct ExpectedError {
  std::string substring;
};
/// A deduction row that must fail with a message containing `substring`.
ExpectedError error(std::string substring);

/// A deduction row: the call's deduced annotation, or its error.
struct DeduceRow {
  std::string op;
  std::string params;
  std::string call;
  std::string expected;  ///< the annotation text, or the error substring
  bool expect_error = false;
  RowSite site;
};

/// The values one symbolic variable takes, one per run.
struct DimSizes {
  std::string var;
  std::vector<int64_t> values;
};
using Sizes = std::vector<DimSizes>;
/// The sizes of a variable a row does not list: 1, a prime, a large size.
inline const std::vector<int64_t> kDefaultSizes = {1, 13, 300};
/// The largest input a row may make (keeps the suite fast).
inline constexpr int64_t kMaxInputElements = 1 << 20;

/// Default tolerances of float results: |got - want| <= atol + rtol * |want|.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-5;
};
inline constexpr Tolerance kDefaultTolerance{};

/// A deterministic random source for inputs.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  /// The next 64 random bits (splitmix64).
  uint64_t next();
  /// A double uniform in [lo, hi).
  double uniform(double lo, double hi);
  /// An integer uniform in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi);

 private:
  uint64_t state_;
};

/// What an input generator is asked for: parameter `input` (its position), of `shape` and
/// `dtype` (a Prim parameter has rank 0).
struct InputSpec {
  size_t input = 0;
  std::vector<int64_t> shape;
  DataType dtype;
};
/// Makes one input; must give `spec.shape` and `spec.dtype`, and use only `rng` for randomness.
using InputGenerator = std::function<HostTensor(const InputSpec& spec, Rng& rng)>;

/// A numerical row: the op compiled and run at several sizes against a reference.
struct NumericRow {
  std::string op;
  std::string params;
  std::string call;
  Sizes sizes;
  Reference reference;
  std::optional<Tolerance> tol;  ///< kDefaultTolerance scaled to the dtype when absent
  struct Range {
    std::optional<size_t> input;  ///< every input when absent
    double lo, hi;
  };
  std::vector<Range> ranges;  ///< later entries win
  InputGenerator generator;   ///< replaces ranges when set
  RowSite site;

  /// Float results within |got - want| <= atol + rtol * |want| (atol defaults to rtol).
  NumericRow tolerance(double rtol, std::optional<double> atol = std::nullopt) &&;
  /// Every input drawn from [lo, hi] (integers: the integers in it).
  NumericRow range(double lo, double hi) &&;
  /// Parameter `input` (by position) drawn from [lo, hi].
  NumericRow range(size_t input, double lo, double hi) &&;
  /// Every input made by `generator`.
  NumericRow inputs(InputGenerator generator) &&;
};

/// One row of the table.
using OpRow = std::variant<DeduceRow, NumericRow>;
/// The rows of a family.
using OpRows = std::vector<OpRow>;

/// A deduction row expecting the annotation `annotation` (StructInfo text) for `call`.
DeduceRow deduce(std::string op, std::string params, std::string call, std::string annotation,
                 const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// A deduction row expecting `call` to be rejected with `expected`.
DeduceRow deduce(std::string op, std::string params, std::string call, ExpectedError expected,
                 const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// A numerical row with kDefaultSizes for every symbolic variable.
NumericRow numeric(std::string op, std::string params, std::string call, Reference reference,
                   const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// A numerical row with the given sizes (unlisted variables take kDefaultSizes).
NumericRow numeric(std::string op, std::string params, std::string call, Sizes sizes, Reference reference,
                   const char* file = __builtin_FILE(), int line = __builtin_LINE());

/// Default input generation: the row's ranges, else the dtype's default range.
HostTensor default_input(const NumericRow& row, const InputSpec& spec, Rng& rng);

}  // namespace relax::ops_test
