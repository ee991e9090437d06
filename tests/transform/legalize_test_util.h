// Helpers of the legalize_ops tests: building one-operator modules, finding
// the kernel calls and the blocks of a kernel, running a kernel through the
// loop-level evaluator (relax/transform/prim_eval.h) on random inputs, and
// plain-loop references of each operator over Arrays of doubles.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/printer.h"
#include "relax/ir/visitor.h"
#include "relax/ir/well_formed.h"
#include "relax/support/check.h"
#include "relax/transform/legalize_ops.h"
#include "relax/transform/prim_eval.h"

namespace relax::legalize_testing {

// A row-major n-d array of doubles: the inputs and the references of the
// numerical checks (converted to and from tensors around each kernel run).
struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;

  explicit Array(std::vector<int64_t> dims = {}, double fill = 0.0) : shape(std::move(dims)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(static_cast<size_t>(n), fill);
  }
  int64_t offset(const std::vector<int64_t>& index) const {
    RELAX_CHECK(index.size() == shape.size());
    int64_t flat = 0;
    for (size_t i = 0; i < index.size(); ++i) {
      RELAX_CHECK(index[i] >= 0 && index[i] < shape[i]);
      flat = flat * shape[i] + index[i];
    }
    return flat;
  }
  double& at(const std::vector<int64_t>& index) { return data[static_cast<size_t>(offset(index))]; }
  double at(const std::vector<int64_t>& index) const {
    return data[static_cast<size_t>(offset(index))];
  }
  // The index of flat position `flat`.
  std::vector<int64_t> unravel(int64_t flat) const {
    std::vector<int64_t> index(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
      index[i] = flat % shape[i];
      flat /= shape[i];
    }
    return index;
  }
};

// A host tensor of `dtype` holding `a`'s values (each exactly representable).
inline runtime::Tensor to_tensor(const Array& a, DataType dtype) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(a.shape, dtype);
  RELAX_CHECK(t.ok()) << t.status().message();
  for (size_t i = 0; i < a.data.size(); ++i) {
    const double v = a.data[i];
    if (dtype == DataType::float32()) {
      t->data_as_or_die<float>()[i] = static_cast<float>(v);
    } else if (dtype == DataType::float64()) {
      t->data_as_or_die<double>()[i] = v;
    } else if (dtype == DataType::int32()) {
      t->data_as_or_die<int32_t>()[i] = static_cast<int32_t>(v);
    } else if (dtype == DataType::int64()) {
      t->data_as_or_die<int64_t>()[i] = static_cast<int64_t>(v);
    } else {
      RELAX_CHECK(false) << "to_tensor: dtype " << dtype;
    }
  }
  return *t;
}

// The values of a float32/64 or int32/64 tensor.
inline Array from_tensor(const runtime::Tensor& t) {
  Array a(t.shape());
  for (size_t i = 0; i < a.data.size(); ++i) {
    const DataType dtype = t.dtype();
    if (dtype == DataType::float32()) {
      a.data[i] = t.data_as_or_die<float>()[i];
    } else if (dtype == DataType::float64()) {
      a.data[i] = t.data_as_or_die<double>()[i];
    } else if (dtype == DataType::int32()) {
      a.data[i] = t.data_as_or_die<int32_t>()[i];
    } else if (dtype == DataType::int64()) {
      a.data[i] = static_cast<double>(t.data_as_or_die<int64_t>()[i]);
    } else {
      RELAX_CHECK(false) << "from_tensor: dtype " << dtype;
    }
  }
  return a;
}

// A scalar argument of dtype `dtype` holding `v`.
inline transform::PrimScalar to_scalar(double v, DataType dtype) {
  if (dtype.is_float()) return transform::PrimScalar::from_float(v, dtype);
  return transform::PrimScalar::from_int(static_cast<int64_t>(v), dtype);
}

inline const DataType f32 = DataType::float32();
inline const DataType f64 = DataType::float64();
inline const DataType i32 = DataType::int32();

// ---------------------------------------------------------------------------
// Building and legalizing.

using Params = std::vector<std::pair<std::string, StructInfo>>;
using Body = std::function<Expr(const std::vector<Var>&)>;

