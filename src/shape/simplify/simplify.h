// The simplifier behind Analyzer::simplify, split by concern over
// simplify.cc (driver, sums and products, bounds of canonical forms),
// simplify_divmod.cc, simplify_minmax.cc and simplify_compare.cc.
//
// Integer expressions are rebuilt bottom-up as Polys (see poly.h); every
// construct a Poly cannot hold becomes an atom whose operands are already
// canonical. Boolean expressions are rebuilt as comparisons in the normal form
// `lhs <= rhs`, `lhs == rhs` or `lhs != rhs` (each side a canonical sum with
// positive coefficients), or as && / || / ! / constants over such.
//
// Only int64 arithmetic is canonicalised. Everything else -- float values,
// integers of other widths (whose arithmetic wraps or overflows at another
// width), casts, intrinsic calls, buffer loads -- is rebuilt node by node
// with each operand simplified by the rules of its own dtype (so the int64
// indices of a load and the int64 operand of a cast come out canonical), and
// only these folds: a cast to the operand's own dtype disappears, a cast of an
// integer or boolean constant to an integer or boolean dtype becomes the
// constant, and a select whose condition is decided becomes its branch. Float
// arithmetic is never reassociated or folded (a + b - b is not a for floats),
// and a float comparison is never negated into its opposite (NaN compares
// false both ways).
//
// Depth: chains of one operator (`a + b - c + ...`, `a * b * ...`, `min(min(a,
// b), c)`) are read in a loop; other nesting recurses, counted by depth_, and a
// subtree met past kMaxWalkDepth levels (walk_depth.h) is kept as written (an
// integer one as an atom, a boolean one as it is). Trees within the readers'
// limit kMaxNestingDepth never get there.
//
// Invariants: simplification never changes the value wherever the input
// evaluates without error; simplify(simplify(e)) == simplify(e) (for trees the
// depth limit does not cut); the result depends only on the input's structure
// and the variable ranges.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "shape/bounds/bounds.h"
#include "shape/poly.h"
#include "shape/walk_depth.h"

namespace relax::shape_detail {

struct CompiledRule;  // rewrite/rewriter.h
class Facts;         // constraints.h

class Simplifier {
 public:
  /// `facts` (may be null): scoped facts whose bounds and modular sets bound() and modular() add.
  explicit Simplifier(const VarRanges& ranges, const Facts* facts = nullptr)
      : ranges_(ranges), facts_(facts) {}

  /// The canonical form of an expression of any dtype.
  SymExpr simplify(const SymExpr& e);
  /// The canonical Poly of an integer expression.
  Poly to_poly(const SymExpr& e);
  /// The canonical form of a boolean expression.
  SymExpr simplify_bool(const SymExpr& e);
  /// A vector node rebuilt over simplified operands (no algebra on vectors).
  SymExpr simplify_vector(const SymExpr& e);
  /// `e` rebuilt with simplified operands and the few folds valid for every
  /// dtype (see the top of this file); for nodes outside the int64 algebra.
  SymExpr simplify_operands(const SymExpr& e);

  /// Interval of a canonical Poly: term by term, then tightened by viewing
  /// c*floordiv(x, c) as x - floormod(x, c) and floormod(x, c) as
  /// x - c*floordiv(x, c), which keeps the correlation between x and its
  /// quotient or remainder (floordiv(n + 15, 16) * 16 - n lies in [0, 15]).
  ConstIntBound bound(const Poly& p);
  ModularSet modular(const Poly& p);

  /// Records the name of every rewrite rule that fires (rewrite/rewriter.h) into `trace`.
  void set_trace(std::vector<std::string>* trace) { trace_ = trace; }
  /// False when a rewrite rule fired or could not be tried during this simplifier's work: a
  /// result may then simplify further (another round, with a fresh simplifier, settles it).
  bool settled() const { return !unsettled_; }

 private:
  // simplify.cc
  Poly sum_poly(const SymExpr& e);
  Poly product_poly(const SymExpr& e);
  ConstIntBound term_interval(const Poly& p);
  /// p with, in each product of several atoms, one atom of constant bounds replaced by the
  /// end that bounds the product from above (`upper`) or below; nullopt when none can be.
  std::optional<Poly> product_end_view(const Poly& p, bool upper);
  /// Rewrites k*c*floordiv(x, c) + k*floormod(x, c) into k*x.
  Poly merge_divmod(Poly p);
  /// One such rewrite; nullopt when there is none (or it would overflow).
  std::optional<Poly> merge_one_divmod(const Poly& p);

  // simplify_divmod.cc
  Poly floordiv_poly(const Poly& a, const Poly& b);
  Poly floormod_poly(const Poly& a, const Poly& b);
  Poly floordiv_by_const(Poly a, int64_t d);
  Poly floormod_by_const(Poly a, int64_t d);
  std::optional<Poly> divide_by_monomial(const Poly& a, const Poly& b, bool want_mod);

  // simplify_minmax.cc
  Poly minmax_poly(const SymExpr& e);
  Poly select_poly(const SymExpr& e);

