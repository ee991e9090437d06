// Execution-plan replay: the CPU analogue of capturing a CUDA graph.
//
// A call of a compiled function first matches its arguments, which binds the function's
// symbolic variables (the "binding"). Once memory is planned, the binding determines everything
// the interpreter decides afterwards: every shape, every storage size and offset, every scalar
// argument of a kernel, every branch on a shape. So a call (the second one that no plan covers,
// by default) runs interpreted while recording the kernel and library calls it makes, with
// their arguments described symbolically -- argument i of the call, storage s of this call at
// an offset, a constant -- and with every number that depends on the binding kept as the
// expression that computes it (from the symbolic variables, the arguments' dims and int
// values). Later calls whose binding is in the plan's class replay it: the argument checks, the
// plan's expressions evaluated for the call (a few hundred integer operations for a 22-layer
// decoder), then the calls with their data pointers, shapes and scalars patched, and nothing
// else (no bytecode dispatch, no tensor objects for intermediates). So a decode loop whose
// context grows by one every step replays one plan. Storages are still requested from the
// call's ExecutionContext per call, at the sizes of this call's binding (the context grows an
// arena that is too small), and outputs are fresh per call, as interpreted.
//
// A plan's class is what the recorded call checked of its binding: each branch taken on a shape
// (a loop's trip count included), each check of a callee's arguments or a match_cast and its
// declared bounds, each tensor placed in a storage fitting it. A call that fails one of these
// is interpreted (it takes another path, or fails with the interpreter's message), and counts
// towards recording a plan of its own, kept beside the others.
//
// What cannot be recorded is interpreted on every call (never a wrong result): a branch on a
// tensor's value, a builtin (data-dependent shapes: nonzero, unique, ...), a view that must
// copy. A call whose arguments differ from the recording in structure (a dtype, a rank, a tuple
// size, a strided tensor) is interpreted too.
//
// The plans are kept per Module (a plan names no context's memory, so every context and thread
// shares them), a bounded number per function, least recently used evicted first.
//
// CUDA graphs. A module that runs on a CUDA device (Executable::device) replays a plan in two
// passes: first the call's storages are requested from its context (and its fresh tensors
// made), which fixes every data pointer of the call; then the plan's device work -- its kernel
// launches, library calls (cuBLAS, cuDNN) and memsets, in order, on the calling thread's stream
// of the device -- runs as one CUDA graph. The graph is captured from that stream
// (cuStreamBeginCapture .. cuStreamEndCapture, then cuGraphInstantiate) the first time a replay
// has its key, and launched (cuGraphLaunch, one driver call for the whole plan) by every later
// replay with the same key. The key is everything the captured work depends on: the plan's ints
// for the call (so the binding of the symbolic variables: every shape, offset, size and scalar
// argument), the arguments' dims, int and float values, and the data pointer of every argument
// tensor and storage of the call. An ExecutionContext hands the same storages to a thread's
// calls, so a loop calling with the same sizes and arguments -- or a decode step whose inputs
// live in the same buffers -- launches one graph per call after its first; an output the caller
// still holds (its storage not reusable) or new argument buffers make another key. Each plan
// keeps at most `max_cuda_graphs` graphs, the least recently launched dropped first. Library
// calls in a replayed plan must be capturable (work on the stream only, decided by shapes and
// pointers), except the runtime's own that synchronise with the host (kv_cache.attention on a
// device copies the lengths it checks): the work between such calls is captured as one graph
// per stretch and the calls run directly in between, in stream order. A capture that fails
// anyway (another call that synchronises or allocates on the stream) is thrown away, its work
// runs directly (nothing captured ran), and that plan replays without graphs from then on
// (counted in graph_failures). Interpreted calls never use graphs.
#pragma once

#include <cstdint>

namespace relax::runtime {

/// How a Module replays recorded execution plans (Module::set_replay_options).
struct ReplayOptions {
  /// Whether calls replay recorded plans. On by default: a replay is bit for bit the
  /// interpreted call, and whatever cannot be recorded is interpreted.
  bool enabled = true;
  /// Which call of a function that no plan covers records one (counted since the function's
  /// last recording): 1 records on the first, 2 on the second, so that a function called once
  /// (an initialisation) does not pay for a recording.
  int record_on_call = 2;
  /// Plans kept per function (each for a class of bindings); the least recently used is
  /// forgotten first.
  int max_plans_per_function = 16;
  /// A module on a CUDA device: the CUDA graphs kept per plan (one per key, see the file
  /// comment); the least recently launched is destroyed first. 0 (or less) replays without
  /// graphs. Ignored on the CPU.
  int max_cuda_graphs = 8;
};

/// What replay did in a Module since it was created or its options were last set.
struct ReplayStats {
  /// Calls that ran a recorded plan.
  int64_t replayed = 0;
  /// Calls interpreted while replay was on (calls no plan covers, recordings, fallbacks).
  int64_t interpreted = 0;
  /// Plans recorded.
  int64_t recorded = 0;
  /// Recordings given up: the call did something that cannot be replayed; its function is
  /// interpreted from then on.
  int64_t not_recordable = 0;
  /// Calls of a function with plans whose arguments fit none of them in structure (a dtype,
  /// rank or tuple size that differs, a strided tensor): interpreted.
  int64_t argument_mismatches = 0;
  /// Calls of a function with plans whose binding is in none of their classes (a branch on a
  /// shape taken the other way, a loop with another trip count, a callee's check or bound
  /// that fails): interpreted, and counted towards recording a plan of their own.
  int64_t guard_misses = 0;
  /// Plans forgotten to make room for others.
  int64_t evicted = 0;
  /// Plans held now, over all functions.
  int64_t plans = 0;
  /// A module on a CUDA device: CUDA graphs launched by replays (one captured by this
  /// replay or an earlier one with the same key; one per stretch between calls that
  /// synchronise with the host).
  int64_t graph_launches = 0;
  /// CUDA graphs captured and instantiated (per replay whose key had none, one per stretch).
  int64_t graph_captures = 0;
  /// Captures that failed: their plans replay without graphs from then on.
  int64_t graph_failures = 0;
};

}  // namespace relax::runtime
