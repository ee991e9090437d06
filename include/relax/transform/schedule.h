// Loop transformations (schedules) on loop-level kernels.
//
//   absl::StatusOr<Expr> f = schedule::split(kernel, "i", 16);   // i -> i_o, i_i
//   f = schedule::parallel(*f, "i_o");
//   f = schedule::vectorize(*f, "i_i");
//
// Each primitive takes a PrimFunc and returns a new one that computes the same
// values (up to the reassociation of reductions), or an InvalidArgument naming
// the loop and why the transformation does not apply. Loops are named by their
// loop variables as the text format prints them (relax/ir/printer.h): the
// printer makes names unique within a kernel (the second loop `i` prints as
// `i_1`), and those printed names are what the primitives accept (loops that
// print alike, such as sibling loops sharing one variable in parsed text, are
// `j`, `j#2`, ... in print order). New loops are named after the ones they
// come from:
//   split(i, f)       -> i_o (outer, extent ceildiv(n, f)) and i_i (inner, extent f);
//                        the body runs under `if i_o * f + i_i < n` unless n is
//                        provably a multiple of f (simplify-loops also removes
//                        the check wherever the Analyzer proves it);
//   fuse(i, j)        -> i_j (extent n * m; i = floordiv(i_j, m), j = floormod(i_j, m));
//   cache_local(k)    -> the reduction under loop k accumulates into a local
//                        buffer `<block>_acc` of one element, initialised before
//                        k and written to the output once after it;
//   rfactor(k, L)     -> k_l (the lane loops, vectorized), k_o (extent floordiv(m, L)),
//                        k_c (the combine of the lanes, unrolled), k_t (the tail,
//                        extent floormod(m, L)); buffers `<block>_rf` (L lanes)
//                        and `<block>_acc`;
//   fuse_siblings(i, j) -> i (j's body runs after i's in each iteration).
//
// Legality. A loop may be parallelised or vectorised when every compute block
// under it binds the loop variable only to spatial iteration variables, and
// every store under it is inside a compute block or into storage allocated
// under the loop (each iteration then writes its own elements). reorder needs
// the named loops in one perfectly nested chain with extents that do not
// depend on each other, each loop bound to spatial or to reduction iteration
// variables but not both, and each reduction block writing at indices of its
// spatial variables only.
//
// The passes `schedule` (directives given as an option, for users and tests)
// and `schedule-cpu` (a default schedule per kernel from its op_pattern; in
// the default pipeline after lower-alloc) apply these primitives to the
// kernels of a module (their factories are at the end of this header);
// `schedule-gpu` does for the cuda target what schedule-cpu does for the CPU
// (the loop shapes the CUDA code generator maps: docs/cuda.md). From
// the command line, print the kernel to see its loop names, then:
//   relax-opt model.relax --passes=legalize-ops,schedule
//     --pass-option='schedule.directives=add.split(i1, 16); add.vectorize(i1_i)'
// (one command line)
// A reduction loop is never vectorized (the emitted `#pragma omp simd` has no
// reduction clause): reduce into a local accumulator (cache_local), or into
// vector lanes (rfactor, whose lane loop is vectorized), instead.
//
// Vector lanes. When a schedule is complete, lower_vectorized_loops replaces
// each vectorized loop of a constant lane count (a power of two up to 64)
// whose body is one store with indices affine in its variable (stride 1 in the
// last dimension; loads independent of it are broadcast) by one vector
// statement (ramp/broadcast values, relax/shape/sym_expr.h); a split's tail
// check `if i_o * f + i_i < n` is peeled in place (full vectors where the last
// lane is in range, the loop as it was elsewhere). Loops it cannot lower (an
// if/else, several statements, a transpose or stride-2 access, float16
// elements, a symbolic extent) stay `#pragma omp simd` loops. vectorize itself
// only marks the loop (its compute block stays, so reorder, fuse and the other
// primitives still apply after it); the schedule pass lowers after its
// directives, schedule-cpu when its option vector-statements is 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"
#include "relax/support/target.h"
#include "relax/transform/pass.h"

