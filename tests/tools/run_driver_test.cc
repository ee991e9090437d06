// relax-run's library (tools/run_driver.h), called in-process: the example modules of
// examples/models/ run with .npy inputs and their .npy outputs are compared with plain-loop
// references; every error the tool reports has a test naming its message.
#include "run_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/runtime/cuda.h"
#include "relax/runtime/npy.h"

namespace relax::tools {
namespace {

using runtime::Tensor;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kModels = std::string(RELAX_SOURCE_DIR) + "/examples/models/";

// A scratch file of the running test: CTest runs the tests of this binary in parallel
// processes, so two tests must never share a file name.
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/run_driver_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

// Deterministic values in [-1, 1).
Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed, DataType dtype = DataType::float32()) {
  Tensor t = *Tensor::empty(std::move(shape), dtype);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double v = static_cast<double>(state >> 11) / static_cast<double>(1ull << 53) * 2 - 1;
    if (dtype == DataType::float32()) t.data_as_or_die<float>()[i] = static_cast<float>(v);
    if (dtype == DataType::float64()) t.data_as_or_die<double>()[i] = v;
  }
  return t;
}

// Saves `t` under a temp name and returns the --input text for it.
std::string input_file(const std::string& name, const Tensor& t) {
  const std::string path = temp_path(name + ".npy");
  absl::Status s = runtime::save_npy(path, t);
  EXPECT_TRUE(s.ok()) << s;
  return "@" + path;
}

std::string write_text(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

std::vector<float> values(const Tensor& t) {
  if (!t.defined() || t.dtype() != DataType::float32()) {
    ADD_FAILURE() << "expected a float32 tensor, got " << t.describe();
    return {};
  }
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

Tensor load(const std::string& at_path) {
  absl::StatusOr<Tensor> t = runtime::load_npy(at_path.substr(1));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

void expect_near(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-5f * (1 + std::fabs(expected[i]))) << "element " << i;
  }
}

std::string run_ok(const RunOptions& options) {
  std::ostringstream out;
  absl::Status s = run_tool(options, out);
  EXPECT_TRUE(s.ok()) << s;
  return out.str();
}

std::string run_error(const RunOptions& options) {
  std::ostringstream out;
  absl::Status s = run_tool(options, out);
  EXPECT_FALSE(s.ok()) << out.str();
  return std::string(s.message());
}

// ---------------------------------------------------------------------------
// Plain-loop references.

// (rows, k) @ (k, cols) + bias(cols)
std::vector<float> linear(const std::vector<float>& x, const std::vector<float>& w,
                          const std::vector<float>& bias, int64_t rows, int64_t k, int64_t cols) {
  std::vector<float> y(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double acc = bias[static_cast<size_t>(j)];
      for (int64_t p = 0; p < k; ++p) acc += double{x[static_cast<size_t>(i * k + p)]} * w[static_cast<size_t>(p * cols + j)];
      y[static_cast<size_t>(i * cols + j)] = static_cast<float>(acc);
    }
  }
  return y;
}

std::vector<float> softmax(const std::vector<float>& x, float scale) {
  double top = -INFINITY, total = 0;
  for (float v : x) top = std::max(top, double{v} * scale);
  std::vector<float> y;
  for (float v : x) total += std::exp(double{v} * scale - top);
  for (float v : x) y.push_back(static_cast<float>(std::exp(double{v} * scale - top) / total));
  return y;
}

// ---------------------------------------------------------------------------
// The example modules, checked numerically.

// examples/models/mlp.relax over `batch` rows: its options (inputs written to .npy files, one
// output file) and the check of that output against plain loops.
struct MlpCase {
  explicit MlpCase(int64_t rows) : batch(rows) {
    options.file = kModels + "mlp.relax";
    options.inputs = {input_file("x", x), input_file("w1", w1), input_file("b1", b1), input_file("w2", w2),
                      input_file("b2", b2)};
    options.outputs = {"@" + temp_path("mlp_y.npy")};
  }
  void expect_matches_loops() const {
    std::vector<float> h = linear(values(x), values(w1), values(b1), batch, 16, 32);
    for (float& v : h) v = std::max(v, 0.0f);
    Tensor y = load(options.outputs[0]);
    ASSERT_TRUE(y.defined());
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{batch, 8}));
    expect_near(values(y), linear(h, values(w2), values(b2), batch, 32, 8));
  }
  int64_t batch;
  Tensor x = random_tensor({batch, 16}, 1), w1 = random_tensor({16, 32}, 2), b1 = random_tensor({32}, 3);
  Tensor w2 = random_tensor({32, 8}, 4), b2 = random_tensor({8}, 5);
  RunOptions options;
};

