// Iteration maps: detect_iter_map and fuse_loops (relax/shape/iter_map.h).
//
// Stages of detection:
//   1. Each index is simplified (Analyzer::simplify, under the loops' ranges)
//      and read bottom-up into a Sum: terms `split * scale` plus a loop-free
//      offset. A split is (mark, lower, extent); a mark is a loop variable or a
//      fused sum. Sums add and scale by loop-free factors; floordiv and floormod
//      by a loop-free divisor c first turn a sum of several terms into one term
//      `F * s0` over a new fused mark F (its terms must form a mixed radix:
//      sorted by scale, each scale the previous one times the previous extent;
//      s0 the smallest scale), then divide that one term: with scale s and
//      c == s*q, floordiv(x*s, c) is the split of x above q and
//      floormod(x*s, c) the split below q, times s (x's extent must be a
//      multiple of q, or at most q); with s == c*q the result is x*q or 0.
//      A piece of a fused mark whose digit range meets each term's range at
//      proven multiples is read as the terms' pieces instead (floordiv(i*4 +
//      j, 8) with j in [0, 4) is floordiv(i, 2)); when one piece of a fused
//      mark cannot be, detection starts again keeping all of that mark's
//      pieces whole, so that a mark is never used both whole and through its
//      terms. A floormod of a sum whose scales are no mixed radix is read with
//      scales lifted by multiples of the divisor when some order of the terms
//      makes them one (the simplifier writes floormod(i*3 + j, 2) as
//      floormod(i + j, 2)). Splits are interned per mark (equal lower and
//      extent, proven, give the same split), fused marks by their terms.
//      Each index is read as written first, then, if that fails, in its
//      simplified form.
//   2. Each index's terms must form a mixed radix with smallest scale 1; its
//      extent is the product of the terms' extents.
//   3. Uses: every split of an index is used by that index; a fused mark any
//      of whose splits is used uses each of its terms' splits. Marks are
//      visited newest first, so a fused mark is settled before the marks it
//      was built from. A split used twice makes the map kNone.
//   4. Each used mark's used splits, taken from the lowest, must each start
//      at a multiple of where the previous one ends (the first at a multiple
//      of 1) and end at a divisor of the mark's extent: surjective. When every
//      start is exactly the previous end, the last end is the extent, and every
//      loop of extent other than 1 is used: bijective.
// The inverse runs the stages backwards: each index value gives its splits'
// values (floormod(floordiv(y - offset, scale), extent), the top split
// without the floormod); each mark, newest first, is the sum of its splits'
// values times their lower factors; a fused mark's value gives its terms'
// splits' values the same way.
//
// Soundness rests on the Analyzer: every equality is prove_equal, every
// divisibility an exact_div, every sign a prove; what is not proven is
// reported, never assumed.
#include "relax/shape/iter_map.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace relax {
namespace iter_map_detail {

/// A loop variable (loop >= 0) or a fused sum of splits of other marks.
struct Mark {
  SymExpr source;
  SymExpr extent;
  int loop = -1;
  /// Fused marks: the terms' splits and their scales relative to the
  /// smallest (the first is 1), by increasing scale.
  std::vector<int> components;
  std::vector<SymExpr> component_scales;
  /// Fused marks: names the sum across rounds of detection (its source and extent).
  std::string key;
  /// Every split interned for this mark, used or not.
  std::vector<int> splits;
};

/// floormod(floordiv(mark, lower), extent).
struct Split {
  int mark = -1;
  SymExpr lower;
  SymExpr extent;
  SymExpr value;  // the shortest spelling (IterSplit::value)
  /// Who uses it: an index k >= 0, or the fused mark m as -(m + 1).
  std::vector<int> users;
};

struct Term {
  int split = -1;
  SymExpr scale;
};

struct Sum {
  std::vector<Term> terms;
  SymExpr offset = SymExpr(0);
};

}  // namespace iter_map_detail

using iter_map_detail::Mark;
using iter_map_detail::Split;
using iter_map_detail::Sum;
using iter_map_detail::Term;

struct IterMap::State {
  IterMapKind kind = IterMapKind::kNone;
  std::string reason;
  std::vector<IterIndex> indices;
  // What the inverse needs.
  std::vector<Mark> marks;
  std::vector<Split> splits;
  std::vector<std::vector<Term>> index_terms;  // by increasing scale
  std::vector<LoopRange> loops;
  mutable Analyzer analyzer;
};

