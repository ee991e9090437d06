// Execution-plan replay (relax/runtime/replay.h) on hand-built executables: one plan recorded at
// one size replays every size of its class bit for bit as interpreted (storage sizes, offsets,
// shapes and scalar arguments recomputed per call), inputs and int arguments are patched per
// call, outputs are fresh per call, the argument checks still run (same messages), a binding
// whose branch or loop trip count differs from the plan's, or whose tensors no longer fit their
// storage, or whose callee exceeds a bound, is interpreted (and records a plan of its own,
// evicting the least recently used), what cannot be recorded (a branch on data, a builtin) is
// interpreted, calls through kCallFunc are recorded through, and many threads share one
// module's plans.
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "relax/runtime/module.h"
#include "test_programs.h"
#include "vm_test_util.h"

namespace relax::runtime {
namespace {

using testing::cst;
using testing::imm;
using testing::message;
using testing::op;
using testing::reg;
using testing::sym;

// main(x: f32[n], y: f32[n], k: int) -> (f32[n], f32[n], f32[n]): a planned function.
//   arena = alloc_storage(8 n); a = arena[0:4n]; b = arena[4n:8n] (zeroed)
//   a = x + y; b = a + b (so b = a: b was zeroed); out = alloc_storage(4 n), z = out[0]
//   z = scale(b, 0.5); w = view(z, (n,)); a2 = fresh f32[n]; a2 = x + z
//   returns (z, w, a2) and the int k passed through (kMakeTuple of a param)
Executable planned_program() {
  Executable exec;
  exec.kernel_names = {"add_kernel", "scale_kernel"};
  exec.constants = {Value(0.5), Value(std::string("a")), Value(std::string("b")), Value(std::string("z"))};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x", "y", "k"};
  fn.num_registers = 12;
  fn.slot_names = {"n"};
  fn.exprs = {testing::slot_program(0, "n"),
              testing::program("8 * n", {{SymOp::kConst, 8}, {SymOp::kSlot, 0}, {SymOp::kMul}}),
              testing::program("4 * n", {{SymOp::kConst, 4}, {SymOp::kSlot, 0}, {SymOp::kMul}})};
  fn.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "n")}),
                 testing::tensor_pattern(DataType::float32(), {testing::check_dim(0, "n")}),
                 testing::prim_pattern(DataType::int64())};
  fn.matches = {testing::group({{0, 0, "argument x"}, {1, 1, "argument y"}, {2, 2, "argument k"}})};
  fn.code = {
      op(Opcode::kMatch, -1, 0),
      op(Opcode::kAllocStorage, 3, 64, {sym(1)}),
      op(Opcode::kAllocTensorAt, 4, 0, {reg(3), cst(1), imm(0), sym(0)}, DataType::float32()),
      op(Opcode::kAllocTensorAt, 5, 1, {reg(3), cst(2), sym(2), sym(0)}, DataType::float32()),
      op(Opcode::kCallKernel, -1, 0, {reg(0), reg(1), reg(4)}),
      op(Opcode::kCallKernel, -1, 0, {reg(4), reg(5), reg(5)}),
      op(Opcode::kAllocStorage, 6, 64, {sym(2)}),
      op(Opcode::kAllocTensorAt, 7, 0, {reg(6), cst(3), imm(0), sym(0)}, DataType::float32()),
      op(Opcode::kCallKernel, -1, 1, {reg(5), cst(0), reg(7)}),
      op(Opcode::kKill, -1, 0, {reg(3), reg(4), reg(5), reg(6)}),
      op(Opcode::kView, 8, 0, {reg(7), sym(0)}),
      op(Opcode::kAllocTensor, 9, 0, {sym(0)}, DataType::float32()),
      op(Opcode::kCallKernel, -1, 0, {reg(0), reg(7), reg(9)}),
      op(Opcode::kMakeTuple, 10, 0, {reg(7), reg(8), reg(9), reg(2)}),
      op(Opcode::kRet, -1, 0, {reg(10)}),
  };
  exec.functions.push_back(std::move(fn));
  return exec;
}

Executable call_program();

Module make_module(Executable exec, ReplayOptions options = {}) {
  absl::StatusOr<Module> m = Module::create(std::move(exec), testing::test_kernels());
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return Module();
  m->set_replay_options(options);
  return *m;
}

ReplayOptions record_at_first() {
  ReplayOptions o;
  o.record_on_call = 1;
  return o;
}

ReplayOptions replay_off() {
  ReplayOptions o;
  o.enabled = false;
  return o;
}

// Deterministic, size-dependent inputs (float bits that do not round to each other).
std::vector<Value> planned_args(int64_t n, int seed, int64_t k = 7) {
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = 0.37f * static_cast<float>(i + seed) - 1.1f / static_cast<float>(seed + 3);
    y[static_cast<size_t>(i)] = 1.0f / static_cast<float>(i + seed + 1);
  }
  return {Value(testing::f32({n}, x)), Value(testing::f32({n}, y)), Value(k)};
}

