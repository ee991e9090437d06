// The default CPU schedule of a kernel (schedule::schedule_cpu, relax/transform/schedule.h).
//
// Chosen from the kernel's op_pattern (the attribute annotate-op-pattern
// writes; analyze_op_pattern when it is missing), nest by nest. A nest is a
// chain of perfectly nested loops that no other loop encloses, around one
// compute block:
//   - spatial nest (the block has no reduction variable), in a kernel that is
//     elementwise, broadcast, injective or a reduction (the last stage of a
//     softmax): the loops but the innermost fused into one parallel loop (the
//     rows), the innermost vectorized -- split by the vector width first, with
//     its tail check, unless its extent is a constant that is no multiple of
//     the width (then the compiler's own remainder loop is the tail). A nest of
//     one loop is split by the width: its outer part parallel, its inner part
//     vectorized.
//   - reduction kernels (softmax, the norms, sum, max ...): the top-level
//     allocations hoisted so that the nests are neighbours; neighbouring
//     nests whose rows (the spatial loops around a reduction, or all loops
//     but the innermost of a spatial nest) have equal bounds merged row by
//     row where fuse_siblings proves it legal, so that one row's max, sum and
//     normalisation run back to back while the row is in the cache; buffers
//     that only carry one row's value from nest to nest (the row's max, sum)
//     made one-element locals of the row (localize_row_buffers); the
//     loop-invariant float subexpressions of a spatial nest under the rows
//     (a norm's rsqrt of the row's mean square) computed once per row
//     (hoist_invariants); the rows
//     fused into one parallel loop; each reduction (its loops fused into one)
//     split into vector lanes (rfactor: a vectorized lane loop, then a
//     combine), or accumulated in a local variable (cache_local) where
//     rfactor does not apply; the inner loop of each spatial nest vectorized
//     as above. Float sums are reassociated by the lane split.
// Every step is a primitive with its legality checks; a nest where a step does
// not apply keeps what it had before that nest (each primitive keeps values,
// so nothing is left half-correct). A nest that computes a matmul (read off
// its loops by match_matmul, in a kernel of any pattern but opaque) gets the
// register-blocked matmul schedule of matmul_schedule.cc instead. Opaque
// kernels are returned as they are, as are the other nests of kernels that
// are neither elementwise-like nor reductions.
#include <sched.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/support/cpu_features.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/matmul_schedule.h"
#include "transform/schedule/nests.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

/// The innermost loop of a nest vectorized (split first when useful). When
/// `outer_parallel`, the split's outer part is made parallel.
absl::StatusOr<Expr> vectorize_innermost(const Expr& func, const SymVar& var, int64_t lanes, bool outer_parallel) {
  absl::StatusOr<LoopRef> loop = find_loop_var(func, var);
  if (!loop.ok()) return loop.status();
  std::optional<int64_t> extent = loop->node->extent.as_const();
  if (extent && (*extent <= lanes || *extent % lanes != 0) && !outer_parallel) {
    return set_loop_kind(func, *loop, ForKind::kVectorized);
  }
  SymVar outer("outer"), inner("inner");  // set by split_loop
  absl::StatusOr<Expr> out = split_loop(func, *loop, lanes, &outer, &inner);
  if (!out.ok()) return out.status();
  out = with_kind(*out, inner, ForKind::kVectorized);
  if (out.ok() && outer_parallel) out = with_kind(*out, outer, ForKind::kParallel);
  return out;
}

absl::StatusOr<Expr> schedule_spatial(const Expr& func, const std::vector<SymVar>& chain, int64_t lanes) {
  if (chain.size() == 1) return vectorize_innermost(func, chain[0], lanes, /*outer_parallel=*/true);
  SymVar rows("rows");  // set by fuse_all
  absl::StatusOr<Expr> out = fuse_all(func, std::vector<SymVar>(chain.begin(), chain.end() - 1), &rows);
  if (out.ok()) out = with_kind(*out, rows, ForKind::kParallel);
  if (out.ok()) out = vectorize_innermost(*out, chain.back(), lanes, /*outer_parallel=*/false);
  return out;
}

