// The memory planner (relax/transform/memory_planner.h): each rule of the walk and the layout,
// the checker on hand-broken plans, and a property test over random programs checked at random
// values of their variables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "../test_env.h"
#include "relax/transform/memory_planner.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax::transform::memory {
namespace {

using ::testing::HasSubstr;

PlannedTensor tensor(std::string name, SymExpr size, int64_t first, int64_t last,
                     int64_t alignment = 64) {
  return PlannedTensor{std::move(name), std::move(size), alignment, first, last};
}

MemoryPlan plan_or_die(const std::vector<PlannedTensor>& tensors, Analyzer& analyzer) {
  absl::StatusOr<MemoryPlan> plan = plan_memory(tensors, analyzer);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : MemoryPlan{};
}

int64_t eval_or_die(const SymExpr& e, const SymVarMap<int64_t>& values) {
  absl::StatusOr<int64_t> value = evaluate(e, values);
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *value : -1;
}

// Checks `plan` at each value of `var`.
void expect_valid_at(const MemoryPlan& plan, const std::vector<PlannedTensor>& tensors,
                     const SymVar& var, const std::vector<int64_t>& values) {
  for (int64_t value : values) {
    EXPECT_TRUE(check_plan(plan, tensors, {{var, value}}).ok())
        << check_plan(plan, tensors, {{var, value}}) << "\n" << plan.to_string(tensors);
  }
}

class PlannerTest : public ::testing::Test {
 protected:
  PlannerTest() {
    analyzer_.bind(n_, 1);  // a shape variable: at least 1, no upper bound
    analyzer_.bind(m_, 1);
  }
  SymVar n_{"n"};
  SymVar m_{"m"};
  Analyzer analyzer_;
};

TEST_F(PlannerTest, ProvenSmallerTensorReusesFreedBlock) {
  // n*4096 fits a freed n*4096*2: proven under n >= 1, although the two are never equal.
  std::vector<PlannedTensor> tensors = {tensor("a", n_ * 4096 * 2, 0, 1),
                                        tensor("b", n_ * 4096, 2, 3)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  ASSERT_EQ(plan.blocks.size(), 1u) << plan.to_string(tensors);
  EXPECT_EQ(plan.tensors[0].block, plan.tensors[1].block);
  EXPECT_TRUE(analyzer_.prove_equal(plan.arena_size, n_ * 8192)) << plan.arena_size;
  EXPECT_FALSE(plan.constant_arena());
  expect_valid_at(plan, tensors, n_, {1, 3, 1000});
}

TEST_F(PlannerTest, UnprovableFitMakesNewBlock) {
  // m*4096 <= n*4096 is not provable (nor the reverse): no reuse, and no max() either.
  std::vector<PlannedTensor> tensors = {tensor("a", n_ * 4096, 0, 1),
                                        tensor("b", m_ * 4096, 2, 3)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  ASSERT_EQ(plan.blocks.size(), 2u) << plan.to_string(tensors);
  EXPECT_NE(plan.tensors[0].block, plan.tensors[1].block);
  EXPECT_TRUE(analyzer_.prove_equal(plan.arena_size, n_ * 4096 + m_ * 4096)) << plan.arena_size;
  for (int64_t n : {1, 5}) {
    for (int64_t m : {1, 9}) EXPECT_TRUE(check_plan(plan, tensors, {{n_, n}, {m_, m}}).ok());
  }
}

TEST_F(PlannerTest, ProvenLargerTensorGrowsFreedBlock) {
  // The freed block is provably no larger than the new tensor: it grows to n*8192, so the arena
  // is n*8192 rather than n*4096 + n*8192.
  std::vector<PlannedTensor> tensors = {tensor("a", n_ * 4096, 0, 1),
                                        tensor("b", n_ * 8192, 2, 3)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  ASSERT_EQ(plan.blocks.size(), 1u) << plan.to_string(tensors);
  EXPECT_TRUE(analyzer_.prove_equal(plan.blocks[0].size, n_ * 8192)) << plan.blocks[0].size;
  expect_valid_at(plan, tensors, n_, {1, 2, 77});
}

TEST_F(PlannerTest, TouchingLiveRangesDoNotShare) {
  // Intervals are inclusive: `a` is read by instruction 2, which writes `b`.
  std::vector<PlannedTensor> tensors = {tensor("a", n_ * 64, 0, 2), tensor("b", n_ * 64, 2, 3),
                                        tensor("c", n_ * 64, 3, 4)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  EXPECT_EQ(plan.blocks.size(), 2u) << plan.to_string(tensors);
  EXPECT_NE(plan.tensors[0].block, plan.tensors[1].block);
  EXPECT_EQ(plan.tensors[0].block, plan.tensors[2].block);  // a is dead when c is born
  expect_valid_at(plan, tensors, n_, {1, 10});
}

TEST_F(PlannerTest, EqualSizeBlockIsPreferred) {
  // Three blocks free at once (n*16, n*4, n*8); a tensor of n*4 takes the n*4 one although
  // the others fit too, and a tensor of n*2 then takes the tightest remaining fit, n*8.
  std::vector<PlannedTensor> tensors = {
      tensor("big", n_ * 16, 0, 1),   tensor("small", n_ * 4, 0, 1), tensor("mid", n_ * 8, 0, 1),
      tensor("same", n_ * 4, 2, 3),   tensor("half", n_ * 2, 2, 3),
  };
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  ASSERT_EQ(plan.blocks.size(), 3u) << plan.to_string(tensors);
  EXPECT_EQ(plan.tensors[3].block, plan.tensors[1].block) << plan.to_string(tensors);
  EXPECT_EQ(plan.tensors[4].block, plan.tensors[2].block) << plan.to_string(tensors);
  expect_valid_at(plan, tensors, n_, {1, 4, 33});
}

TEST_F(PlannerTest, TightestConstantFitIsPreferred) {
  std::vector<PlannedTensor> tensors = {
      tensor("a", 100, 0, 1), tensor("b", 300, 0, 1), tensor("c", 200, 0, 1),
      tensor("d", 150, 2, 3),  // fits b and c: takes c (200), the tighter
  };
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  ASSERT_EQ(plan.blocks.size(), 3u);
  EXPECT_EQ(plan.tensors[3].block, plan.tensors[2].block) << plan.to_string(tensors);
  EXPECT_TRUE(plan.constant_arena());
  EXPECT_TRUE(check_plan(plan, tensors, {}).ok()) << check_plan(plan, tensors, {});
}

TEST_F(PlannerTest, AlignmentIsKeptByBlocksAndOffsets) {
  // 100 bytes at alignment 16 and 64 bytes at 256 live together; then a 50-byte tensor at
  // alignment 512 reuses the first block, which must then sit on a 512-byte boundary.
  std::vector<PlannedTensor> tensors = {tensor("a", 100, 0, 1, 16), tensor("b", 64, 0, 3, 256),
                                        tensor("c", 50, 2, 3, 512)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  ASSERT_EQ(plan.blocks.size(), 2u) << plan.to_string(tensors);
  EXPECT_EQ(plan.tensors[2].block, plan.tensors[0].block);
  const PlannedBlock& shared = plan.blocks[plan.tensors[0].block];
  EXPECT_EQ(shared.alignment, 512);
  EXPECT_EQ(plan.arena_alignment, 512);
  for (const PlannedBlock& block : plan.blocks) {
    ASSERT_TRUE(block.offset.as_const());
    EXPECT_EQ(*block.offset.as_const() % block.alignment, 0) << plan.to_string(tensors);
  }
  // Largest alignment first: the 512-aligned block at 0, the 256-aligned one at 256.
  EXPECT_TRUE(plan.arena_offset(0).is_const(0)) << plan.to_string(tensors);
  EXPECT_TRUE(plan.arena_offset(1).is_const(256)) << plan.to_string(tensors);
  EXPECT_TRUE(plan.arena_size.is_const(320));
  EXPECT_TRUE(check_plan(plan, tensors, {}).ok()) << check_plan(plan, tensors, {});
}

TEST(Planner, ConstantArenaUnderUpperBounds) {
  // Sizes vary with n, but n <= 512 is declared: every block is sized at its bound and the
  // arena is one constant, valid for every n in range.
  SymVar n("n");
  Analyzer analyzer;
  analyzer.bind(n, 1, 512);
  std::vector<PlannedTensor> tensors = {
      tensor("x", n * 4096 * 2, 0, 2),      // bound 4 MiB
      tensor("h", n * 11008 * 2, 1, 3),     // bound 11,272,192
      tensor("g", n * 11008 * 2, 2, 4),     // live with h: a block of its own
      tensor("y", n * 4096 * 2, 4, 5),      // x's block is free and equal: reused
      tensor("s", n * n * 4, 5, 6),         // bound 1 MiB, fits h's freed block
  };
  MemoryPlan plan = plan_or_die(tensors, analyzer);
  ASSERT_TRUE(plan.constant_arena()) << plan.to_string(tensors);
  EXPECT_EQ(plan.blocks.size(), 3u) << plan.to_string(tensors);
  EXPECT_EQ(plan.tensors[3].block, plan.tensors[0].block);
  for (const PlannedBlock& block : plan.blocks) EXPECT_TRUE(block.size.as_const());
  EXPECT_EQ(*plan.arena_size.as_const(), 512 * 4096 * 2 + 2 * 512 * 11008 * 2);
  expect_valid_at(plan, tensors, n, {1, 2, 100, 511, 512});
}

TEST_F(PlannerTest, SymbolicOffsetsWithoutBounds) {
  // No upper bound on n: sizes and offsets stay expressions, evaluated per call. A size that is
  // not a multiple of the next block's alignment gets a padding term.
  std::vector<PlannedTensor> tensors = {tensor("a", n_ * 3 + 5, 0, 3, 64),
                                        tensor("b", n_ * 256, 1, 3, 64),
                                        tensor("c", n_ * 128, 2, 3, 64)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  ASSERT_EQ(plan.blocks.size(), 3u);
  EXPECT_FALSE(plan.constant_arena());
  EXPECT_TRUE(plan.arena_offset(0).is_const(0));
  // b follows a, rounded up to 64; c follows b with no padding (n*256 is a multiple of 64).
  const SymExpr b_offset = floordiv(n_ * 3 + 5 + 63, 64) * 64;
  EXPECT_TRUE(analyzer_.prove_equal(plan.arena_offset(1), b_offset)) << plan.arena_offset(1);
  EXPECT_TRUE(analyzer_.prove_equal(plan.arena_offset(2), b_offset + n_ * 256))
      << plan.arena_offset(2);
  for (int64_t n : {1, 2, 19, 20, 21, 1000, 123457}) {
    const SymVarMap<int64_t> values = {{n_, n}};
    const int64_t b_at = (n * 3 + 5 + 63) / 64 * 64;
    EXPECT_EQ(eval_or_die(plan.arena_offset(1), values), b_at);
    EXPECT_EQ(eval_or_die(plan.arena_size, values), b_at + n * 384);
    EXPECT_TRUE(check_plan(plan, tensors, values).ok()) << check_plan(plan, tensors, values);
  }
}

TEST_F(PlannerTest, SymbolicBlocksAreLaidOutByAlignment) {
  // A 1-aligned block made first goes after a 256-aligned one, so the odd size n*3 needs no
  // padding term; the 256-aligned one is padded for the 64-aligned one only when its size is not
  // a multiple of 64 (n*256 is).
  std::vector<PlannedTensor> tensors = {tensor("odd", n_ * 3, 0, 3, 1),
                                        tensor("wide", n_ * 256, 1, 3, 256),
                                        tensor("mid", m_ * 64, 2, 3, 64)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  ASSERT_EQ(plan.blocks.size(), 3u);
  EXPECT_TRUE(plan.arena_offset(1).is_const(0)) << plan.to_string(tensors);
  EXPECT_TRUE(analyzer_.prove_equal(plan.arena_offset(2), n_ * 256)) << plan.to_string(tensors);
  EXPECT_TRUE(analyzer_.prove_equal(plan.arena_offset(0), n_ * 256 + m_ * 64))
      << plan.to_string(tensors);
  EXPECT_TRUE(analyzer_.prove_equal(plan.arena_size, n_ * 259 + m_ * 64));
  EXPECT_EQ(plan.arena_alignment, 256);
  for (int64_t n : {1, 3}) {
    for (int64_t m : {1, 2, 1001}) EXPECT_TRUE(check_plan(plan, tensors, {{n_, n}, {m_, m}}).ok());
  }
}

TEST_F(PlannerTest, ReuseUsesFactsOfConstraintScopes) {
  // Under the fact n <= m, n*64 fits a freed m*64. (The walk's sample points, which refute
  // comparisons before a proof, know nothing of such facts, so they are not used under scopes.)
  std::vector<PlannedTensor> tensors = {tensor("a", m_ * 64, 0, 1), tensor("b", n_ * 64, 2, 3)};
  Analyzer::ConstraintScope fact(analyzer_, n_ <= m_);
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  EXPECT_EQ(plan.blocks.size(), 1u) << plan.to_string(tensors);
  for (int64_t m : {1, 5, 90}) {
    EXPECT_TRUE(check_plan(plan, tensors, {{n_, m}, {m_, m}}).ok());
    EXPECT_TRUE(check_plan(plan, tensors, {{n_, 1}, {m_, m}}).ok());
  }
}

TEST(Planner, MixedBoundedAndUnboundedVariables) {
  // n is bounded (n <= 128), m is not: n's tensors get constant blocks laid out first, at
  // constant offsets; m's stay symbolic after them.
  SymVar n("n");
  SymVar m("m");
  Analyzer analyzer;
  analyzer.bind(n, 1, 128);
  analyzer.bind(m, 1);
  std::vector<PlannedTensor> tensors = {
      tensor("u", m * 64, 0, 3),      tensor("p", n * 256, 1, 2), tensor("q", n * 1024, 1, 4),
      tensor("r", n * 128, 3, 4),     // p's freed block (32 KiB) fits its 16 KiB bound
      tensor("v", m * 32, 4, 5),      // u's freed block: m*32 <= m*64 is proven
      tensor("w", n * m * 2, 5, 6),   // neither bounded nor comparable: a block of its own
  };
  MemoryPlan plan = plan_or_die(tensors, analyzer);
  EXPECT_FALSE(plan.constant_arena());
  ASSERT_EQ(plan.blocks.size(), 4u) << plan.to_string(tensors);
  EXPECT_EQ(plan.tensors[3].block, plan.tensors[1].block);
  EXPECT_EQ(plan.tensors[4].block, plan.tensors[0].block);
  // Constant blocks first, at constant offsets (p's 32 KiB, then q's 128 KiB), then u's and
  // w's symbolic blocks.
  EXPECT_TRUE(plan.blocks[0].size.as_const() && plan.blocks[1].size.as_const());
  EXPECT_TRUE(plan.arena_offset(1).is_const(0)) << plan.to_string(tensors);
  EXPECT_TRUE(plan.arena_offset(2).is_const(32 * 1024)) << plan.to_string(tensors);
  EXPECT_TRUE(plan.arena_offset(0).is_const(160 * 1024)) << plan.to_string(tensors);
  EXPECT_TRUE(analyzer.prove_equal(plan.arena_offset(5), 160 * 1024 + m * 64))
      << plan.to_string(tensors);
  EXPECT_TRUE(analyzer.prove_equal(plan.arena_size, 160 * 1024 + m * 64 + n * m * 2))
      << plan.to_string(tensors);
  for (int64_t nv : {1, 128}) {
    for (int64_t mv : {1, 3, 5000}) {
      const SymVarMap<int64_t> values = {{n, nv}, {m, mv}};
      EXPECT_TRUE(check_plan(plan, tensors, values).ok()) << check_plan(plan, tensors, values);
    }
  }
}

TEST_F(PlannerTest, EmptyProgramHasEmptyArena) {
  MemoryPlan plan = plan_or_die({}, analyzer_);
  EXPECT_TRUE(plan.blocks.empty());
  EXPECT_TRUE(plan.arena_size.is_const(0));
  EXPECT_TRUE(plan.constant_arena());
  EXPECT_TRUE(check_plan(plan, {}, {}).ok());
}

TEST_F(PlannerTest, RejectsMalformedTensors) {
  auto error = [&](PlannedTensor t) {
    absl::StatusOr<MemoryPlan> plan = plan_memory({t}, analyzer_);
    EXPECT_FALSE(plan.ok());
    return std::string(plan.status().message());
  };
  EXPECT_THAT(error(tensor("t", n_ * 4, 0, 1, 48)),
              HasSubstr("tensor `t`: alignment must be a power of two, got 48"));
  EXPECT_THAT(error(tensor("t", n_ * 4, 0, 1, 0)), HasSubstr("got 0"));
  EXPECT_THAT(error(tensor("t", n_ * 4, 3, 2)), HasSubstr("first use 3 comes after its last use 2"));
  EXPECT_THAT(error(tensor("t", SymExpr::boolean(true), 0, 1)),
              HasSubstr("must be an int64 expression, got true"));
  SymVar k("k");
  analyzer_.bind(k, 0, 10);
  EXPECT_THAT(error(tensor("t", k - 20, 0, 1)),
              HasSubstr("is negative for every value of its variables (at most -10)"));
}

// ---------------------------------------------------------------------------
// The checker on hand-broken plans.

class CheckerTest : public PlannerTest {
 protected:
  // a and b live at once, c after a; a correct plan: a and c share block 0, b in block 1.
  std::vector<PlannedTensor> tensors_ = {tensor("a", n_ * 64, 0, 2), tensor("b", n_ * 64, 1, 4),
                                         tensor("c", n_ * 32, 3, 4)};
  MemoryPlan good() {
    MemoryPlan plan;
    plan.blocks = {PlannedBlock{n_ * 64, 64, 0}, PlannedBlock{n_ * 64, 64, n_ * 64}};
    plan.tensors = {TensorPlacement{0, 0}, TensorPlacement{1, 0}, TensorPlacement{0, 0}};
    plan.arena_size = n_ * 128;
    plan.arena_alignment = 64;
    return plan;
  }
  std::string error(const MemoryPlan& plan, int64_t n = 3) {
    absl::Status status = check_plan(plan, tensors_, {{n_, n}});
    EXPECT_FALSE(status.ok());
    return std::string(status.message());
  }
};

TEST_F(CheckerTest, AcceptsCorrectPlan) {
  EXPECT_TRUE(check_plan(good(), tensors_, {{n_, 3}}).ok());
  // The planner makes the same plan.
  MemoryPlan plan = plan_or_die(tensors_, analyzer_);
  EXPECT_EQ(plan.blocks.size(), 2u);
  EXPECT_EQ(plan.tensors[2].block, plan.tensors[0].block);
}

TEST_F(CheckerTest, CatchesOverlapOfLiveTensors) {
  MemoryPlan plan = good();
  plan.tensors[1].block = 0;  // b now shares a's block while both are live
  EXPECT_EQ(error(plan),
            "memory plan check at n = 3: tensors `a` (live [0, 2], bytes [0, 192)) and `b` "
            "(live [1, 4], bytes [0, 192)) overlap");
  // A block moved into its neighbour overlaps too, by part of it.
  plan = good();
  plan.blocks[1].offset = n_ * 64 - 64;
  EXPECT_THAT(error(plan), HasSubstr("tensors `a` (live [0, 2], bytes [0, 192)) and `b` (live "
                                     "[1, 4], bytes [128, 320)) overlap"));
}

TEST_F(CheckerTest, CatchesTensorOutsideItsBlock) {
  MemoryPlan plan = good();
  plan.blocks[0].size = n_ * 32;  // a (n*64) no longer fits
  EXPECT_THAT(error(plan), HasSubstr("tensor `a` (192 bytes at offset 0) lies outside block 0 "
                                     "(96 bytes)"));
  plan = good();
  plan.tensors[2].offset = n_ * 48;  // c at n*48 in a block of n*64: ends at n*80
  EXPECT_THAT(error(plan), HasSubstr("tensor `c` (96 bytes at offset 144) lies outside block 0"));
}

TEST_F(CheckerTest, CatchesBlockOutsideArenaAndMisalignment) {
  MemoryPlan plan = good();
  plan.arena_size = n_ * 100;
  EXPECT_THAT(error(plan), HasSubstr("block 1 at bytes [192, 192 + 192) ends past the arena's "
                                     "300 bytes"));
  plan = good();
  plan.blocks[1].offset = n_ * 64 + 8;
  plan.arena_size = n_ * 128 + 8;
  EXPECT_THAT(error(plan), HasSubstr("block 1: offset 200 is not a multiple of its alignment 64"));
  plan = good();
  plan.tensors[2].offset = 16;  // inside the block, but c wants 64-byte alignment
  EXPECT_THAT(error(plan), HasSubstr("tensor `c` at arena offset 16 breaks its alignment 64"));
}

TEST_F(CheckerTest, CatchesSizesThatDoNotEvaluate) {
  MemoryPlan plan = good();
  plan.blocks[1].size = m_ * 64;  // m has no value
  EXPECT_THAT(error(plan), HasSubstr("block 1 size m * 64 does not evaluate"));
  plan = good();
  plan.blocks[0].size = n_ * 64 - 1000;
  EXPECT_THAT(error(plan), HasSubstr("block 0 size"));
  EXPECT_THAT(error(plan), HasSubstr("is -808"));
}

// ---------------------------------------------------------------------------
// The property: random programs, each checked at several random values of its variables.

struct RandomVar {
  SymVar var;
  int64_t lo;
  int64_t hi;     // the range values are drawn from
  bool bounded;   // whether the Analyzer is told hi
};

class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint32_t seed) : rng_(seed) {}

  // A size in bytes: random products or sums of 1-3 of `vars` and constants. (Each draw is
  // its own statement, so that a seed gives the same programs with every compiler.)
  SymExpr size(const std::vector<RandomVar>& vars) {
    static const int64_t kScales[] = {1, 2, 3, 4, 8, 12, 64, 4096};
    const SymExpr x = vars[pick(vars.size())].var;
    const SymExpr y = vars[pick(vars.size())].var;
    const SymExpr z = vars[pick(vars.size())].var;
    const SymExpr a = kScales[pick(std::size(kScales))];
    const SymExpr b = kScales[pick(std::size(kScales))];
    const int64_t c = static_cast<int64_t>(pick(100));
    switch (pick(7)) {
      case 0:
        return a * x;
      case 1:
        return a * x * y;
      case 2:
        return a * x * y * z;
      case 3:
        return a * x + b * y + c;
      case 4:
        return (x + c % 8) * y * a;
      case 5:
        return a * x * 2;
      default:
        return SymExpr(c * 50);
    }
  }

  std::vector<PlannedTensor> program(const std::vector<RandomVar>& vars) {
    static const int64_t kAlignments[] = {1, 8, 64, 256};
    const size_t count = 1 + pick(24);
    std::vector<PlannedTensor> tensors;
    for (size_t i = 0; i < count; ++i) {
      const int64_t first = static_cast<int64_t>(pick(2 * count));
      const int64_t length = pick(3) == 0 ? static_cast<int64_t>(pick(2 * count))
                                          : static_cast<int64_t>(pick(4));
      tensors.push_back(tensor("t" + std::to_string(i), size(vars), first, first + length,
                               kAlignments[pick(std::size(kAlignments))]));
    }
    return tensors;
  }

  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
};

// Averages, over the sampled values, of: the reuse figure (sum of tensor bytes / arena bytes),
// what the best placement could reach at the same values (sum / peak live bytes: no arena is
// smaller than the peak), and the arena's efficiency (peak / arena).
struct ReuseFigure {
  double reuse = 0;
  double best_reuse = 0;
  double efficiency = 0;
  int64_t samples = 0;

  void add(const std::vector<PlannedTensor>& tensors, const SymVarMap<int64_t>& values,
           int64_t arena) {
    std::vector<int64_t> sizes;
    int64_t total = 0;
    int64_t last = 0;
    for (const PlannedTensor& t : tensors) {
      sizes.push_back(*evaluate(t.size_bytes, values));
      total += sizes.back();
      last = std::max(last, t.last_use);
    }
    int64_t peak = 0;
    for (int64_t step = 0; step <= last; ++step) {
      int64_t live = 0;
      for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i].first_use <= step && step <= tensors[i].last_use) live += sizes[i];
      }
      peak = std::max(peak, live);
    }
    if (peak == 0) return;  // nothing to place at these values
    reuse += static_cast<double>(total) / static_cast<double>(arena);
    best_reuse += static_cast<double>(total) / static_cast<double>(peak);
    efficiency += static_cast<double>(peak) / static_cast<double>(arena);
    ++samples;
  }

  void print(const std::string& what) const {
    if (samples == 0) return;
    const double count = static_cast<double>(samples);
    std::cout << "[ reuse    ] " << what << ": sum of tensor bytes / arena bytes = "
              << reuse / count << " (sum / peak live bytes = " << best_reuse / count
              << ", peak / arena = " << efficiency / count << "; " << samples << " samples)\n";
  }
};

TEST(PlannerProperty, RandomProgramsNeverOverlap) {
  // Three families of variables: all bounded (a constant arena is required), none bounded,
  // and mixed. Unbounded variables are declared >= 1 (or >= 0), as shape variables are. Each
  // plan is checked at four points: every variable at the top of its range (unbounded ones
  // at a random value), every one at the bottom, and two random points (unbounded variables
  // sometimes far past the bounded ones). RELAX_PLANNER_DUMP=1 prints every plan.
  const int64_t trials = testing_util::fuzz_trials(2400);
  ProgramGenerator gen(static_cast<uint32_t>(testing_util::fuzz_seed(20261213)));
  const bool dump = std::getenv("RELAX_PLANNER_DUMP") != nullptr;
  ReuseFigure at_bounds[3];
  ReuseFigure at_random[3];
  int64_t checked = 0;
  for (int64_t trial = 0; trial < trials; ++trial) {
    const int mode = static_cast<int>(trial % 3);  // bounded, unbounded, mixed
    std::vector<RandomVar> vars = {
        {SymVar("n"), 1, 64, mode != 1},
        {SymVar("m"), 1, 512, mode == 0},
        {SymVar("k"), 0, 300, mode == 0},
    };
    Analyzer analyzer;
    for (const RandomVar& v : vars) {
      analyzer.bind(v.var, v.lo, v.bounded ? v.hi : ConstIntBound::kPosInf);
    }
    const std::vector<PlannedTensor> tensors = gen.program(vars);
    absl::StatusOr<MemoryPlan> plan = plan_memory(tensors, analyzer);
    ASSERT_TRUE(plan.ok()) << plan.status();
    if (dump) std::cout << plan->to_string(tensors);
    if (mode == 0) {
      ASSERT_TRUE(plan->constant_arena()) << plan->to_string(tensors);
    }
    for (int point = 0; point < 4; ++point) {
      SymVarMap<int64_t> values;
      for (const RandomVar& v : vars) {
        const int64_t hi = v.bounded || gen.pick(4) != 0 ? v.hi : 5000;
        std::uniform_int_distribution<int64_t> random(v.lo, hi);
        values[v.var] = point == 0 ? (v.bounded ? v.hi : random(gen.rng()))
                        : point == 1 ? v.lo
                                     : random(gen.rng());
      }
      absl::Status status = check_plan(*plan, tensors, values);
      ASSERT_TRUE(status.ok()) << status << "\n" << plan->to_string(tensors);
      const int64_t arena = *evaluate(plan->arena_size, values);
      (point == 0 ? at_bounds : at_random)[mode].add(tensors, values, arena);
      ++checked;
    }
  }
  EXPECT_EQ(checked, trials * 4);
  at_bounds[0].print("all bounded, at the bounds");
  at_random[0].print("all bounded, below the bounds");
  at_bounds[1].print("unbounded");
  at_random[1].print("unbounded");
  at_bounds[2].print("mixed, bounded ones at the bounds");
  at_random[2].print("mixed");
}

TEST_F(PlannerTest, TimelineSvgDrawsEveryTensorAtItsPlace) {
  // a (live 0-1) and c (live 2-3) share a block; b (live 1-2) has its own.
  std::vector<PlannedTensor> tensors = {tensor("a<1>", n_ * 64, 0, 1), tensor("b", n_ * 32, 1, 2),
                                        tensor("c", n_ * 64, 2, 3)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  absl::StatusOr<std::string> svg = plan_to_svg(plan, tensors, {{n_, 10}}, "main & n = 10");
  ASSERT_TRUE(svg.ok()) << svg.status();
  // One bar per tensor, names and the title escaped, the caption's figures at n = 10.
  size_t bars = 0;
  for (size_t at = svg->find("<rect x=\"", 0); at != std::string::npos; at = svg->find("<rect x=\"", at + 1)) ++bars;
  EXPECT_EQ(bars, tensors.size() + 1);  // and the frame
  EXPECT_THAT(*svg, HasSubstr("<title>main &amp; n = 10</title>"));
  EXPECT_THAT(*svg, HasSubstr("<title>a&lt;1&gt;: 640 bytes at offset 0, live [0, 1]</title>"));
  EXPECT_THAT(*svg, HasSubstr("<title>c: 640 bytes at offset 0, live [2, 3]</title>"));
  EXPECT_THAT(*svg, HasSubstr("arena 960 bytes in 2 blocks; peak live 960 bytes; 3 tensors of 1600 bytes in all"));
  EXPECT_EQ(svg->find("a<1>"), std::string::npos);
  // b sits below the shared block: at offset 640 of an arena of 960, drawn 2/3 of the way down.
  EXPECT_THAT(*svg, HasSubstr("<title>b: 320 bytes at offset 640, live [1, 2]</title>"));
  EXPECT_THAT(*svg, HasSubstr("y=\"280.0\""));  // kTop 40 + 640 / 960 * 360
}

TEST_F(PlannerTest, TimelineSvgNeedsEveryVariable) {
  std::vector<PlannedTensor> tensors = {tensor("a", n_ * m_, 0, 1)};
  MemoryPlan plan = plan_or_die(tensors, analyzer_);
  absl::StatusOr<std::string> svg = plan_to_svg(plan, tensors, {{n_, 10}}, "main");
  ASSERT_FALSE(svg.ok());
  EXPECT_THAT(std::string(svg.status().message()), HasSubstr("m"));
}

}  // namespace
}  // namespace relax::transform::memory
