// Matching rule patterns against canonical forms, and applying the rules (rewriter.h).
//
// The matcher backtracks through continuations: each step calls `next` with the bindings it
// made, and returns whether the rest of the match (everything after it) succeeded; a step
// with several ways to match (either order of min(x, y), each target term for a pattern
// term) tries them in turn, each on its own copy of the bindings.
#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"

#include "shape/int_math.h"
#include "shape/simplify/rewrite/rewriter.h"
#include "shape/simplify/simplify.h"

namespace relax::shape_detail {
namespace {

/// What the pattern variables stand for so far: a few entries, copied at every choice the
/// matcher makes, so a small vector rather than a hash map.
class Bindings {
 public:
  using Entry = std::pair<SymVar, SymExpr>;
  const Entry* find(const SymVar& var) const {
    for (const Entry& e : entries_) {
      if (e.first.same_as(var)) return &e;
    }
    return nullptr;
  }
  const Entry* end() const { return nullptr; }
  void emplace(const SymVar& var, SymExpr value) { entries_.emplace_back(var, std::move(value)); }
  SymVarMap<SymExpr> to_map() const { return SymVarMap<SymExpr>(entries_.begin(), entries_.end()); }

 private:
  absl::InlinedVector<Entry, 6> entries_;
};
// Continuations are called while the frame that made them is alive: no ownership needed.
using Next = absl::FunctionRef<bool(Bindings&)>;

bool is_commutative(SymKind kind) { return sym_kind_info(kind).commutative; }

const SymExpr* bound_value(const Bindings& b, const SymExpr& var) {
  const Bindings::Entry* it = b.find(SymVar::from_expr(var));
  return it == nullptr ? nullptr : &it->second;
}

/// `q / k` when k divides every coefficient and the constant of q and every quotient fits
/// (INT64_MIN / -1 does not: then nullopt, and the rule does not match).
std::optional<Poly> divide_poly(const Poly& q, int64_t k) {
  if (k == 0) return std::nullopt;
  if (k == 1) return q;
  std::vector<Term> terms = q.terms();
  for (Term& t : terms) {
    std::optional<int64_t> coeff = exact_div(t.coeff, k);
    if (!coeff) return std::nullopt;
    t.coeff = *coeff;
  }
  std::optional<int64_t> constant = exact_div(q.constant_term(), k);
  if (!constant) return std::nullopt;
  return Poly::from_terms(std::move(terms), *constant);
}

class Matcher {
 public:
  Matcher(Simplifier& s, const CompiledRule& rule) : s_(s), rule_(rule) {}

  /// False when a conjunct of the rule's condition whose variables are all bound to constants
  /// (the conjuncts over constant pattern variables, and the others once what they match
  /// happens to be constant) is false or cannot be evaluated: the match is given up at once.
  bool constants_ok(const Bindings& b) const {
    return conjuncts_ok(rule_.when_constant, rule_.when_constant_vars, b) &&
           conjuncts_ok(rule_.when_general, rule_.when_general_vars, b);
  }

  /// Matches pattern `p` against the canonical expression `t`, then calls `next`.
  bool node(const SymExpr& p, const SymExpr& t, Bindings& b, const Next& next) {
    if (p.dtype() != t.dtype()) return false;
    if (p.is_var()) {
      if (!is_pattern_var(p)) return false;
      if (is_constant_pattern_var(p) && !t.as_const()) return false;
      if (const SymExpr* v = bound_value(b, p)) return structural_equal(*v, t) && next(b);
      Bindings copy = b;
      copy.emplace(SymVar::from_expr(p), t);
      if (t.as_const() && !constants_ok(copy)) return false;
      return next(copy);
    }
    if (auto c = p.as_const()) return t.as_const() == c && next(b);
    if (p.dtype() == DataType::int64() &&
        (p.kind() == SymKind::kAdd || p.kind() == SymKind::kSub || p.kind() == SymKind::kMul)) {
      return sum(sub_pattern_terms(p), s_.to_poly(t), /*keep_rest=*/false, b,
                 [&](Bindings& b2, const Poly&) { return next(b2); });
    }
    if (p.kind() != t.kind() || p.num_operands() != t.num_operands()) return false;
    if (p.num_operands() == 2) {
      auto in_order = [&](size_t first, size_t second) {
        return node(p.operand(0), t.operand(first), b, [&](Bindings& b1) {
          return node(p.operand(1), t.operand(second), b1, next);
        });
      };
      return in_order(0, 1) || (is_commutative(p.kind()) && in_order(1, 0));
    }
    return operands(p, t, 0, b, next);
  }

