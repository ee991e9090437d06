// SymExpr nodes: construction, dtypes, identity of variables, structural
// equality, hashing and ordering.
#include "relax/shape/sym_expr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <vector>

namespace relax {
namespace {

TEST(SymExprTest, IntegerConstantIsInt64) {
  SymExpr c(42);
  EXPECT_TRUE(c.defined());
  EXPECT_EQ(c.kind(), SymKind::kIntImm);
  EXPECT_EQ(c.dtype(), DataType::int64());
  EXPECT_EQ(c.as_const(), 42);
  EXPECT_EQ(c.num_operands(), 0u);
}

TEST(SymExprTest, ExtremeConstantsKeepTheirValue) {
  EXPECT_EQ(SymExpr(INT64_MIN).as_const(), INT64_MIN);
  EXPECT_EQ(SymExpr(INT64_MAX).as_const(), INT64_MAX);
  EXPECT_EQ(SymExpr(int64_t{-1}).as_const(), -1);
}

TEST(SymExprTest, BooleanConstantsAreBoolWithValueZeroOrOne) {
  SymExpr t = SymExpr::boolean(true);
  SymExpr f = SymExpr::boolean(false);
  EXPECT_TRUE(t.dtype().is_bool());
  EXPECT_TRUE(f.dtype().is_bool());
  EXPECT_EQ(t.as_const(), 1);
  EXPECT_EQ(f.as_const(), 0);
  EXPECT_TRUE(t.is_const(1));
}

TEST(SymExprTest, BooleanTrueIsNotIntegerOne) {
  EXPECT_FALSE(structural_equal(SymExpr::boolean(true), SymExpr(1)));
  EXPECT_NE(structural_compare(SymExpr::boolean(true), SymExpr(1)), 0);
}

TEST(SymExprTest, DefaultHandleIsUndefined) {
  SymExpr e;
  EXPECT_FALSE(e.defined());
  EXPECT_FALSE(e.is_var());
  EXPECT_FALSE(e.as_const().has_value());
  EXPECT_FALSE(e.is_const(0));
  EXPECT_TRUE(structural_equal(e, SymExpr()));
  EXPECT_FALSE(structural_equal(e, SymExpr(0)));
}

TEST(SymExprTest, VariableHasNameDtypeAndId) {
  SymVar n("n");
  EXPECT_TRUE(n.is_var());
  EXPECT_EQ(n.kind(), SymKind::kVar);
  EXPECT_EQ(n.name(), "n");
  EXPECT_EQ(n.dtype(), DataType::int64());
  EXPECT_FALSE(n.as_const().has_value());
  SymVar later("n");
  EXPECT_LT(n.id(), later.id());
}

TEST(SymExprTest, TwoVariablesWithTheSameNameAreDistinct) {
  SymVar n1("n");
  SymVar n2("n");
  EXPECT_FALSE(n1.same_as(n2));
  EXPECT_FALSE(structural_equal(n1, n2));
  EXPECT_FALSE(structural_equal(n1 + 1, n2 + 1));
  EXPECT_NE(structural_compare(n1, n2), 0);
  EXPECT_NE(structural_hash(n1), structural_hash(n2));
}

TEST(SymExprTest, FromExprViewsTheSameNode) {
  SymVar n("n");
  SymExpr as_expr = n;
  SymVar back = SymVar::from_expr(as_expr);
  EXPECT_TRUE(back.same_as(n));
  EXPECT_EQ(back.name(), "n");
}

TEST(SymExprTest, OperatorsBuildTheirKinds) {
  SymVar a("a");
  SymVar b("b");
  SymExpr p = a < b;
  SymExpr q = a == b;
  const std::vector<std::pair<SymExpr, SymKind>> cases = {
      {a + b, SymKind::kAdd},
      {a - b, SymKind::kSub},
      {a * b, SymKind::kMul},
      {floordiv(a, b), SymKind::kFloorDiv},
      {floormod(a, b), SymKind::kFloorMod},
      {min(a, b), SymKind::kMin},
      {max(a, b), SymKind::kMax},
      {a == b, SymKind::kEQ},
      {a != b, SymKind::kNE},
      {a < b, SymKind::kLT},
      {a <= b, SymKind::kLE},
      {a > b, SymKind::kGT},
      {a >= b, SymKind::kGE},
      {p && q, SymKind::kAnd},
      {p || q, SymKind::kOr},
      {!p, SymKind::kNot},
      {select(p, a, b), SymKind::kSelect},
  };
  for (const auto& [expr, kind] : cases) {
    EXPECT_EQ(expr.kind(), kind) << sym_kind_name(kind);
  }
}

TEST(SymExprTest, OperandsAreKeptInOrder) {
  SymVar a("a");
  SymVar b("b");
  SymExpr e = a - b;
  ASSERT_EQ(e.num_operands(), 2u);
  EXPECT_TRUE(e.operand(0).same_as(a));
  EXPECT_TRUE(e.operand(1).same_as(b));
  SymExpr s = select(a < b, b, a);
  ASSERT_EQ(s.num_operands(), 3u);
  EXPECT_EQ(s.operand(0).kind(), SymKind::kLT);
  EXPECT_TRUE(s.operand(1).same_as(b));
  EXPECT_TRUE(s.operand(2).same_as(a));
}

TEST(SymExprTest, OperatorsNeverFold) {
  SymExpr e = SymExpr(2) + SymExpr(3);
  EXPECT_EQ(e.kind(), SymKind::kAdd);
  EXPECT_FALSE(e.as_const().has_value());
  SymVar n("n");
  EXPECT_EQ((n * 1).kind(), SymKind::kMul);
  EXPECT_EQ((n + 0).kind(), SymKind::kAdd);
}

TEST(SymExprTest, DtypesOfResults) {
  SymVar n("n");
  EXPECT_EQ((n + 1).dtype(), DataType::int64());
  EXPECT_TRUE((n < 1).dtype().is_bool());
  EXPECT_TRUE(((n < 1) && (n > -4)).dtype().is_bool());
  EXPECT_TRUE((!(n < 1)).dtype().is_bool());
  EXPECT_EQ(select(n < 1, n, SymExpr(1)).dtype(), DataType::int64());
  EXPECT_EQ(floordiv(n, 2).dtype(), DataType::int64());
}

TEST(SymExprTest, NegationFoldsConstantsAndMultipliesOtherwise) {
  EXPECT_TRUE(structural_equal(-SymExpr(5), SymExpr(-5)));
  EXPECT_TRUE(structural_equal(-SymExpr(-5), SymExpr(5)));
  SymVar n("n");
  EXPECT_TRUE(structural_equal(-n, n * -1));
  // -INT64_MIN does not fit, so it stays a multiplication.
  SymExpr min_neg = -SymExpr(INT64_MIN);
  EXPECT_EQ(min_neg.kind(), SymKind::kMul);
  EXPECT_TRUE(min_neg.operand(0).is_const(INT64_MIN));
  EXPECT_TRUE(min_neg.operand(1).is_const(-1));
}

TEST(SymExprTest, MakeBuildsTheSameTreeAsOperators) {
  SymVar a("a");
  SymVar b("b");
  EXPECT_TRUE(structural_equal(SymExpr::make(SymKind::kAdd, a, b), a + b));
  EXPECT_TRUE(structural_equal(SymExpr::make(SymKind::kFloorMod, a, 3), floormod(a, 3)));
  EXPECT_TRUE(structural_equal(SymExpr::make(SymKind::kNot, a < b), !(a < b)));
  EXPECT_TRUE(structural_equal(SymExpr::make(SymKind::kSelect, a < b, a, b), select(a < b, a, b)));
}

TEST(SymExprDeathTest, MisuseAborts) {
  SymVar n("n");
  EXPECT_DEATH(SymExpr::make(SymKind::kAdd, n), "takes 2 operand");
  EXPECT_DEATH((void)(n + (n < 1)), "must be an integer");
  EXPECT_DEATH((void)((n < 1) && n), "must be boolean");
  EXPECT_DEATH((void)select(n, n, n), "must be boolean");
}

TEST(SymExprDeathTest, BadVariablesAbort) {
  EXPECT_DEATH(SymVar(""), "needs a name");
  EXPECT_DEATH(SymVar::from_expr(SymExpr(3)), "is not a variable");
  EXPECT_DEATH(SymExpr::make(SymKind::kVar, SymExpr(1)), "cannot build");
}

TEST(SymExprTest, StructurallyEqualTreesFromDifferentNodes) {
  SymVar n("n");
  SymVar m("m");
  SymExpr x = floordiv(n * m + 15, 16) * 16;
  SymExpr y = floordiv(n * m + 15, 16) * 16;
  EXPECT_FALSE(x.same_as(y));
  EXPECT_TRUE(structural_equal(x, y));
  EXPECT_EQ(structural_hash(x), structural_hash(y));
  EXPECT_EQ(structural_compare(x, y), 0);
}

TEST(SymExprTest, StructuralEqualitySeesOrderKindAndConstants) {
  SymVar a("a");
  SymVar b("b");
  EXPECT_FALSE(structural_equal(a - b, b - a));
  EXPECT_FALSE(structural_equal(a + b, b + a));  // no commutativity: that is the analyzer's job
  EXPECT_FALSE(structural_equal(min(a, b), max(a, b)));
  EXPECT_FALSE(structural_equal(a + 1, a + 2));
  EXPECT_FALSE(structural_equal(a < b, a <= b));
  EXPECT_FALSE(structural_equal(a, a + 0));
}

TEST(SymExprTest, SameAsIsPointerIdentity) {
  SymVar n("n");
  SymExpr e = n * 4 + 1;
  SymExpr copy = e;
  EXPECT_TRUE(copy.same_as(e));
  EXPECT_FALSE((n * 4 + 1).same_as(e));
  EXPECT_FALSE(SymExpr(100000).same_as(SymExpr(100000)));
}

TEST(SymExprTest, SmallConstantsAndBooleansAreSharedNodes) {
  // Built by the thousand in index arithmetic: made once (an immutable leaf shares safely).
  EXPECT_TRUE(SymExpr(3).same_as(SymExpr(3)));
  EXPECT_TRUE(SymExpr(-128).same_as(SymExpr(-128)));
  EXPECT_TRUE(SymExpr(1024).same_as(SymExpr(1024)));
  EXPECT_TRUE(SymExpr::boolean(true).same_as(SymExpr::boolean(true)));
  EXPECT_FALSE(SymExpr(1).same_as(SymExpr::boolean(true)));  // same value, other dtype
  EXPECT_EQ(SymExpr::boolean(true).dtype(), DataType::boolean());
  EXPECT_EQ(SymExpr(1025).as_const(), 1025);
  EXPECT_EQ(SymExpr(-129).as_const(), -129);
}

TEST(SymExprTest, HashIsConsistentWithEquality) {
  SymVar n("n");
  auto build = [&] {
    return std::vector<SymExpr>{n,     n + 1,    n * 2,     SymExpr(7),
                                n < 4, !(n < 4), max(n, 1), SymExpr::boolean(false)};
  };
  const std::vector<SymExpr> xs = build();
  const std::vector<SymExpr> ys = build();
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t j = 0; j < ys.size(); ++j) {
      EXPECT_EQ(structural_equal(xs[i], ys[j]), i == j) << xs[i] << " vs " << ys[j];
    }
    EXPECT_EQ(structural_hash(xs[i]), structural_hash(ys[i])) << xs[i];
  }
  EXPECT_EQ(structural_hash(SymExpr()), 0u);
  EXPECT_EQ(SymExprHash()(n + 1), structural_hash(n + 1));
  EXPECT_TRUE(SymExprEqual()(n + 1, n + 1));
}

