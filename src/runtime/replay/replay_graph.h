// Private to the runtime: CUDA graphs of replayed plans (relax/runtime/replay.h, "CUDA graphs").
//
// A replay of a plan on a CUDA device runs in two passes (replay_plan.cc): the host pass asks
// the context for the call's storages (and makes its fresh tensors), which fixes every data
// pointer; the device pass enqueues the plan's kernels, library calls and memsets on the
// calling thread's stream. The device pass is a pure function of the replay's key -- the
// plan's ints for the call (every shape, offset, size and scalar derives from the binding),
// the arguments' dims, int and float values, and the data pointer of every base (argument
// tensors, storages, fresh tensors) -- so its work is captured once per key into a CUDA graph
// (cuStreamBeginCapture .. cuStreamEndCapture, cuGraphInstantiate) and later replays with that
// key launch the graph (cuGraphLaunch), one driver call for the whole plan.
//
// Each plan keeps its graphs in a GraphCache: at most ReplayOptions::max_cuda_graphs, the least
// recently launched dropped first (a graph being launched by another thread stays alive until
// that launch is queued; the driver frees an instantiated graph after its last launch ends).
// A library call known to synchronise with the host (LibraryFunctionTraits::synchronises_host,
// relax/runtime/module.h: kv_cache.attention on a device copies the lengths it checks to the
// host) splits the device pass: the work before it, between two of them and after the last is
// captured as one graph each (keyed by the replay's key and the stretch's number), the call
// itself runs directly in between, in stream order. When a capture fails anyway (another call
// that synchronises or allocates on the stream), the capture is ended and thrown away, that part
// of the device pass runs directly (its work never ran while it was captured), and the plan
// replays without graphs from then on.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "lru_cache.h"
#include "relax/support/device.h"

namespace relax::runtime::replay {

/// What a replay's device pass depends on (see the file comment).
using GraphKey = std::vector<int64_t>;


/// The graph statistics of a PlanCache (ReplayStats::graph_launches, graph_captures,
/// graph_failures).
struct GraphCounters {
  std::atomic<int64_t> launches{0};
  std::atomic<int64_t> captures{0};
  std::atomic<int64_t> failures{0};
  void reset() {
    launches.store(0);
    captures.store(0);
    failures.store(0);
  }
};

/// The CUDA graphs of one plan by key, least recently launched dropped first. Thread-safe.
class GraphCache {
 public:
  GraphCache() = default;
  ~GraphCache();
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  /// Whether a capture of this plan failed: its replays run without graphs.
  bool disabled() const { return disabled_.load(std::memory_order_relaxed); }
  /// Graphs held now.
  size_t size() const { return graphs_.size(); }

  /// Runs a replay's device pass on `device` (current on the calling thread): launches the
  /// graph of `key` on the thread's stream when there is one; else captures `enqueue` (which
  /// queues the pass's work on that stream) into a graph, keeps it under `key` (dropping the
  /// least recently launched beyond `max_graphs`) and launches it; after a failed capture,
  /// calls `enqueue` directly. Errors: `enqueue`'s (from the direct run), the driver's.
  absl::Status run(Device device, GraphKey key, size_t max_graphs, GraphCounters& counters,
                   const std::function<absl::Status()>& enqueue);

 private:
  struct Exec;  // an instantiated graph, destroyed with its last reference

  LruCache<Exec> graphs_{std::numeric_limits<size_t>::max()};  // bounded per insert by max_graphs
  std::atomic<bool> disabled_{false};
};

}  // namespace relax::runtime::replay
