// Matmuls through generated code (no library dispatch) with the default
// schedule (schedule-cpu's matmul branch): a matmul over W[k, n], a linear
// over W[n, k] and a matmul over group-wise int4 weights dequantised in the
// graph, each compiled once and checked against plain double loops at row
// counts 1 (decoding), 3, 4, 5, 12, 13, 17 and 64 (8- and 4-row tiles and single rows), with K and N no multiples of the
// tiles; and g++'s object code of the kernels: the register tile's k loop is
// vector FMAs on zmm/ymm registers with the accumulators kept in registers
// (no store in the loop), the one-row int4 kernel converts packed bytes
// with vector instructions, and the one-row bfloat16 kernel widens by a
// vector shift. The one-row kernel alone over float32, bfloat16 and int4
// weights is checked at sizes that do and do not fill its column blocks and
// its passes over k.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "codegen_test_util.h"
#include "object_code_util.h"
#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/ir/parser.h"

namespace relax {
namespace {

using runtime::Tensor;

constexpr const char* kMatmulScheduleModule = R"(module {
  prim_func @dequantize_int4(Q: Buffer[(48, 40), uint8], S: Buffer[(3, 40), float32], W: Buffer[(96, 40), float32]) {
    for k in range(96) {
      for j in range(40) {
        block dequantize(vk = spatial(96, k), vj = spatial(40, j)) {
          W[vk, vj] = (cast<float32>(bitwise_and(shift_right(Q[floordiv(vk, 2), vj], cast<uint8>(4 * floormod(vk, 2))), cast<uint8>(15))) - 8f32) * S[floordiv(vk, 32), vj]
        }
      }
    }
  }
  func @mm(x: Tensor[(m, 37), float32], w: Tensor[(37, 70), float32]) -> Tensor[(m, 70), float32] {
    r = matmul(x, w)
    return r
  }
  func @lin(x: Tensor[(m, 37), float32], w: Tensor[(70, 37), float32]) -> Tensor[(m, 70), float32] {
    r = linear(x, w)
    return r
  }
  func @int4(x: Tensor[(m, 96), float32], q: Tensor[(48, 40), uint8], s: Tensor[(3, 40), float32]) -> Tensor[(m, 40), float32] {
    dataflow {
      w = call_tir(@dequantize_int4, (q, s), sinfo=Tensor[(96, 40), float32])
      output h = matmul(x, w)
    }
    return h
  }
})";

// One row only: the kernel is the weight-streaming one alone.
constexpr const char* kInt4Row = R"(module {
  prim_func @dequantize_int4(Q: Buffer[(128, 512), uint8], S: Buffer[(8, 512), float32], W: Buffer[(256, 512), float32]) {
    for k in range(256) {
      for j in range(512) {
        block dequantize(vk = spatial(256, k), vj = spatial(512, j)) {
          W[vk, vj] = (cast<float32>(bitwise_and(shift_right(Q[floordiv(vk, 2), vj], cast<uint8>(4 * floormod(vk, 2))), cast<uint8>(15))) - 8f32) * S[floordiv(vk, 32), vj]
        }
      }
    }
  }
  func @main(x: Tensor[(1, 256), float32], q: Tensor[(128, 512), uint8], s: Tensor[(8, 512), float32]) -> Tensor[(1, 512), float32] {
    dataflow {
      w = call_tir(@dequantize_int4, (q, s), sinfo=Tensor[(256, 512), float32])
      output h = matmul(x, w)
    }
    return h
  }
})";

// The one-row kernel over float32, bfloat16 (converted in the kernel) and
// int4 weights at sizes that do and do not fill its blocks (1024 columns) and
// its passes (4 steps of k): N = 1100 (a block and a tail of 76), K = 64 and
// 37 (9 passes and a k tail of 1), int4 with K = 64 (2 groups) and N = 1100.
constexpr const char* kRowKernelModule = R"(module {
  prim_func @dequantize_int4(Q: Buffer[(32, 1100), uint8], S: Buffer[(2, 1100), float32], W: Buffer[(64, 1100), float32]) {
    for k in range(64) {
      for j in range(1100) {
        block dequantize(vk = spatial(64, k), vj = spatial(1100, j)) {
          W[vk, vj] = (cast<float32>(bitwise_and(shift_right(Q[floordiv(vk, 2), vj], cast<uint8>(4 * floormod(vk, 2))), cast<uint8>(15))) - 8f32) * S[floordiv(vk, 32), vj]
        }
      }
    }
  }
  func @f32(x: Tensor[(m, 64), float32], w: Tensor[(64, 1100), float32]) -> Tensor[(m, 1100), float32] {
    r = matmul(x, w)
    return r
  }
  func @bf16(x: Tensor[(m, 64), float32], w: Tensor[(64, 1100), bfloat16]) -> Tensor[(m, 1100), float32] {
    dataflow {
      v = astype(w, dtype=float32)
      output r = matmul(x, v)
    }
    return r
  }
  func @bf16_tail(x: Tensor[(m, 37), float32], w: Tensor[(37, 70), bfloat16]) -> Tensor[(m, 70), float32] {
    dataflow {
      v = astype(w, dtype=float32)
      output r = matmul(x, v)
    }
    return r
  }
  func @int4(x: Tensor[(m, 64), float32], q: Tensor[(32, 1100), uint8], s: Tensor[(2, 1100), float32]) -> Tensor[(m, 1100), float32] {
    dataflow {
      w = call_tir(@dequantize_int4, (q, s), sinfo=Tensor[(64, 1100), float32])
      output h = matmul(x, w)
    }
    return h
  }
})";

