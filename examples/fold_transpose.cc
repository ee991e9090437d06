// A user pass written with patterns, inside the default pipeline.
//
// `matmul(x, permute_dims(w, axes=[1, 0]))`, with w a weight (a parameter of
// the function or a constant), computes x @ w^T through a transposed copy of
// w. The pass below folds the two calls into one call_tir of a kernel that
// reads w in place ("matmul_nt": C[i, j] = sum_r A[i, r] * B[j, r]), built
// with PrimFuncBuilder. It runs before legalize-ops (which would otherwise
// turn permute_dims and matmul into kernels of their own).
//
// The program builds a small model with the builder, prints the module before
// and after the pass, builds it with the edited default pipeline, runs it at
// two sizes and compares with plain loops. Exits 1 on any mismatch.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/ir/printer.h"
#include "relax/runtime/module.h"
#include "relax/transform/pass.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pattern.h"
#include "relax/transform/pipeline.h"

namespace {

using relax::DataType;
using relax::Expr;
using relax::SymVar;
using relax::runtime::Tensor;
using namespace relax::transform;  // NOLINT(google-build-using-namespace)

// ---------------------------------------------------------------------------
// The pass.

// C[n, m] = A[n, k] @ B[m, k]^T over symbolic n, m, k: one kernel for every size.
absl::StatusOr<Expr> matmul_nt_kernel(DataType dtype) {
  SymVar n("n"), m("m"), k("k");
  relax::PrimFuncBuilder b("matmul_nt");
  relax::Buffer a = b.buffer_param("A", {n, k}, dtype);
  relax::Buffer w = b.buffer_param("B", {m, k}, dtype);
  relax::Buffer c = b.buffer_param("C", {n, m}, dtype);
  using P = relax::PrimFuncBuilder;
  b.for_("i", 0, n, relax::ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, m, [&](SymVar j) {
      b.for_("r", 0, k, [&](SymVar r) {
        b.block(
            "matmul_nt", {P::spatial(n, i), P::spatial(m, j), P::reduce(k, r)},
            [&](const std::vector<SymVar>& v) { b.store(c, {v[0], v[1]}, 0); },
            [&](const std::vector<SymVar>& v) {
              b.store(c, {v[0], v[1]},
                      b.load(c, {v[0], v[1]}) + b.load(a, {v[0], v[2]}) * b.load(w, {v[1], v[2]}));
            });
      });
    });
  });
  return b.build();
}

class FoldTransposePass : public Pass {
 public:
  FoldTransposePass()
      : Pass(PassInfo("fold-transpose", "folds matmul(x, permute_dims(weight)) into one kernel")
                 .with_statistic("folded", "matmuls of a transposed weight folded")) {}

  absl::StatusOr<relax::IRModule> run(const relax::IRModule& mod, PassContext& ctx) override {
    // x: (n, k); w: (m, k), a parameter or a constant, of x's dtype. The
    // transpose is permute_dims with axes [1, 0] or without axes (which
    // reverses the two dims). n, k and m are pattern variables: k must be
    // provably the same in x and w.
    SymVar n("n"), k("k"), m("m");
    Pattern x = wildcard().has_shape({n, k}).capture("x");
    Pattern w = (is_param() | is_const()).has_shape({m, k}).capture("w");
    Pattern transpose = is_op("permute_dims")({w});
    Pattern pattern = is_op("matmul")(
        {x, transpose.has_attr("axes", std::vector<int64_t>{1, 0}) | transpose.lacks_attr("axes")});

    int64_t folded = 0;
    absl::StatusOr<relax::IRModule> out = rewrite(
        mod, pattern,
        [](const Expr& matched, const Match& match) -> absl::StatusOr<Expr> {
          const auto* out_sinfo = matched.struct_info().as<relax::TensorStructInfoNode>();
          const auto* w_sinfo = match["w"].struct_info().as<relax::TensorStructInfoNode>();
          // Decline what the kernel does not compute: mixed or unknown dtypes.
          if (out_sinfo == nullptr || !out_sinfo->dtype || w_sinfo->dtype != out_sinfo->dtype) {
            return matched;
          }
          absl::StatusOr<Expr> kernel = matmul_nt_kernel(*out_sinfo->dtype);
          if (!kernel.ok()) return kernel.status();
          // Structurally equal kernels (same dtype) are added once.
          absl::StatusOr<Expr> gvar = match.add_function("matmul_nt", *kernel);
          if (!gvar.ok()) return gvar.status();
          return relax::op::call_tir(*gvar, {match["x"], match["w"]}, matched.struct_info());
        },
        &folded);
    ctx.add_statistic("folded", folded);
    return out;
  }
};

// ---------------------------------------------------------------------------
// The model:
//   h = x @ w1^T          (w1 a parameter: folded)
//   y = h @ w2^T          (w2 a constant, transposed without axes: folded)
//   z = h @ h^T           (h is computed, not a weight: left alone)
//   out = y + sum(z, axis 1, keepdims)

constexpr int64_t kIn = 16, kHidden = 32, kOut = 8;

float value_at(int64_t i, int64_t salt) {
  return static_cast<float>(((i * 7 + salt * 13) % 29) - 14) / 40.0f;
}

Tensor make_tensor(std::vector<int64_t> shape, int64_t salt) {
  Tensor t = *Tensor::empty(std::move(shape), DataType::float32());
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as_or_die<float>()[i] = value_at(i, salt);
  return t;
}

