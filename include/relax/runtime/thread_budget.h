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
#pragma once

#include <cstdint>

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

/// What the budget has seen, for tests and monitoring.
struct KernelThreadStats {
  int32_t running = 0;  ///< threads of the teams running now (callers included)
  int32_t peak = 0;     ///< the most ever running at once (since the last reset)
  int64_t claims = 0;   ///< claims granted a team (since the last reset)
  int64_t serial = 0;   ///< claims that found no team free and ran alone (since the last reset)
};
KernelThreadStats kernel_thread_stats();
/// Resets peak (to the threads running now), claims and serial.
void reset_kernel_thread_stats();

/// The table KernelLibrary::open hands to each library (static: it outlives
/// every library).
const RelaxRuntimeApi* kernel_runtime_api();

}  // namespace relax::runtime
