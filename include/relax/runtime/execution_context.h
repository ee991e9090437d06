// relax::runtime::ExecutionContext: the memory a caller's calls of a Module reuse.
//
//   relax::runtime::ExecutionContext ctx;                 // one per thread, or per caller
//   for (...) {
//     absl::StatusOr<Value> y = module["main"].call(ctx, {x});
//     const CallMemoryStats& s = ctx.last_call_stats();   // s.allocator_calls is 0 after warm-up
//   }
//
// A compiled function allocates its memory with `alloc_storage` instructions: after the memory
// planner, one arena per function for all its intermediates (a constant size under declared
// upper bounds, otherwise evaluated from the call's sizes) and one storage per output. A context
// keeps, for every alloc_storage instruction (a "site": a function and an instruction) of the
// module it serves, the storages that site allocated, and hands one of them out again at that
// site when
//   - nobody else holds it any more: every tensor placed in it (and every DLPack export of
//     one) has died -- an output the caller still holds keeps its storage out of reuse, so a
//     later call can never overwrite it; and
//   - it is large enough and aligned enough for this call.
// Otherwise the site takes over a free storage another site kept, when one fits (so code that
// was not planned, one storage per tensor, passes a few storages from site to site instead of
// keeping one per site), or allocates a new storage from the context's allocator -- of the size
// asked for or of the largest size the site keeps, whichever is more -- and keeps it too (up to
// kMaxStoragesPerSite per site; its free storages smaller than the new one are dropped). So a
// constant-size arena is allocated once per context and reused by every later call of any size,
// a symbolic arena grows to the largest call's size and stays there, and outputs the caller
// dropped are reused; a thread's repeated calls make no allocator call after warm-up.
//
// A context of a module on a CUDA device keeps device memory (from the device's pool unless it
// was given an allocator). The calls' kernels run asynchronously on the calling thread's stream;
// a call from another thread than the context's previous one first makes its own stream wait
// for the previous call's work, so that a reused storage is never written while a queued kernel
// still uses it.
//
// Function::call without a context takes one from its Module's own pool (a context per
// concurrent call, kept for later calls), so concurrent calls never share memory. A context
// runs one call at a time: a call on a context that another thread is running returns
// FailedPrecondition, and so does a call of another (live) module's function -- a context
// serves the module it first ran. Storages that tensors still hold outlive the context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/allocator.h"
#include "relax/runtime/tensor.h"

namespace relax::runtime {

namespace replay {
class ContextAccess;
}  // namespace replay

/// What one call did with storage (ExecutionContext::last_call_stats). Bytes are the sizes the
/// call's alloc_storage instructions asked for, not the (possibly larger) storages that served
/// them.
struct CallMemoryStats {
  /// Storage bytes the call used for what it did not return: the sum of the alloc_storage sizes
  /// whose storage nobody held any more when the call returned (the memory plan's arena, and any
  /// other intermediate storage).
  int64_t arena_bytes = 0;
  /// Storage bytes the result still holds when the call returns (the outputs' storages).
  int64_t output_bytes = 0;
  /// alloc_storage instructions the call executed.
  int64_t storage_requests = 0;
  /// Of those, the ones served by a storage the context kept from an earlier one.
  int64_t reused = 0;
  /// Allocator calls the call made: the alloc_storage instructions that could not reuse a kept
  /// storage, plus the per-tensor allocations of hand-written unplanned code (kAllocTensor).
  int64_t allocator_calls = 0;
  /// ExecutionContext::reserved_bytes() when the call returned.
  int64_t reserved_bytes = 0;
  /// 1 when the call replayed a recorded execution plan instead of being interpreted
  /// (relax/runtime/replay.h), else 0.
  int64_t replayed = 0;
};

/// The memory that one caller's calls reuse (see the file comment). Not copyable; movable while
/// no call runs on it. Its accessors may not be called while a call runs on it in another
/// thread.
class ExecutionContext {
 public:
  /// The most storages a context keeps per alloc_storage instruction: enough for a caller that
  /// holds a few earlier outputs while calling again.
  static constexpr int kMaxStoragesPerSite = 4;

  /// A context that allocates from `allocator`, which must outlive every storage the context
  /// hands out and give memory of the device of the module the context serves; when null, the
  /// device's own: default_allocator() for the CPU, the device's pool for a CUDA device
  /// (relax/runtime/cuda.h). With `keep_storages` false it keeps nothing:
  /// every alloc_storage is an allocator call and its memory goes back to the allocator when
  /// its last tensor dies (no memory held between calls, at the cost of an allocation per
  /// storage per call: how unplanned code behaves, which makes it the baseline to compare a
  /// memory plan against).
  explicit ExecutionContext(Allocator* allocator = nullptr, bool keep_storages = true);
  ~ExecutionContext();
  ExecutionContext(ExecutionContext&&) noexcept;
  ExecutionContext& operator=(ExecutionContext&&) noexcept;
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  /// Bytes of the storages the context keeps for reuse, whether a caller's output holds them
  /// now or not.
  int64_t reserved_bytes() const;
  /// The statistics of the last call that ran on this context (all zero before the first). A
  /// call that fails still records what it did up to the failure.
  const CallMemoryStats& last_call_stats() const;
  /// Calls run on this context, failed ones included.
  int64_t num_calls() const;
  /// Allocator calls made by every call on this context.
  int64_t total_allocator_calls() const;
  /// Calls on this context that replayed a recorded execution plan (relax/runtime/replay.h).
  int64_t num_replays() const;
  /// Returns to the allocator the kept storages that nobody holds (a later call allocates
  /// them again); storages held by outputs stay kept.
  void release_unused();

 private:
  friend class Function;
  friend class VirtualMachine;
  friend class replay::ContextAccess;  // a replayed call's storages (relax/runtime/replay.h)
  // Function::call brackets each call with these: begin_call binds the context to `module`
  // (an identity; the context does not keep it alive) with `num_sites` alloc_storage sites on
  // `device`, or fails when the context is running or serves another live module (or the
  // device has no allocator); end_call records the call's statistics while its result is still
  // held.
  absl::Status begin_call(const std::shared_ptr<const void>& module, size_t num_sites, Device device);
  void end_call();
  // The VM's alloc_storage at `site`: a storage of `bytes` bytes aligned to `alignment` on the
  // module's device, kept or new. Errors: a negative size, a bad alignment, an allocation failure.
  absl::StatusOr<Tensor> storage(size_t site, int64_t bytes, size_t alignment);
  // The VM made an allocator call of its own (kAllocTensor).
  void count_allocator_call();
  // The running call replays a recorded plan.
  void count_replay();

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace relax::runtime
