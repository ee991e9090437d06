// The matmul branch of the default CPU schedule (matmul_schedule.h): which
// nests are recognised as matmuls (from their loops, whatever their names),
// the shape of the schedule (register tiles of 8 and then 4 rows over a packed
// panel, the row tail peeled into a one-row kernel making 4 steps of k per pass,
// or calling the int4 micro-kernel, lane-split dot products for W[n, k]), and its
// values through the loop-level evaluator at several row counts from one
// kernel, with K and N no multiples of the tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"
#include "relax/transform/schedule.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

using schedule_test::expect_same_results;
using schedule_test::run_kernel;

Expr matmul_kernel(const std::string& text, const std::string& name) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return Expr();
  PassContext ctx;
  absl::StatusOr<IRModule> out =
      PassManager({create_legalize_ops_pass(), create_annotate_op_pattern_pass(), create_fuse_ops_pass(),
                   create_fuse_tir_pass(), create_dce_pass(), create_simplify_loops_pass()})
          .run(*mod, ctx);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return Expr();
  for (const auto& [fname, f] : out->functions()) {
    if (f.as<PrimFuncNode>() != nullptr && absl::StartsWith(fname, name)) return f;
  }
  ADD_FAILURE() << "no kernel " << name << " in\n" << to_text(*out);
  return Expr();
}

// K = 37 and N = 70: neither a multiple of a tile (4 x 32), a lane count or a
// column block; m symbolic.
constexpr const char* kMatmul = R"(module {
  func @main(x: Tensor[(m, 37), float32], w: Tensor[(37, 70), float32]) -> Tensor[(m, 70), float32] {
    r = matmul(x, w)
    return r
  }
})";
constexpr const char* kLinear = R"(module {
  func @main(x: Tensor[(m, 37), float32], w: Tensor[(70, 37), float32]) -> Tensor[(m, 70), float32] {
    r = linear(x, w)
    return r
  }
})";
constexpr const char* kDynamic = R"(module {
  func @main(x: Tensor[(m, k), float32], w: Tensor[(k, n), float32]) -> Tensor[(m, n), float32] {
    r = matmul(x, w)
    return r
  }
})";
constexpr const char* kDynamicLinear = R"(module {
  func @main(x: Tensor[(m, k), float32], w: Tensor[(n, k), float32]) -> Tensor[(m, n), float32] {
    r = linear(x, w)
    return r
  }
})";
constexpr const char* kBatched = R"(module {
  func @main(x: Tensor[(2, m, 8), float32], w: Tensor[(8, 4), float32]) -> Tensor[(2, m, 4), float32] {
    r = matmul(x, w)
    return r
  }
})";

// The dequantising matmul of examples/models/dequant_matmul.relax, with K = 96
// (3 groups of 32) and N = 40.
constexpr const char* kDequant = R"(module {
  prim_func @dequantize_int4(Q: Buffer[(48, 40), uint8], S: Buffer[(3, 40), float32], W: Buffer[(96, 40), float32]) {
    for k in range(96) {
      for j in range(40) {
        block dequantize(vk = spatial(96, k), vj = spatial(40, j)) {
          W[vk, vj] = (cast<float32>(bitwise_and(shift_right(Q[floordiv(vk, 2), vj], cast<uint8>(4 * floormod(vk, 2))), cast<uint8>(15))) - 8f32) * S[floordiv(vk, 32), vj]
        }
      }
    }
  }
  func @main(x: Tensor[(m, 96), float32], q: Tensor[(48, 40), uint8], s: Tensor[(3, 40), float32]) -> Tensor[(m, 40), float32] {
    dataflow {
      w = call_tir(@dequantize_int4, (q, s), sinfo=Tensor[(96, 40), float32])
      output h = matmul(x, w)
    }
    return h
  }
})";

// A matmul written by hand with names that say nothing, the weights first in
// the product and the accumulation on the right.
constexpr const char* kHandWritten = R"(module {
  prim_func @p(A: Buffer[(m, 20), float32], B: Buffer[(20, 33), float32], C: Buffer[(m, 33), float32]) {
    for a in range(m) {
      for b in range(33) {
        for c in range(20) {
          block z(u = spatial(m, a), v = spatial(33, b), t = reduce(20, c)) {
            init {
              C[u, v] = 1.5f32
            }
            C[u, v] = B[t, v] * A[u, t] + C[u, v]
          }
        }
      }
    }
  }
  prim_func @not_mm(A: Buffer[(m, 20), float32], B: Buffer[(m, 20), float32], C: Buffer[(m, 33), float32]) {
    for a in range(m) {
      for b in range(33) {
        for c in range(20) {
          block z(u = spatial(m, a), v = spatial(33, b), t = reduce(20, c)) {
            init {
              C[u, v] = 0f32
            }
            C[u, v] = C[u, v] + A[u, t] * B[u, t]
          }
        }
      }
    }
  }
})";