TEST(ReplayTest, OnePlanReplaysEverySizeBitExact) {
  const Module replayed = make_module(planned_program(), record_at_first());
  const Module interpreted = make_module(planned_program(), replay_off());
  ExecutionContext ctx_r, ctx_i;
  for (int round = 0; round < 3; ++round) {
    for (int64_t n : {1, 3, 16, 100, 1000}) {
      const std::vector<Value> args = planned_args(n, static_cast<int>(n) + round);
      absl::StatusOr<Value> want = interpreted["main"].call(ctx_i, args);
      absl::StatusOr<Value> got = replayed["main"].call(ctx_r, args);
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_TRUE(testing::values_equal(*got, *want)) << "n = " << n << ", round " << round;
      // Recorded at n = 1, replayed at every size after it.
      EXPECT_EQ(ctx_r.last_call_stats().replayed, round > 0 || n != 1 ? 1 : 0) << "n = " << n;
      EXPECT_EQ(ctx_i.last_call_stats().replayed, 0);
      // The same storage traffic as interpreted.
      EXPECT_EQ(ctx_r.last_call_stats().storage_requests, ctx_i.last_call_stats().storage_requests);
      EXPECT_EQ(ctx_r.last_call_stats().arena_bytes, ctx_i.last_call_stats().arena_bytes);
      EXPECT_EQ(ctx_r.last_call_stats().output_bytes, ctx_i.last_call_stats().output_bytes);
    }
  }
  const ReplayStats s = replayed.replay_stats();
  EXPECT_EQ(s.recorded, 1);
  EXPECT_EQ(s.replayed, 14);
  EXPECT_EQ(s.interpreted, 1);
  EXPECT_EQ(s.plans, 1);
  EXPECT_EQ(s.guard_misses, 0);
  EXPECT_EQ(ctx_r.num_replays(), 14);
  EXPECT_EQ(interpreted.replay_stats().replayed, 0);
}

TEST(ReplayTest, GrowingBindingsReplayOnePlanRecordedOnce) {
  // A decode loop's shape: every call a new binding (n = 1..40). The second call records (by
  // default), every later one replays that plan with its storage sizes (8 n, 4 n bytes), the
  // offset of b (4 n) and the shapes recomputed.
  const Module replayed = make_module(planned_program());
  const Module interpreted = make_module(planned_program(), replay_off());
  ExecutionContext ctx_r, ctx_i;
  for (int64_t n = 1; n <= 40; ++n) {
    const std::vector<Value> args = planned_args(n, static_cast<int>(n), n * 3);
    absl::StatusOr<Value> want = interpreted["main"].call(ctx_i, args);
    absl::StatusOr<Value> got = replayed["main"].call(ctx_r, args);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(testing::values_equal(*got, *want)) << "n = " << n;
    EXPECT_EQ(ctx_r.last_call_stats().replayed, n > 2 ? 1 : 0) << "n = " << n;
    EXPECT_EQ(ctx_r.last_call_stats().arena_bytes, ctx_i.last_call_stats().arena_bytes) << "n = " << n;
  }
  const ReplayStats s = replayed.replay_stats();
  EXPECT_EQ(s.recorded, 1);
  EXPECT_EQ(s.replayed, 38);
  EXPECT_EQ(s.interpreted, 2);
  EXPECT_EQ(s.plans, 1);
  EXPECT_EQ(s.guard_misses, 0);
  EXPECT_EQ(s.not_recordable, 0);
}

TEST(ReplayTest, RecordsOnTheSecondCallOfABindingByDefault) {
  const Module m = make_module(planned_program());
  ExecutionContext ctx;
  std::vector<int64_t> replayed;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(m["main"].call(ctx, planned_args(8, i)).ok());
    replayed.push_back(ctx.last_call_stats().replayed);
  }
  EXPECT_EQ(replayed, (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(m.replay_stats().recorded, 1);
}

TEST(ReplayTest, InputsAndIntArgumentsChangeBetweenCallsOfOneBinding) {
  const Module replayed = make_module(planned_program(), record_at_first());
  const Module interpreted = make_module(planned_program(), replay_off());
  ExecutionContext ctx;
  for (int i = 0; i < 6; ++i) {
    const std::vector<Value> args = planned_args(32, 100 + i, /*k=*/i * 11);
    absl::StatusOr<Value> got = replayed["main"].call(ctx, args);
    absl::StatusOr<Value> want = interpreted["main"](args[0], args[1], args[2]);
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_TRUE(testing::values_equal(*got, *want)) << "call " << i;
    EXPECT_EQ(got->fields_or_die()[3].int_value_or_die(), i * 11);
  }
  EXPECT_EQ(replayed.replay_stats().replayed, 5);
}

TEST(ReplayTest, OutputsAreFreshPerCallAndHeldOnesStayIntact) {
  const Module m = make_module(planned_program(), record_at_first());
  ExecutionContext ctx;
  std::vector<Value> held;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<Value> r = m["main"].call(ctx, planned_args(16, i));
    ASSERT_TRUE(r.ok());
    held.push_back(*r);
  }
  const Module reference = make_module(planned_program(), replay_off());
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<Value> want = reference["main"].call(planned_args(16, i));
    ASSERT_TRUE(want.ok());
    EXPECT_TRUE(testing::values_equal(held[static_cast<size_t>(i)], *want)) << "call " << i;
  }
  for (int i = 1; i < 4; ++i) {
    EXPECT_NE(held[static_cast<size_t>(i)].fields_or_die()[0].tensor_or_die().data(),
              held[static_cast<size_t>(i - 1)].fields_or_die()[0].tensor_or_die().data());
  }
  // The view shares its tensor's memory, as interpreted.
  EXPECT_EQ(held[3].fields_or_die()[1].tensor_or_die().data(), held[3].fields_or_die()[0].tensor_or_die().data());
}

