// The corpus and helpers of the JSON tests (json_test.cc, json_errors_test.cc):
// modules that together use every node kind, and functions that read, write
// and look into documents.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ir_fixtures.h"
#include "nlohmann/json.hpp"
#include "relax/ir/builder.h"
#include "relax/ir/json.h"
#include "relax/ir/ops.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/testing.h"

namespace relax::json_testing {

using namespace fixtures;  // NOLINT(google-build-using-namespace)
using Json = nlohmann::ordered_json;

inline const DataType i32 = DataType::int32();
inline const DataType f16 = DataType::float16();
inline const DataType f64 = DataType::float64();

// ---------------------------------------------------------------------------
// The corpus.

inline StructInfo f32_tensor_any() { return tensor_sinfo_rank(kUnknownNDim, f32()); }
inline StructInfo view_sinfo() { return tensor_sinfo({2, 2}, f32()); }

inline runtime::Tensor tensor_of(std::vector<int64_t> shape, DataType dtype, const void* bytes) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(std::move(shape), dtype);
  RELAX_CHECK(t.ok()) << t.status();
  if (t->nbytes() > 0) std::memcpy(t->data(), bytes, t->nbytes());
  return *t;
}

// A PrimFunc using every statement kind and every SymExpr kind.
inline Expr every_loop_kind_kernel() {
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
                                  log(t) + sin(t) + cos(t) + floor(t) + ceil(t) + round(t) + trunc(t) +
                                  select(isnan(t) || isinf(t), t, -t);
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
                           cast(i32, SymExpr::boolean(true)) + abs(k) +
                           bitwise_xor(bitwise_and(k, 15), bitwise_or(bitwise_not(k), 1)) +
                           shift_left(k, 2) + shift_right(k, 4);
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
inline IRModule builder_module() {
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
inline Expr every_expr_kind_function() {
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
      Var("xv", tensor_sinfo({n}, DataType{DataType::Code::kInt, 16, 1}, Device::cpu(3))),
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
  Expr op_ref = make_op_or_die("add");

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

// Calls of operators with attributes and scalar (Prim) operands, built with the builder.
inline Expr ops_function() {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("ops");
  Var x = f.param("x", tensor_sinfo({n, 4}, f32()));
  Var s = f.param("s", prim_sinfo(f32()));
  Var e = f.emit(op::exp(x));
  Var total = f.emit(op::sum(e, std::vector<int64_t>{-1}, true));
  Var soft = f.emit(op::softmax(total, 0));
  Var scaled = f.emit(op::multiply(s, soft));
  f.ret(f.emit(op::add(scaled, make_prim_value(2))));
  absl::StatusOr<IRModule> mod = mb.build();
  RELAX_CHECK(mod.ok()) << mod.status();
  return mod->lookup("ops");
}

inline IRModule every_kind_module() {
  IRModule mod;
  mod.add("kinds", every_expr_kind_function());
  mod.add("kernel", every_loop_kind_kernel());
  mod.add("helper", make_function({}, make_seq_expr({}, make_tuple({}, tuple_sinfo({})), tuple_sinfo({})),
                                  tuple_sinfo({})));
  mod.add("ext", make_extern_func("external_symbol"));
  mod.add("ops", ops_function());
  mod.attrs()["version_tag"] = int64_t{3};
  mod.attrs()["scales"] = std::vector<SymExpr>{SymExpr::float_imm(0.25, f32())};
  return mod;
}

// ---------------------------------------------------------------------------
// Helpers.

// Reads `text`, failing the test on an error.
inline IRModule read_ok(const std::string& text) {
  absl::StatusOr<IRModule> mod = from_json(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

// The error message of reading `text` (the test fails when it reads).
inline std::string read_error(const std::string& text) {
  absl::StatusOr<IRModule> mod = from_json(text);
  if (mod.ok()) {
    ADD_FAILURE() << "expected an error reading " << text.substr(0, 200);
    return "";
  }
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(mod.status().message());
}

// Writes, reads and compares: structurally, and the document written again is identical.
inline void expect_round_trip(const IRModule& mod) {
  const std::string text = to_json(mod);
  IRModule back = read_ok(text);
  RELAX_EXPECT_STRUCTURAL_EQ(mod, back);
  EXPECT_EQ(to_json(back), text);
}

inline Json doc_of(const IRModule& mod) { return Json::parse(to_json(mod)); }

// The index of the first node of `kind` in a document (test documents have one).
inline size_t node_index(const Json& doc, std::string_view kind, size_t skip = 0) {
  const Json& nodes = doc["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]["kind"] == kind && skip-- == 0) return i;
  }
  ADD_FAILURE() << "no node of kind " << kind;
  return 0;
}

inline size_t count_kind(const Json& doc, std::string_view kind) {
  size_t n = 0;
  for (const Json& node : doc["nodes"]) n += node["kind"] == kind ? 1 : 0;
  return n;
}

inline const FunctionNode* function_of(const IRModule& mod, std::string_view name) {
  Expr f = mod.lookup(name);
  return f.defined() ? f.as<FunctionNode>() : nullptr;
}

}  // namespace relax::json_testing