// A module whose "main" takes `params` and returns `body(params)`, bound in a
// dataflow block to `out`.
inline IRModule one_op(const Params& params, const Body& body) {
  ModuleBuilder mb;
  auto f = mb.function("main");
  std::vector<Var> vars;
  for (const auto& [name, sinfo] : params) vars.push_back(f.param(name, sinfo));
  Var out;
  {
    auto df = f.dataflow();
    out = f.emit_output(body(vars), "out");
  }
  f.ret(out);
  absl::StatusOr<IRModule> mod = mb.build();
  RELAX_CHECK(mod.ok()) << mod.status().message();
  return *mod;
}

// legalize_ops(mod), which must succeed and give a well-formed module.
inline IRModule legalize(const IRModule& mod) {
  absl::StatusOr<IRModule> out = transform::legalize_ops(mod);
  RELAX_CHECK(out.ok()) << out.status().message();
  absl::Status wf = well_formed(*out);
  EXPECT_TRUE(wf.ok()) << wf.message() << "\n" << to_text(*out);
  return *out;
}

inline std::string legalize_error(const IRModule& mod) {
  absl::StatusOr<IRModule> out = transform::legalize_ops(mod);
  if (out.ok()) return "<legalized>";
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(out.status().message());
}

inline const SeqExprNode& body_of(const IRModule& mod, const std::string& func = "main") {
  Expr f = mod.lookup(func);
  RELAX_CHECK(f.defined() && f.as<FunctionNode>() != nullptr) << func;
  return *f.as<FunctionNode>()->body.as<SeqExprNode>();
}

// Every binding of `func`'s body, in order.
inline std::vector<Binding> bindings_of(const IRModule& mod, const std::string& func = "main") {
  std::vector<Binding> out;
  for (const BindingBlock& block : body_of(mod, func).blocks) {
    out.insert(out.end(), block.bindings.begin(), block.bindings.end());
  }
  return out;
}

inline bool is_op_call(const Expr& e, const std::string& op) {
  const auto* call = e.as<CallNode>();
  if (call == nullptr) return false;
  const auto* callee = call->callee.as<OpNode>();
  return callee != nullptr && callee->name == op;
}

// A call_tir of `func` and its kernel.
struct KernelCall {
  const CallNode* call = nullptr;
  std::string name;
  const PrimFuncNode* kernel = nullptr;
  Expr kernel_expr;
};

// The `which`-th call_tir in `func`'s bindings.
inline KernelCall kernel_call(const IRModule& mod, size_t which = 0,
                              const std::string& func = "main") {
  size_t seen = 0;
  for (const Binding& b : bindings_of(mod, func)) {
    if (!is_op_call(b.value, "call_tir")) continue;
    if (seen++ != which) continue;
    KernelCall kc;
    kc.call = b.value.as<CallNode>();
    kc.name = kc.call->args[0].as<GlobalVarNode>()->name;
    kc.kernel_expr = mod.lookup(kc.name);
    kc.kernel = kc.kernel_expr.as<PrimFuncNode>();
    RELAX_CHECK(kc.kernel != nullptr) << kc.name;
    return kc;
  }
  RELAX_CHECK(false) << "no call_tir #" << which << " in @" << func;
  return {};
}

inline size_t count_prim_funcs(const IRModule& mod) {
  size_t n = 0;
  for (const auto& [name, f] : mod.functions()) n += f.as<PrimFuncNode>() != nullptr;
  return n;
}

// The blocks of a kernel, in order, with the loops around each (outermost first).
struct BlockSite {
  const BlockNode* block;
  std::vector<const ForNode*> loops;
};

inline void collect_blocks(const Stmt& s, std::vector<const ForNode*>& loops,
                           std::vector<BlockSite>& out) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kFor:
      loops.push_back(s.as<ForNode>());
      collect_blocks(s.as<ForNode>()->body, loops, out);
      loops.pop_back();
      return;
    case StmtKind::kSeq:
      for (const Stmt& c : s.as<SeqStmtNode>()->stmts) collect_blocks(c, loops, out);
      return;
    case StmtKind::kAllocate:
      collect_blocks(s.as<AllocateNode>()->body, loops, out);
      return;
    case StmtKind::kLetStmt:
      collect_blocks(s.as<LetStmtNode>()->body, loops, out);
      return;
    case StmtKind::kBlock:
      out.push_back({s.as<BlockNode>(), loops});
      return;
    default:
      return;
  }
}

inline std::vector<BlockSite> blocks_of(const PrimFuncNode& kernel) {
  std::vector<const ForNode*> loops;
  std::vector<BlockSite> out;
  collect_blocks(kernel.body, loops, out);
  return out;
}

