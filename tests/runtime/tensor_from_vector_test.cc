// Tensor::from_vector (relax/runtime/tensor.h): a host tensor from data in one
// call, the dtype implied by or checked against the values' C++ type, float16
// and bfloat16 rounded from float values to nearest even. The 16-bit results
// are compared with bit patterns worked out by hand and with a rounding by
// integer arithmetic on float32 bits, not with float_format.h.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "relax/runtime/tensor.h"

namespace relax::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <typename T>
std::vector<T> elements(const Tensor& t) {
  const T* p = t.data_as_or_die<T>();
  return std::vector<T>(p, p + t.numel());
}

std::vector<uint16_t> bits16(const Tensor& t) {
  const auto* p = static_cast<const uint16_t*>(t.data());
  return std::vector<uint16_t>(p, p + t.numel());
}

template <typename T>
void expect_round_trip(std::vector<T> values, DataType dtype) {
  absl::StatusOr<Tensor> t = Tensor::from_vector({static_cast<int64_t>(values.size())}, values);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), dtype);
  EXPECT_TRUE(t->owns_storage());
  EXPECT_EQ(elements<T>(*t), values);
}

TEST(TensorFromVector, FloatValuesMakeAFloat32Tensor) {
  absl::StatusOr<Tensor> t = Tensor::from_vector({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6.5f});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DataType::float32());
  EXPECT_THAT(t->shape(), ElementsAre(2, 3));
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % kTensorAlignment, 0u);
  EXPECT_THAT(elements<float>(*t), ElementsAre(1, 2, 3, 4, 5, 6.5f));
}

TEST(TensorFromVector, EveryArithmeticTypeGivesItsDtype) {
  expect_round_trip<double>({0.25, -1e300}, DataType::float64());
  expect_round_trip<int8_t>({-128, 127}, DataType{DataType::Code::kInt, 8, 1});
  expect_round_trip<int16_t>({-300, 300}, DataType{DataType::Code::kInt, 16, 1});
  expect_round_trip<int32_t>({-70000, 70000}, DataType::int32());
  expect_round_trip<int64_t>({int64_t{1} << 40, -1}, DataType::int64());
  expect_round_trip<uint8_t>({0, 255}, DataType{DataType::Code::kUInt, 8, 1});
  expect_round_trip<uint16_t>({65535, 1}, DataType{DataType::Code::kUInt, 16, 1});
  expect_round_trip<uint32_t>({4000000000u, 2}, DataType{DataType::Code::kUInt, 32, 1});
  expect_round_trip<uint64_t>({std::numeric_limits<uint64_t>::max(), 3}, DataType{DataType::Code::kUInt, 64, 1});
}

TEST(TensorFromVector, BracedListsDeduceTheType) {
  absl::StatusOr<Tensor> ints = Tensor::from_vector({3}, {1, 2, 3});
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(ints->dtype(), DataType::int32());
  EXPECT_THAT(elements<int32_t>(*ints), ElementsAre(1, 2, 3));
  absl::StatusOr<Tensor> floats = Tensor::from_vector({2, 1}, {1.5f, -2.5f});
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_EQ(floats->dtype(), DataType::float32());
  EXPECT_THAT(elements<float>(*floats), ElementsAre(1.5f, -2.5f));
}

TEST(TensorFromVector, BoolsFromAVectorOfBoolAndFromAList) {
  absl::StatusOr<Tensor> packed = Tensor::from_vector({2, 2}, std::vector<bool>{true, false, false, true});
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_EQ(packed->dtype(), DataType::boolean());
  EXPECT_THAT(elements<bool>(*packed), ElementsAre(true, false, false, true));
  absl::StatusOr<Tensor> listed = Tensor::from_vector({3}, {false, true, true});
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_THAT(elements<bool>(*listed), ElementsAre(false, true, true));
}

TEST(TensorFromVector, ScalarsAndEmptyTensors) {
  absl::StatusOr<Tensor> scalar = Tensor::from_vector({}, {42.0f});
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->ndim(), 0);
  EXPECT_THAT(elements<float>(*scalar), ElementsAre(42.0f));
  absl::StatusOr<Tensor> none = Tensor::from_vector({0, 3}, std::vector<int64_t>{});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->numel(), 0);
  EXPECT_EQ(none->dtype(), DataType::int64());
}

TEST(TensorFromVector, AnExplicitDtypeEqualToTheValuesTypeIsAccepted) {
  absl::StatusOr<Tensor> t = Tensor::from_vector({2}, std::vector<int64_t>{5, 6}, DataType::int64());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(elements<int64_t>(*t), ElementsAre(5, 6));
}

