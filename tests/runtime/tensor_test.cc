// relax::runtime::Tensor (relax/runtime/tensor.h): allocation (zeroed, aligned, through
// an Allocator), its errors, borrowed and adopted memory, layout queries, copy_from and describe().
// The DLPack exchange is tested in dlpack_test.cc.
#include "relax/runtime/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"

namespace relax::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor empty_ok(std::vector<int64_t> shape, DataType dtype = DataType::float32(),
                Allocator* allocator = nullptr) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype, Device::cpu(), allocator);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

/// A host tensor holding 0, 1, 2, ... (as float).
Tensor iota(std::vector<int64_t> shape) {
  Tensor t = empty_ok(std::move(shape));
  std::iota(t.data_as_or_die<float>(), t.data_as_or_die<float>() + t.numel(), 0.0f);
  return t;
}

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data_as_or_die<float>(), t.data_as_or_die<float>() + t.numel());
}

/// An Allocator that counts its calls and hands out malloc'd 64-byte aligned blocks.
class CountingAllocator final : public Allocator {
 public:
  absl::StatusOr<void*> allocate(size_t bytes, size_t alignment) override {
    ++allocations;
    last_alignment = alignment;
    return std::aligned_alloc(kTensorAlignment, (bytes / 64 + 1) * 64);
  }
  void free(void* block) override {
    ++frees;
    std::free(block);
  }
  int allocations = 0;
  int frees = 0;
  size_t last_alignment = 0;
};

/// An Allocator that always fails.
class FailingAllocator final : public Allocator {
 public:
  absl::StatusOr<void*> allocate(size_t bytes, size_t /*alignment*/) override {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory for ", bytes));
  }
  void free(void* /*block*/) override {}
};

// ---------------------------------------------------------------------------
// Tensor::empty.

TEST(TensorTest, EmptyIsZeroedAlignedAndOwned) {
  Tensor t = empty_ok({3, 5});
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  EXPECT_THAT(t.shape(), ElementsAre(3, 5));
  EXPECT_TRUE(t.strides().empty());
  EXPECT_EQ(t.ndim(), 2);
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.element_bytes(), 4u);
  EXPECT_EQ(t.nbytes(), 60u);
  EXPECT_TRUE(t.owns_storage());
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.device(), Device::cpu());
  for (float v : values(t)) EXPECT_EQ(v, 0.0f);
}

TEST(TensorTest, EmptyZeroesABlockTheAllocatorReuses) {
  PooledAllocator pool;
  void* first_data = nullptr;
  {
    Tensor t = empty_ok({4, 4}, DataType::float32(), &pool);
    first_data = t.data();
    std::memset(t.data(), 0xff, t.nbytes());
  }
  Tensor again = empty_ok({4, 4}, DataType::float32(), &pool);
  ASSERT_EQ(again.data(), first_data);  // the same block, from the pool
  EXPECT_EQ(pool.stats().num_pool_hits, 1);
  for (float v : values(again)) EXPECT_EQ(v, 0.0f);
}

TEST(TensorTest, EmptyAllocatesThroughTheGivenAllocatorOnceAndFreesWithTheLastHandle) {
  CountingAllocator counting;
  {
    Tensor t = empty_ok({2, 8}, DataType::int64(), &counting);
    EXPECT_EQ(counting.allocations, 1);
    EXPECT_EQ(counting.last_alignment, kTensorAlignment);
    Tensor copy = t;
    EXPECT_TRUE(copy.same_storage(t));
    t = Tensor();
    EXPECT_EQ(counting.frees, 0);
  }
  EXPECT_EQ(counting.frees, 1);
}

TEST(TensorTest, EmptyHandlesScalarsAndZeroElements) {
  Tensor scalar = empty_ok({}, DataType::int32());
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 4u);
  EXPECT_EQ(*scalar.data_as_or_die<int32_t>(), 0);
  Tensor none = empty_ok({0, 3});
  EXPECT_EQ(none.numel(), 0);
  EXPECT_EQ(none.nbytes(), 0u);
  EXPECT_NE(none.data(), nullptr);
}

TEST(TensorTest, EmptyRejectsANegativeDimNamingIt) {
  absl::StatusOr<Tensor> t = Tensor::empty({2, -1}, DataType::float32());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("dim 1 of shape (2, -1) is negative"));
}

TEST(TensorTest, EmptyRejectsOverflowingSizes) {
  absl::StatusOr<Tensor> elements = Tensor::empty({int64_t{1} << 40, int64_t{1} << 40}, DataType{DataType::Code::kInt, 8, 1});
  ASSERT_FALSE(elements.ok());
  EXPECT_THAT(elements.status().message(),
              HasSubstr("element count of shape (1099511627776, 1099511627776) overflows"));
  absl::StatusOr<Tensor> bytes = Tensor::empty({int64_t{1} << 62}, DataType::float64());
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(),
              HasSubstr("byte size of shape (4611686018427387904,) of float64 overflows"));
}

