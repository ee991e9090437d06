// Elementwise operators: unary math and numpy-broadcasting binary ops.
//
// A unary op is one line: its name, the dtypes it takes, its scalar function
// (which is also its kernel) and a summary. A binary op adds the scalar
// function that folds two Prims of known value.
#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/elementwise.h"

namespace relax {
namespace detail {
namespace {

// out = fn(x), with x's annotation.
void unary(OpTable& table, const char* name, DtypeClass dtypes, compute::UnaryFn fn,
           const char* summary) {
  table.def(name, summary)
      .arg("x", ArgKind::kTensor, dtypes)
      .deduce(rules::same_as_arg(0))
      .legalize([fn](const CallNode& call, const NoAttrs&, Analyzer& analyzer) {
        return compute::elementwise(call, analyzer, fn);
      });
}

using BinaryFn = std::function<SymExpr(const SymExpr&, const SymExpr&)>;

// out = fn(lhs, rhs) with numpy broadcasting; `result` overrides the dtype (bool for comparisons).
void binary(OpTable& table, const char* name, DtypeClass dtypes, BinaryFn fn, const char* summary,
            std::optional<DataType> result = std::nullopt) {
  BroadcastSpec spec;
  spec.result_dtype = result;
  spec.fold = [fn](const std::vector<SymExpr>& v) { return fn(v[0], v[1]); };
  table.def(name, summary)
      .arg("lhs", ArgKind::kTensorOrScalar, dtypes)
      .arg("rhs", ArgKind::kTensorOrScalar, dtypes)
      .deduce(rules::broadcast(spec))
      .legalize([fn](const CallNode& call, const NoAttrs&, Analyzer& analyzer) {
        return compute::broadcast(call, analyzer,
                                  [fn](const std::vector<SymExpr>& v) { return fn(v[0], v[1]); });
      });
}

}  // namespace

void register_elementwise_ops(OpTable& table) {
  unary(table, "exp", DtypeClass::kFloat, [](const SymExpr& x) { return exp(x); },
        "elementwise e^x of a float tensor");

  binary(table, "add", DtypeClass::kNumeric,
         [](const SymExpr& a, const SymExpr& b) { return a + b; },
         "elementwise lhs + rhs with numpy broadcasting (Prims are scalars)");
  binary(table, "multiply", DtypeClass::kNumeric,
         [](const SymExpr& a, const SymExpr& b) { return a * b; },
         "elementwise lhs * rhs with numpy broadcasting (Prims are scalars)");
}

}  // namespace detail

namespace op {

Expr exp(Expr x) { return make_call(make_op_or_die("exp"), {std::move(x)}); }

Expr add(Operand lhs, Operand rhs) {
  return make_call(make_op_or_die("add"), {std::move(lhs).expr(), std::move(rhs).expr()});
}

Expr multiply(Operand lhs, Operand rhs) {
  return make_call(make_op_or_die("multiply"), {std::move(lhs).expr(), std::move(rhs).expr()});
}

}  // namespace op
}  // namespace relax
