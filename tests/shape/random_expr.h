// Random expression trees for the shape layer's property tests: a generator of
// int64 and boolean SymExprs over variables with declared ranges, shared by
// simplify_property_test.cc (values kept by simplification) and
// const_int_bound_test.cc (values inside the computed bounds).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <random>
#include <vector>

#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax::test {

// The six comparisons, by index.
inline constexpr size_t kComparisons = 6;
inline SymExpr comparison(size_t which, const SymExpr& a, const SymExpr& b) {
  switch (which) {
    case 0:
      return a < b;
    case 1:
      return a <= b;
    case 2:
      return a > b;
    case 3:
      return a >= b;
    case 4:
      return a == b;
    default:
      return a != b;
  }
}

/// A variable with the range the Analyzer is told about.
struct RangedVar {
  SymVar var;
  int64_t lo;
  int64_t hi;
  bool declared;  // undeclared variables are unbounded for the Analyzer
};

/// Random trees of + - * floordiv floormod min max select (and comparisons
/// combined with && || ! for booleans) over `vars` and small constants.
class TreeGenerator {
 public:
  /// How often a divisor is one of a few constants (1, 2, 3, 4, 8, 16, 5, -2, -4)
  /// rather than a random tree, which is often a bare variable.
  struct Options {
    double constant_divisor = 0.8;
  };

  TreeGenerator(uint32_t seed, const std::vector<RangedVar>& vars) : TreeGenerator(seed, vars, Options()) {}
  TreeGenerator(uint32_t seed, const std::vector<RangedVar>& vars, Options options)
      : rng_(seed), vars_(vars), options_(options) {}

  SymExpr integer(int depth) {
    if (depth == 0 || chance(0.2)) return leaf();
    switch (pick(10)) {
      case 0:
        return integer(depth - 1) + integer(depth - 1);
      case 1:
        return integer(depth - 1) - integer(depth - 1);
      case 2:
        return integer(depth - 1) * small_or_tree(depth - 1);
      case 3:
        return floordiv(integer(depth - 1), divisor(depth - 1));
      case 4:
        return floormod(integer(depth - 1), divisor(depth - 1));
      case 5:
        return min(integer(depth - 1), integer(depth - 1));
      case 6:
        return max(integer(depth - 1), integer(depth - 1));
      case 7:
        return select(boolean(depth - 1), integer(depth - 1), integer(depth - 1));
      case 8:
        return integer(depth - 1) * SymExpr(constant(-6, 8));
      default:
        return integer(depth - 1) + SymExpr(constant(-20, 20));
    }
  }

  SymExpr boolean(int depth) {
    if (depth == 0) return compare(0);
    switch (pick(6)) {
      case 0:
        return boolean(depth - 1) && boolean(depth - 1);
      case 1:
        return boolean(depth - 1) || boolean(depth - 1);
      case 2:
        return !boolean(depth - 1);
      default:
        return compare(depth - 1);
    }
  }

 private:
  SymExpr compare(int depth) {
    SymExpr a = integer(depth), b = integer(depth);
    return comparison(pick(kComparisons), a, b);
  }
  SymExpr leaf() {
    if (chance(0.7)) return vars_[pick(vars_.size())].var;
    return SymExpr(constant(-10, 20));
  }
  SymExpr small_or_tree(int depth) {
    return chance(0.6) ? SymExpr(constant(-4, 9)) : integer(depth);
  }
  SymExpr divisor(int depth) {
    if (chance(options_.constant_divisor)) {
      static const int64_t kDivisors[] = {1, 2, 3, 4, 8, 16, 5, -2, -4};
      return SymExpr(kDivisors[pick(std::size(kDivisors))]);
    }
    return integer(depth);
  }
  int64_t constant(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  std::mt19937 rng_;
  const std::vector<RangedVar>& vars_;
  Options options_;
};

}  // namespace relax::test
