// PrimFuncBuilder (prim_func_builder.h): loop-level kernels from C++ callbacks.
//
// The state is a stack of open bodies ("frames"): the function body at the
// bottom, then one per loop, block part or branch whose callback is running.
// A frame holds its items in order: finished statements, and the openers of
// `let` and `allocate`, which take the rest of the frame as their body when the
// frame is folded into one statement (fold()).
//
// Scopes are tracked alongside: the SymVars and buffers usable now, and those
// whose scope has ended (so that a use after the end reads "used outside its
// loop" rather than "not defined"). Every value a statement mentions is
// checked when the statement is added; problems become diagnostics with the
// caller's location, never aborts. What the statement constructors of
// prim_func.cc would abort on is checked first, and a statement that would
// not be valid is skipped (a bad start or extent, condition or binding is
// replaced by a placeholder instead, so that the body is still built and
// checked).
#include "relax/ir/prim_func_builder.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "relax/support/dtype_util.h"

namespace relax {
namespace detail {
namespace {

bool is_int(const SymExpr& e) { return e.defined() && e.dtype().is_int() && e.dtype().lanes == 1; }

/// An int64 constant as a constant of dtype `t` (the operators' convenience),
/// when `t` is another numeric dtype that holds it; otherwise `e` unchanged.
SymExpr adapt_constant(const SymExpr& e, DataType t) {
  if (!e.defined() || e.kind() != SymKind::kIntImm || e.dtype() != DataType::int64() ||
      t == DataType::int64())
    return e;
  const int64_t v = *e.as_const();
  if (is_scalar_float(t)) return SymExpr::float_imm(static_cast<double>(v), t);
  if (is_scalar_int(t) && fits_dtype(v, t)) return SymExpr::int_imm(v, t);
  return e;
}

/// A zero of dtype `t`, the placeholder for a value that could not be built.
SymExpr zero_of(DataType t) {
  if (is_scalar_float(t)) return SymExpr::float_imm(0, t);
  if (t == DataType::boolean()) return SymExpr::boolean(false);
  if (is_scalar_int(t)) return SymExpr::int_imm(0, t);
  return SymExpr(0);
}

std::string quoted(const SymExpr& e) { return "`" + e.to_string() + "`"; }

std::string count_text(size_t n, const char* one, const char* many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

Stmt seq_of(std::vector<Stmt> stmts) {
  if (stmts.size() == 1) return std::move(stmts[0]);
  return make_seq(std::move(stmts));
}

}  // namespace

class PrimFuncState {
 public:
  struct LetOpen {
    SymVar var;
    SymExpr value;
  };
  struct AllocOpen {
    Buffer buffer;
  };
  using Item = std::variant<Stmt, LetOpen, AllocOpen>;

  /// An open body.
  struct Frame {
    std::vector<Item> items;
    std::vector<SymVar> lets;     ///< defined by `let` in this body; leave at its end
    std::vector<Buffer> buffers;  ///< allocated in this body; leave at its end
  };

  /// A variable used (not defined) by a buffer parameter's dims.
  struct DimUse {
    SymVar var;
    std::string param;
    SymExpr dim;
    SourceLocation loc;
  };

  explicit PrimFuncState(std::string func_name) : name(std::move(func_name)) { frames.emplace_back(); }

  void error(const SourceLocation& loc, const std::string& message) {
    errors.push_back(loc.to_string() + ": " + message);
  }

  void append(Stmt s) { frames.back().items.emplace_back(std::move(s)); }

  // ---- Scopes --------------------------------------------------------------

  void enter(const SymVar& v) {
    vars_in_scope.insert(v.id());
    ended_vars.erase(v.id());
  }
  void leave(const SymVar& v, std::string why) {
    vars_in_scope.erase(v.id());
    ended_vars[v.id()] = std::move(why);
  }

  /// Reports every variable and buffer of `value` that is not usable here.
  void check_value(const SymExpr& value, const std::string& where, const SourceLocation& loc) {
    if (!value.defined()) return;
    absl::flat_hash_set<const SymExprNode*> seen;
    std::vector<const SymExpr*> stack = {&value};
    while (!stack.empty()) {
      const SymExpr& e = *stack.back();
      stack.pop_back();
      if (!seen.insert(e.get()).second) continue;
      if (e.is_var()) {
        check_var(SymVar::from_expr(e), where, loc);
        continue;
      }
      if (e.kind() == SymKind::kBufferLoad) check_buffer(e->buffer(), where, loc);
      for (size_t i = e.num_operands(); i-- > 0;) stack.push_back(&e.operand(i));
    }
  }

