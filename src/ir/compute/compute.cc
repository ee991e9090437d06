// The high-level kernels of the compute library: elementwise, broadcast,
// reduce, injective.
#include <limits>

#include "relax/ir/compute.h"
#include "relax/ir/struct_info.h"

namespace relax::compute {
namespace {

std::string op_of(const CallNode& call) {
  if (const auto* op = call.callee.as<OpNode>()) return op->name;
  return "kernel";
}

}  // namespace

DataType compute_dtype(DataType dtype) {
  return dtype.is_float() && dtype.bits == 16 ? DataType::float32() : dtype;
}

SymExpr as_dtype(const SymExpr& v, DataType dtype) {
  return v.dtype() == dtype ? v : cast(dtype, v);
}

absl::StatusOr<Lowering> elementwise(const CallNode& call, Analyzer&, const UnaryFn& fn) {
  const std::string op = op_of(call);
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, arg_role(call, 0));
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  KernelBuilder kb(op, {*(*x)->shape, *(*out)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", **out);
  PrimFuncBuilder& pb = kb.body();
  const DataType dtype = *(*out)->dtype;
  loop_block(pb, op, b.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               pb.store(b, as_indices(v), as_dtype(fn(buffer_load(a, as_indices(v))), dtype));
             });
  return kb.finish();
}

absl::StatusOr<Lowering> broadcast(const CallNode& call, Analyzer& analyzer, const NaryFn& fn,
                                   std::optional<DataType> scalar_dtype) {
  const std::string op = op_of(call);
  // Prims only: no kernel returns a Prim; only a known value replaces the call.
  if (const auto* prim = call.struct_info().as<PrimStructInfoNode>()) {
    if (prim->value.defined()) {
      Lowering out;
      out.replacement = make_prim_value(prim->value);
      return out;
    }
    return error(op, "every operand is a Prim and the result " + call.struct_info().to_string() +
                         " has no known value (scalar arithmetic has no kernel)");
  }
  const size_t n = call.args.size();
  std::vector<const TensorStructInfoNode*> tensors(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (call.args[i].struct_info().as<PrimStructInfoNode>() != nullptr) continue;
    absl::StatusOr<const TensorStructInfoNode*> t = known_tensor(call, i, op, arg_role(call, i));
    if (!t.ok()) return t.status();
    tensors[i] = *t;
  }
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op);
  if (!out_or.ok()) return out_or.status();
  const TensorStructInfoNode& out = **out_or;
  if (!scalar_dtype) {
    for (const TensorStructInfoNode* t : tensors) {
      if (t != nullptr && !t->dtype->is_bool()) {
        scalar_dtype = t->dtype;
        break;
      }
    }
    if (!scalar_dtype) scalar_dtype = out.dtype;
  }

  std::vector<std::vector<SymExpr>> buffer_dims;
  std::vector<BroadcastMap> maps(n);
  for (size_t i = 0; i < n; ++i) {
    if (tensors[i] == nullptr) continue;
    absl::StatusOr<BroadcastMap> map =
        broadcast_map(op, arg_role(call, i), *tensors[i]->shape, *out.shape, analyzer);
    if (!map.ok()) return map.status();
    maps[i] = *std::move(map);
    buffer_dims.push_back(*tensors[i]->shape);
  }
  buffer_dims.push_back(*out.shape);

  KernelBuilder kb(op, buffer_dims);
  std::vector<Buffer> buffers(n);
  std::vector<SymExpr> scalars(n);
  for (size_t i = 0; i < n; ++i) {
    if (tensors[i] == nullptr) {
      // Parameters are named by position: buffers A, B, ..., scalars a, b, ...
      scalars[i] = as_dtype(kb.scalar_input(std::string(1, static_cast<char>('a' + i)), call.args[i]),
                            *scalar_dtype);
    } else {
      buffers[i] = kb.input(std::string(1, static_cast<char>('A' + i)), call.args[i]);
    }
  }
  Buffer c = kb.output(std::string(1, static_cast<char>('A' + n)), out);
  PrimFuncBuilder& b = kb.body();
  const DataType dtype = *out.dtype;
  loop_block(b, op, c.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               std::vector<SymExpr> values;
               for (size_t i = 0; i < n; ++i) {
                 values.push_back(tensors[i] == nullptr
                                      ? scalars[i]
                                      : buffer_load(buffers[i], broadcast_index(maps[i], v)));
               }
               b.store(c, as_indices(v), as_dtype(fn(values), dtype));
             });
  return kb.finish();
}

// ---------------------------------------------------------------------------
// Reductions.

Reducer sum_reducer() {
  Reducer r;
  r.init = [](DataType t) { return t.is_float() ? SymExpr::float_imm(0, t) : SymExpr::int_imm(0, t); };
  r.combine = [](const SymExpr& acc, const SymExpr& x) { return acc + x; };
  return r;
}