/// The nest's matmul schedule (matmul_schedule.h); FailedPrecondition when it is no matmul.
absl::StatusOr<Expr> schedule_matmul_nest(const Expr& func, const std::vector<SymVar>& chain, int64_t lanes,
                                          const CpuScheduleOptions& options) {
  std::optional<MatmulNest> matmul = match_matmul(func, chain);
  if (!matmul) return absl::FailedPreconditionError("not a matmul");
  MatmulTiles tiles;
  tiles.lanes = lanes;
  tiles.cols = 2 * lanes;
  tiles.int8_rows = options.int8_rows;
  tiles.stream_rows = options.stream_rows;
  tiles.threads = options.threads;
  return schedule_matmul(func, *matmul, tiles);
}

absl::StatusOr<Expr> schedule_nest(const Expr& func, const std::vector<SymVar>& chain, int64_t lanes,
                                   const CpuScheduleOptions& options) {
  if (absl::StatusOr<Expr> matmul = schedule_matmul_nest(func, chain, lanes, options); matmul.ok()) return matmul;
  absl::StatusOr<LoopRef> innermost = find_loop_var(func, chain.back());
  if (!innermost.ok()) return innermost.status();
  const auto* block = innermost->node->body.as<BlockNode>();
  if (block == nullptr) return absl::FailedPreconditionError("not loops around one block");
  // The first loop bound to a reduction variable; the loops before it must be
  // bound to spatial variables only, the loops from it on to reduction ones.
  size_t first_reduction = chain.size();
  for (size_t i = 0; i < chain.size(); ++i) {
    bool spatial = false, reduction = false;
    for (const IterVar& iv : block->iter_vars) {
      if (mentions_var(iv.binding, chain[i])) (iv.type == IterType::kSpatial ? spatial : reduction) = true;
    }
    if (spatial && reduction) return absl::FailedPreconditionError("a loop bound to both kinds");
    if (reduction && first_reduction == chain.size()) first_reduction = i;
    if (first_reduction < i && spatial) return absl::FailedPreconditionError("a spatial loop inside a reduction");
  }
  if (first_reduction == chain.size()) return schedule_spatial(func, chain, lanes);
  return absl::FailedPreconditionError("a reduction outside a reduction kernel");
}

/// The loops of a reduction nest under its rows: fused into one, split into
/// vector lanes (rfactor), or, where rfactor does not apply, accumulated in a
/// local variable (cache_local).
absl::StatusOr<Expr> schedule_reduction_loops(const Expr& func, const std::vector<SymVar>& loops, int64_t lanes) {
  Expr out = func;
  SymVar loop = loops[0];
  if (loops.size() > 1) {
    absl::StatusOr<Expr> fused = fuse_all(func, loops, &loop);
    if (fused.ok()) out = *fused;
    else loop = loops.back();
  }
  absl::StatusOr<LoopRef> ref = find_loop_var(out, loop);
  if (!ref.ok()) return ref.status();
  if (lanes >= 2) {
    absl::StatusOr<Expr> split = rfactor_loop(out, *ref, lanes, nullptr);
    if (split.ok()) return split;
  }
  return cache_local_loop(out, *ref);
}

