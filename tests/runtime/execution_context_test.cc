// ExecutionContext: the storages an alloc_storage site keeps and lends again, what keeps one
// out of reuse (an output the caller holds, a DLPack export of it), growth of a symbolic arena,
// the per-call statistics, the module pool of Function::call and the guards of a context (one
// call at a time, one module). Hand-built executables, library functions for the kernels.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "relax/runtime/execution_context.h"
#include "relax/runtime/module.h"
#include "test_programs.h"
#include "vm_test_util.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using testing::cst;
using testing::imm;
using testing::message;
using testing::op;
using testing::reg;
using testing::sym;

constexpr int64_t kConstantArena = 512;

// The size operand of the arena: a constant (a plan under upper bounds), 8 * n (a symbolic
// plan), or the parameter `bytes` (any size the test wants).
enum class ArenaSize { kConstant, kSymbolic, kParameter };

// main(n, bytes, v): an arena (see ArenaSize) holding t = int64[n] filled with v; an output
// storage of 8 * n bytes holding y = int64[n], y[i] = t[i] + i; the arena killed; returns y.
Executable arena_program(ArenaSize size) {
  Executable exec;
  exec.constants = {Value(std::string("t")), Value(std::string("y"))};
  exec.library_functions = {testing::kFillInt64, "execution_context_test.plus_index"};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"n", "bytes", "v"};
  fn.num_registers = 7;
  fn.slot_names = {"n", "bytes"};
  fn.patterns = {testing::prim_pattern(DataType::int64(), {testing::bind_dim(0, "n")}),
                 testing::prim_pattern(DataType::int64(), {testing::bind_dim(1, "bytes")}),
                 testing::prim_pattern(DataType::int64())};
  fn.matches = {testing::group({{0, 0, "argument n"}, {1, 1, "argument bytes"}, {2, 2, "argument v"}})};
  fn.exprs = {testing::slot_program(0, "n"), testing::slot_program(1, "bytes"),
              testing::program("8 * n", {{SymOp::kConst, 8}, {SymOp::kSlot, 0}, {SymOp::kMul}})};
  const Operand arena = size == ArenaSize::kConstant   ? imm(kConstantArena)
                        : size == ArenaSize::kSymbolic ? sym(2)
                                                       : sym(1);
  fn.code = {
      op(Opcode::kMatch, -1, 0),
      op(Opcode::kAllocStorage, 3, 64, {arena}),
      op(Opcode::kAllocTensorAt, 4, 0, {reg(3), cst(0), imm(0), sym(0)}, DataType::int64()),
      op(Opcode::kCallLibrary, -1, 0, {reg(4), reg(2)}),
      op(Opcode::kAllocStorage, 5, 64, {sym(2)}),
      op(Opcode::kAllocTensorAt, 6, 0, {reg(5), cst(1), imm(0), sym(0)}, DataType::int64()),
      op(Opcode::kCallLibrary, -1, 1, {reg(4), reg(6)}),
      op(Opcode::kKill, -1, 0, {reg(3), reg(4)}),
      op(Opcode::kRet, -1, 0, {reg(6)}),
  };
  exec.functions.push_back(fn);
  return exec;
}

void register_kernels() {
  testing::register_fill_int64();
  static const bool registered = [] {
    register_library_function("execution_context_test.plus_index", [](const std::vector<Value>& args) {
      const int64_t* t = args[0].tensor_or_die().data_as_or_die<int64_t>();
      const Tensor& y = args[1].tensor_or_die();
      for (int64_t i = 0; i < y.numel(); ++i) y.data_as_or_die<int64_t>()[i] = t[i] + i;
      return absl::OkStatus();
    });
    return true;
  }();
  (void)registered;
}

Module make_module(ArenaSize size) {
  register_kernels();
  absl::StatusOr<Module> m = Module::create(arena_program(size), nullptr);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

// v + i for i < n: what main(n, _, v) returns.
std::vector<int64_t> expected(int64_t n, int64_t v) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = v + i;
  return out;
}

