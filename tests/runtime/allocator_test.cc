// PooledAllocator (relax/runtime/allocator.h): size classes, reuse visible in the
// statistics, peak tracking, alignment, the cache and limit bounds, release_cached,
// concurrent use, misuse that aborts, and the immortal default pool.
#include "relax/runtime/allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "relax/runtime/tensor.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;

void* allocate_ok(Allocator& allocator, size_t bytes, size_t alignment = kTensorAlignment) {
  absl::StatusOr<void*> block = allocator.allocate(bytes, alignment);
  EXPECT_TRUE(block.ok()) << block.status();
  return block.ok() ? *block : nullptr;
}

bool aligned_to(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// ---------------------------------------------------------------------------
// Sizes and reuse.

TEST(PooledAllocatorTest, SmallRequestsRoundUpToPowerOfTwoClasses) {
  PooledAllocator pool;
  void* a = allocate_ok(pool, 100);
  EXPECT_EQ(pool.stats().bytes_in_use, 128);
  void* b = allocate_ok(pool, 0);
  EXPECT_EQ(pool.stats().bytes_in_use, 128 + 64);
  void* c = allocate_ok(pool, 64);
  EXPECT_EQ(pool.stats().bytes_in_use, 128 + 64 + 64);
  EXPECT_NE(b, c);  // a zero-byte request still gets a block of its own
  for (void* p : {a, b, c}) pool.free(p);
  EXPECT_EQ(pool.stats().bytes_in_use, 0);
  EXPECT_EQ(pool.stats().bytes_reserved, 128 + 64 + 64);  // cached
}

TEST(PooledAllocatorTest, FreeThenAllocateSameSizeIsAPoolHit) {
  PooledAllocator pool;
  void* first = allocate_ok(pool, 1000);
  pool.free(first);
  void* second = allocate_ok(pool, 1000);
  EXPECT_EQ(second, first);
  AllocatorStats s = pool.stats();
  EXPECT_EQ(s.num_allocations, 2);
  EXPECT_EQ(s.num_pool_hits, 1);
  EXPECT_EQ(s.bytes_in_use, 1024);
  EXPECT_EQ(s.bytes_reserved, 1024);
  pool.free(second);
}

TEST(PooledAllocatorTest, RequestsOfOneClassShareBlocksOthersDoNot) {
  PooledAllocator pool;
  void* a = allocate_ok(pool, 300);  // class 512
  pool.free(a);
  void* b = allocate_ok(pool, 500);  // class 512: reused
  EXPECT_EQ(b, a);
  void* c = allocate_ok(pool, 200);  // class 256: new
  EXPECT_NE(c, a);
  AllocatorStats s = pool.stats();
  EXPECT_EQ(s.num_pool_hits, 1);
  EXPECT_EQ(s.num_allocations, 3);
  pool.free(b);
  pool.free(c);
}

TEST(PooledAllocatorTest, LargeBlocksAreReusedOnlyAtTheSamePageRoundedSize) {
  PooledAllocatorOptions options;
  options.max_pooled_class_bytes = 4096;
  PooledAllocator pool(options);
  void* a = allocate_ok(pool, 10000);  // 3 pages
  EXPECT_EQ(pool.stats().bytes_in_use, 3 * 4096);
  pool.free(a);
  void* b = allocate_ok(pool, 12288);  // also 3 pages: reused
  EXPECT_EQ(b, a);
  void* c = allocate_ok(pool, 12289);  // 4 pages: not the cached block
  EXPECT_EQ(pool.stats().num_pool_hits, 1);
  EXPECT_EQ(pool.stats().bytes_in_use, 7 * 4096);
  pool.free(b);
  pool.free(c);
  void* d = allocate_ok(pool, 5000);  // 2 pages: neither cached block fits exactly
  EXPECT_EQ(pool.stats().num_pool_hits, 1);
  EXPECT_EQ(pool.stats().bytes_reserved, 9 * 4096);
  pool.free(d);
}

// ---------------------------------------------------------------------------
// Statistics.

TEST(PooledAllocatorTest, PeakTracksTheHighestUseUntilReset) {
  PooledAllocator pool;
  void* a = allocate_ok(pool, 1024);
  void* b = allocate_ok(pool, 2048);
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 3072);
  pool.free(a);
  EXPECT_EQ(pool.stats().bytes_in_use, 2048);
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 3072);
  pool.reset_peak();
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 2048);
  void* c = allocate_ok(pool, 64);
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 2048 + 64);
  pool.free(b);
  pool.free(c);
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 2048 + 64);
}

