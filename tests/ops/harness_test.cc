// Tests of the conformance machinery itself: the plain-loop references against hand-computed
// values, and the harness failing (with a readable message) on rows that are wrong, so that a
// passing table means something.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>

#include "harness.h"

namespace relax::ops_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

HostTensor tensor(std::vector<int64_t> shape, std::vector<double> values, DataType dtype = DataType::float32()) {
  HostTensor t;
  t.shape = std::move(shape);
  t.values = std::move(values);
  t.dtype = dtype;
  return t;
}

CallResult result(HostTensor t) {
  CallResult r;
  r.fields.push_back(std::move(t));
  r.scalar.push_back(false);
  return r;
}

// ---------------------------------------------------------------------------
// References.

TEST(Reference, BinaryBroadcastsLikeNumpy) {
  const HostTensor col = tensor({2, 1}, {1, 2});
  const HostTensor row = tensor({3}, {10, 20, 30});
  const HostTensor sum = map_binary(col, row, std::plus<double>());
  EXPECT_THAT(sum.shape, ElementsAre(2, 3));
  EXPECT_THAT(sum.values, ElementsAre(11, 21, 31, 12, 22, 32));
  const HostTensor scaled = map_binary(HostTensor::scalar(2, DataType::float32()), row, std::multiplies<double>());
  EXPECT_THAT(scaled.shape, ElementsAre(3));
  EXPECT_THAT(scaled.values, ElementsAre(20, 40, 60));
}