absl::StatusOr<Value> call(const Module& m, ExecutionContext& ctx, int64_t n, int64_t v, int64_t bytes = 0) {
  return m["main"].call(ctx, {Value(n), Value(bytes), Value(v)});
}

TEST(ExecutionContextTest, AConstantArenaIsAllocatedOnceAndReusedAtEverySize) {
  const Module m = make_module(ArenaSize::kConstant);
  ExecutionContext ctx;
  EXPECT_EQ(ctx.reserved_bytes(), 0);
  {
    absl::StatusOr<Value> y = call(m, ctx, 4, 10);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(testing::elements<int64_t>(y->tensor_or_die()), expected(4, 10));
  }
  CallMemoryStats s = ctx.last_call_stats();
  EXPECT_EQ(s.storage_requests, 2);
  EXPECT_EQ(s.reused, 0);
  EXPECT_EQ(s.allocator_calls, 2);
  EXPECT_EQ(s.arena_bytes, kConstantArena);
  EXPECT_EQ(s.output_bytes, 32);
  EXPECT_EQ(s.reserved_bytes, kConstantArena + 32);
  // Smaller sizes reuse both storages: no allocator call.
  for (int64_t n : {1, 3, 4, 2}) {
    absl::StatusOr<Value> y = call(m, ctx, n, n * 100);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(testing::elements<int64_t>(y->tensor_or_die()), expected(n, n * 100));
    s = ctx.last_call_stats();
    EXPECT_EQ(s.allocator_calls, 0) << "n = " << n;
    EXPECT_EQ(s.reused, 2);
    EXPECT_EQ(s.arena_bytes, kConstantArena);
    EXPECT_EQ(s.output_bytes, 8 * n);
    EXPECT_EQ(s.reserved_bytes, kConstantArena + 32);
  }
  // A larger output replaces the kept one; the arena stays.
  ASSERT_TRUE(call(m, ctx, 9, 1).ok());
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 1);
  EXPECT_EQ(ctx.reserved_bytes(), kConstantArena + 72);
  ASSERT_TRUE(call(m, ctx, 5, 1).ok());
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 0);
  EXPECT_EQ(ctx.num_calls(), 7);
  EXPECT_EQ(ctx.total_allocator_calls(), 3);
}

TEST(ExecutionContextTest, AReturnedOutputIsNeverOverwrittenByALaterCall) {
  const Module m = make_module(ArenaSize::kConstant);
  ExecutionContext ctx;
  absl::StatusOr<Value> first = call(m, ctx, 4, 10);
  ASSERT_TRUE(first.ok()) << first.status();
  // The caller keeps the first output: the second call must put its output elsewhere.
  absl::StatusOr<Value> second = call(m, ctx, 4, 20);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(first->tensor_or_die().data(), second->tensor_or_die().data());
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 1);  // the output; the arena was free
  EXPECT_EQ(testing::elements<int64_t>(first->tensor_or_die()), expected(4, 10));
  EXPECT_EQ(testing::elements<int64_t>(second->tensor_or_die()), expected(4, 20));
  // Both kept, both held: a third call allocates again.
  absl::StatusOr<Value> third = call(m, ctx, 4, 30);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 1);
  EXPECT_EQ(testing::elements<int64_t>(first->tensor_or_die()), expected(4, 10));
  EXPECT_EQ(testing::elements<int64_t>(second->tensor_or_die()), expected(4, 20));
  EXPECT_EQ(ctx.reserved_bytes(), kConstantArena + 3 * 32);

  // A view of an output and a DLPack export of one hold the storage just as well.
  const void* first_data = first->tensor_or_die().data();
  const void* second_data = second->tensor_or_die().data();
  absl::StatusOr<Tensor> view = first->tensor_or_die().view(8, {2}, DataType::int64());
  ASSERT_TRUE(view.ok());
  DLManagedTensor* exported = second->tensor_or_die().to_dlpack();
  first = Value();
  second = Value();
  third = Value();  // the third output's storage is free now
  for (int64_t v = 40; v < 44; ++v) {
    absl::StatusOr<Value> y = call(m, ctx, 4, v);
    ASSERT_TRUE(y.ok());
    EXPECT_NE(y->tensor_or_die().data(), first_data);
    EXPECT_NE(y->tensor_or_die().data(), second_data);
    EXPECT_EQ(ctx.last_call_stats().allocator_calls, 0);
  }
  EXPECT_EQ(testing::elements<int64_t>(*view), (std::vector<int64_t>{11, 12}));
  EXPECT_EQ(static_cast<const int64_t*>(exported->dl_tensor.data)[3], 23);
  exported->deleter(exported);
  // Released: the next calls may use those storages again.
  *view = Tensor();
  std::vector<const void*> outputs;
  std::vector<Value> held;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Value> y = call(m, ctx, 4, i);
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(ctx.last_call_stats().allocator_calls, 0);
    outputs.push_back(y->tensor_or_die().data());
    held.push_back(*y);
  }
  EXPECT_THAT(outputs, ::testing::UnorderedElementsAre(first_data, second_data, ::testing::_));
}