// "S" / "R" per iteration variable of `block`.
inline std::string iter_types(const BlockNode& block) {
  std::string s;
  for (const IterVar& iv : block.iter_vars) s += iv.type == IterType::kSpatial ? "S" : "R";
  return s;
}

// The loop kinds around a block: "P" parallel, "s" serial.
inline std::string loop_kinds(const BlockSite& site) {
  std::string s;
  for (const ForNode* f : site.loops) s += f->for_kind == ForKind::kParallel ? "P" : "s";
  return s;
}

inline std::string loop_extents(const BlockSite& site) {
  std::string s;
  for (const ForNode* f : site.loops) s += (s.empty() ? "" : ", ") + f->extent.to_string();
  return s;
}

// The parameters of a kernel as text: "A: (n, 4) float32", "s: float32".
inline std::vector<std::string> param_texts(const PrimFuncNode& kernel) {
  std::vector<std::string> out;
  for (const PrimParam& p : kernel.params) {
    if (p.scalar) {
      out.push_back(p.scalar->name() + ": " + p.scalar->dtype().to_string());
      continue;
    }
    std::vector<SymExpr> dims = p.buffer->shape();
    std::string d = shape_sinfo(dims).to_string();
    out.push_back(p.buffer->name() + ": " + d.substr(6, d.size() - 7) + " " +
                  p.buffer->dtype().to_string());
  }
  return out;
}

// ---------------------------------------------------------------------------
// Running kernels.

// The values of main's parameters, by name: arrays for tensors, numbers for Prims.
struct Inputs {
  std::map<std::string, Array> arrays;
  std::map<std::string, double> scalars;
};

inline std::vector<int64_t> concrete(const std::vector<SymExpr>& dims,
                                     const SymVarMap<int64_t>& sizes) {
  std::vector<int64_t> out;
  for (const SymExpr& d : dims) {
    absl::StatusOr<int64_t> v = evaluate(d, sizes);
    RELAX_CHECK(v.ok()) << v.status().message();
    out.push_back(*v);
  }
  return out;
}

// Random values for main's parameters at `sizes`, each exactly representable in
// its dtype (integers for integer dtypes, float32 values for float32).
inline Inputs random_inputs(const IRModule& mod, const SymVarMap<int64_t>& sizes,
                            std::mt19937& rng) {
  Inputs in;
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> integer(-4, 4);
  auto draw = [&](DataType t) {
    if (!t.is_float()) return static_cast<double>(integer(rng));
    double v = real(rng);
    return t == f32 ? static_cast<double>(static_cast<float>(v)) : v;
  };
  for (const Var& p : mod.lookup("main").as<FunctionNode>()->params) {
    if (const auto* t = p.struct_info().as<TensorStructInfoNode>()) {
      Array a(concrete(*t->shape, sizes));
      for (double& v : a.data) v = draw(*t->dtype);
      in.arrays.emplace(p.name_hint(), std::move(a));
    } else if (const auto* s = p.struct_info().as<PrimStructInfoNode>()) {
      in.scalars.emplace(p.name_hint(), draw(s->dtype));
    }
  }
  return in;
}

// Runs the `which`-th kernel call of legalized main on `in`; returns its output.
inline Array run_kernel(const IRModule& legal, Inputs& in, const SymVarMap<int64_t>& sizes,
                        size_t which = 0) {
  KernelCall kc = kernel_call(legal, which);
  std::vector<transform::PrimArg> args;
  std::vector<transform::BufferAccess> access;
  for (const Expr& arg : kc.call->args[1].as<TupleNode>()->fields) {
    access.push_back(transform::BufferAccess::kInput);
    if (const auto* pv = arg.as<PrimValueNode>()) {
      absl::StatusOr<double> v = evaluate_float(pv->value, sizes);
      RELAX_CHECK(v.ok()) << v.status().message();
      args.emplace_back(to_scalar(*v, pv->value.dtype()));
      continue;
    }
    const std::string name = Var::from_expr(arg).name_hint();
    if (in.arrays.contains(name)) {
      const auto* t = arg.struct_info().as<TensorStructInfoNode>();
      args.emplace_back(to_tensor(in.arrays.at(name), *t->dtype));
    } else {
      args.emplace_back(to_scalar(in.scalars.at(name),
                                  arg.struct_info().as<PrimStructInfoNode>()->dtype));
    }
  }
  const auto* out_sinfo = kc.call->sinfo_args[0].as<TensorStructInfoNode>();
  absl::StatusOr<runtime::Tensor> out =
      runtime::Tensor::empty(concrete(*out_sinfo->shape, sizes), *out_sinfo->dtype);
  RELAX_CHECK(out.ok()) << out.status().message();
  args.emplace_back(*out);
  access.push_back(transform::BufferAccess::kOutput);
  if (kc.call->args.size() == 3) {
    for (int64_t v : concrete(kc.call->args[2].as<ShapeExprNode>()->values, sizes)) {
      args.emplace_back(transform::PrimScalar::from_int(v));
    }
  }
  transform::PrimEvalOptions options;
  options.access = access;
  absl::Status s = transform::run_prim_func(kc.kernel_expr, args, options);
  EXPECT_TRUE(s.ok()) << s.message();
  return from_tensor(*out);
}

