// Default-constructed handles (Var, Expr, SymExpr, StructInfo) given to the
// builder and to the operator constructors: each is an error naming the
// builder call and the operator argument, reported by build(), never a crash.
//
// The operator side is table-driven twice over: every registered operator
// (the registry, so a new op is covered without touching this file) with each
// of its arguments undefined, and every op:: constructor of the headers with
// each of its handle arguments undefined; the second table is checked against
// the registry, so an operator added without a row here fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "relax/ir/builder.h"
#include "relax/ir/normalize.h"
#include "relax/ir/ops.h"

namespace relax {
namespace {

using ::testing::HasSubstr;

const DataType kHandlesF32 = DataType::float32();

// Builds `main(x: Tensor[(4, 4), float32])` whose body emits what `body`
// returns (given x), and returns build()'s error text ("<no error>" if none).
std::string handles_build_error(const std::function<Expr(const Var&)>& body,
                                const char* method = "emit") {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4, 4}, kHandlesF32));
  Expr value = body(x);
  if (std::string(method) == "emit") {
    f.emit(value);
  } else if (std::string(method) == "ret") {
    f.ret(value);
    absl::StatusOr<IRModule> mod = mb.build();
    return mod.ok() ? "<no error>" : std::string(mod.status().message());
  }
  f.ret(x);
  absl::StatusOr<IRModule> mod = mb.build();
  return mod.ok() ? "<no error>" : std::string(mod.status().message());
}

// The operator a constructed call calls ("" for anything else).
std::string called_op(const Expr& e) {
  if (!e.defined()) return "";
  const auto* call = e.as<CallNode>();
  if (call == nullptr || !call->callee.defined()) return "";
  const auto* op = call->callee.as<OpNode>();
  return op == nullptr ? "" : op->name;
}

TEST(BuilderHandlesTest, TheIssueExampleIsAnErrorNamingTheCall) {
  // op::add(x, u) with an undefined Var u used to crash in flatten_operand.
  std::string error = handles_build_error([](const Var& x) {
    Var u;
    return op::add(x, u);
  });
  EXPECT_THAT(error,
              HasSubstr("emit: add: argument 1 (rhs) is undefined (a default-constructed handle)"));
  EXPECT_THAT(error, HasSubstr("builder_handles_test.cc:"));
}

TEST(BuilderHandlesTest, EveryRegisteredOperatorWithAnUndefinedArgument) {
  for (const OpInfo* info : all_ops()) {
    const size_t count = std::max<size_t>(info->args.size(), 1);
    for (size_t i = 0; i < count; ++i) {
      SCOPED_TRACE(info->name + " argument " + std::to_string(i));
      std::string error = handles_build_error([&](const Var& x) {
        std::vector<Expr> args(count, x);
        args[i] = Expr();
        return make_call(info->op, args);
      });
      EXPECT_THAT(error, HasSubstr("emit: " + info->name + ": argument " + std::to_string(i)));
      EXPECT_THAT(error, HasSubstr("is undefined"));

      // normalize() outside the builder says the same.
      std::vector<Expr> args(count, Var("y", tensor_sinfo({4}, kHandlesF32)));
      args[i] = Expr();
      Analyzer analyzer;
      DeduceContext ctx{analyzer, nullptr, nullptr};
      absl::StatusOr<Expr> normalized = normalize(make_call(info->op, args), ctx);
      ASSERT_FALSE(normalized.ok());
      EXPECT_THAT(std::string(normalized.status().message()),
                  HasSubstr(info->name + ": argument " + std::to_string(i)));
    }
  }
}

// One op:: constructor with `arity` handle arguments, each of which the test
// leaves undefined in turn (the others get x, or a handle derived from it).
struct ConstructorRow {
  int arity;
  std::function<Expr(const std::vector<Expr>&)> make;
};

