// The CUDA runtime without a device (relax/runtime/cuda.h, CUDA tensors, the kernel ABI's
// cuda_launch): what a process without a GPU or without the driver sees. Every call that
// needs the device fails with the reason (the driver that cannot be loaded, or "built
// without CUDA"), never a crash; what needs no device works: DLPack exchange of CUDA
// tensors, descriptions, the refusal of device memory as host data, strided-copy checks.
// The tests/cuda/ binary checks the same calls on a GPU. A test that needs the device to be
// missing skips, naming why, where a device is usable.
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "relax/runtime/cuda.h"
#include "relax/runtime/kernel_abi.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/thread_budget.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

/// Whether this machine has the CUDA driver library at all.
bool cuda_test_driver_loads() {
  void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return false;
  ::dlclose(handle);
  return true;
}

/// An address of the pretend device memory of the tests that need no device (never read).
void* cuda_test_fake_device_pointer() { return reinterpret_cast<void*>(uintptr_t{1} << 44); }

#define CUDA_TEST_SKIP_WHERE_A_DEVICE_WORKS()                         \
  if (cuda::available())                                              \
  GTEST_SKIP() << "a CUDA device is usable here (tests/cuda/ checks " \
                  "it); this test needs one to be missing"

// An empty kernel for the launch entry (never loaded here: there is no driver to load it).
constexpr char kCudaTestPtx[] =
    ".version 7.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry relax_test_add() { ret; }\n";

TEST(CudaRuntimeTest, BuiltWithCudaMatchesTheKernelApi) {
  // The runtime passes kernels a cuda_launch exactly when it was built with CUDA.
  EXPECT_EQ(cuda::built_with_cuda(), kernel_runtime_api()->cuda_launch != nullptr);
}

TEST(CudaRuntimeTest, WithoutTheDriverEveryDeviceCallNamesLibcuda) {
  if (!cuda::built_with_cuda()) GTEST_SKIP() << "relax was built without CUDA";
  if (cuda_test_driver_loads()) GTEST_SKIP() << "libcuda.so.1 loads on this machine";
  const absl::Status status = cuda::check_available();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("the CUDA driver libcuda.so.1 cannot be loaded: "));
  EXPECT_THAT(status.message(), HasSubstr("cannot open shared object file"));
  EXPECT_EQ(cuda::check_available(), status) << "the answer is kept";
  EXPECT_FALSE(cuda::available());
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_EQ(cuda::device_info(0).status(), status);
  EXPECT_EQ(cuda::device_allocator(0).status(), status);
  EXPECT_EQ(cuda::synchronize(0), status);
}

TEST(CudaRuntimeTest, WithoutCudaEveryDeviceCallSaysSo) {
  if (cuda::built_with_cuda()) GTEST_SKIP() << "relax was built with CUDA";
  const absl::Status status = cuda::check_available();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "relax was built without CUDA");
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_EQ(cuda::device_info(0).status(), status);
  EXPECT_EQ(cuda::device_allocator(0).status(), status);
  EXPECT_EQ(cuda::synchronize(0), status);
}

TEST(CudaRuntimeTest, CudaTensorsCannotBeMadeAndNameTheReason) {
  CUDA_TEST_SKIP_WHERE_A_DEVICE_WORKS();
  const absl::Status reason = cuda::check_available();
  absl::StatusOr<Tensor> empty = Tensor::empty({2, 3}, DataType::float32(), Device::cuda(1));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), reason.code());
  EXPECT_EQ(empty.status().message(),
            "Tensor::empty: cannot allocate on cuda:1: " + std::string(reason.message()));
  absl::StatusOr<Tensor> storage = Tensor::storage(256, kTensorAlignment, nullptr, Device::cuda());
  ASSERT_FALSE(storage.ok());
  EXPECT_EQ(storage.status().message(),
            "Tensor::storage: cannot allocate on cuda:0: " + std::string(reason.message()));
  absl::StatusOr<Tensor> host = Tensor::from_vector({2}, {1.0f, 2.0f});
  ASSERT_TRUE(host.ok()) << host.status();
  absl::StatusOr<Tensor> uploaded = host->to(Device::cuda());
  ASSERT_FALSE(uploaded.ok());
  EXPECT_THAT(std::string(uploaded.status().message()),
              StartsWith("Tensor::to(cuda:0) of Tensor[(2,), float32]: "));
  EXPECT_THAT(uploaded.status().message(), HasSubstr(std::string(reason.message())));
}

TEST(CudaRuntimeTest, CopiesBetweenHostAndCudaNameTheReason) {
  CUDA_TEST_SKIP_WHERE_A_DEVICE_WORKS();
  const std::string reason(cuda::check_available().message());
  Tensor device =
      Tensor::borrow(cuda_test_fake_device_pointer(), {2}, DataType::float32(), {}, Device::cuda());
  absl::StatusOr<Tensor> host = Tensor::empty({2}, DataType::float32());
  ASSERT_TRUE(host.ok()) << host.status();
  const absl::Status download = host->copy_from(device);
  EXPECT_EQ(download.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      download.message(),
      "Tensor::copy_from: copying Tensor[(2,), float32, cuda:0] into Tensor[(2,), float32]: " +
          reason);
  const absl::Status upload = device.copy_from(*host);
  EXPECT_THAT(upload.message(), HasSubstr("into Tensor[(2,), float32, cuda:0]: " + reason));
  absl::StatusOr<Tensor> to_host = device.to(Device::cpu());
  ASSERT_FALSE(to_host.ok());
  EXPECT_THAT(to_host.status().message(), HasSubstr(reason));
}

