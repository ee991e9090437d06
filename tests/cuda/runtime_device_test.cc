// The CUDA runtime on a device (relax/runtime/cuda.h, CUDA tensors, the kernel ABI's
// cuda_launch): device descriptions, host <-> device copies of several sizes and dtypes,
// zeroed allocations from a reused block, the device pool's statistics, and a hand-written
// PTX kernel launched through the same entry generated launchers use. Every test skips,
// naming why, without a GPU and its driver (tests/runtime/cuda_runtime_test.cc checks that
// case).
#include <dlpack/dlpack.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/cuda_device.h"
#include "relax/runtime/cuda.h"
#include "relax/runtime/kernel_abi.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/thread_budget.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// c[i] = a[i] + b[i] for i < n, float32; one thread per element. PTX for sm_80, which the
// driver compiles for the device at hand (ptxas accepts it for sm_80 and sm_90).
constexpr char kRuntimeDeviceAddPtx[] = R"(.version 7.0
.target sm_80
.address_size 64

.visible .entry relax_test_add(
    .param .u64 relax_test_add_a,
    .param .u64 relax_test_add_b,
    .param .u64 relax_test_add_c,
    .param .u32 relax_test_add_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<11>;

    ld.param.u64 %rd1, [relax_test_add_a];
    ld.param.u64 %rd2, [relax_test_add_b];
    ld.param.u64 %rd3, [relax_test_add_c];
    ld.param.u32 %r2, [relax_test_add_n];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.u32 %p1, %r1, %r2;
    @%p1 bra $L_done;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.u32 %rd7, %r1, 4;
    add.s64 %rd8, %rd4, %rd7;
    add.s64 %rd9, %rd5, %rd7;
    add.s64 %rd10, %rd6, %rd7;
    ld.global.f32 %f1, [%rd8];
    ld.global.f32 %f2, [%rd9];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd10], %f3;
$L_done:
    ret;
}
)";

/// A host tensor of `shape` and `dtype` whose bytes follow a pattern set by `seed`.
Tensor runtime_device_patterned(std::vector<int64_t> shape, DataType dtype, int seed) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype);
  EXPECT_TRUE(t.ok()) << t.status();
  auto* bytes = static_cast<uint8_t*>(t->data());
  for (size_t i = 0; i < t->nbytes(); ++i) bytes[i] = static_cast<uint8_t>(i * 131 + seed);
  return *t;
}

bool runtime_device_same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(RuntimeDeviceTest, DeviceInfoDescribesARealDevice) {
  RELAX_REQUIRE_CUDA_DEVICE();
  ASSERT_GE(cuda::device_count(), 1);
  absl::StatusOr<cuda::DeviceInfo> info = cuda::device_info(0);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->name.empty());
  EXPECT_GE(info->compute_major, 5);
  EXPECT_GT(info->total_memory, int64_t{1} << 30);
  EXPECT_GT(info->multiprocessors, 0);
  EXPECT_THAT(info->arch(), StartsWith("sm_"));
  // Between 100 GB/s and 20 TB/s when the driver reports the clock; 0 when it does not.
  if (info->peak_memory_bandwidth != 0) {
    EXPECT_GT(info->peak_memory_bandwidth, 1e11);
    EXPECT_LT(info->peak_memory_bandwidth, 2e13);
  }
  absl::StatusOr<cuda::DeviceInfo> missing = cuda::device_info(cuda::device_count());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist: the driver sees"));
  EXPECT_TRUE(cuda::synchronize(0).ok());
}

TEST(RuntimeDeviceTest, HostToDeviceToHostKeepsEveryByte) {
  RELAX_REQUIRE_CUDA_DEVICE();
  const DataType dtypes[] = {DataType::float32(), DataType::float16(), DataType::int64(),
                             DataType{DataType::Code::kUInt, 8, 1}, DataType::boolean()};
  const std::vector<int64_t> shapes[] = {{0}, {1}, {7, 3}, {4096}, {(1 << 20) + 3}};
  int seed = 0;
  for (const DataType dtype : dtypes) {
    for (const std::vector<int64_t>& shape : shapes) {
      Tensor host = runtime_device_patterned(shape, dtype, ++seed);
      absl::StatusOr<Tensor> device = host.to(Device::cuda());
      ASSERT_TRUE(device.ok()) << device.status();
      EXPECT_EQ(device->device(), Device::cuda());
      EXPECT_EQ(device->shape(), host.shape());
      absl::StatusOr<Tensor> back = device->to(Device::cpu());
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_TRUE(runtime_device_same_bytes(host, *back)) << device->describe();
    }
  }
}

