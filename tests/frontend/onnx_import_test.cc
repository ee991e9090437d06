// The ONNX importer (relax/frontend/onnx.h) on models written here with the ONNX protobuf
// classes: symbolic dims stay symbolic through shape computations, the imported functions run
// at several sizes from one compilation against plain loops, and bad models are Statuses.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "relax/frontend/onnx.h"
#include "onnx_test_util.h"
#include "run_driver.h"
#include "relax/relax.h"

namespace relax::frontend {
namespace onnx_import_test {
namespace {

using onnx_test::OnnxGraph;
using onnx_test::random_floats;
using runtime::Tensor;
using ::testing::HasSubstr;

const float* floats_of(const Tensor& t) { return static_cast<const float*>(t.data()); }

TEST(OnnxImport, TheCheckerRefusesANodeWithoutARequiredAttribute) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{2}});
  g.input("y", {"n", int64_t{3}});
  g.node("Concat", {"x", "y"}, {"c"});  // Concat's axis is required
  g.output("c", 2);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()),
              HasSubstr("the ONNX checker refuses the model: Required attribute 'axis' is missing"));
}

// The attention-head split every exported transformer computes at run time: x (b, s, 8) reshaped
// to (b, s, 2, 4) through Shape -> Gather -> Concat, then the heads moved forward.
OnnxGraph head_split_graph() {
  OnnxGraph g;
  g.input("x", {"batch", "seq", int64_t{8}});
  g.ints("zero", {0});
  g.ints("one", {1});
  g.ints("heads", {2, 4});
  g.node("Shape", {"x"}, {"shape"});
  g.node("Gather", {"shape", "zero"}, {"b"});
  g.node("Gather", {"shape", "one"}, {"s"});
  OnnxGraph::attr(g.node("Concat", {"b", "s", "heads"}, {"target"}), "axis", int64_t{0});
  g.node("Reshape", {"x", "target"}, {"split"});
  OnnxGraph::attr(g.node("Transpose", {"split"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  g.output("y", 4);
  return g;
}

TEST(OnnxImport, TheHeadSplitIsAnnotatedWithTheInputsDims) {
  absl::StatusOr<OnnxModel> m = import_onnx(head_split_graph().bytes());
  ASSERT_TRUE(m.ok()) << m.status();
  const auto* f = m->module.lookup("main").as<FunctionNode>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->ret.to_string(), "Tensor[(batch, 2, seq, 4), float32]");
  EXPECT_EQ(m->report.dim_params, (std::vector<std::string>{"batch", "seq"}));
  EXPECT_EQ(m->report.rank_only_values, 0);
  EXPECT_EQ(m->report.opset, 17);
  EXPECT_EQ(m->input_names, (std::vector<std::string>{"x"}));
  EXPECT_EQ(m->output_names, (std::vector<std::string>{"y"}));
}

TEST(OnnxImport, TheHeadSplitRunsAtEverySizeFromOneCompilation) {
  absl::StatusOr<OnnxModel> m = import_onnx(head_split_graph().bytes());
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 3}, {2, 5}, {3, 1}}) {
    const std::vector<float> xs = random_floats(static_cast<size_t>(b * s * 8), 7);
    absl::StatusOr<runtime::Value> y = (*built)["main"](*Tensor::from_vector({b, s, 8}, xs));
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor& out = y->tensor_or_die();
    ASSERT_EQ(out.shape(), (std::vector<int64_t>{b, 2, s, 4}));
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t h = 0; h < 2; ++h) {
        for (int64_t t = 0; t < s; ++t) {
          for (int64_t d = 0; d < 4; ++d) {
            EXPECT_EQ(floats_of(out)[((i * 2 + h) * s + t) * 4 + d], xs[static_cast<size_t>((i * s + t) * 8 + h * 4 + d)]);
          }
        }
      }
    }
  }
}

