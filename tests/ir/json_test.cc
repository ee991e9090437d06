// The JSON form of an IRModule (relax/ir/json.h): round trips over a corpus
// that covers every node kind, identity preservation, version and input
// errors with their JSON paths, and a fuzz test that mutates valid documents.
#include "relax/ir/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ir_fixtures.h"
#include "nlohmann/json.hpp"
#include "relax/ir/builder.h"
#include "relax/ir/op.h"
#include "relax/ir/ops.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/testing.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

using namespace fixtures;  // NOLINT(google-build-using-namespace)
using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

const DataType i32 = DataType::int32();
const DataType f16 = DataType::float16();
const DataType f64 = DataType::float64();

// ---------------------------------------------------------------------------
// The corpus.

StructInfo f32_tensor_any() { return tensor_sinfo_rank(kUnknownNDim, f32()); }
StructInfo view_sinfo() { return tensor_sinfo({2, 2}, f32()); }

runtime::Tensor tensor_of(std::vector<int64_t> shape, DataType dtype, const void* bytes) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(std::move(shape), dtype);
  RELAX_CHECK(t.ok()) << t.status();
  if (t->nbytes() > 0) std::memcpy(t->data(), bytes, t->nbytes());
  return *t;
}

// A PrimFunc using every statement kind and every SymExpr kind.
Expr every_loop_kind_kernel() {
  SymVar n("n");
  SymVar k("k", i32);
  SymVar i("i");
  SymVar j("j");
  SymVar vi("vi");
  SymVar vj("vj");
  SymVar t("t", f32());
  Buffer a("A", f32(), {n, 4});
  Buffer b("B", f32(), {n, 4}, {SymExpr(4), SymExpr(1)});
  Buffer c("C", f16, {n});
  Buffer w("W", f64, {SymExpr(8)}, {}, BufferScope::kWorkspace);
  Buffer l("L", i32, {n}, {}, BufferScope::kLocal);

  const SymExpr av = buffer_load(a, {vi, vj});
  const SymExpr bv = buffer_load(b, {vi, vj});
  const SymExpr value = av * 0.5 + exp(bv);
  const SymExpr cond = ((vi < 3) && !(vj == 2)) || (vi >= vj) || (vi != vj && vi <= 7) || (vj > 0);
  const SymExpr picked = select(cond, t / 2.0, -t);
  const SymExpr every_intrinsic = sqrt(t) + rsqrt(t) + tanh(t) + erf(t) + sigmoid(t) +
                                  pow(t, SymExpr::float_imm(2.0, f32())) + abs(t) + fma(t, t, t) +
                                  log(t);
  const SymExpr special_floats =
      SymExpr::float_imm(std::numeric_limits<double>::infinity(), f64) -
      SymExpr::float_imm(-std::numeric_limits<double>::infinity(), f64) +
      SymExpr::float_imm(std::nan(""), f64) * SymExpr::float_imm(-0.0, f64) +
      SymExpr::float_imm(1e-300, f64) + cast(f64, SymExpr::float_imm(0.1, f32())) +
      cast(f64, SymExpr::float_imm(65504.0, f16)) +
      cast(f64, SymExpr::float_imm(3.140625, DataType::bfloat16()));
  const SymExpr odd_ints = cast(i32, SymExpr::int_imm(-128, DataType{DataType::Code::kInt, 8, 1}) +
                                         SymExpr::int_imm(127, DataType{DataType::Code::kInt, 8, 1})) +
                           cast(i32, SymExpr::int_imm(std::numeric_limits<int64_t>::max(),
                                                      DataType{DataType::Code::kUInt, 64, 1}) >
                                         SymExpr::int_imm(0, DataType{DataType::Code::kUInt, 64, 1})) +
                           cast(i32, SymExpr::boolean(true)) + abs(k);
  const SymExpr int_ops =
      cast(i32, min(vi, vj) - max(vi, 1) * floordiv(vi, 2) + floormod(vi + 1, 3)) + odd_ints;

  Stmt body = seq({
      store(a, {vi, vj}, picked),
      Stmt(std::make_shared<const IfThenElseNode>(vi > 1, store(c, {vi}, cast(f16, every_intrinsic)),
                                                  Stmt(std::make_shared<const EvaluateNode>(exp(t))))),
      allocate(w, store(w, {floormod(vi, 8)}, special_floats)),
      allocate(l, store(l, {vi}, int_ops)),
  });
  Stmt blk = block("compute",
                   {IterVar{vi, n, IterType::kSpatial, i}, IterVar{vj, 4, IterType::kReduction, j}},
                   let(t, value, body), store(c, {vi}, cast(f16, SymExpr::float_imm(0.0, f32()))));
  Stmt nest = loop(i, n, loop(j, 4, blk, ForKind::kVectorized), ForKind::kParallel);
  nest = Stmt(std::make_shared<const ForNode>(SymVar("u"), SymExpr(1), SymExpr(2),
                                              ForKind::kUnrolled, nest));
  Attrs attrs{{"tir.noalias", true}, {"kernel_kind", std::string("elementwise")}};
  return prim_func({buffer_param(a), buffer_param(b), buffer_param(c), scalar_param(k)}, nest,
                   attrs);
}

