// The last step of Analyzer::simplify: common factors of a canonical sum taken out.
//
// Two modes. By default a term counts for a factor only when its other atoms are variables:
// what the factor multiplies is then a plain polynomial, which no rewrite rule reads, so
// simplifying the factored form again gives the same canonical form. `compound` lifts that
// (n*floordiv(x, n)*n + n*floormod(x, n) -> (floordiv(x, n)*n + floormod(x, n)) * n): the sum
// inside may then simplify further on its own (here to x), so Analyzer::simplify keeps such a
// form only after simplifying it again gives back the canonical form it came from.
//
// The canonical form is a sum of monomials, so a symbolic factor of a sum is distributed:
// ((i*8 + j) * (n*4)) becomes i*n*32 + j*n*4, a few nodes larger than what a schedule wrote.
// This pass writes such sums back with the shared factor outside: a variable or atom that
// two or more terms of one sum have in common is taken out (the one most terms share
// first; ties go to the first in the canonical order), recursively inside and outside, and
// the constant content of what it multiplies too: i*n*32 + j*n*4 -> (i*8 + j)*n*4, and
// b*m*8192 + b*n*8192 -> (m + n)*b*8192.
//
// It reads the canonical form as Poly::to_expr writes it (terms a product of atoms times a
// constant, joined by + and -) and is a function of it, so equal values still give equal
// expressions (simplify's result stays canonical), and simplifying the factored form again
// gives it back (the canonical form distributes it to the same sum). Every rewrite removes
// nodes: a factor shared by k >= 2 terms costs two nodes and saves 2k.
//
// Coefficients are read and combined with int_math.h's checked arithmetic: a sum whose
// constants add past int64 (a + 9223372036854775807 + 16, kept so by the canonical form
// because they do not fold), or whose terms over a factor add past it (m*2 +
// m*9223372036854775807), is left as it is.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "shape/int_math.h"
#include "relax/shape/sym_expr.h"
#include "shape/simplify/rewrite/rewriter.h"
#include "shape/simplify/simplify.h"