// x (n, 4) -> Gemm(W (3, 4), transB, C (3), alpha 0.5) -> Relu -> Softmax(-1): the weights as
// parameters after the input, their values handed back by the import.
TEST(OnnxImport, AnMlpMatchesPlainLoopsWithItsWeightsBoundAtTheCall) {
  OnnxGraph g(13);
  g.input("x", {"n", int64_t{4}});
  const std::vector<float> w = random_floats(12, 3), c = random_floats(3, 4);
  g.floats("W", {3, 4}, w);
  g.floats("C", {3}, c);
  onnx::NodeProto& gemm = g.node("Gemm", {"x", "W", "C"}, {"h"});
  OnnxGraph::attr(gemm, "transB", int64_t{1});
  onnx::AttributeProto* alpha = gemm.add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);
  g.node("Relu", {"h"}, {"r"});
  g.node("Softmax", {"r"}, {"y"});
  g.output("y", 2);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->weights.size(), 2u);
  EXPECT_EQ(m->weights[0].first, "W");
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  for (int64_t n : {1, 7, 33}) {
    const std::vector<float> xs = random_floats(static_cast<size_t>(n * 4), static_cast<uint32_t>(n));
    absl::StatusOr<runtime::Value> y =
        (*built)["main"](*Tensor::from_vector({n, 4}, xs), m->weights[0].second, m->weights[1].second);
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor& out = y->tensor_or_die();
    ASSERT_EQ(out.shape(), (std::vector<int64_t>{n, 3}));
    for (int64_t i = 0; i < n; ++i) {
      double h[3], total = 0;
      for (int64_t j = 0; j < 3; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 4; ++k) acc += static_cast<double>(xs[i * 4 + k]) * w[j * 4 + k];
        h[j] = std::exp(std::max(0.5 * acc + c[j], 0.0));
        total += h[j];
      }
      for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(floats_of(out)[i * 3 + j], h[j] / total, 1e-5) << n << " " << i;
    }
  }
}

TEST(OnnxImport, ADimParamIsOneVariableAcrossInputs) {
  OnnxGraph g;
  g.input("a", {"n", int64_t{4}});
  g.input("b", {"n", int64_t{4}});
  g.input("c", {"", int64_t{4}});
  g.node("Add", {"a", "b"}, {"s"});
  g.output("s", 2);
  g.output("c", 2);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_TRUE(m.ok()) << m.status();
  const auto* f = m->module.lookup("main").as<FunctionNode>();
  // a + b needs no broadcast proof: both are (n, 4) of the one variable n; c's unnamed dim is fresh.
  EXPECT_EQ(f->ret.to_string(), "Tuple[(Tensor[(n, 4), float32], Tensor[(c_dim0, 4), float32])]");
  EXPECT_EQ(m->report.dim_params, (std::vector<std::string>{"n", "c_dim0"}));
}

// An exporter that knows a dim is a sum writes the sum as its name (`past + seq`): it becomes that
// expression of the other inputs' dims, so the attention mask adds to the scores without a check;
// a name that is not an expression over other dim_params stays a name.
TEST(OnnxImport, ADimParamWrittenAsASumIsThatSum) {
  OnnxGraph g;
  g.input("mask", {"batch", "past + seq"});
  g.input("keys", {"batch", "past", int64_t{8}});
  g.input("new_keys", {"batch", "seq", int64_t{8}});
  g.input("odd", {"seq-len"});
  OnnxGraph::attr(g.node("Concat", {"keys", "new_keys"}, {"all"}), "axis", int64_t{1});
  g.ints("axes", {2});
  g.node("ReduceSum", {"all", "axes"}, {"sums"});
  g.node("Squeeze", {"sums", "axes"}, {"per_key"});
  g.node("Add", {"mask", "per_key"}, {"y"});
  g.output("y", 2);
  g.output("odd", 1);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->module.lookup("main").as<FunctionNode>()->ret.to_string(),
            "Tuple[(Tensor[(batch, past + seq), float32], Tensor[(\"seq-len\",), float32])]");
  EXPECT_TRUE(m->report.runtime_checks.empty()) << m->report.runtime_checks[0];
}

// A fixed table sliced to a dynamic length (`pos[: n]`) is (min(16, n), ...) until n <= 16 is
// known: the broadcast against (n, ...) is asserted and checked when the call runs; an upper
// bound proves it instead.
TEST(OnnxImport, AnUnprovenBroadcastIsCheckedWhenTheCallRuns) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{2}});
  g.floats("table", {16, 2}, random_floats(32, 3));
  g.ints("zero", {0});
  g.ints("axis", {0});
  g.node("Shape", {"x"}, {"s"});
  g.ints("first", {0});
  g.node("Gather", {"s", "first"}, {"n"});
  g.node("Slice", {"table", "zero", "n", "axis"}, {"rows"});
  g.node("Add", {"x", "rows"}, {"y"});
  g.output("y", 2);
  OnnxImportOptions constants;
  constants.weights_as_constants = true;
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes(), constants);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->report.runtime_checks.size(), 1u);
  EXPECT_THAT(m->report.runtime_checks[0], HasSubstr("(Add): min(16, n) == n"));
  EXPECT_EQ(m->module.lookup("main").as<FunctionNode>()->ret.to_string(), "Tensor[(n, 2), float32, cpu]");
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  for (int64_t n : {1, 5, 16}) {
    const std::vector<float> xs = random_floats(static_cast<size_t>(2 * n), 4);
    absl::StatusOr<runtime::Value> y = (*built)["main"](*Tensor::from_vector({n, 2}, xs));
    ASSERT_TRUE(y.ok()) << y.status();
    const std::vector<float> table = random_floats(32, 3);
    for (int64_t i = 0; i < 2 * n; ++i) EXPECT_FLOAT_EQ(floats_of(y->tensor_or_die())[i], xs[i] + table[i]);
  }
  absl::StatusOr<runtime::Value> too_long = (*built)["main"](*Tensor::from_vector({17, 2}, random_floats(34, 5)));
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(std::string(too_long.status().message()), HasSubstr("16"));
  OnnxImportOptions bounded = constants;
  bounded.upper_bounds = {{"n", 16}};
  absl::StatusOr<OnnxModel> proven = import_onnx(g.bytes(), bounded);
  ASSERT_TRUE(proven.ok()) << proven.status();
  EXPECT_TRUE(proven->report.runtime_checks.empty());
}