TEST(PooledAllocatorTest, ReleaseCachedReturnsReservedBytesToBytesInUse) {
  PooledAllocator pool;
  std::vector<void*> blocks;
  for (size_t bytes : std::vector<size_t>{64, 256, 4096, size_t{3} << 20}) blocks.push_back(allocate_ok(pool, bytes));
  pool.free(blocks[0]);
  pool.free(blocks[3]);
  AllocatorStats before = pool.stats();
  EXPECT_EQ(before.bytes_in_use, 256 + 4096);
  EXPECT_EQ(before.bytes_reserved, 64 + 256 + 4096 + (3 << 20));
  pool.release_cached();
  AllocatorStats after = pool.stats();
  EXPECT_EQ(after.bytes_reserved, after.bytes_in_use);
  EXPECT_EQ(after.bytes_in_use, 256 + 4096);
  // The released blocks are gone: the same sizes now come from the system again.
  void* again = allocate_ok(pool, 64);
  EXPECT_EQ(pool.stats().num_pool_hits, 0);
  pool.free(again);
  pool.free(blocks[1]);
  pool.free(blocks[2]);
  pool.release_cached();
  EXPECT_EQ(pool.stats().bytes_reserved, 0);
}

// ---------------------------------------------------------------------------
// Alignment.

TEST(PooledAllocatorTest, EveryBlockIs64ByteAligned) {
  PooledAllocatorOptions options;
  options.max_pooled_class_bytes = 1 << 14;
  PooledAllocator pool(options);
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> size(0, 1 << 16);
  std::vector<void*> blocks;
  for (int i = 0; i < 500; ++i) {
    void* p = allocate_ok(pool, size(rng), i % 3 == 0 ? 16 : kTensorAlignment);
    EXPECT_TRUE(aligned_to(p, 64)) << p;
    blocks.push_back(p);
    if (i % 4 == 1) {  // free some so that later requests come from the pool too
      pool.free(blocks.front());
      blocks.erase(blocks.begin());
    }
  }
  EXPECT_GT(pool.stats().num_pool_hits, 0);
  for (void* p : blocks) pool.free(p);
}

TEST(PooledAllocatorTest, OverAlignedBlocksAreHonouredAndNotCached) {
  PooledAllocator pool;
  void* p = allocate_ok(pool, 100, 4096);
  EXPECT_TRUE(aligned_to(p, 4096)) << p;
  EXPECT_EQ(pool.stats().bytes_in_use, 4096);
  pool.free(p);
  EXPECT_EQ(pool.stats().bytes_reserved, 0);
}

TEST(PooledAllocatorTest, AlignmentMustBeAPowerOfTwo) {
  PooledAllocator pool;
  absl::StatusOr<void*> p = pool.allocate(100, 48);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("alignment 48 is not a power of two"));
  EXPECT_EQ(pool.allocate(100, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.stats().num_allocations, 0);
}

// ---------------------------------------------------------------------------
// Bounds.

TEST(PooledAllocatorTest, MaxCachedBytesBoundsTheCache) {
  PooledAllocatorOptions options;
  options.max_cached_bytes = 256;
  PooledAllocator pool(options);
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(allocate_ok(pool, 128));
  for (void* p : blocks) pool.free(p);
  AllocatorStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.bytes_reserved, 256);  // two blocks kept, two returned
}

TEST(PooledAllocatorTest, ZeroMaxCachedBytesDisablesCaching) {
  PooledAllocatorOptions options;
  options.max_cached_bytes = 0;
  PooledAllocator pool(options);
  pool.free(allocate_ok(pool, 128));
  pool.free(allocate_ok(pool, 128));
  EXPECT_EQ(pool.stats().num_pool_hits, 0);
  EXPECT_EQ(pool.stats().bytes_reserved, 0);
}

TEST(PooledAllocatorTest, LimitFailsWithTheValuesAndReleasesCachedBlocksFirst) {
  PooledAllocatorOptions options;
  options.limit_bytes = 1024;
  PooledAllocator pool(options);
  void* half = allocate_ok(pool, 512);
  absl::StatusOr<void*> too_much = pool.allocate(1024);
  ASSERT_FALSE(too_much.ok());
  EXPECT_EQ(too_much.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(too_much.status().message(), HasSubstr("cannot allocate 1024 bytes"));
  EXPECT_THAT(too_much.status().message(), HasSubstr("limit of 1024 bytes"));
  EXPECT_THAT(too_much.status().message(), HasSubstr("512 bytes reserved"));
  EXPECT_EQ(pool.stats().num_allocations, 1);
  // Once the 512-byte block is only cached, the pool gives it back to make room.
  pool.free(half);
  EXPECT_EQ(pool.stats().bytes_reserved, 512);
  void* all = allocate_ok(pool, 1024);
  EXPECT_EQ(pool.stats().bytes_reserved, 1024);
  EXPECT_EQ(pool.stats().bytes_in_use, 1024);
  pool.free(all);
}

TEST(PooledAllocatorTest, OverflowingSizesFail) {
  PooledAllocator pool;
  absl::StatusOr<void*> p = pool.allocate(std::numeric_limits<size_t>::max() - 10);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(p.status().message(), HasSubstr("overflows"));
  EXPECT_EQ(pool.stats().bytes_reserved, 0);
}

// Sanitizer runtimes abort on an impossible request instead of returning null.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RELAX_TEST_SYSTEM_MALLOC_CAN_FAIL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define RELAX_TEST_SYSTEM_MALLOC_CAN_FAIL 0
#endif
#endif
#ifndef RELAX_TEST_SYSTEM_MALLOC_CAN_FAIL
#define RELAX_TEST_SYSTEM_MALLOC_CAN_FAIL 1
#endif

TEST(PooledAllocatorTest, ASystemFailureIsReportedAndLeavesNothingReserved) {
  if (!RELAX_TEST_SYSTEM_MALLOC_CAN_FAIL) GTEST_SKIP() << "the sanitizer aborts instead";
  PooledAllocator pool;
  pool.free(allocate_ok(pool, 256));  // cached: released before the second attempt
  absl::StatusOr<void*> p = pool.allocate(size_t{1} << 60);  // more than any address space
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(p.status().message(),
              HasSubstr("the system cannot allocate 1152921504606846976 bytes"));
  AllocatorStats s = pool.stats();
  EXPECT_EQ(s.bytes_reserved, 0);
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocations, 1);
}

