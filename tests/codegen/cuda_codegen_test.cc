// Golden structure of the CUDA code generator's output (generate_cuda, no
// device and no NVRTC needed): the elementwise kernel is a grid-stride loop;
// a row reduction is one block per row whose threads combine partials with
// warp shuffles (relax_block_reduce over __shfl_down_sync); a softmax is one
// device function (its max, sum and normalisation merged per row); a matmul
// gets shared-memory tiles with its weight expression (an int4
// dequantisation) inlined into the tile loads, a matmul of at most 8 rows the
// matvec kernel; a statement without a parallel loop runs on one thread; the
// device source includes nothing; the host unit checks its arguments and
// launches through cuda_launch; a target of another kind is refused.
#include <gtest/gtest.h>

#include <string>

#include "cuda_test_util.h"
#include "relax/codegen/cuda_codegen.h"
#include "relax/ir/parser.h"

namespace relax {
namespace {

using testing::cuda_test_family;
using testing::cuda_test_lowered;
using testing::cuda_test_target;

CudaUnit cuda_golden_unit(const std::string& family) {
  absl::StatusOr<CudaUnit> unit = generate_cuda(cuda_test_lowered(cuda_test_family(family)), cuda_test_target("sm_90"));
  EXPECT_TRUE(unit.ok()) << unit.status();
  return unit.ok() ? *unit : CudaUnit();
}

bool cuda_golden_has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

/// The device functions' part of the source (after the prelude).
std::string cuda_golden_functions(const CudaUnit& unit) {
  const size_t at = unit.device_source.find("extern \"C\" __global__");
  return at == std::string::npos ? std::string() : unit.device_source.substr(at);
}

TEST(CudaCodegen, ElementwiseIsAGridStrideLoop) {
  const CudaUnit unit = cuda_golden_unit("elementwise");
  ASSERT_EQ(unit.kernel_names.size(), 1u);
  const std::string fns = cuda_golden_functions(unit);
  EXPECT_TRUE(cuda_golden_has(fns, "grid-stride loop")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "static_cast<int64_t>(gridDim.x) * blockDim.x")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "relax_exp(")) << fns;
  EXPECT_FALSE(cuda_golden_has(fns, "__syncthreads")) << fns;
  EXPECT_FALSE(cuda_golden_has(unit.device_source, "#include")) << unit.device_source;
}

TEST(CudaCodegen, RowReductionIsOneBlockPerRowWithWarpShuffles) {
  const CudaUnit sum = cuda_golden_unit("sum");
  const std::string fns = cuda_golden_functions(sum);
  EXPECT_TRUE(cuda_golden_has(fns, "one block per row")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, " = static_cast<int64_t>(blockIdx.x); ")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "+= static_cast<int64_t>(gridDim.x)")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "relax_block_reduce<relax_combine_add, float>")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "+= static_cast<int64_t>(blockDim.x)")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "if (threadIdx.x == 0)")) << fns;  // the row's result, stored once
  EXPECT_TRUE(cuda_golden_has(sum.device_source, "__shfl_down_sync(0xffffffffu")) << sum.device_source;
  const std::string max = cuda_golden_functions(cuda_golden_unit("max"));
  EXPECT_TRUE(cuda_golden_has(max, "relax_block_reduce<relax_combine_max, float>")) << max;
  EXPECT_TRUE(cuda_golden_has(max, "= -HUGE_VALF;")) << max;
}

TEST(CudaCodegen, SoftmaxIsOneDeviceFunctionWithBarriersBetweenStages) {
  const CudaUnit unit = cuda_golden_unit("softmax");
  ASSERT_EQ(unit.kernel_names.size(), 1u) << cuda_golden_functions(unit);
  const std::string fns = cuda_golden_functions(unit);
  EXPECT_TRUE(cuda_golden_has(fns, "one block per row")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "relax_combine_max")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "relax_combine_add")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "__syncthreads();")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, " = static_cast<int64_t>(threadIdx.x); ")) << fns;
}

TEST(CudaCodegen, NormsAreRowKernels) {
  for (const std::string family : {"layer_norm", "rms_norm"}) {
    const CudaUnit unit = cuda_golden_unit(family);
    const std::string fns = cuda_golden_functions(unit);
    EXPECT_TRUE(cuda_golden_has(fns, "one block per row")) << family << "\n" << fns;
    EXPECT_TRUE(cuda_golden_has(fns, "relax_block_reduce<relax_combine_add, float>")) << family << "\n" << fns;
  }
}

