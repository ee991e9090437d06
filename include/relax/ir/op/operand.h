// An operand of an operator constructor that may be a C++ number.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "relax/ir/expr.h"

namespace relax::op {

/// An expression, or a number written in C++: `op::multiply(s, 0.125)`,
/// `op::add(x, 1)`. An integer becomes an int64 Prim constant and a floating
/// one a float64 Prim constant; both adapt to the dtype of the tensor they
/// meet (see the operator's deduction), so `add(x, 1)` of a float16 x adds a
/// float16 one.
class Operand {
 public:
  template <typename E>
    requires std::is_convertible_v<E, Expr>
  Operand(E e) : expr_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  Operand(int value);                    // NOLINT(google-explicit-constructor)
  Operand(int64_t value);                // NOLINT(google-explicit-constructor)
  Operand(double value);                 // NOLINT(google-explicit-constructor)

  const Expr& expr() const& { return expr_; }
  Expr expr() && { return std::move(expr_); }
  operator Expr() const { return expr_; }  // NOLINT(google-explicit-constructor)

 private:
  Expr expr_;
};

}  // namespace relax::op
