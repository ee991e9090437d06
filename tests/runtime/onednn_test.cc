// oneDNN library functions (relax/runtime/onednn.h): every kind and post-op against plain
// loops written here, several sizes through one function object, batch broadcasting, bf16,
// packed weights, the workspace, errors, and calls from several threads at once.
#include "relax/runtime/onednn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/runtime/module.h"
#include "relax/runtime/thread_budget.h"
#include "relax/support/half_float.h"
#include "test_programs.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;

#define SKIP_WITHOUT_ONEDNN() \
  if (!onednn_available()) GTEST_SKIP() << "built without oneDNN (RELAX_WITH_ONEDNN=OFF)"

// ---------------------------------------------------------------------------
// Tensors and references.

// Deterministic values in [-1, 1).
std::vector<float> values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 12345u;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return v;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// A tensor of `shape` with values(seed) (rounded to bf16 for a bf16 dtype), and those values.
struct Input {
  Tensor tensor;
  std::vector<float> data;  // as the tensor holds them
};

Input input(std::vector<int64_t> shape, uint32_t seed, DataType dtype = DataType::float32()) {
  std::vector<float> v = values(numel(shape), seed);
  if (dtype == DataType::bfloat16()) {
    for (float& f : v) f = static_cast<float>(round_to_bfloat16(f));
  }
  absl::StatusOr<Tensor> t = Tensor::from_vector(std::move(shape), v, dtype);
  RELAX_CHECK(t.ok()) << t.status();
  return {*t, v};
}

Tensor zeros(std::vector<int64_t> shape, DataType dtype = DataType::float32()) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype);
  RELAX_CHECK(t.ok()) << t.status();
  return *t;
}

std::vector<float> read(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::bfloat16()) {
    const auto* bits = static_cast<const uint16_t*>(t.data());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(bfloat16_value(bits[i]));
  } else {
    const float* f = t.data_as_or_die<float>();
    out.assign(f, f + out.size());
  }
  return out;
}

// matmul with numpy batch broadcasting, in double.
std::vector<double> ref_matmul(const std::vector<float>& a, std::vector<int64_t> as,
                               const std::vector<float>& b, std::vector<int64_t> bs,
                               std::vector<int64_t>* out_shape) {
  const size_t rank = std::max(as.size(), bs.size());
  as.insert(as.begin(), rank - as.size(), 1);
  bs.insert(bs.begin(), rank - bs.size(), 1);
  const int64_t m = as[rank - 2], k = as[rank - 1], n = bs[rank - 1];
  std::vector<int64_t> batch(rank - 2);
  for (size_t i = 0; i + 2 < rank; ++i) batch[i] = std::max(as[i], bs[i]);
  *out_shape = batch;
  out_shape->push_back(m);
  out_shape->push_back(n);
  const int64_t batches = numel(batch);
  std::vector<double> out(static_cast<size_t>(batches * m * n));
  for (int64_t bi = 0; bi < batches; ++bi) {
    // Offsets of this batch index in a and b (dims of 1 broadcast).
    int64_t rest = bi, a_off = 0, b_off = 0, a_stride = m * k, b_stride = k * n;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      if (as[d] != 1) a_off += idx * a_stride;
      if (bs[d] != 1) b_off += idx * b_stride;
      a_stride *= as[d];
      b_stride *= bs[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          s += double{a[static_cast<size_t>(a_off + i * k + p)]} *
               b[static_cast<size_t>(b_off + p * n + j)];
        }
        out[static_cast<size_t>((bi * m + i) * n + j)] = s;
      }
    }
  }
  return out;
}

// x[M, K] . w[N, K]^T.
std::vector<double> ref_linear(const std::vector<float>& x, const std::vector<float>& w, int64_t m,
                               int64_t k, int64_t n) {
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double{x[static_cast<size_t>(i * k + p)]} * w[static_cast<size_t>(j * k + p)];
      out[static_cast<size_t>(i * n + j)] = s;
    }
  }
  return out;
}

struct Conv {
  int64_t sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1, groups = 1;
};

// NCHW data, OIHW weight; out-of-range taps read 0.
std::vector<double> ref_conv2d(const std::vector<float>& x, std::vector<int64_t> xs,
                               const std::vector<float>& w, std::vector<int64_t> ws, const Conv& c,
                               std::vector<int64_t>* out_shape) {
  const int64_t n = xs[0], ch = xs[1], h = xs[2], wd = xs[3];
  const int64_t o = ws[0], ci = ws[1], kh = ws[2], kw = ws[3];
  const int64_t oh = (h + c.pt + c.pb - c.dh * (kh - 1) - 1) / c.sh + 1;
  const int64_t ow = (wd + c.pl + c.pr - c.dw * (kw - 1) - 1) / c.sw + 1;
  *out_shape = {n, o, oh, ow};
  const int64_t og = o / c.groups;
  EXPECT_EQ(ci * c.groups, ch);
  std::vector<double> out(static_cast<size_t>(n * o * oh * ow));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double s = 0;
          const int64_t g = oc / og;
          for (int64_t ic = 0; ic < ci; ++ic)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = y * c.sh - c.pt + ky * c.dh, ix = xo * c.sw - c.pl + kx * c.dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                s += double{x[static_cast<size_t>(((b * ch + g * ci + ic) * h + iy) * wd + ix)]} *
                     w[static_cast<size_t>(((oc * ci + ic) * kh + ky) * kw + kx)];
              }
          out[static_cast<size_t>(((b * o + oc) * oh + y) * ow + xo)] = s;
        }
  return out;
}

