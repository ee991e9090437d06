// dispatch-library on the cuda target's libraries (cuda_rules.cc): before/after text for
// what becomes a cuBLASLt, cuBLAS or cuDNN call, what stays generated code and why, the
// libraries that select the rules, and the declared workspaces.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/runtime/cuda_library.h"
#include "relax/transform/dispatch_library.h"
#include "relax/transform/opt.h"
#include "relax/transform/pipeline.h"
#include "relax/support/target.h"

namespace relax::transform {
namespace {

// Runs dispatch-library as relax-opt would, with `options` ("dispatch-library.<o>=<v>").
absl::StatusOr<IRModule> cuda_dispatch_run(std::string_view before, std::vector<std::string> options) {
  absl::StatusOr<IRModule> input = read_module(before, "before");
  if (!input.ok()) return input.status();
  OptOptions opt;
  opt.passes = "dispatch-library";
  opt.pass_options = std::move(options);
  opt.verify_each = true;
  std::ostringstream log;
  return run_opt(*input, opt, log);
}

// Checks that dispatch-library with libraries cublas,cudnn (and `extra` options) turns
// `before` into `after`.
void cuda_dispatch_expect(std::string_view before, std::string_view after, std::vector<std::string> extra = {}) {
  std::vector<std::string> options = {"dispatch-library.libraries=cublas,cudnn"};
  options.insert(options.end(), extra.begin(), extra.end());
  absl::StatusOr<IRModule> out = cuda_dispatch_run(before, options);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<IRModule> expected = read_module(after, "expected");
  ASSERT_TRUE(expected.ok()) << expected.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*out, *expected);
}

TEST(DispatchCuda, RulesAreBuiltInWithTheirLibraries) {
  std::vector<std::string> cuda;
  for (const DispatchRule& r : builtin_dispatch_rules()) {
    if (r.library == "cublas" || r.library == "cudnn") cuda.push_back(r.library + ":" + r.name);
  }
  EXPECT_EQ(cuda, (std::vector<std::string>{"cublas:cublas.linear", "cublas:cublas.matmul", "cudnn:cudnn.conv2d"}));
}

// The workspace every call declares is what the runtime says its function uses.
TEST(DispatchCuda, WorkspaceIsTheRuntimes) {
  absl::StatusOr<int64_t> bytes = runtime::cuda::library_workspace_bytes("cublas.linear+bias+relu");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 32 << 20);
}

// linear + bias + relu (float16): one cuBLASLt call with the RELU_BIAS epilogue and a
// workspace of 32 MiB. The bias of linear's own third operand fuses the same way.
TEST(DispatchCuda, LinearBiasReluIsOneCublasLtCall) {
  cuda_dispatch_expect(R"(module {
  func @main(x: Tensor[(n, 256), float16], w: Tensor[(512, 256), float16], b: Tensor[(512,), float16]) -> Tuple[(Tensor[(n, 512), float16], Tensor[(n, 512), float16])] {
    dataflow {
      y = linear(x, w)
      z = add(y, b)
      r = relu(z)
      s = linear(x, w, b)
      output gv = (r, s)
    }
    return gv
  }
})",
                       R"(module {
  func @main(x: Tensor[(n, 256), float16], w: Tensor[(512, 256), float16], b: Tensor[(512,), float16]) -> Tuple[(Tensor[(n, 512), float16], Tensor[(n, 512), float16])] {
    dataflow {
      r: Tensor[(n, 512), float16] = call_dps_library(extern_func("cublas.linear+bias+relu"), (x, w, b), prim(33554432), sinfo=Tensor[(n, 512), float16])
      s: Tensor[(n, 512), float16] = call_dps_library(extern_func("cublas.linear+bias"), (x, w, b), prim(33554432), sinfo=Tensor[(n, 512), float16])
      output gv = (r, s)
    }
    return gv
  }
})");
}

