// A small reference interpreter for PrimFuncs, for tests that check kernels
// numerically without the code generator.
//
//   relax::interp::Array a = ..., out = ...;
//   absl::Status s = relax::interp::run_prim_func(kernel, {&a, &out, 7.0});
//
// Buffers hold doubles (integers are exact up to 2^53); every value is computed
// by relax's own evaluate_float, which rounds each operation to its node's dtype,
// so a float32 kernel gives what a float32 machine computing in double and
// rounding each step would. Loads are resolved first: each load in a value is
// replaced by a constant of the element, then the value is evaluated.
//
// It executes For, SeqStmt, BufferStore, IfThenElse, LetStmt, Allocate (filled
// with NaN, so that a read before a write shows), Evaluate and Block (its
// iteration variables take their bindings, which must lie in [0, extent); the
// init part runs when every reduction variable is 0). Errors: shapes that do
// not fit the parameters, indices out of bounds, evaluation errors.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/prim_func.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"

namespace relax::interp {

/// A row-major n-d array of doubles.
struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;

  explicit Array(std::vector<int64_t> dims = {}, double fill = 0.0) : shape(std::move(dims)) {
    data.assign(static_cast<size_t>(count(shape)), fill);
  }
  static int64_t count(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  /// The flat position of `index`, or -1 when it is out of bounds.
  int64_t offset(const std::vector<int64_t>& index) const {
    if (index.size() != shape.size()) return -1;
    int64_t flat = 0;
    for (size_t i = 0; i < index.size(); ++i) {
      if (index[i] < 0 || index[i] >= shape[i]) return -1;
      flat = flat * shape[i] + index[i];
    }
    return flat;
  }
  double& at(const std::vector<int64_t>& index) { return data[static_cast<size_t>(offset(index))]; }
  double at(const std::vector<int64_t>& index) const {
    return data[static_cast<size_t>(offset(index))];
  }
  /// The index of flat position `flat`.
  std::vector<int64_t> unravel(int64_t flat) const {
    std::vector<int64_t> index(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
      index[i] = flat % shape[i];
      flat /= shape[i];
    }
    return index;
  }
};

/// A PrimFunc argument: an array for a buffer parameter, a number for a scalar.
using PrimArg = std::variant<Array*, double>;

namespace interpreter_detail {

#define RELAX_INTERP_TRY(expr)                \
  do {                                        \
    if (absl::Status s_ = (expr); !s_.ok()) { \
      return s_;                              \
    }                                         \
  } while (false)

class Interpreter {
 public:
  absl::Status run(const PrimFuncNode& func, const std::vector<PrimArg>& args) {
    if (args.size() != func.params.size()) {
      return error("expected " + std::to_string(func.params.size()) + " arguments, got " +
                   std::to_string(args.size()));
    }
    // Bare-variable dims first (any parameter may define a variable another uses).
    for (size_t i = 0; i < args.size(); ++i) {
      const PrimParam& p = func.params[i];
      if (p.scalar) {
        const double* v = std::get_if<double>(&args[i]);
        if (v == nullptr) return error("parameter " + std::to_string(i) + " is a scalar");
        bind(*p.scalar, *v);
        continue;
      }
      Array* const* a = std::get_if<Array*>(&args[i]);
      if (a == nullptr) return error("parameter " + std::to_string(i) + " is a buffer");
      if ((*a)->shape.size() != p.buffer->ndim()) {
        return error("buffer `" + p.buffer->name() + "` has rank " +
                     std::to_string(p.buffer->ndim()));
      }
      for (size_t d = 0; d < p.buffer->ndim(); ++d) {
        const SymExpr& dim = p.buffer->shape()[d];
        if (dim.is_var()) bind(SymVar::from_expr(dim), static_cast<double>((*a)->shape[d]));
      }
      buffers_[p.buffer->get()] = *a;
    }
    for (const PrimParam& p : func.params) {
      if (!p.buffer) continue;
      const Array& a = *buffers_[p.buffer->get()];
      for (size_t d = 0; d < p.buffer->ndim(); ++d) {
        absl::StatusOr<int64_t> dim = index(p.buffer->shape()[d]);
        if (!dim.ok()) return dim.status();
        if (*dim != a.shape[d]) {
          return error("buffer `" + p.buffer->name() + "` dim " + std::to_string(d) + " is " +
                       std::to_string(*dim) + ", the array's is " + std::to_string(a.shape[d]));
        }
      }
    }
    return exec(func.body);
  }

