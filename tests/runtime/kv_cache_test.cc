// KVCache and "kv_cache.attention" (relax/runtime/kv_cache.h), against a plain
// loop in double.
#include "relax/runtime/kv_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "relax/runtime/module.h"
#include "relax/runtime/thread_budget.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;

// One call: b rows of n tokens, Hq query heads over Hkv KV heads of d floats, a cache
// of B sequences of capacity C holding `lengths` tokens, rows on sequences `seq_ids`.
struct Case {
  int64_t n, hq, hkv, d, capacity;
  std::vector<int64_t> lengths;  // per sequence (B of them)
  std::vector<int64_t> seq_ids;  // per row (b of them)
  int64_t b() const { return static_cast<int64_t>(seq_ids.size()); }
  int64_t batch() const { return static_cast<int64_t>(lengths.size()); }
};

std::vector<float> random_floats(size_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(gen);
  return v;
}

Tensor make(std::vector<int64_t> shape, const std::vector<float>& values) {
  absl::StatusOr<Tensor> t = Tensor::from_vector(std::move(shape), values);
  RELAX_CHECK(t.ok()) << t.status();
  return *t;
}

std::vector<float> contents(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

void fill(const Tensor& t, const std::vector<float>& values) {
  std::copy(values.begin(), values.end(), t.data_as_or_die<float>());
}

// The inputs of one call and a cache in the state the case describes (every position
// of the cache random, the valid ones and the others alike).
struct CallSetup {
  KVCache cache;
  Tensor q, k, v, seq_ids, out;
  std::vector<float> keys_before, values_before;

  std::vector<Value> args() const {
    return {q, k, v, cache.keys(0), cache.values(0), cache.lengths(), seq_ids, out};
  }
};

CallSetup make_setup(const Case& c, uint32_t seed) {
  CallSetup s;
  absl::StatusOr<KVCache> cache = KVCache::create(1, c.batch(), c.capacity, c.hkv, c.d);
  RELAX_CHECK(cache.ok()) << cache.status();
  s.cache = *cache;
  for (int64_t seq = 0; seq < c.batch(); ++seq) {
    const int64_t one[] = {seq};
    RELAX_CHECK(s.cache.advance(one, c.lengths[static_cast<size_t>(seq)]).ok());
  }
  const size_t cache_count = static_cast<size_t>(c.batch() * c.capacity * c.hkv * c.d);
  s.keys_before = random_floats(cache_count, seed + 1);
  s.values_before = random_floats(cache_count, seed + 2);
  fill(s.cache.keys(0), s.keys_before);
  fill(s.cache.values(0), s.values_before);
  const size_t q_count = static_cast<size_t>(c.b() * c.n * c.hq * c.d);
  const size_t kv_count = static_cast<size_t>(c.b() * c.n * c.hkv * c.d);
  s.q = make({c.b(), c.n, c.hq, c.d}, random_floats(q_count, seed + 3));
  s.k = make({c.b(), c.n, c.hkv, c.d}, random_floats(kv_count, seed + 4));
  s.v = make({c.b(), c.n, c.hkv, c.d}, random_floats(kv_count, seed + 5));
  absl::StatusOr<Tensor> ids = Tensor::from_vector({c.b()}, c.seq_ids);
  RELAX_CHECK(ids.ok());
  s.seq_ids = *ids;
  s.out = make({c.b(), c.n, c.hq, c.d}, std::vector<float>(q_count, -7.0f));
  return s;
}

// The cache after the call's writes, and the output, by plain loops in double.
struct Expected {
  std::vector<float> keys, values;
  std::vector<double> out;
};

Expected reference(const Case& c, const CallSetup& s) {
  Expected e{s.keys_before, s.values_before, {}};
  const std::vector<float> q = contents(s.q), k = contents(s.k), v = contents(s.v);
  auto cache_at = [&](int64_t seq, int64_t pos, int64_t g) { return ((seq * c.capacity + pos) * c.hkv + g) * c.d; };
  for (int64_t r = 0; r < c.b(); ++r) {
    const int64_t seq = c.seq_ids[static_cast<size_t>(r)];
    const int64_t length = c.lengths[static_cast<size_t>(seq)];
    for (int64_t i = 0; i < c.n; ++i) {
      for (int64_t g = 0; g < c.hkv; ++g) {
        for (int64_t t = 0; t < c.d; ++t) {
          const int64_t from = ((r * c.n + i) * c.hkv + g) * c.d + t;
          e.keys[static_cast<size_t>(cache_at(seq, length + i, g) + t)] = k[static_cast<size_t>(from)];
          e.values[static_cast<size_t>(cache_at(seq, length + i, g) + t)] = v[static_cast<size_t>(from)];
        }
      }
    }
  }
  e.out.assign(q.size(), 0.0);
  const int64_t group = c.hq / c.hkv;
  for (int64_t r = 0; r < c.b(); ++r) {
    const int64_t seq = c.seq_ids[static_cast<size_t>(r)];
    const int64_t length = c.lengths[static_cast<size_t>(seq)];
    for (int64_t i = 0; i < c.n; ++i) {
      for (int64_t h = 0; h < c.hq; ++h) {
        const int64_t g = h / group;
        const int64_t q_at = ((r * c.n + i) * c.hq + h) * c.d;
        std::vector<double> scores;
        double max_score = -1e300;
        for (int64_t j = 0; j <= length + i; ++j) {
          double dot = 0;
          for (int64_t t = 0; t < c.d; ++t) {
            dot += double{q[static_cast<size_t>(q_at + t)]} * e.keys[static_cast<size_t>(cache_at(seq, j, g) + t)];
          }
          scores.push_back(dot / std::sqrt(static_cast<double>(c.d)));
          max_score = std::max(max_score, scores.back());
        }
        double sum = 0;
        for (double& x : scores) sum += (x = std::exp(x - max_score));
        for (int64_t j = 0; j <= length + i; ++j) {
          for (int64_t t = 0; t < c.d; ++t) {
            e.out[static_cast<size_t>(q_at + t)] +=
                scores[static_cast<size_t>(j)] / sum * e.values[static_cast<size_t>(cache_at(seq, j, g) + t)];
          }
        }
      }
    }
  }
  return e;
}

std::string case_text(const Case& c) {
  return "n " + std::to_string(c.n) + ", Hq " + std::to_string(c.hq) + ", Hkv " + std::to_string(c.hkv) + ", d " +
         std::to_string(c.d) + ", C " + std::to_string(c.capacity);
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // decode, GQA ratio 1, the keys crossing a 64-key block
      {1, 4, 4, 16, 80, {70}, {0}},
      // decode, ratio 4, three sequences of different lengths, two rows out of order
      {1, 8, 2, 32, 200, {5, 0, 130}, {2, 0}},
      // prefill, ratio 8, d 64, after a prompt already held
      {37, 8, 1, 64, 200, {50}, {0}},
      // prefill into empty and non-empty sequences, rows reversed, d 24 (16 + 8 columns)
      {20, 4, 1, 24, 100, {0, 70}, {1, 0}},
      // d 80 (64 + 16 columns), ratio 2, many positions per item
      {45, 2, 1, 80, 120, {3, 60, 0}, {1, 2, 0}},
      // a full cache after the call
      {16, 4, 2, 8, 64, {48}, {0}},
  };
  return all;
}

