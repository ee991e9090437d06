// Facts: the boolean facts an Analyzer holds while ConstraintScopes are alive
// (relax/shape/analyzer.h), and what the simplifier reads of them.
//
// A fact is split into its && atoms, each simplified under what was already
// known, and each atom that is an int64 comparison becomes one or two facts
// `q >= 0` over a canonical Poly q (a < b gives b - a - 1 >= 0; a == b gives
// a - b >= 0 and b - a >= 0). By the form of q:
//   - range facts, q = a*v + c over one variable v: they narrow v's range (the
//     Analyzer's effective ranges, which every analysis reads);
//   - modular facts, floormod(v, c) == r for a variable v and a constant c > 0:
//     v == c*k + r for an integer k. They are kept with a fresh quotient
//     variable k (ranged from v's range): the modular analysis and the bound of
//     a canonical form are also computed with v replaced by c*k + r, so
//     floordiv(v, c)*c - v is bounded as c*k - c*k == 0; v's range ends snap to
//     the set;
//   - relational facts, every other q: the bound of a canonical form p is
//     tightened through them (see tighten()). They also bound their plain
//     variables by the ranges of the rest (i < n with n <= 100 gives i <= 99).
// An atom d != 0 where d >= 0 (or d <= 0) is known becomes d - 1 >= 0 (or
// -d - 1 >= 0): `i != 0` for i >= 0 trims i's range, `floormod(n, 4) != 0`
// is the relation floormod(n, 4) >= 1.
// Every atom (of any form) is also kept as written after simplification, so
// that prove() answers true to a condition that is one of them.
//
// Frames. Each ConstraintScope is one frame; leaving it truncates the fact
// lists to their length before it and recomputes the effective range of each
// variable it touched from the declared ranges and the remaining facts.
//
// Contradictions. A fact that simplifies to false under what is known, that
// leaves a variable an empty range, or whose modular facts have no common
// solution, adds nothing: its frame is pushed empty and marked. Every answer
// under it is then the answer without it, which is sound whether or not the
// code under it can run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shape/bounds/bounds.h"
#include "shape/poly.h"

namespace relax::shape_detail {

class Simplifier;

class Facts {
 public:
  /// Whether no relational or modular fact is in force (range facts live in
  /// the effective ranges, which the simplifier reads anyway).
  bool empty() const { return relations_.empty() && modulars_.empty(); }
  /// Number of frames (alive ConstraintScopes).
  size_t depth() const { return frames_.size(); }

  // ---- read side: the simplifier's hooks ----

  /// `b` (a bound of p from its terms) narrowed by the relational and modular
  /// facts. For a relational fact q >= 0 that shares a term with p, a*p - b*q
  /// (a, b > 0 chosen so that the term cancels) is bounded below, and
  /// a*p >= a*p - b*q gives p's lower end (a*p + b*q for the upper end, when
  /// the shared term has opposite signs); up to kMaxChain facts are chained.
  /// Simplifications run for this do not consult the facts again.
  ConstIntBound tighten(const Poly& p, const ConstIntBound& b, Simplifier& s) const;
  /// The modular set of `e` with each variable of a modular fact replaced by
  /// c*k + r.
  ModularSet modular(const SymExpr& e) const;
  /// Whether `cond` (simplified) is structurally one of the atoms in force.
  bool holds(const SymExpr& cond) const;

  // ---- write side: the Analyzer ----

  /// Opens a frame with `fact` (a boolean expression); false (and an empty
  /// frame) when it contradicts what is known. `declared` are the ranges given
  /// by Analyzer::bind; `effective` are declared narrowed by the facts.
  bool push(const SymExpr& fact, const VarRanges& declared, VarRanges& effective);
  /// Closes the innermost frame.
  void pop(const VarRanges& declared, VarRanges& effective);
  /// After a bind(): effective ranges of the quotient variables follow their variables'.
  void refresh(VarRanges& effective) const;

  /// The longest chain of relational facts tighten() combines, and the most
  /// bounds it evaluates for one Poly.
  static constexpr int kMaxChain = 3;
  static constexpr int kBudget = 24;

 private:
  struct RangeFact {
    SymVar var;
    ConstIntBound range;
  };
  /// var == set.coeff * quotient + set.base
  struct ModularFact {
    SymVar var;
    ModularSet set;
    SymVar quotient;
  };
  /// Lengths of the lists before the frame, and whether its fact contradicted.
  struct Frame {
    size_t ranges, modulars, relations, atoms;
    bool contradicts;
  };

  /// Adds the facts of one && atom (already simplified); false on contradiction.
  bool add_atom(const SymExpr& atom, Simplifier& s);
  void add_relation(const Poly& q, Simplifier& s);
  /// Drops every fact past the lengths in `frame` and recomputes the ranges.
  void truncate(const Frame& frame, const VarRanges& declared, VarRanges& effective);
  /// Recomputes the effective range of `var`: declared, range facts, modular
  /// snapping. False when it is empty.
  bool recompute(const SymVar& var, const VarRanges& declared, VarRanges& effective) const;
  /// The modular set known for `var` (everything when none); nullopt when the
  /// modular facts on it have no common solution.
  std::optional<ModularSet> var_modular(const SymVar& var) const;
  /// `e` with each modular variable replaced by c*k + r (`e` itself when none occurs).
  SymExpr with_quotients(const SymExpr& e) const;
  /// The relations with each modular variable replaced (computed once per set of facts).
  const std::vector<Poly>& quotient_relations(Simplifier& s) const;
  /// Which end of a bound a search improves.
  enum class Side : uint8_t { kLower, kUpper, kBoth };
  /// The bound of p through chains of up to `depth` of `relations` not in `used`
  /// (only `side` is improved; the other end is p's own bound).
  ConstIntBound chain_bound(const Poly& p, const std::vector<Poly>& relations, uint32_t used,
                            int depth, Side side, Simplifier& s, int& budget) const;

  std::vector<RangeFact> ranges_;
  std::vector<ModularFact> modulars_;
  std::vector<Poly> relations_;  ///< each q >= 0
  std::vector<SymExpr> atoms_;   ///< every atom in force, simplified
  std::vector<Frame> frames_;
  /// Set while tighten() runs: nested bounds do not consult the facts.
  mutable bool busy_ = false;
  /// relations_ in the view of the modular facts, while valid.
  mutable std::vector<Poly> quotient_relations_;
  mutable bool quotient_relations_valid_ = false;
};

}  // namespace relax::shape_detail
