// The last step of Analyzer::simplify: common factors of a canonical sum taken out.
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
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "relax/shape/sym_expr.h"
#include "simplify.h"

namespace relax::shape_detail {
namespace {

/// One term of a sum: coeff * the product of atoms (no atom a constant).
struct FlatTerm {
  std::vector<SymExpr> atoms;
  int64_t coeff = 1;
};

bool is_int64_sum(const SymExpr& e) {
  return e.dtype() == DataType::int64() && (e.kind() == SymKind::kAdd || e.kind() == SymKind::kSub);
}

/// `e` (a product as to_expr writes it: atoms, then possibly a constant) as a term; nullopt
/// for a shape this pass does not read.
std::optional<FlatTerm> read_term(const SymExpr& e, int64_t sign) {
  FlatTerm t;
  t.coeff = sign;
  std::vector<const SymExpr*> stack = {&e};
  while (!stack.empty()) {
    const SymExpr* x = stack.back();
    stack.pop_back();
    if (x->kind() == SymKind::kMul && x->dtype() == DataType::int64()) {
      stack.push_back(&x->operand(1));
      stack.push_back(&x->operand(0));
    } else if (std::optional<int64_t> c = x->as_const()) {
      if (*c == INT64_MIN || (t.coeff != 1 && t.coeff != -1)) return std::nullopt;
      t.coeff *= *c;
    } else {
      t.atoms.push_back(*x);
    }
  }
  return t;
}

/// The terms and constant of the sum `e`; nullopt when it is not in the form to_expr writes.
std::optional<std::pair<std::vector<FlatTerm>, int64_t>> read_sum(const SymExpr& e) {
  std::vector<FlatTerm> terms;
  int64_t constant = 0;
  // Walk the left spine: ((a + b) - c) + d.
  std::vector<std::pair<const SymExpr*, int64_t>> right;  // operands with their signs
  const SymExpr* x = &e;
  while (is_int64_sum(*x)) {
    right.push_back({&x->operand(1), x->kind() == SymKind::kAdd ? 1 : -1});
    x = &x->operand(0);
  }
  right.push_back({x, 1});
  for (auto it = right.rbegin(); it != right.rend(); ++it) {
    if (std::optional<int64_t> c = it->first->as_const()) {
      if (*c == INT64_MIN) return std::nullopt;
      constant += it->second * *c;
      continue;
    }
    std::optional<FlatTerm> t = read_term(*it->first, it->second);
    if (!t) return std::nullopt;
    terms.push_back(std::move(*t));
  }
  return std::make_pair(std::move(terms), constant);
}

SymExpr product_of(const std::vector<SymExpr>& atoms) {
  SymExpr p = atoms[0];
  for (size_t i = 1; i < atoms.size(); ++i) p = p * atoms[i];
  return p;
}

/// The index in `atoms` of an atom structurally equal to `a`, or -1.
int find_atom(const std::vector<SymExpr>& atoms, const SymExpr& a) {
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (structural_equal(atoms[i], a)) return static_cast<int>(i);
  }
  return -1;
}

SymExpr write_sum(std::vector<FlatTerm> terms, int64_t constant);

/// a + b with b's sum spelled out term by term: `a + y + 2`, not `a + (y + 2)`.
SymExpr plus(const SymExpr& a, const SymExpr& b) {
  if (!is_int64_sum(b)) return a + b;
  const SymExpr left = plus(a, b.operand(0));
  return b.kind() == SymKind::kAdd ? left + b.operand(1) : left - b.operand(1);
}

/// The terms with the factor `g` (> 1) of their coefficients and of the constant taken out.
SymExpr with_content_out(std::vector<FlatTerm> terms, int64_t constant) {
  int64_t g = std::abs(constant);
  for (const FlatTerm& t : terms) g = std::gcd(g, std::abs(t.coeff));
  if (g <= 1 || terms.size() + (constant != 0 ? 1 : 0) < 2) return write_sum(std::move(terms), constant);
  for (FlatTerm& t : terms) t.coeff /= g;
  return write_sum(std::move(terms), constant / g) * SymExpr(g);
}

/// A term as written: its atoms, then its coefficient (of magnitude `coeff`'s).
SymExpr write_term(const FlatTerm& t, int64_t magnitude) {
  if (t.atoms.empty()) return SymExpr(magnitude);
  SymExpr p = product_of(t.atoms);
  return magnitude == 1 ? p : p * SymExpr(magnitude);
}

/// The sum written back, with shared atoms taken out (see the top of this file).
SymExpr write_sum(std::vector<FlatTerm> terms, int64_t constant) {
  // The atom most terms share (each term counted once), the first met on a tie. A term
  // counts for an atom only when its other atoms are variables: what the factor multiplies
  // is then a plain polynomial, which no rewrite rule reads, so simplifying the factored form
  // again meets the same sums as the first time and gives it back.
  auto others_are_vars = [](const FlatTerm& t, const SymExpr& a) {
    bool skipped = false;
    for (const SymExpr& x : t.atoms) {
      if (!skipped && structural_equal(x, a)) {
        skipped = true;
      } else if (!x.is_var()) {
        return false;
      }
    }
    return true;
  };
  std::vector<std::pair<SymExpr, int>> counts;
  for (const FlatTerm& t : terms) {
    std::vector<SymExpr> seen;
    for (const SymExpr& a : t.atoms) {
      if (find_atom(seen, a) >= 0 || !others_are_vars(t, a)) continue;
      seen.push_back(a);
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&](const auto& entry) { return structural_equal(entry.first, a); });
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
    std::vector<FlatTerm> with, rest;
    for (FlatTerm& t : terms) {
      const int at = find_atom(t.atoms, factor);
      if (at < 0 || !others_are_vars(t, factor)) {
        rest.push_back(std::move(t));
        continue;
      }
      t.atoms.erase(t.atoms.begin() + at);
      with.push_back(std::move(t));
    }
    // A term that was the factor times a constant is the constant of what it multiplies.
    int64_t with_constant = 0;
    std::erase_if(with, [&](const FlatTerm& t) {
      if (!t.atoms.empty()) return false;
      with_constant += t.coeff;
      return true;
    });
    // All of them negative: subtract the factored sum of their negations.
    const bool negative = with_constant <= 0 &&
                          std::all_of(with.begin(), with.end(), [](const FlatTerm& t) { return t.coeff < 0; });
    if (negative) {
      for (FlatTerm& t : with) t.coeff = -t.coeff;
    }
    SymExpr inner = with_content_out(std::move(with), negative ? -with_constant : with_constant);
    // (inner) * factor, with inner's constant factor kept last: (i*8 + j)*n*4.
    SymExpr product;
    if (inner.kind() == SymKind::kMul && inner.operand(1).as_const()) {
      product = inner.operand(0) * factor * inner.operand(1);
    } else {
      product = inner * factor;
    }
    if (rest.empty() && constant == 0) return negative ? SymExpr(0) - product : product;
    SymExpr others = write_sum(std::move(rest), constant);
    return negative ? others - product : plus(product, others);
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
    sum = sum.defined() ? sum - write_term(t, -t.coeff) : write_term(t, t.coeff);
  }
  if (!sum.defined()) return SymExpr(constant);
  if (constant_leads || constant == 0) return sum;
  return constant > 0 ? sum + SymExpr(constant) : sum - SymExpr(-constant);
}

