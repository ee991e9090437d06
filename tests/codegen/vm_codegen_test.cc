// Graph functions → VM bytecode: the patterns, slots and instructions made.
#include "relax/codegen/vm_codegen.h"

#include <gtest/gtest.h>

#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/prim_func_builder.h"

namespace relax {
namespace {

using runtime::DimRule;
using runtime::Opcode;

// main(x: (n, n * 4), y: (m * 2 + 1,)) = y, with a match_cast of x to (k, n * 4).
IRModule matching_module() {
  SymVar n("n"), m("m"), k("k");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, n * 4}, DataType::float32()));
  Var y = f.param("y", tensor_sinfo({m * 2 + 1}, DataType::float32()));
  f.match_cast(x, tensor_sinfo({k, n * 4}, DataType::float32()), "xc");
  f.ret(y);
  absl::StatusOr<IRModule> mod = mb.build();
  EXPECT_TRUE(mod.ok()) << mod.status();
  return *mod;
}

TEST(VMCodegenTest, ParametersBindSolveAndCheckTheirDims) {
  absl::StatusOr<runtime::Executable> exec = compile_to_executable(matching_module());
  ASSERT_TRUE(exec.ok()) << exec.status();
  ASSERT_EQ(exec->functions.size(), 1u);
  const runtime::VMFunction& fn = exec->functions[0];
  EXPECT_EQ(fn.param_names, (std::vector<std::string>{"x", "y"}));
  ASSERT_FALSE(fn.code.empty());
  ASSERT_EQ(fn.code[0].op, Opcode::kMatch);
  const runtime::MatchGroup& entry = fn.matches[static_cast<size_t>(fn.code[0].index)];
  ASSERT_EQ(entry.items.size(), 2u);
  EXPECT_EQ(entry.items[0].what, "argument x");
  const runtime::ValuePattern& px = fn.patterns[static_cast<size_t>(entry.items[0].pattern)];
  const runtime::ValuePattern& py = fn.patterns[static_cast<size_t>(entry.items[1].pattern)];
  EXPECT_EQ(px.ndim, 2);
  EXPECT_EQ(px.dims[0].rule, DimRule::kBind);
  EXPECT_EQ(px.dims[1].rule, DimRule::kCheck);
  EXPECT_EQ(fn.exprs[static_cast<size_t>(px.dims[1].expr)].text, "n * 4");
  EXPECT_EQ(py.dims[0].rule, DimRule::kSolve);
  EXPECT_EQ(py.dims[0].coeff, 2);
  EXPECT_EQ(fn.exprs[static_cast<size_t>(py.dims[0].expr)].text, "1");
  EXPECT_EQ(fn.slot_names, (std::vector<std::string>{"n", "m", "k"}));
  // The match_cast binds k and checks n * 4 against the slot bound at entry.
  ASSERT_EQ(fn.code[1].op, Opcode::kMatch);
  const runtime::MatchGroup& cast = fn.matches[static_cast<size_t>(fn.code[1].index)];
  EXPECT_EQ(cast.items[0].what, "match_cast of xc");
  const runtime::ValuePattern& pc = fn.patterns[static_cast<size_t>(cast.items[0].pattern)];
  EXPECT_EQ(pc.dims[0].rule, DimRule::kBind);
  EXPECT_EQ(pc.dims[0].slot, 2);
  EXPECT_EQ(pc.dims[1].rule, DimRule::kCheck);
  EXPECT_EQ(fn.code.back().op, Opcode::kRet);
}

TEST(VMCodegenTest, ChecksOffKeepsBindingButMarksGroupsUnchecked) {
  absl::StatusOr<runtime::Executable> exec = compile_to_executable(matching_module(), {false});
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (const runtime::MatchGroup& g : exec->functions[0].matches) EXPECT_FALSE(g.checked);
}

TEST(VMCodegenTest, TheExecutableRecordsTheDeviceOfTheOptions) {
  absl::StatusOr<runtime::Executable> cpu = compile_to_executable(matching_module());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->device, Device::cpu());
  absl::StatusOr<runtime::Executable> gpu = compile_to_executable(matching_module(), {true, Device::cuda(1)});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ(gpu->device, Device::cuda(1));
  // The code is the same wherever it runs.
  EXPECT_EQ(gpu->functions[0].code.size(), cpu->functions[0].code.size());
}

