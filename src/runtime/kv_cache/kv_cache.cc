// KVCache (relax/runtime/kv_cache.h): the storage and the per-sequence lengths.
//
// All keys and values of all layers are one block, and each layer's keys and
// values are views of it (Tensor::view keeps the block alive). The block must be
// zero at creation (tests and users may read positions not yet written), but a
// memset of a large cache would touch every page at once: on Linux the block is
// an anonymous private mapping, whose pages the kernel hands out zeroed on first
// touch, adopted by a tensor whose owner unmaps it. Elsewhere (or when
// mmap fails) Tensor::empty, which zeroes, is the fallback. A cache on a GPU is one block of
// device memory (Tensor::empty zeroes it there too); its lengths live on the device for the
// attention kernels and in a host mirror for the checks, and every change of the mirror is
// copied to the device at once (a few bytes, synchronous).
#include "relax/runtime/kv_cache.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "relax/support/check.h"
#include "kv_cache/kv_cache_check.h"

#if defined(__unix__)
#include <sys/mman.h>
#endif

namespace relax::runtime {

struct KVCache::State {
  int64_t layers = 0;
  int64_t max_batch = 0;
  int64_t capacity = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t bytes = 0;
  std::vector<Tensor> keys;
  std::vector<Tensor> values;
  Tensor lengths;
  // The lengths on the host: `lengths` itself for a host cache; for a device cache a host
  // mirror, copied to the device's `lengths` whenever it changes.
  Tensor host_lengths;
  int64_t* length_data = nullptr;
  Device device = Device::cpu();

  // After length_data changed: the device copy follows.
  absl::Status publish_lengths() const {
    if (device.type == Device::Type::kCPU) return absl::OkStatus();
    return lengths.copy_from(host_lengths);
  }
};

namespace {

#if defined(__unix__)
// A zero uint8 tensor of `bytes` bytes whose pages are zeroed on first touch, or an
// undefined tensor when the mapping cannot be had (the caller falls back).
Tensor map_zero_block(int64_t bytes) {
  const auto size = static_cast<size_t>(bytes);
  void* address = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) return Tensor();
  std::shared_ptr<void> mapping(address, [size](void* p) { munmap(p, size); });
  return Tensor::adopt(address, {bytes}, DataType{DataType::Code::kUInt, 8, 1}, std::move(mapping));
}
#else
Tensor map_zero_block(int64_t) { return Tensor(); }
#endif

// *out = a * b; false when that overflows int64.
bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

namespace kv_cache_detail {

absl::Status check_sequences(const char* where, const int64_t* lengths, int64_t max_batch,
                             int64_t capacity, std::span<const int64_t> seqs, int64_t n) {
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat(where, "a negative token count ", n));
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int64_t s = seqs[i];
    if (s < 0 || s >= max_batch) {
      return absl::InvalidArgumentError(absl::StrCat(where, "sequence id ", s, " (entry ", i,
                                                     ") is out of range [0, ", max_batch, ")"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (seqs[j] == s) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "sequence id ", s, " is repeated (entries ", j, " and ", i, ")"));
      }
    }
    const int64_t held = lengths[s];
    if (held < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "sequence ", s, " has a negative length ", held));
    }
    if (held > capacity - n) {
      return absl::InvalidArgumentError(absl::StrCat(where, "KV cache capacity exceeded: sequence ", s,
                                                     " holds ", held, " tokens; ", n, " more would make ",
                                                     held + n, ", over the capacity ", capacity));
    }
  }
  return absl::OkStatus();
}

}  // namespace kv_cache_detail