TEST(ReplayTest, ArgumentChecksStillRunOnReplayedBindings) {
  const Module m = make_module(planned_program(), record_at_first());
  const Module reference = make_module(planned_program(), replay_off());
  ExecutionContext ctx;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(m["main"].call(ctx, planned_args(4, i)).ok());
  ASSERT_EQ(m.replay_stats().replayed, 1);
  // y of the wrong length, of the wrong dtype, k not an int, a missing argument: the
  // interpreter's messages, on the binding n = 4 that has a plan.
  std::vector<std::vector<Value>> bad = {
      {Value(testing::f32({4}, {1, 2, 3, 4})), Value(testing::f32({5}, {1, 2, 3, 4, 5})), Value(1)},
      {Value(testing::f32({4}, {1, 2, 3, 4})), Value(testing::i64({4}, {1, 2, 3, 4})), Value(1)},
      {Value(testing::f32({4}, {1, 2, 3, 4})), Value(testing::f32({4}, {1, 2, 3, 4})), Value(0.5)},
      {Value(testing::f32({4}, {1, 2, 3, 4})), Value(testing::f32({4}, {1, 2, 3, 4}))},
  };
  for (const std::vector<Value>& args : bad) {
    absl::StatusOr<Value> got = m["main"].call(ctx, args);
    absl::StatusOr<Value> want = reference["main"].call(args);
    ASSERT_FALSE(got.ok());
    ASSERT_FALSE(want.ok());
    EXPECT_EQ(got.status(), want.status());
  }
  EXPECT_EQ(message(m["main"].call(ctx, bad[0])), "main: argument y: dimension 0 is 5, expected n = 4");
  EXPECT_EQ(m.replay_stats().replayed, 1);
}

TEST(ReplayTest, AStridedArgumentOnARecordedBindingReplaysItsCompactCopy) {
  const Module m = make_module(planned_program(), record_at_first());
  ASSERT_TRUE(m["main"](testing::f32({2}, {1, 2}), testing::f32({2}, {3, 4}), Value(1)).ok());
  // x with stride 2: the call copies it compact before matching, so the recorded plan
  // (whose kernels get no strides) serves it.
  std::vector<float> buffer = {5, 0, 6, 0};
  const Tensor strided = Tensor::borrow(buffer.data(), {2}, DataType::float32(), {2});
  absl::StatusOr<Value> r = m["main"](strided, testing::f32({2}, {3, 4}), Value(1));
  absl::StatusOr<Value> want = m["main"](testing::f32({2}, {5, 6}), testing::f32({2}, {3, 4}), Value(1));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(testing::values_equal(*r, *want));
  EXPECT_EQ(m.replay_stats().argument_mismatches, 0);
  EXPECT_EQ(m.replay_stats().replayed, 2);
}

// main(x: f32[n]) = if 4 < n: x + x else: x * 0.5 -- a branch on the binding.
Executable branch_on_shape_program() {
  Executable exec;
  exec.kernel_names = {"add_kernel", "scale_kernel"};
  exec.constants = {Value(0.5)};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x"};
  fn.num_registers = 2;
  fn.slot_names = {"n"};
  fn.exprs = {testing::slot_program(0, "n"),
              testing::program("4 < n", {{SymOp::kConst, 4}, {SymOp::kSlot, 0}, {SymOp::kLt}})};
  fn.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "n")})};
  fn.matches = {testing::group({{0, 0, "argument x"}})};
  fn.code = {
      op(Opcode::kMatch, -1, 0),
      op(Opcode::kAllocTensor, 1, 0, {sym(0)}, DataType::float32()),
      op(Opcode::kIf, -1, 5, {sym(1)}),
      op(Opcode::kCallKernel, -1, 0, {reg(0), reg(0), reg(1)}),
      op(Opcode::kGoto, -1, 6),
      op(Opcode::kCallKernel, -1, 1, {reg(0), cst(0), reg(1)}),
      op(Opcode::kRet, -1, 0, {reg(1)}),
  };
  exec.functions.push_back(std::move(fn));
  return exec;
}

std::vector<float> iota(int64_t n, float from) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = from + static_cast<float>(i);
  return v;
}

TEST(ReplayTest, ABranchOnTheBindingTakenTheOtherWayIsInterpretedAndRecordsItsOwnPlan) {
  const Module m = make_module(branch_on_shape_program(), record_at_first());
  const Module reference = make_module(branch_on_shape_program(), replay_off());
  ExecutionContext ctx;
  // n = 1..4 take the else branch, 5..8 the then branch, then back.
  const std::vector<int64_t> sizes = {1, 2, 3, 4, 5, 6, 7, 8, 3, 6, 1};
  const std::vector<int64_t> expect_replayed = {0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const Tensor x = testing::f32({sizes[i]}, iota(sizes[i], 0.25f + static_cast<float>(i)));
    absl::StatusOr<Value> got = m["main"].call(ctx, {Value(x)});
    absl::StatusOr<Value> want = reference["main"](x);
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_TRUE(testing::values_equal(*got, *want)) << "n = " << sizes[i];
    EXPECT_EQ(ctx.last_call_stats().replayed, expect_replayed[i]) << "n = " << sizes[i];
  }
  const ReplayStats s = m.replay_stats();
  EXPECT_EQ(s.recorded, 2);
  EXPECT_EQ(s.plans, 2);
  EXPECT_EQ(s.guard_misses, 1);  // n = 5: the first plan's branch
  EXPECT_EQ(s.evicted, 0);
}

