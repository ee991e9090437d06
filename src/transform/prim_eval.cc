// run_prim_func (relax/transform/prim_eval.h): a tree-walking interpreter of
// PrimFuncs over runtime::Tensors.
//
// Stages: the arguments are checked against the parameters and bind the
// scalar parameters and the bare-variable dims of the buffers (then every dim
// and declared stride must evaluate to the tensor's); the body is executed
// statement by statement, values through ValueEvaluator
// (prim_eval_value.cc), whose loads and this file's stores go to the tensors
// by their strides.
//
// Invariants it relies on: a well-formed kernel (every variable defined before
// its use, loads and stores with one index per dim); anything else it meets is
// an error, never a crash. Undefined contents are tracked per element: an
// output (BufferAccess::kOutput) and allocated storage carry a mask of the
// elements written, so a read of one not yet written is an error rather than
// a value nobody computed.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "prim_eval_value.h"
#include "relax/ir/empty_reduction.h"
#include "relax/ir/micro_kernel.h"
#include "relax/ir/prim_func.h"
#include "relax/transform/prim_eval.h"

namespace relax::transform {
namespace {

using prim_eval_detail::Value;

std::string dims_text(const std::vector<int64_t>& dims) {
  return absl::StrCat("(", absl::StrJoin(dims, ", "), dims.size() == 1 ? ",)" : ")");
}

std::string sym_dims_text(const std::vector<SymExpr>& dims) {
  std::vector<std::string> parts;
  for (const SymExpr& d : dims) parts.push_back(d.to_string());
  return absl::StrCat("(", absl::StrJoin(parts, ", "), dims.size() == 1 ? ",)" : ")");
}

/// A statement in one line, for errors.
std::string describe(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kFor: {
      const auto& n = *s.as<ForNode>();
      if (n.min.is_const(0)) return absl::StrCat("for ", n.loop_var.name(), " in range(", n.extent.to_string(), ")");
      return absl::StrCat("for ", n.loop_var.name(), " in range(", n.min.to_string(),
                          ", extent=", n.extent.to_string(), ")");
    }
    case StmtKind::kBufferStore: {
      const auto& n = *s.as<BufferStoreNode>();
      std::vector<std::string> indices;
      for (const SymExpr& i : n.indices) indices.push_back(i.to_string());
      return absl::StrCat(n.buffer.name(), "[", absl::StrJoin(indices, ", "), "] = ",
                          n.value.to_string());
    }
    case StmtKind::kIfThenElse:
      return absl::StrCat("if ", s.as<IfThenElseNode>()->cond.to_string());
    case StmtKind::kLetStmt: {
      const auto& n = *s.as<LetStmtNode>();
      return absl::StrCat("let ", n.var.name(), " = ", n.value.to_string());
    }
    case StmtKind::kAllocate:
      return absl::StrCat("alloc ", s.as<AllocateNode>()->buffer.name());
    case StmtKind::kEvaluate:
      return absl::StrCat("evaluate ", s.as<EvaluateNode>()->value.to_string());
    case StmtKind::kBlock:
      return absl::StrCat("block ", s.as<BlockNode>()->name);
    case StmtKind::kExternCall:
      return absl::StrCat("call_extern ", s.as<ExternCallNode>()->name);
    case StmtKind::kSeq:
      return "seq";
  }
  return "a statement";
}

/// A buffer as the interpreter sees it: where its elements are and which of
/// them hold a defined value.
struct BufferState {
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  ///< in elements
  char* data = nullptr;
  bool read_only = false;
  /// One flag per element (row-major) when contents start undefined.
  std::vector<uint8_t> written;
  runtime::Tensor storage;  ///< keeps allocated storage alive
};

std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

class Interpreter : public prim_eval_detail::ValueEvaluator {
 public:
  Interpreter(std::string name, int64_t max_steps) : name_(std::move(name)), max_steps_(max_steps) {}

