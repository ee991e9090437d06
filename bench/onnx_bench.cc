// The ONNX models of tests/frontend/fetch_models.sh (PaddleOCR, Silero VAD, the torch exports)
// compiled by relax against ONNX Runtime on the same machine, same inputs, same thread count: a driver (not a Google Benchmark program) that
// imports and compiles each model once, times its calls at each size, runs ONNX Runtime's timing
// script (bench/peers/ort_model_bench.js) on the same model and sizes, and prints one JSON line
// per model and size with both medians and their ratio. bench/onnx_peers.sh runs it at 1 and 2
// threads.
//
//   RELAX_NUM_THREADS=2 build/dev/bench/onnx_bench [--models DIR] [--reps N] [--threads 2] [--only MODEL]
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
#include "relax/runtime/npy.h"
#include "relax/shape/sym_expr_search.h"

namespace {

using relax::runtime::Tensor;
using Clock = std::chrono::steady_clock;

// One model and its sizes: each size binds the model's symbolic dims by name (the inputs' shapes
// follow from their annotations).
struct ModelCase {
  std::string name;
  std::string file;                                  // under the models folder
  std::vector<std::map<std::string, int64_t>> sizes;  // dim name -> value, one map per size
  std::map<std::string, int64_t> dim_multiples = {};
};

// The inputs of one call, made from the imported function's parameter annotations with the
// size's dims bound: floats uniform in [-1, 1]; int64 inputs by their role as exporters name them
// (a mask all ones, token types zeros, a sample rate 16000, other ids in [0, 100)).
absl::StatusOr<std::vector<Tensor>> make_inputs(const relax::frontend::OnnxModel& m, const std::map<std::string, int64_t>& size,
                                                uint32_t seed) {
  const auto* f = m.module.lookup("main").as<relax::FunctionNode>();
  std::mt19937 rng(seed);
  std::vector<Tensor> out;
  for (size_t i = 0; i < m.input_names.size(); ++i) {
    const std::string& name = m.input_names[i];
    const auto* t = f->params[i].struct_info().as<relax::TensorStructInfoNode>();
    if (t == nullptr || !t->shape || !t->dtype) return absl::InvalidArgumentError("input " + name + " has no known shape");
    relax::SymVarMap<int64_t> bindings;
    std::vector<int64_t> shape;
    for (const relax::SymExpr& d : *t->shape) {
      relax::any_subexpr(d, [&](const relax::SymExpr& e) {
        if (e.is_var()) {
          const relax::SymVar v = relax::SymVar::from_expr(e);
          auto it = size.find(v.name());
          if (it != size.end()) bindings[v] = it->second;
        }
        return false;
      });
      absl::StatusOr<int64_t> value = relax::evaluate(d, bindings);
      if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat("input ", name, " dim ", d.to_string(), ": ", value.status().message()));
      shape.push_back(*value);
    }
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (*t->dtype == relax::DataType::int64()) {
      std::uniform_int_distribution<int64_t> ids(0, 99);
      std::vector<int64_t> v(static_cast<size_t>(n));
      for (int64_t& x : v) {
        x = name.find("mask") != std::string::npos ? 1 : name.find("type") != std::string::npos ? 0 : name == "sr" ? 16000 : ids(rng);
      }
      out.push_back(*Tensor::from_vector(shape, v));
    } else {
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> v(static_cast<size_t>(n));
      for (float& x : v) x = dist(rng);
      out.push_back(*Tensor::from_vector(shape, v));
    }
  }
  return out;
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

std::string size_text(const std::map<std::string, int64_t>& size) {
  std::string out;
  for (const auto& [name, value] : size) absl::StrAppend(&out, out.empty() ? "" : " ", name, "=", value);
  return out;
}

// ONNX Runtime's median milliseconds per call, from ort_model_bench.js on the same inputs (saved
// as .npy files); -1 when it cannot run.
double ort_ms(const std::string& model, const std::vector<Tensor>& inputs, int reps, int threads) {
  const std::string script = std::string(RELAX_BENCH_SOURCE_DIR) + "/bench/peers/ort_model_bench.js";
  const char* node_path = std::getenv("RELAX_ORT_NODE_PATH");
  const std::string modules = node_path ? node_path : std::string(RELAX_BENCH_SOURCE_DIR) + "/build/peers/node_modules";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "relax_onnx_bench";
  std::filesystem::create_directories(dir);
  std::string command = absl::StrCat("NODE_PATH='", modules, "' node '", script, "' '", model, "' ", reps, " ", threads);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = (dir / absl::StrCat("in", i, ".npy")).string();
    if (!relax::runtime::save_npy(file, inputs[i]).ok()) return -1;
    absl::StrAppend(&command, " '", file, "'");
  }
  absl::StrAppend(&command, " 2>/dev/null");
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
  std::string only;  // --only NAME: that model alone (to profile it)
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
    else if (flag == "--only") only = argv[++i];
    else {
      std::cerr << "onnx_bench: unknown flag " << flag << "\n";
      return 2;
    }
  }
  const std::string n = "p2o.DynamicDimension.0", h = "p2o.DynamicDimension.1", w = "p2o.DynamicDimension.2";
  const std::vector<ModelCase> cases = {
      {"ppocr_v4_rec", "ocr-models/package/assets/ch_PP-OCRv4_rec_infer.onnx",
       {{{n, 1}, {h, 32}}, {{n, 1}, {h, 100}}, {{n, 1}, {h, 320}}}},
      {"ppocr_v4_det", "ocr-models/package/assets/ch_PP-OCRv4_det_infer.onnx",
       {{{n, 1}, {h + "_over_32", 10}, {w + "_over_32", 10}},
        {{n, 1}, {h + "_over_32", 20}, {w + "_over_32", 15}},
        {{n, 1}, {h + "_over_32", 30}, {w + "_over_32", 30}}},
       {{h, 32}, {w, 32}}},
      {"silero_vad", "vad-node/package/dist/silero_vad.onnx",
       {{{"batch", 1}, {"sequence", 512}}, {{"batch", 1}, {"sequence", 1536}}, {{"batch", 4}, {"sequence", 512}}}},
      // The exports of tests/frontend/export_torch_models.py (`small`: real widths, 2 layers).
      {"bert_2layer", "torch_small/bert.onnx",
       {{{"batch", 1}, {"sequence", 32}}, {{"batch", 1}, {"sequence", 128}}, {{"batch", 4}, {"sequence", 128}}}},
      {"gpt2_2layer", "torch_small/gpt2.onnx",
       {{{"batch", 1}, {"sequence", 1}, {"past_sequence", 128}},
        {{"batch", 1}, {"sequence", 1}, {"past_sequence", 512}},
        {{"batch", 1}, {"sequence", 128}, {"past_sequence", 0}}}},
      {"whisper_tiny_encoder", "torch_small/whisper_encoder.onnx",
       {{{"batch", 1}, {"frames", 200}}, {{"batch", 1}, {"frames", 1000}}, {{"batch", 1}, {"frames", 3000}}}},
      {"whisper_tiny_decoder", "torch_small/whisper_decoder.onnx",
       {{{"batch", 1}, {"tokens", 4}, {"time", 1500}},
        {{"batch", 1}, {"tokens", 32}, {"time", 1500}},
        {{"batch", 4}, {"tokens", 32}, {"time", 1500}}}},
  };
  for (const ModelCase& c : cases) {
    if (!only.empty() && c.name != only) continue;
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
    for (const std::map<std::string, int64_t>& size : c.sizes) {
      absl::StatusOr<std::vector<Tensor>> inputs = make_inputs(*m, size, 1);
      if (!inputs.ok()) {
        std::cerr << c.name << ": " << inputs.status() << "\n";
        return 1;
      }
      std::vector<relax::runtime::Value> args(inputs->begin(), inputs->end());
      std::vector<double> ms;
      for (int r = 0; r < reps + 2; ++r) {
        const auto s = Clock::now();
        absl::StatusOr<relax::runtime::Value> y = (*built)["main"].call(args);
        const double t = std::chrono::duration<double, std::milli>(Clock::now() - s).count();
        if (!y.ok()) {
          std::cerr << c.name << ": " << y.status() << "\n";
          return 1;
        }
        if (r >= 2) ms.push_back(t);  // two warm-up calls
      }
      const double relax_ms = median(ms);
      const double ort = ort_ms(path, *inputs, reps, threads);
      struct rusage usage;
      getrusage(RUSAGE_SELF, &usage);
      std::cout << "{\"model\": \"" << c.name << "\", \"size\": \"" << size_text(size) << "\", \"input0\": \""
                << shape_text((*inputs)[0].shape()) << "\", \"threads\": " << threads << ", \"relax_ms\": " << relax_ms
                << ", \"ort_ms\": " << ort << ", \"speedup_vs_ort\": " << (ort > 0 ? ort / relax_ms : -1)
                << ", \"compile_s\": " << compile_s << ", \"relax_peak_rss_mb\": " << usage.ru_maxrss / 1024 << "}\n";
    }
  }
  return 0;
}