TEST(ExecutionContextTest, OutputsTheCallerDroppedAreReused) {
  const Module m = make_module(ArenaSize::kConstant);
  ExecutionContext ctx;
  // The usual loop `y = f(x)`: the previous output is alive while the next call runs.
  Value y;
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<Value> r = call(m, ctx, 4, i);
    ASSERT_TRUE(r.ok()) << r.status();
    y = *std::move(r);
    EXPECT_EQ(testing::elements<int64_t>(y.tensor_or_die()), expected(4, i));
    EXPECT_EQ(ctx.last_call_stats().allocator_calls, i == 0 ? 2 : i == 1 ? 1 : 0) << "call " << i;
  }
  EXPECT_EQ(ctx.reserved_bytes(), kConstantArena + 2 * 32);
}

TEST(ExecutionContextTest, ASymbolicArenaGrowsToTheLargestCallAndStays) {
  const Module m = make_module(ArenaSize::kSymbolic);
  ExecutionContext ctx;
  int64_t largest = 0;
  for (int64_t n : {3, 2, 7, 5, 7, 1, 12, 4, 11}) {
    absl::StatusOr<Value> y = call(m, ctx, n, 5);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(testing::elements<int64_t>(y->tensor_or_die()), expected(n, 5));
    const bool grows = n > largest;
    largest = std::max(largest, n);
    const CallMemoryStats& s = ctx.last_call_stats();
    EXPECT_EQ(s.allocator_calls, grows ? 2 : 0) << "n = " << n;
    EXPECT_EQ(s.arena_bytes, 8 * n);
    // Arena and output both at the largest size seen: never more.
    EXPECT_EQ(s.reserved_bytes, 2 * 8 * largest) << "n = " << n;
  }
}

TEST(ExecutionContextTest, AHeldOutputDoesNotMakeItsSiteGrowAgain) {
  const Module m = make_module(ArenaSize::kSymbolic);
  ExecutionContext ctx;
  // `y = f(x)` at shrinking and growing sizes: the storage added while the previous output is
  // held gets the site's largest size, so the two outputs' storages serve every later size.
  Value y;
  const std::vector<int64_t> sizes = {8, 2, 5, 3, 7, 1, 8, 4};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t n = sizes[i];
    absl::StatusOr<Value> r = call(m, ctx, n, 1);
    ASSERT_TRUE(r.ok()) << r.status();
    y = *std::move(r);
    EXPECT_EQ(testing::elements<int64_t>(y.tensor_or_die()), expected(n, 1));
    EXPECT_EQ(ctx.last_call_stats().allocator_calls, i == 0 ? 2 : i == 1 ? 1 : 0) << "call " << i;
    EXPECT_EQ(ctx.last_call_stats().reserved_bytes, i == 0 ? 2 * 64 : 3 * 64) << "call " << i;
  }
}