TEST(CudaCodegen, MatmulUsesSharedMemoryTiles) {
  const std::string fns = cuda_golden_functions(cuda_golden_unit("matmul"));
  EXPECT_TRUE(cuda_golden_has(fns, "tiled shared-memory matmul")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "__shared__ float relax_a_tile[16][65];")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "__shared__ float relax_b_tile[16][65];")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "relax_acc[relax_i][relax_j] += relax_a[relax_i] * relax_b[relax_j];")) << fns;
}

TEST(CudaCodegen, DequantisedWeightIsInlinedIntoTheTileLoads) {
  const std::string fns = cuda_golden_functions(cuda_golden_unit("matmul_int4"));
  EXPECT_TRUE(cuda_golden_has(fns, "tiled shared-memory matmul")) << fns;
  const size_t load = fns.find("relax_b_tile[relax_kk][relax_c] = (");
  ASSERT_NE(load, std::string::npos) << fns;
  const std::string line = fns.substr(load, fns.find('\n', load) - load);
  EXPECT_TRUE(cuda_golden_has(line, "relax_shift_right<int32_t>(")) << line;
  EXPECT_FALSE(cuda_golden_has(fns, "relax_cuda_main_1")) << fns;  // no separate dequantisation kernel
  const std::string bf16 = cuda_golden_functions(cuda_golden_unit("matmul_bf16"));
  EXPECT_TRUE(cuda_golden_has(bf16, "relax_bfloat16_load(")) << bf16;
  EXPECT_TRUE(cuda_golden_has(bf16, "relax_b_tile")) << bf16;
}

TEST(CudaCodegen, SmallRowCountGetsTheMatvecKernel) {
  const std::string kn = cuda_golden_functions(cuda_golden_unit("matvec_int4"));
  EXPECT_TRUE(cuda_golden_has(kn, ": matvec\n")) << kn;
  EXPECT_FALSE(cuda_golden_has(kn, "relax_a_tile")) << kn;
  // W[k, n]: four columns per lane, read by one vector load per weight row.
  EXPECT_TRUE(cuda_golden_has(kn, "__shared__ float relax_partial[8][1][128];")) << kn;
  EXPECT_TRUE(cuda_golden_has(kn, "relax_load4(relax_v0, p + ")) << kn;
  EXPECT_TRUE(cuda_golden_has(kn, "relax_shift_right<int32_t>(")) << kn;
  // W[n, k]: a warp per column, lanes along k, combined by shuffles.
  const std::string nk = cuda_golden_functions(cuda_golden_unit("matvec_linear"));
  EXPECT_TRUE(cuda_golden_has(nk, ": matvec\n")) << nk;
  EXPECT_TRUE(cuda_golden_has(nk, "__shfl_down_sync(0xffffffffu, relax_sum")) << nk;
  EXPECT_TRUE(cuda_golden_has(nk, "float relax_acc[2];")) << nk;
}

// A symbolic row count (batched decode and prefill share one kernel): both
// device functions, the launcher taking the matvec for at most 8 rows, whose
// rows are a constant bound with each one guarded.
TEST(CudaCodegen, SymbolicRowCountGetsBothKernelsChosenAtLaunch) {
  const CudaUnit unit = cuda_golden_unit("linear");
  ASSERT_EQ(unit.kernel_names.size(), 2u);
  const std::string fns = cuda_golden_functions(unit);
  EXPECT_TRUE(cuda_golden_has(fns, ": matvec\n")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, ": tiled shared-memory matmul\n")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "float relax_acc[8];")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "< 8; ++vi0) if (vi0 < relax_m) {")) << fns;
  const std::string& host = unit.host_source;
  const size_t choice = host.find("_rows <= 8) {");
  ASSERT_NE(choice, std::string::npos) << host;
  const size_t matvec = host.find("\"" + unit.kernel_names[0] + "\"", choice);
  const size_t tiled = host.find("\"" + unit.kernel_names[1] + "\"", choice);
  EXPECT_NE(matvec, std::string::npos) << host;
  EXPECT_NE(tiled, std::string::npos) << host;
  EXPECT_LT(matvec, tiled) << host;
  EXPECT_NE(host.find("else {", matvec), std::string::npos) << host;
}

