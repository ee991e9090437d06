// Each converted operator against ONNX Runtime: one small model per case, imported once and
// compiled once, run at several sizes of its symbolic dims; relax's outputs must match ONNX
// Runtime's on the same inputs (float32 within 1e-4 relative, integers exactly). ONNX Runtime
// runs through tests/frontend/ort_run.js (RELAX_SOURCE_DIR); without node or onnxruntime-node
// the cases skip, saying so.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "onnx_test_util.h"
#include "ort_runner.h"
#include "relax/frontend/onnx.h"
#include "relax/relax.h"

namespace relax::frontend {
namespace onnx_ort_test {
namespace {

using onnx_test::OnnxGraph;
using runtime::Tensor;
using Shapes = std::vector<std::vector<int64_t>>;  // one run: the float inputs' shapes

struct OrtCase {
  std::string name;
  std::function<void(OnnxGraph&)> write;  // inputs, nodes and outputs
  std::vector<Shapes> runs;
  int64_t opset = 17;
};

void add_float(OnnxGraph& g, const std::string& name, std::vector<int64_t> dims, float value) {
  g.floats(name, std::move(dims), std::vector<float>{value});
}

std::vector<OrtCase> cases() {
  using G = OnnxGraph;
  std::vector<OrtCase> out;
  out.push_back({"add_broadcast", [](G& g) {
                   g.input("x", {"n", int64_t{4}});
                   g.input("y", {int64_t{4}});
                   g.node("Add", {"x", "y"}, {"z"});
                   g.output("z", 2);
                 },
                 {{{1, 4}, {4}}, {{7, 4}, {4}}, {{33, 4}, {4}}}});
  out.push_back({"arithmetic", [](G& g) {
                   g.input("x", {"n", "m"});
                   g.input("y", {"n", "m"});
                   add_float(g, "two", {1}, 2.0f);
                   g.node("Sub", {"x", "y"}, {"d"});
                   g.node("Mul", {"x", "x"}, {"sq"});
                   g.node("Add", {"sq", "two"}, {"den"});
                   g.node("Div", {"d", "den"}, {"q"});
                   g.node("Pow", {"den", "two"}, {"p"});
                   g.node("Max", {"x", "y", "q"}, {"hi"});
                   g.node("Min", {"x", "y"}, {"lo"});
                   g.output("q", 2);
                   g.output("p", 2);
                   g.output("hi", 2);
                   g.output("lo", 2);
                 },
                 {{{1, 1}, {1, 1}}, {{3, 5}, {3, 5}}, {{17, 2}, {17, 2}}}});
  out.push_back({"unary", [](G& g) {
                   g.input("x", {"n", int64_t{3}});
                   for (const char* op : {"Sigmoid", "Tanh", "Exp", "Erf", "Relu", "Neg", "Abs", "Floor", "Ceil"}) {
                     g.node(op, {"x"}, {std::string("y_") + op});
                     g.output(std::string("y_") + op, 2);
                   }
                   g.node("Abs", {"x"}, {"a"});
                   g.node("Sqrt", {"a"}, {"r"});
                   g.node("Reciprocal", {"r"}, {"inv"});
                   g.node("Log", {"r"}, {"lg"});
                   g.output("inv", 2);
                   g.output("lg", 2);
                 },
                 {{{1, 3}}, {{9, 3}}}});
  out.push_back({"softmax", [](G& g) {
                   g.input("x", {"n", "m"});
                   G::attr(g.node("Softmax", {"x"}, {"s"}), "axis", int64_t{0});
                   g.node("LogSoftmax", {"x"}, {"l"});
                   g.output("s", 2);
                   g.output("l", 2);
                 },
                 {{{1, 5}}, {{4, 3}}, {{16, 33}}}});
  out.push_back({"matmul_batched", [](G& g) {
                   g.input("a", {"b", "n", int64_t{4}});
                   g.input("w", {int64_t{4}, int64_t{3}});
                   g.node("MatMul", {"a", "w"}, {"y"});
                   g.output("y", 3);
                 },
                 {{{1, 1, 4}, {4, 3}}, {{2, 5, 4}, {4, 3}}, {{3, 8, 4}, {4, 3}}}});
  out.push_back({"gemm", [](G& g) {
                   g.input("a", {int64_t{4}, "n"});
                   g.floats("B", {4, 3}, onnx_test::random_floats(12, 5));
                   g.floats("C", {3}, onnx_test::random_floats(3, 6));
                   onnx::NodeProto& n = g.node("Gemm", {"a", "B", "C"}, {"y"});
                   G::attr(n, "transA", int64_t{1});
                   for (auto [name, v] : {std::pair<const char*, float>{"alpha", 2.0f}, {"beta", 0.5f}}) {
                     onnx::AttributeProto* a = n.add_attribute();
                     a->set_name(name);
                     a->set_type(onnx::AttributeProto::FLOAT);
                     a->set_f(v);
                   }
                   g.output("y", 2);
                 },
                 {{{4, 1}}, {{4, 6}}, {{4, 31}}}});
  out.push_back({"layout", [](G& g) {
                   g.input("x", {"a", "b", int64_t{3}});
                   G::attr(g.node("Transpose", {"x"}, {"t"}), "perm", std::vector<int64_t>{1, 0, 2});
                   G::attr(g.node("Flatten", {"x"}, {"f"}), "axis", int64_t{2});
                   g.ints("axes", {1});
                   g.node("Unsqueeze", {"x", "axes"}, {"u"});
                   g.node("Squeeze", {"u", "axes"}, {"s"});
                   g.output("t", 3);
                   g.output("f", 2);
                   g.output("u", 4);
                   g.output("s", 3);
                 },
                 {{{1, 1, 3}}, {{2, 5, 3}}, {{4, 3, 3}}}});
  out.push_back({"concat_gather_where", [](G& g) {
                   g.input("x", {"n", int64_t{2}});
                   g.input("y", {"n", int64_t{3}});
                   G::attr(g.node("Concat", {"x", "y"}, {"c"}), "axis", int64_t{1});
                   g.ints("idx", {-1, 0});
                   G::attr(g.node("Gather", {"c", "idx"}, {"gathered"}), "axis", int64_t{1});
                   g.node("Greater", {"gathered", "x"}, {"gt"});
                   g.node("Where", {"gt", "gathered", "x"}, {"w"});
                   g.output("c", 2);
                   g.output("w", 2);
                 },
                 {{{1, 2}, {1, 3}}, {{6, 2}, {6, 3}}}});
  out.push_back({"computed_shapes", [](G& g) {
                   g.input("x", {"b", "s", int64_t{6}});
                   g.ints("zero", {0});
                   g.ints("one", {1});
                   g.ints("six", {6});
                   g.node("Shape", {"x"}, {"shape"});
                   g.node("Gather", {"shape", "zero"}, {"b"});
                   g.node("Gather", {"shape", "one"}, {"s"});
                   g.node("Mul", {"b", "s"}, {"rows"});
                   G::attr(g.node("Concat", {"rows", "six"}, {"target"}), "axis", int64_t{0});
                   g.node("Reshape", {"x", "target"}, {"flat"});
                   g.node("ConstantOfShape", {"target"}, {"zeros"});
                   g.node("Add", {"flat", "zeros"}, {"y"});
                   g.output("y", 2);
                 },
                 {{{1, 1, 6}}, {{2, 3, 6}}, {{5, 7, 6}}}});
  out.push_back({"conv", [](G& g) {
                   g.input("x", {"n", int64_t{3}, "h", "w"});
                   g.floats("W", {4, 3, 3, 3}, onnx_test::random_floats(108, 11));
                   g.floats("B", {4}, onnx_test::random_floats(4, 12));
                   onnx::NodeProto& a = g.node("Conv", {"x", "W", "B"}, {"same"});
                   G::attr(a, "pads", std::vector<int64_t>{1, 1, 1, 1});
                   g.floats("Wg", {6, 1, 3, 3}, onnx_test::random_floats(54, 13));
                   onnx::NodeProto& b = g.node("Conv", {"x", "Wg"}, {"grouped"});
                   G::attr(b, "group", int64_t{3});
                   G::attr(b, "strides", std::vector<int64_t>{2, 2});
                   G::attr(b, "dilations", std::vector<int64_t>{1, 2});
                   G::attr(b, "pads", std::vector<int64_t>{0, 1, 1, 0});
                   g.output("same", 4);
                   g.output("grouped", 4);
                 },
                 {{{1, 3, 5, 6}}, {{2, 3, 8, 7}}, {{1, 3, 9, 9}}}});
  out.push_back({"conv1d_same", [](G& g) {
                   g.input("x", {"n", int64_t{2}, int64_t{7}});
                   g.floats("W", {3, 2, 4}, onnx_test::random_floats(24, 14));
                   onnx::NodeProto& a = g.node("Conv", {"x", "W"}, {"y"});
                   onnx::AttributeProto* pad = a.add_attribute();
                   pad->set_name("auto_pad");
                   pad->set_type(onnx::AttributeProto::STRING);
                   pad->set_s("SAME_UPPER");
                   G::attr(a, "strides", std::vector<int64_t>{2});
                   g.output("y", 3);
                 },
                 {{{1, 2, 7}}, {{3, 2, 7}}}});
  out.push_back({"pools", [](G& g) {
                   g.input("x", {"n", int64_t{2}, "h", "w"});
                   onnx::NodeProto& mp = g.node("MaxPool", {"x"}, {"max"});
                   G::attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
                   G::attr(mp, "strides", std::vector<int64_t>{2, 2});
                   onnx::NodeProto& ap = g.node("AveragePool", {"x"}, {"avg"});
                   G::attr(ap, "kernel_shape", std::vector<int64_t>{3, 3});
                   G::attr(ap, "pads", std::vector<int64_t>{1, 1, 1, 1});
                   onnx::NodeProto& uneven = g.node("MaxPool", {"x"}, {"uneven"});
                   G::attr(uneven, "kernel_shape", std::vector<int64_t>{3, 2});
                   G::attr(uneven, "pads", std::vector<int64_t>{1, 0, 0, 1});
                   g.node("GlobalAveragePool", {"x"}, {"gavg"});
                   g.node("GlobalMaxPool", {"x"}, {"gmax"});
                   // ceil_mode: odd sizes keep their last, partial window.
                   onnx::NodeProto& ceil = g.node("MaxPool", {"x"}, {"ceil"});
                   G::attr(ceil, "kernel_shape", std::vector<int64_t>{3, 2});
                   G::attr(ceil, "strides", std::vector<int64_t>{2, 2});
                   G::attr(ceil, "pads", std::vector<int64_t>{1, 0, 0, 0});
                   G::attr(ceil, "ceil_mode", int64_t{1});
                   for (const char* o : {"max", "avg", "uneven", "gavg", "gmax", "ceil"}) g.output(o, 4);
                 },
                 {{{1, 2, 4, 4}}, {{2, 2, 7, 5}}, {{1, 2, 9, 12}}}});
  out.push_back({"norms", [](G& g) {
                   g.input("x", {"n", int64_t{3}, "l"});
                   g.floats("scale", {3}, onnx_test::random_floats(3, 21));
                   g.floats("bias", {3}, onnx_test::random_floats(3, 22));
                   g.floats("mean", {3}, onnx_test::random_floats(3, 23));
                   g.floats("var", {3}, {0.5f, 1.5f, 2.0f});
                   g.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"bn"});
                   g.input("t", {"k", "m", int64_t{8}});
                   g.floats("gamma", {8}, onnx_test::random_floats(8, 24));
                   g.floats("beta", {8}, onnx_test::random_floats(8, 25));
                   g.node("LayerNormalization", {"t", "gamma", "beta"}, {"ln"});
                   g.output("bn", 3);
                   g.output("ln", 3);
                 },
                 {{{1, 3, 1}, {1, 1, 8}}, {{2, 3, 5}, {3, 4, 8}}}});
  out.push_back({"reductions", [](G& g) {
                   g.input("x", {"n", "m", int64_t{3}});
                   g.ints("ax1", {1});
                   G::attr(g.node("ReduceSum", {"x", "ax1"}, {"sum"}), "keepdims", int64_t{0});
                   G::attr(g.node("ReduceMean", {"x"}, {"mean"}), "axes", std::vector<int64_t>{0, 2});
                   G::attr(g.node("ReduceMax", {"x"}, {"max"}), "axes", std::vector<int64_t>{2});
                   G::attr(g.node("ReduceMin", {"x"}, {"min"}), "axes", std::vector<int64_t>{-1});
                   G::attr(g.node("ReduceProd", {"x"}, {"prod"}), "axes", std::vector<int64_t>{2});
                   G::attr(g.node("ArgMax", {"x"}, {"argmax"}), "axis", int64_t{1});
                   g.node("CumSum", {"x", "ax1"}, {"cumsum"});
                   G::attr(g.node("CumSum", {"x", "ax1"}, {"reversed"}), "reverse", int64_t{1});
                   G::attr(g.node("CumSum", {"x", "ax1"}, {"exclusive"}), "exclusive", int64_t{1});
                   onnx::NodeProto& both = g.node("CumSum", {"x", "ax1"}, {"both"});
                   G::attr(both, "reverse", int64_t{1});
                   G::attr(both, "exclusive", int64_t{1});
                   g.output("sum", 2);
                   for (const char* o : {"mean", "max", "min", "prod"}) g.output(o, 3);
                   g.output("argmax", 3, onnx::TensorProto::INT64);
                   for (const char* o : {"cumsum", "reversed", "exclusive", "both"}) g.output(o, 3);
                   // Ties (x rounded to halves): select_last_index picks the last of them.
                   g.floats("two", {1}, {2.0F});
                   g.node("Mul", {"x", "two"}, {"doubled"});
                   g.node("Floor", {"doubled"}, {"steps"});
                   onnx::NodeProto& last_max = g.node("ArgMax", {"steps"}, {"last_max"});
                   G::attr(last_max, "axis", int64_t{1});
                   G::attr(last_max, "select_last_index", int64_t{1});
                   onnx::NodeProto& last_min = g.node("ArgMin", {"steps"}, {"last_min"});
                   G::attr(last_min, "axis", int64_t{-1});
                   G::attr(last_min, "keepdims", int64_t{0});
                   G::attr(last_min, "select_last_index", int64_t{1});
                   g.output("last_max", 3, onnx::TensorProto::INT64);
                   g.output("last_min", 2, onnx::TensorProto::INT64);
                 },
                 {{{1, 1, 3}}, {{4, 5, 3}}, {{2, 9, 3}}}});
  out.push_back({"slice_split", [](G& g) {
                   g.input("x", {"n", int64_t{6}});
                   g.ints("s1", {1});
                   g.ints("end", {std::numeric_limits<int64_t>::max()});
                   g.ints("ax1", {1});
                   g.ints("two", {2});
                   g.node("Slice", {"x", "s1", "end", "ax1", "two"}, {"odd"});
                   g.ints("m2", {-2});
                   g.ints("m1", {-1});
                   g.node("Slice", {"x", "m2", "m1", "ax1"}, {"last_but_one"});
                   g.ints("sizes", {2, 4});
                   G::attr(g.node("Split", {"x", "sizes"}, {"a", "b"}), "axis", int64_t{1});
                   G::attr(g.node("Split", {"x"}, {"c", "d"}), "axis", int64_t{1});
                   for (const char* o : {"odd", "last_but_one", "a", "b", "c", "d"}) g.output(o, 2);
                 },
                 {{{1, 6}}, {{5, 6}}}});
  out.push_back({"expand_tile_pad_clip", [](G& g) {
                   g.input("x", {"n", int64_t{1}});
                   g.ints("shape", {3, 1, 4});
                   g.node("Expand", {"x", "shape"}, {"expanded"});
                   g.ints("reps", {2, 3});
                   g.node("Tile", {"x", "reps"}, {"tiled"});
                   g.ints("pads", {0, 1, 2, 0});
                   add_float(g, "half", {}, 0.5f);
                   g.node("Pad", {"x", "pads", "half"}, {"padded"});
                   add_float(g, "lo", {}, -0.25f);
                   g.node("Clip", {"x", "lo", "half"}, {"clipped"});
                   g.node("HardSigmoid", {"x"}, {"hs"});
                   g.node("HardSwish", {"x"}, {"hw"});
                   g.node("Shape", {"x"}, {"shape_x"});
                   g.ints("zero", {0});
                   g.ints("one", {1});
                   g.node("Gather", {"shape_x", "zero"}, {"rows"});
                   g.node("Squeeze", {"rows", "zero"}, {"rows_scalar"});
                   g.node("Squeeze", {"zero", "zero"}, {"zero_scalar"});
                   g.node("Squeeze", {"one", "zero"}, {"one_scalar"});
                   g.node("Range", {"zero_scalar", "rows_scalar", "one_scalar"}, {"range"});
                   g.output("expanded", 3);
                   for (const char* o : {"tiled", "padded", "clipped", "hs", "hw"}) g.output(o, 2);
                   g.output("range", 1, onnx::TensorProto::INT64);
                 },
                 {{{1, 1}}, {{5, 1}}}});
  out.push_back({"quantization", [](G& g) {
                   g.input("x", {"n", int64_t{4}});
                   add_float(g, "s", {}, 0.02f);
                   g.raw("zp", onnx::TensorProto::UINT8, {}, std::string(1, static_cast<char>(128)));
                   g.node("QuantizeLinear", {"x", "s", "zp"}, {"q"});
                   g.node("DequantizeLinear", {"q", "s", "zp"}, {"dq"});
                   g.floats("scales", {4}, {0.01f, 0.02f, 0.005f, 0.03f});
                   g.raw("zps", onnx::TensorProto::INT8, {4}, std::string("\x00\x05\xfb\x0a", 4));
                   g.node("QuantizeLinear", {"x", "scales", "zps"}, {"qa"});
                   g.node("DynamicQuantizeLinear", {"x"}, {"dy", "dys", "dyz"});
                   g.raw("w", onnx::TensorProto::UINT8, {4, 3}, std::string("\x01\x80\xff\x10\x20\x30\x7f\x00\x05\x09\x90\x40", 12));
                   g.raw("wz", onnx::TensorProto::UINT8, {}, std::string(1, static_cast<char>(3)));
                   g.node("MatMulInteger", {"q", "w", "zp", "wz"}, {"mi"});
                   g.output("q", 2, onnx::TensorProto::UINT8);
                   g.output("dq", 2);
                   g.output("qa", 2, onnx::TensorProto::INT8);
                   g.output("dy", 2, onnx::TensorProto::UINT8);
                   g.output("dys", 0);
                   g.output("dyz", 0, onnx::TensorProto::UINT8);
                   g.output("mi", 2, onnx::TensorProto::INT32);
                 },
                 {{{1, 4}}, {{7, 4}}}});
  out.push_back({"instance_norm_old_softmax", [](G& g) {
                   g.input("x", {"n", int64_t{3}, "l"});
                   g.floats("scale", {3}, {0.5f, 1.0f, 2.0f});
                   g.floats("bias", {3}, {0.0f, -1.0f, 1.0f});
                   g.node("InstanceNormalization", {"x", "scale", "bias"}, {"in"});
                   G::attr(g.node("Softmax", {"x"}, {"s"}), "axis", int64_t{1});
                   G::attr(g.node("LogSoftmax", {"x"}, {"ls"}), "axis", int64_t{1});
                   g.output("in", 3);
                   g.output("s", 3);
                   g.output("ls", 3);
                 },
                 {{{1, 3, 2}}, {{4, 3, 5}}},
                 11});
  out.push_back({"negative_steps_nonzero", [](G& g) {
                   g.input("x", {"n", int64_t{6}});
                   g.ints("m1", {-1});
                   g.ints("lowest", {std::numeric_limits<int64_t>::min()});
                   g.ints("ax0", {0});
                   g.ints("ax1", {1});
                   g.ints("four", {4});
                   g.ints("zero", {0});
                   g.ints("step2", {-2});
                   g.node("Slice", {"x", "m1", "lowest", "ax1", "m1"}, {"reversed"});
                   g.node("Slice", {"x", "four", "zero", "ax1", "step2"}, {"every_other"});
                   g.node("Slice", {"x", "m1", "lowest", "ax0", "m1"}, {"rows_reversed"});
                   add_float(g, "cut", {}, 0.25f);
                   g.node("Greater", {"x", "cut"}, {"big"});
                   g.node("NonZero", {"big"}, {"nz"});
                   G::attr(g.node("Transpose", {"nz"}, {"nzt"}), "perm", std::vector<int64_t>{1, 0});
                   for (const char* o : {"reversed", "every_other", "rows_reversed"}) g.output(o, 2);
                   g.output("nzt", 2, onnx::TensorProto::INT64);
                 },
                 {{{1, 6}}, {{5, 6}}, {{9, 6}}}});
  out.push_back({"conv_transpose", [](G& g) {
                   g.input("x", {"n", int64_t{4}, "h", "w"});
                   g.floats("W", {4, 3, 2, 2}, onnx_test::random_floats(48, 31));
                   g.floats("B", {3}, onnx_test::random_floats(3, 32));
                   G::attr(g.node("ConvTranspose", {"x", "W", "B"}, {"up"}), "strides", std::vector<int64_t>{2, 2});
                   g.floats("Wg", {4, 1, 3, 3}, onnx_test::random_floats(36, 33));
                   onnx::NodeProto& n = g.node("ConvTranspose", {"x", "Wg"}, {"grouped"});
                   G::attr(n, "group", int64_t{2});
                   G::attr(n, "pads", std::vector<int64_t>{1, 0, 0, 1});
                   G::attr(n, "output_padding", std::vector<int64_t>{1, 0});
                   G::attr(n, "strides", std::vector<int64_t>{2, 1});
                   // Overlapping taps without output padding: oneDNN's deconvolution.
                   g.floats("W3", {4, 8, 3, 3}, onnx_test::random_floats(288, 34));
                   onnx::NodeProto& overlap = g.node("ConvTranspose", {"x", "W3", "B8"}, {"overlap"});
                   g.floats("B8", {8}, onnx_test::random_floats(8, 35));
                   G::attr(overlap, "pads", std::vector<int64_t>{1, 1, 1, 1});
                   G::attr(overlap, "strides", std::vector<int64_t>{2, 2});
                   g.output("up", 4);
                   g.output("grouped", 4);
                   g.output("overlap", 4);
                 },
                 {{{1, 4, 1, 1}}, {{2, 4, 3, 5}}, {{1, 4, 6, 6}}}});
  out.push_back({"conv_transpose_1d", [](G& g) {
                   g.input("x", {"n", int64_t{4}, "l"});
                   g.floats("W", {4, 3, 3}, onnx_test::random_floats(36, 36));
                   onnx::NodeProto& t = g.node("ConvTranspose", {"x", "W"}, {"spread"});
                   G::attr(t, "strides", std::vector<int64_t>{2});
                   G::attr(t, "pads", std::vector<int64_t>{1, 0});
                   G::attr(t, "output_padding", std::vector<int64_t>{1});
                   g.floats("W2", {4, 2, 2}, onnx_test::random_floats(16, 37));
                   g.floats("B2", {2}, onnx_test::random_floats(2, 38));
                   G::attr(g.node("ConvTranspose", {"x", "W2", "B2"}, {"doubled"}), "strides", std::vector<int64_t>{2});
                   g.output("spread", 3);
                   g.output("doubled", 3);
                 },
                 {{{1, 4, 1}}, {{2, 4, 5}}, {{1, 4, 17}}}});
  out.push_back({"trilu_and_pad_modes", [](G& g) {
                   g.input("x", {"n", "m"});
                   g.node("Trilu", {"x"}, {"upper"});
                   g.ints("k", {-1});
                   G::attr(g.node("Trilu", {"x", "k"}, {"lower"}), "upper", int64_t{0});
                   g.ints("pads", {0, 2, 0, 1});
                   G::attr(g.node("Pad", {"x", "pads"}, {"reflected"}), "mode", std::string("reflect"));
                   g.ints("edge_pads", {1, 0, 2, 3});
                   G::attr(g.node("Pad", {"x", "edge_pads"}, {"edged"}), "mode", std::string("edge"));
                   g.ints("wrap_pads", {1, 1, 0, 2});
                   G::attr(g.node("Pad", {"x", "wrap_pads"}, {"wrapped"}), "mode", std::string("wrap"));
                   for (const char* o : {"upper", "lower", "reflected", "edged", "wrapped"}) g.output(o, 2);
                 },
                 {{{1, 3}}, {{4, 3}}, {{5, 8}}}});
  // LSTM: forward with biases and initial states; reverse and bidirectional without (ONNX
  // Runtime's CPU LSTM takes layout 0 only, so batch-first is tested against plain loops in
  // onnx_import_test.cc).
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    const bool both = std::string(direction) == "bidirectional";
    const int64_t d = both ? 2 : 1, hidden = 5, features = 3;
    out.push_back({std::string("lstm_") + direction, [=](G& g) {
                     g.input("x", {"t", "b", features});
                     g.floats("W", {d, 4 * hidden, features}, onnx_test::random_floats(static_cast<size_t>(d * 4 * hidden * features), 41));
                     g.floats("R", {d, 4 * hidden, hidden}, onnx_test::random_floats(static_cast<size_t>(d * 4 * hidden * hidden), 42));
                     std::vector<std::string> inputs = {"x", "W", "R"};
                     if (std::string(direction) == "forward") {
                       g.floats("B", {d, 8 * hidden}, onnx_test::random_floats(static_cast<size_t>(d * 8 * hidden), 43));
                       g.input("h0", {d, "b", hidden});
                       g.input("c0", {d, "b", hidden});
                       inputs = {"x", "W", "R", "B", "", "h0", "c0"};
                     }
                     onnx::NodeProto& n = g.node("LSTM", inputs, {"y", "y_h", "y_c"});
                     G::attr(n, "hidden_size", hidden);
                     G::attr(n, "direction", std::string(direction));
                     g.output("y", 4);
                     g.output("y_h", 3);
                     g.output("y_c", 3);
                   },
                   both ? std::vector<Shapes>{{{1, 1, features}}, {{6, 2, features}}, {{11, 3, features}}}
                        : std::string(direction) == "forward"
                              ? std::vector<Shapes>{{{1, 1, features}, {1, 1, hidden}, {1, 1, hidden}},
                                                    {{7, 2, features}, {1, 2, hidden}, {1, 2, hidden}},
                                                    {{16, 3, features}, {1, 3, hidden}, {1, 3, hidden}}}
                              : std::vector<Shapes>{{{1, 1, features}}, {{4, 2, features}}, {{13, 1, features}}}});
  }
  // GRU: forward with biases, an initial state and linear_before_reset; reverse without;
  // bidirectional with biases.
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    const bool both = std::string(direction) == "bidirectional", forward = std::string(direction) == "forward";
    const int64_t d = both ? 2 : 1, hidden = 4, features = 3;
    out.push_back({std::string("gru_") + direction, [=](G& g) {
                     g.input("x", {"t", "b", features});
                     g.floats("W", {d, 3 * hidden, features}, onnx_test::random_floats(static_cast<size_t>(d * 3 * hidden * features), 61));
                     g.floats("R", {d, 3 * hidden, hidden}, onnx_test::random_floats(static_cast<size_t>(d * 3 * hidden * hidden), 62));
                     std::vector<std::string> inputs = {"x", "W", "R"};
                     if (!std::string(direction).starts_with("rev")) {
                       g.floats("B", {d, 6 * hidden}, onnx_test::random_floats(static_cast<size_t>(d * 6 * hidden), 63));
                       inputs.push_back("B");
                     }
                     if (forward) {
                       g.input("h0", {d, "b", hidden});
                       inputs.insert(inputs.end(), {"", "h0"});
                     }
                     onnx::NodeProto& n = g.node("GRU", inputs, {"y", "y_h"});
                     G::attr(n, "hidden_size", hidden);
                     G::attr(n, "direction", std::string(direction));
                     if (forward) G::attr(n, "linear_before_reset", int64_t{1});
                     g.output("y", 4);
                     g.output("y_h", 3);
                   },
                   forward ? std::vector<Shapes>{{{1, 1, features}, {1, 1, hidden}}, {{6, 2, features}, {1, 2, hidden}},
                                                 {{12, 3, features}, {1, 3, hidden}}}
                           : std::vector<Shapes>{{{1, 1, features}}, {{5, 2, features}}, {{10, 3, features}}}});
  }
  out.push_back({"gather_elements_scatter_nd", [](G& g) {
                   g.input("x", {int64_t{3}, "m"});
                   g.input("y", {"n", int64_t{4}});
                   g.raw("idx", onnx::TensorProto::INT64, {2, 3},
                         std::string(reinterpret_cast<const char*>(std::vector<int64_t>{3, -1, 0, 1, 2, -4}.data()), 48));
                   G::attr(g.node("GatherElements", {"x", "idx"}, {"picked"}), "axis", int64_t{1});
                   g.raw("rows", onnx::TensorProto::INT64, {2, 1},
                         std::string(reinterpret_cast<const char*>(std::vector<int64_t>{0, -1}.data()), 16));
                   g.floats("upd", {2, 4}, onnx_test::random_floats(8, 71));
                   g.node("ScatterND", {"y", "rows", "upd"}, {"scattered"});
                   g.raw("cells", onnx::TensorProto::INT64, {3, 2},
                         std::string(reinterpret_cast<const char*>(std::vector<int64_t>{0, 1, 1, 3, 0, 1}.data()), 48));
                   g.floats("vals", {3}, onnx_test::random_floats(3, 72));
                   G::attr(g.node("ScatterND", {"y", "cells", "vals"}, {"added"}), "reduction", std::string("add"));
                   for (const char* o : {"picked", "scattered", "added"}) g.output(o, 2);
                 },
                 {{{3, 4}, {2, 4}}, {{3, 5}, {3, 4}}, {{3, 9}, {7, 4}}}});
  out.push_back({"einsum", [](G& g) {
                   g.input("q", {"b", int64_t{2}, "n", int64_t{4}});
                   g.input("k", {"b", int64_t{2}, "m", int64_t{4}});
                   g.input("v", {"r", int64_t{3}});
                   G::attr(g.node("Einsum", {"q", "k"}, {"scores"}), "equation", std::string("bhqd,bhkd->bhqk"));
                   G::attr(g.node("Einsum", {"q", "k"}, {"summed"}), "equation", std::string("bhqd, bhkd -> hkq"));
                   G::attr(g.node("Einsum", {"v"}, {"t"}), "equation", std::string("ij->ji"));
                   G::attr(g.node("Einsum", {"v"}, {"rows"}), "equation", std::string("ij->i"));
                   G::attr(g.node("Einsum", {"v", "v"}, {"gram"}), "equation", std::string("ij,kj->ik"));
                   g.output("scores", 4);
                   g.output("summed", 3);
                   g.output("t", 2);
                   g.output("rows", 1);
                   g.output("gram", 2);
                 },
                 {{{1, 2, 1, 4}, {1, 2, 1, 4}, {1, 3}},
                  {{2, 2, 5, 4}, {2, 2, 3, 4}, {4, 3}},
                  {{3, 2, 7, 4}, {3, 2, 9, 4}, {6, 3}}}});
  out.push_back({"topk", [](G& g) {
                   g.input("x", {"n", int64_t{9}});
                   g.ints("k", {3});
                   g.node("TopK", {"x", "k"}, {"values", "indices"});
                   g.ints("k2", {2});
                   G::attr(g.node("TopK", {"x", "k2"}, {"low", "low_indices"}), "largest", int64_t{0});
                   g.output("values", 2);
                   g.output("indices", 2, onnx::TensorProto::INT64);
                   g.output("low", 2);
                   g.output("low_indices", 2, onnx::TensorProto::INT64);
                 },
                 {{{2, 9}}, {{5, 9}}, {{17, 9}}}});
  // Comparisons and logic on tensors, bools cast to float, ArgMin, a Constant node.
  out.push_back({"compare_logic_cast", [](G& g) {
                   g.input("x", {"n", "m"});
                   g.input("y", {"n", "m"});
                   g.node("Less", {"x", "y"}, {"lt"});
                   g.node("LessOrEqual", {"x", "y"}, {"le"});
                   g.node("GreaterOrEqual", {"x", "y"}, {"ge"});
                   onnx::NodeProto& c = g.node("Constant", {}, {"half"});
                   G::attr(c, "value_float", 0.5F);
                   g.node("Greater", {"x", "half"}, {"big"});
                   g.node("And", {"lt", "big"}, {"both"});
                   g.node("Or", {"ge", "big"}, {"either"});
                   g.node("Not", {"both"}, {"neither"});
                   G::attr(g.node("Cast", {"either"}, {"as_float"}), "to", int64_t{onnx::TensorProto::FLOAT});
                   G::attr(g.node("Cast", {"x"}, {"as_int"}), "to", int64_t{onnx::TensorProto::INT32});
                   onnx::NodeProto& am = g.node("ArgMin", {"y"}, {"argmin"});
                   G::attr(am, "axis", int64_t{1});
                   G::attr(am, "keepdims", int64_t{0});
                   for (const char* b : {"le", "neither"}) g.output(b, 2, onnx::TensorProto::BOOL);
                   g.output("as_float", 2);
                   g.output("as_int", 2, onnx::TensorProto::INT32);
                   g.output("argmin", 1, onnx::TensorProto::INT64);
                 },
                 {{{1, 1}, {1, 1}}, {{3, 5}, {3, 5}}, {{9, 4}, {9, 4}}}});
  // Resize: each mode and coordinate transformation, by constant scales (whole, fractional,
  // shrinking) and by sizes computed from the input's shape.
  auto resize = [](G& g, const std::string& y, const std::string& scales, const std::string& sizes, const std::string& mode,
                   const std::string& coordinates, const std::string& nearest = "round_prefer_floor") {
    onnx::NodeProto& n = g.node("Resize", {"x", "", scales, sizes}, {y});
    G::attr(n, "mode", mode);
    G::attr(n, "coordinate_transformation_mode", coordinates);
    if (mode == "nearest") G::attr(n, "nearest_mode", nearest);
    g.output(y, 4);
    return &n;
  };
  out.push_back({"resize", [resize](G& g) {
                   g.input("x", {"n", int64_t{2}, "h", "w"});
                   g.floats("up", {4}, {1, 1, 2, 2});
                   g.floats("odd", {4}, {1, 1, 1.5F, 0.5F});
                   g.floats("up3", {4}, {1, 1, 3, 1.25F});
                   g.node("Shape", {"x"}, {"s"});
                   g.ints("zero", {0});
                   g.ints("two", {2});
                   g.node("Slice", {"s", "zero", "two"}, {"nc"});
                   g.ints("fixed", {7, 5});
                   G::attr(g.node("Concat", {"nc", "fixed"}, {"sizes"}), "axis", int64_t{0});
                   resize(g, "linear_half", "up", "", "linear", "half_pixel");
                   resize(g, "linear_torch", "odd", "", "linear", "pytorch_half_pixel");
                   resize(g, "linear_corners", "", "sizes", "linear", "align_corners");
                   resize(g, "linear_asym", "up3", "", "linear", "asymmetric");
                   resize(g, "cubic_half", "up", "", "cubic", "half_pixel");
                   onnx::NodeProto* c = resize(g, "cubic_excl", "odd", "", "cubic", "asymmetric");
                   G::attr(*c, "cubic_coeff_a", -0.5F);
                   G::attr(*c, "exclude_outside", int64_t{1});
                   resize(g, "near_floor", "up3", "", "nearest", "half_pixel");
                   resize(g, "near_ceil", "", "sizes", "nearest", "align_corners", "round_prefer_ceil");
                   resize(g, "near_down", "odd", "", "nearest", "asymmetric", "floor");
                   resize(g, "near_tf", "up3", "", "nearest", "tf_half_pixel_for_nn", "ceil");
                 },
                 {{{1, 2, 1, 3}}, {{2, 2, 4, 5}}, {{1, 2, 9, 6}}}});
  // Resize before opset 11 (asymmetric, ONNX Runtime's simple rounding) and Upsample.
  out.push_back({"resize_opset10", [](G& g) {
                   g.input("x", {"n", int64_t{2}, "h", "w"});
                   g.floats("up", {4}, {1, 1, 2, 3});
                   g.floats("down", {4}, {1, 1, 0.5F, 0.5F});
                   g.node("Resize", {"x", "up"}, {"nearest"});
                   G::attr(g.node("Resize", {"x", "up"}, {"linear"}), "mode", std::string("linear"));
                   g.node("Resize", {"x", "down"}, {"shrunk"});
                   g.output("nearest", 4);
                   g.output("linear", 4);
                   g.output("shrunk", 4);
                 },
                 {{{1, 2, 2, 3}}, {{2, 2, 5, 4}}, {{1, 2, 8, 7}}},
                 10});
  out.push_back({"upsample_opset7", [](G& g) {
                   g.input("x", {"n", int64_t{2}, "h", "w"});
                   G::attr(g.node("Upsample", {"x"}, {"nearest"}), "scales", std::vector<float>{1, 1, 2, 2});
                   onnx::NodeProto& n = g.node("Upsample", {"x"}, {"linear"});
                   G::attr(n, "scales", std::vector<float>{1, 1, 3, 2});
                   G::attr(n, "mode", std::string("linear"));
                   g.output("nearest", 4);
                   g.output("linear", 4);
                 },
                 {{{1, 2, 2, 3}}, {{2, 2, 5, 4}}},
                 7});
  // An If on a shape (n == 1), decided when the call runs: then doubles, else negates the rows'
  // sums; the branches differ in shape, so the result keeps its rank only.
  out.push_back({"if_on_a_dim", [](G& g) {
                   g.input("x", {"n", int64_t{4}});
                   g.node("Shape", {"x"}, {"s"});
                   g.ints("zero", {0});
                   g.ints("one", {1});
                   g.node("Gather", {"s", "zero"}, {"n"});
                   g.node("Equal", {"n", "one"}, {"cond"});
                   OnnxGraph then_g, else_g;
                   then_g.node("Add", {"x", "x"}, {"doubled"});
                   then_g.output("doubled", 2);
                   else_g.ints("axes", {1});
                   else_g.node("ReduceSum", {"x", "axes"}, {"sums"});
                   else_g.node("Neg", {"sums"}, {"negated"});
                   else_g.output("negated", 2);
                   onnx::NodeProto& n = g.node("If", {"cond"}, {"y"});
                   G::attr(n, "then_branch", then_g.graph());
                   G::attr(n, "else_branch", else_g.graph());
                   g.output("y", 2);
                 },
                 {{{1, 4}}, {{3, 4}}, {{6, 4}}}});
  // Loop: a row at a time for M = n rows (M computed from the shape, no condition), the body
  // reading the enclosing graph's x; a running sum carried, a scan output stacked.
  auto scalar_int = [](G& g, const std::string& name, int64_t v) {
    g.raw(name, onnx::TensorProto::INT64, {}, std::string(reinterpret_cast<const char*>(&v), sizeof v));
  };
  out.push_back({"loop_rows", [scalar_int](G& g) {
                   g.input("x", {"n", int64_t{4}});
                   g.node("Shape", {"x"}, {"s"});
                   scalar_int(g, "zero", 0);
                   g.node("Gather", {"s", "zero"}, {"n"});
                   g.floats("acc0", {4}, {0, 0, 0, 0});
                   OnnxGraph body;
                   body.input("i", {}, onnx::TensorProto::INT64);
                   body.input("c", {}, onnx::TensorProto::BOOL);
                   body.input("acc", {int64_t{4}});
                   body.node("Gather", {"x", "i"}, {"row"});
                   body.node("Mul", {"row", "row"}, {"sq"});
                   body.node("Add", {"acc", "sq"}, {"acc_out"});
                   body.node("Identity", {"c"}, {"c_out"});
                   body.node("Sigmoid", {"acc_out"}, {"seen"});
                   body.output("c_out", 0, onnx::TensorProto::BOOL);
                   body.output("acc_out", 1);
                   body.output("seen", 1);
                   G::attr(g.node("Loop", {"n", "", "acc0"}, {"acc", "scans"}), "body", body.graph());
                   g.output("acc", 1);
                   g.output("scans", 2);
                 },
                 {{{1, 4}}, {{3, 4}}, {{7, 4}}, {{0, 4}}}});
  // Loop until the body's condition fails: x halved while any |x| > 0.05 (at most 100 times);
  // the carried value keeps its shape, the scan output's count is known only when it ends.
  out.push_back({"loop_until", [scalar_int](G& g) {
                   g.input("x", {"n", int64_t{3}});
                   scalar_int(g, "most", 100);
                   g.raw("yes", onnx::TensorProto::BOOL, {}, std::string(1, '\1'));
                   OnnxGraph body;
                   body.input("i", {}, onnx::TensorProto::INT64);
                   body.input("c", {}, onnx::TensorProto::BOOL);
                   body.input("v", {std::string(), int64_t{3}});
                   body.floats("half", {}, {0.5F});
                   body.floats("limit", {}, {0.05F});
                   body.node("Mul", {"v", "half"}, {"v_out"});
                   body.node("Abs", {"v_out"}, {"a"});
                   G::attr(body.node("ReduceMax", {"a"}, {"m"}), "keepdims", int64_t{0});
                   body.node("Greater", {"m", "limit"}, {"c_out"});
                   body.node("Sum", {"v_out"}, {"trace"});
                   body.output("c_out", 0, onnx::TensorProto::BOOL);
                   body.output("v_out", 2);
                   body.output("trace", 2);
                   G::attr(g.node("Loop", {"most", "yes", "x"}, {"v", "steps"}), "body", body.graph());
                   g.output("v", 2);
                   g.output("steps", 3);
                 },
                 {{{1, 3}}, {{4, 3}}, {{9, 3}}}});
  // A Loop whose body holds an If decided at run time: four steps of v <- sum(v) > 0 ? v * 0.5 - 1
  // : v + 2.
  out.push_back({"loop_with_if", [scalar_int](G& g) {
                   g.input("x", {"n", int64_t{3}});
                   scalar_int(g, "four", 4);
                   OnnxGraph body;
                   body.input("i", {}, onnx::TensorProto::INT64);
                   body.input("c", {}, onnx::TensorProto::BOOL);
                   body.input("v", {std::string(), int64_t{3}});
                   body.floats("zero", {}, {0.0F});
                   body.floats("half", {}, {0.5F});
                   body.floats("one", {}, {1.0F});
                   body.floats("two", {}, {2.0F});
                   G::attr(body.node("ReduceSum", {"v"}, {"total"}), "keepdims", int64_t{0});
                   body.node("Greater", {"total", "zero"}, {"positive"});
                   OnnxGraph shrink, grow;
                   shrink.node("Mul", {"v", "half"}, {"halved"});
                   shrink.node("Sub", {"halved", "one"}, {"shrunk"});
                   shrink.output("shrunk", 2);
                   grow.node("Add", {"v", "two"}, {"grown"});
                   grow.output("grown", 2);
                   onnx::NodeProto& branch = body.node("If", {"positive"}, {"v_out"});
                   G::attr(branch, "then_branch", shrink.graph());
                   G::attr(branch, "else_branch", grow.graph());
                   body.node("Identity", {"c"}, {"c_out"});
                   body.output("c_out", 0, onnx::TensorProto::BOOL);
                   body.output("v_out", 2);
                   G::attr(g.node("Loop", {"four", "", "x"}, {"v"}), "body", body.graph());
                   g.output("v", 2);
                 },
                 {{{1, 3}}, {{4, 3}}, {{7, 3}}}});
  // A carried value that grows: three times, the column sums appended as a row.
  out.push_back({"loop_grows", [scalar_int](G& g) {
                   g.input("x", {"k", int64_t{2}});
                   scalar_int(g, "three", 3);
                   OnnxGraph body;
                   body.input("i", {}, onnx::TensorProto::INT64);
                   body.input("c", {}, onnx::TensorProto::BOOL);
                   body.input("v", {std::string(), int64_t{2}});
                   body.ints("axes", {0});
                   body.node("ReduceSum", {"v", "axes"}, {"row"});
                   G::attr(body.node("Concat", {"v", "row"}, {"v_out"}), "axis", int64_t{0});
                   body.node("Identity", {"c"}, {"c_out"});
                   body.output("c_out", 0, onnx::TensorProto::BOOL);
                   body.output("v_out", 2);
                   G::attr(g.node("Loop", {"three", "", "x"}, {"grown"}), "body", body.graph());
                   g.output("grown", 2);
                 },
                 {{{1, 2}}, {{4, 2}}, {{6, 2}}}});
  // Exporters name a dim they know to be a sum by the sum's text: the mask's
  // `past + seq` is the sum of the other inputs' dims, so the add is well shaped.
  out.push_back({"dim_param_expression", [](G& g) {
                   g.input("scores", {"seq", "past + seq"});
                   g.input("past_keys", {"past", int64_t{2}});
                   g.input("keys", {"seq", int64_t{2}});
                   G::attr(g.node("Concat", {"past_keys", "keys"}, {"all"}), "axis", int64_t{0});
                   G::attr(g.node("Transpose", {"all"}, {"all_t"}), "perm", std::vector<int64_t>{1, 0});
                   g.node("MatMul", {"keys", "all_t"}, {"products"});
                   g.node("Add", {"scores", "products"}, {"y"});
                   g.output("y", 2);
                 },
                 {{{1, 1}, {0, 2}, {1, 2}}, {{3, 7}, {4, 2}, {3, 2}}, {{2, 11}, {9, 2}, {2, 2}}}});
  return out;
}

