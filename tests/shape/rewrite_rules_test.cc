// The simplifier's rewrite rules (src/shape/simplify/rewrite/), one row per rule at least: the input
// simplifies to the expected form, the rule's name is among those that fired, and the value
// is unchanged at sampled points. Every rule of every table must have a row here.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax {
namespace {

struct RuleRow {
  std::string rule;      ///< the rule that must fire
  std::string input;     ///< over a, b, c (unbounded) and j in [0, 31], k in [0, 63]
  std::string expected;  ///< the simplified form, as printed
};

const std::vector<RuleRow>& rows() {
  static const std::vector<RuleRow> table = {
      // min, max, select
      {"min-max-sum", "min(a, b) + max(a, b)", "a + b"},
      {"min-max-sum", "max(b, a) + c + min(a, b)", "a + b + c"},
      {"min-minus-operand", "min(a, b) - a", "min(0, b - a)"},
      {"min-minus-operand", "min(a, b) - b + c", "c + min(0, a - b)"},
      {"max-minus-operand", "max(a, b) - a", "max(0, b - a)"},
      {"operand-minus-min", "a - min(a, b)", "max(0, a - b)"},
      {"operand-minus-max", "a - max(a, b)", "min(0, a - b)"},
      {"min-factor-positive", "min(a * 4, b * 4)", "min(a, b) * 4"},
      {"min-factor-positive", "min(a * 6 + b * 12, c * 6)", "min(c, a + b * 2) * 6"},
      {"min-factor-negative", "min(a * -4, b * -4)", "max(a, b) * -4"},
      {"max-factor-positive", "max(a * 3, b * 3)", "max(a, b) * 3"},
      {"max-factor-negative", "max(a * -2, b * -2)", "min(a, b) * -2"},
      {"select-less-min", "select(a < b, a, b)", "min(a, b)"},
      {"select-less-max", "select(a < b, b, a)", "max(a, b)"},
      {"select-less-equal-min", "select(a <= b, a, b)", "min(a, b)"},
      {"select-less-equal-max", "select(a <= b, b, a)", "max(a, b)"},
      // floordiv, floormod
      {"floordiv-common-factor", "floordiv(a * 8 + 7, 16)", "floordiv(a, 2)"},
      {"floordiv-common-factor", "floordiv(a * 8 + b * 24 + 20, 16)", "floordiv(a + b * 3, 2) + 1"},
      {"floormod-common-factor", "floormod(a * 8 + 7, 16)", "floormod(a, 2) * 8 + 7"},
      {"floormod-common-factor", "floormod(a * 64 + 63, 256)", "floormod(a, 4) * 64 + 63"},
      {"floordiv-bounded-remainder", "floordiv(a * 32 + j, 64)", "floordiv(a, 2)"},
      {"floormod-bounded-remainder", "floormod(a * 32 + j, 64)", "j + floormod(a, 2) * 32"},
      {"floormod-from-floordiv", "a - floordiv(a, 8) * 8", "floormod(a, 8)"},
      {"floormod-from-floordiv", "a + b - floordiv(a + b, 4) * 4 + c", "c + floormod(a + b, 4)"},
      {"floordiv-from-floormod", "a - floormod(a, 8)", "floordiv(a, 8) * 8"},
      {"floordiv-exact", "floordiv(min(a * 4, b * 8), 4) * 4", "min(a * 4, b * 8)"},
      {"floormod-pair-sum", "floormod(a, 2) + floormod(a + 3, 2)", "1"},
      {"floormod-negated-pair", "floormod(a, 4) + floormod(8 - a, 4)",
       "select(floormod(a, 4) == 0, 0, 4)"},
      {"floordiv-step-two", "floordiv(a + 1, 2) - floordiv(a, 2)", "floormod(a, 2)"},
      // comparisons
      {"compare-floordiv-at-most", "floordiv(a, 8) < 3", "a <= 23"},
      {"compare-floordiv-at-most", "floordiv(a, 8) <= 3", "a <= 31"},
      {"compare-floordiv-at-least", "3 < floordiv(a, 8)", "32 <= a"},
      {"compare-floordiv-at-least", "floordiv(a, 4) >= 2", "8 <= a"},
      {"compare-factor-bounded-remainder-below", "a * 32 + j < b * 32", "a < b"},
      {"compare-factor-bounded-remainder-below", "a * 32 + j < b * 32 + c * 64", "a < b + c * 2"},
      {"compare-factor-bounded-remainder-above", "b * 32 <= a * 32 + j", "b <= a"},
      {"compare-both-strict", "a < b && b < a", "false"},
      {"compare-both-weak", "a <= b && b <= a", "a == b"},
      {"compare-either-strict", "a < b || b < a", "a != b"},
      {"compare-either-weak", "a <= b || b <= a", "true"},
      {"compare-strict-or-equal", "a < b || a == b", "a <= b"},
      {"compare-weak-and-unequal", "a <= b && a != b", "a < b"},
  };
  return table;
}

class RewriteRulesTest : public ::testing::TestWithParam<RuleRow> {};

TEST_P(RewriteRulesTest, FiresAndKeepsTheValue) {
  const RuleRow& row = GetParam();
  absl::flat_hash_map<std::string, SymVar> vars;
  for (const char* name : {"a", "b", "c", "j", "k"}) vars.emplace(name, SymVar(name));
  Analyzer analyzer;
  analyzer.bind(vars.at("j"), 0, 31);
  analyzer.bind(vars.at("k"), 0, 63);
  absl::StatusOr<SymExpr> input = SymExpr::parse(row.input, &vars);
  ASSERT_TRUE(input.ok()) << input.status();
  std::vector<std::string> fired;
  const SymExpr simplified = analyzer.simplify(*input, &fired);
  EXPECT_EQ(simplified.to_string(), row.expected) << row.input;
  EXPECT_NE(std::find(fired.begin(), fired.end(), row.rule), fired.end())
      << row.rule << " did not fire on " << row.input << "; fired: " << ::testing::PrintToString(fired);
  // The value is kept (where the input evaluates).
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> any(-50, 50), j(0, 31), k(0, 63);
  for (int point = 0; point < 200; ++point) {
    SymVarMap<int64_t> values = {{vars.at("a"), any(rng)}, {vars.at("b"), any(rng)},
                                 {vars.at("c"), any(rng)}, {vars.at("j"), j(rng)},
                                 {vars.at("k"), k(rng)}};
    absl::StatusOr<int64_t> want = evaluate(*input, values);
    if (!want.ok()) continue;
    absl::StatusOr<int64_t> got = evaluate(simplified, values);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, *want) << row.input << " -> " << simplified;
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, RewriteRulesTest, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<RuleRow>& row_info) {
                           std::string name = row_info.param.rule + "_" + std::to_string(row_info.index);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(RewriteRules, EveryRuleHasARow) {
  std::set<std::string> covered;
  for (const RuleRow& row : rows()) covered.insert(row.rule);
  std::set<std::string> names;
  for (const RewriteRule& rule : rewrite_rules()) {
    EXPECT_TRUE(names.insert(rule.name).second) << "two rules named " << rule.name;
    EXPECT_TRUE(covered.count(rule.name)) << "rule " << rule.name << " (" << rule.pattern << " -> "
                                          << rule.result << ") has no row in this file";
  }
  for (const std::string& name : covered) EXPECT_TRUE(names.count(name)) << "no rule named " << name;
}

TEST(RewriteRules, ARuleFiresOnlyWhenItsConditionHolds) {
  absl::flat_hash_map<std::string, SymVar> vars;
  Analyzer analyzer;
  // floordiv(a*8 + 7, 12): 8 does not divide 12, so floordiv-common-factor does not apply.
  absl::StatusOr<SymExpr> e = SymExpr::parse("floordiv(a * 8 + 7, 12)", &vars);
  ASSERT_TRUE(e.ok());
  std::vector<std::string> fired;
  EXPECT_EQ(analyzer.simplify(*e, &fired).to_string(), "floordiv(a * 8 + 7, 12)");
  EXPECT_TRUE(fired.empty()) << ::testing::PrintToString(fired);
  // floormod(a*32 + b, 64) with b unbounded: the remainder part is not known below 32.
  e = SymExpr::parse("floormod(a * 32 + b, 64)", &vars);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(analyzer.simplify(*e, &fired).to_string(), "floormod(a * 32 + b, 64)");
  EXPECT_TRUE(fired.empty()) << ::testing::PrintToString(fired);
}

TEST(RewriteRules, AScopedFactMakesAQuotientExact) {
  SymVar n("n");
  Analyzer analyzer;
  std::vector<std::string> fired;
  EXPECT_EQ(analyzer.simplify(floordiv(n, 4) * 4).to_string(), "floordiv(n, 4) * 4");
  {
    Analyzer::ConstraintScope divisible(analyzer, floormod(n, 4) == 0);
    EXPECT_EQ(analyzer.simplify(floordiv(n, 4) * 4, &fired).to_string(), "n");
    EXPECT_NE(std::find(fired.begin(), fired.end(), "floordiv-exact"), fired.end());
  }
  EXPECT_EQ(analyzer.simplify(floordiv(n, 4) * 4).to_string(), "floordiv(n, 4) * 4");
}

TEST(RewriteRules, ARewriteThatWouldNotShrinkIsNotKept) {
  // min(a*4, b*8) could be written min(a, b*2) * 4, which is no smaller: it stays.
  absl::flat_hash_map<std::string, SymVar> vars;
  Analyzer analyzer;
  absl::StatusOr<SymExpr> e = SymExpr::parse("min(a * 4, b * 8)", &vars);
  ASSERT_TRUE(e.ok());
  std::vector<std::string> fired;
  EXPECT_EQ(analyzer.simplify(*e, &fired).to_string(), "min(a * 4, b * 8)");
  EXPECT_TRUE(fired.empty());
}

}  // namespace
}  // namespace relax