// A module built with the builder (so normalised), calling a kernel and an extern function.
IRModule builder_module() {
  ModuleBuilder mb;
  SymVar n("n");
  SymVar nk("n");
  Buffer a("A", f32(), {nk, 4});
  Buffer out("Out", f32(), {nk, 4});
  SymVar i("i");
  SymVar j("j");
  Expr kernel = prim_func({buffer_param(a), buffer_param(out)},
                          loop(i, nk, loop(j, 4, store(out, {i, j}, buffer_load(a, {i, j}) * 2.0))));
  Expr kernel_gv = mb.add_prim_func("double_it", kernel);
  mb.add_extern_func("ext", "my_lib_fn", func_sinfo({tensor_sinfo({n, 4}, f32())}, object_sinfo()));

  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 4}, f32()));
  Var w = f.param("w", tensor_sinfo({4, 4}, f32()));
  f.upper_bound(n, 1024);
  f.set_attr("global_symbol", std::string("main"));
  Var z;
  {
    auto df = f.dataflow();
    Var y = f.emit(op::add(x, x));
    Var p = f.emit(op::matmul(y, op::permute_dims(w)));
    z = f.emit_output(op::multiply(p, x), "z");
  }
  Var called = f.emit(op::call_tir(kernel_gv, {z}, tensor_sinfo({n, 4}, f32())));
  Var lib = f.emit(op::call_dps_library("my_dps_fn", {called}, tensor_sinfo({n, 4}, f32())));
  Var m = f.match_cast(lib, tensor_sinfo({SymVar("m"), 4}, f32()), "m_val");
  Var r = f.emit(op::reshape(m, std::vector<SymExpr>{SymExpr(-1)}));
  Var chosen = f.emit_if(
      make_prim_value(n > 2), [&]() -> Expr { return f.emit(op::add(r, r)); },
      [&]() -> Expr { return r; });
  f.ret(chosen);
  absl::StatusOr<IRModule> mod = mb.build();
  RELAX_CHECK(mod.ok()) << mod.status();
  mod->attrs()["model_name"] = std::string("tiny");
  return *mod;
}