// NCHW data, IOHW weight (I, O / groups, kH, kW): every input element, times each tap, added at
// its output position (input * stride + tap * dilation - padding before), those outside cropped.
std::vector<double> ref_conv2d_transpose(const std::vector<float>& x, std::vector<int64_t> xs,
                                         const std::vector<float>& w, std::vector<int64_t> ws, const Conv& c,
                                         std::vector<int64_t>* out_shape) {
  const int64_t n = xs[0], ch = xs[1], h = xs[2], wd = xs[3];
  const int64_t og = ws[1], kh = ws[2], kw = ws[3], o = og * c.groups, ig = ch / c.groups;
  const int64_t oh = (h - 1) * c.sh + c.dh * (kh - 1) + 1 - c.pt - c.pb;
  const int64_t ow = (wd - 1) * c.sw + c.dw * (kw - 1) + 1 - c.pl - c.pr;
  *out_shape = {n, o, oh, ow};
  EXPECT_EQ(ws[0], ch);
  std::vector<double> out(static_cast<size_t>(n * o * oh * ow));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ic = 0; ic < ch; ++ic)
      for (int64_t iy = 0; iy < h; ++iy)
        for (int64_t ix = 0; ix < wd; ++ix)
          for (int64_t j = 0; j < og; ++j)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t y = iy * c.sh + ky * c.dh - c.pt, xo = ix * c.sw + kx * c.dw - c.pl;
                if (y < 0 || y >= oh || xo < 0 || xo >= ow) continue;
                const int64_t oc = ic / ig * og + j;
                out[static_cast<size_t>(((b * o + oc) * oh + y) * ow + xo)] +=
                    double{x[static_cast<size_t>(((b * ch + ic) * h + iy) * wd + ix)]} *
                    w[static_cast<size_t>(((ic * og + j) * kh + ky) * kw + kx)];
              }
  return out;
}

double activation(const std::string& post, double x) {
  if (post == "relu") return x > 0 ? x : 0;
  if (post == "gelu_erf") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (post == "gelu_tanh") {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
  }
  if (post == "silu") return x / (1 + std::exp(-x));
  if (post == "sigmoid") return 1 / (1 + std::exp(-x));
  if (post == "tanh") return std::tanh(x);
  ADD_FAILURE() << "no reference for " << post;
  return 0;
}

// Applies the posts in order: bias along `channel` (dim index of out_shape), activations,
// adds (one residual each, in order).
void apply_posts(std::vector<double>& out, const std::vector<int64_t>& out_shape, size_t channel,
                 const std::vector<std::string>& posts, const std::vector<float>* bias,
                 const std::vector<std::vector<float>>& residuals) {
  int64_t inner = 1;
  for (size_t d = channel + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
  size_t next_residual = 0;
  for (const std::string& post : posts) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (post == "bias") {
        out[i] +=
            (*bias)[static_cast<size_t>((static_cast<int64_t>(i) / inner) % out_shape[channel])];
      } else if (post == "add") {
        out[i] += residuals[next_residual][i];
      } else {
        out[i] = activation(post, out[i]);
      }
    }
    if (post == "add") ++next_residual;
  }
}

// |got - want| <= tol * (1 + |want|) everywhere.
void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - want[i]) > tol * (1 + std::abs(want[i]))) {
      FAIL() << what << ": element " << i << " is " << got[i] << ", expected " << want[i];
    }
  }
}

LibraryFunction resolve(const std::string& name) {
  absl::StatusOr<LibraryFunction> fn = resolve_library_function(name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  return fn.ok() ? *fn : LibraryFunction();
}

std::vector<Value> tensors(std::initializer_list<Tensor> ts) {
  return std::vector<Value>(ts.begin(), ts.end());
}

std::string call_error(const std::string& name, std::vector<Value> args) {
  absl::Status s = resolve(name)(args);
  EXPECT_FALSE(s.ok()) << name;
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  return std::string(s.message());
}

// ---------------------------------------------------------------------------
// linear and matmul.

// One linear call of `fn` for x (..., K) with every post in `posts`; checks the result.
void check_linear(const LibraryFunction& fn, std::vector<int64_t> x_shape, int64_t n,
                  const std::vector<std::string>& posts, uint32_t seed,
                  DataType in = DataType::float32(), DataType out_dtype = DataType::float32(),
                  const Tensor* weight = nullptr) {
  const int64_t k = x_shape.back();
  const int64_t m = numel(x_shape) / k;
  Input x = input(x_shape, seed, in);
  Input w = input({n, k}, 7, in);  // the same weight values for every call
  if (weight != nullptr) w = Input{*weight, read(*weight)};
  std::vector<int64_t> out_shape = x_shape;
  out_shape.back() = n;
  std::vector<Value> args = {x.tensor, w.tensor};
  Input bias;
  std::vector<std::vector<float>> residuals;
  for (const std::string& post : posts) {
    if (post == "bias") {
      bias = input({n}, seed + 1);
      args.push_back(bias.tensor);
    } else if (post == "add") {
      Input r = input(out_shape, seed + 2 + static_cast<uint32_t>(residuals.size()), out_dtype);
      residuals.push_back(r.data);
      args.push_back(r.tensor);
    }
  }
  Tensor out = zeros(out_shape, out_dtype);
  args.push_back(out);
  absl::Status s = fn(args);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<double> want = ref_linear(x.data, w.data, m, k, n);
  apply_posts(want, {m, n}, 1, posts, &bias.data, residuals);
  const double tol = out_dtype == DataType::bfloat16() ? 1.0 / 64 : 1e-4;
  expect_near(read(out), want, tol, absl::StrCat("linear M=", m, " posts ", posts.size()));
}

// A fixed thread budget for the life of a test: the default one is capped at the CPUs free at
// each claim, so a call's team (part of a primitive's key) could vary with the machine's load and
// the counts of primitives made and reused below with it.
class FixedBudget {
 public:
  explicit FixedBudget(int32_t threads) { set_kernel_thread_budget(threads); }
  ~FixedBudget() { set_kernel_thread_budget(0); }
  FixedBudget(const FixedBudget&) = delete;
  FixedBudget& operator=(const FixedBudget&) = delete;
};

TEST(OnednnTest, LinearEveryPostSeveralSizesThroughOneFunctionObject) {
  SKIP_WITHOUT_ONEDNN();
  const FixedBudget budget(2);
  for (const char* post : {"relu", "gelu_erf", "gelu_tanh", "silu", "sigmoid", "tanh", "add"}) {
    SCOPED_TRACE(post);
    LibraryFunction fn = resolve(absl::StrCat("onednn.linear+bias+", post));
    reset_onednn_stats();
    for (int64_t m : {1, 7, 64, 300}) {
      check_linear(fn, {m, 48}, 40, {"bias", post}, static_cast<uint32_t>(m));
    }
    // The same sizes again: the four primitives are cached.
    for (int64_t m : {1, 7, 64, 300}) {
      check_linear(fn, {m, 48}, 40, {"bias", post}, static_cast<uint32_t>(m) + 100);
    }
    EXPECT_EQ(onednn_stats().primitives_created, 4);
    EXPECT_EQ(onednn_stats().primitive_cache_hits, 4);
  }
}

TEST(OnednnTest, ThePrimitiveCacheKeepsTheSixtyFourMostRecentlyUsedShapes) {
  SKIP_WITHOUT_ONEDNN();
  LibraryFunction fn = resolve("onednn.linear");
  reset_onednn_stats();
  for (int64_t m = 1; m <= 65; ++m) check_linear(fn, {m, 8}, 4, {}, 1);
  EXPECT_EQ(onednn_stats().primitives_created, 65);
  check_linear(fn, {65, 8}, 4, {}, 2);  // still cached
  check_linear(fn, {2, 8}, 4, {}, 2);   // still cached
  EXPECT_EQ(onednn_stats().primitive_cache_hits, 2);
  check_linear(fn, {1, 8}, 4, {}, 3);  // the least recently used, forgotten: made again
  EXPECT_EQ(onednn_stats().primitives_created, 66);
}

// oneDNN 2.6 divides by zero creating a primitive with a zero dim (SIGFPE): an empty output
// is a call with nothing to do, an empty reduction a clear error.
TEST(OnednnTest, EmptyTensors) {
  SKIP_WITHOUT_ONEDNN();
  LibraryFunction fn = resolve("onednn.linear+bias+relu");
  check_linear(fn, {0, 8}, 4, {"bias", "relu"}, 1);  // no rows: nothing to write
  check_linear(fn, {2, 0, 8}, 4, {"bias", "relu"}, 1);
  EXPECT_EQ(
      call_error("onednn.linear+bias+relu",
                 tensors({zeros({3, 0}), zeros({4, 0}), zeros({4}), zeros({3, 4})})),
      "onednn.linear+bias+relu: argument 0 (x): shape (3, 0) is empty while the output is not "
      "(an empty reduction, which oneDNN does not run)");
  EXPECT_THAT(
      call_error("onednn.conv1d", tensors({zeros({0, 2, 5}), zeros({3, 2, 7}), zeros({0, 3, 1})})),
      HasSubstr("dilated kernel"));  // shapes are still checked
  absl::StatusOr<int64_t> bytes =
      onednn_workspace_bytes("onednn.matmul", {{0, 8}, {8, 4}, {0, 4}},
                             {DataType::float32(), DataType::float32(), DataType::float32()});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 0);
}

