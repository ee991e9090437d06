// PooledAllocator over a BlockSource other than the host's (relax/runtime/allocator.h): the
// device pools of relax/runtime/cuda.h are such pools over cuMemAlloc. A fake source hands
// out addresses of a pretend device (never dereferenced: the pool must not touch a block's
// bytes), counts its calls and can run out, so the pool's dealings with "the system" are
// checked without a GPU: what it asks for, what it gives back and when, the retry after
// running out, errors passed on, and messages naming the source.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "relax/runtime/allocator.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;

/// A pretend device's memory: addresses from a counter, a capacity, call counts.
class FakeBlockSource final : public BlockSource {
 public:
  explicit FakeBlockSource(size_t capacity = SIZE_MAX) : capacity_(capacity) {}

  absl::StatusOr<void*> allocate(size_t bytes, size_t alignment) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++allocations_;
    if (!fail_with_.ok()) return fail_with_;
    if (bytes > capacity_ || outstanding_ > capacity_ - bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("fake device full (", outstanding_, " of ", capacity_, " bytes in use)"));
    }
    next_ = (next_ + alignment - 1) / alignment * alignment;
    const uintptr_t address = next_;
    next_ += bytes;
    outstanding_ += bytes;
    sizes_[address] = bytes;
    return reinterpret_cast<void*>(address);
  }

  void free(void* block, size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++frees_;
    auto it = sizes_.find(reinterpret_cast<uintptr_t>(block));
    ASSERT_NE(it, sizes_.end()) << "freed a block the source never gave out";
    EXPECT_EQ(it->second, bytes) << "the pool gave back a block with another size";
    outstanding_ -= it->second;
    sizes_.erase(it);
  }

  std::string name() const override { return "fake:0"; }

  void fail_with(absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_with_ = std::move(status);
  }
  int allocations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return allocations_;
  }
  int frees() const {
    std::lock_guard<std::mutex> lock(mu_);
    return frees_;
  }
  size_t outstanding() const {
    std::lock_guard<std::mutex> lock(mu_);
    return outstanding_;
  }

 private:
  mutable std::mutex mu_;
  const size_t capacity_;
  absl::Status fail_with_;
  uintptr_t next_ = uintptr_t{1} << 40;  // far from any host mapping the test could touch
  size_t outstanding_ = 0;
  int allocations_ = 0;
  int frees_ = 0;
  absl::flat_hash_map<uintptr_t, size_t> sizes_;
};

void* source_test_allocate_ok(PooledAllocator& pool, size_t bytes,
                              size_t alignment = kTensorAlignment) {
  absl::StatusOr<void*> block = pool.allocate(bytes, alignment);
  EXPECT_TRUE(block.ok()) << block.status();
  return block.ok() ? *block : nullptr;
}

TEST(PooledAllocatorSourceTest, TheHostSourceIsTheDefault) {
  EXPECT_EQ(host_block_source()->name(), "");
  EXPECT_EQ(host_block_source(), host_block_source());
  absl::StatusOr<void*> block = host_block_source()->allocate(256, 128);
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*block) % 128, 0u);
  host_block_source()->free(*block, 256);
}

TEST(PooledAllocatorSourceTest, BlocksComeFromTheSourceInRoundedSizesAndAreReused) {
  auto source = std::make_shared<FakeBlockSource>();
  PooledAllocator pool(PooledAllocatorOptions{}, source);
  void* a = source_test_allocate_ok(pool, 100);      // class 128
  void* b = source_test_allocate_ok(pool, 5000000);  // large: 4 KiB pages
  EXPECT_EQ(source->allocations(), 2);
  EXPECT_EQ(source->outstanding(), 128u + 5001216u);
  pool.free(a);
  pool.free(b);
  EXPECT_EQ(source->frees(), 0) << "freed blocks stay cached";
  EXPECT_EQ(source_test_allocate_ok(pool, 120), a);
  EXPECT_EQ(source_test_allocate_ok(pool, 5000001), b);
  EXPECT_EQ(source->allocations(), 2);
  const AllocatorStats stats = pool.stats();
  EXPECT_EQ(stats.num_allocations, 4);
  EXPECT_EQ(stats.num_pool_hits, 2);
  EXPECT_EQ(stats.bytes_in_use, 128 + 5001216);
  EXPECT_EQ(stats.bytes_reserved, 128 + 5001216);
  pool.free(a);
  pool.free(b);
}

