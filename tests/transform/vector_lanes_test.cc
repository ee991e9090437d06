// Vector lanes in the loop-level evaluator and in the vectorize primitive:
// a vector store evaluates lane by lane (all lanes read before any is written),
// vectorize lowers a loop of a constant lane count whose body is an affine
// store into one vector statement -- checked bit for bit against the kernel
// before, through the evaluator -- and leaves the loops it cannot lower as
// `vectorized` (omp simd) loops.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/well_formed.h"
#include "relax/transform/prim_eval.h"
#include "relax/transform/schedule.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

using schedule_test::expect_same_results;
namespace st = schedule_test;



/// The schedule's last step: vectorized loops to vector lanes where they lower.
Expr lanes_of(const Expr& f) { return schedule::lower_vectorized_loops(f); }


runtime::Tensor tensor(std::vector<int64_t> shape, DataType dtype) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(shape, dtype);
  RELAX_CHECK(t.ok()) << t.status();
  return *t;
}

TEST(VectorLanesEval, VectorStoreEvaluatesLaneByLane) {
  // Z = X * sigmoid(X) * Y where M, else 0; an iota; a stride-8 gather.
  Expr f = st::function_of(R"(module {
  prim_func @k(X: Buffer[(2, 32), float32], M: Buffer[(32,), bool], Z: Buffer[(2, 32), float32], I: Buffer[(32,), int32], G: Buffer[(8,), float32]) {
    for i in range(2) {
      for j in range(2) {
        Z[i, ramp(j * 16, 1, 16)] = select(M[ramp(j * 16, 1, 16)], X[i, ramp(j * 16, 1, 16)] * sigmoid(X[i, ramp(j * 16, 1, 16)]), broadcast(0f32, 16))
      }
    }
    I[ramp(0, 1, 32)] = cast<int32x32>(ramp(100, -2, 32))
    G[ramp(0, 1, 8)] = X[1, ramp(3, 4, 8)]
  }
})",
                  "k");
  ASSERT_TRUE(f.defined());
  runtime::Tensor x = tensor({2, 32}, DataType::float32());
  runtime::Tensor m = tensor({32}, DataType::boolean());
  runtime::Tensor z = tensor({2, 32}, DataType::float32());
  runtime::Tensor ii = tensor({32}, DataType::int32());
  runtime::Tensor g = tensor({8}, DataType::float32());
  auto* xs = static_cast<float*>(x.data());
  auto* ms = static_cast<uint8_t*>(m.data());
  for (int k = 0; k < 64; ++k) xs[k] = static_cast<float>(k % 7) * 0.25f - 0.5f;
  for (int k = 0; k < 32; ++k) ms[k] = k % 3 != 0 ? 1 : 0;
  absl::Status s = run_prim_func(f, {x, m, z, ii, g});
  ASSERT_TRUE(s.ok()) << s;
  const auto* zs = static_cast<const float*>(z.data());
  for (int k = 0; k < 64; ++k) {
    // The evaluator rounds each step to float32: the reference does the same.
    const double v = xs[k];
    const float sig = static_cast<float>(1.0 / (1.0 + std::exp(-v)));
    const float expected = ms[k % 32] != 0 ? static_cast<float>(static_cast<double>(xs[k]) * sig) : 0.0f;
    ASSERT_EQ(zs[k], expected) << k;
  }
  const auto* is = static_cast<const int32_t*>(ii.data());
  for (int k = 0; k < 32; ++k) ASSERT_EQ(is[k], 100 - 2 * k) << k;
  const auto* gs = static_cast<const float*>(g.data());
  for (int k = 0; k < 8; ++k) ASSERT_EQ(gs[k], xs[32 + 3 + 4 * k]) << k;
}

TEST(VectorLanesEval, AllLanesReadBeforeAnyIsWritten) {
  // A[1..8] = A[0..7] + 1: as vector code, every lane reads the old values.
  Expr f = st::function_of(R"(module {
  prim_func @shift(A: Buffer[(9,), int64]) {
    A[ramp(1, 1, 8)] = A[ramp(0, 1, 8)] + broadcast(1, 8)
  }
})",
                  "shift");
  runtime::Tensor a = tensor({9}, DataType::int64());
  auto* as = static_cast<int64_t*>(a.data());
  for (int k = 0; k < 9; ++k) as[k] = k * 10;
  ASSERT_TRUE(run_prim_func(f, {a}).ok());
  EXPECT_EQ(as[0], 0);
  for (int k = 1; k < 9; ++k) EXPECT_EQ(as[k], (k - 1) * 10 + 1) << k;
}

TEST(VectorLanesEval, ErrorsNameTheLane) {
  Expr f = st::function_of(R"(module {
  prim_func @oob(A: Buffer[(8,), float32], B: Buffer[(8,), float32]) {
    B[ramp(0, 1, 8)] = A[ramp(1, 1, 8)]
  }
})",
                  "oob");
  runtime::Tensor a = tensor({8}, DataType::float32());
  runtime::Tensor b = tensor({8}, DataType::float32());
  absl::Status s = run_prim_func(f, {a, b});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "index [8] is out of bounds of `A`")) << s;
}

