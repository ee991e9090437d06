// PooledAllocator: size-classed free lists of 64-byte aligned blocks from a BlockSource
// (host memory unless given another).
//
// One mutex guards the free lists, the table of live blocks and the statistics. A
// pool hit (the hot path) is a lock, a pop from a free list and an insertion into the
// live table. The system allocator is called outside the lock: the block's bytes are
// reserved first (so that limit_bytes holds under concurrency), then allocated, then
// recorded as live. Blocks are returned to the system outside the lock too.
//
// The live table maps each handed-out block to its size and alignment, so free()
// needs no size from the caller and catches double frees and foreign pointers. The
// pool never touches a block's bytes: a device's pool keeps device pointers.
#include "relax/runtime/allocator.h"

#include <sys/mman.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "relax/support/check.h"

namespace relax::runtime {

namespace {

constexpr size_t kSmallestClass = kTensorAlignment;  // 64 bytes, class 0
constexpr size_t kLargeGranule = 4096;                // large blocks round to pages

/// How one request is served: the block size and alignment to ask the system for,
/// and which free list (if any) the block returns to.
struct BlockPlan {
  size_t size = 0;
  size_t alignment = kTensorAlignment;
  /// >= 0: a power-of-two size class; kLarge: the page-rounded large lists;
  /// kDirect: over-aligned, never cached.
  int size_class = 0;
};
constexpr int kLarge = -1;
constexpr int kDirect = -2;

/// Rounds `bytes` up to a multiple of `granule` (a power of two); false on overflow.
bool round_up(size_t bytes, size_t granule, size_t* out) {
  if (bytes > std::numeric_limits<size_t>::max() - (granule - 1)) return false;
  *out = (bytes + granule - 1) & ~(granule - 1);
  return true;
}

/// A cached block on its way back to the source.
struct SizedBlock {
  void* block;
  size_t size;
};

// Blocks of at least this many bytes come from mmap on 2 MiB boundaries, advised as
// transparent huge pages (where THP is "madvise"): a tensor read end to end (weights joined at
// bind, a prefill's activations) streams without a TLB miss every 4 KiB. No change was measured
// from it alone on the language model (2-vCPU Xeon VM, 2026-12-07).
constexpr size_t kHugePage = size_t{2} << 20;

size_t mapped_bytes(size_t bytes) { return (bytes + kLargeGranule - 1) & ~(kLargeGranule - 1); }

class HostBlockSource final : public BlockSource {
 public:
  absl::StatusOr<void*> allocate(size_t bytes, size_t alignment) override {
    if (bytes >= kHugePage && alignment <= kHugePage) return allocate_huge(bytes);
    if (void* block = std::aligned_alloc(alignment, bytes)) return block;
    return absl::ResourceExhaustedError("std::aligned_alloc returned null");
  }
  void free(void* block, size_t bytes) override {
    if (bytes >= kHugePage) {
      munmap(block, mapped_bytes(bytes));
      return;
    }
    std::free(block);
  }
  std::string name() const override { return ""; }

 private:
  // `bytes` (page-rounded) at a 2 MiB boundary: a mapping one huge page longer, its unaligned
  // head and its tail unmapped.
  static absl::StatusOr<void*> allocate_huge(size_t bytes) {
    const size_t length = mapped_bytes(bytes);
    void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return absl::ResourceExhaustedError(absl::StrCat("mmap of ", length, " bytes failed"));
    const auto start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
    if (aligned > start) munmap(raw, aligned - start);
    const uintptr_t end = start + length + kHugePage;
    if (end > aligned + length) munmap(reinterpret_cast<void*>(aligned + length), end - (aligned + length));
    // Advice only: a kernel without THP keeps 4 KiB pages.
    madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);
    return reinterpret_cast<void*>(aligned);
  }
};

}  // namespace

std::shared_ptr<BlockSource> host_block_source() {
  // Intentionally leaked, like default_allocator(): pools in static storage outlive statics.
  static auto* const source = new std::shared_ptr<BlockSource>(std::make_shared<HostBlockSource>());
  return *source;
}

struct PooledAllocator::Pool {
  struct LiveBlock {
    size_t size;
    int size_class;
  };

  Pool(PooledAllocatorOptions opts, std::shared_ptr<BlockSource> src)
      : options(opts), source(src != nullptr ? std::move(src) : host_block_source()) {
    const std::string name = source->name();
    prefix = name.empty() ? "PooledAllocator: " : absl::StrCat("PooledAllocator (", name, "): ");
    subject = name.empty() ? "the system" : name;
    RELAX_CHECK(std::has_single_bit(options.max_pooled_class_bytes) &&
                options.max_pooled_class_bytes >= kSmallestClass)
        << "max_pooled_class_bytes must be a power of two of at least " << kSmallestClass
        << ", not " << options.max_pooled_class_bytes;
    const int classes = std::countr_zero(options.max_pooled_class_bytes) -
                        std::countr_zero(kSmallestClass) + 1;
    class_free.resize(static_cast<size_t>(classes));
  }