// Every element of `actual` within a relative `tolerance` of `expected`.
inline void expect_close(const Array& actual, const Array& expected, double tolerance = 1e-5) {
  ASSERT_EQ(actual.shape, expected.shape);
  for (size_t i = 0; i < expected.data.size(); ++i) {
    double e = expected.data[i];
    ASSERT_NEAR(actual.data[i], e, tolerance * (1.0 + std::abs(e))) << "at flat index " << i;
  }
}

// For each size of `n` in {1, 7, 64}: random inputs, the kernel's output, and
// `reference(inputs)` compared.
inline void check_numerically(const IRModule& legal, const SymVar& n,
                              const std::function<Array(const Inputs&)>& reference,
                              double tolerance = 1e-5, SymVarMap<int64_t> other_sizes = {}) {
  std::mt19937 rng(42);
  for (int64_t size : {1, 7, 64}) {
    SCOPED_TRACE("n = " + std::to_string(size));
    SymVarMap<int64_t> sizes = other_sizes;
    sizes[n] = size;
    Inputs in = random_inputs(legal, sizes, rng);
    Array out = run_kernel(legal, in, sizes);
    expect_close(out, reference(in), tolerance);
  }
}

// Numpy broadcasting of `a` to `shape`: the element of `a` for index `index` of the result.
inline double broadcast_at(const Array& a, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& index) {
  std::vector<int64_t> ai;
  size_t offset = shape.size() - a.shape.size();
  for (size_t j = 0; j < a.shape.size(); ++j) ai.push_back(a.shape[j] == 1 ? 0 : index[offset + j]);
  return a.at(ai);
}

inline std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t y = k < b.size() ? b[b.size() - 1 - k] : 1;
    out[n - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

// Elementwise `f` of two arrays with broadcasting.
inline Array broadcast_binary(const Array& a, const Array& b,
                              const std::function<double(double, double)>& f) {
  Array out(broadcast_shape(a.shape, b.shape));
  for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
    std::vector<int64_t> index = out.unravel(i);
    out.data[i] = f(broadcast_at(a, out.shape, index), broadcast_at(b, out.shape, index));
  }
  return out;
}

// Reference computations (plain loops over Arrays, in double).

// numpy.matmul of `a` and `b`.
inline Array matmul_ref(const Array& a, const Array& b) {
  const bool a_vec = a.shape.size() == 1;
  const bool b_vec = b.shape.size() == 1;
  std::vector<int64_t> as = a.shape;
  std::vector<int64_t> bs = b.shape;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  std::vector<int64_t> a_batch(as.begin(), as.end() - 2);
  std::vector<int64_t> b_batch(bs.begin(), bs.end() - 2);
  std::vector<int64_t> batch = broadcast_shape(a_batch, b_batch);
  const int64_t rows = as[as.size() - 2];
  const int64_t inner = as.back();
  const int64_t cols = bs.back();
  std::vector<int64_t> full = batch;
  full.push_back(rows);
  full.push_back(cols);
  Array result(full);
  auto batch_index = [&](const std::vector<int64_t>& own, const std::vector<int64_t>& index) {
    std::vector<int64_t> out;
    size_t offset = batch.size() - own.size();
    for (size_t j = 0; j < own.size(); ++j) out.push_back(own[j] == 1 ? 0 : index[offset + j]);
    return out;
  };
  for (int64_t f = 0; f < static_cast<int64_t>(result.data.size()); ++f) {
    std::vector<int64_t> index = result.unravel(f);
    std::vector<int64_t> bi(index.begin(), index.end() - 2);
    const int64_t i = index[index.size() - 2];
    const int64_t j = index.back();
    double acc = 0;
    for (int64_t k = 0; k < inner; ++k) {
      std::vector<int64_t> ai = batch_index(a_batch, bi);
      if (!a_vec) ai.push_back(i);
      ai.push_back(k);
      std::vector<int64_t> bj = batch_index(b_batch, bi);
      bj.push_back(k);
      if (!b_vec) bj.push_back(j);
      acc += a.at(ai) * b.at(bj);
    }
    result.data[f] = acc;
  }
  std::vector<int64_t> shape = batch;
  if (!a_vec) shape.push_back(rows);
  if (!b_vec) shape.push_back(cols);
  result.shape = shape;  // dropping unit dims keeps the row-major data
  return result;
}