TEST(ReplayTest, AlternatingClassesEvictTheLeastRecentlyUsedPlan) {
  ReplayOptions options = record_at_first();
  options.max_plans_per_function = 1;
  const Module m = make_module(branch_on_shape_program(), options);
  const Module reference = make_module(branch_on_shape_program(), replay_off());
  ExecutionContext ctx;
  const std::vector<int64_t> sizes = {2, 3, 6, 7, 2, 9, 9};
  const std::vector<int64_t> expect_replayed = {0, 1, 0, 1, 0, 0, 1};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const Tensor x = testing::f32({sizes[i]}, iota(sizes[i], 1.5f));
    absl::StatusOr<Value> got = m["main"].call(ctx, {Value(x)});
    absl::StatusOr<Value> want = reference["main"](x);
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_TRUE(testing::values_equal(*got, *want)) << "call " << i;
    EXPECT_EQ(ctx.last_call_stats().replayed, expect_replayed[i]) << "call " << i << " (n = " << sizes[i] << ")";
  }
  const ReplayStats s = m.replay_stats();
  EXPECT_EQ(s.plans, 1);
  EXPECT_EQ(s.recorded, 4);
  EXPECT_EQ(s.evicted, 3);
  EXPECT_EQ(s.guard_misses, 3);
}

// main(x: f32[n]) = loop(x, 0); loop(y: f32[k], i: int j) = j < k ? loop(y + y, j + 1) : y: a
// loop whose trip count is the binding (x * 2^n), through kCallFunc.
Executable loop_program() {
  Executable exec;
  exec.kernel_names = {"add_kernel"};
  VMFunction main;
  main.name = "main";
  main.param_names = {"x"};
  main.num_registers = 3;
  main.slot_names = {"n"};
  main.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "n")})};
  main.matches = {testing::group({{0, 0, "argument x"}})};
  main.code = {op(Opcode::kMatch, -1, 0), op(Opcode::kMakeInt, 1, 0, {imm(0)}),
               op(Opcode::kCallFunc, 2, 1, {reg(0), reg(1)}), op(Opcode::kRet, -1, 0, {reg(2)})};
  VMFunction loop;
  loop.name = "loop";
  loop.param_names = {"y", "i"};
  loop.num_registers = 5;
  loop.slot_names = {"k", "j"};
  loop.exprs = {testing::slot_program(0, "k"),
                testing::program("j < k", {{SymOp::kSlot, 1}, {SymOp::kSlot, 0}, {SymOp::kLt}}),
                testing::program("j + 1", {{SymOp::kSlot, 1}, {SymOp::kConst, 1}, {SymOp::kAdd}})};
  loop.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "k")}),
                   testing::prim_pattern(DataType::int64(), {testing::bind_dim(1, "j")})};
  loop.matches = {testing::group({{0, 0, "argument y"}, {1, 1, "argument i"}})};
  loop.code = {
      op(Opcode::kMatch, -1, 0),
      op(Opcode::kIf, -1, 7, {sym(1)}),
      op(Opcode::kAllocTensor, 2, 0, {sym(0)}, DataType::float32()),
      op(Opcode::kCallKernel, -1, 0, {reg(0), reg(0), reg(2)}),
      op(Opcode::kMakeInt, 3, 0, {sym(2)}),
      op(Opcode::kCallFunc, 4, 1, {reg(2), reg(3)}),
      op(Opcode::kRet, -1, 0, {reg(4)}),
      op(Opcode::kRet, -1, 0, {reg(0)}),
  };
  exec.functions = {main, loop};
  return exec;
}

TEST(ReplayTest, ALoopWhoseTripCountDiffersIsInterpretedAndRecordsItsOwnPlan) {
  const Module m = make_module(loop_program(), record_at_first());
  ExecutionContext ctx;
  const std::vector<int64_t> sizes = {3, 3, 4, 4, 3, 5, 2, 5};
  const std::vector<int64_t> expect_replayed = {0, 1, 0, 1, 1, 0, 0, 1};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t n = sizes[i];
    const std::vector<float> xs = iota(n, static_cast<float>(i));
    absl::StatusOr<Value> got = m["main"].call(ctx, {Value(testing::f32({n}, xs))});
    ASSERT_TRUE(got.ok()) << got.status();
    std::vector<float> want = xs;
    for (float& w : want) w *= static_cast<float>(int64_t{1} << n);
    EXPECT_EQ(testing::elements<float>(got->tensor_or_die()), want) << "n = " << n;
    EXPECT_EQ(ctx.last_call_stats().replayed, expect_replayed[i]) << "call " << i << " (n = " << n << ")";
  }
  const ReplayStats s = m.replay_stats();
  EXPECT_EQ(s.recorded, 4);  // n = 3, 4, 5, 2
  EXPECT_EQ(s.guard_misses, 3);
  EXPECT_EQ(s.not_recordable, 0);
}

