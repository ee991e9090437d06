// The CUDA mode of KernelEmitter, host side: the launcher after the argument
// checks (cpp_codegen_args.cc, unchanged) and the choice of each top-level
// nest's mapping.
//
// The launcher first checks that the runtime supports CUDA (a null
// cuda_launch: "this runtime has no CUDA support"), then walks the body: a
// let whose value loads nothing is computed on the host (and passed on), a
// top-level allocation of a non-local buffer is an error (device memory comes
// from parameters: lift-workspace makes such scratch one), and every other
// statement is one unit: a device function, launched through
// api->cuda_launch in program order (the launch boundary is the barrier
// between nests). A unit's parameters are every value the host has bound
// (buffer pointers, symbolic variables, stride locals), in name order, so
// the device function sees the names its expressions use.
//
// Mappings (schedule_gpu.cc writes the loops they expect):
//   kGridStride  a parallel loop: grid-stride over blockIdx.x * blockDim.x +
//                threadIdx.x; 256 threads, ceil(extent / 256) blocks (at most
//                65,536).
//   kRows        a parallel loop of a `reduction` kernel whose body
//                cooperates (a parallel loop or a reduction into a one-element
//                local of the row, coop_legal): one block per row (at most
//                65,536 blocks, striding the rows), its threads running the
//                row's stages (cuda_device_emit.cc).
//   kBlock       another statement whose top cooperates (a whole-tensor
//                reduction): one block.
//   kMatmul      a matmul nest (match_matmul): 64 x 64 output tiles, one
//                block each (cuda_matmul_emit.cc).
//   kMatvec      the same with a constant row count of at most 8. A symbolic
//                row count gets both device functions, the launcher taking the
//                matvec for at most 8 rows (batched decode) and the tiles beyond.
//   kThread      anything else: one thread -- correct, but slow.
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/cuda/cuda_codegen_impl.h"
#include "codegen/cuda/cuda_region.h"
#include "relax/transform/op_pattern.h"
#include "transform/schedule/matmul_schedule.h"

namespace relax::cpp_codegen {
namespace {

bool is_number(const std::string& text) {
  int64_t v = 0;
  return absl::SimpleAtoi(text, &v);
}

/// The loop variables of the perfectly nested loops from `loop` down.
std::vector<SymVar> loop_chain(const ForNode& loop) {
  std::vector<SymVar> chain{loop.loop_var};
  const ForNode* inner = &loop;
  while ((inner = inner->body.as<ForNode>()) != nullptr) chain.push_back(inner->loop_var);
  return chain;
}

const char* mapping_name(int mapping) {
  static const char* const kNames[] = {"one thread", "grid-stride loop", "one block per row",
                                       "one block", "tiled shared-memory matmul", "matvec"};
  return kNames[mapping];
}

}  // namespace

void KernelEmitter::emit_cuda_body(const Stmt& s) {
  line("const RelaxRuntimeApi* relax_api = __atomic_load_n(&relax_runtime_api, __ATOMIC_ACQUIRE);");
  line(absl::StrCat("if (relax_api == nullptr || relax_api->cuda_launch == nullptr) ",
                    fail_stmt("this runtime has no CUDA support", {})));
  line("[[maybe_unused]] const uint64_t relax_image_size =");
  line("    static_cast<uint64_t>(relax_cuda_image_end - relax_cuda_image_begin);");
  emit_cuda_stmt(s);
}

void KernelEmitter::emit_cuda_stmt(const Stmt& s) {
  if (!ok() || !s.defined()) return;
  if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->stmts) emit_cuda_stmt(x);
    return;
  }
  if (const auto* let = s.as<LetStmtNode>(); let != nullptr && !loads_memory(let->value)) {
    if (declare_let(*let)) emit_cuda_stmt(let->body);
    return;
  }
  if (const auto* alloc = s.as<AllocateNode>(); alloc != nullptr && alloc->buffer->scope != BufferScope::kLocal) {
    fail(absl::StatusCode::kUnimplemented,
         absl::StrCat("top-level allocation of buffer `", alloc->buffer.name(), "` (scope ",
                      std::string(buffer_scope_name(alloc->buffer->scope)),
                      ") in a CUDA kernel: device memory comes from parameters (lift-workspace makes it one)"));
    return;
  }
  emit_cuda_unit(s);
}