namespace {

/// The reason a sum is not read as a map; carried as a Status message.
absl::Status not_affine(std::string why) { return absl::InvalidArgumentError(std::move(why)); }

std::string quoted(const SymExpr& e) { return absl::StrCat("`", to_string(e), "`"); }


class Detector {
 public:
  Detector(const std::vector<LoopRange>& loops, Analyzer analyzer,
           const absl::flat_hash_set<std::string>& keep_whole)
      : analyzer_(std::move(analyzer)), keep_whole_(keep_whole) {
    for (size_t k = 0; k < loops.size(); ++k) {
      Mark mark;
      mark.source = loops[k].var;
      mark.extent = analyzer_.simplify(loops[k].extent);
      mark.loop = static_cast<int>(k);
      loop_mark_[loops[k].var] = static_cast<int>(marks_.size());
      marks_.push_back(std::move(mark));
    }
  }

  Analyzer& analyzer() { return analyzer_; }
  /// Fused sums (by key) found to have a piece that is not a sum of their terms' pieces.
  const absl::flat_hash_set<std::string>& newly_whole() const { return newly_whole_; }
  std::vector<Mark>& marks() { return marks_; }
  std::vector<Split>& splits() { return splits_; }

  bool uses_loop(const SymExpr& e) const {
    bool found = false;
    for_each_var(e, [&](const SymVar& v) { found = found || loop_mark_.contains(v); });
    return found;
  }

  SymExpr simp(const SymExpr& e) { return analyzer_.simplify(e); }
  bool equal(const SymExpr& a, const SymExpr& b) { return analyzer_.prove_equal(a, b); }
  bool is_zero(const SymExpr& e) { return equal(e, 0); }
  bool is_one(const SymExpr& e) { return equal(e, 1); }
  /// b / a when a divides b exactly.
  std::optional<SymExpr> quotient(const SymExpr& b, const SymExpr& a) {
    return analyzer_.exact_div(simp(b), simp(a));
  }

  /// The split (mark, lower, extent), interned; nullopt for an extent of 1 (always 0).
  std::optional<int> split(int mark, const SymExpr& lower, const SymExpr& extent) {
    if (is_one(extent)) return std::nullopt;
    for (int id : marks_[mark].splits) {
      if (equal(splits_[id].lower, lower) && equal(splits_[id].extent, extent)) return id;
    }
    Split s;
    s.mark = mark;
    s.lower = simp(lower);
    s.extent = simp(extent);
    s.value = spell(mark, s.lower, s.extent);
    const int id = static_cast<int>(splits_.size());
    splits_.push_back(std::move(s));
    marks_[mark].splits.push_back(id);
    return id;
  }

  /// A split's value in its shortest form.
  SymExpr spell(int mark, const SymExpr& lower, const SymExpr& extent) {
    const Mark& m = marks_[mark];
    const bool bottom = is_one(lower);
    const bool top = equal(lower * extent, m.extent);
    if (bottom && top) return m.source;
    if (top) return floordiv(m.source, lower);
    if (bottom) return floormod(m.source, extent);
    return floormod(floordiv(m.source, lower), extent);
  }

  std::string describe(int split) const {
    return absl::StrCat(quoted(splits_[split].value), " of ", quoted(marks_[splits_[split].mark].source));
  }

  /// Reads a simplified expression into a Sum, or the reason it cannot be read.
  absl::StatusOr<Sum> read(const SymExpr& e) {
    if (!uses_loop(e)) return Sum{{}, e};
    switch (e.kind()) {
      case SymKind::kVar: {
        const int mark = loop_mark_.at(SymVar::from_expr(e));
        Sum sum;
        if (auto id = split(mark, 1, marks_[mark].extent)) sum.terms.push_back(Term{*id, SymExpr(1)});
        return sum;
      }
      case SymKind::kAdd:
      case SymKind::kSub: {
        absl::StatusOr<Sum> a = read(e.operand(0));
        if (!a.ok()) return a;
        absl::StatusOr<Sum> b = read(e.operand(1));
        if (!b.ok()) return b;
        return add(*a, *b, e.kind() == SymKind::kSub ? -1 : 1);
      }
      case SymKind::kMul: {
        absl::StatusOr<Sum> a = read(e.operand(0));
        if (!a.ok()) return a;
        absl::StatusOr<Sum> b = read(e.operand(1));
        if (!b.ok()) return b;
        if (!a->terms.empty() && !b->terms.empty()) {
          return not_affine(absl::StrCat(quoted(e), " multiplies two loop-dependent factors"));
        }
        return a->terms.empty() ? scale(*b, a->offset) : scale(*a, b->offset);
      }
      case SymKind::kFloorDiv:
      case SymKind::kFloorMod: {
        if (uses_loop(e.operand(1))) {
          return not_affine(absl::StrCat(quoted(e), " divides by a loop-dependent divisor"));
        }
        absl::StatusOr<Sum> a = read(e.operand(0));
        if (!a.ok()) return a;
        return divide(*a, e.operand(1), e.kind() == SymKind::kFloorMod, e);
      }
      default:
        return not_affine(absl::StrCat(quoted(e), " uses a loop variable under ",
                                       std::string(sym_kind_name(e.kind())), ", which is not affine"));
    }
  }

