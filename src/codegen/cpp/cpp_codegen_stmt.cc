// Statements of the loop-level IR as C++ statements.
//
//   For          `for (T i = min; i < end; ++i)`, preceded by a pragma, or,
//                parallel (unless Target::threads == 1) when its work reaches
//                Target::parallel_min_work (the loop's iterations times the
//                innermost statements one iteration runs), outlined: `auto
//                i_body = [&](int64_t i_lo, int64_t i_hi) -> int32_t { for (T i
//                = i_lo; i < i_hi; ++i) {...} return 0; }; if
//                (relax_parallel_for(min, end, k, i_body) != 0) return 1;` (a
//                body with failure points returns relax_failed instead of 0, so
//                the pool skips the chunks not yet started), which the runtime's
//                one thread pool per process runs in static chunks on a team of
//                at most k = Target::threads (0: the budget's) threads, the
//                caller included (relax/runtime/thread_pool.h), so concurrent
//                calls share the cores instead of each forking a full team.
//                Computed before the loop from the extents, the work picks at
//                run time between the outlined loop and a serial copy of it
//                (`if (i_work >= T) { ...outlined... } else { for ... }`: a
//                small call runs the serial copy and pays nothing for the
//                pool); with constant extents the choice is made now; when an
//                inner extent is not known before the loop (it depends on a
//                variable bound inside) the loop is always outlined. A
//                parallel loop inside a parallel loop (or inside the serial
//                copy) is a plain loop. Vectorized ->
//                `#pragma omp simd`, unrolled -> `#pragma GCC unroll N` (the
//                extent when constant and at most 64, else 8). A start or end
//                that is not a constant or a variable is computed once before
//                the loop (OpenMP needs a loop-invariant bound anyway).
//   SeqStmt      the statements in order.
//   BufferStore  `A[flat] = value;` (flat offset from the buffer's strides).
//   IfThenElse   `if (c) { ... } else { ... }`.
//   LetStmt      `const T x = value;` followed by the body (names are unique
//                in a kernel, so the body needs no block of its own).
//   Allocate     a local buffer of constant size up to kStackBytes: an aligned
//                array on the stack; anything else: a relax_heap_block (64-byte
//                aligned, freed by its destructor when the block ends, so every
//                path out frees it). A failed allocation returns an error, or,
//                inside a parallel loop's body or a simd loop, where `return`
//                would not leave the kernel, sets relax_failed (the first
//                failure writes the message), skips the body, and the kernel
//                returns the error after the loop.
//   Evaluate     `(void)(value);`
//   ExternCall   `name(args...);`, a region as `A + flat` (a pointer to its
//                first element), after check_extern_call (micro_kernel.h); the
//                kernel's source is copied into the unit by generate_cpp.
//   Block        a C++ block binding each iteration variable to its binding,
//                then `if (every reduction variable == 0) { init }`, then the body.
//
// Empty reductions. A block's init runs inside its reduction loops, so a
// reduction loop that runs no iteration (a sum over an empty axis, a matmul
// with K = 0) would leave the accumulator as it found it. A loop that only
// reductions use, and whose extent is not a constant above 0, is therefore
// preceded by `if (end <= begin) { inits }` with the loop variable bound to
// its start (relax/ir/empty_reduction.h says which loops and what the inits
// are). The ops whose reduction has no identity (max, argmax, a pooling window
// over nothing) reject an empty extent before the kernel runs (the checks of
// cpp_codegen_args.cc).
//
// Inside an OpenMP simd loop no further OpenMP construct is emitted (OpenMP
// forbids most of them there): a nested parallel loop runs serially in it.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/cpp/cpp_codegen_impl.h"
#include "relax/ir/empty_reduction.h"
#include "relax/ir/micro_kernel.h"
#include "relax/ir/visitor.h"
#include "relax/shape/sym_expr_search.h"

