// fuse-ops end to end: a module of hand-written kernels (their op_pattern
// written by hand, as annotate-op-pattern would) built once with fuse-ops and
// no fuse-tir -- so the VM calls the private grouped graph functions -- and once
// without it, compared with each other (bit for bit: the same kernels run in
// the same order) and with a plain loop reference, at three sizes of the
// symbolic dim from one compilation each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "../transform/fusion_test_kernels.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/transform/passes.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;

// The graph functions over the shared kernels.
constexpr const char* kFunctions = R"(
  func @mlp(x: Tensor[(n, 4), float32], w: Tensor[(4, 4), float32], bias: Tensor[(4,), float32])
      -> Tuple[(Tensor[(n, 4), float32], Tensor[(n,), float32])] {
    dataflow {
      h0 = call_tir(@matmul, (x, w), sinfo=Tensor[(n, 4), float32])
      h1 = call_tir(@bias_add, (h0, bias), sinfo=Tensor[(n, 4), float32])
      h2 = call_tir(@relu, (h1,), sinfo=Tensor[(n, 4), float32])
      a = call_tir(@exp, (h2,), sinfo=Tensor[(n, 4), float32])
      output b = call_tir(@relu, (a,), sinfo=Tensor[(n, 4), float32])
      c = call_tir(@add, (a, b), sinfo=Tensor[(n, 4), float32])
      output s = call_tir(@rowsum, (c,), sinfo=Tensor[(n,), float32])
    }
    t = (b, s)
    return t
  }
  func @rope(x: Tensor[(n, 4), float32], pos: Tensor[(k,), float32], cache: Tensor[(m, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      a = call_tir(@exp, (x,), sinfo=Tensor[(n, 4), float32])
      output r = call_tir(@rotary, (a, pos), shape(m), sinfo=Tensor[(n, 4), float32])
    }
    return r
  }
  func @tail(x: Tensor[(n, 4), float32], y: Tensor[(n - 1, 4), float32]) -> Tensor[(n - 1, 4), float32] {
    dataflow {
      a = call_tir(@exp, (y,), sinfo=Tensor[(n - 1, 4), float32])
      output b = call_tir(@relu, (a,), sinfo=Tensor[(n - 1, 4), float32])
    }
    return b
  }
})";

std::vector<float> values(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

void expect_close(const std::vector<float>& expected, const Tensor& got, const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(expected.size()), got.numel()) << what;
  const float* g = got.data_as_or_die<float>();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(g[i], expected[i], 1e-5f * (1 + std::fabs(expected[i]))) << what << " at " << i;
  }
}

// Grouped functions of `mod` and their parameters, "name(params)".
std::vector<std::string> grouped_functions(const IRModule& mod) {
  std::vector<std::string> out;
  for (const auto& [name, func] : mod.functions()) {
    const auto* f = func.as<FunctionNode>();
    if (f == nullptr || !f->attrs.contains("primitive")) continue;
    std::string params;
    for (const Var& p : f->params) params += (params.empty() ? "" : ", ") + p.struct_info().to_string();
    out.push_back(name + "(" + params + ")");
  }
  return out;
}

TEST(FuseOpsBuild, GroupedFunctionsComputeWhatTheUnfusedModuleDoes) {
  absl::StatusOr<IRModule> mod = parse_module("module {" + std::string(testing::kFusionTestKernels) + kFunctions);
  ASSERT_TRUE(mod.ok()) << mod.status();

  transform::PassManager fusing;
  fusing.add(transform::create_fuse_ops_pass());
  BuildInfo fused_info;
  absl::StatusOr<runtime::Module> fused = build(*mod, testing::build_test_target(), fusing, &fused_info);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(grouped_functions(fused_info.lowered),
            (std::vector<std::string>{
                "fused_matmul_bias_add_relu_exp_relu_add(Tensor[(n, 4), float32], Tensor[(4, 4), float32], "
                "Tensor[(4,), float32])",
                "fused_exp_rotary(Tensor[(n, 4), float32], Tensor[(k,), float32], Shape[(m,)])",
                "fused_exp_relu(Tensor[(n - 1, 4), float32], Shape[(n,)])"}));

  absl::StatusOr<runtime::Module> plain = build(*mod, testing::build_test_target(), transform::PassManager(), nullptr);
  ASSERT_TRUE(plain.ok()) << plain.status();

  Tensor w = testing::random_tensor({4, 4}, 1);
  Tensor bias = testing::random_tensor({4}, 2);
  const std::vector<float> wv = values(w), bv = values(bias);
  for (int64_t n : {2, 7, 64}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    // @mlp: b = relu(exp(relu(x @ w + bias))), s = rowsum(a + b).
    Tensor x = testing::random_tensor({n, 4}, 3 + static_cast<int>(n));
    const std::vector<float> xv = values(x);
    std::vector<float> b_ref(n * 4), s_ref(n, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        float h = 0.0f;
        for (int64_t k = 0; k < 4; ++k) h += xv[i * 4 + k] * wv[k * 4 + j];
        const float a = std::exp(std::max(h + bv[j], 0.0f));
        b_ref[i * 4 + j] = std::max(a, 0.0f);
        s_ref[i] += a + b_ref[i * 4 + j];
      }
    }
    absl::StatusOr<Value> got = (*fused)["mlp"](x, w, bias);
    absl::StatusOr<Value> want = (*plain)["mlp"](x, w, bias);
    ASSERT_TRUE(got.ok() && want.ok()) << got.status() << " " << want.status();
    ASSERT_TRUE(got->is_tuple() && want->is_tuple());
    for (size_t f = 0; f < 2; ++f) {
      EXPECT_EQ(values(got->fields_or_die()[f].tensor_or_die()), values(want->fields_or_die()[f].tensor_or_die()))
          << "mlp field " << f;
    }
    expect_close(b_ref, got->fields_or_die()[0].tensor_or_die(), "mlp b");
    expect_close(s_ref, got->fields_or_die()[1].tensor_or_die(), "mlp s");

    // @rope: r = exp(x) * pos[m + i], m the rows of the cache.
    const int64_t m = n + 3;
    Tensor pos = testing::random_tensor({m + n + 2}, 5);
    Tensor cache = testing::random_tensor({m, 4}, 6);
    const std::vector<float> pv = values(pos);
    std::vector<float> r_ref(n * 4);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 4; ++j) r_ref[i * 4 + j] = std::exp(xv[i * 4 + j]) * pv[m + i];
    }
    got = (*fused)["rope"](x, pos, cache);
    want = (*plain)["rope"](x, pos, cache);
    ASSERT_TRUE(got.ok() && want.ok()) << got.status() << " " << want.status();
    EXPECT_EQ(values(got->tensor_or_die()), values(want->tensor_or_die()));
    expect_close(r_ref, got->tensor_or_die(), "rope");

    // @tail: relu(exp(y)) over n - 1 rows; n comes from x.
    Tensor y = testing::random_tensor({n - 1, 4}, 7);
    std::vector<float> t_ref = values(y);
    for (float& v : t_ref) v = std::max(std::exp(v), 0.0f);
    got = (*fused)["tail"](x, y);
    want = (*plain)["tail"](x, y);
    ASSERT_TRUE(got.ok() && want.ok()) << got.status() << " " << want.status();
    EXPECT_EQ(values(got->tensor_or_die()), values(want->tensor_or_die()));
    expect_close(t_ref, got->tensor_or_die(), "tail");
  }
}

}  // namespace
}  // namespace relax