// cuBLASLt's GELU epilogue is the tanh approximation: gelu(approximate="tanh") fuses (with
// the bias on either side of the add); the erf gelu stays a generated kernel after a
// matmul+bias call.
TEST(DispatchCuda, OnlyTheTanhGeluFuses) {
  cuda_dispatch_expect(R"(module {
  func @main(a: Tensor[(64, 256), float32], w: Tensor[(256, 128), float32], b: Tensor[(128,), float32]) -> Tuple[(Tensor[(64, 128), float32], Tensor[(64, 128), float32])] {
    dataflow {
      p = matmul(a, w)
      q = add(b, p)
      g = gelu(q, approximate="tanh")
      s = matmul(a, w)
      t = add(s, b)
      e = gelu(t)
      output gv = (g, e)
    }
    return gv
  }
})",
                       R"(module {
  func @main(a: Tensor[(64, 256), float32], w: Tensor[(256, 128), float32], b: Tensor[(128,), float32]) -> Tuple[(Tensor[(64, 128), float32], Tensor[(64, 128), float32])] {
    dataflow {
      g: Tensor[(64, 128), float32] = call_dps_library(extern_func("cublas.matmul+bias+gelu_tanh"), (a, w, b), sinfo=Tensor[(64, 128), float32])
      t: Tensor[(64, 128), float32] = call_dps_library(extern_func("cublas.matmul+bias"), (a, w, b), sinfo=Tensor[(64, 128), float32])
      e = gelu(t)
      output gv = (g, e)
    }
    return gv
  }
})",
                       {"dispatch-library.workspaces=false"});
}

// Batch dims: equal on both sides -> cuBLAS's strided batched GEMM (plain) or cuBLASLt
// batched (with a bias); a of rank 2 broadcast over b's batch -> cuBLASLt with a batch
// stride of 0; b of rank 2 -> one 2-D GEMM over a's rows. A broadcast on both sides
// (a [2, 1, ...] with b [1, 3, ...]) needs two batch strides per operand and stays.
TEST(DispatchCuda, BatchDimsPickTheCall) {
  cuda_dispatch_expect(R"(module {
  func @main(q: Tensor[(8, 64, 64), bfloat16], k: Tensor[(8, 64, 64), bfloat16], b: Tensor[(64,), bfloat16], a2: Tensor[(64, 64), bfloat16], l: Tensor[(2, 1, 64, 64), bfloat16], r: Tensor[(1, 3, 64, 64), bfloat16]) -> Tuple[(Tensor[(8, 64, 64), bfloat16], Tensor[(8, 64, 64), bfloat16], Tensor[(8, 64, 64), bfloat16], Tensor[(8, 64, 64), bfloat16], Tensor[(2, 3, 64, 64), bfloat16])] {
    dataflow {
      s = matmul(q, k)
      t = matmul(q, k)
      u = add(t, b)
      v = matmul(a2, k)
      w = matmul(q, a2)
      x = matmul(l, r)
      output gv = (s, u, v, w, x)
    }
    return gv
  }
})",
                       R"(module {
  func @main(q: Tensor[(8, 64, 64), bfloat16], k: Tensor[(8, 64, 64), bfloat16], b: Tensor[(64,), bfloat16], a2: Tensor[(64, 64), bfloat16], l: Tensor[(2, 1, 64, 64), bfloat16], r: Tensor[(1, 3, 64, 64), bfloat16]) -> Tuple[(Tensor[(8, 64, 64), bfloat16], Tensor[(8, 64, 64), bfloat16], Tensor[(8, 64, 64), bfloat16], Tensor[(8, 64, 64), bfloat16], Tensor[(2, 3, 64, 64), bfloat16])] {
    dataflow {
      s: Tensor[(8, 64, 64), bfloat16] = call_dps_library(extern_func("cublas.batch_matmul"), (q, k), sinfo=Tensor[(8, 64, 64), bfloat16])
      u: Tensor[(8, 64, 64), bfloat16] = call_dps_library(extern_func("cublas.matmul+bias"), (q, k, b), sinfo=Tensor[(8, 64, 64), bfloat16])
      v: Tensor[(8, 64, 64), bfloat16] = call_dps_library(extern_func("cublas.matmul"), (a2, k), sinfo=Tensor[(8, 64, 64), bfloat16])
      w: Tensor[(8, 64, 64), bfloat16] = call_dps_library(extern_func("cublas.matmul"), (q, a2), sinfo=Tensor[(8, 64, 64), bfloat16])
      x = matmul(l, r)
      output gv = (s, u, v, w, x)
    }
    return gv
  }
})",
                       {"dispatch-library.workspaces=false"});
}