  using NextRest = absl::FunctionRef<bool(Bindings&, const Poly& rest)>;

  /// Matches the pattern terms (in pattern_terms' order) against the Poly `t`; with
  /// `keep_rest`, what no pattern term takes is handed to `next` (otherwise it must be
  /// nothing). A target of more than 64 terms is not matched.
  bool sum(const std::vector<PatternTerm>& terms, const Poly& t, bool keep_rest, Bindings& b,
           const NextRest& next) {
    if (t.terms().size() > 64) return false;
    const State state{0, t.constant_term()};
    return step(terms, 0, t, keep_rest, state, b, next);
  }

 private:
  /// The target terms taken so far (bit j: term j) and the constant left.
  struct State {
    uint64_t used;
    int64_t constant;
    bool is_used(size_t j) const { return (used >> j) & 1u; }
    void take(size_t j) { used |= uint64_t{1} << j; }
  };

  bool conjuncts_ok(const std::vector<SymExpr>& conjuncts, const std::vector<std::vector<SymVar>>& vars,
                    const Bindings& b) const {
    for (size_t i = 0; i < conjuncts.size(); ++i) {
      values_.clear();  // keeps its storage: this runs at every binding made
      bool all_constant = true;
      for (const SymVar& v : vars[i]) {
        const Bindings::Entry* e = b.find(v);
        std::optional<int64_t> c = e == nullptr ? std::nullopt : e->second.as_const();
        if (!c) {
          all_constant = false;
          break;
        }
        values_.emplace(v, *c);
      }
      if (!all_constant) continue;
      absl::StatusOr<int64_t> value = evaluate(conjuncts[i], values_);
      if (!value.ok() || *value == 0) return false;
    }
    return true;
  }

  bool operands(const SymExpr& p, const SymExpr& t, size_t i, Bindings& b, const Next& next) {
    if (i == p.num_operands()) return next(b);
    return node(p.operand(i), t.operand(i), b,
                [&](Bindings& b1) { return operands(p, t, i + 1, b1, next); });
  }

  /// The coefficient of pattern term `pt` under `b`, or nullopt when it is an unbound
  /// constant variable.
  static std::optional<int64_t> coefficient(const PatternTerm& pt, const Bindings& b) {
    if (!pt.coeff_var.defined()) return pt.coeff;
    const SymExpr* v = bound_value(b, pt.coeff_var);
    if (v == nullptr) return std::nullopt;
    return checked_mul(pt.coeff, *v->as_const());
  }

  bool bind_constant(const SymExpr& var, int64_t value, Bindings& b) const {
    if (const SymExpr* v = bound_value(b, var)) return v->as_const() == value;
    b.emplace(SymVar::from_expr(var), SymExpr(value));
    return constants_ok(b);
  }

  /// The unused terms of `t` and the constant left, as a Poly.
  static Poly rest_of(const Poly& t, const State& state) {
    std::vector<Term> terms;
    for (size_t j = 0; j < t.terms().size(); ++j) {
      if (!state.is_used(j)) terms.push_back(t.terms()[j]);
    }
    return *Poly::from_terms(std::move(terms), state.constant);
  }

