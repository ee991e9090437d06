// The operator registry: built once on first use (thread-safe static
// initialisation), read-only afterwards, so lookups need no lock.
#include "relax/ir/op.h"

#include <functional>
#include <map>
#include <memory>

#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/support/check.h"

namespace relax {
namespace detail {

OpInfo& OpTable::add(std::string name, int num_args, DeduceFn deduce, std::string summary) {
  for (const auto& e : entries_)
    RELAX_CHECK(e->name != name) << "operator `" << name << "` registered twice";
  auto info = std::make_unique<OpInfo>();
  info->name = std::move(name);
  info->summary = std::move(summary);
  info->num_args = num_args;
  info->deduce = std::move(deduce);
  entries_.push_back(std::move(info));
  return *entries_.back();
}

}  // namespace detail
namespace {

struct Registry {
  std::vector<std::unique_ptr<OpInfo>> ops;
  std::map<std::string, const OpInfo*, std::less<>> by_name;
};

Registry build_registry() {
  detail::OpTable table;
  detail::register_binary_ops(table);
  detail::register_unary_ops(table);
  detail::register_linalg_ops(table);
  detail::register_manipulate_ops(table);
  detail::register_reduce_ops(table);
  detail::register_call_ops(table);
  Registry registry;
  registry.ops = std::move(table.entries());
  for (auto& info : registry.ops) {
    // An Op is a leaf callee; its annotation only says it is a function.
    info->op = Expr(
        std::make_shared<const OpNode>(info->name, opaque_func_sinfo(object_sinfo(), info->pure)));
    registry.by_name.emplace(info->name, info.get());
  }
  return registry;
}

const Registry& registry() {
  static const Registry kRegistry = build_registry();
  return kRegistry;
}

}  // namespace

const OpInfo* find_op(std::string_view name) {
  const Registry& r = registry();
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

std::vector<const OpInfo*> all_ops() {
  std::vector<const OpInfo*> out;
  for (const auto& info : registry().ops) out.push_back(info.get());
  return out;
}

}  // namespace relax
