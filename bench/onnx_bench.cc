// The ONNX models of tests/frontend/fetch_models.sh compiled by relax against ONNX Runtime on the
// same machine, same inputs, same thread count: a driver (not a Google Benchmark program) that
// imports and compiles each model once, times its calls at each size, runs ONNX Runtime's timing
// script (bench/peers/ort_model_bench.js) on the same model and sizes, and prints one JSON line
// per model and size with both medians and their ratio. bench/onnx_peers.sh runs it at 1 and 2
// threads.
//
//   RELAX_NUM_THREADS=2 build/dev/bench/onnx_bench [--models DIR] [--reps N] [--threads 2]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/frontend/onnx.h"
#include "relax/relax.h"

namespace {

using relax::runtime::Tensor;
using Clock = std::chrono::steady_clock;

struct ModelCase {
  std::string name;
  std::string file;                            // under the models folder
  std::vector<std::vector<int64_t>> shapes;    // one input shape per size
  std::map<std::string, int64_t> dim_multiples = {};
};

Tensor random_input(const std::vector<int64_t>& shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return *Tensor::from_vector(shape, v);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out;
  for (int64_t d : s) absl::StrAppend(&out, out.empty() ? "" : "x", d);
  return out;
}

// ONNX Runtime's median milliseconds per call, from ort_model_bench.js; -1 when it cannot run.
double ort_ms(const std::string& model, const std::vector<int64_t>& shape, int reps, int threads) {
  const std::string script = std::string(RELAX_BENCH_SOURCE_DIR) + "/bench/peers/ort_model_bench.js";
  const char* node_path = std::getenv("RELAX_ORT_NODE_PATH");
  const std::string modules = node_path ? node_path : std::string(RELAX_BENCH_SOURCE_DIR) + "/build/peers/node_modules";
  const std::string command = absl::StrCat("NODE_PATH='", modules, "' node '", script, "' '", model, "' ",
                                           shape_text(shape), " ", reps, " ", threads, " 2>/dev/null");
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[256] = {0};
  const bool read = fgets(buf, sizeof buf, p) != nullptr;
  const int rc = pclose(p);
  return read && rc == 0 ? std::atof(buf) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = std::string(RELAX_BENCH_SOURCE_DIR) + "/build/models";
  int reps = 20, threads = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--benchmark", 0) == 0) continue;  // ./dev.sh bench passes Google Benchmark's flags
    if (i + 1 == argc) {
      std::cerr << "onnx_bench: " << flag << " needs a value\n";
      return 2;
    }
    if (flag == "--models") dir = argv[++i];
    else if (flag == "--reps") reps = std::atoi(argv[++i]);
    else if (flag == "--threads") threads = std::atoi(argv[++i]);
    else {
      std::cerr << "onnx_bench: unknown flag " << flag << "\n";
      return 2;
    }
  }
  const std::vector<ModelCase> cases = {
      {"ppocr_v4_rec", "ocr-models/package/assets/ch_PP-OCRv4_rec_infer.onnx",
       {{1, 3, 48, 32}, {1, 3, 48, 100}, {1, 3, 48, 320}}},
      {"ppocr_v4_det", "ocr-models/package/assets/ch_PP-OCRv4_det_infer.onnx",
       {{1, 3, 320, 320}, {1, 3, 640, 480}, {1, 3, 960, 960}},
       {{"p2o.DynamicDimension.1", 32}, {"p2o.DynamicDimension.2", 32}}},
  };
  for (const ModelCase& c : cases) {
    const std::string path = dir + "/" + c.file;
    if (!std::filesystem::exists(path)) {
      std::cout << "{\"model\": \"" << c.name << "\", \"skipped\": \"no " << path
                << " (tests/frontend/fetch_models.sh)\"}\n";
      continue;
    }
    relax::frontend::OnnxImportOptions options;
    options.weights_as_constants = true;
    options.dim_multiples = c.dim_multiples;
    const auto t0 = Clock::now();
    absl::StatusOr<relax::frontend::OnnxModel> m = relax::frontend::import_onnx_file(path, options);
    if (!m.ok()) {
      std::cerr << c.name << ": " << m.status() << "\n";
      return 1;
    }
    absl::StatusOr<relax::runtime::Module> built = relax::build(m->module, "cpu");
    if (!built.ok()) {
      std::cerr << c.name << ": " << built.status() << "\n";
      return 1;
    }
    const double compile_s = std::chrono::duration<double>(Clock::now() - t0).count();
    for (const std::vector<int64_t>& shape : c.shapes) {
      const Tensor x = random_input(shape, 1);
      std::vector<double> ms;
      for (int r = 0; r < reps + 2; ++r) {
        const auto s = Clock::now();
        absl::StatusOr<relax::runtime::Value> y = (*built)["main"](x);
        const double t = std::chrono::duration<double, std::milli>(Clock::now() - s).count();
        if (!y.ok()) {
          std::cerr << c.name << ": " << y.status() << "\n";
          return 1;
        }
        if (r >= 2) ms.push_back(t);  // two warm-up calls
      }
      const double relax_ms = median(ms);
      const double ort = ort_ms(path, shape, reps, threads);
      struct rusage usage;
      getrusage(RUSAGE_SELF, &usage);
      std::cout << "{\"model\": \"" << c.name << "\", \"input\": \"" << shape_text(shape) << "\", \"threads\": " << threads
                << ", \"relax_ms\": " << relax_ms << ", \"ort_ms\": " << ort << ", \"speedup_vs_ort\": "
                << (ort > 0 ? ort / relax_ms : -1) << ", \"compile_s\": " << compile_s
                << ", \"relax_peak_rss_mb\": " << usage.ru_maxrss / 1024 << "}\n";
    }
  }
  return 0;
}