TEST(RuntimeDeviceTest, DeviceCopiesAndStridedHostSides) {
  RELAX_REQUIRE_CUDA_DEVICE();
  Tensor host = runtime_device_patterned({64, 33}, DataType::float32(), 5);
  absl::StatusOr<Tensor> a = host.to(Device::cuda());
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<Tensor> b = a->to(Device::cuda());  // device to device: a new block
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(b->data(), a->data());
  absl::StatusOr<Tensor> back = b->to(Device::cpu());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(runtime_device_same_bytes(host, *back));

  // A transposed host view goes up through a compact staging copy, and comes back into a
  // transposed host destination.
  Tensor transposed = Tensor::borrow(host.data(), {33, 64}, DataType::float32(), {1, 33});
  absl::StatusOr<Tensor> up = transposed.to(Device::cuda());
  ASSERT_TRUE(up.ok()) << up.status();
  absl::StatusOr<Tensor> down = up->to(Device::cpu());
  ASSERT_TRUE(down.ok()) << down.status();
  const auto* src = static_cast<const float*>(host.data());
  const auto* got = static_cast<const float*>(down->data());
  EXPECT_EQ(std::memcmp(&got[5 * 64 + 7], &src[7 * 33 + 5], sizeof(float)), 0);
  absl::StatusOr<Tensor> dst = Tensor::empty({64, 33}, DataType::float32());
  ASSERT_TRUE(dst.ok()) << dst.status();
  Tensor dst_transposed = Tensor::borrow(dst->data(), {33, 64}, DataType::float32(), {1, 33});
  ASSERT_TRUE(dst_transposed.copy_from(*up).ok());
  EXPECT_TRUE(runtime_device_same_bytes(host, *dst));
}

TEST(RuntimeDeviceTest, EmptyZeroesAReusedBlock) {
  RELAX_REQUIRE_CUDA_DEVICE();
  absl::StatusOr<PooledAllocator*> pool = cuda::device_allocator(0);
  ASSERT_TRUE(pool.ok()) << pool.status();
  void* dirty = nullptr;
  {
    absl::StatusOr<Tensor> t =
        runtime_device_patterned({1000}, DataType::float32(), 3).to(Device::cuda());
    ASSERT_TRUE(t.ok()) << t.status();
    dirty = t->data();
  }
  const int64_t hits = (*pool)->stats().num_pool_hits;
  absl::StatusOr<Tensor> fresh = Tensor::empty({1000}, DataType::float32(), Device::cuda());
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->data(), dirty) << "the freed block is reused";
  EXPECT_EQ((*pool)->stats().num_pool_hits, hits + 1);
  absl::StatusOr<Tensor> host = fresh->to(Device::cpu());
  ASSERT_TRUE(host.ok()) << host.status();
  const std::vector<uint8_t> zeros(host->nbytes(), 0);
  EXPECT_EQ(std::memcmp(host->data(), zeros.data(), zeros.size()), 0);
}

TEST(RuntimeDeviceTest, TheDevicePoolCountsAndReusesBlocks) {
  RELAX_REQUIRE_CUDA_DEVICE();
  absl::StatusOr<PooledAllocator*> pool = cuda::device_allocator(0);
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ(*cuda::device_allocator(0), *pool) << "one pool per device";
  const AllocatorStats before = (*pool)->stats();
  absl::StatusOr<void*> a = (*pool)->allocate(3000);  // class 4096
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*pool)->stats().bytes_in_use, before.bytes_in_use + 4096);
  EXPECT_EQ((*pool)->stats().num_allocations, before.num_allocations + 1);
  const int64_t hits = (*pool)->stats().num_pool_hits;  // an earlier test may have left a block
  (*pool)->free(*a);
  absl::StatusOr<void*> b = (*pool)->allocate(4000);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, *a);
  EXPECT_EQ((*pool)->stats().num_pool_hits, hits + 1);
  (*pool)->free(*b);
  absl::StatusOr<void*> aligned = (*pool)->allocate(100, 256);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*aligned) % 256, 0u);
  (*pool)->free(*aligned);
  absl::StatusOr<void*> over = (*pool)->allocate(100, 4096);
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(over.status().message(), HasSubstr("cuda:0 blocks are aligned to 256 bytes"));
  (*pool)->release_cached();
  EXPECT_EQ((*pool)->stats().bytes_reserved, (*pool)->stats().bytes_in_use);
}