// A function with every graph expression kind, every StructInfo kind and every
// attribute alternative, built directly (some nodes left without annotation).
Expr every_expr_kind_function() {
  SymVar n("n");
  std::vector<Var> params = {
      Var("obj", object_sinfo()),
      Var("p", prim_sinfo(DataType::int64())),
      Var("pn", prim_sinfo(DataType::int64(), n)),
      Var("s", shape_sinfo({n, 4})),
      Var("s2", shape_sinfo_rank(2)),
      Var("s_any", shape_sinfo_rank(kUnknownNDim)),
      Var("x", tensor_sinfo({n, 4}, f32(), Device::cuda(1))),
      Var("x2", tensor_sinfo_rank(2, std::nullopt)),
      Var("x_any", tensor_sinfo_rank(kUnknownNDim, std::nullopt, Device::cpu())),
      Var("xv", tensor_sinfo({n}, DataType{DataType::Code::kFloat, 32, 4}, Device::cpu(3))),
      Var("tup", tuple_sinfo({object_sinfo(), tuple_sinfo({})})),
      Var("fn", func_sinfo({tensor_sinfo({n}, f32())}, object_sinfo())),
      Var("opaque", opaque_func_sinfo(object_sinfo(), /*pure=*/false)),
      Var("b", tensor_sinfo({n}, DataType::boolean())),
  };
  const Var& x = params[6];

  const float floats[4] = {1.5f, -0.0f, std::numeric_limits<float>::infinity(), 3.0e-39f};
  const int8_t small[3] = {-128, 0, 127};
  const uint8_t flags[2] = {1, 0};
  Expr c_f32 = make_constant(tensor_of({2, 2}, f32(), floats));
  Expr c_i8 = make_constant(tensor_of({3}, DataType{DataType::Code::kInt, 8, 1}, small));
  Expr c_bool = make_constant(tensor_of({2}, DataType::boolean(), flags));
  Expr c_empty = make_constant(tensor_of({0, 5}, f32(), nullptr));
  Expr c_scalar = make_constant(tensor_of({}, f64, &floats[0]));

  Expr ext = make_extern_func("ext_fn", func_sinfo({object_sinfo()}, object_sinfo()));
  Expr gv = make_global_var("helper", func_sinfo({}, object_sinfo()));
  Attrs every_attr{
      {"i", int64_t{-7}},
      {"f", 0.1},
      {"f_nan", std::nan("")},
      {"f_inf", -std::numeric_limits<double>::infinity()},
      {"f_neg_zero", -0.0},
      {"f_payload_nan", std::bit_cast<double>(uint64_t{0x7ff0000000000123})},
      {"flag", true},
      {"name", std::string("hello \"world\"\n\xe2\x9c\x93")},
      {"bytes", std::string("\xff\xfe\x00z", 4)},
      {"dtype", DataType::bfloat16()},
      {"ints", std::vector<int64_t>{1, -2, std::numeric_limits<int64_t>::min()}},
      {"syms", std::vector<SymExpr>{n, n * 2 + 1}},
      {"empty_ints", std::vector<int64_t>{}},
  };

  Var tv("t", object_sinfo());
  Var g("g", f32_tensor_any());
  Var called("called", object_sinfo());
  Var lv("lv", object_sinfo());
  Var inner_param("ip", tensor_sinfo({n, 4}, f32()));
  Expr inner = make_function({inner_param}, make_seq_expr({}, inner_param, inner_param.struct_info()),
                             inner_param.struct_info(), /*pure=*/true);
  Var inner_var("inner", inner.struct_info());
  Var via_var("via_var", tensor_sinfo({n, 4}, f32()));
  Var matched("matched", tensor_sinfo({n, 4}, f32()));
  DataflowVar dv("dv", object_sinfo());
  Var out("out", object_sinfo());

  Expr tuple = make_tuple({x, c_f32, c_i8, c_bool, c_empty, c_scalar, make_shape_expr({n, 4}),
                           make_prim_value(n + 1), make_string_imm("text"),
                           make_string_imm(std::string("\x80\x81", 2))},
                          object_sinfo());
  Expr get = make_tuple_get_item(tv, 1, f32_tensor_any());
  Expr call = make_call(ext, {tv, g}, every_attr, {tensor_sinfo({n}, f32()), object_sinfo()},
                        object_sinfo());
  Expr call_gv = make_call(gv, {});  // no annotation: not normalised
  Expr cond = make_prim_value(n > 4);
  Expr branch_a = make_seq_expr({}, c_f32, c_f32.struct_info());
  Expr branch_b = make_seq_expr({plain({bind(lv, make_tuple({}))})}, c_f32, c_f32.struct_info());
  Expr if_expr = make_if(cond, branch_a, branch_b, c_f32.struct_info());
  Expr op_ref = make_op("add");

  std::vector<BindingBlock> blocks = {
      plain({bind(tv, tuple), bind(g, get), bind(called, call), bind(inner_var, inner),
             bind(via_var, make_call(inner_var, {x}, {}, {}, x.struct_info())),
             match(matched, via_var, tensor_sinfo({n, 4}, f32())),
             bind(Var("gv_call", object_sinfo()), call_gv),
             bind(Var("branch", c_f32.struct_info()), if_expr),
             bind(Var("op_value", op_ref.struct_info()), op_ref)}),
      dataflow({bind(dv, make_tuple({called, matched}, object_sinfo())),
                bind(out, make_tuple({dv}, object_sinfo()))}),
  };
  Expr body = make_seq_expr(std::move(blocks), out, object_sinfo());
  Attrs fn_attrs{{"note", std::string("every kind")}};
  return make_function(params, body, object_sinfo(), /*pure=*/false, {SymBound{n, 64}}, fn_attrs);
}

IRModule every_kind_module() {
  IRModule mod;
  mod.add("kinds", every_expr_kind_function());
  mod.add("kernel", every_loop_kind_kernel());
  mod.add("helper", make_function({}, make_seq_expr({}, make_tuple({}, tuple_sinfo({})), tuple_sinfo({})),
                                  tuple_sinfo({})));
  mod.add("ext", make_extern_func("external_symbol"));
  mod.attrs()["version_tag"] = int64_t{3};
  mod.attrs()["scales"] = std::vector<SymExpr>{SymExpr::float_imm(0.25, f32())};
  return mod;
}

// ---------------------------------------------------------------------------
// Helpers.

