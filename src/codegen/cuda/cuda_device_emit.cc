// The CUDA mode of KernelEmitter, device side: the loops a mapping strides
// over the grid or a block, and cooperative regions (cuda_launch_emit.cc
// chooses the mapping; the statements inside are cpp_codegen_stmt.cc's, in
// device spelling).
//
// A cooperative region (a row of a row reduction, or a top-level statement
// run by one block) is a sequence of stages, through its allocations of
// one-element locals (each thread has its own copy) and its lets:
//   - a parallel loop: its iterations strided over the block's threads, then
//     __syncthreads();
//   - a reduction into a local (cuda_region.h): each thread combines every
//     blockDim.x-th iteration's operand into a partial that starts from the
//     combiner's identity, relax_block_reduce combines the partials (warp
//     shuffles, then shared memory; every thread gets the total), and every
//     thread folds the total into its copy of the local;
//   - any other statement: on every thread when it stores only into locals
//     (every copy gets the same value), on thread 0 followed by
//     __syncthreads() when it stores into memory.
// coop_legal refuses a region where a stage stores into both, or a parallel
// loop stores into a local; such a row runs as a grid-stride loop instead
// (one thread per row).
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_codegen_impl.h"
#include "codegen/cuda/cuda_region.h"

namespace relax::cpp_codegen {
namespace {

/// Whether the local allocation can live in a thread's registers or stack.
bool small_local(const AllocateNode& alloc) {
  if (alloc.buffer->scope != BufferScope::kLocal || !alloc.buffer->strides.empty()) return false;
  int64_t count = 1;
  for (const SymExpr& d : alloc.buffer.shape()) {
    std::optional<int64_t> c = d.as_const();
    if (!c || *c < 0 || *c > 1024) return false;
    count *= *c;
  }
  return count <= 1024;
}

}  // namespace

bool KernelEmitter::has_coop_stage(const Stmt& s, std::vector<const BufferNode*>& locals) const {
  if (!s.defined()) return false;
  if (const auto* seq = s.as<SeqStmtNode>()) {
    bool any = false;
    for (const Stmt& x : seq->stmts) any = has_coop_stage(x, locals) || any;
    return any;
  }
  if (const auto* alloc = s.as<AllocateNode>()) {
    if (!small_local(*alloc)) return false;
    locals.push_back(alloc->buffer.get());
    return has_coop_stage(alloc->body, locals);
  }
  if (const auto* let = s.as<LetStmtNode>()) return has_coop_stage(let->body, locals);
  if (const auto* loop = s.as<ForNode>()) {
    return loop->for_kind == ForKind::kParallel || local_reduction(*loop, locals).has_value();
  }
  return false;
}

bool KernelEmitter::coop_legal(const Stmt& s, std::vector<const BufferNode*>& locals) const {
  if (!s.defined()) return true;
  if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->stmts) {
      if (!coop_legal(x, locals)) return false;
    }
    return true;
  }
  if (const auto* alloc = s.as<AllocateNode>()) {
    if (!small_local(*alloc)) return false;
    locals.push_back(alloc->buffer.get());
    return coop_legal(alloc->body, locals);
  }
  if (const auto* let = s.as<LetStmtNode>()) return coop_legal(let->body, locals);
  if (const auto* loop = s.as<ForNode>()) {
    if (loop->for_kind == ForKind::kParallel) return !stores_local(s, locals);
    if (local_reduction(*loop, locals)) return true;
  }
  return !(stores_local(s, locals) && stores_memory(s, locals));
}

void KernelEmitter::emit_strided_for(const ForNode& node, const std::string& first, const std::string& step,
                                     bool coop_body) {
  const std::string type = checked_type(node.loop_var.dtype(), "loop variable `" + node.loop_var.name() + "`");
  const std::string begin = value(node.min);
  const CExpr extent = expr(node.extent, /*typed=*/true);
  if (!ok()) return;
  const std::string var = names_.fresh(node.loop_var.name());
  open("");
  const std::string end = names_.fresh(var + "_end");
  line(absl::StrCat("const ", type, " ", end, " = ", node.min.is_const(0) ? "" : "(" + begin + ") + ",
                    extent.prec <= kPrecAdd ? "(" + extent.text + ")" : extent.text, ";"));
  bind_var(node.loop_var, var);
  open(absl::StrCat("for (", type, " ", var, " = ", node.min.is_const(0) ? "" : "(" + begin + ") + ",
                    "static_cast<", type, ">(", first, "); ", var, " < ", end, "; ", var, " += static_cast<", type,
                    ">(", step, "))"));
  if (coop_body) {
    emit_device_coop(node.body);
  } else {
    emit_stmt(node.body);
  }
  close();
  close();
}