  absl::Status run(const PrimFuncNode& func, const std::vector<PrimArg>& args,
                   const std::vector<BufferAccess>& access) {
    if (args.size() != func.params.size()) {
      return kernel_error(absl::StrCat("expected ", func.params.size(), " arguments, got ", args.size()));
    }
    // Scalars and bare-variable dims first: any parameter may define a
    // variable that another one's dims use.
    for (size_t i = 0; i < args.size(); ++i) {
      const PrimParam& p = func.params[i];
      if (absl::Status s = p.scalar ? bind_scalar(i, *p.scalar, args[i])
                                    : bind_buffer(i, *p.buffer, args[i],
                                                  i < access.size() ? access[i] : BufferAccess::kReadWrite);
          !s.ok()) {
        return s;
      }
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (const PrimParam& p = func.params[i]; p.buffer) {
        if (absl::Status s = check_dims(i, *p.buffer); !s.ok()) return s;
      }
    }
    if (absl::Status s = exec(func.body); !s.ok()) return s;
    // An output element the kernel never wrote has no defined value.
    for (const PrimParam& p : func.params) {
      if (!p.buffer) continue;
      const BufferState& b = buffers_.at(p.buffer->get());
      for (size_t flat = 0; flat < b.written.size(); ++flat) {
        if (b.written[flat] != 0) continue;
        std::vector<int64_t> index(b.shape.size());
        int64_t rest = static_cast<int64_t>(flat);
        for (size_t d = index.size(); d-- > 0;) {
          index[d] = rest % b.shape[d];
          rest /= b.shape[d];
        }
        return kernel_error(absl::StrCat("the output `", p.buffer->name(), "[",
                                         absl::StrJoin(index, ", "), "]` is never written"));
      }
    }
    return absl::OkStatus();
  }

 protected:
  Value load(const SymExpr& e, const std::vector<int64_t>& indices) override {
    const BufferState* b = find(e->buffer());
    if (b == nullptr) return fail(absl::StrCat("the buffer `", e->buffer().name(), "` is not defined here"));
    int64_t flat = 0;
    const int64_t offset = locate(*b, e->buffer().name(), indices, flat);
    if (failed()) return Value{};
    if (!b->written.empty() && b->written[static_cast<size_t>(flat)] == 0) {
      return fail(absl::StrCat("`", e->buffer().name(), "[", absl::StrJoin(indices, ", "),
                               "]` is read before it is written"));
    }
    return prim_eval_detail::read_element(b->data + offset * static_cast<int64_t>(prim_eval_detail::element_bytes(b->dtype)), b->dtype);
  }

 private:
  absl::Status kernel_error(const std::string& message) const {
    return absl::InvalidArgumentError(absl::StrCat("@", name_, ": ", message));
  }

  const std::string& evaluator_error() const { return prim_eval_detail::ValueEvaluator::error(); }

  /// The evaluator's error, placed at statement `s`.
  absl::Status error_at(const Stmt& s) {
    std::string where = block_.empty() ? "" : absl::StrCat("block `", block_, "`: ");
    absl::Status status = kernel_error(absl::StrCat(where, "in `", describe(s), "`: ", evaluator_error()));
    clear_error();
    return status;
  }

  absl::Status bind_scalar(size_t i, const SymVar& var, const PrimArg& arg) {
    const auto* scalar = std::get_if<PrimScalar>(&arg);
    const std::string which = absl::StrCat("argument ", i, " (`", var.name(), "`)");
    if (scalar == nullptr) {
      return kernel_error(absl::StrCat(which, ": expected a ", var.dtype().to_string(), " scalar, got a tensor"));
    }
    Value v{scalar->int_value(), scalar->is_float() ? scalar->float_value() : 0.0};
    if (scalar->dtype() != var.dtype()) {
      const bool ints = scalar->dtype().is_int() && var.dtype().is_int();
      if (!ints || !prim_eval_detail::convert_int(v, scalar->dtype(), var.dtype(), v)) {
        return kernel_error(absl::StrCat(which, ": expected a ", var.dtype().to_string(), " scalar, got ",
                                  scalar->to_string()));
      }
    }
    bind(var, v);
    return absl::OkStatus();
  }

