// Conformance rows of the reductions (sum, mean, max, min, prod, variance, std: attributes
// `axis` (int, list or absent) and `keepdims`), argmax/argmin (one `axis` or the flattened
// tensor; int64) and the scans cumsum/cumprod (one `axis` or the flattened tensor).
#include <algorithm>
#include <functional>

#include "families.h"
#include "reference/reference_reduce.h"

namespace relax::ops_test {
namespace {

const auto kPlus = [](double a, double b) { return a + b; };
const auto kTimes = [](double a, double b) { return a * b; };
const auto kMax = [](double a, double b) { return std::max(a, b); };
const auto kMin = [](double a, double b) { return std::min(a, b); };
constexpr double kInf = 1e300;

}  // namespace

namespace {

// topk along the last axis of a 2-D tensor by a stable sort of each row: the values and the
// indices (as int64 doubles).
std::vector<HostTensor> topk_reference(const HostTensor& x, int64_t k, bool largest) {
  const int64_t rows = x.shape[0], n = x.shape[1];
  HostTensor values = HostTensor::filled({rows, k}, x.dtype), indices = HostTensor::filled({rows, k}, DataType::int64());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? x.at({r, a}) > x.at({r, b}) : x.at({r, a}) < x.at({r, b});
    });
    for (int64_t j = 0; j < k; ++j) {
      values.at({r, j}) = x.at({r, order[static_cast<size_t>(j)]});
      indices.at({r, j}) = static_cast<double>(order[static_cast<size_t>(j)]);
    }
  }
  return {values, indices};
}

}  // namespace