  /// An index read as a Sum whose terms are a mixed radix with smallest scale 1,
  /// by increasing scale; or the reason it is not.
  absl::StatusOr<Sum> read_index(const SymExpr& e) {
    absl::StatusOr<Sum> sum = read(e);
    if (!sum.ok() || sum->terms.empty()) return sum;
    absl::StatusOr<std::vector<Term>> radix = mixed_radix(sum->terms, e);
    if (!radix.ok()) return radix.status();
    if (!is_one(radix->front().scale)) {
      return not_affine(absl::StrCat("its smallest scale is ", quoted(radix->front().scale),
                                     ", not 1, so it skips values"));
    }
    sum->terms = std::move(*radix);
    return sum;
  }

  /// The terms of `terms` ordered as a mixed radix (each scale the previous
  /// scale times the previous extent, all positive), or the reason they are not.
  absl::StatusOr<std::vector<Term>> mixed_radix(std::vector<Term> terms, const SymExpr& where) {
    for (const Term& t : terms) {
      if (!analyzer_.prove(t.scale >= 1)) {
        return not_affine(absl::StrCat(quoted(where), ": the scale ", quoted(t.scale), " of ",
                                       describe(t.split), " is not proven positive"));
      }
    }
    auto top = [&](const Term& t) { return simp(t.scale * splits_[t.split].extent); };
    // The first term is the one whose scale no other term ends at.
    std::optional<size_t> first;
    for (size_t i = 0; i < terms.size(); ++i) {
      bool continues = false;
      for (size_t j = 0; j < terms.size() && !continues; ++j) {
        continues = j != i && equal(terms[i].scale, top(terms[j]));
      }
      if (continues) continue;
      if (first) {
        return not_affine(absl::StrCat(quoted(where), ": the terms ", describe(terms[*first].split),
                                       " and ", describe(terms[i].split),
                                       " do not form a mixed radix (neither scale is where "
                                       "another term's range ends)"));
      }
      first = i;
    }
    if (!first) {
      return not_affine(absl::StrCat(quoted(where), ": the terms do not form a mixed radix"));
    }
    std::vector<Term> ordered{terms[*first]};
    terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(*first));
    while (!terms.empty()) {
      const SymExpr expected = top(ordered.back());
      auto next = std::find_if(terms.begin(), terms.end(),
                               [&](const Term& t) { return equal(t.scale, expected); });
      if (next == terms.end()) {
        return not_affine(absl::StrCat(quoted(where), ": no term has scale ", quoted(expected),
                                       ", where ", describe(ordered.back().split),
                                       " ends, so the terms do not form a mixed radix"));
      }
      ordered.push_back(*next);
      terms.erase(next);
    }
    return ordered;
  }

 private:
  absl::StatusOr<Sum> add(const Sum& a, const Sum& b, int64_t sign) {
    Sum sum = a;
    sum.offset = simp(a.offset + b.offset * sign);
    for (const Term& t : b.terms) {
      const SymExpr scaled = simp(t.scale * sign);
      auto same = std::find_if(sum.terms.begin(), sum.terms.end(),
                               [&](const Term& u) { return u.split == t.split; });
      if (same == sum.terms.end()) {
        sum.terms.push_back(Term{t.split, scaled});
      } else {
        same->scale = simp(same->scale + scaled);
        if (is_zero(same->scale)) sum.terms.erase(same);
      }
    }
    return sum;
  }

  absl::StatusOr<Sum> scale(Sum sum, const SymExpr& factor) {
    sum.offset = simp(sum.offset * factor);
    for (Term& t : sum.terms) t.scale = simp(t.scale * factor);
    if (is_zero(factor)) sum.terms.clear();
    return sum;
  }

  /// floormod(floordiv(mark, lower), extent) as a sum of splits: of the
  /// fused sum's terms where the piece's digit range [lower, lower*extent)
  /// meets each term's range at proven multiples (floordiv(i*4 + j, 8) with j
  /// in [0, 4) is floordiv(i, 2); floormod(i*4 + j, 8) is floormod(i, 2)*4 + j),
  /// otherwise the one split of `mark` itself.
  std::vector<Term> piece(int mark, const SymExpr& lower, const SymExpr& extent) {
    if (std::optional<std::vector<Term>> flat = flatten(mark, lower, extent)) return *flat;
    if (std::optional<int> id = split(mark, lower, extent)) return {Term{*id, SymExpr(1)}};
    return {};
  }