// Unplanned code: a chain of kLinks storages, each killed once the next link is written.
Executable chain_program(int links) {
  Executable exec;
  exec.constants = {Value(std::string("t"))};
  exec.library_functions = {testing::kFillInt64, "execution_context_test.plus_index"};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"n"};
  fn.num_registers = 5;  // n, then storage and tensor of the previous and the current link
  fn.slot_names = {"n"};
  fn.patterns = {testing::prim_pattern(DataType::int64(), {testing::bind_dim(0, "n")})};
  fn.matches = {testing::group({{0, 0, "argument n"}})};
  fn.exprs = {testing::slot_program(0, "n"),
              testing::program("8 * n", {{SymOp::kConst, 8}, {SymOp::kSlot, 0}, {SymOp::kMul}})};
  fn.code = {op(Opcode::kMatch, -1, 0), op(Opcode::kAllocStorage, 1, 64, {sym(1)}),
             op(Opcode::kAllocTensorAt, 2, 0, {reg(1), cst(0), imm(0), sym(0)}, DataType::int64()),
             op(Opcode::kCallLibrary, -1, 0, {reg(2), imm(0)})};
  for (int k = 0; k < links; ++k) {
    fn.code.push_back(op(Opcode::kAllocStorage, 3, 64, {sym(1)}));
    fn.code.push_back(op(Opcode::kAllocTensorAt, 4, 0, {reg(3), cst(0), imm(0), sym(0)}, DataType::int64()));
    fn.code.push_back(op(Opcode::kCallLibrary, -1, 1, {reg(2), reg(4)}));
    fn.code.push_back(op(Opcode::kKill, -1, 0, {reg(1), reg(2)}));
    fn.code.push_back(op(Opcode::kMove, 1, 0, {reg(3)}));
    fn.code.push_back(op(Opcode::kMove, 2, 0, {reg(4)}));
    fn.code.push_back(op(Opcode::kKill, -1, 0, {reg(3), reg(4)}));
  }
  fn.code.push_back(op(Opcode::kRet, -1, 0, {reg(2)}));
  exec.functions.push_back(fn);
  return exec;
}

TEST(ExecutionContextTest, UnplannedCodePassesAFewStoragesFromSiteToSite) {
  register_kernels();
  constexpr int kLinks = 100;
  absl::StatusOr<Module> m = Module::create(chain_program(kLinks), nullptr);
  ASSERT_TRUE(m.ok()) << m.status();
  ExecutionContext ctx;
  for (int call = 0; call < 3; ++call) {
    absl::StatusOr<Value> y = (*m)["main"].call(ctx, {Value(int64_t{4})});
    ASSERT_TRUE(y.ok()) << y.status();
    // Link k adds i to every element i: y[i] = kLinks * i.
    std::vector<int64_t> want(4);
    for (int64_t i = 0; i < 4; ++i) want[static_cast<size_t>(i)] = kLinks * i;
    EXPECT_EQ(testing::elements<int64_t>(y->tensor_or_die()), want);
    const CallMemoryStats& s = ctx.last_call_stats();
    EXPECT_EQ(s.storage_requests, kLinks + 1);
    // Two storages live at a time, not one kept per site.
    EXPECT_EQ(s.allocator_calls, call == 0 ? 2 : 0) << "call " << call;
    EXPECT_EQ(s.reserved_bytes, 2 * 32) << "call " << call;
  }
}

TEST(ExecutionContextTest, AStorageTooSmallForItsTensorIsStillAnError) {
  // The arena's size is the argument `bytes`: a kept larger storage must not hide that this
  // call's arena is too small for t.
  const Module m = make_module(ArenaSize::kParameter);
  ExecutionContext ctx;
  ASSERT_TRUE(call(m, ctx, 10, 1, /*bytes=*/80).ok());
  absl::StatusOr<Value> y = call(m, ctx, 10, 1, /*bytes=*/16);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(message(y),
            "main: alloc_tensor t: offset 0 + (10,) int64 (10 * 8 bytes) does not fit in 16 bytes of "
            "its storage");
  y = call(m, ctx, 10, 1, /*bytes=*/-8);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(message(y), "main: alloc_storage: size -8 bytes is negative");
  // The failed calls left the context usable, its storages free.
  y = call(m, ctx, 10, 3, 80);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(testing::elements<int64_t>(y->tensor_or_die()), expected(10, 3));
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 0);
}

