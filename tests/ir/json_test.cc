// The JSON form of an IRModule (relax/ir/json.h): round trips over a corpus
// that covers every node kind, and the identity of shared nodes, variables
// and buffers. Errors and fuzzing are in json_errors_test.cc.
#include "relax/ir/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "json_corpus.h"
#include "relax/ir/op.h"
#include "relax/shape/intrinsics.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

using namespace json_testing;  // NOLINT(google-build-using-namespace)
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Round trips.

TEST(JsonTest, EmptyModuleHasTheVersionedHeader) {
  IRModule mod;
  const std::string text = to_json(mod);
  EXPECT_EQ(text, R"({"format":"relax.ir","version":1,"functions":[],"attrs":{},"nodes":[]})");
  IRModule back = read_ok(text);
  EXPECT_TRUE(back.functions().empty());
}

TEST(JsonTest, BuilderModuleRoundTripsAndStaysWellFormed) {
  IRModule mod = builder_module();
  ASSERT_TRUE(well_formed(mod).ok()) << well_formed(mod);
  expect_round_trip(mod);
  IRModule back = read_ok(to_json(mod));
  EXPECT_TRUE(well_formed(back).ok()) << well_formed(back);
}

TEST(JsonTest, EveryExprAndStructInfoKindRoundTrips) {
  IRModule mod = every_kind_module();
  Json doc = doc_of(mod);
  for (std::string_view kind :
       {"expr.var", "expr.dataflow_var", "expr.global_var", "expr.constant", "expr.tuple",
        "expr.tuple_get_item", "expr.call", "expr.shape", "expr.prim_value", "expr.string",
        "expr.if", "expr.seq", "expr.function", "expr.extern_func", "expr.op", "expr.prim_func",
        "sinfo.object", "sinfo.prim", "sinfo.shape", "sinfo.tensor", "sinfo.tuple", "sinfo.func"}) {
    EXPECT_GT(count_kind(doc, kind), 0u) << kind;
  }
  expect_round_trip(mod);
}

TEST(JsonTest, EveryStmtAndSymExprKindRoundTrips) {
  IRModule mod;
  mod.add("kernel", every_loop_kind_kernel());
  Json doc = doc_of(mod);
  for (std::string_view kind :
       {"stmt.for", "stmt.seq", "stmt.store", "stmt.if", "stmt.let", "stmt.allocate",
        "stmt.evaluate", "stmt.block", "buffer", "sym.int", "sym.float", "sym.var", "sym.add",
        "sym.sub", "sym.mul", "sym.div", "sym.floordiv", "sym.floormod", "sym.min", "sym.max",
        "sym.eq", "sym.ne", "sym.lt", "sym.le", "sym.gt", "sym.ge", "sym.and", "sym.or",
        "sym.not", "sym.select", "sym.cast", "sym.call", "sym.load"}) {
    EXPECT_GT(count_kind(doc, kind), 0u) << kind;
  }
  for (const IntrinsicInfo& row : intrinsic_table()) {
    bool found = false;
    for (const Json& node : doc["nodes"]) found = found || node.value("intrinsic", "") == row.name;
    EXPECT_TRUE(found) << row.name;
  }
  expect_round_trip(mod);
}

TEST(JsonTest, StructInfoDetailsSurvive) {
  IRModule back = read_ok(to_json(every_kind_module()));
  const FunctionNode* fn = function_of(back, "kinds");
  ASSERT_NE(fn, nullptr);
  std::vector<std::string> texts;
  for (const Var& p : fn->params) texts.push_back(p.struct_info().to_string());
  EXPECT_THAT(texts,
              ::testing::ElementsAre("Object", "Prim[int64]", "Prim[int64, n]", "Shape[(n, 4)]",
                                     "Shape[ndim=2]", "Shape[]", "Tensor[(n, 4), float32, cuda:1]",
                                     "Tensor[ndim=2, ?]", "Tensor[ndim=?, ?, cpu]",
                                     "Tensor[(n,), int16, cpu:3]", "Tuple[(Object, Tuple[()])]",
                                     "Func[(Tensor[(n,), float32]) -> Object]",
                                     "Func[opaque -> Object, impure]", "Tensor[(n,), bool]"));
  EXPECT_FALSE(fn->pure);
  ASSERT_EQ(fn->upper_bounds.size(), 1u);
  EXPECT_EQ(fn->upper_bounds[0].upper, 64);
}