TEST(OnednnTest, PostsChainInOrder) {
  SKIP_WITHOUT_ONEDNN();
  const std::vector<std::string> posts = {"bias", "silu", "add", "tanh", "add"};
  LibraryFunction fn = resolve("onednn.linear+bias+silu+add+tanh+add");
  check_linear(fn, {2, 3, 32}, 24, posts, 1);  // x of rank 3: leading dims fold into M
  LibraryFunction plain = resolve("onednn.linear");
  check_linear(plain, {32}, 24, {}, 2);  // x of rank 1
}

void check_matmul(const std::string& name, std::vector<int64_t> as, std::vector<int64_t> bs,
                  const std::vector<std::string>& posts) {
  SCOPED_TRACE(name);
  Input a = input(as, 11), b = input(bs, 12);
  std::vector<int64_t> out_shape;
  std::vector<double> want = ref_matmul(a.data, as, b.data, bs, &out_shape);
  std::vector<Value> args = {a.tensor, b.tensor};
  Input bias;
  std::vector<std::vector<float>> residuals;
  for (const std::string& post : posts) {
    if (post == "bias") {
      bias = input({out_shape.back()}, 13);
      args.push_back(bias.tensor);
    } else if (post == "add") {
      Input r = input(out_shape, 14);
      residuals.push_back(r.data);
      args.push_back(r.tensor);
    }
  }
  Tensor out = zeros(out_shape);
  args.push_back(out);
  absl::Status s = resolve(name)(args);
  ASSERT_TRUE(s.ok()) << s;
  apply_posts(want, out_shape, out_shape.size() - 1, posts, &bias.data, residuals);
  expect_near(read(out), want, 1e-4, name);
}

TEST(OnednnTest, MatmulBroadcastsBatchDims) {
  SKIP_WITHOUT_ONEDNN();
  check_matmul("onednn.matmul", {5, 8}, {8, 6}, {});
  check_matmul("onednn.matmul", {4, 5, 8}, {8, 6}, {});        // b without batch: folds
  check_matmul("onednn.matmul", {5, 8}, {3, 8, 6}, {});        // a broadcast over b's batch
  check_matmul("onednn.matmul", {2, 1, 5, 8}, {3, 8, 6}, {});  // both broadcast
  check_matmul("onednn.matmul", {2, 3, 5, 8}, {2, 1, 8, 6}, {});
  check_matmul("onednn.matmul+bias+relu", {2, 3, 5, 8}, {3, 8, 6}, {"bias", "relu"});
  check_matmul("onednn.matmul+add", {2, 5, 8}, {2, 8, 6}, {"add"});
  check_matmul("onednn.matmul+gelu_tanh:packed", {2, 5, 8}, {2, 8, 6}, {"gelu_tanh"});
}

// ---------------------------------------------------------------------------
// Convolutions.

void check_conv2d(const std::string& name, std::vector<int64_t> xs, std::vector<int64_t> ws,
                  const Conv& c, const std::vector<std::string>& posts) {
  SCOPED_TRACE(name);
  Input x = input(xs, 21), w = input(ws, 22);
  std::vector<int64_t> out_shape;
  std::vector<double> want = ref_conv2d(x.data, xs, w.data, ws, c, &out_shape);
  std::vector<Value> args = {x.tensor, w.tensor};
  Input bias;
  std::vector<std::vector<float>> residuals;
  for (const std::string& post : posts) {
    if (post == "bias") {
      bias = input({ws[0]}, 23);
      args.push_back(bias.tensor);
    } else if (post == "add") {
      Input r = input(out_shape, 24);
      residuals.push_back(r.data);
      args.push_back(r.tensor);
    }
  }
  Tensor out = zeros(out_shape);
  args.push_back(out);
  absl::Status s = resolve(name)(args);
  ASSERT_TRUE(s.ok()) << s;
  apply_posts(want, out_shape, 1, posts, &bias.data, residuals);
  expect_near(read(out), want, 1e-4, name);
}

