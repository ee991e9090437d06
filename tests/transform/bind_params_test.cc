// bind-params from C++ (its before/after cases from the command line are text
// files under tests/transform/passes/bind-params/): tensors made in memory,
// the pass with given tensors, statistics, the constant being a copy, and the
// errors, each naming the function, the parameter, the expected and the actual.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"

namespace relax::transform {
namespace {

using ::testing::HasSubstr;

IRModule parse_bind_module(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

runtime::Tensor tensor(std::vector<int64_t> shape, std::vector<float> values) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::from_vector(std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : runtime::Tensor();
}

/// The message of the error bind_params must give.
std::string bind_error(const std::string& text, const std::string& function,
                       const std::map<std::string, runtime::Tensor>& params) {
  absl::StatusOr<IRModule> out = bind_params(parse_bind_module(text), function, params);
  if (out.ok()) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return std::string(out.status().message());
}

constexpr const char* kLinear = R"(module {
  func @main(x: Tensor[(b, k), float32], w: Tensor[(n, k), float32], bias: Tensor[(n,), float32]) -> Tensor[(b, n), float32] {
    dataflow {
      wt: Tensor[(k, n), float32] = permute_dims(w)
      y: Tensor[(b, n), float32] = matmul(x, wt)
      output gv: Tensor[(b, n), float32] = add(y, bias)
    }
    return gv
  }
})";

TEST(BindParamsTest, BindsTensorsMadeInMemory) {
  absl::StatusOr<IRModule> out = bind_params(parse_bind_module(kLinear), "main",
                                             {{"w", tensor({2, 3}, {1, 2, 3, 4, 5, 6})},
                                              {"bias", tensor({2}, {0.5f, -0.5f})}});
  ASSERT_TRUE(out.ok()) << out.status();
  RELAX_EXPECT_STRUCTURAL_EQ(parse_bind_module(R"(module {
    func @main(x: Tensor[(b, 3), float32]) -> Tensor[(b, 2), float32] {
      dataflow {
        wt: Tensor[(3, 2), float32, cpu] = permute_dims(const(float32, (2, 3), [1, 2, 3, 4, 5, 6]))
        y: Tensor[(b, 2), float32, cpu] = matmul(x, wt)
        output gv: Tensor[(b, 2), float32, cpu] = add(y, const(float32, (2,), [0.5, -0.5]))
      }
      return gv
    }
  })"),
                             *out);
}

TEST(BindParamsTest, ThePassCountsWhatItBound) {
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  // The options name nothing; the pass made with tensors binds them anyway.
  PassPtr pass = create_bind_params_pass("main", {{"w", tensor({2, 3}, {1, 2, 3, 4, 5, 6})}});
  absl::StatusOr<IRModule> out = PassManager({pass, create_fold_constant_pass()}).run(parse_bind_module(kLinear), ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ctx.statistics().at("bind-params").at("bound_params"), 1);
  EXPECT_EQ(ctx.statistics().at("bind-params").at("bound_sym_vars"), 2);  // n and k
  // bias keeps its (now concrete) annotation; the transpose is folded.
  RELAX_EXPECT_STRUCTURAL_EQ(parse_bind_module(R"(module {
    func @main(x: Tensor[(b, 3), float32], bias: Tensor[(2,), float32]) -> Tensor[(b, 2), float32] {
      dataflow {
        wt: Tensor[(3, 2), float32, cpu] = const(float32, (3, 2), [1, 4, 2, 5, 3, 6])
        y: Tensor[(b, 2), float32, cpu] = matmul(x, wt)
        output gv: Tensor[(b, 2), float32, cpu] = add(y, bias)
      }
      return gv
    }
  })"),
                             *out);
}

TEST(BindParamsTest, TheConstantIsACopy) {
  runtime::Tensor w = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<IRModule> out = bind_params(parse_bind_module(kLinear), "main", {{"w", w}});
  ASSERT_TRUE(out.ok()) << out.status();
  w.data_as_or_die<float>()[0] = 100;  // the caller reuses its buffer
  const std::string text = to_text(*out);
  EXPECT_THAT(text, HasSubstr("const(float32, (2, 3), [1, 2, 3, 4, 5, 6])"));
}

