// The ONNX importer (relax/frontend/onnx.h) on models written here with the ONNX protobuf
// classes: symbolic dims stay symbolic through shape computations, the imported functions run
// at several sizes from one compilation against plain loops, and bad models are Statuses.
#include <cmath>
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

  OnnxGraph old(5);
  old.input("x", {int64_t{2}});
  old.node("Relu", {"x"}, {"y"});
  old.output("y", 1);
  absl::StatusOr<OnnxModel> m = import_onnx(old.bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("opset 5 of the default domain; relax reads opsets 7 to 17"));

  absl::StatusOr<OnnxModel> missing = import_onnx_file("/nonexistent/model.onnx");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
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
