// The SymExpr text form: printing, parsing and the print/parse round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "relax/shape/sym_expr.h"
#include "sym_expr_test_util.h"

namespace relax {
namespace {

using test::expect_round_trip;
using test::parse_ok;
using test::RandomTrees;
using test::reprint;
using test::VarTable;

class TextTest : public ::testing::Test {
 protected:
  SymVar a{"a"}, b{"b"}, c{"c"}, n{"n"}, m{"m"};
  SymExpr p = a < b;
  SymExpr q = b == c;
  SymExpr r = n >= m;
};

// ---------------------------------------------------------------------------
// Printing.

TEST_F(TextTest, PrintsConstantsAndVariables) {
  EXPECT_EQ(to_string(SymExpr(0)), "0");
  EXPECT_EQ(to_string(SymExpr(128)), "128");
  EXPECT_EQ(to_string(SymExpr(-5)), "-5");
  EXPECT_EQ(to_string(SymExpr(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(to_string(SymExpr(INT64_MAX)), "9223372036854775807");
  EXPECT_EQ(to_string(SymExpr::boolean(true)), "true");
  EXPECT_EQ(to_string(SymExpr::boolean(false)), "false");
  EXPECT_EQ(to_string(n), "n");
  EXPECT_EQ(to_string(SymVar("seq_len.0")), "seq_len.0");
}

TEST_F(TextTest, PrintsLeftAssociativeChainsFlat) {
  EXPECT_EQ(to_string(b * n * 4 + 1), "b * n * 4 + 1");
  EXPECT_EQ(to_string(b * n * 32 * 128), "b * n * 32 * 128");
  EXPECT_EQ(to_string(a - b - c), "a - b - c");
  EXPECT_EQ(to_string(a + b - c + 1), "a + b - c + 1");
}

TEST_F(TextTest, ParenthesizesRightOperandOfEqualPrecedence) {
  EXPECT_EQ(to_string(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(to_string(a - (b + c)), "a - (b + c)");
  EXPECT_EQ(to_string(a + (b + c)), "a + (b + c)");
  EXPECT_EQ(to_string(a * (b * c)), "a * (b * c)");
}

TEST_F(TextTest, ParenthesizesLooserOperandsOnly) {
  EXPECT_EQ(to_string((a + b) * c), "(a + b) * c");
  EXPECT_EQ(to_string(a * (b + c)), "a * (b + c)");
  EXPECT_EQ(to_string(a + b * c), "a + b * c");
  EXPECT_EQ(to_string(a * b + c), "a * b + c");
  EXPECT_EQ(to_string((a - b) * (a + b)), "(a - b) * (a + b)");
}

TEST_F(TextTest, PrintsFunctionsAsCalls) {
  EXPECT_EQ(to_string(floordiv(n + 15, 16)), "floordiv(n + 15, 16)");
  EXPECT_EQ(to_string(floordiv(n + 15, 16) * 16), "floordiv(n + 15, 16) * 16");
  EXPECT_EQ(to_string(floormod(a, b)), "floormod(a, b)");
  EXPECT_EQ(to_string(min(a, b)), "min(a, b)");
  EXPECT_EQ(to_string(max(a * 2, min(b, 3))), "max(a * 2, min(b, 3))");
  EXPECT_EQ(to_string(select(p, a, b)), "select(a < b, a, b)");
}

TEST_F(TextTest, PrintsComparisons) {
  EXPECT_EQ(to_string(a < b), "a < b");
  EXPECT_EQ(to_string(a <= b), "a <= b");
  EXPECT_EQ(to_string(a > b), "a > b");
  EXPECT_EQ(to_string(a >= b), "a >= b");
  EXPECT_EQ(to_string(a == b), "a == b");
  EXPECT_EQ(to_string(a != b), "a != b");
  EXPECT_EQ(to_string(n * 2 <= m + 1), "n * 2 <= m + 1");
}

TEST_F(TextTest, PrintsLogicWithPrecedence) {
  EXPECT_EQ(to_string(p && q), "a < b && b == c");
  EXPECT_EQ(to_string(p || (q && r)), "a < b || b == c && n >= m");
  EXPECT_EQ(to_string((p || q) && r), "(a < b || b == c) && n >= m");
  EXPECT_EQ(to_string(p && (q || r)), "a < b && (b == c || n >= m)");
  EXPECT_EQ(to_string(p && (q && r)), "a < b && (b == c && n >= m)");
  EXPECT_EQ(to_string(p && q && r), "a < b && b == c && n >= m");
}

TEST_F(TextTest, PrintsNot) {
  EXPECT_EQ(to_string(!p), "!(a < b)");
  EXPECT_EQ(to_string(!(p && q)), "!(a < b && b == c)");
  EXPECT_EQ(to_string(!!p), "!!(a < b)");
  EXPECT_EQ(to_string(!SymExpr::boolean(true)), "!true");
  EXPECT_EQ(to_string(!p && q), "!(a < b) && b == c");
}

TEST_F(TextTest, PrintsNegativeConstantsAsLiterals) {
  EXPECT_EQ(to_string(a - SymExpr(-5)), "a - -5");
  EXPECT_EQ(to_string(SymExpr(-5) * a), "-5 * a");
  EXPECT_EQ(to_string(-a), "a * -1");
  EXPECT_EQ(to_string(-(a + b)), "(a + b) * -1");
  EXPECT_EQ(to_string(SymExpr(-1) - SymExpr(-2)), "-1 - -2");
  EXPECT_EQ(to_string(floordiv(-7, -2)), "floordiv(-7, -2)");
}

TEST_F(TextTest, QuotesNamesThatAreNotPlainIdentifiers) {
  EXPECT_EQ(to_string(SymVar("a b") + 1), "\"a b\" + 1");
  EXPECT_EQ(to_string(SymVar("min")), "\"min\"");
  EXPECT_EQ(to_string(SymVar("true")), "\"true\"");
  EXPECT_EQ(to_string(SymVar("1x")), "\"1x\"");
  EXPECT_EQ(to_string(SymVar("q\"\\")), "\"q\\\"\\\\\"");
  EXPECT_EQ(to_string(SymVar("line\nbreak")), "\"line\\x0abreak\"");
}

TEST_F(TextTest, UndefinedPrintsAMarker) { EXPECT_EQ(to_string(SymExpr()), "<undefined>"); }

// ---------------------------------------------------------------------------
// Parsing.

TEST_F(TextTest, SameNameInOneTextIsOneFreshVariable) {
  SymExpr e = parse_ok("n * n + m");
  ASSERT_EQ(e.kind(), SymKind::kAdd);
  const SymExpr& product = e.operand(0);
  EXPECT_TRUE(product.operand(0).same_as(product.operand(1)));
  EXPECT_EQ(SymVar::from_expr(product.operand(0)).name(), "n");
  EXPECT_FALSE(product.operand(0).same_as(n));
  // A second parse without a table makes new variables.
  SymExpr again = parse_ok("n");
  EXPECT_FALSE(again.same_as(product.operand(0)));
}

TEST_F(TextTest, TableReusesKnownVariablesAndAddsNewOnes) {
  VarTable vars = {{"n", n}};
  SymExpr e = parse_ok("n * k + k", &vars);
  EXPECT_TRUE(structural_equal(e.operand(0).operand(0), n));
  ASSERT_EQ(vars.size(), 2u);
  ASSERT_TRUE(vars.contains("k"));
  EXPECT_TRUE(e.operand(1).same_as(vars.at("k")));
  SymExpr later = parse_ok("k - 1", &vars);
  EXPECT_TRUE(later.operand(0).same_as(vars.at("k")));
}

TEST_F(TextTest, TableIsUntouchedWhenParsingFails) {
  VarTable vars = {{"n", n}};
  EXPECT_FALSE(SymExpr::parse("n + fresh +", &vars).ok());
  EXPECT_EQ(vars.size(), 1u);
}

TEST_F(TextTest, ParsesWithPrecedenceAndLeftAssociativity) {
  VarTable vars = {{"a", a}, {"b", b}, {"c", c}};
  EXPECT_TRUE(structural_equal(parse_ok("a + b * c", &vars), a + b * c));
  EXPECT_TRUE(structural_equal(parse_ok("a - b - c", &vars), (a - b) - c));
  EXPECT_TRUE(structural_equal(parse_ok("a - (b - c)", &vars), a - (b - c)));
  EXPECT_TRUE(structural_equal(parse_ok("(a + b) * c", &vars), (a + b) * c));
  EXPECT_TRUE(structural_equal(parse_ok("a < b || b == c && a >= c", &vars),
                               (a < b) || ((b == c) && (a >= c))));
}

TEST_F(TextTest, ParsesLanguageModelShapes) {
  VarTable vars = {{"b", b}, {"n", n}};
  EXPECT_TRUE(structural_equal(parse_ok("b * n * 32 * 128", &vars), b * n * 32 * 128));
  EXPECT_TRUE(
      structural_equal(parse_ok("floordiv(n + 15, 16) * 16", &vars), floordiv(n + 15, 16) * 16));
  EXPECT_TRUE(structural_equal(parse_ok("select(n < 2048, n, 2048)", &vars),
                               select(n < 2048, n, SymExpr(2048))));
}

TEST_F(TextTest, ToleratesWhitespaceAndNoSpaces) {
  EXPECT_EQ(reprint("floordiv(n+15,16)*16"), "floordiv(n + 15, 16) * 16");
  EXPECT_EQ(reprint("  a\t*\n(b\r\n+ c)  "), "a * (b + c)");
  EXPECT_EQ(reprint("a<=b&&!(c!=a)"), "a <= b && !(c != a)");
}

TEST_F(TextTest, RedundantParenthesesVanish) {
  EXPECT_EQ(reprint("((a))"), "a");
  EXPECT_EQ(reprint("(a * b) + (c)"), "a * b + c");
  EXPECT_EQ(reprint("((a + b) + c)"), "a + b + c");
}

TEST_F(TextTest, MinusBeforeALiteralIsANegativeLiteral) {
  EXPECT_TRUE(parse_ok("-5").is_const(-5));
  EXPECT_TRUE(parse_ok("- 5").is_const(-5));
  EXPECT_TRUE(parse_ok("-9223372036854775808").is_const(INT64_MIN));
  EXPECT_TRUE(parse_ok("9223372036854775807").is_const(INT64_MAX));
  SymExpr e = parse_ok("x - -5");
  EXPECT_EQ(e.kind(), SymKind::kSub);
  EXPECT_TRUE(e.operand(1).is_const(-5));
  SymExpr f = parse_ok("-5 * x");
  EXPECT_EQ(f.kind(), SymKind::kMul);
  EXPECT_TRUE(f.operand(0).is_const(-5));
}

TEST_F(TextTest, MinusBeforeAnythingElseNegatesLikeOperatorMinus) {
  VarTable vars = {{"a", a}, {"b", b}};
  EXPECT_TRUE(structural_equal(parse_ok("-a", &vars), a * -1));
  EXPECT_TRUE(structural_equal(parse_ok("-(a + b)", &vars), (a + b) * -1));
  EXPECT_TRUE(structural_equal(parse_ok("-a * b", &vars), (a * -1) * b));
  // Constants fold as they do in operator-(SymExpr).
  EXPECT_TRUE(parse_ok("-(5)").is_const(-5));
  EXPECT_TRUE(parse_ok("--5").is_const(5));
  EXPECT_TRUE(structural_equal(parse_ok("-(-9223372036854775808)"), -SymExpr(INT64_MIN)));
}

TEST_F(TextTest, ParsesBooleansAndFunctions) {
  EXPECT_TRUE(structural_equal(parse_ok("true"), SymExpr::boolean(true)));
  EXPECT_TRUE(structural_equal(parse_ok("!false"), !SymExpr::boolean(false)));
  VarTable vars = {{"a", a}, {"b", b}};
  EXPECT_TRUE(structural_equal(parse_ok("floormod(a, b)", &vars), floormod(a, b)));
  EXPECT_TRUE(structural_equal(parse_ok("min(a, max(b, 1))", &vars), min(a, max(b, 1))));
  EXPECT_TRUE(structural_equal(parse_ok("select(true, a, b)", &vars),
                               select(SymExpr::boolean(true), a, b)));
}

TEST_F(TextTest, NamesMayContainDotsDigitsAndUnderscores) {
  SymExpr e = parse_ok("_x1.shape.0 + seq_len");
  EXPECT_EQ(SymVar::from_expr(e.operand(0)).name(), "_x1.shape.0");
  EXPECT_EQ(SymVar::from_expr(e.operand(1)).name(), "seq_len");
  // A name that merely starts with a function name is a variable.
  EXPECT_TRUE(parse_ok("minimum").is_var());
  EXPECT_TRUE(parse_ok("true_len").is_var());
}

TEST_F(TextTest, QuotedNamesParse) {
  EXPECT_EQ(SymVar::from_expr(parse_ok("\"a b\"")).name(), "a b");
  EXPECT_EQ(SymVar::from_expr(parse_ok("\"min\"")).name(), "min");
  EXPECT_EQ(SymVar::from_expr(parse_ok("\"q\\\"\\\\\"")).name(), "q\"\\");
  EXPECT_EQ(SymVar::from_expr(parse_ok("\"\\x41\\x0a\"")).name(), "A\n");
  SymExpr e = parse_ok("\"n\" + n");
  EXPECT_TRUE(e.operand(0).same_as(e.operand(1)));
}

// ---------------------------------------------------------------------------
// Round trip.

TEST_F(TextTest, RoundTripsACorpus) {
  SymVar odd("a b");
  SymVar reserved("select");
  const std::vector<SymExpr> corpus = {
      n,
      SymExpr(INT64_MIN),
      SymExpr(INT64_MAX) * n,
      b * n * 32 * 128,
      floordiv(n + 15, 16) * 16,
      floormod(n * m, 64) == 0,
      a - (b - c),
      a * (b * c) - -1,
      -n,
      -(n + m),
      SymExpr(-3) * -n,
      max(min(n, 4096), 1) + odd,
      select(((n < 8) && !(m == 0)) || SymExpr::boolean(false), reserved, SymExpr(-1)),
      !(!(a <= b)),
      (n > 0) && ((m != 1) || (a >= -9)),
  };
  for (const SymExpr& e : corpus) expect_round_trip(e);
}

TEST_F(TextTest, RoundTripsTextsUnchanged) {
  const std::vector<std::string> texts = {
      "b * n * 4 + 1",
      "floordiv(n + 15, 16) * 16",
      "a - (b + c) * -2",
      "(a + b) * (c - 1)",
      "select(n < 2048 && m > 0, n, 2048)",
      "!(n == 1) || m != 0",
      "-9223372036854775808 - n",
      "min(max(a, 0), b - 1)",
      "floormod(floordiv(n, 4), 2)",
      "\"not plain\" * \"min\"",
  };
  for (const std::string& text : texts) EXPECT_EQ(reprint(text), text);
}

TEST(TextRandomTest, RandomTreesRoundTrip) {
  RandomTrees trees(20240611);
  size_t longest = 0;
  for (int i = 0; i < 3000; ++i) {
    const SymExpr e = i % 3 == 0 ? trees.boolean(1 + i % 6) : trees.integer(1 + i % 7);
    expect_round_trip(e);
    if (::testing::Test::HasFailure()) break;
    longest = std::max(longest, to_string(e).size());
  }
  EXPECT_GT(longest, 200u) << "the generator should make some big trees";
}

}  // namespace
}  // namespace relax