TEST(KVCacheAttention, MatchesThePlainLoopAndWritesOnlyTheNewPositions) {
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    SCOPED_TRACE(case_text(c));
    CallSetup s = make_setup(c, seed += 10);
    const Expected e = reference(c, s);
    ASSERT_TRUE(kv_cache_attention(s.args()).ok()) << kv_cache_attention(s.args());
    const std::vector<float> out = contents(s.out);
    double worst = 0;
    for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(out[i] - e.out[i]));
    EXPECT_LT(worst, 2e-6);
    // The keys and values: the new ones at [L, L + n) of each row's sequence, the rest as before.
    EXPECT_EQ(contents(s.cache.keys(0)), e.keys);
    EXPECT_EQ(contents(s.cache.values(0)), e.values);
    // The lengths are the caller's to advance.
    for (int64_t seq = 0; seq < c.batch(); ++seq) EXPECT_EQ(s.cache.length(seq), c.lengths[static_cast<size_t>(seq)]);
  }
}

TEST(KVCacheAttention, IsRegisteredUnderItsName) {
  absl::StatusOr<LibraryFunction> fn = resolve_library_function("kv_cache.attention");
  ASSERT_TRUE(fn.ok()) << fn.status();
  const Case& c = cases()[1];
  CallSetup s = make_setup(c, 5);
  const Expected e = reference(c, s);
  ASSERT_TRUE((*fn)(s.args()).ok());
  const std::vector<float> out = contents(s.out);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], e.out[i], 2e-6) << i;
}

