// CUDA graphs of replayed plans (see replay_graph.h). Without CUDA (RELAX_WITH_CUDA off) no
// module runs on a CUDA device (Module::create refuses it), and run() is the direct call.
#include "replay/replay_graph.h"

#include <string>

#include "absl/strings/str_cat.h"

#if defined(RELAX_WITH_CUDA)
#include "cuda/cuda_context.h"
#include "cuda/cuda_driver.h"
#endif

namespace relax::runtime::replay {

#if defined(RELAX_WITH_CUDA)

struct GraphCache::Exec {
  Exec() = default;
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;
  ~Exec() {
    if (exec == nullptr) return;
    // The driver frees it once its launches in flight have ended.
    if (absl::StatusOr<const cuda::DriverApi*> api = cuda::driver(); api.ok()) {
      (*api)->cuGraphExecDestroy(exec);
    }
  }
  CUgraphExec exec = nullptr;
};

#else

struct GraphCache::Exec {};

#endif

GraphCache::~GraphCache() = default;

absl::Status GraphCache::run(Device device, GraphKey key, size_t max_graphs, GraphCounters& counters,
                             const std::function<absl::Status()>& enqueue) {
#if defined(RELAX_WITH_CUDA)
  if (disabled() || max_graphs == 0) return enqueue();
  absl::StatusOr<const cuda::DriverApi*> api = cuda::driver();
  if (!api.ok()) return api.status();
  const cuda::DriverApi& d = **api;
  absl::StatusOr<CUstream> stream = cuda::stream_for(device.index);
  if (!stream.ok()) return stream.status();
  auto launch = [&](const Exec& e) {
    absl::Status s = cuda::check(d.cuGraphLaunch(e.exec, *stream),
                                 absl::StrCat("cuGraphLaunch of a replayed plan on ", device.to_string()));
    if (s.ok()) counters.launches.fetch_add(1, std::memory_order_relaxed);
    return s;
  };
  if (std::shared_ptr<Exec> e = graphs_.find(key)) return launch(*e);

  if (absl::Status s = cuda::check(d.cuStreamBeginCapture(*stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                                   absl::StrCat("cuStreamBeginCapture on ", device.to_string()));
      !s.ok()) {
    return s;
  }
  const absl::Status work = enqueue();
  CUgraph graph = nullptr;
  const CUresult ended = d.cuStreamEndCapture(*stream, &graph);
  auto exec = std::make_shared<Exec>();
  bool made = false;
  if (work.ok() && ended == CUDA_SUCCESS && graph != nullptr) {
    made = d.cuGraphInstantiate(&exec->exec, graph, 0) == CUDA_SUCCESS;
  }
  if (graph != nullptr) d.cuGraphDestroy(graph);
  if (!made) {
    // Nothing captured ran: run the pass directly (a genuine error reports itself there), and
    // stop capturing this plan.
    exec->exec = nullptr;
    disabled_.store(true, std::memory_order_relaxed);
    counters.failures.fetch_add(1, std::memory_order_relaxed);
    return enqueue();
  }
  counters.captures.fetch_add(1, std::memory_order_relaxed);
  return launch(*graphs_.insert(key, std::move(exec), max_graphs));
#else
  (void)device;
  (void)key;
  (void)max_graphs;
  (void)counters;
  return enqueue();
#endif
}

}  // namespace relax::runtime::replay
