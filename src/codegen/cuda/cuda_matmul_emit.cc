// Matmul nests on the device (KernelEmitter's CUDA mode): the nest that
// match_matmul reads as out[vi, vj] = init(vi, vj) + sum over vk of
// lhs(vi, vk) * rhs(vk, vj) -- rhs any expression, such as a dequantisation
// of packed int4 or int8 weights with their scales, or a bfloat16 load --
// written from its parts; the products accumulate in the output's value type
// (float for float16 and bfloat16), and init is added once at the end.
//
// Tiled (kMatmul): one block of 256 threads per 64 x 64 output tile
// (blockIdx.x the columns, blockIdx.y striding the row tiles); per step of 16
// along k, the block loads a 16 x 64 tile of lhs and of rhs into shared memory
// (rows padded to 65 against bank conflicts), each element computed from its
// expression with the tile's bounds checked first (so dequantisation runs
// once per element per block), the loads ordered so that consecutive threads
// read consecutive k for k-contiguous operands (X[vi, vk], W[vj, vk]) and
// consecutive j otherwise; then each thread accumulates a 4 x 4 sub-tile
// (rows ty + 16 i, columns tx + 16 j) from registers.
//
// Matvec (kMatvec, at most 8 rows, a memory-bound decode step; a symbolic row
// count is checked by the launcher and each row guarded here): every weight
// element is read once by the grid, and the loads are as wide as the layout
// allows (plan_matvec): a thread takes four consecutive elements along the
// weights' contiguous dimension, and every load whose last index is that
// dimension's variable -- the weight itself, a packed int4 or int8 byte
// (four bytes: one 32-bit load), its scale, a bfloat16 pattern, the
// activations of a linear -- becomes one vector load (relax_load4: 16 bytes
// of float, 8 of a half float, 4 of bytes) when the four are inside and
// aligned, element loads otherwise. The expression of each of the four
// elements is then written from those registers, so a dequantisation
// computes from the loaded bytes; an element past the end is not computed.
// For weights laid out (k, n), a block's 32 lanes own 128 consecutive
// columns (four each) and its 8 warps split k; the 8 partial sums per column
// meet in shared memory. For weights laid out (n, k), each warp owns one
// column, its lanes take four consecutive k each (a warp covers 128 of the
// weight row per step) and meet by warp shuffles. Without a qualifying load
// (or with an lhs that depends on the column, or partial sums beyond 48 KiB
// of shared memory) the same kernels read one element per lane and step.
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/shape/sym_expr_search.h"
#include "codegen/cuda/cuda_codegen_impl.h"
#include "transform/schedule/matmul_schedule.h"

