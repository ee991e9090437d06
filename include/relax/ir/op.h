// Operators and their shape deduction.
//
// Every operator is registered once with a deduction function that computes
// the StructInfo of a call from its arguments' StructInfo (and its attributes).
// The builder runs it as each binding is emitted, so annotations are always
// current. The registry is built on first use (thread-safe static
// initialisation, from the family list in src/ir/op/op.cc) and read-only
// afterwards. Constructors of operator calls are in ops.h.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/shape/analyzer.h"

namespace relax {

class IRModule;

/// What a deduction function may consult besides the call itself.
struct DeduceContext {
  Analyzer& analyzer;
  /// The module being built, for calls whose callee is a GlobalVar (may be null).
  const IRModule* module = nullptr;
  /// The symbolic variables defined where the expression stands (function
  /// parameters, earlier match_casts). A SeqExpr's annotation keeps only those
  /// and the ones its enclosing SeqExprs define; when empty, it drops exactly
  /// the variables that its own match_casts define.
  std::function<bool(const SymVar&)> sym_in_scope = nullptr;
};

/// Computes the StructInfo of `call` (its arguments are normalised), or an
/// error that names the argument, the expected and the actual annotation.
using DeduceFn = std::function<absl::StatusOr<StructInfo>(const CallNode& call, DeduceContext& ctx)>;

struct OpInfo {
  std::string name;
  std::string summary;
  /// Number of arguments, or -1 when variadic.
  int num_args = -1;
  bool pure = true;
  DeduceFn deduce;
  /// The Op expression that calls use as their callee.
  Expr op;
};

/// The registered operator called `name`, or nullptr.
const OpInfo* find_op(std::string_view name);
/// Every registered operator, in registration order.
std::vector<const OpInfo*> all_ops();

}  // namespace relax