OpRows reduce_rows() {
  const Sizes nm = {{"n", {1, 7, 300}}, {"m", {1, 13, 33}}};
  const Sizes e0 = {{"n", {3, 4, 0}}, {"m", {5, 0, 2}}};
  return {
      // sum.
      deduce("sum", "x: Tensor[(n, m), float32]", "sum(x, axis=[1])", "Tensor[(n,), float32]"),
      deduce("sum", "x: Tensor[(n, m), float32]", "sum(x, axis=-2)", "Tensor[(m,), float32]"),
      deduce("sum", "x: Tensor[(n, m), int32]", "sum(x)", "Tensor[(), int32]"),
      deduce("sum", "x: Tensor[(n, 4, m), float32]", "sum(x, axis=[0, 2], keepdims=true)",
             "Tensor[(1, 4, 1), float32]"),
      deduce("sum", "x: Tensor[(n, m), float32]", "sum(x, axis=[])", "Tensor[(n, m), float32]"),
      deduce("sum", "x: Tensor[ndim=3, float32]", "sum(x, axis=[0])", "Tensor[ndim=2, float32]"),
      deduce("sum", "x: Tensor[ndim=3, float32]", "sum(x)", "Tensor[(), float32]"),
      deduce("sum", "x: Tensor[ndim=?, float32]", "sum(x, axis=[0])", "Tensor[ndim=?, float32]"),
      deduce("sum", "x: Tensor[ndim=?, float32]", "sum(x)", "Tensor[(), float32]"),
      deduce("sum", "x: Tensor[(n, 3), ?]", "sum(x, axis=1)", "Tensor[(n,), ?]"),
      deduce("sum", "x: Tensor[(n, m), float32]", "sum(x, axis=[2])",
             error("sum: axis 2 in (2,) is out of range for rank 2 (x Tensor[(n, m), float32])")),
      deduce("sum", "x: Tensor[(n, m), float32]", "sum(x, axis=[0, -2])", error("sum: axis 0 appears twice in (0, -2)")),
      deduce("sum", "x: Tensor[(n,), bool]", "sum(x)", error("sum: argument 0 (x): expected a numeric tensor")),
      deduce("sum", "x: Tensor[(n,), float32]", "sum(x, keepdims=1.5)", error("sum: attribute `keepdims`")),
      numeric("sum", "x: Tensor[(n, m), float32]", "sum(x, axis=[1])", nm, ref_reduce({1}, false, 0, kPlus)),
      numeric("sum", "x: Tensor[(n, 4, m), float64]", "sum(x, axis=[0, 2], keepdims=true)", nm,
              ref_reduce({0, 2}, true, 0, kPlus)),
      numeric("sum", "x: Tensor[(n, m), int32]", "sum(x)", nm, ref_reduce({}, false, 0, kPlus)),
      numeric("sum", "x: Tensor[(n, m), float32]", "sum(x, axis=[])", nm,
              [](const RefInputs& in) { return in[0]; }),

      // mean.
      deduce("mean", "x: Tensor[(n, m), float32]", "mean(x, axis=1, keepdims=true)", "Tensor[(n, 1), float32]"),
      deduce("mean", "x: Tensor[ndim=2, float64]", "mean(x, axis=[1])", "Tensor[ndim=1, float64]"),
      deduce("mean", "x: Tensor[(n, m), int32]", "mean(x)",
             error("mean: argument 0 (x): expected a float tensor, got Tensor[(n, m), int32]")),
      numeric("mean", "x: Tensor[(n, m), float32]", "mean(x, axis=[0])", nm,
              [](const RefInputs& in) { return mean(in[0], {0}, false); }),
      numeric("mean", "x: Tensor[(n, 3, m), float64]", "mean(x)", nm,
              [](const RefInputs& in) { return mean(in[0], {}, false); }),
      numeric("mean", "x: Tensor[(n, m), float32]", "mean(x, axis=-1, keepdims=true)", nm,
              [](const RefInputs& in) { return mean(in[0], {-1}, true); }),

      // max, min.
      deduce("max", "x: Tensor[(n, m), int8]", "max(x, axis=[0])", "Tensor[(m,), int8]"),
      deduce("min", "x: Tensor[(n, m), float32]", "min(x, keepdims=true)", "Tensor[(1, 1), float32]"),
      deduce("max", "x: Tensor[(n,), float32]", "max(x, axis=[1])",
             error("max: axis 1 in (1,) is out of range for rank 1")),
      numeric("max", "x: Tensor[(n, m), float32]", "max(x, axis=[1])", nm, ref_reduce({1}, false, -kInf, kMax)),
      numeric("max", "x: Tensor[(n, m), int32]", "max(x)", nm, ref_reduce({}, false, -kInf, kMax)),
      numeric("max", "x: Tensor[(n, m), uint8]", "max(x, axis=[0], keepdims=true)", nm,
              ref_reduce({0}, true, -kInf, kMax)),
      numeric("min", "x: Tensor[(n, m), float64]", "min(x, axis=[0])", nm, ref_reduce({0}, false, kInf, kMin)),
      numeric("min", "x: Tensor[(n, m), int64]", "min(x)", nm, ref_reduce({}, false, kInf, kMin)),

      // prod.
      deduce("prod", "x: Tensor[(n, m), float32]", "prod(x, axis=[0, 1])", "Tensor[(), float32]"),
      numeric("prod", "x: Tensor[(n, m), float32]", "prod(x, axis=[1])", nm, ref_reduce({1}, false, 1, kTimes))
          .range(0.5, 1.5),
      numeric("prod", "x: Tensor[(n, m), int64]", "prod(x, axis=[1])", {{"n", {1, 7, 300}}, {"m", {1, 13, 20}}},
              ref_reduce({1}, false, 1, kTimes))
          .range(-2, 2),

      // variance, std (population).
      deduce("variance", "x: Tensor[(n, m), float32]", "variance(x, axis=[1])", "Tensor[(n,), float32]"),
      deduce("std", "x: Tensor[(n, m), float64]", "std(x, keepdims=true)", "Tensor[(1, 1), float64]"),
      deduce("variance", "x: Tensor[ndim=?, float32]", "variance(x)", "Tensor[(), float32]"),
      deduce("std", "x: Tensor[(n,), int32]", "std(x)", error("std: argument 0 (x): expected a float tensor")),
      deduce("variance", "x: Tensor[(n, m), float32]", "variance(x, axis=[3])",
             error("variance: axis 3 in (3,) is out of range for rank 2")),
      numeric("variance", "x: Tensor[(n, m), float32]", "variance(x, axis=[1])", nm,
              [](const RefInputs& in) { return variance(in[0], {1}, false, false); })
          .tolerance(1e-4),
      // Far from 0: a one-pass sum of squares would lose every digit here in float32.
      numeric("variance", "x: Tensor[(n, m), float32]", "variance(x)", nm,
              [](const RefInputs& in) { return variance(in[0], {}, false, false); })
          .range(1000, 1001)
          .tolerance(1e-3),
      numeric("variance", "x: Tensor[(n, 3, m), float64]", "variance(x, axis=[0, 2], keepdims=true)", nm,
              [](const RefInputs& in) { return variance(in[0], {0, 2}, true, false); }),
      // Nothing reduced: each element is its own mean.
      numeric("variance", "x: Tensor[(n, m), float32]", "variance(x, axis=[])", nm,
              ref_unary([](double) { return 0.0; })),
      numeric("std", "x: Tensor[(n, m), float32]", "std(x, axis=[0])", nm,
              [](const RefInputs& in) { return variance(in[0], {0}, false, true); })
          .tolerance(1e-4),
      numeric("std", "x: Tensor[(n, m), float64]", "std(x, axis=-1, keepdims=true)", nm,
              [](const RefInputs& in) { return variance(in[0], {-1}, true, true); }),

      // argmax, argmin.
      deduce("argmax", "x: Tensor[(n, m), float32]", "argmax(x, axis=1)", "Tensor[(n,), int64]"),
      deduce("argmax", "x: Tensor[(n, m), float32]", "argmax(x)", "Tensor[(), int64]"),
      deduce("argmin", "x: Tensor[(n, m), int32]", "argmin(x, axis=0, keepdims=true)", "Tensor[(1, m), int64]"),
      deduce("argmin", "x: Tensor[(n, m), float32]", "argmin(x, keepdims=true)", "Tensor[(1, 1), int64]"),
      deduce("argmax", "x: Tensor[ndim=3, float32]", "argmax(x, axis=2)", "Tensor[ndim=2, int64]"),
      deduce("argmax", "x: Tensor[ndim=?, float32]", "argmax(x, axis=2)", "Tensor[ndim=?, int64]"),
      deduce("argmax", "x: Tensor[(n, m), ?]", "argmax(x, axis=0)", "Tensor[(m,), int64]"),
      deduce("argmax", "x: Tensor[(n, m), float32]", "argmax(x, axis=2)",
             error("argmax: axis 2 is out of range for rank 2 (x Tensor[(n, m), float32])")),
      deduce("argmax", "x: Tensor[(n, m), float32]", "argmax(x, axis=[0, 1])", error("argmax: attribute `axis`")),
      deduce("argmin", "x: Tensor[(n,), bool]", "argmin(x)", error("argmin: argument 0 (x): expected a numeric tensor")),
      numeric("argmax", "x: Tensor[(n, m), float32]", "argmax(x, axis=1)", nm,
              [](const RefInputs& in) { return arg_extreme(in[0], 1, false, true); }),
      numeric("argmax", "x: Tensor[(n, m), float32]", "argmax(x)", nm,
              [](const RefInputs& in) { return arg_extreme(in[0], std::nullopt, false, true); }),
      // Many ties: the first index wins.
      numeric("argmax", "x: Tensor[(n, 4, m), int32]", "argmax(x, axis=0, keepdims=true)", nm,
              [](const RefInputs& in) { return arg_extreme(in[0], 0, true, true); })
          .range(0, 2),
      numeric("argmin", "x: Tensor[(n, m), int64]", "argmin(x, keepdims=true)", nm,
              [](const RefInputs& in) { return arg_extreme(in[0], std::nullopt, true, false); })
          .range(0, 3),
      numeric("argmin", "x: Tensor[(n, m), float64]", "argmin(x, axis=-1)", nm,
              [](const RefInputs& in) { return arg_extreme(in[0], -1, false, false); }),
      numeric("argmin", "x: Tensor[(n, m), uint8]", "argmin(x, axis=0)", nm,
              [](const RefInputs& in) { return arg_extreme(in[0], 0, false, false); })
          .range(0, 4),

      // cumsum, cumprod.
      deduce("cumsum", "x: Tensor[(n, m), float32]", "cumsum(x, axis=1)", "Tensor[(n, m), float32]"),
      deduce("cumsum", "x: Tensor[(n, m, 4), int32]", "cumsum(x)", "Tensor[(m * n * 4,), int32]"),
      deduce("cumprod", "x: Tensor[ndim=3, float32]", "cumprod(x)", "Tensor[ndim=1, float32]"),
      deduce("cumprod", "x: Tensor[ndim=3, float32]", "cumprod(x, axis=-1)", "Tensor[ndim=3, float32]"),
      deduce("cumsum", "x: Tensor[ndim=?, float32]", "cumsum(x, axis=4)", "Tensor[ndim=?, float32]"),
      deduce("cumsum", "x: Tensor[(n, m), float32]", "cumsum(x, axis=2)",
             error("cumsum: axis 2 is out of range for rank 2 (x Tensor[(n, m), float32])")),
      deduce("cumprod", "x: Tensor[(n,), bool]", "cumprod(x)", error("cumprod: argument 0 (x): expected a numeric tensor")),
      numeric("cumsum", "x: Tensor[(n, m), float32]", "cumsum(x, axis=1)", nm,
              [](const RefInputs& in) { return scan(in[0], 1, true); })
          .tolerance(1e-4),
      numeric("cumsum", "x: Tensor[(n, m), float64]", "cumsum(x, axis=0)", nm,
              [](const RefInputs& in) { return scan(in[0], 0, true); }),
      numeric("cumsum", "x: Tensor[(n, 3, m), int32]", "cumsum(x)", nm,
              [](const RefInputs& in) { return scan(in[0], std::nullopt, true); }),
      numeric("cumprod", "x: Tensor[(n, m), float32]", "cumprod(x, axis=-1)", nm,
              [](const RefInputs& in) { return scan(in[0], -1, false); })
          .range(0.5, 1.5)
          .tolerance(1e-4),
      numeric("cumprod", "x: Tensor[(n, m), int64]", "cumprod(x, axis=0)", {{"n", {1, 7, 20}}, {"m", {1, 13, 33}}},
              [](const RefInputs& in) { return scan(in[0], 0, false); })
          .range(-2, 2),

      // Empty extents, decided as numpy and PyTorch do: sum 0, prod 1, mean, variance and std
      // NaN; max, min, argmax and argmin have no value: deduction rejects a reduced dim of 0,
      // the kernel a symbolic one that is 0 when it runs. In `e0` the reduced m is 0 in run 1,
      // between runs where it is not (one compilation), and the kept n is 0 in run 2.
      deduce("sum", "x: Tensor[(n, 0), float32]", "sum(x, axis=[1])", "Tensor[(n,), float32]"),
      deduce("max", "x: Tensor[(n, 0), float32]", "max(x, axis=[1])",
             error("max: dim 1 of x is 0, and max over an empty extent has no value (x Tensor[(n, 0), float32])")),
      deduce("max", "x: Tensor[(n, 0), float32]", "max(x, axis=[0])", "Tensor[(0,), float32]"),
      deduce("min", "x: Tensor[(0, m), int32]", "min(x)", error("min: dim 0 of x is 0")),
      deduce("argmax", "x: Tensor[(n, 0), float32]", "argmax(x, axis=-1)", error("argmax: dim 1 of x is 0")),
      deduce("argmin", "x: Tensor[(0, m), float32]", "argmin(x)", error("argmin: dim 0 of x is 0")),
      deduce("argmin", "x: Tensor[(0, m), float32]", "argmin(x, axis=1)", "Tensor[(0,), int64]"),
      numeric("sum", "x: Tensor[(n, m), float32]", "sum(x, axis=[1])", e0, ref_reduce({1}, false, 0, kPlus)),
      numeric("sum", "x: Tensor[(n, m), int32]", "sum(x)", e0, ref_reduce({}, false, 0, kPlus)),
      numeric("sum", "x: Tensor[(3, 0), float64]", "sum(x, axis=[1], keepdims=true)", ref_reduce({1}, true, 0, kPlus)),
      // A loop of extent 0 that simplify-loops removes still leaves the product's init, 1.
      numeric("prod", "x: Tensor[(3, 0), float32]", "prod(x, axis=[1])", ref_reduce({1}, false, 1, kTimes)),
      numeric("prod", "x: Tensor[(n, m), float32]", "prod(x, axis=[1])", e0, ref_reduce({1}, false, 1, kTimes)),
      numeric("prod", "x: Tensor[(n, m), int64]", "prod(x, axis=[1])", e0, ref_reduce({1}, false, 1, kTimes))
          .range(-2, 2),
      numeric("mean", "x: Tensor[(n, m), float32]", "mean(x, axis=[1])", e0,
              [](const RefInputs& in) { return mean(in[0], {1}, false); }),
      numeric("mean", "x: Tensor[(n, m), float64]", "mean(x)", e0,
              [](const RefInputs& in) { return mean(in[0], {}, false); }),
      numeric("variance", "x: Tensor[(n, m), float32]", "variance(x, axis=[1])", e0,
              [](const RefInputs& in) { return variance(in[0], {1}, false, false); }),
      numeric("std", "x: Tensor[(n, m), float64]", "std(x, axis=-1, keepdims=true)", e0,
              [](const RefInputs& in) { return variance(in[0], {-1}, true, true); }),
      numeric("max", "x: Tensor[(n, m), float32]", "max(x, axis=[1])", e0,
              fails_when_zero("m", "max: dim 1 of x (a reduced dim) is 0", ref_reduce({1}, false, -kInf, kMax))),
      // Only the kept dim may be 0.
      numeric("max", "x: Tensor[(n, m), float32]", "max(x, axis=[0])", {{"n", {3, 1, 2}}, {"m", {4, 0, 5}}},
              ref_reduce({0}, false, -kInf, kMax)),
      numeric("min", "x: Tensor[(n, m), int32]", "min(x)", e0,
              fails_when_zero("n", "min: dim 0 of x (a reduced dim) is 0",
                              fails_when_zero("m", "min: dim 1 of x (a reduced dim) is 0",
                                              ref_reduce({}, false, kInf, kMin)))),
      numeric("argmax", "x: Tensor[(n, m), float32]", "argmax(x, axis=1)", e0,
              fails_when_zero("m", "argmax: dim 1 of x (a reduced dim) is 0",
                              [](const RefInputs& in) { return arg_extreme(in[0], 1, false, true); })),
      numeric("argmin", "x: Tensor[(n, m), float32]", "argmin(x)", e0,
              fails_when_zero("n", "argmin: dim 0 of x (a reduced dim) is 0",
                              fails_when_zero("m", "argmin: dim 1 of x (a reduced dim) is 0", [](const RefInputs& in) {
                                return arg_extreme(in[0], std::nullopt, false, false);
                              }))),
      numeric("argmin", "x: Tensor[(n, m), int32]", "argmin(x, axis=1, keepdims=true)",
              {{"n", {3, 0, 2}}, {"m", {4, 5, 1}}},
              [](const RefInputs& in) { return arg_extreme(in[0], 1, true, false); }),
      numeric("cumsum", "x: Tensor[(n, m), float32]", "cumsum(x, axis=1)", e0,
              [](const RefInputs& in) { return scan(in[0], 1, true); }),
      numeric("cumprod", "x: Tensor[(n, m), float32]", "cumprod(x)", e0,
              [](const RefInputs& in) { return scan(in[0], std::nullopt, false); }),
      // topk: the k best along the axis, sorted, equal ones in index order (a stable sort).
      deduce("topk", "x: Tensor[(n, 10), float32]", "topk(x, k=3)",
             "Tuple[(Tensor[(n, 3), float32], Tensor[(n, 3), int64])]"),
      deduce("topk", "x: Tensor[(n, m), float32]", "topk(x, k=2, axis=0, largest=false)",
             error("topk: k = 2 is not provably at most dim 0 of x, `n`")),
      deduce("topk", "x: Tensor[(n, 10), float32]", "topk(x, k=11)",
             error("topk: k = 11 is not provably at most dim 1 of x, `10`")),
      deduce("topk", "x: Tensor[(n, 10), int32]", "topk(x, k=3)",
             error("topk: argument 0 (x): expected a float tensor, got Tensor[(n, 10), int32]")),
      numeric("topk", "x: Tensor[(n, 12), float32]", "topk(x, k=4)", {{"n", {1, 5, 40}}},
              [](const RefInputs& in) { return RefResult::tuple(topk_reference(in[0], 4, true)); })
          .range(-3, 3),
      numeric("topk", "x: Tensor[(n, 12), float32]", "topk(x, k=12, largest=false)", {{"n", {2, 7}}},
              [](const RefInputs& in) { return RefResult::tuple(topk_reference(in[0], 12, false)); })
          .range(-2, 2),
  };
}

}  // namespace relax::ops_test