// The sum of `x` over `axes` (all when empty), keeping them as 1 with `keepdims`.
inline Array sum_ref(const Array& x, std::vector<int64_t> axes, bool keepdims) {
  const int64_t ndim = static_cast<int64_t>(x.shape.size());
  std::vector<bool> reduced(ndim, axes.empty());
  for (int64_t a : axes) reduced[a < 0 ? a + ndim : a] = true;
  std::vector<int64_t> kept_shape;
  for (int64_t i = 0; i < ndim; ++i) kept_shape.push_back(reduced[i] ? 1 : x.shape[i]);
  Array kept(kept_shape);
  for (int64_t f = 0; f < static_cast<int64_t>(x.data.size()); ++f) {
    std::vector<int64_t> index = x.unravel(f);
    for (int64_t i = 0; i < ndim; ++i) {
      if (reduced[i]) index[i] = 0;
    }
    kept.at(index) += x.data[f];
  }
  if (!keepdims) {
    std::vector<int64_t> shape;
    for (int64_t i = 0; i < ndim; ++i) {
      if (!reduced[i]) shape.push_back(x.shape[i]);
    }
    kept.shape = shape;
  }
  return kept;
}

// softmax of `x` along `axis`.
inline Array softmax_ref(const Array& x, int64_t axis) {
  const int64_t ndim = static_cast<int64_t>(x.shape.size());
  if (axis < 0) axis += ndim;
  Array out(x.shape);
  for (int64_t f = 0; f < static_cast<int64_t>(x.data.size()); ++f) {
    std::vector<int64_t> index = x.unravel(f);
    double max_value = -INFINITY;
    double total = 0;
    std::vector<int64_t> k = index;
    for (k[axis] = 0; k[axis] < x.shape[axis]; ++k[axis]) max_value = std::max(max_value, x.at(k));
    for (k[axis] = 0; k[axis] < x.shape[axis]; ++k[axis]) total += std::exp(x.at(k) - max_value);
    out.data[f] = std::exp(x.data[f] - max_value) / total;
  }
  return out;
}

// `x` with its dims permuted: result dim i is x's dim axes[i].
inline Array permute_ref(const Array& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> shape;
  for (int64_t a : axes) shape.push_back(x.shape[a]);
  Array out(shape);
  for (int64_t f = 0; f < static_cast<int64_t>(out.data.size()); ++f) {
    std::vector<int64_t> index = out.unravel(f);
    std::vector<int64_t> in(index.size());
    for (size_t i = 0; i < axes.size(); ++i) in[axes[i]] = index[i];
    out.data[f] = x.at(in);
  }
  return out;
}

inline Array map_ref(const Array& x, const std::function<double(double)>& f) {
  Array out = x;
  for (double& v : out.data) v = f(v);
  return out;
}

inline double plus(double a, double b) { return a + b; }
inline double times(double a, double b) { return a * b; }

inline Expr add_of(const std::vector<Var>& v) { return op::add(v[0], v[1]); }
inline Expr multiply_of(const std::vector<Var>& v) { return op::multiply(v[0], v[1]); }
inline Expr matmul_of(const std::vector<Var>& v) { return op::matmul(v[0], v[1]); }

// Counts calls of each operator, everywhere in the graph functions.
class OpCounter : public ExprVisitor {
 public:
  void visit_call(const Expr& e, const CallNode& call) override {
    if (const auto* op = call.callee.as<OpNode>()) ++counts[op->name];
    ExprVisitor::visit_call(e, call);
  }
  std::map<std::string, int> counts;
};

inline std::map<std::string, int> op_counts(const IRModule& mod) {
  OpCounter counter;
  counter.visit_module(mod);
  return counter.counts;
}

}  // namespace relax::legalize_testing
