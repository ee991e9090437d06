// ExecutionContext (relax/runtime/execution_context.h): the storages a caller's calls reuse.
//
// A kept storage is a Block: memory from the context's allocator, returned to it when the last
// reference to the Block goes. The context holds its Blocks by shared_ptr, per site; a Block
// handed out to a call is "lent": the VM gets a Tensor whose storage reference (the one every
// view and DLPack export of it copies) holds the Block too, and whose deleter -- run when the
// last tensor over the memory dies, on whichever thread that is -- marks the Block free again. So "nobody else holds it" is one atomic flag, set when lent and
// cleared (release) by that deleter, read (acquire) before reuse: writes through a tensor a
// caller dropped on another thread happen before the next call reuses the memory. A Block the
// context dropped (too small, or the context died) lives on through the lent tensor and goes
// back to the allocator with it.
//
// The context serves the device of its module (bound by begin_call): its storages come from
// the allocator it was given, else from that device's own (the host pool, or the CUDA device's
// pool), and the lent tensors are on that device. A device call's kernels run asynchronously
// on its thread's stream: a call from another thread than the previous one first makes its
// stream wait for the previous call's work (vm_device::DeviceFence), so that reusing a storage
// never overwrites memory a queued kernel still reads.
//
// The tensor lent for a request has the requested size, not the Block's: an alloc_tensor that
// does not fit the size this call asked for is still the VM's "does not fit" error, however large
// the Block serving it is.
#include "relax/runtime/execution_context.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>


#include "absl/strings/str_cat.h"
#include "relax/support/check.h"
#include "vm/vm_device.h"

namespace relax::runtime {

namespace {

struct Block {
  Block(Allocator* allocator, void* data, int64_t bytes)
      : allocator(allocator), data(data), bytes(bytes) {}
  ~Block() { allocator->free(data); }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Allocator* const allocator;
  void* const data;
  const int64_t bytes;
  // Whether a tensor over the memory is alive (set by lend, cleared by release_lent).
  std::atomic<bool> in_use{false};
  // How many times the Block was lent: tells a call's last lending from earlier ones.
  uint64_t lendings = 0;
  // The alloc_storage site the Block serves (the last one it was lent to).
  size_t site = 0;
};

// A uint8 tensor of shape (bytes,) on `device` over `block`'s memory that marks it free when it
// and every tensor made from it have died.
Tensor lend(const std::shared_ptr<Block>& block, int64_t bytes, Device device) {
  block->in_use.store(true, std::memory_order_relaxed);  // free: no other thread sees it
  ++block->lendings;
  std::shared_ptr<void> lent(block->data, [block](void*) { block->in_use.store(false, std::memory_order_release); });
  return Tensor::adopt(block->data, {bytes}, DataType{DataType::Code::kUInt, 8, 1}, std::move(lent), device);
}

}  // namespace

struct ExecutionContext::State {
  State(Allocator* given, bool keep) : given(given), allocator(given), keep(keep) {}

  // A storage the running call got, for end_call.
  struct Use {
    std::shared_ptr<Block> block;
    uint64_t lending = 0;
    int64_t bytes = 0;
  };