Expr parsed(const std::string& text, const std::string& name) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? mod->lookup(name) : Expr();
}

/// Expects the float outputs of `before` and `after` within a relative 1e-5
/// (a reassociated float sum) at each row count; the other buffers equal.
int expect_close_results(const Expr& before, const Expr& after, const std::vector<int64_t>& sizes,
                         const std::string& what, bool distinct = false) {
  int ran = 0;
  for (int64_t size : sizes) {
    schedule_test::KernelRun a = run_kernel(before, size, 7, distinct);
    schedule_test::KernelRun b = run_kernel(after, size, 7, distinct);
    EXPECT_TRUE(a.status.ok() && b.status.ok()) << what << ": " << a.status << " / " << b.status;
    if (!a.status.ok() || !b.status.ok()) continue;
    ++ran;
    if (a.buffers.size() != b.buffers.size() || a.buffers.back().size() != b.buffers.back().size()) {
      ADD_FAILURE() << what << ": the runs left different buffers";
      continue;
    }
    const std::vector<uint8_t>& x = a.buffers.back();
    const std::vector<uint8_t>& y = b.buffers.back();
    int wrong = 0;
    for (size_t i = 0; i + 4 <= x.size(); i += 4) {
      float u, v;
      std::memcpy(&u, &x[i], 4);
      std::memcpy(&v, &y[i], 4);
      if (!(std::fabs(u - v) <= 1e-5f * std::fabs(u) + 1e-5f) && ++wrong <= 3) {
        ADD_FAILURE() << what << " at size " << size << " element " << i / 4 << ": " << v << " want " << u;
      }
    }
    for (size_t i = 0; i + 1 < a.buffers.size(); ++i) EXPECT_EQ(a.buffers[i], b.buffers[i]) << what;
  }
  return ran;
}

TEST(ScheduleMatmulTest, MatmulGetsRegisterTilesOverAPackedPanelAndAOneRowTail) {
  Expr f = matmul_kernel(kMatmul, "matmul");
  Expr g = schedule::schedule_cpu(f);
  const std::string text = to_text(g);
  // Full 8 x 32 tiles while 8 rows are left, then one 4 x 32 tile if 4 are, each over a
  // panel of W (37 x 32) packed per column block.
  EXPECT_TRUE(absl::StrContains(text, "if floordiv(m, 8) >= 1")) << text;
  EXPECT_TRUE(absl::StrContains(text, "if floordiv(floormod(m, 8), 4) >= 1")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Buffer[(8, 32), float32, local]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Buffer[(37, 32), float32]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Buffer[(4, 32), float32, local]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for io in range(floordiv(m, 8))")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for ii in range(8) unrolled")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for ji in range(32) vectorized")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for jo in range(3) parallel")) << text;
  // The rows left over, one at a time, streaming W in one block of all 70 columns.
  EXPECT_TRUE(absl::StrContains(text, "for r in range(floormod(m, 4))")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for jj in range(70) vectorized")) << text;
  // Four steps of k per pass over the columns, their x read before it (k =
  // 37: 9 passes, then the tail of 1).
  EXPECT_TRUE(absl::StrContains(text, "for ko in range(9) {\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "let a3: float32 = A[r + floordiv(m, 8) * 8 + floordiv(floormod(m, 8), 4) * 4, ko * 4 + 3]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "C_row[jj] = C_row[jj] + a3 * B[ko * 4 + 3, jb * 1024 + jj]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for kt in range(1)")) << text;
  // Adding in the order of k, it computes the same bits at every row count.
  EXPECT_EQ(expect_same_results(f, g, {1, 3, 4, 5, 12, 13, 17, 64}, "matmul"), 16);
}

