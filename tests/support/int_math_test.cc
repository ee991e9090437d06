// floor_div and floor_mod against their definition: q = floor(a / b) and
// r = a - b * q, checked in 128-bit arithmetic (which cannot overflow).
#include "relax/support/int_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace relax {
namespace {

// 128-bit integers hold every product and difference of two int64s.
__extension__ typedef __int128 Int128;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Whether q is floor(a / b): q * b <= a < (q + 1) * b for b > 0, reversed for b < 0.
bool is_floor_quotient(int64_t a, int64_t b, int64_t q) {
  const Int128 lo = static_cast<Int128>(q) * b;
  const Int128 hi = static_cast<Int128>(q + static_cast<Int128>(1)) * b;
  return b > 0 ? lo <= a && a < hi : hi < a && a <= lo;
}

// Whether r is a - b * floor(a / b): the same residue as a, zero or of b's sign, |r| < |b|.
bool is_floor_remainder(int64_t a, int64_t b, int64_t r) {
  const Int128 diff = static_cast<Int128>(a) - r;
  if (diff % b != 0) return false;
  return b > 0 ? 0 <= r && r < b : b < r && r <= 0;
}

TEST(IntMathTest, FloorDivisionAndModuloOfSmallOperands) {
  for (int64_t a = -40; a <= 40; ++a) {
    for (int64_t b = -9; b <= 9; ++b) {
      if (b == 0) continue;
      EXPECT_TRUE(is_floor_quotient(a, b, floor_div(a, b))) << a << " / " << b;
      EXPECT_TRUE(is_floor_remainder(a, b, floor_mod(a, b))) << a << " % " << b;
    }
  }
  EXPECT_EQ(floor_div(-7, 2), -4);
  EXPECT_EQ(floor_mod(-7, 2), 1);
  EXPECT_EQ(floor_div(7, -2), -4);
  EXPECT_EQ(floor_mod(7, -2), -1);
}

TEST(IntMathTest, FloorDivisionAndModuloAtTheEndsOfInt64) {
  const std::vector<int64_t> values = {kMin, kMin + 1, -3, -1, 1, 3, kMax - 1, kMax};
  for (int64_t a : values) {
    for (int64_t b : values) {
      if (!(a == kMin && b == -1)) {
        EXPECT_TRUE(is_floor_quotient(a, b, floor_div(a, b))) << a << " / " << b;
      }
      EXPECT_TRUE(is_floor_remainder(a, b, floor_mod(a, b))) << a << " % " << b;
    }
  }
  // The one quotient that overflows still has a remainder.
  EXPECT_EQ(floor_mod(kMin, -1), 0);
}

}  // namespace
}  // namespace relax