TEST(ExecutionContextTest, ReleaseUnusedDropsOnlyFreeStorages) {
  const Module m = make_module(ArenaSize::kConstant);
  ExecutionContext ctx;
  absl::StatusOr<Value> y = call(m, ctx, 4, 1);
  ASSERT_TRUE(y.ok());
  ctx.release_unused();
  EXPECT_EQ(ctx.reserved_bytes(), 32);  // the output, still held
  y = absl::StatusOr<Value>(Value());
  ctx.release_unused();
  EXPECT_EQ(ctx.reserved_bytes(), 0);
  ASSERT_TRUE(call(m, ctx, 4, 1).ok());
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 2);
}

TEST(ExecutionContextTest, AContextThatKeepsNothingAllocatesPerCallAndGivesEverythingBack) {
  const Module m = make_module(ArenaSize::kConstant);
  PooledAllocator pool;
  {
    ExecutionContext ctx(&pool, /*keep_storages=*/false);
    for (int64_t n : {4, 7, 4}) {
      absl::StatusOr<Value> y = call(m, ctx, n, 3);
      ASSERT_TRUE(y.ok()) << y.status();
      EXPECT_EQ(testing::elements<int64_t>(y->tensor_or_die()), expected(n, 3));
      EXPECT_EQ(ctx.last_call_stats().allocator_calls, 2);  // arena and output, every call
      EXPECT_EQ(ctx.last_call_stats().reused, 0);
      EXPECT_EQ(ctx.last_call_stats().arena_bytes, kConstantArena);
      EXPECT_EQ(ctx.reserved_bytes(), 0);
      // The arena went back when the call killed it; the output is the caller's.
      EXPECT_EQ(pool.stats().bytes_in_use, 64);  // one pool block (64-byte class) for y
    }
    EXPECT_EQ(pool.stats().bytes_in_use, 0);
    EXPECT_EQ(pool.stats().peak_bytes_in_use, kConstantArena + 64);
  }
}

TEST(ExecutionContextTest, HandWrittenAllocTensorCountsAsAnAllocatorCall) {
  ExecutionContext ctx;
  absl::StatusOr<Module> m = Module::create(testing::add_program(), testing::test_kernels());
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Value> y = (*m)["main"].call(ctx, {Value(testing::f32({2}, {1, 2})),
                                                     Value(testing::f32({2}, {3, 4}))});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 1);
  EXPECT_EQ(ctx.last_call_stats().storage_requests, 0);
  EXPECT_EQ(ctx.reserved_bytes(), 0);
}

TEST(ExecutionContextTest, TheModulePoolKeepsItsContextsAcrossCalls) {
  const Module m = make_module(ArenaSize::kConstant);
  const Function main_fn = m["main"];
  CallMemoryStats s;
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<Value> y = main_fn.call({Value(int64_t{3}), Value(int64_t{0}), Value(int64_t{i})}, &s);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(testing::elements<int64_t>(y->tensor_or_die()), expected(3, i));
    EXPECT_EQ(s.allocator_calls, i == 0 ? 2 : 0) << "call " << i;
    EXPECT_EQ(s.reserved_bytes, kConstantArena + 24);
  }
  // A Function outlives its Module object, and so does the pool.
  Function kept;
  {
    const Module other = make_module(ArenaSize::kConstant);
    kept = other["main"];
  }
  ASSERT_TRUE(kept(int64_t{2}, int64_t{0}, int64_t{1}).ok());
  ASSERT_TRUE(kept.call({Value(int64_t{2}), Value(int64_t{0}), Value(int64_t{1})}, &s).ok());
  EXPECT_EQ(s.allocator_calls, 0);
}

