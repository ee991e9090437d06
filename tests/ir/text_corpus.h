// Modules built with the node constructors for the printer and parser tests:
// together they hold every node kind of the graph and loop levels, every
// attribute kind, constants of every printable dtype, and the name collisions
// the printer must resolve. Graph values are normalised as they are built, as
// the builder would.
#pragma once

#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/builder.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/normalize.h"
#include "relax/ir/ops.h"
#include "relax/ir/prim_func.h"
#include "relax/support/check.h"

namespace relax::text_corpus {

inline DataType f32() { return DataType::float32(); }
inline StructInfo t32(std::vector<SymExpr> dims) { return tensor_sinfo(std::move(dims), f32()); }

/// `e` normalised (with `mod` for calls of module functions); aborts on an error.
inline Expr norm(const Expr& e, const IRModule* mod = nullptr) {
  Analyzer analyzer;
  DeduceContext ctx{analyzer, mod};
  absl::StatusOr<Expr> out = normalize(e, ctx);
  RELAX_CHECK(out.ok()) << out.status().message();
  return *out;
}

inline Expr op_call(std::string_view op, std::vector<Expr> args, Attrs attrs = {},
                    std::vector<StructInfo> sinfo_args = {}, const IRModule* mod = nullptr) {
  return norm(make_call(make_op_or_die(op), std::move(args), std::move(attrs), std::move(sinfo_args)), mod);
}

inline Binding bind(Var v, Expr value) { return {std::move(v), std::move(value), false, {}}; }
inline Binding cast(Var v, Expr value, StructInfo pattern) {
  return {std::move(v), std::move(value), true, std::move(pattern)};
}
inline BindingBlock dataflow(std::vector<Binding> b) { return {std::move(b), true}; }
inline BindingBlock plain(std::vector<Binding> b) { return {std::move(b), false}; }

/// fn(params) { blocks; return result }, returning the body's annotation.
inline Expr function(std::vector<Var> params, std::vector<BindingBlock> blocks, Expr result,
                     bool pure = true, std::vector<SymBound> bounds = {}, Attrs attrs = {}) {
  Expr body = norm(make_seq_expr(std::move(blocks), std::move(result)));
  return make_function(std::move(params), body, body.struct_info(), pure, std::move(bounds),
                       std::move(attrs));
}

template <typename T>
runtime::Tensor tensor_of(std::vector<int64_t> shape, DataType dtype, const std::vector<T>& values) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(std::move(shape), dtype);
  RELAX_CHECK(t.ok()) << t.status().message();
  RELAX_CHECK(t->nbytes() == values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(t->data(), values.data(), t->nbytes());
  return *t;
}

/// The kernel of printer.h's example: C = A + B over Buffer[(n, 4), float32].
inline Expr add_kernel() {
  SymVar n("n");
  SymVar i("i");
  SymVar j("j");
  SymVar vi("vi");
  SymVar vj("vj");
  Buffer a("A", f32(), {n, 4});
  Buffer b("B", f32(), {n, 4});
  Buffer c("C", f32(), {n, 4});
  Stmt store = make_store(c, {vi, vj}, buffer_load(a, {vi, vj}) + buffer_load(b, {vi, vj}));
  Stmt block = make_block("add",
                          {IterVar{vi, n, IterType::kSpatial, i}, IterVar{vj, 4, IterType::kSpatial, j}},
                          Stmt(), store);
  Stmt loops = make_for(i, 0, n, ForKind::kParallel, make_for(j, 0, 4, ForKind::kSerial, block));
  return make_prim_func({PrimParam{a, std::nullopt}, PrimParam{b, std::nullopt}, PrimParam{c, std::nullopt}},
                        loops);
}

/// printer.h's example module: a kernel, a dataflow block calling it, a match_cast.
inline IRModule example_module() {
  IRModule mod;
  mod.add("add", add_kernel());
  SymVar n("n");
  SymVar m("m");
  Var x("x", t32({n, 4}));
  Var y("y", t32({n, 4}));
  Expr tir = op_call("call_tir", {mod.global_var("add"), make_tuple({x, y})}, {}, {t32({n, 4})}, &mod);
  Var lv = DataflowVar("lv", tir.struct_info());
  Expr sum = op_call("add", {lv, x});
  Var gv("gv", sum.struct_info());
  Var z("z", t32({m, 4}));
  Expr body = norm(make_seq_expr({dataflow({bind(lv, tir), bind(gv, sum)}),
                                  plain({cast(z, gv, t32({m, 4}))})},
                                 z));
  mod.add("main", make_function({x, y}, body, body.struct_info(), true, {{n, 4096}}));
  return mod;
}

/// Constants of every printable dtype, and the other leaves: PrimValue, StringImm, ShapeExpr.
inline IRModule constants_module() {
  SymVar n("n");
  Var x("x", t32({n}));
  std::vector<Binding> bindings;
  int counter = 0;
  auto add = [&](Expr value) {
    value = norm(value);
    bindings.push_back(bind(Var("c" + std::to_string(counter++), value.struct_info()), value));
  };
  add(make_constant(tensor_of<float>({2, 2}, f32(), {1.0f, -2.5f, 0.1f, 3.4028235e38f})));
  add(make_constant(tensor_of<float>({3}, f32(),
                                     {std::numeric_limits<float>::infinity(),
                                      -std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN()})));
  add(make_constant(tensor_of<float>({2}, f32(), {-0.0f, 1e-45f})));
  add(make_constant(tensor_of<double>({}, DataType::float64(), {0.1})));
  add(make_constant(tensor_of<int32_t>({3}, DataType::int32(), {-2147483647 - 1, 0, 7})));
  add(make_constant(tensor_of<int64_t>({2}, DataType::int64(),
                                       {std::numeric_limits<int64_t>::min(), 42})));
  add(make_constant(tensor_of<uint8_t>({2}, DataType{DataType::Code::kUInt, 8, 1}, {0, 255})));
  add(make_constant(tensor_of<uint64_t>({1}, DataType{DataType::Code::kUInt, 64, 1},
                                        {std::numeric_limits<uint64_t>::max()})));
  add(make_constant(tensor_of<uint8_t>({2}, DataType::boolean(), {1, 0})));
  add(make_constant(tensor_of<uint16_t>({3}, DataType::float16(), {0x3c00, 0x0001, 0x7bff})));
  add(make_constant(tensor_of<uint16_t>({2}, DataType::bfloat16(), {0x3f80, 0xc2f7})));
  add(make_constant(tensor_of<uint32_t>({1}, f32(), {0x7fc00001u})));  // a NaN with a payload
  add(make_constant(tensor_of<float>({0, 3}, f32(), {})));
  add(make_constant(tensor_of<int16_t>({2}, DataType{DataType::Code::kInt, 16, 1}, {-1, 2})));
  add(make_prim_value(n + 1));
  add(make_prim_value(SymExpr::float_imm(1.5, f32())));
  add(make_prim_value(SymExpr::boolean(true)));
  add(make_string_imm("text with \"quotes\", a \\ and a\nnewline"));
  add(make_shape_expr({n, 4, n * 2}));
  add(make_shape_expr({}));
  IRModule mod;
  mod.add("consts", function({x}, {plain(std::move(bindings))}, x));
  return mod;
}

/// Tuples, calls with every attribute kind and sinfo_args, extern functions.
inline IRModule calls_module() {
  IRModule mod;
  SymVar k("k");
  mod.add("ext", make_extern_func("cblas_sgemm",
                                  func_sinfo({t32({k, 4})}, t32({4, k}), /*pure=*/false)));
  mod.add("opaque", make_extern_func("opaque"));
  SymVar n("n");
  Var x("x", t32({n, 4}));
  Var y("y", t32({n, 4}));
  std::vector<Binding> b;
  auto emit = [&](const std::string& name, Expr value) {
    value = norm(value, &mod);
    Var v(name, value.struct_info());
    b.push_back(bind(v, value));
    return v;
  };
  Var pair = emit("pair", make_tuple({x, y}));
  Var single = emit("single", make_tuple({x}));
  emit("empty", make_tuple({}));
  Var first = emit("first", make_tuple_get_item(pair, 1));
  emit("nested", make_tuple_get_item(make_tuple({single, pair}), 0));
  emit("perm", make_call(make_op_or_die("permute_dims"), {first}, {{"axes", std::vector<int64_t>{1, 0}}}));
  emit("rev", make_call(make_op_or_die("permute_dims"), {first}));
  // The reductions and math ops with their attributes, scalar (Prim) operands.
  Var ex = emit("ex", op::exp(first));
  emit("total", op::sum(ex, std::vector<int64_t>{-1}, true));
  emit("all", op::sum(ex));
  emit("soft", op::softmax(ex, 0));
  emit("scaled", op::multiply(ex, make_prim_value(SymExpr::float_imm(0.5, f32()))));
  emit("shifted", op::add(make_prim_value(2), ex));
  Attrs all = {{"i", int64_t{-3}},
               {"d", 0.1},
               {"whole", 2.0},
               {"big", 1e300},
               {"inf", -std::numeric_limits<double>::infinity()},
               {"flag", true},
               {"s", std::string("a \"b\"")},
               {"dt", DataType::bfloat16()},
               {"ints", std::vector<int64_t>{}},
               {"syms", std::vector<SymExpr>{n, n + 1, 7}},
               {"weird key", false},
               {"sinfo", int64_t{1}}};
  emit("ext_call", make_call(mod.global_var("ext"), {x}, all));
  emit("lib", make_call(make_op_or_die("call_dps_library"),
                        {make_extern_func("my_lib"), make_tuple({x, y})}, {}, {t32({n, 4})}));
  emit("gemm", make_call(make_extern_func("raw", func_sinfo({t32({n, 4})}, t32({n}))), {x}));
  emit("opq", make_call(mod.global_var("opaque"), {x, make_string_imm("s")}));
  emit("op_value", make_tuple({make_op_or_die("add"), make_op_or_die("call_tir")}));
  mod.add("main", function({x, y}, {plain(b)}, pair, /*pure=*/false, {}, {{"global_symbol", std::string("main")}}));
  mod.attrs()["version"] = int64_t{3};
  mod.attrs()["target"] = std::string("llvm");
  return mod;
}

/// If with bindings in its branches, a nested function called through a Var,
/// match_casts that define variables in a branch, explicit binding blocks.
inline IRModule control_module() {
  IRModule mod;
  SymVar n("n");
  Var x("x", t32({n}));
  Var c("c", prim_sinfo(DataType::boolean()));
  // then: a = add(x, x); a    else: m = match_cast(x, [m]); b = add(m, m); b
  Expr a_val = op_call("add", {x, x});
  Var a("a", a_val.struct_info());
  Expr then_branch = norm(make_seq_expr({plain({bind(a, a_val)})}, a));
  SymVar m("m");
  Var mv("mv", t32({m}));
  Expr b_val = op_call("add", {mv, mv});
  Var bv("b", b_val.struct_info());
  Expr else_branch = norm(make_seq_expr({plain({cast(mv, x, t32({m})), bind(bv, b_val)})}, bv));
  Expr if_expr = norm(make_if(c, then_branch, else_branch));
  Var r("r", if_expr.struct_info());
  // A nested function, bound and called.
  SymVar k("k");
  Var p("p", t32({k}));
  Expr inner = function({p}, {}, p);
  Var f("f", inner.struct_info());
  Expr call_f = norm(make_call(f, {x}));
  Var fx("fx", call_f.struct_info());
  // Blocks: plain, plain again (explicit), empty dataflow, empty plain, dataflow.
  Expr d_val = op_call("multiply", {x, x});
  Var d = DataflowVar("d", d_val.struct_info());
  Expr e_val = op_call("add", {d, x});
  Var e("e", e_val.struct_info());
  Expr body = norm(make_seq_expr({plain({bind(r, if_expr)}),
                                  plain({bind(f, inner), bind(fx, call_f)}),
                                  dataflow({}),
                                  plain({}),
                                  dataflow({bind(d, d_val), bind(e, e_val)})},
                                 make_tuple({r, fx, e})));
  mod.add("main", make_function({x, c}, body, body.struct_info()));
  // A function whose result is an If directly, and one over a seq value.
  Var y("y", t32({n}));
  Expr seq_value = norm(make_seq_expr({}, y));
  Var s("s", seq_value.struct_info());
  mod.add("seqs", function({y}, {plain({bind(s, seq_value)})}, s));
  return mod;
}

/// Names the printer must change: Vars, SymVars and buffers that share a name,
/// a Var named like an op, like a keyword, and names that are no identifiers.
inline IRModule names_module() {
  IRModule mod;
  SymVar n1("n");
  SymVar n2("n");
  SymVar odd("my dim");
  Var x("x", t32({n1, n2}));
  Var w("w", t32({odd}));
  Expr v1 = op_call("add", {x, x});
  Var lv1("lv", v1.struct_info());
  Expr v2 = op_call("multiply", {lv1, lv1});
  Var lv2("lv", v2.struct_info());
  Expr v3 = op_call("add", {lv2, lv1});
  Var lv3("lv_1", v3.struct_info());
  Var named_add("add", v3.struct_info());
  Var named_if("if", v3.struct_info());
  Var odd_var("a b", v3.struct_info());
  Var empty("", v3.struct_info());
  mod.add("f", function({x, w},
                        {plain({bind(lv1, v1), bind(lv2, v2), bind(lv3, v3), bind(named_add, lv3),
                                bind(named_if, named_add), bind(odd_var, named_if), bind(empty, odd_var)})},
                        empty));
  // A kernel with two buffers called A and two loop variables called i.
  SymVar i1("i");
  SymVar i2("i");
  SymVar for_name("for");
  Buffer a1("A", f32(), {8});
  Buffer a2("A", f32(), {8});
  Stmt body = make_seq({make_for(i1, 0, 8, ForKind::kSerial, make_store(a2, {i1}, buffer_load(a1, {i1}))),
                        make_for(i2, 0, 8, ForKind::kSerial,
                                 make_let(for_name, i2 + 1, make_store(a1, {i2}, cast(f32(), for_name))))});
  mod.add("weird name", make_prim_func({PrimParam{a1, std::nullopt}, PrimParam{a2, std::nullopt}}, body));
  return mod;
}

/// Every statement kind: loops of each kind, a non-zero start, an int32 loop,
/// stores, if/else, let, allocate with scopes, evaluate, blocks with init and
/// reductions, scalar parameters, strides, nested and singleton SeqStmts.
inline IRModule loops_module() {
  IRModule mod;
  mod.add("add", add_kernel());
  SymVar n("n");
  SymVar k("k");
  SymVar s0("s0");
  SymVar scale_n("scale_n", DataType::int32());
  Buffer a("A", f32(), {n, k}, {s0, 1});
  Buffer out("Out", f32(), {n});
  SymVar i("i");
  SymVar r("r");
  SymVar vi("vi");
  SymVar vr("vr");
  Stmt init = make_store(out, {vi}, SymExpr::float_imm(0.0, f32()));
  Stmt update = make_store(out, {vi}, buffer_load(out, {vi}) + buffer_load(a, {vi, vr}));
  Stmt reduce_block = make_block("sum",
                                 {IterVar{vi, n, IterType::kSpatial, i}, IterVar{vr, k, IterType::kReduction, r}},
                                 init, update);
  Stmt reduction = make_for(i, 0, n, ForKind::kParallel, make_for(r, 0, k, ForKind::kSerial, reduce_block));
  // Scratch work: allocate, let (float), if/else, evaluate, loops of other kinds.
  Buffer tmp("tmp", f32(), {16}, {}, BufferScope::kLocal);
  Buffer ws("ws", DataType::int32(), {n}, {}, BufferScope::kWorkspace);
  SymVar j("j");
  SymVar u("u");
  SymVar q("q", DataType::int32());
  SymVar t("t", f32());
  Stmt vec = make_for(j, 0, 16, ForKind::kVectorized, make_store(tmp, {j}, cast(f32(), j)));
  Stmt unrolled = make_for(u, 2, 4, ForKind::kUnrolled,
                           make_let(t, buffer_load(tmp, {u}) * SymExpr::float_imm(2.0, f32()),
                                    make_if_then_else(t > SymExpr::float_imm(1.0, f32()),
                                                      make_store(tmp, {u}, exp(t)),
                                                      make_seq({make_evaluate(t + t)}))));
  Stmt int32_loop = make_for(q, SymExpr::int_imm(0, DataType::int32()), scale_n, ForKind::kSerial,
                             make_if_then_else(q < SymExpr::int_imm(3, DataType::int32()),
                                               make_store(ws, {cast(DataType::int64(), q)}, q)));
  Stmt scratch = make_allocate(tmp, make_allocate(ws, make_seq({vec, make_seq({unrolled, int32_loop})})));
  Stmt body = make_seq({reduction, scratch, make_seq({})});
  mod.add("kernel", make_prim_func({PrimParam{a, std::nullopt}, PrimParam{out, std::nullopt},
                                    PrimParam{std::nullopt, scale_n}},
                                   body, {{"tag", std::string("reduce")}}));
  // A singleton SeqStmt as a loop body.
  SymVar z("z");
  Buffer zb("Z", f32(), {4});
  mod.add("single", make_prim_func({PrimParam{zb, std::nullopt}},
                                   make_for(z, 0, 4, ForKind::kSerial,
                                            make_seq({make_store(zb, {z}, SymExpr::float_imm(0.5, f32()))}))));
  return mod;
}

/// The builder's documented example (relax/ir/builder.h).
inline IRModule builder_module() {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 4096}, f32()));
  Var w = f.param("w", tensor_sinfo({4096, 4096}, f32()));
  f.upper_bound(n, 4096);
  Var z;
  {
    auto df = f.dataflow();
    Var y = f.emit(op::matmul(x, w));
    z = f.emit_output(op::add(y, x));
  }
  Var m = f.match_cast(z, tensor_sinfo({SymVar("m"), 4096}, f32()), "zm");
  f.ret(m);
  absl::StatusOr<IRModule> mod = mb.build();
  RELAX_CHECK(mod.ok()) << mod.status().message();
  return *mod;
}

/// Every module above, named.
inline std::vector<std::pair<std::string, std::function<IRModule()>>> all_modules() {
  return {{"example", example_module},   {"constants", constants_module},
          {"calls", calls_module},       {"control", control_module},
          {"names", names_module},       {"loops", loops_module},
          {"builder", builder_module}};
}

}  // namespace relax::text_corpus