// Reads `text`, failing the test on an error.
IRModule read_ok(const std::string& text) {
  absl::StatusOr<IRModule> mod = from_json(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

// The error message of reading `text` (the test fails when it reads).
std::string read_error(const std::string& text) {
  absl::StatusOr<IRModule> mod = from_json(text);
  if (mod.ok()) {
    ADD_FAILURE() << "expected an error reading " << text.substr(0, 200);
    return "";
  }
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(mod.status().message());
}

// Writes, reads and compares: structurally, and the document written again is identical.
void expect_round_trip(const IRModule& mod) {
  const std::string text = to_json(mod);
  IRModule back = read_ok(text);
  RELAX_EXPECT_STRUCTURAL_EQ(mod, back);
  EXPECT_EQ(to_json(back), text);
}

Json doc_of(const IRModule& mod) { return Json::parse(to_json(mod)); }

// The index of the first node of `kind` in a document (test documents have one).
size_t node_index(const Json& doc, std::string_view kind, size_t skip = 0) {
  const Json& nodes = doc["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]["kind"] == kind && skip-- == 0) return i;
  }
  ADD_FAILURE() << "no node of kind " << kind;
  return 0;
}

size_t count_kind(const Json& doc, std::string_view kind) {
  size_t n = 0;
  for (const Json& node : doc["nodes"]) n += node["kind"] == kind ? 1 : 0;
  return n;
}

const FunctionNode* function_of(const IRModule& mod, std::string_view name) {
  Expr f = mod.lookup(name);
  return f.defined() ? f.as<FunctionNode>() : nullptr;
}

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
  for (std::string_view intrinsic :
       {"exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sigmoid", "pow", "abs", "fma"}) {
    bool found = false;
    for (const Json& node : doc["nodes"]) found = found || node.value("intrinsic", "") == intrinsic;
    EXPECT_TRUE(found) << intrinsic;
  }
  expect_round_trip(mod);
}

TEST(JsonTest, StructInfoDetailsSurvive) {
  IRModule back = read_ok(to_json(every_kind_module()));
  const FunctionNode* fn = function_of(back, "kinds");
  ASSERT_NE(fn, nullptr);
  std::vector<std::string> texts;
  for (const Var& p : fn->params) texts.push_back(p.struct_info().to_string());
  EXPECT_THAT(texts, ::testing::ElementsAre(
                         "Object", "Prim[int64]", "Prim[int64, n]", "Shape[(n, 4)]", "Shape[ndim=2]",
                         "Shape[]", "Tensor[(n, 4), float32, cuda:1]", "Tensor[ndim=2, ?]",
                         "Tensor[ndim=?, ?, cpu]", "Tensor[(n,), float32x4, cpu:3]",
                         "Tuple[(Object, Tuple[()])]", "Func[(Tensor[(n,), float32]) -> Object]",
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
  const float* data = t.data_as<float>();
  EXPECT_EQ(data[0], 1.5f);
  EXPECT_TRUE(std::signbit(data[1]));
  EXPECT_TRUE(std::isinf(data[2]));
  EXPECT_EQ(std::bit_cast<uint32_t>(data[3]), std::bit_cast<uint32_t>(3.0e-39f));
  const runtime::Tensor& small = fields[2].as<ConstantNode>()->data;
  EXPECT_EQ(small.data_as<int8_t>()[0], -128);
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
  const float* d = t.data_as<float>();
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

// ---------------------------------------------------------------------------
// Errors.

TEST(JsonTest, VersionAndFormatErrors) {
  Json doc = doc_of(builder_module());
  doc["version"] = 7;
  EXPECT_EQ(read_error(doc.dump()),
            "version: unsupported relax IR JSON version 7 (this build reads version 1)");
  doc["version"] = "1";
  EXPECT_EQ(read_error(doc.dump()), "version: expected an integer, found \"1\"");
  doc.erase("version");
  EXPECT_EQ(read_error(doc.dump()), "<document>: missing field \"version\"");
  doc["version"] = 1;
  doc["format"] = "onnx";
  EXPECT_EQ(read_error(doc.dump()), "format: unsupported format \"onnx\" (expected \"relax.ir\")");
  doc.erase("format");
  EXPECT_EQ(read_error(doc.dump()), "<document>: not a relax IR JSON document: missing \"format\"");
  EXPECT_EQ(read_error("[1, 2]"),
            "<document>: not a relax IR JSON document: expected an object, found [1,2]");
}

TEST(JsonTest, MalformedJsonNamesThePosition) {
  std::string text = to_json(builder_module());
  EXPECT_THAT(read_error(text.substr(0, 20)), HasSubstr("malformed JSON: parse error at line 1, column 21"));
  EXPECT_THAT(read_error("{\"format\": \"relax.ir\",\n \"version\": 1,,}"),
              HasSubstr("malformed JSON: parse error at line 2, column 15"));
  EXPECT_THAT(read_error(""), HasSubstr("malformed JSON: parse error at line 1, column 1"));
}

TEST(JsonTest, WrongTypesNameTheJsonPath) {
  Json doc = doc_of(builder_module());
  const size_t call = node_index(doc, "expr.call");
  Json bad = doc;
  bad["nodes"][call]["args"][0] = "x";
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(call) + "].args[0]: expected a node index, found \"x\"");
  bad = doc;
  bad["nodes"][call]["args"] = 3;
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(call) + "].args: expected an array, found 3");
  const size_t fn = node_index(doc, "expr.function");
  bad = doc;
  bad["nodes"][fn]["pure"] = "yes";
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(fn) + "].pure: expected a boolean, found \"yes\"");
  bad = doc;
  bad["nodes"][fn]["upper_bounds"][0]["upper"] = 1.5;
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(fn) +
                                        "].upper_bounds[0].upper: expected an integer, found 1.5");
  bad = doc;
  bad["functions"][0]["name"] = nullptr;
  EXPECT_EQ(read_error(bad.dump()), "functions[0].name: expected a string, found null");
  bad = doc;
  bad["attrs"]["model_name"] = Json{{"text", "tiny"}};
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("attrs.model_name: unknown attribute type \"text\""));
}