TEST(ReplayTest, ForgottenPlansAreNotReplayedFromTheThreadsLastPlan) {
  // The same arguments each call: after the first replay, calls take the thread's last plan
  // without the entry match; setting the options forgets it too.
  Module m = make_module(planned_program());
  const std::vector<Value> args = planned_args(8, 1);
  ExecutionContext ctx;
  std::vector<int64_t> replayed;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(m["main"].call(ctx, args).ok());
    replayed.push_back(ctx.last_call_stats().replayed);
  }
  m.set_replay_options(ReplayOptions{});
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Value> r = m["main"].call(ctx, args);
    ASSERT_TRUE(r.ok());
    replayed.push_back(ctx.last_call_stats().replayed);
  }
  EXPECT_EQ(replayed, (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1}));
  // Modules made after this one died (perhaps at its address) never run its plans.
  m = Module();
  for (int i = 0; i < 3; ++i) {
    const Module other = make_module(call_program(), record_at_first());
    ExecutionContext fresh;
    absl::StatusOr<Value> r = other["main"].call(fresh, {Value(testing::f32({2}, {1, 2}))});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(testing::elements<float>(r->tensor_or_die()), (std::vector<float>{4, 8}));
    EXPECT_EQ(fresh.last_call_stats().replayed, 0);
  }
}

TEST(ReplayTest, TurnedOffEveryCallIsInterpreted) {
  const Module m = make_module(planned_program(), replay_off());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(m["main"].call(planned_args(8, 1)).ok());
  EXPECT_EQ(m.replay_stats().replayed, 0);
  EXPECT_EQ(m.replay_stats().recorded, 0);
  EXPECT_FALSE(m.replay_options().enabled);
}

// main(x: f32[n], c: i64[1]): if c[0] != 0: x + x else: scale(x, 0.5) -- a branch on data.
Executable branch_on_data_program() {
  Executable exec;
  exec.kernel_names = {"add_kernel", "scale_kernel"};
  exec.constants = {Value(0.5)};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x", "c"};
  fn.num_registers = 4;
  fn.slot_names = {"n"};
  fn.exprs = {testing::slot_program(0, "n")};
  fn.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "n")}),
                 testing::tensor_pattern(DataType::int64(), {testing::any_dim()})};
  fn.matches = {testing::group({{0, 0, "argument x"}, {1, 1, "argument c"}})};
  fn.code = {
      op(Opcode::kMatch, -1, 0),
      op(Opcode::kAllocTensor, 2, 0, {sym(0)}, DataType::float32()),
      op(Opcode::kIf, -1, 5, {reg(1)}),
      op(Opcode::kCallKernel, -1, 0, {reg(0), reg(0), reg(2)}),
      op(Opcode::kGoto, -1, 6),
      op(Opcode::kCallKernel, -1, 1, {reg(0), cst(0), reg(2)}),
      op(Opcode::kRet, -1, 0, {reg(2)}),
  };
  exec.functions.push_back(std::move(fn));
  return exec;
}

TEST(ReplayTest, ABranchOnDataIsInterpreted) {
  const Module m = make_module(branch_on_data_program(), record_at_first());
  for (int i = 0; i < 6; ++i) {
    const int64_t c = i % 2;
    absl::StatusOr<Value> r = m["main"](testing::f32({2}, {3, 5}), testing::i64({1}, {c}));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(testing::elements<float>(r->tensor_or_die()),
              c != 0 ? std::vector<float>({6, 10}) : std::vector<float>({1.5f, 2.5f}));
  }
  const ReplayStats s = m.replay_stats();
  EXPECT_EQ(s.replayed, 0);
  EXPECT_EQ(s.recorded, 0);
  EXPECT_EQ(s.not_recordable, 1);  // once: the binding is remembered as not recordable
  EXPECT_EQ(s.interpreted, 6);
}

// main(x: f32[n], k: int): a match_cast binds m to k's value, and the kernel adds m.
Executable match_on_argument_value_program() {
  Executable exec;
  exec.kernel_names = {"add_int_kernel"};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x", "k"};
  fn.num_registers = 3;
  fn.slot_names = {"n", "m"};
  fn.exprs = {testing::slot_program(0, "n"), testing::slot_program(1, "m")};
  fn.patterns = {testing::tensor_pattern(DataType::int64(), {testing::bind_dim(0, "n")}),
                 testing::prim_pattern(DataType::int64()),
                 testing::prim_pattern(DataType::int64(), {testing::bind_dim(1, "m")})};
  fn.matches = {testing::group({{0, 0, "argument x"}, {1, 1, "argument k"}}),
                testing::group({{1, 2, "match_cast of k"}})};
  fn.code = {
      op(Opcode::kMatch, -1, 0),
      op(Opcode::kMatch, -1, 1),  // m := k
      op(Opcode::kAllocTensor, 2, 0, {sym(0)}, DataType::int64()),
      op(Opcode::kCallKernel, -1, 0, {reg(0), sym(1), reg(2)}),  // x + m
      op(Opcode::kRet, -1, 0, {reg(2)}),
  };
  exec.functions.push_back(std::move(fn));
  return exec;
}

