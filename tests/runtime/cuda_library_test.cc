// The cuda target's library functions without a device (relax/runtime/cuda_library.h): the
// names parse (library_workspace_bytes) and resolve in the registry, and a call checks its
// arguments before it touches the device -- a host tensor, a dtype, a shape or a device that
// does not fit is an InvalidArgument naming the function and the argument; with arguments
// that fit, a machine without the CUDA driver fails the call with a FailedPrecondition naming
// the driver. Device tensors here are borrowed views of fake addresses that no check reads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "relax/runtime/cuda.h"
#include "relax/runtime/cuda_library.h"
#include "relax/runtime/module.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"

namespace relax::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A view of a fake address on `device`: the argument checks read shapes, never data.
Tensor cuda_lib_fake(std::vector<int64_t> shape, DataType dtype = DataType::float32(),
                     Device device = Device::cuda()) {
  alignas(256) static unsigned char anchor[256];
  return Tensor::borrow(anchor, std::move(shape), dtype, {}, device);
}

LibraryFunction cuda_lib_resolve(const std::string& name) {
  absl::StatusOr<LibraryFunction> fn = resolve_library_function(name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  return fn.ok() ? *fn : LibraryFunction();
}

#define CUDA_LIB_REQUIRE_BUILT_WITH_CUDA()                                      \
  do {                                                                          \
    if (!cuda::built_with_cuda()) GTEST_SKIP() << "the runtime is built without CUDA"; \
  } while (0)

TEST(CudaLibraryNames, EveryKindAndPostParses) {
  for (const char* name : {"cublas.matmul", "cublas.matmul+bias", "cublas.matmul+relu", "cublas.matmul+bias+gelu_tanh",
                           "cublas.linear+bias+relu", "cublas.batch_matmul", "cudnn.conv2d",
                           "cudnn.conv2d{strides=2,2;padding=1,1,1,1;dilation=1,1;groups=1}+bias+relu",
                           "cudnn.conv2d{groups=4}+relu"}) {
    absl::StatusOr<int64_t> bytes = cuda::library_workspace_bytes(name);
    ASSERT_TRUE(bytes.ok()) << name << ": " << bytes.status();
    EXPECT_EQ(*bytes, int64_t{32} << 20) << name;
  }
}

TEST(CudaLibraryNames, MalformedNamesSayWhatIsWrong) {
  struct Case {
    const char* name;
    const char* message;
  };
  const Case cases[] = {
      {"cublas.gemm", "unknown function `cublas.gemm` (expected cublas.matmul, cublas.linear"},
      {"cublas.matmul+bias+bias", "`bias` may only be the first post-op"},
      {"cublas.matmul+relu+bias", "`bias` may only be the first post-op"},
      {"cublas.matmul+relu+gelu_tanh", "at most one activation"},
      {"cublas.matmul+silu", "unknown post-op `silu` (expected bias, relu or gelu_tanh)"},
      {"cudnn.conv2d+gelu_tanh", "unknown post-op `gelu_tanh` (expected bias, relu)"},
      {"cublas.batch_matmul+bias", "cublas.batch_matmul takes no post-ops, got `bias`"},
      {"cublas.matmul{groups=2}", "attributes are for cudnn.conv2d only, not cublas.matmul"},
      {"cudnn.conv2d{strides=2}", "attribute `strides` of conv2d takes 2 values, got 1"},
      {"cudnn.conv2d{padding=1,1,-1,1}", "attribute `padding` values must be >= 0, got -1"},
      {"cudnn.conv2d{groups=0}", "attribute `groups` values must be >= 1, got 0"},
      {"cudnn.conv2d{stride=1,1}", "unknown attribute `stride`"},
      {"cudnn.conv2d{groups=1;groups=1}", "attribute `groups` is given twice"},
      {"cudnn.conv2d{groups=1", "`{` without a closing `}`"},
      {"cudnn.conv2d{groups=x}", "attribute `groups`: `x` is not an integer"},
      {"cublas.matmul:packed", "unexpected `:packed` (expected `+post`)"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<int64_t> bytes = cuda::library_workspace_bytes(c.name);
    ASSERT_FALSE(bytes.ok()) << c.name;
    EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(bytes.status().message(), AllOf(HasSubstr(std::string("library function name ") + c.name),
                                                HasSubstr(c.message)));
  }
}

// With CUDA, the registry resolves the families; a malformed name is the parser's error.
TEST(CudaLibraryRegistry, FamiliesResolve) {
  CUDA_LIB_REQUIRE_BUILT_WITH_CUDA();
  for (const char* name : {"cublas.matmul+bias+relu", "cublas.linear", "cublas.batch_matmul",
                           "cudnn.conv2d{strides=1,1;padding=0,0,0,0;dilation=1,1;groups=1}+bias"}) {
    absl::StatusOr<LibraryFunction> fn = resolve_library_function(name);
    EXPECT_TRUE(fn.ok()) << name << ": " << fn.status();
  }
  absl::StatusOr<LibraryFunction> bad = resolve_library_function("cublas.matmul+tanh");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown post-op `tanh`"));
}

// Every entry point of the X-macro tables resolves in the toolkit's libraries: where they can
// be loaded at all (a machine without the toolkit's libraries says which one is missing).
TEST(CudaLibraryRegistry, LibraryTablesResolve) {
  CUDA_LIB_REQUIRE_BUILT_WITH_CUDA();
  absl::Status s = cuda::load_libraries();
  if (s.ok()) return;
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("cannot be loaded")) << "an entry point is missing: " << s;
}

// Runs `name` on `args` and returns its error (a success is a test failure).
absl::Status cuda_lib_call(const std::string& name, const std::vector<Value>& args) {
  LibraryFunction fn = cuda_lib_resolve(name);
  if (!fn) return absl::UnknownError("not resolved");
  absl::Status s = fn(args);
  EXPECT_FALSE(s.ok()) << name << " succeeded without a device";
  return s;
}

void cuda_lib_expect_argument_error(const std::string& name, const std::vector<Value>& args,
                                    const std::vector<std::string>& parts) {
  absl::Status s = cuda_lib_call(name, args);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  for (const std::string& part : parts) EXPECT_THAT(s.message(), HasSubstr(part)) << name;
}

TEST(CudaLibraryCalls, HostTensorIsNamedWithItsDevice) {
  CUDA_LIB_REQUIRE_BUILT_WITH_CUDA();
  absl::StatusOr<Tensor> host = Tensor::empty({64, 32}, DataType::float32());
  ASSERT_TRUE(host.ok());
  cuda_lib_expect_argument_error("cublas.matmul", {*host, cuda_lib_fake({32, 16}), cuda_lib_fake({64, 16})},
                                 {"cublas.matmul: argument 0 (a): expected a tensor on a CUDA device, got one on cpu"});
  cuda_lib_expect_argument_error("cublas.linear+bias",
                                 {cuda_lib_fake({64, 32}), cuda_lib_fake({16, 32}), *host, cuda_lib_fake({64, 16})},
                                 {"cublas.linear+bias: argument 2 (bias): expected a tensor on a CUDA device",
                                  "got one on cpu"});
  cuda_lib_expect_argument_error(
      "cudnn.conv2d", {cuda_lib_fake({1, 4, 8, 8}), cuda_lib_fake({4, 4, 3, 3}), cuda_lib_fake({1, 4, 6, 6}, DataType::float32(), Device::cpu())},
      {"argument 2 (output): expected a tensor on a CUDA device, got one on cpu"});
}

TEST(CudaLibraryCalls, ArgumentsAreChecked) {
  CUDA_LIB_REQUIRE_BUILT_WITH_CUDA();
  const DataType f32 = DataType::float32(), f16 = DataType::float16();
  // Count.
  cuda_lib_expect_argument_error("cublas.matmul+bias", {cuda_lib_fake({4, 4}), cuda_lib_fake({4, 4})},
                                 {"expected 4 arguments (argument 0 (a), argument 1 (b), argument 2 (bias), "
                                  "argument 3 (output)) and an optional workspace, got 2"});
  // Dtypes: not one the library takes, and operands that differ.
  cuda_lib_expect_argument_error(
      "cublas.matmul", {cuda_lib_fake({4, 4}, DataType::int32()), cuda_lib_fake({4, 4}), cuda_lib_fake({4, 4})},
      {"argument 0 (a): expected float32, float16, bfloat16, got int32"});
  cuda_lib_expect_argument_error("cublas.matmul", {cuda_lib_fake({4, 4}, f16), cuda_lib_fake({4, 4}), cuda_lib_fake({4, 4}, f16)},
                                 {"argument 1 (b): expected float16 (the dtype of argument 0 (a)), got float32"});
  cuda_lib_expect_argument_error(
      "cudnn.conv2d", {cuda_lib_fake({1, 4, 8, 8}, DataType::bfloat16()), cuda_lib_fake({4, 4, 3, 3}, DataType::bfloat16()),
                       cuda_lib_fake({1, 4, 6, 6}, DataType::bfloat16())},
      {"argument 0 (data): expected float32, float16, got bfloat16"});
  // Devices.
  cuda_lib_expect_argument_error("cublas.matmul",
                                 {cuda_lib_fake({4, 4}), cuda_lib_fake({4, 4}, f32, Device::cuda(1)), cuda_lib_fake({4, 4})},
                                 {"argument 1 (b): expected a tensor on cuda:0 (the device of argument 0 (a)), got one on cuda:1"});
  // Shapes.
  cuda_lib_expect_argument_error("cublas.matmul", {cuda_lib_fake({8, 32}), cuda_lib_fake({16, 4}), cuda_lib_fake({8, 4})},
                                 {"argument 1 (b): expected [..., 32, N] (K of [8, 32]), got [16, 4]"});
  cuda_lib_expect_argument_error("cublas.matmul", {cuda_lib_fake({8, 32}), cuda_lib_fake({32, 4}), cuda_lib_fake({8, 5})},
                                 {"argument 2 (output): expected [8, 4], got [8, 5]"});
  cuda_lib_expect_argument_error("cublas.linear", {cuda_lib_fake({2, 8, 32}), cuda_lib_fake({4, 31}), cuda_lib_fake({2, 8, 4})},
                                 {"argument 1 (weight): expected [N, 32] (K of [2, 8, 32]), got [4, 31]"});
  cuda_lib_expect_argument_error(
      "cublas.linear+bias",
      {cuda_lib_fake({8, 32}), cuda_lib_fake({4, 32}), cuda_lib_fake({5}), cuda_lib_fake({8, 4})},
      {"argument 2 (bias): expected [4], got [5]"});
  cuda_lib_expect_argument_error("cublas.batch_matmul",
                                 {cuda_lib_fake({3, 8, 32}), cuda_lib_fake({2, 32, 4}), cuda_lib_fake({3, 8, 4})},
                                 {"argument 1 (b): expected the batch dims of [3, 8, 32], got [2, 32, 4]"});
  cuda_lib_expect_argument_error("cublas.matmul",
                                 {cuda_lib_fake({3, 8, 32}), cuda_lib_fake({2, 32, 4}), cuda_lib_fake({3, 8, 4})},
                                 {"argument 1 (b): batch dims of [2, 32, 4] do not broadcast with those of [3, 8, 32]"});
  cuda_lib_expect_argument_error(
      "cudnn.conv2d{strides=2,2;padding=1,1,1,1;dilation=1,1;groups=1}",
      {cuda_lib_fake({1, 4, 8, 8}), cuda_lib_fake({6, 4, 3, 3}), cuda_lib_fake({1, 6, 8, 8})},
      {"argument 2 (output): expected [1, 6, 4, 4], got [1, 6, 8, 8]"});
  cuda_lib_expect_argument_error("cudnn.conv2d{groups=2}",
                                 {cuda_lib_fake({1, 4, 8, 8}), cuda_lib_fake({6, 4, 3, 3}), cuda_lib_fake({1, 6, 6, 6})},
                                 {"argument 1 (weight): expected [O, 2, kh, kw] with O a multiple of groups=2"});
  // The workspace.
  cuda_lib_expect_argument_error(
      "cublas.matmul", {cuda_lib_fake({8, 32}), cuda_lib_fake({32, 4}), cuda_lib_fake({8, 4}), cuda_lib_fake({16})},
      {"argument 3 (workspace): expected a uint8 tensor of rank 1, got Tensor[", "float32, cuda:0]"});
}

// What a library cannot take is Unimplemented, before the device: padding that differs
// between the sides of a dim (cuDNN's legacy descriptor), extents beyond cuBLASLt's int32.
TEST(CudaLibraryCalls, WhatTheLibrariesCannotTakeIsRefusedByName) {
  CUDA_LIB_REQUIRE_BUILT_WITH_CUDA();
  absl::Status s = cuda_lib_call("cudnn.conv2d{padding=1,1,0,0}",
                                 {cuda_lib_fake({1, 4, 8, 8}), cuda_lib_fake({4, 4, 3, 3}), cuda_lib_fake({1, 4, 7, 7})});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("cuDNN pads both sides of a dim alike, got padding 1,1 before and 0,0 after"));
  const int64_t rows = int64_t{1} << 31;
  s = cuda_lib_call("cublas.matmul", {cuda_lib_fake({rows, 1}), cuda_lib_fake({1, 2}), cuda_lib_fake({rows, 2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("cublas.matmul: M=2147483648 N=2 K=1 batch=1 is beyond cuBLASLt's int32 extents"));
}

// Arguments that fit reach the device: without the driver, the call says which is missing.
TEST(CudaLibraryCalls, WithoutTheDriverTheCallNamesIt) {
  CUDA_LIB_REQUIRE_BUILT_WITH_CUDA();
  if (cuda::check_available().ok()) GTEST_SKIP() << "a CUDA device is present: this test needs a machine without one";
  const Tensor u8 = cuda_lib_fake({1024}, DataType{DataType::Code::kUInt, 8, 1});
  const std::vector<std::pair<std::string, std::vector<Value>>> calls = {
      {"cublas.matmul+bias+relu", {cuda_lib_fake({8, 32}), cuda_lib_fake({32, 4}), cuda_lib_fake({4}), cuda_lib_fake({8, 4}), u8}},
      {"cublas.linear", {cuda_lib_fake({2, 8, 32}), cuda_lib_fake({4, 32}), cuda_lib_fake({2, 8, 4})}},
      {"cublas.batch_matmul", {cuda_lib_fake({3, 8, 32}), cuda_lib_fake({3, 32, 4}), cuda_lib_fake({3, 8, 4})}},
      {"cudnn.conv2d{strides=1,1;padding=1,1,1,1;dilation=1,1;groups=1}+bias+relu",
       {cuda_lib_fake({1, 4, 8, 8}), cuda_lib_fake({6, 4, 3, 3}), cuda_lib_fake({6}), cuda_lib_fake({1, 6, 8, 8}), u8}},
  };
  for (const auto& [name, args] : calls) {
    absl::Status s = cuda_lib_call(name, args);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << name << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("libcuda.so.1")) << name;
  }
}

}  // namespace
}  // namespace relax::runtime