int KernelEmitter::coop_threads(const Stmt& s) const {
  int64_t widest = 0;
  bool symbolic = false;
  std::function<void(const Stmt&)> visit = [&](const Stmt& x) {
    if (!x.defined()) return;
    if (const auto* seq = x.as<SeqStmtNode>()) {
      for (const Stmt& y : seq->stmts) visit(y);
    } else if (const auto* alloc = x.as<AllocateNode>()) {
      visit(alloc->body);
    } else if (const auto* let = x.as<LetStmtNode>()) {
      visit(let->body);
    } else if (const auto* loop = x.as<ForNode>()) {
      if (std::optional<int64_t> c = loop->extent.as_const()) widest = std::max(widest, *c);
      else symbolic = true;
    }
  };
  visit(s);
  if (symbolic || widest >= kCudaThreads) return kCudaThreads;
  return static_cast<int>(std::max<int64_t>(32, (widest + 31) / 32 * 32));
}

KernelEmitter::CudaMapping KernelEmitter::cuda_mapping(const Stmt& s) {
  const auto* loop = s.as<ForNode>();
  std::vector<const BufferNode*> locals;
  // (Legalization marks a matmul's row loop parallel already.)
  if (loop != nullptr) {
    if (std::optional<transform::schedule::MatmulNest> nest =
            transform::schedule::match_matmul(cuda_func_, loop_chain(*loop))) {
      std::optional<int64_t> rows = nest->rows.as_const();
      return rows && *rows <= kMatvecMaxRows ? CudaMapping::kMatvec : CudaMapping::kMatmul;
    }
  }
  if (loop != nullptr && loop->for_kind == ForKind::kParallel) {
    const transform::OpPattern pattern =
        transform::op_pattern_of(func_).value_or(transform::analyze_op_pattern(func_));
    if (pattern == transform::OpPattern::kReduction && has_coop_stage(loop->body, locals)) {
      locals.clear();
      if (coop_legal(loop->body, locals)) return CudaMapping::kRows;
    }
    return CudaMapping::kGridStride;
  }
  if (has_coop_stage(s, locals)) {
    locals.clear();
    if (coop_legal(s, locals)) return CudaMapping::kBlock;
  }
  return CudaMapping::kThread;
}

void KernelEmitter::emit_cuda_unit(const Stmt& s) {
  const CudaMapping mapping = cuda_mapping(s);
  const std::string base = sanitize_identifier(kernel_name_);
  open("");
  // The launch's dims, computed here from the bound variables.
  std::string guard;
  std::string grid[3] = {"1", "1", "1"};
  std::string matvec_grid[3] = {"1", "1", "1"};  // a symbolic-row matmul's other kernel
  bool either = false;
  int threads = 1;
  const auto* loop = s.as<ForNode>();
  auto host_value = [&](const std::string& suffix, const SymExpr& e) {
    const std::string name = names_.fresh_generated(absl::StrCat("relax_", base, "_", suffix));
    line(absl::StrCat("const int64_t ", name, " = ", as_int64(e).text, ";"));
    return name;
  };
  auto blocks = [](const std::string& count, int per_block, int64_t cap) {
    return absl::StrCat("std::min<int64_t>((", count, " + ", per_block - 1, ") / ", per_block, ", ", cap, ")");
  };
  std::string rows;
  switch (mapping) {
    case CudaMapping::kThread: threads = 1; break;
    case CudaMapping::kGridStride: {
      const std::string n = host_value("extent", loop->extent);
      guard = n + " > 0";
      threads = kCudaThreads;
      grid[0] = blocks(n, kCudaThreads, 65536);
      break;
    }
    case CudaMapping::kRows: {
      const std::string n = host_value("rows", loop->extent);
      guard = n + " > 0";
      threads = coop_threads(loop->body);
      grid[0] = absl::StrCat("std::min<int64_t>(", n, ", 65536)");
      break;
    }
    case CudaMapping::kBlock: threads = coop_threads(s); break;
    case CudaMapping::kMatmul:
    case CudaMapping::kMatvec: {
      const transform::schedule::MatmulNest nest = *transform::schedule::match_matmul(cuda_func_, loop_chain(*loop));
      rows = host_value("rows", nest.rows);
      const std::string n = host_value("cols", nest.cols);
      guard = absl::StrCat(rows, " > 0 && ", n, " > 0");
      threads = kCudaThreads;
      matvec_grid[0] = blocks(n, plan_matvec(nest).block_columns, INT32_MAX);
      if (mapping == CudaMapping::kMatmul) {
        grid[0] = blocks(n, kMatmulTile, INT32_MAX);
        grid[1] = blocks(rows, kMatmulTile, 65535);
        either = !nest.rows.as_const().has_value();
      } else {
        grid[0] = matvec_grid[0];
      }
      break;
    }
  }
  if (!ok()) return;
  if (!guard.empty()) open(absl::StrCat("if (", guard, ")"));
  if (either) {
    open(absl::StrCat("if (", rows, " <= ", kMatvecMaxRows, ")"));
    emit_cuda_launch(s, CudaMapping::kMatvec, matvec_grid, threads);
    close();
    open("else");
    emit_cuda_launch(s, CudaMapping::kMatmul, grid, threads);
    close();
  } else {
    emit_cuda_launch(s, mapping, grid, threads);
  }
  if (!guard.empty()) close();
  close();
}

