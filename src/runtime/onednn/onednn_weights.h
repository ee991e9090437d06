// Weights reordered into a primitive's layout, kept by one function object: each weight tensor
// reordered once per layout, kept while the function object lives (or until the least recently
// used of more than `capacity` weight tensors is forgotten). The copies made are counted, and
// the bytes they hold are added to a process-wide counter while they live (the memory cost
// reported by onednn_stats()).
#pragma once

#ifdef RELAX_WITH_ONEDNN

#include <atomic>
#include <cstdint>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "onednn_common.h"
#include "relax/runtime/tensor.h"

namespace relax::runtime::onednn {

class PackedWeights {
 public:
  /// `made`: the counter of copies made; `held_bytes`: the counter their bytes are added to
  /// while they live.
  PackedWeights(size_t capacity, std::atomic<int64_t>* made, std::atomic<int64_t>* held_bytes)
      : slots_(capacity), made_(made), held_bytes_(held_bytes) {}

  /// `source` (its data described by `source_md`) in the layout `packed_md`, reordered on
  /// the first request for this data pointer, shape, dtype and layout. The entry holds a
  /// reference to `source`, so its address cannot be reused for other data while it lives.
  /// With `limit_bytes` >= 0, a copy that would take the counter past it is not made and the
  /// result is a null memory (the caller reads the source as it is). Throws dnnl::error when
  /// the reorder fails.
  dnnl::memory get(const Tensor& source, const dnnl::memory::desc& source_md, const dnnl::memory::desc& packed_md,
                   int64_t limit_bytes = -1);

 private:
  struct Slot {
    explicit Slot(std::atomic<int64_t>* held) : held_bytes(held) {}
    ~Slot();
    std::atomic<int64_t>* held_bytes;
    std::mutex mu;  // held while packing, so that each layout is packed once
    Tensor source;
    std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> layouts;
  };
  LruCache<Slot> slots_;
  std::atomic<int64_t>* made_;
  std::atomic<int64_t>* held_bytes_;
};

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