TEST(JsonTest, AttributesOfEveryAlternativeRoundTripExactly) {
  IRModule mod = every_kind_module();
  IRModule back = read_ok(to_json(mod));
  const Expr& call = function_of(back, "kinds")->body.as<SeqExprNode>()->blocks[0].bindings[2].value;
  const Attrs& attrs = call.as<CallNode>()->attrs;
  const Attrs& original =
      function_of(mod, "kinds")->body.as<SeqExprNode>()->blocks[0].bindings[2].value.as<CallNode>()->attrs;
  ASSERT_EQ(attrs.size(), original.size());
  for (const auto& [name, value] : original) {
    ASSERT_TRUE(attrs.contains(name)) << name;
    const AttrValue& got = attrs.at(name);
    ASSERT_EQ(got.index(), value.index()) << name;
    if (const auto* d = std::get_if<double>(&value)) {
      EXPECT_EQ(std::bit_cast<uint64_t>(std::get<double>(got)), std::bit_cast<uint64_t>(*d)) << name;
    } else if (const auto* syms = std::get_if<std::vector<SymExpr>>(&value)) {
      const auto& got_syms = std::get<std::vector<SymExpr>>(got);
      ASSERT_EQ(got_syms.size(), syms->size());
      for (size_t i = 0; i < syms->size(); ++i) EXPECT_EQ(got_syms[i].to_string(), (*syms)[i].to_string());
    } else if (const auto* i = std::get_if<int64_t>(&value)) {
      EXPECT_EQ(std::get<int64_t>(got), *i) << name;
    } else if (const auto* b = std::get_if<bool>(&value)) {
      EXPECT_EQ(std::get<bool>(got), *b) << name;
    } else if (const auto* str = std::get_if<std::string>(&value)) {
      EXPECT_EQ(std::get<std::string>(got), *str) << name;
    } else if (const auto* t = std::get_if<DataType>(&value)) {
      EXPECT_EQ(std::get<DataType>(got), *t) << name;
    } else {
      EXPECT_EQ(std::get<std::vector<int64_t>>(got), std::get<std::vector<int64_t>>(value)) << name;
    }
  }
  EXPECT_EQ(std::get<int64_t>(back.attrs().at("version_tag")), 3);
}

TEST(JsonTest, FloatsAreBitExact) {
  std::mt19937_64 rng(7);
  Attrs attrs;
  std::vector<SymExpr> f32_values;
  std::vector<SymExpr> f16_values;
  for (int i = 0; i < 300; ++i) {
    const double d = std::bit_cast<double>(rng());
    attrs["a" + std::to_string(i)] = d;
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    f32_values.push_back(SymExpr::float_imm(f, f32()));
    f16_values.push_back(SymExpr::float_imm(d, f16));
  }
  IRModule mod;
  mod.add("e", make_extern_func("e"));
  mod.attrs() = attrs;
  mod.attrs()["f32"] = f32_values;
  mod.attrs()["f16"] = f16_values;
  IRModule back = read_ok(to_json(mod));
  for (int i = 0; i < 300; ++i) {
    const std::string key = "a" + std::to_string(i);
    EXPECT_EQ(std::bit_cast<uint64_t>(std::get<double>(back.attrs().at(key))),
              std::bit_cast<uint64_t>(std::get<double>(attrs.at(key))));
  }
  for (const char* key : {"f32", "f16"}) {
    const auto& got = std::get<std::vector<SymExpr>>(back.attrs().at(key));
    const auto& want = std::get<std::vector<SymExpr>>(mod.attrs().at(key));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i]->value(), want[i]->value()) << key << " " << i;
      EXPECT_EQ(got[i].dtype(), want[i].dtype());
    }
  }
  EXPECT_EQ(to_json(back), to_json(mod));
}

