// The passes schedule and schedule-cpu (relax/transform/schedule.h).
//
// schedule applies user directives (`kernel.primitive(args)`, `;`-separated)
// to the kernels they name, in order: the way to try a schedule from relax-opt
// and to write a before/after test of one. A directive naming a kernel the
// module lacks, or one that does not apply, fails the pass with the
// primitive's message. When all are applied, the vectorized loops of the
// kernels they named become vector lanes where they can (option
// vector-statements, 1; schedule::lower_vectorized_loops).
//
// schedule-cpu gives every PrimFunc its default CPU schedule
// (schedule_cpu.cc): it runs after simplify-loops in the default pipeline, on
// the fused kernels, and the kernels it cannot schedule are left as they are.
// schedule-gpu likewise gives the GPU schedule (schedule_gpu.cc) in the cuda
// target's pipeline.
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/module.h"
#include "relax/transform/schedule.h"

namespace relax::transform {
namespace {

class SchedulePass : public Pass {
 public:
  explicit SchedulePass(std::optional<std::string> given)
      : Pass(PassInfo("schedule",
                      "loop transformations named by directives (`kernel.primitive(loops)` separated by `;`; "
                      "split, reorder, fuse, parallel, vectorize, unroll, cache_local, rfactor, fuse_siblings), e.g. "
                      "--pass-option='schedule.directives=add.split(i, 16); add.vectorize(i_i)'")
                 .with_option("directives", std::string(), "the directives (none: no change)")
                 .with_option("vector-statements", int64_t{1},
                              "1: the vectorized loops become vector lanes once the directives are applied (where "
                              "their bodies allow); 0: they stay `omp simd` loops")
                 .with_statistic("applied", "directives applied")),
        given_(std::move(given)) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    const std::string& text = given_ ? *given_ : ctx.string_option(*this, "directives");
    if (text.find_first_not_of(" \t\n") == std::string::npos) return mod;
    absl::StatusOr<std::vector<schedule::Directive>> directives = schedule::parse_directives(text);
    if (!directives.ok()) return directives.status();
    IRModule out = mod;
    int64_t applied = 0;
    for (const schedule::Directive& d : *directives) {
      Expr func = out.lookup(d.kernel);
      if (!func.defined() || func.as<PrimFuncNode>() == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("schedule: no prim_func @", d.kernel, " in the module (directive `", d.primitive, "`)"));
      }
      absl::StatusOr<Expr> next = schedule::apply(func, d);
      if (!next.ok()) {
        // A kernel without a global_symbol is named by the module's name for it.
        std::string message(next.status().message());
        if (absl::StartsWith(message, "prim_func:")) message = absl::StrCat("@", d.kernel, message.substr(9));
        return absl::Status(next.status().code(), absl::StrCat("schedule: ", message));
      }
      out.add(d.kernel, *next);
      ++applied;
    }
    // The schedule is complete: vectorized loops become vector lanes (their
    // blocks were kept for the directives that followed the vectorize).
    if (ctx.int_option(*this, "vector-statements") != 0) {
      std::set<std::string> kernels;
      for (const schedule::Directive& d : *directives) kernels.insert(d.kernel);
      for (const std::string& kernel : kernels) out.add(kernel, schedule::lower_vectorized_loops(out.lookup(kernel)));
    }
    ctx.add_statistic("applied", applied);
    return out;
  }

 private:
  std::optional<std::string> given_;
};