// If: a condition computed from the data is decided when the call runs (the graph-level If of a
// one-element bool tensor; the dataflow blocks end before it and start again after it). Both
// branches read the enclosing graph's values, and what follows reads both.
TEST(OnnxImport, AnIfOnDataRunsTheBranchItsConditionPicks) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{3}});
  g.node("Relu", {"x"}, {"r"});
  g.node("ReduceSum", {"x"}, {"total"});
  g.floats("zero", {}, {0.0f});
  g.node("Greater", {"total", "zero"}, {"positive"});
  OnnxGraph then_g, else_g;
  then_g.node("Mul", {"r", "x"}, {"t"});
  then_g.output("t", 2);
  else_g.node("Neg", {"x"}, {"e"});
  else_g.output("e", 2);
  onnx::NodeProto& on_data = g.node("If", {"positive"}, {"y"});
  OnnxGraph::attr(on_data, "then_branch", then_g.graph());
  OnnxGraph::attr(on_data, "else_branch", else_g.graph());
  g.node("Relu", {"y"}, {"after"});
  g.node("Add", {"after", "r"}, {"out"});
  g.output("out", 2);
  OnnxImportOptions constants;
  constants.weights_as_constants = true;
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes(), constants);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->module.lookup("main").as<FunctionNode>()->ret.to_string(), "Tensor[(n, 3), float32]");
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  for (float sign : {1.0f, -1.0f}) {
    std::vector<float> xs = {0.5f, -0.25f, 2.0f, 1.0f, -3.0f, 0.75f};
    for (float& v : xs) v *= sign;
    absl::StatusOr<runtime::Value> y = (*built)["main"](*Tensor::from_vector({2, 3}, xs));
    ASSERT_TRUE(y.ok()) << y.status();
    for (size_t i = 0; i < xs.size(); ++i) {
      const float r = std::max(xs[i], 0.0f);
      const float branch = sign > 0 ? r * xs[i] : -xs[i];
      EXPECT_FLOAT_EQ(floats_of(y->tensor_or_die())[i], std::max(branch, 0.0f) + r) << "sign " << sign << " i " << i;
    }
  }
}

TEST(OnnxImport, AnIfKnownAtImportConvertsOnlyItsBranch) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{3}});
  g.node("Shape", {"x"}, {"s"});
  g.ints("one", {1});
  g.ints("three", {3});
  g.node("Gather", {"s", "one"}, {"width"});
  g.node("Equal", {"width", "three"}, {"known"});
  OnnxGraph kept, dropped;
  kept.node("Add", {"x", "x"}, {"k"});
  kept.output("k", 2);
  dropped.node("Celu", {"x"}, {"d"});  // unsupported, and never converted
  dropped.output("d", 2);
  onnx::NodeProto& n = g.node("If", {"known"}, {"y"});
  OnnxGraph::attr(n, "then_branch", kept.graph());
  OnnxGraph::attr(n, "else_branch", dropped.graph());
  g.output("y", 2);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  // The unsupported operator is named before anything converts (a model is refused whole) ...
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("Celu"));
  // ... and with a supported one in its place, the If is gone: only the taken branch is there.
  OnnxGraph g2;
  g2.input("x", {"n", int64_t{3}});
  g2.node("Shape", {"x"}, {"s"});
  g2.ints("one", {1});
  g2.ints("three", {3});
  g2.node("Gather", {"s", "one"}, {"width"});
  g2.node("Equal", {"width", "three"}, {"known"});
  OnnxGraph other;
  other.node("Neg", {"x"}, {"d"});
  other.output("d", 2);
  onnx::NodeProto& n2 = g2.node("If", {"known"}, {"y"});
  OnnxGraph::attr(n2, "then_branch", kept.graph());
  OnnxGraph::attr(n2, "else_branch", other.graph());
  g2.output("y", 2);
  absl::StatusOr<OnnxModel> m2 = import_onnx(g2.bytes());
  ASSERT_TRUE(m2.ok()) << m2.status();
  const std::string text = to_text(m2->module);
  EXPECT_THAT(text, HasSubstr("add(x, x)"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("neg(")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("if ")));
}

