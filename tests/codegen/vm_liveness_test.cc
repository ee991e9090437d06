// The VM code generator's register liveness (values freed after their last
// use, registers reused), declared upper bounds checked at run time, and the
// register limit, run in the VM. The functions call one library function
// (an elementwise add), so no kernel is compiled here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_env.h"
#include "relax/codegen/vm_codegen.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/runtime/allocator.h"
#include "relax/runtime/module.h"

namespace relax {
namespace {

using runtime::Opcode;
using runtime::Tensor;
using runtime::Value;

constexpr DataType kLivenessF32 = DataType::float32();
constexpr char kAdd[] = "vm_liveness_test.add_f32";

// out = a + b, elementwise, float32.
absl::Status add_f32(const std::vector<Value>& args) {
  const float* a = args[0].tensor_or_die().data_as_or_die<float>();
  const float* b = args[1].tensor_or_die().data_as_or_die<float>();
  float* out = args[2].tensor_or_die().data_as_or_die<float>();
  for (int64_t i = 0, n = args[2].tensor_or_die().numel(); i < n; ++i) out[i] = a[i] + b[i];
  return absl::OkStatus();
}

class VMLivenessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { runtime::register_library_function(kAdd, add_f32); }

  static Expr add(const Expr& a, const Expr& b, const SymExpr& n) {
    return op::call_dps_library(kAdd, {a, b}, tensor_sinfo({n}, kLivenessF32));
  }

  // main(x: Tensor[(n,), float32]) = x + x + ... + x: `length` chained
  // bindings v_{i+1} = v_i + x, so the result is (length + 1) * x.
  static IRModule chain(int length) {
    SymVar n("n");
    ModuleBuilder mb;
    FunctionBuilder f = mb.function("main");
    Var x = f.param("x", tensor_sinfo({n}, kLivenessF32));
    Var v = x;
    for (int i = 0; i < length; ++i) v = f.emit(add(v, x, n));
    f.ret(v);
    absl::StatusOr<IRModule> mod = mb.build();
    EXPECT_TRUE(mod.ok()) << mod.status();
    return *mod;
  }

  static runtime::Module load(const IRModule& mod, VMCodegenOptions options = {}) {
    absl::StatusOr<runtime::Executable> exec = compile_to_executable(mod, options);
    EXPECT_TRUE(exec.ok()) << exec.status();
    absl::StatusOr<runtime::Module> m = runtime::Module::create(*std::move(exec), nullptr);
    EXPECT_TRUE(m.ok()) << m.status();
    return *m;
  }

  static Tensor filled(int64_t n, float value) {
    Tensor t = *Tensor::empty({n}, kLivenessF32);
    for (int64_t i = 0; i < n; ++i) t.data_as_or_die<float>()[i] = value;
    return t;
  }

  static void expect_all(const absl::StatusOr<Value>& v, float expected) {
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_TRUE(v->is_tensor());
    const Tensor& t = v->tensor_or_die();
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.data_as_or_die<float>()[i], expected) << "element " << i;
  }
};

TEST_F(VMLivenessTest, LongChainKeepsAFewTensorsAliveNotOnePerBinding) {
  constexpr int kLength = 1000;
  constexpr int64_t kElems = 1024;  // 4 KiB per tensor
  runtime::Module m = load(chain(kLength));
  // x, the input and output of the current link, and the output's storage while its tensor
  // is being made.
  EXPECT_LE(m.executable().functions[0].num_registers, 4) << m.executable().disassemble();
  const Tensor x = filled(kElems, 1.0f);
  runtime::PooledAllocator& pool = runtime::default_allocator();
  pool.reset_peak();
  const int64_t before = pool.stats().bytes_in_use;
  absl::StatusOr<Value> y = m["main"](x);
  const int64_t peak = pool.stats().peak_bytes_in_use - before;
  expect_all(y, kLength + 1);
  // Without liveness every intermediate stayed alive: kLength * 4 KiB.
  EXPECT_LE(peak, 3 * kElems * 4) << "peak bytes in use during the call";
}

// 200,000 bindings; 50,000 under a sanitizer, where the run looks for memory errors, which a
// shorter chain reaches as well (the full one took 77 s of a CI run there).
TEST_F(VMLivenessTest, VeryLongChainsBuildAndRunInAFewRegisters) {
  const int length = 200000 / static_cast<int>(testing_util::kSanitizerTrialDivisor);
  runtime::Module m = load(chain(length));
  EXPECT_LE(m.executable().functions[0].num_registers, 4);  // as above: a storage while its tensor is made
  expect_all(m["main"](filled(4, 1.0f)), length + 1);
}

