// What the kernel thread pool, the thread budget and the oneDNN functions tell each other for
// the budget's load sample (relax/runtime/thread_budget.h); not part of the public API.
#pragma once

#include <cstdint>

namespace relax::runtime {

/// The pool's idle workers spinning on its queue now (lock-free; thread_pool.cc).
int32_t thread_pool_spinning_workers();

/// A oneDNN call ran on an OpenMP team of `threads`: libgomp's idle members keep spinning for a
/// while after it (GOMP_SPINCOUNT), so the budget counts them as this process's own runnable
/// threads for a while (openmp_spin_window in thread_budget.cc).
void note_openmp_team(int32_t threads);

}  // namespace relax::runtime