namespace relax::cpp_codegen {
namespace {

/// Local buffers of constant size up to this many bytes live on the stack.
constexpr int64_t kStackBytes = 8192;

bool is_simple(const SymExpr& e) { return e.kind() == SymKind::kIntImm || e.is_var(); }

// `a * b` and `a + b` of work estimates.
KernelEmitter::Work combine(const KernelEmitter::Work& a, const KernelEmitter::Work& b, bool product) {
  KernelEmitter::Work w;
  if (a.constant && b.constant) {
    w.constant = product ? *a.constant * *b.constant : *a.constant + *b.constant;
    w.text = absl::StrCat(*w.constant);
    return w;
  }
  if (product && a.constant == 1.0) return b;
  if (product && b.constant == 1.0) return a;
  w.text = absl::StrCat("(", a.text, product ? ") * (" : ") + (", b.text, ")");
  return w;
}

}  // namespace

bool KernelEmitter::known_before_loop(const SymExpr& e) const {
  switch (e.kind()) {
    case SymKind::kIntImm: return true;
    case SymKind::kVar: return vars_.contains(SymVar::from_expr(e));
    case SymKind::kFloatImm:
    case SymKind::kBufferLoad:
    case SymKind::kCall: return false;
    default: break;
  }
  if (!e.dtype().is_int()) return false;
  for (size_t i = 0; i < e.num_operands(); ++i) {
    if (!known_before_loop(e.operand(i))) return false;
  }
  return true;
}

std::optional<KernelEmitter::Work> KernelEmitter::work_of(const Stmt& s) {
  const Work one{"1", 1.0};
  if (!s.defined()) return Work{"0", 0.0};
  switch (s.kind()) {
    case StmtKind::kFor: {
      const auto* node = s.as<ForNode>();
      std::optional<Work> body = work_of(node->body);
      if (!body) return std::nullopt;
      Work extent;
      if (std::optional<int64_t> c = node->extent.as_const()) {
        extent = {absl::StrCat(*c), static_cast<double>(*c)};
      } else if (known_before_loop(node->extent)) {
        extent = {absl::StrCat("static_cast<double>(", as_int64(node->extent).text, ")"), std::nullopt};
      } else {
        return std::nullopt;
      }
      return combine(extent, *body, /*product=*/true);
    }
    case StmtKind::kSeq: {
      Work total{"0", 0.0};
      for (const Stmt& x : s.as<SeqStmtNode>()->stmts) {
        std::optional<Work> w = work_of(x);
        if (!w) return std::nullopt;
        total = combine(total, *w, /*product=*/false);
      }
      return total;
    }
    case StmtKind::kIfThenElse: {
      std::optional<Work> a = work_of(s.as<IfThenElseNode>()->then_case);
      std::optional<Work> b = work_of(s.as<IfThenElseNode>()->else_case);
      if (!a || !b) return std::nullopt;
      return combine(*a, *b, /*product=*/false);
    }
    case StmtKind::kLetStmt: return work_of(s.as<LetStmtNode>()->body);
    case StmtKind::kAllocate: return work_of(s.as<AllocateNode>()->body);
    case StmtKind::kBlock: {
      std::optional<Work> init = work_of(s.as<BlockNode>()->init);
      std::optional<Work> body = work_of(s.as<BlockNode>()->body);
      if (!init || !body) return std::nullopt;
      return combine(*init, *body, /*product=*/false);
    }
    case StmtKind::kBufferStore:
    case StmtKind::kEvaluate: return one;
    // What a micro-kernel does per call is not known here (the matmul schedule's int4
    // row kernel calls one per block of 1,024 columns, a few calls in all): a parallel
    // loop around one always forks.
    case StmtKind::kExternCall: return std::nullopt;
  }
  return one;
}

void KernelEmitter::line(const std::string& text) {
  out_.append(static_cast<size_t>(indent_) * 2, ' ');
  out_ += text;
  out_ += '\n';
}

void KernelEmitter::open(const std::string& text) {
  line(text.empty() ? "{" : text + " {");
  ++indent_;
}

void KernelEmitter::close(const std::string& text) {
  --indent_;
  line(text);
}

void KernelEmitter::add_buffer(const Buffer& buffer, const std::string& c_name) {
  BufferInfo info{c_name, buffer.dtype(), std::vector<std::string>(buffer.ndim())};
  auto stride_local = [&](size_t d, const std::string& value) {
    const std::string name = names_.fresh(absl::StrCat(c_name, "_stride", d));
    line(absl::StrCat("const int64_t ", name, " = ", value, ";"));
    return name;
  };
  if (!buffer->strides.empty()) {
    for (size_t d = 0; d < buffer.ndim(); ++d) {
      const SymExpr& s = buffer->strides[d];
      if (std::optional<int64_t> c = s.as_const()) {
        info.strides[d] = absl::StrCat(*c);
      } else if (s.is_var() && s.dtype() == DataType::int64()) {
        info.strides[d] = var_name(SymVar::from_expr(s));
      } else {
        info.strides[d] = stride_local(d, as_int64(s).text);
      }
    }
  } else {
    // Row-major: stride[d] = shape[d + 1] * stride[d + 1], folded while constant.
    std::string stride = "1";
    for (size_t d = buffer.ndim(); d-- > 0;) {
      info.strides[d] = stride;
      if (d == 0) break;
      const SymExpr& dim = buffer.shape()[d];
      int64_t constant_stride = 0;
      const bool stride_const = absl::SimpleAtoi(stride, &constant_stride);
      if (std::optional<int64_t> c = dim.as_const(); c && stride_const) {
        stride = absl::StrCat(*c * constant_stride);
        continue;
      }
      const CExpr dim_text = as_int64(dim);
      if (stride == "1" && dim.is_var() && dim.dtype() == DataType::int64()) {
        stride = dim_text.text;  // the variable itself
        continue;
      }
      const std::string lhs = dim_text.prec < kPrecMul ? "(" + dim_text.text + ")" : dim_text.text;
      stride = stride_local(d - 1, stride == "1" ? lhs : absl::StrCat(lhs, " * ", stride));
    }
  }
  buffers_[buffer.get()] = std::move(info);
}

void KernelEmitter::emit_stmt(const Stmt& s) {
  if (!ok()) return;
  switch (s.kind()) {
    case StmtKind::kFor:
      return emit_for(*s.as<ForNode>());
    case StmtKind::kSeq:
      for (const Stmt& x : s.as<SeqStmtNode>()->stmts) emit_stmt(x);
      return;
    case StmtKind::kBufferStore:
      return emit_store(*s.as<BufferStoreNode>());
    case StmtKind::kIfThenElse:
      return emit_if(*s.as<IfThenElseNode>());
    case StmtKind::kLetStmt:
      return emit_let(*s.as<LetStmtNode>());
    case StmtKind::kAllocate:
      return emit_allocate(*s.as<AllocateNode>());
    case StmtKind::kEvaluate:
      line(absl::StrCat("(void)(", value(s.as<EvaluateNode>()->value), ");"));
      return;
    case StmtKind::kBlock:
      return emit_block(*s.as<BlockNode>());
    case StmtKind::kExternCall:
      return emit_extern_call(*s.as<ExternCallNode>());
  }
  fail(absl::StatusCode::kInternal,
       absl::StrCat("a statement of unknown kind ", static_cast<int>(s.kind())));
}

void KernelEmitter::emit_for(const ForNode& node) {
  const std::string type = checked_type(node.loop_var.dtype(), "loop variable `" + node.loop_var.name() + "`");
  if (!ok()) return;
  const std::string var = names_.fresh(node.loop_var.name());
  // The bounds are computed before the loop variable exists.
  std::string begin = value(node.min);
  std::string end;
  bool opened_scope = false;
  auto hoist_as = [&](const std::string& decl_type, const std::string& suffix, const std::string& text) {
    if (!opened_scope) open("");
    opened_scope = true;
    const std::string name = names_.fresh(var + suffix);
    line(absl::StrCat("const ", decl_type, " ", name, " = ", text, ";"));
    return name;
  };
  auto hoist = [&](const std::string& suffix, const std::string& text) { return hoist_as(type, suffix, text); };
  if (!is_simple(node.min)) begin = hoist("_begin", begin);
  if (node.min.is_const(0)) {
    end = is_simple(node.extent) ? value(node.extent) : hoist("_end", value(node.extent));
  } else {
    const CExpr extent = expr(node.extent, /*typed=*/true);
    const std::string sum =
        absl::StrCat(begin, " + ", extent.prec <= kPrecAdd ? "(" + extent.text + ")" : extent.text);
    end = is_simple(node.min) && is_simple(node.extent) ? sum : hoist("_end", sum);
  }
  if (!ok()) return;
  emit_inits_when_empty(node, type, begin, end);
  if (!ok()) return;

  // A parallel loop forks always, never, or when its work (computed per call)
  // reaches the threshold; nested in a parallel region or in the serial copy
  // of one, it runs on the thread that reaches it.
  enum class Fork { kNo, kYes, kByWork };
  Fork fork = Fork::kNo;
  std::string work;
  // (Device code: a loop inside a mapped nest runs on the thread that reaches it.)
  if (node.for_kind == ForKind::kParallel && target_.threads != 1 && concurrent_depth_ == 0 && !in_serial_copy_ &&
      !device_) {
    fork = Fork::kYes;
    if (target_.parallel_min_work > 0) {
      const std::optional<Work> inner = work_of(node.body);
      const std::optional<int64_t> extent = node.extent.as_const();
      if (inner && extent && inner->constant) {
        const double total = static_cast<double>(*extent) * *inner->constant;
        if (total < static_cast<double>(target_.parallel_min_work)) fork = Fork::kNo;
      } else if (inner) {
        const std::string iterations =
            node.min.is_const(0)
                ? absl::StrCat("static_cast<double>(", end, ")")
                : absl::StrCat("(static_cast<double>(", end, ") - static_cast<double>(", begin, "))");
        work = hoist_as("double", "_work",
                        inner->constant == 1.0 ? iterations : absl::StrCat(iterations, " * (", inner->text, ")"));
        fork = Fork::kByWork;
      }
    }
  }
  // A parallel loop's iterations become the body of a lambda over a range of
  // them, which the runtime's pool runs in static chunks (relax_parallel_for).
  // Its bound variables are captured by reference; a failure inside sets
  // relax_failed, which also makes the pool skip the chunks not yet started.
  auto emit_loop = [&](bool parallel) {
    bool concurrent = false;
    const bool was_simd = in_simd_;
    std::string lo = begin;
    std::string hi = end;
    std::string body;
    if (parallel) {
      body = names_.fresh(var + "_body");
      const std::string lo_arg = names_.fresh(var + "_lo");
      const std::string hi_arg = names_.fresh(var + "_hi");
      open(absl::StrCat("auto ", body, " = [&](int64_t ", lo_arg, ", int64_t ", hi_arg, ") -> int32_t"));
      const bool wide = type == "int64_t";
      lo = wide ? lo_arg : absl::StrCat("static_cast<", type, ">(", lo_arg, ")");
      hi = wide ? hi_arg : absl::StrCat("static_cast<", type, ">(", hi_arg, ")");
      concurrent = true;
    } else if (node.for_kind == ForKind::kVectorized && !in_simd_ && !device_) {
      if (const auto* block = node.body.as<BlockNode>()) hoist_invariant_iter_vars(*block, node.loop_var);
      line("#pragma omp simd");
      concurrent = true;
      in_simd_ = true;
    } else if (node.for_kind == ForKind::kUnrolled) {
      const std::optional<int64_t> extent = node.extent.as_const();
      line(absl::StrCat(device_ ? "#pragma unroll " : "#pragma GCC unroll ",
                        extent && *extent >= 1 && *extent <= 64 ? *extent : 8));
    }
    if (concurrent && concurrent_depth_ == 0) failed_flag_since_region_ = false;
    if (concurrent) ++concurrent_depth_;
    bind_var(node.loop_var, var);
    open(absl::StrCat("for (", type, " ", var, " = ", lo, "; ", var, " < ", hi, "; ++", var, ")"));
    loop_extents_.push_back(node.extent);
    const std::vector<SymExpr> hoisted = hoist_index_arithmetic(node);
    emit_stmt(node.body);
    for (const SymExpr& e : hoisted) hoisted_exprs_.erase(e);
    loop_extents_.pop_back();
    close();
    if (concurrent) --concurrent_depth_;
    in_simd_ = was_simd;
    if (parallel) {
      line(concurrent_depth_ == 0 && failed_flag_since_region_
               ? "return __atomic_load_n(&relax_failed, __ATOMIC_RELAXED);"
               : "return 0;");
      close("};");
      line(absl::StrCat("if (relax_parallel_for(", begin, ", ", end, ", ", target_.threads, ", ", body,
                        ") != 0) return 1;"));
    }
    if (!parallel && concurrent && concurrent_depth_ == 0 && failed_flag_since_region_) {
      line("if (relax_failed != 0) return 1;");
    }
  };
  if (fork == Fork::kByWork) {
    // Two copies rather than a threshold inside the runtime: a small call runs
    // the plain loop and pays nothing for the pool.
    open(absl::StrCat("if (", work, " >= ", target_.parallel_min_work, ".0)"));
    emit_loop(/*parallel=*/true);
    close("} else {");
    ++indent_;
    const bool was_serial_copy = in_serial_copy_;
    in_serial_copy_ = true;
    emit_loop(/*parallel=*/false);
    in_serial_copy_ = was_serial_copy;
    close();
  } else {
    emit_loop(fork == Fork::kYes);
  }
  if (opened_scope) close();
}

void KernelEmitter::emit_inits_when_empty(const ForNode& node, const std::string& type, const std::string& begin,
                                          const std::string& end) {
  std::optional<Stmt> inits = inits_when_empty(node);
  if (!inits) return;
  // The loop runs no iteration: its reductions still start from their inits.
  open(absl::StrCat("if (", end, " <= ", begin, ")"));
  const std::string var = names_.fresh(node.loop_var.name());
  line(absl::StrCat("const ", type, " ", var, " = ", begin, ";"));
  bind_var(node.loop_var, var);
  emit_stmt(*inits);
  close();
}

void KernelEmitter::emit_store(const BufferStoreNode& node) {
  auto it = buffers_.find(node.buffer.get());
  if (it == buffers_.end()) {
    fail(absl::StatusCode::kInvalidArgument,
         absl::StrCat("store to buffer `", node.buffer.name(),
                      "`, which is neither a parameter nor allocated around the store"));
    return;
  }
  const BufferInfo& info = it->second;
  if (&node == redirect_store_) {
    // A reduction split over a block's threads: the update goes to the thread's partial.
    line(absl::StrCat(redirect_prefix_, value(redirect_value_), redirect_suffix_));
    return;
  }
  if (node.value.dtype().lanes != 1) return emit_vector_store(node, info);  // cpp_codegen_vector.cc
  line(store_line(info, node.indices, value(node.value)));
}

std::string KernelEmitter::store_line(const BufferInfo& info, const std::vector<SymExpr>& indices, std::string v) {
  const std::string target = absl::StrCat(info.name, "[", flat_index(info, indices), "]");
  if (info.dtype.is_bool()) v = absl::StrCat("static_cast<uint8_t>(", v, ")");
  if (is_half_float(info.dtype)) {
    // Narrowed to 16 bits: round to nearest, ties to even, NaN kept.
    v = absl::StrCat(info.dtype.code == DataType::Code::kBFloat ? "relax_bfloat16_store("
                                                                : "relax_float16_store(",
                     v, ")");
  }
  return absl::StrCat(target, " = ", v, ";");
}

void KernelEmitter::emit_extern_call(const ExternCallNode& node) {
  if (device_) {
    return fail(absl::StatusCode::kUnimplemented,
                absl::StrCat("extern call of `", node.name, "` in device code (the CUDA code generator has no "
                             "micro-kernels)"));
  }
  if (absl::Status s = check_extern_call(node); !s.ok()) return fail(s.code(), std::string(s.message()));
  std::vector<std::string> args;
  for (const ExternArg& a : node.args) {
    if (!a.is_region()) {
      args.push_back(value(a.value));
      continue;
    }
    auto it = buffers_.find(a.buffer.get());
    if (it == buffers_.end()) {
      return fail(absl::StatusCode::kInvalidArgument,
                  absl::StrCat("extern call of `", node.name, "`: the region of buffer `", a.buffer.name(),
                               "`, which is neither a parameter nor allocated around the call"));
    }
    std::string pointer = absl::StrCat(it->second.name, " + ", flat_index(it->second, a.indices));
    // bool is stored as uint8_t; the kernel takes bool*.
    if (a.buffer.dtype().is_bool()) pointer = absl::StrCat("reinterpret_cast<bool*>(", pointer, ")");
    args.push_back(std::move(pointer));
  }
  if (std::find(micro_kernels_.begin(), micro_kernels_.end(), node.name) == micro_kernels_.end()) {
    micro_kernels_.push_back(node.name);
  }
  line(absl::StrCat(node.name, "(", absl::StrJoin(args, ", "), ");"));
}

void KernelEmitter::emit_if(const IfThenElseNode& node) {
  open(absl::StrCat("if (", value(node.cond), ")"));
  emit_stmt(node.then_case);
  if (node.else_case.defined()) {
    close("} else {");
    ++indent_;
    emit_stmt(node.else_case);
  }
  close();
}

bool KernelEmitter::declare_let(const LetStmtNode& node) {
  const std::string type = checked_type(node.var.dtype(), "let variable `" + node.var.name() + "`");
  const std::string v = value(node.value);
  if (!ok()) return false;
  const std::string name = names_.fresh(node.var.name());
  line(absl::StrCat("const ", type, " ", name, " = ", v, ";"));
  bind_var(node.var, name);
  return true;
}

void KernelEmitter::emit_let(const LetStmtNode& node) {
  if (declare_let(node)) emit_stmt(node.body);
}

void KernelEmitter::emit_alloc_failure(const std::string& message_format, const std::vector<std::string>& args) {
  if (concurrent_depth_ == 0) {
    line(fail_stmt(message_format, args));
    return;
  }
  // No return out of a parallel or simd loop: the first failing iteration reports.
  uses_failed_flag_ = true;
  failed_flag_since_region_ = true;
  std::string report = absl::StrCat("relax_fail(error, error_capacity, \"", message_format, "\"");
  for (const std::string& a : args) absl::StrAppend(&report, ", ", a);
  line(absl::StrCat("if (__sync_bool_compare_and_swap(&relax_failed, 0, 1)) ", report, ");"));
}

void KernelEmitter::emit_allocate(const AllocateNode& node) {
  const Buffer& b = node.buffer;
  const std::string storage = storage_type(b.dtype());
  checked_type(b.dtype(), absl::StrCat("allocated buffer `", b.name(), "`"));
  if (!ok()) return;
  if (!b->strides.empty() && b->strides.size() != b.ndim()) {
    fail(absl::StatusCode::kInvalidArgument,
         absl::StrCat("allocated buffer `", b.name(), "` has ", b->strides.size(), " strides for ", b.ndim(),
                      " dims"));
    return;
  }
  const std::string name = names_.fresh(b.name());
  const int64_t elem_bytes = b.dtype().bits / 8;
  // A compact local buffer of constant shape: a stack array.
  std::optional<int64_t> count = int64_t{1};
  for (const SymExpr& d : b.shape()) {
    std::optional<int64_t> c = d.as_const();
    if (!c || !count || *c < 0 || (*c > 0 && *count > kStackBytes / *c)) {
      count.reset();
      break;
    }
    *count *= *c;
  }
  const std::string comment = absl::StrCat("// allocate ", comment_text(b.name()), ": ", b.dtype().to_string(), "[",
                                           comment_text(absl::StrJoin(b.shape(), ", ", [](std::string* out, const SymExpr& d) {
                                             out->append(d.to_string());
                                           })),
                                           "], ", std::string(buffer_scope_name(b->scope)));
  open("");
  line(comment);
  if (b->scope == BufferScope::kLocal && b->strides.empty() && count && *count * elem_bytes <= kStackBytes) {
    // (Device code: a thread's own array, in registers when small.)
    line(absl::StrCat(device_ ? "" : "alignas(64) ", storage, " ", name, "[", std::max<int64_t>(*count, 1), "];"));
    add_buffer(b, name);
    emit_stmt(node.body);
    close();
    return;
  }
  if (device_) {
    fail(absl::StatusCode::kUnimplemented,
         absl::StrCat("allocated buffer `", b.name(), "` in device code is not a small local of constant size "
                      "(lift-workspace makes top-level scratch a parameter)"));
    close();
    return;
  }
  // The element count: the product of the dims, or for declared strides the
  // offset of the last element plus one (0 when a dim is 0).
  std::string count_text;
  if (b->strides.empty()) {
    for (const SymExpr& d : b.shape()) {
      const CExpr c = as_int64(d);
      absl::StrAppend(&count_text, count_text.empty() ? "" : " * ", c.prec < kPrecMul ? "(" + c.text + ")" : c.text);
    }
    if (count_text.empty()) count_text = "1";
  } else {
    std::vector<std::string> empty_checks;
    std::string last = "1";
    for (size_t d = 0; d < b.ndim(); ++d) {
      const std::string dim = as_int64(b.shape()[d]).text;
      const std::string stride = as_int64(b->strides[d]).text;
      empty_checks.push_back(absl::StrCat("(", dim, ") == 0"));
      absl::StrAppend(&last, " + ((", dim, ") - 1) * (", stride, ")");
    }
    count_text = empty_checks.empty() ? last : absl::StrCat(absl::StrJoin(empty_checks, " || "), " ? 0 : ", last);
  }
  const std::string count_name = names_.fresh(name + "_count");
  const std::string block_name = names_.fresh(name + "_block");
  line(absl::StrCat("const int64_t ", count_name, " = ", count_text, ";"));
  line(absl::StrCat("relax_heap_block ", block_name, "(", count_name, ", ", elem_bytes, ");"));
  open(absl::StrCat("if (", block_name, ".ptr == nullptr)"));
  emit_alloc_failure(absl::StrCat("cannot allocate %lld elements of ", b.dtype().to_string(), " for ",
                                  printf_text(b.name())),
                     {absl::StrCat("static_cast<long long>(", count_name, ")")});
  close("} else {");
  ++indent_;
  line(absl::StrCat(storage, "* const ", name, " = static_cast<", storage, "*>(", block_name, ".ptr);"));
  add_buffer(b, name);
  emit_stmt(node.body);
  close();
  close();
}

// A fused outer loop binds a block's variables through floordiv/floormod of its variable
// (relax_floordiv: branches); written inside a vectorised loop, they keep g++ 12 from
// seeing the addresses as affine in the loop's variable and the loop stays scalar (measured:
// the language model's silu over (b, n, 5632) rows). Declared before the loop, they are
// loop invariants.
namespace {

// The variables a statement binds (loop, let and block iteration variables) and whether it
// holds a loop.
class BoundVars : public StmtVisitor {
 public:
  void visit_for(const Stmt& s, const ForNode& node) override {
    vars.push_back(node.loop_var);
    has_loop = true;
    StmtVisitor::visit_for(s, node);
  }
  void visit_let(const Stmt& s, const LetStmtNode& node) override {
    vars.push_back(node.var);
    StmtVisitor::visit_let(s, node);
  }
  void visit_block(const Stmt& s, const BlockNode& node) override {
    for (const IterVar& iv : node.iter_vars) vars.push_back(iv.var);
    StmtVisitor::visit_block(s, node);
  }
  void visit_value(const SymExpr&) override {}
  std::vector<SymVar> vars;
  bool has_loop = false;
};

// The maximal integer floordiv/floormod subexpressions of a statement that pass `take`.
class IndexArithmetic : public StmtVisitor {
 public:
  explicit IndexArithmetic(std::function<bool(const SymExpr&)> take) : take_(std::move(take)) {}
  void visit_value(const SymExpr& e) override {
    if (!e.defined()) return;
    const bool division = e.kind() == SymKind::kFloorDiv || e.kind() == SymKind::kFloorMod;
    if (division && e.dtype().lanes == 1 && e.dtype().is_int() && take_(e)) {
      if (seen_.insert(e).second) found.push_back(e);
      return;
    }
    StmtVisitor::visit_value(e);
  }
  std::vector<SymExpr> found;

