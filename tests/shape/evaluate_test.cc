// evaluate(), substitute() and for_each_var().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "relax/shape/sym_expr.h"

namespace relax {
namespace {

using ::testing::HasSubstr;

class EvaluateTest : public ::testing::Test {
 protected:
  /// Evaluates `e`, which must succeed, under the current bindings.
  int64_t eval(const SymExpr& e) {
    absl::StatusOr<int64_t> result = evaluate(e, bindings_);
    EXPECT_TRUE(result.ok()) << "`" << e << "`: " << result.status();
    return result.ok() ? *result : INT64_C(-777);
  }

  /// The message of the error evaluating `e` must give.
  std::string eval_error(const SymExpr& e) {
    absl::StatusOr<int64_t> result = evaluate(e, bindings_);
    if (result.ok()) {
      ADD_FAILURE() << "`" << e << "` evaluated to " << *result;
      return "";
    }
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(result.status().message());
  }

  int64_t eval_with(const SymExpr& e, int64_t a_value, int64_t b_value) {
    bindings_[a] = a_value;
    bindings_[b] = b_value;
    return eval(e);
  }

  SymVar a{"a"}, b{"b"}, n{"n"}, m{"m"};
  SymVarMap<int64_t> bindings_;
};

// ---------------------------------------------------------------------------
// Values.

TEST_F(EvaluateTest, ConstantsAndVariables) {
  bindings_[n] = 7;
  EXPECT_EQ(eval(SymExpr(42)), 42);
  EXPECT_EQ(eval(SymExpr(INT64_MIN)), INT64_MIN);
  EXPECT_EQ(eval(n), 7);
  EXPECT_EQ(eval(n * 4 + 1), 29);
}

TEST_F(EvaluateTest, LanguageModelShapes) {
  bindings_[b] = 4;
  bindings_[n] = 2048;
  EXPECT_EQ(eval(b * n * 32 * 128), 4 * 2048 * 32 * 128);
  for (int64_t len : {0, 1, 15, 16, 17, 1000}) {
    bindings_[n] = len;
    EXPECT_EQ(eval(floordiv(n + 15, 16) * 16), (len + 15) / 16 * 16) << len;
  }
}

TEST_F(EvaluateTest, ArithmeticOperators) {
  EXPECT_EQ(eval_with(a + b, 3, -8), -5);
  EXPECT_EQ(eval_with(a - b, 3, -8), 11);
  EXPECT_EQ(eval_with(a * b, 3, -8), -24);
  EXPECT_EQ(eval_with(min(a, b), 3, -8), -8);
  EXPECT_EQ(eval_with(max(a, b), 3, -8), 3);
  EXPECT_EQ(eval_with(-a, 3, -8), -3);
}

TEST_F(EvaluateTest, FloorDivisionAndModuloTable) {
  struct Row {
    int64_t a, b, quotient, remainder;
  };
  // Written out by hand: the quotient rounds toward negative infinity and the remainder
  // takes the divisor's sign.
  const Row rows[] = {
      {7, 2, 3, 1},
      {-7, 2, -4, 1},
      {7, -2, -4, -1},
      {-7, -2, 3, -1},
      {6, 3, 2, 0},
      {-6, 3, -2, 0},
      {6, -3, -2, 0},
      {0, 5, 0, 0},
      {0, -5, 0, 0},
      {1, 5, 0, 1},
      {-1, 5, -1, 4},
      {1, -5, -1, -4},
      {-1, -5, 0, -1},
      {5, 1, 5, 0},
      {-5, -1, 5, 0},
      {INT64_MAX, 2, INT64_MAX / 2, 1},
      {INT64_MIN, 2, INT64_MIN / 2, 0},
      {INT64_MIN, 3, -3074457345618258603, 1},
      {INT64_MIN, -3, 3074457345618258602, -2},
      {INT64_MAX, -1, -INT64_MAX, 0},
      {INT64_MIN, INT64_MAX, -2, INT64_MAX - 1},
      {INT64_MAX, INT64_MIN, -1, -1},
      {-1, INT64_MIN, 0, -1},
      {1, INT64_MIN, -1, INT64_MIN + 1},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(eval_with(floordiv(a, b), row.a, row.b), row.quotient) << row.a << ", " << row.b;
    EXPECT_EQ(eval_with(floormod(a, b), row.a, row.b), row.remainder) << row.a << ", " << row.b;
  }
}

TEST_F(EvaluateTest, FloorSemanticsMatchRealDivisionOnSmallOperands) {
  for (int64_t x = -30; x <= 30; ++x) {
    for (int64_t y = -7; y <= 7; ++y) {
      if (y == 0) continue;
      const auto expected_q = static_cast<int64_t>(std::floor(static_cast<double>(x) / y));
      EXPECT_EQ(eval_with(floordiv(a, b), x, y), expected_q) << x << " / " << y;
      EXPECT_EQ(eval_with(floormod(a, b), x, y), x - y * expected_q) << x << " % " << y;
    }
  }
}

TEST_F(EvaluateTest, DivisionIdentityHoldsOnRandomOperands) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    const auto x = static_cast<int64_t>(rng());
    auto y = static_cast<int64_t>(rng()) >> (rng() % 63);
    if (y == 0 || (x == INT64_MIN && y == -1)) continue;
    const int64_t q = eval_with(floordiv(a, b), x, y);
    const int64_t r = eval_with(floormod(a, b), x, y);
    // x == q * y + r with r in [0, y) or (y, 0]; wrapping arithmetic makes the check exact.
    EXPECT_EQ(static_cast<uint64_t>(q) * static_cast<uint64_t>(y) + static_cast<uint64_t>(r),
              static_cast<uint64_t>(x));
    if (y > 0) {
      EXPECT_TRUE(r >= 0 && r < y) << x << " % " << y << " = " << r;
    } else {
      EXPECT_TRUE(r <= 0 && r > y) << x << " % " << y << " = " << r;
    }
  }
}