TEST(TensorTest, EmptyAllocatesOnlyOnTheHostAndCuda) {
  absl::StatusOr<Tensor> t = Tensor::empty({2}, DataType::float32(), Device{});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(t.status().message(),
              HasSubstr("allocation on unknown is not supported (only cpu and cuda)"));
}

TEST(TensorTest, EmptyReportsAnAllocationFailureWithTheSize) {
  PooledAllocatorOptions options;
  options.limit_bytes = 1024;
  PooledAllocator pool(options);
  absl::StatusOr<Tensor> t = Tensor::empty({32, 32}, DataType::float32(), Device::cpu(), &pool);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(t.status().message(),
              HasSubstr("Tensor::empty: cannot allocate (32, 32) of float32 (4096 bytes)"));
  EXPECT_THAT(t.status().message(), HasSubstr("limit of 1024 bytes"));

  FailingAllocator failing;
  absl::StatusOr<Tensor> u = Tensor::empty({3}, DataType::float32(), Device::cpu(), &failing);
  ASSERT_FALSE(u.ok());
  EXPECT_THAT(u.status().message(), HasSubstr("out of memory for 12"));
}

// ---------------------------------------------------------------------------
// Borrowed views and layout.

TEST(TensorTest, BorrowViewsCallerMemoryWithItsStrides) {
  std::vector<float> storage(6, 1.5f);
  Tensor t = Tensor::borrow(storage.data(), {3, 2}, DataType::float32(), {1, 3});
  EXPECT_EQ(t.data(), storage.data());
  EXPECT_FALSE(t.owns_storage());
  EXPECT_THAT(t.strides(), ElementsAre(1, 3));
  EXPECT_FALSE(t.is_contiguous());
  // Dims of extent 1 may carry any stride without breaking contiguity.
  EXPECT_TRUE(Tensor::borrow(storage.data(), {1, 6}, DataType::float32(), {99, 1}).is_contiguous());
  EXPECT_TRUE(Tensor::borrow(storage.data(), {2, 3}, DataType::float32(), {3, 1}).is_contiguous());
  // Without elements every layout is the compact one.
  EXPECT_TRUE(Tensor::borrow(nullptr, {0, 3}, DataType::float32(), {7, 2}).is_contiguous());
}

TEST(TensorTest, AdoptKeepsTheOwnerUntilTheLastViewDies) {
  std::vector<float> storage = {1, 2, 3, 4, 5, 6};
  int released = 0;
  Tensor view;
  {
    std::shared_ptr<void> owner(storage.data(), [&released](void*) { ++released; });
    Tensor t = Tensor::adopt(storage.data(), {2, 3}, DataType::float32(), std::move(owner));
    EXPECT_TRUE(t.owns_storage());
    EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t.data(), storage.data());
    absl::StatusOr<Tensor> row = t.view(3 * sizeof(float), {3}, DataType::float32());
    ASSERT_TRUE(row.ok()) << row.status();
    view = *row;
  }
  EXPECT_EQ(released, 0);  // the view still holds the owner
  EXPECT_EQ(static_cast<const float*>(view.data())[0], 4.f);
  view = Tensor();
  EXPECT_EQ(released, 1);
}

TEST(TensorDeathTest, BorrowAbortsOnAStrideCountMismatch) {
  float x = 0;
  EXPECT_DEATH((void)Tensor::borrow(&x, {1, 1}, DataType::float32(), {1}),
               "Tensor::borrow: 1 strides for 2 dims");
}

TEST(TensorTest, SameStorageComparesTheStart) {
  Tensor a = empty_ok({4});
  Tensor b = a;
  Tensor c = empty_ok({4});
  EXPECT_TRUE(a.same_storage(b));
  EXPECT_FALSE(a.same_storage(c));
  EXPECT_FALSE(a.same_storage(Tensor()));
}

TEST(TensorTest, DescribeNamesShapeDtypeAndNonHostDevice) {
  EXPECT_EQ(empty_ok({2, 3}).describe(), "Tensor[(2, 3), float32]");
  EXPECT_EQ(empty_ok({7}, DataType::int64()).describe(), "Tensor[(7,), int64]");
  EXPECT_EQ(empty_ok({}).describe(), "Tensor[(), float32]");
  EXPECT_EQ(Tensor::borrow(nullptr, {2}, DataType::float16(), {}, Device::cuda(1)).describe(),
            "Tensor[(2,), float16, cuda:1]");
  EXPECT_EQ(Tensor().describe(), "Tensor[undefined]");
}

