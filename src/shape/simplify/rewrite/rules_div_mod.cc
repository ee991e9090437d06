// Rewrite rules for floordiv and floormod (rewrite/rewriter.h has the rule language).
//
// The canonical form already splits off the terms a constant divisor divides, folds nested
// divisions (floordiv(floordiv(x, a), b) -> floordiv(x, a*b)), reduces constants modulo the
// divisor and resolves quotients the bounds settle. The rules here cover numerators whose
// terms share a factor of the divisor, remainders bounded below that factor, floordiv /
// floormod pairs merged back into their source, and sums of floormods that are constant.
#include "shape/simplify/rewrite/rewriter.h"

namespace relax::shape_detail {

std::span<const RuleText> div_mod_rules() {
  static const RuleText rules[] = {
      // Every term of the numerator a multiple of c1, c1 dividing the divisor: the constant
      // offset is absorbed (floordiv(x*8 + 7, 16) -> floordiv(x, 2)).
      {"floordiv-common-factor", "floordiv(x * c1 + c2, c3)",
       "floordiv(x + floordiv(c2, c1), floordiv(c3, c1))", "1 < c1 && floormod(c3, c1) == 0"},
      {"floormod-common-factor", "floormod(x * c1 + c2, c3)",
       "floormod(x + floordiv(c2, c1), floordiv(c3, c1)) * c1 + floormod(c2, c1)",
       "1 < c1 && floormod(c3, c1) == 0"},
      // A part of the numerator bounded below the factor c1 that the rest shares with the
      // divisor leaves the division (floormod(x*32 + y, 64) -> floormod(x, 2)*32 + y for y in
      // [0, 32)).
      {"floordiv-bounded-remainder", "floordiv(x * c1 + y, c3)", "floordiv(x, floordiv(c3, c1))",
       "0 < c1 && floormod(c3, c1) == 0 && 0 <= y && y < c1"},
      {"floormod-bounded-remainder", "floormod(x * c1 + y, c3)",
       "floormod(x, floordiv(c3, c1)) * c1 + y",
       "0 < c1 && floormod(c3, c1) == 0 && 0 <= y && y < c1"},
      // floordiv / floormod pairs merged back into their source.
      {"floormod-from-floordiv", "x - floordiv(x, c1) * c1", "floormod(x, c1)", "c1 != 0"},
      {"floordiv-from-floormod", "x - floormod(x, c1)", "floordiv(x, c1) * c1", "c1 != 0"},
      // A quotient times its divisor is the numerator when the divisor divides it (known
      // from its modular set: a scoped fact floormod(n, 4) == 0, or n's own form).
      {"floordiv-exact", "floordiv(x, c1) * c1", "x", "c1 != 0 && floormod(x, c1) == 0"},
      // Sums of floormods that are constant.
      {"floormod-pair-sum", "floormod(x, 2) + floormod(x + c1, 2)", "1", "floormod(c1, 2) == 1"},
      // floormod(x, c) + floormod(-x, c) (the canonical form writes -x mod c as (c - 1)*x).
      {"floormod-negated-pair", "floormod(x, c1) + floormod(x * c2, c1)",
       "select(floormod(x, c1) == 0, 0, c1)", "0 < c1 && floormod(c2 + 1, c1) == 0"},
      // Consecutive quotients differ by the remainder's carry.
      {"floordiv-step-two", "floordiv(x + 1, 2) - floordiv(x, 2)", "floormod(x, 2)"},
  };
  return rules;
}

}  // namespace relax::shape_detail
