// Helpers shared by the manipulation family's files (see manipulate_util.h).
#include "ir/op/manipulate_util.h"

#include <algorithm>

#include "ir/op/op_util.h"

namespace relax::detail {
namespace {

// The factors of a product as written (n * 4 * m: n, 4, m).
void collect_factors(const SymExpr& e, std::vector<SymExpr>& out) {
  if (e.kind() == SymKind::kMul) {
    collect_factors(e.operand(0), out);
    collect_factors(e.operand(1), out);
  } else {
    out.push_back(e);
  }
}

}  // namespace

std::optional<SymExpr> exact_quotient(const std::vector<SymExpr>& numerator,
                                      const std::vector<SymExpr>& denominator, Analyzer& analyzer) {
  std::vector<SymExpr> num;
  std::vector<SymExpr> den;
  for (const SymExpr& e : numerator) collect_factors(analyzer.simplify(e), num);
  for (const SymExpr& e : denominator) collect_factors(analyzer.simplify(e), den);
  // Cancel the symbolic factors the two sides share, then divide the constants.
  int64_t num_const = 1;
  int64_t den_const = 1;
  std::vector<SymExpr> rest;
  for (const SymExpr& f : num) {
    if (std::optional<int64_t> c = f.as_const()) {
      num_const *= *c;
      continue;
    }
    auto match = std::find_if(den.begin(), den.end(),
                              [&](const SymExpr& g) { return structural_equal(f, g); });
    if (match != den.end()) {
      den.erase(match);
    } else {
      rest.push_back(f);
    }
  }
  for (const SymExpr& g : den) {
    std::optional<int64_t> c = g.as_const();
    if (!c) return std::nullopt;  // a symbolic factor that does not cancel
    den_const *= *c;
  }
  if (den_const == 0 || num_const % den_const != 0) return std::nullopt;
  SymExpr q(num_const / den_const);
  for (const SymExpr& f : rest) q = q * f;
  return analyzer.simplify(q);
}


std::string ints_string(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::vector<int64_t> as_list(const IntOrInts& value) {
  if (const int64_t* v = std::get_if<int64_t>(&value)) return {*v};
  return std::get<std::vector<int64_t>>(value);
}

absl::Status check_defined(const std::string& op, const std::string& what,
                           const std::vector<SymExpr>& dims, const DeduceContext& ctx) {
  if (!ctx.sym_in_scope) return absl::OkStatus();
  for (const SymExpr& d : dims) {
    std::optional<SymVar> undefined;
    for_each_var(d, [&](const SymVar& v) {
      if (!undefined && !ctx.sym_in_scope(v)) undefined = v;
    });
    if (undefined) {
      return op_error(op, what + ": symbolic variable `" + undefined->name() + "` is not defined here");
    }
  }
  return absl::OkStatus();
}

SymExpr index_only(const SymExpr& e) { return e * 1; }

}  // namespace relax::detail
