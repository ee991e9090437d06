// Execution-plan replay (relax/runtime/replay.h) on modules compiled through the default
// pipeline: a planned model replays bit for bit what the interpreter computes at several sizes
// and under alternating sizes, from one plan; a decode step over a growing cache (n = 1..40)
// replays one plan recorded once; a branch on an int argument replays one plan per side; a
// data-dependent builtin (nonzero, then a match_cast of its count) is interpreted on every call,
// with right results, whatever the binding (a branch on a tensor's value: tests/runtime).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/execution_context.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

using runtime::ExecutionContext;
using runtime::ReplayOptions;
using runtime::Tensor;
using runtime::Value;

// The planned MLP of the memory tests: one arena, its intermediates at offsets in it.
constexpr const char* kModel = R"(module {
  func @main(x: Tensor[(n, 16), float32], w1: Tensor[(16, 16), float32], w2: Tensor[(16, 16), float32]) -> Tensor[(n, 16), float32] upper_bounds {n: 64} {
    dataflow {
      a = matmul(x, w1)
      h1 = relu(a)
      b = matmul(h1, w2)
      h2 = relu(b)
      c = matmul(h2, w1)
      h3 = add(c, h1)
      d = matmul(h3, w2)
      h4 = relu(d)
      e = matmul(h4, w1)
      output out = multiply(e, x)
    }
    return out
  }
  func @branch(x: Tensor[(n,), float32], c: Prim[bool]) -> Tensor[(n,), float32] {
    r = if c {
      dataflow {
        output s = add(x, x)
      }
      s
    } else {
      dataflow {
        output t = multiply(x, x)
      }
      t
    }
    return r
  }
  func @decode(x: Tensor[(1, 16), float32], cache: Tensor[(m, 16), float32], wq: Tensor[(16, 16), float32]) -> Tensor[(1, 16), float32] upper_bounds {m: 64} {
    dataflow {
      q = matmul(x, wq)
      t = (cache, q)
      keys = concat(t, axis=0)
      kt = permute_dims(keys, axes=[1, 0])
      s = matmul(q, kt)
      p = softmax(s)
      o = matmul(p, keys)
      output out = add(o, x)
    }
    return out
  }
  func @count(x: Tensor[(n,), float32]) -> Tensor[ndim=2, int64] {
    y = nonzero(x)
    z = match_cast(y, Tensor[(1, k), int64])
    w = add(z, z)
    return w
  }
})";

runtime::Module build_model(const ReplayOptions& options) {
  absl::StatusOr<IRModule> mod = parse_module(kModel);
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return runtime::Module();
  const Target target = testing::build_test_target();
  absl::StatusOr<runtime::Module> built = build(*mod, target, transform::default_pipeline(target));
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) return runtime::Module();
  built->set_replay_options(options);
  return *built;
}

ReplayOptions replay(bool on) {
  ReplayOptions o;
  o.enabled = on;
  o.record_on_call = 1;
  return o;
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(ReplayBuildTest, APlannedModelReplaysBitForBitAtSeveralSizes) {
  const runtime::Module replayed = build_model(replay(true));
  const runtime::Module interpreted = build_model(replay(false));
  ASSERT_TRUE(replayed.defined() && interpreted.defined());
  const Tensor w1 = testing::random_tensor({16, 16}, 11);
  const Tensor w2 = testing::random_tensor({16, 16}, 12);
  ExecutionContext ctx_r, ctx_i;
  int64_t replays = 0;
  const std::vector<int64_t> sizes = {1, 5, 1, 5, 33, 64, 1, 33, 2, 64, 5, 5, 64, 2, 2};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t n = sizes[i];
    const Tensor x = testing::random_tensor({n, 16}, static_cast<int>(i) + 100);
    absl::StatusOr<Value> got = replayed["main"].call(ctx_r, {Value(x), Value(w1), Value(w2)});
    absl::StatusOr<Value> want = interpreted["main"].call(ctx_i, {Value(x), Value(w1), Value(w2)});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_TRUE(bit_equal(got->tensor_or_die(), want->tensor_or_die())) << "call " << i << ", n = " << n;
    replays += ctx_r.last_call_stats().replayed;
    EXPECT_EQ(ctx_r.last_call_stats().allocator_calls, ctx_i.last_call_stats().allocator_calls) << "call " << i;
  }
  const runtime::ReplayStats s = replayed.replay_stats();
  EXPECT_EQ(s.replayed, replays);
  // Recorded at the first size, replayed at every other.
  EXPECT_EQ(s.recorded, 1);
  EXPECT_EQ(s.replayed, static_cast<int64_t>(sizes.size()) - 1);
  EXPECT_EQ(s.replayed + s.interpreted, static_cast<int64_t>(sizes.size()));
  EXPECT_EQ(interpreted.replay_stats().replayed, 0);
}