TEST(OnednnTest, Conv2dAttributesAndPosts) {
  SKIP_WITHOUT_ONEDNN();
  check_conv2d("onednn.conv2d", {1, 3, 8, 8}, {4, 3, 3, 3}, Conv{}, {});
  Conv c;
  c.sh = 2, c.sw = 1, c.pt = 1, c.pl = 0, c.pb = 2, c.pr = 1, c.dh = 1, c.dw = 2, c.groups = 2;
  const std::string attrs = "{strides=2,1;padding=1,0,2,1;dilation=1,2;groups=2}";
  check_conv2d("onednn.conv2d" + attrs + "+bias+relu", {2, 4, 9, 10}, {6, 2, 3, 2}, c,
               {"bias", "relu"});
  check_conv2d("onednn.conv2d" + attrs + "+bias+relu:packed", {2, 4, 9, 10}, {6, 2, 3, 2}, c,
               {"bias", "relu"});
  Conv same;
  same.pt = same.pl = same.pb = same.pr = 1;
  check_conv2d("onednn.conv2d{strides=1,1;padding=1,1,1,1;dilation=1,1;groups=1}+bias+add+sigmoid",
               {1, 8, 6, 6}, {8, 8, 3, 3}, same, {"bias", "add", "sigmoid"});
}

// NHWC of an NCHW tensor's values, and back.
std::vector<float> to_nhwc(const std::vector<float>& x, const std::vector<int64_t>& s, bool back) {
  const int64_t n = s[0], c = s[1], hw = s[2] * s[3];
  std::vector<float> out(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t plain = (b * c + ch) * hw + p;
        const int64_t nhwc = (b * hw + p) * c + ch;
        out[static_cast<size_t>(back ? plain : nhwc)] = x[static_cast<size_t>(back ? nhwc : plain)];
      }
  return out;
}

// `:nhwc_in` / `:nhwc_out`: the data and the output are NHWC in tensors of NCHW dims; the
// primitive reads and writes them as they are, and agrees with the plain reference. A
// deconvolution takes neither (a malformed name).
TEST(OnednnTest, NhwcInAndOutKeepTheNhwcLayout) {
  SKIP_WITHOUT_ONEDNN();
  const std::vector<int64_t> xs = {2, 12, 5, 7}, ws = {24, 12, 3, 3};
  Input x = input(xs, 61), w = input(ws, 62), bias = input({24}, 63);
  Conv c;
  c.pt = c.pl = c.pb = c.pr = 1;
  std::vector<int64_t> out_shape;
  std::vector<double> want = ref_conv2d(x.data, xs, w.data, ws, c, &out_shape);
  apply_posts(want, out_shape, 1, {"bias", "relu"}, &bias.data, {});
  const std::string name = "onednn.conv2d{strides=1,1;padding=1,1,1,1;dilation=1,1;groups=1}+bias+relu:packed";
  Tensor xn = *Tensor::from_vector(xs, to_nhwc(x.data, xs, false));
  Tensor out = zeros(out_shape);
  absl::Status s = resolve(name + ":nhwc_in:nhwc_out")(tensors({xn, w.tensor, bias.tensor, out}));
  ASSERT_TRUE(s.ok()) << s;
  expect_near(to_nhwc(read(out), out_shape, true), want, 1e-4, "NHWC in and out");
  // Only the output in NHWC: a plain source.
  Tensor out2 = zeros(out_shape);
  ASSERT_TRUE(resolve(name + ":nhwc_out")(tensors({x.tensor, w.tensor, bias.tensor, out2})).ok());
  expect_near(to_nhwc(read(out2), out_shape, true), want, 1e-4, "NHWC out");
  absl::StatusOr<LibraryFunction> deconv =
      resolve_library_function("onednn.conv2d_transpose{strides=2,2;padding=0,0,0,0;dilation=1,1;groups=1}:nhwc_in");
  ASSERT_FALSE(deconv.ok());
  EXPECT_THAT(std::string(deconv.status().message()), HasSubstr("NHWC layouts are for conv1d and conv2d only, not conv2d_transpose"));
}

// conv2d_transpose is oneDNN's deconvolution over relax's IOHW weights: strides, uneven
// padding, dilation, groups, a bias and an activation; plain and packed weights.
TEST(OnednnTest, Conv2dTransposeAttributesAndPosts) {
  SKIP_WITHOUT_ONEDNN();
  Conv c;
  c.sh = 2, c.sw = 3, c.pt = 1, c.pl = 0, c.pb = 0, c.pr = 2, c.dh = 1, c.dw = 2, c.groups = 2;
  const std::vector<int64_t> xs = {2, 4, 5, 6}, ws = {4, 3, 3, 2};
  Input x = input(xs, 41), w = input(ws, 42), bias = input({6}, 43);
  std::vector<int64_t> out_shape;
  std::vector<double> want = ref_conv2d_transpose(x.data, xs, w.data, ws, c, &out_shape);
  apply_posts(want, out_shape, 1, {"bias", "relu"}, &bias.data, {});
  for (const char* packed : {"", ":packed"}) {
    const std::string name =
        std::string("onednn.conv2d_transpose{strides=2,3;padding=1,0,0,2;dilation=1,2;groups=2}+bias+relu") + packed;
    Tensor out = zeros(out_shape);
    absl::Status s = resolve(name)(tensors({x.tensor, w.tensor, bias.tensor, out}));
    ASSERT_TRUE(s.ok()) << s;
    expect_near(read(out), want, 1e-4, name);
  }
  // 2x2 stride 2, the upsampling of a segmentation head.
  Conv up;
  up.sh = up.sw = 2;
  Input x2 = input({1, 8, 7, 9}, 44), w2 = input({8, 4, 2, 2}, 45);
  std::vector<double> want2 = ref_conv2d_transpose(x2.data, {1, 8, 7, 9}, w2.data, {8, 4, 2, 2}, up, &out_shape);
  Tensor out2 = zeros(out_shape);
  ASSERT_TRUE(resolve("onednn.conv2d_transpose{strides=2,2;padding=0,0,0,0;dilation=1,1;groups=1}:packed")(
                  tensors({x2.tensor, w2.tensor, out2}))
                  .ok());
  expect_near(read(out2), want2, 1e-4, "2x2 stride 2");
}