TEST(PooledAllocatorSourceTest, CachedBlocksGoBackWithTheirSizesOnReleaseAndDestruction) {
  auto source = std::make_shared<FakeBlockSource>();
  {
    PooledAllocator pool(PooledAllocatorOptions{}, source);
    void* a = source_test_allocate_ok(pool, 64);
    void* b = source_test_allocate_ok(pool, 3000);  // class 4096
    pool.free(a);
    pool.release_cached();
    EXPECT_EQ(source->frees(), 1);
    EXPECT_EQ(source->outstanding(), 4096u);
    EXPECT_EQ(pool.stats().bytes_reserved, 4096);
    pool.free(b);
    EXPECT_EQ(source->outstanding(), 4096u) << "cached, not returned";
  }
  EXPECT_EQ(source->frees(), 2);
  EXPECT_EQ(source->outstanding(), 0u);
}

TEST(PooledAllocatorSourceTest, OverAlignedAndUncachableBlocksGoStraightBack) {
  auto source = std::make_shared<FakeBlockSource>();
  PooledAllocatorOptions options;
  options.max_cached_bytes = 256;
  PooledAllocator pool(options, source);
  void* aligned = source_test_allocate_ok(pool, 100, 256);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 256, 0u);
  void* big = source_test_allocate_ok(pool, 512);
  pool.free(aligned);  // over-aligned: never cached
  pool.free(big);      // beyond max_cached_bytes
  EXPECT_EQ(source->frees(), 2);
  EXPECT_EQ(source->outstanding(), 0u);
  EXPECT_EQ(pool.stats().bytes_reserved, 0);
}

TEST(PooledAllocatorSourceTest, RunningOutReturnsTheCacheAndAsksOnceMore) {
  auto source = std::make_shared<FakeBlockSource>(/*capacity=*/1024);
  PooledAllocator pool(PooledAllocatorOptions{}, source);
  pool.free(source_test_allocate_ok(pool, 512));  // cached: the fake device holds 512 bytes
  void* block = source_test_allocate_ok(pool, 1024);
  EXPECT_NE(block, nullptr);
  EXPECT_EQ(source->allocations(), 3) << "512, the refused 1024, the 1024 after the release";
  EXPECT_EQ(source->frees(), 1);
  EXPECT_EQ(pool.stats().bytes_reserved, 1024);

  // Still too much after the release: the source's message, the pool's prefix, nothing held.
  absl::StatusOr<void*> more = pool.allocate(64);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(more.status().message(),
              HasSubstr("PooledAllocator (fake:0): fake:0 cannot allocate 64 bytes (a block of "
                        "64, alignment 64): fake device full (1024 of 1024 bytes in use)"));
  EXPECT_EQ(pool.stats().bytes_reserved, 1024);
  pool.free(block);
}

TEST(PooledAllocatorSourceTest, OtherSourceErrorsArePassedOnWithoutARetry) {
  auto source = std::make_shared<FakeBlockSource>();
  PooledAllocator pool(PooledAllocatorOptions{}, source);
  pool.free(source_test_allocate_ok(pool, 64));
  source->fail_with(absl::FailedPreconditionError("no device"));
  absl::StatusOr<void*> block = pool.allocate(128);
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(block.status().message(), HasSubstr("fake:0 cannot allocate 128 bytes"));
  EXPECT_THAT(block.status().message(), HasSubstr(": no device"));
  EXPECT_EQ(source->allocations(), 2) << "no second attempt";
  EXPECT_EQ(source->frees(), 0) << "the cache was kept";
  EXPECT_EQ(pool.stats().bytes_reserved, 64);
  // The cached block still serves its class without the source.
  void* hit = source_test_allocate_ok(pool, 50);
  EXPECT_EQ(pool.stats().num_pool_hits, 1);
  pool.free(hit);
}

TEST(PooledAllocatorSourceTest, TheLimitMessageNamesTheSource) {
  auto source = std::make_shared<FakeBlockSource>();
  PooledAllocatorOptions options;
  options.limit_bytes = 256;
  PooledAllocator pool(options, source);
  absl::StatusOr<void*> block = pool.allocate(1000);
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(block.status().message(),
              HasSubstr("PooledAllocator (fake:0): cannot allocate 1000 bytes (a block of 1024): "
                        "the limit of 256 bytes would be exceeded"));
  EXPECT_EQ(source->allocations(), 0);
}

}  // namespace
}  // namespace relax::runtime
