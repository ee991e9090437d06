// Fusion end to end through relax::build's default pipeline (legalize-ops, the
// cleanup fixed point, annotate-op-pattern, fuse-ops, fuse-tir, dce,
// simplify-loops): modules of graph-level operators and hand-written kernels
// with no op_pattern anywhere, built once with the default pipeline and once
// with fuse-ops disabled, run at three sizes of each symbolic dim from one
// compilation each, against each other and a plain-loop reference; the fused
// build must call fewer kernels, except across an effect, where the order of
// the kernels and the effect itself are checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/ir/visitor.h"
#include "relax/support/check.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/passes.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;

// One cache for the whole binary's fusion tests: both builds of a module
// compile once, and a rerun is all cache hits.

// The callees of the kernel calls (call_tir, call_tir_inplace, call_tir_dps) in graph
// function `name` of `mod`, in binding order.
std::vector<std::string> kernel_calls(const IRModule& mod, const std::string& name) {
  struct Collector : ExprVisitor {
    void visit_call(const Expr& e, const CallNode& call) override {
      const auto* op = call.callee.as<OpNode>();
      if (op != nullptr && (op->name == "call_tir" || op->name == "call_tir_inplace" ||
                            op->name == "call_tir_dps")) {
        const auto* callee = call.args[0].as<GlobalVarNode>();
        callees.push_back(callee != nullptr ? callee->name : "?");
      }
      ExprVisitor::visit_call(e, call);
    }
    std::vector<std::string> callees;
  } collector;
  const Expr func = mod.lookup(name);
  EXPECT_TRUE(func.defined()) << "no function " << name;
  if (func.defined()) collector.visit_expr(func);
  return collector.callees;
}