// LSTM with layout 1 (batch first), which ONNX Runtime's CPU LSTM does not take: the same
// network as layout 0 (checked against ONNX Runtime in onnx_ort_test.cc) on the transposed input,
// its outputs transposed back.
TEST(OnnxImport, ABatchFirstLstmIsTheTimeFirstOneTransposed) {
  const int64_t hidden = 4, features = 3;
  auto lstm = [&](bool batch_first) {
    OnnxGraph g;
    g.input("x", batch_first ? std::vector<onnx_test::Dim>{"b", "t", features} : std::vector<onnx_test::Dim>{"t", "b", features});
    g.floats("W", {2, 4 * hidden, features}, random_floats(2 * 4 * hidden * features, 51));
    g.floats("R", {2, 4 * hidden, hidden}, random_floats(2 * 4 * hidden * hidden, 52));
    g.floats("B", {2, 8 * hidden}, random_floats(2 * 8 * hidden, 53));
    onnx::NodeProto& n = g.node("LSTM", {"x", "W", "R", "B"}, {"y", "y_h", "y_c"});
    OnnxGraph::attr(n, "hidden_size", hidden);
    OnnxGraph::attr(n, "direction", std::string("bidirectional"));
    OnnxGraph::attr(n, "layout", int64_t{batch_first ? 1 : 0});
    g.output("y", 4);
    g.output("y_h", 3);
    g.output("y_c", 3);
    OnnxImportOptions options;
    options.weights_as_constants = true;
    absl::StatusOr<OnnxModel> m = import_onnx(g.bytes(), options);
    EXPECT_TRUE(m.ok()) << m.status();
    absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
    EXPECT_TRUE(built.ok()) << built.status();
    return *std::move(built);
  };
  runtime::Module time_first = lstm(false), batch_first = lstm(true);
  const int64_t t = 5, b = 2;
  const std::vector<float> xs = random_floats(static_cast<size_t>(t * b * features), 54);
  std::vector<float> xt(xs.size());  // (t, b, f) -> (b, t, f)
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < b; ++j) {
      for (int64_t k = 0; k < features; ++k) xt[static_cast<size_t>((j * t + i) * features + k)] = xs[static_cast<size_t>((i * b + j) * features + k)];
    }
  }
  absl::StatusOr<runtime::Value> a = time_first["main"](*Tensor::from_vector({t, b, features}, xs));
  absl::StatusOr<runtime::Value> c = batch_first["main"](*Tensor::from_vector({b, t, features}, xt));
  ASSERT_TRUE(a.ok() && c.ok()) << a.status() << c.status();
  const std::vector<runtime::Value> fa = *a->fields(), fc = *c->fields();
  const Tensor &y0 = fa[0].tensor_or_die(), &y1 = fc[0].tensor_or_die();
  ASSERT_EQ(y0.shape(), (std::vector<int64_t>{t, 2, b, hidden}));
  ASSERT_EQ(y1.shape(), (std::vector<int64_t>{b, t, 2, hidden}));
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t d = 0; d < 2; ++d) {
      for (int64_t j = 0; j < b; ++j) {
        for (int64_t h = 0; h < hidden; ++h) {
          EXPECT_FLOAT_EQ(floats_of(y1)[((j * t + i) * 2 + d) * hidden + h], floats_of(y0)[((i * 2 + d) * b + j) * hidden + h]);
        }
      }
    }
  }
  for (size_t k : {size_t{1}, size_t{2}}) {  // (2, b, H) against (b, 2, H)
    const Tensor &s0 = fa[k].tensor_or_die(), &s1 = fc[k].tensor_or_die();
    for (int64_t d = 0; d < 2; ++d) {
      for (int64_t j = 0; j < b; ++j) {
        for (int64_t h = 0; h < hidden; ++h) {
          EXPECT_FLOAT_EQ(floats_of(s1)[(j * 2 + d) * hidden + h], floats_of(s0)[(d * b + j) * hidden + h]);
        }
      }
    }
  }
}

