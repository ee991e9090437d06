// The rows kernels of the default CPU schedule, which read the weights once for many rows.
// Float32 and bfloat16 weights (relax_f32_rows up to 16 rows, relax_bf16_rows at every row count
// in chunks of 64, where the target has AVX-512): float products, checked against a plain double
// loop at 1e-4 at row counts 1 to 150 from one compilation (float32 above 16 rows: the tiles).
//
// Int4- and int8-weight matmuls with int8-quantised activations (relax_int4_rows_i8 and
// relax_int8_rows_i8, chosen by the default CPU schedule where the target has AVX-512 VNNI, 64
// rows per call): one compilation run
// at row counts from 1 to 150 (up to 3 chunks), checked against a plain double loop over the
// dequantised weights within the bound the kernel documents (each activation is off by at most
// half its group's step, max |x| / 254). `-exact-float` keeps every row count exact; the
// kernel's object code multiplies with vpdpbusd.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "codegen_test_util.h"
#include "object_code_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/runtime/onednn.h"
#include "relax/support/cpu_features.h"
#include "relax/support/half_float.h"
#include "relax/transform/schedule.h"

namespace relax {
namespace int8_matmul_test {
namespace {

using runtime::Tensor;

// K = 128 (4 groups), N = 200: three blocks of 64 columns and a tail of 8 in the kernel's
// vector part, and more than one parallel block.
constexpr int64_t kK = 128, kN = 200;

constexpr const char* kModule = R"(module {
  func @main(x: Tensor[(m, 128), float32], q: Tensor[(64, 200), uint8], s: Tensor[(4, 200), float32]) -> Tensor[(m, 200), float32] {
    dataflow {
      w = dequantize(q, s, group_size=32, axis=0, bits=4)
      output y = matmul(x, w)
    }
    return y
  }
  func @int8(x: Tensor[(m, 128), float32], q: Tensor[(128, 200), int8], s: Tensor[(4, 200), float32]) -> Tensor[(m, 200), float32] {
    dataflow {
      w = dequantize(q, s, group_size=32, axis=0, bits=8)
      output y = matmul(x, w)
    }
    return y
  }
})";

struct Weights {
  Tensor q, s;
  std::vector<double> w;  // dequantised, [k * kN + j]
};

// Group-wise weights of `bits` 4 (two per byte, the nibble minus 8) or 8 (signed bytes, every
// value from -128 to 127 among them).
Weights make_weights(int bits = 4) {
  Weights out;
  const int64_t rows = bits == 4 ? kK / 2 : kK;
  out.q = *Tensor::empty({rows, kN}, DataType{bits == 4 ? DataType::Code::kUInt : DataType::Code::kInt, 8, 1});
  auto* qb = static_cast<uint8_t*>(out.q.data());
  for (int64_t i = 0; i < rows * kN; ++i) qb[i] = static_cast<uint8_t>((i * 151 + 17) % 256);
  out.s = testing::random_tensor({kK / 32, kN}, 5);
  const float* s = out.s.data_as_or_die<float>();
  out.w.resize(static_cast<size_t>(kK * kN));
  for (int64_t k = 0; k < kK; ++k) {
    for (int64_t j = 0; j < kN; ++j) {
      const int value = bits == 4 ? ((qb[(k / 2) * kN + j] >> (4 * (k % 2))) & 15) - 8
                                  : static_cast<int>(static_cast<int8_t>(qb[k * kN + j]));
      out.w[static_cast<size_t>(k * kN + j)] = value * static_cast<double>(s[(k / 32) * kN + j]);
    }
  }
  return out;
}

// Row r of x with its groups' sizes spread (one group of zeros in row 0, to check that a group
// with no scale contributes nothing).
Tensor make_rows(int64_t m) {
  Tensor x = testing::random_tensor({m, kK}, static_cast<int>(m) + 40);
  float* v = static_cast<float*>(x.data());
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t k = 0; k < kK; ++k) v[r * kK + k] *= static_cast<float>(1 + (k / 32) * 3 + r % 5);
  }
  for (int64_t k = 32; k < 64; ++k) v[k] = 0.0f;
  return x;
}