TEST(ReplayBuildTest, ADecodeStepOverAGrowingCacheReplaysOnePlan) {
  const runtime::Module replayed = build_model(ReplayOptions{});  // records on the second call
  const runtime::Module interpreted = build_model(replay(false));
  ASSERT_TRUE(replayed.defined() && interpreted.defined());
  const Tensor x = testing::random_tensor({1, 16}, 3);
  const Tensor wq = testing::random_tensor({16, 16}, 4);
  ExecutionContext ctx_r, ctx_i;
  for (int64_t m = 1; m <= 40; ++m) {
    const Tensor cache = testing::random_tensor({m, 16}, static_cast<int>(m) + 10);
    absl::StatusOr<Value> got = replayed["decode"].call(ctx_r, {Value(x), Value(cache), Value(wq)});
    absl::StatusOr<Value> want = interpreted["decode"].call(ctx_i, {Value(x), Value(cache), Value(wq)});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_TRUE(bit_equal(got->tensor_or_die(), want->tensor_or_die())) << "m = " << m;
    EXPECT_EQ(ctx_r.last_call_stats().replayed, m > 2 ? 1 : 0) << "m = " << m;
    EXPECT_EQ(ctx_r.last_call_stats().arena_bytes, ctx_i.last_call_stats().arena_bytes) << "m = " << m;
  }
  const runtime::ReplayStats s = replayed.replay_stats();
  EXPECT_EQ(s.recorded, 1);
  EXPECT_EQ(s.replayed, 38);
  EXPECT_EQ(s.guard_misses, 0);
  EXPECT_EQ(s.not_recordable, 0);
  // The declared bound is still checked on the replayed function.
  absl::StatusOr<Value> r = replayed["decode"](x, testing::random_tensor({65, 16}, 1), wq);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "decode: m = 65 exceeds its declared upper bound 64");
}

TEST(ReplayBuildTest, ArgumentErrorsAreReportedOnAReplayedBinding) {
  const runtime::Module m = build_model(replay(true));
  const Tensor w1 = testing::random_tensor({16, 16}, 11);
  const Tensor w2 = testing::random_tensor({16, 16}, 12);
  const Tensor x = testing::random_tensor({4, 16}, 1);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(m["main"](x, w1, w2).ok());
  ASSERT_EQ(m.replay_stats().replayed, 1);
  absl::StatusOr<Value> r = m["main"](x, w1, testing::random_tensor({16, 15}, 3));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "main: argument w2: dimension 1 is 15, expected 16");
  r = m["main"](testing::random_tensor({65, 16}, 1), w1, w2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "main: n = 65 exceeds its declared upper bound 64");
  EXPECT_EQ(m.replay_stats().replayed, 1);
}

TEST(ReplayBuildTest, ABranchOnAScalarArgumentReplaysOnePlanPerSide) {
  // c is an int argument: like a symbolic variable, part of what a plan's class pins. The
  // first call (c = 1) records one side, the second (c = 0) misses its guard and records the
  // other; every later call replays the plan of its side.
  const runtime::Module m = build_model(replay(true));
  const Tensor x = testing::random_tensor({8}, 5);
  for (int i = 0; i < 6; ++i) {
    const bool c = i % 3 == 0;
    absl::StatusOr<Value> r = m["branch"](x, Value(static_cast<int64_t>(c)));
    ASSERT_TRUE(r.ok()) << r.status();
    const float* xs = x.data_as_or_die<float>();
    const float* ys = r->tensor_or_die().data_as_or_die<float>();
    for (int64_t j = 0; j < 8; ++j) EXPECT_EQ(ys[j], c ? xs[j] + xs[j] : xs[j] * xs[j]) << "call " << i;
  }
  const runtime::ReplayStats s = m.replay_stats();
  EXPECT_EQ(s.replayed, 4);
  EXPECT_EQ(s.recorded, 2);
  EXPECT_EQ(s.guard_misses, 1);
  EXPECT_EQ(s.not_recordable, 0);
}

TEST(ReplayBuildTest, ADataDependentBuiltinIsInterpretedOnEveryCall) {
  const runtime::Module m = build_model(replay(true));
  // The same n each time, a different count of non-zeros.
  const std::vector<std::vector<float>> inputs = {{0, 1, 0, 2}, {3, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 0}};
  for (int round = 0; round < 2; ++round) {
    for (const std::vector<float>& xs : inputs) {
      absl::StatusOr<Tensor> x = Tensor::from_vector({4}, xs);
      ASSERT_TRUE(x.ok());
      absl::StatusOr<Value> r = m["count"](*x);
      ASSERT_TRUE(r.ok()) << r.status();
      std::vector<int64_t> want;
      for (size_t i = 0; i < xs.size(); ++i) {
        if (xs[i] != 0) want.push_back(2 * static_cast<int64_t>(i));
      }
      const Tensor& w = r->tensor_or_die();
      ASSERT_EQ(w.shape(), (std::vector<int64_t>{1, static_cast<int64_t>(want.size())}));
      EXPECT_EQ(std::vector<int64_t>(w.data_as_or_die<int64_t>(), w.data_as_or_die<int64_t>() + w.numel()), want);
    }
  }
  EXPECT_EQ(m.replay_stats().replayed, 0);
}

}  // namespace
}  // namespace relax