TEST(SymExprTest, StructuralHashMapDeduplicatesEqualTrees) {
  SymVar n("n");
  absl::flat_hash_map<SymExpr, int, SymExprHash, SymExprEqual> counts;
  ++counts[n * 4];
  ++counts[n * 4];
  ++counts[4 * n];
  ++counts[SymExpr(4)];
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[n * 4], 2);
}

TEST(SymExprTest, SymVarMapIsKeyedByIdentity) {
  SymVar n1("n");
  SymVar n2("n");
  SymVarMap<int64_t> map;
  map[n1] = 1;
  map[n2] = 2;
  EXPECT_EQ(map.size(), 2u);
  EXPECT_EQ(map.at(n1), 1);
  EXPECT_EQ(map.at(SymVar::from_expr(n2)), 2);
}

TEST(SymExprTest, CompareOrdersVariablesByNameThenCreation) {
  SymVar b("b");
  SymVar a1("a");
  SymVar a2("a");
  EXPECT_LT(structural_compare(a1, b), 0);
  EXPECT_LT(structural_compare(a2, b), 0);
  EXPECT_LT(structural_compare(a1, a2), 0);
  EXPECT_GT(structural_compare(a2, a1), 0);
}

TEST(SymExprTest, CompareOrdersConstantsByValueAndIntegersBeforeBooleans) {
  EXPECT_LT(structural_compare(SymExpr(-3), SymExpr(2)), 0);
  EXPECT_LT(structural_compare(SymExpr(INT64_MIN), SymExpr(INT64_MAX)), 0);
  EXPECT_LT(structural_compare(SymExpr(5), SymExpr::boolean(false)), 0);
  EXPECT_LT(structural_compare(SymExpr::boolean(false), SymExpr::boolean(true)), 0);
  EXPECT_LT(structural_compare(SymExpr(), SymExpr(0)), 0);
}