  std::optional<std::vector<Term>> flatten(int mark, const SymExpr& lower, const SymExpr& extent) {
    const Mark m = marks_[mark];
    if (m.loop >= 0 || keep_whole_.contains(m.key)) return std::nullopt;
    std::optional<std::vector<Term>> flat = flatten_terms(m, lower, extent);
    if (!flat) newly_whole_.insert(m.key);
    return flat;
  }

  std::optional<std::vector<Term>> flatten_terms(const Mark& m, const SymExpr& lower, const SymExpr& extent) {
    const SymExpr top = simp(lower * extent);
    std::vector<Term> terms;
    for (size_t k = 0; k < m.components.size(); ++k) {
      const Split c = splits_[m.components[k]];
      const SymExpr& start = m.component_scales[k];  // the term covers [start, end)
      const SymExpr end = simp(start * c.extent);
      if (quotient(start, top) || quotient(lower, end)) continue;  // above or below the piece
      // The overlap [from, to) in the term's own digits, [1, c.extent) being all of it.
      SymExpr from = 1, to = c.extent, scale = 1;
      if (std::optional<SymExpr> inside = quotient(lower, start)) {
        from = *inside;  // the piece starts inside the term
      } else if (std::optional<SymExpr> above = quotient(start, lower)) {
        scale = *above;  // the term starts inside the piece
      } else {
        return std::nullopt;
      }
      if (std::optional<SymExpr> ends_inside = quotient(top, start); ends_inside && quotient(end, top)) {
        to = *ends_inside;
      } else if (!quotient(top, end)) {
        return std::nullopt;
      }
      std::optional<SymExpr> width = quotient(to, from);
      if (!width || !quotient(c.extent, to)) return std::nullopt;
      for (const Term& t : piece(c.mark, simp(c.lower * from), *width)) {
        terms.push_back(Term{t.split, simp(t.scale * scale)});
      }
    }
    return terms;
  }