TEST(RunDriverTest, MlpExampleMatchesLoops) {
  for (int64_t batch : {1, 5}) {
    SCOPED_TRACE(batch);
    MlpCase mlp(batch);
    run_ok(mlp.options);
    mlp.expect_matches_loops();
  }
}

// --target=cuda: the inputs go to the GPU, the results come back to the host. Without a GPU
// (or the driver, or a runtime built without CUDA) the module compiles (NVRTC needs no device)
// and the tool stops at loading it, naming what is missing.
TEST(RunDriverTest, ACudaModuleTakesItsInputsOnTheGpuAndGivesResultsBack) {
  MlpCase mlp(3);
  RunOptions& o = mlp.options;
  o.target = "cuda";
  if (absl::StatusOr<runtime::cuda::DeviceInfo> info = runtime::cuda::device_info(0); info.ok()) {
    o.target = "cuda -arch=" + info->arch();
  }
  o.repeat = 2;
  o.memory_stats = true;
  std::ostringstream out;
  absl::Status s = run_tool(o, out);
  if (!runtime::cuda::available()) {
    ASSERT_FALSE(s.ok()) << out.str();
    EXPECT_THAT(std::string(s.message()), HasSubstr("CUDA")) << s;
    if (runtime::cuda::built_with_cuda()) {
      EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    }
    return;
  }
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out.str(), HasSubstr("peak_bytes="));
  mlp.expect_matches_loops();
}

TEST(RunDriverTest, SoftmaxExampleOverSymbolicLengthsAndAPrimScale) {
  for (int64_t n : {1, 7, 300}) {
    SCOPED_TRACE(n);
    Tensor x = random_tensor({n}, 10 + static_cast<uint64_t>(n));
    RunOptions o;
    o.file = kModels + "softmax.relax";
    o.inputs = {input_file("sx", x)};
    o.outputs = {"@" + temp_path("softmax_y.npy")};
    run_ok(o);
    expect_near(values(load(o.outputs[0])), softmax(values(x), 1.0f));
    // A float Prim parameter takes a number, an integer included.
    o.function = "scaled";
    for (const std::string scale : {"0.5", "3"}) {
      o.inputs = {input_file("sx", x), scale};
      run_ok(o);
      expect_near(values(load(o.outputs[0])), softmax(values(x), std::stof(scale)));
    }
  }
}

TEST(RunDriverTest, RandomInputsHaveTheParametersDtypeAndAreDeterministic) {
  RunOptions o;
  o.file = kModels + "softmax.relax";
  o.inputs = {"random(9)"};
  o.outputs = {"@" + temp_path("softmax_random_y.npy")};
  run_ok(o);
  std::vector<float> first = values(load(o.outputs[0]));
  ASSERT_EQ(first.size(), 9u);
  float total = 0;
  for (float v : first) total += v;
  EXPECT_NEAR(total, 1.0f, 1e-5f);
  // Not all equal (the values differ), and the same on a second run.
  EXPECT_NE(first[0], first[1]);
  run_ok(o);
  EXPECT_EQ(values(load(o.outputs[0])), first);
}

// A module of identity functions over float32, int8 and uint8 vectors (maximum(x, x), so that
// the values come back through a kernel).
std::string identity_module() {
  return write_text("identity.relax", R"(module {
  func @f32(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
    y = maximum(x, x)
    return y
  }
  func @i8(x: Tensor[(n,), int8]) -> Tensor[(n,), int8] {
    y = maximum(x, x)
    return y
  }
  func @u8(x: Tensor[(n,), uint8]) -> Tensor[(n,), uint8] {
    y = maximum(x, x)
    return y
  }
})");
}