TEST(RuntimeDeviceTest, LaunchesAHandWrittenPtxKernel) {
  RELAX_REQUIRE_CUDA_DEVICE();
  constexpr uint32_t n = 1000;
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.5f * static_cast<float>(i) + 1.0f;
  }
  absl::StatusOr<Tensor> ha = Tensor::from_vector({n}, a);
  absl::StatusOr<Tensor> hb = Tensor::from_vector({n}, b);
  ASSERT_TRUE(ha.ok() && hb.ok());
  absl::StatusOr<Tensor> da = ha->to(Device::cuda());
  absl::StatusOr<Tensor> db = hb->to(Device::cuda());
  absl::StatusOr<Tensor> dc = Tensor::empty({n}, DataType::float32(), Device::cuda());
  ASSERT_TRUE(da.ok() && db.ok() && dc.ok());
  void* pa = da->data();
  void* pb = db->data();
  void* pc = dc->data();
  uint32_t count = n;
  void* params[] = {&pa, &pb, &pc, &count};
  const uint32_t grid[3] = {(n + 127) / 128, 1, 1};
  const uint32_t block[3] = {128, 1, 1};
  char error[1024] = {};
  const RelaxRuntimeApi& api = *kernel_runtime_api();
  ASSERT_NE(api.cuda_launch, nullptr);
  for (int call = 0; call < 2; ++call) {  // the second call finds the loaded image
    ASSERT_EQ(api.cuda_launch(kRuntimeDeviceAddPtx, sizeof kRuntimeDeviceAddPtx, "relax_test_add",
                              grid, block, 0, params, error, sizeof error),
              0)
        << error;
  }
  absl::StatusOr<Tensor> hc = dc->to(Device::cpu());
  ASSERT_TRUE(hc.ok()) << hc.status();
  const auto* c = static_cast<const float*>(hc->data());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;

  // A kernel the image lacks, and an image that is not one.
  EXPECT_NE(api.cuda_launch(kRuntimeDeviceAddPtx, sizeof kRuntimeDeviceAddPtx, "relax_test_mul",
                            grid, block, 0, params, error, sizeof error),
            0);
  EXPECT_THAT(std::string(error),
              HasSubstr("cuda_launch of kernel `relax_test_mul` on cuda:0: cuModuleGetFunction"));
  static const char kNotPtx[] = ".version 7.0\n.target sm_80\nthis is not ptx\n";
  EXPECT_NE(api.cuda_launch(kNotPtx, sizeof kNotPtx, "relax_test_add", grid, block, 0, params,
                            error, sizeof error),
            0);
  EXPECT_THAT(std::string(error), HasSubstr("cuModuleLoadDataEx of the PTX image"));
}

TEST(RuntimeDeviceTest, DlpackExportsADeviceTensorWithoutACopy) {
  RELAX_REQUIRE_CUDA_DEVICE();
  absl::StatusOr<Tensor> t = Tensor::empty({4, 5}, DataType::float32(), Device::cuda());
  ASSERT_TRUE(t.ok()) << t.status();
  DLManagedTensor* exported = t->to_dlpack();
  EXPECT_EQ(exported->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(exported->dl_tensor.data, t->data());
  absl::StatusOr<Tensor> imported = Tensor::from_dlpack(exported);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(imported->same_storage(*t));
  EXPECT_EQ(imported->device(), Device::cuda());
}

}  // namespace
}  // namespace relax::runtime