 private:
  std::function<bool(const SymExpr&)> take_;
  absl::flat_hash_set<SymExpr, SymExprHash, SymExprEqual> seen_;
};

// The factors of a product (`e` itself when it is not a multiplication).
void factors_of(const SymExpr& e, std::vector<SymExpr>& out) {
  if (e.kind() == SymKind::kMul) {
    for (size_t i = 0; i < e.num_operands(); ++i) factors_of(e.operand(i), out);
    return;
  }
  out.push_back(e);
}

}  // namespace

std::vector<SymExpr> KernelEmitter::hoist_index_arithmetic(const ForNode& node) {
  if (in_simd_ || device_ || node.for_kind == ForKind::kVectorized) return {};
  BoundVars bound;
  bound.visit_stmt(node.body);
  if (!bound.has_loop) return {};  // nothing below to save the work of
  std::vector<SymExpr> extent_factors;
  for (const SymExpr& extent : loop_extents_) factors_of(extent, extent_factors);
  IndexArithmetic search([&](const SymExpr& e) {
    if (hoisted_exprs_.contains(e)) return false;
    for (const SymVar& v : bound.vars) {
      if (mentions_var(e, v)) return false;
    }
    const SymExpr& divisor = e.operand(1);
    if (std::optional<int64_t> c = divisor.as_const()) return *c != 0;
    for (const SymExpr& f : extent_factors) {
      if (SymExprEqual()(f, divisor)) return true;
    }
    return false;
  });
  search.visit_stmt(node.body);
  std::vector<SymExpr> declared;
  for (const SymExpr& e : search.found) {
    const std::string type = checked_type(e.dtype(), absl::StrCat("the index `", e.to_string(), "`"));
    const std::string text = value(e);
    if (!ok()) return declared;
    const std::string name = names_.fresh("ix");
    line(absl::StrCat("const ", type, " ", name, " = ", text, ";"));
    hoisted_exprs_.emplace(e, name);
    declared.push_back(e);
  }
  return declared;
}

void KernelEmitter::hoist_invariant_iter_vars(const BlockNode& block, const SymVar& loop_var) {
  for (const IterVar& iv : block.iter_vars) {
    bool uses_loop_var = false;
    for_each_var(iv.binding, [&](const SymVar& v) { uses_loop_var = uses_loop_var || SymExprEqual()(v, loop_var); });
    if (uses_loop_var) continue;
    const std::string type = checked_type(iv.var.dtype(), "iteration variable `" + iv.var.name() + "`");
    const std::string binding = value(iv.binding);
    if (!ok()) return;
    const std::string name = names_.fresh(iv.var.name());
    line(absl::StrCat("const ", type, " ", name, " = ", binding, ";"));
    hoisted_iter_vars_[iv.var] = name;
  }
}

void KernelEmitter::emit_block(const BlockNode& node) {
  open("");
  line(absl::StrCat("// block ", comment_text(node.name)));
  std::vector<std::string> reduction_tests;
  for (const IterVar& iv : node.iter_vars) {
    if (auto hoisted = hoisted_iter_vars_.find(iv.var); hoisted != hoisted_iter_vars_.end()) {
      bind_var(iv.var, hoisted->second);
      if (iv.type == IterType::kReduction) reduction_tests.push_back(hoisted->second + " == 0");
      continue;
    }
    const std::string type = checked_type(iv.var.dtype(), "iteration variable `" + iv.var.name() + "`");
    const std::string binding = value(iv.binding);
    if (!ok()) return;
    const std::string name = names_.fresh(iv.var.name());
    line(absl::StrCat("const ", type, " ", name, " = ", binding, ";"));
    bind_var(iv.var, name);
    if (iv.type == IterType::kReduction) reduction_tests.push_back(name + " == 0");
  }
  if (node.init.defined()) {
    if (reduction_tests.empty()) {
      fail(absl::StatusCode::kInvalidArgument,
           absl::StrCat("block `", node.name, "` has an init part but no reduction iteration variable"));
      return;
    }
    open(absl::StrCat("if (", absl::StrJoin(reduction_tests, " && "), ")"));
    emit_stmt(node.init);
    close();
  }
  emit_stmt(node.body);
  close();
}

}  // namespace relax::cpp_codegen
