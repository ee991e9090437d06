// The cuda target's library functions on a GPU (relax/runtime/cuda_library.h): each function
// against a plain C++ loop at several sizes, float32 and the 16-bit floats, with and without
// a workspace, with every epilogue; skipped without a device (RELAX_REQUIRE_CUDA_DEVICE).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "relax/runtime/cuda.h"
#include "relax/runtime/cuda_library.h"
#include "relax/runtime/module.h"
#include "relax/runtime/tensor.h"
#include "relax/support/half_float.h"

namespace relax::runtime {
namespace {

// Host values rounded to `dtype` (so the reference sees what the device sees).
std::vector<double> lib_dev_random(int64_t count, DataType dtype, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) {
    x = dist(gen);
    if (dtype == DataType::float16()) x = float16_value(float16_bits(x));
    if (dtype == DataType::bfloat16()) x = bfloat16_value(bfloat16_bits(x));
    if (dtype == DataType::float32()) x = static_cast<float>(x);
  }
  return v;
}

Tensor lib_dev_upload(const std::vector<int64_t>& shape, const std::vector<double>& values, DataType dtype) {
  // float32 takes float values; the 16-bit floats take doubles (rounded, exactly here).
  absl::StatusOr<Tensor> host = dtype == DataType::float32()
                                    ? Tensor::from_vector(shape, std::vector<float>(values.begin(), values.end()))
                                    : Tensor::from_vector(shape, values, dtype);
  EXPECT_TRUE(host.ok()) << host.status();
  absl::StatusOr<Tensor> device = host->to(Device::cuda());
  EXPECT_TRUE(device.ok()) << device.status();
  return *device;
}

Tensor lib_dev_empty(const std::vector<int64_t>& shape, DataType dtype) {
  absl::StatusOr<Tensor> t = Tensor::empty(shape, dtype, Device::cuda());
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

std::vector<double> lib_dev_download(const Tensor& t) {
  absl::StatusOr<Tensor> host = t.to(Device::cpu());
  EXPECT_TRUE(host.ok()) << host.status();
  std::vector<double> out(static_cast<size_t>(host->numel()));
  const auto* bytes = static_cast<const unsigned char*>(host->data());
  for (size_t i = 0; i < out.size(); ++i) {
    if (host->dtype() == DataType::float32()) {
      float f;
      std::memcpy(&f, bytes + 4 * i, 4);
      out[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      out[i] = host->dtype() == DataType::float16() ? float16_value(h) : bfloat16_value(h);
    }
  }
  return out;
}

double lib_dev_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// Runs `name` on `args` (plus a workspace of the declared size when `workspace`), waits.
void lib_dev_run(const std::string& name, std::vector<Value> args, bool workspace) {
  absl::StatusOr<LibraryFunction> fn = resolve_library_function(name);
  ASSERT_TRUE(fn.ok()) << fn.status();
  if (workspace) {
    absl::StatusOr<int64_t> bytes = cuda::library_workspace_bytes(name);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    args.push_back(lib_dev_empty({*bytes}, DataType{DataType::Code::kUInt, 8, 1}));
  }
  absl::Status s = (*fn)(args);
  ASSERT_TRUE(s.ok()) << name << ": " << s;
  ASSERT_TRUE(cuda::synchronize(0).ok());
}

void lib_dev_expect_close(const std::vector<double>& got, const std::vector<double>& want, DataType dtype, int64_t depth,
                          const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  // Inputs in [-1, 1]: a dot product of `depth` terms; float32 accumulation throughout, the
  // result rounded to the dtype once.
  const double ulp = dtype == DataType::float32() ? 1.2e-7 : dtype == DataType::float16() ? 9.8e-4 : 7.9e-3;
  const double tolerance = 4 * ulp * (1.0 + std::sqrt(static_cast<double>(depth))) + 1e-6 * depth;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const double err = std::abs(got[i] - want[i]);
    if (!(err <= tolerance * (1.0 + std::abs(want[i])))) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
}

struct LibDevMatmulCase {
  int64_t batch_a, batch_b, m, k, n;
};

// cublas.matmul / cublas.batch_matmul / cublas.linear with each epilogue against loops.
void lib_dev_check_matmul(const std::string& kind, const std::string& posts, DataType dtype, const LibDevMatmulCase& c,
                          bool workspace) {
  const bool linear = kind == "linear";
  const bool bias = posts.find("+bias") != std::string::npos;
  const bool relu = posts.find("+relu") != std::string::npos;
  const bool gelu = posts.find("+gelu_tanh") != std::string::npos;
  const int64_t batch = std::max(c.batch_a, c.batch_b);
  std::vector<int64_t> a_shape = {c.m, c.k}, b_shape = linear ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n};
  if (c.batch_a > 1) a_shape.insert(a_shape.begin(), c.batch_a);
  if (c.batch_b > 1) b_shape.insert(b_shape.begin(), c.batch_b);
  std::vector<int64_t> out_shape = {c.m, c.n};
  if (batch > 1) out_shape.insert(out_shape.begin(), batch);
  const std::vector<double> a = lib_dev_random(c.batch_a * c.m * c.k, dtype, 1);
  const std::vector<double> b = lib_dev_random(c.batch_b * c.k * c.n, dtype, 2);
  const std::vector<double> bias_values = lib_dev_random(c.n, dtype, 3);
  std::vector<double> want(static_cast<size_t>(batch * c.m * c.n));
  for (int64_t p = 0; p < batch; ++p) {
    const int64_t pa = c.batch_a > 1 ? p : 0, pb = c.batch_b > 1 ? p : 0;
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < c.k; ++q) {
          const double bv = linear ? b[static_cast<size_t>((pb * c.n + j) * c.k + q)]
                                    : b[static_cast<size_t>((pb * c.k + q) * c.n + j)];
          acc += a[static_cast<size_t>((pa * c.m + i) * c.k + q)] * bv;
        }
        if (bias) acc += bias_values[static_cast<size_t>(j)];
        if (relu) acc = std::max(acc, 0.0);
        if (gelu) acc = lib_dev_gelu_tanh(acc);
        want[static_cast<size_t>((p * c.m + i) * c.n + j)] = acc;
      }
    }
  }
  std::vector<Value> args = {lib_dev_upload(a_shape, a, dtype), lib_dev_upload(b_shape, b, dtype)};
  if (bias) args.push_back(lib_dev_upload({c.n}, bias_values, dtype));
  const Tensor out = lib_dev_empty(out_shape, dtype);
  args.push_back(out);
  const std::string name = "cublas." + kind + posts;
  lib_dev_run(name, args, workspace);
  lib_dev_expect_close(lib_dev_download(out), want, dtype, c.k,
                       name + " " + dtype.to_string() + " M=" + std::to_string(c.m) + " K=" + std::to_string(c.k) +
                           " N=" + std::to_string(c.n) + " batch " + std::to_string(c.batch_a) + "x" +
                           std::to_string(c.batch_b));
}