// One row of bfloat16 weights: the kernel is the weight-streaming one alone.
constexpr const char* kBf16Row = R"(module {
  func @main(x: Tensor[(1, 256), float32], w: Tensor[(256, 2048), bfloat16]) -> Tensor[(1, 2048), float32] {
    dataflow {
      v = astype(w, dtype=float32)
      output r = matmul(x, v)
    }
    return r
  }
})";

std::vector<double> reference(const Tensor& x, const std::vector<double>& w, int64_t m, int64_t k, int64_t n) {
  const float* a = x.data_as_or_die<float>();
  std::vector<double> out(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a[i * k + p]) * w[static_cast<size_t>(p * n + j)];
      out[static_cast<size_t>(i * n + j)] = s;
    }
  }
  return out;
}

void expect_close(const std::vector<double>& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << what;
  const float* g = got.data_as_or_die<float>();
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(g[i] - want[i]) <= 1e-4 * (1.0 + std::fabs(want[i]))) && ++wrong <= 5) {
      ADD_FAILURE() << what << " at " << i << ": got " << g[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(wrong, 0) << what;
}

// The float kernels these tests read: without int8 activations (int8_matmul_build_test.cc
// has those).
Target exact(Target target) {
  target.exact_float = true;
  return target;
}

runtime::Module build_module(BuildInfo* info, const Target& target) {
  absl::StatusOr<IRModule> mod = parse_module(kMatmulScheduleModule);
  EXPECT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<runtime::Module> built = build(*mod, exact(target), info);
  EXPECT_TRUE(built.ok()) << built.status();
  return built.ok() ? *built : runtime::Module();
}

TEST(MatmulScheduleBuildTest, GeneratedMatmulsMatchPlainLoopsAtEveryRowCount) {
  BuildInfo info;
  runtime::Module module = build_module(&info, testing::generated_code_target());
  if (::testing::Test::HasFailure()) return;
  const Tensor w = testing::random_tensor({37, 70}, 11);
  const Tensor wt = testing::random_tensor({70, 37}, 12);
  std::vector<double> w_kn(37 * 70), wt_kn(37 * 70);
  for (int64_t p = 0; p < 37; ++p) {
    for (int64_t j = 0; j < 70; ++j) {
      w_kn[static_cast<size_t>(p * 70 + j)] = w.data_as_or_die<float>()[p * 70 + j];
      wt_kn[static_cast<size_t>(p * 70 + j)] = wt.data_as_or_die<float>()[j * 37 + p];
    }
  }
  Tensor q = *Tensor::empty({48, 40}, (DataType{DataType::Code::kUInt, 8, 1}));
  auto* qb = static_cast<uint8_t*>(q.data());
  for (int64_t i = 0; i < 48 * 40; ++i) qb[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  const Tensor s = testing::random_tensor({3, 40}, 13);
  std::vector<double> w4(96 * 40);
  for (int64_t p = 0; p < 96; ++p) {
    for (int64_t j = 0; j < 40; ++j) {
      const int nibble = (qb[(p / 2) * 40 + j] >> (4 * (p % 2))) & 15;
      w4[static_cast<size_t>(p * 40 + j)] = (nibble - 8) * static_cast<double>(s.data_as_or_die<float>()[(p / 32) * 40 + j]);
    }
  }
  for (int64_t m : {1, 3, 4, 5, 12, 13, 17, 64}) {
    const std::string at = " at m = " + std::to_string(m);
    const Tensor x = testing::random_tensor({m, 37}, static_cast<int>(m));
    absl::StatusOr<runtime::Value> y = module["mm"](x, w);
    ASSERT_TRUE(y.ok()) << y.status();
    expect_close(reference(x, w_kn, m, 37, 70), y->tensor_or_die(), "matmul" + at);
    y = module["lin"](x, wt);
    ASSERT_TRUE(y.ok()) << y.status();
    expect_close(reference(x, wt_kn, m, 37, 70), y->tensor_or_die(), "linear" + at);
    const Tensor x4 = testing::random_tensor({m, 96}, static_cast<int>(m) + 100);
    y = module["int4"](x4, q, s);
    ASSERT_TRUE(y.ok()) << y.status();
    expect_close(reference(x4, w4, m, 96, 40), y->tensor_or_die(), "int4 matmul" + at);
  }
}

/// Random bfloat16 bits of moderate values; `values` gets what they are.
Tensor random_bf16(std::vector<int64_t> shape, int seed, std::vector<double>* values) {
  const Tensor f = testing::random_tensor(shape, seed);
  Tensor t = *Tensor::empty(std::move(shape), DataType::bfloat16());
  auto* bits = static_cast<uint16_t*>(t.data());
  values->resize(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint32_t u = 0;
    std::memcpy(&u, &f.data_as_or_die<float>()[i], 4);
    bits[i] = static_cast<uint16_t>(u >> 16);  // (truncated: any bfloat16 will do)
    u = static_cast<uint32_t>(bits[i]) << 16;
    float v = 0;
    std::memcpy(&v, &u, 4);
    (*values)[static_cast<size_t>(i)] = v;
  }
  return t;
}

/// Packed int4 bytes q[k / 2, n] and scales s[k / 32, n]; `values` gets the weights [k, n].
std::pair<Tensor, Tensor> random_int4(int64_t k, int64_t n, int seed, std::vector<double>* values) {
  Tensor q = *Tensor::empty({k / 2, n}, (DataType{DataType::Code::kUInt, 8, 1}));
  auto* qb = static_cast<uint8_t*>(q.data());
  for (int64_t i = 0; i < k / 2 * n; ++i) qb[i] = static_cast<uint8_t>((i * 37 + 11 + seed) % 256);
  const Tensor s = testing::random_tensor({k / 32, n}, seed);
  values->assign(static_cast<size_t>(k * n), 0.0);
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) {
      const int nibble = (qb[(p / 2) * n + j] >> (4 * (p % 2))) & 15;
      (*values)[static_cast<size_t>(p * n + j)] =
          (nibble - 8) * static_cast<double>(s.data_as_or_die<float>()[(p / 32) * n + j]);
    }
  }
  return {q, s};
}