 private:
  static absl::Status error(const std::string& message) {
    return absl::InvalidArgumentError("prim interpreter: " + message);
  }

  void bind(const SymVar& var, double value) {
    if (var.dtype().is_float()) {
      floats_[var] = value;
    } else {
      ints_[var] = static_cast<int64_t>(value);
    }
  }
  void unbind(const SymVar& var) {
    floats_.erase(var);
    ints_.erase(var);
  }

  // `e` with every load replaced by a constant of the loaded element.
  absl::StatusOr<SymExpr> resolve(const SymExpr& e) {
    if (e.num_operands() == 0 && e.kind() != SymKind::kBufferLoad) return e;
    std::vector<SymExpr> operands;
    for (size_t i = 0; i < e.num_operands(); ++i) {
      absl::StatusOr<SymExpr> op = resolve(e.operand(i));
      if (!op.ok()) return op.status();
      operands.push_back(*std::move(op));
    }
    if (e.kind() != SymKind::kBufferLoad) return e.with_operands(std::move(operands));
    absl::StatusOr<double> element = load(e->buffer(), operands);
    if (!element.ok()) return element.status();
    const DataType t = e.dtype();
    if (t.is_float()) return SymExpr::float_imm(*element, t);
    if (t.is_bool()) return SymExpr::boolean(*element != 0);
    return SymExpr::int_imm(static_cast<int64_t>(*element), t);
  }

  absl::StatusOr<double> value(const SymExpr& e) {
    absl::StatusOr<SymExpr> resolved = resolve(e);
    if (!resolved.ok()) return resolved.status();
    return evaluate_float(*resolved, ints_, floats_);
  }

  absl::StatusOr<int64_t> index(const SymExpr& e) {
    absl::StatusOr<double> v = value(e);
    if (!v.ok()) return v.status();
    if (*v != std::floor(*v)) return error("index `" + e.to_string() + "` is not an integer");
    return static_cast<int64_t>(*v);
  }

  absl::StatusOr<std::vector<int64_t>> indices(const Buffer& buffer,
                                               const std::vector<SymExpr>& exprs) {
    std::vector<int64_t> out;
    for (const SymExpr& e : exprs) {
      absl::StatusOr<int64_t> i = index(e);
      if (!i.ok()) return i.status();
      out.push_back(*i);
    }
    auto it = buffers_.find(buffer.get());
    if (it == buffers_.end()) return error("buffer `" + buffer.name() + "` is not defined");
    if (it->second->offset(out) < 0) {
      std::string text;
      for (int64_t i : out) text += (text.empty() ? "" : ", ") + std::to_string(i);
      return error("index [" + text + "] is out of bounds of `" + buffer.name() + "`");
    }
    return out;
  }

  absl::StatusOr<double> load(const Buffer& buffer, const std::vector<SymExpr>& exprs) {
    absl::StatusOr<std::vector<int64_t>> at = indices(buffer, exprs);
    if (!at.ok()) return at.status();
    return buffers_[buffer.get()]->at(*at);
  }

