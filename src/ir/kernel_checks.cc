// The nonempty-extent requirements of kernels (relax/ir/kernel_checks.h).
#include "relax/ir/kernel_checks.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "relax/ir/prim_func.h"

namespace relax {

std::vector<NonemptyExtent> nonempty_extents(const Attrs& attrs) {
  std::vector<NonemptyExtent> out;
  auto extents = attrs.find(kNonemptyExtentsAttr);
  if (extents == attrs.end() || !std::holds_alternative<std::vector<SymExpr>>(extents->second)) return out;
  std::vector<std::string> what;
  if (auto it = attrs.find(kNonemptyWhatAttr); it != attrs.end() && std::holds_alternative<std::string>(it->second)) {
    std::vector<std::string> parts = absl::StrSplit(std::get<std::string>(it->second), '|');
    what = std::move(parts);
  }
  const auto& exprs = std::get<std::vector<SymExpr>>(extents->second);
  for (size_t i = 0; i < exprs.size(); ++i) {
    out.push_back({exprs[i], i < what.size() ? what[i] : "an extent the kernel requires nonempty"});
  }
  return out;
}

Attrs with_nonempty_extents(Attrs attrs, const std::vector<NonemptyExtent>& extents) {
  std::vector<NonemptyExtent> all = nonempty_extents(attrs);
  all.insert(all.end(), extents.begin(), extents.end());
  if (all.empty()) return attrs;
  std::vector<SymExpr> exprs;
  std::vector<std::string> what;
  for (const NonemptyExtent& e : all) {
    exprs.push_back(e.extent);
    what.push_back(e.what);
  }
  attrs[kNonemptyExtentsAttr] = std::move(exprs);
  attrs[kNonemptyWhatAttr] = absl::StrJoin(what, "|");
  return attrs;
}

absl::StatusOr<Lowering> require_nonempty(absl::StatusOr<Lowering> lowering,
                                          const std::vector<NonemptyExtent>& extents, Analyzer& analyzer) {
  if (!lowering.ok()) return lowering;
  const auto* func = lowering->prim_func.as<PrimFuncNode>();
  if (func == nullptr) return lowering;
  std::vector<NonemptyExtent> needed;
  for (const NonemptyExtent& e : extents) {
    if (!analyzer.prove(e.extent >= 1)) needed.push_back(e);
  }
  if (needed.empty()) return lowering;
  lowering->prim_func = make_prim_func(func->params, func->body, with_nonempty_extents(func->attrs, needed));
  return lowering;
}

}  // namespace relax