TEST(TensorDeathTest, DataAsOrDieAbortsOnAnotherElementType) {
  Tensor t = empty_ok({2});
  EXPECT_DEATH((void)t.data_as_or_die<double>(), "data_as_or_die<float64> of Tensor\\[\\(2,\\), float32\\]");
  // The same size is not the same type.
  EXPECT_DEATH((void)t.data_as_or_die<int32_t>(), "data_as_or_die<int32> of Tensor\\[\\(2,\\), float32\\]");
}

// ---------------------------------------------------------------------------
// copy_from.

TEST(TensorTest, CopyFromCopiesCompactTensors) {
  Tensor src = iota({2, 3});
  Tensor dst = empty_ok({2, 3});
  ASSERT_TRUE(dst.copy_from(src).ok());
  EXPECT_THAT(values(dst), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_FALSE(dst.same_storage(src));
}

TEST(TensorTest, CopyFromReadsAStridedSource) {
  // A (3, 2) transposed view of the row-major (2, 3) matrix 0..5.
  Tensor base = iota({2, 3});
  Tensor transposed = Tensor::borrow(base.data(), {3, 2}, DataType::float32(), {1, 3});
  Tensor dst = empty_ok({3, 2});
  ASSERT_TRUE(dst.copy_from(transposed).ok());
  EXPECT_THAT(values(dst), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(TensorTest, CopyFromWritesAStridedDestination) {
  // Every other element of an 8-element buffer, as a (2, 2) tensor with strides (4, 2).
  std::vector<float> storage(8, -1.0f);
  Tensor dst = Tensor::borrow(storage.data(), {2, 2}, DataType::float32(), {4, 2});
  ASSERT_TRUE(dst.copy_from(iota({2, 2})).ok());
  EXPECT_THAT(storage, ElementsAre(0, -1, 1, -1, 2, -1, 3, -1));
}

TEST(TensorTest, CopyFromWalksEveryOuterIndexOfThreeDims) {
  // Rows of a (2, 3, 4) tensor padded to 5 elements: strides (15, 5, 1); the inner dim
  // stays unit-stride (one memcpy per row) while both outer dims advance.
  std::vector<float> storage(30, -1.0f);
  Tensor dst = Tensor::borrow(storage.data(), {2, 3, 4}, DataType::float32(), {15, 5, 1});
  ASSERT_TRUE(dst.copy_from(iota({2, 3, 4})).ok());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(storage[static_cast<size_t>(i * 15 + j * 5 + k)],
                  static_cast<float>(i * 12 + j * 4 + k));
      }
      EXPECT_EQ(storage[static_cast<size_t>(i * 15 + j * 5 + 4)], -1.0f);  // padding untouched
    }
  }
  Tensor back = empty_ok({2, 3, 4});
  ASSERT_TRUE(back.copy_from(dst).ok());
  EXPECT_EQ(values(back), values(iota({2, 3, 4})));
}

TEST(TensorTest, CopyFromHandlesScalarsAndZeroElements) {
  Tensor src = empty_ok({}, DataType::int64());
  *src.data_as_or_die<int64_t>() = 42;
  Tensor dst = empty_ok({}, DataType::int64());
  ASSERT_TRUE(dst.copy_from(src).ok());
  EXPECT_EQ(*dst.data_as_or_die<int64_t>(), 42);
  EXPECT_TRUE(empty_ok({0, 4}).copy_from(empty_ok({0, 4})).ok());
}

TEST(TensorTest, CopyFromRejectsMismatchesNamingBothTensors) {
  Tensor dst = empty_ok({2, 3});
  absl::Status shape = dst.copy_from(empty_ok({3, 2}));
  EXPECT_EQ(shape.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shape.message(),
              HasSubstr("cannot copy Tensor[(3, 2), float32] into Tensor[(2, 3), float32]: "
                        "the shapes differ"));
  absl::Status dtype = dst.copy_from(empty_ok({2, 3}, DataType::int32()));
  EXPECT_EQ(dtype.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dtype.message(), HasSubstr("the dtypes differ"));
  absl::Status undefined = dst.copy_from(Tensor());
  EXPECT_THAT(undefined.message(), HasSubstr("cannot copy Tensor[undefined]"));
  Tensor unknown = Tensor::borrow(nullptr, {2, 3}, DataType::float32(), {}, Device{});
  absl::Status device = dst.copy_from(unknown);
  EXPECT_EQ(device.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(device.message(), HasSubstr("between cpu and cuda only"));
}

}  // namespace
}  // namespace relax::runtime