namespace relax::shape_detail {
namespace {

// Small vectors: the sums this reads are a few terms of a few atoms.
using Atoms = absl::InlinedVector<SymExpr, 4>;

/// One term of a sum: coeff * the product of atoms (no atom a constant).
struct FlatTerm {
  Atoms atoms;
  int64_t coeff = 1;
};
using Terms = absl::InlinedVector<FlatTerm, 4>;

/// Whether a term may count for an atom when its other atoms are not all variables
/// (`compound`), and whether a group of such terms was taken out (`used`).
struct Mode {
  bool compound = false;
  bool used = false;
};

bool is_int64_sum(const SymExpr& e) {
  return e.dtype() == DataType::int64() && (e.kind() == SymKind::kAdd || e.kind() == SymKind::kSub);
}

/// `e` (a product as to_expr writes it: atoms, then possibly a constant) as a term; nullopt
/// for a shape this pass does not read.
std::optional<FlatTerm> read_term(const SymExpr& e, int64_t sign) {
  FlatTerm t;
  t.coeff = sign;
  absl::InlinedVector<const SymExpr*, 32> stack = {&e};
  while (!stack.empty()) {
    const SymExpr* x = stack.back();
    stack.pop_back();
    if (x->kind() == SymKind::kMul && x->dtype() == DataType::int64()) {
      stack.push_back(&x->operand(1));
      stack.push_back(&x->operand(0));
    } else if (std::optional<int64_t> c = x->as_const()) {
      // One constant factor per term; its magnitude then fits (INT64_MIN is refused).
      if (*c == INT64_MIN || (t.coeff != 1 && t.coeff != -1)) return std::nullopt;
      t.coeff *= *c;
    } else {
      t.atoms.push_back(*x);
    }
  }
  return t;
}

/// The terms and constant of the sum `e`; nullopt when it is not in the form to_expr writes,
/// or when its constants do not add up within int64 (or to INT64_MIN, which has no magnitude).
std::optional<std::pair<Terms, int64_t>> read_sum(const SymExpr& e) {
  Terms terms;
  int64_t constant = 0;
  // Walk the left spine: ((a + b) - c) + d.
  absl::InlinedVector<std::pair<const SymExpr*, int64_t>, 8> right;  // operands with their signs
  const SymExpr* x = &e;
  while (is_int64_sum(*x)) {
    right.push_back({&x->operand(1), x->kind() == SymKind::kAdd ? 1 : -1});
    x = &x->operand(0);
  }
  right.push_back({x, 1});
  for (auto it = right.rbegin(); it != right.rend(); ++it) {
    if (std::optional<int64_t> c = it->first->as_const()) {
      if (*c == INT64_MIN) return std::nullopt;
      std::optional<int64_t> sum = checked_add(constant, it->second * *c);
      if (!sum || *sum == INT64_MIN) return std::nullopt;
      constant = *sum;
      continue;
    }
    std::optional<FlatTerm> t = read_term(*it->first, it->second);
    if (!t) return std::nullopt;
    terms.push_back(std::move(*t));
  }
  return std::make_pair(std::move(terms), constant);
}

SymExpr product_of(const Atoms& atoms) {
  SymExpr p = atoms[0];
  for (size_t i = 1; i < atoms.size(); ++i) p = p * atoms[i];
  return p;
}

/// Whether two atoms are the same expression (identity, then the cached hash, first).
bool same_atom(const SymExpr& a, const SymExpr& b) {
  return a.same_as(b) || (a->hash() == b->hash() && structural_equal(a, b));
}

/// The index in `atoms` of an atom structurally equal to `a`, or -1.
int find_atom(const Atoms& atoms, const SymExpr& a) {
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (same_atom(atoms[i], a)) return static_cast<int>(i);
  }
  return -1;
}

std::optional<SymExpr> write_sum(Terms terms, int64_t constant, Mode& mode);

/// a + b with b's sum spelled out term by term: `a + y + 2`, not `a + (y + 2)`.
SymExpr plus(const SymExpr& a, const SymExpr& b) {
  if (!is_int64_sum(b)) return a + b;
  const SymExpr left = plus(a, b.operand(0));
  return b.kind() == SymKind::kAdd ? left + b.operand(1) : left - b.operand(1);
}

/// The terms with the factor `g` (> 1) of their coefficients and of the constant taken out;
/// nullopt when a coefficient or the constant is INT64_MIN (no magnitude) or a sum inside
/// overflows.
std::optional<SymExpr> with_content_out(Terms terms, int64_t constant, Mode& mode) {
  std::optional<int64_t> g = checked_abs(constant);
  for (const FlatTerm& t : terms) {
    std::optional<int64_t> magnitude = checked_abs(t.coeff);
    g = g && magnitude ? std::optional<int64_t>(std::gcd(*g, *magnitude)) : std::nullopt;
  }
  if (!g) return std::nullopt;
  if (*g <= 1 || terms.size() + (constant != 0 ? 1 : 0) < 2) return write_sum(std::move(terms), constant, mode);
  for (FlatTerm& t : terms) t.coeff /= *g;  // *g > 1
  std::optional<SymExpr> inner = write_sum(std::move(terms), constant / *g, mode);
  if (!inner) return std::nullopt;
  return *inner * SymExpr(*g);
}

/// A term as written: its atoms, then its coefficient (of magnitude `coeff`'s).
SymExpr write_term(const FlatTerm& t, int64_t magnitude) {
  if (t.atoms.empty()) return SymExpr(magnitude);
  SymExpr p = product_of(t.atoms);
  return magnitude == 1 ? p : p * SymExpr(magnitude);
}

/// The sum written back, with shared atoms taken out (see the top of this file); nullopt
/// when the terms over a shared factor add up past int64 (then the sum is kept as it is).
std::optional<SymExpr> write_sum(Terms terms, int64_t constant, Mode& mode) {
  // The atom most terms share (each term counted once), the first met on a tie. A term
  // counts for an atom only when its other atoms are variables: what the factor multiplies
  // is then a plain polynomial, which no rewrite rule reads, so simplifying the factored form
  // again meets the same sums as the first time and gives it back.
  auto others_are_vars = [](const FlatTerm& t, const SymExpr& a) {
    bool skipped = false;
    for (const SymExpr& x : t.atoms) {
      if (!skipped && same_atom(x, a)) {
        skipped = true;
      } else if (!x.is_var()) {
        return false;
      }
    }
    return true;
  };
  auto eligible = [&](const FlatTerm& t, const SymExpr& a) { return mode.compound || others_are_vars(t, a); };
  absl::InlinedVector<std::pair<SymExpr, int>, 8> counts;
  for (const FlatTerm& t : terms) {
    Atoms seen;
    for (const SymExpr& a : t.atoms) {
      if (find_atom(seen, a) >= 0 || !eligible(t, a)) continue;
      seen.push_back(a);
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&](const auto& entry) { return same_atom(entry.first, a); });
      if (it == counts.end()) {
        counts.push_back({a, 1});
      } else {
        ++it->second;
      }
    }
  }
  const std::pair<SymExpr, int>* best = nullptr;
  for (const auto& entry : counts) {
    if (entry.second >= 2 && (best == nullptr || entry.second > best->second)) best = &entry;
  }
  if (best != nullptr) {
    const SymExpr factor = best->first;
    Terms with, rest;
    for (FlatTerm& t : terms) {
      const int at = find_atom(t.atoms, factor);
      if (at < 0 || !eligible(t, factor)) {
        rest.push_back(std::move(t));
        continue;
      }
      mode.used = mode.used || !others_are_vars(t, factor);
      t.atoms.erase(t.atoms.begin() + at);
      with.push_back(std::move(t));
    }
    // The other atoms every one of them holds come out with it (b*d*m*2 + b*d*n*2: b and d
    // together, not b then d inside).
    Atoms factors = {factor};
    if (std::all_of(with.begin(), with.end(), [](const FlatTerm& t) { return !t.atoms.empty(); })) {
      for (size_t i = 0; i < with[0].atoms.size();) {
        const SymExpr x = with[0].atoms[i];
        bool everywhere = true;
        for (size_t k = 1; k < with.size() && everywhere; ++k) everywhere = find_atom(with[k].atoms, x) >= 0;
        if (!everywhere || std::all_of(with.begin(), with.end(), [](const FlatTerm& t) { return t.atoms.size() == 1; })) {
          ++i;
          continue;
        }
        for (FlatTerm& t : with) t.atoms.erase(t.atoms.begin() + find_atom(t.atoms, x));
        factors.push_back(x);
      }
    }
    // A term that was the factor times a constant is the constant of what it multiplies.
    std::optional<int64_t> with_constant = 0;
    with.erase(std::remove_if(with.begin(), with.end(),
                              [&](const FlatTerm& t) {
                                if (!t.atoms.empty()) return false;
                                if (with_constant) with_constant = checked_add(*with_constant, t.coeff);
                                return true;
                              }),
               with.end());
    if (!with_constant) return std::nullopt;
    // All of them negative: subtract the factored sum of their negations.
    const bool negative = *with_constant <= 0 &&
                          std::all_of(with.begin(), with.end(), [](const FlatTerm& t) { return t.coeff < 0; });
    if (negative) {
      for (FlatTerm& t : with) {
        std::optional<int64_t> magnitude = checked_neg(t.coeff);
        if (!magnitude) return std::nullopt;
        t.coeff = *magnitude;
      }
      with_constant = checked_neg(*with_constant);
      if (!with_constant) return std::nullopt;
    }
    std::optional<SymExpr> written_inner = with_content_out(std::move(with), *with_constant, mode);
    if (!written_inner) return std::nullopt;
    const SymExpr inner = *std::move(written_inner);
    // (inner) * factors, with inner's constant factor kept last: (i*8 + j)*n*4.
    const bool constant_last = inner.kind() == SymKind::kMul && inner.operand(1).as_const();
    SymExpr product = constant_last ? inner.operand(0) : inner;
    for (const SymExpr& f : factors) product = product * f;
    if (constant_last) product = product * inner.operand(1);
    if (rest.empty() && constant == 0) return negative ? SymExpr(0) - product : product;
    std::optional<SymExpr> others = write_sum(std::move(rest), constant, mode);
    if (!others) return std::nullopt;
    return negative ? *others - product : plus(product, *others);
  }
  // No shared atom: the canonical order (positive terms, then negative ones, the constant
  // last, as Poly::to_expr writes them).
  SymExpr sum;
  for (const FlatTerm& t : terms) {
    if (t.coeff > 0) sum = sum.defined() ? sum + write_term(t, t.coeff) : write_term(t, t.coeff);
  }
  const bool constant_leads = !sum.defined() && constant != 0;
  if (constant_leads) sum = SymExpr(constant);
  for (const FlatTerm& t : terms) {
    if (t.coeff >= 0) continue;
    std::optional<int64_t> magnitude = checked_neg(t.coeff);
    if (!magnitude) return std::nullopt;
    sum = sum.defined() ? sum - write_term(t, *magnitude) : write_term(t, t.coeff);
  }
  if (!sum.defined()) return SymExpr(constant);
  if (constant_leads || constant == 0) return sum;
  if (constant > 0) return sum + SymExpr(constant);
  std::optional<int64_t> magnitude = checked_neg(constant);
  if (!magnitude) return std::nullopt;
  return sum - SymExpr(*magnitude);
}