/// A reduction kernel: the rows of neighbouring nests merged where legal (a
/// softmax's max, sum and normalisation of one row run one after the other,
/// while the row is in the cache), the merged rows fused into one parallel
/// loop, the reductions split into vector lanes, the inner loops of the
/// other nests vectorized.
Expr schedule_reduction_kernel(const Expr& func, int64_t lanes) {
  Expr out = hoist_allocations(func);
  for (const RowGroup& group : group_rows(&out)) {
    if (group.members.size() > 1) out = localize_row_buffers(out, group.rows);
    for (const RowNest& nest : group.members) {
      if (!nest.reduction && nest.rows > 0) {
        if (absl::StatusOr<LoopRef> inner = find_loop_var(out, nest.chain[nest.rows]); inner.ok()) {
          out = hoist_invariants(out, *inner);
        }
      }
      absl::StatusOr<Expr> scheduled =
          nest.reduction
              ? schedule_reduction_loops(out, std::vector<SymVar>(nest.chain.begin() + nest.rows, nest.chain.end()), lanes)
              : vectorize_innermost(out, nest.chain.back(), lanes, /*outer_parallel=*/nest.rows == 0);
      if (scheduled.ok()) out = *scheduled;
    }
    if (group.rows.empty()) continue;
    SymVar rows = group.rows[0];
    absl::StatusOr<Expr> fused = group.rows.size() > 1 ? fuse_all(out, group.rows, &rows) : absl::StatusOr<Expr>(out);
    if (fused.ok()) fused = with_kind(*fused, rows, ForKind::kParallel);
    if (fused.ok()) out = *fused;
  }
  return out;
}

}  // namespace

Expr schedule_cpu(const Expr& func, int64_t vector_lanes) {
  CpuScheduleOptions options;
  options.vector_lanes = vector_lanes;
  return schedule_cpu(func, options);
}

Expr schedule_cpu(const Expr& func, const CpuScheduleOptions& options) {
  const int64_t vector_lanes = options.vector_lanes;
  if (vector_lanes < 1) return func;
  // A kernel holding a matmul nest gets the matmul schedule for it and the elementwise
  // schedule for its other nests; other reduction kernels get the row-reduction schedule.
  const std::optional<KernelNests> kernel = kernel_nests(func);
  if (!kernel) return func;
  if (kernel->row_reduction()) return schedule_reduction_kernel(func, vector_lanes);
  const OpPattern pattern = kernel->pattern;
  const bool elementwise_like = pattern == OpPattern::kElementwise || pattern == OpPattern::kBroadcast ||
                                pattern == OpPattern::kInjective || pattern == OpPattern::kReduction;
  Expr out = func;
  for (const std::vector<SymVar>& chain : kernel->nests) {
    absl::StatusOr<Expr> scheduled =
        elementwise_like ? schedule_nest(out, chain, vector_lanes, options)
                         : schedule_matmul_nest(out, chain, vector_lanes, options);
    if (scheduled.ok()) out = *scheduled;
  }
  return out;
}

namespace {

/// The CPUs this process may run on (its affinity mask), at least 1.
int64_t available_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

CpuScheduleOptions cpu_schedule_options(const Target& target) {
  CpuScheduleOptions options;
  if (target.is_cuda()) return options;
  // The features the target's flags enable: those of its ISA level (the host's for
  // "native"), and any -m<feature> flag naming a known feature.
  std::vector<std::string> features;
  const std::string level = target.isa_level();
  if (level == "native") {
    features = host_cpu_features();
  } else if (!level.empty()) {
    isa_level_features(level, &features);
  }
  for (const std::string& flag : target.isa_flags) {
    for (const CpuFeature& f : known_cpu_features()) {
      if (flag.rfind("-m", 0) == 0 && std::string_view(flag).substr(2) == f.name) features.emplace_back(f.name);
    }
  }
  auto has = [&](std::string_view name) { return std::find(features.begin(), features.end(), name) != features.end(); };
  // The rows kernels keep 4 rows x 64 columns of sums in registers: 16 zmm, more than AVX2's 16
  // ymm registers hold (twice as many).
  if (has("avx512f")) options.stream_rows = 16;
  // int8 activations change the result (within their documented bound): not with -exact-float.
  // Integer dot products: AVX-512 VNNI (64 columns a step) or AVX-VNNI on AVX2 (32).
  const bool vnni = (has("avx512vnni") && has("avx512bw") && has("avx512f")) || (has("avxvnni") && has("avx2"));
  if (vnni && !target.exact_float) options.int8_rows = 64;
  if (has("avx512bf16") && !target.exact_float) options.bf16_products = true;
  options.threads = target.threads > 0 ? target.threads : available_cpus();
  return options;
}

}  // namespace relax::transform::schedule
