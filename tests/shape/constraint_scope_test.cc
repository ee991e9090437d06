// Analyzer::ConstraintScope: each kind of fact (ranges, modular, relational,
// other atoms), nesting and restoring, contradictions, copies, and a property
// test: under random facts, simplify() keeps the value and prove() is true
// only when the condition holds at every sampled point satisfying the facts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../test_env.h"
#include "random_expr.h"
#include "relax/shape/analyzer.h"

namespace relax {
namespace {

constexpr int64_t kInf = ConstIntBound::kPosInf;

class ConstraintScopeTest : public ::testing::Test {
 protected:
  ConstraintScopeTest() {
    analyzer_.bind(i_, 0);
    analyzer_.bind(j_, 0);
    analyzer_.bind(n_, 0);
    analyzer_.bind(m_, 0);
  }

  /// simplify(e) printed.
  std::string simplified(const SymExpr& e) { return analyzer_.simplify(e).to_string(); }

  Analyzer analyzer_;
  SymVar i_{"i"}, j_{"j"}, n_{"n"}, m_{"m"}, z_{"z"};
};

// ---- range facts ----

TEST_F(ConstraintScopeTest, RangeFactNarrowsAndLeavingRestores) {
  EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, kInf}));
  {
    Analyzer::ConstraintScope scope(analyzer_, i_ < 10);
    EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, 9}));
    EXPECT_EQ(analyzer_.const_int_bound(i_ * 2 + 1), (ConstIntBound{1, 19}));
    EXPECT_TRUE(analyzer_.prove(i_ < 10));
    EXPECT_EQ(simplified(floordiv(i_, 16)), "0");
    EXPECT_EQ(simplified(select(i_ <= 9, i_, n_)), "i");
    EXPECT_EQ(analyzer_.constraint_depth(), 1u);
  }
  EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, kInf}));
  EXPECT_FALSE(analyzer_.prove(i_ < 10));
  EXPECT_EQ(simplified(floordiv(i_, 16)), "floordiv(i, 16)");
  EXPECT_EQ(analyzer_.constraint_depth(), 0u);
}

TEST_F(ConstraintScopeTest, RangeFactsOfEveryForm) {
  {
    Analyzer::ConstraintScope scope(analyzer_, i_ * 4 < 40);  // i <= 9
    EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, 9}));
  }
  {
    Analyzer::ConstraintScope scope(analyzer_, z_ >= -3 && 5 >= z_);
    EXPECT_EQ(analyzer_.var_bound(z_), (ConstIntBound{-3, 5}));
  }
  EXPECT_EQ(analyzer_.var_bound(z_), ConstIntBound::everything());
  {
    Analyzer::ConstraintScope scope(analyzer_, i_ == 3);
    EXPECT_EQ(analyzer_.var_bound(i_), ConstIntBound::exactly(3));
    EXPECT_EQ(simplified(i_ * 2 + j_ - 6 < j_), "false");
  }
  {
    // != trims an end of the range equal to the excluded value.
    Analyzer::ConstraintScope below(analyzer_, i_ < 8);
    Analyzer::ConstraintScope scope(analyzer_, i_ != 0 && i_ != 7);
    EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{1, 6}));
  }
  EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, kInf}));
}

TEST_F(ConstraintScopeTest, BindInsideAScopeIsPermanent) {
  {
    Analyzer::ConstraintScope scope(analyzer_, i_ < 10);
    analyzer_.bind(i_, 2);
    EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{2, 9}));
  }
  EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{2, kInf}));
}

// ---- modular facts ----

