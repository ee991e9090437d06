// Group-wise int4 weights at run time (relax/runtime/quantize.h). The reference is a plain loop
// written from op::quantize's documented semantics (relax/ir/op/quantize.h, src/ir/op/quantize.cc:
// float32 absmax / 7, ratio x / scale in float32, nearbyint ties to even, clamp to [-8, 7]);
// tests/ops/quantize_int4_op_test.cc compares the same function with op::quantize built and run.
#include "relax/runtime/quantize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;

struct Reference {
  std::vector<uint8_t> packed;
  std::vector<float> scales;
};

// Element by element, as the op's semantics read.
Reference reference_quantize(const std::vector<float>& w, int64_t k_rows, int64_t n, int64_t group) {
  Reference r{std::vector<uint8_t>(static_cast<size_t>(k_rows / 2 * n), 0),
              std::vector<float>(static_cast<size_t>(k_rows / group * n), 0.0f)};
  for (int64_t k = 0; k < k_rows; ++k) {
    for (int64_t j = 0; j < n; ++j) {
      float& s = r.scales[static_cast<size_t>(k / group * n + j)];
      s = std::max(s, std::fabs(w[static_cast<size_t>(k * n + j)]));
    }
  }
  for (float& s : r.scales) s = s / 7.0f;
  for (int64_t k = 0; k < k_rows; ++k) {
    for (int64_t j = 0; j < n; ++j) {
      const float scale = r.scales[static_cast<size_t>(k / group * n + j)];
      const float ratio = scale == 0.0f ? 0.0f : w[static_cast<size_t>(k * n + j)] / scale;
      const auto q = static_cast<int>(std::clamp(std::nearbyint(ratio), -8.0f, 7.0f));
      r.packed[static_cast<size_t>(k / 2 * n + j)] |= static_cast<uint8_t>((q + 8) << (k % 2 == 0 ? 0 : 4));
    }
  }
  return r;
}

// Random weights with a few zero groups, exact ties (x / scale = m + 0.5) and large outliers.
std::vector<float> weights(int64_t k_rows, int64_t n, int64_t group, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(static_cast<size_t>(k_rows * n));
  for (float& x : w) x = normal(rng);
  for (int64_t j = 0; j < n; j += 3) {  // column j of group 0 (when there are two or more) is zero
    if (k_rows / group >= 2) {
      for (int64_t k = 0; k < group; ++k) w[static_cast<size_t>(k * n + j)] = 0.0f;
    }
  }
  if (n >= 2 && group >= 8) {  // column 1, last group: absmax 7, so scale 1 and halves are ties
    const int64_t k0 = k_rows - group;
    const float ties[] = {7.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -3.5f, 6.5f};
    for (int i = 0; i < 8; ++i) w[static_cast<size_t>((k0 + i) * n + 1)] = ties[i];
    for (int64_t k = k0 + 8; k < k_rows; ++k) w[static_cast<size_t>(k * n + 1)] = 1.0f;
  }
  return w;
}

Tensor tensor_of(const std::vector<float>& w, int64_t k_rows, int64_t n) {
  absl::StatusOr<Tensor> t = Tensor::from_vector({k_rows, n}, w);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

TEST(QuantizeInt4Test, MatchesTheOpsSemanticsBitForBitAtSeveralSizes) {
  struct Size {
    int64_t k, n, group;
  };
  for (const Size& s : {Size{2, 1, 2}, Size{8, 3, 4}, Size{16, 5, 8}, Size{64, 17, 32}, Size{96, 2, 32},
                        Size{128, 64, 64}, Size{256, 33, 128}}) {
    SCOPED_TRACE(::testing::Message() << "K=" << s.k << " N=" << s.n << " group=" << s.group);
    const std::vector<float> w = weights(s.k, s.n, s.group, static_cast<unsigned>(s.k * 131 + s.n));
    absl::StatusOr<std::pair<Tensor, Tensor>> got = quantize_int4(tensor_of(w, s.k, s.n), s.group);
    ASSERT_TRUE(got.ok()) << got.status();
    const Reference want = reference_quantize(w, s.k, s.n, s.group);
    ASSERT_EQ(got->first.shape(), (std::vector<int64_t>{s.k / 2, s.n}));
    ASSERT_EQ(got->first.dtype(), (DataType{DataType::Code::kUInt, 8, 1}));
    ASSERT_EQ(got->second.shape(), (std::vector<int64_t>{s.k / s.group, s.n}));
    const auto* packed = static_cast<const uint8_t*>(got->first.data());
    const float* scales = got->second.data_as_or_die<float>();
    for (size_t i = 0; i < want.packed.size(); ++i) ASSERT_EQ(packed[i], want.packed[i]) << "byte " << i;
    for (size_t i = 0; i < want.scales.size(); ++i) ASSERT_EQ(scales[i], want.scales[i]) << "scale " << i;
  }
}

TEST(QuantizeInt4Test, TiesRoundToEvenAndZeroGroupsHaveZeroScales) {
  // One column, one group of 8: absmax 7 makes the scale exactly 1.
  const std::vector<float> w = {7.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -3.5f, 6.5f, 0, 0, 0, 0, 0, 0, 0, 0};
  absl::StatusOr<std::pair<Tensor, Tensor>> q = quantize_int4(tensor_of(w, 16, 1), 8);
  ASSERT_TRUE(q.ok()) << q.status();
  const float* scales = q->second.data_as_or_die<float>();
  EXPECT_EQ(scales[0], 1.0f);
  EXPECT_EQ(scales[1], 0.0f);
  const auto* b = static_cast<const uint8_t*>(q->first.data());
  // q = 7, 0, 2, 2, 0, -2, -4, 6 then zeros; nibble = q + 8, the even row low.
  const uint8_t want[] = {0x8f, 0xaa, 0x68, 0xe4, 0x88, 0x88, 0x88, 0x88};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], want[i]) << "byte " << i;
}

