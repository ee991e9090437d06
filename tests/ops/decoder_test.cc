// A generated 32-layer decoder in the shape of a small language model, built with the builder
// from the operator set: token embedding through take, rms_norm, attention with rotary
// embedding, grouped KV heads and a causal mask, a SwiGLU MLP and residual adds, a final norm
// and the vocabulary projection. It deduces symbolically over the sequence length n, compiles
// once, and runs at two sequence lengths against a plain C++ implementation of the same model.
// A second test builds it with fuse-ops disabled too: fewer kernel calls fused, the same logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/visitor.h"
#include "relax/ir/well_formed.h"
#include "relax/runtime/module.h"
#include "relax/runtime/tensor.h"
#include "relax/support/check.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

constexpr int64_t kVocab = 64;
constexpr int64_t kDim = 32;
constexpr int64_t kHeads = 4;
constexpr int64_t kKvHeads = 2;
constexpr int64_t kHeadDim = 8;
constexpr int64_t kFfn = 64;
constexpr int kLayers = 32;
constexpr double kEps = 1e-5;
constexpr double kTheta = 10000;

// A row-major float matrix.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<float> v;
  float& at(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  float at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

Mat random_mat(int64_t rows, int64_t cols, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-scale, scale);
  Mat m{rows, cols, std::vector<float>(static_cast<size_t>(rows * cols))};
  for (float& x : m.v) x = d(rng);
  return m;
}

struct Layer {
  Mat norm1, wq, wk, wv, wo, norm2, wgate, wup, wdown;
};

struct Weights {
  Mat embed, norm_final, wout;
  std::vector<Layer> layers;
};

Weights make_weights() {
  std::mt19937 rng(1234);
  Weights w;
  w.embed = random_mat(kVocab, kDim, 1.0f, rng);
  for (int l = 0; l < kLayers; ++l) {
    Layer layer;
    layer.norm1 = random_mat(1, kDim, 1.0f, rng);
    for (float& x : layer.norm1.v) x = 1.0f + 0.1f * x;
    layer.wq = random_mat(kDim, kHeads * kHeadDim, 0.2f, rng);
    layer.wk = random_mat(kDim, kKvHeads * kHeadDim, 0.2f, rng);
    layer.wv = random_mat(kDim, kKvHeads * kHeadDim, 0.2f, rng);
    layer.wo = random_mat(kHeads * kHeadDim, kDim, 0.1f, rng);
    layer.norm2 = random_mat(1, kDim, 1.0f, rng);
    for (float& x : layer.norm2.v) x = 1.0f + 0.1f * x;
    layer.wgate = random_mat(kDim, kFfn, 0.2f, rng);
    layer.wup = random_mat(kDim, kFfn, 0.2f, rng);
    layer.wdown = random_mat(kFfn, kDim, 0.1f, rng);
    w.layers.push_back(std::move(layer));
  }
  w.norm_final = random_mat(1, kDim, 1.0f, rng);
  for (float& x : w.norm_final.v) x = 1.0f + 0.1f * x;
  w.wout = random_mat(kDim, kVocab, 0.2f, rng);
  return w;
}

// ---------------------------------------------------------------------------
// The plain C++ model.

Mat matmul(const Mat& a, const Mat& b) {
  Mat c{a.rows, b.cols, std::vector<float>(static_cast<size_t>(a.rows * b.cols))};
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < b.cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < a.cols; ++k) s += static_cast<double>(a.at(i, k)) * b.at(k, j);
      c.at(i, j) = static_cast<float>(s);
    }
  }
  return c;
}

Mat rms_norm(const Mat& x, const Mat& w) {
  Mat y = x;
  for (int64_t i = 0; i < x.rows; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < x.cols; ++j) ss += static_cast<double>(x.at(i, j)) * x.at(i, j);
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(x.cols) + kEps);
    for (int64_t j = 0; j < x.cols; ++j) y.at(i, j) = static_cast<float>(x.at(i, j) * r * w.at(0, j));
  }
  return y;
}

