// relax/support/half_float.h: the bit-level float32 -> bfloat16 rounding against the
// value-level one (round_to_bfloat16 through double), over every float32 exponent.
#include "relax/support/half_float.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace relax {
namespace half_float_test {
namespace {

float from_bits(uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(HalfFloatTest, BitLevelBfloat16RoundingMatchesTheValueLevelOneEverywhere) {
  std::mt19937 rng(7);
  int64_t checked = 0;
  // Every sign and biased exponent (0: zero and subnormals, 255: infinities and NaNs), with
  // the low 16 bits at the tie, just below and above it, at 0 and all ones, and random.
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exponent = 0; exponent < 256; ++exponent) {
      for (uint32_t high = 0; high < 128; ++high) {
        for (uint32_t low : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, static_cast<uint32_t>(rng() & 0xffff)}) {
          const uint32_t u = (sign << 31) | (exponent << 23) | (high << 16) | low;
          const float f = from_bits(u);
          ASSERT_EQ(bfloat16_bits_of_float(f), bfloat16_bits(f)) << "float32 bits 0x" << std::hex << u;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 256 * 128 * 6);
  // The largest finite values round up to the infinity, and down to the largest bfloat16.
  EXPECT_EQ(bfloat16_bits_of_float(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bfloat16_bits_of_float(from_bits(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(bfloat16_bits_of_float(-0.0f), 0x8000);
  EXPECT_EQ(bfloat16_bits_of_float(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
}

}  // namespace
}  // namespace half_float_test
}  // namespace relax
