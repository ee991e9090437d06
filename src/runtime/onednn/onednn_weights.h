// The `:packed` weights of one function object: each weight tensor reordered once into the
// layout a primitive chose for it, kept while the function object lives (or until the
// least recently used of more than `capacity` weight tensors is forgotten).
#pragma once

#ifdef RELAX_WITH_ONEDNN

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
  explicit PackedWeights(size_t capacity) : slots_(capacity) {}

  /// `source` (its data described by `source_md`) in the layout `packed_md`, reordered on
  /// the first request for this data pointer, shape, dtype and layout. The entry holds a
  /// reference to `source`, so its address cannot be reused for other data while it lives.
  /// Throws dnnl::error when the reorder fails.
  dnnl::memory get(const Tensor& source, const dnnl::memory::desc& source_md,
                   const dnnl::memory::desc& packed_md);

 private:
  struct Slot {
    std::mutex mu;  // held while packing, so that each layout is packed once
    Tensor source;
    std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> layouts;
  };
  LruCache<Slot> slots_;
};

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