TEST(JsonTest, ConstantBytesShapeAndDtypeSurvive) {
  IRModule back = read_ok(to_json(every_kind_module()));
  const Expr& tuple =
      function_of(back, "kinds")->body.as<SeqExprNode>()->blocks[0].bindings[0].value;
  const auto& fields = tuple.as<TupleNode>()->fields;
  const runtime::Tensor& t = fields[1].as<ConstantNode>()->data;
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.dtype(), f32());
  const float* data = t.data_as_or_die<float>();
  EXPECT_EQ(data[0], 1.5f);
  EXPECT_TRUE(std::signbit(data[1]));
  EXPECT_TRUE(std::isinf(data[2]));
  EXPECT_EQ(std::bit_cast<uint32_t>(data[3]), std::bit_cast<uint32_t>(3.0e-39f));
  const runtime::Tensor& small = fields[2].as<ConstantNode>()->data;
  EXPECT_EQ(small.data_as_or_die<int8_t>()[0], -128);
  EXPECT_EQ(fields[4].as<ConstantNode>()->data.shape(), (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(fields[5].as<ConstantNode>()->data.ndim(), 0);
}

TEST(JsonTest, StridedConstantIsWrittenCompact) {
  // A 2x2 view of the left half of a 2x4 float buffer.
  float storage[8] = {1, 2, 0, 0, 3, 4, 0, 0};
  runtime::Tensor view = runtime::Tensor::borrow(storage, {2, 2}, f32(), {4, 1});
  IRModule mod;
  Var p("p", object_sinfo());
  mod.add("f", make_function({p}, make_seq_expr({}, make_constant(view), view_sinfo()), view_sinfo()));
  IRModule back = read_ok(to_json(mod));
  const auto* body = function_of(back, "f")->body.as<SeqExprNode>();
  const runtime::Tensor& t = body->body.as<ConstantNode>()->data;
  EXPECT_TRUE(t.is_contiguous());
  const float* d = t.data_as_or_die<float>();
  EXPECT_EQ(std::vector<float>(d, d + 4), (std::vector<float>{1, 2, 3, 4}));
}

// ---------------------------------------------------------------------------
// Identity.

TEST(JsonTest, AVarUsedManyTimesIsOneNodeAndOneObject) {
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr sum = op_call("add", {x, x});
  Var s = var("s", sum);
  Expr prod = op_call("multiply", {s, x});
  Var r = var("r", prod);
  IRModule mod;
  mod.add("main", function({x}, {plain({bind(s, sum), bind(r, prod)})}, r));
  Json doc = doc_of(mod);
  EXPECT_EQ(count_kind(doc, "expr.var"), 3u);  // x, s, r
  EXPECT_EQ(count_kind(doc, "sym.var"), 1u);

  IRModule back = read_ok(doc.dump());
  const FunctionNode* fn = function_of(back, "main");
  const Var& param = fn->params[0];
  const auto& bindings = fn->body.as<SeqExprNode>()->blocks[0].bindings;
  const auto* add = bindings[0].value.as<CallNode>();
  EXPECT_TRUE(add->args[0].same_as(param));
  EXPECT_TRUE(add->args[1].same_as(param));
  EXPECT_TRUE(bindings[1].value.as<CallNode>()->args[0].same_as(bindings[0].var));
  EXPECT_TRUE(bindings[1].value.as<CallNode>()->args[1].same_as(param));
  EXPECT_TRUE(fn->body.as<SeqExprNode>()->body.same_as(bindings[1].var));
}

TEST(JsonTest, SameNamedSymVarsStayDistinct) {
  SymVar n1("n");
  SymVar n2("n");
  Var a("a", tensor({n1}));
  Var b("b", tensor({n2}));
  Var t("t", tuple_sinfo({a.struct_info(), b.struct_info()}));
  IRModule mod;
  mod.add("main", function({a, b}, {plain({bind(t, norm(make_tuple({a, b})))})}, t));
  Json doc = doc_of(mod);
  EXPECT_EQ(count_kind(doc, "sym.var"), 2u);

  IRModule back = read_ok(doc.dump());
  const FunctionNode* fn = function_of(back, "main");
  const SymExpr& d1 = fn->params[0].struct_info().as<TensorStructInfoNode>()->shape->at(0);
  const SymExpr& d2 = fn->params[1].struct_info().as<TensorStructInfoNode>()->shape->at(0);
  EXPECT_EQ(SymVar::from_expr(d1).name(), "n");
  EXPECT_EQ(SymVar::from_expr(d2).name(), "n");
  EXPECT_FALSE(d1.same_as(d2));
  EXPECT_FALSE(structural_equal(d1, d2));
  // The tuple's annotation uses the very same variables as the parameters.
  const auto* tuple_sinfo_node = fn->body.as<SeqExprNode>()->blocks[0].bindings[0].var.struct_info()
                                     .as<TupleStructInfoNode>();
  EXPECT_TRUE(tuple_sinfo_node->fields[0].as<TensorStructInfoNode>()->shape->at(0).same_as(d1));
  EXPECT_TRUE(tuple_sinfo_node->fields[1].as<TensorStructInfoNode>()->shape->at(0).same_as(d2));
  RELAX_EXPECT_STRUCTURAL_EQ(mod, back);
}

TEST(JsonTest, BuffersAndSharedSubtreesKeepTheirIdentity) {
  SymVar n("n");
  SymVar i("i");
  Buffer a("A", f32(), {n});
  Buffer a2("A", f32(), {n});  // same name, another buffer
  const SymExpr shared = buffer_load(a, {i}) * 2.0;
  Stmt body = seq({store(a2, {i}, shared + shared), store(a, {i}, shared)});
  IRModule mod;
  mod.add("k", prim_func({buffer_param(a), buffer_param(a2)}, loop(i, n, body)));
  Json doc = doc_of(mod);
  EXPECT_EQ(count_kind(doc, "buffer"), 2u);
  EXPECT_EQ(count_kind(doc, "sym.load"), 1u);
  EXPECT_EQ(count_kind(doc, "sym.mul"), 1u);

  IRModule back = read_ok(doc.dump());
  const auto* pf = back.lookup("k").as<PrimFuncNode>();
  const Buffer& ra = *pf->params[0].buffer;
  const Buffer& ra2 = *pf->params[1].buffer;
  EXPECT_FALSE(ra.same_as(ra2));
  const auto* stmts = pf->body.as<ForNode>()->body.as<SeqStmtNode>();
  const auto* first = stmts->stmts[0].as<BufferStoreNode>();
  const auto* second = stmts->stmts[1].as<BufferStoreNode>();
  EXPECT_TRUE(first->buffer.same_as(ra2));
  EXPECT_TRUE(second->buffer.same_as(ra));
  EXPECT_TRUE(first->value.operand(0).same_as(first->value.operand(1)));
  EXPECT_TRUE(second->value.same_as(first->value.operand(0)));
  EXPECT_TRUE(second->value.operand(0)->buffer_node() == ra.get());
  EXPECT_TRUE(first->indices[0].same_as(pf->body.as<ForNode>()->loop_var));
}

TEST(JsonTest, OpsReadBackAsTheRegisteredOps) {
  IRModule back = read_ok(to_json(builder_module()));
  const auto* seq = function_of(back, "main")->body.as<SeqExprNode>();
  const auto* call = seq->blocks[0].bindings[0].value.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->callee.same_as(find_op("add")->op));
}