// conv2d (float16) + a channel bias reshaped from [O] + relu: one cuDNN call whose name
// holds the window in full and which takes the 1-D bias.
TEST(DispatchCuda, Conv2dBiasReluIsOneCudnnCall) {
  cuda_dispatch_expect(R"(module {
  func @main(x: Tensor[(2, 16, 32, 32), float16], w: Tensor[(32, 16, 3, 3), float16], b: Tensor[(32,), float16]) -> Tensor[(2, 32, 16, 16), float16] {
    dataflow {
      y = conv2d(x, w, strides=[2], padding=[1, 1])
      bb = reshape(b, shape(1, 32, 1, 1))
      z = add(y, bb)
      output gv = relu(z)
    }
    return gv
  }
})",
                       R"(module {
  func @main(x: Tensor[(2, 16, 32, 32), float16], w: Tensor[(32, 16, 3, 3), float16], b: Tensor[(32,), float16]) -> Tensor[(2, 32, 16, 16), float16] {
    dataflow {
      output gv: Tensor[(2, 32, 16, 16), float16] = call_dps_library(extern_func("cudnn.conv2d{strides=2,2;padding=1,1,1,1;dilation=1,1;groups=1}+bias+relu"), (x, w, b), prim(33554432), sinfo=Tensor[(2, 32, 16, 16), float16])
    }
    return gv
  }
})");
}

// conv2d with its own bias argument (1-D [O]) + relu: the same cuDNN call, the bias passed
// as it is.
TEST(DispatchCuda, Conv2dWithItsOwnBiasIsOneCudnnCall) {
  cuda_dispatch_expect(R"(module {
  func @main(x: Tensor[(2, 16, 32, 32), float16], w: Tensor[(32, 16, 3, 3), float16], b: Tensor[(32,), float16]) -> Tensor[(2, 32, 16, 16), float16] {
    dataflow {
      y = conv2d(x, w, b, strides=[2], padding=[1, 1])
      output gv = relu(y)
    }
    return gv
  }
})",
                       R"(module {
  func @main(x: Tensor[(2, 16, 32, 32), float16], w: Tensor[(32, 16, 3, 3), float16], b: Tensor[(32,), float16]) -> Tensor[(2, 32, 16, 16), float16] {
    dataflow {
      output gv: Tensor[(2, 32, 16, 16), float16] = call_dps_library(extern_func("cudnn.conv2d{strides=2,2;padding=1,1,1,1;dilation=1,1;groups=1}+bias+relu"), (x, w, b), prim(33554432), sinfo=Tensor[(2, 32, 16, 16), float16])
    }
    return gv
  }
})");
}