TEST(RunDriverTest, RandomInputsDrawFromAGivenRange) {
  RunOptions o;
  o.file = identity_module();
  o.function = "f32";
  o.inputs = {"random(4000; 0.25, 3)"};
  o.outputs = {"@" + temp_path("f32.npy")};
  run_ok(o);
  std::vector<float> got = values(load(o.outputs[0]));
  ASSERT_EQ(got.size(), 4000u);
  EXPECT_GE(*std::min_element(got.begin(), got.end()), 0.25f);
  EXPECT_LT(*std::max_element(got.begin(), got.end()), 3.0f);
  EXPECT_LT(*std::min_element(got.begin(), got.end()), 0.3f);  // the range is covered
  EXPECT_GT(*std::max_element(got.begin(), got.end()), 2.9f);
  // Integers: every integer of [lo, hi], bounds included, and nothing else.
  for (const auto& [function, range, lo, hi] :
       std::vector<std::tuple<std::string, std::string, int, int>>{
           {"i8", "-128, 127", -128, 127}, {"i8", "-2.5, 2.5", -2, 2}, {"u8", "200, 255", 200, 255}}) {
    SCOPED_TRACE(function + " " + range);
    o.function = function;
    o.inputs = {"random(5000; " + range + ")"};
    run_ok(o);
    Tensor t = load(o.outputs[0]);
    ASSERT_EQ(t.numel(), 5000);
    std::vector<int> seen;
    for (int64_t i = 0; i < t.numel(); ++i) {
      seen.push_back(function == "i8" ? t.data_as_or_die<int8_t>()[i] : t.data_as_or_die<uint8_t>()[i]);
    }
    EXPECT_EQ(*std::min_element(seen.begin(), seen.end()), lo);
    EXPECT_EQ(*std::max_element(seen.begin(), seen.end()), hi);
  }
}

TEST(RunDriverErrorTest, RandomRangesThatCannotBeDrawn) {
  RunOptions o;
  o.file = identity_module();
  o.function = "i8";
  o.inputs = {"random(3; 0, 300)"};
  EXPECT_EQ(run_error(o), "--input #1: the range [0, 300] does not fit int8 [-128, 127]");
  o.inputs = {"random(3; 0.2, 0.7)"};
  EXPECT_EQ(run_error(o), "--input #1: the range [0.2, 0.7] holds no integer");
  o.inputs = {"random(3; 2, 1)"};
  EXPECT_EQ(run_error(o), "--input #1: the range [2, 1] is empty (lo > hi)");
  o.inputs = {"random(3; 1)"};
  EXPECT_EQ(run_error(o), "--input #1: the range \" 1\" is not two finite numbers `lo, hi`");
  o.inputs = {"random(3; 0, inf)"};
  EXPECT_THAT(run_error(o), HasSubstr("is not two finite numbers"));
  o.function = "u8";
  o.inputs = {"random(3; -1, 4)"};
  EXPECT_EQ(run_error(o), "--input #1: the range [-1, 4] does not fit uint8 [0, 255]");
}

TEST(RunDriverTest, TupleResultsAreFlattenedOntoTheOutputs) {
  Tensor x = random_tensor({3, 6}, 20);
  RunOptions o;
  o.file = kModels + "reshape_permute.relax";
  o.inputs = {input_file("rx", x)};
  o.outputs = {"@" + temp_path("r.npy"), "@" + temp_path("t.npy")};
  run_ok(o);
  Tensor r = load(o.outputs[0]), t = load(o.outputs[1]);
  ASSERT_TRUE(r.defined() && t.defined());
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(values(r), values(x));
  std::vector<float> expected;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 6; ++j) expected.push_back(values(x)[static_cast<size_t>(j * 3 + i)]);
  }
  EXPECT_EQ(values(t), expected);
}