// Checks y against the double product; `int8`: within the activations' rounding bound
// sum_k |w(k, j)| * max|x in k's group| / 254 (plus float rounding), else within 1e-4.
void expect_within_bound(const Tensor& x, const Weights& w, const Tensor& y, int64_t m, bool int8,
                         const std::string& what) {
  const float* a = x.data_as_or_die<float>();
  const float* got = y.data_as_or_die<float>();
  int wrong = 0;
  for (int64_t r = 0; r < m; ++r) {
    std::vector<double> half_step(kK / 32);
    for (int64_t g = 0; g < kK / 32; ++g) {
      double amax = 0;
      for (int64_t k = g * 32; k < g * 32 + 32; ++k) amax = std::max(amax, std::fabs(static_cast<double>(a[r * kK + k])));
      half_step[static_cast<size_t>(g)] = amax / 254.0;
    }
    for (int64_t j = 0; j < kN; ++j) {
      double want = 0, bound = 0, magnitude = 0;
      for (int64_t k = 0; k < kK; ++k) {
        const double wk = w.w[static_cast<size_t>(k * kN + j)];
        want += a[r * kK + k] * wk;
        magnitude += std::fabs(a[r * kK + k] * wk);
        bound += std::fabs(wk) * half_step[static_cast<size_t>(k / 32)];
      }
      const double err = std::fabs(got[r * kN + j] - want);
      const double allowed = int8 ? bound * 1.001 + 1e-5 * magnitude + 1e-6 : 1e-4 * (1.0 + std::fabs(want));
      if (!(err <= allowed) && ++wrong <= 5) {
        ADD_FAILURE() << what << " row " << r << " column " << j << ": got " << got[r * kN + j] << ", want " << want
                      << " (error " << err << ", allowed " << allowed << ")";
      }
    }
  }
  EXPECT_EQ(wrong, 0) << what;
}

runtime::Module build_main(const Target& target, BuildInfo* info) {
  absl::StatusOr<IRModule> mod = parse_module(kModule);
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return runtime::Module();
  absl::StatusOr<runtime::Module> built = build(*mod, target, info);
  EXPECT_TRUE(built.ok()) << built.status();
  return built.ok() ? *built : runtime::Module();
}

TEST(Int8MatmulBuildTest, OneCompilationServesEveryRowCountWithinTheDocumentedBound) {
  const Target target = testing::generated_code_target();
  if (transform::schedule::cpu_schedule_options(target).int8_rows == 0) {
    GTEST_SKIP() << "the target has no AVX-512 VNNI: int4 and int8 matmuls keep the exact float kernels here";
  }
  BuildInfo info;
  runtime::Module module = build_main(target, &info);
  if (::testing::Test::HasFailure()) return;
  for (int bits : {4, 8}) {
    const std::string fn = bits == 4 ? "main" : "int8";
    const Weights w = make_weights(bits);
    for (int64_t m : {1, 2, 3, 4, 5, 8, 15, 16, 17, 40, 64, 65, 150}) {
      const Tensor x = make_rows(m);
      absl::StatusOr<runtime::Value> y = module[fn](x, w.q, w.s);
      ASSERT_TRUE(y.ok()) << y.status();
      expect_within_bound(x, w, y->tensor_or_die(), m, /*int8=*/true, fn + " m = " + std::to_string(m));
    }
    // A row holding an infinity or a NaN gives non-finite outputs (as the float product would),
    // never finite garbage; the other rows stay within the bound.
    for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
      Tensor x = make_rows(3);
      static_cast<float*>(x.data())[kK + 5] = bad;  // row 1
      absl::StatusOr<runtime::Value> y = module[fn](x, w.q, w.s);
      ASSERT_TRUE(y.ok()) << y.status();
      const float* got = y->tensor_or_die().data_as_or_die<float>();
      for (int64_t j = 0; j < kN; ++j) EXPECT_FALSE(std::isfinite(got[kN + j])) << fn << " column " << j << ": " << got[kN + j];
      for (int64_t r : {0, 2}) {
        for (int64_t j = 0; j < kN; ++j) EXPECT_TRUE(std::isfinite(got[r * kN + j])) << fn << " row " << r << " column " << j;
      }
    }
  }
  // Each weight format's product is a call of its kernel in what was compiled.
  const std::string lowered = to_text(info.lowered);
  for (const char* kernel : {"call_extern relax_int4_rows_i8(", "call_extern relax_int8_rows_i8("}) {
    EXPECT_TRUE(absl::StrContains(lowered, kernel)) << kernel << " missing from\n" << lowered;
  }
  // The kernels multiply bytes with the VNNI instruction (the micro-kernel inlined into the
  // kernel, or a function of its own).
  if (!testing::run_command("objdump --version >/dev/null 2>&1")) GTEST_SKIP() << "objdump is not installed";
  const std::string code = testing::disassembly_of(info.library_path, "relax_kernel_") +
                           testing::disassembly_of(info.library_path, "relax_int4_rows_i8") +
                           testing::disassembly_of(info.library_path, "relax_mk_rows_i8");
  EXPECT_NE(code.find("vpdpbusd"), std::string::npos) << "no vpdpbusd in " << info.library_path;
}