TEST(JsonTest, MissingAndUnknownFieldsAreErrors) {
  Json doc = doc_of(builder_module());
  const size_t var = node_index(doc, "expr.var");
  Json bad = doc;
  bad["nodes"][var].erase("name");
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(var) + "]: missing field \"name\"");
  bad = doc;
  bad["nodes"][var]["nmae"] = "x";
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(var) + "]: unknown field \"nmae\"");
  bad = doc;
  bad["nodes"][var]["kind"] = "expr.variable";
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(var) + "].kind: unknown node kind \"expr.variable\"");
  bad = doc;
  bad["nodes"][var] = 12;
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(var) + "]: expected an object, found 12");
  bad = doc;
  bad.erase("nodes");
  EXPECT_EQ(read_error(bad.dump()), "<document>: missing field \"nodes\"");
}

TEST(JsonTest, ReferencesMustPointBackwardIntoTheTableAtTheRightFamily) {
  Json doc = doc_of(builder_module());
  const size_t call = node_index(doc, "expr.call");
  const std::string at = "nodes[" + std::to_string(call) + "]";
  Json bad = doc;
  bad["nodes"][call]["args"][0] = call;
  EXPECT_EQ(read_error(bad.dump()), at + ".args[0]: node " + std::to_string(call) + " refers to node " +
                                        std::to_string(call) +
                                        ": a node may only refer to nodes before it");
  bad = doc;
  bad["nodes"][call]["args"][0] = call + 1;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("a node may only refer to nodes before it"));
  bad = doc;
  const size_t total = doc["nodes"].size();
  bad["nodes"][call]["args"][0] = total + 5;
  EXPECT_EQ(read_error(bad.dump()), at + ".args[0]: node index " + std::to_string(total + 5) +
                                        " is out of range (the table has " +
                                        std::to_string(total) + " nodes)");
  bad = doc;
  bad["nodes"][call]["args"][0] = -1;
  EXPECT_EQ(read_error(bad.dump()), at + ".args[0]: node index -1 is negative");
  const size_t sinfo = node_index(doc, "sinfo.tensor");
  bad = doc;
  bad["nodes"][call]["args"][0] = sinfo;
  EXPECT_EQ(read_error(bad.dump()), at + ".args[0]: expected an Expr node, node " +
                                        std::to_string(sinfo) + " is sinfo.tensor");
  // A binding's var must be a Var, not any expression.
  const size_t seq = node_index(doc, "expr.seq");
  bad = doc;
  bad["nodes"][seq]["blocks"][0]["bindings"][0]["var"] = call;
  EXPECT_THAT(read_error(bad.dump()),
              HasSubstr("].blocks[0].bindings[0].var: expected an expr.var or expr.dataflow_var node"));
  // A module function must be a function.
  bad = doc;
  bad["functions"][0]["func"] = call;
  EXPECT_EQ(read_error(bad.dump()),
            "functions[0].func: a module function is a Function, PrimFunc or ExternFunc, not a Call");
  bad = doc;
  bad["functions"][1]["name"] = bad["functions"][0]["name"];
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("functions[1].name: function \""));
}

