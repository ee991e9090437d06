// What every oneDNN library function shares: the engine, a stream per thread, the
// process-wide counters of relax/runtime/onednn.h, dtype mapping, turning oneDNN's
// exceptions into statuses, and the bounded LRU cache that holds primitives and packed
// weights per function object.
#pragma once

#ifdef RELAX_WITH_ONEDNN

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "relax/support/data_type.h"

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

/// A thread-safe map of at most `capacity` entries that forgets the least recently used one
/// when full. Values are shared: a caller keeps using an entry that another call evicts.
template <typename Value>
class LruCache {
 public:
  using Key = std::vector<int64_t>;
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  /// The entry of `key` (now the most recently used), or null.
  std::shared_ptr<Value> find(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  /// Enters `value` as `key` unless another thread entered one first; returns the entry kept.
  std::shared_ptr<Value> insert(const Key& key, std::shared_ptr<Value> value) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return order_.size();
  }

 private:
  using Entry = std::pair<Key, std::shared_ptr<Value>>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> order_;  // most recently used first
  absl::flat_hash_map<Key, typename std::list<Entry>::iterator> index_;
};

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
