// The shared dtype rules: scalar dtype classes, integer ranges against the C++
// types of the same width, and dtype names (parse_dtype is dtype_name's inverse).
#include "relax/support/dtype_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace relax {
namespace {

using Code = DataType::Code;

DataType dt(Code code, int bits, int lanes = 1) {
  return DataType{code, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
}

// The C++ range of T, limited to int64 (as int_range limits uint64).
template <typename T>
IntRange cpp_range() {
  const auto hi = std::numeric_limits<T>::max();
  return {static_cast<int64_t>(std::numeric_limits<T>::min()),
          static_cast<uint64_t>(hi) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
              ? std::numeric_limits<int64_t>::max()
              : static_cast<int64_t>(hi)};
}

TEST(DtypeUtilTest, ScalarDtypesAreTheOnesTheIrSupports) {
  const std::vector<DataType> ints = {dt(Code::kInt, 8),  dt(Code::kInt, 16),  dt(Code::kInt, 32),
                                      dt(Code::kInt, 64), dt(Code::kUInt, 8),  dt(Code::kUInt, 16),
                                      dt(Code::kUInt, 32), dt(Code::kUInt, 64)};
  const std::vector<DataType> floats = {DataType::float16(), DataType::float32(), DataType::float64(),
                                        DataType::bfloat16()};
  for (DataType t : ints) {
    EXPECT_TRUE(is_scalar_int(t) && is_scalar_numeric(t) && is_scalar_dtype(t)) << t;
    EXPECT_FALSE(is_scalar_float(t) || is_scalar_bool(t)) << t;
  }
  for (DataType t : floats) {
    EXPECT_TRUE(is_scalar_float(t) && is_scalar_numeric(t) && is_scalar_dtype(t)) << t;
    EXPECT_FALSE(is_scalar_int(t) || is_scalar_bool(t)) << t;
  }
  EXPECT_TRUE(is_scalar_bool(DataType::boolean()) && is_scalar_dtype(DataType::boolean()));
  EXPECT_FALSE(is_scalar_numeric(DataType::boolean()));
  // Vectors, handles, other widths -- a bool of other than 8 bits included.
  for (DataType t : {dt(Code::kInt, 32, 4), dt(Code::kFloat, 32, 4), dt(Code::kBool, 8, 4),
                     dt(Code::kHandle, 64), dt(Code::kInt, 7), dt(Code::kUInt, 1),
                     dt(Code::kFloat, 33), dt(Code::kFloat, 8), dt(Code::kBFloat, 32),
                     dt(Code::kBool, 16), dt(Code::kBool, 1)}) {
    EXPECT_FALSE(is_scalar_dtype(t)) << dtype_name(t);
  }
}

TEST(DtypeUtilTest, IntRangesAreThoseOfTheCppTypes) {
  const std::vector<std::pair<DataType, IntRange>> cases = {
      {dt(Code::kInt, 8), cpp_range<int8_t>()},     {dt(Code::kInt, 16), cpp_range<int16_t>()},
      {dt(Code::kInt, 32), cpp_range<int32_t>()},   {dt(Code::kInt, 64), cpp_range<int64_t>()},
      {dt(Code::kUInt, 8), cpp_range<uint8_t>()},   {dt(Code::kUInt, 16), cpp_range<uint16_t>()},
      {dt(Code::kUInt, 32), cpp_range<uint32_t>()}, {dt(Code::kUInt, 64), cpp_range<uint64_t>()},
      {DataType::boolean(), {0, 1}},
  };
  for (const auto& [t, r] : cases) {
    EXPECT_EQ(int_range(t).lo, r.lo) << t;
    EXPECT_EQ(int_range(t).hi, r.hi) << t;
    EXPECT_TRUE(fits_dtype(r.lo, t) && fits_dtype(r.hi, t)) << t;
    if (r.lo != std::numeric_limits<int64_t>::min()) {
      EXPECT_FALSE(fits_dtype(r.lo - 1, t)) << t;
    }
    if (r.hi != std::numeric_limits<int64_t>::max()) {
      EXPECT_FALSE(fits_dtype(r.hi + 1, t)) << t;
    }
  }
  // No integer is a value of a float, vector or unsupported dtype.
  for (DataType t : {DataType::float32(), dt(Code::kInt, 32, 4), dt(Code::kInt, 7), dt(Code::kBool, 16)}) {
    EXPECT_FALSE(fits_dtype(0, t)) << dtype_name(t);
  }
}

TEST(DtypeUtilTest, NamesAreToStringsSpellingWithBoolWidths) {
  EXPECT_EQ(dtype_name(DataType::int64()), "int64");
  EXPECT_EQ(dtype_name(dt(Code::kUInt, 8)), "uint8");
  EXPECT_EQ(dtype_name(dt(Code::kFloat, 32, 4)), "float32x4");
  EXPECT_EQ(dtype_name(DataType::bfloat16()), "bfloat16");
  EXPECT_EQ(dtype_name(dt(Code::kHandle, 64)), "handle64");
  EXPECT_EQ(dtype_name(DataType::boolean()), "bool");
  EXPECT_EQ(dtype_name(dt(Code::kBool, 8, 4)), "boolx4");
  EXPECT_EQ(dtype_name(dt(Code::kBool, 16)), "bool16");  // to_string says "bool"
  EXPECT_EQ(dtype_name(dt(static_cast<Code>(9), 8)), "code9_8");
  for (Code code : {Code::kInt, Code::kUInt, Code::kFloat, Code::kBFloat, Code::kHandle}) {
    for (int bits : {1, 8, 17, 255}) {
      for (int lanes : {1, 2, 65535}) {
        const DataType t = dt(code, bits, lanes);
        EXPECT_EQ(dtype_name(t), t.to_string());
      }
    }
  }
}

TEST(DtypeUtilTest, ParseDtypeReadsBackEveryName) {
  for (Code code : {Code::kInt, Code::kUInt, Code::kFloat, Code::kBFloat, Code::kHandle, Code::kBool}) {
    for (int bits : {1, 7, 8, 16, 32, 64, 100, 255}) {
      for (int lanes : {1, 2, 4, 1000, 65535}) {
        const DataType t = dt(code, bits, lanes);
        const std::optional<DataType> back = parse_dtype(dtype_name(t));
        ASSERT_TRUE(back.has_value()) << dtype_name(t);
        EXPECT_EQ(*back, t) << dtype_name(t);
      }
    }
  }
}

TEST(DtypeUtilTest, ParseDtypeRefusesEveryOtherSpelling) {
  for (const char* name : {"", "int", "uint", "x4", "i64", "f32", "int064", "int64x1", "int64x01",
                           "int64x", "int64x0", "int64x65536", "int0", "int256", "int1000000",
                           "bool8", "bool0", "bool256", "boolx1", "boolx", "bool16x1", "int64 ",
                           " int64", "Int64", "float32x4x2", "int64y", "integer64", "int-8",
                           "int+8", "float", "handle"}) {
    EXPECT_FALSE(parse_dtype(name).has_value()) << '"' << name << '"';
  }
}

}  // namespace
}  // namespace relax