TEST(JsonTest, UnknownOpsDtypesAndEnumsAreErrors) {
  Json doc = doc_of(builder_module());
  const size_t op = node_index(doc, "expr.op");
  Json bad = doc;
  bad["nodes"][op]["name"] = "no_such_op";
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(op) + "].name: unknown operator \"no_such_op\"");
  const size_t tensor = node_index(doc, "sinfo.tensor");
  for (const char* dtype : {"float33x", "f32", "int064", "", "boolx1", "int0", "int256"}) {
    bad = doc;
    bad["nodes"][tensor]["dtype"] = dtype;
    EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(tensor) + "].dtype: unknown dtype \"" +
                                          dtype + "\"");
  }
  bad = doc;
  bad["nodes"][tensor]["ndim"] = 5;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].ndim: ndim is 5 but there are 2 dims"));
  bad = doc;
  bad["nodes"][tensor]["device"] = Json{{"type", "tpu"}, {"index", 0}};
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].device.type: unknown device type \"tpu\""));
  const size_t loop = node_index(doc, "stmt.for");
  bad = doc;
  bad["nodes"][loop]["for_kind"] = "sideways";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].for_kind: unknown loop kind \"sideways\""));
  const size_t buffer = node_index(doc, "buffer");
  bad = doc;
  bad["nodes"][buffer]["scope"] = "shared";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].scope: unknown buffer scope \"shared\""));
}

TEST(JsonTest, SymExprArityAndDtypesAreChecked) {
  IRModule mod;
  mod.add("kernel", every_loop_kind_kernel());
  Json doc = doc_of(mod);
  const size_t add = node_index(doc, "sym.add");
  const std::string at = "nodes[" + std::to_string(add) + "].operands: ";
  Json bad = doc;
  bad["nodes"][add]["operands"].push_back(0);
  EXPECT_EQ(read_error(bad.dump()), at + "sym.add takes 2 operands, found 3");
  bad = doc;
  bad["nodes"][add]["kind"] = "sym.not";
  EXPECT_EQ(read_error(bad.dump()), at + "sym.not takes 1 operand, found 2");
  // An operand of another dtype.
  const size_t f32_var = [&] {
    for (size_t i = 0; i < doc["nodes"].size(); ++i) {
      if (doc["nodes"][i]["kind"] == "sym.var" && doc["nodes"][i]["dtype"] == "float32") return i;
    }
    return size_t{0};
  }();
  const size_t int_add = [&] {
    for (size_t i = f32_var + 1; i < doc["nodes"].size(); ++i) {
      const Json& n = doc["nodes"][i];
      if (n["kind"] == "sym.add" && doc["nodes"][n["operands"][0].get<size_t>()]["kind"] == "sym.var" &&
          doc["nodes"][n["operands"][0].get<size_t>()]["dtype"] == "int64") {
        return i;
      }
    }
    return size_t{0};
  }();
  ASSERT_GT(int_add, 0u);
  bad = doc;
  bad["nodes"][int_add]["operands"][1] = f32_var;
  EXPECT_THAT(read_error(bad.dump()),
              HasSubstr("].operands: operands of sym.add differ in dtype: int64 `"));
  const size_t call = node_index(doc, "sym.call");
  bad = doc;
  bad["nodes"][call]["intrinsic"] = "cbrt";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].intrinsic: unknown intrinsic \"cbrt\""));
  bad = doc;
  bad["nodes"][call]["intrinsic"] = "fma";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].operands: fma takes 3 operands, found 1"));
  const size_t load = node_index(doc, "sym.load");
  bad = doc;
  bad["nodes"][load]["operands"].erase(1);
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("has 1 indices, but the buffer has rank 2"));
  const size_t int_const = node_index(doc, "sym.int");
  bad = doc;
  bad["nodes"][int_const]["dtype"] = "uint8";
  bad["nodes"][int_const]["value"] = 256;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].value: 256 is not a value of uint8"));
  const size_t fl = node_index(doc, "sym.float");
  bad = doc;
  bad["nodes"][fl]["dtype"] = "float16";
  bad["nodes"][fl]["value"] = 0.1;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].value: 0.1 is not exactly a float16 value"));
  bad = doc;
  bad["nodes"][fl]["value"] = "infinity";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].value: expected a number, \"inf\""));
  const size_t loop = node_index(doc, "stmt.for");
  bad = doc;
  bad["nodes"][loop]["var"] = int_const;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].var: expected a sym.var node, node "));
}