TEST(ScheduleMatmulTest, SymbolicColumnsAndDepthGuardTheColumnTail) {
  Expr f = matmul_kernel(kDynamic, "matmul");
  Expr g = schedule::schedule_cpu(f);
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "min(1024, n - jb * 1024)")) << text;
  // A symbolic depth: passes of 4 steps of k, then the tail.
  EXPECT_TRUE(absl::StrContains(text, "for ko in range(floordiv(k, 4))")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for kt in range(floormod(k, 4))")) << text;
  EXPECT_TRUE(absl::StrContains(text, "jo * 32 + ji < n")) << text;
  // m, k and n bound to size, size + 1, size + 2 (first seen first).
  EXPECT_EQ(expect_same_results(f, g, {1, 3, 6, 33}, "matmul dyn", /*distinct=*/true), 8);
}

TEST(ScheduleMatmulTest, LinearRowsAreLaneSplitDotProducts) {
  Expr f = matmul_kernel(kLinear, "linear");
  Expr g = schedule::schedule_cpu(f);
  const std::string text = to_text(g);
  // 4 rows of W[70, 37] per block, 16 lanes of k, the k tail (37 = 2 * 16 + 5) into lane 0.
  EXPECT_TRUE(absl::StrContains(text, "Buffer[(4, 16), float32, local]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for kl in range(16) vectorized")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for kt in range(5)")) << text;
  EXPECT_TRUE(absl::StrContains(text, "jb * 4 + jj < 70")) << text;
  EXPECT_EQ(expect_close_results(f, g, {1, 2, 3, 4, 9, 13, 40}, "linear"), 7);
  // Symbolic k and n: the k tail and the last block of rows of W checked at run time.
  Expr d = matmul_kernel(kDynamicLinear, "linear");
  Expr e = schedule::schedule_cpu(d);
  EXPECT_TRUE(absl::StrContains(to_text(e), "_dot")) << to_text(e);
  EXPECT_EQ(expect_close_results(d, e, {1, 5, 13, 18, 33}, "linear dyn", /*distinct=*/true), 5);
}

TEST(ScheduleMatmulTest, FusedDequantisationIsEvaluatedInThePanelAndStreamedForOneRow) {
  // An int4 layout the row micro-kernel does not know (the offset is 7, not
  // 8): the row kernel is generated.
  std::string text7 = kDequant;
  text7.replace(text7.find("- 8f32"), 6, "- 7f32");
  Expr f = matmul_kernel(text7, "fused_dequantize_int4_matmul");
  Expr g = schedule::schedule_cpu(f);
  const std::string text = to_text(g);
  // The panel holds the dequantised weights; the one-row kernel reads the packed bytes.
  // k runs as loops of 3, 16 and 2 so that the bytes and scales are indexed
  // affinely (g++ vectorises no loop under a floordiv of k).
  EXPECT_TRUE(absl::StrContains(text, "_panel[kp0 * 32 + kp1 * 2 + kp2, jp] = (cast<float32>(bitwise_and("
                                      "shift_right(q[kp0 * 16 + kp1, jo * 32 + jp], cast<uint8>(kp2 * 4))"))
      << text;
  // The row kernel makes 4 steps of k per pass over the columns: two bytes
  // of q, both nibbles of each (k1 split into 8 x 2, the inner 2 x 2 written
  // out inside the column loop).
  EXPECT_TRUE(absl::StrContains(text, "for k1o in range(8) {\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "_row[jj] + a3 * ((cast<float32>(bitwise_and(shift_right(q[k0 * 16 + k1o * 2 + 1, "
                                      "jb * 1024 + jj], 4u8), 15u8)) - 7f32) * s[k0, jb * 1024 + jj])"))
      << text;
  EXPECT_EQ(expect_same_results(f, g, {1, 2, 4, 7, 13, 33}, "dequantize matmul"), 12);
}

TEST(ScheduleMatmulTest, Int4RowsCallTheMicroKernel) {
  // The layout of examples/models/dequant_matmul.relax: the single rows call
  // relax_int4_row_f32 per column block (here one of all 40 columns), which
  // sums per group of 32 and scales once (reassociated: within a tolerance).
  Expr f = matmul_kernel(kDequant, "fused_dequantize_int4_matmul");
  Expr g = schedule::schedule_cpu(f);
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "for jb in range(1) parallel")) << text;
  EXPECT_TRUE(absl::StrContains(text, "call_extern relax_int4_row_f32(&x[r + floordiv(m, 8) * 8 + floordiv(floormod(m, 8), 4) * 4, 0], "
                                      "&q[0, jb * 1024], &s[0, jb * 1024], 96, 40, 40, &"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "_row[")) << text;
  EXPECT_TRUE(absl::StrContains(text, "_panel[")) << text;  // the tiles are generated
  EXPECT_EQ(expect_close_results(f, g, {1, 2, 3, 4, 7, 13, 33}, "int4 rows"), 7);
  // Scales per 16 rows (another layout): generated.
  std::string by16 = kDequant;
  by16.replace(by16.find("S: Buffer[(3, 40)"), 17, "S: Buffer[(6, 40)");
  by16.replace(by16.find("floordiv(vk, 32)"), 16, "floordiv(vk, 16)");
  by16.replace(by16.find("s: Tensor[(3, 40)"), 17, "s: Tensor[(6, 40)");
  Expr h = schedule::schedule_cpu(matmul_kernel(by16, "fused_dequantize_int4_matmul"));
  EXPECT_FALSE(absl::StrContains(to_text(h), "call_extern")) << to_text(h);
  EXPECT_TRUE(absl::StrContains(to_text(h), "_row[")) << to_text(h);
}

// `g` (kDequant's kernel scheduled with int8_rows) against the plain nest `f` at each size:
// every element within the activations' rounding bound, sum over k of |w(k, j)| times max |x|
// of k's group / 254.
void expect_within_int8_bound(const Expr& f, const Expr& g, const std::vector<int64_t>& sizes) {
  for (int64_t m : sizes) {
    schedule_test::KernelRun plain = schedule_test::run_kernel(f, m, 7);
    schedule_test::KernelRun run = schedule_test::run_kernel(g, m, 7);
    ASSERT_TRUE(plain.status.ok() && run.status.ok()) << plain.status << " / " << run.status;
    // The buffers in parameter order, found by name: x (m, 96), q (48, 40), s (3, 40), h (m, 40).
    std::map<std::string, size_t> index;
    for (const PrimParam& p : g.as<PrimFuncNode>()->params) {
      if (!p.scalar) index.emplace(p.buffer->name(), index.size());
    }
    ASSERT_EQ(index.size(), 4u);
    ASSERT_TRUE(index.contains("x") && index.contains("q") && index.contains("s") && index.contains("h"));
    const std::vector<uint8_t>& x = run.buffers[index["x"]];
    const std::vector<uint8_t>& q = run.buffers[index["q"]];
    const std::vector<uint8_t>& s = run.buffers[index["s"]];
    ASSERT_EQ(x.size(), static_cast<size_t>(m * 96 * 4));
    ASSERT_EQ(q.size(), 48u * 40u);
    auto float_at = [](const std::vector<uint8_t>& b, size_t i) {
      float v;
      std::memcpy(&v, &b[i * 4], 4);
      return v;
    };
    int wrong = 0;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < 40; ++j) {
        double bound = 0;
        for (int64_t k = 0; k < 96; ++k) {
          double amax = 0;
          for (int64_t e = k / 32 * 32; e < k / 32 * 32 + 32; ++e) {
            amax = std::max(amax, std::fabs(static_cast<double>(float_at(x, static_cast<size_t>(r * 96 + e)))));
          }
          const int nibble = (q[static_cast<size_t>(k / 2 * 40 + j)] >> (4 * (k % 2))) & 15;
          bound += std::fabs((nibble - 8) * static_cast<double>(float_at(s, static_cast<size_t>(k / 32 * 40 + j)))) *
                   amax / 254.0;
        }
        const size_t at = static_cast<size_t>(r * 40 + j);
        const double err =
            std::fabs(static_cast<double>(float_at(run.buffers[index["h"]], at)) - float_at(plain.buffers[index["h"]], at));
        if (!(err <= bound * 1.001 + 1e-5) && ++wrong <= 3) {
          ADD_FAILURE() << "m = " << m << " row " << r << " column " << j << ": error " << err << " > " << bound;
        }
      }
    }
  }
}

TEST(ScheduleMatmulTest, Int8RowsCallTheQuantisingMicroKernelInChunksOfRows) {
  // With int8_rows (64 on AVX-512 VNNI targets; 16 here): the rows in chunks of 16, each chunk
  // one call of relax_int4_rows_i8 per column block (40 columns: one block). One function
  // serves every row count (the row count is symbolic); no float tiles are left.
  Expr f = matmul_kernel(kDequant, "fused_dequantize_int4_matmul");
  schedule::CpuScheduleOptions options;
  options.int8_rows = 16;
  Expr g = schedule::schedule_cpu(f, options);
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "for rc in range(floordiv(m + 15, 16)) {")) << text;
  EXPECT_TRUE(absl::StrContains(text, "call_extern relax_int4_rows_i8(&x[rc * 16, 0], min(16, m - rc * 16), 96, "
                                      "&q[0, jb * 64], &s[0, jb * 64], 96, 40, 40, &"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "_panel[")) << text;
  EXPECT_FALSE(absl::StrContains(text, "relax_int4_row_f32(")) << text;
  // The evaluator runs the kernel's portable part (the same integer sums): within the
  // activations' rounding bound of the plain nest's result, for one chunk, several, and a
  // partial last one.
  expect_within_int8_bound(f, g, {1, 2, 5, 16, 17, 40});
  // Without the option, the exact kernels alone.
  EXPECT_FALSE(absl::StrContains(to_text(schedule::schedule_cpu(f)), "relax_int4_rows_i8"));
  // A constant row count of at most a chunk: one call per block, no chunk loop.
  std::string one = kDequant;
  for (size_t at = one.find("(m, "); at != std::string::npos; at = one.find("(m, ")) one.replace(at, 4, "(1, ");
  for (size_t at = one.find("range(m)"); at != std::string::npos; at = one.find("range(m)")) one.replace(at, 8, "range(1)");
  for (size_t at = one.find("spatial(m,"); at != std::string::npos; at = one.find("spatial(m,")) one.replace(at, 10, "spatial(1,");
  Expr h = schedule::schedule_cpu(matmul_kernel(one, "fused_dequantize_int4_matmul"), options);
  EXPECT_TRUE(absl::StrContains(to_text(h), "relax_int4_rows_i8(&x[0, 0], 1, ")) << to_text(h);
  EXPECT_FALSE(absl::StrContains(to_text(h), "for rc ")) << to_text(h);
}

// Group-wise int8 weights through the dequantize operator (signed bytes q[k, j], scales
// s[k / 32, j]), K = 96, N = 40.
constexpr const char* kDequantInt8 = R"(module {
  func @main(x: Tensor[(m, 96), float32], q: Tensor[(96, 40), int8], s: Tensor[(3, 40), float32]) -> Tensor[(m, 40), float32] {
    dataflow {
      w = dequantize(q, s, group_size=32, axis=0, bits=8)
      output h = matmul(x, w)
    }
    return h
  }
})";

