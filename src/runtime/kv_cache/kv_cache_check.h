// The sequence checks KVCache::check_room and "kv_cache.attention" share
// (relax/runtime/kv_cache.h), and the argument checks the function's CPU and CUDA paths share.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/value.h"

namespace relax::runtime::kv_cache_detail {

/// OK when every id of `seqs` is in [0, max_batch), no id repeats, lengths[id] >= 0
/// and lengths[id] + n <= capacity; else InvalidArgument, prefixed with `where`,
/// naming the first offender (the entry, the sequence, its length, n, the capacity).
absl::Status check_sequences(const char* where, const int64_t* lengths, int64_t max_batch,
                             int64_t capacity, std::span<const int64_t> seqs, int64_t n);

/// The dims of a "kv_cache.attention" call, indices of AttentionProblem::dims.
enum AttentionDim { kB, kN, kHq, kHkv, kD, kBatch, kCap };

/// A checked "kv_cache.attention" call: its dims and data pointers (device pointers for CUDA
/// tensors).
struct AttentionProblem {
  int64_t dims[7] = {};  // by AttentionDim
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  float* cache_keys = nullptr;
  float* cache_values = nullptr;
  const int64_t* lengths = nullptr;
  const int64_t* seq_ids = nullptr;
  float* out = nullptr;
};

/// Every check of relax/runtime/kv_cache.h's "Errors" on `args`. The sequence checks read the
/// lengths and ids from `host_lengths` / `host_seq_ids` when given (host copies of device
/// tensors), else from the tensors themselves.
absl::StatusOr<AttentionProblem> validate_attention(const std::vector<Value>& args,
                                                    const int64_t* host_lengths,
                                                    const int64_t* host_seq_ids);

/// "kv_cache.attention" on CUDA tensors (src/runtime/cuda/kv_cache_attention_cuda.cc); a
/// FailedPrecondition in a runtime built without CUDA.
absl::Status kv_cache_attention_cuda(const std::vector<Value>& args);

}  // namespace relax::runtime::kv_cache_detail