  absl::Status exec(const Stmt& s) {
    if (!s.defined()) return absl::OkStatus();
    switch (s.kind()) {
      case StmtKind::kFor: {
        const auto& node = *s.as<ForNode>();
        absl::StatusOr<int64_t> min = index(node.min);
        if (!min.ok()) return min.status();
        absl::StatusOr<int64_t> extent = index(node.extent);
        if (!extent.ok()) return extent.status();
        for (int64_t i = *min; i < *min + *extent; ++i) {
          bind(node.loop_var, static_cast<double>(i));
          RELAX_INTERP_TRY(exec(node.body));
        }
        unbind(node.loop_var);
        return absl::OkStatus();
      }
      case StmtKind::kSeq:
        for (const Stmt& child : s.as<SeqStmtNode>()->stmts) RELAX_INTERP_TRY(exec(child));
        return absl::OkStatus();
      case StmtKind::kBufferStore: {
        const auto& node = *s.as<BufferStoreNode>();
        absl::StatusOr<double> v = value(node.value);
        if (!v.ok()) return v.status();
        absl::StatusOr<std::vector<int64_t>> at = indices(node.buffer, node.indices);
        if (!at.ok()) return at.status();
        buffers_[node.buffer.get()]->at(*at) = *v;
        return absl::OkStatus();
      }
      case StmtKind::kIfThenElse: {
        const auto& node = *s.as<IfThenElseNode>();
        absl::StatusOr<double> cond = value(node.cond);
        if (!cond.ok()) return cond.status();
        return exec(*cond != 0 ? node.then_case : node.else_case);
      }
      case StmtKind::kLetStmt: {
        const auto& node = *s.as<LetStmtNode>();
        absl::StatusOr<double> v = value(node.value);
        if (!v.ok()) return v.status();
        bind(node.var, *v);
        RELAX_INTERP_TRY(exec(node.body));
        unbind(node.var);
        return absl::OkStatus();
      }
      case StmtKind::kAllocate: {
        const auto& node = *s.as<AllocateNode>();
        std::vector<int64_t> shape;
        for (const SymExpr& d : node.buffer.shape()) {
          absl::StatusOr<int64_t> dim = index(d);
          if (!dim.ok()) return dim.status();
          shape.push_back(*dim);
        }
        auto storage = std::make_unique<Array>(shape, std::numeric_limits<double>::quiet_NaN());
        buffers_[node.buffer.get()] = storage.get();
        absl::Status status = exec(node.body);
        buffers_.erase(node.buffer.get());
        return status;
      }
      case StmtKind::kEvaluate:
        return value(s.as<EvaluateNode>()->value).status();
      case StmtKind::kBlock:
        return exec_block(*s.as<BlockNode>());
    }
    return error("unknown statement kind");
  }

  absl::Status exec_block(const BlockNode& node) {
    std::vector<int64_t> values;
    for (const IterVar& iv : node.iter_vars) {
      absl::StatusOr<int64_t> v = index(iv.binding);
      if (!v.ok()) return v.status();
      absl::StatusOr<int64_t> extent = index(iv.extent);
      if (!extent.ok()) return extent.status();
      if (*v < 0 || *v >= *extent) {
        return error("block `" + node.name + "`: `" + iv.var.name() + "` = " + std::to_string(*v) +
                     " is outside [0, " + std::to_string(*extent) + ")");
      }
      values.push_back(*v);
    }
    bool first_reduction_step = true;
    for (size_t i = 0; i < node.iter_vars.size(); ++i) {
      bind(node.iter_vars[i].var, static_cast<double>(values[i]));
      if (node.iter_vars[i].type == IterType::kReduction && values[i] != 0) {
        first_reduction_step = false;
      }
    }
    if (node.init.defined() && first_reduction_step) RELAX_INTERP_TRY(exec(node.init));
    RELAX_INTERP_TRY(exec(node.body));
    for (const IterVar& iv : node.iter_vars) unbind(iv.var);
    return absl::OkStatus();
  }

  SymVarMap<int64_t> ints_;
  SymVarMap<double> floats_;
  absl::flat_hash_map<const BufferNode*, Array*> buffers_;
};

#undef RELAX_INTERP_TRY

}  // namespace interpreter_detail

/// Runs the PrimFunc `func` with one argument per parameter, in order: the
/// arrays' shapes bind the buffers' bare-variable dims (the other dims must
/// evaluate to them), scalars bind the scalar parameters.
inline absl::Status run_prim_func(const Expr& func, const std::vector<PrimArg>& args) {
  const auto* node = func.as<PrimFuncNode>();
  if (node == nullptr) return absl::InvalidArgumentError("prim interpreter: not a PrimFunc");
  interpreter_detail::Interpreter interpreter;
  return interpreter.run(*node, args);
}

}  // namespace relax::interp