TEST(Reference, MatmulOfMatricesVectorsAndBatches) {
  const HostTensor a = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor b = tensor({3, 2}, {7, 8, 9, 10, 11, 12});
  const HostTensor ab = matmul(a, b);
  EXPECT_THAT(ab.shape, ElementsAre(2, 2));
  EXPECT_THAT(ab.values, ElementsAre(58, 64, 139, 154));
  const HostTensor v = tensor({3}, {1, 0, -1});
  EXPECT_THAT(matmul(a, v).shape, ElementsAre(2));
  EXPECT_THAT(matmul(a, v).values, ElementsAre(-2, -2));
  EXPECT_THAT(matmul(v, b).shape, ElementsAre(2));
  EXPECT_THAT(matmul(v, b).values, ElementsAre(-4, -4));
  EXPECT_TRUE(matmul(v, v).shape.empty());
  EXPECT_THAT(matmul(v, v).values, ElementsAre(2));
  // A batch of two lhs matrices against one rhs, and a vector against a batch.
  const HostTensor batch = tensor({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(matmul(batch, b).shape, ElementsAre(2, 1, 2));
  EXPECT_THAT(matmul(batch, b).values, ElementsAre(58, 64, 139, 154));
  const HostTensor bb = tensor({2, 3, 1}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(matmul(v, bb).shape, ElementsAre(2, 1));
  EXPECT_THAT(matmul(v, bb).values, ElementsAre(-2, -2));
}

TEST(Reference, ReduceKeepsOrDropsAxes) {
  const HostTensor x = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto add = std::plus<double>();
  EXPECT_THAT(reduce(x, {1}, false, 0, add).values, ElementsAre(6, 15));
  EXPECT_THAT(reduce(x, {1}, true, 0, add).shape, ElementsAre(2, 1));
  EXPECT_THAT(reduce(x, {-2}, false, 0, add).values, ElementsAre(5, 7, 9));
  EXPECT_TRUE(reduce(x, {}, false, 0, add).shape.empty());
  EXPECT_THAT(reduce(x, {}, true, 0, add).shape, ElementsAre(1, 1));
  EXPECT_THAT(reduce(x, {}, false, 0, add).values, ElementsAre(21));
}

TEST(Reference, SoftmaxPermuteAndReshape) {
  const HostTensor s = softmax(tensor({2, 2}, {0, std::log(3.0), 1000, 1000}), -1);
  EXPECT_NEAR(s.values[0], 0.25, 1e-12);
  EXPECT_NEAR(s.values[1], 0.75, 1e-12);
  EXPECT_NEAR(s.values[2], 0.5, 1e-12);  // subtracting the max keeps large inputs finite
  const HostTensor x = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(permute_dims(x).shape, ElementsAre(3, 2));
  EXPECT_THAT(permute_dims(x).values, ElementsAre(1, 4, 2, 5, 3, 6));
  EXPECT_THAT(reshape(x, {-1, 2}).shape, ElementsAre(3, 2));
  const HostTensor y = tensor({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(permute_dims(y, {2, 0, 1}).values, ElementsAre(1, 4, 2, 5, 3, 6));
}

// ---------------------------------------------------------------------------
// Comparison.

TEST(CompareResults, FloatsWithinToleranceIntegersExactly) {
  const Tolerance tol{1e-5, 1e-5};
  EXPECT_EQ(compare_results(result(tensor({2}, {1, 2.000001})), tensor({2}, {1, 2}), tol), "");
  EXPECT_THAT(compare_results(result(tensor({2}, {1, 2.1})), tensor({2}, {1, 2}), tol),
              HasSubstr("1 of 2 elements differ; first at (1): got 2.1, want 2"));
  const DataType i32 = DataType::int32();
  EXPECT_THAT(compare_results(result(tensor({1}, {3}, i32)), tensor({1}, {4}, i32), Tolerance{1, 1}),
              HasSubstr("got 3, want 4"));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(compare_results(result(tensor({1}, {nan})), tensor({1}, {nan}), tol), "");
  EXPECT_THAT(compare_results(result(tensor({1}, {nan})), tensor({1}, {0}), tol), HasSubstr("differ"));
}

TEST(CompareResults, ShapeDtypeAndArity) {
  const Tolerance tol;
  EXPECT_THAT(compare_results(result(tensor({2}, {1, 2})), tensor({1, 2}, {1, 2}), tol),
              HasSubstr("got Tensor[(2,), float32], the reference gives Tensor[(1, 2), float32]"));
  EXPECT_THAT(compare_results(result(tensor({2}, {1, 2})), tensor({2}, {1, 2}, DataType::float64()), tol),
              HasSubstr("the reference gives Tensor[(2,), float64]"));
  EXPECT_THAT(compare_results(result(tensor({2}, {1, 2})),
                              RefResult::tuple({tensor({2}, {1, 2}), tensor({2}, {1, 2})}), tol),
              HasSubstr("got 1 outputs, the reference gives 2"));
}

TEST(HostTensors, RoundTripThroughRuntimeTensors) {
  for (DataType dtype : {DataType::float32(), DataType::float64(), DataType::int32(), DataType::int64(),
                         DataType{DataType::Code::kUInt, 8, 1}, DataType::boolean(), DataType::float16(),
                         DataType{DataType::Code::kBFloat, 16, 1}}) {
    const HostTensor x = tensor({3}, {0, 1, 0.5 * (dtype.code == DataType::Code::kFloat ||
                                                   dtype.code == DataType::Code::kBFloat)},
                                dtype);
    const HostTensor back = to_host(to_runtime(x));
    EXPECT_EQ(back.describe(), x.describe());
    EXPECT_EQ(back.values, x.values) << dtype.to_string();
  }
}

// ---------------------------------------------------------------------------
// Deduction rows that must fail.

TEST(CheckDeduceRow, WrongAnnotationFails) {
  EXPECT_EQ(check_deduce_row(deduce("exp", "x: Tensor[(n,), float32]", "exp(x)", "Tensor[(n,), float32]")), "");
  EXPECT_THAT(check_deduce_row(deduce("exp", "x: Tensor[(n,), float32]", "exp(x)", "Tensor[(m,), float32]")),
              HasSubstr("expected: Tensor[(m,), float32]\n  got:      Tensor[(n,), float32]"));
  EXPECT_THAT(check_deduce_row(deduce("exp", "x: Tensor[(n,), int32]", "exp(x)", "Tensor[(n,), int32]")),
              HasSubstr("got the error: 3:"));
}

TEST(CheckDeduceRow, ErrorRowsMustNameTheOpAndFailAtTheCall) {
  EXPECT_EQ(check_deduce_row(deduce("exp", "x: Tensor[(n,), int32]", "exp(x)", error("exp: argument 0"))), "");
  EXPECT_THAT(check_deduce_row(deduce("exp", "x: Tensor[(n,), int32]", "exp(x)", error("argument 0"))),
              HasSubstr("must name the op `exp`"));
  // A mistake in the parameters' text is not the op's error, even when the text matches.
  EXPECT_THAT(check_deduce_row(deduce("exp", "x: Tensor[(n,), flaot32]", "exp(x)", error("flaot32"))),
              HasSubstr("must name the op"));
  EXPECT_THAT(check_deduce_row(deduce("exp", "exp: Tensor[(n,), flaot32]", "exp(exp)", error("exp"))),
              HasSubstr("expected the error at the call (line 3:)"));
  EXPECT_THAT(check_deduce_row(deduce("exp", "x: Tensor[(n,), float32]", "exp(x)", error("exp: argument"))),
              HasSubstr("expected an error containing: exp: argument"));
}

// ---------------------------------------------------------------------------
// Numerical rows: a family of its own, built once for these tests.

class CheckNumericRow : public ::testing::Test {
 protected:
  static const OpRows& rows() {
    static const OpRows* rows = new OpRows{
        numeric("add", "x: Tensor[(n, 2), float32], y: Tensor[(2,), float32]", "add(x, y)",
                {{"n", {1, 7, 300}}}, ref_binary(std::plus<double>())),
        numeric("add", "x: Tensor[(n, 2), float32], y: Tensor[(2,), float32]", "add(x, y)",
                ref_binary(std::minus<double>())),
        numeric("exp", "x: Tensor[(n,), float32]", "exp(x)", {{"m", {1, 2, 3}}},
                ref_unary([](double v) { return std::exp(v); })),
        numeric("add", "x: Tensor[(n, m), float32], y: Tensor[(n, m), float32]", "add(x, y)",
                {{"n", {1, 2}}, {"m", {1, 2, 3}}}, ref_binary(std::plus<double>())),
        numeric("add", "x: Tensor[(n, m), float32], y: Tensor[(n, m), float32]", "add(x, y)",
                {{"n", {1, 2, 3000}}, {"m", {1, 2, 3000}}}, ref_binary(std::plus<double>())),
        numeric("add", "x: Tensor[(n,), float32]", "add(x, y)", ref_unary([](double v) { return v; })),
        // Records the runs it sees.
        numeric("multiply", "x: Tensor[(n, m), int32], s: Prim[int32]", "multiply(x, s)",
                {{"n", {1, 7, 30}}, {"m", {2, 3, 5}}},
                [](const RefInputs& in) {
                  seen().push_back({in.dim("n"), in.dim("m"), in[1].ndim()});
                  return map_binary(in[0], in[1], std::multiplies<double>());
                })
            .range(-3, 3),
    };
    return *rows;
  }
  static std::vector<std::vector<int64_t>>& seen() {
    static std::vector<std::vector<int64_t>> runs;
    return runs;
  }
  static std::string check(size_t row) { return check_numeric_row("harness_self_test", rows(), row); }
};

TEST_F(CheckNumericRow, ARightReferencePassesAWrongOneFails) {
  EXPECT_EQ(check(0), "");
  const std::string wrong = check(1);
  EXPECT_THAT(wrong, HasSubstr("numeric row of add"));
  EXPECT_THAT(wrong, HasSubstr("run 0 (n=1): "));
  EXPECT_THAT(wrong, HasSubstr("elements differ; first at (0, 0)"));
}

TEST_F(CheckNumericRow, SizesAreZippedPerVariable) {
  seen().clear();
  EXPECT_EQ(check(6), "");
  EXPECT_THAT(seen(), ElementsAre(ElementsAre(1, 2, 0), ElementsAre(7, 3, 0), ElementsAre(30, 5, 0)));
}

TEST_F(CheckNumericRow, BadSizesAndCallsAreReported) {
  EXPECT_THAT(check(2), HasSubstr("sizes name `m`, which the parameters do not define"));
  EXPECT_THAT(check(3), HasSubstr("the size lists have different lengths"));
  EXPECT_THAT(check(4), HasSubstr("has 9000000 elements, more than 1048576: list smaller sizes"));
  EXPECT_THAT(check(5), HasSubstr("deduction failed"));
}

}  // namespace
}  // namespace relax::ops_test