// What stays generated code, and why:
//   s  16 x 16 x 16 = 4,096 multiply-adds: above the pass's min-work (2,048) but provably
//      below the cuda rules' floor (65,536): launch-bound either way, and it fuses;
//   t  integer operands: no integer GEMM is dispatched;
//   u  a rank-1 operand;
//   y  a weight dequantised from int4 in the graph: the dequantisation fuses into the kernel;
//   c  conv2d in bfloat16 (the cuDNN function takes float32 and float16);
//   d  conv2d + sigmoid: the sigmoid is no cuDNN activation, so the call stops before it;
//   e  matmul with an unbounded dim: may be large, so it goes to cuBLASLt;
//   f  the same with n <= 8 declared: at most 8 * 64 * 64 = 32,768 multiply-adds, stays.
TEST(DispatchCuda, WhatStaysAndWhy) {
  cuda_dispatch_expect(R"(module {
  func @main(a: Tensor[(16, 16), float32], i: Tensor[(64, 64), int32], v: Tensor[(64,), float32], m: Tensor[(64, 64), float32], x: Tensor[(m_rows, 64), float32], p: Tensor[(32, 64), uint8], sc: Tensor[(2, 64), float32], cx: Tensor[(1, 16, 32, 32), bfloat16], cw: Tensor[(16, 16, 3, 3), bfloat16], hx: Tensor[(1, 16, 32, 32), float32], hw: Tensor[(16, 16, 3, 3), float32], small: Tensor[(n, 64), float32]) -> Tuple[(Tensor[(16, 16), float32], Tensor[(64, 64), int32], Tensor[(64,), float32], Tensor[(m_rows, 64), float32], Tensor[(1, 16, 30, 30), bfloat16], Tensor[(1, 16, 30, 30), float32], Tensor[(m_rows, 64), float32], Tensor[(n, 64), float32])] upper_bounds {n: 8} {
    dataflow {
      s = matmul(a, a)
      t = matmul(i, i)
      u = matmul(m, v)
      w = dequantize(p, sc, group_size=32, axis=0, bits=4)
      y = matmul(x, w)
      c = conv2d(cx, cw)
      h = conv2d(hx, hw)
      d = sigmoid(h)
      e = matmul(x, m)
      f = matmul(small, m)
      output gv = (s, t, u, y, c, d, e, f)
    }
    return gv
  }
})",
                       R"(module {
  func @main(a: Tensor[(16, 16), float32], i: Tensor[(64, 64), int32], v: Tensor[(64,), float32], m: Tensor[(64, 64), float32], x: Tensor[(m_rows, 64), float32], p: Tensor[(32, 64), uint8], sc: Tensor[(2, 64), float32], cx: Tensor[(1, 16, 32, 32), bfloat16], cw: Tensor[(16, 16, 3, 3), bfloat16], hx: Tensor[(1, 16, 32, 32), float32], hw: Tensor[(16, 16, 3, 3), float32], small: Tensor[(n, 64), float32]) -> Tuple[(Tensor[(16, 16), float32], Tensor[(64, 64), int32], Tensor[(64,), float32], Tensor[(m_rows, 64), float32], Tensor[(1, 16, 30, 30), bfloat16], Tensor[(1, 16, 30, 30), float32], Tensor[(m_rows, 64), float32], Tensor[(n, 64), float32])] upper_bounds {n: 8} {
    dataflow {
      s = matmul(a, a)
      t = matmul(i, i)
      u = matmul(m, v)
      w = dequantize(p, sc, group_size=32, axis=0, bits=4)
      y = matmul(x, w)
      c = conv2d(cx, cw)
      h: Tensor[(1, 16, 30, 30), float32] = call_dps_library(extern_func("cudnn.conv2d{strides=1,1;padding=0,0,0,0;dilation=1,1;groups=1}"), (hx, hw), sinfo=Tensor[(1, 16, 30, 30), float32])
      d = sigmoid(h)
      e: Tensor[(m_rows, 64), float32] = call_dps_library(extern_func("cublas.matmul"), (x, m), sinfo=Tensor[(m_rows, 64), float32])
      f = matmul(small, m)
      output gv = (s, t, u, y, c, d, e, f)
    }
    return gv
  }
})",
                       {"dispatch-library.workspaces=false"});
}