  void check_var(const SymVar& v, const std::string& where, const SourceLocation& loc) {
    if (vars_in_scope.contains(v.id())) return;
    if (auto it = ended_vars.find(v.id()); it != ended_vars.end()) {
      error(loc, where + ": " + it->second);
    } else {
      error(loc, where + ": symbolic variable `" + v.name() + "` is not defined here");
    }
  }

  /// False (after reporting) when `buffer` is not a parameter or a live allocation.
  bool check_buffer(const Buffer& buffer, const std::string& where, const SourceLocation& loc) {
    if (buffers_in_scope.contains(buffer.get())) return true;
    if (ended_buffers.contains(buffer.get())) {
      error(loc, where + ": buffer `" + buffer.name() + "` is used outside its allocation");
    } else {
      error(loc, where + ": buffer `" + buffer.name() + "` is neither a parameter of `" + name +
                     "` nor allocated around here");
    }
    return false;
  }

  /// Runs `fn` in a new body where `vars` are defined; returns the body as one
  /// statement. `why_ended` says what a later use of the vars is.
  Stmt run_body(const std::function<void()>& fn, const std::vector<SymVar>& vars,
                const std::string& why_ended) {
    for (const SymVar& v : vars) enter(v);
    frames.emplace_back();
    if (fn) fn();
    Frame frame = std::move(frames.back());
    frames.pop_back();
    close(frame);
    for (const SymVar& v : vars) {
      leave(v, absl::StrReplaceAll(why_ended, {{"%s", v.name()}}));
    }
    return fold(frame);
  }

  /// Ends the scopes that the lets and allocations of `frame` opened.
  void close(const Frame& frame) {
    for (const SymVar& v : frame.lets) {
      leave(v, "let variable `" + v.name() + "` is used after the end of the body it was bound in");
    }
    for (const Buffer& b : frame.buffers) {
      buffers_in_scope.erase(b.get());
      ended_buffers.insert(b.get());
    }
  }

  /// One statement for a body: a let or allocation takes the rest of the body.
  static Stmt fold(const Frame& frame) {
    std::vector<Stmt> tail;  // in reverse order
    for (auto it = frame.items.rbegin(); it != frame.items.rend(); ++it) {
      if (const Stmt* s = std::get_if<Stmt>(&*it)) {
        tail.push_back(*s);
        continue;
      }
      std::reverse(tail.begin(), tail.end());
      Stmt body = seq_of(std::move(tail));
      tail.clear();
      if (const LetOpen* let = std::get_if<LetOpen>(&*it)) {
        tail.push_back(make_let(let->var, let->value, std::move(body)));
      } else {
        tail.push_back(make_allocate(std::get<AllocOpen>(*it).buffer, std::move(body)));
      }
    }
    std::reverse(tail.begin(), tail.end());
    return seq_of(std::move(tail));
  }

  /// `e` if it is an integer value, else (after reporting) `fallback`.
  SymExpr int_or(const SymExpr& e, SymExpr fallback, const std::string& what,
                 const SourceLocation& loc) {
    if (is_int(e)) return e;
    error(loc, what + " must be an integer" +
                   (e.defined() ? ", found " + e.dtype().to_string() + " " + quoted(e)
                                : std::string(", found an undefined value")));
    return fallback;
  }

