// The shape layer at the int64 extremes (issue 30, item 4): INT64_MIN and INT64_MAX as
// literals and as values, divisions and remainders by -1, negations of INT64_MIN, and sums
// and products of coefficients past ±2^63. Each input once crashed (SIGFPE on INT64_MIN % -1)
// or overflowed a signed int64 (undefined behaviour; in a plain build a coefficient off by
// 2^64). The rule (src/shape/int_math.h): a rewrite that would overflow does not fire, and
// evaluation that overflows is an error Status. Every test checks the values too: wherever
// the input and its simplified form both evaluate they agree, and const_int_bound holds the
// value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// The values each variable takes: small ones and the extremes, where overflow hides.
const std::vector<int64_t>& point_values() {
  static const std::vector<int64_t> values = {0,    1,        -1,       2,       -3,      17,
                                              kMax, kMin,     kMax - 1, kMin + 1, int64_t{1} << 62,
                                              -(int64_t{1} << 62)};
  return values;
}

using VarTable = absl::flat_hash_map<std::string, SymVar>;

__extension__ typedef __int128 Exact;  // NOLINT

/// The exact value of an integer expression at `at`, computed in 128 bits: nullopt for a
/// division by zero, a node it does not know, or a value past ±2^125 (kept far from the
/// 128-bit limits, so that no operation below overflows).
std::optional<Exact> exact_value(const SymExpr& e, const SymVarMap<int64_t>& at) {
  constexpr Exact kLimit = static_cast<Exact>(1) << 125;
  auto within = [&](Exact v) -> std::optional<Exact> {
    if (v > kLimit || v < -kLimit) return std::nullopt;
    return v;
  };
  if (std::optional<int64_t> c = e.as_const()) return *c;
  if (e.is_var()) {
    auto it = at.find(SymVar::from_expr(e));
    if (it == at.end()) return std::nullopt;
    return it->second;
  }
  std::vector<Exact> x;
  for (size_t i = 0; i < e.num_operands(); ++i) {
    std::optional<Exact> v = exact_value(e.operand(i), at);
    if (!v) return std::nullopt;
    x.push_back(*v);
  }
  switch (e.kind()) {
    case SymKind::kAdd: return within(x[0] + x[1]);
    case SymKind::kSub: return within(x[0] - x[1]);
    case SymKind::kMul: {
      // |x| <= 2^125 each: the product can pass 2^127; split on the magnitudes first.
      const Exact ax = x[0] < 0 ? -x[0] : x[0], ay = x[1] < 0 ? -x[1] : x[1];
      if (ax != 0 && ay > kLimit / ax) return std::nullopt;
      return within(x[0] * x[1]);
    }
    case SymKind::kFloorDiv:
    case SymKind::kFloorMod: {
      if (x[1] == 0) return std::nullopt;
      Exact q = x[0] / x[1];
      if (x[0] % x[1] != 0 && ((x[0] < 0) != (x[1] < 0))) --q;
      return within(e.kind() == SymKind::kFloorDiv ? q : x[0] - q * x[1]);
    }
    case SymKind::kMin: return x[0] < x[1] ? x[0] : x[1];
    case SymKind::kMax: return x[0] > x[1] ? x[0] : x[1];
    case SymKind::kEQ: return x[0] == x[1];
    case SymKind::kNE: return x[0] != x[1];
    case SymKind::kLT: return x[0] < x[1];
    case SymKind::kLE: return x[0] <= x[1];
    case SymKind::kGT: return x[0] > x[1];
    case SymKind::kGE: return x[0] >= x[1];
    case SymKind::kAnd: return x[0] != 0 && x[1] != 0;
    case SymKind::kOr: return x[0] != 0 || x[1] != 0;
    case SymKind::kNot: return x[0] == 0;
    case SymKind::kSelect: return x[0] != 0 ? x[1] : x[2];
    default: return std::nullopt;
  }
}

std::string exact_string(Exact v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string digits;
  for (Exact m = negative ? -v : v; m != 0; m /= 10) digits.insert(digits.begin(), static_cast<char>('0' + m % 10));
  return (negative ? "-" : "") + digits;
}

/// What one input did: parsed, simplified, and compared at every point.
struct Checked {
  VarTable vars;
  SymExpr parsed;
  SymExpr simplified;
  int points_both_evaluated = 0;
};