TEST_F(EvaluateTest, ModuloOfMinByMinusOneIsZero) {
  EXPECT_EQ(eval_with(floormod(a, b), INT64_MIN, -1), 0);
}

TEST_F(EvaluateTest, ComparisonsGiveZeroOrOne) {
  EXPECT_EQ(eval_with(a < b, 1, 2), 1);
  EXPECT_EQ(eval_with(a < b, 2, 2), 0);
  EXPECT_EQ(eval_with(a <= b, 2, 2), 1);
  EXPECT_EQ(eval_with(a > b, 2, 1), 1);
  EXPECT_EQ(eval_with(a >= b, 1, 2), 0);
  EXPECT_EQ(eval_with(a == b, -3, -3), 1);
  EXPECT_EQ(eval_with(a != b, -3, -3), 0);
  EXPECT_EQ(eval_with(a < b, INT64_MIN, INT64_MAX), 1);
}

TEST_F(EvaluateTest, BooleanConstantsAndLogic) {
  const SymExpr t = SymExpr::boolean(true);
  const SymExpr f = SymExpr::boolean(false);
  EXPECT_EQ(eval(t), 1);
  EXPECT_EQ(eval(f), 0);
  EXPECT_EQ(eval(t && f), 0);
  EXPECT_EQ(eval(t && t), 1);
  EXPECT_EQ(eval(f || t), 1);
  EXPECT_EQ(eval(f || f), 0);
  EXPECT_EQ(eval(!f), 1);
  EXPECT_EQ(eval(!t), 0);
  EXPECT_EQ(eval_with((a < b) && !(a == 0), 1, 2), 1);
}

TEST_F(EvaluateTest, SelectPicksABranch) {
  const SymExpr e = select(a < b, a, b * 10);
  EXPECT_EQ(eval_with(e, 1, 2), 1);
  EXPECT_EQ(eval_with(e, 3, 2), 20);
}

TEST_F(EvaluateTest, LogicAndSelectAreLazy) {
  bindings_[n] = 0;
  bindings_[m] = 9;
  EXPECT_EQ(eval((n > 0) && (floordiv(m, n) > 2)), 0);
  EXPECT_EQ(eval((n == 0) || (floormod(m, n) == 1)), 1);
  EXPECT_EQ(eval(select(n == 0, SymExpr(0), floordiv(m, n))), 0);
  // The variable in the branch not taken need not be bound either.
  SymVar unbound("unbound");
  EXPECT_EQ(eval(select(n == 0, m, unbound)), 9);
  // The branch taken still reports its errors.
  EXPECT_THAT(eval_error(select(n == 0, floordiv(m, n), SymExpr(1))),
              HasSubstr("division by zero"));
}

// ---------------------------------------------------------------------------
// Errors.

TEST_F(EvaluateTest, UnboundVariableIsNamed) {
  EXPECT_EQ(eval_error(n * 4 + 1), "unbound symbolic variable `n` in `n * 4 + 1`");
  bindings_[n] = 1;
  EXPECT_EQ(eval_error(n + m), "unbound symbolic variable `m` in `n + m`");
}