TEST(ExecutionContextTest, AContextServesOneModuleAtATime) {
  ExecutionContext ctx;
  Module a = make_module(ArenaSize::kConstant);
  ASSERT_TRUE(call(a, ctx, 2, 1).ok());
  const Module b = make_module(ArenaSize::kSymbolic);
  absl::StatusOr<Value> y = call(b, ctx, 2, 1);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(message(y),
            "main: ExecutionContext: this context serves another module (a context serves the "
            "module it first ran: use one per module)");
  // Once the first module is gone, the context starts afresh for another.
  a = Module();
  y = call(b, ctx, 2, 1);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ctx.last_call_stats().allocator_calls, 2);
  EXPECT_EQ(ctx.reserved_bytes(), 32);
}

TEST(ExecutionContextTest, AContextRunsOneCallAtATime) {
  // A library function that calls the module again on the context already running.
  static ExecutionContext* running = nullptr;  // null: the nested call uses the pool
  static Function* inner = nullptr;
  static absl::Status nested;
  static int depth = 0;
  register_library_function("execution_context_test.reenter", [](const std::vector<Value>&) {
    if (depth++ == 0) {
      nested = running != nullptr ? inner->call(*running, {}).status() : inner->call({}).status();
    }
    --depth;
    return absl::OkStatus();
  });
  Executable exec;
  exec.library_functions = {"execution_context_test.reenter"};
  VMFunction fn;
  fn.name = "main";
  fn.num_registers = 1;
  fn.code = {op(Opcode::kCallLibrary, -1, 0, {}), op(Opcode::kLoadConst, 0, 0),
             op(Opcode::kRet, -1, 0, {reg(0)})};
  exec.constants = {Value(int64_t{1})};
  exec.functions.push_back(fn);
  absl::StatusOr<Module> m = Module::create(std::move(exec), nullptr);
  ASSERT_TRUE(m.ok()) << m.status();
  ExecutionContext ctx;
  Function main_fn = (*m)["main"];
  running = &ctx;
  inner = &main_fn;
  ASSERT_TRUE(main_fn.call(ctx, {}).ok());
  EXPECT_EQ(nested.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(nested.message()), HasSubstr("another call is running on this context"));
  // The pool's calls never meet that: a nested call takes another context.
  running = nullptr;
  nested = absl::UnknownError("not called");
  ASSERT_TRUE(main_fn.call({}).ok());
  EXPECT_TRUE(nested.ok()) << nested;
  inner = nullptr;
}

TEST(ExecutionContextTest, ConcurrentCallsThroughThePoolNeverShareStorage) {
  const Module m = make_module(ArenaSize::kSymbolic);
  const Function main_fn = m["main"];
  constexpr int kThreads = 8, kCalls = 300;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const int64_t n = 1 + (t * 7 + i * 13) % 31, v = t * 100000 + i;
        absl::StatusOr<Value> y = main_fn(n, int64_t{0}, v);
        if (!y.ok()) {
          ++failed;
          continue;
        }
        if (testing::elements<int64_t>(y->tensor_or_die()) != expected(n, v)) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ExecutionContextTest, ConcurrentCallsOnContextsOfTheirOwn) {
  const Module m = make_module(ArenaSize::kConstant);
  const Function main_fn = m["main"];
  constexpr int kThreads = 6, kCalls = 300;
  std::atomic<int> wrong{0}, allocating_calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ExecutionContext ctx;
      // Each thread calls at its largest size first: afterwards it never allocates.
      for (int i = 0; i < kCalls; ++i) {
        const int64_t n = i == 0 ? 60 : 1 + (t + i * 11) % 60, v = t * 1000 + i;
        absl::StatusOr<Value> y = main_fn.call(ctx, {Value(n), Value(int64_t{0}), Value(v)});
        if (!y.ok() || testing::elements<int64_t>(y->tensor_or_die()) != expected(n, v)) ++wrong;
        if (i > 0 && ctx.last_call_stats().allocator_calls != 0) ++allocating_calls;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(allocating_calls.load(), 0);
}

}  // namespace
}  // namespace relax::runtime