absl::StatusOr<KVCache> KVCache::create(int64_t layers, int64_t max_batch, int64_t capacity,
                                        int64_t kv_heads, int64_t head_dim, Device device) {
  const std::pair<const char*, int64_t> sizes[] = {{"layers", layers},
                                                    {"max_batch", max_batch},
                                                    {"capacity", capacity},
                                                    {"kv_heads", kv_heads},
                                                    {"head_dim", head_dim}};
  for (const auto& [name, size] : sizes) {
    if (size < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("KVCache::create: ", name, " must be at least 1, got ", size));
    }
  }
  // Bytes of one layer's keys (or values), then of all: 2 tensors per layer.
  int64_t layer_bytes = 0;
  int64_t total = 0;
  const bool fits = checked_mul(static_cast<int64_t>(sizeof(float)), max_batch, &layer_bytes) &&
                    checked_mul(layer_bytes, capacity, &layer_bytes) &&
                    checked_mul(layer_bytes, kv_heads, &layer_bytes) &&
                    checked_mul(layer_bytes, head_dim, &layer_bytes) &&
                    checked_mul(layer_bytes, layers, &total) && checked_mul(total, 2, &total);
  if (!fits || total > kMaxKVCacheBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KVCache::create: ", layers, " layers x 2 x (max_batch ", max_batch, ", capacity ", capacity,
        ", kv_heads ", kv_heads, ", head_dim ", head_dim, ") float32 ",
        fits ? absl::StrCat("is ", total, " bytes") : std::string("overflows int64"),
        ", over the limit of ", kMaxKVCacheBytes, " bytes"));
  }

  // On a GPU, device memory zeroed by Tensor::empty; on the host, pages zeroed on first touch.
  Tensor block = device.type == Device::Type::kCPU ? map_zero_block(total) : Tensor();
  if (!block.defined()) {
    absl::StatusOr<Tensor> zeroed = Tensor::empty({total}, DataType{DataType::Code::kUInt, 8, 1}, device);
    if (!zeroed.ok()) {
      // Keeps the cause's code: no driver is a failed precondition, a full device exhaustion.
      return absl::Status(zeroed.status().code(), absl::StrCat("KVCache::create: cannot allocate ", total,
                                                               " bytes: ", zeroed.status().message()));
    }
    block = *std::move(zeroed);
  }
  auto state = std::make_shared<State>();
  state->layers = layers;
  state->max_batch = max_batch;
  state->capacity = capacity;
  state->kv_heads = kv_heads;
  state->head_dim = head_dim;
  state->bytes = total;
  const std::vector<int64_t> shape = {max_batch, capacity, kv_heads, head_dim};
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t which = 0; which < 2; ++which) {
      absl::StatusOr<Tensor> view = block.view((2 * l + which) * layer_bytes, shape, DataType::float32());
      if (!view.ok()) return view.status();
      (which == 0 ? state->keys : state->values).push_back(*std::move(view));
    }
  }
  absl::StatusOr<Tensor> lengths = Tensor::empty({max_batch}, DataType::int64(), device);  // zeroed
  if (!lengths.ok()) return lengths.status();
  state->lengths = *std::move(lengths);
  state->device = device;
  if (device.type == Device::Type::kCPU) {
    state->host_lengths = state->lengths;
  } else {
    absl::StatusOr<Tensor> mirror = Tensor::empty({max_batch}, DataType::int64());
    if (!mirror.ok()) return mirror.status();
    state->host_lengths = *std::move(mirror);
  }
  state->length_data = state->host_lengths.data_as_or_die<int64_t>();
  KVCache cache;
  cache.state_ = std::move(state);
  return cache;
}

int64_t KVCache::layers() const { return state_->layers; }
int64_t KVCache::max_batch() const { return state_->max_batch; }
int64_t KVCache::capacity() const { return state_->capacity; }
int64_t KVCache::kv_heads() const { return state_->kv_heads; }
int64_t KVCache::head_dim() const { return state_->head_dim; }
int64_t KVCache::bytes() const { return state_->bytes; }
const Tensor& KVCache::lengths() const { return state_->lengths; }

const Tensor& KVCache::keys(int64_t layer) const {
  RELAX_CHECK(layer >= 0 && layer < state_->layers) << "KVCache::keys: layer " << layer << " of " << state_->layers;
  return state_->keys[static_cast<size_t>(layer)];
}

const Tensor& KVCache::values(int64_t layer) const {
  RELAX_CHECK(layer >= 0 && layer < state_->layers)
      << "KVCache::values: layer " << layer << " of " << state_->layers;
  return state_->values[static_cast<size_t>(layer)];
}

int64_t KVCache::length(int64_t seq) const {
  RELAX_CHECK(seq >= 0 && seq < state_->max_batch)
      << "KVCache::length: sequence " << seq << " of " << state_->max_batch;
  return state_->length_data[seq];
}

absl::Status KVCache::check_room(std::span<const int64_t> seqs, int64_t n) const {
  return kv_cache_detail::check_sequences("KVCache: ", state_->length_data, state_->max_batch,
                                          state_->capacity, seqs, n);
}

absl::Status KVCache::advance(std::span<const int64_t> seqs, int64_t n) {
  if (absl::Status s = check_room(seqs, n); !s.ok()) return s;
  for (int64_t s : seqs) state_->length_data[s] += n;
  return state_->publish_lengths();
}

void KVCache::reset(int64_t seq) {
  RELAX_CHECK(seq >= 0 && seq < state_->max_batch)
      << "KVCache::reset: sequence " << seq << " of " << state_->max_batch;
  state_->length_data[seq] = 0;
  RELAX_CHECK(state_->publish_lengths().ok()) << "KVCache::reset: the device copy of the lengths";
}

void KVCache::reset_all() {
  for (int64_t s = 0; s < state_->max_batch; ++s) state_->length_data[s] = 0;
  RELAX_CHECK(state_->publish_lengths().ok()) << "KVCache::reset_all: the device copy of the lengths";
}

Device KVCache::device() const { return state_->device; }

}  // namespace relax::runtime