TEST(ReplayTest, AMatchCastThatReadsAnIntArgumentReplaysWithItsValue) {
  // m is bound from k's value on every call: the plan's kernel argument is computed from it.
  const Module m = make_module(match_on_argument_value_program(), record_at_first());
  for (int64_t k : {1, 2, 3, 4, -9}) {
    absl::StatusOr<Value> r = m["main"](testing::i64({2}, {10, 20}), Value(k));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(testing::elements<int64_t>(r->tensor_or_die()), (std::vector<int64_t>{10 + k, 20 + k}));
  }
  EXPECT_EQ(m.replay_stats().replayed, 4);
  EXPECT_EQ(m.replay_stats().recorded, 1);
}

// main(x: f32[n]) = helper(helper(x)) with helper(y: f32[k]) = y + y into a storage of 4 k
// bytes at its one site: recorded through kCallFunc, the site serves both calls.
Executable call_program() {
  Executable exec;
  exec.kernel_names = {"add_kernel"};
  exec.constants = {Value(std::string("t"))};
  VMFunction main;
  main.name = "main";
  main.param_names = {"x"};
  main.num_registers = 3;
  main.slot_names = {"n"};
  main.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "n")})};
  main.matches = {testing::group({{0, 0, "argument x"}})};
  main.code = {op(Opcode::kMatch, -1, 0), op(Opcode::kCallFunc, 1, 1, {reg(0)}),
               op(Opcode::kCallFunc, 2, 1, {reg(1)}), op(Opcode::kRet, -1, 0, {reg(2)})};
  VMFunction helper;
  helper.name = "helper";
  helper.param_names = {"y"};
  helper.num_registers = 3;
  helper.slot_names = {"k"};
  helper.exprs = {testing::slot_program(0, "k"),
                  testing::program("4 * k", {{SymOp::kConst, 4}, {SymOp::kSlot, 0}, {SymOp::kMul}})};
  helper.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "k")})};
  helper.matches = {testing::group({{0, 0, "argument y"}})};
  helper.code = {op(Opcode::kMatch, -1, 0), op(Opcode::kAllocStorage, 1, 64, {sym(1)}),
                 op(Opcode::kAllocTensorAt, 2, 0, {reg(1), cst(0), imm(0), sym(0)}, DataType::float32()),
                 op(Opcode::kCallKernel, -1, 0, {reg(0), reg(0), reg(2)}), op(Opcode::kRet, -1, 0, {reg(2)})};
  exec.functions = {main, helper};
  return exec;
}

TEST(ReplayTest, CallsOfOtherFunctionsAreRecordedThrough) {
  const Module m = make_module(call_program(), record_at_first());
  ExecutionContext ctx;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Value> r = m["main"].call(ctx, {Value(testing::f32({3}, {1, 2, static_cast<float>(i)}))});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(testing::elements<float>(r->tensor_or_die()), (std::vector<float>{4, 8, 4.0f * static_cast<float>(i)}));
    EXPECT_EQ(ctx.last_call_stats().replayed, i > 0 ? 1 : 0);
    EXPECT_EQ(ctx.last_call_stats().storage_requests, 2);
  }
}

TEST(ReplayTest, AFailingKernelOnAReplayedCallReportsAsInterpreted) {
  // add_kernel checks its shapes: called on x: f32[n] and a constant f32[2], it fails unless
  // n == 2, and the failure is the kernel's own message, replayed or not.
  Executable exec;
  exec.kernel_names = {"add_kernel"};
  exec.constants = {Value(testing::f32({2}, {1, 1}))};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x"};
  fn.num_registers = 2;
  fn.slot_names = {"n"};
  fn.exprs = {testing::slot_program(0, "n")};
  fn.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "n")})};
  fn.matches = {testing::group({{0, 0, "argument x"}})};
  fn.code = {op(Opcode::kMatch, -1, 0), op(Opcode::kAllocTensor, 1, 0, {sym(0)}, DataType::float32()),
             op(Opcode::kCallKernel, -1, 0, {reg(0), cst(0), reg(1)}), op(Opcode::kRet, -1, 0, {reg(1)})};
  exec.functions.push_back(std::move(fn));
  const Module m = make_module(exec, record_at_first());
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Value> r = m["main"](testing::f32({2}, {1, static_cast<float>(i)}));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(testing::elements<float>(r->tensor_or_die()), (std::vector<float>{2, 1.0f + static_cast<float>(i)}));
  }
  EXPECT_EQ(m.replay_stats().replayed, 2);
  // n = 3 is in the plan's class: the replayed kernel fails as the interpreted one does.
  const Module reference = make_module(exec, replay_off());
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Value> r = m["main"](testing::f32({3}, {1, 2, 3}));
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(message(r), ::testing::StartsWith("main: kernel add_kernel: "));
    EXPECT_EQ(r.status(), reference["main"](testing::f32({3}, {1, 2, 3})).status());
  }
  EXPECT_EQ(m.replay_stats().replayed, 5);
  EXPECT_EQ(m.replay_stats().recorded, 1);
}

