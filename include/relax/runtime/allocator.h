// relax::runtime allocators: where tensor storage comes from.
//
// `Allocator` is the interface Tensor::empty allocates through. `PooledAllocator`
// is the runtime's own: 64-byte aligned host blocks, kept after they are freed and
// handed out again to later requests of the same size class, so that a model called
// again and again allocates from the system only on its first call. Blocks up to
// `max_pooled_class_bytes` come in power-of-two size classes (64 B, 128 B, ...);
// larger ones are rounded up to whole 4 KiB pages and reused only for requests that
// round to the same size. A block asking for more than 64-byte alignment is
// allocated and freed directly (never cached).
//
// Statistics count blocks, not requested bytes: a 100-byte request in use adds 128
// to bytes_in_use. bytes_reserved is everything held from the system: blocks in use,
// blocks cached for reuse, and blocks being allocated at that moment.
//
// `default_allocator()` is the process-wide pool that Tensor::empty uses unless it is
// given another; it is never destroyed, so that tensors in static storage can free
// their blocks during static destruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

#include "absl/status/statusor.h"

namespace relax::runtime {

/// The alignment of every block Tensor::empty allocates (a cache line, and enough for
/// any SIMD load up to AVX-512).
inline constexpr size_t kTensorAlignment = 64;

/// Where tensor storage comes from. Implementations must be safe to call from many
/// threads at once (modules run concurrently) and must outlive every block they hand out.
class Allocator {
 public:
  virtual ~Allocator() = default;

  /// A block of at least `bytes` bytes (a zero-byte request still gets a distinct
  /// block) whose address is a multiple of `alignment`, a power of two. Contents are
  /// unspecified. Errors: InvalidArgument for a bad alignment, ResourceExhausted when
  /// the memory cannot be had.
  virtual absl::StatusOr<void*> allocate(size_t bytes, size_t alignment = kTensorAlignment) = 0;

  /// Gives back a block from allocate(); null is ignored. Freeing anything else, or
  /// freeing twice, is a caller bug.
  virtual void free(void* block) = 0;
};

/// What a PooledAllocator holds and has done, in bytes of whole blocks.
struct AllocatorStats {
  /// Bytes of blocks handed out and not yet freed.
  int64_t bytes_in_use = 0;
  /// The largest bytes_in_use since construction or the last reset_peak().
  int64_t peak_bytes_in_use = 0;
  /// Successful allocate() calls.
  int64_t num_allocations = 0;
  /// Those of num_allocations served from cached blocks, without the system allocator.
  int64_t num_pool_hits = 0;
  /// Bytes held from the system: in use, cached for reuse, or being allocated.
  int64_t bytes_reserved = 0;
};

/// How a PooledAllocator sizes and bounds its pool.
struct PooledAllocatorOptions {
  /// The largest power-of-two size class (a power of two, at least 64); larger
  /// blocks are rounded to 4 KiB pages and reused only at the same rounded size.
  size_t max_pooled_class_bytes = size_t{1} << 20;
  /// Cached (freed, kept for reuse) bytes never exceed this; a block freed beyond it
  /// goes back to the system at once. 0 disables caching.
  size_t max_cached_bytes = size_t{1} << 30;
  /// bytes_reserved never exceeds this: an allocation that would first returns the
  /// cached blocks to the system, then fails with ResourceExhausted.
  size_t limit_bytes = std::numeric_limits<size_t>::max();
};

/// The runtime's pooling host allocator (see the file comment). Thread-safe.
class PooledAllocator final : public Allocator {
 public:
  /// A pool with the default options.
  PooledAllocator();
  /// A pool with the given options; aborts on a max_pooled_class_bytes that is not a
  /// power of two of at least 64.
  explicit PooledAllocator(PooledAllocatorOptions options);
  /// Returns the cached blocks to the system; aborts when blocks are still in use
  /// (a tensor would outlive its allocator).
  ~PooledAllocator() override;
  PooledAllocator(const PooledAllocator&) = delete;
  PooledAllocator& operator=(const PooledAllocator&) = delete;

  absl::StatusOr<void*> allocate(size_t bytes, size_t alignment = kTensorAlignment) override;
  /// Caches the block for reuse (within max_cached_bytes) or returns it to the system;
  /// aborts on a pointer this pool did not hand out or already took back.
  void free(void* block) override;

  /// Returns every cached block to the system: afterwards bytes_reserved equals
  /// bytes_in_use (unless other threads allocate meanwhile).
  void release_cached();
  /// A consistent snapshot of the statistics.
  AllocatorStats stats() const;
  /// Starts peak tracking afresh: peak_bytes_in_use becomes bytes_in_use.
  void reset_peak();

 private:
  struct Pool;
  std::unique_ptr<Pool> pool_;
};

/// The process-wide pool used by Tensor::empty when no allocator is given. Created on
/// first use with the default options and never destroyed.
PooledAllocator& default_allocator();

}  // namespace relax::runtime