// ---------------------------------------------------------------------------
// Concurrency.

TEST(PooledAllocatorTest, ConcurrentAllocationFromEightThreadsKeepsStatsConsistent) {
  PooledAllocator pool;
  constexpr int kThreads = 8;
  constexpr int kIterations = 3000;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&pool, &failures, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::uniform_int_distribution<size_t> size(1, 5000);
      std::vector<std::pair<unsigned char*, size_t>> held;
      const auto mark = static_cast<unsigned char>(t + 1);
      for (int i = 0; i < kIterations; ++i) {
        const size_t bytes = size(rng);
        absl::StatusOr<void*> p = pool.allocate(bytes);
        if (!p.ok() || !aligned_to(*p, 64)) {
          ++failures[static_cast<size_t>(t)];
          continue;
        }
        auto* block = static_cast<unsigned char*>(*p);
        std::memset(block, mark, bytes);  // a block handed to two threads would be overwritten
        held.emplace_back(block, bytes);
        if (held.size() > 4 || i % 3 == 0) {
          auto [old, old_bytes] = held.front();
          for (size_t k = 0; k < old_bytes; ++k) {
            if (old[k] != mark) {
              ++failures[static_cast<size_t>(t)];
              break;
            }
          }
          pool.free(old);
          held.erase(held.begin());
        }
      }
      for (auto [block, bytes] : held) pool.free(block);
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;
  AllocatorStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocations, int64_t{kThreads} * kIterations);
  EXPECT_GT(s.num_pool_hits, 0);
  EXPECT_LE(s.num_pool_hits, s.num_allocations);
  EXPECT_GT(s.peak_bytes_in_use, 0);
  EXPECT_LE(s.peak_bytes_in_use, s.bytes_reserved);  // nothing cached was ever returned
  pool.release_cached();
  EXPECT_EQ(pool.stats().bytes_reserved, 0);
}

// ---------------------------------------------------------------------------
// Misuse aborts with a message.

TEST(PooledAllocatorDeathTest, FreeingAForeignPointerAborts) {
  PooledAllocator pool;
  int local = 0;
  EXPECT_DEATH(pool.free(&local), "not a block of this allocator, or freed already");
}

TEST(PooledAllocatorDeathTest, FreeingTwiceAborts) {
  PooledAllocator pool;
  void* p = allocate_ok(pool, 64);
  pool.free(p);
  EXPECT_DEATH(pool.free(p), "freed already");
}

TEST(PooledAllocatorDeathTest, DestroyingWithBlocksInUseAborts) {
  EXPECT_DEATH(
      {
        PooledAllocator pool;
        (void)pool.allocate(100);
      },
      "destroyed while 1 blocks \\(128 bytes\\) are still in use");
}

TEST(PooledAllocatorDeathTest, ClassBoundMustBeAPowerOfTwo) {
  PooledAllocatorOptions options;
  options.max_pooled_class_bytes = 1000;
  EXPECT_DEATH(PooledAllocator{options}, "max_pooled_class_bytes must be a power of two");
}

// ---------------------------------------------------------------------------
// The process-wide pool.

TEST(DefaultAllocatorTest, IsOneProcessWidePoolUsedByTensorEmpty) {
  PooledAllocator& pool = default_allocator();
  EXPECT_EQ(&pool, &default_allocator());
  const AllocatorStats before = pool.stats();
  {
    absl::StatusOr<Tensor> t = Tensor::empty({10, 10}, DataType::float32());
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(pool.stats().num_allocations, before.num_allocations + 1);
    EXPECT_EQ(pool.stats().bytes_in_use, before.bytes_in_use + 512);
  }
  EXPECT_EQ(pool.stats().bytes_in_use, before.bytes_in_use);
}

// Constructed before any test runs, so before the default pool: its destructor runs
// after the pool's would, had the pool been an ordinary function-local static.
Tensor g_late_tensor;

TEST(DefaultAllocatorDeathTest, OutlivesTensorsDestroyedDuringStaticDestruction) {
  EXPECT_EXIT(
      {
        g_late_tensor = *Tensor::empty({4}, DataType::float32());
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace relax::runtime
