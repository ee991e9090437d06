// Vector SymExprs: ramp, broadcast, vector loads and lane-wise operators -- their
// dtypes, the dtype errors, the text form, and the analyses that must not treat a
// vector as a scalar.
#include <gtest/gtest.h>

#include <string>

#include "relax/shape/analyzer.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"

namespace relax {
namespace {

DataType lanes_of(DataType t, int lanes) { return DataType{t.code, t.bits, static_cast<uint16_t>(lanes)}; }

TEST(VectorExpr, RampAndBroadcastDtypes) {
  SymVar i("i");
  const SymExpr r = ramp(i * 16, 1, 16);
  EXPECT_EQ(r.kind(), SymKind::kRamp);
  EXPECT_EQ(r.dtype(), lanes_of(DataType::int64(), 16));
  const SymExpr b = broadcast(SymExpr::float_imm(0.5, DataType::float32()), 8);
  EXPECT_EQ(b.kind(), SymKind::kBroadcast);
  EXPECT_EQ(b.dtype(), lanes_of(DataType::float32(), 8));
  EXPECT_EQ(b.dtype().to_string(), "float32x8");
}

TEST(VectorExpr, LoadWithRampIndexIsAVector) {
  SymVar i("i");
  Buffer a("A", DataType::float32(), {SymExpr(4), SymExpr(64)});
  const SymExpr load = buffer_load(a, {i, ramp(SymExpr(0), 1, 16)});
  EXPECT_EQ(load.dtype(), lanes_of(DataType::float32(), 16));
  // Lane-wise arithmetic; an int64 or C++ float constant becomes a broadcast.
  const SymExpr sum = load + load * 2.0;
  EXPECT_EQ(sum.dtype(), lanes_of(DataType::float32(), 16));
  EXPECT_EQ(sum.to_string(), "A[i, ramp(0, 1, 16)] + A[i, ramp(0, 1, 16)] * broadcast(2f32, 16)");
  const SymExpr cmp = load > 0.0;
  EXPECT_EQ(cmp.dtype(), lanes_of(DataType::boolean(), 16));
  EXPECT_EQ(select(cmp, load, load * 0.0).dtype(), load.dtype());
  EXPECT_EQ(exp(load).dtype(), load.dtype());
  EXPECT_EQ(cast(lanes_of(DataType::float64(), 16), load).dtype(), lanes_of(DataType::float64(), 16));
}

TEST(VectorExpr, MismatchesNameTheLanes) {
  SymVar i("i");
  const SymExpr r16 = ramp(i, 1, 16);
  const SymExpr r8 = ramp(i, 1, 8);
  EXPECT_NE(sym_operand_mismatch(SymKind::kAdd, {r16, r8}, "+").find("differ in lanes"), std::string::npos)
      << sym_operand_mismatch(SymKind::kAdd, {r16, r8}, "+");
  EXPECT_NE(sym_operand_mismatch(SymKind::kAdd, {r16, SymExpr(i)}, "+").find("differ in lanes"),
            std::string::npos);
  EXPECT_EQ(sym_operand_mismatch(SymKind::kAdd, {r16, r16}, "+"), "");
  EXPECT_NE(vector_operand_mismatch(SymKind::kRamp, {i, SymExpr(1)}, 12).find("power of two"), std::string::npos);
  EXPECT_NE(vector_operand_mismatch(SymKind::kRamp, {i, SymExpr(1)}, 128).find("power of two"), std::string::npos);
  EXPECT_NE(vector_operand_mismatch(SymKind::kBroadcast, {r8}, 8).find("must be a scalar"), std::string::npos);
  const SymExpr f = SymExpr::float_imm(1.0, DataType::float32());
  EXPECT_NE(vector_operand_mismatch(SymKind::kRamp, {f, SymExpr(1)}, 8).find("int64 scalar"), std::string::npos);
  Buffer a("A", DataType::float32(), {SymExpr(64), SymExpr(64)});
  EXPECT_NE(load_index_mismatch(a, {r8, r16}).find("differ in lanes"), std::string::npos);
  EXPECT_EQ(load_index_mismatch(a, {i, r16}), "");
  EXPECT_DEATH(r16 + r8, "differ in lanes");
  EXPECT_DEATH(ramp(i, 1, 3), "power of two");
}

TEST(VectorExpr, TextRoundTrips) {
  ParseContext context;
  context.buffers.emplace("A", Buffer("A", DataType::float32(), {SymExpr(8), SymExpr(64)}));
  context.buffers.emplace("M", Buffer("M", DataType::boolean(), {SymExpr(64)}));
  for (const std::string text : {
           "ramp(i * 16, 1, 16)",
           "broadcast(0f32, 16)",
           "A[i, ramp(j * 16, 1, 16)] + broadcast(1.5f32, 16)",
           "select(A[i, ramp(0, 2, 8)] > broadcast(0f32, 8), A[i, ramp(0, 2, 8)], broadcast(0f32, 8))",
           "exp(A[ramp(0, 1, 4), broadcast(j, 4)])",
           "cast<float64x4>(A[i, ramp(j, 1, 4)]) * broadcast(2f64, 4)",
           "cast<int32x2>(ramp(n, -1, 2))",
           "M[ramp(0, 1, 8)] && !M[ramp(8, 1, 8)]",
       }) {
    absl::StatusOr<SymExpr> e = SymExpr::parse(text, context);
    ASSERT_TRUE(e.ok()) << text << ": " << e.status();
    EXPECT_EQ(e->to_string(), text);
    absl::StatusOr<SymExpr> again = SymExpr::parse(e->to_string(), context);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(structural_equal(*e, *again)) << text;
  }
}

TEST(VectorExpr, TextErrors) {
  ParseContext context;
  context.buffers.emplace("A", Buffer("A", DataType::float32(), {SymExpr(64)}));
  const std::pair<std::string, std::string> cases[] = {
      {"ramp(i, 1, 12)", "power of two"},
      {"ramp(i, 1, n)", "must be an integer literal"},
      {"ramp(i, 1)", "takes 3 arguments"},
      {"broadcast(ramp(i, 1, 4), 4)", "must be a scalar"},
      {"ramp(i, 1, 8) + ramp(i, 1, 4)", "differ in dtype"},
      {"A[ramp(0, 1, 8)] + 1f32", "differ in dtype"},
      {"exp(A[ramp(0, 1, 8)]) + broadcast(1f32, 4)", "differ in dtype"},
      {"select(i < 4, A[ramp(0, 1, 8)], broadcast(0f32, 8))", "differ in lanes"},
      {"cast<float32x8>(i)", "the lanes differ"},
      {"cast<float32x3>(ramp(i, 1, 4))", "a dtype"},
  };
  for (const auto& [text, expected] : cases) {
    absl::StatusOr<SymExpr> e = SymExpr::parse(text, context);
    ASSERT_FALSE(e.ok()) << text << " parsed as " << *e;
    EXPECT_NE(e.status().message().find(expected), std::string_view::npos)
        << text << ": " << e.status().message();
  }
}

TEST(VectorExpr, SimplifierKeepsVectorsAndSimplifiesTheirScalars) {
  Analyzer analyzer;
  SymVar i("i");
  analyzer.bind(i, 0, 100);
  // The base simplifies; the vector node is kept (not folded as a scalar).
  const SymExpr r = ramp(i * 2 + i, 1, 16);
  const SymExpr s = analyzer.simplify(r);
  EXPECT_EQ(s.to_string(), "ramp(i * 3, 1, 16)");
  Buffer a("A", DataType::float32(), {SymExpr(8), SymExpr(64)});
  const SymExpr load = buffer_load(a, {i - i, ramp(SymExpr(0), 1, 16)});
  const SymExpr v = select(load > 0.0, load, load * 0.0);
  const SymExpr sv = analyzer.simplify(v);
  EXPECT_EQ(sv.dtype(), v.dtype());
  EXPECT_EQ(sv.to_string(),
            "select(A[0, ramp(0, 1, 16)] > broadcast(0f32, 16), A[0, ramp(0, 1, 16)], A[0, ramp(0, 1, 16)] * "
            "broadcast(0f32, 16))");
  // An int64 vector compared with itself is not "true": it is a bool vector.
  const SymExpr eq = analyzer.simplify(r == r);
  EXPECT_EQ(eq.dtype().lanes, 16);
  // Evaluation is of scalars only.
  absl::StatusOr<int64_t> value = evaluate(r, {{i, 1}});
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("not an integer expression"), std::string_view::npos);
  EXPECT_FALSE(evaluate_float(load, {{i, 1}}).ok());
}

TEST(VectorExpr, StructuralEqualityAndHashSeeLanes) {
  SymVar i("i");
  EXPECT_TRUE(structural_equal(ramp(i, 1, 8), ramp(i, 1, 8)));
  EXPECT_EQ(structural_hash(ramp(i, 1, 8)), structural_hash(ramp(i, 1, 8)));
  EXPECT_FALSE(structural_equal(ramp(i, 1, 8), ramp(i, 1, 4)));
  EXPECT_FALSE(structural_equal(ramp(i, 1, 8), broadcast(i, 8)));
  EXPECT_NE(structural_compare(ramp(i, 1, 8), ramp(i, 1, 4)), 0);
  const SymExpr t = SymExpr::boolean(true);
  EXPECT_FALSE(structural_equal(broadcast(t, 4), broadcast(t, 8)));
  EXPECT_NE(structural_hash(broadcast(t, 4)), structural_hash(broadcast(t, 8)));
  // substitute rebuilds vector nodes.
  SymVar j("j");
  const SymExpr sub = substitute(ramp(i * 4, 1, 4), SymVarMap<SymExpr>{{i, j + 1}});
  EXPECT_EQ(sub.to_string(), "ramp((j + 1) * 4, 1, 4)");
}

}  // namespace
}  // namespace relax
