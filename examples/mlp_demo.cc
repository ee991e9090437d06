// End to end: a two-layer MLP with symbolic batch and sequence length,
// compiled once and called at several sizes, then shipped as one shared
// library and run in a fresh process that links only the relax runtime.
//
//   y = softmax(reshape(relu(reshape(x, (b*s, 16)) @ w1 + b1) @ w2 + b2, (b, s, 8)))
//
// The weights are constants of the module (so the exported library carries
// them); relu is a hand-written loop-level kernel called with call_tir, every
// other operator is legalized into generated loop code. Each result is checked
// against a plain C++ reference. Exits 1 on any mismatch.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/ir/printer.h"
#include "relax/runtime/module.h"

namespace {

using relax::DataType;
using relax::SymExpr;
using relax::SymVar;
using relax::runtime::Tensor;

constexpr int64_t kIn = 16, kHidden = 32, kOut = 8;

// Deterministic test data: the AOT runner (aot_runner.cc) uses the same formula.
float input_value(int64_t i) { return static_cast<float>((i * 37 % 101) - 50) / 50.0f; }
float weight_value(int64_t i, int64_t salt) {
  return static_cast<float>(((i * 7 + salt * 13) % 29) - 14) / 40.0f;
}

Tensor make_weight(std::vector<int64_t> shape, int64_t salt) {
  Tensor t = *Tensor::empty(shape, DataType::float32());
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as_or_die<float>()[i] = weight_value(i, salt);
  return t;
}

// relu over an (m, kHidden) buffer, written with the loop-level builder.
absl::StatusOr<relax::Expr> relu_kernel() {
  SymVar m("m");
  relax::PrimFuncBuilder b("relu");
  relax::Buffer x = b.buffer_param("X", {m, kHidden}, DataType::float32());
  relax::Buffer y = b.buffer_param("Y", {m, kHidden}, DataType::float32());
  b.for_("i", 0, m, relax::ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, kHidden, [&](SymVar j) {
      b.block("relu", {relax::PrimFuncBuilder::spatial(m, i), relax::PrimFuncBuilder::spatial(kHidden, j)},
              [&](const std::vector<SymVar>& v) {
                b.store(y, {v[0], v[1]},
                        relax::max(b.load(x, {v[0], v[1]}), SymExpr::float_imm(0.0, DataType::float32())));
              });
    });
  });
  return b.build();
}

struct Weights {
  Tensor w1 = make_weight({kIn, kHidden}, 1), b1 = make_weight({kHidden}, 2);
  Tensor w2 = make_weight({kHidden, kOut}, 3), b2 = make_weight({kOut}, 4);
};

absl::StatusOr<relax::IRModule> mlp_module(const Weights& w) {
  relax::ModuleBuilder mb;
  absl::StatusOr<relax::Expr> relu = relu_kernel();
  if (!relu.ok()) return relu.status();
  relax::Expr relu_gv = mb.add_prim_func("relu", *relu);

  SymVar b("b"), s("s");
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({b, s, kIn}, DataType::float32()));
  relax::Var y;
  {
    auto df = f.dataflow();
    relax::Var x2 = f.emit(relax::op::reshape(x, {b * s, kIn}), "x2");
    relax::Var h = f.emit(relax::op::matmul(x2, relax::make_constant(w.w1)), "h");
    relax::Var hb = f.emit(relax::op::add(h, relax::make_constant(w.b1)), "hb");
    relax::Var a = f.emit(relax::op::call_tir(relu_gv, {hb},
                                              relax::tensor_sinfo({b * s, kHidden}, DataType::float32())),
                          "a");
    relax::Var o = f.emit(relax::op::matmul(a, relax::make_constant(w.w2)), "o");
    relax::Var ob = f.emit(relax::op::add(o, relax::make_constant(w.b2)), "ob");
    relax::Var o3 = f.emit(relax::op::reshape(ob, {b, s, kOut}), "o3");
    y = f.emit_output(relax::op::softmax(o3, -1), "y");
  }
  f.ret(y);
  return mb.build();
}

// The same model as plain loops.
std::vector<float> reference(const std::vector<float>& x, int64_t rows, const Weights& w) {
  std::vector<float> out(static_cast<size_t>(rows * kOut));
  for (int64_t r = 0; r < rows; ++r) {
    float hidden[kHidden];
    for (int64_t j = 0; j < kHidden; ++j) {
      float acc = 0;
      for (int64_t k = 0; k < kIn; ++k) acc += x[r * kIn + k] * w.w1.data_as_or_die<float>()[k * kHidden + j];
      hidden[j] = std::max(acc + w.b1.data_as_or_die<float>()[j], 0.0f);
    }
    float logits[kOut], max_logit = -INFINITY, total = 0;
    for (int64_t j = 0; j < kOut; ++j) {
      float acc = 0;
      for (int64_t k = 0; k < kHidden; ++k) acc += hidden[k] * w.w2.data_as_or_die<float>()[k * kOut + j];
      logits[j] = acc + w.b2.data_as_or_die<float>()[j];
      max_logit = std::max(max_logit, logits[j]);
    }
    for (int64_t j = 0; j < kOut; ++j) total += (logits[j] = std::exp(logits[j] - max_logit));
    for (int64_t j = 0; j < kOut; ++j) out[r * kOut + j] = logits[j] / total;
  }
  return out;
}