  absl::StatusOr<BlockPlan> plan(size_t bytes, size_t alignment) const {
    if (!std::has_single_bit(alignment)) {
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, "alignment ", alignment, " is not a power of two (", bytes,
          " bytes requested)"));
    }
    BlockPlan p;
    if (alignment > kTensorAlignment) {
      p.alignment = alignment;
      p.size_class = kDirect;
      if (!round_up(bytes == 0 ? 1 : bytes, alignment, &p.size)) return too_large(bytes, alignment);
    } else if (bytes <= options.max_pooled_class_bytes) {
      p.size = bytes <= kSmallestClass ? kSmallestClass : std::bit_ceil(bytes);
      p.size_class = std::countr_zero(p.size) - std::countr_zero(kSmallestClass);
    } else {
      p.size_class = kLarge;
      if (!round_up(bytes, kLargeGranule, &p.size)) return too_large(bytes, alignment);
    }
    return p;
  }

  absl::Status too_large(size_t bytes, size_t alignment) const {
    return absl::ResourceExhaustedError(absl::StrCat(
        prefix, "cannot allocate ", bytes, " bytes (alignment ", alignment,
        "): the size overflows"));
  }

  // --- everything below runs with `mu` held ---------------------------------------

  /// Keeps a freed block for reuse when it may be cached and the cache has room.
  bool cache(void* block, const LiveBlock& b) {
    if (b.size_class == kDirect || bytes_cached + b.size > options.max_cached_bytes) return false;
    if (b.size_class == kLarge) {
      large_free[b.size].push_back(block);
    } else {
      class_free[static_cast<size_t>(b.size_class)].push_back(block);
    }
    bytes_cached += b.size;
    return true;
  }

  void* take_cached(const BlockPlan& p) {
    if (p.size_class == kDirect) return nullptr;
    if (p.size_class == kLarge) {
      auto it = large_free.find(p.size);
      if (it == large_free.end() || it->second.empty()) return nullptr;
      void* b = it->second.back();
      it->second.pop_back();
      if (it->second.empty()) large_free.erase(it);
      bytes_cached -= p.size;
      return b;
    }
    std::vector<void*>& list = class_free[static_cast<size_t>(p.size_class)];
    if (list.empty()) return nullptr;
    void* b = list.back();
    list.pop_back();
    bytes_cached -= p.size;
    return b;
  }

  /// Moves every cached block out of the lists (and out of bytes_reserved); the caller
  /// frees them after unlocking.
  std::vector<SizedBlock> take_all_cached() {
    std::vector<SizedBlock> out;
    for (size_t c = 0; c < class_free.size(); ++c) {
      for (void* b : class_free[c]) out.push_back({b, kSmallestClass << c});
      class_free[c].clear();
    }
    for (auto& [size, list] : large_free) {
      for (void* b : list) out.push_back({b, size});
    }
    large_free.clear();
    stats.bytes_reserved -= static_cast<int64_t>(bytes_cached);
    bytes_cached = 0;
    return out;
  }

  bool within_limit(size_t size) const {
    const auto reserved = static_cast<size_t>(stats.bytes_reserved);
    return size <= options.limit_bytes && reserved <= options.limit_bytes - size;
  }

  void record_live(void* block, const BlockPlan& p, bool pool_hit) {
    live.emplace(block, LiveBlock{p.size, p.size_class});
    stats.bytes_in_use += static_cast<int64_t>(p.size);
    if (stats.bytes_in_use > stats.peak_bytes_in_use) stats.peak_bytes_in_use = stats.bytes_in_use;
    ++stats.num_allocations;
    if (pool_hit) ++stats.num_pool_hits;
  }

  /// Returns blocks to the source (outside the lock).
  void free_to_source(const std::vector<SizedBlock>& blocks) const {
    for (const SizedBlock& b : blocks) source->free(b.block, b.size);
  }

  const PooledAllocatorOptions options;
  const std::shared_ptr<BlockSource> source;
  std::string prefix;   // "PooledAllocator: ", "PooledAllocator (cuda:0): "
  std::string subject;  // "the system", "cuda:0"
  mutable std::mutex mu;
  std::vector<std::vector<void*>> class_free;              // by size class
  absl::flat_hash_map<size_t, std::vector<void*>> large_free;  // by page-rounded size
  absl::flat_hash_map<void*, LiveBlock> live;
  size_t bytes_cached = 0;
  AllocatorStats stats;
};


