// The row constructors of the conformance table and its input generation.
#include "op_rows.h"

#include <cmath>
#include <utility>

#include "relax/support/dtype_util.h"
#include "relax/support/float_format.h"

namespace relax::ops_test {

ExpectedError error(std::string substring) { return ExpectedError{std::move(substring)}; }

DeduceRow deduce(std::string op, std::string params, std::string call, std::string annotation, const char* file,
                 int line) {
  return DeduceRow{std::move(op), std::move(params), std::move(call), std::move(annotation), false, {file, line}};
}

DeduceRow deduce(std::string op, std::string params, std::string call, ExpectedError expected, const char* file,
                 int line) {
  return DeduceRow{std::move(op),      std::move(params), std::move(call), std::move(expected.substring),
                   true,               {file, line}};
}

NumericRow numeric(std::string op, std::string params, std::string call, Reference reference, const char* file,
                   int line) {
  return numeric(std::move(op), std::move(params), std::move(call), Sizes{}, std::move(reference), file, line);
}

NumericRow numeric(std::string op, std::string params, std::string call, Sizes sizes, Reference reference,
                   const char* file, int line) {
  NumericRow row;
  row.op = std::move(op);
  row.params = std::move(params);
  row.call = std::move(call);
  row.sizes = std::move(sizes);
  row.reference = std::move(reference);
  row.site = {file, line};
  return row;
}

NumericRow NumericRow::tolerance(double rtol, std::optional<double> atol) && {
  tol = Tolerance{rtol, atol.value_or(rtol)};
  return std::move(*this);
}

NumericRow NumericRow::range(double lo, double hi) && {
  ranges.push_back(Range{std::nullopt, lo, hi});
  return std::move(*this);
}

NumericRow NumericRow::range(size_t input, double lo, double hi) && {
  ranges.push_back(Range{input, lo, hi});
  return std::move(*this);
}

NumericRow NumericRow::inputs(InputGenerator g) && {
  generator = std::move(g);
  return std::move(*this);
}

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Rng::uniform(double lo, double hi) {
  const double unit = static_cast<double>(next() >> 11) * 0x1.0p-53;  // [0, 1)
  return lo + (hi - lo) * unit;
}

int64_t Rng::integer(int64_t lo, int64_t hi) {
  const auto span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(next() % span);
}

HostTensor default_input(const NumericRow& row, const InputSpec& spec, Rng& rng) {
  const DataType t = spec.dtype;
  double lo = -1, hi = 1;
  if (is_scalar_int(t)) {
    lo = t.code == DataType::Code::kUInt ? 0 : -10;
    hi = t.code == DataType::Code::kUInt ? 20 : 10;
  } else if (is_scalar_bool(t)) {
    lo = 0;
    hi = 1;
  }
  for (const NumericRow::Range& r : row.ranges) {
    if (!r.input || *r.input == spec.input) {
      lo = r.lo;
      hi = r.hi;
    }
  }
  HostTensor x = HostTensor::filled(spec.shape, t);
  for (double& v : x.values) {
    if (is_scalar_float(t)) {
      // Rounded to the dtype, so that the reference reads exactly what the kernel reads.
      v = round_to_dtype(rng.uniform(lo, hi), t);
    } else {
      v = static_cast<double>(rng.integer(static_cast<int64_t>(std::ceil(lo)), static_cast<int64_t>(std::floor(hi))));
    }
  }
  return x;
}

}  // namespace relax::ops_test
