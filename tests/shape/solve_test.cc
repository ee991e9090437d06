// solve_linear: which dims determine their one unknown variable, and the
// decomposition coeff * var + rest they are read as. Every decomposition found
// is also checked by evaluation: expr and coeff * var + rest agree at sample
// points, and (expr - rest) / coeff gives back the variable (the VM's rule).
#include "relax/shape/solve.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "relax/shape/analyzer.h"

namespace relax {
namespace {

class SolveLinearTest : public ::testing::Test {
 protected:
  SymVar n_{"n"};
  SymVar m_{"m"};
  SymVar k_{"k"};

  /// m is known; n and k are not.
  std::optional<LinearSolution> solve(const SymExpr& e) {
    return solve_linear(e, [this](const SymVar& v) { return v.id() == m_.id(); });
  }

  /// Expects `e` to solve for `var` with `coeff` and a rest that prints as `rest`,
  /// and checks the decomposition by evaluation.
  void expect_solution(const SymExpr& e, const SymVar& var, int64_t coeff,
                       const std::string& rest) {
    SCOPED_TRACE(e.to_string());
    std::optional<LinearSolution> s = solve(e);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->var.id(), var.id());
    EXPECT_EQ(s->coeff, coeff);
    EXPECT_EQ(s->rest.to_string(), rest);
    for (int64_t v : {-7, 0, 1, 5, 1000}) {
      for (int64_t mv : {0, 3, 64}) {
        SymVarMap<int64_t> at{{m_, mv}, {k_, 11}};  // k only where it cancels
        at.insert_or_assign(var, v);
        absl::StatusOr<int64_t> dim = evaluate(e, at);
        absl::StatusOr<int64_t> rest_value = evaluate(s->rest, at);
        ASSERT_TRUE(dim.ok() && rest_value.ok());
        EXPECT_EQ(*dim, s->coeff * v + *rest_value) << "at var = " << v << ", m = " << mv;
        EXPECT_EQ((*dim - *rest_value) % s->coeff, 0);
        EXPECT_EQ((*dim - *rest_value) / s->coeff, v);
      }
    }
  }
};

TEST_F(SolveLinearTest, ScaledVariable) { expect_solution(n_ * 2, n_, 2, "0"); }

TEST_F(SolveLinearTest, ScaledVariablePlusConstant) { expect_solution(n_ * 2 + 1, n_, 2, "1"); }

TEST_F(SolveLinearTest, KnownVariableGoesToRest) { expect_solution(n_ + m_, n_, 1, "m"); }

TEST_F(SolveLinearTest, ProductIsDistributed) { expect_solution((n_ + 1) * 4, n_, 4, "4"); }

TEST_F(SolveLinearTest, NegativeCoefficient) { expect_solution(SymExpr(5) - n_, n_, -1, "5"); }

TEST_F(SolveLinearTest, TermsOfTheVariableAreCollected) {
  expect_solution(n_ * 2 + m_ * 3 + n_ * 2 - 1, n_, 4, "m * 3 - 1");
}

TEST_F(SolveLinearTest, KnownVariablesMayBeNonlinear) {
  expect_solution(n_ * 3 + m_ * m_ + floordiv(m_, 2), n_, 3, "m * m + floordiv(m, 2)");
}

TEST_F(SolveLinearTest, BareVariable) { expect_solution(n_, n_, 1, "0"); }

TEST_F(SolveLinearTest, NonlinearUseIsNotSolved) {
  EXPECT_FALSE(solve(n_ * n_).has_value());
  EXPECT_FALSE(solve(n_ * n_ + n_).has_value());
  // The coefficient of n would be m, not a constant.
  EXPECT_FALSE(solve(n_ * m_).has_value());
  EXPECT_FALSE(solve(n_ * m_ + n_).has_value());
}

TEST_F(SolveLinearTest, VariableInsideAnAtomIsNotSolved) {
  EXPECT_FALSE(solve(floordiv(n_, 2)).has_value());
  EXPECT_FALSE(solve(floormod(n_, 4) + n_).has_value());
  EXPECT_FALSE(solve(min(n_, SymExpr(8))).has_value());
  EXPECT_FALSE(solve(max(n_, m_) + n_).has_value());
}

TEST_F(SolveLinearTest, TwoUnknownsAreNotSolved) {
  EXPECT_FALSE(solve(n_ + k_).has_value());
  EXPECT_FALSE(solve(n_ * 2 + k_ * 3 + m_).has_value());
}

TEST_F(SolveLinearTest, NoUnknownIsNotSolved) {
  EXPECT_FALSE(solve(m_ * 2 + 1).has_value());
  EXPECT_FALSE(solve(SymExpr(7)).has_value());
  // n cancels out: the canonical form does not mention it.
  EXPECT_FALSE(solve(n_ + m_ - n_).has_value());
}

TEST_F(SolveLinearTest, CancellationLeavesOneUnknown) {
  // k cancels, so n is the only unknown left.
  expect_solution(n_ * 2 + k_ - k_, n_, 2, "0");
}

TEST_F(SolveLinearTest, WithoutKnownEveryVariableIsUnknown) {
  std::optional<LinearSolution> s = solve_linear(n_ * 3 + 2, nullptr);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->var.id(), n_.id());
  EXPECT_FALSE(solve_linear(n_ + m_, nullptr).has_value());
  EXPECT_FALSE(solve_linear(n_ + m_, [](const SymVar&) { return false; }).has_value());
}

TEST_F(SolveLinearTest, OnlyInt64ExpressionsAreSolved) {
  SymVar x("x", DataType::int32());
  EXPECT_FALSE(solve(x * 2).has_value());
  EXPECT_FALSE(solve(SymExpr()).has_value());
  EXPECT_FALSE(solve(n_ < 4).has_value());
}

TEST_F(SolveLinearTest, SolutionAgreesWithTheAnalyzer) {
  // coeff * var + rest is the same value as the dim, as the Analyzer sees it.
  Analyzer analyzer;
  const std::vector<SymExpr> dims = {n_ * 2,       (n_ + m_) * 3 - m_, SymExpr(12) - n_ * 4,
                                     m_ - n_ + 1, n_ * 6 + floordiv(m_ + 1, 2)};
  for (const SymExpr& d : dims) {
    std::optional<LinearSolution> s = solve(d);
    ASSERT_TRUE(s.has_value()) << d;
    EXPECT_TRUE(analyzer.prove_equal(d, s->var * s->coeff + s->rest)) << d;
  }
}

}  // namespace
}  // namespace relax