/// Parses `text`, simplifies it and checks, at every assignment of point_values() to its
/// variables (up to three variables, every combination), that the simplified form gives the input's
/// value wherever both evaluate and that const_int_bound of both holds the value.
Checked check_values(const std::string& text) {
  Checked out;
  absl::StatusOr<SymExpr> parsed = SymExpr::parse(text, &out.vars);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  if (!parsed.ok()) return out;
  out.parsed = *parsed;
  Analyzer analyzer;
  out.simplified = analyzer.simplify(*parsed);
  EXPECT_TRUE(structural_equal(out.simplified, analyzer.simplify(out.simplified)))
      << text << " -> " << out.simplified << " -> " << analyzer.simplify(out.simplified);
  const ConstIntBound bound = analyzer.const_int_bound(*parsed);
  const ConstIntBound simplified_bound = analyzer.const_int_bound(out.simplified);
  std::vector<SymVar> ordered;
  for (const auto& [name, var] : out.vars) ordered.push_back(var);
  std::sort(ordered.begin(), ordered.end(), [](const SymVar& a, const SymVar& b) { return a.name() < b.name(); });
  EXPECT_LE(ordered.size(), 3u) << "the check enumerates the points of at most three variables";
  const std::vector<int64_t>& values = point_values();
  const size_t n = values.size();
  size_t points = 1;
  for (size_t i = 0; i < ordered.size(); ++i) points *= n;
  for (size_t p = 0; p < points; ++p) {
    SymVarMap<int64_t> at;
    size_t digits = p;
    for (const SymVar& v : ordered) {
      at[v] = values[digits % n];
      digits /= n;
    }
    absl::StatusOr<int64_t> expected = evaluate(*parsed, at);
    absl::StatusOr<int64_t> actual = evaluate(out.simplified, at);
    std::string where;
    for (const SymVar& v : ordered) absl::StrAppend(&where, " ", v.name(), "=", at[v]);
    if (expected.ok()) {
      EXPECT_TRUE(bound.min_value <= *expected && *expected <= bound.max_value)
          << text << " at" << where << " is " << *expected << ", outside its bound " << bound;
      EXPECT_TRUE(simplified_bound.min_value <= *expected && *expected <= simplified_bound.max_value)
          << out.simplified << " at" << where << " should be " << *expected << ", outside its bound "
          << simplified_bound;
    }
    if (expected.ok() && actual.ok()) {
      ++out.points_both_evaluated;
      EXPECT_EQ(*expected, *actual) << text << " -> " << out.simplified << " at" << where;
    }
    // Where the input overflows, the simplified form may evaluate (it can need fewer steps),
    // but then only to the exact value clamped to int64 (min(e*2, INT64_MIN) is INT64_MIN
    // once the overflowing operand is dropped): a coefficient wrapped by 2^64 gives another.
    const std::optional<Exact> exact = exact_value(*parsed, at);
    if (exact && expected.ok()) {
      EXPECT_TRUE(*exact == *expected) << text << " at" << where << ": evaluate gives " << *expected
                                       << ", the exact value is " << exact_string(*exact);
    }
    if (exact && actual.ok() && !expected.ok()) {
      const Exact clamped = *exact < kMin ? Exact{kMin} : *exact > kMax ? Exact{kMax} : *exact;
      EXPECT_TRUE(clamped == *actual) << text << " -> " << out.simplified << " at" << where
                                     << " gives " << *actual << ", the exact value is "
                                     << exact_string(*exact) << " (" << expected.status() << ")";
    }
  }
  return out;
}

// ---- The inputs of the issue -------------------------------------------------

TEST(Int64Extremes, MaxWithInt64MinIsTheOtherOperand) {
  // Crashed with SIGFPE: the matcher divided the sum's rest by its content -1.
  const Checked c = check_values("max(e, -9223372036854775808)");
  EXPECT_GT(c.points_both_evaluated, 0);
  EXPECT_EQ(c.simplified.to_string(), "e");
}