// Rotary embedding of the heads of x (rows: positions; cols: heads * kHeadDim), in place.
void rotary(Mat& x, const std::vector<int64_t>& positions, int64_t heads) {
  const int64_t half = kHeadDim / 2;
  for (int64_t p = 0; p < x.rows; ++p) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(positions[static_cast<size_t>(p)]) *
                             std::pow(kTheta, -2.0 * static_cast<double>(i) / kHeadDim);
        const double c = std::cos(angle);
        const double s = std::sin(angle);
        float& a = x.at(p, h * kHeadDim + i);
        float& b = x.at(p, h * kHeadDim + i + half);
        const double a0 = a;
        const double b0 = b;
        a = static_cast<float>(a0 * c - b0 * s);
        b = static_cast<float>(b0 * c + a0 * s);
      }
    }
  }
}

// Causal attention with grouped KV heads; q: (n, kHeads * kHeadDim), k, v: (n, kKvHeads * kHeadDim).
Mat attention(const Mat& q, const Mat& k, const Mat& v) {
  const int64_t n = q.rows;
  Mat out{n, kHeads * kHeadDim, std::vector<float>(static_cast<size_t>(n * kHeads * kHeadDim))};
  const double scale = 1.0 / std::sqrt(static_cast<double>(kHeadDim));
  for (int64_t h = 0; h < kHeads; ++h) {
    const int64_t kv = h / (kHeads / kKvHeads);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> scores(static_cast<size_t>(i + 1));
      double mx = -INFINITY;
      for (int64_t j = 0; j <= i; ++j) {
        double s = 0;
        for (int64_t d = 0; d < kHeadDim; ++d) {
          s += static_cast<double>(q.at(i, h * kHeadDim + d)) * k.at(j, kv * kHeadDim + d);
        }
        scores[static_cast<size_t>(j)] = s * scale;
        mx = std::max(mx, s * scale);
      }
      double total = 0;
      for (double& s : scores) total += (s = std::exp(s - mx));
      for (int64_t d = 0; d < kHeadDim; ++d) {
        double acc = 0;
        for (int64_t j = 0; j <= i; ++j) {
          acc += scores[static_cast<size_t>(j)] / total * v.at(j, kv * kHeadDim + d);
        }
        out.at(i, h * kHeadDim + d) = static_cast<float>(acc);
      }
    }
  }
  return out;
}

Mat reference_logits(const Weights& w, const std::vector<int64_t>& tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  std::vector<int64_t> positions(tokens.size());
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int64_t>(i);
  Mat x{n, kDim, {}};
  for (int64_t t : tokens) {
    for (int64_t j = 0; j < kDim; ++j) x.v.push_back(w.embed.at(t, j));
  }
  for (const Layer& l : w.layers) {
    Mat h = rms_norm(x, l.norm1);
    Mat q = matmul(h, l.wq);
    Mat k = matmul(h, l.wk);
    Mat v = matmul(h, l.wv);
    rotary(q, positions, kHeads);
    rotary(k, positions, kKvHeads);
    Mat o = matmul(attention(q, k, v), l.wo);
    for (size_t i = 0; i < x.v.size(); ++i) x.v[i] += o.v[i];
    Mat h2 = rms_norm(x, l.norm2);
    Mat gate = matmul(h2, l.wgate);
    Mat up = matmul(h2, l.wup);
    for (size_t i = 0; i < gate.v.size(); ++i) {
      const double g = gate.v[i];
      gate.v[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up.v[i]);
    }
    Mat d = matmul(gate, l.wdown);
    for (size_t i = 0; i < x.v.size(); ++i) x.v[i] += d.v[i];
  }
  return matmul(rms_norm(x, w.norm_final), w.wout);
}

// ---------------------------------------------------------------------------
// The same model in relax.

Expr weight(const Mat& m, bool as_vector = false) {
  std::vector<int64_t> shape = as_vector ? std::vector<int64_t>{m.cols}
                                         : std::vector<int64_t>{m.rows, m.cols};
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::from_vector(shape, m.v);
  RELAX_CHECK(t.ok()) << t.status();
  return make_constant(*t);
}