TEST(CudaLibraryDevice, CublasLtMatmulWithEpilogues) {
  RELAX_REQUIRE_CUDA_DEVICE();
  const LibDevMatmulCase sizes[] = {{1, 1, 1, 64, 64}, {1, 1, 17, 33, 65}, {1, 1, 128, 256, 96}, {1, 1, 300, 512, 257}};
  for (const LibDevMatmulCase& c : sizes) {
    for (const char* posts : {"", "+bias", "+relu", "+bias+relu", "+bias+gelu_tanh"}) {
      lib_dev_check_matmul("matmul", posts, DataType::float32(), c, /*workspace=*/true);
    }
    lib_dev_check_matmul("matmul", "+bias", DataType::float32(), c, /*workspace=*/false);
    lib_dev_check_matmul("linear", "+bias+relu", DataType::float32(), c, /*workspace=*/true);
    lib_dev_check_matmul("linear", "", DataType::float16(), c, /*workspace=*/true);
    lib_dev_check_matmul("matmul", "+bias+gelu_tanh", DataType::bfloat16(), c, /*workspace=*/true);
  }
}

TEST(CudaLibraryDevice, CublasBatches) {
  RELAX_REQUIRE_CUDA_DEVICE();
  // a's batches stacked into rows; a broadcast over b's batches; equal batches with a bias.
  lib_dev_check_matmul("matmul", "", DataType::float32(), {3, 1, 17, 40, 24}, true);
  lib_dev_check_matmul("matmul", "+bias", DataType::float32(), {1, 4, 17, 40, 24}, true);
  lib_dev_check_matmul("matmul", "+bias+relu", DataType::float16(), {5, 5, 33, 64, 48}, true);
  for (const LibDevMatmulCase& c : {LibDevMatmulCase{2, 2, 8, 16, 8}, LibDevMatmulCase{8, 8, 64, 64, 64},
                                    LibDevMatmulCase{12, 12, 100, 80, 36}}) {
    lib_dev_check_matmul("batch_matmul", "", DataType::float32(), c, true);
    lib_dev_check_matmul("batch_matmul", "", DataType::bfloat16(), c, false);
  }
}