TEST(OnednnTest, Conv1dIsConv2dOfHeightOne) {
  SKIP_WITHOUT_ONEDNN();
  // conv1d (N, C, W) with padding left=2, right=0, stride 2, dilation 2: the reference is the
  // 2-D one over (N, C, 1, W).
  Input x = input({2, 4, 11}, 31), w = input({6, 4, 3}, 32), bias = input({6}, 33);
  Conv c;
  c.sw = 2, c.pl = 2, c.pr = 0, c.dw = 2;
  std::vector<int64_t> out4;
  std::vector<double> want = ref_conv2d(x.data, {2, 4, 1, 11}, w.data, {6, 4, 1, 3}, c, &out4);
  const std::vector<int64_t> out_shape = {out4[0], out4[1], out4[3]};
  Input r = input(out_shape, 34);
  apply_posts(want, out_shape, 1, {"bias", "gelu_erf", "add"}, &bias.data, {r.data});
  Tensor out = zeros(out_shape);
  absl::Status s = resolve("onednn.conv1d{strides=2;padding=2,0;dilation=2}+bias+gelu_erf+add")(
      tensors({x.tensor, w.tensor, bias.tensor, r.tensor, out}));
  ASSERT_TRUE(s.ok()) << s;
  expect_near(read(out), want, 1e-4, "conv1d");
}

// ---------------------------------------------------------------------------
// bf16, packing, the workspace.

TEST(OnednnTest, Bfloat16InputsWithBfloat16OrFloat32Output) {
  SKIP_WITHOUT_ONEDNN();
  // oneDNN 2.6 (Debian 12) runs bfloat16 matmuls only on CPUs with AVX-512 (avx512_core and
  // up); on an AVX2-only CPU it has no primitive for them and says so.
  absl::StatusOr<int64_t> probe = onednn_workspace_bytes(
      "onednn.matmul", {{2, 8}, {8, 4}, {2, 4}},
      {DataType::bfloat16(), DataType::bfloat16(), DataType::bfloat16()});
  if (!probe.ok() && probe.status().code() == absl::StatusCode::kUnimplemented) {
    GTEST_SKIP() << "oneDNN has no bfloat16 matmul on this CPU: " << probe.status().message();
  }
  LibraryFunction to_f32 = resolve("onednn.linear+bias+relu");
  LibraryFunction to_bf16 = resolve("onednn.linear+bias+relu");
  for (int64_t m : {1, 7, 64}) {
    check_linear(to_f32, {m, 64}, 32, {"bias", "relu"}, 41, DataType::bfloat16(),
                 DataType::float32());
    check_linear(to_bf16, {m, 64}, 32, {"bias", "relu"}, 42, DataType::bfloat16(),
                 DataType::bfloat16());
  }
  check_linear(resolve("onednn.linear+add:packed"), {5, 64}, 32, {"add"}, 43, DataType::bfloat16(),
               DataType::bfloat16());
}

TEST(OnednnTest, PackedWeightsArePackedOncePerLayout) {
  SKIP_WITHOUT_ONEDNN();
  const FixedBudget budget(2);
  LibraryFunction packed = resolve("onednn.linear+bias:packed");
  Input w = input({256, 128}, 7);
  reset_onednn_stats();
  for (int i = 0; i < 10; ++i)
    check_linear(packed, {16, 128}, 256, {"bias"}, 50 + i, DataType::float32(), DataType::float32(),
                 &w.tensor);
  EXPECT_EQ(onednn_stats().weights_packed, 1);
  EXPECT_EQ(onednn_stats().primitives_created, 1);
  // Other sizes may choose other layouts; each is packed once however often it is used.
  for (int round = 0; round < 3; ++round) {
    for (int64_t m : {1, 7, 64, 300}) {
      check_linear(packed, {m, 128}, 256, {"bias"}, 60, DataType::float32(), DataType::float32(),
                   &w.tensor);
    }
  }
  const int64_t layouts = onednn_stats().weights_packed;
  EXPECT_GE(layouts, 1);
  EXPECT_LE(layouts, 5);
  check_linear(packed, {300, 128}, 256, {"bias"}, 61, DataType::float32(), DataType::float32(),
               &w.tensor);
  EXPECT_EQ(onednn_stats().weights_packed, layouts);
  // Another weight tensor (another address) is packed for itself.
  Input w2 = input({256, 128}, 8);
  check_linear(packed, {16, 128}, 256, {"bias"}, 62, DataType::float32(), DataType::float32(),
               &w2.tensor);
  EXPECT_EQ(onednn_stats().weights_packed, layouts + 1);
}

// Restores the process's repacking policy at the end of a test.
class RepackPolicy {
 public:
  explicit RepackPolicy(OnednnRepack policy) : saved_(onednn_repack()) { set_onednn_repack(policy); }
  ~RepackPolicy() { set_onednn_repack(saved_); }

 private:
  OnednnRepack saved_;
};

// Plain weights of many rows: the first calls of a shape alternate the plain primitive and the
// weights reordered into oneDNN's own layout (timed; oneDNN's brgemm layout is blocked, not the
// plain one, on the AVX-512 CPUs this runs on), every call exact either way; then the faster way
// stays, and if it is oneDNN's layout the weights are copied into it once. Few rows never repack.
TEST(OnednnTest, PlainWeightsOfManyRowsTimeRepackingThenKeepOneWay) {
  SKIP_WITHOUT_ONEDNN();
  const RepackPolicy policy({OnednnRepack::Mode::kTimed, -1});
  LibraryFunction fn = resolve("onednn.linear+bias");
  Input w = input({200, 96}, 9);
  reset_onednn_stats();
  for (int i = 0; i < 4; ++i) {
    check_linear(fn, {4, 96}, 200, {"bias"}, 80 + i, DataType::float32(), DataType::float32(), &w.tensor);
  }
  EXPECT_EQ(onednn_stats().calls_repacked, 0) << "4 rows";
  for (int i = 0; i < 12; ++i) {
    check_linear(fn, {64, 96}, 200, {"bias"}, 70 + i, DataType::float32(), DataType::float32(), &w.tensor);
  }
  const OnednnStats s = onednn_stats();
  EXPECT_GE(s.calls_repacked, 3) << "the repacked way is timed 3 times before the choice";
  EXPECT_EQ(s.repack_buffer_bytes, 0) << "the trials' buffer is freed once the choice is made";
  // The choice made, more calls reorder nothing more: at most the one copy of these weights.
  for (int i = 0; i < 6; ++i) {
    check_linear(fn, {64, 96}, 200, {"bias"}, 90 + i, DataType::float32(), DataType::float32(), &w.tensor);
  }
  const OnednnStats after = onednn_stats();
  EXPECT_LE(after.weights_repacked, 1);
  const bool chose_repacked = after.calls_repacked > s.calls_repacked;
  EXPECT_EQ(after.calls_repacked - s.calls_repacked, chose_repacked ? 6 : 0);
  EXPECT_EQ(after.weights_repacked, chose_repacked ? 1 : 0);
}