  std::string name;
  std::vector<PrimParam> params;
  Attrs attrs;
  std::vector<Frame> frames;  ///< frames[0]: the function body
  absl::flat_hash_set<uint64_t> vars_in_scope;
  absl::flat_hash_map<uint64_t, std::string> ended_vars;  ///< id -> what a use now is
  absl::flat_hash_set<const BufferNode*> buffers_in_scope;
  absl::flat_hash_set<const BufferNode*> ended_buffers;
  absl::flat_hash_set<uint64_t> param_defined;
  std::vector<DimUse> dim_uses;
  std::vector<std::string> errors;
};

}  // namespace detail

using detail::PrimFuncState;

PrimFuncBuilder::PrimFuncBuilder(std::string name)
    : state_(std::make_unique<PrimFuncState>(std::move(name))) {}
PrimFuncBuilder::~PrimFuncBuilder() = default;
PrimFuncBuilder::PrimFuncBuilder(PrimFuncBuilder&&) noexcept = default;
PrimFuncBuilder& PrimFuncBuilder::operator=(PrimFuncBuilder&&) noexcept = default;

// ---------------------------------------------------------------------------
// Parameters.

Buffer PrimFuncBuilder::buffer_param(std::string name, std::vector<SymExpr> shape, DataType dtype,
                                     Location loc) {
  PrimFuncState& s = *state_;
  const std::string where = "buffer parameter `" + name + "`";
  if (s.frames.size() != 1) {
    s.error(loc, where + ": parameters are declared at the top level, not inside a loop, block or "
                         "branch");
  }
  if (!is_scalar_dtype(dtype)) {
    s.error(loc, where + ": a buffer cannot hold " + dtype.to_string());
    dtype = DataType::float32();
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    shape[i] = s.int_or(shape[i], SymExpr(1), absl::StrCat(where, ": dim ", i), loc);
  }
  Buffer buffer(name, dtype, shape);
  for (const SymExpr& d : shape) {
    if (d.is_var()) {
      SymVar v = SymVar::from_expr(d);
      s.param_defined.insert(v.id());
      s.enter(v);
      continue;
    }
    for_each_var(d, [&](const SymVar& v) { s.dim_uses.push_back({v, name, d, loc}); });
  }
  s.buffers_in_scope.insert(buffer.get());
  s.params.push_back(PrimParam{buffer, std::nullopt});
  return buffer;
}

SymVar PrimFuncBuilder::scalar_param(std::string name, DataType dtype, Location loc) {
  PrimFuncState& s = *state_;
  const std::string where = "scalar parameter `" + name + "`";
  if (s.frames.size() != 1) {
    s.error(loc, where + ": parameters are declared at the top level, not inside a loop, block or "
                         "branch");
  }
  if (!is_scalar_numeric(dtype)) {
    s.error(loc, where + ": a scalar parameter is an integer or a float, not " + dtype.to_string());
    dtype = DataType::int64();
  }
  SymVar v(name.empty() ? "k" : std::move(name), dtype);
  s.enter(v);
  s.param_defined.insert(v.id());
  s.params.push_back(PrimParam{std::nullopt, v});
  return v;
}

// ---------------------------------------------------------------------------
// Structure.

void PrimFuncBuilder::for_(std::string name, SymExpr min, SymExpr extent, ForKind kind,
                           const LoopFn& body, Location loc) {
  PrimFuncState& s = *state_;
  if (name.empty()) name = "i";
  const std::string where = "loop `" + name + "`";
  extent = s.int_or(extent, SymExpr(1), where + ": the extent", loc);
  min = s.int_or(detail::adapt_constant(min, extent.dtype()), SymExpr::int_imm(0, extent.dtype()),
                 where + ": the start", loc);
  extent = detail::adapt_constant(extent, min.dtype());
  if (min.dtype() != extent.dtype()) {
    s.error(loc, where + ": the start " + detail::quoted(min) + " is " + min.dtype().to_string() +
                     " but the extent " + detail::quoted(extent) + " is " +
                     extent.dtype().to_string());
    min = SymExpr::int_imm(0, extent.dtype());
  }
  s.check_value(min, where + ": the start", loc);
  s.check_value(extent, where + ": the extent", loc);
  SymVar var(name, extent.dtype());
  Stmt stmt = s.run_body([&] { if (body) body(var); }, {var},
                         "loop variable `%s` is used outside its loop");
  s.append(make_for(var, min, extent, kind, std::move(stmt)));
}

void PrimFuncBuilder::for_(std::string name, SymExpr min, SymExpr extent, const LoopFn& body,
                           Location loc) {
  for_(std::move(name), std::move(min), std::move(extent), ForKind::kSerial, body, loc);
}

PrimFuncBuilder::IterSpec PrimFuncBuilder::spatial(SymExpr extent, SymExpr binding,
                                                   std::string name) {
  return IterSpec{std::move(extent), std::move(binding), IterType::kSpatial, std::move(name)};
}

PrimFuncBuilder::IterSpec PrimFuncBuilder::reduce(SymExpr extent, SymExpr binding,
                                                  std::string name) {
  return IterSpec{std::move(extent), std::move(binding), IterType::kReduction, std::move(name)};
}

void PrimFuncBuilder::block(std::string name, std::vector<IterSpec> iters, const BlockFn& body,
                            Location loc) {
  block(std::move(name), std::move(iters), BlockFn(), body, loc);
}

void PrimFuncBuilder::block(std::string name, std::vector<IterSpec> iters, const BlockFn& init,
                            const BlockFn& body, Location loc) {
  PrimFuncState& s = *state_;
  const std::string where = "block `" + name + "`";
  std::vector<IterVar> iter_vars;
  std::vector<SymVar> vars;
  bool has_reduction = false;
  for (size_t i = 0; i < iters.size(); ++i) {
    IterSpec& spec = iters[i];
    std::string var_name = spec.name;
    if (var_name.empty()) {
      var_name = spec.binding.defined() && spec.binding.is_var()
                     ? "v" + SymVar::from_expr(spec.binding).name()
                     : absl::StrCat("v", i);
    }
    const bool reduction = spec.type == IterType::kReduction;
    has_reduction = has_reduction || reduction;
    const std::string role =
        absl::StrCat(where, ", ", reduction ? "reduction" : "spatial", " variable `", var_name, "`");
    SymExpr binding = s.int_or(spec.binding, SymExpr(0), role + ": the binding", loc);
    SymExpr extent = s.int_or(detail::adapt_constant(spec.extent, binding.dtype()), SymExpr(1),
                              role + ": the extent", loc);
    binding = detail::adapt_constant(binding, extent.dtype());
    if (binding.dtype() != extent.dtype()) {
      s.error(loc, role + ": the binding " + detail::quoted(binding) + " is " +
                       binding.dtype().to_string() + " but the extent " + detail::quoted(extent) +
                       " is " + extent.dtype().to_string());
      binding = SymExpr::int_imm(0, extent.dtype());
    }
    s.check_value(extent, role + ": the extent", loc);
    s.check_value(binding, role + ": the binding", loc);
    SymVar var(var_name, binding.dtype());
    iter_vars.push_back(IterVar{var, extent, spec.type, binding});
    vars.push_back(var);
  }
  if (init && !has_reduction) {
    s.error(loc, where + " has an init part but no reduction variable");
  }
  const std::string why_ended = "iteration variable `%s` of " + where + " is used outside the block";
  Stmt init_stmt;
  if (init) init_stmt = s.run_body([&] { init(vars); }, vars, why_ended);
  Stmt body_stmt = s.run_body([&] { if (body) body(vars); }, vars, why_ended);
  s.append(make_block(std::move(name), std::move(iter_vars), std::move(init_stmt),
                      std::move(body_stmt)));
}

void PrimFuncBuilder::if_then_else(SymExpr cond, const BodyFn& then_body, Location loc) {
  if_then_else(std::move(cond), then_body, BodyFn(), loc);
}

void PrimFuncBuilder::if_then_else(SymExpr cond, const BodyFn& then_body, const BodyFn& else_body,
                                   Location loc) {
  PrimFuncState& s = *state_;
  const std::string where = "if";
  if (!cond.defined() || !cond.dtype().is_bool()) {
    s.error(loc, where + ": the condition must be boolean" +
                     (cond.defined() ? ", found " + cond.dtype().to_string() + " " + detail::quoted(cond)
                                     : std::string(", found an undefined value")));
    cond = SymExpr::boolean(true);
  }
  s.check_value(cond, where + " " + detail::quoted(cond), loc);
  Stmt then_stmt = s.run_body(then_body, {}, "");
  Stmt else_stmt;
  if (else_body) else_stmt = s.run_body(else_body, {}, "");
  s.append(make_if_then_else(std::move(cond), std::move(then_stmt), std::move(else_stmt)));
}

SymVar PrimFuncBuilder::let(std::string name, SymExpr value, Location loc) {
  PrimFuncState& s = *state_;
  if (name.empty()) name = "x";
  const std::string where = "let `" + name + "`";
  if (!value.defined()) {
    s.error(loc, where + ": the value is undefined");
    value = SymExpr(0);
  }
  s.check_value(value, where, loc);
  SymVar var(name, value.dtype());
  s.frames.back().items.emplace_back(PrimFuncState::LetOpen{var, value});
  s.frames.back().lets.push_back(var);
  s.enter(var);
  return var;
}

Buffer PrimFuncBuilder::allocate(std::string name, std::vector<SymExpr> shape, DataType dtype,
                                 BufferScope scope, Location loc) {
  PrimFuncState& s = *state_;
  const std::string where = "allocate `" + name + "`";
  if (!is_scalar_dtype(dtype)) {
    s.error(loc, where + ": a buffer cannot hold " + dtype.to_string());
    dtype = DataType::float32();
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    shape[i] = s.int_or(shape[i], SymExpr(1), absl::StrCat(where, ": dim ", i), loc);
    s.check_value(shape[i], absl::StrCat(where, ": dim ", i), loc);
  }
  Buffer buffer(std::move(name), dtype, std::move(shape), {}, scope);
  s.frames.back().items.emplace_back(PrimFuncState::AllocOpen{buffer});
  s.frames.back().buffers.push_back(buffer);
  s.buffers_in_scope.insert(buffer.get());
  return buffer;
}

// ---------------------------------------------------------------------------
// Statements and values.

void PrimFuncBuilder::store(const Buffer& buffer, std::vector<SymExpr> indices, SymExpr value,
                            Location loc) {
  PrimFuncState& s = *state_;
  if (!buffer.defined()) {
    s.error(loc, "store to an undefined buffer (use one from buffer_param or allocate)");
    return;
  }
  const std::string where = "store to `" + buffer.name() + "`";
  bool ok = s.check_buffer(buffer, where, loc);
  if (indices.size() != buffer.ndim()) {
    s.error(loc, where + ": " + detail::count_text(indices.size(), "index", "indices") +
                     ", but the buffer has rank " + std::to_string(buffer.ndim()));
    ok = false;
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!detail::is_int(indices[i])) {
      s.int_or(indices[i], SymExpr(0), absl::StrCat(where, ": index ", i), loc);
      ok = false;
    }
  }
  if (!value.defined()) {
    s.error(loc, where + ": the value is undefined");
    ok = false;
  } else {
    value = detail::adapt_constant(value, buffer.dtype());
    if (value.dtype() != buffer.dtype()) {
      s.error(loc, where + ": the value " + detail::quoted(value) + " is " +
                       value.dtype().to_string() + ", but the buffer holds " +
                       buffer.dtype().to_string());
      ok = false;
    }
  }
  for (const SymExpr& index : indices) s.check_value(index, where, loc);
  s.check_value(value, where, loc);
  if (ok) s.append(make_store(buffer, std::move(indices), std::move(value)));
}

SymExpr PrimFuncBuilder::load(const Buffer& buffer, std::vector<SymExpr> indices, Location loc) {
  PrimFuncState& s = *state_;
  if (!buffer.defined()) {
    s.error(loc, "load from an undefined buffer (use one from buffer_param or allocate)");
    return SymExpr(0);
  }
  const SymExpr zero = detail::zero_of(buffer.dtype());
  const std::string where = "load from `" + buffer.name() + "`";
  if (indices.size() != buffer.ndim()) {
    s.error(loc, where + ": " + detail::count_text(indices.size(), "index", "indices") +
                     ", but the buffer has rank " + std::to_string(buffer.ndim()));
    return zero;
  }
  bool ok = is_scalar_dtype(buffer.dtype());
  if (!ok) s.error(loc, where + ": the buffer holds " + buffer.dtype().to_string());
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!detail::is_int(indices[i])) {
      s.int_or(indices[i], SymExpr(0), absl::StrCat(where, ": index ", i), loc);
      ok = false;
    }
  }
  return ok ? buffer_load(buffer, std::move(indices)) : zero;
}