TEST_F(EvaluateTest, BindingIsByIdentityNotName) {
  SymVar other_n("n");
  bindings_[other_n] = 5;
  EXPECT_THAT(eval_error(n + 1), HasSubstr("unbound symbolic variable `n`"));
  EXPECT_EQ(eval(other_n + 1), 6);
}

TEST_F(EvaluateTest, DivisionByZeroNamesTheSubexpression) {
  bindings_[n] = 10;
  bindings_[m] = 3;
  EXPECT_EQ(eval_error(floordiv(n, m - 3)), "division by zero in `floordiv(n, m - 3)`");
  EXPECT_EQ(eval_error(n + floordiv(n, m - 3) * 2), "division by zero in `floordiv(n, m - 3)`");
}

TEST_F(EvaluateTest, ModuloByZeroNamesTheSubexpression) {
  bindings_[n] = 10;
  EXPECT_EQ(eval_error(floormod(n, 0) + 1), "modulo by zero in `floormod(n, 0)`");
}

TEST_F(EvaluateTest, AdditionOverflowIsAnError) {
  bindings_[a] = INT64_MAX;
  EXPECT_EQ(eval_error(a + 1), "int64 overflow in `a + 1` (9223372036854775807 + 1)");
  EXPECT_THAT(eval_error(a + 1 + 0), HasSubstr("int64 overflow in `a + 1`"));
  bindings_[a] = INT64_MIN;
  EXPECT_THAT(eval_error(a + -1), HasSubstr("(-9223372036854775808 + -1)"));
}

TEST_F(EvaluateTest, SubtractionOverflowIsAnError) {
  bindings_[a] = INT64_MIN;
  EXPECT_EQ(eval_error(a - 1), "int64 overflow in `a - 1` (-9223372036854775808 - 1)");
  bindings_[a] = 0;
  EXPECT_THAT(eval_error(a - SymExpr(INT64_MIN)), HasSubstr("int64 overflow"));
  EXPECT_EQ(eval(SymExpr(-1) - SymExpr(INT64_MAX)), INT64_MIN);
}

TEST_F(EvaluateTest, MultiplicationOverflowIsAnError) {
  bindings_[a] = INT64_C(1) << 62;
  EXPECT_EQ(eval_error(a * 2), "int64 overflow in `a * 2` (4611686018427387904 * 2)");
  EXPECT_EQ(eval(a * -2), INT64_MIN);
  bindings_[b] = 65536;
  EXPECT_THAT(eval_error(b * b * b * b), HasSubstr("overflow in `b * b * b * b`"));
  EXPECT_THAT(eval_error(-SymExpr(INT64_MIN)), HasSubstr("overflow"));
}

TEST_F(EvaluateTest, MinDividedByMinusOneOverflows) {
  EXPECT_EQ(eval_error(floordiv(SymExpr(INT64_MIN), -1)),
            "int64 overflow in `floordiv(-9223372036854775808, -1)` "
            "(floordiv(-9223372036854775808, -1))");
  EXPECT_EQ(eval_with(floordiv(a, b), INT64_MIN + 1, -1), INT64_MAX);
}

TEST_F(EvaluateTest, InnermostFailingNodeIsNamed) {
  bindings_[a] = INT64_MAX;
  bindings_[b] = 0;
  // The overflow is found first (left operand), the division by zero is never reached.
  EXPECT_THAT(eval_error(floordiv(a * 2, b)), HasSubstr("overflow in `a * 2`"));
}

TEST_F(EvaluateTest, DeepTreesEvaluate) {
  bindings_[n] = 1;
  SymExpr e = n;
  for (int i = 0; i < 5000; ++i) e = e + 1;
  EXPECT_EQ(eval(e), 5001);
}

// ---------------------------------------------------------------------------
// Substitution.

TEST_F(EvaluateTest, SubstituteReplacesMappedVariables) {
  SymVarMap<SymExpr> map;
  map[n] = m * 2;
  SymExpr result = substitute(floordiv(n + 15, 16) * a, map);
  EXPECT_TRUE(structural_equal(result, floordiv(m * 2 + 15, 16) * a)) << result;
}