TEST(CudaRuntimeTest, StridedCudaCopiesAreRefusedBeforeTheDriver) {
  // Checked in every build, with or without a device: the layout is wrong before anything runs.
  Tensor strided = Tensor::borrow(cuda_test_fake_device_pointer(), {2, 2}, DataType::float32(),
                                  {1, 2}, Device::cuda());
  absl::StatusOr<Tensor> host = Tensor::empty({2, 2}, DataType::float32());
  ASSERT_TRUE(host.ok()) << host.status();
  const absl::Status s = host->copy_from(strided);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("the cuda:0 side is strided; copies to, from and between "
                                     "CUDA devices need contiguous tensors"));
}

TEST(CudaRuntimeTest, DataAsRefusesDeviceMemoryNamingTheDevice) {
  Tensor t = Tensor::borrow(cuda_test_fake_device_pointer(), {2}, DataType::float32(), {},
                            Device::cuda(1));
  EXPECT_EQ(t.describe(), "Tensor[(2,), float32, cuda:1]");
  EXPECT_EQ(t.data(), cuda_test_fake_device_pointer()) << "data() is the device pointer";
  absl::StatusOr<float*> p = t.data_as<float>();
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(p.status().message(),
            "data_as<float32> of Tensor[(2,), float32, cuda:1]: the elements are in cuda:1 "
            "memory, not host memory (data() is the device pointer; to(Device::cpu()) copies "
            "them to the host)");
}

TEST(CudaRuntimeDeathTest, DataAsOrDieAbortsOnDeviceMemory) {
  Tensor t =
      Tensor::borrow(cuda_test_fake_device_pointer(), {2}, DataType::float32(), {}, Device::cuda());
  EXPECT_DEATH((void)t.data_as_or_die<float>(),
               "data_as_or_die<float32> of Tensor\\[\\(2,\\), float32, cuda:0\\]");
}

/// A producer's CUDA tensor: a (2, 3) float32 at a pretend device address, 64 bytes in.
struct CudaTestProducer {
  std::vector<int64_t> shape{2, 3};
  std::vector<int64_t> strides{3, 1};
  DLManagedTensor managed{};
  int* deleted = nullptr;

  static DLManagedTensor* make(int* deleted) {
    auto* p = new CudaTestProducer;
    p->deleted = deleted;
    DLTensor& t = p->managed.dl_tensor;
    t.data = cuda_test_fake_device_pointer();
    t.device = DLDevice{kDLCUDA, 1};
    t.ndim = 2;
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = p->shape.data();
    t.strides = p->strides.data();
    t.byte_offset = 64;
    p->managed.manager_ctx = p;
    p->managed.deleter = [](DLManagedTensor* self) {
      auto* producer = static_cast<CudaTestProducer*>(self->manager_ctx);
      ++*producer->deleted;
      delete producer;
    };
    return &p->managed;
  }
};

TEST(CudaRuntimeTest, DlpackImportsAndExportsCudaTensorsWithoutTheDriver) {
  int deleted = 0;
  char* const device_data = static_cast<char*>(cuda_test_fake_device_pointer()) + 64;
  DLManagedTensor* exported = nullptr;
  {
    absl::StatusOr<Tensor> t = Tensor::from_dlpack(CudaTestProducer::make(&deleted));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->device(), Device::cuda(1));
    EXPECT_EQ(t->data(), device_data);
    EXPECT_TRUE(t->owns_storage());
    EXPECT_TRUE(t->strides().empty()) << "compact strides become empty";
    EXPECT_EQ(t->describe(), "Tensor[(2, 3), float32, cuda:1]");
    exported = t->to_dlpack();
  }
  EXPECT_EQ(deleted, 0) << "the export keeps the import alive";
  const DLTensor& e = exported->dl_tensor;
  EXPECT_EQ(e.device.device_type, kDLCUDA);
  EXPECT_EQ(e.device.device_id, 1);
  EXPECT_EQ(e.data, device_data);
  EXPECT_EQ(e.byte_offset, 0u);
  ASSERT_EQ(e.ndim, 2);
  EXPECT_EQ(e.shape[0], 2);
  EXPECT_EQ(e.shape[1], 3);
  EXPECT_EQ(e.strides[0], 3);
  EXPECT_EQ(e.strides[1], 1);
  {
    absl::StatusOr<Tensor> view = Tensor::from_dlpack_borrowed(e);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->device(), Device::cuda(1));
    EXPECT_EQ(view->data(), device_data);
    EXPECT_FALSE(view->owns_storage());
  }
  exported->deleter(exported);
  EXPECT_EQ(deleted, 1);
}

TEST(CudaRuntimeTest, TheLaunchEntryReportsTheMissingDriver) {
  if (!cuda::built_with_cuda()) GTEST_SKIP() << "relax was built without CUDA: no cuda_launch";
  CUDA_TEST_SKIP_WHERE_A_DEVICE_WORKS();
  const RelaxRuntimeApi& api = *kernel_runtime_api();
  ASSERT_NE(api.cuda_launch, nullptr);
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t block[3] = {32, 1, 1};
  char error[512] = {};
  const int32_t rc = api.cuda_launch(kCudaTestPtx, sizeof kCudaTestPtx, "relax_test_add", grid,
                                     block, 0, nullptr, error, sizeof error);
  EXPECT_NE(rc, 0);
  EXPECT_EQ(std::string(error), "cuda_launch of kernel `relax_test_add` on cuda:0: " +
                                    std::string(cuda::check_available().message()));
  // A short buffer gets a truncated, NUL-terminated message.
  char small[16];
  std::memset(small, 'x', sizeof small);
  EXPECT_NE(api.cuda_launch(kCudaTestPtx, sizeof kCudaTestPtx, "relax_test_add", grid, block, 0,
                            nullptr, small, sizeof small),
            0);
  EXPECT_EQ(std::string(small), "cuda_launch of ");
}

}  // namespace
}  // namespace relax::runtime