  absl::Status bind_buffer(size_t i, const Buffer& buffer, const PrimArg& arg, BufferAccess access) {
    const auto* tensor = std::get_if<runtime::Tensor>(&arg);
    const std::string which = absl::StrCat("argument ", i, " (`", buffer.name(), "`)");
    if (tensor == nullptr) {
      return kernel_error(absl::StrCat(which, ": expected a tensor, got a scalar"));
    }
    if (!tensor->defined()) return kernel_error(absl::StrCat(which, ": the tensor is undefined"));
    if (tensor->device().type != Device::cpu().type) {
      return kernel_error(absl::StrCat(which, ": the tensor is not on the host"));
    }
    if (!prim_eval_detail::is_supported_dtype(buffer.dtype())) {
      return kernel_error(absl::StrCat(which, ": dtype ", buffer.dtype().to_string(), " is not evaluated"));
    }
    if (tensor->dtype() != buffer.dtype()) {
      return kernel_error(absl::StrCat(which, ": expected dtype ", buffer.dtype().to_string(), ", got ",
                                tensor->dtype().to_string()));
    }
    if (static_cast<size_t>(tensor->ndim()) != buffer.ndim()) {
      return kernel_error(absl::StrCat(which, ": expected rank ", buffer.ndim(), ", got shape ",
                                dims_text(tensor->shape())));
    }
    for (size_t d = 0; d < buffer.ndim(); ++d) {
      const SymExpr& dim = buffer.shape()[d];
      if (dim.is_var() && !is_bound(SymVar::from_expr(dim))) {
        bind(SymVar::from_expr(dim), Value{tensor->shape()[d], 0});
      }
    }
    BufferState state;
    state.dtype = tensor->dtype();
    state.shape = tensor->shape();
    state.strides = tensor->strides().empty() ? compact_strides(state.shape) : tensor->strides();
    state.data = static_cast<char*>(tensor->data());
    state.read_only = access == BufferAccess::kInput;
    if (access == BufferAccess::kOutput) state.written.assign(static_cast<size_t>(tensor->numel()), 0);
    buffers_[buffer.get()] = std::move(state);
    return absl::OkStatus();
  }

  absl::Status check_dims(size_t i, const Buffer& buffer) {
    const BufferState& state = buffers_.at(buffer.get());
    const std::string which = absl::StrCat("argument ", i, " (`", buffer.name(), "`)");
    for (size_t d = 0; d < buffer.ndim(); ++d) {
      const int64_t dim = eval_index(buffer.shape()[d]);
      if (failed()) return dim_error(which);
      if (dim != state.shape[d]) {
        return kernel_error(absl::StrCat(which, ": expected shape ", sym_dims_text(buffer.shape()),
                                  ", got ", dims_text(state.shape), " (dim ", d, " is ",
                                  state.shape[d], ", `", buffer.shape()[d].to_string(), "` is ",
                                  dim, ")"));
      }
    }
    const std::vector<SymExpr>& strides = buffer->strides;
    for (size_t d = 0; d < strides.size() && d < buffer.ndim(); ++d) {
      const int64_t stride = eval_index(strides[d]);
      if (failed()) return dim_error(which);
      if (stride != state.strides[d] && state.shape[d] > 1) {
        return kernel_error(absl::StrCat(which, ": expected strides ", sym_dims_text(strides),
                                  ", got ", dims_text(state.strides)));
      }
    }
    return absl::OkStatus();
  }

  absl::Status dim_error(const std::string& which) {
    absl::Status status = kernel_error(absl::StrCat(which, ": ", evaluator_error()));
    clear_error();
    return status;
  }

  BufferState* find(const Buffer& buffer) {
    auto it = buffers_.find(buffer.get());
    return it == buffers_.end() ? nullptr : &it->second;
  }

  /// The element offset of `indices` in `b` (flat: the row-major position),
  /// or an error (then failed()).
  int64_t locate(const BufferState& b, const std::string& name, const std::vector<int64_t>& indices,
                 int64_t& flat) {
    if (indices.size() != b.shape.size()) {
      fail(absl::StrCat("`", name, "` has rank ", b.shape.size(), ", indexed with ", indices.size(),
                        " indices"));
      return 0;
    }
    int64_t offset = 0;
    flat = 0;
    for (size_t d = 0; d < indices.size(); ++d) {
      if (indices[d] < 0 || indices[d] >= b.shape[d]) {
        fail(absl::StrCat("index [", absl::StrJoin(indices, ", "), "] is out of bounds of `", name,
                          "` (shape ", dims_text(b.shape), ")"));
        return 0;
      }
      offset += indices[d] * b.strides[d];
      flat = flat * b.shape[d] + indices[d];
    }
    return offset;
  }