/// Whether some atom (a variable, most often: compared by identity first) is in two terms.
bool has_shared_atom(const Terms& terms) {
  for (size_t i = 0; i < terms.size(); ++i) {
    for (const SymExpr& a : terms[i].atoms) {
      for (size_t j = i + 1; j < terms.size(); ++j) {
        for (const SymExpr& b : terms[j].atoms) {
          if (same_atom(a, b)) return true;
        }
      }
    }
  }
  return false;
}


// Beyond these the expression is left as it is: the pass recurses over the nesting of
// operators, and compares the atoms of a sum pairwise.
constexpr uint32_t kMaxDepth = 256;
constexpr size_t kMaxTerms = 64;

SymExpr factor(const SymExpr& e, Mode& mode) {
  if (e.num_operands() == 0 || e->depth() > kMaxDepth) return e;
  // Operands first (the numerator of a floordiv, the sides of a comparison, a min's
  // operands, the atoms of a sum).
  std::vector<SymExpr> operands;
  bool changed = false;
  if (is_int64_sum(e)) {
    std::optional<std::pair<Terms, int64_t>> sum = read_sum(e);
    if (!sum || sum->first.size() > kMaxTerms) return e;
    bool atoms_changed = false;
    for (FlatTerm& t : sum->first) {
      for (SymExpr& a : t.atoms) {
        if (a.num_operands() == 0) continue;
        SymExpr factored = factor(a, mode);
        atoms_changed = atoms_changed || !factored.same_as(a);
        a = std::move(factored);
      }
    }
    // Most sums share no variable between terms: then nothing is built.
    if (!has_shared_atom(sum->first)) {
      if (!atoms_changed) return e;
      return write_sum(std::move(sum->first), sum->second, mode).value_or(e);
    }
    std::optional<SymExpr> written = write_sum(std::move(sum->first), sum->second, mode);
    // Only ever smaller (a form this pass did not foresee stays as it was).
    return written && rewrite_measure(*written).nodes < rewrite_measure(e).nodes ? *written : e;
  }
  operands.reserve(e.num_operands());
  for (size_t i = 0; i < e.num_operands(); ++i) {
    operands.push_back(factor(e.operand(i), mode));
    changed = changed || !operands.back().same_as(e.operand(i));
  }
  return changed ? e.with_operands(std::move(operands)) : e;
}

}  // namespace

SymExpr factor_common_atoms(const SymExpr& e, bool compound, bool* compound_used) {
  Mode mode{compound, false};
  SymExpr out = factor(e, mode);
  if (compound_used != nullptr) *compound_used = mode.used;
  return out;
}

}  // namespace relax::shape_detail
