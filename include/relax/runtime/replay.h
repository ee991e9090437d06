// Execution-plan replay: the CPU analogue of capturing a CUDA graph.
//
// A call of a compiled function first matches its arguments, which binds the function's
// symbolic variables (the "binding": every slot's value after the entry checks). Once memory is
// planned, the binding determines everything the interpreter decides afterwards: every shape,
// every storage size and offset, every scalar argument of a kernel, every branch on a shape.
// So the second call of a binding (by default) runs interpreted while recording the kernel and
// library calls it makes, with their arguments described symbolically -- argument i of the
// call, storage s of this call at byte b, a constant -- and later calls of that binding replay
// the recording: the argument checks, then the calls with their data pointers patched, and
// nothing else (no bytecode dispatch, no shape arithmetic, no tensor objects for
// intermediates). Storages are still requested from the call's ExecutionContext per call (its
// arena is usually the one it lent last time, but need not be: the caller may hold an output,
// the context may have grown), and outputs are fresh per call, as interpreted.
//
// What is not recorded runs interpreted as before (never a wrong result): a branch on a tensor's
// value, a match_cast that reads a value that is not fixed by the binding, a builtin
// (data-dependent shapes: nonzero, unique, ...), an argument tensor that is strided. A call
// whose arguments differ from the recording in something the binding does not pin (a dtype or
// shape left unannotated) is interpreted too.
//
// The plans are kept per Module (a plan names no context's memory, so every context and thread
// shares them), a bounded number per function, least recently used evicted first.
#pragma once

#include <cstdint>

namespace relax::runtime {

/// How a Module replays recorded execution plans (Module::set_replay_options).
struct ReplayOptions {
  /// Whether calls replay recorded plans. On by default: a replay is bit for bit the
  /// interpreted call, and whatever cannot be recorded is interpreted.
  bool enabled = true;
  /// The call of a binding that records its plan: 1 records on the first call, 2 on the
  /// second, so that a binding seen once (a prefill of a one-off length) neither pays for a
  /// recording nor takes a place in the cache.
  int record_on_call = 2;
  /// Bindings remembered per function (plans, and bindings seen but not yet recorded); the
  /// least recently used is forgotten first.
  int max_plans_per_function = 16;
};

/// What replay did in a Module since it was created or its options were last set.
struct ReplayStats {
  /// Calls that ran a recorded plan.
  int64_t replayed = 0;
  /// Calls interpreted while replay was on (first calls of a binding, recordings, fallbacks).
  int64_t interpreted = 0;
  /// Plans recorded.
  int64_t recorded = 0;
  /// Recordings given up: the call did something that cannot be replayed; its binding is
  /// interpreted from then on.
  int64_t not_recordable = 0;
  /// Calls of a function with plans whose arguments fit none of them in structure (a dtype,
  /// rank or tuple size that differs, a strided tensor): interpreted.
  int64_t argument_mismatches = 0;
  /// Calls of a function with plans whose binding is in none of their classes (a branch on a
  /// shape taken the other way, a loop with another trip count, a callee's check or bound
  /// that fails): interpreted, and counted towards recording a plan of their own.
  int64_t guard_misses = 0;
  /// Bindings forgotten to make room for others.
  int64_t evicted = 0;
  /// Plans held now, over all functions.
  int64_t plans = 0;
};

}  // namespace relax::runtime