namespace relax::transform::schedule {

/// The names of the loops of `func` as the printer writes them, in pre-order.
std::vector<std::string> loop_names(const Expr& func);

/// `loop` split into an outer loop of ceildiv(extent, factor) iterations and an
/// inner one of `factor`, with a tail check when needed. A parallel loop keeps
/// its kind on the outer loop, a vectorized or unrolled one on the inner.
absl::StatusOr<Expr> split(const Expr& func, std::string_view loop, int64_t factor);

/// The loops named, which must lie in one perfectly nested chain, reordered:
/// the i-th position (from the outside) among their current positions gets
/// `loops[i]`. Loops of the chain that are not named keep their positions.
absl::StatusOr<Expr> reorder(const Expr& func, const std::vector<std::string>& loops);

/// `outer` and `inner` (the whole body of `outer`) made one loop, of the kind
/// the two share (serial when they differ).
absl::StatusOr<Expr> fuse(const Expr& func, std::string_view outer, std::string_view inner);

/// `loop` marked parallel (an OpenMP loop in generated C++).
absl::StatusOr<Expr> parallel(const Expr& func, std::string_view loop);
/// `loop` marked vectorized (`#pragma omp simd`, or vector lanes once
/// lower_vectorized_loops runs).
absl::StatusOr<Expr> vectorize(const Expr& func, std::string_view loop);
/// Every vectorized loop of `func` lowered to vector lanes where its body
/// allows (see "Vector lanes" above); the others are kept. Never fails; the
/// last step of a schedule (its compute blocks are inlined into the lanes).
Expr lower_vectorized_loops(const Expr& func);
/// `loop` marked unrolled. Always legal.
absl::StatusOr<Expr> unroll(const Expr& func, std::string_view loop);

/// The reduction under the reduction loop `loop` accumulated in a local
/// one-element buffer: initialised before the loop (the block's init, or the
/// output element's current value when the block has none), updated in the
/// loop, written to the output element once after it. The loop's body must be
/// loops around one compute block whose stores and loads of its output all use
/// one index, of spatial iteration variables bound outside `loop`.
absl::StatusOr<Expr> cache_local(const Expr& func, std::string_view loop);

/// The reduction under the reduction loop `loop` split into `lanes` partial
/// reductions (an rfactor into vector lanes): a local buffer `<block>_rf` of
/// `lanes` elements starts from the combiner's identity, lane l accumulates
/// every lanes-th element (its loop `<loop>_l` vectorized: the lanes carry no
/// dependence), then the partials, in lane order, and the tail of
/// extent mod lanes elements are combined into a local accumulator after the
/// block's init, written to the output once. The combiner is read off the
/// block's update `out[idx] = c(out[idx], x)` (or c(x, out[idx])): +, *, min
/// or max. Float sums and products are reassociated (results may differ in
/// the last bits); the rest keep their values exactly. Besides cache_local's
/// conditions, the loop's body must be the block itself and the block's
/// reduction variables bound to this loop alone.
absl::StatusOr<Expr> rfactor(const Expr& func, std::string_view loop, int64_t lanes);

/// The loop `second`, which follows `first` in one sequence with the same
/// bounds, merged into it: each iteration runs `first`'s body, then
/// `second`'s. Legal when every buffer that one stores into and both access is
/// indexed by the loop's own variable in one position in all their accesses
/// (so iteration v of either touches only elements of index v there).
absl::StatusOr<Expr> fuse_siblings(const Expr& func, std::string_view first, std::string_view second);

/// One directive of the `schedule` pass: `split(i, 16)`, `reorder(j, i)`,
/// `fuse(i, j)`, `parallel(i)`, `vectorize(i)`, `unroll(i)`, `cache_local(k)`,
/// `rfactor(k, 16)`, `fuse_siblings(i, i_1)`.
struct Directive {
  std::string kernel;              ///< the module's name of the PrimFunc
  std::string primitive;           ///< split, reorder, fuse, parallel, vectorize, unroll, cache_local, rfactor, fuse_siblings
  std::vector<std::string> loops;  ///< the loops named
  int64_t factor = 0;              ///< split's factor, rfactor's lanes
};

/// Parses directives: `kernel.primitive(args)` separated by `;`, e.g.
/// `add.split(i, 16); add.parallel(i_o); add.vectorize(i_i)`. Errors name the
/// column and what was expected.
absl::StatusOr<std::vector<Directive>> parse_directives(std::string_view text);

/// `func` with `directive` applied (its kernel name is only used in errors).
absl::StatusOr<Expr> apply(const Expr& func, const Directive& directive);

/// The default CPU schedule of one kernel, chosen from its op_pattern
/// attribute (or, when it has none, from analyze_op_pattern):
///   elementwise, broadcast, injective: in each loop nest of spatial loops
///     around one block, the loops but the innermost are fused and made
///     parallel, and the innermost is split by `vector_lanes` with its inner
///     part vectorized (one loop: its outer part is parallel);
///   reduction: in each nest, the spatial loops around the reduction are fused
///     and made parallel and the reduction is split into vector lanes (rfactor),
///     or, where rfactor does not apply, accumulates in a local variable
///     (cache_local); nests without a reduction are scheduled as above.
///   matmul (a nest read off its loops as out[i, j] += lhs(i, k) * rhs(k, j),
///     rhs any expression of k and j such as a fused dequantisation; any kernel
///     pattern but opaque): register tiles of 8 then 4 rows over a packed panel
///     of rhs, the remaining rows one at a time by a weight-streaming kernel
///     parallel over column blocks (the target-dependent rows kernels: below).
/// Nests of other shapes, and kernels of other patterns, are left as they are.
/// Never fails: a nest a step does not apply to keeps its loops.
Expr schedule_cpu(const Expr& func, int64_t vector_lanes = 16);

/// The choices of the default CPU schedule that depend on the target.
struct CpuScheduleOptions {
  int64_t vector_lanes = 16;  ///< the width inner loops are split by
  /// > 0: a matmul against group-wise int4 or int8 weights (a fused dequantisation) quantises
  /// its rows to int8 per group of 32 at run time and multiplies them with integer dot products
  /// (AVX-512 VNNI, or AVX-VNNI on AVX2), at most this many rows per kernel call: the weights are read once per that
  /// many rows (a decode step's rows are one call); the result differs from the float product
  /// by the activations' rounding. 0: the exact float kernels.
  int64_t int8_rows = 0;
  /// > 0: a matmul against float32 or bfloat16 weights W[k, j] of at most this many rows runs
  /// as the relax_f32_rows / relax_bf16_rows micro-kernels: one pass over the weights for all
  /// the rows (float products, exact as the other kernels). 0: register tiles and single rows.
  int64_t stream_rows = 0;
  /// The threads the kernels' parallel loops will have (0: unknown): the rows kernels' column
  /// blocks are sized to one thread's share of the columns (long runs of each row of weights).
  int64_t threads = 0;
  /// The target has bfloat16 dot products (AVX512-BF16) and exact_float is off: the default
  /// pipeline lets library dispatch turn bfloat16-weight matmuls of many rows into bf16 x bf16
  /// library products (DispatchLibraryOptions::bf16_products).
  bool bf16_products = false;
};
/// schedule_cpu with the target-dependent choices of `options`.
Expr schedule_cpu(const Expr& func, const CpuScheduleOptions& options);
/// The choices for `target`: int8_rows 64 where its ISA flags enable AVX-512 VNNI and BW, or
/// AVX-VNNI and AVX2 (-march=native on such a CPU; -march=x86-64-v4 alone does not), and
/// exact_float is off, else 0;
/// stream_rows 16 where they enable AVX-512 F (exact float products, -exact-float or not), else
/// 0; threads: the target's, or (0, the process's budget) the CPUs this process may run on;
/// bf16_products where they enable AVX512-BF16 and exact_float is off.
CpuScheduleOptions cpu_schedule_options(const Target& target);

/// The default GPU schedule of one kernel (the loop shapes it leaves are the
/// contract with the CUDA code generator, relax/codegen/cuda_codegen.h):
/// elementwise-like nests, and the spatial loops around any other non-matmul
/// reduction, fused into one parallel loop (one thread per iteration); row
/// reductions (op_pattern `reduction`) merged row by row, their rows fused into
/// one parallel loop (one block per row), each reduction in a one-element local,
/// the spatial loops of a row parallel (the block's threads); matmul nests left
/// as they are (the code generator tiles them). Never vector lanes or
/// micro-kernels.
/// Never fails: a nest a step does not apply to keeps its loops.
Expr schedule_gpu(const Expr& func);

}  // namespace relax::transform::schedule