// Every constructor of relax/ir/op/*.h and ops.h, by the Expr arguments it takes.
std::vector<ConstructorRow> constructor_rows() {
  using V = const std::vector<Expr>&;
  const StructInfo t4 = tensor_sinfo({4}, kHandlesF32);
  return {
      // elementwise.h
      {1, [](V a) { return op::neg(a[0]); }},
      {1, [](V a) { return op::abs(a[0]); }},
      {1, [](V a) { return op::exp(a[0]); }},
      {1, [](V a) { return op::log(a[0]); }},
      {1, [](V a) { return op::sqrt(a[0]); }},
      {1, [](V a) { return op::rsqrt(a[0]); }},
      {1, [](V a) { return op::sin(a[0]); }},
      {1, [](V a) { return op::cos(a[0]); }},
      {1, [](V a) { return op::tanh(a[0]); }},
      {1, [](V a) { return op::sigmoid(a[0]); }},
      {1, [](V a) { return op::erf(a[0]); }},
      {1, [](V a) { return op::relu(a[0]); }},
      {1, [](V a) { return op::gelu(a[0]); }},
      {1, [](V a) { return op::silu(a[0]); }},
      {1, [](V a) { return op::clip(a[0], 0, 1); }},
      {1, [](V a) { return op::floor(a[0]); }},
      {1, [](V a) { return op::ceil(a[0]); }},
      {1, [](V a) { return op::round(a[0]); }},
      {1, [](V a) { return op::sign(a[0]); }},
      {1, [](V a) { return op::square(a[0]); }},
      {1, [](V a) { return op::logical_not(a[0]); }},
      {1, [](V a) { return op::isnan(a[0]); }},
      {2, [](V a) { return op::add(a[0], a[1]); }},
      {2, [](V a) { return op::subtract(a[0], a[1]); }},
      {2, [](V a) { return op::multiply(a[0], a[1]); }},
      {2, [](V a) { return op::divide(a[0], a[1]); }},
      {2, [](V a) { return op::floor_divide(a[0], a[1]); }},
      {2, [](V a) { return op::mod(a[0], a[1]); }},
      {2, [](V a) { return op::power(a[0], a[1]); }},
      {2, [](V a) { return op::maximum(a[0], a[1]); }},
      {2, [](V a) { return op::minimum(a[0], a[1]); }},
      {2, [](V a) { return op::equal(a[0], a[1]); }},
      {2, [](V a) { return op::not_equal(a[0], a[1]); }},
      {2, [](V a) { return op::less(a[0], a[1]); }},
      {2, [](V a) { return op::less_equal(a[0], a[1]); }},
      {2, [](V a) { return op::greater(a[0], a[1]); }},
      {2, [](V a) { return op::greater_equal(a[0], a[1]); }},
      {2, [](V a) { return op::logical_and(a[0], a[1]); }},
      {2, [](V a) { return op::logical_or(a[0], a[1]); }},
      {3, [](V a) { return op::where(a[0], a[1], a[2]); }},
      // linalg.h
      {2, [](V a) { return op::matmul(a[0], a[1]); }},
      {3, [](V a) { return op::linear(a[0], a[1], a[2]); }},
      // manipulate.h
      {2, [](V a) { return op::reshape(a[0], a[1]); }},
      {1, [](V a) { return op::reshape(a[0], std::vector<SymExpr>{4, 4}); }},
      {1, [](V a) { return op::permute_dims(a[0]); }},
      {1, [](V a) { return op::expand_dims(a[0], 0); }},
      {1, [](V a) { return op::squeeze(a[0]); }},
      {1, [](V a) { return op::flatten(a[0]); }},
      {2, [](V a) { return op::broadcast_to(a[0], a[1]); }},
      {1, [](V a) { return op::astype(a[0], DataType::int32()); }},
      {1, [](V a) { return op::flip(a[0], 0); }},
      {1, [](V a) { return op::repeat(a[0], 2); }},
      {1, [](V a) { return op::tile(a[0], {2}); }},
      {1, [](V a) { return op::concat(a[0]); }},
      {2, [](V a) { return op::concat(std::vector<Expr>{a[0], a[1]}); }},
      {1, [](V a) { return op::split(a[0], int64_t{2}); }},
      {1, [](V a) { return op::strided_slice(a[0], {0}, {0}, {2}); }},
      {2, [](V a) { return op::take(a[0], a[1]); }},
      {1, [](V a) { return op::pad(a[0], {0, 0, 1, 1}); }},
      {3, [](V a) { return op::one_hot(a[0], a[1], a[2], 4); }},
      // reduce.h
      {1, [](V a) { return op::sum(a[0]); }},
      {1, [](V a) { return op::mean(a[0]); }},
      {1, [](V a) { return op::max(a[0]); }},
      {1, [](V a) { return op::min(a[0]); }},
      {1, [](V a) { return op::prod(a[0]); }},
      {1, [](V a) { return op::variance(a[0]); }},
      {1, [](V a) { return op::std(a[0]); }},
      {1, [](V a) { return op::argmax(a[0]); }},
      {1, [](V a) { return op::argmin(a[0]); }},
      {1, [](V a) { return op::cumsum(a[0]); }},
      {1, [](V a) { return op::cumprod(a[0]); }},
      {1, [](V a) { return op::softmax(a[0]); }},
      // create.h
      {1, [](V a) { return op::zeros(a[0], kHandlesF32); }},
      {1, [](V a) { return op::ones(a[0], kHandlesF32); }},
      {2, [](V a) { return op::full(a[0], a[1]); }},
      {1, [](V a) { return op::zeros_like(a[0]); }},
      {1, [](V a) { return op::ones_like(a[0]); }},
      {2, [](V a) { return op::full_like(a[0], a[1]); }},
      {3, [](V a) { return op::arange(a[0], a[1], a[2]); }},
      {2, [](V a) { return op::tril(a[0], a[1]); }},
      {2, [](V a) { return op::triu(a[0], a[1]); }},
      // nn.h
      {1, [](V a) { return op::log_softmax(a[0]); }},
      {3, [](V a) { return op::layer_norm(a[0], a[1], a[2]); }},
      {2, [](V a) { return op::rms_norm(a[0], a[1]); }},
      {3, [](V a) { return op::group_norm(a[0], a[1], a[2], 1); }},
      {5, [](V a) { return op::batch_norm(a[0], a[1], a[2], a[3], a[4]); }},
      {3, [](V a) { return op::attention(a[0], a[1], a[2]); }},
      {2, [](V a) { return op::rotary_embedding(a[0], a[1]); }},
      // conv.h
      {2, [](V a) { return op::conv1d(a[0], a[1]); }},
      {3, [](V a) { return op::conv1d(a[0], a[1], a[2]); }},
      {2, [](V a) { return op::conv2d(a[0], a[1]); }},
      {3, [](V a) { return op::conv2d(a[0], a[1], a[2]); }},
      {2, [](V a) { return op::conv1d_transpose(a[0], a[1]); }},
      {3, [](V a) { return op::conv1d_transpose(a[0], a[1], a[2]); }},
      {2, [](V a) { return op::conv2d_transpose(a[0], a[1]); }},
      {3, [](V a) { return op::conv2d_transpose(a[0], a[1], a[2]); }},
      {1, [](V a) { return op::max_pool2d(a[0], {2, 2}); }},
      {1, [](V a) { return op::avg_pool2d(a[0], {2, 2}); }},
      {1, [](V a) { return op::adaptive_avg_pool2d(a[0]); }},
      // quantize.h
      {2, [](V a) { return op::dequantize(a[0], a[1], 32); }},
      {1, [](V a) { return op::quantize(a[0], 32); }},
      // dynamic.h
      {1, [](V a) { return op::nonzero(a[0]); }},
      {1, [](V a) { return op::unique(a[0]); }},
      {2, [](V a) { return op::masked_select(a[0], a[1]); }},
      {1, [t4](V a) { return op::call_builtin("nonzero", {a[0]}, t4); }},
      // memory.h
      {1, [](V a) { return op::alloc_storage(a[0]); }},
      {3, [](V a) { return op::alloc_tensor(a[0], a[1], a[2], kHandlesF32); }},
      {1, [](V a) { return op::kill_storage(a[0]); }},
      {1, [](V a) { return op::kill_tensor(a[0]); }},
      {2, [](V a) { return op::view(a[0], a[1]); }},
      {3, [](V a) { return op::call_tir_dps(a[0], {a[1]}, {a[2]}); }},
      {2, [](V a) { return op::call_library_dps("f", {a[0]}, {a[1]}); }},
      {1, [t4](V a) { return op::call_dps_library("f", {a[0]}, t4, SymExpr(16)); }},
      // ops.h
      {2, [t4](V a) { return op::call_tir(a[0], {a[1]}, t4); }},
      {2, [t4](V a) { return op::call_tir_inplace(a[0], {a[1]}, {0}, t4); }},
      {1, [t4](V a) { return op::call_dps_library("f", {a[0]}, t4); }},
  };
}