// kAlways reads oneDNN's layout from the first call: the weights are copied once per tensor
// (their bytes counted while the function object lives), exact at every row count of many rows.
TEST(OnednnTest, RepackedWeightsAreCopiedOnceAndCounted) {
  SKIP_WITHOUT_ONEDNN();
  const RepackPolicy policy({OnednnRepack::Mode::kAlways, -1});
  Input w = input({200, 96}, 11), w2 = input({200, 96}, 12);
  const int64_t held = onednn_stats().repacked_weight_bytes;
  {
    LibraryFunction fn = resolve("onednn.linear+bias");
    reset_onednn_stats();
    for (int64_t m : {32, 64, 100, 64, 32}) {
      check_linear(fn, {m, 96}, 200, {"bias"}, 100 + m, DataType::float32(), DataType::float32(), &w.tensor);
    }
    OnednnStats s = onednn_stats();
    EXPECT_EQ(s.calls_repacked, 5);
    EXPECT_EQ(s.weights_repacked, 1) << "one copy of the weights for every call";
    EXPECT_GE(s.repacked_weight_bytes - held, 200 * 96 * 4);
    check_linear(fn, {48, 96}, 200, {"bias"}, 7, DataType::float32(), DataType::float32(), &w2.tensor);
    EXPECT_EQ(onednn_stats().weights_repacked, 2) << "other weights, a copy of their own";
    check_linear(fn, {8, 96}, 200, {"bias"}, 8, DataType::float32(), DataType::float32(), &w.tensor);
    EXPECT_EQ(onednn_stats().calls_repacked, 6) << "8 rows read the plain weights";
  }
  EXPECT_EQ(onednn_stats().repacked_weight_bytes, held) << "the copies go with the function object";
}

// A bound on the copies: weights that would pass it are read plain; kNever never copies.
TEST(OnednnTest, RepackLimitAndNeverKeepThePlainWeights) {
  SKIP_WITHOUT_ONEDNN();
  Input w = input({200, 96}, 13), w2 = input({200, 96}, 14);
  LibraryFunction fn = resolve("onednn.linear+bias");
  {
    // Room for one copy (a blocked layout may pad the 200 columns), not two.
    const RepackPolicy policy({OnednnRepack::Mode::kAlways, onednn_stats().repacked_weight_bytes + 200 * 96 * 4 * 3 / 2});
    reset_onednn_stats();
    check_linear(fn, {64, 96}, 200, {"bias"}, 1, DataType::float32(), DataType::float32(), &w.tensor);
    check_linear(fn, {64, 96}, 200, {"bias"}, 2, DataType::float32(), DataType::float32(), &w2.tensor);
    check_linear(fn, {64, 96}, 200, {"bias"}, 3, DataType::float32(), DataType::float32(), &w2.tensor);
    EXPECT_EQ(onednn_stats().weights_repacked, 1) << "room for one copy";
    EXPECT_EQ(onednn_stats().calls_repacked, 1);
  }
  {
    const RepackPolicy policy({OnednnRepack::Mode::kNever, -1});
    LibraryFunction fresh = resolve("onednn.linear+bias");
    reset_onednn_stats();
    for (int i = 0; i < 10; ++i) {
      check_linear(fresh, {64, 96}, 200, {"bias"}, 20 + i, DataType::float32(), DataType::float32(), &w.tensor);
    }
    EXPECT_EQ(onednn_stats().calls_repacked, 0);
    EXPECT_EQ(onednn_stats().weights_repacked, 0);
  }
}

TEST(OnednnTest, WorkspaceLargeEnoughIsUsedOtherwiseTheCallAllocates) {
  SKIP_WITHOUT_ONEDNN();
  // A plain-layout 3x3 convolution goes through im2col, which needs a scratchpad.
  const std::string name = "onednn.conv2d{strides=1,1;padding=1,1,1,1;dilation=1,1;groups=1}";
  const std::vector<int64_t> xs = {1, 16, 20, 20}, ws = {16, 16, 3, 3}, os = {1, 16, 20, 20};
  absl::StatusOr<int64_t> bytes = onednn_workspace_bytes(
      name, {xs, ws, os}, {DataType::float32(), DataType::float32(), DataType::float32()});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_GT(*bytes, 0);
  LibraryFunction fn = resolve(name);
  Input x = input(xs, 71), w = input(ws, 72);
  Tensor out = zeros(os);
  reset_onednn_stats();
  Tensor workspace = *Tensor::storage(*bytes);
  ASSERT_TRUE(fn(tensors({x.tensor, w.tensor, out, workspace})).ok());
  EXPECT_EQ(onednn_stats().scratchpads_allocated, 0);
  ASSERT_TRUE(fn(tensors({x.tensor, w.tensor, out})).ok());
  EXPECT_EQ(onednn_stats().scratchpads_allocated, 1);
  Tensor small = *Tensor::storage(*bytes - 1);
  ASSERT_TRUE(fn(tensors({x.tensor, w.tensor, out, small})).ok());
  EXPECT_EQ(onednn_stats().scratchpads_allocated, 2);
  std::vector<int64_t> shape;
  Conv c;
  c.pt = c.pl = c.pb = c.pr = 1;
  expect_near(read(out), ref_conv2d(x.data, xs, w.data, ws, c, &shape), 1e-4,
              "conv with workspace");
}