struct LibDevConvCase {
  int64_t n, c, h, w, o, kh, kw, stride, pad, dilation, groups;
};

void lib_dev_check_conv(const LibDevConvCase& p, const std::string& posts, DataType dtype) {
  const bool bias = posts.find("+bias") != std::string::npos;
  const bool relu = posts.find("+relu") != std::string::npos;
  const int64_t oh = (p.h + 2 * p.pad - p.dilation * (p.kh - 1) - 1) / p.stride + 1;
  const int64_t ow = (p.w + 2 * p.pad - p.dilation * (p.kw - 1) - 1) / p.stride + 1;
  const int64_t cg = p.c / p.groups, og = p.o / p.groups;
  const std::vector<double> x = lib_dev_random(p.n * p.c * p.h * p.w, dtype, 4);
  const std::vector<double> w = lib_dev_random(p.o * cg * p.kh * p.kw, dtype, 5);
  const std::vector<double> b = lib_dev_random(p.o, dtype, 6);
  std::vector<double> want(static_cast<size_t>(p.n * p.o * oh * ow));
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t o = 0; o < p.o; ++o) {
      const int64_t g = o / og;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t z = 0; z < ow; ++z) {
          double acc = bias ? b[static_cast<size_t>(o)] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            for (int64_t ky = 0; ky < p.kh; ++ky) {
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                const int64_t iy = y * p.stride - p.pad + ky * p.dilation, ix = z * p.stride - p.pad + kx * p.dilation;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                acc += x[static_cast<size_t>(((n * p.c + g * cg + ci) * p.h + iy) * p.w + ix)] *
                       w[static_cast<size_t>(((o * cg + ci) * p.kh + ky) * p.kw + kx)];
              }
            }
          }
          if (relu) acc = std::max(acc, 0.0);
          want[static_cast<size_t>(((n * p.o + o) * oh + y) * ow + z)] = acc;
        }
      }
    }
  }
  const std::string s = std::to_string(p.stride), d = std::to_string(p.dilation), q = std::to_string(p.pad);
  const std::string name = "cudnn.conv2d{strides=" + s + "," + s + ";padding=" + q + "," + q + "," + q + "," + q +
                           ";dilation=" + d + "," + d + ";groups=" + std::to_string(p.groups) + "}" + posts;
  std::vector<Value> args = {lib_dev_upload({p.n, p.c, p.h, p.w}, x, dtype), lib_dev_upload({p.o, cg, p.kh, p.kw}, w, dtype)};
  if (bias) args.push_back(lib_dev_upload({p.o}, b, dtype));
  const Tensor out = lib_dev_empty({p.n, p.o, oh, ow}, dtype);
  args.push_back(out);
  lib_dev_run(name, args, /*workspace=*/true);
  lib_dev_expect_close(lib_dev_download(out), want, dtype, cg * p.kh * p.kw, name + " " + dtype.to_string());
}

TEST(CudaLibraryDevice, CudnnConv2d) {
  RELAX_REQUIRE_CUDA_DEVICE();
  const LibDevConvCase cases[] = {
      {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1},      {2, 16, 32, 32, 32, 3, 3, 2, 1, 1, 1},
      {1, 8, 17, 13, 8, 3, 3, 1, 2, 2, 2},    {2, 32, 14, 14, 32, 3, 3, 1, 1, 1, 32},
      {4, 64, 28, 28, 128, 1, 1, 1, 0, 1, 1},
  };
  for (const LibDevConvCase& c : cases) {
    for (const char* posts : {"", "+bias", "+bias+relu", "+relu"}) lib_dev_check_conv(c, posts, DataType::float32());
    lib_dev_check_conv(c, "+bias+relu", DataType::float16());
  }
}

}  // namespace
}  // namespace relax::runtime