// Pow by a constant 2 or 3 (a variance's square, GELU's cube) and another exponent, against
// plain arithmetic (the kernels multiply for 2 and 3: tests/transform/legalize_ops_test.cc).
TEST(OnnxImport, APowerOfTwoOrThreeOrAHalf) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{4}});
  g.floats("two", {}, {2.0f});
  g.floats("three", {}, {3.0f});
  g.floats("half", {}, {0.5f});
  g.node("Pow", {"x", "two"}, {"sq"});
  g.node("Pow", {"x", "three"}, {"cube"});
  g.node("Pow", {"x", "half"}, {"root"});
  for (const char* o : {"sq", "cube", "root"}) g.output(o, 2);
  OnnxImportOptions options;
  options.weights_as_constants = true;
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes(), options);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  const std::vector<float> xs = {0.5f, 2.0f, 3.0f, 1.25f};
  absl::StatusOr<runtime::Value> y = (*built)["main"](*Tensor::from_vector({1, 4}, xs));
  ASSERT_TRUE(y.ok()) << y.status();
  const std::vector<runtime::Value> outs = *y->fields();
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_FLOAT_EQ(floats_of(outs[0].tensor_or_die())[i], xs[i] * xs[i]);
    EXPECT_FLOAT_EQ(floats_of(outs[1].tensor_or_die())[i], xs[i] * xs[i] * xs[i]);
    EXPECT_FLOAT_EQ(floats_of(outs[2].tensor_or_die())[i], std::sqrt(xs[i]));
  }
}

// Einsum forms not converted are refused naming the node and what is missing.
TEST(OnnxImport, AnEinsumWithADiagonalOrAnEllipsisIsRefusedNamingIt) {
  for (const auto& [equation, said] : std::vector<std::pair<std::string, std::string>>{
           {"ii->i", "the letter `i` repeats in `ii` (a diagonal)"}, {"...ij->...ji", "with `...`"}, {"ij", "without `->`"}}) {
    OnnxGraph g;
    g.input("x", {"n", "n"});
    OnnxGraph::attr(g.node("Einsum", {"x"}, {"y"}), "equation", equation);
    g.output("y", 1);
    absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
    ASSERT_FALSE(m.ok()) << equation;
    EXPECT_THAT(std::string(m.status().message()), HasSubstr("`n0_Einsum` (Einsum)")) << equation;
    EXPECT_THAT(std::string(m.status().message()), HasSubstr(said)) << equation;
  }
}

// NonZero's count is known only at run time: a match_cast binds it to a symbolic dim, and what
// follows is deduced in terms of it, not by rank only.
TEST(OnnxImport, ADataDependentDimIsBoundByAMatchCast) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{3}});
  g.node("NonZero", {"x"}, {"nz"});
  OnnxGraph::attr(g.node("Transpose", {"nz"}, {"y"}), "perm", std::vector<int64_t>{1, 0});
  g.output("y", 2, onnx::TensorProto::INT64);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_TRUE(m.ok()) << m.status();
  // Inside the function the transpose is (nz_count, 2); its signature, whose parameters do not
  // define nz_count, says rank 2.
  EXPECT_THAT(to_text(m->module), HasSubstr("Tensor[(nz_count, 2), int64] = permute_dims"));
  EXPECT_EQ(m->module.lookup("main").as<FunctionNode>()->ret.to_string(), "Tensor[ndim=2, int64]");
  EXPECT_EQ(m->report.data_dependent_dims, (std::vector<std::string>{"nz_count"}));
  EXPECT_EQ(m->report.rank_only_values, 0);
}

// A Loop is a private recursive function; what the import proves of its results stays in their
// annotations: a carried value the body keeps the shape of has the initial value's dims, the
// scan outputs of a loop that runs M = n times (no condition ends it) are n long, and a carried
// value that grows is bound when the call returns.
TEST(OnnxImport, ALoopKeepsTheDimsItProves) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{4}});
  g.node("Shape", {"x"}, {"s"});
  const int64_t zero = 0;
  g.raw("zero", onnx::TensorProto::INT64, {}, std::string(reinterpret_cast<const char*>(&zero), sizeof zero));
  g.node("Gather", {"s", "zero"}, {"n"});
  OnnxGraph body;
  body.input("i", {}, onnx::TensorProto::INT64);
  body.input("c", {}, onnx::TensorProto::BOOL);
  body.input("acc", {int64_t{4}});
  body.input("rows", {std::string(), int64_t{4}});
  body.raw("yes", onnx::TensorProto::BOOL, {}, std::string(1, '\1'));
  body.node("Gather", {"x", "i"}, {"row"});
  body.node("Add", {"acc", "row"}, {"acc_out"});
  body.node("Unsqueeze", {"row", "zero"}, {"one"});
  OnnxGraph::attr(body.node("Concat", {"rows", "one"}, {"rows_out"}), "axis", int64_t{0});
  body.node("Neg", {"row"}, {"negated"});
  body.node("Identity", {"yes"}, {"c_out"});
  body.output("c_out", 0, onnx::TensorProto::BOOL);
  body.output("acc_out", 1);
  body.output("rows_out", 2);
  body.output("negated", 1);
  g.floats("acc0", {4}, {0, 0, 0, 0});
  OnnxGraph::attr(g.node("Loop", {"n", "", "acc0", "x"}, {"acc", "rows", "negated"}), "body", body.graph());
  g.output("acc", 1);
  g.output("rows", 2);
  g.output("negated", 2);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string text = to_text(m->module);
  ASSERT_NE(m->module.lookup("loop_1").as<FunctionNode>(), nullptr) << text;
  EXPECT_THAT(text, HasSubstr("Tensor[(n2_Loop_rows_d0, 4), float32] = match_cast")) << text;
  EXPECT_EQ(m->module.lookup("main").as<FunctionNode>()->ret.to_string(),
            "Tuple[(Tensor[(4,), float32], Tensor[ndim=2, float32], Tensor[(n, 4), float32])]");
  EXPECT_EQ(m->report.data_dependent_dims, (std::vector<std::string>{"n2_Loop_rows_d0"}));
}