TEST(BuilderHandlesTest, EveryConstructorWithAnUndefinedHandle) {
  std::set<std::string> covered;
  for (const ConstructorRow& row : constructor_rows()) {
    for (int i = 0; i < row.arity; ++i) {
      std::string op;
      std::string error = handles_build_error([&](const Var& x) {
        std::vector<Expr> args(static_cast<size_t>(row.arity), x);
        args[static_cast<size_t>(i)] = Var();
        Expr call = row.make(args);
        op = called_op(call);
        return call;
      });
      SCOPED_TRACE(op + " handle " + std::to_string(i));
      EXPECT_FALSE(op.empty());
      covered.insert(op);
      EXPECT_THAT(error, HasSubstr("emit: " + op + ": "));
      EXPECT_THAT(error, HasSubstr("is undefined (a default-constructed handle)"));
    }
  }
  // Every operator's undefined arguments are checked through the registry by
  // EveryRegisteredOperatorWithAnUndefinedArgument; these rows check that the named
  // constructors forward them (a new operator without a named constructor needs no row).
  EXPECT_GT(covered.size(), 90u);
}

TEST(BuilderHandlesTest, UndefinedSymExprAndStructInfoArguments) {
  const StructInfo t4 = tensor_sinfo({4}, kHandlesF32);
  EXPECT_THAT(handles_build_error([](const Var& x) {
                return op::reshape(x, std::vector<SymExpr>{4, SymExpr()});
              }),
              HasSubstr("emit: reshape: dim 1 of argument 1 (shape) is undefined"));
  EXPECT_THAT(handles_build_error([](const Var& x) {
                return op::broadcast_to(x, std::vector<SymExpr>{SymExpr(), 4});
              }),
              HasSubstr("emit: broadcast_to: dim 0 of argument 1 (shape) is undefined"));
  EXPECT_THAT(handles_build_error([](const Var& x) {
                return op::strided_slice(x, {0}, {SymExpr()}, {2});
              }),
              HasSubstr("emit: strided_slice: element 0 of attribute `begin` is undefined"));
  EXPECT_THAT(handles_build_error([](const Var& x) {
                return op::call_tir(x, {x}, StructInfo());
              }),
              HasSubstr("emit: call_tir: annotation argument 0 is undefined"));
  EXPECT_THAT(handles_build_error([](const Var& x) {
                return op::call_tir(x, {x}, tensor_sinfo({SymExpr(), 4}, kHandlesF32));
              }),
              HasSubstr("emit: call_tir: dim 0 of annotation argument 0 is undefined"));
  EXPECT_THAT(handles_build_error([&](const Var& x) {
                return op::call_tir(x, {x}, t4, {SymExpr()});
              }),
              HasSubstr("emit: call_tir: dim 0 of argument 2 (sym_args) is undefined"));
  EXPECT_THAT(handles_build_error([](const Var& x) {
                return op::call_builtin("unique", {x}, StructInfo());
              }),
              HasSubstr("emit: call_builtin: annotation argument 0 is undefined"));
  EXPECT_THAT(handles_build_error([](const Var& x) { return op::linear(x, x, Expr()); }),
              HasSubstr("emit: linear: argument 2 (bias) is undefined"));
}