  bool step(const std::vector<PatternTerm>& order, size_t k, const Poly& t, bool keep_rest,
            const State& state, Bindings& b, const NextRest& next) {
    if (k == order.size()) {
      Poly rest = rest_of(t, state);
      if (!keep_rest && !(rest.is_constant() && rest.constant_term() == 0)) return false;
      return next(b, rest);
    }
    const PatternTerm& pt = order[k];
    if (!pt.body.defined()) {  // a constant term takes the target's constant
      int64_t value = state.constant;
      if (pt.coeff_var.defined()) {
        Bindings copy = b;
        std::optional<int64_t> bound = exact_div(value, pt.coeff);
        if (!bound || !bind_constant(pt.coeff_var, *bound, copy)) return false;
        State s = state;
        s.constant = 0;
        return step(order, k + 1, t, keep_rest, s, copy, next);
      }
      if (value != pt.coeff) return false;
      State s = state;
      s.constant = 0;
      return step(order, k + 1, t, keep_rest, s, b, next);
    }
    if (!is_pattern_var(pt.body)) {
      // One target term, of matching coefficient and body.
      for (size_t j = 0; j < t.terms().size(); ++j) {
        if (state.is_used(j)) continue;
        const Term& term = t.terms()[j];
        Bindings copy = b;
        if (std::optional<int64_t> c = coefficient(pt, copy)) {
          if (*c != term.coeff) continue;
        } else {
          std::optional<int64_t> bound = exact_div(term.coeff, pt.coeff);
          if (!bound || !bind_constant(pt.coeff_var, *bound, copy)) continue;
        }
        State s = state;
        s.take(j);
        const bool ok = node(pt.body, monomial_expr(term.atoms), copy, [&](Bindings& b1) {
          return step(order, k + 1, t, keep_rest, s, b1, next);
        });
        if (ok) return true;
      }
      return false;
    }
    // A pattern variable: its value's terms, or (unbound) all that is left.
    if (const SymExpr* v = bound_value(b, pt.body)) {
      const Poly value = s_.to_poly(*v);
      Bindings copy = b;
      std::optional<int64_t> c = coefficient(pt, copy);
      if (!c) {
        // x * c1 with x matched and c1 free: c1 is the ratio of a target term to x's first.
        if (value.terms().empty()) return false;
        const Term& first = value.terms()[0];
        for (size_t j = 0; j < t.terms().size() && !c; ++j) {
          const Term& term = t.terms()[j];
          if (state.is_used(j) || compare_monomials(term.atoms, first.atoms) != 0) continue;
          std::optional<int64_t> ratio = exact_div(term.coeff, first.coeff);
          std::optional<int64_t> bound = ratio ? exact_div(*ratio, pt.coeff) : std::nullopt;
          if (!bound || !bind_constant(pt.coeff_var, *bound, copy)) return false;
          c = ratio;
        }
        if (!c) return false;
      }
      std::optional<Poly> want = value.scaled(*c);
      if (!want) return false;
      State s = state;
      for (const Term& w : want->terms()) {
        bool found = false;
        for (size_t j = 0; j < t.terms().size() && !found; ++j) {
          if (s.is_used(j) || t.terms()[j].coeff != w.coeff ||
              compare_monomials(t.terms()[j].atoms, w.atoms) != 0) {
            continue;
          }
          s.take(j);
          found = true;
        }
        if (!found) return false;
      }
      std::optional<int64_t> left = checked_sub(s.constant, want->constant_term());
      if (!left) return false;
      s.constant = *left;
      return step(order, k + 1, t, keep_rest, s, copy, next);
    }
    // Unbound: it stands for the terms left (and the constant, unless a constant term of the
    // pattern takes that). With another unbound variable after it, `x * c1 + y` with c1 free
    // splits them: for each coefficient magnitude g left (largest first), x * c1 takes the
    // terms g divides, with c1 = g, and y the others.
    bool free_var_after = false;
    for (size_t later = k + 1; later < order.size(); ++later) {
      const PatternTerm& q = order[later];
      if (q.body.defined() && is_pattern_var(q.body) && !bound_value(b, q.body)) free_var_after = true;
    }
    std::optional<int64_t> c = coefficient(pt, b);
    if (free_var_after) {
      // With c1 already matched, the one candidate is c1 itself.
      std::vector<int64_t> magnitudes;
      if (c) {
        if (*c == 0 || *c == kNegInf) return false;
        magnitudes.push_back(std::abs(*c));
      } else {
        for (size_t j = 0; j < t.terms().size(); ++j) {
          if (!state.is_used(j) && t.terms()[j].coeff != kNegInf) magnitudes.push_back(std::abs(t.terms()[j].coeff));
        }
      }
      std::sort(magnitudes.rbegin(), magnitudes.rend());
      magnitudes.erase(std::unique(magnitudes.begin(), magnitudes.end()), magnitudes.end());
      for (int64_t g : magnitudes) {
        const int64_t divisor = c ? *c : g;  // a matched factor keeps its sign
        const std::optional<int64_t> g_over_coeff = exact_div(g, pt.coeff);
        if (!c && !g_over_coeff) continue;
        State s = state;
        std::vector<Term> taken;
        for (size_t j = 0; j < t.terms().size(); ++j) {
          if (s.is_used(j)) continue;
          std::optional<int64_t> quotient = exact_div(t.terms()[j].coeff, divisor);
          if (!quotient) continue;
          s.take(j);
          taken.push_back(Term{t.terms()[j].atoms, *quotient});
        }
        if (taken.empty()) continue;
        Bindings copy = b;
        if (!c && pt.coeff_var.defined() && !bind_constant(pt.coeff_var, *g_over_coeff, copy)) continue;
        SymExpr taken_value = Poly::from_terms(std::move(taken), 0)->to_expr();
        const bool constant = taken_value.as_const().has_value();
        copy.emplace(SymVar::from_expr(pt.body), std::move(taken_value));
        if (constant && !constants_ok(copy)) continue;
        if (step(order, k + 1, t, keep_rest, s, copy, next)) return true;
      }
      return false;
    }
    State s = state;
    std::vector<Term> left_terms;
    for (size_t j = 0; j < t.terms().size(); ++j) {
      if (!state.is_used(j)) left_terms.push_back(t.terms()[j]);
    }
    // (the pattern's constant term, when it has one, is last and takes the constant)
    const int64_t taken_constant = !order.back().body.defined() ? 0 : state.constant;
    Poly rest = *Poly::from_terms(std::move(left_terms), taken_constant);
    if (rest.is_constant() && rest.constant_term() == 0) return false;  // nothing to stand for
    s.used = t.terms().size() == 64 ? ~uint64_t{0} : (uint64_t{1} << t.terms().size()) - 1;
    s.constant -= taken_constant;
    Bindings copy = b;
    if (!c) {
      // x * c1 with c1 free: c1 is the rest's common factor, signed like its first term.
      int64_t g = rest.content();
      const int64_t first = rest.terms().empty() ? rest.constant_term() : rest.terms()[0].coeff;
      if (first < 0) g = -g;  // content() is a gcd of magnitudes, at most INT64_MAX
      std::optional<int64_t> bound = exact_div(g, pt.coeff);
      if (g == 0 || !bound || !bind_constant(pt.coeff_var, *bound, copy)) return false;
      c = g;
    }
    std::optional<Poly> value = divide_poly(rest, *c);
    if (!value) return false;
    SymExpr rest_value = value->to_expr();
    const bool constant = rest_value.as_const().has_value();
    copy.emplace(SymVar::from_expr(pt.body), std::move(rest_value));
    if (constant && !constants_ok(copy)) return false;
    return step(order, k + 1, t, keep_rest, s, copy, next);
  }