TEST(MatmulScheduleBuildTest, RowKernelsOfFloatBfloat16AndInt4WeightsMatchPlainLoops) {
  absl::StatusOr<IRModule> mod = parse_module(kRowKernelModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<runtime::Module> built = build(*mod, exact(testing::generated_code_target()));
  ASSERT_TRUE(built.ok()) << built.status();
  runtime::Module& module = *built;
  const Tensor w = testing::random_tensor({64, 1100}, 21);
  std::vector<double> w_values(w.data_as_or_die<float>(), w.data_as_or_die<float>() + 64 * 1100);
  std::vector<double> b_values, bt_values, q_values;
  const Tensor b = random_bf16({64, 1100}, 22, &b_values);
  const Tensor bt = random_bf16({37, 70}, 23, &bt_values);
  const auto [q, s] = random_int4(64, 1100, 24, &q_values);
  // 1-3 rows: the row kernel alone; 5 and 6: a 4-row tile and the rest one row at a time.
  for (int64_t m : {1, 2, 3, 5, 6}) {
    const std::string at = " at m = " + std::to_string(m);
    const Tensor x = testing::random_tensor({m, 64}, static_cast<int>(m) + 200);
    absl::StatusOr<runtime::Value> y = module["f32"](x, w);
    ASSERT_TRUE(y.ok()) << y.status();
    expect_close(reference(x, w_values, m, 64, 1100), y->tensor_or_die(), "float32" + at);
    y = module["bf16"](x, b);
    ASSERT_TRUE(y.ok()) << y.status();
    expect_close(reference(x, b_values, m, 64, 1100), y->tensor_or_die(), "bfloat16" + at);
    y = module["int4"](x, q, s);
    ASSERT_TRUE(y.ok()) << y.status();
    expect_close(reference(x, q_values, m, 64, 1100), y->tensor_or_die(), "int4" + at);
    const Tensor xt = testing::random_tensor({m, 37}, static_cast<int>(m) + 300);
    y = module["bf16_tail"](xt, bt);
    ASSERT_TRUE(y.ok()) << y.status();
    expect_close(reference(xt, bt_values, m, 37, 70), y->tensor_or_die(), "bfloat16, k tail" + at);
  }
}

/// The longest run of consecutive instructions in `code` matching `insn`,
/// counting only loads, broadcasts and address arithmetic between them.
int longest_fma_run(const std::string& code) {
  static const std::regex kFma(R"(\svfmadd\w*ps\s.*%[yz]mm)");
  static const std::regex kBetween(R"(\s(vbroadcastss|vmovups\s+\(|vmovaps\s+\(|add|lea|inc|sub|cmp|prefetch)\w*\s)");
  int best = 0, run = 0;
  std::istringstream lines(code);
  std::string line;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, kFma)) {
      best = std::max(best, ++run);
    } else if (!std::regex_search(line, kBetween)) {
      run = 0;
    }
  }
  return best;
}