TEST(ReplayTest, ConcurrentCallsShareOneModulesPlans) {
  const Module m = make_module(planned_program());
  const Module reference = make_module(planned_program(), replay_off());
  const std::vector<int64_t> sizes = {1, 7, 64, 300};
  std::vector<Value> want;
  for (int64_t n : sizes) {
    absl::StatusOr<Value> r = reference["main"].call(planned_args(n, static_cast<int>(n)));
    ASSERT_TRUE(r.ok());
    want.push_back(*r);
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      ExecutionContext ctx;
      for (int i = 0; i < 200; ++i) {
        const size_t which = static_cast<size_t>(t + i) % sizes.size();
        // Every other call on the module's pool, the rest on the thread's own context.
        const std::vector<Value> args = planned_args(sizes[which], static_cast<int>(sizes[which]));
        absl::StatusOr<Value> r = i % 2 == 0 ? m["main"].call(ctx, args) : m["main"].call(args);
        if (!r.ok() || !testing::values_equal(*r, want[which])) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  const ReplayStats s = m.replay_stats();
  EXPECT_EQ(s.replayed + s.interpreted, 8 * 200);
  EXPECT_GT(s.replayed, 0);
  EXPECT_EQ(s.plans, 1);
  // How many calls the threads interpreted before the plan existed depends on their scheduling;
  // once it exists, every call of every size replays it (checked here, free of that scheduling).
  for (size_t which = 0; which < sizes.size(); ++which) {
    absl::StatusOr<Value> r = m["main"].call(planned_args(sizes[which], static_cast<int>(sizes[which])));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(testing::values_equal(*r, want[which]));
  }
  EXPECT_EQ(m.replay_stats().replayed, s.replayed + static_cast<int64_t>(sizes.size()));
  EXPECT_EQ(m.replay_stats().plans, 1);
}

TEST(ReplayTest, EightThreadsWithGrowingBindingsShareOnePlan) {
  // Each thread its own sequence of bindings, every call a new one for it (n = 1 + t + 8 i),
  // compared bit for bit with the interpreter on the same thread.
  const Module m = make_module(planned_program());
  const Module reference = make_module(planned_program(), replay_off());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  constexpr int kCalls = 60;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      ExecutionContext ctx;
      for (int i = 0; i < kCalls; ++i) {
        const int64_t n = 1 + t + 8 * i;
        const std::vector<Value> args = planned_args(n, t + i, i - t);
        absl::StatusOr<Value> r = m["main"].call(ctx, args);
        absl::StatusOr<Value> want = reference["main"].call(args);
        if (!r.ok() || !want.ok() || !testing::values_equal(*r, *want)) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  const ReplayStats s = m.replay_stats();
  EXPECT_EQ(s.replayed + s.interpreted, 8 * kCalls);
  EXPECT_EQ(s.recorded, 1);
  EXPECT_EQ(s.plans, 1);
  EXPECT_GT(s.replayed, 0);
  // Until the plan is recorded, threads interpret (how many calls depends on their scheduling);
  // after it, every new binding replays it: checked on one thread, free of that scheduling.
  for (int64_t n = 1000; n < 1010; ++n) {
    const std::vector<Value> args = planned_args(n, 3, -2);
    absl::StatusOr<Value> r = m["main"].call(args);
    absl::StatusOr<Value> want = reference["main"].call(args);
    ASSERT_TRUE(r.ok() && want.ok());
    EXPECT_TRUE(testing::values_equal(*r, *want));
  }
  EXPECT_EQ(m.replay_stats().replayed, s.replayed + 10);
  EXPECT_EQ(m.replay_stats().recorded, 1);
}

TEST(ReplayTest, AnUpperBoundExceededIsReportedOnAReplayedFunction) {
  // The entry match's declared bound (n <= 64) runs on every call; a callee's bound (k <= 8)
  // is a guard of the plan: a call that exceeds either is reported as interpreted.
  Executable exec = planned_program();
  exec.functions[0].matches[0].upper_bounds = {{0, 64}};
  Executable calls = call_program();
  calls.functions[1].matches[0].upper_bounds = {{0, 8}};
  const Module m = make_module(exec, record_at_first());
  const Module c = make_module(calls, record_at_first());
  ExecutionContext ctx, ctx_m;
  for (int64_t n = 1; n <= 8; ++n) {
    ASSERT_TRUE(m["main"].call(ctx_m, planned_args(n, 1)).ok());
    absl::StatusOr<Value> r = c["main"].call(ctx, {Value(testing::f32({n}, iota(n, 1)))});
    ASSERT_TRUE(r.ok()) << r.status();
  }
  EXPECT_EQ(m.replay_stats().replayed, 7);
  EXPECT_EQ(c.replay_stats().replayed, 7);
  EXPECT_EQ(message(m["main"].call(ctx_m, planned_args(65, 1))), "main: n = 65 exceeds its declared upper bound 64");
  EXPECT_EQ(message(c["main"].call(ctx, {Value(testing::f32({9}, iota(9, 1)))})),
            "helper: k = 9 exceeds its declared upper bound 8");
  EXPECT_EQ(c.replay_stats().guard_misses, 1);
  EXPECT_EQ(c.replay_stats().replayed, 7);
  // Within the bounds again: replayed.
  ASSERT_TRUE(c["main"].call(ctx, {Value(testing::f32({5}, iota(5, 1)))}).ok());
  EXPECT_EQ(ctx.last_call_stats().replayed, 1);
}

// main(x: f32[n]): a storage of 64 bytes at its one site, t = f32[n] in it, t = x + x: fits up
// to n = 16.
Executable fixed_storage_program() {
  Executable exec;
  exec.kernel_names = {"add_kernel"};
  exec.constants = {Value(std::string("t"))};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x"};
  fn.num_registers = 3;
  fn.slot_names = {"n"};
  fn.exprs = {testing::slot_program(0, "n")};
  fn.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "n")})};
  fn.matches = {testing::group({{0, 0, "argument x"}})};
  fn.code = {op(Opcode::kMatch, -1, 0), op(Opcode::kAllocStorage, 1, 64, {imm(64)}),
             op(Opcode::kAllocTensorAt, 2, 0, {reg(1), cst(0), imm(0), sym(0)}, DataType::float32()),
             op(Opcode::kCallKernel, -1, 0, {reg(0), reg(0), reg(2)}), op(Opcode::kRet, -1, 0, {reg(2)})};
  exec.functions.push_back(std::move(fn));
  return exec;
}