// Prefill of a prompt then decode of one token, with advance between, equals one call
// over the whole: the same outputs for the last position and the same cache.
TEST(KVCacheAttention, TwoStepsWithAdvanceEqualOneCallOverBoth) {
  const int64_t hq = 8, hkv = 2, d = 16, first = 70, second = 1;
  const std::vector<int64_t> seqs = {1, 0};
  for (int64_t second_n : {second, int64_t{9}}) {
    SCOPED_TRACE(second_n);
    const Case whole{first + second_n, hq, hkv, d, 128, {3, 0}, seqs};
    CallSetup one = make_setup(whole, 100);
    ASSERT_TRUE(kv_cache_attention(one.args()).ok());

    // The same inputs cut at `first`: two calls on a second cache with the same contents.
    CallSetup two = make_setup(whole, 100);
    auto slice = [&](const Tensor& t, int64_t heads, int64_t from, int64_t count) {
      std::vector<float> all = contents(t), part;
      for (int64_t r = 0; r < whole.b(); ++r) {
        const auto begin = all.begin() + (r * whole.n + from) * heads * d;
        part.insert(part.end(), begin, begin + count * heads * d);
      }
      return make({whole.b(), count, heads, d}, part);
    };
    for (auto [from, count] : {std::pair<int64_t, int64_t>{0, first}, {first, second_n}}) {
      Tensor out = make({whole.b(), count, hq, d}, std::vector<float>(static_cast<size_t>(whole.b() * count * hq * d)));
      std::vector<Value> args = {slice(two.q, hq, from, count),  slice(two.k, hkv, from, count),
                                 slice(two.v, hkv, from, count), two.cache.keys(0),
                                 two.cache.values(0),            two.cache.lengths(),
                                 two.seq_ids,                    out};
      ASSERT_TRUE(kv_cache_attention(args).ok());
      ASSERT_TRUE(two.cache.advance(seqs, count).ok());
      const std::vector<float> got = contents(out);
      const std::vector<float> want = contents(slice(one.out, hq, from, count));
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-6) << i;
    }
    EXPECT_EQ(contents(two.cache.keys(0)), contents(one.cache.keys(0)));
    EXPECT_EQ(contents(two.cache.values(0)), contents(one.cache.values(0)));
    EXPECT_EQ(two.cache.length(0), 3 + first + second_n);
    EXPECT_EQ(two.cache.length(1), first + second_n);
  }
}

class KVCacheThreads : public ::testing::Test {
 protected:
  void TearDown() override { set_kernel_thread_budget(0); }
};

TEST_F(KVCacheThreads, ManyThreadsGiveTheOneThreadResult) {
  const Case c{33, 8, 2, 32, 160, {100, 7, 40}, {2, 0, 1}};
  std::vector<float> results[2];
  for (int32_t threads : {1, 4}) {
    set_kernel_thread_budget(threads);
    CallSetup s = make_setup(c, 7);
    ASSERT_TRUE(kv_cache_attention(s.args()).ok());
    results[threads == 1 ? 0 : 1] = contents(s.out);
  }
  EXPECT_EQ(results[0], results[1]);
}

// ---------------------------------------------------------------------------
// Validation: every error names the argument (or the sequence) and the numbers.

