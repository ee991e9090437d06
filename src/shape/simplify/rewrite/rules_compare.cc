// Rewrite rules for comparisons and their logic (rewrite/rewriter.h has the rule language).
//
// The canonical form already writes every comparison as `lhs <= rhs`, `lhs < rhs`, `lhs ==
// rhs` or `lhs != rhs` with common terms cancelled and the common factor of the variable
// terms divided out (when the constant is all that is left over), and decides those the bounds
// settle. The rules here turn comparisons of a quotient with a constant into comparisons of
// the numerator, divide out a common factor when what is left over is bounded below it, and
// fold pairs of comparisons of the same two sides.
#include "shape/simplify/rewrite/rewriter.h"

namespace relax::shape_detail {

std::span<const RuleText> compare_rules() {
  static const RuleText rules[] = {
      // A quotient against a constant: a comparison of the numerator. (The normal form
      // writes a comparison with a constant side as `<=`: floordiv(x, 8) < 3 arrives as
      // floordiv(x, 8) <= 2, and 3 < floordiv(x, 8) as 4 <= floordiv(x, 8).)
      {"compare-floordiv-at-most", "floordiv(x, c1) <= c2", "x < c1 * c2 + c1", "0 < c1"},
      {"compare-floordiv-at-least", "c2 <= floordiv(x, c1)", "c1 * c2 <= x", "0 < c1"},
      // A common factor of the two sides with a remainder bounded below it: divided out
      // (x*4 + j < y*4 with j in [0, 3] is x < y).
      {"compare-factor-bounded-remainder-below", "x * c1 + y < z * c1", "x < z",
       "0 < c1 && 0 <= y && y < c1"},
      {"compare-factor-bounded-remainder-above", "z * c1 <= x * c1 + y", "z <= x",
       "0 < c1 && 0 <= y && y < c1"},
      // Two comparisons of the same sides.
      {"compare-both-strict", "x < y && y < x", "false"},
      {"compare-both-weak", "x <= y && y <= x", "x == y"},
      {"compare-either-strict", "x < y || y < x", "x != y"},
      {"compare-either-weak", "x <= y || y <= x", "true"},
      {"compare-strict-or-equal", "x < y || x == y", "x <= y"},
      {"compare-weak-and-unequal", "x <= y && x != y", "x < y"},
  };
  return rules;
}

}  // namespace relax::shape_detail
