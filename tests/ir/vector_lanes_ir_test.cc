// Vector lanes in the loop-level IR: a kernel with ramp/broadcast values and
// vector loads and stores reads back from its text and its JSON as the same
// kernel, and the readers and well-formedness name lane mismatches.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "relax/ir/json.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

constexpr const char* kVectorKernel = R"(module {
  prim_func @silu_mul(X: Buffer[(n, 64), float32], Y: Buffer[(n, 64), float32], M: Buffer[(64,), bool], Z: Buffer[(n, 64), float32]) {
    for i in range(n) parallel {
      for j in range(4) {
        Z[i, ramp(j * 16, 1, 16)] = select(M[ramp(j * 16, 1, 16)], X[i, ramp(j * 16, 1, 16)] * sigmoid(X[i, ramp(j * 16, 1, 16)]) * Y[i, ramp(j * 16, 1, 16)], broadcast(0f32, 16))
      }
    }
  }
  prim_func @iota(A: Buffer[(8, 16), int32]) {
    for i in range(8) {
      A[i, ramp(0, 1, 16)] = cast<int32x16>(ramp(i * 16, 1, 16)) + broadcast(1i32, 16)
    }
  }
  prim_func @gather(A: Buffer[(64,), float64], B: Buffer[(16,), float64]) {
    for i in range(2) {
      B[ramp(i * 8, 1, 8)] = A[ramp(i, 8, 8)] / broadcast(2f64, 8)
    }
  }
})";

TEST(VectorLanesIr, TextRoundTrip) {
  absl::StatusOr<IRModule> mod = parse_module(kVectorKernel);
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
  const std::string text = to_text(*mod);
  EXPECT_TRUE(absl::StrContains(text, "Z[i, ramp(j * 16, 1, 16)] = select(")) << text;
  EXPECT_TRUE(absl::StrContains(text, "cast<int32x16>(ramp(i * 16, 1, 16))")) << text;
  absl::StatusOr<IRModule> again = parse_module(text);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << text;
  EXPECT_TRUE(structural_equal(*mod, *again)) << text;
  EXPECT_EQ(to_text(*again), text);
}

TEST(VectorLanesIr, JsonRoundTrip) {
  absl::StatusOr<IRModule> mod = parse_module(kVectorKernel);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string json = to_json(*mod);
  EXPECT_TRUE(absl::StrContains(json, "\"sym.ramp\"")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"sym.broadcast\"")) << json;
  absl::StatusOr<IRModule> back = from_json(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(structural_equal(*mod, *back));
  EXPECT_EQ(to_text(*back), to_text(*mod));
  EXPECT_EQ(to_json(*back), json);
}

TEST(VectorLanesIr, JsonErrorsNameTheLanes) {
  absl::StatusOr<IRModule> mod = parse_module(kVectorKernel);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string json = to_json(*mod);
  // A lane count that is not a power of two, written by hand.
  std::string bad = json;
  const std::string lanes = "\"lanes\":16";
  const size_t at = bad.find(lanes);
  ASSERT_NE(at, std::string::npos) << json;
  bad.replace(at, lanes.size(), "\"lanes\":12");
  absl::StatusOr<IRModule> read = from_json(bad);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(absl::StrContains(read.status().message(), "power of two")) << read.status();
}

TEST(VectorLanesIr, TextErrorsNameTheLanes) {
  const std::pair<std::string, std::string> cases[] = {
      // A store of 8 lanes at 16 lanes of indices.
      {R"(module {
  prim_func @k(A: Buffer[(64,), float32]) {
    A[ramp(0, 1, 16)] = broadcast(0f32, 8)
  }
})",
       "at vector indices (float32x16)"},
      // A scalar stored at vector indices.
      {R"(module {
  prim_func @k(A: Buffer[(64,), float32]) {
    A[ramp(0, 1, 16)] = 0f32
  }
})",
       "float32x16"},
      // Indices of two lane counts.
      {R"(module {
  prim_func @k(A: Buffer[(64, 64), float32]) {
    A[ramp(0, 1, 4), ramp(0, 1, 8)] = broadcast(0f32, 8)
  }
})",
       "differ in lanes"},
      // A vector stored at a scalar index.
      {R"(module {
  prim_func @k(A: Buffer[(64,), float32]) {
    A[0] = broadcast(0f32, 8)
  }
})",
       "float32x8"},
  };
  for (const auto& [text, expected] : cases) {
    absl::StatusOr<IRModule> mod = parse_module(text);
    ASSERT_FALSE(mod.ok()) << text;
    EXPECT_TRUE(absl::StrContains(mod.status().message(), expected)) << mod.status();
  }
}

TEST(VectorLanesIr, WellFormedNamesAVectorStoreOfTheWrongLanes) {
  // Built past the constructors' checks, as a JSON reader or a faulty pass could.
  Buffer a("A", DataType::float32(), {SymExpr(64)});
  const Stmt store = Stmt(std::make_shared<const BufferStoreNode>(
      a, std::vector<SymExpr>{ramp(SymExpr(0), 1, 16)}, broadcast(SymExpr::float_imm(0, DataType::float32()), 8)));
  IRModule mod;
  PrimParam p;
  p.buffer = a;
  mod.add("k", make_prim_func({p}, store));
  absl::Status s = well_formed(mod);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "at vector indices (float32x16) stores")) << s;
}

}  // namespace
}  // namespace relax
