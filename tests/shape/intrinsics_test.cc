// The intrinsic table (relax/shape/intrinsics.h): its rows, the constructors'
// dtype rules, the text form and evaluation of every intrinsic.
#include "relax/shape/intrinsics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "relax/shape/analyzer.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"

namespace relax {
namespace {

using ::testing::HasSubstr;

constexpr DataType kF32 = DataType::float32();
constexpr DataType kF64 = DataType::float64();
constexpr DataType kI32 = DataType::int32();
constexpr DataType kU8{DataType::Code::kUInt, 8, 1};
constexpr DataType kI8{DataType::Code::kInt, 8, 1};
constexpr DataType kU64{DataType::Code::kUInt, 64, 1};

TEST(IntrinsicTableTest, OneRowPerIntrinsicWithWhatItsRuleNeeds) {
  std::set<std::string_view> names;
  size_t index = 0;
  for (const IntrinsicInfo& row : intrinsic_table()) {
    EXPECT_EQ(static_cast<size_t>(row.op), index++) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate name " << row.name;
    EXPECT_EQ(intrinsic_from_name(row.name), row.op);
    EXPECT_EQ(intrinsic_name(row.op), row.name);
    EXPECT_EQ(intrinsic_arity(row.op), row.arity);
    EXPECT_GE(row.arity, 1);
    EXPECT_LE(row.arity, 3);
    const bool floats = row.dtypes != IntrinsicDtypes::kInteger;
    const bool ints = row.dtypes == IntrinsicDtypes::kInteger || row.dtypes == IntrinsicDtypes::kNumeric;
    EXPECT_EQ(row.eval_float != nullptr, floats) << row.name;
    EXPECT_EQ(row.eval_int != nullptr, ints) << row.name;
  }
  EXPECT_EQ(intrinsic_table().size(), kNumIntrinsics);
  EXPECT_EQ(intrinsic_from_name("sinh"), std::nullopt);
}

class IntrinsicsTest : public ::testing::Test {
 protected:
  SymVar x{"x", kF32}, y{"y", kF32}, d{"d", kF64};
  SymVar a{"a", kI32}, b{"b", kI32}, q{"q", kU8}, n{"n"};