TEST(RunDriverTest, ShapeInputs) {
  Tensor x = random_tensor({2, 6}, 21);
  RunOptions o;
  o.file = kModels + "reshape_permute.relax";
  o.function = "to_shape";
  o.inputs = {" shape( 6 , 2 ) ", input_file("rx", x)};
  o.outputs = {"@" + temp_path("s.npy")};
  run_ok(o);
  Tensor y = load(o.outputs[0]);
  ASSERT_TRUE(y.defined());
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(values(y), values(x));
  o.inputs[0] = "shape(4, 3)";
  EXPECT_EQ(run_error(o), "to_shape: argument x: dimension 0 is 2, expected q = 3");
}

TEST(RunDriverTest, NonTensorResultsAreWrittenAsArrays) {
  const std::string file = write_text("values.relax", R"(module {
  func @main(x: Tensor[(n, 2), float32], k: Prim[int64], f: Prim[float64]) -> Tuple[(Shape[(n, 2)], Prim[int64], Prim[float64])] {
    s = shape(n, 2)
    return (s, k, f)
  }
})");
  RunOptions o;
  o.file = file;
  o.inputs = {input_file("vx", random_tensor({3, 2}, 22)), "-7", "2.5"};
  o.outputs = {"@" + temp_path("shape.npy"), "@" + temp_path("int.npy"), "@" + temp_path("float.npy")};
  run_ok(o);
  Tensor shape = load(o.outputs[0]);
  ASSERT_TRUE(shape.defined());
  EXPECT_EQ(shape.dtype(), DataType::int64());
  EXPECT_EQ(std::vector<int64_t>(shape.data_as_or_die<int64_t>(), shape.data_as_or_die<int64_t>() + 2),
            (std::vector<int64_t>{3, 2}));
  Tensor k = load(o.outputs[1]), f = load(o.outputs[2]);
  ASSERT_TRUE(k.defined() && f.defined());
  ASSERT_EQ(k.dtype(), DataType::int64());
  EXPECT_EQ(k.ndim(), 0);
  EXPECT_EQ(*k.data_as_or_die<int64_t>(), -7);
  ASSERT_EQ(f.dtype(), DataType::float64());
  EXPECT_EQ(*f.data_as_or_die<double>(), 2.5);
}

TEST(RunDriverTest, PrintsResultsWithoutOutputs) {
  Tensor x = *Tensor::empty({2, 6}, DataType::float32());
  for (int64_t i = 0; i < 12; ++i) x.data_as_or_die<float>()[i] = static_cast<float>(i);
  RunOptions o;
  o.file = kModels + "reshape_permute.relax";
  o.inputs = {input_file("px", x)};
  EXPECT_EQ(run_ok(o),
            "result 0: Tensor[(4, 3), float32]\n"
            "[[ 0.  1.  2.]\n"
            " [ 3.  4.  5.]\n"
            " [ 6.  7.  8.]\n"
            " [ 9. 10. 11.]]\n"
            "result 1: Tensor[(3, 4), float32]\n"
            "[[ 0.  3.  6.  9.]\n"
            " [ 1.  4.  7. 10.]\n"
            " [ 2.  5.  8. 11.]]\n");
}

TEST(RunDriverTest, RepeatAndMemoryStats) {
  RunOptions o;
  o.file = kModels + "softmax.relax";
  o.inputs = {input_file("mx", random_tensor({1000}, 23))};
  o.outputs = {"@" + temp_path("m.npy")};
  o.repeat = 5;
  o.memory_stats = true;
  const std::string out = run_ok(o);
  const std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 7u) << out;
  EXPECT_THAT(lines[0], StartsWith("time: median "));
  EXPECT_THAT(lines[0], HasSubstr(" ms over 5 calls (min "));
  // One line per call, from the execution context the calls share.
  struct CallLine {
    int64_t call = -1, arena = -1, output = -1, allocator_calls = -1, reserved = -1;
  };
  std::vector<CallLine> calls(5);
  for (size_t c = 0; c < 5; ++c) {
    CallLine& l = calls[c];
    ASSERT_EQ(std::sscanf(lines[1 + c].c_str(),
                          "call %ld: arena_bytes=%ld output_bytes=%ld allocator_calls=%ld "
                          "context_reserved_bytes=%ld",
                          &l.call, &l.arena, &l.output, &l.allocator_calls, &l.reserved),
              5)
        << lines[1 + c];
    EXPECT_EQ(l.call, static_cast<int64_t>(c + 1));
    EXPECT_EQ(l.output, 4000);  // the float32[1000] result
    if (c == 0) {
      EXPECT_GE(l.allocator_calls, 1);
      EXPECT_GE(l.reserved, l.arena + l.output);
    } else {
      // The earlier result died before the call: everything is reused, nothing allocated.
      EXPECT_EQ(l.allocator_calls, 0) << lines[1 + c];
      EXPECT_EQ(l.arena, calls[0].arena);
      EXPECT_EQ(l.reserved, calls[0].reserved);
    }
  }
  int64_t peak = -1, allocations = -1, reserved = -1;
  ASSERT_EQ(std::sscanf(lines[6].c_str(), "peak_bytes=%ld allocations=%ld reserved_bytes=%ld", &peak,
                        &allocations, &reserved),
            3)
      << lines[6];
  // The runtime allocator saw the first call's allocations only, and held its result and the
  // input at once.
  EXPECT_EQ(allocations, calls[0].allocator_calls);
  EXPECT_GE(peak, 2 * 4000);
  EXPECT_GE(reserved, peak);
}

