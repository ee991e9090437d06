// Rewrite rules for comparisons and their logic (rewrite/rewriter.h has the rule language).
//
// The canonical form already writes every comparison as `lhs <= rhs`, `lhs < rhs`, `lhs ==
// rhs` or `lhs != rhs` with common terms cancelled and the common factor of the variable
// terms divided out, and decides those the bounds settle. The rules here turn comparisons of
// a quotient with a constant into comparisons of the numerator, and fold pairs of comparisons
// of the same two sides.
#include "shape/rewrite/rewriter.h"

namespace relax::shape_detail {

std::span<const RuleText> compare_rules() {
  static const RuleText rules[] = {
      // A quotient against a constant: a comparison of the numerator.
      {"compare-floordiv-at-most", "floordiv(x, c1) <= c2", "x < c1 * c2 + c1", "0 < c1"},
      {"compare-floordiv-below", "floordiv(x, c1) < c2", "x < c1 * c2", "0 < c1"},
      {"compare-floordiv-at-least", "c2 <= floordiv(x, c1)", "c1 * c2 <= x", "0 < c1"},
      {"compare-floordiv-above", "c2 < floordiv(x, c1)", "c1 * c2 + c1 <= x", "0 < c1"},
      // Two comparisons of the same sides.
      {"compare-both-strict", "x < y && y < x", "false"},
      {"compare-both-weak", "x <= y && y <= x", "x == y"},
      {"compare-either-strict", "x < y || y < x", "x != y"},
      {"compare-either-weak", "x <= y || y <= x", "true"},
      {"compare-strict-or-equal", "x < y || x == y", "x <= y"},
      {"compare-weak-and-unequal", "x <= y && x != y", "x < y"},
      {"compare-strict-and-weak", "x < y && x <= y", "x < y"},
      {"compare-strict-or-weak", "x < y || x <= y", "x <= y"},
  };
  return rules;
}

}  // namespace relax::shape_detail