TEST(JsonTest, ConstantDataMustMatchItsShape) {
  Json doc = doc_of(every_kind_module());
  const size_t c = node_index(doc, "expr.constant");
  Json bad = doc;
  bad["nodes"][c]["shape"] = Json::array({2, 3});
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(c) + "].data: holds 16 bytes, but 6 elements of float32 take 24");
  bad = doc;
  bad["nodes"][c]["data"] = "not base64!";
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(c) + "].data: not valid base64");
  bad = doc;
  bad["nodes"][c]["shape"] = Json::array({int64_t{1} << 62, 1 << 20});
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(c) + "].shape: the element count overflows int64");
  bad = doc;
  bad["nodes"][c]["shape"] = Json::array({-4});
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(c) + "].shape[0]: negative dim -4");
}

// A document whose module attribute "deep" is the chain n + 1 + 1 + ...: its
// last node (index `depth`) nests `depth` levels deep.
std::string chain_document(size_t depth) {
  Json nodes = Json::array();
  nodes.push_back(Json{{"kind", "sym.var"}, {"dtype", "int64"}, {"name", "n"}});
  nodes.push_back(Json{{"kind", "sym.int"}, {"dtype", "int64"}, {"value", 1}});
  for (size_t i = 2; i <= depth; ++i) {
    nodes.push_back(Json{{"kind", "sym.add"}, {"operands", Json::array({i == 2 ? 0 : i - 1, 1})}});
  }
  Json doc = {{"format", "relax.ir"}, {"version", 1}, {"functions", Json::array()},
              {"attrs", {{"deep", {{"syms", Json::array({depth})}}}}}, {"nodes", nodes}};
  return doc.dump();
}

// A document whose kernel "k" is `depth` - 1 sequences nested in one another
// around an evaluate, with a tuple annotation nested as deep.
std::string nested_statements_document(size_t depth) {
  Json nodes = Json::array();
  nodes.push_back(Json{{"kind", "sym.int"}, {"dtype", "int64"}, {"value", 0}});
  nodes.push_back(Json{{"kind", "stmt.evaluate"}, {"value", 0}});
  for (size_t i = 2; i < depth; ++i) {
    nodes.push_back(Json{{"kind", "stmt.seq"}, {"stmts", Json::array({i - 1})}});
  }
  nodes.push_back(Json{{"kind", "sinfo.object"}});
  for (size_t i = 1; i < depth; ++i) {
    nodes.push_back(Json{{"kind", "sinfo.tuple"}, {"fields", Json::array({nodes.size() - 1})}});
  }
  nodes.push_back(Json{{"kind", "expr.prim_func"},
                       {"params", Json::array()},
                       {"body", depth - 1},
                       {"attrs", Json::object()},
                       {"sinfo", nodes.size() - 1}});
  Json doc = {{"format", "relax.ir"},
              {"version", 1},
              {"functions", Json::array({Json{{"name", "k"}, {"func", nodes.size() - 1}}})},
              {"attrs", Json::object()},
              {"nodes", nodes}};
  return doc.dump();
}