TEST_F(ConstraintScopeTest, ModularFact) {
  EXPECT_EQ(analyzer_.modular_set(n_), ModularSet::everything());
  {
    Analyzer::ConstraintScope scope(analyzer_, floormod(n_, 4) == 0);
    EXPECT_EQ(analyzer_.modular_set(n_), (ModularSet{4, 0}));
    EXPECT_EQ(analyzer_.modular_set(n_ * 3 + 1), (ModularSet{12, 1}));
    EXPECT_EQ(simplified(floormod(n_ + 2, 4)), "2");
    EXPECT_EQ(simplified(floormod(n_ * 3 + 6, 2)), "0");
    EXPECT_TRUE(analyzer_.prove_equal(floordiv(n_, 4) * 4, n_));
    EXPECT_TRUE(analyzer_.prove(floordiv(n_ + 3, 4) * 4 == n_));
    EXPECT_TRUE(analyzer_.prove(n_ != 5));
  }
  EXPECT_FALSE(analyzer_.prove_equal(floordiv(n_, 4) * 4, n_));
  EXPECT_EQ(simplified(floormod(n_ + 2, 4)), "floormod(n + 2, 4)");
  EXPECT_EQ(analyzer_.modular_set(n_), ModularSet::everything());
}

TEST_F(ConstraintScopeTest, ModularFactWithRemainderAndRangeSnapping) {
  Analyzer::ConstraintScope range(analyzer_, n_ >= 1 && n_ <= 14);
  Analyzer::ConstraintScope scope(analyzer_, floormod(n_, 4) == 3);
  EXPECT_EQ(analyzer_.modular_set(n_), (ModularSet{4, 3}));
  EXPECT_EQ(analyzer_.var_bound(n_), (ConstIntBound{3, 11}));  // 3, 7 or 11
  EXPECT_EQ(simplified(floormod(n_ + 1, 4)), "0");
  EXPECT_TRUE(analyzer_.prove(floordiv(n_, 4) * 4 == n_ - 3));
}

TEST_F(ConstraintScopeTest, NestedModularFactsCombine) {
  Analyzer::ConstraintScope four(analyzer_, floormod(n_, 4) == 2);
  Analyzer::ConstraintScope six(analyzer_, floormod(n_, 6) == 4);
  EXPECT_FALSE(six.contradicts());
  EXPECT_EQ(analyzer_.modular_set(n_), (ModularSet{12, 10}));
  EXPECT_EQ(simplified(floormod(n_, 3)), "1");
}

// ---- relational facts ----

TEST_F(ConstraintScopeTest, RelationalFactProvesTransitively) {
  analyzer_.bind(j_, 0, 3);
  Analyzer::ConstraintScope scope(analyzer_, i_ < n_);
  EXPECT_TRUE(analyzer_.prove(i_ * 4 + j_ < n_ * 4));
  EXPECT_TRUE(analyzer_.prove(i_ < n_ + 1));
  EXPECT_TRUE(analyzer_.prove(i_ <= n_));
  EXPECT_TRUE(analyzer_.prove(i_ + 1 <= n_));
  EXPECT_TRUE(analyzer_.prove(n_ > 0));  // i >= 0 declared
  EXPECT_TRUE(analyzer_.prove(min(i_, n_) == i_));
  EXPECT_TRUE(analyzer_.prove(max(i_ + 1, n_) == n_));
  EXPECT_EQ(simplified(min(i_, n_)), "i");
  EXPECT_EQ(simplified(select(i_ < n_, j_, m_)), "j");
  EXPECT_EQ(simplified(i_ < n_), "true");
  EXPECT_EQ(simplified(n_ <= i_), "false");
  EXPECT_FALSE(analyzer_.prove(i_ + 2 <= n_));
  EXPECT_FALSE(analyzer_.prove(i_ * 4 + j_ < n_ * 3));
  EXPECT_EQ(analyzer_.const_int_bound(n_ - i_), (ConstIntBound{1, kInf}));
}

TEST_F(ConstraintScopeTest, RelationalFactBoundsPlainVariables) {
  analyzer_.bind(n_, 0, 100);
  Analyzer::ConstraintScope scope(analyzer_, i_ < n_);
  EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, 99}));
  EXPECT_EQ(analyzer_.var_bound(n_), (ConstIntBound{1, 100}));
  EXPECT_EQ(analyzer_.const_int_bound(i_ * 2), (ConstIntBound{0, 198}));
}