  static double eval_f(const SymExpr& e, const SymVarMap<double>& floats = {}) {
    absl::StatusOr<double> r = evaluate_float(e, {}, floats);
    EXPECT_TRUE(r.ok()) << e << ": " << r.status();
    return r.ok() ? *r : std::nan("");
  }
  int64_t eval_i(const SymExpr& e, const SymVarMap<int64_t>& ints) {
    absl::StatusOr<int64_t> r = evaluate(e, ints);
    EXPECT_TRUE(r.ok()) << e << ": " << r.status();
    return r.ok() ? *r : -999;
  }
  static std::string eval_error(const SymExpr& e, const SymVarMap<int64_t>& ints = {}) {
    absl::StatusOr<int64_t> r = evaluate(e, ints);
    EXPECT_FALSE(r.ok()) << e;
    return r.ok() ? "" : std::string(r.status().message());
  }
};

TEST_F(IntrinsicsTest, ConstructorsFollowTheDtypeRules) {
  for (const SymExpr& e : {sin(x), cos(x), floor(x), ceil(x), round(x), trunc(x)}) {
    EXPECT_EQ(e.dtype(), kF32) << e;
    EXPECT_EQ(e.kind(), SymKind::kCall);
  }
  EXPECT_EQ(isnan(x).dtype(), DataType::boolean());
  EXPECT_EQ(isinf(d).dtype(), DataType::boolean());
  EXPECT_EQ(bitwise_and(a, b).dtype(), kI32);
  EXPECT_EQ(bitwise_not(q).dtype(), kU8);
  // An int64 constant takes the other operand's dtype, as for the arithmetic operators.
  const SymExpr unpack = bitwise_and(shift_right(q, 4), 15);
  EXPECT_EQ(unpack.dtype(), kU8);
  EXPECT_EQ(to_string(unpack), "bitwise_and(shift_right(q, 4u8), 15u8)");
  EXPECT_EQ(sin(x)->intrinsic(), Intrinsic::kSin);
  EXPECT_EQ(shift_left(a, b)->intrinsic(), Intrinsic::kShiftLeft);
}

TEST_F(IntrinsicsTest, OperandMismatchReadsTheRuleOfTheRow) {
  EXPECT_EQ(intrinsic_operand_mismatch(Intrinsic::kSin, {n}, "sin"),
            "operand 0 of sin must be a float, got int64 `n`");
  EXPECT_EQ(intrinsic_operand_mismatch(Intrinsic::kBitwiseAnd, {x, y}, "bitwise_and"),
            "operand 0 of bitwise_and must be an integer, got float32 `x`");
  EXPECT_EQ(intrinsic_operand_mismatch(Intrinsic::kShiftLeft, {a, q}, "shift_left"),
            "operands of shift_left differ in dtype: int32 `a` vs uint8 `q`");
  EXPECT_EQ(intrinsic_operand_mismatch(Intrinsic::kIsNan, {a}, "isnan"),
            "operand 0 of isnan must be a float, got int32 `a`");
  EXPECT_EQ(intrinsic_operand_mismatch(Intrinsic::kBitwiseNot, {a, b}, "bitwise_not"),
            "bitwise_not takes 1 operand, found 2");
  EXPECT_EQ(intrinsic_operand_mismatch(Intrinsic::kAbs, {SymExpr::boolean(true)}, "abs"),
            "operand 0 of abs must be a float or an integer, got bool `true`");
  EXPECT_EQ(intrinsic_operand_mismatch(Intrinsic::kFloor, {x}, "floor"), "");
  EXPECT_DEATH(bitwise_or(x, y), "must be an integer");
  EXPECT_DEATH(cos(n), "must be a float");
}

TEST_F(IntrinsicsTest, TextRoundTripsEveryIntrinsic) {
  const SymExpr exprs[] = {
      sin(x),  cos(x + y),      floor(x),          ceil(d),           round(x * y),
      trunc(d), isnan(x),       isinf(d) || isnan(x),                 bitwise_and(a, b),
      bitwise_or(q, 3),         bitwise_xor(a, b), bitwise_not(a),    shift_left(n, 2),
      shift_right(q, 4),        select(isnan(x), y, x),               abs(a),
  };
  for (const SymExpr& e : exprs) {
    ParseContext ctx;
    for_each_var(e, [&](const SymVar& v) { ctx.vars.emplace(v.name(), v); });
    const std::string text = to_string(e);
    absl::StatusOr<SymExpr> parsed = SymExpr::parse(text, ctx);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_TRUE(structural_equal(*parsed, e)) << text << " read back as " << *parsed;
    EXPECT_EQ(to_string(*parsed), text);
  }
  EXPECT_EQ(to_string(isinf(d) || isnan(x)), "isinf(d) || isnan(x)");
  // The names are reserved: a variable so named prints quoted and reads back.
  const SymVar named("round");
  EXPECT_EQ(to_string(named + 1), "\"round\" + 1");
}

TEST_F(IntrinsicsTest, ParserChecksTheRuleOfTheRow) {
  auto error = [](std::string_view text, absl::flat_hash_map<std::string, SymVar>* vars) {
    absl::StatusOr<SymExpr> r = SymExpr::parse(text, vars);
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? "" : std::string(r.status().message());
  };
  absl::flat_hash_map<std::string, SymVar> vars = {{"x", x}, {"a", a}, {"q", q}};
  EXPECT_THAT(error("sin(a)", &vars), HasSubstr("argument 1 of sin"));
  EXPECT_THAT(error("sin(a)", &vars), HasSubstr("a float"));
  EXPECT_THAT(error("bitwise_and(x, x)", &vars), HasSubstr("an integer"));
  EXPECT_THAT(error("shift_right(q, a)", &vars), HasSubstr("arguments of shift_right"));
  EXPECT_THAT(error("bitwise_not(a, a)", &vars), HasSubstr("bitwise_not takes 1 argument, found 2"));
  absl::StatusOr<SymExpr> ok = SymExpr::parse("shift_right(q, 4u8)", &vars);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(structural_equal(*ok, shift_right(q, 4)));
}

TEST_F(IntrinsicsTest, RoundingFunctionsEvaluate) {
  SymVarMap<double> env;
  auto at = [&](const SymExpr& e, double v) {
    env[x] = v;
    return eval_f(e, env);
  };
  // round: half to even, as numpy.
  EXPECT_EQ(at(round(x), 0.5), 0.0);
  EXPECT_EQ(at(round(x), 1.5), 2.0);
  EXPECT_EQ(at(round(x), 2.5), 2.0);
  EXPECT_EQ(at(round(x), -2.5), -2.0);
  EXPECT_EQ(at(round(x), 2.75), 3.0);
  EXPECT_TRUE(std::signbit(at(round(x), -0.5)));
  EXPECT_EQ(at(floor(x), -1.25), -2.0);
  EXPECT_EQ(at(ceil(x), -1.25), -1.0);
  EXPECT_EQ(at(trunc(x), -1.75), -1.0);
  EXPECT_EQ(at(trunc(x), 1.75), 1.0);
  // sin/cos are rounded to the float32 node dtype.
  EXPECT_EQ(at(sin(x), 0.5), static_cast<double>(static_cast<float>(std::sin(0.5))));
  EXPECT_EQ(at(cos(x), 0.5), static_cast<double>(static_cast<float>(std::cos(0.5))));
  EXPECT_EQ(at(cast(kF32, isnan(x)), std::nan("")), 1.0);
  EXPECT_EQ(at(cast(kF32, isnan(x)), 1.0), 0.0);
  EXPECT_EQ(at(cast(kF32, isinf(x)), -INFINITY), 1.0);
  EXPECT_EQ(at(cast(kF32, isinf(x)), std::nan("")), 0.0);
  EXPECT_EQ(at(select(isnan(x), SymExpr::float_imm(0, kF32), x), std::nan("")), 0.0);
}

TEST_F(IntrinsicsTest, BitwiseFunctionsAndShiftsEvaluate) {
  SymVarMap<int64_t> env = {{a, -6}, {b, 3}, {q, 0xAB}, {n, 5}};
  EXPECT_EQ(eval_i(bitwise_and(a, b), env), -6 & 3);
  EXPECT_EQ(eval_i(bitwise_or(a, b), env), -6 | 3);
  EXPECT_EQ(eval_i(bitwise_xor(a, b), env), -6 ^ 3);
  EXPECT_EQ(eval_i(bitwise_not(a), env), 5);
  EXPECT_EQ(eval_i(bitwise_not(q), env), 0x54);
  // int4 unpacking: the high and low nibble of a byte.
  EXPECT_EQ(eval_i(bitwise_and(shift_right(q, 4), 15), env), 0xA);
  EXPECT_EQ(eval_i(bitwise_and(q, 15), env), 0xB);
  // Bits shifted out of the dtype are dropped.
  EXPECT_EQ(eval_i(shift_left(q, 4), env), 0xB0);
  EXPECT_EQ(eval_i(shift_left(a, b), env), -48);
  EXPECT_EQ(eval_i(shift_left(SymExpr::int_imm(0x40, kI8), SymExpr::int_imm(1, kI8)), env), -128);
  // Right shifts: arithmetic when signed, logical when unsigned.
  EXPECT_EQ(eval_i(shift_right(a, b), env), -1);
  EXPECT_EQ(eval_i(shift_right(SymExpr::int_imm(-128, kI8), SymExpr::int_imm(1, kI8)), env), -64);
  EXPECT_EQ(eval_i(shift_right(SymExpr::int_imm(-1, kI32) + a * 0, SymExpr::int_imm(28, kI32)), env), -1);
  EXPECT_EQ(eval_i(shift_left(n, 60), env), static_cast<int64_t>(uint64_t{5} << 60));
  EXPECT_EQ(eval_i(abs(a), env), 6);
  // Undefined results are errors naming the values.
  EXPECT_EQ(eval_error(shift_left(a, SymExpr::int_imm(32, kI32)), env),
            "int32 shift count out of range in `shift_left(a, 32i32)` (shift_left(-6, 32))");
  EXPECT_EQ(eval_error(shift_right(n, -1), env),
            "int64 shift count out of range in `shift_right(n, -1)` (shift_right(5, -1))");
  EXPECT_EQ(eval_error(abs(SymExpr::int_imm(-128, kI8) + SymExpr::int_imm(0, kI8)), env),
            "int8 overflow in `abs(-128i8 + 0i8)` (abs(-128))");
  // uint64 values are bit patterns in evaluate(); shifts see the unsigned value.
  const SymVar w("w", kU64);
  EXPECT_EQ(eval_i(shift_right(w + SymExpr::int_imm(0, kU64), SymExpr::int_imm(60, kU64)), {{w, 0x7000000000000000}}),
            7);
}

TEST_F(IntrinsicsTest, SimplifyKeepsCallsAsAtoms) {
  Analyzer analyzer;
  // An integer call is an atom of the int64 algebra; a bool call an atom of the logic.
  const SymExpr masked = bitwise_and(n, 15);
  EXPECT_TRUE(structural_equal(analyzer.simplify(masked + 1 - 1), masked)) << analyzer.simplify(masked + 1 - 1);
  EXPECT_TRUE(structural_equal(analyzer.simplify(isnan(x) && SymExpr::boolean(true)), isnan(x)));
  EXPECT_TRUE(structural_equal(analyzer.simplify(shift_right(n + 0, 4)), shift_right(n, 4)));
}

}  // namespace
}  // namespace relax
