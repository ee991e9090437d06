// The VM's device (Executable::device) where no GPU is needed: the device survives
// serialisation; an executable for a CUDA device fails to become a Module without a usable
// device, naming what is missing; a module refuses tensor arguments on another device, naming
// the function, the argument and both devices, on every path (interpreted, replayed, the
// replay hint); the CUDA-graph options and statistics of replay, which stay zero on the CPU.
// What needs a GPU (device storages, constants uploaded, graph capture and launch) is tested in
// tests/cuda/vm_device_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relax/runtime/cuda.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/module.h"
#include "vm_test_util.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::message;

// A device tensor handle over host memory the driver never sees: the VM must refuse it before
// anything reads it.
Tensor vm_device_fake_cuda_tensor(std::vector<float>& memory) {
  return Tensor::borrow(memory.data(), {static_cast<int64_t>(memory.size())}, DataType::float32(), {},
                        Device::cuda(0));
}

// pair(t) = t: a tuple argument, returned as it is.
Executable vm_device_tuple_program() {
  Executable exec;
  VMFunction fn;
  fn.name = "pair";
  fn.param_names = {"t"};
  fn.num_registers = 1;
  fn.code = {testing::op(Opcode::kRet, -1, 0, {testing::reg(0)})};
  exec.functions.push_back(std::move(fn));
  return exec;
}

TEST(VmDeviceTest, TheDeviceSurvivesSerialisation) {
  Executable exec = testing::add_program();
  exec.device = Device::cuda(3);
  ASSERT_TRUE(exec.validate().ok()) << exec.validate();
  absl::StatusOr<Executable> back = Executable::deserialize(exec.serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->device, Device::cuda(3));
  EXPECT_THAT(back->disassemble(), StartsWith("device: cuda:3\n"));
  // A CPU executable says nothing about its device.
  absl::StatusOr<Executable> cpu = Executable::deserialize(testing::add_program().serialize());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->device, Device::cpu());
  EXPECT_THAT(cpu->disassemble(), Not(HasSubstr("device")));
}

TEST(VmDeviceTest, ACudaExecutableNeedsAUsableDeviceToBecomeAModule) {
  const absl::Status available = cuda::check_available();
  if (available.ok()) GTEST_SKIP() << "a CUDA device is usable here: tests/cuda covers this module";
  Executable exec = testing::add_program();
  exec.device = Device::cuda(0);
  absl::StatusOr<Module> m = Module::create(exec, testing::test_kernels());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(message(m), "Module::create: the executable runs on cuda:0: " + std::string(available.message()));
  if (cuda::built_with_cuda()) {
    // No driver on this machine, or no device behind it: the message says which.
    EXPECT_THAT(message(m), ::testing::AnyOf(HasSubstr("libcuda.so.1"), HasSubstr("no CUDA device")));
  }
}

TEST(VmDeviceTest, ACpuModuleRefusesADeviceArgument) {
  std::vector<float> memory(4, 1.0f);
  const Tensor gpu = vm_device_fake_cuda_tensor(memory);
  const Tensor host = testing::f32({4}, {1, 2, 3, 4});
  absl::StatusOr<Module> m = Module::create(testing::add_program(), testing::test_kernels());
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string expected =
      "main: argument y is on cuda:0, but the module runs on cpu (copy it there first, e.g. with "
      "Tensor::to)";
  absl::StatusOr<Value> r = (*m)["main"](host, gpu);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(r), expected);
  // After plans are recorded and replayed (the hint of this thread included), still refused.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*m)["main"](host, host).ok());
  ASSERT_GT(m->replay_stats().replayed, 0);
  r = (*m)["main"](host, gpu);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(message(r), expected);
  // And with replay off (the interpreter alone).
  ReplayOptions off;
  off.enabled = false;
  m->set_replay_options(off);
  r = (*m)["main"](gpu, host);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(message(r),
            "main: argument x is on cuda:0, but the module runs on cpu (copy it there first, e.g. with "
            "Tensor::to)");
}

TEST(VmDeviceTest, TheRefusalNamesTheTupleFieldOfTheArgument) {
  std::vector<float> memory(2, 0.0f);
  absl::StatusOr<Module> m = Module::create(vm_device_tuple_program(), nullptr);
  ASSERT_TRUE(m.ok()) << m.status();
  const Value inner = Value::tuple({Value(int64_t{1}), Value(vm_device_fake_cuda_tensor(memory))});
  absl::StatusOr<Value> r = (*m)["pair"](Value::tuple({Value(testing::f32({1}, {0})), inner}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(message(r),
            "pair: argument t, field 1, field 1 is on cuda:0, but the module runs on cpu (copy it there "
            "first, e.g. with Tensor::to)");
  // Host tensors anywhere in it pass.
  r = (*m)["pair"](Value::tuple({Value(testing::f32({1}, {0})), Value(int64_t{2})}));
  EXPECT_TRUE(r.ok()) << r.status();
}

TEST(VmDeviceTest, CudaGraphOptionsAndStatistics) {
  absl::StatusOr<Module> m = Module::create(testing::add_program(), testing::test_kernels());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->replay_options().max_cuda_graphs, 8);
  ReplayOptions options;
  options.max_cuda_graphs = -3;  // no graphs
  m->set_replay_options(options);
  EXPECT_EQ(m->replay_options().max_cuda_graphs, 0);
  options.max_cuda_graphs = 2;
  m->set_replay_options(options);
  EXPECT_EQ(m->replay_options().max_cuda_graphs, 2);
  // A CPU module replays without graphs.
  const Tensor x = testing::f32({3}, {1, 2, 3});
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<Value> r = (*m)["main"](x, x);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(testing::values_equal(*r, Value(testing::f32({3}, {2, 4, 6}))));
  }
  const ReplayStats stats = m->replay_stats();
  EXPECT_GE(stats.replayed, 3);
  EXPECT_EQ(stats.graph_launches, 0);
  EXPECT_EQ(stats.graph_captures, 0);
  EXPECT_EQ(stats.graph_failures, 0);
}

}  // namespace
}  // namespace relax::runtime