TEST(TensorFromVector, Float16RoundsToNearestEven) {
  const float tie_down = 1.0f + std::ldexp(1.0f, -11);     // between 1 and 1 + 2^-10: even is 1
  const float tie_up = 1.0f + 3 * std::ldexp(1.0f, -11);   // between 1 + 2^-10 and 1 + 2^-9: even above
  const float above_tie = 1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20);
  absl::StatusOr<Tensor> t = Tensor::from_vector(
      {9}, std::vector<float>{1.0f, -2.0f, 0.1f, tie_down, tie_up, above_tie, 65504.0f, 65520.0f,
                              std::ldexp(1.0f, -24)},
      DataType::float16());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DataType::float16());
  EXPECT_EQ(t->element_bytes(), 2u);
  // 0.1 = 0x2e66 (1.6 * 2^-4: mantissa 0.6 * 1024 = 614.4 -> 614 = 0x266);
  // 65504 is the largest finite value, 65520 the tie with 65536 (even: overflows to inf);
  // 2^-24 is the smallest subnormal.
  EXPECT_THAT(bits16(*t), ElementsAre(0x3c00, 0xc000, 0x2e66, 0x3c00, 0x3c02, 0x3c01, 0x7bff,
                                      0x7c00, 0x0001));
}

TEST(TensorFromVector, BFloat16RoundsToNearestEven) {
  const float tie_down = 1.0f + std::ldexp(1.0f, -8);
  const float tie_up = 1.0f + 3 * std::ldexp(1.0f, -8);
  absl::StatusOr<Tensor> t = Tensor::from_vector({2, 2}, {1.0f, tie_down, tie_up, -0.5f},
                                                 DataType::bfloat16());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DataType::bfloat16());
  EXPECT_THAT(bits16(*t), ElementsAre(0x3f80, 0x3f80, 0x3f82, 0xbf00));
}

TEST(TensorFromVector, BFloat16AgreesWithIntegerRoundingOfFloat32Bits) {
  // The textbook rounding: add 0x7fff plus the lowest kept bit, keep the top half.
  std::mt19937 rng(11);
  std::vector<float> values;
  std::vector<uint16_t> expected;
  while (values.size() < 4096) {
    const float v = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    const uint32_t b = std::bit_cast<uint32_t>(v);
    if (std::isnan(v)) continue;
    values.push_back(v);
    expected.push_back(static_cast<uint16_t>((b + 0x7fff + ((b >> 16) & 1)) >> 16));
  }
  absl::StatusOr<Tensor> t =
      Tensor::from_vector({static_cast<int64_t>(values.size())}, values, DataType::bfloat16());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(bits16(*t), ElementsAreArray(expected));
}

TEST(TensorFromVector, DoubleValuesMayFillA16BitFloatTensor) {
  absl::StatusOr<Tensor> t = Tensor::from_vector({2}, {0.1, 1.0}, DataType::float16());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(bits16(*t), ElementsAre(0x2e66, 0x3c00));
}

TEST(TensorFromVector, AWrongCountNamesExpectedAndActual) {
  absl::StatusOr<Tensor> t = Tensor::from_vector({2, 3}, std::vector<float>{1, 2, 3, 4, 5});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("Tensor::from_vector: shape (2, 3) needs 6 values, got 5"));
  absl::StatusOr<Tensor> scalar = Tensor::from_vector({}, {1, 2});
  ASSERT_FALSE(scalar.ok());
  EXPECT_THAT(scalar.status().message(), HasSubstr("shape () needs 1 values, got 2"));
}

TEST(TensorFromVector, AValueTypeOtherThanTheDtypesIsAnError) {
  struct Case {
    absl::StatusOr<Tensor> result;
    const char* message;
  };
  const std::vector<Case> cases = {
      {Tensor::from_vector({2}, {1.0f, 2.0f}, DataType::int32()),
       "values of type float32 for a tensor of dtype int32"},
      {Tensor::from_vector({2}, {1.0, 2.0}, DataType::float32()),
       "values of type float64 for a tensor of dtype float32"},
      {Tensor::from_vector({2}, {1, 2}, DataType::float16()),
       "values of type int32 for a tensor of dtype float16"},
      {Tensor::from_vector({2}, {1, 2}, DataType::int64()), "values of type int32 for a tensor of dtype int64"},
      {Tensor::from_vector({1}, {true}, DataType::int64()), "values of type bool for a tensor of dtype int64"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.result.ok()) << c.message;
    EXPECT_EQ(c.result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(c.result.status().message(), HasSubstr(c.message));
  }
}

TEST(TensorFromVector, NegativeAndOverflowingShapesAreErrors) {
  absl::StatusOr<Tensor> negative = Tensor::from_vector({2, -1}, std::vector<float>{});
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(), HasSubstr("dim 1 of shape (2, -1) is negative"));
  const int64_t big = int64_t{1} << 40;
  absl::StatusOr<Tensor> overflow = Tensor::from_vector({big, big}, std::vector<float>{});
  ASSERT_FALSE(overflow.ok());
  EXPECT_THAT(overflow.status().message(), HasSubstr("overflows int64"));
}

}  // namespace
}  // namespace relax::runtime