std::vector<float> e2e_floats(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

Tensor copy_of(const Tensor& t) {
  absl::StatusOr<Tensor> c = Tensor::from_vector(t.shape(), e2e_floats(t));
  RELAX_CHECK(c.ok()) << c.status();
  return *c;
}

// Every element of `got` within 1e-5 relative (plus 1e-6 absolute, for values
// near zero) of `want`.
void expect_close(const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1e-5f * std::fabs(want[i]) + 1e-6f) {
      if (++wrong <= 5) ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(wrong, 0) << what << ": " << wrong << " of " << want.size() << " differ";
}

// The outputs of a call: a tensor, or the fields of a tuple.
std::vector<std::vector<float>> outputs(const Value& v) {
  std::vector<std::vector<float>> out;
  if (v.is_tuple()) {
    for (const Value& f : v.fields_or_die()) out.push_back(e2e_floats(f.tensor_or_die()));
  } else {
    out.push_back(e2e_floats(v.tensor_or_die()));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The fusion patterns: one function each, in one module (so that each of its
// two builds is one kernel compilation). No kernel carries an op_pattern.

constexpr const char* kPatterns = R"(module {
  prim_func @rotary(X: Buffer[(a, 8), float32], P: Buffer[(p,), int64], Y: Buffer[(a, 8), float32], off: int64) {
    for i in range(a) parallel {
      for j in range(8) {
        block rotary(vi = spatial(a, i), vj = spatial(8, j)) {
          Y[vi, vj] = X[vi, vj] * cos(cast<float32>(P[off + vi]))
        }
      }
    }
  }
  prim_func @drop_first_row(X: Buffer[(k, 8), float32], Y: Buffer[(k - 1, 8), float32]) {
    for i in range(k - 1) parallel {
      for j in range(8) {
        block slice(vi = spatial(k - 1, i), vj = spatial(8, j)) {
          Y[vi, vj] = X[vi + 1, vj]
        }
      }
    }
  }
  prim_func @double_inplace(A: Buffer[(k, 8), float32]) {
    for i in range(k) parallel {
      for j in range(8) {
        block double(vi = spatial(k, i), vj = spatial(8, j)) {
          A[vi, vj] = A[vi, vj] * 2f32
        }
      }
    }
  }
  func @chain(x: Tensor[(n, 8), float32], y: Tensor[(n, 8), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      a = add(x, y)
      b = exp(a)
      c = multiply(b, a)
      output d = tanh(c)
    }
    return d
  }
  func @bias_relu(x: Tensor[(n, 8), float32], b: Tensor[(8,), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      a = add(x, b)
      output r = relu(a)
    }
    return r
  }
  func @epilogue(x: Tensor[(n, 16), float32], w: Tensor[(16, 8), float32], b: Tensor[(8,), float32],
                 v: Tensor[(16, 8), float32]) -> Tuple[(Tensor[(n, 8), float32], Tensor[(n, 8), float32])] {
    dataflow {
      h = matmul(x, w)
      hb = add(h, b)
      output g = gelu(hb)
      h2 = matmul(x, v)
      h2b = add(h2, b)
      output s = silu(h2b)
    }
    t = (g, s)
    return t
  }
  func @sum_exp(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    dataflow {
      e = exp(x)
      output s = sum(e, axis=[1])
    }
    return s
  }
  func @matmul_softmax(x: Tensor[(n, 16), float32], w: Tensor[(16, m), float32]) -> Tensor[(n, m), float32] {
    dataflow {
      h = matmul(x, w)
      hs = multiply(h, prim(0.25f32))
      output p = softmax(hs)
    }
    return p
  }
  func @rope(x: Tensor[(n, 8), float32], pos: Tensor[(t,), int64], y: Tensor[(n, 8), float32],
             past: Tensor[(m,), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      e = exp(x)
      r = call_tir(@rotary, (e, pos), shape(m), sinfo=Tensor[(n, 8), float32])
      output o = add(r, y)
    }
    return o
  }
  func @tail(x: Tensor[(n, 8), float32], y: Tensor[(n - 1, 8), float32])
      -> Tuple[(Tensor[(n - 1, 8), float32], Tensor[(n - 1, 8), float32])] {
    dataflow {
      a = call_tir(@drop_first_row, (x,), sinfo=Tensor[(n - 1, 8), float32])
      b = exp(a)
      output c = add(b, y)
      d = sigmoid(y)
      output e = relu(d)
    }
    t = (c, e)
    return t
  }
  func @effect(x: Tensor[(n, 8), float32], buf: Tensor[(n, 8), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      a = exp(x)
      w = call_tir_inplace(@double_inplace, (buf,), inplace_indices=[0], sinfo=Tensor[(n, 8), float32])
      b = relu(a)
      output c = add(b, w)
    }
    return c
  }
  func @bump(buf: Tensor[(n, 8), float32]) -> Tensor[(n, 8), float32] impure {
    w = call_tir_inplace(@double_inplace, (buf,), inplace_indices=[0], sinfo=Tensor[(n, 8), float32])
    return w
  }
  func @effect_call(x: Tensor[(n, 8), float32], buf: Tensor[(n, 8), float32]) -> Tensor[(n, 8), float32] impure {
    dataflow {
      output a = exp(x)
    }
    l = @bump(buf)
    dataflow {
      b = relu(a)
      output c = add(b, buf)
    }
    return c
  }
})";

// The patterns module built with the default pipeline and with fuse-ops
// disabled, once for all the tests below.
class FusionE2E : public ::testing::Test {
 protected:
  struct Builds {
    runtime::Module fused, unfused;
    IRModule fused_ir, unfused_ir;
    bool ok = false;
  };

  static void SetUpTestSuite() {
    absl::StatusOr<IRModule> mod = parse_module(kPatterns);
    ASSERT_TRUE(mod.ok()) << mod.status();
    builds_ = new Builds();
    BuildInfo fused_info;
    absl::StatusOr<runtime::Module> fused = build(*mod, testing::generated_code_target(), &fused_info);
    ASSERT_TRUE(fused.ok()) << fused.status();
    transform::PassContext ctx;
    ctx.disable_pass("fuse-ops");
    BuildInfo unfused_info;
    absl::StatusOr<runtime::Module> unfused =
        build(*mod, testing::generated_code_target(), transform::default_pipeline(testing::generated_code_target()), ctx,
              &unfused_info);
    ASSERT_TRUE(unfused.ok()) << unfused.status();
    builds_->fused = *fused;
    builds_->unfused = *unfused;
    builds_->fused_ir = fused_info.lowered;
    builds_->unfused_ir = unfused_info.lowered;
    builds_->ok = true;
  }
  static void TearDownTestSuite() {
    delete builds_;
    builds_ = nullptr;
  }
  void SetUp() override {
    if (builds_ == nullptr || !builds_->ok) GTEST_SKIP() << "the builds failed (reported above)";
  }

  // `function` has `fused` kernel calls in the fused build, more without
  // fuse-ops, and every fused_ function in the fused build is a PrimFunc (fuse-tir
  // merged each group).
  static void expect_fewer_calls(const std::string& function, size_t fused, size_t unfused) {
    const std::vector<std::string> f = kernel_calls(builds_->fused_ir, function);
    const std::vector<std::string> u = kernel_calls(builds_->unfused_ir, function);
    EXPECT_EQ(f.size(), fused) << function << " fused calls " << ::testing::PrintToString(f);
    EXPECT_EQ(u.size(), unfused) << function << " unfused calls " << ::testing::PrintToString(u);
    EXPECT_LT(f.size(), u.size()) << function;
    for (const std::string& callee : f) {
      if (callee.rfind("fused_", 0) == 0) {
        EXPECT_NE(builds_->fused_ir.lookup(callee).as<PrimFuncNode>(), nullptr) << callee << " was not merged";
      }
    }
  }

  // Calls `function` on both builds (fresh copies of the arguments each) and
  // compares both with `reference`, and each other.
  static void expect_same(const std::string& function, const std::vector<Value>& args,
                          const std::vector<std::vector<float>>& reference, const std::string& label) {
    absl::StatusOr<Value> f = builds_->fused[function].call(args);
    absl::StatusOr<Value> u = builds_->unfused[function].call(args);
    ASSERT_TRUE(f.ok()) << label << ": " << f.status();
    ASSERT_TRUE(u.ok()) << label << ": " << u.status();
    const std::vector<std::vector<float>> fo = outputs(*f), uo = outputs(*u);
    ASSERT_EQ(fo.size(), reference.size()) << label;
    ASSERT_EQ(uo.size(), reference.size()) << label;
    for (size_t k = 0; k < reference.size(); ++k) {
      const std::string what = function + " " + label + " output " + std::to_string(k);
      expect_close(reference[k], fo[k], what + " (fused vs reference)");
      expect_close(reference[k], uo[k], what + " (unfused vs reference)");
      expect_close(uo[k], fo[k], what + " (fused vs unfused)");
    }
  }

  // Calls `function`(x, buf), which doubles buf in place and returns
  // relu(exp(x)) + the doubled buf, on both builds (a fresh copy of buf each)
  // at three sizes, x and buf drawn with seeds `seed` and `seed + 1`: the
  // result and the written argument are checked against a reference.
  static void expect_relu_exp_plus_doubled_buf(const std::string& function, int seed) {
    for (int64_t n : {1, 6, 19}) {
      Tensor x = testing::random_tensor({n, 8}, seed), buf = testing::random_tensor({n, 8}, seed + 1);
      const std::vector<float> before = e2e_floats(buf);
      std::vector<float> doubled, want;
      for (int64_t i = 0; i < n * 8; ++i) {
        doubled.push_back(2 * before[i]);
        want.push_back(static_cast<float>(std::max(std::exp(double(x.data_as_or_die<float>()[i])), 0.0) + 2 * before[i]));
      }
      for (bool use_fused : {true, false}) {
        const std::string label = std::string(use_fused ? "fused" : "unfused") + ", n = " + std::to_string(n);
        Tensor arg = copy_of(buf);
        absl::StatusOr<Value> out = (use_fused ? builds_->fused : builds_->unfused)[function](x, arg);
        ASSERT_TRUE(out.ok()) << label << ": " << out.status();
        expect_close(want, e2e_floats(out->tensor_or_die()), function + " " + label);
        expect_close(doubled, e2e_floats(arg), function + " " + label + ": the written argument");
      }
    }
  }

  static Builds* builds_;
};

FusionE2E::Builds* FusionE2E::builds_ = nullptr;

// Elementwise (n, 8) -> (n, 8) reference of f(x[i], y[i]).
std::vector<float> map2(const Tensor& x, const Tensor& y, const std::function<double(double, double)>& f) {
  std::vector<float> out;
  const float* xs = x.data_as_or_die<float>();
  const float* ys = y.data_as_or_die<float>();
  for (int64_t i = 0; i < x.numel(); ++i) out.push_back(static_cast<float>(f(xs[i], ys[i])));
  return out;
}

// x (rows, k) @ w (k, cols), in double.
std::vector<double> matmul_ref(const Tensor& x, const Tensor& w) {
  const int64_t rows = x.shape()[0], k = x.shape()[1], cols = w.shape()[1];
  const float* xs = x.data_as_or_die<float>();
  const float* ws = w.data_as_or_die<float>();
  std::vector<double> out(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t r = 0; r < k; ++r) out[i * cols + j] += double(xs[i * k + r]) * ws[r * cols + j];
    }
  }
  return out;
}