TEST(SymExprTest, CompareIsAntisymmetricAndSortsDeterministically) {
  SymVar n("n");
  SymVar m("m");
  std::vector<SymExpr> exprs = {n + m, m,     n * 2,       SymExpr(3), n + 1,    floordiv(n, 2),
                                n,     m + n, SymExpr(-1), n * 2,      max(n, m)};
  for (const SymExpr& x : exprs) {
    for (const SymExpr& y : exprs) {
      EXPECT_EQ(structural_compare(x, y), -structural_compare(y, x)) << x << " vs " << y;
      EXPECT_EQ(structural_compare(x, y) == 0, structural_equal(x, y)) << x << " vs " << y;
    }
  }
  std::vector<SymExpr> sorted = exprs;
  std::sort(sorted.begin(), sorted.end(), SymExprLess());
  std::vector<SymExpr> reversed(exprs.rbegin(), exprs.rend());
  std::sort(reversed.begin(), reversed.end(), SymExprLess());
  ASSERT_EQ(sorted.size(), reversed.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    EXPECT_TRUE(structural_equal(sorted[i], reversed[i])) << i;
  }
  EXPECT_TRUE(sorted.front().is_const(-1));
}

TEST(SymExprTest, IsConstAndAsConst) {
  SymVar n("n");
  EXPECT_TRUE(SymExpr(0).is_const(0));
  EXPECT_FALSE(SymExpr(0).is_const(1));
  EXPECT_FALSE(n.is_const(0));
  EXPECT_FALSE((SymExpr(1) + 1).as_const().has_value());
}

TEST(SymExprTest, KindNamesAreOperatorSpellings) {
  EXPECT_EQ(sym_kind_name(SymKind::kAdd), "+");
  EXPECT_EQ(sym_kind_name(SymKind::kFloorDiv), "floordiv");
  EXPECT_EQ(sym_kind_name(SymKind::kLE), "<=");
  EXPECT_EQ(sym_kind_name(SymKind::kAnd), "&&");
  EXPECT_EQ(sym_kind_name(SymKind::kSelect), "select");
}

TEST(SymExprTest, ToStringMemberAndStreamAgreeWithFreeFunction) {
  SymVar b("b");
  SymExpr e = b * 4 + 1;
  std::ostringstream os;
  os << e;
  EXPECT_EQ(e.to_string(), "b * 4 + 1");
  EXPECT_EQ(to_string(e), "b * 4 + 1");
  EXPECT_EQ(os.str(), "b * 4 + 1");
}

TEST(SymExprTest, HandlesAreCheapCopiesSharingTheNode) {
  SymVar n("n");
  SymExpr e = n * 2;
  std::vector<SymExpr> copies(100, e);
  for (const SymExpr& c : copies) EXPECT_EQ(c.get(), e.get());
}

}  // namespace
}  // namespace relax