TEST(ScheduleMatmulTest, Int8WeightsCallTheirQuantisingMicroKernel) {
  // The same chunks of rows as int4's, the kernel relax_int8_rows_i8, one row of bytes per k:
  // a split of the depth across 3 threads starts each part 32 rows of bytes on.
  Expr f = matmul_kernel(kDequantInt8, "fused_dequantize_matmul");
  schedule::CpuScheduleOptions options;
  options.int8_rows = 16;
  std::string text = to_text(schedule::schedule_cpu(f, options));
  EXPECT_TRUE(absl::StrContains(text, "call_extern relax_int8_rows_i8(&x[rc * 16, 0], min(16, m - rc * 16), 96, "
                                      "&q[0, jb * 64], &s[0, jb * 64], 96, 40, 40, &"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "_panel[")) << text;
  options.threads = 3;
  text = to_text(schedule::schedule_cpu(f, options));
  EXPECT_TRUE(absl::StrContains(text, "call_extern relax_int8_rows_i8(&x[rc * 16, p * 32], min(16, m - rc * 16), 96, "
                                      "&q[p * 32, 0], &s[p, 0], 32, 40, 40, &h_kpart[p, 0, 0], 40)"))
      << text;
  // Without int8_rows (or on int4's layout only): no int8 kernel.
  EXPECT_FALSE(absl::StrContains(to_text(schedule::schedule_cpu(f)), "relax_int8_rows_i8")) << text;
}