  absl::Status count_step(const Stmt& s, int64_t n = 1) {
    steps_ += n;
    if (max_steps_ >= 0 && steps_ > max_steps_) {
      return absl::ResourceExhaustedError(absl::StrCat("@", name_, ": more than ", max_steps_,
                                                       " steps (at `", describe(s), "`)"));
    }
    return absl::OkStatus();
  }

  absl::Status exec(const Stmt& s) {
    if (!s.defined()) return absl::OkStatus();
    if (absl::Status st = count_step(s); !st.ok()) return st;
    switch (s.kind()) {
      case StmtKind::kFor:
        return exec_for(s, *s.as<ForNode>());
      case StmtKind::kSeq:
        for (const Stmt& child : s.as<SeqStmtNode>()->stmts) {
          if (absl::Status st = exec(child); !st.ok()) return st;
        }
        return absl::OkStatus();
      case StmtKind::kBufferStore:
        return exec_store(s, *s.as<BufferStoreNode>());
      case StmtKind::kIfThenElse: {
        const auto& node = *s.as<IfThenElseNode>();
        const Value cond = eval(node.cond);
        if (failed()) return error_at(s);
        return exec(cond.i != 0 ? node.then_case : node.else_case);
      }
      case StmtKind::kLetStmt: {
        const auto& node = *s.as<LetStmtNode>();
        const Value v = eval(node.value);
        if (failed()) return error_at(s);
        bind(node.var, v);
        absl::Status st = exec(node.body);
        unbind(node.var);
        return st;
      }
      case StmtKind::kAllocate:
        return exec_allocate(s, *s.as<AllocateNode>());
      case StmtKind::kEvaluate:
        eval(s.as<EvaluateNode>()->value);
        if (failed()) return error_at(s);
        return absl::OkStatus();
      case StmtKind::kBlock:
        return exec_block(s, *s.as<BlockNode>());
      case StmtKind::kExternCall:
        return exec_extern_call(s, *s.as<ExternCallNode>());
    }
    return kernel_error("a statement of unknown kind");
  }

  absl::Status exec_for(const Stmt& s, const ForNode& node) {
    const int64_t min = eval_index(node.min);
    const int64_t extent = eval_index(node.extent);
    if (failed()) return error_at(s);
    if (extent <= 0) {
      // No iteration: the reductions it carries still start from their inits.
      std::optional<Stmt> inits = inits_when_empty(node);
      if (!inits) return absl::OkStatus();
      bind(node.loop_var, Value{min, 0});
      absl::Status st = exec(*inits);
      unbind(node.loop_var);
      return st;
    }
    for (int64_t i = 0; i < extent; ++i) {
      Value v{0, 0};
      if (__builtin_add_overflow(min, i, &v.i)) {
        fail("the loop variable overflows int64");
        return error_at(s);
      }
      bind(node.loop_var, v);
      if (absl::Status st = exec(node.body); !st.ok()) return st;
    }
    unbind(node.loop_var);
    return absl::OkStatus();
  }

  absl::Status exec_store(const Stmt& s, const BufferStoreNode& node) {
    const int lanes = node.value.dtype().lanes;
    if (lanes != 1) return exec_vector_store(s, node, lanes);
    const Value v = eval(node.value);
    std::vector<int64_t> indices;
    for (const SymExpr& e : node.indices) indices.push_back(eval_index(e));
    if (failed()) return error_at(s);
    return write(s, node, indices, v);
  }