TEST(RunDriverTest, RunsAnExportedLibraryThroughTheRuntime) {
  absl::StatusOr<std::string> text = [] {
    std::ifstream in(kModels + "softmax.relax");
    std::stringstream s;
    s << in.rdbuf();
    return absl::StatusOr<std::string>(s.str());
  }();
  absl::StatusOr<IRModule> mod = parse_module(*text);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<runtime::Module> built = build(*mod);
  ASSERT_TRUE(built.ok()) << built.status();
  const std::string library = temp_path("softmax.so");
  ASSERT_TRUE(built->export_library(library).ok());
  Tensor x = random_tensor({9}, 24);
  RunOptions o;
  o.file = library;
  o.function = "scaled";
  o.inputs = {input_file("lx", x), "2"};
  o.outputs = {"@" + temp_path("l.npy")};
  run_ok(o);
  expect_near(values(load(o.outputs[0])), softmax(values(x), 2.0f));
  o.target = "cpu";
  EXPECT_THAT(run_error(o), HasSubstr("--target applies to a module compiled here; " + library +
                                      " is a compiled library"));
  o.target = "";
  o.passes = "legalize-ops";
  EXPECT_THAT(run_error(o), StartsWith("--passes applies to a module compiled here"));
  o.passes = "";
  o.disabled_passes = {"legalize-ops"};
  EXPECT_THAT(run_error(o), StartsWith("--disable-pass applies to a module compiled here"));
}

// ---------------------------------------------------------------------------
// Errors.

RunOptions softmax_options() {
  RunOptions o;
  o.file = kModels + "softmax.relax";
  o.inputs = {input_file("ex", random_tensor({4}, 30))};
  return o;
}

TEST(RunDriverErrorTest, UnknownFunction) {
  RunOptions o = softmax_options();
  o.function = "nope";
  EXPECT_EQ(run_error(o), "--function=nope: the module has no function nope (it has: main, scaled)");
}

TEST(RunDriverErrorTest, WrongArity) {
  RunOptions o = softmax_options();
  o.inputs.push_back("1");
  EXPECT_EQ(run_error(o), "function main takes 1 argument (x), got 2 --inputs");
  o.function = "scaled";
  o.inputs.clear();
  EXPECT_EQ(run_error(o), "function scaled takes 2 arguments (x, s), got 0 --inputs");
}

TEST(RunDriverErrorTest, ShapeAndDtypeMismatch) {
  RunOptions o;
  o.file = kModels + "mlp.relax";
  o.inputs = {input_file("x", random_tensor({2, 15}, 1)), input_file("w1", random_tensor({16, 32}, 2)),
              input_file("b1", random_tensor({32}, 3)), input_file("w2", random_tensor({32, 8}, 4)),
              input_file("b2", random_tensor({8}, 5))};
  EXPECT_THAT(run_error(o), HasSubstr("main: argument x: dimension 1 is 15, expected 16"));
  o.inputs[0] = input_file("x", random_tensor({2, 16}, 1, DataType::float64()));
  const std::string message = run_error(o);
  EXPECT_THAT(message, HasSubstr("main: argument x"));
  EXPECT_THAT(message, HasSubstr("float32"));
  EXPECT_THAT(message, HasSubstr("float64"));
}