  Simplifier& s_;
  const CompiledRule& rule_;
  mutable SymVarMap<int64_t> values_;  ///< constants_ok's scratch
};

/// The pattern's values put into `e` (a result or a condition).
SymExpr instantiate(const SymExpr& e, const SymVarMap<SymExpr>& b) { return substitute(e, b); }

}  // namespace

bool Simplifier::condition_holds(const CompiledRule& rule, const SymVarMap<SymExpr>& found) {
  // The conjuncts over constants alone were tested by the matcher as their constants were
  // matched (Matcher::constants_ok); the others need the matched expressions put in.
  for (size_t i = 0; i < rule.when_general.size(); ++i) {
    // A conjunct whose variables all matched constants was tested while matching.
    bool all_constant = true;
    for (const SymVar& v : rule.when_general_vars[i]) {
      auto it = found.find(v);
      all_constant = all_constant && it != found.end() && it->second.as_const().has_value();
    }
    if (all_constant) continue;
    // floormod(x, c) == 0 is read off the matched x's modular set, with nothing built.
    const SymExpr& c = rule.when_general[i];
    if (c.kind() == SymKind::kEQ && c.operand(1).is_const(0) && c.operand(0).kind() == SymKind::kFloorMod &&
        c.operand(0).operand(0).is_var() && c.operand(0).operand(1).is_var()) {
      auto x = found.find(SymVar::from_expr(c.operand(0).operand(0)));
      auto divisor = found.find(SymVar::from_expr(c.operand(0).operand(1)));
      if (x != found.end() && divisor != found.end() && divisor->second.as_const().value_or(0) > 0) {
        if (!divisible(x->second, *divisor->second.as_const())) return false;
        continue;
      }
    }
    if (!holds(instantiate(c, found))) return false;
  }
  return true;
}

void Simplifier::note_fired(const CompiledRule& rule) {
  unsettled_ = true;
  if (trace_ != nullptr) trace_->push_back(rule.name);
}

bool Simplifier::divisible(const SymExpr& x, int64_t c) {
  if (c <= 0 || x.dtype() != DataType::int64()) return false;
  const ModularSet m = modular(to_poly(x));
  return m.coeff % c == 0 && m.base % c == 0;
}

bool Simplifier::holds(const SymExpr& cond) {
  // floormod(x, c) == 0 (x canonical, c > 0): read off x's modular set.
  if (cond.kind() == SymKind::kEQ && cond.operand(1).is_const(0) &&
      cond.operand(0).kind() == SymKind::kFloorMod && cond.operand(0).dtype() == DataType::int64()) {
    const std::optional<int64_t> c = cond.operand(0).operand(1).as_const();
    if (c && *c > 0) return divisible(cond.operand(0).operand(0), *c);
  }
  // A condition on constants alone (most are) is evaluated.
  bool has_vars = false;
  for_each_var(cond, [&](const SymVar&) { has_vars = true; });
  if (!has_vars) {
    absl::StatusOr<int64_t> value = evaluate(cond, SymVarMap<int64_t>{});
    return value.ok() && *value != 0;
  }
  // This simplifier, rules off: the matched values in `cond` are canonical already (their
  // forms are memoized here); only the condition's own fresh nodes are simplified without
  // rules, and no other expression shares those nodes.
  const bool enabled = rules_enabled_;
  rules_enabled_ = false;
  const bool result = simplify_bool(cond).is_const(1);
  rules_enabled_ = enabled;
  return result;
}

std::optional<SymExpr> Simplifier::apply_rules(const SymExpr& e) {
  if (!rules_enabled_) return std::nullopt;
  const std::vector<const CompiledRule*>& rules = rules_rooted_at(e.kind());
  if (rules.empty()) return std::nullopt;
  if (rule_depth_ >= kMaxRuleDepth) {
    unsettled_ = true;
    return std::nullopt;
  }
  // Each expression is tried once per simplifier: a later meeting (a rule's result holding
  // the same expression again, deep trees reaching it by several paths) reuses the answer,
  // and a meeting while its own rules are being tried gets none.
  auto [memo, inserted] = rule_memo_.try_emplace(e, RuleAnswer{});
  if (!inserted) {
    if (!memo->second.done) unsettled_ = true;  // met again while its rules are tried
    return memo->second.result;
  }
  std::optional<SymExpr> answer = try_rules(e, rules);
  rule_memo_[e] = RuleAnswer{true, answer};
  return answer;
}

std::optional<SymExpr> Simplifier::try_rules(const SymExpr& e,
                                             const std::vector<const CompiledRule*>& rules) {
  std::optional<RewriteMeasure> before;  // measured once a rule matches
  for (const CompiledRule* rule : rules) {
    if (!may_match(rule->pattern, e)) continue;
    Matcher m(*this, *rule);
    Bindings b;
    std::optional<SymExpr> result;
    m.node(rule->pattern, e, b, [&](Bindings& matched) {
      const SymVarMap<SymExpr> found = matched.to_map();
      if (!condition_holds(*rule, found)) return false;
      ++rule_depth_;
      SymExpr rewritten = simplify(instantiate(rule->result, found));
      --rule_depth_;
      if (!before) before = rewrite_measure(e);
      if (!(rewrite_measure(rewritten) < *before)) return false;
      result = std::move(rewritten);
      return true;
    });
    if (result) {
      note_fired(*rule);
      return result;
    }
  }
  return std::nullopt;
}

std::optional<Poly> Simplifier::apply_sum_rules(const Poly& p) {
  if (!rules_enabled_ || p.terms().empty()) return std::nullopt;
  if (rule_depth_ >= kMaxRuleDepth) {
    unsettled_ = true;
    return std::nullopt;
  }
  // The atom kinds present, to skip the rules that need others.
  uint32_t present = 0;
  for (const Term& t : p.terms()) {
    for (const SymExpr& atom : t.atoms) present |= 1u << static_cast<unsigned>(atom.kind());
  }
  std::optional<RewriteMeasure> before;
  for (const CompiledRule* rule : rules_rooted_at(SymKind::kAdd)) {
    if ((rule->needed_kinds & present) != rule->needed_kinds) continue;
    if (!before) before = rewrite_measure(p.to_expr());
    Matcher m(*this, *rule);
    Bindings b;
    std::optional<Poly> result;
    m.sum(rule->terms, p, /*keep_rest=*/true, b, [&](Bindings& matched, const Poly& rest) {
      const SymVarMap<SymExpr> found = matched.to_map();
      if (!condition_holds(*rule, found)) return false;
      ++rule_depth_;
      std::optional<Poly> rewritten = Poly::add(to_poly(instantiate(rule->result, found)), rest);
      --rule_depth_;
      if (!rewritten || !(rewrite_measure(rewritten->to_expr()) < *before)) return false;
      result = std::move(rewritten);
      return true;
    });
    if (result) {
      note_fired(*rule);
      return result;
    }
  }
  return std::nullopt;
}

}  // namespace relax::shape_detail