  /// Scales that differ from `terms`' by multiples of `c` and form a mixed
  /// radix from 1, in some order of the terms; nullopt when none does. A
  /// remainder modulo c does not see the difference, and the simplifier
  /// reduces scales modulo c: floormod(i*3 + j, 2) reads back as
  /// floormod(i + j, 2), which is floormod(i*3 + j, 2) again for j in [0, 3).
  std::optional<std::vector<Term>> lift_modulo(const std::vector<Term>& terms, const SymExpr& c) {
    if (terms.size() > 4) return std::nullopt;  // at most 24 orders
    std::vector<size_t> order(terms.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    do {
      std::vector<Term> lifted;
      SymExpr radix = 1;
      for (size_t i : order) {
        const Term& t = terms[i];
        if (!equal(radix, t.scale) && !quotient(radix - t.scale, c)) break;
        lifted.push_back(Term{t.split, radix});
        radix = simp(radix * splits_[t.split].extent);
      }
      if (lifted.size() == terms.size()) return lifted;
    } while (std::next_permutation(order.begin(), order.end()));
    return std::nullopt;
  }

  /// The fused mark of a sum of several terms, interned by its terms.
  absl::StatusOr<Term> fuse(const std::vector<Term>& terms, const SymExpr& where) {
    absl::StatusOr<std::vector<Term>> ordered = mixed_radix(terms, where);
    if (!ordered.ok()) return ordered.status();
    const SymExpr base = ordered->front().scale;
    std::vector<int> components;
    std::vector<SymExpr> scales;
    SymExpr source = 0, extent = 1;
    for (const Term& t : *ordered) {
      // t.scale == base * (product of the extents before it): exact.
      std::optional<SymExpr> rel = quotient(t.scale, base);
      if (!rel) return not_affine(absl::StrCat(quoted(where), ": internal mixed-radix mismatch"));
      components.push_back(t.split);
      scales.push_back(*rel);
      source = source + splits_[t.split].value * *rel;
      extent = extent * splits_[t.split].extent;
    }
    int mark = -1;
    for (size_t m = 0; m < marks_.size() && mark < 0; ++m) {
      const Mark& candidate = marks_[m];
      if (candidate.components != components) continue;
      bool same = true;
      for (size_t i = 0; i < scales.size() && same; ++i) {
        same = equal(candidate.component_scales[i], scales[i]);
      }
      if (same) mark = static_cast<int>(m);
    }
    if (mark < 0) {
      Mark fused;
      fused.source = simp(source);
      fused.extent = simp(extent);
      fused.key = absl::StrCat(to_string(fused.source), " < ", to_string(fused.extent));
      fused.components = std::move(components);
      fused.component_scales = std::move(scales);
      mark = static_cast<int>(marks_.size());
      marks_.push_back(std::move(fused));
    }
    // A fused mark has at least two terms of extent >= 2, so its extent is not 1.
    const std::optional<int> whole = split(mark, 1, marks_[mark].extent);
    if (!whole) return not_affine(absl::StrCat(quoted(where), ": a fused sum of extent 1"));
    return Term{*whole, base};
  }

  absl::StatusOr<Sum> divide(const Sum& a, const SymExpr& divisor, bool mod, const SymExpr& where) {
    const SymExpr c = simp(divisor);
    if (!analyzer_.prove(c >= 1)) {
      return not_affine(absl::StrCat(quoted(where), ": the divisor ", quoted(c),
                                     " is not proven positive"));
    }
    SymExpr carried = 0;  // floordiv(x + c*q, c) == floordiv(x, c) + q
    if (!is_zero(a.offset)) {
      std::optional<SymExpr> q = quotient(a.offset, c);
      if (!q) {
        return not_affine(absl::StrCat(quoted(where), ": the offset ", quoted(a.offset),
                                       " is not a multiple of the divisor ", quoted(c)));
      }
      if (!mod) carried = *q;
    }
    if (a.terms.empty()) return Sum{{}, carried};
    Term one = a.terms.front();
    if (a.terms.size() > 1) {
      absl::StatusOr<Term> fused = fuse(a.terms, where);
      if (!fused.ok() && mod) {
        if (std::optional<std::vector<Term>> lifted = lift_modulo(a.terms, c)) fused = fuse(*lifted, where);
      }
      if (!fused.ok()) return fused.status();
      one = *fused;
    }
    // floordiv(x*s, c) and floormod(x*s, c) for the split x.
    if (std::optional<SymExpr> q = quotient(one.scale, c)) {  // s == c*q
      if (mod) return Sum{};
      return Sum{{Term{one.split, *q}}, carried};
    }
    std::optional<SymExpr> q = quotient(c, one.scale);  // c == s*q
    if (!q) {
      return not_affine(absl::StrCat(quoted(where), ": the scale ", quoted(one.scale), " of ",
                                     describe(one.split), " and the divisor ", quoted(c),
                                     " are not multiples of one another"));
    }
    const Split x = splits_[one.split];
    if (std::optional<SymExpr> above = quotient(x.extent, *q)) {
      Sum result;
      result.offset = carried;
      const std::vector<Term> part = mod ? piece(x.mark, x.lower, *q)
                                         : piece(x.mark, simp(x.lower * *q), *above);
      for (const Term& t : part) {
        result.terms.push_back(Term{t.split, mod ? simp(t.scale * one.scale) : t.scale});
      }
      return result;
    }
    if (analyzer_.prove(x.extent <= *q)) {  // x < q: floordiv is 0, floormod is x
      if (mod) return Sum{{one}, SymExpr(0)};
      return Sum{{}, carried};
    }
    return not_affine(absl::StrCat(quoted(where), ": the extent ", quoted(x.extent), " of ",
                                   describe(one.split), " is not a multiple of ", quoted(*q)));
  }

  Analyzer analyzer_;
  const absl::flat_hash_set<std::string>& keep_whole_;
  absl::flat_hash_set<std::string> newly_whole_;
  SymVarMap<int> loop_mark_;
  std::vector<Mark> marks_;
  std::vector<Split> splits_;
};

/// The first finite bounds of `e`, for binding a variable known to lie in it.
void bind_to(Analyzer& analyzer, const SymVar& var, const SymExpr& lo, const SymExpr& hi) {
  if (analyzer.var_bound(var) != ConstIntBound::everything()) return;
  absl::StatusOr<int64_t> l = analyzer.lower_bound(lo);
  absl::StatusOr<int64_t> h = analyzer.upper_bound(hi);
  analyzer.bind(var, l.ok() ? *l : ConstIntBound::kNegInf, h.ok() ? *h : ConstIntBound::kPosInf);
}

/// The analyzer with each loop variable bound to [0, upper bound of its extent - 1].
Analyzer with_loops(const Analyzer& analyzer, const std::vector<LoopRange>& loops) {
  Analyzer copy = analyzer;
  for (const LoopRange& loop : loops) bind_to(copy, loop.var, SymExpr(0), loop.extent - 1);
  return copy;
}

absl::Status check_loops(const std::vector<LoopRange>& loops) {
  for (size_t k = 0; k < loops.size(); ++k) {
    const LoopRange& loop = loops[k];
    if (loop.var.dtype() != DataType::int64()) {
      return absl::InvalidArgumentError(absl::StrCat("iteration map: loop ", k, " (",
                                                     loop.var.name(), ") has dtype ",
                                                     loop.var.dtype().to_string(), ", expected int64"));
    }
    if (!loop.extent.defined() || loop.extent.dtype() != DataType::int64()) {
      return absl::InvalidArgumentError(absl::StrCat("iteration map: the extent of loop ", k, " (",
                                                     loop.var.name(), ") is not an int64 expression"));
    }
    for (size_t j = 0; j < loops.size(); ++j) {
      if (j != k && loops[j].var.same_as(loop.var)) {
        return absl::InvalidArgumentError(absl::StrCat("iteration map: loop variable ",
                                                       loop.var.name(), " is listed twice (loops ",
                                                       std::min(j, k), " and ", std::max(j, k), ")"));
      }
      bool uses = false;
      for_each_var(loop.extent, [&](const SymVar& v) { uses = uses || v.same_as(loops[j].var); });
      if (uses) {
        return absl::InvalidArgumentError(absl::StrCat(
            "iteration map: the extent `", to_string(loop.extent), "` of loop ", loop.var.name(),
            " uses the loop variable ", loops[j].var.name(), "; extents must not depend on loops"));
      }
    }
  }
  return absl::OkStatus();
}

/// Sets state.kind and state.reason from the uses of the splits (stages 3 and 4).
void classify(Detector& d, IterMap::State& state) {
  std::vector<Mark>& marks = d.marks();
  std::vector<Split>& splits = d.splits();
  for (size_t k = 0; k < state.index_terms.size(); ++k) {
    for (const Term& t : state.index_terms[k]) splits[t.split].users.push_back(static_cast<int>(k));
  }
  auto used = [&](const Mark& m) {
    return std::any_of(m.splits.begin(), m.splits.end(),
                       [&](int id) { return !splits[id].users.empty(); });
  };
  for (size_t m = marks.size(); m-- > 0;) {
    if (marks[m].loop >= 0 || !used(marks[m])) continue;
    for (int c : marks[m].components) splits[c].users.push_back(-static_cast<int>(m) - 1);
  }
  state.kind = IterMapKind::kBijective;
  auto surjective_only = [&](std::string why) {
    if (state.kind == IterMapKind::kBijective) {
      state.kind = IterMapKind::kSurjective;
      state.reason = std::move(why);
    }
  };
  auto user_name = [&](int user) {
    return user >= 0 ? absl::StrCat("index ", user)
                     : absl::StrCat("the fused sum ", quoted(marks[static_cast<size_t>(-user - 1)].source));
  };
  for (size_t id = 0; id < splits.size(); ++id) {
    const std::vector<int>& users = splits[id].users;
    if (users.size() > 1) {
      state.kind = IterMapKind::kNone;
      state.reason = absl::StrCat(user_name(users[1]), ": split ", d.describe(static_cast<int>(id)),
                                  " is used twice (also by ", user_name(users[0]), ")");
      return;
    }
  }
  for (size_t m = 0; m < marks.size(); ++m) {
    const Mark& mark = marks[m];
    if (!used(mark)) {
      if (mark.loop >= 0 && !d.is_one(mark.extent)) {
        surjective_only(absl::StrCat("loop ", quoted(mark.source), " is not used by any index"));
      }
      continue;
    }
    std::vector<int> rest;
    for (int id : mark.splits) {
      if (!splits[id].users.empty()) rest.push_back(id);
    }
    SymExpr reached = 1;  // the used splits cover the factors below `reached`
    while (!rest.empty()) {
      // The next split starts at a multiple of `reached`, and every other one
      // starts at a multiple of where it ends.
      auto next = std::find_if(rest.begin(), rest.end(), [&](int id) {
        if (!d.quotient(splits[id].lower, reached)) return false;
        const SymExpr end = d.simp(splits[id].lower * splits[id].extent);
        return std::all_of(rest.begin(), rest.end(),
                           [&](int other) { return other == id || d.quotient(splits[other].lower, end); });
      });
      if (next == rest.end()) {
        state.kind = IterMapKind::kNone;
        state.reason = rest.size() >= 2
                           ? absl::StrCat("splits ", d.describe(rest[0]), " and ",
                                          quoted(splits[rest[1]].value), " overlap or are not nested")
                           : absl::StrCat("split ", d.describe(rest[0]), " does not start at a multiple of ",
                                          quoted(reached));
        return;
      }
      const Split& s = splits[*next];
      if (!d.equal(s.lower, reached)) {
        const SymExpr gap = *d.quotient(s.lower, reached);
        surjective_only(absl::StrCat(quoted(d.spell(static_cast<int>(m), reached, gap)), " of ",
                                     quoted(mark.source), " is not used by any index"));
      }
      reached = d.simp(s.lower * s.extent);
      rest.erase(next);
    }
    std::optional<SymExpr> above = d.quotient(mark.extent, reached);
    if (!above) {
      state.kind = IterMapKind::kNone;
      state.reason = absl::StrCat("the splits of ", quoted(mark.source), " reach ", quoted(reached),
                                  ", which does not divide its extent ", quoted(mark.extent));
      return;
    }
    if (!d.is_one(*above)) {
      surjective_only(absl::StrCat(quoted(floordiv(mark.source, reached)), " of ", quoted(mark.source),
                                   " is not used by any index"));
    }
  }
}

}  // namespace