constexpr const char* kLanesKernels = R"(module {
  prim_func @add(A: Buffer[(n, 64), float32], B: Buffer[(n, 64), float32], C: Buffer[(n, 64), float32]) {
    for i in range(n) {
      for j in range(64) {
        block add(vi = spatial(n, i), vj = spatial(64, j)) {
          C[vi, vj] = A[vi, vj] + B[vi, vj] * A[vi, 0]
        }
      }
    }
  }
  prim_func @silu_mul(X: Buffer[(n,), float32], Y: Buffer[(n,), float32], Z: Buffer[(n,), float32]) {
    for i in range(n) {
      block silu(vi = spatial(n, i)) {
        Z[vi] = X[vi] * sigmoid(X[vi]) * Y[vi]
      }
    }
  }
  prim_func @transpose(A: Buffer[(16, 16), float32], B: Buffer[(16, 16), float32]) {
    for i in range(16) {
      for j in range(16) {
        block t(vi = spatial(16, i), vj = spatial(16, j)) {
          B[vi, vj] = A[vj, vi]
        }
      }
    }
  }
  prim_func @strided(A: Buffer[(32,), float32], B: Buffer[(16,), float32]) {
    for i in range(16) {
      block s(vi = spatial(16, i)) {
        B[vi] = A[vi * 2]
      }
    }
  }
  prim_func @relu_if(A: Buffer[(16,), float32], B: Buffer[(16,), float32]) {
    for i in range(16) {
      block r(vi = spatial(16, i)) {
        if A[vi] > 0f32 {
          B[vi] = A[vi]
        } else {
          B[vi] = 0f32
        }
      }
    }
  }
  prim_func @iota(A: Buffer[(4, 8), float64]) {
    for i in range(4) {
      for j in range(8) {
        block io(vi = spatial(4, i), vj = spatial(8, j)) {
          A[vi, vj] = cast<float64>(vi * 8 + vj) * 0.5f64
        }
      }
    }
  }
  prim_func @safe_div(A: Buffer[(16,), int32], B: Buffer[(16,), int32], C: Buffer[(16,), int32]) {
    for i in range(16) {
      block d(vi = spatial(16, i)) {
        C[vi] = select(B[vi] != 0i32, floordiv(A[vi], B[vi]), 0i32)
      }
    }
  }
  prim_func @div_by_const(A: Buffer[(16,), int32], C: Buffer[(16,), int32]) {
    for i in range(16) {
      block d(vi = spatial(16, i)) {
        C[vi] = floordiv(A[vi], 3i32) + floormod(A[vi], 3i32)
      }
    }
  }
  prim_func @row_max(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block mx(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = -inf_f32
          }
          B[vi] = max(B[vi], A[vi, vk])
        }
      }
    }
  }
  prim_func @half(A: Buffer[(16,), float16], B: Buffer[(16,), float16]) {
    for i in range(16) {
      block h(vi = spatial(16, i)) {
        B[vi] = A[vi] + A[vi]
      }
    }
  }
})";

TEST(VectorizeLanes, ConstantExtentBecomesOneVectorStatement) {
  Expr f = st::function_of(kLanesKernels, "add");
  Expr g = st::ok_or_die(schedule::split(f, "j", 16));
  g = lanes_of(st::ok_or_die(schedule::vectorize(g, "j_i")));
  st::expect_well_formed(g);
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "C[i, ramp(j_o * 16, 1, 16)] = A[i, ramp(j_o * 16, 1, 16)] + "
                                      "B[i, ramp(j_o * 16, 1, 16)] * broadcast(A[i, 0], 16)"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "j_i")) << text;
  EXPECT_EQ(expect_same_results(f, g, {0, 1, 5}, "split+vectorize lanes"), 6);
  // The loop of 64 itself: one statement of 64 lanes.
  Expr h = lanes_of(st::ok_or_die(schedule::vectorize(f, "j")));
  EXPECT_TRUE(absl::StrContains(to_text(h), "ramp(0, 1, 64)")) << to_text(h);
  EXPECT_EQ(expect_same_results(f, h, {0, 3}, "vectorize(j) lanes"), 4);
}

TEST(VectorizeLanes, VectorizeKeepsTheBlockForLaterPrimitives) {
  // vectorize only marks the loop: a reorder after it still finds the block;
  // the lanes come when the schedule is complete.
  Expr f = st::function_of(kLanesKernels, "add");
  Expr g = st::ok_or_die(schedule::split(f, "j", 16));
  g = st::ok_or_die(schedule::vectorize(g, "j_i"));
  EXPECT_TRUE(absl::StrContains(to_text(g), "for j_i in range(16) vectorized")) << to_text(g);
  g = st::ok_or_die(schedule::reorder(g, {"j_o", "i"}));
  g = lanes_of(g);
  EXPECT_TRUE(absl::StrContains(to_text(g), "C[i, ramp(j_o * 16, 1, 16)]")) << to_text(g);
  EXPECT_EQ(expect_same_results(f, g, {0, 2}, "vectorize, reorder, lanes"), 4);
}

