// The DLPack exchange of relax::runtime::Tensor: export (to_dlpack), import with
// ownership (from_dlpack) and without (from_dlpack_borrowed). Zero-copy is checked by
// comparing data pointers, ownership by counting deleter calls and pool statistics.
#include <dlpack/dlpack.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "relax/runtime/tensor.h"

namespace relax::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// A producer framework's tensor: float data 0, 1, 2, ... it owns, exported as a
/// DLManagedTensor whose deleter counts its calls into `*deleted` and frees the producer.
struct Producer {
  std::vector<float> data;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
  int* deleted = nullptr;

  static DLManagedTensor* make(std::vector<int64_t> shape, int* deleted,
                               std::vector<int64_t> strides = {}, size_t elements = 0) {
    auto* p = new Producer;
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    p->data.resize(elements != 0 ? elements : static_cast<size_t>(numel));
    std::iota(p->data.begin(), p->data.end(), 0.0f);
    p->shape = std::move(shape);
    p->strides = std::move(strides);
    p->deleted = deleted;
    DLTensor& t = p->managed.dl_tensor;
    t.data = p->data.data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int>(p->shape.size());
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = p->shape.data();
    t.strides = p->strides.empty() ? nullptr : p->strides.data();
    t.byte_offset = 0;
    p->managed.manager_ctx = p;
    p->managed.deleter = [](DLManagedTensor* self) {
      auto* producer = static_cast<Producer*>(self->manager_ctx);
      ++*producer->deleted;
      delete producer;
    };
    return &p->managed;
  }
};

float* producer_data(DLManagedTensor* m) { return static_cast<Producer*>(m->manager_ctx)->data.data(); }

Tensor import_ok(DLManagedTensor* m) {
  absl::StatusOr<Tensor> t = Tensor::from_dlpack(m);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

// ---------------------------------------------------------------------------
// Export.

TEST(DlpackTest, ToDlpackDescribesTheTensorAndSharesItsData) {
  absl::StatusOr<Tensor> t = Tensor::empty({2, 3}, DataType::float32());
  ASSERT_TRUE(t.ok());
  DLManagedTensor* m = t->to_dlpack();
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(d.data, t->data());
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.device.device_id, 0);
  ASSERT_EQ(d.ndim, 2);
  EXPECT_THAT(std::vector<int64_t>(d.shape, d.shape + 2), ElementsAre(2, 3));
  ASSERT_NE(d.strides, nullptr);  // compact strides are spelled out for every consumer
  EXPECT_THAT(std::vector<int64_t>(d.strides, d.strides + 2), ElementsAre(3, 1));
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 32);
  EXPECT_EQ(d.dtype.lanes, 1);
  EXPECT_EQ(d.byte_offset, 0u);
  EXPECT_NE(d.shape, t->shape().data());  // the arrays belong to the managed tensor
  m->deleter(m);
}

TEST(DlpackTest, ToDlpackKeepsTheStorageAliveUntilTheDeleterRuns) {
  PooledAllocator pool;
  absl::StatusOr<Tensor> t = Tensor::empty({256}, DataType::float32(), Device::cpu(), &pool);
  ASSERT_TRUE(t.ok());
  t->data_as_or_die<float>()[255] = 7.0f;
  DLManagedTensor* m = t->to_dlpack();
  t = Tensor();  // the last handle goes away
  EXPECT_EQ(pool.stats().bytes_in_use, 1024);
  EXPECT_EQ(static_cast<float*>(m->dl_tensor.data)[255], 7.0f);
  EXPECT_EQ(m->dl_tensor.shape[0], 256);
  m->deleter(m);
  EXPECT_EQ(pool.stats().bytes_in_use, 0);
}