TEST_F(EvaluateTest, SubstituteSharesUnchangedSubtrees) {
  SymExpr left = a * b + 7;
  SymExpr right = floordiv(n, 4);
  SymExpr e = left - right;
  SymVarMap<SymExpr> map;
  map[n] = m;
  SymExpr result = substitute(e, map);
  EXPECT_FALSE(result.same_as(e));
  EXPECT_TRUE(result.operand(0).same_as(left));
  EXPECT_FALSE(result.operand(1).same_as(right));
  EXPECT_TRUE(result.operand(1).operand(1).same_as(right.operand(1)));
}

TEST_F(EvaluateTest, SubstituteWithNothingToChangeReturnsTheSameNode) {
  SymExpr e = (a + b) * 3 < n;
  SymVarMap<SymExpr> map;
  map[m] = SymExpr(1);
  EXPECT_TRUE(substitute(e, map).same_as(e));
  EXPECT_TRUE(substitute(e, SymVarMap<SymExpr>()).same_as(e));
  SymExpr five = 5;
  EXPECT_TRUE(substitute(five, map).same_as(five));
}

TEST_F(EvaluateTest, SubstituteIsSimultaneous) {
  // a -> b and b -> a swap; the images are not substituted again.
  SymVarMap<SymExpr> map;
  map[a] = b;
  map[b] = a;
  EXPECT_TRUE(structural_equal(substitute(a - b, map), b - a));
}

TEST_F(EvaluateTest, SubstituteLeavesSameNamedVariablesAlone) {
  SymVar other_n("n");
  SymVarMap<SymExpr> map;
  map[n] = SymExpr(3);
  EXPECT_TRUE(structural_equal(substitute(n + other_n, map), SymExpr(3) + other_n));
}

TEST_F(EvaluateTest, SubstituteWithAFunction) {
  auto image = [&](const SymVar& v) -> std::optional<SymExpr> {
    if (v.name() == "a") return SymExpr(10);
    return std::nullopt;
  };
  SymExpr e = select(a < b, a, b);
  SymExpr result = substitute(e, image);
  EXPECT_TRUE(structural_equal(result, select(SymExpr(10) < b, SymExpr(10), b))) << result;
  EXPECT_TRUE(result.operand(2).same_as(b));
  SymExpr untouched = n * 2;
  EXPECT_TRUE(substitute(untouched, image).same_as(untouched));
}

TEST_F(EvaluateTest, SubstituteThenEvaluateAgreesWithBinding) {
  SymExpr e = floordiv(n * m + 15, 16) - floormod(n, 3);
  SymVarMap<SymExpr> map;
  map[n] = SymExpr(37);
  map[m] = SymExpr(-5);
  bindings_[n] = 37;
  bindings_[m] = -5;
  const int64_t direct = eval(e);
  bindings_.clear();
  EXPECT_EQ(eval(substitute(e, map)), direct);
}

// ---------------------------------------------------------------------------
// Variables.

std::vector<std::string> var_names(const SymExpr& e) {
  std::vector<std::string> names;
  for_each_var(e, [&](const SymVar& v) { names.push_back(v.name()); });
  return names;
}

TEST_F(EvaluateTest, ForEachVarVisitsInFirstOccurrenceOrder) {
  using ::testing::ElementsAre;
  EXPECT_THAT(var_names(n * m + n + a), ElementsAre("n", "m", "a"));
  EXPECT_THAT(var_names(select(b < a, m, n)), ElementsAre("b", "a", "m", "n"));
  EXPECT_THAT(var_names(floordiv(m, n) - floormod(n, m)), ElementsAre("m", "n"));
}

TEST_F(EvaluateTest, ForEachVarOnConstantsVisitsNothing) {
  EXPECT_TRUE(var_names(SymExpr(3) + 4).empty());
  EXPECT_TRUE(var_names(SymExpr::boolean(true)).empty());
  EXPECT_TRUE(var_names(SymExpr()).empty());
}

TEST_F(EvaluateTest, ForEachVarReportsSameNamedVariablesSeparately) {
  SymVar other_n("n");
  std::vector<SymVar> seen;
  for_each_var(n + other_n + n, [&](const SymVar& v) { seen.push_back(v); });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].same_as(n));
  EXPECT_TRUE(seen[1].same_as(other_n));
}

TEST_F(EvaluateTest, ForEachVarIsLinearOnSharedSubtrees) {
  // 60 levels of doubling: 2^60 paths through the tree, 61 distinct nodes.
  SymExpr e = n + m;
  for (int i = 0; i < 60; ++i) e = e + e;
  int visits = 0;
  for_each_var(e, [&](const SymVar&) { ++visits; });
  EXPECT_EQ(visits, 2);
}

}  // namespace
}  // namespace relax
