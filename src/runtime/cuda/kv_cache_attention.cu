// The device code of "kv_cache.attention" on CUDA tensors (relax/runtime/kv_cache.h states what
// it computes; kv_cache_attention_cuda.cc checks the arguments and launches these two kernels).
//
// Compiled once at build time by nvcc into a fat binary for the architectures of
// RELAX_CUDA_ARCHITECTURES (plus PTX of the newest, for later GPUs), which the runtime embeds and
// loads through the same cuda_launch path as generated kernels: the runtime still runs without a
// compiler.
//
//   relax_kv_append: cache[s, L + i] = k[r, i] (and v), one thread per float.
//   relax_kv_attend: one block per (row r, query position i, query head h). The block walks the
//     keys its position sees (0 .. L + i) in tiles of kTile: the scores of a tile go to shared
//     memory (a warp per key, lanes over the head dim, a shuffle sum), then the block's running
//     maximum m and sum l are updated flash-attention style, the accumulator (one float per head
//     dim, per group of threads) rescaled by exp(m_old - m_new) and added p_j V_j. At the end the
//     groups' partial accumulators are added and divided by l. All in float32.
//
// Limits: head_dim <= 256 (checked by the caller), float32 caches.

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kTile = 128;
constexpr int kMaxHeadDim = 256;

__device__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_down_sync(0xffffffffu, x, offset);
  return __shfl_sync(0xffffffffu, x, 0);
}

__device__ float block_reduce(float x, float* scratch, bool is_max) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_down_sync(0xffffffffu, x, offset);
    x = is_max ? fmaxf(x, other) : x + other;
  }
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kWarps; ++w) r = is_max ? fmaxf(r, scratch[w]) : r + scratch[w];
  __syncthreads();
  return r;
}

}  // namespace

extern "C" __global__ void relax_kv_append(const float* k, const float* v, float* cache_keys,
                                           float* cache_values, const long long* lengths,
                                           const long long* seq_ids, long long b, long long n,
                                           long long hkv, long long d, long long cap) {
  const long long per_row = n * hkv * d;
  const long long total = b * per_row;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const long long r = e / per_row;
    const long long within = e % per_row;  // (i, g, c) of row r
    const long long s = seq_ids[r];
    const long long at = (s * cap + lengths[s]) * hkv * d + within;
    cache_keys[at] = k[e];
    cache_values[at] = v[e];
  }
}

extern "C" __global__ void __launch_bounds__(kThreads)
    relax_kv_attend(const float* q, const float* cache_keys, const float* cache_values,
                    const long long* lengths, const long long* seq_ids, float* out, long long n,
                    long long hq, long long hkv, long long d, long long cap) {
  __shared__ float q_s[kMaxHeadDim];
  __shared__ float scores[kTile];
  __shared__ float scratch[kWarps];
  __shared__ float partial[kThreads];

  const long long item = blockIdx.x;  // (r, i, h)
  const long long h = item % hq;
  const long long i = (item / hq) % n;
  const long long r = item / (hq * n);
  const long long s = seq_ids[r];
  const long long visible = lengths[s] + i + 1;  // keys 0 .. L + i
  const long long g = h / (hq / hkv);
  const float scale = rsqrtf((float)d);
  const float* qrow = q + ((r * n + i) * hq + h) * d;
  for (long long c = threadIdx.x; c < d; c += kThreads) q_s[c] = qrow[c] * scale;
  __syncthreads();

  const long long key_stride = hkv * d;
  const float* keys = cache_keys + (s * cap * hkv + g) * d;
  const float* values = cache_values + (s * cap * hkv + g) * d;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  // Thread t accumulates head dim c = t % d over the keys j with j % groups == t / d.
  const int groups = d >= kThreads ? 1 : (int)(kThreads / d);
  const long long my_dim = threadIdx.x % d;
  const int my_group = (int)(threadIdx.x / d);
  const bool accumulates = my_group < groups && threadIdx.x < groups * d;

  float m = __int_as_float(0xff800000);  // -infinity
  float l = 0.f;
  float acc[kMaxHeadDim / kThreads + 1];  // dims my_dim, my_dim + kThreads, ... when d > kThreads
  const int dims_per_thread = d > kThreads ? (int)((d + kThreads - 1) / kThreads) : 1;
  for (int t = 0; t < dims_per_thread; ++t) acc[t] = 0.f;

  for (long long start = 0; start < visible; start += kTile) {
    const int tile = (int)min((long long)kTile, visible - start);
    // Scores: warp w takes keys w, w + kWarps, ...; lanes split the head dim.
    for (int j = warp; j < tile; j += kWarps) {
      const float* key = keys + (start + j) * key_stride;
      float dot = 0.f;
      for (long long c = lane; c < d; c += 32) dot += q_s[c] * key[c];
      dot = warp_sum(dot);
      if (lane == 0) scores[j] = dot;
    }
    __syncthreads();
    float tile_max = __int_as_float(0xff800000);
    for (int j = threadIdx.x; j < tile; j += kThreads) tile_max = fmaxf(tile_max, scores[j]);
    tile_max = block_reduce(tile_max, scratch, true);
    const float m_new = fmaxf(m, tile_max);
    const float rescale = __expf(m - m_new);
    float tile_sum = 0.f;
    for (int j = threadIdx.x; j < tile; j += kThreads) {
      const float p = __expf(scores[j] - m_new);
      scores[j] = p;
      tile_sum += p;
    }
    tile_sum = block_reduce(tile_sum, scratch, false);  // its barrier also publishes scores[]
    l = l * rescale + tile_sum;
    m = m_new;
    if (d > kThreads) {
      for (int t = 0; t < dims_per_thread; ++t) {
        const long long c = threadIdx.x + (long long)t * kThreads;
        float a = acc[t] * rescale;
        if (c < d) {
          for (int j = 0; j < tile; ++j) a += scores[j] * values[(start + j) * key_stride + c];
        }
        acc[t] = a;
      }
    } else if (accumulates) {
      float a = acc[0] * rescale;
      for (int j = my_group; j < tile; j += groups) a += scores[j] * values[(start + j) * key_stride + my_dim];
      acc[0] = a;
    }
    __syncthreads();  // scores[] is rewritten by the next tile
  }

  float* orow = out + ((r * n + i) * hq + h) * d;
  const float inv = 1.f / l;
  if (d > kThreads) {
    for (int t = 0; t < dims_per_thread; ++t) {
      const long long c = threadIdx.x + (long long)t * kThreads;
      if (c < d) orow[c] = acc[t] * inv;
    }
    return;
  }
  partial[threadIdx.x] = accumulates ? acc[0] : 0.f;
  __syncthreads();
  for (long long c = threadIdx.x; c < d; c += kThreads) {
    float total = 0.f;
    for (int grp = 0; grp < groups; ++grp) total += partial[grp * d + c];
    orow[c] = total * inv;
  }
}