// A Loop of many steps: v <- v * 0.5 + 1 for M steps tends to 2; each step is a call of the
// body function, which must not grow the stack by a frame per step.
TEST(OnnxImport, ALoopOfManyStepsRuns) {
  OnnxGraph g;
  g.input("x", {"n"});
  g.input("steps", {}, onnx::TensorProto::INT64);
  OnnxGraph body;
  body.input("i", {}, onnx::TensorProto::INT64);
  body.input("c", {}, onnx::TensorProto::BOOL);
  body.input("v", {std::string()});
  body.floats("half", {}, {0.5F});
  body.floats("one", {}, {1.0F});
  body.node("Mul", {"v", "half"}, {"h"});
  body.node("Add", {"h", "one"}, {"v_out"});
  body.node("Identity", {"c"}, {"c_out"});
  body.output("c_out", 0, onnx::TensorProto::BOOL);
  body.output("v_out", 1);
  OnnxGraph::attr(g.node("Loop", {"steps", "", "x"}, {"v"}), "body", body.graph());
  g.output("v", 1);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  for (int64_t steps : {int64_t{0}, int64_t{3}, int64_t{100000}}) {
    Tensor x = *Tensor::from_vector<float>({3}, {0.0F, 8.0F, -4.0F});
    Tensor k = *Tensor::from_vector<int64_t>({}, {steps});
    absl::StatusOr<runtime::Value> y = (*built)["main"].call({runtime::Value(x), runtime::Value(k)});
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor t = onnx_test::result_tensors(*y)[0];
    for (int i = 0; i < 3; ++i) {
      double want = static_cast<const float*>(x.data())[i];
      for (int64_t s = 0; s < std::min<int64_t>(steps, 200); ++s) want = want * 0.5 + 1;
      EXPECT_NEAR(static_cast<const float*>(t.data())[i], want, 1e-5) << "steps " << steps << " element " << i;
    }
  }
}

// Weights in an external data file are views of the mapped file, not copies: two 4 KB weights
// at offsets 0 and 4096 lie 4096 bytes apart. One at an offset that is not a multiple of 4 is
// copied (and still right). A missing file, a short one and a location outside the model's
// folder are errors naming the tensor.
TEST(OnnxImport, ExternalDataIsMappedNotCopied) {
  const std::string dir = ::testing::TempDir() + "/relax_onnx_external";
  std::filesystem::create_directories(dir);
  std::vector<float> values(1024 * 2 + 1 + 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5F;
  {
    std::ofstream out(dir + "/weights.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()), 1024 * 2 * 4);
    out.write("\0\0", 2);  // the next weight starts 2 bytes later: misaligned
    out.write(reinterpret_cast<const char*>(values.data()) + 1024 * 2 * 4, 4 * 4);
  }
  auto model = [&](const std::string& location, int64_t c_offset) {
    OnnxGraph g;
    g.input("x", {"n", int64_t{1024}});
    g.external("a", {1024}, location, 0);
    g.external("b", {1024}, location, 4096);
    g.external("c", {4}, location, c_offset);
    g.node("Mul", {"x", "a"}, {"xa"});
    g.node("Add", {"xa", "b"}, {"y"});
    g.output("y", 2);
    g.output("c", 1);
    return g.bytes();
  };
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  };
  absl::StatusOr<OnnxModel> m = import_onnx_file(write("m.onnx", model("weights.bin", 8194)));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->weights.size(), 3U);
  const auto* a = static_cast<const char*>(m->weights[0].second.data());
  const auto* b = static_cast<const char*>(m->weights[1].second.data());
  EXPECT_EQ(b - a, 4096) << "a and b are not views of one mapping";
  const auto* c = static_cast<const float*>(m->weights[2].second.data());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(c[i], values[2048 + static_cast<size_t>(i)]);
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  Tensor x = *Tensor::from_vector({2, 1024}, random_floats(2048, 3));
  absl::StatusOr<runtime::Value> y = (*built)["main"].call(
      {runtime::Value(x), runtime::Value(m->weights[0].second), runtime::Value(m->weights[1].second), runtime::Value(m->weights[2].second)});
  ASSERT_TRUE(y.ok()) << y.status();
  const Tensor out = onnx_test::result_tensors(*y)[0];
  for (int64_t i = 0; i < 2048; i += 97) {
    const size_t k = static_cast<size_t>(i % 1024);
    EXPECT_FLOAT_EQ(static_cast<const float*>(out.data())[i],
                    static_cast<const float*>(x.data())[i] * values[k] + values[1024 + k]);
  }

  absl::StatusOr<OnnxModel> missing = import_onnx_file(write("missing.onnx", model("nowhere.bin", 8194)));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("tensor `a`: cannot open external data file " + dir + "/nowhere.bin"));
  absl::StatusOr<OnnxModel> short_file = import_onnx_file(write("short.onnx", model("weights.bin", 8200)));
  ASSERT_FALSE(short_file.ok());
  EXPECT_THAT(std::string(short_file.status().message()), HasSubstr("tensor `c`: " + dir + "/weights.bin holds fewer than 16 bytes at offset 8200"));
  absl::StatusOr<OnnxModel> outside = import_onnx_file(write("outside.onnx", model("../weights.bin", 8194)));
  ASSERT_FALSE(outside.ok());
  EXPECT_THAT(std::string(outside.status().message()), HasSubstr("external data location `../weights.bin` is not a file name beside the model"));
}