  // simplify_compare.cc
  /// `a kind b` in normal form, then with the comparison rules applied.
  SymExpr compare(SymKind kind, const SymExpr& a, const SymExpr& b);
  SymExpr compare_normal(SymKind kind, const SymExpr& a, const SymExpr& b);
  SymExpr logic(const SymExpr& e);
  /// `a kind b` (&& or ||) of two simplified operands, folded where it can be.
  SymExpr combine_logic(SymKind kind, const SymExpr& a, const SymExpr& b);
  SymExpr negate(const SymExpr& cond);

  // rewrite/match.cc: the rule tables (rewrite/rewriter.h).
  /// The rules rooted at the kind of the canonical `e`, tried in table order: the simplified
  /// result of the first that matches, whose condition holds and whose result is smaller
  /// (rewrite_measure); nullopt when none does.
  std::optional<SymExpr> apply_rules(const SymExpr& e);
  /// The rules rooted at a sum, tried on the canonical `p`, the same way.
  std::optional<Poly> apply_sum_rules(const Poly& p);
  std::optional<SymExpr> try_rules(const SymExpr& e, const std::vector<const CompiledRule*>& rules);
  /// Whether a rule's condition simplifies to true (without rules: conditions are small, and
  /// rules proving them could recurse).
  bool holds(const SymExpr& cond);
  /// Whether the conjuncts of `rule`'s condition over matched expressions hold for the
  /// matched values `found` (those over constants alone are the matcher's: rewriter.h).
  bool condition_holds(const CompiledRule& rule, const SymVarMap<SymExpr>& found);
  /// Whether the canonical int64 `x` is a multiple of c > 0 by its modular set (false when
  /// that does not show it).
  bool divisible(const SymExpr& x, int64_t c);
  /// Records that `rule` fired (the trace; the result may simplify further).
  void note_fired(const CompiledRule& rule);
  /// The atom `e` (a floordiv, floormod, min, max or select just built from canonical
  /// operands) with its rules applied.
  Poly rooted_atom(const SymExpr& e);
  /// floordiv or floormod of `a` and `b` as an atom, with its rules applied.
  Poly div_mod_atom(SymKind kind, const Poly& a, const Poly& b) {
    return rooted_atom(SymExpr::make(kind, a.to_expr(), b.to_expr()));
  }
  /// The sum `p` with the sum rules applied until none fires.
  Poly with_sum_rules(Poly p);

  // The work behind to_poly, simplify_bool and negate; the public ones memoize it.
  Poly to_poly_uncached(const SymExpr& e);
  SymExpr simplify_bool_uncached(const SymExpr& e);
  SymExpr negate_uncached(const SymExpr& cond);

  const VarRanges& ranges_;
  const Facts* facts_ = nullptr;
  // Results by node, for the life of this simplifier. Rules re-read the operands of
  // atoms they built (bounds of min/max operands, the negation of a condition); without
  // these, nested min/max or && chains would be simplified again at every level, which
  // costs time exponential in the depth. Each entry keeps its node alive.
  absl::flat_hash_map<const SymExprNode*, std::pair<SymExpr, Poly>> poly_memo_;
  absl::flat_hash_map<const SymExprNode*, std::pair<SymExpr, SymExpr>> bool_memo_;
  absl::flat_hash_map<const SymExprNode*, std::pair<SymExpr, SymExpr>> negate_memo_;
  /// Levels of recursion of this simplifier's walk (walk_depth.h): past
  /// kMaxWalkDepth a subtree is kept as written.
  int depth_ = 0;
  /// Whether the rewrite rules run (not while proving a rule's condition).
  bool rules_enabled_ = true;
  /// Rule applications in progress, one inside another (capped at kMaxRuleDepth).
  int rule_depth_ = 0;
  std::vector<std::string>* trace_ = nullptr;
  /// The answer of apply_rules for each expression tried (structurally); not `done` while
  /// its rules are being tried (a meeting then gets no rewrite).
  struct RuleAnswer {
    bool done = false;
    std::optional<SymExpr> result;
  };
  absl::flat_hash_map<SymExpr, RuleAnswer, SymExprHash, SymExprEqual> rule_memo_;
  /// Whether a rule fired, or a rule could not be tried (its expression met while in
  /// progress, or past kMaxRuleDepth): then the memoized forms may not be final.
  bool unsettled_ = false;
};

/// The view of `p` with each c*floordiv(x, c) replaced by x - floormod(x, c)
/// (`expand_div`) or each floormod(x, c) by x - c*floordiv(x, c); nullopt when
/// `p` has no such term.
std::optional<Poly> expand_divmod(Simplifier& s, const Poly& p, bool expand_div);

/// `e` (a result of simplification) with the atoms that several terms of a sum share taken
/// out of it, and the constant content of what they multiply (factor.cc); a function of the
/// canonical form, and never larger. With `compound`, also from terms whose other atoms are
/// not variables; `compound_used` tells whether that happened (see factor.cc).
SymExpr factor_common_atoms(const SymExpr& e, bool compound = false, bool* compound_used = nullptr);

}  // namespace relax::shape_detail