TEST(QuantizeInt4Test, DequantizedWeightsAreWithinHalfAScale) {
  const int64_t k = 128, n = 40, group = 32;
  const std::vector<float> w = weights(k, n, group, 7);
  absl::StatusOr<std::pair<Tensor, Tensor>> q = quantize_int4(tensor_of(w, k, n), group);
  ASSERT_TRUE(q.ok()) << q.status();
  absl::StatusOr<Tensor> back = dequantize_int4(q->first, q->second, group);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->shape(), (std::vector<int64_t>{k, n}));
  const float* y = back->data_as_or_die<float>();
  const float* s = q->second.data_as_or_die<float>();
  for (int64_t r = 0; r < k; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      const float scale = s[r / group * n + j];
      const float x = w[static_cast<size_t>(r * n + j)];
      // The bound, plus rounding of the float32 ratio and product.
      EXPECT_LE(std::fabs(x - y[r * n + j]), scale / 2 * (1 + 1e-5f)) << "[" << r << ", " << j << "]";
      if (scale == 0.0f) {
        EXPECT_EQ(y[r * n + j], 0.0f);
      }
    }
  }
}

TEST(QuantizeInt4Test, BadInputsNameExpectedAndActual) {
  const Tensor w = tensor_of(std::vector<float>(12 * 4, 1.0f), 12, 4);
  EXPECT_THAT(quantize_int4(w, 3).status().message(), HasSubstr("group_size must be even and >= 2"));
  EXPECT_THAT(quantize_int4(w, 8).status().message(), HasSubstr("has K = 12 rows, not a multiple of group_size 8"));
  absl::StatusOr<Tensor> ints = Tensor::from_vector({2, 2}, std::vector<int32_t>{1, 2, 3, 4});
  EXPECT_THAT(quantize_int4(*ints, 2).status().message(),
              HasSubstr("expected a contiguous host float32 tensor of shape (K, N), got Tensor[(2, 2), int32]"));
  absl::StatusOr<Tensor> flat = Tensor::from_vector({4}, std::vector<float>{1, 2, 3, 4});
  EXPECT_THAT(quantize_int4(*flat, 2).status().message(), HasSubstr("got Tensor[(4,), float32]"));
  std::vector<float> bad(12 * 4, 1.0f);
  bad[5 * 4 + 2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(quantize_int4(tensor_of(bad, 12, 4), 4).status().message(),
              HasSubstr("weight [5, 2] is nan, expected a finite value"));
  bad[5 * 4 + 2] = -std::numeric_limits<float>::infinity();
  EXPECT_THAT(quantize_int4(tensor_of(bad, 12, 4), 4).status().message(), HasSubstr("weight [5, 2] is -inf"));

  absl::StatusOr<std::pair<Tensor, Tensor>> q = quantize_int4(w, 4);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_THAT(dequantize_int4(q->first, q->second, 2).status().message(),
              HasSubstr("packed (6, 4) holds K = 12 rows: with group_size 2 scales must be (6, 4), got (3, 4)"));
  EXPECT_THAT(dequantize_int4(q->second, q->second, 4).status().message(),
              HasSubstr("dequantize_int4: packed: expected a contiguous host uint8 tensor"));
}

}  // namespace
}  // namespace relax::runtime
