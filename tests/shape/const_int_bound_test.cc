// Analyzer::const_int_bound and modular_set: the tightening rules (modular sets
// of numerators and results, divisors whose range touches zero, products of
// ranges of mixed signs, ends at the int64 limits), each checked against the
// exact range found by evaluating at every point, and a property test over
// random trees.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../test_env.h"
#include "random_expr.h"
#include "relax/shape/analyzer.h"

namespace relax {
namespace {

constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// The exact hull of the values of `e` over every point of the (small) ranges
/// of x and y, skipping points where evaluation fails; nullopt when none evaluates.
std::optional<ConstIntBound> exact_hull(const SymExpr& e, const SymVar& x, ConstIntBound xr,
                                        const SymVar& y, ConstIntBound yr) {
  std::optional<ConstIntBound> hull;
  for (int64_t i = xr.min_value; i <= xr.max_value; ++i) {
    for (int64_t j = yr.min_value; j <= yr.max_value; ++j) {
      absl::StatusOr<int64_t> v = evaluate(e, SymVarMap<int64_t>{{x, i}, {y, j}});
      if (!v.ok()) continue;
      if (!hull) hull = ConstIntBound::exactly(*v);
      hull->min_value = std::min(hull->min_value, *v);
      hull->max_value = std::max(hull->max_value, *v);
    }
  }
  return hull;
}

class ConstIntBoundTest : public ::testing::Test {
 protected:
  ConstIntBound bound_of(const SymExpr& e) { return analyzer_.const_int_bound(e); }

  /// With x in xr and y in yr (a fresh Analyzer), the bound of `e` must be exactly
  /// the hull of its values, found by evaluating at every point.
  void expect_exact(const SymExpr& e, ConstIntBound xr, ConstIntBound yr = {0, 0}) {
    Analyzer analyzer;
    analyzer.bind(x_, xr.min_value, xr.max_value);
    analyzer.bind(y_, yr.min_value, yr.max_value);
    const std::optional<ConstIntBound> hull = exact_hull(e, x_, xr, y_, yr);
    ASSERT_TRUE(hull.has_value()) << e << " evaluates nowhere";
    EXPECT_EQ(analyzer.const_int_bound(e), *hull) << e << " with x in " << xr << ", y in " << yr;
  }

