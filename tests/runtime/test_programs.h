// Hand-built Executables for the runtime tests, and the helpers that build them.
//
// Shared by the tests and by kernels/make_test_module.cc (which embeds
// aot_program() into the AOT test libraries at build time), so this header
// uses nothing but the runtime.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "relax/runtime/executable.h"
#include "relax/runtime/value.h"

namespace relax::runtime::testing {

// ---------------------------------------------------------------------------
// Builders.

inline Operand reg(int64_t r) { return {Operand::Kind::kReg, r}; }
inline Operand cst(int64_t c) { return {Operand::Kind::kConst, c}; }
inline Operand sym(int64_t e) { return {Operand::Kind::kSym, e}; }
inline Operand imm(int64_t v) { return {Operand::Kind::kImm, v}; }

inline Instruction op(Opcode code, int32_t dst = -1, int64_t index = 0,
                      std::vector<Operand> operands = {}, DataType dtype = DataType()) {
  Instruction ins;
  ins.op = code;
  ins.dst = dst;
  ins.index = index;
  ins.dtype = dtype;
  ins.operands = std::move(operands);
  return ins;
}

/// A postfix program from (op, operand) pairs.
inline SymProgram program(std::string text, std::vector<SymInstr> code) {
  return SymProgram{std::move(code), std::move(text)};
}
inline SymProgram slot_program(int64_t slot, std::string text) {
  return program(std::move(text), {{SymOp::kSlot, slot}});
}
inline SymProgram const_program(int64_t v) {
  return program(std::to_string(v), {{SymOp::kConst, v}});
}

inline DimPattern any_dim(std::string text = "_") { return {DimRule::kAny, -1, 1, -1, std::move(text)}; }
inline DimPattern bind_dim(int32_t slot, std::string text) {
  return {DimRule::kBind, slot, 1, -1, std::move(text)};
}
inline DimPattern solve_dim(int32_t slot, int64_t coeff, int32_t rest, std::string text) {
  return {DimRule::kSolve, slot, coeff, rest, std::move(text)};
}
inline DimPattern check_dim(int32_t expr, std::string text) {
  return {DimRule::kCheck, -1, 1, expr, std::move(text)};
}

inline ValuePattern tensor_pattern(std::optional<DataType> dtype, std::vector<DimPattern> dims) {
  ValuePattern p;
  p.kind = PatternKind::kTensor;
  p.dtype = dtype;
  p.ndim = static_cast<int32_t>(dims.size());
  p.dims = std::move(dims);
  return p;
}
inline ValuePattern tensor_rank_pattern(std::optional<DataType> dtype, int32_t ndim) {
  ValuePattern p;
  p.kind = PatternKind::kTensor;
  p.dtype = dtype;
  p.ndim = ndim;
  return p;
}
inline ValuePattern shape_pattern(std::vector<DimPattern> dims) {
  ValuePattern p;
  p.kind = PatternKind::kShape;
  p.ndim = static_cast<int32_t>(dims.size());
  p.dims = std::move(dims);
  return p;
}
inline ValuePattern prim_pattern(std::optional<DataType> dtype, std::vector<DimPattern> value = {}) {
  ValuePattern p;
  p.kind = PatternKind::kPrim;
  p.dtype = dtype;
  p.dims = std::move(value);
  return p;
}
inline ValuePattern tuple_pattern(std::vector<ValuePattern> fields) {
  ValuePattern p;
  p.kind = PatternKind::kTuple;
  p.fields = std::move(fields);
  return p;
}
inline ValuePattern object_pattern() { return ValuePattern{}; }

inline MatchGroup group(std::vector<MatchItem> items, bool checked = true) {
  return MatchGroup{std::move(items), checked, {}};
}

/// A host tensor filled from `values`.
template <typename T>
Tensor make_tensor(std::vector<int64_t> shape, const std::vector<T>& values, DataType dtype) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype);
  if (!t.ok()) return Tensor();
  if (!values.empty()) std::memcpy(t->data(), values.data(), values.size() * sizeof(T));
  return *t;
}
inline Tensor f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  return make_tensor(std::move(shape), values, DataType::float32());
}
inline Tensor i64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return make_tensor(std::move(shape), values, DataType::int64());
}
template <typename T>
std::vector<T> elements(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.data(), out.size() * sizeof(T));
  return out;
}