TEST_F(ConstraintScopeTest, ChainsOfRelationalFacts) {
  Analyzer::ConstraintScope a(analyzer_, i_ < j_);
  Analyzer::ConstraintScope b(analyzer_, j_ + m_ <= n_);
  EXPECT_TRUE(analyzer_.prove(i_ + m_ < n_));
  EXPECT_TRUE(analyzer_.prove(i_ < n_));  // m >= 0 declared
  EXPECT_FALSE(analyzer_.prove(i_ + m_ + 1 < n_));
}

TEST_F(ConstraintScopeTest, EqualityFactIsUsedBothWays) {
  Analyzer::ConstraintScope scope(analyzer_, n_ == m_ * 4);
  EXPECT_TRUE(analyzer_.prove(n_ - m_ * 4 == 0));
  EXPECT_TRUE(analyzer_.prove(n_ >= m_));
  EXPECT_EQ(simplified(max(n_, m_ * 4)), "n");
}

TEST_F(ConstraintScopeTest, TiledLoopTailCheck) {
  // for i in range(floordiv(n + 3, 4)), for j in range(4): i*4 + j < n is not provable,
  // but inside `if n % 4 == 0` it is.
  Analyzer::ConstraintScope loop_i(analyzer_, i_ < floordiv(n_ + 3, 4));
  Analyzer::ConstraintScope loop_j(analyzer_, j_ < 4);
  EXPECT_FALSE(analyzer_.prove(i_ * 4 + j_ < n_));
  Analyzer::ConstraintScope divisible(analyzer_, floormod(n_, 4) == 0);
  EXPECT_TRUE(analyzer_.prove(i_ * 4 + j_ < n_));
}

// ---- other atoms ----

TEST_F(ConstraintScopeTest, OtherAtomsAreKnownAsWritten) {
  SymVar flag("flag", DataType::boolean());
  Analyzer::ConstraintScope scope(analyzer_, flag && (i_ < 3 || j_ < 3));
  EXPECT_TRUE(analyzer_.prove(flag));
  EXPECT_TRUE(analyzer_.prove(i_ < 3 || j_ < 3));
  EXPECT_TRUE(analyzer_.prove(flag && (i_ <= 2 || j_ <= 2)));
  EXPECT_FALSE(analyzer_.prove(i_ < 3));
}

// ---- nesting, order, contradictions, copies ----

TEST_F(ConstraintScopeTest, NestingIsLastInFirstOut) {
  Analyzer::ConstraintScope outer(analyzer_, i_ < 100);
  {
    Analyzer::ConstraintScope inner(analyzer_, i_ < 10 && i_ < n_);
    EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, 9}));
    EXPECT_TRUE(analyzer_.prove(i_ < n_));
    EXPECT_EQ(analyzer_.constraint_depth(), 2u);
  }
  EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, 99}));
  EXPECT_FALSE(analyzer_.prove(i_ < n_));
  {
    // A looser inner fact does not widen the outer one.
    Analyzer::ConstraintScope inner(analyzer_, i_ < 1000);
    EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, 99}));
  }
}

TEST_F(ConstraintScopeTest, RedundantFactAddsNothing) {
  Analyzer::ConstraintScope outer(analyzer_, i_ < n_);
  Analyzer::ConstraintScope again(analyzer_, i_ <= n_);
  EXPECT_FALSE(again.contradicts());
  EXPECT_TRUE(analyzer_.prove(i_ < n_));
}