IterMapKind IterMap::kind() const { return state_->kind; }
const std::string& IterMap::reason() const { return state_->reason; }
const std::vector<IterIndex>& IterMap::indices() const { return state_->indices; }

std::vector<SymExpr> IterMap::extents() const {
  std::vector<SymExpr> out;
  for (const IterIndex& index : state_->indices) out.push_back(index.extent);
  return out;
}

std::vector<SymExpr> IterMap::offsets() const {
  std::vector<SymExpr> out;
  for (const IterIndex& index : state_->indices) out.push_back(index.offset);
  return out;
}

std::string IterMap::to_string() const {
  std::ostringstream os;
  os << (kind() == IterMapKind::kBijective    ? "bijective"
         : kind() == IterMapKind::kSurjective ? "surjective"
                                              : "none");
  if (!reason().empty()) os << " (" << reason() << ")";
  for (size_t k = 0; k < indices().size(); ++k) {
    const IterIndex& index = indices()[k];
    os << "\n  index " << k << ": extent " << index.extent << ", offset " << index.offset << " =";
    if (index.splits.empty()) os << " 0";
    for (size_t i = 0; i < index.splits.size(); ++i) {
      os << (i ? " + " : " ") << index.splits[i].value << " * " << index.splits[i].scale;
    }
  }
  return os.str();
}