namespace relax::cpp_codegen {

namespace {

constexpr int kWarps = kCudaThreads / 32;
constexpr int kVector = 4;  // elements per thread along the contiguous dimension

// Whether the load `e` can be read four at a time along `along` (see MatvecPlan).
bool vector_load(const SymExpr& e, const SymVar& along) {
  const BufferNode* b = e->buffer_node();
  if (b == nullptr || b->scope != BufferScope::kGlobal || !b->strides.empty()) return false;
  const DataType dtype = b->dtype;
  if (dtype.lanes != 1 || dtype.is_bool() || (dtype.bits != 8 && dtype.bits != 16 && dtype.bits != 32)) return false;
  const size_t count = e.num_operands();
  if (count == 0 || !e.operand(count - 1).same_as(along)) return false;
  for (size_t i = 0; i + 1 < count; ++i) {
    if (mentions_var(e.operand(i), along)) return false;
  }
  return true;
}

// The loads of `e` that vector_load accepts, each once.
void collect_vector_loads(const SymExpr& e, const SymVar& along, std::vector<SymExpr>& out) {
  any_subexpr(e, [&](const SymExpr& x) {
    if (x.kind() == SymKind::kBufferLoad && vector_load(x, along)) {
      bool seen = false;
      for (const SymExpr& y : out) seen = seen || y.same_as(x);
      if (!seen) out.push_back(x);
    }
    return false;
  });
}

// The matvec's loop over the output rows: a constant count, or with a
// symbolic one (at most kMatvecMaxRows, which the launcher checks), the
// constant bound with each row guarded, so that the accumulators stay
// registers indexed by constants once unrolled.
std::string row_loop(const std::string& vi, const std::optional<int64_t>& rows, const std::string& m) {
  const std::string loop = absl::StrCat("for (int64_t ", vi, " = 0; ", vi, " < ", rows.value_or(kMatvecMaxRows),
                                        "; ++", vi, ")");
  return rows ? loop : absl::StrCat(loop, " if (", vi, " < ", m, ")");
}

}  // namespace

MatvecPlan plan_matvec(const transform::schedule::MatmulNest& nest) {
  MatvecPlan plan;
  plan.block_columns = nest.weights_k_contiguous ? kWarps : 32;
  const int64_t rows = nest.rows.as_const().value_or(kMatvecMaxRows);
  if (nest.weights_k_contiguous) {
    collect_vector_loads(nest.rhs, nest.vk, plan.loads);
    collect_vector_loads(nest.lhs, nest.vk, plan.loads);
  } else {
    const int64_t value_bytes = nest.out.dtype().bits == 64 ? 8 : 4;
    const int64_t partial_bytes = kWarps * rows * 32 * kVector * value_bytes;
    if (mentions_var(nest.lhs, nest.vj) || partial_bytes > 48 * 1024) return plan;
    collect_vector_loads(nest.rhs, nest.vj, plan.loads);
  }
  if (plan.vector() && !nest.weights_k_contiguous) plan.block_columns = 32 * kVector;
  return plan;
}

void KernelEmitter::emit_device_matmul(const ForNode& outer, bool matvec) {
  std::vector<SymVar> chain{outer.loop_var};
  for (const ForNode* inner = &outer; (inner = inner->body.as<ForNode>()) != nullptr;) {
    chain.push_back(inner->loop_var);
  }
  const std::optional<transform::schedule::MatmulNest> found = transform::schedule::match_matmul(cuda_func_, chain);
  if (!found) return fail(absl::StatusCode::kInternal, "a matmul nest that no longer matches");
  const transform::schedule::MatmulNest& nest = *found;
  auto out_it = buffers_.find(nest.out.get());
  if (out_it == buffers_.end()) {
    return fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("matmul output `", nest.out.name(), "` is not a parameter"));
  }
  const BufferInfo out = out_it->second;
  const std::string t = value_type(nest.out.dtype());
  const std::string m = names_.fresh_generated("relax_m");
  const std::string n = names_.fresh_generated("relax_n");
  const std::string k = names_.fresh_generated("relax_k");
  line(absl::StrCat("const int64_t ", m, " = ", as_int64(nest.rows).text, ";"));
  line(absl::StrCat("const int64_t ", n, " = ", as_int64(nest.cols).text, ";"));
  line(absl::StrCat("const int64_t ", k, " = ", as_int64(nest.depth).text, ";"));
  const std::string vi = names_.fresh(nest.vi.name());
  const std::string vj = names_.fresh(nest.vj.name());
  const std::string vk = names_.fresh(nest.vk.name());
  bind_var(nest.vi, vi);
  bind_var(nest.vj, vj);
  bind_var(nest.vk, vk);
  const std::string lhs = absl::StrCat("static_cast<", t, ">(", value(nest.lhs), ")");
  const std::string rhs = absl::StrCat("static_cast<", t, ">(", value(nest.rhs), ")");
  const std::string init = value(nest.init);
  if (!ok()) return;
  auto write_out = [&](const std::string& total) {
    line(store_line(out, {nest.vi, nest.vj}, absl::StrCat("(", init, ") + ", total)));
  };
  if (matvec) {
    if (const MatvecPlan plan = plan_matvec(nest); plan.vector()) return emit_device_matvec4(nest, plan, m, n, k);
  }
  if (matvec) {
    const std::optional<int64_t> rows = nest.rows.as_const();
    const int64_t cap = rows.value_or(kMatvecMaxRows);
    line("const int relax_lane = static_cast<int>(threadIdx.x % 32);");
    line("const int relax_warp = static_cast<int>(threadIdx.x / 32);");
    if (nest.weights_k_contiguous) {
      line(absl::StrCat("const int64_t ", vj, " = static_cast<int64_t>(blockIdx.x) * ", kCudaThreads / 32,
                        " + relax_warp;"));
      line(absl::StrCat("if (", vj, " >= ", n, ") return;  // the whole warp"));
    } else {
      line(absl::StrCat("__shared__ ", t, " relax_partial[", kCudaThreads / 32, "][", cap, "][32];"));
      line(absl::StrCat("const int64_t ", vj, " = static_cast<int64_t>(blockIdx.x) * 32 + relax_lane;"));
    }
    line(absl::StrCat(t, " relax_acc[", cap, "];"));
    line("#pragma unroll");
    line(absl::StrCat("for (int relax_r = 0; relax_r < ", cap, "; ++relax_r) relax_acc[relax_r] = 0;"));
    const std::string k_first = nest.weights_k_contiguous ? "relax_lane" : "relax_warp";
    const int k_step = nest.weights_k_contiguous ? 32 : kCudaThreads / 32;
    if (!nest.weights_k_contiguous) open(absl::StrCat("if (", vj, " < ", n, ")"));
    open(absl::StrCat("for (int64_t ", vk, " = ", k_first, "; ", vk, " < ", k, "; ", vk, " += ", k_step, ")"));
    line(absl::StrCat("const ", t, " relax_w = ", rhs, ";"));
    line("#pragma unroll");
    open(row_loop(vi, rows, m));
    line(absl::StrCat("relax_acc[", vi, "] += ", lhs, " * relax_w;"));
    close();
    close();
    if (!nest.weights_k_contiguous) close();
    if (nest.weights_k_contiguous) return emit_matvec_warp_sums(t, vi, row_loop(vi, rows, m), write_out);
    line("#pragma unroll");
    line(absl::StrCat("for (int relax_r = 0; relax_r < ", cap,
                      "; ++relax_r) relax_partial[relax_warp][relax_r][relax_lane] = relax_acc[relax_r];"));
    line("__syncthreads();");
    open(absl::StrCat("if (relax_warp == 0 && ", vj, " < ", n, ")"));
    open(row_loop(vi, rows, m));
    line(absl::StrCat(t, " relax_sum = relax_partial[0][", vi, "][relax_lane];"));
    line(absl::StrCat("for (int relax_q = 1; relax_q < ", kCudaThreads / 32,
                      "; ++relax_q) relax_sum += relax_partial[relax_q][", vi, "][relax_lane];"));
    write_out("relax_sum");
    close();
    close();
    return;
  }
  const int tile = kMatmulTile, depth = kMatmulDepth, sub = kMatmulTile / 16;
  line(absl::StrCat("__shared__ ", t, " relax_a_tile[", depth, "][", tile + 1, "];"));
  line(absl::StrCat("__shared__ ", t, " relax_b_tile[", depth, "][", tile + 1, "];"));
  line("const int relax_tx = static_cast<int>(threadIdx.x % 16);");
  line("const int relax_ty = static_cast<int>(threadIdx.x / 16);");
  line(absl::StrCat("const int64_t relax_col0 = static_cast<int64_t>(blockIdx.x) * ", tile, ";"));
  open(absl::StrCat("for (int64_t relax_row0 = static_cast<int64_t>(blockIdx.y) * ", tile, "; relax_row0 < ", m,
                    "; relax_row0 += static_cast<int64_t>(gridDim.y) * ", tile, ")"));
  line(absl::StrCat(t, " relax_acc[", sub, "][", sub, "];"));
  line("#pragma unroll");
  line(absl::StrCat("for (int relax_i = 0; relax_i < ", sub, "; ++relax_i)"));
  line("#pragma unroll");
  line(absl::StrCat("  for (int relax_j = 0; relax_j < ", sub, "; ++relax_j) relax_acc[relax_i][relax_j] = 0;"));
  open(absl::StrCat("for (int64_t relax_k0 = 0; relax_k0 < ", k, "; relax_k0 += ", depth, ")"));
  // The lhs tile: k fastest (X[vi, vk] is k-contiguous).
  open(absl::StrCat("for (int relax_e = static_cast<int>(threadIdx.x); relax_e < ", depth * tile, "; relax_e += ",
                    kCudaThreads, ")"));
  line(absl::StrCat("const int relax_kk = relax_e % ", depth, ", relax_r = relax_e / ", depth, ";"));
  line(absl::StrCat("const int64_t ", vi, " = relax_row0 + relax_r, ", vk, " = relax_k0 + relax_kk;"));
  line(absl::StrCat("relax_a_tile[relax_kk][relax_r] = (", vi, " < ", m, " && ", vk, " < ", k, ") ? ", lhs,
                    " : static_cast<", t, ">(0);"));
  close();
  open(absl::StrCat("for (int relax_e = static_cast<int>(threadIdx.x); relax_e < ", depth * tile, "; relax_e += ",
                    kCudaThreads, ")"));
  if (nest.weights_k_contiguous) {
    line(absl::StrCat("const int relax_kk = relax_e % ", depth, ", relax_c = relax_e / ", depth, ";"));
  } else {
    line(absl::StrCat("const int relax_c = relax_e % ", tile, ", relax_kk = relax_e / ", tile, ";"));
  }
  line(absl::StrCat("const int64_t ", vj, " = relax_col0 + relax_c, ", vk, " = relax_k0 + relax_kk;"));
  line(absl::StrCat("relax_b_tile[relax_kk][relax_c] = (", vj, " < ", n, " && ", vk, " < ", k, ") ? ", rhs,
                    " : static_cast<", t, ">(0);"));
  close();
  line("__syncthreads();");
  line("#pragma unroll");
  open(absl::StrCat("for (int relax_kk = 0; relax_kk < ", depth, "; ++relax_kk)"));
  line(absl::StrCat(t, " relax_a[", sub, "], relax_b[", sub, "];"));
  line("#pragma unroll");
  line(absl::StrCat("for (int relax_i = 0; relax_i < ", sub,
                    "; ++relax_i) relax_a[relax_i] = relax_a_tile[relax_kk][relax_ty + 16 * relax_i];"));
  line("#pragma unroll");
  line(absl::StrCat("for (int relax_j = 0; relax_j < ", sub,
                    "; ++relax_j) relax_b[relax_j] = relax_b_tile[relax_kk][relax_tx + 16 * relax_j];"));
  line("#pragma unroll");
  line(absl::StrCat("for (int relax_i = 0; relax_i < ", sub, "; ++relax_i)"));
  line("#pragma unroll");
  line(absl::StrCat("  for (int relax_j = 0; relax_j < ", sub,
                    "; ++relax_j) relax_acc[relax_i][relax_j] += relax_a[relax_i] * relax_b[relax_j];"));
  close();
  line("__syncthreads();");
  close();
  line("#pragma unroll");
  open(absl::StrCat("for (int relax_i = 0; relax_i < ", sub, "; ++relax_i)"));
  line("#pragma unroll");
  open(absl::StrCat("for (int relax_j = 0; relax_j < ", sub, "; ++relax_j)"));
  line(absl::StrCat("const int64_t ", vi, " = relax_row0 + relax_ty + 16 * relax_i, ", vj,
                    " = relax_col0 + relax_tx + 16 * relax_j;"));
  open(absl::StrCat("if (", vi, " < ", m, " && ", vj, " < ", n, ")"));
  write_out("relax_acc[relax_i][relax_j]");
  close();
  close();
  close();
  close();
}