TEST(DlpackTest, ToDlpackKeepsStridesAndConvertsEveryDtypeAndDevice) {
  std::vector<uint8_t> storage(64);
  Tensor strided = Tensor::borrow(storage.data(), {3, 2}, DataType::float32(), {1, 3});
  DLManagedTensor* m = strided.to_dlpack();
  EXPECT_THAT(std::vector<int64_t>(m->dl_tensor.strides, m->dl_tensor.strides + 2),
              ElementsAre(1, 3));
  m->deleter(m);

  struct Case {
    DataType dtype;
    uint8_t code, bits;
    uint16_t lanes;
  };
  const Case cases[] = {{DataType::int64(), 0, 64, 1},
                        {DataType{DataType::Code::kUInt, 8, 1}, 1, 8, 1},
                        {DataType::bfloat16(), 4, 16, 1},
                        {DataType::boolean(), 6, 8, 1},
                        {DataType{DataType::Code::kFloat, 32, 4}, 2, 32, 4}};
  for (const Case& c : cases) {
    DLManagedTensor* e = Tensor::borrow(storage.data(), {2}, c.dtype).to_dlpack();
    EXPECT_EQ(e->dl_tensor.dtype.code, c.code) << c.dtype;
    EXPECT_EQ(e->dl_tensor.dtype.bits, c.bits) << c.dtype;
    EXPECT_EQ(e->dl_tensor.dtype.lanes, c.lanes) << c.dtype;
    e->deleter(e);
  }

  DLManagedTensor* cuda =
      Tensor::borrow(nullptr, {4}, DataType::float32(), {}, Device::cuda(1)).to_dlpack();
  EXPECT_EQ(cuda->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(cuda->dl_tensor.device.device_id, 1);
  cuda->deleter(cuda);

  DLManagedTensor* scalar = Tensor::borrow(storage.data(), {}, DataType::float32()).to_dlpack();
  EXPECT_EQ(scalar->dl_tensor.ndim, 0);
  scalar->deleter(scalar);
}

TEST(DlpackDeathTest, ToDlpackOfAnUndefinedTensorAborts) {
  EXPECT_DEATH((void)Tensor().to_dlpack(), "to_dlpack of an undefined Tensor");
  Tensor unknown = Tensor::borrow(nullptr, {1}, DataType::float32(), {}, Device{});
  EXPECT_DEATH((void)unknown.to_dlpack(), "the device is unknown");
}

// ---------------------------------------------------------------------------
// Import with ownership.

TEST(DlpackTest, FromDlpackSharesTheProducersData) {
  int deleted = 0;
  DLManagedTensor* m = Producer::make({2, 3}, &deleted);
  float* data = producer_data(m);
  Tensor t = import_ok(m);
  EXPECT_EQ(t.data(), data);
  EXPECT_THAT(t.shape(), ElementsAre(2, 3));
  EXPECT_TRUE(t.strides().empty());
  EXPECT_EQ(t.dtype(), DataType::float32());
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_TRUE(t.owns_storage());
  t.data_as_or_die<float>()[4] = -1.0f;  // a write through the tensor is the producer's data
  EXPECT_EQ(data[4], -1.0f);
}

TEST(DlpackTest, FromDlpackCallsTheDeleterOnceWhenTheLastHandleDies) {
  int deleted = 0;
  {
    Tensor t = import_ok(Producer::make({4}, &deleted));
    Tensor copy = t;
    {
      Tensor another = copy;
      t = Tensor();
    }
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(DlpackTest, FromDlpackAcceptsANullDeleter) {
  std::vector<float> data(3, 2.0f);
  int64_t shape[] = {3};
  DLManagedTensor m{};
  m.dl_tensor = DLTensor{data.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  {
    Tensor t = import_ok(&m);
    EXPECT_EQ(t.data(), data.data());
  }
  SUCCEED();  // dropping the tensor called nothing
}

TEST(DlpackTest, RoundTripIsZeroCopyAndReleasesTheStorageOnce) {
  PooledAllocator pool;
  absl::StatusOr<Tensor> t = Tensor::empty({3, 4}, DataType::int32(), Device::cpu(), &pool);
  ASSERT_TRUE(t.ok());
  std::iota(t->data_as_or_die<int32_t>(), t->data_as_or_die<int32_t>() + 12, 0);
  Tensor back = import_ok(t->to_dlpack());
  EXPECT_EQ(back.data(), t->data());
  EXPECT_EQ(back.shape(), t->shape());
  EXPECT_TRUE(back.strides().empty());  // the exported compact strides are canonical again
  EXPECT_EQ(back.dtype(), DataType::int32());
  EXPECT_EQ(back.data_as_or_die<int32_t>()[11], 11);
  t = Tensor();
  EXPECT_EQ(pool.stats().bytes_in_use, 64);  // the imported tensor holds the export
  back = Tensor();
  EXPECT_EQ(pool.stats().bytes_in_use, 0);
}

TEST(DlpackTest, FromDlpackAppliesTheByteOffset) {
  int deleted = 0;
  DLManagedTensor* m = Producer::make({2}, &deleted, {}, /*elements=*/4);
  m->dl_tensor.byte_offset = 2 * sizeof(float);
  Tensor t = import_ok(m);
  EXPECT_EQ(t.data(), producer_data(m) + 2);
  EXPECT_THAT(std::vector<float>(t.data_as_or_die<float>(), t.data_as_or_die<float>() + 2), ElementsAre(2, 3));
}

TEST(DlpackTest, FromDlpackKeepsNonCompactStrides) {
  int deleted = 0;
  // The (3, 2) transpose of a row-major (2, 3) buffer.
  Tensor t = import_ok(Producer::make({3, 2}, &deleted, {1, 3}));
  EXPECT_THAT(t.strides(), ElementsAre(1, 3));
  EXPECT_FALSE(t.is_contiguous());
  absl::StatusOr<Tensor> compact = Tensor::empty({3, 2}, DataType::float32());
  ASSERT_TRUE(compact.ok());
  ASSERT_TRUE(compact->copy_from(t).ok());
  EXPECT_THAT(std::vector<float>(compact->data_as_or_die<float>(), compact->data_as_or_die<float>() + 6),
              ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(DlpackTest, FromDlpackDropsStridesThatAreCompact) {
  int deleted = 0;
  // (2, 1, 3) with a meaningless stride on the extent-1 dim is still compact.
  Tensor t = import_ok(Producer::make({2, 1, 3}, &deleted, {3, 42, 1}));
  EXPECT_TRUE(t.strides().empty());
  EXPECT_TRUE(t.is_contiguous());
}

TEST(DlpackTest, FromDlpackAcceptsScalarsAndEmptyTensorsWithoutData) {
  int deleted = 0;
  DLManagedTensor* scalar = Producer::make({}, &deleted);
  scalar->dl_tensor.shape = nullptr;  // ndim 0 needs no shape array
  Tensor s = import_ok(scalar);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.numel(), 1);

  DLManagedTensor* none = Producer::make({0, 5}, &deleted);
  none->dl_tensor.data = nullptr;
  Tensor n = import_ok(none);
  EXPECT_EQ(n.numel(), 0);
  EXPECT_EQ(n.data(), nullptr);
}

// ---------------------------------------------------------------------------
// Import errors: the status names the problem; the caller keeps ownership.

struct ImportError {
  const char* name;
  void (*spoil)(DLTensor&);
  absl::StatusCode code;
  const char* message;
};

class DlpackImportErrorTest : public ::testing::TestWithParam<ImportError> {};

TEST_P(DlpackImportErrorTest, IsReportedAndLeavesOwnershipWithTheCaller) {
  const ImportError& c = GetParam();
  int deleted = 0;
  DLManagedTensor* m = Producer::make({2, 3}, &deleted);
  c.spoil(m->dl_tensor);
  absl::StatusOr<Tensor> t = Tensor::from_dlpack(m);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), c.code);
  EXPECT_THAT(t.status().message(), HasSubstr(c.message));
  EXPECT_THAT(t.status().message(), HasSubstr("Tensor::from_dlpack: "));
  EXPECT_EQ(deleted, 0);
  absl::StatusOr<Tensor> view = Tensor::from_dlpack_borrowed(m->dl_tensor);
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(view.status().message(), HasSubstr(c.message));
  m->deleter(m);
  EXPECT_EQ(deleted, 1);
}

// Each case spoils one field of a valid (2, 3) float32 host tensor.
const ImportError kImportErrors[] = {
    {"NegativeNdim", [](DLTensor& d) { d.ndim = -1; }, absl::StatusCode::kInvalidArgument,
     "ndim is negative (-1)"},
    {"NullShape", [](DLTensor& d) { d.shape = nullptr; }, absl::StatusCode::kInvalidArgument,
     "shape is null for ndim 2"},
    {"NegativeDim", [](DLTensor& d) { d.shape[1] = -3; }, absl::StatusCode::kInvalidArgument,
     "dim 1 of shape (2, -3) is negative"},
    {"CudaManagedDevice", [](DLTensor& d) { d.device = DLDevice{kDLCUDAManaged, 0}; },
     absl::StatusCode::kUnimplemented, "device cuda_managed:0 is not supported (only cpu and cuda)"},
    {"CudaHostDevice", [](DLTensor& d) { d.device = DLDevice{kDLCUDAHost, 2}; },
     absl::StatusCode::kUnimplemented, "device cuda_host:2 is not supported"},
    {"OpenClDevice", [](DLTensor& d) { d.device = DLDevice{kDLOpenCL, 1}; },
     absl::StatusCode::kUnimplemented, "device opencl:1 is not supported"},
    {"UnknownDevice",
     [](DLTensor& d) {
       // A device type this header does not know (storing it as the enum would be UB).
       const int32_t type = 99;
       std::memcpy(&d.device.device_type, &type, sizeof type);
     },
     absl::StatusCode::kUnimplemented, "device device_type 99:0"},
    {"ComplexDtype", [](DLTensor& d) { d.dtype = DLDataType{kDLComplex, 64, 1}; },
     absl::StatusCode::kUnimplemented, "dtype code 5 (complex) is not supported"},
    {"ZeroBits", [](DLTensor& d) { d.dtype.bits = 0; }, absl::StatusCode::kInvalidArgument,
     "dtype with 0 bits and 1 lanes"},
    {"NullData", [](DLTensor& d) { d.data = nullptr; }, absl::StatusCode::kInvalidArgument,
     "data is null for shape (2, 3) (6 elements)"},
    {"ElementCountOverflow", [](DLTensor& d) { d.shape[0] = d.shape[1] = int64_t{1} << 40; },
     absl::StatusCode::kInvalidArgument, "element count of shape"},
    {"ByteSizeOverflow",
     [](DLTensor& d) {
       d.shape[0] = int64_t{1} << 62;  // fits int64; times 4 bytes does not fit size_t
       d.shape[1] = 1;
     },
     absl::StatusCode::kInvalidArgument, "byte size of shape"},
};

std::string import_error_name(const ::testing::TestParamInfo<ImportError>& param) {
  return param.param.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, DlpackImportErrorTest, ::testing::ValuesIn(kImportErrors),
                         import_error_name);

TEST(DlpackTest, FromDlpackOfNullIsAnError) {
  absl::StatusOr<Tensor> t = Tensor::from_dlpack(nullptr);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("the DLManagedTensor is null"));
}

// ---------------------------------------------------------------------------
// Borrowed import.

TEST(DlpackTest, FromDlpackBorrowedViewsWithoutTakingOwnership) {
  int deleted = 0;
  DLManagedTensor* m = Producer::make({3, 2}, &deleted, {1, 3});
  m->dl_tensor.byte_offset = sizeof(float);
  {
    absl::StatusOr<Tensor> view = Tensor::from_dlpack_borrowed(m->dl_tensor);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->data(), producer_data(m) + 1);
    EXPECT_FALSE(view->owns_storage());
    EXPECT_THAT(view->strides(), ElementsAre(1, 3));
    EXPECT_THAT(view->shape(), ElementsAre(3, 2));
  }
  EXPECT_EQ(deleted, 0);
  m->deleter(m);
  EXPECT_EQ(deleted, 1);
}

}  // namespace
}  // namespace relax::runtime