TEST(ScheduleMatmulTest, Int8RowsSplitTheDepthAcrossThreadsWhenTheColumnsAreFew) {
  // 3 threads, 40 columns: each thread takes a third of k (one group of 32) over all the
  // columns, into its part of a scratch buffer; the parts are added into the output.
  Expr f = matmul_kernel(kDequant, "fused_dequantize_int4_matmul");
  schedule::CpuScheduleOptions options;
  options.int8_rows = 16;
  options.threads = 3;
  Expr g = schedule::schedule_cpu(f, options);
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "alloc h_kpart: Buffer[(3, 16, 40), float32]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for p in range(3) parallel {")) << text;
  EXPECT_TRUE(absl::StrContains(text, "call_extern relax_int4_rows_i8(&x[rc * 16, p * 32], min(16, m - rc * 16), 96, "
                                      "&q[p * 16, 0], &s[p, 0], 32, 40, 40, &h_kpart[p, 0, 0], 40)"))
      << text;
  expect_within_int8_bound(f, g, {1, 5, 16, 17, 40});
  // 2 threads do not divide the 3 groups: split by columns.
  options.threads = 2;
  EXPECT_FALSE(absl::StrContains(to_text(schedule::schedule_cpu(f, options)), "_kpart")) << to_text(g);
}

