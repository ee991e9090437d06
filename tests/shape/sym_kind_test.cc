// The SymKind table (relax/shape/sym_kind.h): its facts agree with the arithmetic it
// carries, and the constructors, printer, parser and evaluator read it.
#include "relax/shape/sym_kind.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "relax/shape/sym_expr.h"

namespace relax {
namespace sym_kind_test {
namespace {

SymKind kind_at(int i) { return static_cast<SymKind>(i); }

int64_t apply(SymKind kind, int64_t a, int64_t b) {
  SymInt128 r = 0;
  EXPECT_EQ(sym_kind_info(kind).eval_int(a, b, &r), SymEvalError::kNone) << sym_kind_name(kind);
  return static_cast<int64_t>(r);
}

TEST(SymKindTable, ComparisonsNegateAndMirrorAsTheirArithmeticSays) {
  int comparisons = 0;
  for (int i = 0; i < kNumSymKinds; ++i) {
    const SymKindInfo& row = sym_kind_info(kind_at(i));
    if (!is_comparison(row.kind)) {
      EXPECT_EQ(row.negated, row.kind);
      EXPECT_EQ(row.mirrored, row.kind);
      continue;
    }
    ++comparisons;
    for (int64_t a = -2; a <= 2; ++a) {
      for (int64_t b = -2; b <= 2; ++b) {
        const int64_t v = apply(row.kind, a, b);
        EXPECT_EQ(apply(row.negated, a, b), 1 - v) << row.name << " " << a << " " << b;
        EXPECT_EQ(apply(row.mirrored, b, a), v) << row.name << " " << a << " " << b;
        EXPECT_EQ(row.eval_float(static_cast<double>(a), static_cast<double>(b)), static_cast<double>(v));
      }
    }
  }
  EXPECT_EQ(comparisons, 6);
}

TEST(SymKindTable, CommutativeRowsAreCommutative) {
  for (int i = 0; i < kNumSymKinds; ++i) {
    const SymKindInfo& row = sym_kind_info(kind_at(i));
    if (!row.commutative || row.eval_int == nullptr) continue;
    for (int64_t a = -3; a <= 3; ++a) {
      for (int64_t b = -3; b <= 3; ++b) EXPECT_EQ(apply(row.kind, a, b), apply(row.kind, b, a)) << row.name;
    }
  }
  // The logical ones, through the evaluator (their arithmetic is not strict).
  const SymVar p("p", DataType::boolean());
  const SymVar q("q", DataType::boolean());
  for (SymKind kind : {SymKind::kAnd, SymKind::kOr}) {
    ASSERT_TRUE(sym_kind_info(kind).commutative);
    for (int64_t x : {0, 1}) {
      for (int64_t y : {0, 1}) {
        const SymVarMap<int64_t> env = {{p, x}, {q, y}};
        EXPECT_EQ(*evaluate(SymExpr::make(kind, p, q), env), *evaluate(SymExpr::make(kind, q, p), env));
      }
    }
  }
}

TEST(SymKindTable, FloorDivisionRoundsDownAndRefusesZero) {
  EXPECT_EQ(apply(SymKind::kFloorDiv, -7, 2), -4);
  EXPECT_EQ(apply(SymKind::kFloorMod, -7, 2), 1);
  EXPECT_EQ(apply(SymKind::kFloorMod, 7, -2), -1);
  SymInt128 r = 0;
  EXPECT_EQ(sym_kind_info(SymKind::kFloorDiv).eval_int(1, 0, &r), SymEvalError::kByZero);
  EXPECT_EQ(sym_kind_info(SymKind::kFloorMod).eval_int(1, 0, &r), SymEvalError::kByZero);
  // int64 extremes are exact in 128 bits; the dtype check is the caller's.
  EXPECT_EQ(sym_kind_info(SymKind::kFloorDiv).eval_int(INT64_MIN, -1, &r), SymEvalError::kNone);
  EXPECT_TRUE(r == -static_cast<SymInt128>(INT64_MIN));
  const SymInt128 big = static_cast<SymInt128>(1) << 100;
  EXPECT_EQ(sym_kind_info(SymKind::kMul).eval_int(big, big, &r), SymEvalError::kOverflow);
}

TEST(SymKindTable, FloatMinAndMaxAreTheGeneratedCodesStdMinAndMax) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const SymFloatEval min = sym_kind_info(SymKind::kMin).eval_float;
  const SymFloatEval max = sym_kind_info(SymKind::kMax).eval_float;
  EXPECT_TRUE(std::isnan(min(nan, 1.0)));  // std::min(nan, 1) is nan: 1 < nan is false
  EXPECT_EQ(min(1.0, nan), 1.0);
  EXPECT_TRUE(std::isnan(max(nan, 1.0)));
  EXPECT_EQ(max(1.0, nan), 1.0);
  // evaluate_float computes them the same way.
  const SymVar x("x", DataType::float32());
  const SymVarMap<double> floats = {{x, nan}};
  EXPECT_TRUE(std::isnan(*evaluate_float(relax::min(x, SymExpr::float_imm(1.0, DataType::float32())), {}, floats)));
  EXPECT_EQ(*evaluate_float(relax::min(SymExpr::float_imm(1.0, DataType::float32()), x), {}, floats), 1.0);
}

TEST(SymKindTable, TextSpellingsComeFromTheRows) {
  // Every infix and function row prints with its spelling and reads back.
  absl::flat_hash_map<std::string, SymVar> vars;
  const SymVar a("a");
  const SymVar b("b");
  vars.emplace("a", a);
  vars.emplace("b", b);
  int rows = 0;
  for (int i = 0; i < kNumSymKinds; ++i) {
    const SymKindInfo& row = sym_kind_info(kind_at(i));
    if (row.syntax != SymSyntax::kInfix && row.syntax != SymSyntax::kFunction) continue;
    if (row.operands != SymOperands::kArith && row.operands != SymOperands::kInteger &&
        row.operands != SymOperands::kCompare)
      continue;  // the int64 rows; bools and floats are covered by the text tests
    ++rows;
    const SymExpr e = SymExpr::make(row.kind, a, b);
    const std::string text = to_string(e);
    EXPECT_NE(text.find(std::string(row.name)), std::string::npos) << text;
    EXPECT_EQ(sym_kind_of_name(row.name, row.syntax), row.kind);
    absl::StatusOr<SymExpr> back = SymExpr::parse(text, &vars);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    EXPECT_TRUE(structural_equal(*back, e)) << text;
  }
  EXPECT_EQ(rows, 13);
  EXPECT_EQ(sym_kind_of_name("nosuch", SymSyntax::kFunction), SymKind::kIntImm);
  EXPECT_EQ(sym_operator_arity(SymKind::kSelect), 3u);
  EXPECT_EQ(sym_operator_arity(SymKind::kCast), 0u);
}

}  // namespace
}  // namespace sym_kind_test
}  // namespace relax