TEST_F(ConstraintScopeTest, ContradictingFactsAddNothing) {
  {
    Analyzer::ConstraintScope scope(analyzer_, i_ < 0);  // 0 <= i declared
    EXPECT_TRUE(scope.contradicts());
    EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, kInf}));
    EXPECT_FALSE(analyzer_.prove(i_ < 0));
    EXPECT_FALSE(analyzer_.prove(i_ > 5));
    EXPECT_TRUE(analyzer_.prove(i_ >= 0));
  }
  {
    Analyzer::ConstraintScope a(analyzer_, i_ < n_);
    Analyzer::ConstraintScope b(analyzer_, n_ < i_);
    EXPECT_TRUE(b.contradicts());
    EXPECT_FALSE(analyzer_.prove(n_ < i_));
  }
  {
    Analyzer::ConstraintScope a(analyzer_, floormod(n_, 2) == 0);
    Analyzer::ConstraintScope b(analyzer_, floormod(n_, 4) == 1);
    EXPECT_TRUE(b.contradicts());
    EXPECT_EQ(analyzer_.modular_set(n_), (ModularSet{2, 0}));
  }
  {
    // Two range parts that only contradict together: the whole fact is dropped.
    Analyzer::ConstraintScope a(analyzer_, z_ > 5 && z_ < 3);
    EXPECT_TRUE(a.contradicts());
    EXPECT_EQ(analyzer_.var_bound(z_), ConstIntBound::everything());
  }
  {
    Analyzer::ConstraintScope a(analyzer_, i_ < 5);
    Analyzer::ConstraintScope b(analyzer_, i_ > 7 && n_ < 3);
    EXPECT_TRUE(b.contradicts());
    EXPECT_EQ(analyzer_.var_bound(n_), (ConstIntBound{0, kInf}));
    EXPECT_EQ(analyzer_.var_bound(i_), (ConstIntBound{0, 4}));
  }
  EXPECT_EQ(analyzer_.constraint_depth(), 0u);
}

TEST_F(ConstraintScopeTest, CopiesKeepTheFactsInForce) {
  std::optional<Analyzer> copy;
  {
    Analyzer::ConstraintScope scope(analyzer_, i_ < n_ && j_ < 4);
    copy.emplace(analyzer_);
    {
      Analyzer::ConstraintScope on_copy(*copy, m_ < 2);
      EXPECT_EQ(copy->var_bound(m_), (ConstIntBound{0, 1}));
      EXPECT_EQ(analyzer_.var_bound(m_), (ConstIntBound{0, kInf}));
    }
  }
  EXPECT_FALSE(analyzer_.prove(i_ < n_));
  EXPECT_TRUE(copy->prove(i_ < n_));
  EXPECT_EQ(copy->var_bound(j_), (ConstIntBound{0, 3}));
  EXPECT_EQ(copy->constraint_depth(), 1u);
}

TEST_F(ConstraintScopeTest, OutOfOrderEndAborts) {
  EXPECT_DEATH(
      {
        auto outer = std::make_unique<Analyzer::ConstraintScope>(analyzer_, i_ < 10);
        Analyzer::ConstraintScope inner(analyzer_, i_ < 5);
        outer.reset();
      },
      "innermost first");
}

TEST_F(ConstraintScopeTest, NonBooleanFactAborts) {
  EXPECT_DEATH({ Analyzer::ConstraintScope scope(analyzer_, i_ + 1); }, "must be boolean");
}

// ---- property test ----

/// Random facts `v <= c`, `c <= v` and `v < w + c` over four variables in
/// [-8, 8]; random expressions and comparisons; every point of the box that
/// satisfies the facts is checked.
class ConstraintPropertyTest : public ::testing::Test {
 protected:
  std::mt19937 rng_{20240611};
  std::vector<SymVar> vars_ = {SymVar("a"), SymVar("b"), SymVar("c"), SymVar("d")};

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  SymExpr var() { return vars_[uniform(0, 3)]; }

  SymExpr fact() {
    switch (uniform(0, 4)) {
      case 0:
        return var() <= uniform(-4, 8);
      case 1:
        return uniform(-8, 4) <= var();
      case 2:
        return floormod(var(), uniform(2, 4)) == uniform(0, 1);
      default:
        return var() < var() + uniform(-2, 3);
    }
  }

  SymExpr integer(int depth) {
    if (depth == 0 || uniform(0, 4) == 0) return uniform(0, 3) == 0 ? SymExpr(uniform(-5, 5)) : var();
    switch (uniform(0, 7)) {
      case 0:
        return integer(depth - 1) + integer(depth - 1);
      case 1:
        return integer(depth - 1) - integer(depth - 1);
      case 2:
        return integer(depth - 1) * uniform(-3, 4);
      case 3:
        return floordiv(integer(depth - 1), uniform(1, 5));
      case 4:
        return floormod(integer(depth - 1), uniform(1, 5));
      case 5:
        return min(integer(depth - 1), integer(depth - 1));
      case 6:
        return max(integer(depth - 1), integer(depth - 1));
      default:
        return select(integer(depth - 1) < integer(depth - 1), integer(depth - 1),
                      integer(depth - 1));
    }
  }