  /// A store of a vector value: every lane's value and indices are evaluated
  /// first, lane by lane, then written in lane order, as the vector code loads
  /// all lanes before it stores any (A[ramp(1, 1, 4)] = A[ramp(0, 1, 4)] shifts).
  absl::Status exec_vector_store(const Stmt& s, const BufferStoreNode& node, int lanes) {
    std::vector<Value> values(static_cast<size_t>(lanes));
    std::vector<std::vector<int64_t>> indices(static_cast<size_t>(lanes));
    for (int lane = 0; lane < lanes; ++lane) {
      set_lane(lane);
      values[static_cast<size_t>(lane)] = eval(node.value);
      for (const SymExpr& e : node.indices) indices[static_cast<size_t>(lane)].push_back(eval_index(e));
    }
    set_lane(-1);
    if (failed()) return error_at(s);
    // Stepping through the lanes is work: each lane counts as one step.
    if (absl::Status st = count_step(s, lanes); !st.ok()) return st;
    for (int lane = 0; lane < lanes; ++lane) {
      const DataType t = node.value.dtype();
      if (absl::Status st = write(s, node, indices[static_cast<size_t>(lane)], values[static_cast<size_t>(lane)],
                                  DataType{t.code, t.bits, 1});
          !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }

  /// Writes the element `v` (of `value_dtype`, the value's dtype by default) at `indices`.
  absl::Status write(const Stmt& s, const BufferStoreNode& node, const std::vector<int64_t>& indices, Value v,
                     std::optional<DataType> value_dtype = std::nullopt) {
    BufferState* b = find(node.buffer);
    if (b == nullptr) {
      fail(absl::StrCat("the buffer `", node.buffer.name(), "` is not defined here"));
      return error_at(s);
    }
    if (b->read_only) {
      fail(absl::StrCat("`", node.buffer.name(), "` is an input and is not written"));
      return error_at(s);
    }
    if (value_dtype.value_or(node.value.dtype()) != b->dtype) {
      fail(absl::StrCat("a ", node.value.dtype().to_string(), " value stored into `",
                        node.buffer.name(), "` of dtype ", b->dtype.to_string()));
      return error_at(s);
    }
    int64_t flat = 0;
    const int64_t offset = locate(*b, node.buffer.name(), indices, flat);
    if (failed()) return error_at(s);
    prim_eval_detail::write_element(b->data + offset * static_cast<int64_t>(prim_eval_detail::element_bytes(b->dtype)), b->dtype, v);
    if (!b->written.empty()) b->written[static_cast<size_t>(flat)] = 1;
    return absl::OkStatus();
  }

  absl::Status exec_allocate(const Stmt& s, const AllocateNode& node) {
    const Buffer& buffer = node.buffer;
    std::vector<int64_t> shape;
    for (const SymExpr& d : buffer.shape()) shape.push_back(eval_index(d));
    if (failed()) return error_at(s);
    if (!prim_eval_detail::is_supported_dtype(buffer.dtype())) {
      fail(absl::StrCat("dtype ", buffer.dtype().to_string(), " is not evaluated"));
      return error_at(s);
    }
    absl::StatusOr<runtime::Tensor> storage = runtime::Tensor::empty(shape, buffer.dtype());
    if (!storage.ok()) {
      fail(std::string(storage.status().message()));
      return error_at(s);
    }
    // Filling the storage is work too: a huge allocation counts against the budget.
    if (absl::Status st = count_step(s, storage->numel()); !st.ok()) return st;
    BufferState state;
    state.dtype = buffer.dtype();
    state.shape = shape;
    state.strides = compact_strides(shape);
    state.data = static_cast<char*>(storage->data());
    state.written.assign(static_cast<size_t>(storage->numel()), 0);
    state.storage = *std::move(storage);
    auto [it, inserted] = buffers_.emplace(buffer.get(), std::move(state));
    if (!inserted) {
      fail(absl::StrCat("the buffer `", buffer.name(), "` is allocated twice"));
      return error_at(s);
    }
    absl::Status st = exec(node.body);
    buffers_.erase(buffer.get());
    return st;
  }

  // call_extern: the registered kernel's host function, given a pointer to
  // each region's first element and each scalar's value. A region must lie in
  // its buffer: its first element, and its declared extent when the kernel
  // declares one (compact storage only, as the kernel reads it contiguously);
  // without one, it reaches to the end of the buffer. A written region may not
  // be an input; its elements count as written.
  absl::Status exec_extern_call(const Stmt& s, const ExternCallNode& node) {
    if (absl::Status st = check_extern_call(node); !st.ok()) return kernel_error(std::string(st.message()));
    const MicroKernel& kernel = *find_micro_kernel(node.name);
    std::vector<MicroKernelArg> args(node.args.size());
    for (size_t a = 0; a < node.args.size(); ++a) {
      const ExternArg& arg = node.args[a];
      if (!arg.is_region()) {
        const Value v = eval(arg.value);
        if (failed()) return error_at(s);
        args[a].i = v.i;
        args[a].f = v.f;
      }
    }
    // The extents and the step count before any region is touched.
    int64_t work = 0;
    for (size_t a = 0; a < node.args.size(); ++a) {
      const ExternArg& arg = node.args[a];
      if (!arg.is_region()) continue;
      const std::string what = absl::StrCat("argument ", a, " (`", kernel.params[a].name, "`): ");
      std::vector<int64_t> indices;
      for (const SymExpr& e : arg.indices) indices.push_back(eval_index(e));
      if (failed()) return error_at(s);
      BufferState* b = find(arg.buffer);
      if (b == nullptr) {
        fail(absl::StrCat(what, "the buffer `", arg.buffer.name(), "` is not defined here"));
        return error_at(s);
      }
      int64_t flat = 0;
      const int64_t offset = locate(*b, arg.buffer.name(), indices, flat);
      if (failed()) {
        const std::string message = evaluator_error();
        clear_error();
        fail(what + message);
        return error_at(s);
      }
      int64_t numel = 1;
      for (int64_t d : b->shape) numel *= d;
      int64_t count = numel - flat;
      if (const SymExpr extent = extern_region_extent(kernel, node, a); extent.defined()) {
        count = eval_index(extent);
        if (failed()) return error_at(s);
        if (count < 0 || count > numel - flat) {
          fail(absl::StrCat(what, "the region of ", count, " elements from `", arg.buffer.name(), "[",
                            absl::StrJoin(indices, ", "), "]` ends past the buffer's ", numel, " elements"));
          return error_at(s);
        }
        if (b->strides != compact_strides(b->shape)) {
          fail(absl::StrCat(what, "the region's buffer `", arg.buffer.name(), "` is not compact"));
          return error_at(s);
        }
      }
      if (kernel.params[a].writes) {
        if (b->read_only) {
          fail(absl::StrCat(what, "`", arg.buffer.name(), "` is an input and is not written"));
          return error_at(s);
        }
        if (!b->written.empty()) {
          std::fill(b->written.begin() + flat, b->written.begin() + flat + count, uint8_t{1});
        }
      }
      work += count;
      args[a].pointer = b->data + offset * static_cast<int64_t>(prim_eval_detail::element_bytes(b->dtype));
    }
    if (absl::Status st = count_step(s, work); !st.ok()) return st;
    kernel.host(args.data());
    return absl::OkStatus();
  }

  absl::Status exec_block(const Stmt& s, const BlockNode& node) {
    std::vector<int64_t> values;
    bool first_reduction_step = true;
    for (const IterVar& iv : node.iter_vars) {
      const int64_t v = eval_index(iv.binding);
      const int64_t extent = eval_index(iv.extent);
      if (failed()) return error_at(s);
      if (v < 0 || v >= extent) {
        fail(absl::StrCat("`", iv.var.name(), "` = ", v, " is outside [0, ", extent, ")"));
        return error_at(s);
      }
      values.push_back(v);
      if (iv.type == IterType::kReduction && v != 0) first_reduction_step = false;
    }
    for (size_t i = 0; i < node.iter_vars.size(); ++i) bind(node.iter_vars[i].var, Value{values[i], 0});
    const std::string outer = block_;
    block_ = node.name;
    absl::Status st = absl::OkStatus();
    if (node.init.defined() && first_reduction_step) st = exec(node.init);
    if (st.ok()) st = exec(node.body);
    block_ = outer;
    for (const IterVar& iv : node.iter_vars) unbind(iv.var);
    return st;
  }

  std::string name_;
  int64_t max_steps_;
  int64_t steps_ = 0;
  std::string block_;  ///< the innermost block being executed, for errors
  absl::flat_hash_map<const BufferNode*, BufferState> buffers_;
};

}  // namespace

absl::Status run_prim_func(const Expr& func, const std::vector<PrimArg>& args,
                           const PrimEvalOptions& options) {
  const auto* node = func.as<PrimFuncNode>();
  if (node == nullptr) return absl::InvalidArgumentError("run_prim_func: not a PrimFunc");
  std::string name = options.name;
  if (name.empty()) {
    auto it = node->attrs.find("global_symbol");
    const std::string* symbol = it == node->attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
    name = symbol != nullptr ? *symbol : "prim_func";
  }
  Interpreter interpreter(std::move(name), options.max_steps);
  return interpreter.run(*node, args, options.access);
}

}  // namespace relax::transform