class OnnxAgainstOrt : public ::testing::TestWithParam<OrtCase> {};

TEST_P(OnnxAgainstOrt, MatchesAtEverySize) {
  const OrtCase& c = GetParam();
  OnnxGraph g(c.opset);
  c.write(g);
  const std::string bytes = g.bytes();
  OnnxImportOptions options;
  options.weights_as_constants = true;
  absl::StatusOr<OnnxModel> m = import_onnx(bytes, options);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<runtime::Module> built = build(m->module, "cpu");
  ASSERT_TRUE(built.ok()) << built.status();
  uint32_t seed = 1;
  for (const Shapes& run : c.runs) {
    std::vector<Tensor> inputs;
    std::vector<runtime::Value> args;
    for (const std::vector<int64_t>& shape : run) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      inputs.push_back(*Tensor::from_vector(shape, onnx_test::random_floats(static_cast<size_t>(n), seed++)));
      args.emplace_back(inputs.back());
    }
    onnx_test::OrtRun ort = onnx_test::run_ort(bytes, inputs, c.name);
    if (!ort.unavailable.empty()) GTEST_SKIP() << "ONNX Runtime unavailable: " << ort.unavailable;
    ASSERT_TRUE(ort.status.ok()) << ort.status;
    absl::StatusOr<runtime::Value> y = (*built)["main"].call(args);
    ASSERT_TRUE(y.ok()) << y.status();
    const std::vector<Tensor> ours = onnx_test::result_tensors(*y);
    ASSERT_EQ(ours.size(), ort.outputs.size());
    for (size_t k = 0; k < ours.size(); ++k) {
      const Tensor& a = ours[k];
      const Tensor& b = ort.outputs[k];
      ASSERT_EQ(a.shape(), b.shape()) << c.name << " output " << k;
      ASSERT_EQ(a.dtype(), b.dtype()) << c.name << " output " << k;
      if (!a.dtype().is_float()) {  // integers and bools: the same bytes
        const auto* xi = static_cast<const uint8_t*>(a.data());
        const auto* ri = static_cast<const uint8_t*>(b.data());
        const int64_t size = a.numel() * ((a.dtype().bits + 7) / 8);
        int64_t differ = 0;
        for (int64_t i = 0; i < size; ++i) differ += xi[i] != ri[i];
        EXPECT_EQ(differ, 0) << c.name << " output " << k << " (" << a.dtype() << ")";
        continue;
      }
      const auto* x = static_cast<const float*>(a.data());
      const auto* r = static_cast<const float*>(b.data());
      for (int64_t i = 0; i < a.numel(); ++i) {
        if (std::isnan(r[i])) {
          EXPECT_TRUE(std::isnan(x[i])) << c.name << " output " << k << " element " << i;
          continue;
        }
        EXPECT_NEAR(x[i], r[i], 1e-5 + 1e-4 * std::fabs(r[i])) << c.name << " output " << k << " element " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OnnxAgainstOrt, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<OrtCase>& p) { return p.param.name; });

}  // namespace
}  // namespace onnx_ort_test
}  // namespace relax::frontend