TEST(ReplayTest, ATensorThatNoLongerFitsItsStorageIsReportedAsInterpreted) {
  const Module m = make_module(fixed_storage_program(), record_at_first());
  const Module reference = make_module(fixed_storage_program(), replay_off());
  for (int64_t n : {4, 16, 1}) {
    const Tensor x = testing::f32({n}, iota(n, 2));
    absl::StatusOr<Value> got = m["main"](x);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(testing::values_equal(*got, *reference["main"](x))) << "n = " << n;
  }
  EXPECT_EQ(m.replay_stats().replayed, 2);
  const Tensor big = testing::f32({17}, iota(17, 2));
  absl::StatusOr<Value> got = m["main"](big);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status(), reference["main"](big).status());
  EXPECT_THAT(message(got), ::testing::HasSubstr("does not fit in 64 bytes"));
  EXPECT_EQ(m.replay_stats().replayed, 2);
  EXPECT_EQ(m.replay_stats().guard_misses, 1);
}

// main(x: f32[n]) = halves(x); halves(y: f32[2 k]) = view(y, (2, k)) * 2, into a fresh f32[2, k]:
// k is solved from y's dim in the callee's match, exactly (an odd n fails there).
Executable solve_program() {
  Executable exec;
  exec.kernel_names = {"add_kernel"};
  VMFunction main;
  main.name = "main";
  main.param_names = {"x"};
  main.num_registers = 2;
  main.slot_names = {"n"};
  main.patterns = {testing::tensor_pattern(DataType::float32(), {testing::bind_dim(0, "n")})};
  main.matches = {testing::group({{0, 0, "argument x"}})};
  main.code = {op(Opcode::kMatch, -1, 0), op(Opcode::kCallFunc, 1, 1, {reg(0)}), op(Opcode::kRet, -1, 0, {reg(1)})};
  VMFunction halves;
  halves.name = "halves";
  halves.param_names = {"y"};
  halves.num_registers = 3;
  halves.slot_names = {"k"};
  halves.exprs = {testing::slot_program(0, "k"), testing::const_program(0)};
  halves.patterns = {testing::tensor_pattern(DataType::float32(), {testing::solve_dim(0, 2, 1, "2 * k")})};
  halves.matches = {testing::group({{0, 0, "argument y"}})};
  halves.code = {op(Opcode::kMatch, -1, 0), op(Opcode::kView, 1, 0, {reg(0), imm(2), sym(0)}),
                 op(Opcode::kAllocTensor, 2, 0, {imm(2), sym(0)}, DataType::float32()),
                 op(Opcode::kCallKernel, -1, 0, {reg(1), reg(1), reg(2)}), op(Opcode::kRet, -1, 0, {reg(2)})};
  exec.functions = {main, halves};
  return exec;
}

TEST(ReplayTest, ASolvedDimOfACalleeIsRecomputedAndAnInexactOneIsReported) {
  const Module m = make_module(solve_program(), record_at_first());
  const Module reference = make_module(solve_program(), replay_off());
  for (int64_t n = 2; n <= 20; n += 2) {
    const Tensor x = testing::f32({n}, iota(n, 0.5f));
    absl::StatusOr<Value> got = m["main"](x);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(testing::values_equal(*got, *reference["main"](x))) << "n = " << n;
    EXPECT_EQ(got->tensor_or_die().shape(), (std::vector<int64_t>{2, n / 2}));
  }
  EXPECT_EQ(m.replay_stats().replayed, 9);
  const Tensor odd = testing::f32({7}, iota(7, 0.5f));
  absl::StatusOr<Value> got = m["main"](odd);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status(), reference["main"](odd).status());
  EXPECT_THAT(message(got), ::testing::StartsWith("halves: argument y: dimension 0 is 7, which is not 2 * k"));
  EXPECT_EQ(m.replay_stats().replayed, 9);
  EXPECT_EQ(m.replay_stats().guard_misses, 1);
}

}  // namespace
}  // namespace relax::runtime