void KernelEmitter::emit_cuda_launch(const Stmt& s, CudaMapping mapping, const std::string (&grid)[3], int threads) {
  const std::string fn = cuda_->names.fresh_generated("relax_cuda_" + sanitize_identifier(kernel_name_));
  line(absl::StrCat("// ", fn, ": ", mapping_name(static_cast<int>(mapping))));
  const auto* loop = s.as<ForNode>();
  // The parameters: every value bound on the host, by name.
  std::map<std::string, std::string> params;  // name -> C++ type
  for (const auto& [var, name] : vars_) params[name] = value_type(var.dtype());
  for (const PrimParam& p : func_.params) {
    if (!p.buffer) continue;
    const BufferInfo& info = buffers_.at(p.buffer->get());
    params[info.name] = storage_type(info.dtype) + "*";
    for (const std::string& stride : info.strides) {
      if (!is_number(stride) && !params.contains(stride)) params[stride] = "int64_t";
    }
  }
  std::vector<std::string> device_params, host_params;
  for (const auto& [name, type] : params) {
    device_params.push_back(absl::StrCat(type, " ", name));
    host_params.push_back(absl::StrCat("const_cast<void*>(static_cast<const void*>(&", name, "))"));
  }
  // The device function, written with the host's names for those values.
  const SymVarMap<std::string> saved_vars = vars_;
  const auto saved_buffers = buffers_;
  std::string host_text = std::move(out_);
  const int host_indent = indent_;
  out_.clear();
  indent_ = 1;
  device_ = true;
  switch (mapping) {
    case CudaMapping::kThread:
      line("if (blockIdx.x != 0 || threadIdx.x != 0) return;");
      emit_stmt(s);
      break;
    case CudaMapping::kGridStride:
      emit_strided_for(*loop, "static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x",
                       "static_cast<int64_t>(gridDim.x) * blockDim.x", false);
      break;
    case CudaMapping::kRows: emit_strided_for(*loop, "blockIdx.x", "gridDim.x", true); break;
    case CudaMapping::kBlock: emit_device_coop(s); break;
    case CudaMapping::kMatmul: emit_device_matmul(*loop, false); break;
    case CudaMapping::kMatvec: emit_device_matmul(*loop, true); break;
  }
  device_ = false;
  const std::string body = std::move(out_);
  out_ = std::move(host_text);
  indent_ = host_indent;
  vars_ = saved_vars;
  buffers_ = saved_buffers;
  coop_locals_.clear();
  if (!ok()) return;
  absl::StrAppend(&cuda_->device_functions, "\nextern \"C\" __global__ void __launch_bounds__(", threads, ") ", fn,
                  "(", absl::StrJoin(device_params, ", "), ") {\n  // kernel ", comment_text(kernel_name_), ": ",
                  mapping_name(static_cast<int>(mapping)), "\n", body, "}\n");
  cuda_->kernel_names.push_back(fn);
  // The launch.
  line(absl::StrCat("const uint32_t relax_grid[3] = {static_cast<uint32_t>(", grid[0], "), static_cast<uint32_t>(",
                    grid[1], "), static_cast<uint32_t>(", grid[2], ")};"));
  line(absl::StrCat("const uint32_t relax_block[3] = {", threads, ", 1, 1};"));
  std::string params_arg = "nullptr";
  if (!host_params.empty()) {
    line(absl::StrCat("void* relax_params[] = {", absl::StrJoin(host_params, ", "), "};"));
    params_arg = "relax_params";
  }
  line(absl::StrCat("if (relax_api->cuda_launch(relax_cuda_image_begin, relax_image_size, \"", fn,
                    "\", relax_grid, relax_block, 0, ", params_arg, ", error, error_capacity) != 0) return 1;"));
}

}  // namespace relax::cpp_codegen