  SymVar x_{"x"}, y_{"y"}, n_{"n"};
  Analyzer analyzer_;
};

// ---- Modular sets of numerators and results ---------------------------------

TEST_F(ConstIntBoundTest, FloorModOfANumeratorWithAKnownResidue) {
  // x*64 + 63 is 63 mod 64, and 64 divides 256: the remainder is 63, 127, 191 or 255.
  EXPECT_EQ(bound_of(floormod(x_ * 64 + 63, 256)), (ConstIntBound{63, 255}));  // was [0, 255]
  EXPECT_EQ(bound_of(floormod(x_ * 4 + 2, 8)), (ConstIntBound{2, 6}));          // was [0, 7]
  EXPECT_EQ(bound_of(floormod(x_ * 6 + 3, 12)), (ConstIntBound{3, 9}));         // 3 mod 6
  // A divisor the residue does not divide: the gcd still counts (x*6 + 4 is 0 mod 2).
  EXPECT_EQ(bound_of(floormod(x_ * 6 + 4, 9)), (ConstIntBound{1, 7}));  // 1, 4, 7 (mod 3)
  // The same under declared ranges, against every value.
  expect_exact(floormod(x_ * 64 + 63, 256), {0, 20});
  expect_exact(floormod(x_ * 4 + 2, 8), {-9, 9});
  expect_exact(floormod(x_ * 6 + 3, 12), {-5, 5});
  expect_exact(floormod(x_ * 6 + 4, 9), {0, 8});
}

TEST_F(ConstIntBoundTest, FloorModByAVariableMultipleKeepsTheCommonResidue) {
  // floormod(a, b) = a - b*q: with b a multiple of 8 and a = 2 mod 4, the result is 2 mod 4.
  analyzer_.bind(y_, 1, 4);
  EXPECT_EQ(analyzer_.modular_set(floormod(x_ * 4 + 2, y_ * 8)), (ModularSet{4, 2}));  // was anything
  EXPECT_EQ(bound_of(floormod(x_ * 4 + 2, y_ * 8)), (ConstIntBound{2, 30}));           // was [0, 31]
  expect_exact(floormod(x_ * 4 + 2, y_ * 8), {0, 40}, {1, 4});
}

TEST_F(ConstIntBoundTest, FloorDivOfAFloorModWithAKnownResidue) {
  // floormod(x*64 + 63, 256) in [63, 255] (not [0, 255]) and 3 mod 64: its quotient by 64 is 0..3,
  // and adding 1 before dividing by 64 gives 1..4.
  EXPECT_EQ(bound_of(floordiv(floormod(x_ * 64 + 63, 256) + 1, 64)), (ConstIntBound{1, 4}));
  expect_exact(floordiv(floormod(x_ * 64 + 63, 256) + 1, 64), {-10, 10});
}

TEST_F(ConstIntBoundTest, AnIntervalRoundsToTheMembersOfItsModularSet) {
  // floormod(x*8 + 3, 16) is 3 mod 8 in [0, 15]: 3 or 11.
  analyzer_.bind(x_, 0, 7);
  analyzer_.bind(y_, 0, 7);
  EXPECT_EQ(bound_of(floormod(x_ * 8 + 3, 16) * 4), (ConstIntBound{12, 44}));
  // A remainder by a divisor in a range: still 3 mod 8 (every divisor is a multiple of 8).
  EXPECT_EQ(bound_of(floormod(x_ * 8 + 3, y_ * 8 + 8)), (ConstIntBound{3, 59}));  // was [0, 59]
  expect_exact(floormod(x_ * 8 + 3, y_ * 8 + 8), {0, 7}, {0, 7});
}

TEST_F(ConstIntBoundTest, FloorModWithinOneQuotientStepIsAShift) {
  // x + 8 in [3, 6] lies between two neighbouring multiples of -8: floormod is x + 8 - 8.
  analyzer_.bind(x_, -5, -2);
  EXPECT_EQ(bound_of(floormod(x_ + 8, -8)), (ConstIntBound{-5, -2}));  // was [-7, 0]
  expect_exact(floormod(x_ + 8, -8), {-5, -2});
  expect_exact(floormod(max(x_, 0) + 8, 8), {2, 5});
  expect_exact(floormod(min(x_, 0) - 3, 8), {-4, 5});
}

// ---- Divisors whose range touches zero ------------------------------------------

TEST_F(ConstIntBoundTest, DivisionByARangeFromZero) {
  // Where floordiv(x, n) evaluates, n != 0: n in [0, 16] divides as n in [1, 16].
  analyzer_.bind(x_, 0, 100);
  analyzer_.bind(n_, 0, 16);
  EXPECT_EQ(bound_of(floordiv(x_, n_)), (ConstIntBound{0, 100}));  // was everything
  EXPECT_EQ(bound_of(floormod(x_, n_)), (ConstIntBound{0, 15}));   // was everything
  Analyzer open;
  open.bind(x_, -5, 100);
  open.bind(n_, 0);
  EXPECT_EQ(open.const_int_bound(floordiv(x_, n_)), (ConstIntBound{-5, 100}));
  EXPECT_EQ(open.const_int_bound(floormod(x_, n_)), (ConstIntBound{0, kPosInf}));
  for (auto n_range : {ConstIntBound{0, 16}, ConstIntBound{0, 3}}) {
    expect_exact(floordiv(x_, y_), {-20, 30}, n_range);
    expect_exact(floormod(x_, y_), {0, 30}, n_range);
  }
}

TEST_F(ConstIntBoundTest, DivisionByARangeToZeroOrAcrossIt) {
  analyzer_.bind(x_, 0, 100);
  analyzer_.bind(n_, -8, 0);
  EXPECT_EQ(bound_of(floordiv(x_, n_)), (ConstIntBound{-100, 0}));  // n in [-8, -1]
  EXPECT_EQ(bound_of(floormod(x_, n_)), (ConstIntBound{-7, 0}));
  Analyzer across;
  across.bind(x_, 0, 100);
  across.bind(n_, -4, 4);
  EXPECT_EQ(across.const_int_bound(floordiv(x_, n_)), (ConstIntBound{-100, 100}));
  EXPECT_EQ(across.const_int_bound(floormod(x_, n_)), (ConstIntBound{-3, 3}));
  expect_exact(floordiv(x_, y_), {0, 100}, {-8, 0});
  expect_exact(floormod(x_, y_), {0, 100}, {-8, 0});
  expect_exact(floordiv(x_, y_), {-50, 100}, {-4, 4});
  expect_exact(floormod(x_, y_), {0, 100}, {-4, 4});
  // A non-positive numerator over a negative divisor: the remainder lies in [x, 0].
  expect_exact(floormod(x_, y_), {-3, 0}, {-8, -1});
}

TEST_F(ConstIntBoundTest, DivisionByZeroOnlyBoundsNothing) {
  analyzer_.bind(x_, 0, 100);
  analyzer_.bind(n_, 0, 0);
  // No point evaluates; any answer is sound, and the answer is not an empty interval.
  const ConstIntBound b = bound_of(floordiv(x_, n_));
  EXPECT_LE(b.min_value, b.max_value);
}

// ---- Products of ranges of mixed signs --------------------------------------------

TEST_F(ConstIntBoundTest, ProductsOfMixedSigns) {
  auto product_bound = [](ConstIntBound a, ConstIntBound b) {
    Analyzer analyzer;
    const SymVar p("p"), q("q");
    analyzer.bind(p, a.min_value, a.max_value);
    analyzer.bind(q, b.min_value, b.max_value);
    return analyzer.const_int_bound(SymExpr(p) * q);
  };
  EXPECT_EQ(product_bound({kNegInf, 5}, {-2, 3}), ConstIntBound::everything());
  EXPECT_EQ(product_bound({-3, 4}, ConstIntBound::everything()), ConstIntBound::everything());
  EXPECT_EQ(product_bound({0, kPosInf}, {-2, -1}), (ConstIntBound{kNegInf, 0}));
  EXPECT_EQ(product_bound({0, kPosInf}, {1, 2}), (ConstIntBound{0, kPosInf}));
  EXPECT_EQ(product_bound({kNegInf, -1}, {kNegInf, -1}), (ConstIntBound{1, kPosInf}));
  EXPECT_EQ(product_bound({kNegInf, -2}, {3, 4}), (ConstIntBound{kNegInf, -6}));
  EXPECT_EQ(product_bound({0, 0}, ConstIntBound::everything()), ConstIntBound::exactly(0));
  EXPECT_EQ(product_bound({-3, 4}, {-5, 2}), (ConstIntBound{-20, 15}));
  EXPECT_EQ(product_bound({-3, -1}, {-5, 2}), (ConstIntBound{-6, 15}));
  // 2^32 * 2^32 leaves int64: the upper end saturates, the lower end stays exact.
  EXPECT_EQ(product_bound({1, int64_t{1} << 32}, {1, int64_t{1} << 32}), (ConstIntBound{1, kPosInf}));
  EXPECT_EQ(product_bound({-(int64_t{1} << 32), -1}, {1, int64_t{1} << 32}),
            (ConstIntBound{kNegInf, -1}));
  expect_exact(x_ * y_, {-3, 4}, {-5, 2});
  expect_exact(x_ * y_ * -3, {-3, 1}, {-2, 0});
}

// ---- Ends at the int64 limits -------------------------------------------------------
//
// INT64_MIN / INT64_MAX are the infinities at either end; a lower end of exactly
// INT64_MAX (an upper end of exactly INT64_MIN) is a value that exists, and steps one
// inward rather than read as "+inf: no value" (bounds.h).

/// Every expression of `cases` evaluates at `values` to a value inside its bound.
void expect_inside(Analyzer& analyzer, const std::vector<SymExpr>& cases, const SymVarMap<int64_t>& values) {
  for (const SymExpr& e : cases) {
    const absl::StatusOr<int64_t> v = evaluate(e, values);
    ASSERT_TRUE(v.ok()) << e << ": " << v.status();
    const ConstIntBound b = analyzer.const_int_bound(e);
    EXPECT_GE(*v, b.min_value) << e << " = " << *v << " outside " << b;
    EXPECT_LE(*v, b.max_value) << e << " = " << *v << " outside " << b;
  }
}

TEST_F(ConstIntBoundTest, AVariableDeclaredExactlyInt64Max) {
  const SymVar h("h");
  analyzer_.bind(h, kMax, kMax);
  const SymExpr he = h;
  // h - 5 was [+inf, +inf] (no value), h * -1 [-inf, -inf].
  expect_inside(analyzer_, {he - 5, he * -1, floordiv(he, 2), he + -1, floordiv(he, he), max(he * -1, -10)},
                {{h, kMax}});
  EXPECT_EQ(bound_of(he - 5), (ConstIntBound{kMax - 5, kPosInf}));
  EXPECT_EQ(bound_of(floordiv(he, 2)), (ConstIntBound{kMax / 2, kPosInf}));
  EXPECT_EQ(bound_of(he * -1), (ConstIntBound{kNegInf, kMin + 1}));
}

TEST_F(ConstIntBoundTest, AVariableDeclaredExactlyInt64Min) {
  const SymVar l("l");
  analyzer_.bind(l, kMin, kMin);
  const SymExpr le = l;
  expect_inside(analyzer_, {le + 5, (le + 1) * -1, floordiv(le, 2), floormod(le, 3), floordiv(le, -2)},
                {{l, kMin}});
  EXPECT_EQ(bound_of(le + 5), (ConstIntBound{kNegInf, kMin + 5}));
  EXPECT_EQ(bound_of(floordiv(le, -2)), (ConstIntBound{int64_t{1} << 62, kPosInf}));
}

TEST_F(ConstIntBoundTest, ASumOrProductLandingExactlyOnInt64Max) {
  // x + 1 is exactly INT64_MAX: its lower end was +inf ("no value"), so max(x + 1, 0) - 5
  // was bounded to [+inf, +inf] where it is INT64_MAX - 4.
  analyzer_.bind(x_, kMax - 1, kMax - 1);
  analyzer_.bind(y_, kMin + 1, kMin + 1);
  const SymExpr xe = x_, ye = y_;
  expect_inside(analyzer_,
                {max(xe + 1, 0) - 5, max(ye * -1, 0) - 5, min(ye - 1, 0) + 5, min(xe * -1 - 2, 0) + 5,
                 floordiv(max(ye * -1, 0), 2), select(xe > 0, xe + 1, 0) - 1},
                {{x_, kMax - 1}, {y_, kMin + 1}});
}

TEST_F(ConstIntBoundTest, ABoundPastInt64HoldsNoValue) {
  // 3c overflows for every c in the range: the bound is past int64 (+inf below),
  // and a comparison of it is decided (vacuously: it never evaluates).
  const SymVar c("c");
  analyzer_.bind(c, kMax - 100, kMax);
  EXPECT_EQ(bound_of(SymExpr(c) * 3).min_value, kPosInf);
  EXPECT_TRUE(analyzer_.simplify(kMax - SymExpr(c) >= SymExpr(c) * 3).is_const(0));
}

TEST_F(ConstIntBoundTest, Int64MinTimesMinusOneOverflowsOnly) {
  // INT64_MIN * -1 fails to evaluate; INT64_MIN + 1 times -1 is INT64_MAX.
  const SymVar l("l");
  analyzer_.bind(l, kMin, kMin + 1);
  // Where they evaluate, both are INT64_MAX.
  EXPECT_EQ(bound_of(SymExpr(l) * -1), ConstIntBound::exactly(kMax));
  EXPECT_EQ(bound_of(floordiv(SymExpr(l), -1)), ConstIntBound::exactly(kMax));
}

// ---- Property: every value lies inside the bound ----------------------------------

/// A random declared range: small ones around zero (touching it at either end or
/// crossing it), large and half-open ones, a single value, ones at the ends of
/// int64, or none (undeclared).
/// `sample` is the part of the range points are drawn from (all of a small one).
struct DrawnRange {
  ConstIntBound declared;
  ConstIntBound sample;
  bool is_declared = true;
};

DrawnRange draw_range(std::mt19937& rng) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  constexpr int64_t kBig = int64_t{1} << 40;
  switch (uniform(0, 10)) {
    case 0: {  // [0, k]
      const int64_t k = uniform(0, 20);
      return {{0, k}, {0, k}};
    }
    case 1: {  // [-k, 0]
      const int64_t k = uniform(0, 20);
      return {{-k, 0}, {-k, 0}};
    }
    case 2: {  // [-a, b]
      const int64_t a = uniform(1, 20), b = uniform(1, 20);
      return {{-a, b}, {-a, b}};
    }
    case 3: {  // positive, away from zero
      const int64_t lo = uniform(1, 10), hi = lo + uniform(0, 30);
      return {{lo, hi}, {lo, hi}};
    }
    case 4: {  // [0, +inf): points from the first 2^20
      return {{0, kPosInf}, {0, 1 << 20}};
    }
    case 5: {  // (-inf, hi]
      const int64_t hi = uniform(-5, 5);
      return {{kNegInf, hi}, {hi - (1 << 20), hi}};
    }
    case 6: {  // large, both signs
      return {{-kBig, kBig}, {-kBig, kBig}};
    }
    case 7: {  // a single value
      const int64_t v = uniform(-6, 6);
      return {{v, v}, {v, v}};
    }
    case 8: {  // near the top of int64
      return {{kMax - 1000, kMax}, {kMax - 1000, kMax}};
    }
    case 9: {  // at an end of int64, where the ends double as infinities
      static const ConstIntBound kEnds[] = {{kMax, kMax}, {kMax - 1, kMax - 1}, {kMin, kMin},
                                            {kMin + 1, kMin + 1}, {kMax - 3, kMax}, {kMin, kMin + 3}};
      const ConstIntBound r = kEnds[uniform(0, std::size(kEnds) - 1)];
      return {r, r};
    }
    default:  // undeclared
      return {ConstIntBound::everything(), {-50, 50}, false};
  }
}

/// A point inside `sample`: often an end, zero or one next to them.
int64_t draw_point(const ConstIntBound& sample, std::mt19937& rng) {
  const int64_t lo = sample.min_value, hi = sample.max_value;
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0:
      return lo;
    case 1:
      return hi;
    case 2:
      return std::clamp<int64_t>(0, lo, hi);
    case 3:
      return std::clamp<int64_t>(lo < hi ? lo + 1 : lo, lo, hi);
    default:
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
}

TEST(ConstIntBoundProperty, EveryValueLiesInsideTheBound) {
  std::vector<test::RangedVar> vars = {
      {SymVar("a"), 0, 0, true}, {SymVar("b"), 0, 0, true}, {SymVar("c"), 0, 0, true}};
  std::vector<ConstIntBound> samples(vars.size());
  test::TreeGenerator::Options options;
  options.constant_divisor = 0.5;  // many divisors are variables whose range touches zero
  const uint32_t seed = static_cast<uint32_t>(testing_util::fuzz_seed(20261211));
  test::TreeGenerator gen(seed, vars, options);
  std::mt19937 rng(seed + 1);
  const int64_t trials = testing_util::fuzz_trials(20000);
  int64_t checked = 0, tight_ends = 0;
  for (int64_t trial = 0; trial < trials; ++trial) {
    Analyzer analyzer;
    const size_t used = trial % 3 == 0 ? 2 : 3;  // two or three variables
    for (size_t i = 0; i < vars.size(); ++i) {
      const DrawnRange r = draw_range(rng);
      vars[i].lo = r.declared.min_value;
      vars[i].hi = r.declared.max_value;
      vars[i].declared = r.is_declared;
      samples[i] = r.sample;
      if (i >= used) {  // an unused variable: a constant
        vars[i].lo = vars[i].hi = 1;
        samples[i] = ConstIntBound::exactly(1);
      }
      if (vars[i].declared) analyzer.bind(vars[i].var, vars[i].lo, vars[i].hi);
    }
    const SymExpr e = gen.integer(trial % 2 == 0 ? 3 : 4);
    auto context = [&](const SymVarMap<int64_t>& values) {
      std::string text;
      for (size_t i = 0; i < used; ++i) {
        const ConstIntBound declared{vars[i].lo, vars[i].hi};
        text += "\n  " + vars[i].var.name() + " = " + std::to_string(values.at(vars[i].var)) + " in " +
                (vars[i].declared ? declared.to_string() : "(undeclared)");
      }
      return text;
    };
    const ConstIntBound bound = analyzer.const_int_bound(e);
    const ModularSet mod = analyzer.modular_set(e);
    for (int point = 0; point < 8; ++point) {
      SymVarMap<int64_t> values;
      for (size_t i = 0; i < vars.size(); ++i) values[vars[i].var] = draw_point(samples[i], rng);
      absl::StatusOr<int64_t> value = evaluate(e, values);
      if (!value.ok()) continue;
      ++checked;
      ASSERT_GE(*value, bound.min_value) << e << " = " << *value << " outside " << bound << context(values);
      ASSERT_LE(*value, bound.max_value) << e << " = " << *value << " outside " << bound << context(values);
      tight_ends += (*value == bound.min_value) + (*value == bound.max_value);
      if (mod.coeff == 0) {
        ASSERT_EQ(*value, mod.base) << e << " has modular set " << mod;
      } else {
        // (value - base) may overflow: compare residues instead.
        const int64_t r = *value % mod.coeff;
        ASSERT_EQ((r < 0 ? r + mod.coeff : r), mod.base) << e << " = " << *value << " outside " << mod;
      }
    }
  }
  EXPECT_GT(checked, trials * 4);  // most points of most trees evaluate
  RecordProperty("points_checked", std::to_string(checked));
  RecordProperty("values_at_an_end_of_the_bound", std::to_string(tight_ends));
}

}  // namespace
}  // namespace relax

namespace relax {
namespace {

// A product against a sum of its factors scaled: x*y <= (x + y)*c when x lies in [0, c] and
// y >= 0 (x*y <= c*y, and c*x >= 0), which needs the product bounded through one factor's
// range with the other kept symbolic.
TEST(ProductBoundTest, AProductBoundedThroughOneFactorsRange) {
  SymVar x("x"), y("y");
  Analyzer analyzer;
  analyzer.bind(x, 0, 16);
  analyzer.bind(y, 0);
  EXPECT_TRUE(analyzer.prove(x * y <= (x + y) * 16));
  EXPECT_TRUE(analyzer.prove(x * y - y * 16 <= 0));
  EXPECT_TRUE(analyzer.prove(x * y >= 0));
  // Not provable, since false at x = 16, y = 1000.
  EXPECT_FALSE(analyzer.prove(x * y <= (x + y) * 15));
  // With y of either sign nothing follows.
  SymVar z("z");
  EXPECT_FALSE(analyzer.prove(x * z <= (x + z) * 16));
}

}  // namespace
}  // namespace relax
