// The rewrite-rule half of the simplifier: rules written as data, matched against canonical
// forms, applied with side conditions proven by the Analyzer.
//
// A rule is three strings in the SymExpr text form, plus a name:
//
//   {"min-max-sum", "min(x, y) + max(x, y)", "x + y"}
//   {"min-factor-pos", "min(x * c1, y * c1)", "min(x, y) * c1", "0 < c1"}
//
// Names in a pattern are pattern variables: x, y, z, w match any int64 expression (the same
// name twice: the same expression), c1 ... c4 match an int64 constant, and b1, b2 any boolean.
// A condition (the fourth string) is an expression over them; with the matched values put in,
// it must simplify to true (without rules, under the Analyzer's ranges) for the rule to fire.
// A result is built from the matched values and simplified again (constant arithmetic such as
// `c1 * c2` folds there).
//
// Matching reads the canonical form (poly.h), not the text as written:
//   - a pattern sum (`+`, `-`, and products by a constant or a constant variable) matches the
//     terms of a Poly in any order: each pattern term takes one term of the target, a pattern
//     variable already matched takes the terms of its value, an unmatched one takes all the
//     rest (divided by its coefficient; `x * c1` with c1 unmatched takes the rest's common
//     factor, signed like its first term), and a constant takes the target's constant. At the
//     root of a rule what no pattern term took stays beside the result:
//     `min(x, y) - x` rewrites `min(a, b) - a + n` to `min(0, b - a) + n`;
//   - min, max, ==, !=, && and || match either way round; other nodes match node by node.
//
// Termination: a rewrite is kept only when the simplified result is smaller than the
// expression it replaces, by (variable occurrences, nodes, nodes inside division numerators)
// in lexicographic order, so no chain of rewrites can go on for ever; and rule applications
// nested inside one another (a result whose simplification fires more rules) stop at
// kMaxRuleDepth, where the expression is kept in canonical form.
//
// Tables, one file per operator family (each rule's name starts with its family):
//   rules_min_max.cc   min, max, select, and sums holding them
//   rules_div_mod.cc   floordiv, floormod, and sums holding them
//   rules_compare.cc   comparisons
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "relax/shape/sym_expr.h"

namespace relax::shape_detail {

/// One rule as written in a table (see the top of this file).
struct RuleText {
  const char* name;
  const char* pattern;
  const char* result;
  const char* when = "";  ///< a condition over the pattern variables; "" for none
};

std::span<const RuleText> min_max_rules();  // rules_min_max.cc
std::span<const RuleText> div_mod_rules();  // rules_div_mod.cc
std::span<const RuleText> compare_rules();  // rules_compare.cc

/// Every table, in the order rules are tried (a table's own order within it).
std::vector<std::span<const RuleText>> rule_tables();

/// A pattern sum taken apart: sign * coefficient * body, or a constant when body is null.
struct PatternTerm {
  int64_t coeff = 1;       ///< the literal coefficient (times -1 for a subtracted term)
  SymExpr coeff_var;       ///< a constant pattern variable multiplying the term, or null
  SymExpr body;            ///< null for a constant term (then coeff / coeff_var is its value)
};

/// A rule read from its text, ready to match.
struct CompiledRule {
  std::string name;
  SymExpr pattern;
  SymExpr result;
  SymExpr when;  ///< null when the rule has no condition
  /// The condition's conjuncts over constant pattern variables alone (evaluated directly on
  /// the matched constants, first), and the others (simplified with the values put in).
  std::vector<SymExpr> when_constant;
  std::vector<SymExpr> when_general;
  /// The constant pattern variables each of when_constant uses: the matcher tests a conjunct
  /// as soon as they are all matched, and gives up on the match when it is false.
  std::vector<std::vector<SymVar>> when_constant_vars;
  /// The pattern variables each of when_general uses: when the matcher has bound them all to
  /// constants, the conjunct is tested at once too.
  std::vector<std::vector<SymVar>> when_general_vars;
  SymKind root;  ///< the pattern's root kind; kAdd stands for every pattern sum
  /// For a root sum: its terms, and the atom kinds its non-variable terms need (a bit per
  /// SymKind), so that a target without them is skipped at once.
  std::vector<PatternTerm> terms;
  uint32_t needed_kinds = 0;
};

/// The rules of every table, compiled once. Aborts (RELAX_CHECK) on a rule that does not
/// parse or uses a name that is not a pattern variable: the tables are relax's own code, and a
/// test compiles them all.
const std::vector<CompiledRule>& compiled_rules();

/// The compiled rules whose pattern is rooted at `kind` (kAdd for sums), in table order.
const std::vector<const CompiledRule*>& rules_rooted_at(SymKind kind);

/// The pattern sum `e` (rooted at +, - or *) as terms, in the order the matcher takes them:
/// terms with a structure, then pattern variables, then the constant.
std::vector<PatternTerm> pattern_terms(const SymExpr& e);
/// The same for a sum inside a compiled rule's pattern, computed once.
const std::vector<PatternTerm>& sub_pattern_terms(const SymExpr& e);
/// A quick test without bindings: false when `p` cannot match `t` (kinds, dtypes, constants
/// differ); true does not mean it matches.
bool may_match(const SymExpr& p, const SymExpr& t);

/// Whether `v` is a pattern variable standing for a constant (c1 ... c4).
bool is_constant_pattern_var(const SymExpr& v);
/// Whether `v` is any pattern variable.
bool is_pattern_var(const SymExpr& v);

/// The termination measure: (variable occurrences, nodes, nodes inside the numerators of
/// floordiv and floormod), compared lexicographically.
struct RewriteMeasure {
  int64_t vars = 0;
  int64_t nodes = 0;
  int64_t numerator_nodes = 0;
  bool operator<(const RewriteMeasure& o) const {
    if (vars != o.vars) return vars < o.vars;
    if (nodes != o.nodes) return nodes < o.nodes;
    return numerator_nodes < o.numerator_nodes;
  }
};
RewriteMeasure rewrite_measure(const SymExpr& e);

/// How deep rule applications may nest (see the top of this file).
inline constexpr int kMaxRuleDepth = 6;

}  // namespace relax::shape_detail
