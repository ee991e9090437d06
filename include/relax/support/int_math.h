// Integer division that rounds toward negative infinity, as the IR's floordiv
// and floormod (and the VM's shape programs) define it; C++'s / and % truncate.
// Header-only: the runtime evaluates shape programs with it per call.
#pragma once

#include <cstdint>

namespace relax {

/// floor(a / b), for b != 0 and not INT64_MIN / -1 (which overflows; the
/// caller rules both out).
inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/// a - b * floor_div(a, b), for b != 0: zero or of the sign of b. Defined for
/// every a, INT64_MIN with b == -1 included (0).
inline int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // INT64_MIN % -1 overflows in C++
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace relax
