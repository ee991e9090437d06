// Helpers shared by the manipulation family's files (see manipulate_util.h).
#include "ir/op/manipulate_util.h"

#include <algorithm>

#include "ir/op/op_util.h"

namespace relax::detail {
std::optional<SymExpr> exact_quotient(const std::vector<SymExpr>& numerator,
                                      const std::vector<SymExpr>& denominator, Analyzer& analyzer) {
  return analyzer.exact_div(product(numerator, analyzer), product(denominator, analyzer));
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