// A convolution of packed weights without a residual runs in oneDNN's own activation layouts
// (blocked channels), the source and the result reordered around it in the call's scratch:
// the workspace holds both activations (and a call given it allocates nothing), and the result
// is the plain-layout one. Depthwise, where the plain layouts cost the most.
TEST(OnednnTest, PackedConvolutionsReorderTheActivationsInTheWorkspace) {
  SKIP_WITHOUT_ONEDNN();
  const std::string name = "onednn.conv2d{strides=1,1;padding=2,2,2,2;dilation=1,1;groups=32}+bias:packed";
  const std::vector<int64_t> xs = {1, 32, 12, 20}, ws = {32, 1, 5, 5}, os = {1, 32, 12, 20};
  const int64_t activation_bytes = 32 * 12 * 20 * 4;
  absl::StatusOr<int64_t> bytes = onednn_workspace_bytes(
      name, {xs, ws, {32}, os}, {DataType::float32(), DataType::float32(), DataType::float32(), DataType::float32()});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_GE(*bytes, 2 * activation_bytes);
  LibraryFunction fn = resolve(name);
  Input x = input(xs, 81), w = input(ws, 82), bias = input({32}, 83);
  Tensor out = zeros(os);
  reset_onednn_stats();
  Tensor workspace = *Tensor::storage(*bytes);
  ASSERT_TRUE(fn(tensors({x.tensor, w.tensor, bias.tensor, out, workspace})).ok());
  EXPECT_EQ(onednn_stats().scratchpads_allocated, 0);
  Conv c;
  c.pt = c.pl = c.pb = c.pr = 2;
  c.groups = 32;
  std::vector<int64_t> shape;
  std::vector<double> want = ref_conv2d(x.data, xs, w.data, ws, c, &shape);
  apply_posts(want, shape, 1, {"bias"}, &bias.data, {});
  expect_near(read(out), want, 1e-4, "depthwise conv, blocked activations");
  // Without a workspace the same call allocates its scratch, and still agrees.
  Tensor again = zeros(os);
  ASSERT_TRUE(fn(tensors({x.tensor, w.tensor, bias.tensor, again})).ok());
  EXPECT_EQ(onednn_stats().scratchpads_allocated, 1);
  expect_near(read(again), want, 1e-4, "depthwise conv, allocated scratch");
}

// ---------------------------------------------------------------------------
// Errors.

std::string resolve_error(const std::string& name) {
  absl::StatusOr<LibraryFunction> fn = resolve_library_function(name);
  EXPECT_FALSE(fn.ok()) << name;
  if (fn.ok()) return "";
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kInvalidArgument) << fn.status();
  return std::string(fn.status().message());
}

TEST(OnednnTest, MalformedNamesAreErrorsNamingThem) {
  SKIP_WITHOUT_ONEDNN();
  EXPECT_EQ(
      resolve_error("onednn.matmull"),
      "library function name onednn.matmull: unknown kind `matmull` (expected matmul, linear, "
      "conv1d, conv2d or conv2d_transpose)");
  EXPECT_THAT(resolve_error("onednn.linear+swish"), HasSubstr("unknown post-op `swish`"));
  EXPECT_THAT(resolve_error("onednn.linear+relu+bias"),
              HasSubstr("`bias` may only be the first post-op"));
  EXPECT_THAT(resolve_error("onednn.linear+bias+bias"),
              HasSubstr("`bias` may only be the first post-op"));
  EXPECT_THAT(resolve_error("onednn.conv2d{strides=1}"),
              HasSubstr("attribute `strides` of conv2d takes 2 values, got 1"));
  EXPECT_THAT(resolve_error("onednn.conv2d{padding=1,1}"),
              HasSubstr("`padding` of conv2d takes 4 values"));
  EXPECT_THAT(resolve_error("onednn.conv1d{pad=1}"), HasSubstr("unknown attribute `pad`"));
  EXPECT_THAT(resolve_error("onednn.conv1d{groups=0}"),
              HasSubstr("`groups` values must be >= 1, got 0"));
  EXPECT_THAT(resolve_error("onednn.conv1d{strides=x}"), HasSubstr("`x` is not an integer"));
  EXPECT_THAT(resolve_error("onednn.conv1d{strides=1;strides=1}"),
              HasSubstr("`strides` is given twice"));
  EXPECT_THAT(resolve_error("onednn.conv1d{strides=1"), HasSubstr("without a closing"));
  EXPECT_THAT(resolve_error("onednn.matmul{groups=1}"),
              HasSubstr("attributes are for the convolutions only"));
  EXPECT_THAT(resolve_error("onednn.linear:pack"), HasSubstr("unexpected `:pack`"));
  EXPECT_THAT(resolve_error("onednn.linear:packed+relu"), HasSubstr("unexpected `:packed+relu`"));
}

TEST(OnednnTest, ModuleCreateNamesTheCallOfAMalformedName) {
  SKIP_WITHOUT_ONEDNN();
  VMFunction fn;
  fn.name = "main";
  fn.num_registers = 1;
  fn.code = {testing::op(Opcode::kAllocTensor, 0, 0, {testing::imm(1)}, DataType::float32()),
             testing::op(Opcode::kCallLibrary, -1, 0, {testing::reg(0)}),
             testing::op(Opcode::kRet, -1, 0, {testing::reg(0)})};
  Executable exec;
  exec.functions = {fn};
  exec.library_functions = {"onednn.linear+gelu+bias"};
  absl::StatusOr<Module> m = Module::create(exec, nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      m.status().message(),
      "Module::create: function main calls library function onednn.linear+gelu+bias: library "
      "function name onednn.linear+gelu+bias: unknown post-op `gelu` (expected one of bias, relu, "
      "gelu_erf, gelu_tanh, silu, sigmoid, tanh, add)");
}