void KernelEmitter::emit_matvec_warp_sums(const std::string& t, const std::string& vi, const std::string& rows_loop,
                                          const std::function<void(const std::string&)>& write_out) {
  line("#pragma unroll");
  open(rows_loop);
  line(absl::StrCat(t, " relax_sum = relax_acc[", vi, "];"));
  line("for (int relax_o = 16; relax_o > 0; relax_o >>= 1)");
  line("  relax_sum += __shfl_down_sync(0xffffffffu, relax_sum, relax_o);");
  open("if (relax_lane == 0)");
  write_out("relax_sum");
  close();
  close();
}

void KernelEmitter::emit_device_matvec4(const transform::schedule::MatmulNest& nest, const MatvecPlan& plan,
                                        const std::string& m, const std::string& n, const std::string& k) {
  const std::optional<int64_t> rows = nest.rows.as_const();
  const int64_t cap = rows.value_or(kMatvecMaxRows);
  const std::string t = value_type(nest.out.dtype());
  const std::string vi = var_name(nest.vi);
  const std::string vj = var_name(nest.vj);
  const std::string vk = var_name(nest.vk);
  const auto out_it = buffers_.find(nest.out.get());
  const BufferInfo out = out_it->second;
  const SymVar& along = nest.weights_k_contiguous ? nest.vk : nest.vj;
  const std::string along_name = nest.weights_k_contiguous ? vk : vj;
  const std::string first = nest.weights_k_contiguous ? "relax_k0" : "relax_j0";
  // Each vector load of `from` into an array of four (the contiguous variable at `first`), for
  // the loads `from` holds.
  auto load_vectors = [&](const SymExpr& from) {
    bind_var(along, first);
    for (size_t i = 0; i < plan.loads.size(); ++i) {
      if (!any_subexpr(from, [&](const SymExpr& x) { return x.same_as(plan.loads[i]); })) continue;
      const BufferInfo& b = buffers_.at(plan.loads[i]->buffer_node());
      std::vector<SymExpr> indices(plan.loads[i]->operands().begin(), plan.loads[i]->operands().end());
      line(absl::StrCat(storage_type(b.dtype), " relax_v", i, "[", kVector, "];"));
      line(absl::StrCat("relax_load4(relax_v", i, ", ", b.name, " + ", flat_index(b, indices), ", relax_valid);"));
    }
  };
  // `e` for element c of the four: the contiguous variable at first + c, the vector loads'
  // element c.
  auto element = [&](const SymExpr& e, int c) {
    bind_var(along, c == 0 ? first : absl::StrCat("(", first, " + ", c, ")"));
    for (size_t i = 0; i < plan.loads.size(); ++i) {
      load_overrides_[plan.loads[i].get()] = absl::StrCat("relax_v", i, "[", c, "]");
    }
    std::string text = absl::StrCat("static_cast<", t, ">(", value(e), ")");
    load_overrides_.clear();
    bind_var(along, along_name);
    return text;
  };
  // The four weights relax_w0..3 of a step (zero past the end), from their vector loads.
  auto load_weights = [&] {
    load_vectors(nest.rhs);
    for (int c = 0; c < kVector; ++c) {
      const std::string w = element(nest.rhs, c);
      line(c == 0 ? absl::StrCat("const ", t, " relax_w0 = ", w, ";")
                  : absl::StrCat("const ", t, " relax_w", c, " = relax_valid > ", c, " ? ", w, " : static_cast<", t,
                                 ">(0);"));
    }
  };
  const std::string init = value(nest.init);
  if (!ok()) return;
  auto write_out = [&](const std::string& total) {
    line(store_line(out, {nest.vi, nest.vj}, absl::StrCat("(", init, ") + ", total)));
  };
  line("const int relax_lane = static_cast<int>(threadIdx.x % 32);");
  line("const int relax_warp = static_cast<int>(threadIdx.x / 32);");
  if (nest.weights_k_contiguous) {
    // A warp per column, four consecutive k per lane.
    line(absl::StrCat("const int64_t ", vj, " = static_cast<int64_t>(blockIdx.x) * ", kWarps, " + relax_warp;"));
    line(absl::StrCat("if (", vj, " >= ", n, ") return;  // the whole warp"));
    line(absl::StrCat(t, " relax_acc[", cap, "];"));
    line("#pragma unroll");
    line(absl::StrCat("for (int relax_r = 0; relax_r < ", cap, "; ++relax_r) relax_acc[relax_r] = 0;"));
    open(absl::StrCat("for (int64_t relax_k0 = static_cast<int64_t>(relax_lane) * ", kVector, "; relax_k0 < ", k,
                      "; relax_k0 += ", 32 * kVector, ")"));
    line(absl::StrCat("const int64_t relax_valid = ", k, " - relax_k0;"));
    load_weights();
    line("#pragma unroll");
    open(row_loop(vi, rows, m));
    load_vectors(nest.lhs);
    for (int c = 0; c < kVector; ++c) {
      const std::string x = element(nest.lhs, c);
      const std::string update = absl::StrCat("relax_acc[", vi, "] += ", x, " * relax_w", c, ";");
      line(c == 0 ? update : absl::StrCat("if (relax_valid > ", c, ") ", update));
    }
    close();
    close();
    return emit_matvec_warp_sums(t, vi, row_loop(vi, rows, m), write_out);
  }
  // Four consecutive columns per lane, the warps splitting k.
  const int columns = 32 * kVector;
  line(absl::StrCat("__shared__ ", t, " relax_partial[", kWarps, "][", cap, "][", columns, "];"));
  line(absl::StrCat("const int64_t relax_j0 = (static_cast<int64_t>(blockIdx.x) * 32 + relax_lane) * ", kVector,
                    ";"));
  line(absl::StrCat("const int64_t relax_valid = ", n, " - relax_j0;"));
  line(absl::StrCat(t, " relax_acc[", cap, "][", kVector, "];"));
  line("#pragma unroll");
  line(absl::StrCat("for (int relax_r = 0; relax_r < ", cap, "; ++relax_r)"));
  line("#pragma unroll");
  line(absl::StrCat("  for (int relax_c = 0; relax_c < ", kVector, "; ++relax_c) relax_acc[relax_r][relax_c] = 0;"));
  open("if (relax_valid > 0)");
  open(absl::StrCat("for (int64_t ", vk, " = relax_warp; ", vk, " < ", k, "; ", vk, " += ", kWarps, ")"));
  load_weights();
  line("#pragma unroll");
  open(row_loop(vi, rows, m));
  line(absl::StrCat("const ", t, " relax_x = static_cast<", t, ">(", value(nest.lhs), ");"));
  for (int c = 0; c < kVector; ++c) line(absl::StrCat("relax_acc[", vi, "][", c, "] += relax_x * relax_w", c, ";"));
  close();
  close();
  close();
  line("#pragma unroll");
  line(absl::StrCat("for (int relax_r = 0; relax_r < ", cap, "; ++relax_r)"));
  line("#pragma unroll");
  line(absl::StrCat("  for (int relax_c = 0; relax_c < ", kVector, "; ++relax_c)"));
  line(absl::StrCat("    relax_partial[relax_warp][relax_r][relax_lane * ", kVector,
                    " + relax_c] = relax_acc[relax_r][relax_c];"));
  line("__syncthreads();");
  open(absl::StrCat("if (threadIdx.x < ", columns, ")"));
  line(absl::StrCat("const int64_t ", vj, " = static_cast<int64_t>(blockIdx.x) * ", columns,
                    " + static_cast<int64_t>(threadIdx.x);"));
  open(absl::StrCat("if (", vj, " < ", n, ")"));
  open(row_loop(vi, rows, m));
  line(absl::StrCat(t, " relax_sum = relax_partial[0][", vi, "][threadIdx.x];"));
  line(absl::StrCat("for (int relax_q = 1; relax_q < ", kWarps, "; ++relax_q) relax_sum += relax_partial[relax_q][", vi,
                    "][threadIdx.x];"));
  write_out("relax_sum");
  close();
  close();
  close();
}

}  // namespace relax::cpp_codegen