TEST(OnnxImport, EveryUnsupportedNodeIsNamedAtOnce) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{4}});
  g.node("Relu", {"x"}, {"r"});
  g.node("Celu", {"r"}, {"c"});
  g.node("Hardmax", {"c"}, {"y"});
  g.output("y", 2);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented);
  const std::string message(m.status().message());
  EXPECT_THAT(message, HasSubstr("2 nodes of unsupported operators"));
  EXPECT_THAT(message, HasSubstr("`n1_Celu` (Celu, domain \"ai.onnx\", opset 17)"));
  EXPECT_THAT(message, HasSubstr("`n2_Hardmax` (Hardmax, domain \"ai.onnx\", opset 17)"));
  EXPECT_THAT(message, HasSubstr("relax converts Abs, Add"));
}

TEST(OnnxImport, BadBytesAndOpsetsAreStatuses) {
  absl::StatusOr<OnnxModel> garbage = import_onnx(std::string("module {\n}\n"));
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(std::string(garbage.status().message()), HasSubstr("not an ONNX model"));
  EXPECT_FALSE(looks_like_onnx("module {\n}\n"));
  EXPECT_TRUE(looks_like_onnx(head_split_graph().bytes()));
  std::string cut = head_split_graph().bytes();
  cut.resize(cut.size() / 2);
  EXPECT_FALSE(import_onnx(cut).ok());

  OnnxGraph newer(18);
  newer.input("x", {int64_t{2}});
  newer.node("Relu", {"x"}, {"y"});
  newer.output("y", 1);
  absl::StatusOr<OnnxModel> m = import_onnx(newer.bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("opset 18 of the default domain; relax reads opsets 7 to 17"));

  absl::StatusOr<OnnxModel> missing = import_onnx_file("/nonexistent/model.onnx");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

// A model of opset 6 (Add broadcasting by its `broadcast` attribute, BatchNormalization with
// `is_test`) is brought to opset 7 by ONNX's version converter, then imported; the report says so.
// The converter's broadcast adapter needs every dim a number (models of those opsets had static
// shapes): a symbolic one is refused with its message.
TEST(OnnxImport, AnOpset6ModelIsConvertedTo7) {
  OnnxGraph dynamic(6);
  dynamic.input("x", {"n", int64_t{3}});
  dynamic.floats("bias", {3}, {0.25F, 0.5F, -2.0F});
  OnnxGraph::attr(dynamic.node("Add", {"x", "bias"}, {"y"}), "broadcast", int64_t{1});
  dynamic.output("y", 2);
  absl::StatusOr<OnnxModel> refused = import_onnx(dynamic.bytes());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("the model imports opset 6 of the default domain; ONNX's version converter cannot bring it to 7: "));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("n Dimension is a param instead of an int"));

  OnnxGraph g(6);
  g.input("x", {int64_t{4}, int64_t{3}});
  g.floats("scale", {3}, {1.0F, 2.0F, 0.5F});
  g.floats("shift", {3}, {0.0F, -1.0F, 1.0F});
  g.floats("mean", {3}, {0.5F, 0.0F, -0.5F});
  g.floats("var", {3}, {1.0F, 4.0F, 0.25F});
  g.floats("bias", {3}, {0.25F, 0.5F, -2.0F});
  onnx::NodeProto& bn = g.node("BatchNormalization", {"x", "scale", "shift", "mean", "var"}, {"normed"});
  OnnxGraph::attr(bn, "is_test", int64_t{1});
  OnnxGraph::attr(bn, "epsilon", 0.0F);
  OnnxGraph::attr(g.node("Add", {"normed", "bias"}, {"shifted"}), "broadcast", int64_t{1});
  g.node("Relu", {"shifted"}, {"y"});
  g.output("y", 2);
  OnnxImportOptions options;
  options.weights_as_constants = true;
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes(), options);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->report.opset, 7);
  EXPECT_EQ(m->report.converted_from_opset, 6);
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  const std::vector<float> scale = {1, 2, 0.5F}, shift = {0, -1, 1}, mean = {0.5F, 0, -0.5F}, var = {1, 4, 0.25F},
                           bias = {0.25F, 0.5F, -2};
  const int64_t n = 4;
  Tensor x = *Tensor::from_vector({n, 3}, random_floats(static_cast<size_t>(n * 3), 9));
  absl::StatusOr<runtime::Value> y = (*built)["main"].call({runtime::Value(x)});
  ASSERT_TRUE(y.ok()) << y.status();
  const Tensor out = onnx_test::result_tensors(*y)[0];
  for (int64_t i = 0; i < n * 3; ++i) {
    const auto c = static_cast<size_t>(i % 3);
    const float v = (static_cast<const float*>(x.data())[i] - mean[c]) / std::sqrt(var[c]) * scale[c] + shift[c] + bias[c];
    EXPECT_NEAR(static_cast<const float*>(out.data())[i], std::max(v, 0.0F), 1e-5) << "element " << i;
  }
}

