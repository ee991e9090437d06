// Library-call names (relax/runtime/library_call.h): the runtime writes each family's spec
// with to_name and reads it back with its parser, for every kind, post and window, and the
// shared conv-window grammar refuses what it does not take, naming the name.
#include "relax/runtime/library_call.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "relax/runtime/cuda_library_call.h"
#include "relax/runtime/onednn_call.h"

namespace relax::runtime {
namespace library_call_test {
namespace {

using ::testing::HasSubstr;

TEST(LibraryCallNames, OnednnSpecsReadBackAsWritten) {
  using onednn::OpKind;
  using onednn::PostKind;
  const std::vector<std::vector<PostKind>> chains = {
      {}, {PostKind::kBias}, {PostKind::kBias, PostKind::kGeluErf}, {PostKind::kSilu, PostKind::kAdd},
      {PostKind::kBias, PostKind::kRelu, PostKind::kAdd, PostKind::kAdd}, {PostKind::kGeluTanh},
      {PostKind::kSigmoid}, {PostKind::kTanh}};
  int names = 0;
  for (OpKind kind : {OpKind::kMatmul, OpKind::kLinear, OpKind::kConv1d, OpKind::kConv2d}) {
    for (const std::vector<PostKind>& chain : chains) {
      for (bool packed : {false, true}) {
        onednn::OpSpec spec;
        spec.kind = kind;
        spec.packed = packed;
        if (spec.is_conv()) {
          spec.conv = ConvWindow::identity(static_cast<size_t>(spec.spatial_dims()));
          spec.conv.strides.back() = 2;
          spec.conv.padding_after.front() = 1;
          spec.conv.groups = 4;
        }
        for (PostKind post : chain) spec.then(post);
        const std::string name = onednn::to_name(spec);
        absl::StatusOr<onednn::OpSpec> back = onednn::parse_name(name);
        ASSERT_TRUE(back.ok()) << name << ": " << back.status();
        EXPECT_EQ(back->name, name);
        EXPECT_EQ(back->kind, spec.kind) << name;
        EXPECT_EQ(back->bias, spec.bias) << name;
        EXPECT_EQ(back->posts, spec.posts) << name;
        EXPECT_EQ(back->num_adds, spec.num_adds) << name;
        EXPECT_EQ(back->packed, spec.packed) << name;
        if (spec.is_conv()) {
          EXPECT_EQ(back->conv, spec.conv) << name;
        }
        ++names;
      }
    }
  }
  EXPECT_EQ(names, 64);
  onednn::OpSpec linear;
  linear.kind = OpKind::kLinear;
  linear.packed = true;
  linear.then(PostKind::kBias).then(PostKind::kGeluErf);
  EXPECT_EQ(onednn::to_name(linear), "onednn.linear+bias+gelu_erf:packed");
  EXPECT_EQ(onednn::post_from_name("silu"), PostKind::kSilu);
  EXPECT_EQ(onednn::post_from_name("gelu"), std::nullopt);
}

TEST(LibraryCallNames, CudaSpecsReadBackAsWritten) {
  using cuda::Activation;
  using cuda::LibraryKind;
  int names = 0;
  for (LibraryKind kind : {LibraryKind::kMatmul, LibraryKind::kLinear, LibraryKind::kConv2d}) {
    for (bool bias : {false, true}) {
      for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kGeluTanh}) {
        if (kind == LibraryKind::kConv2d && act == Activation::kGeluTanh) continue;
        cuda::LibrarySpec spec;
        spec.kind = kind;
        spec.bias = bias;
        spec.activation = act;
        spec.conv.padding_before = {1, 2};
        spec.conv.padding_after = {1, 2};
        spec.conv.dilation = {2, 1};
        const std::string name = cuda::to_name(spec);
        absl::StatusOr<cuda::LibrarySpec> back = cuda::parse_library_name(name);
        ASSERT_TRUE(back.ok()) << name << ": " << back.status();
        EXPECT_EQ(back->kind, kind) << name;
        EXPECT_EQ(back->bias, bias) << name;
        EXPECT_EQ(back->activation, act) << name;
        if (spec.is_cudnn()) {
          EXPECT_EQ(back->conv, spec.conv) << name;
        }
        ++names;
      }
    }
  }
  EXPECT_EQ(names, 16);
  cuda::LibrarySpec batched;
  batched.kind = LibraryKind::kBatchMatmul;
  EXPECT_EQ(cuda::to_name(batched), "cublas.batch_matmul");
  EXPECT_TRUE(cuda::parse_library_name(cuda::to_name(batched)).ok());
}

TEST(LibraryCallNames, ConvWindowsAreOneGrammarForEveryFamily) {
  ConvWindow w = ConvWindow::identity(2);
  EXPECT_EQ(conv_window_text(w), "{strides=1,1;padding=0,0,0,0;dilation=1,1;groups=1}");
  ASSERT_TRUE(parse_conv_window("x", "conv2d", "groups=2;padding=1,2,3,4", w).ok());
  EXPECT_EQ(w.groups, 2);
  EXPECT_EQ(w.padding_before, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(w.padding_after, (std::vector<int64_t>{3, 4}));
  struct Bad {
    const char* text;
    const char* says;
  };
  for (const Bad& bad : {Bad{"strides=1", "takes 2 values, got 1"}, Bad{"strides=0,1", "must be >= 1, got 0"},
                         Bad{"padding=-1,0,0,0", "must be >= 0, got -1"}, Bad{"groups=1;groups=2", "given twice"},
                         Bad{"stride=1,1", "unknown attribute `stride`"}, Bad{"dilation=a,1", "`a` is not an integer"},
                         Bad{"groups", "is not key=values"}}) {
    ConvWindow v = ConvWindow::identity(2);
    absl::Status s = parse_conv_window("cudnn.conv2d{...}", "conv2d", bad.text, v);
    EXPECT_FALSE(s.ok()) << bad.text;
    EXPECT_THAT(std::string(s.message()), HasSubstr("library function name cudnn.conv2d{...}")) << bad.text;
    EXPECT_THAT(std::string(s.message()), HasSubstr(bad.says)) << bad.text;
  }
  // The families read their windows through it.
  EXPECT_THAT(std::string(onednn::parse_name("onednn.conv1d{strides=1,1}").status().message()),
              HasSubstr("attribute `strides` of conv1d takes 1 values, got 2"));
  EXPECT_THAT(std::string(cuda::parse_library_name("cudnn.conv2d{groups=0}").status().message()),
              HasSubstr("attribute `groups` values must be >= 1, got 0"));
}

}  // namespace
}  // namespace library_call_test
}  // namespace relax::runtime
