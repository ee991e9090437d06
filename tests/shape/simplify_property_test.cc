// Property test: simplification never changes a value.
//
// Random expression trees over variables with declared ranges are simplified;
// both forms are evaluated at random points inside the ranges. Wherever the
// original evaluates without error the simplified form must evaluate to the
// same value; and simplifying twice must give the same form as simplifying once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <random>
#include <vector>

#include "../test_env.h"
#include "absl/container/flat_hash_map.h"
#include "random_expr.h"
#include "relax/shape/analyzer.h"

namespace relax {
namespace {

using test::comparison;
using test::kComparisons;
using test::RangedVar;
using test::TreeGenerator;

TEST(SimplifyProperty, KeepsValueOnTenThousandRandomTrees) {
  std::vector<RangedVar> vars = {
      {SymVar("n"), 1, 64, true},   {SymVar("m"), 0, 16, true},    {SymVar("x"), -30, 30, true},
      {SymVar("y"), 0, 1000, true}, {SymVar("u"), -40, 40, false},
  };
  Analyzer analyzer;
  for (const RangedVar& v : vars) {
    if (v.declared) analyzer.bind(v.var, v.lo, v.hi);
  }
  const int64_t trials = testing_util::fuzz_trials(10000);
  TreeGenerator gen(static_cast<uint32_t>(testing_util::fuzz_seed(20261130)), vars);
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

// ---- Near the int64 limits ----------------------------------------------------
//
// The simplified form must not overflow where the input does not. Comparisons are
// rewritten with no overflow of their own (analyzer.h); sums are reordered into
// canonical order, which can overflow a partial sum where the input's order did not
// (the documented limit), so general trees are checked for equal values wherever
// both forms evaluate.

/// Values near the ends of int64 and around zero.
int64_t extreme_value(std::mt19937& rng) {
  static const int64_t kEnds[] = {INT64_MIN, INT64_MIN + 1, INT64_MIN + 2, INT64_MIN + 7,
                                  -1,        0,             1,             2,
                                  INT64_MAX - 7, INT64_MAX - 2, INT64_MAX - 1, INT64_MAX};
  std::uniform_int_distribution<size_t> pick(0, std::size(kEnds) - 1);
  const int64_t v = kEnds[pick(rng)];
  // Sometimes a little further in.
  const int64_t shift = std::uniform_int_distribution<int64_t>(0, 3)(rng);
  return v > 0 ? v - shift : v < 0 ? v + shift : v;
}

/// Comparisons whose sides hold at most one operation each, combined with ! && ||.
class ComparisonGenerator {
 public:
  ComparisonGenerator(uint32_t seed, const std::vector<SymVar>& vars) : rng_(seed), vars_(vars) {}

  SymExpr boolean(int depth) {
    if (depth == 0) return compare();
    switch (pick(5)) {
      case 0:
        return boolean(depth - 1) && boolean(depth - 1);
      case 1:
        return boolean(depth - 1) || boolean(depth - 1);
      case 2:
        return !boolean(depth - 1);
      default:
        return compare();
    }
  }

 private:
  SymExpr compare() {
    const SymExpr a = side(), b = side();
    return comparison(pick(kComparisons), a, b);
  }
  SymExpr side() {
    const SymExpr v = var();
    switch (pick(7)) {
      case 0:
        return v;
      case 1:
        return v + constant();
      case 2:
        return v - constant();
      case 3:
        return constant() - v;
      case 4:
        return v * SymExpr(std::uniform_int_distribution<int64_t>(-3, 3)(rng_));
      case 5:
        return v + var();
      default:
        return v - var();
    }
  }
  SymExpr var() { return vars_[pick(vars_.size())]; }
  SymExpr constant() {
    static const int64_t kConstants[] = {1, 2, 3, 5, 100, INT64_MAX, INT64_MIN + 1};
    return SymExpr(kConstants[pick(std::size(kConstants))]);
  }
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::mt19937 rng_;
  const std::vector<SymVar>& vars_;
};

TEST(SimplifyProperty, ComparisonsAddNoOverflowNearTheInt64Limits) {
  // `a < b` once became `a + 1 <= b`, which overflows at a = INT64_MAX
  // (tests/fuzz/corpus/symexpr/regression-symexpr-semantic-1.bin: `!!(a < b)`).
  const std::vector<SymVar> vars = {SymVar("a"), SymVar("b"), SymVar("c"), SymVar("d")};
  Analyzer unbounded;
  Analyzer bounded;  // ranges that reach the ends of int64
  bounded.bind(vars[0], 0);
  bounded.bind(vars[1], INT64_MIN, -1);
  bounded.bind(vars[2], INT64_MAX - 100, INT64_MAX);
  ComparisonGenerator gen(static_cast<uint32_t>(testing_util::fuzz_seed(20261201)), vars);
  std::mt19937 point_rng(3);
  const int64_t trials = testing_util::fuzz_trials(10000);
  int64_t compared = 0;
  for (int64_t trial = 0; trial < trials; ++trial) {
    const SymExpr original = gen.boolean(2);
    for (Analyzer* analyzer : {&unbounded, &bounded}) {
      const SymExpr simplified = analyzer->simplify(original);
      ASSERT_TRUE(structural_equal(analyzer->simplify(simplified), simplified))
          << "not idempotent: " << original << " -> " << simplified;
      for (int point = 0; point < 16; ++point) {
        SymVarMap<int64_t> values;
        for (const SymVar& v : vars) {
          int64_t x = extreme_value(point_rng);
          const ConstIntBound r = analyzer->var_bound(v);
          x = std::clamp(x, r.min_value, r.max_value);
          values[v] = x;
        }
        absl::StatusOr<int64_t> expected = evaluate(original, values);
        if (!expected.ok()) continue;
        absl::StatusOr<int64_t> actual = evaluate(simplified, values);
        ASSERT_TRUE(actual.ok()) << "simplified form fails where the input did not:\n  input:  "
                                 << original << "\n  output: " << simplified << "\n  "
                                 << actual.status();
        ASSERT_EQ(*expected, *actual)
            << "value changed:\n  input:  " << original << "\n  output: " << simplified;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, trials * 8);
}

TEST(SimplifyProperty, SemanticFinding1NotNotLessThanAtInt64Max) {
  const SymVar a("a"), b("b");
  absl::flat_hash_map<std::string, SymVar> names = {{"a", a}, {"b", b}};
  absl::StatusOr<SymExpr> e = SymExpr::parse("!!(a < b)", &names);
  ASSERT_TRUE(e.ok()) << e.status();
  Analyzer analyzer;
  const SymExpr simplified = analyzer.simplify(*e);
  EXPECT_EQ(to_string(simplified), "a < b");
  SymVarMap<int64_t> values = {{a, INT64_MAX}, {b, 0}};
  absl::StatusOr<int64_t> value = evaluate(simplified, values);
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, 0);
  values[b] = INT64_MAX;
  EXPECT_EQ(*evaluate(simplified, values), 0);
  values[a] = INT64_MAX - 1;
  EXPECT_EQ(*evaluate(simplified, values), 1);
  // Moving a constant across would overflow at b = INT64_MAX: it stays where it was.
  const SymExpr moved = analyzer.simplify(a - 5 <= b);
  values = {{a, 0}, {b, INT64_MAX}};
  ASSERT_TRUE(evaluate(moved, values).ok()) << moved;
  EXPECT_EQ(*evaluate(moved, values), 1);
  // With ranges that rule the overflow out, the normal form is used.
  analyzer.bind(b, 0, 1000);
  EXPECT_EQ(to_string(analyzer.simplify(a - 5 <= b)), "a <= b + 5");
}

TEST(SimplifyProperty, KeepsValueNearTheInt64Limits) {
  std::vector<RangedVar> vars = {
      {SymVar("n"), 1, 64, true},
      {SymVar("h"), INT64_MAX - 64, INT64_MAX, true},
      {SymVar("l"), INT64_MIN, INT64_MIN + 64, true},
      {SymVar("u"), INT64_MIN, INT64_MAX, false},
  };
  Analyzer analyzer;
  for (const RangedVar& v : vars) {
    if (v.declared) analyzer.bind(v.var, v.lo, v.hi);
  }
  const int64_t trials = testing_util::fuzz_trials(10000);
  TreeGenerator gen(static_cast<uint32_t>(testing_util::fuzz_seed(20261202)), vars);
  std::mt19937 point_rng(5);
  int64_t both = 0, introduced = 0;
  for (int64_t trial = 0; trial < trials; ++trial) {
    const SymExpr original = trial % 4 == 3 ? gen.boolean(2) : gen.integer(3);
    const SymExpr simplified = analyzer.simplify(original);
    for (int point = 0; point < 8; ++point) {
      SymVarMap<int64_t> values;
      for (const RangedVar& v : vars) {
        values[v.var] = v.declared ? std::uniform_int_distribution<int64_t>(v.lo, v.hi)(point_rng)
                                   : extreme_value(point_rng);
      }
      absl::StatusOr<int64_t> expected = evaluate(original, values);
      absl::StatusOr<int64_t> actual = evaluate(simplified, values);
      if (!expected.ok()) continue;
      if (!actual.ok()) {
        // The documented limit (analyzer.h): only an intermediate of the canonical
        // order may overflow, never a division by zero or an unbound variable.
        ASSERT_THAT(std::string(actual.status().message()), ::testing::HasSubstr("overflow"))
            << original << " -> " << simplified;
        ++introduced;
        continue;
      }
      ASSERT_EQ(*expected, *actual)
          << "value changed:\n  input:  " << original << "\n  output: " << simplified;
      ++both;
    }
  }
  EXPECT_GT(both, trials);
  RecordProperty("points_where_only_the_simplified_form_overflows", std::to_string(introduced));
}

}  // namespace
}  // namespace relax