TEST(Int64Extremes, MinAndMaxWithEitherExtreme) {
  for (const char* op : {"min", "max"}) {
    for (const char* extreme : {"-9223372036854775808", "9223372036854775807"}) {
      for (const char* other : {"e", "e + 1", "e * 2", "e - f", "floordiv(e, 3)", "e * -1"}) {
        for (bool other_first : {true, false}) {
          const std::string text = other_first ? absl::StrCat(op, "(", other, ", ", extreme, ")")
                                               : absl::StrCat(op, "(", extreme, ", ", other, ")");
          SCOPED_TRACE(text);
          check_values(text);
        }
      }
    }
  }
  // min with INT64_MIN is INT64_MIN; max with INT64_MAX is INT64_MAX.
  EXPECT_EQ(check_values("min(e, -9223372036854775808)").simplified.as_const(), kMin);
  EXPECT_EQ(check_values("max(e, 9223372036854775807)").simplified.as_const(), kMax);
  EXPECT_EQ(check_values("min(e, 9223372036854775807)").simplified.to_string(), "e");
}

TEST(Int64Extremes, FactoringKeepsASumWhoseCoefficientsOverflow) {
  // write_sum added 2 + INT64_MAX for the factor m (undefined; in a plain build
  // m * -9223372036854775807, which gives a value where the input overflows).
  const Checked c = check_values("m*2 + m*9223372036854775807");
  for (int64_t m : {1, -1, 2}) {
    SymVarMap<int64_t> at;
    for (const auto& [name, v] : c.vars) at[v] = m;
    EXPECT_FALSE(evaluate(c.simplified, at).ok()) << c.simplified << " at m=" << m;
  }
  check_values("m*9223372036854775807 + m*9223372036854775807");
  check_values("m*-9223372036854775807 - m*2");
  check_values("m*-4611686018427387904 - m*4611686018427387904 + n*m");
  check_values("m*n*9223372036854775807 + m*n*3 + m");
}

TEST(Int64Extremes, FactoringKeepsASumWhoseConstantsOverflow) {
  // read_sum added INT64_MAX + 16 (undefined; in a plain build a constant off by 2^64).
  const Checked c = check_values("a + 9223372036854775807 + 16");
  EXPECT_GT(c.points_both_evaluated, 0);
  // With a shared atom the sum is read and written back by the factoring pass.
  const Checked shared = check_values("a*b + a*9223372036854775807 + 9223372036854775807 + 16");
  SymVarMap<int64_t> at;
  for (const auto& [name, v] : shared.vars) at[v] = name == "a" ? -1 : 0;
  // -INT64_MAX + INT64_MAX + 16 == 16.
  EXPECT_EQ(evaluate(shared.parsed, at).value_or(0), 16);
  check_values("a*b + a*c - 4611686018427387904 - 4611686018427387904");
  check_values("a*b - a*c - 9223372036854775807 - 16");
}

// ---- The classes ------------------------------------------------------------

TEST(Int64Extremes, DivisionAndRemainderOfInt64MinByMinusOne) {
  for (const char* text :
       {"floordiv(-9223372036854775808, -1)", "floormod(-9223372036854775808, -1)",
        "floordiv(n*-9223372036854775808, -1)", "floormod(n*-9223372036854775808, -1)",
        "floordiv(n*-9223372036854775808 + 3, -1)", "floormod(n*-9223372036854775808 + 3, -1)",
        "floordiv(n - 9223372036854775807 - 1, -1)", "floormod(n + -9223372036854775808, -1)",
        "floordiv(n, -1)", "floormod(n, -1)", "floordiv(n*m*-9223372036854775808, m*-1)",
        "floormod(n*m*-9223372036854775808, m*-1)", "floordiv(n*-9223372036854775808, n*-1)",
        "floordiv(n, -9223372036854775808)", "floormod(n, -9223372036854775808)",
        "floordiv(-9223372036854775808, n)", "floormod(-9223372036854775808, n)"}) {
    SCOPED_TRACE(text);
    check_values(text);
  }
  // INT64_MIN / -1 stays as written, so that evaluation still reports the overflow.
  const Checked c = check_values("floordiv(-9223372036854775808, -1)");
  absl::StatusOr<int64_t> v = evaluate(c.simplified, {});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(std::string(v.status().message()).find("overflow"), std::string::npos) << v.status();
  EXPECT_EQ(check_values("floormod(-9223372036854775808, -1)").simplified.as_const(), 0);
}

