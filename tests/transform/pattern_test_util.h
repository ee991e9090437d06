// Helpers of the pattern tests: parsing a module that must parse, and the
// names of the bindings that a pattern matches in @main.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "relax/ir/parser.h"
#include "relax/support/check.h"
#include "relax/transform/pattern.h"

namespace relax::pattern_testing {

inline IRModule parse(std::string_view text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  RELAX_CHECK(mod.ok()) << mod.status().message();
  return *std::move(mod);
}

// The names of the bindings of @main whose values `pattern` matches, in order.
inline std::vector<std::string> matched_bindings(const IRModule& mod,
                                                 const transform::Pattern& pattern) {
  std::vector<std::string> names;
  for (const transform::Match& m : transform::find_matches(mod.lookup("main"), pattern)) {
    names.push_back(m.binding_var().name_hint());
  }
  return names;
}

// The value bound to `name` in @main (the first such binding), or an undefined Expr.
inline Expr value_of(const IRModule& mod, std::string_view name) {
  const auto* func = mod.lookup("main").as<FunctionNode>();
  for (const BindingBlock& block : func->body.as<SeqExprNode>()->blocks) {
    for (const Binding& b : block.bindings) {
      if (b.var.name_hint() == name) return b.value;
    }
  }
  return Expr();
}

}  // namespace relax::pattern_testing
