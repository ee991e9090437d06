// Property test: simplification never changes a value.
//
// Random expression trees over variables with declared ranges are simplified;
// both forms are evaluated at random points inside the ranges. Wherever the
// original evaluates without error the simplified form must evaluate to the
// same value; and simplifying twice must give the same form as simplifying once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "relax/shape/analyzer.h"

namespace relax {
namespace {

/// A variable with the range the Analyzer is told about.
struct RangedVar {
  SymVar var;
  int64_t lo;
  int64_t hi;
  bool declared;  // undeclared variables are unbounded for the Analyzer
};

/// The seed and trial count; RELAX_FUZZ_SEED / RELAX_FUZZ_TRIALS override the
/// defaults so that a longer search can be run by hand without editing.
int64_t env_or(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  return text ? std::atoll(text) : fallback;
}

class TreeGenerator {
 public:
  TreeGenerator(uint32_t seed, const std::vector<RangedVar>& vars) : rng_(seed), vars_(vars) {}

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
    switch (pick(6)) {
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
  SymExpr leaf() {
    if (chance(0.7)) return vars_[pick(vars_.size())].var;
    return SymExpr(constant(-10, 20));
  }
  SymExpr small_or_tree(int depth) {
    return chance(0.6) ? SymExpr(constant(-4, 9)) : integer(depth);
  }
  SymExpr divisor(int depth) {
    if (chance(0.8)) {
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
};

TEST(SimplifyProperty, KeepsValueOnTenThousandRandomTrees) {
  std::vector<RangedVar> vars = {
      {SymVar("n"), 1, 64, true},   {SymVar("m"), 0, 16, true},    {SymVar("x"), -30, 30, true},
      {SymVar("y"), 0, 1000, true}, {SymVar("u"), -40, 40, false},
  };
  Analyzer analyzer;
  for (const RangedVar& v : vars) {
    if (v.declared) analyzer.bind(v.var, v.lo, v.hi);
  }
  const int64_t trials = env_or("RELAX_FUZZ_TRIALS", 10000);
  TreeGenerator gen(static_cast<uint32_t>(env_or("RELAX_FUZZ_SEED", 20261130)), vars);
  std::mt19937 point_rng(7);
  int64_t compared = 0;
  for (int64_t trial = 0; trial < trials; ++trial) {
    const SymExpr original = trial % 4 == 3 ? gen.boolean(3) : gen.integer(4);
    const SymExpr simplified = analyzer.simplify(original);
    const SymExpr twice = analyzer.simplify(simplified);
    ASSERT_TRUE(structural_equal(simplified, twice))
        << "not idempotent:\n  input:  " << original << "\n  once:   " << simplified
        << "\n  twice:  " << twice;
    for (int point = 0; point < 8; ++point) {
      SymVarMap<int64_t> values;
      for (const RangedVar& v : vars) {
        values[v.var] = std::uniform_int_distribution<int64_t>(v.lo, v.hi)(point_rng);
      }
      absl::StatusOr<int64_t> expected = evaluate(original, values);
      if (!expected.ok()) continue;  // division by zero and the like: nothing to keep
      absl::StatusOr<int64_t> actual = evaluate(simplified, values);
      ASSERT_TRUE(actual.ok()) << "simplified form fails where the input did not:\n  input:  "
                               << original << "\n  output: " << simplified << "\n  "
                               << actual.status();
      ASSERT_EQ(*expected, *actual)
          << "value changed:\n  input:  " << original << "\n  output: " << simplified;
      ++compared;
    }
  }
  EXPECT_GT(compared, trials * 4);  // most points of most trees evaluate
}

TEST(SimplifyProperty, BoundsHoldEveryValue) {
  std::vector<RangedVar> vars = {
      {SymVar("n"), 1, 64, true}, {SymVar("m"), 0, 16, true}, {SymVar("x"), -30, 30, true}};
  Analyzer analyzer;
  for (const RangedVar& v : vars) analyzer.bind(v.var, v.lo, v.hi);
  TreeGenerator gen(99, vars);
  std::mt19937 point_rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    const SymExpr e = gen.integer(3);
    const ConstIntBound bound = analyzer.const_int_bound(e);
    const ModularSet mod = analyzer.modular_set(e);
    for (int point = 0; point < 8; ++point) {
      SymVarMap<int64_t> values;
      for (const RangedVar& v : vars) {
        values[v.var] = std::uniform_int_distribution<int64_t>(v.lo, v.hi)(point_rng);
      }
      absl::StatusOr<int64_t> value = evaluate(e, values);
      if (!value.ok()) continue;
      ASSERT_GE(*value, bound.min_value) << e << " has bound " << bound;
      ASSERT_LE(*value, bound.max_value) << e << " has bound " << bound;
      if (mod.coeff == 0) {
        ASSERT_EQ(*value, mod.base) << e << " has modular set " << mod;
      } else {
        ASSERT_EQ(((*value - mod.base) % mod.coeff + mod.coeff) % mod.coeff, 0)
            << e << " = " << *value << " outside modular set " << mod;
      }
    }
  }
}

}  // namespace
}  // namespace relax