Reducer prod_reducer() {
  Reducer r;
  r.init = [](DataType t) { return t.is_float() ? SymExpr::float_imm(1, t) : SymExpr::int_imm(1, t); };
  r.combine = [](const SymExpr& acc, const SymExpr& x) { return acc * x; };
  return r;
}

namespace {

SymExpr extreme(DataType t, bool lowest) {
  if (t.is_float()) {
    const double inf = std::numeric_limits<double>::infinity();
    return SymExpr::float_imm(lowest ? -inf : inf, t);
  }
  if (t.is_bool()) return SymExpr::boolean(!lowest);
  if (t.code == DataType::Code::kUInt) {
    return SymExpr::int_imm(lowest ? 0 : (t.bits >= 64 ? std::numeric_limits<int64_t>::max()
                                                         : (int64_t{1} << t.bits) - 1),
                            t);
  }
  const int64_t hi = t.bits >= 64 ? std::numeric_limits<int64_t>::max()
                                  : (int64_t{1} << (t.bits - 1)) - 1;
  return SymExpr::int_imm(lowest ? -hi - 1 : hi, t);
}

}  // namespace

Reducer max_reducer() {
  Reducer r;
  r.init = [](DataType t) { return extreme(t, true); };
  r.combine = [](const SymExpr& acc, const SymExpr& x) { return max(acc, x); };
  return r;
}

Reducer min_reducer() {
  Reducer r;
  r.init = [](DataType t) { return extreme(t, false); };
  r.combine = [](const SymExpr& acc, const SymExpr& x) { return min(acc, x); };
  return r;
}

Reducer mean_reducer() {
  Reducer r = sum_reducer();
  r.finalize = [](const SymExpr& acc, const SymExpr& count) {
    return acc / cast(acc.dtype(), count);
  };
  return r;
}

absl::StatusOr<ReduceAxes> reduce_axes(const CallNode& call,
                                       const std::optional<std::vector<int64_t>>& axis,
                                       bool keepdims) {
  const std::string op = op_of(call);
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, arg_role(call, 0));
  if (!x.ok()) return x.status();
  const auto ndim = static_cast<int64_t>((*x)->shape->size());
  ReduceAxes out;
  out.keepdims = keepdims;
  if (!axis) {
    out.all = true;
    for (int64_t i = 0; i < ndim; ++i) out.axes.push_back(i);
    return out;
  }
  std::vector<bool> reduced(static_cast<size_t>(ndim), false);
  for (int64_t a : *axis) {
    absl::StatusOr<int64_t> i = normalize_axis(op, a, ndim);
    if (!i.ok()) return i.status();
    reduced[static_cast<size_t>(*i)] = true;
  }
  for (int64_t i = 0; i < ndim; ++i) {
    if (reduced[static_cast<size_t>(i)]) out.axes.push_back(i);
  }
  return out;
}

absl::StatusOr<Lowering> reduce(const CallNode& call, Analyzer&, const ReduceAxes& axes,
                                const Reducer& reducer) {
  const std::string op = op_of(call);
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, arg_role(call, 0));
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  const size_t ndim = (*x)->shape->size();
  std::vector<bool> reduced(ndim, false);
  for (int64_t a : axes.axes) reduced[static_cast<size_t>(a)] = true;
  const DataType out_dtype = *(*out)->dtype;
  const DataType acc_dtype = reducer.acc_dtype ? *reducer.acc_dtype
                                                 : compute_dtype(out_dtype);

  KernelBuilder kb(op, {*(*x)->shape, *(*out)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", **out);
  std::vector<SymExpr> spatial;
  std::vector<SymExpr> reduce_dims;
  for (size_t i = 0; i < ndim; ++i) (reduced[i] ? reduce_dims : spatial).push_back(a.shape()[i]);
  auto out_index = [&](const std::vector<SymVar>& s) {
    std::vector<SymExpr> index;
    size_t next = 0;
    for (size_t i = 0; i < ndim; ++i) {
      if (!reduced[i]) {
        index.push_back(s[next++]);
      } else if (axes.keepdims) {
        index.push_back(0);
      }
    }
    return index;
  };
  auto in_value = [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
    std::vector<SymExpr> index;
    size_t next_s = 0;
    size_t next_r = 0;
    for (size_t i = 0; i < ndim; ++i) index.push_back(reduced[i] ? r[next_r++] : s[next_s++]);
    SymExpr v = as_dtype(buffer_load(a, index), acc_dtype);
    return reducer.map ? reducer.map(v) : v;
  };
  PrimFuncBuilder& pb = kb.body();
  SymExpr count(1);
  for (const SymExpr& d : reduce_dims) count = count * d;

  if (reduce_dims.empty()) {  // nothing to reduce: one combine step per element
    loop_block(pb, op, spatial, {}, nullptr,
               [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
                 SymExpr v = reducer.combine(reducer.init(acc_dtype), in_value(s, r));
                 if (reducer.finalize) v = reducer.finalize(v, SymExpr(1));
                 pb.store(b, out_index(s), as_dtype(v, out_dtype));
               });
    return kb.finish();
  }
  if (acc_dtype == out_dtype && !reducer.finalize) {
    loop_block(
        pb, op, spatial, reduce_dims,
        [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
          pb.store(b, out_index(s), reducer.init(acc_dtype));
        },
        [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
          pb.store(b, out_index(s), reducer.combine(buffer_load(b, out_index(s)), in_value(s, r)));
        });
    return kb.finish();
  }
  Buffer acc = pb.allocate("acc", spatial, acc_dtype, BufferScope::kWorkspace);
  loop_block(
      pb, op, spatial, reduce_dims,
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
        pb.store(acc, as_indices(s), reducer.init(acc_dtype));
      },
      [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
        pb.store(acc, as_indices(s), reducer.combine(buffer_load(acc, as_indices(s)), in_value(s, r)));
      });
  loop_block(pb, op + "_out", spatial, {}, nullptr,
             [&](const std::vector<SymVar>& s, const std::vector<SymVar>&) {
               SymExpr v = buffer_load(acc, as_indices(s));
               if (reducer.finalize) v = reducer.finalize(v, count);
               pb.store(b, out_index(s), as_dtype(v, out_dtype));
             });
  return kb.finish();
}

