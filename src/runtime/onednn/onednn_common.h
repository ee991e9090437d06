// What every oneDNN library function shares: the engine, a stream per thread, the
// process-wide counters of relax/runtime/onednn.h, dtype mapping, turning oneDNN's
// exceptions into statuses, and the bounded LRU cache that holds primitives and packed
// weights per function object.
#pragma once

#ifdef RELAX_WITH_ONEDNN

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "relax/support/data_type.h"
#include "lru_cache.h"

namespace relax::runtime::onednn {

/// The CPU engine, created on first use and kept for the life of the process.
const dnnl::engine& cpu_engine();
/// This thread's stream on cpu_engine(): a stream is not meant to be shared between threads,
/// while primitives with a user scratchpad may run concurrently on streams of their own.
dnnl::stream& thread_stream();

/// The process-wide counters behind onednn_stats().
struct Counters {
  std::atomic<int64_t> primitives_created{0};
  std::atomic<int64_t> primitive_cache_hits{0};
  std::atomic<int64_t> weights_packed{0};
  std::atomic<int64_t> scratchpads_allocated{0};
  std::atomic<int64_t> calls_repacked{0};
  std::atomic<int64_t> weights_repacked{0};
  std::atomic<int64_t> packed_weight_bytes{0};
  std::atomic<int64_t> repacked_weight_bytes{0};
  std::atomic<int64_t> repack_buffer_bytes{0};
    // set_onednn_repack
  std::atomic<int> repack_mode{0};
  std::atomic<int64_t> repack_limit_bytes{-1};
};
Counters& counters();

/// oneDNN's threads for one call, counted in the process's kernel thread budget
/// (relax/runtime/thread_budget.h). Debian's libdnnl is built with DNNL_CPU_RUNTIME=OMP: a
/// primitive runs on an OpenMP team of the calling thread's omp_get_max_threads(), a count
/// fixed when the primitive is created (oneDNN keys its own cache by it). So for its life this
/// scope sets the calling thread's OpenMP thread count (omp_set_num_threads acts on the calling
/// thread only) to its team and restores the previous count after; a call creates and runs its
/// primitive inside one, and keys relax's cache of primitives by threads().
class OmpThreads {
 public:
  enum Claim { kClaim };
  /// A team claimed from the budget (every free thread up to `wanted`, 0: no cap of its own;
  /// 1 when fewer than 2 are free), given back at the end of the scope.
  explicit OmpThreads(Claim, int32_t wanted = 0);
  /// `threads` without a claim (planning a call that will run on at most that many).
  explicit OmpThreads(int32_t threads);
  ~OmpThreads();
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

  int32_t threads() const { return threads_; }

 private:
  void apply();

  int32_t threads_ = 1;
  bool claimed_ = false;
  int previous_ = 0;  // the thread's OpenMP count before the scope; 0: not changed
};

/// oneDNN's type for f32 and bf16; nullopt for every other dtype.
std::optional<dnnl::memory::data_type> dnnl_type(DataType dtype);

/// A compact row-major memory descriptor.
dnnl::memory::desc plain_md(const std::vector<int64_t>& dims, DataType dtype);

/// Runs `body`, turning a dnnl::error it throws into an Internal status "<what()>: <oneDNN's
/// message>" (an unimplemented combination of shapes, dtypes and post-ops becomes
/// Unimplemented). `what` is called only then: the common path builds no message.
template <typename What, typename Body>
absl::Status guard_dnnl(What&& what, Body&& body) {
  try {
    return body();
  } catch (const dnnl::error& e) {
    const absl::StatusCode code = e.status == dnnl_unimplemented ? absl::StatusCode::kUnimplemented
                                                                 : absl::StatusCode::kInternal;
    return absl::Status(code, absl::StrCat(what(), ": oneDNN: ", e.what()));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(what(), ": out of memory"));
  }
}

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