TEST(RunDriverErrorTest, KindMismatch) {
  RunOptions o = softmax_options();
  o.function = "scaled";
  o.inputs = {"shape(4)", "0.5"};
  EXPECT_THAT(run_error(o), HasSubstr("scaled: argument x"));
  o.inputs = {input_file("ex", random_tensor({4}, 30)), "@" + temp_path("ex.npy")};
  EXPECT_THAT(run_error(o), HasSubstr("scaled: argument s"));
}

TEST(RunDriverErrorTest, UnreadableOrMalformedNpy) {
  RunOptions o = softmax_options();
  o.inputs = {"@" + temp_path("missing.npy")};
  EXPECT_EQ(run_error(o), "--input #1: " + temp_path("missing.npy") + ": cannot open: No such file or directory");
  o.inputs = {"@" + write_text("garbage.npy", "not numpy")};
  EXPECT_EQ(run_error(o), "--input #1: " + temp_path("garbage.npy") +
                              ": not a .npy file: expected the magic \"\\x93NUMPY\", got \"not nu\"");
  absl::StatusOr<std::string> bytes = runtime::serialize_npy(random_tensor({4}, 31));
  ASSERT_TRUE(bytes.ok());
  o.inputs = {"@" + write_text("short.npy", bytes->substr(0, bytes->size() - 3))};
  EXPECT_THAT(run_error(o), HasSubstr("short.npy: truncated: expected 16 bytes of data for shape (4,) of float32, got 13"));
}

TEST(RunDriverErrorTest, MalformedInputs) {
  RunOptions o = softmax_options();
  o.inputs = {"abc"};
  EXPECT_EQ(run_error(o),
            "--input #1: cannot read \"abc\"; expected @FILE.npy (a tensor), random(d0, d1, ...) "
            "or random(d0, d1, ...; lo, hi) (a tensor of pseudo-random values), an integer or a number (a Prim), or "
            "shape(d0, d1, ...)");
  // random(...) makes a tensor of the parameter's dtype; its dims must be sizes.
  o.inputs = {"random(3, x)"};
  EXPECT_THAT(run_error(o), HasSubstr("--input #1: dim \"x\" of the shape is not a non-negative integer"));
  o.inputs = {""};
  EXPECT_THAT(run_error(o), HasSubstr("cannot read \"\""));
  o.inputs = {"shape(3, x)"};
  EXPECT_EQ(run_error(o), "--input #1: dim \"x\" of the shape is not a non-negative integer");
  o.inputs = {"shape(3, -1)"};
  EXPECT_THAT(run_error(o), HasSubstr("dim \"-1\""));
}

TEST(RunDriverErrorTest, OutputsThatDoNotFit) {
  RunOptions o = softmax_options();
  o.file = kModels + "reshape_permute.relax";
  o.inputs = {input_file("ox", random_tensor({1, 6}, 32))};
  o.outputs = {"@" + temp_path("o1.npy")};
  EXPECT_EQ(run_error(o),
            "main returned 2 results (Tensor[(2, 3), float32], Tensor[(3, 2), float32]), got 1 --output");
  o.outputs = {"o1.npy"};
  EXPECT_EQ(run_error(o), "--output #1: \"o1.npy\" is not of the form @PATH.npy");
  o.outputs = {"@/nonexistent-dir/a.npy", "@" + temp_path("o2.npy")};
  EXPECT_THAT(run_error(o), HasSubstr("--output #1: /nonexistent-dir/a.npy: cannot open for writing"));
}

TEST(RunDriverErrorTest, BadRepeat) {
  RunOptions o = softmax_options();
  o.repeat = -2;
  EXPECT_EQ(run_error(o), "--repeat=-2: expected a count of at least 1");
}

