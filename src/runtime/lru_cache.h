// A small thread-safe least-recently-used cache keyed by integer vectors (shapes, strides,
// addresses): the plan caches of the library functions (oneDNN primitives and weight
// layouts, cuBLASLt and cuDNN plans).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace relax::runtime {

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
    return insert(key, std::move(value), capacity_);
  }
  /// The same, keeping at most `capacity` entries (a bound the caller may change between calls).
  std::shared_ptr<Value> insert(const Key& key, std::shared_ptr<Value> value, size_t capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    std::shared_ptr<Value> kept = order_.front().second;
    while (order_.size() > capacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return kept;
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

}  // namespace relax::runtime