TEST_F(VMLivenessTest, ValuesUsedInOneBranchOrAfterTheIfStayCorrect) {
  // a = 2x is used only in the then branch, b = 3x in the else branch and
  // after the If; each branch makes temporaries of its own.
  SymVar n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, kLivenessF32));
  Var a = f.emit(add(x, x, n), "a");
  Var b = f.emit(add(a, x, n), "b");
  Var r = f.emit_if(
      make_prim_value(SymExpr(n) > 4),
      [&] {
        Var t = f.emit(add(a, x, n), "t");  // 3x
        return Expr(f.emit(add(t, t, n), "t2"));  // 6x
      },
      [&] { return Expr(f.emit(add(b, b, n), "u")); },  // 6x
      "r");
  Var out = f.emit(add(r, b, n), "out");  // 9x
  Var out2 = f.emit(add(out, a, n), "out2");  // 11x
  f.ret(out2);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  runtime::Module m = load(*mod);
  const std::string code = m.executable().disassemble();
  EXPECT_NE(code.find("kill"), std::string::npos) << code;
  expect_all(m["main"](filled(8, 1.0f)), 11.0f);  // then branch
  expect_all(m["main"](filled(3, 1.0f)), 11.0f);  // else branch
  // Serialised and read back, the kills and jumps still run the same.
  absl::StatusOr<runtime::Executable> copy = runtime::Executable::deserialize(m.executable().serialize());
  ASSERT_TRUE(copy.ok()) << copy.status();
  absl::StatusOr<runtime::Module> m2 = runtime::Module::create(*std::move(copy), nullptr);
  ASSERT_TRUE(m2.ok()) << m2.status();
  expect_all((*m2)["main"](filled(2, 2.0f)), 22.0f);
}

TEST_F(VMLivenessTest, FunctionThatNeedsMoreRegistersThanTheVMHasIsAClearError) {
  // A tuple of kMaxRegisters + 1 fields, each computed into a register of its
  // own: all of them are live at once when the tuple is made.
  SymVar n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  f.param("x", tensor_sinfo({n}, kLivenessF32));
  const Expr field = make_prim_value(SymExpr(n) + 1);
  std::vector<Expr> fields(static_cast<size_t>(runtime::Executable::kMaxRegisters) + 1, field);
  f.ret(make_tuple(std::move(fields)));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<runtime::Executable> exec = compile_to_executable(*mod);
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().message(),
            "function main needs 1048578 registers, more than the VM's limit of 1048576 (values live at once)");
}

// main(x: Tensor[(n,), float32]) with n <= 512 declared: returns x + x.
IRModule bounded_entry() {
  SymVar n("n");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n}, kLivenessF32));
  f.upper_bound(n, 512);
  f.ret(f.emit(op::call_dps_library(kAdd, {x, x}, tensor_sinfo({n}, kLivenessF32))));
  absl::StatusOr<IRModule> mod = mb.build();
  EXPECT_TRUE(mod.ok()) << mod.status();
  return *mod;
}

TEST_F(VMLivenessTest, DeclaredUpperBoundIsCheckedAtEntry) {
  for (bool checks : {true, false}) {
    runtime::Module m = load(bounded_entry(), {checks});
    expect_all(m["main"](filled(512, 1.0f)), 2.0f);
    absl::StatusOr<Value> over = m["main"](filled(513, 1.0f));
    ASSERT_FALSE(over.ok()) << "checks " << checks;
    EXPECT_EQ(over.status().message(), "main: n = 513 exceeds its declared upper bound 512");
  }
}

TEST_F(VMLivenessTest, DeclaredUpperBoundIsCheckedAtMatchCast) {
  SymVar m_var("m");
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo_rank(1, kLivenessF32));
  Var xm = f.match_cast(x, tensor_sinfo({m_var}, kLivenessF32), "xm");
  f.upper_bound(m_var, 512);
  f.ret(f.emit(op::call_dps_library(kAdd, {xm, xm}, tensor_sinfo({m_var}, kLivenessF32))));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  runtime::Module m = load(*mod);
  expect_all(m["main"](filled(512, 1.0f)), 2.0f);
  absl::StatusOr<Value> over = m["main"](filled(513, 1.0f));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(), "main: m = 513 exceeds its declared upper bound 512");
  // The bound survives serialisation.
  absl::StatusOr<runtime::Executable> copy = runtime::Executable::deserialize(m.executable().serialize());
  ASSERT_TRUE(copy.ok()) << copy.status();
  absl::StatusOr<runtime::Module> m2 = runtime::Module::create(*std::move(copy), nullptr);
  ASSERT_TRUE(m2.ok()) << m2.status();
  absl::StatusOr<Value> over2 = (*m2)["main"](filled(600, 1.0f));
  ASSERT_FALSE(over2.ok());
  EXPECT_EQ(over2.status().message(), "main: m = 600 exceeds its declared upper bound 512");
}

}  // namespace
}  // namespace relax