// A target of AVX2 with AVX-VNNI (no AVX-512): the same kernels 32 columns a step, with the VEX
// form of vpdpbusd on ymm registers; the same bound at every row count.
TEST(Int8MatmulBuildTest, AvxVnniWithoutAvx512ServesEveryRowCountWithinTheBound) {
  const std::vector<std::string>& host = host_cpu_features();
  for (const char* feature : {"avx2", "fma", "avxvnni"}) {
    if (std::find(host.begin(), host.end(), feature) == host.end()) {
      GTEST_SKIP() << "this CPU has no " << feature << ": a library built for AVX-VNNI would not load here";
    }
  }
  Target target = testing::build_test_target();
  target.isa_flags = {"-march=x86-64-v3", "-mavxvnni"};
  ASSERT_EQ(transform::schedule::cpu_schedule_options(target).int8_rows, 64);
  BuildInfo info;
  runtime::Module module = build_main(target, &info);
  if (::testing::Test::HasFailure()) return;
  for (int bits : {4, 8}) {
    const std::string fn = bits == 4 ? "main" : "int8";
    const Weights w = make_weights(bits);
    for (int64_t m : {1, 2, 5, 16, 17, 65}) {
      const Tensor x = make_rows(m);
      absl::StatusOr<runtime::Value> y = module[fn](x, w.q, w.s);
      ASSERT_TRUE(y.ok()) << y.status();
      expect_within_bound(x, w, y->tensor_or_die(), m, /*int8=*/true, "AVX-VNNI " + fn + " m = " + std::to_string(m));
    }
  }
  if (!testing::run_command("objdump --version >/dev/null 2>&1")) GTEST_SKIP() << "objdump is not installed";
  const std::string code = testing::disassembly_of(info.library_path, "relax_kernel_") +
                           testing::disassembly_of(info.library_path, "relax_mk_rows_i8");
  EXPECT_TRUE(std::regex_search(code, std::regex("vpdpbusd\\s+%ymm"))) << "no ymm vpdpbusd in " << info.library_path;
  EXPECT_EQ(code.find("%zmm"), std::string::npos) << "AVX-512 code in " << info.library_path;
}

TEST(Int8MatmulBuildTest, ExactFloatKeepsFloatProductsAtEveryRowCount) {
  Target target = testing::generated_code_target();
  target.exact_float = true;
  EXPECT_EQ(transform::schedule::cpu_schedule_options(target).int8_rows, 0);
  BuildInfo info;
  runtime::Module module = build_main(target, &info);
  if (::testing::Test::HasFailure()) return;
  const Weights w = make_weights();
  for (int64_t m : {1, 3, 16}) {
    const Tensor x = make_rows(m);
    absl::StatusOr<runtime::Value> y = module["main"](x, w.q, w.s);
    ASSERT_TRUE(y.ok()) << y.status();
    expect_within_bound(x, w, y->tensor_or_die(), m, /*int8=*/false, "exact m = " + std::to_string(m));
  }
}

// K = 100 (six blocks of 16 k and a tail of 4), N = 200 (three chunks of 64 and a tail of 8).
constexpr const char* kFloatModule = R"(module {
  func @f32(x: Tensor[(m, 100), float32], w: Tensor[(100, 200), float32]) -> Tensor[(m, 200), float32] {
    y = matmul(x, w)
    return y
  }
  func @bf16(x: Tensor[(m, 100), float32], w: Tensor[(100, 200), bfloat16]) -> Tensor[(m, 200), float32] {
    dataflow {
      v = astype(w, dtype=float32)
      output y = matmul(x, v)
    }
    return y
  }
  func @f16(x: Tensor[(m, 100), float32], w: Tensor[(100, 200), float16]) -> Tensor[(m, 200), float32] {
    dataflow {
      v = astype(w, dtype=float32)
      output y = matmul(x, v)
    }
    return y
  }
})";