/// The number of nodes of `e`.
int64_t node_count(const SymExpr& e) {
  int64_t n = 0;
  std::vector<const SymExpr*> stack = {&e};
  while (!stack.empty()) {
    const SymExpr* x = stack.back();
    stack.pop_back();
    ++n;
    for (size_t i = 0; i < x->num_operands(); ++i) stack.push_back(&x->operand(i));
  }
  return n;
}

// Beyond these the expression is left as it is: the pass recurses over the nesting of
// operators, and compares the atoms of a sum pairwise.
constexpr uint32_t kMaxDepth = 256;
constexpr size_t kMaxTerms = 64;

}  // namespace

SymExpr factor_common_atoms(const SymExpr& e) {
  if (e.num_operands() == 0 || e->depth() > kMaxDepth) return e;
  // Operands first (the numerator of a floordiv, the sides of a comparison, a min's
  // operands, the atoms of a sum).
  std::vector<SymExpr> operands;
  bool changed = false;
  if (is_int64_sum(e)) {
    std::optional<std::pair<std::vector<FlatTerm>, int64_t>> sum = read_sum(e);
    if (!sum || sum->first.size() > kMaxTerms) return e;
    for (FlatTerm& t : sum->first) {
      for (SymExpr& a : t.atoms) a = factor_common_atoms(a);
    }
    SymExpr written = write_sum(std::move(sum->first), sum->second);
    // Only ever smaller (a form this pass did not foresee stays as it was).
    return node_count(written) < node_count(e) ? written : e;
  }
  operands.reserve(e.num_operands());
  for (size_t i = 0; i < e.num_operands(); ++i) {
    operands.push_back(factor_common_atoms(e.operand(i)));
    changed = changed || !operands.back().same_as(e.operand(i));
  }
  return changed ? e.with_operands(std::move(operands)) : e;
}

}  // namespace relax::shape_detail