  Allocator* given;      // the constructor's allocator, or null
  Allocator* allocator;  // where storages come from: `given`, else the device's own
  Device device = Device::cpu();  // the device of the module served
  bool keep;  // whether storages are kept for reuse (the constructor's keep_storages)
  std::weak_ptr<const void> module;  // the module served (an identity, not kept alive)
  bool bound = false;
  std::atomic<bool> running{false};
  size_t num_sites = 0;
  // The kept storages, each serving one site. Few: a planned function has one arena and its
  // outputs; unplanned code passes a handful of storages from site to site.
  std::vector<std::shared_ptr<Block>> blocks;
  int64_t reserved = 0;
  CallMemoryStats last;
  int64_t calls = 0;
  int64_t total_allocator_calls = 0;
  int64_t replays = 0;
  std::vector<Use> uses;  // of the running call; cleared (capacity kept) by end_call
  // Orders calls from different threads on a device (their kernels run asynchronously).
  vm_device::DeviceFence fence;
  // Per site: its only kept storage, when it has exactly one (else null): a request that this
  // storage serves needs no search, since the search prefers the site's own storages. Set by
  // the search, cleared wherever the site's storages change.
  std::vector<std::shared_ptr<Block>> sole;
};

ExecutionContext::ExecutionContext(Allocator* allocator, bool keep_storages)
    : state_(std::make_unique<State>(allocator, keep_storages)) {}
ExecutionContext::~ExecutionContext() = default;
ExecutionContext::ExecutionContext(ExecutionContext&&) noexcept = default;
ExecutionContext& ExecutionContext::operator=(ExecutionContext&&) noexcept = default;

int64_t ExecutionContext::reserved_bytes() const { return state_->reserved; }
const CallMemoryStats& ExecutionContext::last_call_stats() const { return state_->last; }
int64_t ExecutionContext::num_calls() const { return state_->calls; }
int64_t ExecutionContext::total_allocator_calls() const { return state_->total_allocator_calls; }
int64_t ExecutionContext::num_replays() const { return state_->replays; }

void ExecutionContext::release_unused() {
  std::fill(state_->sole.begin(), state_->sole.end(), nullptr);
  std::erase_if(state_->blocks, [this](const std::shared_ptr<Block>& b) {
    if (b->in_use.load(std::memory_order_acquire)) return false;
    state_->reserved -= b->bytes;
    return true;
  });
}

absl::Status ExecutionContext::begin_call(const std::shared_ptr<const void>& module, size_t num_sites,
                                          Device device) {
  State& s = *state_;
  if (s.running.exchange(true, std::memory_order_acquire)) {
    return absl::FailedPreconditionError(
        "ExecutionContext: another call is running on this context (a context runs one call at a "
        "time: use one per thread)");
  }
  const bool same = s.bound && !s.module.owner_before(module) && !module.owner_before(s.module);
  if (s.bound && !same) {
    if (!s.module.expired()) {
      s.running.store(false, std::memory_order_release);
      return absl::FailedPreconditionError(
          "ExecutionContext: this context serves another module (a context serves the module it "
          "first ran: use one per module)");
    }
    // The module it served is gone: start afresh for this one.
    s.blocks.clear();
    s.sole.clear();
    s.reserved = 0;
    s.bound = false;
  }
  if (!s.bound) {
    Allocator* allocator = s.given;
    if (allocator == nullptr) {
      absl::StatusOr<Allocator*> own = vm_device::allocator_for(device);
      if (!own.ok()) {
        s.running.store(false, std::memory_order_release);
        return absl::Status(own.status().code(), absl::StrCat("ExecutionContext: the allocator of ",
                                                              device.to_string(), ": ",
                                                              own.status().message()));
      }
      allocator = *own;
    }
    s.module = module;
    s.bound = true;
    s.num_sites = num_sites;
    s.sole.assign(num_sites, nullptr);
    s.allocator = allocator;
    s.device = device;
  }
  RELAX_CHECK(s.num_sites == num_sites) << "ExecutionContext: " << s.num_sites
                                        << " sites for a module of " << num_sites;
  if (absl::Status f = s.fence.before_call(s.device); !f.ok()) {
    s.running.store(false, std::memory_order_release);
    return absl::Status(f.code(), absl::StrCat("ExecutionContext: ", f.message()));
  }
  s.last = CallMemoryStats{};
  s.uses.clear();
  ++s.calls;
  return absl::OkStatus();
}

void ExecutionContext::end_call() {
  State& s = *state_;
  for (const State::Use& use : s.uses) {
    // Still lent from this call's request: the result (or something it handed the memory to)
    // holds it.
    const bool held = use.block->in_use.load(std::memory_order_acquire) &&
                      use.block->lendings == use.lending;
    (held ? s.last.output_bytes : s.last.arena_bytes) += use.bytes;
  }
  s.uses.clear();
  s.last.reserved_bytes = s.reserved;
  s.fence.after_call(s.device);
  s.running.store(false, std::memory_order_release);
}

void ExecutionContext::count_replay() {
  state_->last.replayed = 1;
  ++state_->replays;
}

void ExecutionContext::count_allocator_call() {
  ++state_->last.allocator_calls;
  ++state_->total_allocator_calls;
}

absl::StatusOr<Tensor> ExecutionContext::storage(size_t site_index, int64_t bytes, size_t alignment) {
  State& s = *state_;
  if (bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("size ", bytes, " bytes is negative"));
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("alignment ", alignment, " is not a power of two"));
  }
  RELAX_CHECK(site_index < s.num_sites) << "alloc_storage site " << site_index << " of " << s.num_sites;
  ++s.last.storage_requests;
  auto fits = [&](const Block& b) {
    return b.bytes >= bytes && reinterpret_cast<uintptr_t>(b.data) % alignment == 0 &&
           !b.in_use.load(std::memory_order_acquire);
  };
  std::shared_ptr<Block> chosen;
  if (const std::shared_ptr<Block>& sole = s.sole[site_index]; sole != nullptr && fits(*sole)) {
    // What the search below would choose: the site's own storages come first, and it has
    // this one only.
    chosen = sole;
    ++s.last.reused;
  } else {
    // The smallest free storage that fits among the site's own; else among the others' (which
    // the site takes over): unplanned code, one storage per tensor, so passes a few storages
    // from site to site instead of keeping one per site. A context that keeps nothing has none.
    std::shared_ptr<Block> own, other;
    for (const std::shared_ptr<Block>& b : s.blocks) {
      if (!fits(*b)) continue;
      std::shared_ptr<Block>& best = b->site == site_index ? own : other;
      if (!best || b->bytes < best->bytes) best = b;
    }
    chosen = own ? own : other;
    if (chosen) {
      ++s.last.reused;
      if (chosen->site != site_index) s.sole[chosen->site] = nullptr;  // taken over
      chosen->site = site_index;
    } else {
      // The new storage has the largest size the site keeps (when that is more than asked
      // for): when the miss is because the site's storages are held (a caller holding its
      // previous output), it then serves any later call as well as they do, instead of growing
      // again.
      int64_t size = bytes;
      size_t kept = 0;
      for (const std::shared_ptr<Block>& b : s.blocks) {
        if (b->site == site_index) size = std::max(size, b->bytes);
      }
      count_allocator_call();
      absl::StatusOr<void*> data = s.allocator->allocate(static_cast<size_t>(size), alignment);
      if (!data.ok()) {
        return absl::Status(data.status().code(), absl::StrCat("cannot allocate ", size,
                                                               " bytes: ", data.status().message()));
      }
      chosen = std::make_shared<Block>(s.allocator, *data, size);
      chosen->site = site_index;
      // A free storage of the site smaller than the new one serves nothing the new one cannot:
      // drop it, so that a site keeps its largest size, not every size it has seen.
      std::erase_if(s.blocks, [&](const std::shared_ptr<Block>& b) {
        if (b->site != site_index) return false;
        if (b->bytes >= size || b->in_use.load(std::memory_order_acquire)) {
          ++kept;
          return false;
        }
        s.reserved -= b->bytes;
        return true;
      });
      if (s.keep && kept < static_cast<size_t>(kMaxStoragesPerSite)) {  // else freed with its last tensor
        s.blocks.push_back(chosen);
        s.reserved += size;
      }
    }
    // The site's storages changed, or it has several: its sole storage, if it has one now.
    std::shared_ptr<Block> only;
    size_t count = 0;
    for (const std::shared_ptr<Block>& b : s.blocks) {
      if (b->site == site_index && count++ == 0) only = b;
    }
    s.sole[site_index] = count == 1 ? only : nullptr;
  }
  Tensor tensor = lend(chosen, bytes, s.device);
  s.uses.push_back({chosen, chosen->lendings, bytes});
  return tensor;
}

}  // namespace relax::runtime
