// The operator registry: built once on first use (thread-safe static
// initialisation), read-only afterwards, so lookups need no lock.
#include "relax/ir/op.h"

#include <functional>
#include <map>
#include <memory>

#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/op/operand.h"

namespace relax {
namespace {

struct Registry {
  std::vector<std::unique_ptr<OpInfo>> ops;
  std::map<std::string, const OpInfo*, std::less<>> by_name;
};

Registry build_registry() {
  detail::OpTable table;
  detail::register_elementwise_ops(table);
  detail::register_linalg_ops(table);
  detail::register_manipulate_ops(table);
  detail::register_reduce_ops(table);
  detail::register_create_ops(table);
  detail::register_nn_ops(table);
  detail::register_conv_ops(table);
  detail::register_pool_ops(table);
  detail::register_quantize_ops(table);
  detail::register_call_ops(table);
  detail::register_dynamic_ops(table);
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

namespace op {

Operand::Operand(int value) : Operand(static_cast<int64_t>(value)) {}
Operand::Operand(int64_t value) : expr_(make_prim_value(SymExpr(value))) {}
Operand::Operand(double value)
    : expr_(make_prim_value(SymExpr::float_imm(value, DataType::float64()))) {}

}  // namespace op
}  // namespace relax