TEST(MatmulScheduleBuildTest, TheRegisterTileAndTheInt4RowKernelAreVectorised) {
  Target target = exact(testing::generated_code_target());
  testing::TempDir cache;  // compiled afresh, keeping the C++ for a failure's message
  target.cache_dir = cache.path();
  target.keep_source = true;
  const std::optional<std::string> version = testing::run_command("'" + resolve_compiler(target) + "' --version 2>&1");
  if (!version || version->find("Free Software Foundation") == std::string::npos) {
    GTEST_SKIP() << "the host compiler is not g++: this test reads g++'s vectorised code";
  }
  if (!testing::run_command("objdump --version >/dev/null 2>&1")) GTEST_SKIP() << "objdump is not installed";
  BuildInfo info;
  build_module(&info, target);
  if (::testing::Test::HasFailure()) return;
  // The 8 x 32 and 4 x 32 tiles: rows x (32 / lanes) vectors of FMAs back to
  // back (at least 8), the accumulators never leaving their registers.
  const std::string mm = testing::disassembly_of(info.library_path, "relax_kernel_matmul");
  ASSERT_FALSE(mm.empty()) << "no matmul kernel in " << info.library_path;
  EXPECT_GE(longest_fma_run(mm), 8) << mm << "\nfrom " << info.source_path;
  // The one-row int4 kernel (m = 1: no tiles, only the row kernel): bytes
  // widened and converted to floats, and accumulated, in vectors.
  absl::StatusOr<IRModule> row = parse_module(kInt4Row);
  ASSERT_TRUE(row.ok()) << row.status();
  BuildInfo row_info;
  ASSERT_TRUE(build(*row, target, &row_info).ok());
  // The kernel calls the micro-kernel relax_int4_row_f32 from its parallel loop's body: g++
  // inlines it there or keeps it a function of its own.
  const std::string int4 = testing::disassembly_of(row_info.library_path, "relax_kernel_fused_dequantize_int4_matmul") +
                           testing::disassembly_of(row_info.library_path, "relax_int4_row_f32");
  ASSERT_FALSE(int4.empty()) << "no int4 kernel in " << row_info.library_path;
  EXPECT_TRUE(std::regex_search(int4, std::regex(R"(\svcvtdq2ps\s.*%[yz]mm)"))) << int4;
  EXPECT_TRUE(std::regex_search(int4, std::regex(R"(\svfmadd\w*ps\s.*%[yz]mm)"))) << int4;
  // The one-row bfloat16 kernel: the 16 bits shifted into the high half of
  // a float in vectors (no float conversion), then packed FMAs, and no call.
  absl::StatusOr<IRModule> bf16_row = parse_module(kBf16Row);
  ASSERT_TRUE(bf16_row.ok()) << bf16_row.status();
  BuildInfo bf16_info;
  ASSERT_TRUE(build(*bf16_row, target, &bf16_info).ok());
  const std::string bf16 = testing::disassembly_of(bf16_info.library_path, "relax_kernel_fused_astype_matmul");
  ASSERT_FALSE(bf16.empty()) << "no bfloat16 kernel in " << bf16_info.library_path;
  EXPECT_TRUE(std::regex_search(bf16, std::regex(R"(\svpslld\s+\$0x10,.*%[yz]mm)"))) << bf16;
  EXPECT_TRUE(std::regex_search(bf16, std::regex(R"(\svfmadd\w*ps\s.*%[yz]mm)"))) << bf16;
  EXPECT_FALSE(std::regex_search(bf16, std::regex(R"(\svcvt\w*p[sd]2p[sd]\s)"))) << bf16;
}

}  // namespace
}  // namespace relax
