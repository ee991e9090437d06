// relax::runtime::KVCache: the keys and values a language model keeps between
// calls, and the library function that appends to them and attends over them.
//
//   absl::StatusOr<KVCache> cache = KVCache::create(/*layers=*/22, /*max_batch=*/4,
//                                                   /*capacity=*/2048, /*kv_heads=*/4,
//                                                   /*head_dim=*/64);
//   // per step: the compiled prefill/decode gets, for layer l, cache->keys(l),
//   // cache->values(l) and cache->lengths(); after the step:
//   RELAX_RETURN_IF_ERROR(cache->advance(seq_ids, n));
//
// Layout. Per layer, a keys and a values tensor, float32 (max_batch, capacity,
// kv_heads, head_dim), contiguous; one int64 tensor `lengths` (max_batch,): the
// tokens sequence s holds, the same for every layer (positions [0, lengths[s])
// of s are valid). All the storage is one block, zero at creation; on Linux it
// is an anonymous mapping, so its pages cost nothing until first written (a
// 180 MB cache is not memset when created).
//
// A KVCache is a cheap handle: copies share the storage and the lengths (like
// Tensor). It is not synchronised: one step (the compiled function's call and
// the advance after it) at a time.
//
// ---------------------------------------------------------------------------
// The library function "kv_cache.attention" (call_dps_library; the runtime
// registers it at start-up, relax/runtime/module.h). Arguments, all tensors,
// contiguous, in this order (the last is the destination):
//   q            float32 (b, n, Hq, d)     the queries of n new tokens per row
//   k            float32 (b, n, Hkv, d)    their keys
//   v            float32 (b, n, Hkv, d)    their values
//   cache_keys   float32 (B, C, Hkv, d)    KVCache::keys(layer), written in place
//   cache_values float32 (B, C, Hkv, d)    KVCache::values(layer), written in place
//   lengths      int64 (B,)                KVCache::lengths(), read only
//   seq_ids      int64 (b,)                the sequence of each row, distinct, in [0, B)
//   out          float32 (b, n, Hq, d)     the result
// with Hq a multiple of Hkv (query head h reads KV head h / (Hq / Hkv)) and b <= B.
// For row r, sequence s = seq_ids[r], L = lengths[s]:
//   cache_keys[s, L + i] = k[r, i] and cache_values[s, L + i] = v[r, i] for i < n;
//   out[r, i, h] = sum over j <= L + i of softmax_j(q[r, i, h] . K[s, j, g] / sqrt(d)) V[s, j, g]
//                  with g = h / (Hq / Hkv), K and V the cache after the writes
// (causal: the query at position L + i sees the positions up to its own). The lengths
// are not changed: every layer of a step sees the same L, and the caller advances
// the cache once after the step (KVCache::advance).
//
// Errors (InvalidArgument, before anything is written; the message names the
// argument, what was expected and what it is): not 8 arguments, an argument that
// is not a tensor, a wrong dtype or rank, inconsistent dims (b, n, Hq, Hkv, d, B,
// C), Hq not a multiple of Hkv, b > B, a non-contiguous tensor, `out` overlapping
// another argument, a sequence id out of range or repeated, a negative length,
// and L + n > C ("KV cache capacity exceeded: sequence 2 holds 2040 tokens; 16
// more would make 2056, over the capacity 2048").
//
// Computation: per (row, KV head, block of queries) work item, on the kernel
// thread pool (relax/runtime/thread_pool.h, within the kernel thread budget):
// the Hq / Hkv query heads sharing a KV head and the block's queries go together
// over blocks of 64 keys with a running maximum and sum (no n x (L + n) score
// matrix), in float32. Results do not depend on the number of threads.
//
// On CUDA tensors (every argument on one GPU: a KVCache created on that device, q, k,
// v, seq_ids and out there too) the same checks run on the host (the lengths and the
// ids are copied there first, two small synchronous copies), then two kernels on the
// call's stream: the append, and one block per (row, position, head) walking the
// visible keys in tiles with the same running maximum and sum; head_dim <= 256.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"

namespace relax::runtime {

/// The name "kv_cache.attention" is registered under (see the file comment).
inline constexpr const char* kKVCacheAttentionName = "kv_cache.attention";

/// The largest cache KVCache::create makes: keys and values of all layers together.
inline constexpr int64_t kMaxKVCacheBytes = int64_t{1} << 36;  // 64 GiB

/// Per-layer keys and values of up to max_batch sequences (see the file comment).
class KVCache {
 public:
  /// An undefined cache (defined() is false).
  KVCache() = default;

  /// A cache of `layers` layers for `max_batch` sequences of up to `capacity` tokens,
  /// `kv_heads` heads of `head_dim` floats; every length 0. InvalidArgument naming
  /// the size for a size < 1, or when the bytes of the keys and values overflow or
  /// exceed kMaxKVCacheBytes; ResourceExhausted when the memory cannot be had.
  /// On `device` Device::cuda(i) the keys, values and lengths are device memory (the
  /// attention then runs on that GPU), and creating fails as Tensor::empty does there.
  static absl::StatusOr<KVCache> create(int64_t layers, int64_t max_batch, int64_t capacity,
                                        int64_t kv_heads, int64_t head_dim,
                                        Device device = Device::cpu());

  bool defined() const { return state_ != nullptr; }
  int64_t layers() const;
  int64_t max_batch() const;
  int64_t capacity() const;
  int64_t kv_heads() const;
  int64_t head_dim() const;
  /// Layer l's keys / values, float32 (max_batch, capacity, kv_heads, head_dim), sharing
  /// the cache's storage. Aborts for l out of [0, layers()).
  const Tensor& keys(int64_t layer) const;
  const Tensor& values(int64_t layer) const;
  /// The tokens held per sequence, int64 (max_batch,), sharing the cache's storage.
  const Tensor& lengths() const;
  /// lengths()[seq]; aborts for seq out of [0, max_batch()).
  int64_t length(int64_t seq) const;
  /// The bytes of all keys and values (the lengths not counted).
  int64_t bytes() const;
  /// Where the keys, values and lengths live.
  Device device() const;

  /// OK when every id of `seqs` is in [0, max_batch()), no id is repeated, and each
  /// sequence has room for `n` (>= 0) more tokens; else InvalidArgument naming the
  /// first offender ("KV cache capacity exceeded: sequence 2 holds 2040 tokens; 16
  /// more would make 2056, over the capacity 2048").
  absl::Status check_room(std::span<const int64_t> seqs, int64_t n) const;
  /// lengths[s] += n for every s of `seqs`, after check_room (nothing changes on error).
  absl::Status advance(std::span<const int64_t> seqs, int64_t n);
  /// Forgets what sequence `seq` holds (its length becomes 0; the storage is kept).
  /// Aborts for seq out of range (or when the device copy of the lengths fails).
  void reset(int64_t seq);
  /// reset() of every sequence.
  void reset_all();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// The function registered as "kv_cache.attention" (see the file comment), callable
/// directly: `args` are the 8 tensors.
absl::Status kv_cache_attention(const std::vector<Value>& args);

}  // namespace relax::runtime