absl::StatusOr<std::vector<SymExpr>> IterMap::inverse(const std::vector<SymExpr>& values) const {
  const State& s = *state_;
  if (s.kind != IterMapKind::kBijective) {
    return absl::FailedPreconditionError(
        absl::StrCat("iteration map inverse: the map is not bijective: ", s.reason));
  }
  if (values.size() != s.indices.size()) {
    return absl::InvalidArgumentError(absl::StrCat("iteration map inverse: expected ",
                                                   s.indices.size(), " index values, got ",
                                                   values.size()));
  }
  Analyzer analyzer = s.analyzer;
  for (size_t k = 0; k < values.size(); ++k) {
    if (!values[k].defined() || values[k].dtype() != DataType::int64()) {
      return absl::InvalidArgumentError(
          absl::StrCat("iteration map inverse: index value ", k, " is not an int64 expression"));
    }
    if (values[k].is_var()) {
      bind_to(analyzer, SymVar::from_expr(values[k]), s.indices[k].offset,
              s.indices[k].offset + s.indices[k].extent - 1);
    }
  }
  std::vector<SymExpr> split_value(s.splits.size());
  // The splits of a mixed-radix sum `y` of `terms`, by increasing scale.
  auto unpack = [&](const SymExpr& y, const std::vector<int>& ids, const std::vector<SymExpr>& scales) {
    for (size_t j = 0; j < ids.size(); ++j) {
      SymExpr v = floordiv(y, scales[j]);
      if (j + 1 < ids.size()) v = floormod(v, s.splits[ids[j]].extent);
      split_value[ids[j]] = analyzer.simplify(v);
    }
  };
  for (size_t k = 0; k < values.size(); ++k) {
    std::vector<int> ids;
    std::vector<SymExpr> scales;
    for (const Term& t : s.index_terms[k]) {
      ids.push_back(t.split);
      scales.push_back(t.scale);
    }
    unpack(analyzer.simplify(values[k] - s.indices[k].offset), ids, scales);
  }
  std::vector<SymExpr> loop_values(s.loops.size(), SymExpr(0));
  for (size_t m = s.marks.size(); m-- > 0;) {
    const Mark& mark = s.marks[m];
    SymExpr value = 0;
    bool used = false;
    for (int id : mark.splits) {
      if (s.splits[id].users.empty()) continue;
      used = true;
      value = value + split_value[id] * s.splits[id].lower;
    }
    if (!used) continue;  // an unused loop of extent 1, or a fused sum no index uses
    value = analyzer.simplify(value);
    if (mark.loop >= 0) {
      loop_values[static_cast<size_t>(mark.loop)] = value;
    } else {
      unpack(value, mark.components, mark.component_scales);
    }
  }
  return loop_values;
}

