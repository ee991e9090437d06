// Packed weights (onednn_weights.h).
#ifdef RELAX_WITH_ONEDNN

#include "onednn_weights.h"

#include <cstdint>

namespace relax::runtime::onednn {

PackedWeights::Slot::~Slot() {
  for (const auto& [md, memory] : layouts) {
    held_bytes->fetch_sub(static_cast<int64_t>(md.get_size()), std::memory_order_relaxed);
  }
}

dnnl::memory PackedWeights::get(const Tensor& source, const dnnl::memory::desc& source_md,
                                const dnnl::memory::desc& packed_md, int64_t limit_bytes) {
  LruCache<Slot>::Key key;
  key.reserve(source.shape().size() + 3);
  key.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(source.data())));
  const DataType dtype = source.dtype();
  key.push_back((static_cast<int64_t>(dtype.code) << 24) | (int64_t{dtype.bits} << 16) |
                dtype.lanes);
  key.push_back(static_cast<int64_t>(source.shape().size()));
  key.insert(key.end(), source.shape().begin(), source.shape().end());

  std::shared_ptr<Slot> slot = slots_.find(key);
  if (slot == nullptr) {
    auto fresh = std::make_shared<Slot>(held_bytes_);
    fresh->source = source;
    slot = slots_.insert(key, std::move(fresh));
  }
  std::lock_guard<std::mutex> lock(slot->mu);
  for (const auto& [md, memory] : slot->layouts) {
    if (md == packed_md) return memory;
  }
  const auto bytes = static_cast<int64_t>(packed_md.get_size());
  const int64_t held = held_bytes_->fetch_add(bytes, std::memory_order_relaxed);
  if (limit_bytes >= 0 && held + bytes > limit_bytes) {
    held_bytes_->fetch_sub(bytes, std::memory_order_relaxed);
    return dnnl::memory();
  }
  dnnl::memory packed;
  try {
    packed = dnnl::memory(packed_md, cpu_engine());
    dnnl::memory plain(source_md, cpu_engine(), source.data());
    dnnl::stream& stream = thread_stream();
    dnnl::reorder(plain, packed).execute(stream, plain, packed);
    stream.wait();
  } catch (...) {
    held_bytes_->fetch_sub(bytes, std::memory_order_relaxed);
    throw;
  }
  made_->fetch_add(1, std::memory_order_relaxed);
  slot->layouts.emplace_back(packed_md, packed);
  return packed;
}

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