constexpr std::string_view kCudaMatmulAndConv = R"(module {
  func @main(a: Tensor[(n, 64), float32], w: Tensor[(64, 64), float32], x: Tensor[(1, 16, 32, 32), float32], k: Tensor[(16, 16, 3, 3), float32]) -> Tuple[(Tensor[(n, 64), float32], Tensor[(1, 16, 30, 30), float32])] {
    dataflow {
      p = matmul(a, w)
      c = conv2d(x, k)
      output gv = (p, c)
    }
    return gv
  }
})";

// The target's libraries select the rules: cublas alone leaves the conv, cudnn alone the
// matmul, and onednn (the cpu target's) never gives a cuda name.
TEST(DispatchCuda, TheLibrariesSelectTheRules) {
  auto run = [](const std::string& libraries) -> std::string {
    absl::StatusOr<IRModule> out = cuda_dispatch_run(
        kCudaMatmulAndConv, {"dispatch-library.libraries=" + libraries, "dispatch-library.workspaces=false"});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? to_text(*out) : "";
  };
  using ::testing::AllOf;
  using ::testing::HasSubstr;
  using ::testing::Not;
  EXPECT_THAT(run("cublas"), AllOf(HasSubstr("\"cublas.matmul\""), HasSubstr("conv2d(x, k)"), Not(HasSubstr("cudnn."))));
  EXPECT_THAT(run("cudnn"), AllOf(HasSubstr("\"cudnn.conv2d{"), HasSubstr("matmul(a, w)"), Not(HasSubstr("cublas."))));
  EXPECT_THAT(run("onednn"), AllOf(Not(HasSubstr("cublas.")), Not(HasSubstr("cudnn."))));
  EXPECT_THAT(run("cublas,cudnn"), AllOf(HasSubstr("\"cublas.matmul\""), HasSubstr("\"cudnn.conv2d{")));
}

// The default (workspaces on) declares the runtime's 32 MiB for each call (lift-workspace
// later turns it into a uint8 tensor of the memory plan); workspaces=false declares none.
TEST(DispatchCuda, WorkspacesAreDeclaredByDefault) {
  absl::StatusOr<IRModule> out = cuda_dispatch_run(kCudaMatmulAndConv, {"dispatch-library.libraries=cublas,cudnn"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(to_text(*out), ::testing::HasSubstr("(a, w), prim(33554432), sinfo="));
  EXPECT_THAT(to_text(*out), ::testing::HasSubstr("(x, k), prim(33554432), sinfo="));
  out = cuda_dispatch_run(kCudaMatmulAndConv,
                          {"dispatch-library.libraries=cublas,cudnn", "dispatch-library.workspaces=false"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(to_text(*out), ::testing::Not(::testing::HasSubstr("prim(")));
}


// Through the default pipeline the declared workspace becomes a uint8 tensor of 32 MiB that
// the memory plan places (lift-workspace, plan-memory) and the call gets after its output.
TEST(DispatchCuda, DefaultPipelineGivesTheWorkspaceFromThePlan) {
  absl::StatusOr<IRModule> mod = read_module(R"(module {
  func @main(x: Tensor[(n, 64), float32], w: Tensor[(128, 64), float32], b: Tensor[(128,), float32]) -> Tensor[(n, 128), float32] {
    dataflow {
      y = linear(x, w, b)
      z = relu(y)
      output gv = exp(z)
    }
    return gv
  }
})",
                                             "before");
  ASSERT_TRUE(mod.ok()) << mod.status();
  Target target;
  target.libraries = {"cublas", "cudnn"};
  PassContext ctx;
  absl::StatusOr<IRModule> out = default_pipeline(target).run(*mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string text = to_text(*out);
  EXPECT_THAT(text, ::testing::HasSubstr("call_library_dps(extern_func(\"cublas.linear+bias+relu\"), (x, w, b), ("));
  EXPECT_THAT(text, ::testing::HasSubstr("shape(33554432), dtype=uint8)"));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("linear(x")));
}

}  // namespace
}  // namespace relax::transform