// ---------------------------------------------------------------------------
// Injective kernels.

SymExpr Inputs::load(size_t k, std::vector<SymExpr> index) const {
  return buffer_load(buffers_[k], std::move(index));
}

absl::StatusOr<Lowering> injective(const CallNode& call, Analyzer&, const IndexFn& fn) {
  const std::string op = op_of(call);
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  // The tensors read, in order, and how the call passes each.
  std::vector<Expr> tensor_args;
  std::vector<Expr> prim_args;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Expr& arg = call.args[i];
    const StructInfo& s = arg.struct_info();
    if (const auto* tuple = s.as<TupleStructInfoNode>()) {
      const auto* literal = arg.as<TupleNode>();
      for (size_t j = 0; j < tuple->fields.size(); ++j) {
        tensor_args.push_back(literal != nullptr
                                  ? literal->fields[j]
                                  : make_tuple_get_item(arg, static_cast<int>(j), tuple->fields[j]));
      }
    } else if (s.kind() == StructInfoKind::kTensor) {
      tensor_args.push_back(arg);
    } else if (s.kind() == StructInfoKind::kPrim) {
      prim_args.push_back(arg);
    }
  }
  std::vector<std::vector<SymExpr>> buffer_dims;
  for (size_t k = 0; k < tensor_args.size(); ++k) {
    const auto* t = tensor_args[k].struct_info().as<TensorStructInfoNode>();
    if (t == nullptr || !t->shape || !t->dtype) {
      return error(op, "input " + std::to_string(k) + ": expected a Tensor of known shape and dtype, got " +
                           tensor_args[k].struct_info().to_string());
    }
    buffer_dims.push_back(*t->shape);
  }
  buffer_dims.push_back(*(*out)->shape);
  KernelBuilder kb(op, buffer_dims);
  std::vector<Buffer> buffers;
  for (size_t k = 0; k < tensor_args.size(); ++k) {
    buffers.push_back(kb.input("A" + std::to_string(k), tensor_args[k]));
  }
  std::vector<SymExpr> scalars;
  for (size_t k = 0; k < prim_args.size(); ++k) {
    scalars.push_back(kb.scalar_input("s" + std::to_string(k), prim_args[k]));
  }
  Buffer b = kb.output("Out", **out);
  const Inputs inputs(std::move(buffers), std::move(scalars), b.shape());
  PrimFuncBuilder& pb = kb.body();
  const DataType dtype = *(*out)->dtype;
  loop_block(pb, op, b.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               pb.store(b, as_indices(v), as_dtype(fn(as_indices(v), inputs), dtype));
             });
  return kb.finish();
}

SymExpr flat_index(const std::vector<SymExpr>& index, const std::vector<SymExpr>& dims) {
  if (index.empty()) return SymExpr(0);
  SymExpr flat = index[0];
  for (size_t i = 1; i < index.size(); ++i) flat = flat * dims[i] + index[i];
  return flat;
}

std::vector<SymExpr> unflatten_index(const SymExpr& flat, const std::vector<SymExpr>& dims) {
  std::vector<SymExpr> index(dims.size());
  SymExpr rest = flat;
  for (size_t i = dims.size(); i-- > 0;) {
    index[i] = i == 0 ? rest : floormod(rest, dims[i]);
    rest = floordiv(rest, dims[i]);
  }
  return index;
}

}  // namespace relax::compute