std::string error_of(const std::vector<Value>& args) {
  absl::Status s = kv_cache_attention(args);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST(KVCacheAttention, RejectsBadArgumentsBeforeWritingAnything) {
  const Case c{2, 4, 2, 8, 16, {3, 5}, {1, 0}};
  CallSetup s = make_setup(c, 3);
  auto with = [&](size_t index, Value value) {
    std::vector<Value> args = s.args();
    args[index] = std::move(value);
    return args;
  };
  auto zeros = [](std::vector<int64_t> shape) {
    int64_t count = 1;
    for (int64_t x : shape) count *= x;
    return make(std::move(shape), std::vector<float>(static_cast<size_t>(count)));
  };
  auto ids = [](std::vector<int64_t> values) {
    return *Tensor::from_vector({static_cast<int64_t>(values.size())}, values);
  };

  std::vector<Value> short_args = s.args();
  short_args.pop_back();
  EXPECT_THAT(error_of(short_args), HasSubstr("expected 8 arguments"));
  EXPECT_THAT(error_of(with(1, Value(int64_t{3}))), HasSubstr("argument 1 (k) must be a tensor, got int"));
  EXPECT_THAT(error_of(with(5, zeros({2}))), HasSubstr("argument 5 (lengths) must be int64, got float32"));
  EXPECT_THAT(error_of(with(0, zeros({2, 2, 4}))), HasSubstr("argument 0 (q) must have rank 4, got 3"));
  EXPECT_THAT(error_of(with(2, zeros({2, 3, 2, 8}))),
              HasSubstr("argument 2 (v) must have shape (2, 2, 2, 8) (b, n, Hkv, d), got (2, 3, 2, 8)"));
  EXPECT_THAT(error_of(with(1, zeros({2, 2, 2, 4}))), HasSubstr("argument 1 (k) must have shape (2, 2, 2, 8)"));
  EXPECT_THAT(error_of(with(4, zeros({2, 16, 2, 4}))),
              HasSubstr("argument 4 (cache_values) must have shape (2, 16, 2, 8) (B, C, Hkv, d)"));
  EXPECT_THAT(error_of(with(7, zeros({2, 2, 4, 4}))), HasSubstr("argument 7 (out) must have shape (2, 2, 4, 8)"));
  EXPECT_THAT(error_of(with(6, ids({0, 1, 0}))), HasSubstr("argument 6 (seq_ids) must have shape (2) (b)"));
  EXPECT_THAT(error_of(with(5, ids({0, 0, 0}))), HasSubstr("argument 5 (lengths) must have shape (2) (B)"));
  {
    // Hq not a multiple of Hkv: q, out with 3 heads.
    std::vector<Value> args = with(0, zeros({2, 2, 3, 8}));
    args[7] = zeros({2, 2, 3, 8});
    EXPECT_THAT(error_of(args), HasSubstr("Hq = 3 (q) must be a multiple of the KV heads Hkv = 2"));
  }
  {
    // More rows than sequences.
    std::vector<Value> args = {zeros({3, 2, 4, 8}), zeros({3, 2, 2, 8}), zeros({3, 2, 2, 8}),
                               s.cache.keys(0),    s.cache.values(0),  s.cache.lengths(),
                               ids({0, 1, 0}),     zeros({3, 2, 4, 8})};
    EXPECT_THAT(error_of(args), HasSubstr("3 rows (q) but the cache holds at most B = 2"));
  }
  {
    // q seen through a (2, 2, 4, 16) buffer: every row of 8 floats 16 apart.
    Tensor wide = zeros({2, 2, 4, 16});
    Tensor odd = Tensor::borrow(wide.data(), {2, 2, 4, 8}, DataType::float32(), {128, 64, 16, 1});
    EXPECT_THAT(error_of(with(0, odd)), HasSubstr("argument 0 (q) must be contiguous"));
  }
  {
    // out over q's storage.
    Tensor alias = Tensor::borrow(s.q.data(), {2, 2, 4, 8}, DataType::float32());
    EXPECT_THAT(error_of(with(7, alias)), HasSubstr("argument 7 (out) overlaps argument 0 (q)"));
  }
  EXPECT_THAT(error_of(with(6, ids({2, 0}))), HasSubstr("sequence id 2 (entry 0) is out of range [0, 2)"));
  EXPECT_THAT(error_of(with(6, ids({-1, 0}))), HasSubstr("sequence id -1 (entry 0) is out of range"));
  EXPECT_THAT(error_of(with(6, ids({1, 1}))), HasSubstr("sequence id 1 is repeated (entries 0 and 1)"));
  {
    // Room: sequence 0 holds 3 + 12 = 15 of 16; 2 more do not fit.
    const int64_t seq0[] = {0};
    ASSERT_TRUE(s.cache.advance(seq0, 12).ok());
    EXPECT_THAT(error_of(s.args()),
                HasSubstr("seq_ids: KV cache capacity exceeded: sequence 0 holds 15 tokens; 2 more would make 17, "
                          "over the capacity 16"));
  }
  // Nothing was written by any of the failed calls.
  EXPECT_EQ(contents(s.cache.keys(0)), s.keys_before);
  EXPECT_EQ(contents(s.cache.values(0)), s.values_before);
  for (float x : contents(s.out)) ASSERT_EQ(x, -7.0f);
}

// ---------------------------------------------------------------------------
// The cache object.

TEST(KVCache, CreatesZeroedLayersOfTheGivenShape) {
  absl::StatusOr<KVCache> cache = KVCache::create(3, 2, 40, 4, 8);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->layers(), 3);
  EXPECT_EQ(cache->max_batch(), 2);
  EXPECT_EQ(cache->capacity(), 40);
  EXPECT_EQ(cache->kv_heads(), 4);
  EXPECT_EQ(cache->head_dim(), 8);
  EXPECT_EQ(cache->bytes(), 3 * 2 * 2 * 40 * 4 * 8 * 4);
  EXPECT_EQ(cache->lengths().shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(cache->lengths().dtype(), DataType::int64());
  std::vector<const float*> starts;
  for (int64_t l = 0; l < 3; ++l) {
    for (const Tensor* t : {&cache->keys(l), &cache->values(l)}) {
      EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 40, 4, 8}));
      EXPECT_EQ(t->dtype(), DataType::float32());
      EXPECT_TRUE(t->is_contiguous());
      for (float x : contents(*t)) ASSERT_EQ(x, 0.0f);
      starts.push_back(t->data_as_or_die<float>());
    }
  }
  // Six distinct tensors, none overlapping another.
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) EXPECT_GE(starts[i] - starts[i - 1], 2 * 40 * 4 * 8);
  // A copy is a handle on the same cache.
  KVCache copy = *cache;
  const int64_t seq1[] = {1};
  ASSERT_TRUE(copy.advance(seq1, 5).ok());
  EXPECT_EQ(cache->length(1), 5);
  EXPECT_TRUE(copy.keys(2).same_storage(cache->keys(2)));
}