TEST(OnnxImport, AReshapeOfARuntimeTensorIsRefusedNamingTheNode) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{4}});
  g.input("shape", {int64_t{2}}, onnx::TensorProto::INT64);
  g.node("Reshape", {"x", "shape"}, {"y"});
  g.output("y", 2);
  absl::StatusOr<OnnxModel> m = import_onnx(g.bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()),
              HasSubstr("node `n0_Reshape` (Reshape): its shape is computed from tensor data at run time"));
}

// relax-run takes an ONNX file by its content: the graph's inputs positionally, its outputs
// written with --output, the weights inside the module.
TEST(OnnxImport, RelaxRunRunsAModelFile) {
  OnnxGraph g;
  g.input("x", {"n", int64_t{4}});
  const std::vector<float> w = random_floats(12, 9);
  g.floats("W", {4, 3}, w);
  g.node("MatMul", {"x", "W"}, {"h"});
  g.node("Relu", {"h"}, {"y"});
  g.output("y", 2);
  const std::string dir = ::testing::TempDir();
  const std::string model = dir + "/relax_run_model.onnx";
  std::ofstream(model, std::ios::binary) << g.bytes();
  const std::vector<float> xs = random_floats(20, 10);
  ASSERT_TRUE(runtime::save_npy(dir + "/relax_run_x.npy", *Tensor::from_vector({5, 4}, xs)).ok());
  tools::RunOptions options;
  options.file = model;
  options.inputs = {"@" + dir + "/relax_run_x.npy"};
  options.outputs = {"@" + dir + "/relax_run_y.npy"};
  std::ostringstream out;
  absl::Status s = tools::run_tool(options, out);
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<Tensor> y = runtime::load_npy(dir + "/relax_run_y.npy");
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ(y->shape(), (std::vector<int64_t>{5, 3}));
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 4; ++k) acc += static_cast<double>(xs[i * 4 + k]) * w[k * 3 + j];
      EXPECT_NEAR(floats_of(*y)[i * 3 + j], std::max(acc, 0.0), 1e-5);
    }
  }
  // The same by the input's name, with the result checked against the file just written.
  options.inputs = {"x=@" + dir + "/relax_run_x.npy"};
  options.outputs.clear();
  options.expects = {"@" + dir + "/relax_run_y.npy"};
  options.upper_bounds = {"n=64"};
  std::ostringstream checked;
  s = tools::run_tool(options, checked);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_NE(checked.str().find("expect 1: max_abs_error=0 max_rel_error=0"), std::string::npos) << checked.str();
  options.inputs = {"y=@" + dir + "/relax_run_x.npy"};
  s = tools::run_tool(options, checked);
  EXPECT_EQ(std::string(s.message()), "--input=y=@" + dir + "/relax_run_x.npy: main has no parameter y (x)");
  options.inputs = {"@" + dir + "/relax_run_x.npy"};
  options.upper_bounds = {"m=64"};
  s = tools::run_tool(options, checked);
  EXPECT_NE(std::string(s.message()).find("upper bound of `m`: no input has a dim of that name (n)"), std::string::npos) << s;
}

}  // namespace
}  // namespace onnx_import_test
}  // namespace relax::frontend
