// The library function "kv_cache.attention" (relax/runtime/kv_cache.h): append
// a step's keys and values to the cache in place, then causal attention of the
// step's queries over the cache.
//
// Stages. (1) Validation, table-driven (one row per argument: name, dtype,
// rank, expected dims in terms of b, n, Hq, Hkv, d, B, C), then the sequence
// ids and lengths; nothing is written before all of it passes. (2) The copy of
// k and v into the cache: row r's (n, Hkv, d) block lands contiguously at
// position L of its sequence, one memcpy each. (3) Attention, per work item
// (row r, KV head g, block of query positions): its rows are the block's
// positions times the Hq / Hkv query heads reading head g. The item walks the
// keys its last position sees in blocks of kKeyBlock: a block of K is packed
// transposed (d x kKeyBlock, zero-padded, through 16 x 16 in-register transposes)
// once and serves every row. Rows go through a block two at a time (kTileRows):
// their scores are kKeyBlock-wide vector multiply-adds over d sharing the loads of
// the packed keys, then, per row, the flash-attention update: a running maximum m
// and sum l, the row's accumulator (kept in `out`) rescaled by exp(m_old - m_new)
// and added p_j V_j, the two rows sharing the loads of V. The last block of a row
// is masked at its causal limit. Memory beyond the output is one packed block,
// 2 x kKeyBlock scores and 2 floats per row of an item, per thread, whatever n and L.
//
// Vectors: GCC/clang vector extensions of 16 floats, lowered to whatever the
// runtime is compiled for (SSE2 for generic x86-64); with g++ on x86-64 the item
// function is also cloned for x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512),
// picked at load time by the CPU (target_clones). The small loops over the vectors
// of a block or a tile are unrolled by pragma: g++ -O2 otherwise keeps such arrays
// of accumulators in memory. exp is a vector polynomial (relative error about
// 2e-7) over arguments <= 0. Every item's arithmetic is fixed, so the result does
// not depend on the threads.
//
// Not handled: other dtypes (float16/bfloat16 caches), strided tensors, a
// split of one row's keys over threads (decode with b * Hkv < threads leaves
// threads idle).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kv_cache/kv_cache_check.h"
#include "relax/runtime/kv_cache.h"
#include "relax/runtime/thread_pool.h"

namespace relax::runtime {
namespace {

constexpr int64_t kKeyBlock = 64;
constexpr int kLanes = 16;
constexpr int kKeyVectors = kKeyBlock / kLanes;
// Rows (query positions x heads of a group) per work item, about.
constexpr int64_t kRowsPerItem = 32;
// Below this many multiply-adds a call runs on the calling thread.
constexpr double kParallelMinWork = 1 << 16;

// The helpers that pass these by value are internal and inlined: the ABI warning
// g++ and clang give for 64-byte vectors without AVX-512 does not concern them.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef float f32x16 __attribute__((vector_size(64)));
typedef int32_t i32x16 __attribute__((vector_size(64)));

// ---------------------------------------------------------------------------
// Validation.

using kv_cache_detail::AttentionProblem;
using enum kv_cache_detail::AttentionDim;
constexpr const char* kDimNames[] = {"b", "n", "Hq", "Hkv", "d", "B", "C"};

struct ArgSpec {
  const char* name;
  DataType dtype;
  std::vector<kv_cache_detail::AttentionDim> dims;
};

const std::vector<ArgSpec>& arg_specs() {
  static const auto* specs = new std::vector<ArgSpec>{
      {"q", DataType::float32(), {kB, kN, kHq, kD}},
      {"k", DataType::float32(), {kB, kN, kHkv, kD}},
      {"v", DataType::float32(), {kB, kN, kHkv, kD}},
      {"cache_keys", DataType::float32(), {kBatch, kCap, kHkv, kD}},
      {"cache_values", DataType::float32(), {kBatch, kCap, kHkv, kD}},
      {"lengths", DataType::int64(), {kBatch}},
      {"seq_ids", DataType::int64(), {kB}},
      {"out", DataType::float32(), {kB, kN, kHq, kD}},
  };
  return *specs;
}

std::string dims_text(const std::vector<int64_t>& dims) { return absl::StrCat("(", absl::StrJoin(dims, ", "), ")"); }

absl::Status arg_error(const ArgSpec& spec, size_t index, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(kKVCacheAttentionName, ": argument ", index, " (", spec.name, ") ", what));
}

}  // namespace