TEST(KVCache, CreateRejectsBadSizes) {
  auto message = [](absl::StatusOr<KVCache> c) {
    EXPECT_FALSE(c.ok());
    return std::string(c.status().message());
  };
  EXPECT_THAT(message(KVCache::create(0, 1, 1, 1, 1)), HasSubstr("layers must be at least 1, got 0"));
  EXPECT_THAT(message(KVCache::create(1, -2, 1, 1, 1)), HasSubstr("max_batch must be at least 1, got -2"));
  EXPECT_THAT(message(KVCache::create(1, 1, 0, 1, 1)), HasSubstr("capacity must be at least 1, got 0"));
  EXPECT_THAT(message(KVCache::create(1, 1, 1, 0, 1)), HasSubstr("kv_heads must be at least 1"));
  EXPECT_THAT(message(KVCache::create(1, 1, 1, 1, 0)), HasSubstr("head_dim must be at least 1"));
  EXPECT_THAT(message(KVCache::create(22, 1 << 20, 1 << 20, 1 << 20, 64)), HasSubstr("overflows int64"));
  EXPECT_THAT(message(KVCache::create(22, 64, 1 << 20, 4, 64)), HasSubstr("over the limit of 68719476736 bytes"));
}

TEST(KVCache, CheckRoomAdvanceAndReset) {
  absl::StatusOr<KVCache> made = KVCache::create(1, 3, 2048, 1, 4);
  ASSERT_TRUE(made.ok());
  KVCache cache = *made;
  const int64_t two[] = {2};
  const int64_t both[] = {2, 0};
  ASSERT_TRUE(cache.advance(two, 2040).ok());
  EXPECT_TRUE(cache.check_room(two, 8).ok());
  absl::Status full = cache.check_room(both, 16);
  EXPECT_EQ(full.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(full.message(), HasSubstr("KV cache capacity exceeded: sequence 2 holds 2040 tokens; 16 more would "
                                        "make 2056, over the capacity 2048"));
  // A failed advance changes nothing, not even the sequences before the offender.
  const int64_t zero_then_two[] = {0, 2};
  EXPECT_FALSE(cache.advance(zero_then_two, 16).ok());
  EXPECT_EQ(cache.length(0), 0);
  EXPECT_EQ(cache.length(2), 2040);
  const int64_t repeated[] = {1, 1};
  EXPECT_THAT(cache.check_room(repeated, 1).message(), HasSubstr("sequence id 1 is repeated"));
  const int64_t outside[] = {3};
  EXPECT_THAT(cache.check_room(outside, 1).message(), HasSubstr("sequence id 3 (entry 0) is out of range [0, 3)"));
  EXPECT_THAT(cache.check_room(two, -1).message(), HasSubstr("negative token count -1"));
  ASSERT_TRUE(cache.advance(both, 8).ok());
  EXPECT_EQ(cache.length(2), 2048);
  EXPECT_EQ(cache.length(0), 8);
  EXPECT_EQ(cache.lengths().data_as_or_die<int64_t>()[2], 2048);
  cache.reset(2);
  EXPECT_EQ(cache.length(2), 0);
  EXPECT_EQ(cache.length(0), 8);
  cache.reset_all();
  EXPECT_EQ(cache.length(0), 0);
}

}  // namespace
}  // namespace relax::runtime
