// ONNX Runtime as the importer tests' reference. Only units that name RELAX_SOURCE_DIR (which
// CMake then defines for them) include this header.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "relax/runtime/npy.h"
#include "relax/runtime/tensor.h"

namespace relax::frontend::onnx_test {

// ONNX Runtime runs through ort_run.js, when node and the onnxruntime-node package are there
// (bench/llama_peers.sh installs it under build/peers; RELAX_ORT_NODE_PATH names another place).
/// ONNX Runtime's outputs for `model_bytes` on `inputs` (graph input order), or why it could
/// not run: `unavailable` set when node or onnxruntime-node is missing (the caller skips).
struct OrtRun {
  std::vector<runtime::Tensor> outputs;
  std::string unavailable;
  absl::Status status;
};

inline std::string ort_node_path() {
  if (const char* p = std::getenv("RELAX_ORT_NODE_PATH")) return p;
  return std::string(RELAX_SOURCE_DIR) + "/build/peers/node_modules";
}

inline OrtRun run_ort(const std::string& model_bytes, const std::vector<runtime::Tensor>& inputs, const std::string& tag) {
  namespace fs = std::filesystem;
  OrtRun run;
  const std::string node_path = ort_node_path();
  if (std::system("command -v node > /dev/null 2>&1") != 0) {
    run.unavailable = "node is not installed";
    return run;
  }
  if (!fs::exists(fs::path(node_path) / "onnxruntime-node")) {
    run.unavailable = "onnxruntime-node is not under " + node_path + " (bench/llama_peers.sh installs it)";
    return run;
  }
  const fs::path dir = fs::path(::testing::TempDir()) / ("relax_ort_" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "model.onnx", std::ios::binary) << model_bytes;
  std::string command = absl::StrCat("NODE_PATH='", node_path, "' node '", RELAX_SOURCE_DIR, "/tests/frontend/ort_run.js' '",
                                     (dir / "model.onnx").string(), "' '", dir.string(), "'");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = (dir / absl::StrCat("in", i, ".npy")).string();
    if (absl::Status s = runtime::save_npy(file, inputs[i]); !s.ok()) {
      run.status = s;
      return run;
    }
    absl::StrAppend(&command, " '", file, "'");
  }
  absl::StrAppend(&command, " 2> '", (dir / "stderr.txt").string(), "'");
  if (std::system(command.c_str()) != 0) {
    std::ifstream err(dir / "stderr.txt");
    std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    run.status = absl::InternalError("ONNX Runtime failed: " + text);
    return run;
  }
  for (int i = 0; fs::exists(dir / absl::StrCat(i, ".npy")); ++i) {
    absl::StatusOr<runtime::Tensor> t = runtime::load_npy((dir / absl::StrCat(i, ".npy")).string());
    if (!t.ok()) {
      run.status = t.status();
      return run;
    }
    run.outputs.push_back(*std::move(t));
  }
  return run;
}
}  // namespace relax::frontend::onnx_test
