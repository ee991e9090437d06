// Execution-plan replay (relax/runtime/replay.h) on hand-built executables: a replayed call is
// bit for bit the interpreted one at every size, inputs and int arguments are patched per call,
// outputs are fresh per call, the argument checks still run (same messages), bindings are
// cached and evicted, what cannot be recorded (a branch on data, a builtin, a match_cast that
// reads an argument's value) is interpreted, calls through kCallFunc are recorded through, and
// many threads share one module's plans.
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

TEST(ReplayTest, ReplayedCallsAreBitExactAtEverySize) {
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
      EXPECT_EQ(ctx_r.last_call_stats().replayed, round > 0 ? 1 : 0) << "n = " << n;
      EXPECT_EQ(ctx_i.last_call_stats().replayed, 0);
      // The same storage traffic as interpreted.
      EXPECT_EQ(ctx_r.last_call_stats().storage_requests, ctx_i.last_call_stats().storage_requests);
      EXPECT_EQ(ctx_r.last_call_stats().arena_bytes, ctx_i.last_call_stats().arena_bytes);
      EXPECT_EQ(ctx_r.last_call_stats().output_bytes, ctx_i.last_call_stats().output_bytes);
    }
  }
  const ReplayStats s = replayed.replay_stats();
  EXPECT_EQ(s.recorded, 5);
  EXPECT_EQ(s.replayed, 10);
  EXPECT_EQ(s.interpreted, 5);
  EXPECT_EQ(s.plans, 5);
  EXPECT_EQ(ctx_r.num_replays(), 10);
  EXPECT_EQ(interpreted.replay_stats().replayed, 0);
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

TEST(ReplayTest, AStridedArgumentOnARecordedBindingIsInterpreted) {
  const Module m = make_module(planned_program(), record_at_first());
  ASSERT_TRUE(m["main"](testing::f32({2}, {1, 2}), testing::f32({2}, {3, 4}), Value(1)).ok());
  // x with stride 2: the plan's kernels would get no strides, so the call is interpreted and
  // add_kernel sees them (and refuses them, as interpreted).
  std::vector<float> buffer = {1, 0, 2, 0};
  const Tensor strided = Tensor::borrow(buffer.data(), {2}, DataType::float32(), {2});
  absl::StatusOr<Value> r = m["main"](strided, testing::f32({2}, {3, 4}), Value(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(message(r), "main: kernel add_kernel: argument 0 is not compact");
  EXPECT_EQ(m.replay_stats().argument_mismatches, 1);
  EXPECT_EQ(m.replay_stats().replayed, 0);
  ASSERT_TRUE(m["main"](testing::f32({2}, {1, 2}), testing::f32({2}, {3, 4}), Value(1)).ok());
  EXPECT_EQ(m.replay_stats().replayed, 1);
}

TEST(ReplayTest, AlternatingSizesHitMissAndEvictTheLeastRecentlyUsed) {
  ReplayOptions options = record_at_first();
  options.max_plans_per_function = 2;
  const Module m = make_module(planned_program(), options);
  const Module reference = make_module(planned_program(), replay_off());
  ExecutionContext ctx;
  // 1 2 1 2 1 3 (evicts 2) 1 2 (evicts 3) ...
  const std::vector<int64_t> sizes = {1, 2, 1, 2, 1, 3, 1, 2, 2, 3, 3, 1};
  const std::vector<int64_t> expect_replayed = {0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::vector<Value> args = planned_args(sizes[i], static_cast<int>(i));
    absl::StatusOr<Value> got = m["main"].call(ctx, args);
    absl::StatusOr<Value> want = reference["main"].call(args);
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_TRUE(testing::values_equal(*got, *want)) << "call " << i;
    EXPECT_EQ(ctx.last_call_stats().replayed, expect_replayed[i]) << "call " << i << " (n = " << sizes[i] << ")";
  }
  const ReplayStats s = m.replay_stats();
  EXPECT_EQ(s.plans, 2);
  EXPECT_EQ(s.evicted, 4);
  EXPECT_EQ(s.recorded, 6);
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

// main(x: f32[n], k: int) with a branch on k > 0 computed from... the argument k itself, and a
// match_cast reading k's value: neither is fixed by the binding (n).
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

TEST(ReplayTest, AMatchCastThatReadsAnArgumentsValueIsInterpreted) {
  const Module m = make_module(match_on_argument_value_program(), record_at_first());
  for (int64_t k : {1, 2, 3, 4}) {
    absl::StatusOr<Value> r = m["main"](testing::i64({2}, {10, 20}), Value(k));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(testing::elements<int64_t>(r->tensor_or_die()), (std::vector<int64_t>{10 + k, 20 + k}));
  }
  EXPECT_EQ(m.replay_stats().replayed, 0);
  EXPECT_EQ(m.replay_stats().not_recordable, 1);
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
  // A failed call records nothing: n = 3 fails the same way every time.
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Value> r = m["main"](testing::f32({3}, {1, 2, 3}));
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(message(r), ::testing::StartsWith("main: kernel add_kernel: "));
  }
  EXPECT_EQ(m.replay_stats().replayed, 2);
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
  EXPECT_GT(s.replayed, 8 * 200 - 100);
  EXPECT_EQ(s.plans, 4);
}

}  // namespace
}  // namespace relax::runtime
