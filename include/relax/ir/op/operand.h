// An operand of an operator constructor that may be a C++ number.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "relax/ir/expr.h"

namespace relax::op {

/// An expression, or a number written in C++: `op::multiply(s, 0.125)`,
/// `op::add(x, 1)`, `op::multiply(x, v.size())`. An integer of any C++ type
/// (int, unsigned, size_t, long long, short, int8_t, uint8_t...; not bool or
/// char) becomes an int64 Prim constant and a floating one (float, double,
/// long double) a float64 Prim constant; both adapt to the dtype of the tensor they meet (see
/// the operator's deduction), so `add(x, 1)` of a float16 x adds a float16 one.
/// An unsigned value above INT64_MAX becomes a float64 constant, as numpy
/// promotes uint64 with int64.
class Operand {
  /// The character types, which are not taken as numbers.
  template <typename T>
  static constexpr bool kIsChar = std::is_same_v<T, char> || std::is_same_v<T, wchar_t> ||
                                  std::is_same_v<T, char8_t> || std::is_same_v<T, char16_t> ||
                                  std::is_same_v<T, char32_t>;

 public:
  template <typename E>
    requires std::is_convertible_v<E, Expr>
  Operand(E e) : expr_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  template <typename I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool> && !kIsChar<I>)
  Operand(I value)  // NOLINT(google-explicit-constructor)
      : Operand(from_integer(value)) {}
  template <typename F>
    requires std::is_floating_point_v<F>
  Operand(F value)  // NOLINT(google-explicit-constructor)
      : Operand(from_float(static_cast<double>(value))) {}

  const Expr& expr() const& { return expr_; }
  Expr expr() && { return std::move(expr_); }
  operator Expr() const { return expr_; }  // NOLINT(google-explicit-constructor)

 private:
  template <typename I>
  static Expr from_integer(I value) {
    if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t)) {
      if (value > static_cast<I>(std::numeric_limits<int64_t>::max())) {
        return from_float(static_cast<double>(value));
      }
    }
    return from_int64(static_cast<int64_t>(value));
  }
  static Expr from_int64(int64_t value);
  static Expr from_float(double value);

  Expr expr_;
};

}  // namespace relax::op