PooledAllocator::PooledAllocator() : PooledAllocator(PooledAllocatorOptions{}) {}

PooledAllocator::PooledAllocator(PooledAllocatorOptions options)
    : PooledAllocator(options, nullptr) {}

PooledAllocator::PooledAllocator(PooledAllocatorOptions options,
                                 std::shared_ptr<BlockSource> source)
    : pool_(std::make_unique<Pool>(options, std::move(source))) {}

PooledAllocator::~PooledAllocator() {
  std::vector<SizedBlock> cached;
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    RELAX_CHECK(pool_->live.empty())
        << pool_->prefix << "destroyed while " << pool_->live.size() << " blocks ("
        << pool_->stats.bytes_in_use << " bytes) are still in use";
    cached = pool_->take_all_cached();
  }
  pool_->free_to_source(cached);
}

absl::StatusOr<void*> PooledAllocator::allocate(size_t bytes, size_t alignment) {
  absl::StatusOr<BlockPlan> planned = pool_->plan(bytes, alignment);
  if (!planned.ok()) return planned.status();
  const BlockPlan p = *planned;

  // Reserve the bytes under the lock (a pool hit ends here), then allocate outside it.
  // When the source says ResourceExhausted, the cached blocks go back to it and the call
  // tries once more; any other error of the source ends the call.
  absl::Status source_error;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<SizedBlock> released;
    bool reserved = false;
    {
      std::lock_guard<std::mutex> lock(pool_->mu);
      if (void* cached = pool_->take_cached(p)) {
        pool_->record_live(cached, p, /*pool_hit=*/true);
        return cached;
      }
      if (attempt > 0 || !pool_->within_limit(p.size)) released = pool_->take_all_cached();
      if (pool_->within_limit(p.size)) {
        pool_->stats.bytes_reserved += static_cast<int64_t>(p.size);
        reserved = true;
      }
    }
    pool_->free_to_source(released);
    if (!reserved) {
      const AllocatorStats now = stats();
      return absl::ResourceExhaustedError(absl::StrCat(
          pool_->prefix, "cannot allocate ", bytes, " bytes (a block of ", p.size,
          "): the limit of ", pool_->options.limit_bytes, " bytes would be exceeded (",
          now.bytes_reserved, " bytes reserved, ", now.bytes_in_use, " in use)"));
    }
    absl::StatusOr<void*> block = pool_->source->allocate(p.size, p.alignment);
    std::lock_guard<std::mutex> lock(pool_->mu);
    if (block.ok()) {
      pool_->record_live(*block, p, /*pool_hit=*/false);
      return *block;
    }
    pool_->stats.bytes_reserved -= static_cast<int64_t>(p.size);
    source_error = block.status();
    if (!absl::IsResourceExhausted(source_error)) break;
  }
  return absl::Status(source_error.code(),
                      absl::StrCat(pool_->prefix, pool_->subject, " cannot allocate ", bytes,
                                   " bytes (a block of ", p.size, ", alignment ", p.alignment,
                                   "): ", source_error.message()));
}

void PooledAllocator::free(void* block) {
  if (block == nullptr) return;
  size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    auto it = pool_->live.find(block);
    RELAX_CHECK(it != pool_->live.end())
        << pool_->prefix << "free(" << block
        << "): not a block of this allocator, or freed already";
    const Pool::LiveBlock b = it->second;
    pool_->live.erase(it);
    pool_->stats.bytes_in_use -= static_cast<int64_t>(b.size);
    if (pool_->cache(block, b)) return;
    pool_->stats.bytes_reserved -= static_cast<int64_t>(b.size);
    size = b.size;
  }
  pool_->source->free(block, size);
}

void PooledAllocator::release_cached() {
  std::vector<SizedBlock> cached;
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    cached = pool_->take_all_cached();
  }
  pool_->free_to_source(cached);
}

AllocatorStats PooledAllocator::stats() const {
  std::lock_guard<std::mutex> lock(pool_->mu);
  return pool_->stats;
}

void PooledAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(pool_->mu);
  pool_->stats.peak_bytes_in_use = pool_->stats.bytes_in_use;
}

PooledAllocator& default_allocator() {
  // Intentionally leaked: tensors with static storage duration may free their blocks
  // after every function-local static of this library has been destroyed.
  static PooledAllocator* const pool = new PooledAllocator();
  return *pool;
}

}  // namespace relax::runtime
