// The VM running a module compiled for the cuda target (needs a GPU; skipped visibly without
// one): the executable runs on cuda:0, its results are device tensors equal to the CPU build's;
// graph replay (CUDA graphs), plain replay (max_cuda_graphs = 0) and the interpreter (replay
// off) give the same bits at several sizes; captures and launches are counted as the key rules
// say (one capture per key, a launch per replay, a capture again once the LRU dropped a key); a
// host argument is refused naming both devices; calls on one context from several threads
// (streams) see each other's work finished; a builtin (nonzero) runs on host copies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cuda_device.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/module.h"
#include "relax/transform/passes.h"

namespace relax {
namespace {

using runtime::ExecutionContext;
using runtime::ReplayOptions;
using runtime::ReplayStats;
using runtime::Tensor;
using runtime::Value;

// A planned MLP block with a bound weight (a constant the module uploads), and a builtin.
constexpr const char* kVmDeviceModel = R"(module {
  func @main(x: Tensor[(n, 16), float32], w: Tensor[(16, 16), float32]) -> Tensor[(n, 16), float32] upper_bounds {n: 64} {
    dataflow {
      a = matmul(x, w)
      h = relu(a)
      b = add(h, x)
      c = matmul(b, w)
      output out = multiply(c, x)
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

// Values in [-1, 1] from a xorshift generator.
Tensor vm_device_random(std::vector<int64_t> shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    x = static_cast<float>(s % 2001) / 1000.0f - 1.0f;
  }
  absl::StatusOr<Tensor> t = Tensor::from_vector(std::move(shape), v);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

runtime::Module vm_device_build(const std::string& target, const ReplayOptions& options) {
  absl::StatusOr<IRModule> mod = parse_module(kVmDeviceModel);
  EXPECT_TRUE(mod.ok()) << mod.status();
  std::map<std::string, Tensor> params{{"w", vm_device_random({16, 16}, 99)}};
  absl::StatusOr<IRModule> bound = transform::bind_params(*mod, "main", params);
  EXPECT_TRUE(bound.ok()) << bound.status();
  absl::StatusOr<runtime::Module> m = build(*bound, target);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  m->set_replay_options(options);
  return *m;
}

std::vector<float> vm_device_host_floats(const Value& v) {
  absl::StatusOr<Tensor> t = v.tensor();
  EXPECT_TRUE(t.ok()) << t.status();
  absl::StatusOr<Tensor> host = t->to(Device::cpu());
  EXPECT_TRUE(host.ok()) << host.status();
  std::vector<float> out(static_cast<size_t>(host->numel()));
  std::memcpy(out.data(), host->data(), out.size() * sizeof(float));
  return out;
}

constexpr int64_t kVmDeviceSizes[] = {1, 7, 33, 64};
constexpr int kVmDeviceCallsPerSize = 4;

// The device inputs of every size, made once (so their data pointers stay the same).
std::vector<Tensor> vm_device_inputs() {
  std::vector<Tensor> inputs;
  for (int64_t n : kVmDeviceSizes) {
    absl::StatusOr<Tensor> x = vm_device_random({n, 16}, static_cast<uint32_t>(n)).to(Device::cuda());
    EXPECT_TRUE(x.ok()) << x.status();
    if (x.ok()) inputs.push_back(*x);
  }
  return inputs;
}

// The result of `m` on `x` on `ctx`, as host floats (the output dropped after the copy, so the
// context hands its storage out again).
std::vector<float> vm_device_call(const runtime::Module& m, ExecutionContext& ctx, const Tensor& x) {
  absl::StatusOr<Value> r = m["main"].call(ctx, {Value(x)});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  EXPECT_EQ(r->tensor_or_die().device(), Device::cuda());
  return vm_device_host_floats(*r);
}

// The results of `m` on every size, each size called kVmDeviceCallsPerSize times on one
// context; every call of a size must give the same bits.
std::vector<std::vector<float>> vm_device_sweep(const runtime::Module& m, ExecutionContext& ctx,
                                                const std::vector<Tensor>& inputs) {
  std::vector<std::vector<float>> results;
  for (const Tensor& x : inputs) {
    std::vector<float> first = vm_device_call(m, ctx, x);
    for (int call = 1; call < kVmDeviceCallsPerSize; ++call) {
      EXPECT_EQ(vm_device_call(m, ctx, x), first) << "n = " << x.shape()[0] << ", call " << call;
    }
    results.push_back(first);
  }
  return results;
}

TEST(VmDeviceCudaTest, GraphReplayPlainReplayAndTheInterpreterAgree) {
  RELAX_REQUIRE_CUDA_DEVICE();
  ReplayOptions graphs;  // the default: replay with CUDA graphs
  ReplayOptions plain;
  plain.max_cuda_graphs = 0;
  ReplayOptions interpreted;
  interpreted.enabled = false;
  runtime::Module with_graphs = vm_device_build("cuda", graphs);
  runtime::Module without_graphs = vm_device_build("cuda", plain);
  runtime::Module interpreter = vm_device_build("cuda", interpreted);
  runtime::Module cpu = vm_device_build("cpu", graphs);
  ASSERT_TRUE(with_graphs.defined() && without_graphs.defined() && interpreter.defined() && cpu.defined());
  EXPECT_EQ(with_graphs.executable().device, Device::cuda());
  EXPECT_EQ(cpu.executable().device, Device::cpu());

  const std::vector<Tensor> inputs = vm_device_inputs();
  ASSERT_EQ(inputs.size(), std::size(kVmDeviceSizes));
  ExecutionContext c1, c2, c3;
  const std::vector<std::vector<float>> g = vm_device_sweep(with_graphs, c1, inputs);
  const std::vector<std::vector<float>> p = vm_device_sweep(without_graphs, c2, inputs);
  const std::vector<std::vector<float>> i = vm_device_sweep(interpreter, c3, inputs);
  ASSERT_EQ(g.size(), std::size(kVmDeviceSizes));
  EXPECT_EQ(g, p);
  EXPECT_EQ(g, i);
  for (size_t k = 0; k < g.size(); ++k) {
    const int64_t n = kVmDeviceSizes[k];
    absl::StatusOr<Value> ref = cpu["main"](vm_device_random({n, 16}, static_cast<uint32_t>(n)));
    ASSERT_TRUE(ref.ok()) << ref.status();
    const std::vector<float> want = vm_device_host_floats(*ref);
    ASSERT_EQ(want.size(), g[k].size());
    for (size_t e = 0; e < want.size(); ++e) {
      EXPECT_NEAR(g[k][e], want[e], 1e-4f * (1.0f + std::fabs(want[e]))) << "n = " << n << ", element " << e;
    }
  }

  // One plan for every size (n is bounded, the memory planned for 64): the module's first call
  // is interpreted, the second records, every later one replays. Each size's first replay
  // captures a graph (a new binding); its later replays launch it.
  const int total = static_cast<int>(std::size(kVmDeviceSizes)) * kVmDeviceCallsPerSize;
  const ReplayStats s = with_graphs.replay_stats();
  EXPECT_EQ(s.recorded, 1);
  EXPECT_EQ(s.replayed, total - 2);
  EXPECT_EQ(s.graph_failures, 0);
  EXPECT_EQ(s.graph_captures, static_cast<int64_t>(std::size(kVmDeviceSizes)));
  EXPECT_EQ(s.graph_launches, s.replayed);
  const ReplayStats sp = without_graphs.replay_stats();
  EXPECT_EQ(sp.replayed, total - 2);
  EXPECT_EQ(sp.graph_captures, 0);
  EXPECT_EQ(sp.graph_launches, 0);
  EXPECT_EQ(interpreter.replay_stats().replayed, 0);

  // The last size again, with its input and storages: its graph is launched, nothing captured.
  for (int call = 0; call < 3; ++call) EXPECT_EQ(vm_device_call(with_graphs, c1, inputs.back()), g.back());
  EXPECT_EQ(with_graphs.replay_stats().graph_captures, s.graph_captures);
  EXPECT_EQ(with_graphs.replay_stats().graph_launches, s.graph_launches + 3);
}

TEST(VmDeviceCudaTest, TheLeastRecentlyLaunchedGraphIsDroppedBeyondTheBound) {
  RELAX_REQUIRE_CUDA_DEVICE();
  ReplayOptions two;
  two.max_cuda_graphs = 2;
  runtime::Module m = vm_device_build("cuda", two);
  runtime::Module reference = vm_device_build("cuda", ReplayOptions{.enabled = false});
  ASSERT_TRUE(m.defined() && reference.defined());
  // Three inputs of one size: the same binding, other data pointers, so three keys.
  std::vector<Tensor> x;
  for (uint32_t seed : {1u, 2u, 3u}) {
    absl::StatusOr<Tensor> t = vm_device_random({64, 16}, seed).to(Device::cuda());
    ASSERT_TRUE(t.ok()) << t.status();
    x.push_back(*t);
  }
  ExecutionContext ctx, ref_ctx;
  auto call = [&](size_t k) { EXPECT_EQ(vm_device_call(m, ctx, x[k]), vm_device_call(reference, ref_ctx, x[k])); };
  call(0);  // interpreted
  call(0);  // records the plan
  struct Expect {
    size_t input;
    int64_t captures;  // after the call
  };
  // A: capture; B: capture; A: launch; C: capture, B dropped (least recently launched);
  // A: launch; B: capture again, C dropped; A: launch.
  for (const Expect& e : {Expect{0, 1}, Expect{1, 2}, Expect{0, 2}, Expect{2, 3}, Expect{0, 3}, Expect{1, 4},
                          Expect{0, 4}}) {
    call(e.input);
    EXPECT_EQ(m.replay_stats().graph_captures, e.captures) << "input " << e.input;
  }
  EXPECT_EQ(m.replay_stats().replayed, 7);
  EXPECT_EQ(m.replay_stats().graph_launches, 7);
  EXPECT_EQ(m.replay_stats().graph_failures, 0);
}

TEST(VmDeviceCudaTest, CallsOnOneContextFromSeveralThreadsAreOrdered) {
  RELAX_REQUIRE_CUDA_DEVICE();
  runtime::Module m = vm_device_build("cuda", ReplayOptions{});
  runtime::Module reference = vm_device_build("cuda", ReplayOptions{.enabled = false});
  ASSERT_TRUE(m.defined() && reference.defined());
  const std::vector<Tensor> inputs = vm_device_inputs();
  ExecutionContext ref_ctx;
  std::vector<std::vector<float>> want;
  for (const Tensor& x : inputs) want.push_back(vm_device_call(reference, ref_ctx, x));
  // Each call from a new thread (its own stream), its result not read until the end: the
  // context's arena is reused by the next call while the previous one's kernels may still run,
  // unless the next thread's stream waits for them.
  ExecutionContext ctx;
  std::vector<Value> results(12);
  for (size_t k = 0; k < results.size(); ++k) {
    std::thread t([&] {
      absl::StatusOr<Value> r = m["main"].call(ctx, {Value(inputs[k % inputs.size()])});
      EXPECT_TRUE(r.ok()) << r.status();
      if (r.ok()) results[k] = *r;
    });
    t.join();
  }
  // One more call on the context from this thread: its stream waits for the last call, which
  // waited for the one before... so every result is complete for this thread's copies.
  EXPECT_EQ(vm_device_call(m, ctx, inputs[0]), want[0]);
  for (size_t k = 0; k < results.size(); ++k) {
    ASSERT_TRUE(results[k].is_tensor()) << "call " << k;
    EXPECT_EQ(vm_device_host_floats(results[k]), want[k % inputs.size()]) << "call " << k;
  }
}

TEST(VmDeviceCudaTest, AHostArgumentIsRefusedNamingBothDevices) {
  RELAX_REQUIRE_CUDA_DEVICE();
  runtime::Module m = vm_device_build("cuda", ReplayOptions{});
  ASSERT_TRUE(m.defined());
  absl::StatusOr<Value> r = m["main"](vm_device_random({3, 16}, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(r.status().message()),
            "main: argument x is on cpu, but the module runs on cuda:0 (copy it there first, e.g. with "
            "Tensor::to)");
}

TEST(VmDeviceCudaTest, ABuiltinRunsOnHostCopiesOfDeviceTensors) {
  RELAX_REQUIRE_CUDA_DEVICE();
  runtime::Module m = vm_device_build("cuda", ReplayOptions{});
  ASSERT_TRUE(m.defined());
  absl::StatusOr<Tensor> x = Tensor::from_vector({6}, std::vector<float>{0, 2, 0, -1, 0, 3});
  ASSERT_TRUE(x.ok());
  absl::StatusOr<Tensor> xd = x->to(Device::cuda());
  ASSERT_TRUE(xd.ok()) << xd.status();
  for (int call = 0; call < 3; ++call) {  // never replayed (a builtin), right every time
    absl::StatusOr<Value> r = m["count"](*xd);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->tensor_or_die().device(), Device::cuda());
    absl::StatusOr<Tensor> host = r->tensor_or_die().to(Device::cpu());
    ASSERT_TRUE(host.ok()) << host.status();
    ASSERT_EQ(host->shape(), (std::vector<int64_t>{1, 3}));
    std::vector<int64_t> got(3);
    std::memcpy(got.data(), host->data(), sizeof(int64_t) * 3);
    EXPECT_EQ(got, (std::vector<int64_t>{2, 6, 10}));
  }
}

}  // namespace
}  // namespace relax