TEST(RunDriverErrorTest, UnreadableOrMalformedModule) {
  RunOptions o = softmax_options();
  o.file = temp_path("missing.relax");
  EXPECT_EQ(run_error(o), temp_path("missing.relax") + ": cannot open the module file");
  o.file = write_text("bad.relax", "module {\n  func @main( {\n}");
  EXPECT_THAT(run_error(o), StartsWith(temp_path("bad.relax") + ":2:"));
  o.file = write_text("bad.json", "{");
  EXPECT_THAT(run_error(o), StartsWith(temp_path("bad.json") + ":"));
  o.file = "";
  EXPECT_THAT(run_error(o), HasSubstr("no module file given"));
  o.file = temp_path("missing.so");
  EXPECT_THAT(run_error(o), HasSubstr("missing.so"));
  o.file = kModels + "softmax.relax";
  o.target = "gpu-of-the-future";
  EXPECT_THAT(run_error(o), StartsWith("--target: "));
}

// ---------------------------------------------------------------------------
// The pass flags.

TEST(RunDriverTest, PassesAndPipelineFlags) {
  Tensor x = random_tensor({5}, 40);
  RunOptions o = softmax_options();
  o.inputs = {input_file("px", x)};
  o.outputs = {"@" + temp_path("p.npy")};
  for (const std::string pipeline : {"", "default"}) {
    o.pipeline = pipeline;
    run_ok(o);
    expect_near(values(load(o.outputs[0])), softmax(values(x), 1.0f));
  }
  o.pipeline = "";
  o.passes = "legalize-ops";
  run_ok(o);
  expect_near(values(load(o.outputs[0])), softmax(values(x), 1.0f));
}

TEST(RunDriverErrorTest, PassFlags) {
  RunOptions o = softmax_options();
  o.passes = "legalize-ops,no-such-pass";
  EXPECT_THAT(run_error(o), StartsWith("--passes: pipeline:"));
  EXPECT_THAT(run_error(o), HasSubstr("no-such-pass"));
  o.pipeline = "default";
  EXPECT_EQ(run_error(o), "--passes=legalize-ops,no-such-pass and --pipeline=default: expected one of the two");
  o.passes = "";
  o.pipeline = "fast";
  EXPECT_EQ(run_error(o), "--pipeline=fast: unknown pipeline; expected default");
  o.pipeline = "";
  o.disabled_passes = {"no-such-pass"};
  EXPECT_THAT(run_error(o), HasSubstr("cannot disable unknown pass `no-such-pass`"));
  // Without legalization an operator call reaches the code generator: build says so.
  o.disabled_passes = {"legalize-ops"};
  EXPECT_THAT(run_error(o), StartsWith(kModels + "softmax.relax: build: "));
}

// ---------------------------------------------------------------------------
// The numpy-like summary.

Tensor iota(std::vector<int64_t> shape, DataType dtype) {
  Tensor t = *Tensor::empty(std::move(shape), dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DataType::int64()) t.data_as_or_die<int64_t>()[i] = i;
    if (dtype == DataType::float32()) t.data_as_or_die<float>()[i] = static_cast<float>(i);
  }
  return t;
}

template <typename T>
Tensor tensor_of(std::vector<int64_t> shape, DataType dtype, std::vector<T> v) {
  Tensor t = *Tensor::empty(std::move(shape), dtype);
  std::memcpy(t.data(), v.data(), t.nbytes());
  return t;
}