TEST_F(FusionE2E, ElementwiseChain) {
  expect_fewer_calls("chain", 1, 4);
  for (int64_t n : {1, 5, 33}) {
    Tensor x = testing::random_tensor({n, 8}, 1), y = testing::random_tensor({n, 8}, 2);
    expect_same("chain", {x, y}, {map2(x, y, [](double a, double b) { return std::tanh(std::exp(a + b) * (a + b)); })},
                "n = " + std::to_string(n));
  }
}

TEST_F(FusionE2E, BroadcastBiasAddRelu) {
  expect_fewer_calls("bias_relu", 1, 2);
  Tensor b = testing::random_tensor({8}, 3);
  for (int64_t n : {1, 6, 40}) {
    Tensor x = testing::random_tensor({n, 8}, 4);
    std::vector<float> want;
    for (int64_t i = 0; i < n * 8; ++i) {
      want.push_back(std::max(x.data_as_or_die<float>()[i] + b.data_as_or_die<float>()[i % 8], 0.0f));
    }
    expect_same("bias_relu", {x, b}, {want}, "n = " + std::to_string(n));
  }
}

TEST_F(FusionE2E, MatmulBiasGeluAndSiluEpilogues) {
  expect_fewer_calls("epilogue", 2, 6);
  Tensor w = testing::random_tensor({16, 8}, 5), v = testing::random_tensor({16, 8}, 6);
  Tensor b = testing::random_tensor({8}, 7);
  for (int64_t n : {1, 7, 64}) {
    Tensor x = testing::random_tensor({n, 16}, 8);
    const std::vector<double> h = matmul_ref(x, w), h2 = matmul_ref(x, v);
    std::vector<float> g, s;
    for (int64_t i = 0; i < n * 8; ++i) {
      const double hb = h[i] + b.data_as_or_die<float>()[i % 8];
      const double h2b = h2[i] + b.data_as_or_die<float>()[i % 8];
      g.push_back(static_cast<float>(0.5 * hb * (1 + std::erf(hb / std::sqrt(2.0)))));
      s.push_back(static_cast<float>(h2b / (1 + std::exp(-h2b))));
    }
    expect_same("epilogue", {x, w, b, v}, {g, s}, "n = " + std::to_string(n));
  }
}