void PrimFuncBuilder::evaluate(SymExpr value, Location loc) {
  PrimFuncState& s = *state_;
  if (!value.defined()) {
    s.error(loc, "evaluate: the value is undefined");
    return;
  }
  s.check_value(value, "evaluate " + detail::quoted(value), loc);
  s.append(make_evaluate(std::move(value)));
}

void PrimFuncBuilder::set_attr(std::string name, AttrValue value) {
  state_->attrs[std::move(name)] = std::move(value);
}

std::vector<std::string> PrimFuncBuilder::errors() const { return state_->errors; }

absl::StatusOr<Expr> PrimFuncBuilder::build(Location loc) const {
  const PrimFuncState& s = *state_;
  std::vector<std::string> errors = s.errors;
  if (s.frames.size() != 1) {
    errors.push_back(loc.to_string() + ": build() of `" + s.name +
                     "` called inside a loop, block or branch body");
  }
  for (const PrimFuncState::DimUse& use : s.dim_uses) {
    if (s.param_defined.contains(use.var.id())) continue;
    errors.push_back(use.loc.to_string() + ": buffer parameter `" + use.param +
                     "`: symbolic variable `" + use.var.name() + "` in dim " +
                     detail::quoted(use.dim) +
                     " is defined by no parameter (a parameter defines a variable that is a whole "
                     "dim, or a scalar parameter)");
  }
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  Attrs attrs = s.attrs;
  attrs.emplace("global_symbol", s.name);
  return make_prim_func(s.params, PrimFuncState::fold(s.frames.front()), std::move(attrs));
}

}  // namespace relax