namespace relax::transform {

/// schedule: the directives of its option `directives` (parse_directives's
/// syntax) applied to the module's kernels, in order; an error names the
/// directive and the kernel. From relax-opt:
///   --passes=schedule --pass-option='schedule.directives=add.split(i, 16); add.vectorize(i_i)'
PassPtr create_schedule_pass();
/// As above, with the directives given here (the option is ignored).
PassPtr create_schedule_pass(std::string directives);
/// schedule-cpu: every kernel given its default CPU schedule
/// (schedule::schedule_cpu); option `vector-lanes` (16), option
/// `vector-statements` (0): 1 lowers the vectorized loops to vector lanes
/// (schedule::lower_vectorized_loops), 0 leaves them `omp simd` loops; options
/// `int8-rows` and `stream-rows` override CpuScheduleOptions' fields (-1: the choice the pass
/// was created with, 0 by default).
PassPtr create_schedule_cpu_pass();
/// As above, with the choices of cpu_schedule_options(target) (what the default pipeline runs).
PassPtr create_schedule_cpu_pass(const Target& target);
/// schedule-gpu: every kernel given its default GPU schedule
/// (schedule::schedule_gpu), for the cuda target's pipeline instead of
/// schedule-cpu.
PassPtr create_schedule_gpu_pass();

}  // namespace relax::transform
