// Helpers of the CUDA code generator tests: the default pipeline for cuda
// without libraries, and one module per operator family.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "relax/ir/module.h"
#include "relax/ir/parser.h"
#include "relax/support/target.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pipeline.h"

namespace relax::testing {

inline Target cuda_test_target(const std::string& arch) {
  Target t;
  t.kind = "cuda";
  t.cuda_arch = arch;
  t.libraries.clear();
  return t;
}

/// The default pipeline for the cuda target without libraries (no dispatch:
/// every operator becomes a generated kernel), scheduled by schedule-gpu.
inline absl::StatusOr<IRModule> cuda_test_lower(const IRModule& mod) {
  return transform::default_pipeline(cuda_test_target("sm_90")).run(mod);
}

/// The module text, parsed and lowered for cuda (a test failure when either fails).
inline IRModule cuda_test_lowered(const std::string& text) {
  absl::StatusOr<IRModule> parsed = parse_module(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return IRModule();
  absl::StatusOr<IRModule> lowered = cuda_test_lower(*parsed);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return lowered.ok() ? *lowered : IRModule();
}

/// One module per operator family: (family, module text).
inline std::vector<std::pair<std::string, std::string>> cuda_test_families() {
  auto one = [](const std::string& params, const std::string& ret, const std::string& body) {
    // The calls in one dataflow block (what fusion groups); the last binding is its output.
    std::string flow = body.substr(0, body.rfind("    return r"));
    const size_t last = flow.rfind("    r = ");
    flow = flow.substr(0, last) + "    output r = " + flow.substr(last + 8);
    std::string indented;
    for (size_t at = 0; at < flow.size();) {
      const size_t end = flow.find('\n', at);
      indented += "  " + flow.substr(at, end - at + 1);
      at = end + 1;
    }
    return "module {\n  func @main(" + params + ") -> " + ret + " {\n    dataflow {\n" + indented +
           "    }\n    return r\n  }\n}\n";
  };
  return {
      {"elementwise", one("x: Tensor[(n, 64), float32], y: Tensor[(n, 64), float32]", "Tensor[(n, 64), float32]",
                          "    a = add(x, y)\n    b = multiply(a, x)\n    r = exp(b)\n    return r")},
      {"broadcast", one("x: Tensor[(n, 64), float32], b: Tensor[(64,), float32]", "Tensor[(n, 64), float32]",
                        "    r = add(x, b)\n    return r")},
      {"transpose", one("x: Tensor[(n, 48), float32]", "Tensor[(48, n), float32]",
                        "    r = permute_dims(x, axes=[1, 0])\n    return r")},
      {"concat", one("x: Tensor[(n, 16), float32], y: Tensor[(n, 8), float32]", "Tensor[(n, 24), float32]",
                     "    t = (x, y)\n    r = concat(t, axis=1)\n    return r")},
      {"reshape", one("x: Tensor[(8, 64), float32]", "Tensor[(64, 8), float32]",
                      "    a = exp(x)\n    r = reshape(a, shape(64, 8))\n    return r")},
      {"sum", one("x: Tensor[(n, m), float32]", "Tensor[(n,), float32]", "    r = sum(x, axis=[1])\n    return r")},
      {"max", one("x: Tensor[(n, m), float32]", "Tensor[(n,), float32]", "    r = max(x, axis=[1])\n    return r")},
      {"sum_all", one("x: Tensor[(n, 32), float32]", "Tensor[(), float32]", "    r = sum(x)\n    return r")},
      {"softmax", one("x: Tensor[(n, m), float32]", "Tensor[(n, m), float32]", "    r = softmax(x)\n    return r")},
      {"layer_norm", one("x: Tensor[(n, 96), float32], g: Tensor[(96,), float32], b: Tensor[(96,), float32]",
                         "Tensor[(n, 96), float32]", "    r = layer_norm(x, g, b)\n    return r")},
      {"rms_norm", one("x: Tensor[(n, m), float32], w: Tensor[(m,), float32]", "Tensor[(n, m), float32]",
                       "    r = rms_norm(x, w)\n    return r")},
      {"matmul", one("x: Tensor[(n, 128), float32], w: Tensor[(128, 96), float32]", "Tensor[(n, 96), float32]",
                     "    r = matmul(x, w)\n    return r")},
      {"matmul_bf16", one("x: Tensor[(n, 64), float32], w16: Tensor[(64, 80), bfloat16]", "Tensor[(n, 80), float32]",
                          "    w = astype(w16, dtype=float32)\n    r = matmul(x, w)\n    return r")},
      {"matmul_int4", one("x: Tensor[(n, 64), float32], p: Tensor[(32, 64), uint8], s: Tensor[(2, 64), float32]",
                          "Tensor[(n, 64), float32]",
                          "    w = dequantize(p, s, group_size=32, axis=0, bits=4)\n    r = matmul(x, w)\n"
                          "    return r")},
      {"matvec_f32", one("x: Tensor[(1, 64), float32], w: Tensor[(64, 96), float32]", "Tensor[(1, 96), float32]",
                         "    r = matmul(x, w)\n    return r")},
      {"matvec_bf16", one("x: Tensor[(1, 64), float32], w16: Tensor[(64, 80), bfloat16]", "Tensor[(1, 80), float32]",
                          "    w = astype(w16, dtype=float32)\n    r = matmul(x, w)\n    return r")},
      {"matvec_int8", one("x: Tensor[(1, 64), float32], p: Tensor[(64, 96), int8], s: Tensor[(2, 96), float32]",
                          "Tensor[(1, 96), float32]",
                          "    w = dequantize(p, s, group_size=32, axis=0, bits=8)\n    r = matmul(x, w)\n"
                          "    return r")},
      {"matvec_int4", one("x: Tensor[(1, 64), float32], p: Tensor[(32, 96), uint8], s: Tensor[(2, 96), float32]",
                          "Tensor[(1, 96), float32]",
                          "    w = dequantize(p, s, group_size=32, axis=0, bits=4)\n    r = matmul(x, w)\n"
                          "    return r")},
      {"linear", one("x: Tensor[(n, 64), float32], w: Tensor[(96, 64), float32]", "Tensor[(n, 96), float32]",
                     "    r = linear(x, w)\n    return r")},
      {"matvec_linear", one("x: Tensor[(2, 64), float32], w: Tensor[(96, 64), float32]", "Tensor[(2, 96), float32]",
                            "    r = linear(x, w)\n    return r")},
      {"conv2d", one("x: Tensor[(1, 4, 10, 10), float32], k: Tensor[(8, 4, 3, 3), float32]",
                     "Tensor[(1, 8, 10, 10), float32]", "    r = conv2d(x, k, padding=[1, 1])\n    return r")},
      {"rotary", one("x: Tensor[(1, s, 4, 64), float32], p: Tensor[(s,), int64]", "Tensor[(1, s, 4, 64), float32]",
                     "    r = rotary_embedding(x, p)\n    return r")},
      {"cast_half", one("x: Tensor[(n, 32), float32]", "Tensor[(n, 32), float32]",
                        "    h = astype(x, dtype=float16)\n    b = astype(x, dtype=bfloat16)\n"
                        "    h2 = astype(h, dtype=float32)\n    b2 = astype(b, dtype=float32)\n"
                        "    r = add(h2, b2)\n    return r")},
      {"take", one("x: Tensor[(16, 64), float32], i: Tensor[(n,), int64]", "Tensor[(n, 64), float32]",
                   "    r = take(x, i, axis=0)\n    return r")},
      {"where", one("c: Tensor[(n, 32), bool], x: Tensor[(n, 32), float32], y: Tensor[(n, 32), float32]",
                    "Tensor[(n, 32), float32]", "    r = where(c, x, y)\n    return r")},
  };
}

/// The family's module text (empty when there is none).
inline std::string cuda_test_family(const std::string& name) {
  for (const auto& [family, text] : cuda_test_families()) {
    if (family == name) return text;
  }
  ADD_FAILURE() << "no family " << name;
  return std::string();
}

}  // namespace relax::testing
