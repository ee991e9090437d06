// The SymExpr parser's error messages, and its robustness against hostile input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iterator>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "relax/shape/sym_expr.h"
#include "sym_expr_test_util.h"

namespace relax {
namespace {

using test::parse_error;
using test::parse_ok;
using test::RandomTrees;
using test::reprint;
using ::testing::HasSubstr;

TEST(TextErrorTest, EmptyInput) {
  EXPECT_EQ(parse_error(""), "column 1: expected an expression, found end of input");
  EXPECT_EQ(parse_error("   "), "column 4: expected an expression, found end of input");
}

TEST(TextErrorTest, UnclosedParenthesis) {
  EXPECT_EQ(parse_error("a * (b + c"),
            "column 11: expected ')' to close '(' at column 5, found end of input");
  EXPECT_EQ(parse_error("(a + b c"),
            "column 8: expected ')' to close '(' at column 1, found name `c`");
}

TEST(TextErrorTest, TrailingGarbage) {
  EXPECT_EQ(parse_error("a b"), "column 3: expected an operator or end of input, found name `b`");
  EXPECT_EQ(parse_error("a + 1)"), "column 6: expected an operator or end of input, found ')'");
  EXPECT_THAT(parse_error("2n"), HasSubstr("column 2: expected an operator"));
}

TEST(TextErrorTest, MissingOperand) {
  EXPECT_EQ(parse_error("a +"), "column 4: expected an expression, found end of input");
  EXPECT_EQ(parse_error("* a"), "column 1: expected an expression, found '*'");
  EXPECT_EQ(parse_error("()"), "column 2: expected an expression, found ')'");
  EXPECT_EQ(parse_error("min(a, )"), "column 8: expected an expression, found ')'");
}

TEST(TextErrorTest, BooleanOperatorsNeedBooleans) {
  EXPECT_EQ(parse_error("n && 3"), "column 1: operand of && must be boolean, found integer `n`");
  EXPECT_THAT(parse_error("n < 1 || 3"), HasSubstr("column 10: operand of || must be boolean"));
  EXPECT_EQ(parse_error("!n"), "column 2: operand of ! must be boolean, found integer `n`");
}

TEST(TextErrorTest, ArithmeticNeedsIntegers) {
  EXPECT_EQ(parse_error("(a < b) + 1"),
            "column 1: operand of + must be an integer, found boolean `a < b`");
  EXPECT_THAT(parse_error("n * true"), HasSubstr("column 5: operand of * must be an integer"));
  EXPECT_THAT(parse_error("-(a < b)"), HasSubstr("operand of unary - must be an integer"));
  // An unsigned constant other than 0 has no negation in its dtype (found by fuzz.symexpr).
  EXPECT_EQ(parse_error("-(5u8)"), "column 2: operand of unary - must be signed, found uint8 `5u8`");
  EXPECT_EQ(reprint("-(0u8)"), "0u8");
  EXPECT_THAT(parse_error("true == false"), HasSubstr("operand of == must be an integer"));
}

TEST(TextErrorTest, FunctionArgumentTypes) {
  EXPECT_EQ(parse_error("select(n, 1, 2)"),
            "column 8: the condition of select must be boolean, found integer `n`");
  EXPECT_EQ(parse_error("select(true, 1, false)"),
            "column 17: argument 3 of select must be an integer, found boolean `false`");
  EXPECT_THAT(parse_error("floordiv(n, n > 1)"),
              HasSubstr("argument 2 of floordiv must be an integer"));
}

TEST(TextErrorTest, FunctionArgumentCounts) {
  EXPECT_EQ(parse_error("floordiv(n)"), "column 1: floordiv takes 2 arguments, found 1");
  EXPECT_EQ(parse_error("n + min(a, b, c)"), "column 5: min takes 2 arguments, found 3");
  EXPECT_EQ(parse_error("max()"), "column 1: max takes 2 arguments, found 0");
  EXPECT_EQ(parse_error("select(true, 1)"), "column 1: select takes 3 arguments, found 2");
}

TEST(TextErrorTest, FunctionCallSyntax) {
  EXPECT_EQ(parse_error("floordiv n"), "column 10: expected '(' after floordiv, found name `n`");
  EXPECT_EQ(parse_error("min"), "column 4: expected '(' after min, found end of input");
  EXPECT_EQ(parse_error("min(a, b"),
            "column 9: expected ',' or ')' to close '(' at column 4, found end of input");
  EXPECT_THAT(parse_error("foo(3)"), HasSubstr("column 1: unknown function `foo`"));
}

TEST(TextErrorTest, ComparisonsDoNotChain) {
  EXPECT_THAT(parse_error("a < b < c"), HasSubstr("column 7: comparison operators do not chain"));
  EXPECT_THAT(parse_error("a == b != c"), HasSubstr("do not chain"));
}

TEST(TextErrorTest, IntegerLiteralOutOfRange) {
  EXPECT_EQ(parse_error("9223372036854775808"),
            "column 1: integer literal 9223372036854775808 is out of the int64 range");
  EXPECT_EQ(parse_error("n + -9223372036854775809"),
            "column 5: integer literal -9223372036854775809 is out of the int64 range");
  EXPECT_THAT(parse_error("99999999999999999999999999"), HasSubstr("out of the int64 range"));
  EXPECT_THAT(parse_error("-(9223372036854775808)"), HasSubstr("column 3: integer literal"));
}

TEST(TextErrorTest, ForeignOperatorsGetHints) {
  // `/` is true division, which floats have; on integers it points to floordiv.
  EXPECT_EQ(parse_error("n / 2"),
            "column 3: '/' is true division, for floats; integer division is written "
            "floordiv(a, b)");
  EXPECT_THAT(parse_error("n % 2"), HasSubstr("floormod(a, b)"));
  EXPECT_THAT(parse_error("a = b"), HasSubstr("found '=' (did you mean '=='?)"));
  EXPECT_THAT(parse_error("p & q"), HasSubstr("did you mean '&&'?"));
  EXPECT_THAT(parse_error("p | q"), HasSubstr("did you mean '||'?"));
}

TEST(TextErrorTest, UnexpectedCharacters) {
  EXPECT_EQ(parse_error("a + @"), "column 5: expected an expression, found '@'");
  EXPECT_EQ(parse_error("n\xc3\xa9"),
            "column 2: expected an operator or end of input, found byte 0xc3");
  EXPECT_THAT(parse_error(std::string("n +\0 1", 6)), HasSubstr("found byte 0x00"));
  EXPECT_THAT(parse_error("1.5"), HasSubstr("column 2: expected an operator"));
}

TEST(TextErrorTest, BadQuotedNames) {
  EXPECT_EQ(parse_error("n + \"abc"), "column 5: unterminated quoted name");
  EXPECT_EQ(parse_error("\"\""), "column 1: a variable name cannot be empty");
  EXPECT_THAT(parse_error("\"a\\qb\""), HasSubstr("column 3: unknown escape"));
  EXPECT_THAT(parse_error("\"\\x4\""), HasSubstr("unknown escape"));
}

TEST(TextErrorTest, LocationsOnLaterLinesNameTheLine) {
  EXPECT_EQ(parse_error("a +\n  )"), "line 2, column 3: expected an expression, found ')'");
  EXPECT_EQ(parse_error("(a\n"),
            "line 2, column 1: expected ')' to close '(' at line 1, column 1, found end of input");
}

TEST(TextErrorTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(1000, '(') + "n" + std::string(1000, ')');
  EXPECT_THAT(parse_error(deep), HasSubstr("nests deeper than 256 levels"));
  EXPECT_THAT(parse_error(std::string(100000, '(')), HasSubstr("nests deeper than"));
  EXPECT_THAT(parse_error(std::string(5000, '!') + "true"), HasSubstr("nests deeper than"));
  EXPECT_THAT(parse_error(std::string(5000, '-') + "n"), HasSubstr("nests deeper than"));
  const std::string ok = std::string(200, '(') + "n" + std::string(200, ')');
  EXPECT_TRUE(parse_ok(ok).is_var());
}

TEST(TextErrorTest, VeryLongChainsAreBounded) {
  // A chain of k operators is a tree k + 1 levels deep; the limit is the one of every
  // reader, kMaxNestingDepth (relax/support/limits.h), measured on the tree built.
  std::string chain = "n";
  for (int i = 0; i < 20000; ++i) chain += " + n";
  EXPECT_THAT(parse_error(chain), HasSubstr("nested deeper than 256 levels"));
  std::string fine = "n";
  for (int i = 0; i < 255; ++i) fine += " * 2";
  SymExpr e = parse_ok(fine);
  EXPECT_EQ(e->depth(), 256u);
  EXPECT_EQ(to_string(e), fine);
  // One more operator: the error names the column of the operator that goes too deep.
  EXPECT_EQ(parse_error(fine + " * 2"),
            "column 1023: expression is nested deeper than 256 levels (its tree would be deeper "
            "than the nesting limit; a chain of n operators is n levels deep)");
  // Depth, not recursion: a right-deep tree through parentheses counts the same.
  std::string right = "n";
  for (int i = 0; i < 300; ++i) right = "n - (" + right + ")";
  EXPECT_THAT(parse_error(right), HasSubstr("nest"));
}

TEST(TextErrorTest, GarbageNeverCrashes) {
  // Random soups of the language's own characters and tokens, and random bytes: each parse
  // must return (ok or InvalidArgument), and whatever parses must print and re-parse stably.
  static constexpr std::string_view kPieces[] = {"n",
                                                 "m",
                                                 "1",
                                                 "-",
                                                 "+",
                                                 "*",
                                                 "(",
                                                 ")",
                                                 ",",
                                                 "<",
                                                 "<=",
                                                 "==",
                                                 "!",
                                                 "&&",
                                                 "||",
                                                 " ",
                                                 "min",
                                                 "floordiv",
                                                 "select",
                                                 "true",
                                                 "\"",
                                                 "\\",
                                                 "9223372036854775808",
                                                 "=",
                                                 "&",
                                                 "x.",
                                                 "_",
                                                 "0",
                                                 "/",
                                                 ">",
                                                 "max",
                                                 "\n",
                                                 "\xff"};
  std::mt19937_64 rng(7);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    const int length = static_cast<int>(rng() % 24);
    for (int j = 0; j < length; ++j) {
      if (i % 4 == 0) {
        text += static_cast<char>(rng() % 256);
      } else {
        text += kPieces[rng() % std::size(kPieces)];
      }
    }
    absl::StatusOr<SymExpr> result = SymExpr::parse(text);
    if (!result.ok()) {
      EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << text;
      continue;
    }
    ++parsed;
    const std::string printed = to_string(*result);
    EXPECT_EQ(reprint(printed), printed) << "from `" << text << "`";
  }
  EXPECT_GT(parsed, 20) << "some soups should parse";
}

TEST(TextErrorTest, MutatedValidTextNeverCrashes) {
  RandomTrees trees(99);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) {
    std::string text = to_string(trees.integer(4));
    const size_t at = static_cast<size_t>(rng() % (text.size() + 1));
    switch (rng() % 3) {
      case 0:
        if (at < text.size()) text.erase(at, 1);
        break;
      case 1:
        text.insert(at, 1, "()+-*,!<\"x9"[rng() % 11]);
        break;
      default:
        text = text.substr(0, at);
        break;
    }
    absl::StatusOr<SymExpr> result = SymExpr::parse(text);
    if (result.ok()) {
      EXPECT_EQ(reprint(to_string(*result)), to_string(*result)) << text;
    }
  }
}

}  // namespace
}  // namespace relax
