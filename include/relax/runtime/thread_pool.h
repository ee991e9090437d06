// One pool of worker threads per process, for the parallel loops of generated
// kernels (kernel_abi.h, RelaxRuntimeApi::parallel_for) and for runtime code.
//
// The workers are started lazily, on the first loop that gets a team, up to
// the kernel thread budget minus one (relax/runtime/thread_budget.h: the
// calling thread is the team's first member); they are never more, whatever
// the number of callers. (A budget lowered later leaves the extra workers
// asleep: the budget, not the workers, bounds the teams.) A loop [begin, end) is cut into static chunks, one
// per member of its team; every member, the caller first, takes the next chunk
// not yet taken, so a worker that wakes late finds its chunk done by the
// others instead of holding the caller up.
//
// Several callers at once. A caller's team is a claim on the budget: every
// thread free in it up to the loop's cap, or, when fewer than two are free,
// none -- the caller then runs its whole range itself, at once, without
// waiting (the same policy as the budget's other claimants). So the threads
// running chunks (callers of teams and workers) never outnumber the budget,
// and a claim never finds fewer idle workers than it was granted.
//
// Nesting. A parallel_for from inside a chunk (a nested parallel loop, or a
// kernel called from a kernel) runs its whole range inline on that thread.
//
// Failures. A chunk returns 0, or non-zero when it failed; the chunks not yet
// started are then skipped and parallel_for returns the first non-zero value.
// A chunk that throws counts as failed with kParallelBodyThrew: the exception
// is dropped in the thread that caught it and never crosses threads.
//
// Idle workers spin briefly on the queue (so the next loop of a model's
// sequence of kernels starts without a wake-up), then sleep on a condition
// variable: an idle pool burns no core. A caller whose workers still run
// chunks does the same. When the CPUs are contended (RELAX_THREAD_WAIT and the
// load sample of relax/runtime/thread_budget.h) neither spins: they block at
// once. A caller never waits for a chunk no one has taken: it runs every
// chunk not taken itself, and a worker takes its first chunk with its ticket. At exit the workers are stopped and
// joined; a loop started after that runs inline.
//
// OpenMP's team instead (KernelTeams, RELAX_KERNEL_TEAMS). When the process runs oneDNN on libgomp,
// by default a team is libgomp's: its members are the threads oneDNN's primitives run on, which
// libgomp keeps spinning for a few milliseconds after each primitive. Two teams of two kinds on
// one machine's CPUs took turns: a pool worker woke to the next kernel on the CPU a spinning
// libgomp thread held (Whisper-tiny's encoder on 2 CPUs: 62.8 ms a call; on libgomp's team 50.2).
// The claim on the budget, the static chunks, nesting and failures are the same; the pool's
// spinning and blocking are then libgomp's (OMP_WAIT_POLICY, GOMP_SPINCOUNT).
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include "relax/runtime/kernel_abi.h"

namespace relax::runtime {

/// What parallel_for returns for a chunk that threw.
inline constexpr int32_t kParallelBodyThrew = -1;

/// Runs body(ctx, lo, hi) over [begin, end) on a team of at most `wanted`
/// threads of the pool (0: the budget's), the calling thread included; see
/// above. Returns 0 or the first non-zero value of a chunk.
int32_t parallel_for(int64_t begin, int64_t end, int32_t wanted, RelaxParallelBodyFn body, void* ctx);

/// parallel_for with a callable `fn(int64_t lo, int64_t hi) -> int32_t`.
template <typename Fn>
int32_t parallel_for(int64_t begin, int64_t end, int32_t wanted, Fn&& fn) {
  using F = std::remove_reference_t<Fn>;
  return parallel_for(
      begin, end, wanted,
      [](void* ctx, int64_t lo, int64_t hi) -> int32_t { return (*static_cast<F*>(ctx))(lo, hi); },
      const_cast<std::remove_const_t<F>*>(&fn));
}

/// Whose threads run a team (see above).
enum class KernelTeams {
  kAuto,    ///< the default: libgomp's when it is loaded (oneDNN runs on it), else the pool's
  kPool,    ///< the pool's workers
  kOpenMp,  ///< libgomp's team when it is loaded, else the pool's
};
/// set_kernel_teams's, else RELAX_KERNEL_TEAMS (auto, pool or openmp; anything else is reported
/// once on stderr and ignored), else kAuto.
KernelTeams kernel_teams();
/// Sets the policy (nullopt: the environment's again).
void set_kernel_teams(std::optional<KernelTeams> teams);

/// What the pool has seen, for tests and monitoring.
struct ThreadPoolStats {
  int32_t workers = 0;      ///< worker threads started (the callers not counted)
  int32_t running = 0;      ///< threads running chunks now (callers of teams and workers)
  int32_t peak = 0;         ///< the most ever running chunks at once (since the last reset)
  int64_t teams = 0;        ///< loops run by a team (since the last reset)
  int64_t inline_runs = 0;  ///< loops run whole on the calling thread (since the last reset)
  int64_t worker_chunks = 0;  ///< chunks run by workers rather than callers (since the last reset)
  int64_t spins = 0;   ///< spins of waiting threads (idle workers, callers) before blocking (since the last reset)
  int64_t blocks = 0;  ///< waits that blocked (workers asleep, callers waiting for workers; since the last reset)
  int64_t late_tickets = 0;  ///< workers that woke for a loop whose chunks were all taken (since the last reset)
  int64_t openmp_teams = 0;  ///< loops run by a libgomp team rather than the pool's (since the last reset)
};
ThreadPoolStats thread_pool_stats();
/// Resets peak (to the threads running now) and the counts.
void reset_thread_pool_stats();

}  // namespace relax::runtime
