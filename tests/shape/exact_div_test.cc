// Analyzer::exact_div: the quotient of two integer expressions when the
// division is exact as polynomials (the -1 of reshape: `(b, n, 32, 128) ->
// (b, n, -1)` reads b*n*4096 / (b*n)), nullopt otherwise. Every quotient found is
// checked by evaluation: q * b == a at random points, and q == floordiv(a, b)
// wherever b != 0.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "relax/shape/analyzer.h"

namespace relax {
namespace {

class ExactDivTest : public ::testing::Test {
 protected:
  /// The printed quotient of a / b, or "none".
  std::string quotient(const SymExpr& a, const SymExpr& b) {
    std::optional<SymExpr> q = analyzer_.exact_div(a, b);
    if (!q) return "none";
    check_by_evaluation(a, b, *q);
    return to_string(*q);
  }

  /// q * b == a everywhere, and q == floordiv(a, b) where b != 0, at random points.
  void check_by_evaluation(const SymExpr& a, const SymExpr& b, const SymExpr& q) {
    std::vector<SymVar> vars;
    auto collect = [&](const SymVar& v) {
      for (const SymVar& known : vars) {
        if (known.same_as(v)) return;
      }
      vars.push_back(v);
    };
    for_each_var(a, collect);
    for_each_var(b, collect);
    std::mt19937_64 rng(structural_hash(a) ^ structural_hash(b));
    for (int sample = 0; sample < 64; ++sample) {
      SymVarMap<int64_t> env;
      for (const SymVar& v : vars) env[v] = std::uniform_int_distribution<int64_t>(-40, 40)(rng);
      absl::StatusOr<int64_t> av = evaluate(a, env), bv = evaluate(b, env), qv = evaluate(q, env);
      ASSERT_TRUE(av.ok() && bv.ok() && qv.ok()) << a << " / " << b << " = " << q;
      EXPECT_EQ(*qv * *bv, *av) << a << " / " << b << " = " << q << " at sample " << sample;
      if (*bv != 0) {
        absl::StatusOr<int64_t> floor_q = evaluate(floordiv(a, b), env);
        ASSERT_TRUE(floor_q.ok());
        EXPECT_EQ(*qv, *floor_q) << a << " / " << b << " = " << q;
      }
    }
  }