TEST_F(FusionE2E, ReductionTakesItsElementwiseProducer) {
  expect_fewer_calls("sum_exp", 1, 2);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 17}, {16, 5}}) {
    Tensor x = testing::random_tensor({n, m}, 9);
    std::vector<float> want;
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (int64_t j = 0; j < m; ++j) s += std::exp(double(x.data_as_or_die<float>()[i * m + j]));
      want.push_back(static_cast<float>(s));
    }
    expect_same("sum_exp", {x}, {want}, "n = " + std::to_string(n) + ", m = " + std::to_string(m));
  }
}

// The scale joins the matmul as its epilogue; softmax (a reduction) takes no
// output-elementwise-fusible producer (one anchor per group), so it stays a kernel.
TEST_F(FusionE2E, SoftmaxAfterMatmul) {
  expect_fewer_calls("matmul_softmax", 2, 3);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 3}, {5, 1}, {12, 29}}) {
    Tensor x = testing::random_tensor({n, 16}, 10), w = testing::random_tensor({16, m}, 11);
    const std::vector<double> h = matmul_ref(x, w);
    std::vector<float> want;
    for (int64_t i = 0; i < n; ++i) {
      double mx = -INFINITY, total = 0;
      for (int64_t j = 0; j < m; ++j) mx = std::max(mx, 0.25 * h[i * m + j]);
      for (int64_t j = 0; j < m; ++j) total += std::exp(0.25 * h[i * m + j] - mx);
      for (int64_t j = 0; j < m; ++j) want.push_back(static_cast<float>(std::exp(0.25 * h[i * m + j] - mx) / total));
    }
    expect_same("matmul_softmax", {x, w}, {want}, "n = " + std::to_string(n) + ", m = " + std::to_string(m));
  }
}

