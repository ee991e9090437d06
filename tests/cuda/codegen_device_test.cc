// Generated CUDA kernels on a device: every operator family of
// cuda_test_util.h built with relax::build for the cuda target and for the
// cpu, called on the same inputs at several sizes (rows below, at and above a
// block and a tile, row lengths that are no multiple of a warp), the results
// compared (float sums are reassociated: a relative tolerance). Skipped,
// visibly, without a device (RELAX_REQUIRE_CUDA_DEVICE).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../codegen/cuda_test_util.h"
#include "cuda_device.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/tensor.h"
#include "relax/support/half_float.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;

/// A host tensor of `shape` and `dtype` with values from `seed`: floats in
/// [-1, 1), int64 indices in [0, index_bound), bytes of any value, bools.
Tensor codegen_device_input(const std::vector<int64_t>& shape, DataType dtype, uint32_t seed, int64_t index_bound) {
  absl::StatusOr<Tensor> t = Tensor::empty(shape, dtype);
  EXPECT_TRUE(t.ok()) << t.status();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  const int64_t n = t->numel();
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DataType::float32()) {
      static_cast<float*>(t->data())[i] = real(rng);
    } else if (dtype == DataType::int64()) {
      static_cast<int64_t*>(t->data())[i] = static_cast<int64_t>(rng() % static_cast<uint32_t>(index_bound));
    } else if (dtype.bits == 16) {
      static_cast<uint16_t*>(t->data())[i] = dtype.code == DataType::Code::kBFloat ? bfloat16_bits(real(rng))
                                                                                     : float16_bits(real(rng));
    } else {
      static_cast<uint8_t*>(t->data())[i] = static_cast<uint8_t>(dtype.is_bool() ? rng() % 2 : rng() % 256);
    }
  }
  return *t;
}

/// `t` copied to `device` (Tensor::to; written as a template so that this file
/// compiles before the runtime's device tensors exist, failing the test then).
template <typename T>
absl::StatusOr<T> codegen_device_copy(const T& t, Device device) {
  if constexpr (requires { t.to(device); }) {
    return t.to(device);
  } else {
    return absl::UnimplementedError("this runtime's Tensor has no to(Device)");
  }
}

struct CodegenDeviceCase {
  std::string family;
  std::vector<std::pair<std::vector<int64_t>, DataType>> inputs;
  int64_t index_bound = 1;  // for int64 inputs (take's rows, rotary's positions)
};

std::vector<CodegenDeviceCase> codegen_device_cases() {
  const DataType f32 = DataType::float32(), i64 = DataType::int64(), u8 = DataType{DataType::Code::kUInt, 8, 1};
  std::vector<CodegenDeviceCase> cases;
  for (int64_t n : {1, 7, 300, 1025}) {
    cases.push_back({"elementwise", {{{n, 64}, f32}, {{n, 64}, f32}}});
    cases.push_back({"broadcast", {{{n, 64}, f32}, {{64}, f32}}});
    cases.push_back({"transpose", {{{n, 48}, f32}}});
    cases.push_back({"concat", {{{n, 16}, f32}, {{n, 8}, f32}}});
    cases.push_back({"sum_all", {{{n, 32}, f32}}});
    cases.push_back({"layer_norm", {{{n, 96}, f32}, {{96}, f32}, {{96}, f32}}});
    cases.push_back({"matmul", {{{n, 128}, f32}, {{128, 96}, f32}}});
    cases.push_back({"matmul_bf16", {{{n, 64}, f32}, {{64, 80}, DataType::bfloat16()}}});
    cases.push_back({"matmul_int4", {{{n, 64}, f32}, {{32, 64}, u8}, {{2, 64}, f32}}});
    cases.push_back({"linear", {{{n, 64}, f32}, {{96, 64}, f32}}});
    cases.push_back({"cast_half", {{{n, 32}, f32}}});
    cases.push_back({"take", {{{16, 64}, f32}, {{n}, i64}}, 16});
    cases.push_back({"where", {{{n, 32}, DataType::boolean()}, {{n, 32}, f32}, {{n, 32}, f32}}});
    cases.push_back({"rotary", {{{1, n, 4, 64}, f32}, {{n}, i64}}, 4096});
    for (int64_t m : {1, 33, 1000}) {
      cases.push_back({"sum", {{{n, m}, f32}}});
      cases.push_back({"max", {{{n, m}, f32}}});
      cases.push_back({"softmax", {{{n, m}, f32}}});
      cases.push_back({"rms_norm", {{{n, m}, f32}, {{m}, f32}}});
    }
  }
  cases.push_back({"reshape", {{{8, 64}, f32}}});
  cases.push_back({"matvec_int4", {{{1, 64}, f32}, {{32, 96}, u8}, {{2, 96}, f32}}});
  cases.push_back({"matvec_linear", {{{2, 64}, f32}, {{96, 64}, f32}}});
  cases.push_back({"conv2d", {{{1, 4, 10, 10}, f32}, {{8, 4, 3, 3}, f32}}});
  return cases;
}

TEST(CodegenDevice, EveryFamilyMatchesTheCpuBuild) {
  RELAX_REQUIRE_CUDA_DEVICE();
  Target gpu;
  gpu.kind = "cuda";
  gpu.libraries.clear();
  Target cpu;
  cpu.libraries.clear();
  std::string built_family;
  runtime::Module on_gpu, on_cpu;
  uint32_t seed = 1;
  for (const CodegenDeviceCase& c : codegen_device_cases()) {
    SCOPED_TRACE(c.family + " " + std::to_string(c.inputs[0].first[0]));
    if (c.family != built_family) {
      absl::StatusOr<IRModule> mod = parse_module(testing::cuda_test_family(c.family));
      ASSERT_TRUE(mod.ok()) << mod.status();
      absl::StatusOr<runtime::Module> g = build(*mod, gpu);
      ASSERT_TRUE(g.ok()) << g.status();
      absl::StatusOr<runtime::Module> h = build(*mod, cpu);
      ASSERT_TRUE(h.ok()) << h.status();
      on_gpu = *g;
      on_cpu = *h;
      built_family = c.family;
    }
    std::vector<Value> host_args, device_args;
    for (const auto& [shape, dtype] : c.inputs) {
      Tensor t = codegen_device_input(shape, dtype, seed++, c.index_bound);
      absl::StatusOr<Tensor> d = codegen_device_copy(t, Device::cuda());
      ASSERT_TRUE(d.ok()) << d.status();
      host_args.push_back(Value(t));
      device_args.push_back(Value(*d));
    }
    absl::StatusOr<Value> want = on_cpu["main"].call(host_args);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<Value> got = on_gpu["main"].call(device_args);
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<Tensor> back = codegen_device_copy(got->tensor_or_die(), Device::cpu());
    ASSERT_TRUE(back.ok()) << back.status();
    const Tensor& w = want->tensor_or_die();
    ASSERT_EQ(back->numel(), w.numel());
    const float* a = w.data_as_or_die<float>();
    const float* b = back->data_as_or_die<float>();
    double worst = 0, scale = 1;
    for (int64_t i = 0; i < w.numel(); ++i) {
      scale = std::max(scale, static_cast<double>(std::fabs(a[i])));
      worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    }
    EXPECT_LE(worst, 2e-5 * scale * std::sqrt(static_cast<double>(w.numel()) + 1)) << "largest difference";
  }
}

}  // namespace
}  // namespace relax