TEST(BindParamsTest, NoParamsLeaveTheModuleAlone) {
  IRModule mod = parse_bind_module(kLinear);
  absl::StatusOr<IRModule> out = bind_params(mod, "main", {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->lookup("main").same_as(mod.lookup("main")));
}

TEST(BindParamsTest, AnUnusedParameterStillLeavesTheSignature) {
  absl::StatusOr<IRModule> out = bind_params(parse_bind_module(R"(module {
    func @main(x: Tensor[(4,), float32], unused: Tensor[(n,), float32]) -> Tensor[(4,), float32] {
      y: Tensor[(4,), float32] = exp(x)
      return y
    }
  })"),
                                             "main", {{"unused", tensor({1}, {0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  RELAX_EXPECT_STRUCTURAL_EQ(parse_bind_module(R"(module {
    func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
      y: Tensor[(4,), float32] = exp(x)
      return y
    }
  })"),
                             *out);
}

TEST(BindParamsTest, DeclaredUpperBoundsOfBoundVariablesGo) {
  absl::StatusOr<IRModule> out = bind_params(parse_bind_module(R"(module {
    func @main(x: Tensor[(m, n), float32], w: Tensor[(n,), float32]) -> Tensor[(m, n), float32] upper_bounds {m: 64, n: 8} {
      y: Tensor[(m, n), float32] = add(x, w)
      return y
    }
  })"),
                                             "main", {{"w", tensor({2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  RELAX_EXPECT_STRUCTURAL_EQ(parse_bind_module(R"(module {
    func @main(x: Tensor[(m, 2), float32]) -> Tensor[(m, 2), float32] upper_bounds {m: 64} {
      y: Tensor[(m, 2), float32, cpu] = add(x, const(float32, (2,), [1, 2]))
      return y
    }
  })"),
                             *out);
}

TEST(BindParamsTest, AValueAboveTheDeclaredUpperBoundIsAnError) {
  EXPECT_THAT(bind_error(R"(module {
    func @main(w: Tensor[(n,), float32]) -> Tensor[(n,), float32] upper_bounds {n: 2} {
      y: Tensor[(n,), float32] = exp(w)
      return y
    }
  })",
                         "main", {{"w", tensor({3}, {1, 2, 3})}}),
              HasSubstr("@main: parameter `w` dim 0 gives n = 3, above its declared upper bound 2"));
}

TEST(BindParamsTest, UnknownFunctionOrParameterNamesWhatThereIs) {
  EXPECT_THAT(bind_error(kLinear, "encode", {{"w", tensor({1}, {0})}}),
              HasSubstr("no graph function @encode in the module (graph functions: @main)"));
  EXPECT_THAT(bind_error(kLinear, "main", {{"weight", tensor({1}, {0})}}),
              HasSubstr("@main has no parameter `weight` (its parameters: `x`, `w`, `bias`)"));
}

TEST(BindParamsTest, AConstantDimMismatchNamesExpectedAndActual) {
  EXPECT_THAT(bind_error(R"(module {
    func @main(w: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
      y: Tensor[(n, 4), float32] = exp(w)
      return y
    }
  })",
                         "main", {{"w", tensor({2, 5}, std::vector<float>(10, 0))}}),
              HasSubstr("@main: parameter `w` dim 1: expected 4, got 5 (a tensor of shape (2, 5))"));
}

TEST(BindParamsTest, ASymbolicDimMismatchShowsTheBinding) {
  EXPECT_THAT(bind_error(R"(module {
    func @main(w: Tensor[(n, n * n), float32]) -> Tensor[(n, n * n), float32] {
      y: Tensor[(n, n * n), float32] = exp(w)
      return y
    }
  })",
                         "main", {{"w", tensor({2, 5}, std::vector<float>(10, 0))}}),
              HasSubstr("@main: parameter `w` dim 1: expected n * n = 4 with n = 2 (from `w` dim 0), got 5"));
}

TEST(BindParamsTest, ALinearDimWithoutAnIntegerSolutionIsAnError) {
  EXPECT_THAT(bind_error(R"(module {
    func @main(w: Tensor[(n * 2,), float32]) -> Tensor[(n * 2,), float32] {
      y: Tensor[(n * 2,), float32] = exp(w)
      return y
    }
  })",
                         "main", {{"w", tensor({3}, {1, 2, 3})}}),
              HasSubstr("@main: parameter `w` dim 0 is n * 2, which no integer n makes equal to the tensor's 3"));
}

TEST(BindParamsTest, ADimTheTensorsDoNotDetermineIsAnError) {
  // m comes from x, which stays a parameter: nothing would check n * m any more.
  EXPECT_THAT(bind_error(R"(module {
    func @main(x: Tensor[(m,), float32], w: Tensor[(n, n * m), float32]) -> Tensor[(m,), float32] {
      y: Tensor[(m,), float32] = exp(x)
      return y
    }
  })",
                         "main", {{"w", tensor({2, 6}, std::vector<float>(12, 0))}}),
              HasSubstr("@main: parameter `w` dim 1 is n * m, which the bound tensors do not determine"));
}

TEST(BindParamsTest, OnlyTensorParametersBind) {
  EXPECT_THAT(bind_error(R"(module {
    func @main(x: Tensor[(4,), float32], s: Shape[(n,)]) -> Tensor[(4,), float32] {
      y: Tensor[(4,), float32] = exp(x)
      return y
    }
  })",
                         "main", {{"s", tensor({1}, {0})}}),
              HasSubstr("@main: parameter `s` is annotated Shape[(n,)]; only tensor parameters can be bound"));
}

TEST(BindParamsTest, AFunctionOthersCallIsNotBound) {
  EXPECT_THAT(bind_error(R"(module {
    func @layer(x: Tensor[(4,), float32], w: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
      y: Tensor[(4,), float32] = add(x, w)
      return y
    }
    func @main(x: Tensor[(4,), float32], w: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
      y: Tensor[(4,), float32] = @layer(x, w)
      return y
    }
  })",
                         "layer", {{"w", tensor({4}, {1, 2, 3, 4})}}),
              HasSubstr("@layer is called by @main; only the parameters of a function that no other "
                        "function calls can be bound"));
}

}  // namespace
}  // namespace relax::transform
