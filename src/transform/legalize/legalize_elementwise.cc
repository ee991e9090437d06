// Elementwise kernels: add and multiply (numpy broadcasting; a Prim operand is
// a scalar parameter) and exp.
//
//   add(x: Tensor[(n, 1), f32], y: Tensor[(1, m), f32])  becomes
//   prim_func @add(A: Buffer[(n, 1), float32], B: Buffer[(1, m), float32],
//                  C: Buffer[(n, m), float32]) {
//     for i0 in range(n) parallel {
//       for i1 in range(m) {
//         block add(vi0 = spatial(n, i0), vi1 = spatial(m, i1)) {
//           C[vi0, vi1] = A[vi0, 0] + B[0, vi1]
//         }
//       }
//     }
//   }
#include "transform/legalize/legalize_kernel.h"

namespace relax::transform::legalize {
namespace {

// One operand of a binary kernel: a buffer and how it broadcasts, or a scalar.
struct Operand {
  Buffer buffer;
  BroadcastMap map;
  SymVar scalar = SymVar("s");
  bool is_scalar = false;

  // The operand's value at the result's point `v`, of the result's dtype.
  SymExpr value(const std::vector<SymVar>& v, DataType dtype) const {
    if (!is_scalar) return buffer_load(buffer, broadcast_index(map, v));
    return scalar.dtype() == dtype ? SymExpr(scalar) : cast(dtype, scalar);
  }
};

absl::StatusOr<Lowering> legalize_binary(const std::string& op, const CallNode& call,
                                         Analyzer& analyzer) {
  // Two Prims give a Prim, which no kernel returns: only a known value replaces the call.
  if (const auto* prim = call.struct_info().as<PrimStructInfoNode>()) {
    if (prim->value.defined()) {
      Lowering out;
      out.replacement = make_prim_value(prim->value);
      return out;
    }
    return rule_error(op, "both operands are Prims and the result " +
                              call.struct_info().to_string() +
                              " has no known value (scalar arithmetic has no kernel)");
  }
  const char* roles[] = {"lhs", "rhs"};
  const TensorStructInfoNode* tensors[2] = {nullptr, nullptr};
  for (size_t i = 0; i < 2; ++i) {
    if (call.args[i].struct_info().as<PrimStructInfoNode>() != nullptr) continue;
    absl::StatusOr<const TensorStructInfoNode*> t = known_tensor(call, i, op, roles[i]);
    if (!t.ok()) return t.status();
    tensors[i] = *t;
  }
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op, DtypeClass::kNumeric);
  if (!out_or.ok()) return out_or.status();
  const TensorStructInfoNode& out = **out_or;

  std::vector<std::vector<SymExpr>> buffer_dims;
  Operand operands[2];
  for (size_t i = 0; i < 2; ++i) {
    if (tensors[i] == nullptr) {
      operands[i].is_scalar = true;
      continue;
    }
    absl::StatusOr<BroadcastMap> map =
        broadcast_map(op, roles[i], *tensors[i]->shape, *out.shape, analyzer);
    if (!map.ok()) return map.status();
    operands[i].map = *std::move(map);
    buffer_dims.push_back(*tensors[i]->shape);
  }
  buffer_dims.push_back(*out.shape);

  KernelBuilder kb(op, buffer_dims);
  const char* buffer_names[] = {"A", "B"};
  const char* scalar_names[] = {"a", "b"};
  for (size_t i = 0; i < 2; ++i) {
    if (operands[i].is_scalar) {
      operands[i].scalar = kb.scalar_input(scalar_names[i], call.args[i]);
    } else {
      operands[i].buffer = kb.input(buffer_names[i], call.args[i]);
    }
  }
  Buffer c = kb.output("C", out);
  PrimFuncBuilder& b = kb.body();
  const DataType dtype = *out.dtype;
  loop_block(b, op, c.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               SymExpr lhs = operands[0].value(v, dtype);
               SymExpr rhs = operands[1].value(v, dtype);
               b.store(c, as_indices(v), op == "add" ? lhs + rhs : lhs * rhs);
             });
  return kb.finish();
}

}  // namespace

absl::StatusOr<Lowering> legalize_add(const CallNode& call, Analyzer& analyzer) {
  return legalize_binary("add", call, analyzer);
}

absl::StatusOr<Lowering> legalize_multiply(const CallNode& call, Analyzer& analyzer) {
  return legalize_binary("multiply", call, analyzer);
}

absl::StatusOr<Lowering> legalize_exp(const CallNode& call, Analyzer&) {
  const std::string op = "exp";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  if (absl::Status s = check_dtype(op, *(*x)->dtype, DtypeClass::kFloat,
                                   "x " + call.args[0].struct_info().to_string());
      !s.ok()) {
    return s;
  }
  absl::StatusOr<const TensorStructInfoNode*> result = known_result(call, op);
  if (!result.ok()) return result.status();
  KernelBuilder kb(op, {*(*x)->shape, *(*result)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer out = kb.output("B", **result);
  PrimFuncBuilder& b = kb.body();
  loop_block(b, op, out.shape(), {}, nullptr,
             [&](const std::vector<SymVar>& v, const std::vector<SymVar>&) {
               b.store(out, as_indices(v), exp(buffer_load(a, as_indices(v))));
             });
  return kb.finish();
}

}  // namespace relax::transform::legalize