namespace kv_cache_detail {

absl::StatusOr<AttentionProblem> validate_attention(const std::vector<Value>& args,
                                                    const int64_t* host_lengths,
                                                    const int64_t* host_seq_ids) {
  const std::vector<ArgSpec>& specs = arg_specs();
  if (args.size() != specs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kKVCacheAttentionName, ": expected ", specs.size(),
        " arguments (q, k, v, cache_keys, cache_values, lengths, seq_ids, out), got ", args.size()));
  }
  std::vector<const Tensor*> tensors;
  for (size_t i = 0; i < specs.size(); ++i) {
    const ArgSpec& spec = specs[i];
    if (!args[i].is_tensor()) {
      return arg_error(spec, i, absl::StrCat("must be a tensor, got ", value_kind_name(args[i].kind())));
    }
    const Tensor& t = args[i].tensor_or_die();
    if (t.dtype() != spec.dtype) {
      return arg_error(spec, i, absl::StrCat("must be ", spec.dtype.to_string(), ", got ", t.dtype().to_string()));
    }
    if (t.ndim() != static_cast<int>(spec.dims.size())) {
      return arg_error(spec, i, absl::StrCat("must have rank ", spec.dims.size(), ", got ", t.ndim(), ": ",
                                             t.describe()));
    }
    if (!t.is_contiguous()) return arg_error(spec, i, "must be contiguous (row-major)");
    tensors.push_back(&t);
  }
  // The dims come from q (b, n, Hq, d) and cache_keys (B, C, Hkv); every argument
  // is then checked against its row.
  AttentionProblem p;
  const std::vector<int64_t>& qs = tensors[0]->shape();
  const std::vector<int64_t>& cs = tensors[3]->shape();
  p.dims[kB] = qs[0];
  p.dims[kN] = qs[1];
  p.dims[kHq] = qs[2];
  p.dims[kD] = qs[3];
  p.dims[kBatch] = cs[0];
  p.dims[kCap] = cs[1];
  p.dims[kHkv] = cs[2];
  for (size_t i = 0; i < specs.size(); ++i) {
    std::vector<int64_t> expected;
    std::vector<std::string> names;
    for (AttentionDim dim : specs[i].dims) {
      expected.push_back(p.dims[dim]);
      names.push_back(kDimNames[dim]);
    }
    if (tensors[i]->shape() != expected) {
      return arg_error(specs[i], i,
                       absl::StrCat("must have shape ", dims_text(expected), " (", absl::StrJoin(names, ", "),
                                    "), got ", dims_text(tensors[i]->shape())));
    }
  }
  if (p.dims[kHkv] < 1 || p.dims[kHq] % p.dims[kHkv] != 0) {
    return absl::InvalidArgumentError(absl::StrCat(kKVCacheAttentionName, ": the query heads Hq = ", p.dims[kHq],
                                                   " (q) must be a multiple of the KV heads Hkv = ", p.dims[kHkv],
                                                   " (cache_keys)"));
  }
  if (p.dims[kB] > p.dims[kBatch]) {
    return absl::InvalidArgumentError(absl::StrCat(kKVCacheAttentionName, ": ", p.dims[kB],
                                                   " rows (q) but the cache holds at most B = ", p.dims[kBatch],
                                                   " sequences (cache_keys)"));
  }
  // out is written while the others are read (and the cache written): no overlap.
  const Tensor& out = *tensors[7];
  const auto* out_begin = static_cast<const char*>(out.data());
  for (size_t i = 0; i + 1 < specs.size(); ++i) {
    const auto* begin = static_cast<const char*>(tensors[i]->data());
    if (out.nbytes() > 0 && tensors[i]->nbytes() > 0 && begin < out_begin + out.nbytes() &&
        out_begin < begin + tensors[i]->nbytes()) {
      return arg_error(specs[7], 7, absl::StrCat("overlaps argument ", i, " (", specs[i].name, ")"));
    }
  }
  // The dtypes are checked above; the pointers may be device pointers (the CUDA path).
  p.q = static_cast<const float*>(tensors[0]->data());
  p.k = static_cast<const float*>(tensors[1]->data());
  p.v = static_cast<const float*>(tensors[2]->data());
  p.cache_keys = static_cast<float*>(tensors[3]->data());
  p.cache_values = static_cast<float*>(tensors[4]->data());
  p.lengths = static_cast<const int64_t*>(tensors[5]->data());
  p.seq_ids = static_cast<const int64_t*>(tensors[6]->data());
  p.out = static_cast<float*>(tensors[7]->data());
  const std::string where = absl::StrCat(kKVCacheAttentionName, ": seq_ids: ");
  if (absl::Status s = check_sequences(
          where.c_str(), host_lengths != nullptr ? host_lengths : p.lengths, p.dims[kBatch], p.dims[kCap],
          std::span<const int64_t>(host_seq_ids != nullptr ? host_seq_ids : p.seq_ids,
                                   static_cast<size_t>(p.dims[kB])),
          p.dims[kN]);
      !s.ok()) {
    return s;
  }
  return p;
}

}  // namespace kv_cache_detail

