// The unified IR: a graph function and a loop-level kernel in one module.
//
// Builds a small MLP block with a symbolic batch `n` using the fluent C++
// builders, prints the module in relax's text format, and checks that the
// text and the JSON form both read back to a structurally equal module. Also
// shows how the builder reports a shape mistake with its source location.
// Exits 1 if any round trip or check fails.
#include <iostream>

#include "relax/ir/builder.h"
#include "relax/ir/json.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/well_formed.h"

namespace {

using relax::DataType;
using relax::SymExpr;
using relax::SymVar;

/// relu(x) as a loop-level kernel over an (n, 64) buffer, destination-passing.
absl::StatusOr<relax::Expr> relu_kernel() {
  SymVar n("n");
  relax::PrimFuncBuilder b("relu");
  relax::Buffer x = b.buffer_param("X", {n, 64}, DataType::float32());
  relax::Buffer y = b.buffer_param("Y", {n, 64}, DataType::float32());
  b.for_("i", 0, n, relax::ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, 64, relax::ForKind::kVectorized, [&](SymVar j) {
      b.block("relu", {relax::PrimFuncBuilder::spatial(n, i), relax::PrimFuncBuilder::spatial(64, j)},
              [&](const std::vector<SymVar>& v) {
                SymExpr value = b.load(x, {v[0], v[1]});
                b.store(y, {v[0], v[1]}, relax::max(value, SymExpr::float_imm(0.0, DataType::float32())));
              });
    });
  });
  return b.build();
}

/// main(x: (n, 64), w: (64, 64)) = reshape(relu(x @ w + x)), with n <= 4096.
absl::StatusOr<relax::IRModule> mlp_module() {
  relax::ModuleBuilder mb;
  absl::StatusOr<relax::Expr> relu = relu_kernel();
  if (!relu.ok()) return relu.status();
  relax::Expr relu_gv = mb.add_prim_func("relu", *relu);

  SymVar n("n");
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n, 64}, DataType::float32()));
  relax::Var w = f.param("w", relax::tensor_sinfo({64, 64}, DataType::float32()));
  f.upper_bound(n, 4096);
  relax::Var out;
  {
    auto df = f.dataflow();
    relax::Var h = f.emit(relax::op::matmul(x, w), "h");
    relax::Var r = f.emit(relax::op::add(h, x), "r");
    relax::Var a = f.emit(relax::op::call_tir(relu_gv, {r}, relax::tensor_sinfo({n, 64}, DataType::float32())), "a");
    out = f.emit_output(relax::op::reshape(a, {n * 4, 16}), "out");
  }
  f.ret(out);
  return mb.build();
}

}  // namespace

int main() {
  absl::StatusOr<relax::IRModule> mod = mlp_module();
  if (!mod.ok()) {
    std::cerr << "building the module failed:\n" << mod.status() << "\n";
    return 1;
  }
  const std::string text = relax::to_text(*mod);
  std::cout << text << "\n";

  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    std::cout << (ok ? "ok      " : "FAILED  ") << what << "\n";
    failures += ok ? 0 : 1;
  };
  check(relax::well_formed(*mod).ok(), "the module is well formed");
  absl::StatusOr<relax::IRModule> reparsed = relax::parse_module(text);
  check(reparsed.ok() && relax::structural_equal(*mod, *reparsed),
        "text -> parse gives a structurally equal module");
  absl::StatusOr<relax::IRModule> from_json = relax::from_json(relax::to_json(*mod));
  check(from_json.ok() && relax::structural_equal(*mod, *from_json),
        "JSON round trip gives a structurally equal module");

  // A mistake: the inner dims of a matmul differ. The builder reports it, with the line.
  relax::ModuleBuilder bad;
  SymVar n("n"), k("k");
  relax::FunctionBuilder g = bad.function("bad");
  relax::Var a = g.param("a", relax::tensor_sinfo({n, k}, DataType::float32()));
  relax::Var b = g.param("b", relax::tensor_sinfo({n, 8}, DataType::float32()));
  g.ret(g.emit(relax::op::matmul(a, b)));
  absl::StatusOr<relax::IRModule> rejected = bad.build();
  check(!rejected.ok(), "a matmul of (n, k) by (n, 8) is rejected at build():");
  if (!rejected.ok()) std::cout << "        " << rejected.status().message() << "\n";
  return failures == 0 ? 0 : 1;
}