TEST(CudaCodegen, HostLauncherChecksArgumentsAndCallsCudaLaunch) {
  const CudaUnit unit = cuda_golden_unit("elementwise");
  const std::string& host = unit.host_source;
  EXPECT_TRUE(cuda_golden_has(host, "expected 3 arguments, got %d")) << host;
  EXPECT_TRUE(cuda_golden_has(host, "has dtype %s, expected float32")) << host;
  EXPECT_TRUE(cuda_golden_has(host, "this runtime has no CUDA support")) << host;
  EXPECT_TRUE(cuda_golden_has(host, "relax_api->cuda_launch(relax_cuda_image_begin, relax_image_size, \"" +
                                        unit.kernel_names[0] + "\"")) << host;
  EXPECT_TRUE(cuda_golden_has(host, "extern const uint8_t relax_cuda_image_begin[];")) << host;
  EXPECT_TRUE(cuda_golden_has(host, "relax_abi_version")) << host;
  EXPECT_TRUE(cuda_golden_has(host, "relax_set_runtime_api")) << host;
  EXPECT_TRUE(cuda_golden_has(host, "relax_isa_level")) << host;
  EXPECT_FALSE(cuda_golden_has(host, "__global__")) << host;
}

TEST(CudaCodegen, StatementWithoutParallelLoopRunsOnOneThread) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  prim_func @prefix(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) attrs {op_pattern = "opaque"} {
    for i in range(n) {
      B[i] = A[i] + select(i > 0, B[max(i - 1, 0)], 0f32)
    }
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<CudaUnit> unit = generate_cuda(*mod, cuda_test_target("sm_80"));
  ASSERT_TRUE(unit.ok()) << unit.status();
  const std::string fns = cuda_golden_functions(*unit);
  EXPECT_TRUE(cuda_golden_has(fns, "// kernel prefix: one thread")) << fns;
  EXPECT_TRUE(cuda_golden_has(fns, "if (blockIdx.x != 0 || threadIdx.x != 0) return;")) << fns;
  EXPECT_TRUE(cuda_golden_has(unit->host_source, "const uint32_t relax_block[3] = {1, 1, 1};")) << unit->host_source;
}

TEST(CudaCodegen, EachTopLevelNestIsOneDeviceFunctionInOrder) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  prim_func @two(A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(n,), float32]) {
    for i in range(n) parallel {
      B[i] = A[i] * 2f32
    }
    for j in range(n) parallel {
      C[j] = B[n - 1 - j]
    }
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<CudaUnit> unit = generate_cuda(*mod, cuda_test_target("sm_80"));
  ASSERT_TRUE(unit.ok()) << unit.status();
  ASSERT_EQ(unit->kernel_names.size(), 2u);
  EXPECT_EQ(unit->kernel_names[0], "relax_cuda_two");
  EXPECT_EQ(unit->kernel_names[1], "relax_cuda_two_1");
  const std::string& host = unit->host_source;
  EXPECT_LT(host.find("\"relax_cuda_two\""), host.find("\"relax_cuda_two_1\"")) << host;
}

TEST(CudaCodegen, RefusesOtherTargetKinds) {
  absl::StatusOr<CudaUnit> unit = generate_cuda(cuda_test_lowered(cuda_test_family("elementwise")), Target());
  ASSERT_FALSE(unit.ok());
  EXPECT_EQ(unit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unit.status().message().find("target kind \"cuda\", not \"cpu\""), std::string::npos) << unit.status();
}

TEST(CudaCodegen, TopLevelScratchMustBeAParameter) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  prim_func @scratch(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) {
    alloc T: Buffer[(n,), float32, workspace] {
      for i in range(n) parallel {
        T[i] = A[i] * 2f32
      }
      for j in range(n) parallel {
        B[j] = T[j] + 1f32
      }
    }
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<CudaUnit> unit = generate_cuda(*mod, cuda_test_target("sm_80"));
  ASSERT_FALSE(unit.ok());
  EXPECT_EQ(unit.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(unit.status().message().find("top-level allocation of buffer `T`"), std::string::npos) << unit.status();
}

}  // namespace
}  // namespace relax
