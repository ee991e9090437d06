// The operator registry: built once on first use (thread-safe static
// initialisation), read-only afterwards, so lookups need no lock.
#include "relax/ir/op.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

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
  // The families in registration order (the order of all_ops()).
  const std::pair<const char*, void (*)(detail::OpTable&)> families[] = {
      {"elementwise", detail::register_elementwise_ops},
      {"linalg", detail::register_linalg_ops},
      {"manipulate", detail::register_manipulate_ops},
      {"reduce", detail::register_reduce_ops},
      {"create", detail::register_create_ops},
      {"nn", detail::register_nn_ops},
      {"conv", detail::register_conv_ops},
      {"pool", detail::register_pool_ops},
      {"quantize", detail::register_quantize_ops},
      {"call", detail::register_call_ops},
      {"dynamic", detail::register_dynamic_ops},
      {"memory", detail::register_memory_ops},
  };
  for (const auto& [family, register_family] : families) {
    table.set_family(family);
    register_family(table);
  }
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

std::string arg_role(const CallNode& call, size_t index) {
  if (const auto* op = call.callee.as<OpNode>()) {
    const OpInfo* info = find_op(op->name);
    if (info != nullptr && index < info->args.size()) return info->args[index].role;
  }
  return "argument " + std::to_string(index);
}

std::string op_signature(const OpInfo& info) {
  std::string s = info.name + "(";
  bool first = true;
  auto sep = [&] {
    if (!first) s += ", ";
    first = false;
  };
  for (const ArgSpec& a : info.args) {
    sep();
    s += a.role + (a.optional ? "?" : "");
  }
  if (info.num_args < 0) {
    sep();
    s += "...";
  }
  for (const AttrFieldInfo& a : info.attrs) {
    sep();
    s += a.name + (a.default_value.empty() ? "" : "=" + a.default_value);
  }
  return s + ")";
}

std::string op_table_markdown() {
  std::string out = "| family | operator | what it computes |\n| --- | --- | --- |\n";
  for (const OpInfo* info : all_ops()) {
    std::string summary = info->summary;
    for (size_t i = 0; (i = summary.find('|', i)) != std::string::npos; i += 2) summary.replace(i, 1, "\\|");
    out += "| " + info->family + " | `" + op_signature(*info) + "` | " + summary + " |\n";
  }
  return out;
}

namespace op {

Expr Operand::from_int64(int64_t value) { return make_prim_value(SymExpr(value)); }
Expr Operand::from_float(double value) {
  return make_prim_value(SymExpr::float_imm(value, DataType::float64()));
}

}  // namespace op
}  // namespace relax
