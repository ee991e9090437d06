// The checked accessors of Value and Tensor: a wrong kind or element type is a
// Status naming both, never an abort, and data_as compares the element type,
// not only its size. The aborting *_or_die forms are tested as death tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;

std::string status_message(const absl::Status& s) { return std::string(s.message()); }

Tensor float_tensor() {
  absl::StatusOr<Tensor> t = Tensor::empty({2, 3}, DataType::float32());
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

TEST(AccessorStatusTest, ValueAccessorsOfTheRightKind) {
  const Tensor t = float_tensor();
  EXPECT_TRUE(Value(t).tensor()->same_storage(t));
  EXPECT_EQ(*Value::shape({2, 3}).shape_dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(*Value(int64_t{7}).int_value(), 7);
  EXPECT_EQ(*Value(0.5).float_value(), 0.5);
  EXPECT_EQ(*Value(std::string("s")).string_value(), "s");
  absl::StatusOr<std::vector<Value>> fields = Value::tuple({Value(1), Value(2.0)}).fields();
  ASSERT_TRUE(fields.ok());
  ASSERT_EQ(fields->size(), 2u);
  EXPECT_EQ(*(*fields)[0].int_value(), 1);
  EXPECT_EQ(Value(t).tensor_or_die().dtype(), DataType::float32());
  EXPECT_EQ(Value(int64_t{7}).int_value_or_die(), 7);
}

TEST(AccessorStatusTest, ValueAccessorsOfTheWrongKindAreInvalidArgument) {
  absl::StatusOr<Tensor> t = Value(int64_t{7}).tensor();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status_message(t.status()), "Value::tensor: the value is a int (7), not a tensor");

  EXPECT_EQ(status_message(Value(float_tensor()).int_value().status()),
            "Value::int_value: the value is a tensor (Tensor[(2, 3), float32]), not a int");
  EXPECT_EQ(status_message(Value().shape_dims().status()), "Value::shape_dims: the value is a none (None), not a shape");
  EXPECT_EQ(Value(int64_t{1}).float_value().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Value(0.5).string_value().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status_message(Value::shape({4}).fields().status()), HasSubstr("is a shape (Shape(4)), not a tuple"));
}

TEST(AccessorStatusTest, ValueOrDieAccessorsAbortOnTheWrongKind) {
  EXPECT_DEATH((void)Value(int64_t{7}).tensor_or_die(), "Value::tensor_or_die\\(\\) on a int");
  EXPECT_DEATH((void)Value(0.5).fields_or_die(), "Value::fields_or_die\\(\\) on a float");
}

TEST(AccessorStatusTest, DataAsChecksTheElementTypeNotOnlyItsSize) {
  const Tensor t = float_tensor();
  absl::StatusOr<float*> f = t.data_as<float>();
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*f, t.data());
  EXPECT_TRUE(t.data_as<const float>().ok());

  // int32 has float32's size: accepted before, refused now.
  absl::StatusOr<int32_t*> i = t.data_as<int32_t>();
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status_message(i.status()),
            "data_as<int32> of Tensor[(2, 3), float32]: the elements are float32, not int32");
  EXPECT_FALSE(t.data_as<uint32_t>().ok());
  EXPECT_FALSE(t.data_as<double>().ok());

  absl::StatusOr<Tensor> b = Tensor::empty({4}, DataType::boolean());
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->data_as<bool>().ok());
  EXPECT_FALSE(b->data_as<uint8_t>().ok());
  absl::StatusOr<Tensor> i64 = Tensor::empty({4}, DataType::int64());
  ASSERT_TRUE(i64.ok());
  EXPECT_TRUE(i64->data_as<int64_t>().ok());
  EXPECT_FALSE(i64->data_as<uint64_t>().ok());
  EXPECT_FALSE(i64->data_as<double>().ok());

  absl::StatusOr<float*> undefined = Tensor().data_as<float>();
  EXPECT_EQ(undefined.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status_message(undefined.status()), "data_as<float32> of an undefined tensor");
}

TEST(AccessorStatusTest, DataAsOrDieAbortsOnAnotherElementType) {
  const Tensor t = float_tensor();
  EXPECT_EQ(t.data_as_or_die<float>(), t.data());
  EXPECT_DEATH((void)t.data_as_or_die<int32_t>(), "data_as_or_die<int32> of Tensor\\[\\(2, 3\\), float32\\]");
}

TEST(AccessorStatusTest, DataTypeOfTheCppTypes) {
  static_assert(data_type_of<float>() == DataType::float32());
  static_assert(data_type_of<double>() == DataType::float64());
  static_assert(data_type_of<int32_t>() == DataType::int32());
  static_assert(data_type_of<const int64_t>() == DataType::int64());
  static_assert(data_type_of<bool>() == DataType::boolean());
  static_assert(data_type_of<uint8_t>() == DataType{DataType::Code::kUInt, 8, 1});
  static_assert(data_type_of<int8_t>() == DataType{DataType::Code::kInt, 8, 1});
  SUCCEED();
}

}  // namespace
}  // namespace relax::runtime