TEST(JsonTest, AnnotationsComeFromTheDocument) {
  IRModule mod = builder_module();
  IRModule back = read_ok(to_json(mod));
  const auto* before = function_of(mod, "main")->body.as<SeqExprNode>();
  const auto* after = function_of(back, "main")->body.as<SeqExprNode>();
  ASSERT_EQ(before->blocks.size(), after->blocks.size());
  for (size_t b = 0; b < before->blocks.size(); ++b) {
    ASSERT_EQ(before->blocks[b].bindings.size(), after->blocks[b].bindings.size());
    for (size_t i = 0; i < before->blocks[b].bindings.size(); ++i) {
      const Expr& v0 = before->blocks[b].bindings[i].value;
      const Expr& v1 = after->blocks[b].bindings[i].value;
      ASSERT_TRUE(v1.struct_info().defined());
      EXPECT_EQ(v0.struct_info().to_string(), v1.struct_info().to_string());
      EXPECT_TRUE(structural_equal(v0.struct_info(), v1.struct_info()) ||
                  v0.struct_info().to_string() == v1.struct_info().to_string());
    }
  }
  EXPECT_EQ(function_of(back, "main")->struct_info().to_string(),
            function_of(mod, "main")->struct_info().to_string());
  // A node without annotation stays without one.
  IRModule kinds = read_ok(to_json(every_kind_module()));
  const auto& bindings = function_of(kinds, "kinds")->body.as<SeqExprNode>()->blocks[0].bindings;
  EXPECT_FALSE(bindings[6].value.struct_info().defined());
}

TEST(JsonTest, IndentedOutputHasOneNodePerLineAndReadsBack) {
  IRModule mod = builder_module();
  const std::string pretty = to_json(mod, 2);
  EXPECT_THAT(pretty, HasSubstr("\n  \"format\": \"relax.ir\",\n  \"version\": 1,"));
  EXPECT_THAT(pretty, HasSubstr("\n  \"nodes\": [\n    {\"kind\":"));
  const Json doc = Json::parse(pretty);
  EXPECT_EQ(static_cast<size_t>(std::count(pretty.begin(), pretty.end(), '\n')),
            doc["nodes"].size() + doc["functions"].size() + 9);
  IRModule back = read_ok(pretty);
  EXPECT_EQ(to_json(back), to_json(mod));
}

TEST(JsonTest, StringsThatAreNotUtf8RoundTrip) {
  IRModule mod;
  mod.add("f", make_extern_func(std::string("sym\xc3\x28", 5)));
  mod.attrs()["blob"] = std::string("\x00\xff", 2);
  const std::string text = to_json(mod);
  EXPECT_THAT(text, HasSubstr("\"base64\""));
  IRModule back = read_ok(text);
  EXPECT_EQ(back.lookup("f").as<ExternFuncNode>()->symbol, std::string("sym\xc3\x28", 5));
  EXPECT_EQ(std::get<std::string>(back.attrs().at("blob")), std::string("\x00\xff", 2));
}

}  // namespace
}  // namespace relax
