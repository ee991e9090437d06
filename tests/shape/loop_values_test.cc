// Loop-level values in the SymExpr family: float constants, true division,
// casts, intrinsic calls and buffer loads -- their dtype rules, text form,
// evaluation, and what the Analyzer does (and must not do) with them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "relax/shape/analyzer.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"

namespace relax {
namespace {

using ::testing::HasSubstr;

constexpr DataType kF32 = DataType::float32();
constexpr DataType kF16 = DataType::float16();
constexpr DataType kF64 = DataType::float64();
constexpr DataType kBF16 = DataType::bfloat16();
constexpr DataType kI32 = DataType::int32();
constexpr DataType kU8{DataType::Code::kUInt, 8, 1};

uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }

/// bfloat16 the usual way: the upper half of a float32, rounded to nearest even.
double bfloat16_reference(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<double>(std::bit_cast<float>(u & 0xffff0000u));
}

/// Every variable and buffer of `e`, by name, for parsing its text back.
ParseContext context_of(const SymExpr& e) {
  ParseContext ctx;
  for_each_var(e, [&](const SymVar& v) { ctx.vars.emplace(v.name(), v); });
  std::vector<SymExpr> stack = {e};
  while (!stack.empty()) {
    SymExpr top = stack.back();
    stack.pop_back();
    if (top.kind() == SymKind::kBufferLoad) ctx.buffers.emplace(top->buffer().name(), top->buffer());
    for (size_t i = 0; i < top.num_operands(); ++i) stack.push_back(top.operand(i));
  }
  return ctx;
}

/// Prints `e`, parses it back through its own variables and buffers, expects the same tree.
void expect_round_trip(const SymExpr& e) {
  ParseContext ctx = context_of(e);
  const size_t known = ctx.vars.size();
  const std::string text = to_string(e);
  absl::StatusOr<SymExpr> parsed = SymExpr::parse(text, ctx);
  ASSERT_TRUE(parsed.ok()) << "`" << text << "`: " << parsed.status();
  EXPECT_TRUE(structural_equal(*parsed, e)) << "`" << text << "` read back as `" << *parsed << "`";
  EXPECT_EQ(to_string(*parsed), text);
  EXPECT_EQ(ctx.vars.size(), known) << text;
}

std::string parse_error(std::string_view text, ParseContext* ctx = nullptr) {
  absl::StatusOr<SymExpr> result = ctx ? SymExpr::parse(text, *ctx) : SymExpr::parse(text);
  if (result.ok()) {
    ADD_FAILURE() << "`" << text << "` parsed as `" << *result << "`";
    return "";
  }
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

class LoopValuesTest : public ::testing::Test {
 protected:
  SymVar n{"n"}, m{"m"}, i{"i"}, j{"j"};
  SymVar x{"x", kF32}, y{"y", kF32}, z{"z", kF32};
  SymVar h{"h", kF16};
  SymVar k32{"k", kI32};
  Buffer A{"A", kF32, {n, 4}};
  Buffer Idx{"Idx", kI32, {n}};
  Buffer Bytes{"Bytes", kU8, {16}};
};

// ---------------------------------------------------------------------------
// Construction and dtype rules.

TEST_F(LoopValuesTest, FloatConstantsAreRoundedToTheirDtype) {
  SymExpr c = SymExpr::float_imm(0.1, kF32);
  EXPECT_EQ(c.kind(), SymKind::kFloatImm);
  EXPECT_EQ(c.dtype(), kF32);
  EXPECT_EQ(c->float_value(), static_cast<double>(0.1f));
  EXPECT_EQ(*c.as_float(), static_cast<double>(0.1f));
  EXPECT_FALSE(c.as_const().has_value());
  EXPECT_EQ(SymExpr::float_imm(0.1, kF64)->float_value(), 0.1);
  // float16: 11 significant bits, ties to even, 65520 and up overflow.
  EXPECT_EQ(SymExpr::float_imm(1 + std::ldexp(1, -10), kF16)->float_value(), 1 + std::ldexp(1, -10));
  EXPECT_EQ(SymExpr::float_imm(1 + std::ldexp(1, -11), kF16)->float_value(), 1.0);
  EXPECT_EQ(SymExpr::float_imm(65504, kF16)->float_value(), 65504);
  EXPECT_TRUE(std::isinf(SymExpr::float_imm(65520, kF16)->float_value()));
  EXPECT_EQ(SymExpr::float_imm(std::ldexp(1, -24), kF16)->float_value(), std::ldexp(1, -24));
  // bfloat16: 8 significant bits, the float32 exponent range.
  EXPECT_EQ(SymExpr::float_imm(1 + std::ldexp(1, -8), kBF16)->float_value(), 1.0);
  EXPECT_EQ(SymExpr::float_imm(1e38, kBF16)->float_value(), bfloat16_reference(1e38f));
  EXPECT_EQ(SymExpr::float_imm(-3.14159, kBF16)->float_value(), bfloat16_reference(-3.14159f));
  EXPECT_FALSE(std::isinf(SymExpr::float_imm(3e38, kBF16)->float_value()));
  EXPECT_EQ(SymExpr::float_imm(1e-40, kF32)->float_value(), static_cast<double>(1e-40f));
  // Every NaN is the one quiet NaN.
  const double weird_nan = -std::numeric_limits<double>::signaling_NaN();
  EXPECT_EQ(bits(SymExpr::float_imm(weird_nan, kF32)->float_value()),
            bits(std::numeric_limits<double>::quiet_NaN()));
}

TEST_F(LoopValuesTest, IntegerConstantsOfOtherWidths) {
  SymExpr c = SymExpr::int_imm(-5, kI32);
  EXPECT_EQ(c.dtype(), kI32);
  EXPECT_EQ(c.as_const(), -5);
  EXPECT_TRUE(structural_equal(SymExpr::int_imm(7, DataType::int64()), SymExpr(7)));
  EXPECT_FALSE(structural_equal(SymExpr::int_imm(7, kI32), SymExpr(7)));
  EXPECT_EQ(SymExpr::int_imm(255, kU8).as_const(), 255);
  EXPECT_DEATH(SymExpr::int_imm(256, kU8), "does not fit uint8");
  EXPECT_DEATH(SymExpr::int_imm(1, kF32), "needs an integer or bool dtype");
}

TEST_F(LoopValuesTest, ArithmeticKeepsTheOperandDtype) {
  EXPECT_EQ((x + y).dtype(), kF32);
  EXPECT_EQ((x * y - z).dtype(), kF32);
  EXPECT_EQ(min(x, y).dtype(), kF32);
  EXPECT_EQ((x / y).dtype(), kF32);
  EXPECT_EQ((x < y).dtype(), DataType::boolean());
  EXPECT_EQ((k32 + k32).dtype(), kI32);
  EXPECT_EQ(floordiv(k32, k32).dtype(), kI32);
  EXPECT_EQ(select(x < y, x, y).dtype(), kF32);
  EXPECT_EQ((n * 4 + 1).dtype(), DataType::int64());
}

TEST_F(LoopValuesTest, OperatorsConvertIntegerAndCxxFloatConstants) {
  SymExpr twice = x * 2;
  ASSERT_EQ(twice.operand(1).kind(), SymKind::kFloatImm);
  EXPECT_EQ(twice.operand(1).dtype(), kF32);
  EXPECT_EQ(*twice.operand(1).as_float(), 2.0);
  EXPECT_EQ((2 - x).operand(0).dtype(), kF32);
  EXPECT_EQ(*(x * 0.5).operand(1).as_float(), 0.5);
  EXPECT_EQ(*(1.0 / h).operand(0).as_float(), 1.0);
  EXPECT_EQ((1.0 / h).dtype(), kF16);
  EXPECT_EQ((x > 0.0).dtype(), DataType::boolean());
  EXPECT_EQ(max(x, 0.0).operand(1).dtype(), kF32);
  EXPECT_EQ((k32 + 1).operand(1).dtype(), kI32);
  EXPECT_EQ(select(x > y, x, 0).operand(2).dtype(), kF32);
  EXPECT_EQ(pow(x, 2).operand(1).dtype(), kF32);
  EXPECT_EQ(fma(x, 2, 1).operand(2).dtype(), kF32);
  // An integer constant that does not fit stays int64, and the mismatch aborts.
  EXPECT_DEATH(buffer_load(Bytes, {0}) * 1000, "differ in dtype");
}

TEST_F(LoopValuesTest, MakeIsStrictAboutDtypes) {
  EXPECT_DEATH(SymExpr::make(SymKind::kMul, x, SymExpr(2)), "operands of \\* differ in dtype");
  EXPECT_DEATH(SymExpr::make(SymKind::kAdd, x, h), "differ in dtype: float32 `x` vs float16 `h`");
  EXPECT_DEATH(x + h, "differ in dtype");
  EXPECT_DEATH(floordiv(x, y), "must be an integer");
  EXPECT_DEATH(n / m, "must be a float");
  EXPECT_DEATH(x && y, "must be boolean");
  EXPECT_DEATH(SymExpr::make(SymKind::kCast, x), "cannot build a cast");
  EXPECT_DEATH(n * 0.5, "not a float");
}

TEST_F(LoopValuesTest, VariablesOfOtherDtypes) {
  EXPECT_EQ(x.dtype(), kF32);
  EXPECT_EQ(SymVar("flag", DataType::boolean()).dtype(), DataType::boolean());
  EXPECT_EQ(n.dtype(), DataType::int64());
  EXPECT_DEATH(SymVar("p", DataType{DataType::Code::kHandle, 64, 1}), "cannot have dtype handle64");
  EXPECT_DEATH(SymVar("v", DataType{DataType::Code::kFloat, 32, 4}), "cannot have dtype float32x4");
}

TEST_F(LoopValuesTest, UnaryMinusOnFloats) {
  SymExpr neg = -x;
  EXPECT_EQ(neg.kind(), SymKind::kMul);
  EXPECT_EQ(*neg.operand(1).as_float(), -1.0);
  EXPECT_EQ(*(-SymExpr::float_imm(1.5, kF32)).as_float(), -1.5);
  EXPECT_EQ((-SymExpr::int_imm(3, kI32)).as_const(), -3);
  EXPECT_EQ((-SymExpr::int_imm(3, kI32)).dtype(), kI32);
}

TEST_F(LoopValuesTest, CastsConvertToTheirDtype) {
  SymExpr c = cast(kF32, n);
  EXPECT_EQ(c.kind(), SymKind::kCast);
  EXPECT_EQ(c.dtype(), kF32);
  EXPECT_TRUE(c.operand(0).same_as(n));
  EXPECT_EQ(cast(DataType::boolean(), x).dtype(), DataType::boolean());
  EXPECT_EQ(cast(kI32, x + y).dtype(), kI32);
  EXPECT_DEATH(cast(DataType{DataType::Code::kHandle, 64, 1}, n), "cannot cast to handle64");
}

TEST_F(LoopValuesTest, IntrinsicsCheckTheirOperands) {
  SymExpr e = exp(x);
  EXPECT_EQ(e.kind(), SymKind::kCall);
  EXPECT_EQ(e->intrinsic(), Intrinsic::kExp);
  EXPECT_EQ(e.dtype(), kF32);
  EXPECT_EQ(pow(x, y)->intrinsic(), Intrinsic::kPow);
  EXPECT_EQ(fma(x, y, z).num_operands(), 3u);
  EXPECT_EQ(abs(n).dtype(), DataType::int64());
  EXPECT_EQ(sigmoid(h).dtype(), kF16);
  EXPECT_EQ(intrinsic_name(Intrinsic::kRsqrt), "rsqrt");
  EXPECT_EQ(intrinsic_arity(Intrinsic::kFma), 3u);
  EXPECT_DEATH(exp(n), "operand 0 of exp must be a float, got int64 `n`");
  EXPECT_DEATH(pow(x, h), "operands of pow differ in dtype");
  EXPECT_DEATH(call(Intrinsic::kPow, {x}), "pow takes 2 operand");
}

TEST_F(LoopValuesTest, BufferLoadsTakeOneIntegerIndexPerDimension) {
  SymExpr load = buffer_load(A, {i, j + 1});
  EXPECT_EQ(load.kind(), SymKind::kBufferLoad);
  EXPECT_EQ(load.dtype(), kF32);
  EXPECT_TRUE(load->buffer().same_as(A));
  EXPECT_EQ(load.num_operands(), 2u);
  EXPECT_TRUE(structural_equal(load.operand(1), j + 1));
  EXPECT_EQ(buffer_load(Idx, {k32}).dtype(), kI32);
  EXPECT_EQ((buffer_load(Idx, {i}) * 2).dtype(), kI32);
  EXPECT_DEATH(buffer_load(A, {i}), "load from `A` has 1 indices, but the buffer has rank 2");
  EXPECT_DEATH(buffer_load(A, {i, x}), "index 1 of a load from `A` must be an integer");
  EXPECT_DEATH(buffer_load(Buffer(), {}), "undefined buffer");
}

TEST_F(LoopValuesTest, StructureComparesFloatsByBitsAndBuffersByIdentity) {
  const SymExpr pos0 = SymExpr::float_imm(0.0, kF32), neg0 = SymExpr::float_imm(-0.0, kF32);
  EXPECT_FALSE(structural_equal(pos0, neg0));
  EXPECT_NE(structural_compare(pos0, neg0), 0);
  const SymExpr nan1 = SymExpr::float_imm(std::nan("1"), kF32);
  const SymExpr nan2 = SymExpr::float_imm(std::nan("2"), kF32);
  EXPECT_TRUE(structural_equal(nan1, nan2));
  EXPECT_EQ(structural_hash(nan1), structural_hash(nan2));
  EXPECT_FALSE(structural_equal(SymExpr::float_imm(1, kF32), SymExpr::float_imm(1, kF64)));
  Buffer other_a("A", kF32, {n, 4});
  EXPECT_FALSE(structural_equal(buffer_load(A, {i, j}), buffer_load(other_a, {i, j})));
  EXPECT_TRUE(structural_equal(buffer_load(A, {i, j}), buffer_load(A, {i, j})));
  EXPECT_EQ(structural_hash(buffer_load(A, {i, j})), structural_hash(buffer_load(A, {i, j})));
  EXPECT_FALSE(structural_equal(exp(x), log(x)));
  EXPECT_FALSE(structural_equal(cast(kF32, n), cast(kF64, n)));
  EXPECT_TRUE(structural_equal(cast(kF32, n) / x, cast(kF32, n) / x));
}

TEST_F(LoopValuesTest, StructuralCompareIsATotalOrderOverTheNewKinds) {
  Buffer other_a("A", kF32, {n, 4});
  std::vector<SymExpr> values = {
      SymExpr::float_imm(-0.0, kF32), SymExpr::float_imm(0.0, kF32),
      SymExpr::float_imm(std::nan(""), kF32), SymExpr::float_imm(-INFINITY, kF32),
      SymExpr::float_imm(1, kF16), SymExpr::int_imm(1, kI32), SymExpr(1), SymExpr::boolean(true),
      x, y, cast(kF32, n), cast(kF64, n), exp(x), log(x), exp(y), buffer_load(A, {i, j}),
      buffer_load(other_a, {i, j}), buffer_load(A, {j, i}), x / y, y / x,
  };
  for (const SymExpr& a : values) {
    for (const SymExpr& b : values) {
      const int ab = structural_compare(a, b), ba = structural_compare(b, a);
      EXPECT_EQ(ab, -ba) << a << " vs " << b;
      EXPECT_EQ(ab == 0, structural_equal(a, b)) << a << " vs " << b;
      for (const SymExpr& c : values) {
        if (ab < 0 && structural_compare(b, c) < 0) {
          EXPECT_LT(structural_compare(a, c), 0) << a << " < " << b << " < " << c;
        }
      }
    }
  }
}

TEST_F(LoopValuesTest, WithOperandsRebuildsEveryKind) {
  const std::vector<SymExpr> nodes = {buffer_load(A, {i, j}), exp(x), fma(x, y, z), cast(kF32, n),
                                      x / y, x + y, select(x < y, x, y)};
  for (const SymExpr& e : nodes) {
    std::vector<SymExpr> same(e->operands().begin(), e->operands().end());
    EXPECT_TRUE(e.with_operands(same).same_as(e)) << e;
  }
  SymExpr load = buffer_load(A, {i, j}).with_operands({j, i});
  EXPECT_TRUE(load->buffer().same_as(A));
  EXPECT_EQ(to_string(load), "A[j, i]");
  EXPECT_EQ(to_string(exp(x).with_operands({y})), "exp(y)");
  EXPECT_EQ(cast(kF16, n).with_operands({m}).dtype(), kF16);
  EXPECT_DEATH(exp(x).with_operands({n}), "must be a float");
  EXPECT_DEATH(buffer_load(A, {i, j}).with_operands({i}), "has 1 indices");
}

TEST_F(LoopValuesTest, SubstituteReachesLoadIndicesButNotBufferShapes) {
  SymVarMap<SymExpr> map;
  map.emplace(i, i + 1);
  map.emplace(n, SymExpr(8));
  SymExpr e = substitute(buffer_load(A, {i, j}) * cast(kF32, n), map);
  EXPECT_EQ(to_string(e), "A[i + 1, j] * cast<float32>(8)");
  EXPECT_TRUE(e.operand(0)->buffer().same_as(A));
  std::vector<std::string> names;
  for_each_var(buffer_load(A, {i, j}) + x, [&](const SymVar& v) { names.push_back(v.name()); });
  EXPECT_EQ(names, (std::vector<std::string>{"i", "j", "x"}));
  SymVarMap<SymExpr> bad;
  bad.emplace(x, n);
  EXPECT_DEATH(substitute(x + y, bad), "replaced by `n` of dtype int64");
}

// ---------------------------------------------------------------------------
// Text.

TEST_F(LoopValuesTest, PrintsFloatLiteralsWithTheirDtype) {
  EXPECT_EQ(to_string(SymExpr::float_imm(1.5, kF32)), "1.5f32");
  EXPECT_EQ(to_string(SymExpr::float_imm(0.1, kF32)), "0.1f32");
  EXPECT_EQ(to_string(SymExpr::float_imm(0.1, kF64)), "0.1f64");
  EXPECT_EQ(to_string(SymExpr::float_imm(2, kF16)), "2f16");
  EXPECT_EQ(to_string(SymExpr::float_imm(1, kBF16)), "1bf16");
  EXPECT_EQ(to_string(SymExpr::float_imm(-2.5, kF32)), "-2.5f32");
  EXPECT_EQ(to_string(SymExpr::float_imm(100, kF32)), "100f32");
  EXPECT_EQ(to_string(SymExpr::float_imm(1e20, kF64)), "1e+20f64");
  EXPECT_EQ(to_string(SymExpr::float_imm(65504, kF16)), "65504f16");
  EXPECT_EQ(to_string(SymExpr::float_imm(-0.0, kF32)), "-0f32");
  EXPECT_EQ(to_string(SymExpr::float_imm(INFINITY, kF32)), "inf_f32");
  EXPECT_EQ(to_string(SymExpr::float_imm(-INFINITY, kF64)), "-inf_f64");
  EXPECT_EQ(to_string(SymExpr::float_imm(NAN, kBF16)), "nan_bf16");
  EXPECT_EQ(to_string(SymExpr::int_imm(5, kI32)), "5i32");
  EXPECT_EQ(to_string(SymExpr::int_imm(255, kU8)), "255u8");
  EXPECT_EQ(to_string(x - SymExpr::float_imm(-1.5, kF32)), "x - -1.5f32");
  EXPECT_EQ(to_string(x * 0.5 + 1), "x * 0.5f32 + 1f32");
}

TEST_F(LoopValuesTest, PrintsCastsCallsDivisionAndLoads) {
  EXPECT_EQ(to_string(cast(kF32, n)), "cast<float32>(n)");
  EXPECT_EQ(to_string(cast(DataType::boolean(), k32 + 1)), "cast<bool>(k + 1i32)");
  EXPECT_EQ(to_string(exp(x - y)), "exp(x - y)");
  EXPECT_EQ(to_string(pow(x, y)), "pow(x, y)");
  EXPECT_EQ(to_string(fma(x, y, z)), "fma(x, y, z)");
  EXPECT_EQ(to_string(x / y * z), "x / y * z");
  EXPECT_EQ(to_string(x / (y * z)), "x / (y * z)");
  EXPECT_EQ(to_string(x * (y / z)), "x * (y / z)");
  EXPECT_EQ(to_string((x + y) / z), "(x + y) / z");
  EXPECT_EQ(to_string(buffer_load(A, {i, j + 1})), "A[i, j + 1]");
  EXPECT_EQ(to_string(buffer_load(Buffer("in put", kF32, {}), {})), "\"in put\"[]");
  EXPECT_EQ(to_string(SymVar("exp", kF32) + SymVar("cast", kF32)), "\"exp\" + \"cast\"");
  EXPECT_EQ(to_string(SymVar("inf_f32", kF32)), "\"inf_f32\"");
}

TEST_F(LoopValuesTest, FloatLiteralsRoundTripExactly) {
  std::mt19937_64 rng(17);
  for (DataType t : {kF16, kBF16, kF32, kF64}) {
    std::vector<double> values = {0.0,   -0.0, 1.0,   0.1,     1.0 / 3,  65504, 6e-8, 1e-45,
                                  3e38,  1e300, 5e-324, INFINITY, -INFINITY, NAN, 2.5, -7.75};
    for (int r = 0; r < 300; ++r) {
      values.push_back(std::bit_cast<double>(rng()));
      values.push_back(std::ldexp(static_cast<double>(rng() % 100000) - 50000, static_cast<int>(rng() % 60) - 30));
    }
    for (double v : values) {
      const SymExpr c = SymExpr::float_imm(v, t);
      const std::string text = to_string(c);
      absl::StatusOr<SymExpr> back = SymExpr::parse(text);
      ASSERT_TRUE(back.ok()) << text << ": " << back.status();
      EXPECT_TRUE(structural_equal(*back, c)) << text << " read back as " << *back;
    }
  }
}

TEST_F(LoopValuesTest, ParsesLiteralsOfEverySuffix) {
  EXPECT_EQ(SymExpr::parse("1.5f32")->dtype(), kF32);
  EXPECT_EQ(SymExpr::parse("2f16")->dtype(), kF16);
  EXPECT_EQ(SymExpr::parse("1e-3bf16")->dtype(), kBF16);
  EXPECT_EQ(*SymExpr::parse("2.5E+2f64")->as_float(), 250.0);
  EXPECT_EQ(SymExpr::parse("7i8")->dtype(), (DataType{DataType::Code::kInt, 8, 1}));
  EXPECT_EQ(SymExpr::parse("-7i16")->as_const(), -7);
  EXPECT_EQ(SymExpr::parse("9u64")->dtype(), (DataType{DataType::Code::kUInt, 64, 1}));
  EXPECT_EQ(SymExpr::parse("5i64")->dtype(), DataType::int64());
  EXPECT_EQ(*SymExpr::parse("-inf_f32")->as_float(), -INFINITY);
  EXPECT_TRUE(std::isnan(*SymExpr::parse("nan_f64")->as_float()));
  EXPECT_EQ(bits(*SymExpr::parse("-0f32")->as_float()), bits(-0.0));
  // A suffix that runs into a name is not a suffix: `2f32x` is 2 followed by a name.
  EXPECT_THAT(parse_error("2f32x"), HasSubstr("column 2: expected an operator"));
}

TEST_F(LoopValuesTest, ParsesCastsCallsAndDivisionThroughTheVarTable) {
  ParseContext ctx;
  ctx.vars = {{"x", x}, {"y", y}, {"n", n}, {"k", k32}};
  auto parse = [&](std::string_view text) {
    absl::StatusOr<SymExpr> e = SymExpr::parse(text, ctx);
    EXPECT_TRUE(e.ok()) << text << ": " << e.status();
    return e.ok() ? *e : SymExpr();
  };
  EXPECT_TRUE(structural_equal(parse("x / y * 2f32"), x / y * 2));
  EXPECT_TRUE(structural_equal(parse("exp(x - y) / (1f32 + exp(x))"), exp(x - y) / (1 + exp(x))));
  EXPECT_TRUE(structural_equal(parse("cast<float32>(n) * x"), cast(kF32, n) * x));
  EXPECT_TRUE(structural_equal(parse("cast<int32>(x) + k"), cast(kI32, x) + k32));
  EXPECT_TRUE(structural_equal(parse("fma(x, y, -1f32)"), fma(x, y, -1)));
  EXPECT_TRUE(structural_equal(parse("abs(n) + 1"), abs(n) + 1));
  EXPECT_TRUE(structural_equal(parse("abs(k - 1i32)"), abs(k32 - 1)));
  EXPECT_TRUE(structural_equal(parse("select(x < y, x, 0f32)"), select(x < y, x, 0)));
  EXPECT_TRUE(structural_equal(parse("-x"), -x));
  EXPECT_EQ(ctx.vars.size(), 4u);
}

TEST_F(LoopValuesTest, ParsesLoadsThroughAParseContext) {
  ParseContext ctx;
  ctx.vars = {{"i", i}, {"j", j}};
  ctx.buffers = {{"A", A}, {"Idx", Idx}};
  absl::StatusOr<SymExpr> e = SymExpr::parse("A[i, j + 1] * 2f32 + A[Idx[i], 0]", ctx);
  ASSERT_TRUE(e.ok()) << e.status();
  // Indices may be of any integer dtype: Idx[i] is an int32 index.
  EXPECT_TRUE(structural_equal(*e, buffer_load(A, {i, j + 1}) * 2 + buffer_load(A, {buffer_load(Idx, {i}), 0})));
  EXPECT_TRUE(e->operand(0).operand(0)->buffer().same_as(A));
}

TEST_F(LoopValuesTest, LoadErrorsNameTheBuffer) {
  ParseContext ctx;
  ctx.vars = {{"x", x}};
  ctx.buffers = {{"A", A}};
  EXPECT_EQ(parse_error("B[0]", &ctx), "column 1: unknown buffer `B`");
  EXPECT_EQ(parse_error("x + A[0]", &ctx),
            "column 5: load from `A` has 1 index, but the buffer has rank 2");
  EXPECT_EQ(parse_error("A[0, x]", &ctx), "column 6: index 2 of `A` must be an integer, found float32 `x`");
  EXPECT_THAT(parse_error("A[0, 1"), HasSubstr("expected ',' or ']' to close '[' at column 2"));
  EXPECT_THAT(parse_error("A[0]"), HasSubstr("unknown buffer `A` (loads parse only with a ParseContext"));
  EXPECT_THAT(parse_error("A[0,]", &ctx), HasSubstr("expected an expression, found ']'"));
}

TEST_F(LoopValuesTest, DtypeErrorsInText) {
  ParseContext ctx;
  ctx.vars = {{"x", x}, {"h", h}, {"n", n}, {"u", SymVar("u", kU8)}};
  EXPECT_EQ(parse_error("x * 2", &ctx),
            "column 3: operands of * differ in dtype: float32 `x` and int64 `2` (a literal of "
            "float32 carries a suffix: 2f32)");
  EXPECT_EQ(parse_error("x + h", &ctx), "column 3: operands of + differ in dtype: float32 `x` and float16 `h`");
  EXPECT_EQ(parse_error("n / 2", &ctx),
            "column 3: '/' is true division, for floats; integer division is written floordiv(a, b)");
  EXPECT_EQ(parse_error("exp(n)", &ctx), "column 5: argument 1 of exp must be a float, found integer `n`");
  EXPECT_EQ(parse_error("pow(x)", &ctx), "column 1: pow takes 2 arguments, found 1");
  EXPECT_EQ(parse_error("floordiv(x, x)", &ctx),
            "column 10: argument 1 of floordiv must be an integer, found float32 `x`");
  EXPECT_EQ(parse_error("min(x, h)", &ctx),
            "column 8: arguments of min differ in dtype: float32 `x` and float16 `h`");
  EXPECT_EQ(parse_error("(x < x) + x", &ctx),
            "column 1: operand of + must be float32, found boolean `x < x`");
  EXPECT_EQ(parse_error("-u", &ctx), "column 2: operand of unary - must be signed, found uint8 `u`");
  EXPECT_THAT(parse_error("1e40f32"), HasSubstr("float literal 1e40f32 is out of the float32 range"));
  EXPECT_THAT(parse_error("300u8"), HasSubstr("integer literal 300u8 is out of the uint8 range"));
  EXPECT_THAT(parse_error("-1u8"), HasSubstr("integer literal -1u8 is out of the uint8 range"));
  EXPECT_THAT(parse_error("cast<float7>(x)"), HasSubstr("expected a dtype (int32, float32, bool, ...)"));
  EXPECT_THAT(parse_error("cast(x)"), HasSubstr("expected '<' after cast"));
  EXPECT_THAT(parse_error("1.5"), HasSubstr("found '.' (a float literal carries its dtype: 1.5f32)"));
  EXPECT_THAT(parse_error("foo(x)"), HasSubstr("the functions are floordiv"));
}

TEST_F(LoopValuesTest, RoundTripsALoopLevelCorpus) {
  SymVar flag("flag", DataType::boolean());
  const std::vector<SymExpr> corpus = {
      x / y * z,
      x * (y / z),
      exp(x - buffer_load(A, {i, 0})) / (1 + exp(x)),
      sigmoid(x) * tanh(y) + erf(z) - rsqrt(x * x + 1e-5),
      pow(abs(x), SymExpr::float_imm(0.5, kF32)),
      fma(x, y, -z),
      cast(kF32, floordiv(n + 3, 4)) * SymExpr::float_imm(-0.0, kF32),
      cast(kI32, x) + k32 * 3 - buffer_load(Idx, {i}),
      cast(DataType::boolean(), buffer_load(Bytes, {floormod(i, 16)})) && flag,
      select(x < y && !(h == SymExpr::float_imm(1, kF16)), x, SymExpr::float_imm(-INFINITY, kF32)),
      min(x, SymExpr::float_imm(NAN, kF32)) - max(y, SymExpr::float_imm(1e-30, kF32)),
      -x,
      -(x + y),
      x - -SymExpr::float_imm(2, kF32),
      SymExpr::float_imm(-INFINITY, kF32) * x,
      sqrt(log(cast(DataType::float64(), SymExpr::int_imm(-3, kI32)))),
      buffer_load(A, {buffer_load(Idx, {i}), j}),
      cast(kBF16, x) + SymExpr::float_imm(1.25, kBF16),
  };
  for (const SymExpr& e : corpus) expect_round_trip(e);
}

/// Random well-typed float expressions with integer parts, over a few variables and buffers.
class FloatTrees {
 public:
  FloatTrees(uint64_t seed, std::vector<SymVar> floats, std::vector<SymVar> ints, std::vector<Buffer> buffers)
      : rng_(seed), floats_(std::move(floats)), ints_(std::move(ints)), buffers_(std::move(buffers)) {}

  SymExpr value(int depth) {
    if (depth == 0 || pick(5) == 0) return leaf();
    switch (pick(12)) {
      case 0: {
        SymExpr a = value(depth - 1);
        SymExpr b = value(depth - 1);
        return a + b;
      }
      case 1: {
        SymExpr a = value(depth - 1);
        SymExpr b = value(depth - 1);
        return a - b;
      }
      case 2: {
        SymExpr a = value(depth - 1);
        SymExpr b = value(depth - 1);
        return a * b;
      }
      case 3: {
        SymExpr a = value(depth - 1);
        SymExpr b = value(depth - 1);
        return a / b;
      }
      case 4: {
        SymExpr a = value(depth - 1);
        SymExpr b = value(depth - 1);
        return pick(2) ? min(a, b) : max(a, b);
      }
      case 5: {
        SymExpr c = condition(depth - 1);
        SymExpr a = value(depth - 1);
        SymExpr b = value(depth - 1);
        return select(c, a, b);
      }
      case 6: {
        static constexpr Intrinsic kUnary[] = {Intrinsic::kExp,  Intrinsic::kLog,     Intrinsic::kSqrt,
                                               Intrinsic::kRsqrt, Intrinsic::kTanh,   Intrinsic::kErf,
                                               Intrinsic::kSigmoid, Intrinsic::kAbs};
        return call(kUnary[pick(8)], {value(depth - 1)});
      }
      case 7: {
        SymExpr a = value(depth - 1);
        SymExpr b = value(depth - 1);
        return pow(a, b);
      }
      case 8: {
        SymExpr a = value(depth - 1);
        SymExpr b = value(depth - 1);
        SymExpr c = value(depth - 1);
        return fma(a, b, c);
      }
      case 9:
        return -value(depth - 1);
      default:
        return cast(DataType::float32(), integer(depth - 1));
    }
  }

  SymExpr integer(int depth) {
    if (depth == 0 || pick(4) == 0) {
      if (pick(3) == 0) return SymExpr(static_cast<int64_t>(pick(9)) - 4);
      return ints_[static_cast<size_t>(pick(static_cast<int>(ints_.size())))];
    }
    SymExpr a = integer(depth - 1);
    SymExpr b = integer(depth - 1);
    switch (pick(7)) {
      case 0: return a + b;
      case 1: return a - b;
      case 2: return a * b;
      case 3: return floordiv(a, b);
      case 4: return floormod(a, b);
      case 5: return min(a, b);
      default: return select(a < b, a + 1, b - 1);
    }
  }

  SymExpr condition(int depth) {
    if (pick(2) == 0) {
      SymExpr a = integer(depth);
      SymExpr b = integer(depth);
      return pick(2) ? a <= b : a == b;
    }
    SymExpr a = value(depth);
    SymExpr b = value(depth);
    return pick(2) ? a < b : !(a >= b);
  }

  /// A load from one of the buffers with integer indices (for text tests only).
  SymExpr load(int depth) {
    const Buffer& b = buffers_[static_cast<size_t>(pick(static_cast<int>(buffers_.size())))];
    std::vector<SymExpr> indices;
    for (size_t d = 0; d < b.ndim(); ++d) indices.push_back(integer(depth));
    return buffer_load(b, std::move(indices));
  }

  bool with_loads = false;

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  SymExpr leaf() {
    switch (pick(with_loads ? 4 : 3)) {
      case 0: {
        static constexpr double kValues[] = {0.0, -0.0, 1.0, -1.5, 0.1, 3.0, 1e-3, 65504, 1e30};
        return SymExpr::float_imm(kValues[pick(9)], DataType::float32());
      }
      case 3:
        return load(1);
      default:
        return floats_[static_cast<size_t>(pick(static_cast<int>(floats_.size())))];
    }
  }

  std::mt19937_64 rng_;
  std::vector<SymVar> floats_;
  std::vector<SymVar> ints_;
  std::vector<Buffer> buffers_;
};

TEST_F(LoopValuesTest, RandomFloatTreesRoundTrip) {
  FloatTrees trees(2024, {x, y, SymVar("w.1", kF32)}, {n, m, SymVar("min", DataType::int64())},
                   {A, Buffer("B b", kF32, {7})});
  trees.with_loads = true;
  for (int r = 0; r < 1500; ++r) {
    expect_round_trip(trees.value(1 + r % 6));
    if (::testing::Test::HasFailure()) break;
  }
}

// ---------------------------------------------------------------------------
// Evaluation.

TEST_F(LoopValuesTest, EvaluateRefusesFloatsLoadsAndFloatCalls) {
  SymVarMap<int64_t> env;
  env.emplace(n, 3);
  env.emplace(i, 1);
  env.emplace(k32, 7);
  auto error = [&](const SymExpr& e) {
    absl::StatusOr<int64_t> r = evaluate(e, env);
    EXPECT_FALSE(r.ok()) << e;
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  EXPECT_EQ(error(x + 1), "not an integer expression: `x + 1f32`");
  EXPECT_EQ(error(cast(DataType::int64(), x) + n), "not an integer expression: `x`");
  EXPECT_EQ(error(n + cast(DataType::int64(), buffer_load(Idx, {i}))), "not an integer expression: `Idx[i]`");
  EXPECT_EQ(error(cast(DataType::int64(), exp(x))), "not an integer expression: `exp(x)`");
  EXPECT_EQ(error(cast(DataType::int64(), isnan(x))), "not an integer expression: `isnan(x)`");
  // Intrinsics of integers are integer expressions (abs, bitwise, shifts).
  EXPECT_EQ(*evaluate(abs(n - 5), env), 2);
  EXPECT_EQ(error(SymExpr::make(SymKind::kLT, x, y)), "not an integer expression: `x`");
  EXPECT_EQ(error(k32 * SymExpr::int_imm(1 << 30, kI32)), "int32 overflow in `k * 1073741824i32` (7 * 1073741824)");
  // Integer casts evaluate, wrapping as C++ does.
  EXPECT_EQ(*evaluate(cast(kI32, n) + k32, env), 10);
  EXPECT_EQ(*evaluate(cast(DataType{DataType::Code::kInt, 8, 1}, SymExpr(300)), env), 44);
  EXPECT_EQ(*evaluate(cast(kU8, SymExpr(-1)), env), 255);
  EXPECT_EQ(*evaluate(cast(DataType::boolean(), n), env), 1);
}

TEST_F(LoopValuesTest, EvaluateFloatComputesEachNodeInItsDtype) {
  SymVarMap<int64_t> ints;
  ints.emplace(n, 3);
  SymVarMap<double> floats;
  floats.emplace(x, 0.5);
  floats.emplace(y, -2.0);
  floats.emplace(h, 1.0);
  auto eval = [&](const SymExpr& e) {
    absl::StatusOr<double> r = evaluate_float(e, ints, floats);
    EXPECT_TRUE(r.ok()) << e << ": " << r.status();
    return r.ok() ? *r : NAN;
  };
  EXPECT_EQ(eval(x * y + 1), 0.0);
  EXPECT_EQ(eval(exp(x)), static_cast<double>(static_cast<float>(std::exp(0.5))));
  EXPECT_EQ(eval(sigmoid(y)), static_cast<double>(static_cast<float>(1 / (1 + std::exp(2.0)))));
  EXPECT_EQ(eval(fma(x, y, SymExpr::float_imm(3, kF32))), 2.0);
  EXPECT_EQ(eval(cast(kF32, n) / SymExpr::float_imm(2, kF32)), 1.5);
  EXPECT_EQ(eval(select(x < y, x, y)), -2.0);
  EXPECT_EQ(eval(SymExpr::float_imm(0.1, kF32) + SymExpr::float_imm(0.2, kF32)),
            static_cast<double>(0.1f + 0.2f));
  // float16 rounds every step: 1 + 2^-11 is 1 again.
  EXPECT_EQ(eval(h + cast(kF16, SymExpr::float_imm(std::ldexp(1, -11), kF64))), 1.0);
  // Casts to integers truncate toward zero: -3.5 -> -3.
  EXPECT_EQ(eval(cast(DataType::int64(), y * 1.75) + n), 0.0);
  absl::StatusOr<double> too_big = evaluate_float(cast(kI32, SymExpr::float_imm(3e9, kF32)), ints, floats);
  EXPECT_THAT(std::string(too_big.status().message()), HasSubstr("is out of range"));
  absl::StatusOr<double> load = evaluate_float(buffer_load(A, {n, 0}), ints, floats);
  EXPECT_THAT(std::string(load.status().message()), HasSubstr("cannot evaluate the buffer load `A[n, 0]`"));
  absl::StatusOr<double> unbound = evaluate_float(z, ints, floats);
  EXPECT_THAT(std::string(unbound.status().message()), HasSubstr("unbound symbolic variable `z`"));
}

// ---------------------------------------------------------------------------
// The Analyzer.

TEST_F(LoopValuesTest, SimplifyNeverReassociatesFloatArithmetic) {
  Analyzer analyzer;
  const std::vector<SymExpr> unchanged = {
      x + y - y, x * 2 * 3, x + 0, x * 1, (x + y) + z, x / x, x - x, min(x, x), exp(log(x)),
      select(x < y, x, x), x * 0.5 + x * 0.5, cast(kF32, cast(kF16, x)),
  };
  for (const SymExpr& e : unchanged) {
    EXPECT_TRUE(analyzer.simplify(e).same_as(e)) << e << " became " << analyzer.simplify(e);
  }
}

TEST_F(LoopValuesTest, SimplifyCanonicalisesTheIntegerParts) {
  Analyzer analyzer;
  analyzer.bind(i, 0, 15);
  auto simplified = [&](const SymExpr& e) { return to_string(analyzer.simplify(e)); };
  EXPECT_EQ(simplified(buffer_load(A, {i + 1 - 1, j * 2 - j})), "A[i, j]");
  EXPECT_EQ(simplified(buffer_load(A, {floordiv(i, 16), floormod(i, 16)}) * x), "A[0, i] * x");
  EXPECT_EQ(simplified(cast(kF32, n + n - n) + x), "cast<float32>(n) + x");
  EXPECT_EQ(simplified(exp(x) * cast(kF32, floordiv(n * 4, 4))), "exp(x) * cast<float32>(n)");
  EXPECT_EQ(simplified(select(i < 16, x, y)), "x");
  EXPECT_EQ(simplified(select(n < m, x + y - y, y)), "select(n < m, x + y - y, y)");
  EXPECT_EQ(simplified(buffer_load(Idx, {i * 2 - i}) + k32 * 1), "Idx[i] + k * 1i32");
  // An int64 sum over a load keeps the load as an atom, with canonical indices.
  EXPECT_EQ(simplified(cast(DataType::int64(), buffer_load(Idx, {n + 0})) + n - n), "cast<int64>(Idx[n])");
}

TEST_F(LoopValuesTest, SimplifyFoldsOnlySafeCasts) {
  Analyzer analyzer;
  auto simplified = [&](const SymExpr& e) { return to_string(analyzer.simplify(e)); };
  EXPECT_EQ(simplified(cast(DataType::int64(), n) + 1), "n + 1");
  EXPECT_EQ(simplified(cast(DataType::int64(), n + 2) - 2), "n");
  EXPECT_EQ(simplified(cast(kF32, x)), "x");
  EXPECT_EQ(simplified(cast(kI32, SymExpr(5))), "5i32");
  EXPECT_EQ(simplified(cast(DataType{DataType::Code::kInt, 8, 1}, SymExpr(300))), "44i8");
  EXPECT_EQ(simplified(cast(DataType::int64(), SymExpr::boolean(true)) + n), "n + 1");
  EXPECT_EQ(simplified(cast(DataType::boolean(), SymExpr(0)) || n < m), "n < m");
  // A narrowing cast is not the identity, and a cast of a float constant is not folded.
  EXPECT_EQ(simplified(cast(DataType::int64(), cast(kI32, n))), "cast<int64>(cast<int32>(n))");
  EXPECT_EQ(simplified(cast(kF32, SymExpr(3))), "cast<float32>(3)");
  EXPECT_EQ(simplified(cast(DataType::int64(), SymExpr::float_imm(1.5, kF32))), "cast<int64>(1.5f32)");
}

TEST_F(LoopValuesTest, FloatComparisonsAreNeitherDecidedNorNegated) {
  Analyzer analyzer;
  EXPECT_EQ(to_string(analyzer.simplify(!(x < y))), "!(x < y)");
  EXPECT_EQ(to_string(analyzer.simplify(!(k32 < k32 + 1))), "k >= k + 1i32");
  EXPECT_FALSE(analyzer.prove(x == x));  // NaN != NaN
  EXPECT_TRUE(analyzer.prove_equal(x + y, x + y));
  EXPECT_FALSE(analyzer.prove_equal(x + y, y + x));
  EXPECT_FALSE(analyzer.prove_equal(x, n));
  EXPECT_EQ(to_string(analyzer.simplify((x < y) && (x < y))), "x < y");
  EXPECT_EQ(to_string(analyzer.simplify((n < m) && (x < y) && SymExpr::boolean(true))),
            "n < m && x < y");
}

TEST_F(LoopValuesTest, BoundsOfNarrowIntegersComeFromTheirDtype) {
  Analyzer analyzer;
  EXPECT_EQ(analyzer.const_int_bound(cast(DataType::int64(), k32)),
            (ConstIntBound{INT32_MIN, INT32_MAX}));
  const SymExpr byte = cast(DataType::int64(), buffer_load(Bytes, {i}));
  EXPECT_EQ(analyzer.const_int_bound(byte), (ConstIntBound{0, 255}));
  EXPECT_TRUE(analyzer.prove(byte < 256));
  EXPECT_TRUE(analyzer.prove(floordiv(byte, 256) == 0));
  EXPECT_EQ(analyzer.const_int_bound(x), ConstIntBound::everything());
  EXPECT_EQ(analyzer.modular_set(k32), ModularSet::everything());
  EXPECT_FALSE(analyzer.upper_bound(x).ok());
}

TEST_F(LoopValuesTest, SimplifyKeepsFloatValuesProperty) {
  // Random float trees with integer parts: wherever the original evaluates, the simplified
  // form evaluates to the same bits (or NaN for NaN), and simplifying is idempotent.
  FloatTrees trees(77, {x, y}, {n, m}, {});
  std::mt19937_64 rng(3);
  Analyzer analyzer;
  analyzer.bind(n, 0, 20);
  analyzer.bind(m, -5, 5);
  int compared = 0;
  for (int r = 0; r < 1500; ++r) {
    const SymExpr e = trees.value(1 + r % 5);
    const SymExpr s = analyzer.simplify(e);
    ASSERT_TRUE(structural_equal(analyzer.simplify(s), s)) << e << " -> " << s;
    for (int point = 0; point < 3; ++point) {
      SymVarMap<int64_t> ints;
      ints.emplace(n, static_cast<int64_t>(rng() % 21));
      ints.emplace(m, static_cast<int64_t>(rng() % 11) - 5);
      SymVarMap<double> floats;
      floats.emplace(x, static_cast<double>(static_cast<float>((static_cast<double>(rng() % 2001) - 1000) / 64)));
      floats.emplace(y, static_cast<double>(static_cast<float>((static_cast<double>(rng() % 2001) - 1000) / 64)));
      absl::StatusOr<double> before = evaluate_float(e, ints, floats);
      if (!before.ok()) continue;
      absl::StatusOr<double> after = evaluate_float(s, ints, floats);
      ASSERT_TRUE(after.ok()) << e << " -> " << s << ": " << after.status();
      if (std::isnan(*before)) {
        EXPECT_TRUE(std::isnan(*after)) << e << " -> " << s;
      } else {
        EXPECT_EQ(bits(*before), bits(*after)) << e << " -> " << s << ": " << *before << " vs " << *after;
      }
      ++compared;
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(compared, 1000);
}

}  // namespace
}  // namespace relax