TEST(JsonTest, NestingDepthIsBounded) {
  // Statements and annotations nested to just under the bound write and read back.
  const std::string statements = nested_statements_document(4095);
  EXPECT_TRUE(to_json(read_ok(statements)) == statements);

  // The deepest chain accepted reads, writes and reads again.
  const std::string deepest = chain_document(4096);
  IRModule mod = read_ok(deepest);
  EXPECT_TRUE(to_json(mod) == deepest);  // (not EXPECT_EQ: a failure would print 200 KB)
  EXPECT_EQ(read_error(chain_document(4097)), "nodes[4097]: nodes nest more than 4096 levels deep");
  // A value nested a million levels deep is described without recursing through it.
  const std::string nested = std::string(300000, '[') + std::string(300000, ']');
  Json doc = Json::parse(to_json(IRModule()));
  std::string text = doc.dump();
  const std::string empty_functions = "\"functions\":[]";
  text.replace(text.find(empty_functions), empty_functions.size(), "\"functions\":" + nested);
  EXPECT_EQ(read_error(text), "functions[0]: expected an object, found [[[[...]]]]");
  std::string objects;
  for (int i = 0; i < 300000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(300000, '}');
  text = doc.dump();
  const std::string empty_attrs = "\"attrs\":{}";
  text.replace(text.find(empty_attrs), empty_attrs.size(), "\"attrs\":{\"x\":" + objects + "}");
  EXPECT_THAT(read_error(text), HasSubstr("attrs.x: unknown attribute type \"a\""));
}

// ---------------------------------------------------------------------------
// Fuzzing: no input crashes the reader, and whatever it accepts writes again.

// Every node kind, for mutations that change a node into another kind.
const char* const kKinds[] = {
    "sym.int", "sym.float", "sym.var", "sym.add", "sym.div", "sym.not", "sym.select",
    "sym.cast", "sym.call", "sym.load", "buffer", "sinfo.object", "sinfo.prim", "sinfo.shape",
    "sinfo.tensor", "sinfo.tuple", "sinfo.func", "expr.var", "expr.dataflow_var",
    "expr.global_var", "expr.constant", "expr.tuple", "expr.tuple_get_item", "expr.call",
    "expr.shape", "expr.prim_value", "expr.string", "expr.if", "expr.seq", "expr.function",
    "expr.extern_func", "expr.op", "expr.prim_func", "stmt.for", "stmt.seq", "stmt.store",
    "stmt.if", "stmt.let", "stmt.allocate", "stmt.evaluate", "stmt.block"};

// A random JSON value; often a node index (valid or not) or a node kind.
Json random_value(std::mt19937_64& rng, size_t table_size) {
  switch (rng() % 12) {
    case 0: return nullptr;
    case 1: return static_cast<bool>(rng() % 2);
    case 2:
    case 3: return static_cast<int64_t>(rng() % (table_size + 3)) - 1;
    case 4: return static_cast<int64_t>(rng());
    case 5: return std::bit_cast<double>(rng() & 0x7fefffffffffffffULL);
    case 6: return "x";
    case 7: return Json::array({rng() % table_size, rng() % table_size});
    case 8: return Json::object({{"int", 1}});
    case 9: return rng() % 2 ? "float32" : "int8";
    default: return kKinds[rng() % std::size(kKinds)];
  }
}

// Replaces, removes or duplicates one random value somewhere in `doc`, most
// often inside a node of the table.
void mutate(Json& doc, std::mt19937_64& rng, size_t table_size) {
  Json* v = &doc;
  const uint64_t where = rng() % 10;
  if (where < 8 && doc.contains("nodes") && doc["nodes"].is_array() && !doc["nodes"].empty()) {
    v = &doc["nodes"][rng() % doc["nodes"].size()];
  } else if (where == 8 && doc.contains("functions")) {
    v = &doc["functions"];
  }
  // Walk down a random path; stop at a random depth.
  for (int depth = 0; depth < 4; ++depth) {
    if (!(v->is_object() || v->is_array()) || v->empty() || (depth > 0 && rng() % 3 == 0)) break;
    const size_t i = rng() % v->size();
    if (v->is_array()) {
      v = &(*v)[i];
    } else {
      auto it = v->begin();
      std::advance(it, static_cast<ptrdiff_t>(i));
      if (rng() % 8 == 0) {  // drop the field
        v->erase(it);
        return;
      }
      v = &it.value();
    }
  }
  if (v->is_array() && !v->empty() && rng() % 4 == 0) {
    v->push_back((*v)[rng() % v->size()]);  // duplicate an element
    return;
  }
  *v = random_value(rng, table_size);
}

// Reads `text`; whatever reads must write, and what it writes must read again.
// Returns whether `text` was accepted.
bool read_and_rewrite(const std::string& text) {
  absl::StatusOr<IRModule> mod = from_json(text);
  if (!mod.ok()) {
    EXPECT_FALSE(mod.status().message().empty());
    return false;
  }
  const std::string again = to_json(*mod);
  absl::StatusOr<IRModule> back = from_json(again);
  EXPECT_TRUE(back.ok()) << back.status();
  if (back.ok()) {
    EXPECT_EQ(to_json(*back), again);
  }
  return true;
}

TEST(JsonTest, FuzzedDocumentsNeverCrashTheReader) {
  IRModule corpus = every_kind_module();
  corpus.add("main", builder_module().lookup("main"));
  const std::string text = to_json(corpus);
  const Json doc = Json::parse(text);
  const size_t table_size = doc["nodes"].size();
  std::mt19937_64 rng(20240611);
  size_t accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string input;
    switch (round % 4) {
      case 0:  // truncated text
        input = text.substr(0, rng() % text.size());
        break;
      case 1: {  // one byte changed
        input = text;
        input[rng() % input.size()] = static_cast<char>("{}[]\",:0123456789-ex \x80"[rng() % 23]);
        break;
      }
      default: {  // one or a few structural mutations
        Json mutated = doc;
        const int count = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < count; ++k) mutate(mutated, rng, table_size);
        input = mutated.dump();
        break;
      }
    }
    accepted += read_and_rewrite(input) ? 1 : 0;
    if (HasFailure()) return;
  }
  // Some mutations are harmless (a name changed, an attribute value changed).
  EXPECT_GT(accepted, 0u);
}

}  // namespace
}  // namespace relax
