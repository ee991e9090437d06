// reshape as a view through relax::build's default pipeline: the result shares
// its input's memory (no copy) and has the right values at several sizes from
// one compilation; in a module that writes tensors in place (call_tir_inplace)
// reshape stays a copy, so a write into a reshaped tensor's base (or into the
// reshaped tensor) does not show through the other.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/runtime/module.h"

namespace relax {
namespace reshape_view_test {
namespace {

using runtime::Tensor;
using runtime::Value;

Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t = *Tensor::empty(std::move(shape), DataType::float32());
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as_or_die<float>()[i] = dist(rng);
  return t;
}

const float* data(const Value& v) { return v.tensor_or_die().data_as_or_die<float>(); }

runtime::Module build_or_die(const std::string& text, BuildInfo* info) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<runtime::Module> m = build(*mod, testing::build_test_target(), info);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

TEST(ReshapeViewBuild, ReshapeSharesItsInputsMemoryAndKeepsTheValues) {
  BuildInfo info;
  runtime::Module m = build_or_die(R"(
module {
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(2, n * 2), float32] {
    y: Tensor[(2, n * 2), float32] = reshape(x, shape(2, -1))
    return y
  }
  func @chain(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n * 4,), float32], Tensor[(n * 4,), float32])] {
    a: Tensor[(n, 4), float32] = add(x, x)
    b: Tensor[(n * 4,), float32] = reshape(a, shape(n * 4))
    c: Tensor[(n * 4,), float32] = multiply(b, b)
    r: Tuple[(Tensor[(n * 4,), float32], Tensor[(n * 4,), float32])] = (b, c)
    return r
  }
}
)",
                                   &info);
  const std::string lowered = to_text(info.lowered);
  EXPECT_NE(lowered.find("view(x, shape(2, n * 2))"), std::string::npos) << lowered;
  EXPECT_EQ(lowered.find("prim_func @reshape"), std::string::npos) << "no copy kernel\n" << lowered;

  std::mt19937 rng(3);
  for (int64_t n : {1, 3, 50, 1000}) {
    Tensor x = random_tensor({n, 4}, rng);
    absl::StatusOr<Value> y = m["main"](x);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->tensor_or_die().data(), x.data()) << "n = " << n << ": the reshape copied";
    EXPECT_EQ(y->tensor_or_die().shape(), (std::vector<int64_t>{2, n * 2}));
    for (int64_t i = 0; i < n * 4; ++i) ASSERT_EQ(data(*y)[i], x.data_as_or_die<float>()[i]) << "n = " << n;

    absl::StatusOr<Value> r = m["chain"](x);
    ASSERT_TRUE(r.ok()) << r.status();
    const Value b = r->fields_or_die()[0];
    const Value c = r->fields_or_die()[1];
    for (int64_t i = 0; i < n * 4; ++i) {
      const float twice = x.data_as_or_die<float>()[i] + x.data_as_or_die<float>()[i];
      ASSERT_EQ(data(b)[i], twice) << "n = " << n << ", i = " << i;
      ASSERT_EQ(data(c)[i], twice * twice) << "n = " << n << ", i = " << i;
    }
  }
}

TEST(ReshapeViewBuild, AnInPlaceWriteDoesNotShowThroughAReshape) {
  // main: y is reshape(a) taken before a is doubled in place: y keeps 2x, z is 4x.
  // flat: the in-place write goes into the reshaped v: a keeps 2x, w is 4x.
  BuildInfo info;
  runtime::Module m = build_or_die(R"(
module {
  func @main(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n * 4,), float32], Tensor[(n, 4), float32])] {
    a: Tensor[(n, 4), float32] = add(x, x)
    y: Tensor[(n * 4,), float32] = reshape(a, shape(n * 4))
    z: Tensor[(n, 4), float32] = call_tir_inplace(@twice, (a,), inplace_indices=[0], sinfo=Tensor[(n, 4), float32])
    r: Tuple[(Tensor[(n * 4,), float32], Tensor[(n, 4), float32])] = (y, z)
    return r
  }
  func @flat(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n * 4,), float32])] {
    a: Tensor[(n, 4), float32] = add(x, x)
    v: Tensor[(n * 4,), float32] = reshape(a, shape(n * 4))
    w: Tensor[(n * 4,), float32] = call_tir_inplace(@twice_flat, (v,), inplace_indices=[0], sinfo=Tensor[(n * 4,), float32])
    r: Tuple[(Tensor[(n, 4), float32], Tensor[(n * 4,), float32])] = (a, w)
    return r
  }
  prim_func @twice(X: Buffer[(m, 4), float32]) attrs {global_symbol = "twice"} {
    for i in range(m) {
      for j in range(4) {
        X[i, j] = X[i, j] * 2f32
      }
    }
  }
  prim_func @twice_flat(X: Buffer[(m,), float32]) attrs {global_symbol = "twice_flat"} {
    for i in range(m) {
      X[i] = X[i] * 2f32
    }
  }
}
)",
                                   &info);
  EXPECT_EQ(to_text(info.lowered).find("view("), std::string::npos) << to_text(info.lowered);
  std::mt19937 rng(5);
  for (int64_t n : {1, 6, 257}) {
    Tensor x = random_tensor({n, 4}, rng);
    absl::StatusOr<Value> r = m["main"](x);
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<Value> f = m["flat"](x);
    ASSERT_TRUE(f.ok()) << f.status();
    for (int64_t i = 0; i < n * 4; ++i) {
      const float twice = x.data_as_or_die<float>()[i] * 2.0f;
      ASSERT_EQ(data(r->fields_or_die()[0])[i], twice) << "main y, n = " << n << ", i = " << i;
      ASSERT_EQ(data(r->fields_or_die()[1])[i], twice * 2.0f) << "main z, n = " << n << ", i = " << i;
      ASSERT_EQ(data(f->fields_or_die()[0])[i], twice) << "flat a, n = " << n << ", i = " << i;
      ASSERT_EQ(data(f->fields_or_die()[1])[i], twice * 2.0f) << "flat w, n = " << n << ", i = " << i;
    }
  }
}

}  // namespace
}  // namespace reshape_view_test
}  // namespace relax
