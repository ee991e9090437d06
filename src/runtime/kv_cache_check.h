// The sequence checks KVCache::check_room and "kv_cache.attention" share
// (relax/runtime/kv_cache.h).
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"

namespace relax::runtime::kv_cache_detail {

/// OK when every id of `seqs` is in [0, max_batch), no id repeats, lengths[id] >= 0
/// and lengths[id] + n <= capacity; else InvalidArgument, prefixed with `where`,
/// naming the first offender (the entry, the sequence, its length, n, the capacity).
absl::Status check_sequences(const char* where, const int64_t* lengths, int64_t max_batch,
                             int64_t capacity, std::span<const int64_t> seqs, int64_t n);

}  // namespace relax::runtime::kv_cache_detail