TEST(RowsMatmulBuildTest, Float32Bfloat16AndFloat16WeightsAreReadOnceForUpToSixteenRows) {
  const Target target = testing::generated_code_target();
  if (transform::schedule::cpu_schedule_options(target).stream_rows == 0) {
    GTEST_SKIP() << "the target has no AVX-512: small matmuls keep the tiles and single rows here";
  }
  absl::StatusOr<IRModule> mod = parse_module(kFloatModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  Target keep = target;
  testing::TempDir cache;  // compiled afresh, keeping the C++ to read
  keep.cache_dir = cache.path();
  keep.keep_source = true;
  BuildInfo info;
  absl::StatusOr<runtime::Module> built = build(*mod, keep, &info);
  ASSERT_TRUE(built.ok()) << built.status();
  const Tensor w = testing::random_tensor({100, 200}, 21);
  Tensor w16 = *Tensor::empty({100, 200}, DataType::bfloat16());
  Tensor wh = *Tensor::empty({100, 200}, DataType::float16());
  std::vector<double> wf(100 * 200), wb(100 * 200), whv(100 * 200);
  for (int64_t i = 0; i < 100 * 200; ++i) {
    const float v = w.data_as_or_die<float>()[i];
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    static_cast<uint16_t*>(w16.data())[i] = static_cast<uint16_t>(bits >> 16);
    const uint32_t widened = bits & 0xFFFF0000u;
    float back;
    std::memcpy(&back, &widened, 4);
    wf[static_cast<size_t>(i)] = v;
    wb[static_cast<size_t>(i)] = back;
    // float16 weights, some of them subnormal (|v| * 1e-4 reaches below 2^-14).
    const uint16_t half = float16_bits(i % 7 == 0 ? v * 1e-4 : v);
    static_cast<uint16_t*>(wh.data())[i] = half;
    whv[static_cast<size_t>(i)] = float16_value(half);
  }
  for (int64_t m : {1, 2, 3, 4, 5, 7, 8, 16, 17, 40, 64, 70, 150}) {
    const Tensor x = testing::random_tensor({m, 100}, static_cast<int>(m) + 60);
    const float* a = x.data_as_or_die<float>();
    for (const std::string fn : {"f32", "bf16", "f16"}) {
      const std::vector<double>& ww = fn == "f32" ? wf : fn == "bf16" ? wb : whv;
      absl::StatusOr<runtime::Value> y = (*built)[fn](x, fn == "f32" ? w : fn == "bf16" ? w16 : wh);
      ASSERT_TRUE(y.ok()) << fn << ": " << y.status();
      const float* got = y->tensor_or_die().data_as_or_die<float>();
      int wrong = 0;
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t j = 0; j < 200; ++j) {
          double want = 0;
          for (int64_t k = 0; k < 100; ++k) want += a[r * 100 + k] * ww[static_cast<size_t>(k * 200 + j)];
          if (!(std::fabs(got[r * 200 + j] - want) <= 1e-4 * (1.0 + std::fabs(want))) && ++wrong <= 3) {
            ADD_FAILURE() << fn << " m = " << m << " row " << r << " column " << j << ": got " << got[r * 200 + j]
                          << ", want " << want;
          }
        }
      }
    }
  }
  // The kernels call the rows micro-kernels (a call, not the definition copied from the header).
  std::ifstream in(info.source_path);
  ASSERT_TRUE(in.good()) << "no source at " << info.source_path;
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* kernel : {"relax_f32_rows", "relax_bf16_rows", "relax_f16_rows"}) {
    EXPECT_TRUE(std::regex_search(source, std::regex(std::string(kernel) + R"(\((?!const))"))) << kernel << " is not called";
  }
  // float16 weights are widened 16 at a time (vcvtph2ps; AVX-512 targets only get here).
  if (testing::objdump_available()) {
    const std::string code = testing::disassembly_of(info.library_path, "relax_");
    EXPECT_NE(code.find("vcvtph2ps"), std::string::npos) << "no vcvtph2ps in " << info.library_path;
  }
  // Their scratch is the runtime's (RelaxRuntimeApi::thread_scratch): a library holds no
  // thread_local state, since it is dlclose'd while the pool's threads live on.
  EXPECT_THAT(source, ::testing::HasSubstr("#define RELAX_MK_RUNTIME_SCRATCH"));
  EXPECT_THAT(source, ::testing::Not(::testing::HasSubstr("thread_local")));
}