// The expected texts are what numpy prints (print(np.array(...))) for the same arrays.
TEST(TensorSummaryTest, MatchesNumpysLayout) {
  EXPECT_EQ(summarize_tensor(iota({2, 3}, DataType::float32())), "[[0. 1. 2.]\n [3. 4. 5.]]");
  EXPECT_EQ(summarize_tensor(iota({2, 2, 2}, DataType::int64())), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
  EXPECT_EQ(summarize_tensor(tensor_of<float>({3}, DataType::float32(), {0.5f, -1.0f, 2.25f})),
            "[ 0.5  -1.    2.25]");
  EXPECT_EQ(summarize_tensor(tensor_of<float>({2}, DataType::float32(), {0.1f, 1.0f / 3})),
            "[0.1        0.33333334]");
  EXPECT_EQ(summarize_tensor(tensor_of<float>({2}, DataType::float32(), {1e-5f, 1.0f})), "[1.e-05 1.e+00]");
  EXPECT_EQ(summarize_tensor(tensor_of<double>({3}, DataType::float64(), {NAN, INFINITY, 1.5})),
            "[nan inf 1.5]");
  EXPECT_EQ(summarize_tensor(tensor_of<uint8_t>({2}, DataType::boolean(), {1, 0})), "[ True False]");
  EXPECT_EQ(summarize_tensor(tensor_of<int8_t>({3}, DataType{DataType::Code::kInt, 8, 1}, {-128, 5, 127})),
            "[-128    5  127]");
  EXPECT_EQ(summarize_tensor(tensor_of<uint16_t>({2}, DataType::float16(), {0x3c00, 0xc100})), "[ 1.  -2.5]");
  EXPECT_EQ(summarize_tensor(iota({0, 4}, DataType::float32())), "[]");
  EXPECT_EQ(summarize_tensor(tensor_of<int64_t>({}, DataType::int64(), {42})), "42");
}

TEST(TensorSummaryTest, ErrorsOfEveryNumericDtype) {
  absl::StatusOr<std::pair<double, double>> e = tensor_errors(
      tensor_of<float>({3}, DataType::float32(), {1.0f, 2.5f, 0.0f}), tensor_of<float>({3}, DataType::float32(), {1.0f, 2.0f, 1e-9f}));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_DOUBLE_EQ(e->first, 0.5);
  EXPECT_DOUBLE_EQ(e->second, 0.25);  // the element below 1e-6 counts in the absolute error only
  const DataType u8{DataType::Code::kUInt, 8, 1};
  e = tensor_errors(tensor_of<uint8_t>({2}, u8, {200, 7}), tensor_of<uint8_t>({2}, u8, {196, 7}));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_DOUBLE_EQ(e->first, 4);
  e = tensor_errors(tensor_of<uint16_t>({1}, DataType::bfloat16(), {0x3f80}),
                    tensor_of<uint16_t>({1}, DataType::bfloat16(), {0x4000}));  // 1 against 2
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(e->first, 1.0);
  e = tensor_errors(tensor_of<double>({1}, DataType::float64(), {NAN}), tensor_of<double>({1}, DataType::float64(), {1.0}));
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(std::isinf(e->first));
  EXPECT_FALSE(tensor_errors(iota({2}, DataType::float32()), iota({3}, DataType::float32())).ok());
}

TEST(TensorSummaryTest, SummarizesLargeArrays) {
  EXPECT_EQ(summarize_tensor(iota({2000}, DataType::int64())), "[   0    1    2 ... 1997 1998 1999]");
  EXPECT_EQ(summarize_tensor(iota({40, 50}, DataType::int64())),
            "[[   0    1    2 ...   47   48   49]\n"
            " [  50   51   52 ...   97   98   99]\n"
            " [ 100  101  102 ...  147  148  149]\n"
            " ...\n"
            " [1850 1851 1852 ... 1897 1898 1899]\n"
            " [1900 1901 1902 ... 1947 1948 1949]\n"
            " [1950 1951 1952 ... 1997 1998 1999]]");
  // 1000 elements are printed in full, wrapped at 75 columns.
  const std::string full = summarize_tensor(iota({1000}, DataType::int64()));
  EXPECT_EQ(full.find("..."), std::string::npos);
  for (absl::string_view line : absl::StrSplit(full, '\n')) EXPECT_LE(line.size(), 75u) << line;
  EXPECT_THAT(full, StartsWith("[  0   1   2   3"));
}

TEST(TensorSummaryTest, StridedViewsAndUnprintableDtypes) {
  std::vector<float> storage = {0, 1, 2, 3, 4, 5};
  Tensor transposed = Tensor::borrow(storage.data(), {3, 2}, DataType::float32(), {1, 3});
  EXPECT_EQ(summarize_tensor(transposed), "[[0. 3.]\n [1. 4.]\n [2. 5.]]");
  EXPECT_EQ(summarize_tensor(*Tensor::empty({2}, DataType::bfloat16())), "(values of bfloat16 are not printed)");
  EXPECT_EQ(summarize_tensor(Tensor()), "(undefined)");
}

}  // namespace
}  // namespace relax::tools