  Analyzer analyzer_;
  SymVar b_{"b"}, n_{"n"}, m_{"m"}, k_{"k"};
};

TEST_F(ExactDivTest, CommonFactorsCancel) {
  EXPECT_EQ(quotient(n_ * 64, n_), "64");
  EXPECT_EQ(quotient(b_ * n_ * 4096, b_ * n_), "4096");
  EXPECT_EQ(quotient(n_ * m_ * 6, n_ * 3), "m * 2");
  EXPECT_EQ(quotient(n_ * 4 * 16, n_), "64");  // reshape (n, 4, 16) -> (n, -1)
  EXPECT_EQ(quotient(b_ * n_ * 32 * 128, n_ * b_), "4096");
  EXPECT_EQ(quotient(n_ * n_ * m_, n_), "m * n");
  EXPECT_EQ(quotient(n_ * 8, 4), "n * 2");
  EXPECT_EQ(quotient(n_, n_), "1");
  EXPECT_EQ(quotient(n_ * -6, n_ * 2), "-3");
}

TEST_F(ExactDivTest, ZeroNumeratorGivesZero) {
  EXPECT_EQ(quotient(SymExpr(0), n_), "0");
  EXPECT_EQ(quotient(n_ - n_, m_ + 1), "0");
}

TEST_F(ExactDivTest, SumsDivideTermByTerm) {
  EXPECT_EQ(quotient(n_ * 4 + 8, 4), "n + 2");
  EXPECT_EQ(quotient(n_ * m_ + n_ * k_, n_), "k + m");
  EXPECT_EQ(quotient(n_ * m_ * 2 + n_ * 2, m_ + 1), "n * 2");
}

TEST_F(ExactDivTest, PolynomialDivisorsOfSeveralTerms) {
  // (n + 1) * (n - 1) / (n + 1); the numerator written expanded.
  EXPECT_EQ(quotient(n_ * n_ - 1, n_ + 1), "n - 1");
  // (n + m)^2 / (n + m)
  EXPECT_EQ(quotient((n_ + m_) * (n_ + m_), n_ + m_), "m + n");
  // (b + 1) * (n * 2 + m) * 3 / ((n * 2 + m) * 3), the divisor's constant included.
  EXPECT_EQ(quotient((b_ + 1) * (n_ * 2 + m_) * 3, n_ * 6 + m_ * 3), "b + 1");
}

TEST_F(ExactDivTest, InexactDivisionsGiveNothing) {
  EXPECT_EQ(quotient(n_, m_), "none");
  EXPECT_EQ(quotient(n_ + 1, 2), "none");
  EXPECT_EQ(quotient(n_ * 3, n_ * 2), "none");
  EXPECT_EQ(quotient(n_ * n_, n_ + 1), "none");  // n - 1 remains 1
  EXPECT_EQ(quotient(n_ * 64, n_ * m_), "none");
  EXPECT_EQ(quotient(SymExpr(7), 2), "none");
  EXPECT_EQ(quotient(n_ + 1, n_ * 2 + 2), "none");  // the quotient 1/2 is not an integer
}

TEST_F(ExactDivTest, DivisionByZeroGivesNothing) {
  EXPECT_EQ(quotient(n_ * 4, 0), "none");
  EXPECT_EQ(quotient(SymExpr(0), n_ - n_), "none");
}

TEST_F(ExactDivTest, ConstantsFold) {
  EXPECT_EQ(quotient(SymExpr(4096), 64), "64");
  EXPECT_EQ(quotient(SymExpr(-12), 4), "-3");
}

TEST_F(ExactDivTest, NonIntegerOperandsGiveNothing) {
  SymVar x("x", DataType::float32());
  EXPECT_FALSE(analyzer_.exact_div(x, x).has_value());
  SymVar i("i", DataType::int32());
  EXPECT_FALSE(analyzer_.exact_div(i, i).has_value());
}

TEST_F(ExactDivTest, QuotientIsCanonical) {
  // The quotient is already in simplify's form, so it compares structurally with
  // other simplified dims.
  for (const auto& [a, b] : std::vector<std::pair<SymExpr, SymExpr>>{
           {n_ * m_ * 6, n_ * 3}, {n_ * n_ - 1, n_ + 1}, {b_ * n_ * 4096, b_ * n_}}) {
    std::optional<SymExpr> q = analyzer_.exact_div(a, b);
    ASSERT_TRUE(q.has_value()) << a << " / " << b;
    EXPECT_TRUE(structural_equal(*q, analyzer_.simplify(*q))) << *q;
  }
}

TEST_F(ExactDivTest, OpaqueAtomsCancelLikeVariables) {
  // floordiv(n, 2) is an atom of the canonical form: a common factor like a variable.
  const SymExpr half = floordiv(n_, 2);
  EXPECT_EQ(quotient(half * m_ * 4, half * 2), "m * 2");
}

TEST_F(ExactDivTest, RandomProductsDivideBack) {
  // q * d expanded by the simplifier divides back to q for random polynomials q, d.
  std::mt19937_64 rng(7);
  const std::vector<SymExpr> atoms = {b_, n_, m_, k_};
  auto random_poly = [&](int terms) {
    SymExpr p = std::uniform_int_distribution<int64_t>(-3, 3)(rng);
    for (int t = 0; t < terms; ++t) {
      SymExpr term = std::uniform_int_distribution<int64_t>(1, 5)(rng) *
                     (std::uniform_int_distribution<int>(0, 1)(rng) == 0 ? 1 : -1);
      const int degree = std::uniform_int_distribution<int>(1, 2)(rng);
      for (int d = 0; d < degree; ++d) term = term * atoms[rng() % atoms.size()];
      p = p + term;
    }
    return p;
  };
  int divided = 0;
  for (int round = 0; round < 200; ++round) {
    const SymExpr q = random_poly(std::uniform_int_distribution<int>(0, 3)(rng));
    const SymExpr d = random_poly(std::uniform_int_distribution<int>(1, 2)(rng));
    if (analyzer_.simplify(d).as_const() == std::optional<int64_t>(0)) continue;
    const SymExpr a = analyzer_.simplify(q * d);
    std::optional<SymExpr> got = analyzer_.exact_div(a, d);
    ASSERT_TRUE(got.has_value()) << "(" << q << ") * (" << d << ") = " << a;
    EXPECT_TRUE(structural_equal(*got, analyzer_.simplify(q)))
        << a << " / " << d << " gave " << *got << ", expected " << analyzer_.simplify(q);
    ++divided;
  }
  EXPECT_GT(divided, 150);
}

}  // namespace
}  // namespace relax