/// Structural equality of Values, tensors by dtype, shape and compact contents.
inline bool values_equal(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kNone: return true;
    case ValueKind::kTensor: {
      const Tensor& x = a.tensor_or_die();
      const Tensor& y = b.tensor_or_die();
      if (x.dtype() != y.dtype() || x.shape() != y.shape() || !x.is_contiguous() ||
          !y.is_contiguous()) {
        return false;
      }
      return x.nbytes() == 0 || std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
    }
    case ValueKind::kShape: return a.shape_dims_or_die() == b.shape_dims_or_die();
    case ValueKind::kInt: return a.int_value_or_die() == b.int_value_or_die();
    case ValueKind::kFloat: {
      double x = a.float_value_or_die();
      double y = b.float_value_or_die();
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    case ValueKind::kString: return a.string_value_or_die() == b.string_value_or_die();
    case ValueKind::kTuple: {
      if (a.fields_or_die().size() != b.fields_or_die().size()) return false;
      for (size_t i = 0; i < a.fields_or_die().size(); ++i) {
        if (!values_equal(a.fields_or_die()[i], b.fields_or_die()[i])) return false;
      }
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Programs.

/// main(x: Tensor[(n,), float32], y: Tensor[(n,), float32]) = kernel add_kernel(x, y) into a
/// new Tensor[(n,), float32]. `checked`: MatchGroup::checked of the argument match.
inline Executable add_program(bool checked = true) {
  Executable exec;
  exec.kernel_names = {"add_kernel"};
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x", "y"};
  fn.num_registers = 3;
  fn.slot_names = {"n"};
  fn.exprs = {slot_program(0, "n")};
  fn.patterns = {tensor_pattern(DataType::float32(), {bind_dim(0, "n")}),
                 tensor_pattern(DataType::float32(), {check_dim(0, "n")})};
  fn.matches = {group({{0, 0, "argument x"}, {1, 1, "argument y"}}, checked)};
  fn.code = {op(Opcode::kMatch, -1, 0),
             op(Opcode::kAllocTensor, 2, 0, {sym(0)}, DataType::float32()),
             op(Opcode::kCallKernel, -1, 0, {reg(0), reg(1), reg(2)}),
             op(Opcode::kRet, -1, 0, {reg(2)})};
  exec.functions.push_back(std::move(fn));
  return exec;
}

/// The program the AOT test libraries embed:
///   main(x: Tensor[(n,), float32], y: Tensor[(n,), float32]) = scale_kernel(add(x, y), 0.5)
///   offset(x: Tensor[(n,), int64]) = (add_int_kernel(x, n), Shape(n, 2 * n))
inline Executable aot_program() {
  Executable exec;
  exec.kernel_names = {"add_kernel", "scale_kernel", "add_int_kernel"};
  exec.constants = {Value(0.5)};
  VMFunction main;
  main.name = "main";
  main.param_names = {"x", "y"};
  main.num_registers = 4;
  main.slot_names = {"n"};
  main.exprs = {slot_program(0, "n")};
  main.patterns = {tensor_pattern(DataType::float32(), {bind_dim(0, "n")}),
                   tensor_pattern(DataType::float32(), {check_dim(0, "n")})};
  main.matches = {group({{0, 0, "argument x"}, {1, 1, "argument y"}})};
  main.code = {op(Opcode::kMatch, -1, 0),
               op(Opcode::kAllocTensor, 2, 0, {sym(0)}, DataType::float32()),
               op(Opcode::kCallKernel, -1, 0, {reg(0), reg(1), reg(2)}),
               op(Opcode::kAllocTensor, 3, 0, {sym(0)}, DataType::float32()),
               op(Opcode::kCallKernel, -1, 1, {reg(2), cst(0), reg(3)}),
               op(Opcode::kRet, -1, 0, {reg(3)})};
  exec.functions.push_back(std::move(main));

  VMFunction offset;
  offset.name = "offset";
  offset.param_names = {"x"};
  offset.num_registers = 4;
  offset.slot_names = {"n"};
  offset.exprs = {slot_program(0, "n"),
                  program("2 * n", {{SymOp::kConst, 2}, {SymOp::kSlot, 0}, {SymOp::kMul, 0}})};
  offset.patterns = {tensor_pattern(DataType::int64(), {bind_dim(0, "n")})};
  offset.matches = {group({{0, 0, "argument x"}})};
  offset.code = {op(Opcode::kMatch, -1, 0),
                 op(Opcode::kAllocTensor, 1, 0, {sym(0)}, DataType::int64()),
                 op(Opcode::kCallKernel, -1, 2, {reg(0), sym(0), reg(1)}),
                 op(Opcode::kMakeShape, 2, 0, {sym(0), sym(1)}),
                 op(Opcode::kMakeTuple, 3, 0, {reg(1), reg(2)}),
                 op(Opcode::kRet, -1, 0, {reg(3)})};
  exec.functions.push_back(std::move(offset));
  return exec;
}

}  // namespace relax::runtime::testing