absl::StatusOr<IterMap> detect_iter_map(const std::vector<SymExpr>& indices,
                                        const std::vector<LoopRange>& loops,
                                        const Analyzer& analyzer) {
  if (absl::Status st = check_loops(loops); !st.ok()) return st;
  for (size_t k = 0; k < indices.size(); ++k) {
    if (!indices[k].defined() || indices[k].dtype() != DataType::int64()) {
      return absl::InvalidArgumentError(
          absl::StrCat("iteration map: index ", k, " is not an int64 expression"));
    }
  }
  // A fused sum is read into the splits of its terms only when all its pieces
  // can be (stage 1); a piece that cannot marks the sum to be kept whole and
  // the reading starts again. Each round keeps at least one more sum whole.
  absl::flat_hash_set<std::string> keep_whole;
  while (true) {
    auto state = std::make_shared<IterMap::State>();
    state->loops = loops;
    Detector d(state->loops, with_loops(analyzer, loops), keep_whole);
    IterMap result;
    auto finish = [&](IterMapKind kind, std::string reason) {
      state->kind = kind;
      state->reason = std::move(reason);
      if (kind == IterMapKind::kNone) state->indices.clear();
      state->marks = d.marks();
      state->splits = d.splits();
      state->analyzer = d.analyzer();
      result.state_ = state;
      return result;
    };
    for (const Mark& mark : d.marks()) {
      if (!d.analyzer().prove(mark.extent >= 1)) {
        return finish(IterMapKind::kNone, absl::StrCat("the extent ", quoted(mark.extent), " of loop ",
                                                       quoted(mark.source), " is not proven >= 1"));
      }
    }
    std::string failure;
    for (size_t k = 0; k < indices.size() && failure.empty(); ++k) {
      absl::StatusOr<Sum> sum = d.read_index(indices[k]);
      if (!sum.ok()) {
        // The simplifier may have opened what the index hid (min(i, 100) for i < 50)...
        const SymExpr simplified = d.simp(indices[k]);
        absl::StatusOr<Sum> again =
            structural_equal(simplified, indices[k]) ? sum : d.read_index(simplified);
        // ...but the reason given is the one for the index as written.
        if (!again.ok()) {
          failure = absl::StrCat("index ", k, ": ", sum.status().message());
          break;
        }
        sum = std::move(again);
      }
      IterIndex index;
      index.offset = d.simp(sum->offset);
      index.extent = 1;
      for (const Term& t : sum->terms) {
        const Split& s = d.splits()[static_cast<size_t>(t.split)];
        const Mark& m = d.marks()[static_cast<size_t>(s.mark)];
        index.splits.push_back(IterSplit{m.source, m.loop, m.extent, s.lower, s.extent, t.scale, s.value});
        index.extent = index.extent * s.extent;
      }
      index.extent = d.simp(index.extent);
      state->indices.push_back(std::move(index));
      state->index_terms.push_back(sum->terms);
    }
    if (!d.newly_whole().empty()) {
      keep_whole.insert(d.newly_whole().begin(), d.newly_whole().end());
      continue;
    }
    if (!failure.empty()) return finish(IterMapKind::kNone, std::move(failure));
    classify(d, *state);
    return finish(state->kind, state->reason);
  }
}

FusedLoops fuse_loops(const std::vector<LoopRange>& loops, const SymExpr& fused_value,
                      const Analyzer& analyzer) {
  Analyzer a = with_loops(analyzer, loops);
  FusedLoops out;
  SymExpr index = 0, extent = 1;
  for (const LoopRange& loop : loops) {
    index = index * loop.extent + loop.var;
    extent = extent * loop.extent;
  }
  out.index = a.simplify(index);
  out.extent = a.simplify(extent);
  if (fused_value.is_var()) bind_to(a, SymVar::from_expr(fused_value), SymExpr(0), out.extent - 1);
  // stride[k]: the product of the extents inside loop k.
  std::vector<SymExpr> stride(loops.size(), SymExpr(1));
  for (size_t k = loops.size(); k-- > 1;) stride[k - 1] = a.simplify(stride[k] * loops[k].extent);
  for (size_t k = 0; k < loops.size(); ++k) {
    SymExpr v = floordiv(fused_value, stride[k]);
    if (k > 0) v = floormod(v, loops[k].extent);
    out.loop_values.push_back(a.simplify(v));
  }
  return out;
}

}  // namespace relax