// m reaches the rotary kernel only through call_tir's extra_sym_args: the fused
// kernel takes it as a trailing scalar.
TEST_F(FusionE2E, RotaryWithIndexOnlyVariable) {
  expect_fewer_calls("rope", 1, 3);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {4, 3}, {9, 12}}) {
    Tensor x = testing::random_tensor({n, 8}, 12), y = testing::random_tensor({n, 8}, 13);
    Tensor past = testing::random_tensor({m}, 14);
    Tensor pos = *Tensor::empty({n + m + 2}, DataType::int64());
    for (int64_t k = 0; k < n + m + 2; ++k) pos.data_as_or_die<int64_t>()[k] = 3 * k + 1;
    std::vector<float> want;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 8; ++j) {
        const float angle = static_cast<float>(3 * (m + i) + 1);
        want.push_back(static_cast<float>(std::exp(double(x.data_as_or_die<float>()[i * 8 + j])) * std::cos(angle) +
                                          y.data_as_or_die<float>()[i * 8 + j]));
      }
    }
    expect_same("rope", {x, pos, y, past}, {want}, "n = " + std::to_string(n) + ", m = " + std::to_string(m));
  }
}

// x[1:] and buffers of n - 1 rows; the second group knows n only from its
// trailing Shape.
TEST_F(FusionE2E, ExpressionDimNMinusOne) {
  expect_fewer_calls("tail", 2, 5);
  for (int64_t n : {2, 5, 40}) {
    Tensor x = testing::random_tensor({n, 8}, 15), y = testing::random_tensor({n - 1, 8}, 16);
    std::vector<float> c, e;
    for (int64_t i = 0; i < (n - 1) * 8; ++i) {
      const double yv = y.data_as_or_die<float>()[i];
      c.push_back(static_cast<float>(std::exp(double(x.data_as_or_die<float>()[i + 8])) + yv));
      e.push_back(static_cast<float>(std::max(1 / (1 + std::exp(-yv)), 0.0)));
    }
    expect_same("tail", {x, y}, {c, e}, "n = " + std::to_string(n));
  }
}

// relu(exp(x)) would fuse, but an in-place write stands between exp and relu:
// exp stays alone before it, relu joins the add after it, and the caller's
// tensor holds the doubled values.
TEST_F(FusionE2E, NothingMovesAcrossAnInplaceWrite) {
  const std::vector<std::string> fused = kernel_calls(builds_->fused_ir, "effect");
  ASSERT_EQ(fused.size(), 3u) << ::testing::PrintToString(fused);
  EXPECT_EQ(fused[0], "exp");
  EXPECT_EQ(fused[1], "double_inplace");
  EXPECT_EQ(fused[2].rfind("fused_relu_add", 0), 0u) << fused[2];
  EXPECT_EQ(kernel_calls(builds_->unfused_ir, "effect").size(), 4u);
  expect_relu_exp_plus_doubled_buf("effect", 17);
}

// An impure call whose result is unused, between two dataflow blocks: it is
// kept and runs before the kernel that reads the tensor it wrote.
TEST_F(FusionE2E, AnUnusedImpureCallIsKeptInPlace) {
  const std::vector<std::string> fused = kernel_calls(builds_->fused_ir, "effect_call");
  ASSERT_EQ(fused.size(), 2u) << ::testing::PrintToString(fused);
  EXPECT_EQ(fused[0], "exp");
  EXPECT_EQ(fused[1].rfind("fused_relu_add", 0), 0u) << fused[1];
  EXPECT_EQ(kernel_calls(builds_->unfused_ir, "effect_call").size(), 3u);
  EXPECT_EQ(kernel_calls(builds_->fused_ir, "bump"), std::vector<std::string>{"double_inplace"});
  expect_relu_exp_plus_doubled_buf("effect_call", 19);
}

// ---------------------------------------------------------------------------
// The user-written group-wise int4 dequantisation, two weights a byte:
//   W[k, j] = (float((q[k / 2, j] >> (4 * (k % 2))) & 15) - 8) * scale[k / 32, j]
// called with call_tir and followed by matmul(x, W), written by hand with no
// annotation: classified from its loops and fused into the matmul's kernel.

constexpr int64_t kK = 64, kN = 16, kGroup = 32;