class ScheduleCpuPass : public Pass {
 public:
  explicit ScheduleCpuPass(schedule::CpuScheduleOptions options)
      : Pass(PassInfo("schedule-cpu",
                      "default CPU schedules from each kernel's op_pattern: elementwise, broadcast and injective "
                      "nests get a parallel outer loop and a vectorized inner loop; row reductions get merged "
                      "parallel rows and reductions in vector lanes (rfactor); matmuls read off the loops get "
                      "register tiles and a weight-streaming one-row kernel (up to stream-rows rows, or int4/int8 weights "
                      "with int8-rows: calls of a rows micro-kernel per column block, the weights read once for "
                      "those rows); opaque kernels are left as they are")
                 .with_option("vector-lanes", int64_t{16}, "the width inner loops are split by")
                 // 1 by default: over a symbolic last dim the split leaves a tail check inside the
                 // omp simd loop, which g++ does not vectorise (exp over (1, 6, n, n) at n = 500:
                 // 10.4 ms as omp simd, 1.9 ms in lanes with a peeled tail, 0.84 ms with n
                 // constant; 2026-12-07). Over a constant 4096 the two measured the same.
                 .with_option("vector-statements", int64_t{1},
                              "1: the vectorized inner loops become vector lanes (ramp/broadcast statements, a "
                              "peeled tail); 0: they stay `omp simd` loops")
                 .with_option("int8-rows", int64_t{-1},
                              "int4- and int8-weight matmuls quantise their rows to int8 and use integer dot products, "
                              "at most this many rows per kernel call (0: exact float; -1: the pass's choice for "
                              "its target, 64 with AVX-512 VNNI or AVX-VNNI unless -exact-float)")
                 .with_option("stream-rows", int64_t{-1},
                              "float32/bfloat16-weight matmuls of at most this many rows read the weights once "
                              "for all of them (0: tiles and single rows; -1: the pass's choice for its target, "
                              "16 with AVX-512)")
                 .with_statistic("scheduled_kernels", "kernels whose loops changed")),
        options_(options) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    const int64_t lanes = ctx.int_option(*this, "vector-lanes");
    schedule::CpuScheduleOptions options = options_;
    options.vector_lanes = lanes;
    // -1 keeps the pass's own choice.
    for (auto [option, field] : {std::pair{"int8-rows", &schedule::CpuScheduleOptions::int8_rows},
                                 std::pair{"stream-rows", &schedule::CpuScheduleOptions::stream_rows}}) {
      const int64_t value = ctx.int_option(*this, option);
      if (value < -1) {
        return absl::InvalidArgumentError(absl::StrCat("schedule-cpu: ", option, " must be >= -1, got ", value));
      }
      if (value >= 0) options.*field = value;
    }
    if (lanes < 1) {
      return absl::InvalidArgumentError(absl::StrCat("schedule-cpu: vector-lanes must be >= 1, got ", lanes));
    }
    IRModule out = mod;
    int64_t scheduled = 0;
    for (const auto& [name, func] : mod.functions()) {
      if (func.as<PrimFuncNode>() == nullptr) continue;
      Expr next = schedule::schedule_cpu(func, options);
      if (ctx.int_option(*this, "vector-statements") != 0) next = schedule::lower_vectorized_loops(next);
      if (next.same_as(func)) continue;
      out.add(name, next);
      ++scheduled;
    }
    ctx.add_statistic("scheduled_kernels", scheduled);
    return out;
  }

 private:
  schedule::CpuScheduleOptions options_;
};

class ScheduleGpuPass : public Pass {
 public:
  ScheduleGpuPass()
      : Pass(PassInfo("schedule-gpu",
                      "default GPU schedules from each kernel's op_pattern, for the CUDA code generator: "
                      "elementwise-like nests one parallel loop (a thread per iteration); row reductions merged "
                      "rows in one parallel loop (a block per row) with local accumulators and parallel inner "
                      "loops (the block's threads); matmul nests left for the generator's tiled kernels; "
                      "opaque kernels are left as they are")
                 .with_statistic("scheduled_kernels", "kernels whose loops changed")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule out = mod;
    int64_t scheduled = 0;
    for (const auto& [name, func] : mod.functions()) {
      if (func.as<PrimFuncNode>() == nullptr) continue;
      Expr next = schedule::schedule_gpu(func);
      if (next.same_as(func)) continue;
      out.add(name, next);
      ++scheduled;
    }
    ctx.add_statistic("scheduled_kernels", scheduled);
    return out;
  }
};

}  // namespace

PassPtr create_schedule_pass() { return std::make_shared<SchedulePass>(std::nullopt); }
PassPtr create_schedule_pass(std::string directives) {
  return std::make_shared<SchedulePass>(std::move(directives));
}
PassPtr create_schedule_cpu_pass() { return std::make_shared<ScheduleCpuPass>(schedule::CpuScheduleOptions{}); }
PassPtr create_schedule_cpu_pass(const Target& target) {
  return std::make_shared<ScheduleCpuPass>(schedule::cpu_schedule_options(target));
}
PassPtr create_schedule_gpu_pass() { return std::make_shared<ScheduleGpuPass>(); }

}  // namespace relax::transform