namespace {

// ---------------------------------------------------------------------------
// Arithmetic.

[[gnu::always_inline]] inline f32x16 load16(const float* p) {
  f32x16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

[[gnu::always_inline]] inline void store16(float* p, const f32x16& v) { std::memcpy(p, &v, sizeof(v)); }

// x[j] = exp(x[j]) for j < kKeyBlock, for x[j] <= 0 (clamped to [-87.3, 0]: a result
// below 1e-38 is not needed exactly, and masked entries may be anything). 2^round(x log2 e) times a degree-6
// polynomial of the remainder (|r| <= ln 2 / 2).
[[gnu::always_inline]] inline void exp_block(float* x) {
#pragma GCC unroll 16
  for (int c = 0; c < kKeyVectors; ++c) {
    const f32x16 lowest = f32x16{} - 87.3f;
    f32x16 xv = load16(x + c * kLanes);
    xv = xv < lowest ? lowest : xv;
    xv = xv > 0.0f ? f32x16{} : xv;
    const f32x16 rounder = f32x16{} + 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
    const f32x16 nf = (xv * 1.44269504f + rounder) - rounder;
    const f32x16 r = (xv - nf * 0.693145752f) - nf * 1.42860677e-6f;
    f32x16 poly = f32x16{} + (1.0f / 720.0f);
    poly = poly * r + (1.0f / 120.0f);
    poly = poly * r + (1.0f / 24.0f);
    poly = poly * r + (1.0f / 6.0f);
    poly = poly * r + 0.5f;
    poly = poly * r + 1.0f;
    poly = poly * r + 1.0f;
    const i32x16 bits = (__builtin_convertvector(nf, i32x16) + 127) << 23;
    f32x16 scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    store16(x + c * kLanes, poly * scale);
  }
}

#if defined(__clang__)
#define RELAX_KV_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define RELAX_KV_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, i32x16{__VA_ARGS__})
#endif

// Transposes the 16 x 16 floats r[0..15] in place. Each stage makes row 2i + h from
// rows i and i + 8 (h = 0: their lanes 0..7 interleaved, h = 1: lanes 8..15), which
// rotates the 8 bits (row, lane) of an element's index left by one; four stages
// rotate by four: row and lane swap.
[[gnu::always_inline]] inline void transpose16(f32x16* r) {
#pragma GCC unroll 16
  for (int stage = 0; stage < 4; ++stage) {
    f32x16 next[16];
  #pragma GCC unroll 16
    for (int i = 0; i < 8; ++i) {
      next[2 * i] = RELAX_KV_SHUFFLE(r[i], r[i + 8], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      next[2 * i + 1] =
          RELAX_KV_SHUFFLE(r[i], r[i + 8], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    }
  #pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) r[i] = next[i];
  }
}

// keys_t[t * kKeyBlock + j] = keys[j * stride + t] for j < block, t < d, and 0 for j in
// [block, kKeyBlock): 16 x 16 tiles through transpose16, the columns past the last
// multiple of 16 one at a time.
[[gnu::always_inline]] inline void pack_keys(const float* keys, int64_t stride, int64_t block, int64_t d,
                                             float* keys_t) {
  const int64_t tiled = d / kLanes * kLanes;
  for (int64_t j0 = 0; j0 < kKeyBlock; j0 += kLanes) {
    for (int64_t t0 = 0; t0 < tiled; t0 += kLanes) {
      f32x16 tile[16];
    #pragma GCC unroll 16
      for (int64_t x = 0; x < kLanes; ++x) {
        tile[x] = j0 + x < block ? load16(keys + (j0 + x) * stride + t0) : f32x16{};
      }
      transpose16(tile);
    #pragma GCC unroll 16
      for (int64_t y = 0; y < kLanes; ++y) store16(keys_t + (t0 + y) * kKeyBlock + j0, tile[y]);
    }
  }
  for (int64_t t = tiled; t < d; ++t) {
    float* dst = keys_t + t * kKeyBlock;
    for (int64_t j = 0; j < block; ++j) dst[j] = keys[j * stride + t];
    for (int64_t j = block; j < kKeyBlock; ++j) dst[j] = 0.0f;
  }
}

struct ItemScratch {
  std::vector<float> keys_t;  // d x kKeyBlock, the block's keys transposed
  std::vector<float> scores;  // kTileRows x kKeyBlock
  std::vector<float> maxima;  // per row
  std::vector<float> sums;    // per row
};

// Rows that go through a key block together: their scores share the loads of the
// packed keys, their weighted sums the loads of the values, and their independent
// sums hide the latency of the multiply-adds.
constexpr int kTileRows = 2;

// What the rows of one item share for one key block.
struct BlockView {
  const float* keys_t;  // the block's keys, transposed and zero-padded
  const float* values;  // V[kb, g]: key j's values at values + j * key_stride
  int64_t key_stride;
  int64_t d;
  float scale;
  float* scores;  // R x kKeyBlock
  float* maxima;  // per row of the item
  float* sums;
};

// One key block for R rows of an item: row t has its queries at q[t], its accumulator
// at acc[t], index row[t] in maxima/sums, and sees keys [0, valid[t]) of the block (>= 1).
template <int R>
[[gnu::always_inline]] inline void attend_tile(const BlockView& b, const float* const* q, float* const* acc,
                                               const int64_t* row, const int64_t* valid) {
  // Scores: R x kKeyVectors independent vector sums over d.
  f32x16 partial[R][kKeyVectors] = {};
  for (int64_t t = 0; t < b.d; ++t) {
    f32x16 k[kKeyVectors];
  #pragma GCC unroll 16
    for (int c = 0; c < kKeyVectors; ++c) k[c] = load16(b.keys_t + t * kKeyBlock + c * kLanes);
  #pragma GCC unroll 16
    for (int u = 0; u < R; ++u) {
      const float qt = q[u][t];
    #pragma GCC unroll 16
      for (int c = 0; c < kKeyVectors; ++c) partial[u][c] += qt * k[c];
    }
  }
  float correction[R];
  int64_t most_valid = 0;
#pragma GCC unroll 16
  for (int u = 0; u < R; ++u) {
    float* sc = b.scores + u * kKeyBlock;
  #pragma GCC unroll 16
    for (int c = 0; c < kKeyVectors; ++c) store16(sc + c * kLanes, partial[u][c] * b.scale);
    for (int64_t j = valid[u]; j < kKeyBlock; ++j) sc[j] = -std::numeric_limits<float>::infinity();
    f32x16 lane_max = load16(sc);
#pragma GCC unroll 16
    for (int c = 1; c < kKeyVectors; ++c) {
      const f32x16 next = load16(sc + c * kLanes);
      lane_max = next > lane_max ? next : lane_max;
    }
    float block_max = lane_max[0];
    for (int l = 1; l < kLanes; ++l) block_max = std::max(block_max, lane_max[l]);
    const float old_max = b.maxima[row[u]];
    const float new_max = std::max(old_max, block_max);
    correction[u] = std::exp(old_max - new_max);  // 0 on the first block
#pragma GCC unroll 16
    for (int c = 0; c < kKeyVectors; ++c) store16(sc + c * kLanes, load16(sc + c * kLanes) - new_max);
    exp_block(sc);
    for (int64_t j = valid[u]; j < kKeyBlock; ++j) sc[j] = 0.0f;
    f32x16 lane_sum = {};
#pragma GCC unroll 16
    for (int c = 0; c < kKeyVectors; ++c) lane_sum += load16(sc + c * kLanes);
    float block_sum = 0.0f;
    for (int l = 0; l < kLanes; ++l) block_sum += lane_sum[l];
    b.sums[row[u]] = b.sums[row[u]] * correction[u] + block_sum;
    b.maxima[row[u]] = new_max;
    most_valid = std::max(most_valid, valid[u]);
  }
  // acc = acc * correction + sum_j p_j V_j (p_j = 0 past a row's valid keys), 64 then
  // 16 columns at a time, then one.
  int64_t t = 0;
  for (; t + 4 * kLanes <= b.d; t += 4 * kLanes) {
    f32x16 a[R][4];
  #pragma GCC unroll 16
    for (int u = 0; u < R; ++u) {
    #pragma GCC unroll 16
      for (int c = 0; c < 4; ++c) a[u][c] = load16(acc[u] + t + c * kLanes) * correction[u];
    }
    for (int64_t j = 0; j < most_valid; ++j) {
      const float* vrow = b.values + j * b.key_stride + t;
      f32x16 v[4];
    #pragma GCC unroll 16
      for (int c = 0; c < 4; ++c) v[c] = load16(vrow + c * kLanes);
    #pragma GCC unroll 16
      for (int u = 0; u < R; ++u) {
        const float pj = b.scores[u * kKeyBlock + j];
      #pragma GCC unroll 16
        for (int c = 0; c < 4; ++c) a[u][c] += pj * v[c];
      }
    }
  #pragma GCC unroll 16
    for (int u = 0; u < R; ++u) {
    #pragma GCC unroll 16
      for (int c = 0; c < 4; ++c) store16(acc[u] + t + c * kLanes, a[u][c]);
    }
  }
  for (; t + kLanes <= b.d; t += kLanes) {
    f32x16 a[R];
  #pragma GCC unroll 16
    for (int u = 0; u < R; ++u) a[u] = load16(acc[u] + t) * correction[u];
    for (int64_t j = 0; j < most_valid; ++j) {
      const f32x16 v = load16(b.values + j * b.key_stride + t);
    #pragma GCC unroll 16
      for (int u = 0; u < R; ++u) a[u] += b.scores[u * kKeyBlock + j] * v;
    }
  #pragma GCC unroll 16
    for (int u = 0; u < R; ++u) store16(acc[u] + t, a[u]);
  }
  for (; t < b.d; ++t) {
  #pragma GCC unroll 16
    for (int u = 0; u < R; ++u) {
      float a = acc[u][t] * correction[u];
      for (int64_t j = 0; j < most_valid; ++j) a += b.scores[u * kKeyBlock + j] * b.values[j * b.key_stride + t];
      acc[u][t] = a;
    }
  }
}

// One work item: row r, KV head g, query positions [i0, i1). Its rows, (i - i0) * group
// + hh for query head g * group + hh at position i, see keys [0, L + i + 1): the rows that
// see a block are a suffix of them.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void attend_item(const AttentionProblem& p, int64_t r, int64_t g, int64_t i0, int64_t i1, ItemScratch& scratch) {
  const int64_t n = p.dims[kN];
  const int64_t hq = p.dims[kHq];
  const int64_t hkv = p.dims[kHkv];
  const int64_t d = p.dims[kD];
  const int64_t group = hq / hkv;
  const int64_t s = p.seq_ids[r];
  const int64_t length = p.lengths[s];
  const int64_t key_stride = hkv * d;
  const float* keys = p.cache_keys + (s * p.dims[kCap] * hkv + g) * d;
  const float* values = p.cache_values + (s * p.dims[kCap] * hkv + g) * d;
  const int64_t rows = (i1 - i0) * group;
  BlockView view{scratch.keys_t.data(), values,       key_stride, d, 1.0f / std::sqrt(static_cast<float>(d)),
                 scratch.scores.data(), scratch.maxima.data(), scratch.sums.data()};
  auto query = [&](int64_t row) { return p.q + ((r * n + i0 + row / group) * hq + g * group + row % group) * d; };
  auto output = [&](int64_t row) { return p.out + ((r * n + i0 + row / group) * hq + g * group + row % group) * d; };
  for (int64_t i = i0; i < i1; ++i) {
    std::memset(output((i - i0) * group), 0, static_cast<size_t>(group * d) * sizeof(float));
  }
  for (int64_t row = 0; row < rows; ++row) {
    view.maxima[row] = -std::numeric_limits<float>::infinity();
    view.sums[row] = 0.0f;
  }

  const int64_t key_end = length + i1;  // the last position's keys: [0, L + i1)
  for (int64_t kb = 0; kb < key_end; kb += kKeyBlock) {
    const int64_t block = std::min(kKeyBlock, key_end - kb);
    pack_keys(keys + kb * key_stride, key_stride, block, d, scratch.keys_t.data());
    view.values = values + kb * key_stride;
    // Position i sees this block when L + i + 1 > kb.
    int64_t row = std::max<int64_t>(0, kb - length - i0) * group;
    auto visible = [&](int64_t at) { return std::min(kKeyBlock, length + i0 + at / group + 1 - kb); };
    for (; row + kTileRows <= rows; row += kTileRows) {
      const float* q[kTileRows];
      float* acc[kTileRows];
      int64_t index[kTileRows], valid[kTileRows];
      for (int u = 0; u < kTileRows; ++u) {
        q[u] = query(row + u);
        acc[u] = output(row + u);
        index[u] = row + u;
        valid[u] = visible(row + u);
      }
      attend_tile<kTileRows>(view, q, acc, index, valid);
    }
    for (; row < rows; ++row) {
      const float* q[1] = {query(row)};
      float* acc[1] = {output(row)};
      const int64_t index[1] = {row};
      const int64_t valid[1] = {visible(row)};
      attend_tile<1>(view, q, acc, index, valid);
    }
  }
  for (int64_t row = 0; row < rows; ++row) {
    const float inverse = 1.0f / view.sums[row];
    float* acc = output(row);
    for (int64_t t = 0; t < d; ++t) acc[t] *= inverse;
  }
}

}  // namespace

absl::Status kv_cache_attention(const std::vector<Value>& args) {
  // Tensors on a GPU go to the CUDA kernels (src/runtime/cuda/kv_cache_attention_cuda.cc).
  if (!args.empty() && args[0].is_tensor() && args[0].tensor_or_die().device().type == Device::Type::kCUDA) {
    return kv_cache_detail::kv_cache_attention_cuda(args);
  }
  absl::StatusOr<AttentionProblem> checked = kv_cache_detail::validate_attention(args, nullptr, nullptr);
  if (!checked.ok()) return checked.status();
  const AttentionProblem& p = *checked;
  const int64_t b = p.dims[kB];
  const int64_t n = p.dims[kN];
  const int64_t hq = p.dims[kHq];
  const int64_t hkv = p.dims[kHkv];
  const int64_t d = p.dims[kD];
  const int64_t cap = p.dims[kCap];

  // The new keys and values: row r's (n, Hkv, d) block goes to positions [L, L + n).
  const auto step_bytes = static_cast<size_t>(n * hkv * d) * sizeof(float);
  for (int64_t r = 0; r < b && step_bytes > 0; ++r) {
    const int64_t s = p.seq_ids[r];
    const int64_t at = (s * cap + p.lengths[s]) * hkv * d;
    std::memcpy(p.cache_keys + at, p.k + r * n * hkv * d, step_bytes);
    std::memcpy(p.cache_values + at, p.v + r * n * hkv * d, step_bytes);
  }
  if (b == 0 || n == 0 || hq == 0 || d == 0) return absl::OkStatus();

  const int64_t group = hq / hkv;
  const int64_t positions_per_item = std::max<int64_t>(1, kRowsPerItem / group);
  const int64_t position_blocks = (n + positions_per_item - 1) / positions_per_item;
  const int64_t items = b * hkv * position_blocks;
  double work = 0;  // multiply-adds, about
  for (int64_t r = 0; r < b; ++r) {
    work += static_cast<double>(n) * static_cast<double>(hq) * static_cast<double>(d) * 2.0 *
            static_cast<double>(p.lengths[p.seq_ids[r]] + n);
  }
  auto run = [&](int64_t lo, int64_t hi) -> int32_t {
    ItemScratch scratch;
    scratch.keys_t.resize(static_cast<size_t>(d * kKeyBlock));
    scratch.scores.resize(kTileRows * kKeyBlock);
    scratch.maxima.resize(static_cast<size_t>(positions_per_item * group));
    scratch.sums.resize(static_cast<size_t>(positions_per_item * group));
    for (int64_t item = lo; item < hi; ++item) {
      const int64_t block = item % position_blocks;
      const int64_t g = (item / position_blocks) % hkv;
      const int64_t r = item / (position_blocks * hkv);
      const int64_t i0 = block * positions_per_item;
      attend_item(p, r, g, i0, std::min(n, i0 + positions_per_item), scratch);
    }
    return 0;
  };
  const int32_t wanted = work < kParallelMinWork ? 1 : 0;
  if (parallel_for(0, items, wanted, run) != 0) {
    return absl::InternalError(absl::StrCat(kKVCacheAttentionName, ": a worker failed"));
  }
  return absl::OkStatus();
}

}  // namespace relax::runtime