TEST(ScheduleMatmulTest, StreamRowsCallTheFloatRowsMicroKernelUpToSixteenRows) {
  schedule::CpuScheduleOptions options;
  options.stream_rows = 16;
  // W[k, n] float32: relax_f32_rows for m <= 16 (70 columns: blocks of 64 and 6), tiles above.
  Expr f = matmul_kernel(kMatmul, "matmul");
  Expr g = schedule::schedule_cpu(f, options);
  EXPECT_TRUE(absl::StrContains(to_text(g), "if m <= 16 {")) << to_text(g);
  EXPECT_TRUE(absl::StrContains(to_text(g), "call_extern relax_f32_rows(&A[0, 0], m, 37, &B[0, jb * 64], 37, "))
      << to_text(g);
  EXPECT_EQ(expect_close_results(f, g, {1, 3, 4, 16, 17, 33}, "f32 rows"), 6);
  // Symbolic k and n: the same call, every extent read at run time.
  Expr d = matmul_kernel(kDynamic, "matmul");
  Expr e = schedule::schedule_cpu(d, options);
  EXPECT_TRUE(absl::StrContains(to_text(e), "call_extern relax_f32_rows(&A[0, 0], m, k, &B[0, jb * 1024], k, "))
      << to_text(e);
  EXPECT_EQ(expect_close_results(d, e, {1, 5, 16, 18}, "f32 rows dyn", /*distinct=*/true), 4);
  // W[n, k] (linear) is not this kernel's layout: the lane-split dot rows as before.
  Expr l = schedule::schedule_cpu(matmul_kernel(kLinear, "linear"), options);
  EXPECT_FALSE(absl::StrContains(to_text(l), "relax_f32_rows")) << to_text(l);
  // bfloat16 W[k, n] (widened in the kernel): relax_bf16_rows at every row count, in chunks of
  // 64 rows (no tiles left).
  Expr b16 = matmul_kernel(R"(module {
  func @main(x: Tensor[(m, 37), float32], w: Tensor[(37, 70), bfloat16]) -> Tensor[(m, 70), float32] {
    dataflow {
      v = astype(w, dtype=float32)
      output r = matmul(x, v)
    }
    return r
  }
})",
                           "fused_astype_matmul");
  Expr b16s = schedule::schedule_cpu(b16, options);
  EXPECT_TRUE(absl::StrContains(to_text(b16s), "for rc in range(floordiv(m + 63, 64)) {")) << to_text(b16s);
  EXPECT_TRUE(absl::StrContains(to_text(b16s), "call_extern relax_bf16_rows(")) << to_text(b16s);
  EXPECT_FALSE(absl::StrContains(to_text(b16s), "_panel[")) << to_text(b16s);
  EXPECT_EQ(expect_close_results(b16, b16s, {1, 5, 64, 70, 130}, "bf16 rows"), 5);
  // 2 threads over 70 columns and K = 64: each thread one half of k, the parts added.
  schedule::CpuScheduleOptions split = options;
  split.threads = 2;
  const char* k64 = R"(module {
  func @f32(x: Tensor[(m, 64), float32], w: Tensor[(64, 70), float32]) -> Tensor[(m, 70), float32] {
    r = matmul(x, w)
    return r
  }
})";
  Expr k64_kernel = matmul_kernel(k64, "matmul");
  Expr s64 = schedule::schedule_cpu(k64_kernel, split);
  EXPECT_TRUE(absl::StrContains(to_text(s64), "for p in range(2) parallel {")) << to_text(s64);
  EXPECT_TRUE(absl::StrContains(to_text(s64), "call_extern relax_f32_rows(&A[0, p * 32], m, 64, &B[p * 32, 0], 32, 70, 70, "))
      << to_text(s64);
  EXPECT_EQ(expect_close_results(k64_kernel, s64, {1, 5, 16, 17}, "f32 rows split over k"), 4);
  // int4 weights without int8_rows: the exact kernels.
  EXPECT_FALSE(absl::StrContains(to_text(schedule::schedule_cpu(matmul_kernel(kDequant, "fused_dequantize_int4_matmul"),
                                                                options)),
                                 "_rows("));
}

