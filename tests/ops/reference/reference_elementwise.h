// Plain references of the elementwise family (rows_elementwise.cc): scalar functions in
// double precision written from their definitions, and a three-operand broadcast for where.
#pragma once

#include <functional>
#include <optional>

#include "reference/reference.h"

namespace relax::ops_test {

/// x * Phi(x) with the exact normal CDF (`tanh_form` false) or the tanh approximation.
double gelu_ref(double x, bool tanh_form);
/// -1, 0 or 1 by the sign of x (NaN stays NaN).
double sign_ref(double x);
/// floor(a / b) as numpy's floor_divide: for integers (`integer`) a divisor of 0 gives 0.
double floor_divide_ref(double a, double b, bool integer);
/// numpy's mod (the divisor's sign): for integers a divisor of 0 gives 0; for floats the
/// remainder of fmod moved into the divisor's sign.
double mod_ref(double a, double b, bool integer);

/// f(a, b, c) elementwise under numpy broadcasting of all three; dtype `out`.
HostTensor map_ternary(const HostTensor& a, const HostTensor& b, const HostTensor& c,
                       const std::function<double(double, double, double)>& f, DataType out);
/// where(cond, x, y) of parameters 0, 1, 2; the result has parameter 1's dtype.
Reference ref_where();

}  // namespace relax::ops_test