constexpr const char* kDequantMatmul = R"(module {
  prim_func @dequant_int4(Q: Buffer[(32, 16), uint8], S: Buffer[(2, 16), float32], W: Buffer[(64, 16), float32]) {
    for k in range(64) parallel {
      for j in range(16) {
        block dequant(vk = spatial(64, k), vj = spatial(16, j)) {
          W[vk, vj] = (cast<float32>(bitwise_and(shift_right(Q[floordiv(vk, 2), vj], cast<uint8>(4 * floormod(vk, 2))), cast<uint8>(15))) - 8f32) * S[floordiv(vk, 32), vj]
        }
      }
    }
  }
  func @main(x: Tensor[(m, 64), float32], q: Tensor[(32, 16), uint8], s: Tensor[(2, 16), float32]) -> Tensor[(m, 16), float32] {
    dataflow {
      w = call_tir(@dequant_int4, (q, s), sinfo=Tensor[(64, 16), float32])
      output y = matmul(x, w)
    }
    return y
  }
})";

TEST(FusionE2EDequant, HandWrittenInt4DequantisationIsClassifiedAndFusedIntoTheMatmul) {
  absl::StatusOr<IRModule> mod = parse_module(kDequantMatmul);
  ASSERT_TRUE(mod.ok()) << mod.status();
  ASSERT_FALSE(mod->lookup("dequant_int4").as<PrimFuncNode>()->attrs.contains("op_pattern"));

  // Classified from its loops alone.
  absl::StatusOr<IRModule> annotated = transform::PassManager({transform::create_annotate_op_pattern_pass()}).run(*mod);
  ASSERT_TRUE(annotated.ok()) << annotated.status();
  EXPECT_EQ(transform::op_pattern_of(*annotated->lookup("dequant_int4").as<PrimFuncNode>()),
            transform::OpPattern::kInjective);

  // The default pipeline: one kernel, the dequantisation inside the matmul's (float products:
  // rows_matmul_build_test.cc checks the int8-activation kernel against its bound).
  BuildInfo info;
  Target target = testing::generated_code_target();
  target.exact_float = true;
  absl::StatusOr<runtime::Module> built = build(*mod, target, &info);
  ASSERT_TRUE(built.ok()) << built.status();
  const std::vector<std::string> calls = kernel_calls(info.lowered, "main");
  ASSERT_EQ(calls.size(), 1u) << ::testing::PrintToString(calls);
  EXPECT_EQ(calls[0], "fused_dequant_int4_matmul");
  EXPECT_NE(info.lowered.lookup(calls[0]).as<PrimFuncNode>(), nullptr);
  EXPECT_FALSE(info.lowered.contains("dequant_int4")) << "the unfused kernel should be gone";

  // Packed weights with every nibble value, scales of both groups.
  std::vector<uint8_t> packed(static_cast<size_t>(kK / 2 * kN));
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  Tensor q = *Tensor::from_vector({kK / 2, kN}, packed);
  Tensor s = testing::random_tensor({kK / kGroup, kN}, 21);
  std::vector<double> weight(static_cast<size_t>(kK * kN));
  for (int64_t k = 0; k < kK; ++k) {
    for (int64_t j = 0; j < kN; ++j) {
      const int nibble = (packed[static_cast<size_t>(k / 2 * kN + j)] >> (4 * (k % 2))) & 15;
      weight[k * kN + j] = (nibble - 8) * double(s.data_as_or_die<float>()[k / kGroup * kN + j]);
    }
  }
  for (int64_t m : {1, 7, 33}) {
    Tensor x = testing::random_tensor({m, kK}, 22);
    std::vector<float> want;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < kN; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < kK; ++k) acc += double(x.data_as_or_die<float>()[i * kK + k]) * weight[k * kN + j];
        want.push_back(static_cast<float>(acc));
      }
    }
    absl::StatusOr<Value> y = (*built)["main"](x, q, s);
    ASSERT_TRUE(y.ok()) << "m = " << m << ": " << y.status();
    ASSERT_EQ(y->tensor_or_die().shape(), (std::vector<int64_t>{m, kN}));
    // Sums of 64 products of magnitude up to 8: an absolute bound scaled to them.
    const std::vector<float> got = e2e_floats(y->tensor_or_die());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])) + 1e-5) << "m = " << m << " at " << i;
    }
  }
}

}  // namespace
}  // namespace relax
