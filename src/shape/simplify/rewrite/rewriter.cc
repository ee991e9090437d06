// The rule tables compiled: parsing, pattern variables, the terms of pattern sums, the measure.
#include "shape/simplify/rewrite/rewriter.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_map.h"
#include "relax/support/check.h"

namespace relax::shape_detail {
namespace {

// The pattern variables, created once: matching identifies them by identity.
struct PatternVars {
  absl::flat_hash_map<std::string, SymVar> by_name;
  std::vector<SymVar> constants;
  std::vector<SymVar> all;
};

const PatternVars& pattern_vars() {
  static const PatternVars* vars = [] {
    auto* v = new PatternVars();
    for (const char* name : {"x", "y", "z", "w"}) v->by_name.emplace(name, SymVar(name));
    for (const char* name : {"b1", "b2"}) v->by_name.emplace(name, SymVar(name, DataType::boolean()));
    for (const char* name : {"c1", "c2", "c3", "c4"}) {
      SymVar c(name);
      v->by_name.emplace(name, c);
      v->constants.push_back(c);
    }
    for (const auto& [name, var] : v->by_name) v->all.push_back(var);
    return v;
  }();
  return *vars;
}

bool contains(const std::vector<SymVar>& vars, const SymExpr& v) {
  for (const SymVar& x : vars) {
    if (x.same_as(v)) return true;
  }
  return false;
}

SymExpr parse_rule_text(const RuleText& rule, const char* text, const char* what) {
  absl::flat_hash_map<std::string, SymVar> names = pattern_vars().by_name;
  const size_t known = names.size();
  absl::StatusOr<SymExpr> e = SymExpr::parse(text, &names);
  RELAX_CHECK(e.ok()) << "rewrite rule " << rule.name << ": its " << what << " `" << text
                      << "` does not parse: " << e.status();
  RELAX_CHECK(names.size() == known) << "rewrite rule " << rule.name << ": its " << what << " `"
                                     << text << "` uses a name that is not a pattern variable "
                                     << "(x, y, z, w, b1, b2, c1 ... c4)";
  return *e;
}

void add_terms(const SymExpr& e, int64_t scale, std::vector<PatternTerm>* out) {
  switch (e.kind()) {
    case SymKind::kAdd:
      add_terms(e.operand(0), scale, out);
      add_terms(e.operand(1), scale, out);
      return;
    case SymKind::kSub:
      add_terms(e.operand(0), scale, out);
      add_terms(e.operand(1), -scale, out);
      return;
    case SymKind::kIntImm:
      out->push_back(PatternTerm{scale * *e.as_const(), SymExpr(), SymExpr()});
      return;
    case SymKind::kMul: {
      // x * k, k * x, x * c1, c1 * x (k a literal, c1 a constant pattern variable).
      for (size_t i = 0; i < 2; ++i) {
        const SymExpr& factor = e.operand(i);
        const SymExpr& other = e.operand(1 - i);
        if (auto k = factor.as_const()) {
          add_terms(other, scale * *k, out);
          return;
        }
        if (is_constant_pattern_var(factor)) {
          const size_t first = out->size();
          add_terms(other, scale, out);
          for (size_t t = first; t < out->size(); ++t) {
            RELAX_CHECK(!(*out)[t].coeff_var.defined())
                << "a pattern term with two constant factors: " << e;
            (*out)[t].coeff_var = factor;
          }
          return;
        }
      }
      break;
    }
    default:
      break;
  }
  if (is_constant_pattern_var(e)) {
    out->push_back(PatternTerm{scale, e, SymExpr()});
    return;
  }
  out->push_back(PatternTerm{scale, SymExpr(), e});
}

bool is_sum_pattern(const SymExpr& e) {
  return e.kind() == SymKind::kAdd || e.kind() == SymKind::kSub || e.kind() == SymKind::kMul;
}

}  // namespace

bool is_constant_pattern_var(const SymExpr& v) {
  return v.is_var() && contains(pattern_vars().constants, v);
}

bool is_pattern_var(const SymExpr& v) { return v.is_var() && contains(pattern_vars().all, v); }

std::vector<PatternTerm> pattern_terms(const SymExpr& e) {
  std::vector<PatternTerm> terms;
  add_terms(e, 1, &terms);
  // The order the matcher takes them in: terms with a structure first (they bind
  // variables), then pattern variables, then the constant.
  auto rank = [](const PatternTerm& t) { return !t.body.defined() ? 2 : is_pattern_var(t.body) ? 1 : 0; };
  std::stable_sort(terms.begin(), terms.end(),
                   [&](const PatternTerm& a, const PatternTerm& b) { return rank(a) < rank(b); });
  return terms;
}

const std::vector<PatternTerm>& sub_pattern_terms(const SymExpr& e) {
  // Patterns live as long as the compiled rules (for ever), so their nodes are stable keys;
  // every sum inside a pattern is taken apart once, when the rules are compiled.
  static const auto* by_node = [] {
    auto* map = new absl::flat_hash_map<const SymExprNode*, std::vector<PatternTerm>>();
    for (const CompiledRule& rule : compiled_rules()) {
      std::vector<const SymExpr*> stack = {&rule.pattern};
      while (!stack.empty()) {
        const SymExpr* x = stack.back();
        stack.pop_back();
        if (is_sum_pattern(*x) && x->dtype() == DataType::int64()) map->try_emplace(x->get(), pattern_terms(*x));
        for (size_t i = 0; i < x->num_operands(); ++i) stack.push_back(&x->operand(i));
      }
    }
    return map;
  }();
  auto it = by_node->find(e.get());
  RELAX_CHECK(it != by_node->end()) << "not a sum of a compiled pattern: " << e;
  return it->second;
}

bool may_match(const SymExpr& p, const SymExpr& t) {
  if (p.dtype() != t.dtype()) return false;
  if (p.is_var()) return !is_constant_pattern_var(p) || t.as_const().has_value();
  if (auto c = p.as_const()) return t.as_const() == c;
  if (is_sum_pattern(p)) return true;  // sums match Poly terms: no quick test
  if (p.kind() != t.kind() || p.num_operands() != t.num_operands()) return false;
  const bool either_way = p.num_operands() == 2 &&
                          (p.kind() == SymKind::kMin || p.kind() == SymKind::kMax || p.kind() == SymKind::kEQ ||
                           p.kind() == SymKind::kNE || p.kind() == SymKind::kAnd || p.kind() == SymKind::kOr);
  bool in_order = true;
  for (size_t i = 0; i < p.num_operands() && in_order; ++i) in_order = may_match(p.operand(i), t.operand(i));
  if (in_order) return true;
  return either_way && may_match(p.operand(0), t.operand(1)) && may_match(p.operand(1), t.operand(0));
}

std::vector<std::span<const RuleText>> rule_tables() {
  return {min_max_rules(), div_mod_rules(), compare_rules()};
}

const std::vector<CompiledRule>& compiled_rules() {
  static const std::vector<CompiledRule>* rules = [] {
    auto* out = new std::vector<CompiledRule>();
    for (std::span<const RuleText> table : rule_tables()) {
      for (const RuleText& text : table) {
        CompiledRule rule;
        rule.name = text.name;
        rule.pattern = parse_rule_text(text, text.pattern, "pattern");
        rule.result = parse_rule_text(text, text.result, "result");
        if (text.when != nullptr && text.when[0] != '\0') {
          rule.when = parse_rule_text(text, text.when, "condition");
          RELAX_CHECK(rule.when.dtype().is_bool())
              << "rewrite rule " << text.name << ": its condition is not boolean";
          std::vector<SymExpr> stack = {rule.when};
          while (!stack.empty()) {
            SymExpr c = stack.back();
            stack.pop_back();
            if (c.kind() == SymKind::kAnd) {
              stack.push_back(c.operand(1));
              stack.push_back(c.operand(0));
              continue;
            }
            bool constant_only = true;
            std::vector<SymVar> vars;
            for_each_var(c, [&](const SymVar& v) {
              constant_only = constant_only && is_constant_pattern_var(v);
              vars.push_back(v);
            });
            if (constant_only) {
              rule.when_constant.push_back(c);
              rule.when_constant_vars.push_back(std::move(vars));
            } else {
              rule.when_general.push_back(c);
              rule.when_general_vars.push_back(std::move(vars));
            }
          }
        }
        if (rule.when.defined()) {
          // The matcher tests a condition on the matched values: each of its variables must be
          // one the pattern matches.
          for_each_var(rule.when, [&](const SymVar& v) {
            bool in_pattern = false;
            for_each_var(rule.pattern, [&](const SymVar& p) { in_pattern = in_pattern || p.same_as(v); });
            RELAX_CHECK(in_pattern) << "rewrite rule " << text.name << ": its condition uses " << v.name()
                                    << ", which its pattern does not match";
          });
        }
        RELAX_CHECK(rule.pattern.dtype() == rule.result.dtype())
            << "rewrite rule " << text.name << ": pattern and result differ in dtype";
        RELAX_CHECK(!is_pattern_var(rule.pattern)) << "rewrite rule " << text.name
                                                   << ": a bare variable matches everything";
        rule.root = is_sum_pattern(rule.pattern) ? SymKind::kAdd : rule.pattern.kind();
        if (rule.root == SymKind::kAdd) {
          rule.terms = pattern_terms(rule.pattern);
          for (const PatternTerm& t : rule.terms) {
            if (t.body.defined() && !is_pattern_var(t.body)) {
              rule.needed_kinds |= 1u << static_cast<unsigned>(t.body.kind());
            }
          }
        }
        out->push_back(std::move(rule));
      }
    }
    return out;
  }();
  return *rules;
}

const std::vector<const CompiledRule*>& rules_rooted_at(SymKind kind) {
  static const auto* by_kind = [] {
    auto* table = new std::array<std::vector<const CompiledRule*>, 32>();
    for (const CompiledRule& rule : compiled_rules()) {
      (*table)[static_cast<size_t>(rule.root)].push_back(&rule);
    }
    return table;
  }();
  return (*by_kind)[static_cast<size_t>(kind)];
}

RewriteMeasure rewrite_measure(const SymExpr& e) {
  RewriteMeasure m;
  // Each node with the number of division numerators it lies in.
  std::vector<std::pair<const SymExpr*, int64_t>> stack = {{&e, 0}};
  while (!stack.empty()) {
    auto [x, inside] = stack.back();
    stack.pop_back();
    ++m.nodes;
    m.numerator_nodes += inside;
    if (x->is_var()) ++m.vars;
    const bool division = x->kind() == SymKind::kFloorDiv || x->kind() == SymKind::kFloorMod;
    for (size_t i = 0; i < x->num_operands(); ++i) {
      stack.push_back({&x->operand(i), inside + (division && i == 0 ? 1 : 0)});
    }
  }
  return m;
}

}  // namespace relax::shape_detail