TEST(OnednnTest, AModuleCallsTheFamilyWithoutRegistration) {
  SKIP_WITHOUT_ONEDNN();
  // main(a: (2, 3), b: (3, 2)) = onednn.matmul(a, b) into a new (2, 2).
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"a", "b"};
  fn.num_registers = 3;
  fn.code = {
      testing::op(Opcode::kAllocTensor, 2, 0, {testing::imm(2), testing::imm(2)},
                  DataType::float32()),
      testing::op(Opcode::kCallLibrary, -1, 0, {testing::reg(0), testing::reg(1), testing::reg(2)}),
      testing::op(Opcode::kRet, -1, 0, {testing::reg(2)})};
  Executable exec;
  exec.functions = {fn};
  exec.library_functions = {"onednn.matmul"};
  absl::StatusOr<Module> m = Module::create(exec, nullptr);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Value> v = (*m)["main"](testing::f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                         testing::f32({3, 2}, {1, 0, 0, 1, 1, 1}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(read(v->tensor_or_die()), (std::vector<float>{4, 5, 10, 11}));
}

TEST(OnednnTest, BadArgumentsAreErrorsNamingTheFunctionAndTheArgument) {
  SKIP_WITHOUT_ONEDNN();
  Tensor x = input({4, 8}, 1).tensor, w = input({6, 8}, 2).tensor, out = zeros({4, 6});
  EXPECT_EQ(call_error("onednn.linear+bias", tensors({x, w, out})),
            "onednn.linear+bias: expected 4 arguments (argument 0 (x), argument 1 (w), argument 2 "
            "(bias), argument 3 (out)) and an optional workspace, got 3");
  EXPECT_EQ(call_error("onednn.linear", {x, Value(int64_t{3}), out}),
            "onednn.linear: argument 1 (w): expected a tensor, got 3");
  // dtypes
  Tensor w_bf16 = input({6, 8}, 2, DataType::bfloat16()).tensor;
  EXPECT_EQ(call_error("onednn.linear", tensors({x, w_bf16, out})),
            "onednn.linear: argument 1 (w): expected float32 (the dtype of argument 0 (x)), got "
            "bfloat16");
  EXPECT_EQ(call_error("onednn.linear", tensors({x, w, zeros({4, 6}, DataType::float16())})),
            "onednn.linear: argument 2 (out): expected float32 or bfloat16, got float16");
  EXPECT_EQ(call_error("onednn.linear", tensors({x, w, zeros({4, 6}, DataType::bfloat16())})),
            "onednn.linear: argument 2 (out): expected float32 for float32 operands, got bfloat16");
  EXPECT_EQ(
      call_error("onednn.linear+add", tensors({x, w, zeros({4, 6}, DataType::bfloat16()), out})),
      "onednn.linear+add: argument 2 (residual 0): expected float32 (the output's dtype), got "
      "bfloat16");
  EXPECT_EQ(call_error("onednn.linear", tensors({zeros({4, 8}, DataType::int32()), w, out})),
            "onednn.linear: argument 0 (x): expected float32 or bfloat16, got int32");
  // shapes
  EXPECT_EQ(call_error("onednn.linear", tensors({x, zeros({6, 7}), out})),
            "onednn.linear: argument 1 (w): expected (N, 8) (K is the last dim of argument 0 (x) "
            "(4, 8)), "
            "got shape (6, 7)");
  EXPECT_EQ(call_error("onednn.linear", tensors({x, w, zeros({4, 5})})),
            "onednn.linear: argument 2 (out): expected shape (4, 6), got (4, 5)");
  EXPECT_EQ(call_error("onednn.linear+bias", tensors({x, w, zeros({5}), out})),
            "onednn.linear+bias: argument 2 (bias): expected shape (6), got (5)");
  EXPECT_THAT(
      call_error("onednn.matmul", tensors({zeros({2, 4, 8}), zeros({3, 8, 6}), zeros({2, 4, 6})})),
      HasSubstr("argument 1 (b): batch dims of shape (3, 8, 6) do not broadcast"));
  EXPECT_THAT(call_error("onednn.matmul", tensors({zeros({8}), zeros({8, 6}), zeros({6})})),
              HasSubstr("argument 0 (a): expected a tensor of rank >= 2, got shape (8)"));
  EXPECT_THAT(
      call_error("onednn.conv2d",
                 tensors({zeros({1, 4, 5, 5}), zeros({2, 3, 3, 3}), zeros({1, 2, 3, 3})})),
      HasSubstr(
          "argument 1 (weight): its dim 1 times groups (3 * 1) must equal the input channels 4"));
  // strides: a transposed view of a (8, 4) buffer
  std::vector<float> buffer(32, 1.0f);
  Tensor strided = Tensor::borrow(buffer.data(), {4, 8}, DataType::float32(), {1, 4});
  EXPECT_EQ(
      call_error("onednn.linear", tensors({strided, w, out})),
      "onednn.linear: argument 0 (x): expected a compact row-major tensor, got strides (1, 4) for "
      "shape (4, 8)");
  // workspace
  EXPECT_THAT(
      call_error("onednn.linear", tensors({x, w, out, zeros({4})})),
      HasSubstr(
          "onednn.linear: argument 3 (workspace): expected a compact host uint8 tensor of rank 1"));
  // onednn_workspace_bytes checks the same way.
  absl::StatusOr<int64_t> bytes =
      onednn_workspace_bytes("onednn.linear", {{4, 8}, {6, 7}, {4, 6}},
                             {DataType::float32(), DataType::float32(), DataType::float32()});
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(), HasSubstr("argument 1 (w)"));
  bytes = onednn_workspace_bytes("onednn.linear", {{4, 8}, {6, 8}},
                                 {DataType::float32(), DataType::float32()});
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(), HasSubstr("takes 3 tensors"));
}

// ---------------------------------------------------------------------------
// Threads.

TEST(OnednnTest, OneFunctionObjectFromSixThreadsAtOnce) {
  SKIP_WITHOUT_ONEDNN();
  LibraryFunction fn = resolve("onednn.linear+bias+gelu_tanh:packed");
  Input w = input({64, 96}, 7);
  std::vector<std::thread> threads;
  // Four sizes; the last two threads share the sizes (and so the primitives and their bound
  // memory objects) of the first two.
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      const int64_t m = int64_t{1} << (2 * (t % 4));  // 1, 4, 16, 64, 1, 4
      for (int i = 0; i < 20; ++i) {
        check_linear(fn, {m, 96}, 64, {"bias", "gelu_tanh"}, static_cast<uint32_t>(t * 100 + i),
                     DataType::float32(), DataType::float32(), &w.tensor);
      }
    });
  }
  for (std::thread& th : threads) th.join();
}

}  // namespace
}  // namespace relax::runtime