TEST(VMCodegenTest, CallTirAllocatesItsDestinationFromSlots) {
  SymVar n("n");
  ModuleBuilder mb;
  PrimFuncBuilder pb("double_it");
  SymVar pn("n");
  Buffer a = pb.buffer_param("A", {pn}, DataType::float32());
  Buffer b = pb.buffer_param("B", {pn * 2}, DataType::float32());
  pb.for_("i", 0, pn * 2, [&](SymVar i) { pb.store(b, {i}, pb.load(a, {floordiv(i, 2)})); });
  absl::StatusOr<Expr> kernel = pb.build();
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  Expr gv = mb.add_prim_func("double_it", *kernel);
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, DataType::float32()));
  Var y = f.emit(op::call_tir(gv, {x}, tensor_sinfo({n * 2}, DataType::float32())));
  f.ret(y);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();

  absl::StatusOr<runtime::Executable> exec = compile_to_executable(*mod);
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ(exec->kernel_names, (std::vector<std::string>{"double_it"}));
  const runtime::VMFunction& fn = exec->functions[0];
  // lower-alloc made the output explicit: a storage of its bytes, the tensor at offset 0 of it
  // (not zeroed: the kernel's loop writes every element), then the kernel; the storage's
  // register is released once the tensor holds its memory.
  ASSERT_EQ(fn.code.size(), 6u) << exec->disassemble();
  EXPECT_EQ(fn.code[1].op, Opcode::kAllocStorage);
  ASSERT_EQ(fn.code[1].operands.size(), 1u);
  EXPECT_EQ(fn.exprs[static_cast<size_t>(fn.code[1].operands[0].value)].text, "n * 8");
  EXPECT_EQ(fn.code[2].op, Opcode::kAllocTensorAt);
  EXPECT_EQ(fn.code[2].dtype, DataType::float32());
  ASSERT_EQ(fn.code[2].operands.size(), 4u);
  EXPECT_EQ(fn.code[2].operands[0].value, fn.code[1].dst);
  EXPECT_EQ(fn.code[2].operands[2].kind, runtime::Operand::Kind::kImm);
  EXPECT_EQ(fn.code[2].operands[2].value, 0);
  EXPECT_EQ(fn.code[2].index, 0);  // not zeroed
  EXPECT_EQ(fn.exprs[static_cast<size_t>(fn.code[2].operands[3].value)].text, "n * 2");
  EXPECT_EQ(fn.code[3].op, Opcode::kKill);
  EXPECT_EQ(fn.code[4].op, Opcode::kCallKernel);
  ASSERT_EQ(fn.code[4].operands.size(), 2u);
  EXPECT_EQ(fn.code[4].operands[1].value, fn.code[2].dst);
  EXPECT_EQ(fn.code[5].op, Opcode::kRet);
}

TEST(VMCodegenTest, OperatorThatWasNotLegalizedIsAnError) {
  SymVar n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, DataType::float32()));
  Var y = f.emit(op::add(x, x), "y");
  f.ret(y);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok());
  absl::StatusOr<runtime::Executable> exec = compile_to_executable(*mod);
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().message(),
            "main: binding y: operator add has no VM lowering; run relax::transform::legalize_ops first");
}

TEST(VMCodegenTest, IfBranchesJoinIntoOneRegister) {
  SymVar n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, DataType::float32()));
  Var r = f.emit_if(make_prim_value(SymExpr(n) > 4), [&] { return Expr(x); },
                    [&] { return make_shape_expr({n, n + 1}); }, "r");
  f.ret(r);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<runtime::Executable> exec = compile_to_executable(*mod);
  ASSERT_TRUE(exec.ok()) << exec.status();
  const runtime::VMFunction& fn = exec->functions[0];
  int ifs = 0, gotos = 0;
  for (const runtime::Instruction& ins : fn.code) {
    ifs += ins.op == Opcode::kIf;
    gotos += ins.op == Opcode::kGoto;
    if (ins.op == Opcode::kIf || ins.op == Opcode::kGoto) {
      EXPECT_LE(ins.index, static_cast<int64_t>(fn.code.size()));
    }
  }
  EXPECT_EQ(ifs, 1);
  EXPECT_EQ(gotos, 1);
}

}  // namespace
}  // namespace relax