TEST(VectorizeLanes, SplitTailIsPeeled) {
  // n is symbolic: the split's tail check stays, and the loop is peeled in
  // place -- full vectors where the last lane is in range, the loop elsewhere.
  Expr f = st::function_of(kLanesKernels, "silu_mul");
  Expr g = st::ok_or_die(schedule::split(f, "i", 16));
  g = st::ok_or_die(schedule::parallel(g, "i_o"));
  g = lanes_of(st::ok_or_die(schedule::vectorize(g, "i_i")));
  st::expect_well_formed(g);
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "if i_o * 16 + 15 < n {")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Z[ramp(i_o * 16, 1, 16)] = X[ramp(i_o * 16, 1, 16)] * "
                                      "sigmoid(X[ramp(i_o * 16, 1, 16)]) * Y[ramp(i_o * 16, 1, 16)]"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "for i_i in range(16) vectorized")) << text;
  EXPECT_EQ(expect_same_results(f, g, {0, 1, 15, 16, 17, 48, 50}, "peeled lanes"), 14);
  // Lowering again leaves the remainder loop alone (it is not peeled twice).
  EXPECT_EQ(to_text(lanes_of(g)), text);
}

TEST(VectorizeLanes, IotaOfTheLoopVariable) {
  Expr f = st::function_of(kLanesKernels, "iota");
  Expr g = lanes_of(st::ok_or_die(schedule::vectorize(f, "j")));
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "A[i, ramp(0, 1, 8)] = cast<float64x8>(ramp(i * 8, 1, 8)) * broadcast(0.5f64, 8)"))
      << text;
  EXPECT_EQ(expect_same_results(f, g, {1}, "iota lanes"), 2);
}

TEST(VectorizeLanes, ADivisionByANonzeroConstantIsInLanes) {
  Expr f = st::function_of(kLanesKernels, "div_by_const");
  Expr g = lanes_of(st::ok_or_die(schedule::vectorize(f, "i")));
  EXPECT_TRUE(absl::StrContains(to_text(g), "C[ramp(0, 1, 16)] = floordiv(A[ramp(0, 1, 16)]")) << to_text(g);
  EXPECT_EQ(expect_same_results(f, g, {1}, "division by 3 in lanes"), 2);
}

// rfactor's per-lane partial results: the block reduces along the outer loop,
// whose binding the lanes share, so each lane updates its own accumulator and
// the lanes do it at once.
TEST(VectorizeLanes, AnRfactorsPartialReductionIsInLanes) {
  Expr f = st::function_of(kLanesKernels, "row_max");
  Expr g = lanes_of(st::ok_or_die(schedule::rfactor(f, "k", 16)));
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "ramp(k_o * 16, 1, 16)]")) << text;
  EXPECT_EQ(expect_same_results(f, g, {0, 1, 5, 16, 17, 40}, "rfactor lanes"), 12);
}

TEST(VectorizeLanes, WhatDoesNotLowerStaysAnOmpSimdLoop) {
  // A transpose (the load's index in v is not the last), a stride-2 load, an
  // if/else, float16 elements, an integer division by a loaded divisor (lanes
  // compute every lane: the select's 0 divisor would trap), and an extent that
  // is no lane count.
  for (const auto& [name, loop] : std::vector<std::pair<std::string, std::string>>{
           {"transpose", "j"}, {"strided", "i"}, {"relu_if", "i"}, {"half", "i"}, {"safe_div", "i"}}) {
    Expr f = st::function_of(kLanesKernels, name);
    Expr g = lanes_of(st::ok_or_die(schedule::vectorize(f, loop)));
    const std::string text = to_text(g);
    EXPECT_TRUE(absl::StrContains(text, "in range(16) vectorized")) << name << "\n" << text;
    EXPECT_FALSE(absl::StrContains(text, "ramp(")) << name << "\n" << text;
    EXPECT_EQ(expect_same_results(f, g, {1}, name), 2) << name;
  }
  Expr f = st::function_of(kLanesKernels, "add");
  Expr g = st::ok_or_die(schedule::split(f, "j", 12));  // 12 lanes: not a power of two
  g = lanes_of(st::ok_or_die(schedule::vectorize(g, "j_i")));
  EXPECT_TRUE(absl::StrContains(to_text(g), "for j_i in range(12) vectorized")) << to_text(g);
  EXPECT_EQ(expect_same_results(f, g, {2}, "12 lanes"), 2);
}

}  // namespace
}  // namespace relax::transform