void KernelEmitter::emit_device_coop(const Stmt& s) {
  if (!ok() || !s.defined()) return;
  if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->stmts) emit_device_coop(x);
    return;
  }
  if (const auto* alloc = s.as<AllocateNode>()) {
    // A thread's own copy (coop_legal admitted only small locals).
    const Buffer& b = alloc->buffer;
    int64_t count = 1;
    for (const SymExpr& d : b.shape()) count *= *d.as_const();
    checked_type(b.dtype(), absl::StrCat("allocated buffer `", b.name(), "`"));
    const std::string name = names_.fresh(b.name());
    open("");
    line(absl::StrCat("// allocate ", comment_text(b.name()), " (each thread's copy)"));
    line(absl::StrCat(storage_type(b.dtype()), " ", name, "[", std::max<int64_t>(count, 1), "];"));
    add_buffer(b, name);
    coop_locals_.push_back(b.get());
    emit_device_coop(alloc->body);
    close();
    return;
  }
  if (const auto* let = s.as<LetStmtNode>()) {
    if (declare_let(*let)) emit_device_coop(let->body);
    return;
  }
  if (const auto* loop = s.as<ForNode>()) {
    if (loop->for_kind == ForKind::kParallel) {
      emit_strided_for(*loop, "threadIdx.x", "blockDim.x", false);
      line("__syncthreads();");
      return;
    }
    if (std::optional<LocalReduction> r = local_reduction(*loop, coop_locals_)) {
      emit_device_reduction(*loop, *r->store, r->operand, r->combiner);
      return;
    }
  }
  if (!stores_memory(s, coop_locals_)) {
    emit_stmt(s);  // every thread: its own locals
    return;
  }
  open("if (threadIdx.x == 0)");
  emit_stmt(s);
  close();
  line("__syncthreads();");
}

void KernelEmitter::emit_device_reduction(const ForNode& loop, const BufferStoreNode& store, const SymExpr& operand,
                                          SymKind combiner) {
  const DataType t = store.buffer.dtype();
  const std::string type = value_type(t);
  std::string identity, combine;
  switch (combiner) {
    case SymKind::kAdd:
      identity = t.is_float() ? (t.bits == 32 ? "0.0f" : "0.0") : "0";
      combine = "relax_combine_add";
      break;
    case SymKind::kMul:
      identity = t.is_float() ? (t.bits == 32 ? "1.0f" : "1.0") : "1";
      combine = "relax_combine_mul";
      break;
    case SymKind::kMax:
      identity = t.is_float() ? (t.bits == 32 ? "-HUGE_VALF" : "-HUGE_VAL")
                              : (t.bits == 32 ? "(-INT32_C(2147483647) - 1)" : "(-INT64_C(9223372036854775807) - 1)");
      combine = "relax_combine_max";
      break;
    default:
      identity = t.is_float() ? (t.bits == 32 ? "HUGE_VALF" : "HUGE_VAL")
                              : (t.bits == 32 ? "INT32_C(2147483647)" : "INT64_C(9223372036854775807)");
      combine = "relax_combine_min";
      break;
  }
  const std::string part = names_.fresh_generated("relax_part");
  open("");
  line(absl::StrCat("// ", comment_text(store.buffer.name()), " reduced over the block's threads"));
  line(absl::StrCat(type, " ", part, " = ", identity, ";"));
  redirect_store_ = &store;
  redirect_value_ = operand;
  redirect_prefix_ = absl::StrCat(part, " = ", combine, "::apply<", type, ">(", part, ", ");
  redirect_suffix_ = ");";
  emit_strided_for(loop, "threadIdx.x", "blockDim.x", false);
  redirect_store_ = nullptr;
  line(absl::StrCat(part, " = relax_block_reduce<", combine, ", ", type, ">(", part, ");"));
  const BufferInfo& info = buffers_.at(store.buffer.get());
  const std::string current = absl::StrCat(info.name, "[", flat_index(info, store.indices), "]");
  line(store_line(info, store.indices, absl::StrCat(combine, "::apply<", type, ">(", current, ", ", part, ")")));
  close();
}

}  // namespace relax::cpp_codegen