absl::StatusOr<IRModule> build_decoder(const Weights& w) {
  ModuleBuilder mb;
  SymVar n("n");
  FunctionBuilder f = mb.function("main");
  Var tokens = f.param("tokens", tensor_sinfo({n}, DataType::int64()));
  Var positions = f.param("positions", tensor_sinfo({n}, DataType::int64()));
  f.upper_bound(n, 2048);
  Var logits;
  {
    auto df = f.dataflow();
    Var x = f.emit(op::take(weight(w.embed), tokens, 0), "embed");
    for (const Layer& l : w.layers) {
      Var h = f.emit(op::rms_norm(x, weight(l.norm1, true), {-1}, kEps));
      Var q = f.emit(op::reshape(op::matmul(h, weight(l.wq)), {1, n, kHeads, kHeadDim}));
      Var k = f.emit(op::reshape(op::matmul(h, weight(l.wk)), {1, n, kKvHeads, kHeadDim}));
      Var v = f.emit(op::reshape(op::matmul(h, weight(l.wv)), {1, n, kKvHeads, kHeadDim}));
      q = f.emit(op::rotary_embedding(q, positions, kTheta));
      k = f.emit(op::rotary_embedding(k, positions, kTheta));
      Var a = f.emit(op::attention(q, k, v, std::nullopt, "BottomRight"));
      Var o = f.emit(op::matmul(op::reshape(a, {n, kHeads * kHeadDim}), weight(l.wo)));
      x = f.emit(op::add(x, o));
      Var h2 = f.emit(op::rms_norm(x, weight(l.norm2, true), {-1}, kEps));
      Var gate = f.emit(op::silu(op::matmul(h2, weight(l.wgate))));
      Var up = f.emit(op::matmul(h2, weight(l.wup)));
      Var d = f.emit(op::matmul(op::multiply(gate, up), weight(l.wdown)));
      x = f.emit(op::add(x, d));
    }
    Var h = f.emit(op::rms_norm(x, weight(w.norm_final, true), {-1}, kEps));
    logits = f.emit_output(op::matmul(h, weight(w.wout)), "logits");
  }
  f.ret(logits);
  return mb.build();
}

// The kernel cache shared by the decoder builds of this binary.
Target decoder_target() {
  Target target;
  target.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_ops_test_cache").string();
  return target;
}

// Random tokens and positions 0..n-1.
struct Prompt {
  std::vector<int64_t> tokens, positions;
};

Prompt make_prompt(int64_t n, std::mt19937& rng) {
  Prompt p;
  for (int64_t i = 0; i < n; ++i) {
    p.tokens.push_back(static_cast<int64_t>(rng() % kVocab));
    p.positions.push_back(i);
  }
  return p;
}

// The logits of `module`'s main on `prompt` (a test failure and an empty vector on error).
std::vector<float> run_decoder(const runtime::Module& module, const Prompt& prompt) {
  const auto n = static_cast<int64_t>(prompt.tokens.size());
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::from_vector({n}, prompt.tokens);
  absl::StatusOr<runtime::Tensor> p = runtime::Tensor::from_vector({n}, prompt.positions);
  EXPECT_TRUE(t.ok() && p.ok());
  if (!t.ok() || !p.ok()) return {};
  absl::StatusOr<runtime::Value> out = module["main"].call({runtime::Value(*t), runtime::Value(*p)});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  const runtime::Tensor& logits = out->tensor_or_die();
  EXPECT_EQ(logits.shape(), (std::vector<int64_t>{n, kVocab}));
  const float* data = logits.data_as_or_die<float>();
  return std::vector<float>(data, data + logits.numel());
}

// How many elements of `got` differ from `want` by more than `rel` times want's largest magnitude.
int count_wrong(const std::vector<float>& want, const std::vector<float>& got, double rel) {
  if (got.size() != want.size()) return static_cast<int>(std::max(want.size(), got.size()));
  double max_ref = 0;
  for (float v : want) max_ref = std::max(max_ref, std::abs(static_cast<double>(v)));
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::abs(static_cast<double>(got[i]) - want[i]) > rel * max_ref) ++wrong;
  }
  return wrong;
}