absl::StatusOr<relax::IRModule> model(const Tensor& w2) {
  relax::ModuleBuilder mb;
  SymVar n("n");
  relax::FunctionBuilder f = mb.function("main");
  const DataType f32 = DataType::float32();
  relax::Var x = f.param("x", relax::tensor_sinfo({n, kIn}, f32));
  relax::Var w1 = f.param("w1", relax::tensor_sinfo({kHidden, kIn}, f32));
  relax::Var out;
  {
    auto df = f.dataflow();
    relax::Var t1 = f.emit(relax::op::permute_dims(w1, std::vector<int64_t>{1, 0}), "t1");
    relax::Var h = f.emit(relax::op::matmul(x, t1), "h");
    relax::Var t2 = f.emit(relax::op::permute_dims(relax::make_constant(w2)), "t2");
    relax::Var y = f.emit(relax::op::matmul(h, t2), "y");
    relax::Var ht = f.emit(relax::op::permute_dims(h, std::vector<int64_t>{1, 0}), "ht");
    relax::Var z = f.emit(relax::op::matmul(h, ht), "z");
    relax::Var zs = f.emit(relax::op::sum(z, std::vector<int64_t>{1}, /*keepdims=*/true), "zs");
    out = f.emit_output(relax::op::add(y, zs), "out");
  }
  f.ret(out);
  return mb.build();
}

// The model as plain loops, in double.
std::vector<double> reference(const Tensor& x, const Tensor& w1, const Tensor& w2, int64_t rows) {
  const float* xs = x.data_as_or_die<float>();
  const float* w1s = w1.data_as_or_die<float>();
  const float* w2s = w2.data_as_or_die<float>();
  std::vector<double> h(static_cast<size_t>(rows * kHidden));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < kHidden; ++j) {
      double acc = 0;
      for (int64_t r = 0; r < kIn; ++r) acc += double{xs[i * kIn + r]} * w1s[j * kIn + r];
      h[i * kHidden + j] = acc;
    }
  }
  std::vector<double> out(static_cast<size_t>(rows * kOut));
  for (int64_t i = 0; i < rows; ++i) {
    double zsum = 0;
    for (int64_t l = 0; l < rows; ++l) {
      for (int64_t r = 0; r < kHidden; ++r) zsum += h[i * kHidden + r] * h[l * kHidden + r];
    }
    for (int64_t j = 0; j < kOut; ++j) {
      double acc = 0;
      for (int64_t r = 0; r < kHidden; ++r) acc += h[i * kHidden + r] * w2s[j * kHidden + r];
      out[i * kOut + j] = acc + zsum;
    }
  }
  return out;
}

int fail(const absl::Status& status) {
  std::cerr << "fold_transpose: " << status << "\n";
  return 1;
}

}  // namespace

int main() {
  const Tensor w1 = make_tensor({kHidden, kIn}, 1);
  const Tensor w2 = make_tensor({kOut, kHidden}, 2);
  absl::StatusOr<relax::IRModule> mod = model(w2);
  if (!mod.ok()) return fail(mod.status());
  relax::PrintOptions print;
  print.max_constant_elements = 4;  // the weight constant prints elided
  std::cout << "=== before fold-transpose ===\n" << relax::to_text(*mod, print);

  // The pass on its own, to show what it does.
  auto pass = std::make_shared<FoldTransposePass>();
  PassContext alone;
  absl::StatusOr<relax::IRModule> folded = PassManager({pass}).run(*mod, alone);
  if (!folded.ok()) return fail(folded.status());
  std::cout << "=== after fold-transpose ===\n" << relax::to_text(*folded, print);
  int64_t folds = 0;
  if (auto it = alone.statistics().find("fold-transpose"); it != alone.statistics().end()) {
    if (auto c = it->second.find("folded"); c != it->second.end()) folds = c->second;
  }
  std::cout << "folded: " << folds << "\n";
  if (folds != 2) return fail(absl::InternalError("expected 2 folds, got " + std::to_string(folds)));

  // The default pipeline with the pass in front of legalize-ops.
  const relax::Target target;
  PassManager pm = default_pipeline(target);
  if (absl::Status s = pm.insert_before("legalize-ops", pass); !s.ok()) return fail(s);
  std::cout << "pipeline: " << pm.to_string() << "\n";
  PassContext ctx;
  absl::StatusOr<relax::runtime::Module> m = relax::build(*mod, target, pm, ctx);
  if (!m.ok()) return fail(m.status());

  bool ok = true;
  for (int64_t rows : {3, 17}) {
    Tensor x = make_tensor({rows, kIn}, 3);
    absl::StatusOr<relax::runtime::Value> y = (*m)["main"](x, w1);
    if (!y.ok()) return fail(y.status());
    absl::StatusOr<Tensor> got = y->tensor();
    if (!got.ok()) return fail(got.status());
    std::vector<double> expected = reference(x, w1, w2, rows);
    double max_error = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      double err = std::fabs(got->data_as_or_die<float>()[i] - expected[i]);
      max_error = std::max(max_error, err / (1 + std::fabs(expected[i])));
    }
    std::printf("n = %2lld: max relative error %.3g\n", static_cast<long long>(rows), max_error);
    ok &= max_error < 1e-5;
  }
  if (!ok) return fail(absl::InternalError("results differ from the reference"));
  return 0;
}
