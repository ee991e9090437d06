// One budget of kernel threads per process.
//
// A generated kernel's parallel loop does not fork a team of its own size: it
// hands its outlined body to the runtime's thread pool through the
// RelaxRuntimeApi table that KernelLibrary::open hands every library
// (relax/runtime/kernel_abi.h, relax/runtime/thread_pool.h); the pool claims
// the loop's team from this budget (the calling thread counts as one) and gives
// it back after the loop. oneDNN's OpenMP teams claim theirs here too. So when
// many threads call modules at once, the threads of all parallel loops together
// never outnumber the budget: 4 callers of a kernel on 2 cores run at most one
// 2-thread team at a time (the other callers run their loops alone) instead of
// four 2-thread teams. The budget is also the size of the pool (its workers
// are the budget minus the caller).
//
// A claim of `wanted` threads (0: no limit of its own; a kernel passes its
// Target::threads) is capped by the budget and by `wanted`: with one module of
// Target::threads = T, at most T threads run in its teams. It takes every
// thread that is free up to the cap when that makes a team (2 or more);
// otherwise it gets 1 -- the caller runs the loop's serial copy, which costs no
// fork -- and counts nothing. A claim never waits. Loops below
// Target::parallel_min_work, and kernels compiled with threads = 1, run on the
// calling thread without claiming anything.
//
// A shared machine (RELAX_THREAD_WAIT, docs/threads.md). Under the default
// policy, `auto`, a claim against the default budget (neither
// set_kernel_thread_budget nor RELAX_NUM_THREADS chose it) is also capped at
// the CPUs free now: the CPUs the calling thread may run on less the runnable
// threads of other processes, from /proc/loadavg's count of runnable threads
// less this process's own (the claimer, the threads of teams, the pool's
// spinning workers, and oneDNN's OpenMP team for a while after it ran). The
// sample is refreshed at most once per millisecond, by a claim. The machine's
// count is used only when the process may run on every online CPU (in a
// cpuset it counts threads on CPUs that are not ours). So two processes on 2
// CPUs run one thread each instead of four threads that wait for each other;
// an explicit budget is kept as given. The same sample tells the pool whether
// the CPUs are contended: its waiting threads then block at once instead of
// spinning (relax/runtime/thread_pool.h). `spin` is the behaviour before this
// policy (no load cap, always a bounded spin), `passive` never spins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "relax/runtime/kernel_abi.h"

namespace relax::runtime {

/// The number of threads all parallel kernel loops of the process share: set
/// by set_kernel_thread_budget, else the environment variable
/// RELAX_NUM_THREADS (a positive integer; anything else is reported once on
/// stderr and ignored), else the CPUs this process may run on.
int32_t kernel_thread_budget();

/// Sets the budget (0: the default above again). Claims already granted keep
/// their threads; later claims see the new budget.
void set_kernel_thread_budget(int32_t threads);

/// A claim of threads as RelaxRuntimeApi::claim_threads describes it, for
/// runtime code that runs threads of its own (the kernel thread pool, oneDNN's
/// OpenMP teams); give them back with release_kernel_threads.
int32_t claim_kernel_threads(int32_t wanted);
void release_kernel_threads(int32_t granted);

/// How the kernel threads wait and size their teams (RELAX_THREAD_WAIT: auto, spin, passive).
enum class ThreadWait {
  kAuto,     ///< the default: spin briefly unless the CPUs are contended, teams capped at the free CPUs
  kSpin,     ///< always spin briefly before blocking; teams from the budget alone (the old behaviour)
  kPassive,  ///< never spin: a waiting thread blocks at once; teams as kAuto
};
/// The policy: set_kernel_thread_wait's, else RELAX_THREAD_WAIT (auto, spin or passive; anything
/// else is reported once on stderr and ignored), else kAuto.
ThreadWait kernel_thread_wait();
/// Sets the policy (nullopt: the environment's again).
void set_kernel_thread_wait(std::optional<ThreadWait> wait);

/// Whether the last load sample saw more runnable threads than the CPUs this process may run
/// on (kPassive: always; kSpin: never). The pool's waiting threads spin only when it is false.
bool kernel_threads_contended();

/// Reads the count of runnable threads from `path` (the format of /proc/loadavg: the fourth
/// field is runnable/total) instead of /proc/loadavg, sampled at every claim and whatever CPUs
/// are online; empty: /proc/loadavg again. For tests.
void set_kernel_load_file(std::string path);

/// What the budget has seen, for tests and monitoring.
struct KernelThreadStats {
  int32_t running = 0;  ///< threads of the teams running now (callers included)
  int32_t peak = 0;     ///< the most ever running at once (since the last reset)
  int64_t claims = 0;   ///< claims granted a team (since the last reset)
  int64_t serial = 0;   ///< claims that found no team free and ran alone (since the last reset)
  int64_t load_capped = 0;  ///< claims whose team the free CPUs made smaller (since the last reset)
  int32_t free_cpus = 0;    ///< the free CPUs of the last load sample (0: none taken)
};
KernelThreadStats kernel_thread_stats();
/// Resets peak (to the threads running now), claims, serial and load_capped.
void reset_kernel_thread_stats();

/// The table KernelLibrary::open hands to each library (static: it outlives
/// every library).
const RelaxRuntimeApi* kernel_runtime_api();

}  // namespace relax::runtime