  SymExpr condition(int depth) {
    SymExpr a = integer(depth), b = integer(depth);
    switch (uniform(0, 3)) {
      case 0:
        return a < b;
      case 1:
        return a <= b;
      case 2:
        return a == b;
      default:
        return a != b;
    }
  }
};

TEST_F(ConstraintPropertyTest, SimplifyKeepsValuesAndProveIsSound) {
  constexpr int64_t kBox = 8;
  int64_t trials = 0, proven = 0, points_checked = 0;
  // 20 expressions per set of facts; RELAX_FUZZ_TRIALS counts expressions (6,000 by default).
  const int64_t fact_sets = std::max<int64_t>(1, testing_util::fuzz_trials(6000) / 20);
  for (int64_t trial = 0; trial < fact_sets; ++trial) {
    Analyzer analyzer;
    for (const SymVar& v : vars_) analyzer.bind(v, -kBox, kBox);
    std::vector<SymExpr> facts;
    const int n_facts = static_cast<int>(uniform(1, 4));
    for (int f = 0; f < n_facts; ++f) facts.push_back(fact());
    // Scopes are nested in creation order (a vector of them would end front first).
    std::vector<std::unique_ptr<Analyzer::ConstraintScope>> scopes;
    for (const SymExpr& f : facts) scopes.push_back(std::make_unique<Analyzer::ConstraintScope>(analyzer, f));

    // The points of the box that satisfy every fact.
    std::vector<SymVarMap<int64_t>> points;
    for (int64_t a = -kBox; a <= kBox; ++a) {
      for (int64_t b = -kBox; b <= kBox; b += 2) {
        for (int64_t c = -kBox; c <= kBox; c += 3) {
          for (int64_t d = -kBox; d <= kBox; d += 4) {
            SymVarMap<int64_t> p = {{vars_[0], a}, {vars_[1], b}, {vars_[2], c}, {vars_[3], d}};
            bool ok = true;
            for (const SymExpr& f : facts) ok = ok && *evaluate(f, p) != 0;
            if (ok) points.push_back(std::move(p));
          }
        }
      }
    }
    for (int e = 0; e < 20; ++e) {
      const SymExpr x = e % 2 == 0 ? integer(3) : condition(2);
      const SymExpr simple = analyzer.simplify(x);
      const bool claimed = x.dtype().is_bool() && analyzer.prove(x);
      proven += claimed;
      const ConstIntBound bound = analyzer.const_int_bound(x);
      for (const SymVarMap<int64_t>& p : points) {
        absl::StatusOr<int64_t> before = evaluate(x, p);
        if (!before.ok()) continue;  // division by zero in the input
        ++points_checked;
        absl::StatusOr<int64_t> after = evaluate(simple, p);
        ASSERT_TRUE(after.ok()) << x << " -> " << simple << ": " << after.status();
        ASSERT_EQ(*before, *after) << "`" << x << "` simplified to `" << simple << "`";
        ASSERT_TRUE(!claimed || *before == 1) << "prove(`" << x << "`) is false at a point";
        ASSERT_TRUE(*before >= bound.min_value && *before <= bound.max_value)
            << "`" << x << "` = " << *before << " outside " << bound;
      }
      ++trials;
    }
    while (!scopes.empty()) scopes.pop_back();
    // Leaving every scope restores the declared ranges.
    for (const SymVar& v : vars_) ASSERT_EQ(analyzer.var_bound(v), (ConstIntBound{-kBox, kBox}));
  }
  RecordProperty("expressions", static_cast<int>(trials));
  RecordProperty("proven", static_cast<int>(proven));
  // The facts are used, not only trivially true conditions (at the default 6,000 expressions:
  // more than 100 proven, 100,000 points; the thresholds scale with the count).
  EXPECT_GT(proven, trials / 60);
  EXPECT_GT(points_checked, trials * 16);
}

}  // namespace
}  // namespace relax