// The kernel calls (call_tir, call_tir_inplace, call_tir_dps) in graph function main of `mod`.
int kernel_calls_in_main(const IRModule& mod) {
  struct Counter : ExprVisitor {
    void visit_call(const Expr& e, const CallNode& call) override {
      const auto* op = call.callee.as<OpNode>();
      if (op != nullptr && (op->name == "call_tir" || op->name == "call_tir_inplace" ||
                            op->name == "call_tir_dps")) {
        ++n;
      }
      ExprVisitor::visit_call(e, call);
    }
    int n = 0;
  } counter;
  counter.visit_expr(mod.lookup("main"));
  return counter.n;
}

TEST(Decoder, ThirtyTwoLayersDeduceCompileOnceAndMatchAPlainModelAtTwoLengths) {
  const Weights w = make_weights();
  absl::StatusOr<IRModule> mod = build_decoder(w);
  ASSERT_TRUE(mod.ok()) << mod.status();
  ASSERT_TRUE(well_formed(*mod).ok());
  // Deduction keeps the sequence length symbolic through all 32 layers.
  const auto* main = mod->lookup("main").as<FunctionNode>();
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->ret.to_string(), "Tensor[(n, 64), float32, cpu]");

  absl::StatusOr<runtime::Module> module = build(*mod, decoder_target());
  ASSERT_TRUE(module.ok()) << module.status();

  std::mt19937 rng(99);
  for (int64_t n : {5, 17}) {
    SCOPED_TRACE(n);
    const Prompt prompt = make_prompt(n, rng);
    const std::vector<float> got = run_decoder(*module, prompt);
    const Mat expected = reference_logits(w, prompt.tokens);
    EXPECT_EQ(count_wrong(expected.v, got, 1e-3), 0) << "of " << expected.v.size() << " logits";
  }
}

// The same decoder with fuse-ops disabled and with the default pipeline: the
// fused module calls fewer kernels from main, and both compute the same logits
// (and the plain model's).
TEST(Decoder, FusedAndUnfusedDecodersAgreeAndFusionCallsFewerKernels) {
  const Weights w = make_weights();
  absl::StatusOr<IRModule> mod = build_decoder(w);
  ASSERT_TRUE(mod.ok()) << mod.status();

  BuildInfo fused_info;
  absl::StatusOr<runtime::Module> fused = build(*mod, decoder_target(), &fused_info);
  ASSERT_TRUE(fused.ok()) << fused.status();
  transform::PassContext ctx;
  ctx.disable_pass("fuse-ops");
  BuildInfo unfused_info;
  absl::StatusOr<runtime::Module> unfused =
      build(*mod, decoder_target(), transform::default_pipeline(decoder_target()), ctx, &unfused_info);
  ASSERT_TRUE(unfused.ok()) << unfused.status();

  const int fused_calls = kernel_calls_in_main(fused_info.lowered);
  const int unfused_calls = kernel_calls_in_main(unfused_info.lowered);
  RecordProperty("fused_kernel_calls", fused_calls);
  RecordProperty("unfused_kernel_calls", unfused_calls);
  auto kernels = [](const IRModule& m) {
    return std::count_if(m.functions().begin(), m.functions().end(),
                         [](const auto& f) { return f.second.template as<PrimFuncNode>() != nullptr; });
  };
  std::cout << "decoder kernel calls in main: fused " << fused_calls << ", unfused " << unfused_calls
            << "; distinct kernels: fused " << kernels(fused_info.lowered) << ", unfused "
            << kernels(unfused_info.lowered) << "\n";
  EXPECT_LT(fused_calls, unfused_calls);
  EXPECT_GT(fused_calls, 0);

  std::mt19937 rng(7);
  for (int64_t n : {3, 11}) {
    SCOPED_TRACE(n);
    const Prompt prompt = make_prompt(n, rng);
    const std::vector<float> f = run_decoder(*fused, prompt);
    const std::vector<float> u = run_decoder(*unfused, prompt);
    const Mat expected = reference_logits(w, prompt.tokens);
    EXPECT_EQ(count_wrong(u, f, 1e-4), 0) << "fused vs unfused, of " << u.size() << " logits";
    EXPECT_EQ(count_wrong(expected.v, f, 1e-3), 0) << "fused vs the plain model";
    EXPECT_EQ(count_wrong(expected.v, u, 1e-3), 0) << "unfused vs the plain model";
  }
}

}  // namespace
}  // namespace relax