// bfloat16 weights widened in the graph: with bf16-products (the default pipeline on AVX512-BF16)
// a product of rows not provably <= 16 goes to oneDNN as bf16 x bf16 (the rows rounded to bf16),
// one of at most 16 rows stays the float32 rows kernel.
constexpr const char* kBf16Module = R"(module {
  func @many(x: Tensor[(m, 100), float32], w: Tensor[(100, 200), bfloat16]) -> Tensor[(m, 200), float32] {
    dataflow {
      v = astype(w, dtype=float32)
      output y = matmul(x, v)
    }
    return y
  }
  func @few(x: Tensor[(b, 100), float32], w: Tensor[(100, 200), bfloat16]) -> Tensor[(b, 200), float32] upper_bounds {b: 16} {
    dataflow {
      v = astype(w, dtype=float32)
      output y = matmul(x, v)
    }
    return y
  }
})";

TEST(Bf16ProductsBuildTest, ManyRowsAreWithinTheRowsRoundingAndFewRowsExact) {
  const Target target = testing::build_test_target();
  if (!transform::schedule::cpu_schedule_options(target).bf16_products) {
    GTEST_SKIP() << "the target has no AVX512-BF16: bfloat16 weights keep float32 products here";
  }
  if (!runtime::onednn_available()) GTEST_SKIP() << "built without oneDNN";
  absl::StatusOr<IRModule> mod = parse_module(kBf16Module);
  ASSERT_TRUE(mod.ok()) << mod.status();
  BuildInfo info;
  absl::StatusOr<runtime::Module> built = build(*mod, target, &info);
  ASSERT_TRUE(built.ok()) << built.status();
  const std::string lowered = to_text(info.lowered);
  EXPECT_THAT(lowered, ::testing::HasSubstr("onednn.matmul"));
  const Tensor w32 = testing::random_tensor({100, 200}, 31);
  Tensor w = *Tensor::empty({100, 200}, DataType::bfloat16());
  std::vector<double> wd(100 * 200);
  for (int64_t i = 0; i < 100 * 200; ++i) {
    const uint16_t bits = bfloat16_bits_of_float(w32.data_as_or_die<float>()[i]);
    static_cast<uint16_t*>(w.data())[i] = bits;
    wd[static_cast<size_t>(i)] = bfloat16_value(bits);
  }
  for (const char* fn : {"many", "few"}) {
    const bool rounded = std::string(fn) == "many";
    for (int64_t m : rounded ? std::vector<int64_t>{1, 17, 40, 150} : std::vector<int64_t>{1, 5, 16}) {
      const Tensor x = testing::random_tensor({m, 100}, static_cast<int>(m) + 80);
      const float* a = x.data_as_or_die<float>();
      absl::StatusOr<runtime::Value> y = (*built)[fn](x, w);
      ASSERT_TRUE(y.ok()) << fn << ": " << y.status();
      const float* got = y->tensor_or_die().data_as_or_die<float>();
      int wrong = 0;
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t j = 0; j < 200; ++j) {
          // Each row element rounded to bf16 moves the product by |x - bf16(x)| |w| at most.
          double want = 0, bound = 0, magnitude = 0;
          for (int64_t k = 0; k < 100; ++k) {
            const double xk = a[r * 100 + k], wk = wd[static_cast<size_t>(k * 200 + j)];
            want += xk * wk;
            magnitude += std::fabs(xk * wk);
            bound += std::fabs(xk - bfloat16_value(bfloat16_bits_of_float(a[r * 100 + k]))) * std::fabs(wk);
          }
          const double allowed = (rounded ? bound : 0.0) + 1e-5 * magnitude + 1e-6;
          if (!(std::fabs(got[r * 200 + j] - want) <= allowed) && ++wrong <= 3) {
            ADD_FAILURE() << fn << " m = " << m << " row " << r << " column " << j << ": got " << got[r * 200 + j]
                          << ", want " << want << " (allowed " << allowed << ")";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace int8_matmul_test
}  // namespace relax