TEST(Int64Extremes, EvaluatingDivisionOfInt64MinByMinusOneIsAnError) {
  VarTable vars;
  absl::StatusOr<SymExpr> e = SymExpr::parse("floordiv(n, m)", &vars);
  ASSERT_TRUE(e.ok()) << e.status();
  SymVarMap<int64_t> at = {{vars.at("n"), kMin}, {vars.at("m"), -1}};
  absl::StatusOr<int64_t> v = evaluate(*e, at);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(std::string(v.status().message()).find("overflow"), std::string::npos) << v.status();
  absl::StatusOr<SymExpr> mod = SymExpr::parse("floormod(n, m)", &vars);
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(evaluate(*mod, at).value_or(-5), 0);
}

TEST(Int64Extremes, SumsOfCoefficientsThatOverflow) {
  for (const char* text :
       {"n*9223372036854775807 + n", "n*4611686018427387904 + n*4611686018427387904",
        "n*-9223372036854775808 - n", "n - n*9223372036854775807 - n*2",
        "9223372036854775807 + n + 1 - n", "n + 9223372036854775807 + 9223372036854775807",
        "-9223372036854775808 - n - 1", "n*-9223372036854775808 + m*-9223372036854775808 - n",
        "floordiv(n, 2)*9223372036854775807 + floormod(n, 2)*4611686018427387904 + n"}) {
    SCOPED_TRACE(text);
    check_values(text);
  }
}

TEST(Int64Extremes, ProductsThatOverflow) {
  for (const char* text :
       {"n*4611686018427387904*2", "(n + 1)*9223372036854775807*2", "(n + m)*-9223372036854775808",
        "(n - 1)*(m + 1)*4611686018427387904", "n*n*-9223372036854775808*-1",
        "min(n*3037000500, m*3037000500)", "max(n*-9223372036854775808, m*-9223372036854775808)",
        "min(n*-1, m*-1)", "max(n*-4611686018427387904, m*-4611686018427387904)"}) {
    SCOPED_TRACE(text);
    check_values(text);
  }
}

TEST(Int64Extremes, NegationOfInt64Min) {
  for (const char* text :
       {"0 - n*-9223372036854775808", "-(n*-9223372036854775808)", "-(-9223372036854775808 + n)",
        "0 - (n - 9223372036854775807 - 1)", "n*-1*-9223372036854775808", "m - (m + -9223372036854775808)",
        "n*-9223372036854775808 < m", "n*-9223372036854775808 == m*2", "-9223372036854775808 - n <= 0",
        "select(n < 0, n*-9223372036854775808, -9223372036854775808)",
        // bound() and the div/mod views negate a term's coefficient INT64_MIN
        "min(n, m)*-9223372036854775808 + n", "floormod(n, 3)*-9223372036854775808 + m",
        "floordiv(n, 3)*-9223372036854775808 + floormod(n, 3)*-9223372036854775808"}) {
    SCOPED_TRACE(text);
    check_values(text);
  }
}

// ---- A sweep: every operator over forms holding each extreme ----------------

TEST(Int64Extremes, EveryOperatorOverExtremeForms) {
  const std::vector<std::string> constants = {"-9223372036854775808", "9223372036854775807", "-1",
                                              "4611686018427387904", "-4611686018427387905", "2"};
  const std::vector<std::string> forms = {"C", "n*C", "n + C", "n*C + m", "m*n*C - n", "floordiv(n, C)"};
  const std::vector<std::string> ops = {"min", "max", "floordiv", "floormod"};
  const std::vector<std::string> infix = {" + ", " - ", " * ", " < ", " == "};
  int checked = 0;
  for (const std::string& f : forms) {
    for (const std::string& c1 : constants) {
      const std::string left = absl::StrReplaceAll(f, {{"C", c1}});
      for (const std::string& c2 : constants) {
        for (const std::string& op : ops) {
          const std::string text = absl::StrCat(op, "(", left, ", ", absl::StrReplaceAll("n*C + C", {{"C", c2}}), ")");
          SCOPED_TRACE(text);
          check_values(text);
          ++checked;
        }
        for (const std::string& op : infix) {
          const std::string text = absl::StrCat(left, op, "(m*", c2, " + ", c2, ")");
          SCOPED_TRACE(text);
          check_values(text);
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 6 * 6 * 6 * 9);
}

}  // namespace
}  // namespace relax
