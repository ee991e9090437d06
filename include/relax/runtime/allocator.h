// relax::runtime allocators: where tensor storage comes from.
//
// `Allocator` is the interface Tensor::empty allocates through. `PooledAllocator`
// is the runtime's own: 64-byte aligned blocks, kept after they are freed and
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
// Blocks come from a `BlockSource` ("the system"): host memory by default
// (host_block_source(): std::aligned_alloc), device memory for a device's pool
// (relax/runtime/cuda.h's device_allocator), so that every pool has the same size
// classes, bounds and statistics whatever memory it holds. The pool never reads or
// writes a block's bytes, so a source's blocks need not be addressable from the host.
//
// `default_allocator()` is the process-wide pool that Tensor::empty uses unless it is
// given another; it is never destroyed, so that tensors in static storage can free
// their blocks during static destruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

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

/// Where a PooledAllocator gets its blocks from and gives them back to ("the system"):
/// host memory by default, a device's memory for a device's pool. Implementations must be
/// safe to call from many threads at once and outlive the pools that use them (a pool
/// holds a shared_ptr).
class BlockSource {
 public:
  virtual ~BlockSource() = default;

  /// A block of exactly `bytes` bytes (non-zero: the pool's rounded size) whose address is
  /// a multiple of `alignment` (a power of two, at least kTensorAlignment).
  /// ResourceExhausted when the memory cannot be had now: the pool then returns its cached
  /// blocks and asks once more. Any other error (an alignment the source cannot give, no
  /// device) is passed on at once.
  virtual absl::StatusOr<void*> allocate(size_t bytes, size_t alignment) = 0;
  /// Gives back a block that allocate() returned for `bytes` bytes.
  virtual void free(void* block, size_t bytes) = 0;
  /// What the memory is, for messages: "" for host memory (messages then begin
  /// "PooledAllocator: " and say "the system"), "cuda:0" for a device's
  /// ("PooledAllocator (cuda:0): ").
  virtual std::string name() const = 0;
};

/// The host's source: 64-byte aligned blocks from std::aligned_alloc. Never destroyed.
std::shared_ptr<BlockSource> host_block_source();

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

/// The runtime's pooling allocator (see the file comment). Thread-safe.
class PooledAllocator final : public Allocator {
 public:
  /// A pool with the default options.
  PooledAllocator();
  /// A pool with the given options; aborts on a max_pooled_class_bytes that is not a
  /// power of two of at least 64.
  explicit PooledAllocator(PooledAllocatorOptions options);
  /// A pool with the given options over the blocks of `source` (host_block_source()
  /// when null); aborts as above.
  PooledAllocator(PooledAllocatorOptions options, std::shared_ptr<BlockSource> source);
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