TEST(BuilderHandlesTest, EveryBuilderMethodWithUndefinedHandles) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  const int param_line = __LINE__ + 1;
  Var p = f.param("p", StructInfo());
  Var q = f.param("q", tensor_sinfo({SymExpr(), 4}, kHandlesF32));
  Var x = f.param("x", tensor_sinfo({4}, kHandlesF32));
  Var c = f.param("c", prim_sinfo(DataType::boolean()));
  f.set_attr("dims", std::vector<SymExpr>{SymExpr()});
  f.set_attr("", int64_t{1});
  f.emit(Expr());
  f.emit(op::relu(Var()));
  {
    auto df = f.dataflow();
    f.emit_output(op::add(x, Expr()));
  }
  f.match_cast(Var(), tensor_sinfo({4}, kHandlesF32));
  f.match_cast(x, StructInfo());
  f.match_cast(x, tensor_sinfo({SymExpr()}, kHandlesF32));
  f.emit_if(Expr(), [&] { return Expr(x); }, [&] { return Expr(x); });
  f.emit_if(c, [&] { return op::neg(Var()); },
            [&] { return Expr(x); });
  f.ret(op::multiply(x, Var()));

  mb.declare_function("g", StructInfo());
  mb.declare_function("h", func_sinfo({tensor_sinfo({SymExpr()}, kHandlesF32)},
                                      tensor_sinfo({4}, kHandlesF32)));
  mb.add_prim_func("k", Expr());
  mb.add_extern_func("e", "sym", func_sinfo({tensor_sinfo({SymExpr()}, kHandlesF32)}, object_sinfo()));

  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_FALSE(mod.ok());
  const std::string error(mod.status().message());
  EXPECT_THAT(error, HasSubstr(std::string(__FILE__) + ":" + std::to_string(param_line) +
                               ": param: parameter `p` has no annotation"));
  EXPECT_THAT(error, HasSubstr("param: dim 0 of the annotation of parameter `q` is undefined"));
  EXPECT_THAT(error, HasSubstr("set_attr: element 0 of attribute `dims` is undefined"));
  EXPECT_THAT(error, HasSubstr("set_attr: the attribute name is empty"));
  EXPECT_THAT(error, HasSubstr("emit: the value is undefined"));
  EXPECT_THAT(error, HasSubstr("emit: relu: argument 0 (x) is undefined"));
  EXPECT_THAT(error, HasSubstr("emit_output: add: argument 1 (rhs) is undefined"));
  EXPECT_THAT(error, HasSubstr("match_cast: the value is undefined"));
  EXPECT_THAT(error, HasSubstr("match_cast: the pattern is undefined"));
  EXPECT_THAT(error, HasSubstr("match_cast: dim 0 of the pattern is undefined"));
  EXPECT_THAT(error, HasSubstr("emit_if: the value is undefined"));
  EXPECT_THAT(error, HasSubstr("emit_if: neg: argument 0 (x) is undefined"));
  EXPECT_THAT(error, HasSubstr("ret: multiply: argument 1 (rhs) is undefined"));
  EXPECT_THAT(error, HasSubstr("declare_function(`g`): expected a Func annotation with parameters"));
  EXPECT_THAT(error,
              HasSubstr("declare_function(`h`): dim 0 of parameter 0 of the annotation is undefined"));
  EXPECT_THAT(error, HasSubstr("add_prim_func(`k`): expected a PrimFunc, got an undefined expression"));
  EXPECT_THAT(error,
              HasSubstr("add_extern_func(`e`): dim 0 of parameter 0 of the annotation is undefined"));
  EXPECT_EQ(mb.errors().size(), 17u) << error;
}

TEST(BuilderHandlesTest, RetOfAnUndefinedVarIsStillAnError) {
  EXPECT_THAT(handles_build_error([](const Var&) { return Var(); }, "ret"),
              HasSubstr("ret: the value is undefined (a default-constructed handle)"));
}

}  // namespace
}  // namespace relax