struct RunResult {
  double max_error = 0;  // largest deviation from the reference
  double checksum = 0;   // sum of y[r, c] * (c + 1), as aot_runner prints it
};

// Runs the model at (batch, seq) and compares with the reference.
absl::StatusOr<RunResult> run_once(const relax::runtime::Module& m, const Weights& w, int64_t batch,
                                   int64_t seq) {
  Tensor x = *Tensor::empty({batch, seq, kIn}, DataType::float32());
  std::vector<float> xs(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as_or_die<float>()[i] = xs[i] = input_value(i);
  absl::StatusOr<relax::runtime::Value> y = m["main"](x);
  if (!y.ok()) return y.status();
  std::vector<float> expected = reference(xs, batch * seq, w);
  RunResult r;
  absl::StatusOr<Tensor> out = y->tensor();
  if (!out.ok()) return out.status();
  absl::StatusOr<const float*> got = out->data_as<const float>();
  if (!got.ok()) return got.status();
  for (size_t i = 0; i < expected.size(); ++i) {
    r.max_error = std::max(r.max_error, std::fabs(static_cast<double>((*got)[i] - expected[i])));
    r.checksum += (*got)[i] * static_cast<double>(i % kOut + 1);
  }
  return r;
}

std::string self_dir() {
  return std::filesystem::canonical("/proc/self/exe").parent_path().string();
}

}  // namespace

int main() {
  Weights w;
  absl::StatusOr<relax::IRModule> mod = mlp_module(w);
  if (!mod.ok()) {
    std::cerr << mod.status() << "\n";
    return 1;
  }
  std::cout << "== the model (weights elided as constants) ==\n" << relax::to_text(*mod, {.max_constant_elements = 4}) << "\n";

  relax::BuildInfo info;
  absl::StatusOr<relax::runtime::Module> m = relax::build(*mod, "cpu", &info);
  if (!m.ok()) {
    std::cerr << "build failed: " << m.status() << "\n";
    return 1;
  }
  std::cout << "== compiled once: " << info.lowered.functions().size() - 1 << " kernels, "
            << (info.cache_hit ? "JIT cache hit" : "compiled now") << " ==\n";

  bool ok = true;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {2, 7}, {4, 64}, {3, 300}}) {
    absl::StatusOr<RunResult> run = run_once(*m, w, batch, seq);
    if (!run.ok()) {
      std::cerr << run.status() << "\n";
      return 1;
    }
    bool good = run->max_error < 1e-5;
    ok = ok && good;
    std::printf("main(x: (%lld, %lld, %lld)) -> (%lld, %lld, %lld)  max |error| vs reference %.2e  %s\n",
                static_cast<long long>(batch), static_cast<long long>(seq), static_cast<long long>(kIn),
                static_cast<long long>(batch), static_cast<long long>(seq), static_cast<long long>(kOut),
                run->max_error, good ? "ok" : "MISMATCH");
  }

  // A wrong shape is an error naming the argument, not a crash.
  Tensor bad = *Tensor::empty({2, 3, kIn + 1}, DataType::float32());
  absl::StatusOr<relax::runtime::Value> rejected = (*m)["main"](bad);
  std::cout << "main(x: (2, 3, 17)) -> " << rejected.status().message() << "\n";
  ok = ok && !rejected.ok();

  // AOT: one shared object, run by a process that links only the runtime.
  std::string lib = (std::filesystem::temp_directory_path() /
                     ("relax_mlp_demo_" + std::to_string(getpid()) + ".so")).string();
  if (absl::Status s = m->export_library(lib); !s.ok()) {
    std::cerr << "export failed: " << s << "\n";
    return 1;
  }
  absl::StatusOr<RunResult> local = run_once(*m, w, 2, 5);
  std::cout << "exported " << lib << " (" << std::filesystem::file_size(lib) / 1024 << " KiB); "
            << "running it in a fresh process:\n" << std::flush;
  std::string cmd = "'" + self_dir() + "/aot_runner' '" + lib + "' 2 5";
  std::string output;
  if (FILE* pipe = popen(cmd.c_str(), "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, pipe) != nullptr) output += line;
    ok = ok && pclose(pipe) == 0;
  } else {
    ok = false;
  }
  std::filesystem::remove(lib);
  std::cout << output;
  size_t at = output.find("checksum ");
  double remote = at == std::string::npos ? NAN : std::atof(output.c_str() + at + 9);
  bool same = local.ok() && std::fabs(remote - local->checksum) < 1e-4;
  std::printf("in-process checksum %.6f, fresh process %.6f  %s\n", local.ok() ? local->checksum : NAN,
              remote, same ? "ok" : "MISMATCH");
  ok = ok && same;
  std::cout << (ok ? "all checks passed\n" : "SOME CHECKS FAILED\n");
  return ok ? 0 : 1;
}
