// Rewrite rules for min, max and select (rewrite/rewriter.h has the rule language).
//
// The canonical form already flattens min/max chains, drops operands another one provably
// dominates (min(max(x, y), x) -> x: the bound of max(x, y) - x is [0, inf)), and takes a shared
// part out (min(n + 3, m + 1) -> min(n + 2, m) + 1). The rules here cover what it does not: min and max meeting in a sum, an operand subtracted from its
// own min/max, constant factors moved out, and select as min or max.
#include "shape/simplify/rewrite/rewriter.h"

namespace relax::shape_detail {

std::span<const RuleText> min_max_rules() {
  static const RuleText rules[] = {
      // min and max of the same pair together.
      {"min-max-sum", "min(x, y) + max(x, y)", "x + y"},
      // An operand subtracted from its own min / max.
      {"min-minus-operand", "min(x, y) - x", "min(y - x, 0)"},
      {"max-minus-operand", "max(x, y) - x", "max(y - x, 0)"},
      {"operand-minus-min", "x - min(x, y)", "max(x - y, 0)"},
      {"operand-minus-max", "x - max(x, y)", "min(x - y, 0)"},
      // Common factors moved out: the sign of the factor decides which of min / max remains.
      {"min-factor-positive", "min(x * c1, y * c1)", "min(x, y) * c1", "1 < c1"},
      {"min-factor-negative", "min(x * c1, y * c1)", "max(x, y) * c1", "c1 < 0"},
      {"max-factor-positive", "max(x * c1, y * c1)", "max(x, y) * c1", "1 < c1"},
      {"max-factor-negative", "max(x * c1, y * c1)", "min(x, y) * c1", "c1 < 0"},
      // A select between the two sides of its condition is a min or a max.
      {"select-less-min", "select(x < y, x, y)", "min(x, y)"},
      {"select-less-max", "select(x < y, y, x)", "max(x, y)"},
      {"select-less-equal-min", "select(x <= y, x, y)", "min(x, y)"},
      {"select-less-equal-max", "select(x <= y, y, x)", "max(x, y)"},
  };
  return rules;
}

}  // namespace relax::shape_detail