TEST(ScheduleMatmulTest, RowsKernelsFollowTheTargetsIsa) {
  Target t;
  t.isa_flags = {"-march=x86-64-v4"};  // AVX-512 F/BW/DQ/VL, no VNNI
  EXPECT_EQ(schedule::cpu_schedule_options(t).int8_rows, 0);
  EXPECT_EQ(schedule::cpu_schedule_options(t).stream_rows, 16);
  t.isa_flags = {"-march=x86-64-v4", "-mavx512vnni"};
  EXPECT_EQ(schedule::cpu_schedule_options(t).int8_rows, 64);
  t.exact_float = true;
  EXPECT_EQ(schedule::cpu_schedule_options(t).int8_rows, 0);
  EXPECT_EQ(schedule::cpu_schedule_options(t).stream_rows, 16);  // float products: exact
  t = Target();
  t.isa_flags = {"-march=x86-64-v3"};
  EXPECT_EQ(schedule::cpu_schedule_options(t).int8_rows, 0);
  EXPECT_EQ(schedule::cpu_schedule_options(t).stream_rows, 0);
  t.isa_flags = {"-march=x86-64-v3", "-mavxvnni"};  // AVX2 with AVX-VNNI: 32 columns a step
  EXPECT_EQ(schedule::cpu_schedule_options(t).int8_rows, 64);
  EXPECT_EQ(schedule::cpu_schedule_options(t).stream_rows, 0);
}

TEST(ScheduleMatmulTest, Int4RowsOfTheDequantizeOperatorCallTheMicroKernel) {
  // The same layout written with the operator (as the model library writes it): its
  // legalization takes the nibble in int32, another expression of the same weight.
  const std::string text = R"(module {
  func @main(x: Tensor[(m, 96), float32], q: Tensor[(48, 40), uint8], s: Tensor[(3, 40), float32]) -> Tensor[(m, 40), float32] {
    dataflow {
      w = dequantize(q, s, group_size=32, axis=0, bits=4)
      output y = matmul(x, w)
    }
    return y
  }
})";
  Expr f = matmul_kernel(text, "fused_dequantize_matmul");
  Expr g = schedule::schedule_cpu(f);
  EXPECT_TRUE(absl::StrContains(to_text(g), "call_extern relax_int4_row_f32(")) << to_text(g);
  EXPECT_EQ(expect_close_results(f, g, {1, 2, 5, 9}, "int4 rows of dequantize"), 4);
}

TEST(ScheduleMatmulTest, RecognisedFromTheLoopsNotFromNames) {
  Expr f = parsed(kHandWritten, "p");
  Expr g = schedule::schedule_cpu(f);
  EXPECT_TRUE(absl::StrContains(to_text(g), "C_panel")) << to_text(g);
  EXPECT_EQ(expect_same_results(f, g, {1, 3, 4, 9}, "hand-written matmul"), 8);
  // Both factors indexed by the row: a reduction, but no matmul.
  Expr h = parsed(kHandWritten, "not_mm");
  EXPECT_FALSE(absl::StrContains(to_text(schedule::schedule_cpu(h)), "_panel"));
  // A batched matmul (three spatial variables) keeps its loops.
  Expr b = matmul_kernel(kBatched, "matmul");
  EXPECT_FALSE(absl::StrContains(to_text(schedule::schedule_cpu(b)), "_panel"));
}

TEST(ScheduleMatmulTest, TheScheduleIsNotAppliedTwice) {
  Expr f = matmul_kernel(kMatmul, "matmul");
  Expr g = schedule::schedule_cpu(f);
  EXPECT_TRUE(schedule::schedule_cpu(g).same_as(g));
}

}  // namespace
}  // namespace relax::transform
