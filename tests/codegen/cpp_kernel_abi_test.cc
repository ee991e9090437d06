// The kernel ABI checks of generated kernels: argument count, kinds, ranks,
// dtypes, dims against their relations, strides, narrow scalar variables,
// failed allocations -- each gives its message through the error buffer and a
// non-zero return -- and Target::runtime_checks == false, which drops them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "codegen_test_util.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using testing::JitTest;
using testing::KernelArgs;

constexpr DataType kAbiF32 = DataType::float32();
constexpr DataType kAbiI32 = DataType::int32();

/// add(A: f32[n, 4], B: f32[n, 4], C: f32[n, 4]) and
/// twice(A: f32[n], B: f32[n * 2]): B[2i] = B[2i + 1] = A[i], compiled once
/// into one library for the whole suite.
class KernelAbiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = new testing::TempDir();
    SymVar n("n");
    PrimFuncBuilder add("add");
    Buffer A = add.buffer_param("A", {n, 4}, kAbiF32);
    Buffer B = add.buffer_param("B", {n, 4}, kAbiF32);
    Buffer C = add.buffer_param("C", {n, 4}, kAbiF32);
    add.for_("i", 0, n, [&](SymVar i) {
      add.for_("j", 0, 4, [&](SymVar j) {
        add.store(C, {i, j}, buffer_load(A, {i, j}) + buffer_load(B, {i, j}));
      });
    });
    SymVar m("m");
    PrimFuncBuilder twice("twice");
    Buffer X = twice.buffer_param("X", {m}, kAbiF32);
    Buffer Y = twice.buffer_param("Y", {m * 2}, kAbiF32);
    twice.for_("i", 0, m, [&](SymVar i) {
      twice.store(Y, {i * 2}, buffer_load(X, {i}));
      twice.store(Y, {i * 2 + 1}, buffer_load(X, {i}));
    });
    Target target;
    target.cache_dir = cache_->path();
    absl::StatusOr<std::string> source = generate_cpp({{"add", *add.build()}, {"twice", *twice.build()}}, target);
    ASSERT_TRUE(source.ok()) << source.status();
    absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(*source, target);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    auto lib = runtime::KernelLibrary::open(compiled->library_path);
    ASSERT_TRUE(lib.ok()) << lib.status();
    library_ = new std::shared_ptr<const runtime::KernelLibrary>(*lib);
  }
  static void TearDownTestSuite() {
    delete library_;
    delete cache_;
    library_ = nullptr;
    cache_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(library_, nullptr);
    add_ = *(*library_)->find("add");
    twice_ = *(*library_)->find("twice");
  }

  static testing::TempDir* cache_;
  static std::shared_ptr<const runtime::KernelLibrary>* library_;
  RelaxKernelFn add_ = nullptr;
  RelaxKernelFn twice_ = nullptr;
  std::vector<float> a_ = std::vector<float>(12, 1.0f), b_ = std::vector<float>(12, 2.0f),
                     c_ = std::vector<float>(12, 0.0f);
};

testing::TempDir* KernelAbiTest::cache_ = nullptr;
std::shared_ptr<const runtime::KernelLibrary>* KernelAbiTest::library_ = nullptr;

TEST_F(KernelAbiTest, CorrectCallSucceeds) {
  EXPECT_EQ(KernelArgs().buffer(a_, {3, 4}).buffer(b_, {3, 4}).buffer(c_, {3, 4}).call(add_), "");
  EXPECT_EQ(c_, std::vector<float>(12, 3.0f));
}

TEST_F(KernelAbiTest, WrongArgumentCount) {
  EXPECT_EQ(KernelArgs().buffer(a_, {3, 4}).buffer(b_, {3, 4}).call(add_), "expected 3 arguments, got 2");
}

TEST_F(KernelAbiTest, WrongKind) {
  EXPECT_EQ(KernelArgs().integer(3).buffer(b_, {3, 4}).buffer(c_, {3, 4}).call(add_),
            "argument A (#0) is an integer, expected a buffer");
}

TEST_F(KernelAbiTest, WrongNdim) {
  EXPECT_EQ(KernelArgs().buffer(a_, {3, 2, 2}).buffer(b_, {3, 4}).buffer(c_, {3, 4}).call(add_),
            "argument A (#0) has ndim 3, expected 2");
}

TEST_F(KernelAbiTest, WrongDtype) {
  std::vector<int32_t> ints(12);
  EXPECT_EQ(KernelArgs().buffer(a_, {3, 4}).buffer(ints, {3, 4}).buffer(c_, {3, 4}).call(add_),
            "argument B (#1) has dtype int32, expected float32");
  KernelArgs vector_lanes;
  vector_lanes.buffer(a_, {3, 4}).buffer(b_, {3, 4}).buffer(c_, {3, 4}).back().dtype_lanes = 4;
  EXPECT_EQ(vector_lanes.call(add_), "argument C (#2) has dtype float32x4, expected float32");
}

TEST_F(KernelAbiTest, ConstantDimMismatch) {
  std::vector<float> c(15);
  EXPECT_EQ(KernelArgs().buffer(a_, {3, 4}).buffer(b_, {3, 4}).buffer(c, {3, 5}).call(add_),
            "argument C (#2) dim 1 is 5, expected 4");
}

TEST_F(KernelAbiTest, VariableBoundByTheFirstOccurrence) {
  EXPECT_EQ(KernelArgs().buffer(a_, {3, 4}).buffer(b_, {2, 4}).buffer(c_, {3, 4}).call(add_),
            "argument B (#1) dim 0 is 2, expected 3 (n)");
}

TEST_F(KernelAbiTest, DimRelation) {
  std::vector<float> x = {1, 2, 3}, y(6);
  EXPECT_EQ(KernelArgs().buffer(x, {3}).buffer(y, {6}).call(twice_), "");
  EXPECT_EQ(y, (std::vector<float>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(KernelArgs().buffer(x, {3}).buffer(y, {5}).call(twice_),
            "argument Y (#1) dim 0 is 5, expected 6 (m * 2)");
}

TEST_F(KernelAbiTest, StridesOfCompactBuffers) {
  // Explicit strides equal to the compact ones are fine; others are not.
  EXPECT_EQ(KernelArgs().buffer(a_, {3, 4}, std::vector<int64_t>{4, 1}).buffer(b_, {3, 4}).buffer(c_, {3, 4}).call(add_),
            "");
  // A dim of extent 1 may have any stride.
  std::vector<float> a1(4, 1.0f), b1(4), c1(4);
  EXPECT_EQ(KernelArgs().buffer(a1, {1, 4}, std::vector<int64_t>{99, 1}).buffer(b1, {1, 4}).buffer(c1, {1, 4}).call(add_),
            "");
  EXPECT_EQ(KernelArgs().buffer(a_, {3, 4}).buffer(b_, {3, 4}, std::vector<int64_t>{8, 1}).buffer(c_, {3, 4}).call(add_),
            "argument B (#1) stride 0 is 8, expected 4");
}

TEST_F(KernelAbiTest, MessageIsBoundedByTheCapacity) {
  const std::string full = KernelArgs().buffer(a_, {3, 4}).buffer(b_, {3, 4}).call(add_);
  const std::string cut = KernelArgs().buffer(a_, {3, 4}).buffer(b_, {3, 4}).call(add_, /*capacity=*/12);
  EXPECT_EQ(cut, full.substr(0, 11));
  // No buffer at all: still a non-zero return, nothing written.
  std::vector<RelaxKernelArg> none;
  EXPECT_NE(add_(none.data(), 0, nullptr, 0), 0);
}

using KernelChecksTest = JitTest;

TEST_F(KernelChecksTest, DeclaredStridesAreBoundAndChecked) {
  // A: f32[n, 4] with strides (s, 1): a row-padded matrix; B compact.
  SymVar n("n"), s("s");
  Buffer A("A", kAbiF32, {n, 4}, {s, 1});
  Buffer B("B", kAbiF32, {n, 4});
  SymVar i("i"), j("j");
  Stmt body = make_for(i, 0, n, ForKind::kSerial,
                       make_for(j, 0, 4, ForKind::kSerial, make_store(B, {i, j}, buffer_load(A, {i, j}) * 3.0)));
  Expr f = make_prim_func({PrimParam{A, std::nullopt}, PrimParam{B, std::nullopt}}, body);
  auto lib = jit({{"padded", f}});
  ASSERT_NE(lib, nullptr);
  RelaxKernelFn fn = *lib->find("padded");
  std::vector<float> a(2 * 6), b(8);
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k);
  ASSERT_EQ(KernelArgs().buffer(a, {2, 4}, std::vector<int64_t>{6, 1}).buffer(b, {2, 4}).call(fn), "");
  EXPECT_EQ(b, (std::vector<float>{0, 3, 6, 9, 18, 21, 24, 27}));
  // Compact A binds s = 4; a second column stride is checked against 1.
  ASSERT_EQ(KernelArgs().buffer(a, {2, 4}).buffer(b, {2, 4}).call(fn), "");
  EXPECT_EQ(b, (std::vector<float>{0, 3, 6, 9, 12, 15, 18, 21}));
  EXPECT_EQ(KernelArgs().buffer(a, {2, 4}, std::vector<int64_t>{6, 2}).buffer(b, {2, 4}).call(fn),
            "argument A (#0) stride 1 is 2, expected 1");
}

TEST_F(KernelChecksTest, LinearDimsDefineTheirVariable) {
  // halves(Y: f32[m * 2], X: f32[m + 1], Z: f32[4 * (k + 1)]): no dim is a bare
  // variable; m and k are solved from Y and Z, and X is checked against m.
  SymVar m("m"), k("k"), i("i");
  Buffer Y("Y", kAbiF32, {m * 2});
  Buffer X("X", kAbiF32, {m + 1});
  Buffer Z("Z", kAbiF32, {4 * (k + 1)});
  Stmt body = make_for(i, 0, m, ForKind::kSerial,
                       make_store(X, {i}, buffer_load(Y, {i * 2}) + buffer_load(Y, {i * 2 + 1}) + cast(kAbiF32, k)));
  Expr f = make_prim_func({PrimParam{Y, std::nullopt}, PrimParam{X, std::nullopt}, PrimParam{Z, std::nullopt}}, body);
  auto lib = jit({{"halves", f}});
  ASSERT_NE(lib, nullptr);
  RelaxKernelFn fn = *lib->find("halves");
  std::vector<float> y = {1, 2, 3, 4, 5, 6}, x(4, -1.0f), z(12);
  ASSERT_EQ(KernelArgs().buffer(y, {6}).buffer(x, {4}).buffer(z, {12}).call(fn), "");
  EXPECT_EQ(x, (std::vector<float>{5, 9, 13, -1}));  // m = 3, k = 2
  EXPECT_EQ(KernelArgs().buffer(y, {5}).buffer(x, {4}).buffer(z, {12}).call(fn),
            "argument Y (#0) dim 0 is 5, which is not m * 2 for any integer m");
  EXPECT_EQ(KernelArgs().buffer(y, {6}).buffer(x, {3}).buffer(z, {12}).call(fn),
            "argument X (#1) dim 0 is 3, expected 4 (m + 1)");
  EXPECT_THAT(KernelArgs().buffer(y, {6}).buffer(x, {4}).buffer(z, {10}).call(fn),
              HasSubstr("argument Z (#2) dim 0 is 10, which is not"));
}

TEST_F(KernelChecksTest, ScalarKindsAndNarrowVariables) {
  PrimFuncBuilder b("fill");
  Buffer A = b.buffer_param("A", {4}, kAbiF32);
  SymVar k = b.scalar_param("k", kAbiI32);
  SymVar x = b.scalar_param("x", kAbiF32);
  b.for_("i", 0, 4, [&](SymVar i) { b.store(A, {i}, x + cast(kAbiF32, k)); });
  RelaxKernelFn fn = jit_one(b, "fill");
  ASSERT_NE(fn, nullptr);
  std::vector<float> a(4);
  EXPECT_EQ(KernelArgs().buffer(a, {4}).integer(2).real(0.25).call(fn), "");
  EXPECT_EQ(a, std::vector<float>(4, 2.25f));
  EXPECT_EQ(KernelArgs().buffer(a, {4}).real(2).real(0.25).call(fn),
            "argument k (#1) is a float, expected an integer");
  EXPECT_EQ(KernelArgs().buffer(a, {4}).integer(2).integer(1).call(fn),
            "argument x (#2) is an integer, expected a float");
  EXPECT_EQ(KernelArgs().buffer(a, {4}).integer(int64_t{1} << 40).real(0.25).call(fn),
            "argument k (#1) is 1099511627776, which does not fit k (int32_t)");
}

TEST_F(KernelChecksTest, FailedAllocationIsAnErrorAlsoInsideParallelLoops) {
  // tmp has k elements, k a scalar argument: 2^62 floats cannot be allocated.
  PrimFuncBuilder b("big");
  Buffer A = b.buffer_param("A", {4}, kAbiF32);
  SymVar k = b.scalar_param("k");
  b.for_("i", 0, 4, ForKind::kParallel, [&](SymVar i) {
    Buffer tmp = b.allocate("tmp", {k}, kAbiF32);
    b.store(tmp, {0}, cast(kAbiF32, i));
    b.store(A, {i}, buffer_load(tmp, {0}));
  });
  Buffer top = b.allocate("top", {k * 2}, kAbiF32);
  b.store(top, {0}, SymExpr::float_imm(1, kAbiF32));
  target_.parallel_min_work = 0;  // an OpenMP region even for 4 iterations
  RelaxKernelFn fn = jit_one(b, "big");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, HasSubstr("__sync_bool_compare_and_swap(&relax_failed, 0, 1)"));
  std::vector<float> a(4);
  EXPECT_EQ(KernelArgs().buffer(a, {4}).integer(1).call(fn), "");
  EXPECT_EQ(a, (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(KernelArgs().buffer(a, {4}).integer(int64_t{1} << 62).call(fn),
            "cannot allocate 4611686018427387904 elements of float32 for tmp");
  EXPECT_EQ(KernelArgs().buffer(a, {4}).integer(-1).call(fn),
            "cannot allocate -1 elements of float32 for tmp");
}

TEST_F(KernelChecksTest, FailedAllocationOutsideLoopsReturnsAtOnce) {
  PrimFuncBuilder b("big2");
  Buffer A = b.buffer_param("A", {1}, kAbiF32);
  SymVar k = b.scalar_param("k");
  Buffer tmp = b.allocate("tmp", {k}, kAbiF32);
  b.store(tmp, {0}, SymExpr::float_imm(5, kAbiF32));
  b.store(A, {0}, buffer_load(tmp, {0}));
  RelaxKernelFn fn = jit_one(b, "big2");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, ::testing::Not(HasSubstr("relax_failed")));
  std::vector<float> a(1);
  EXPECT_EQ(KernelArgs().buffer(a, {1}).integer(3).call(fn), "");
  EXPECT_EQ(a[0], 5.0f);
  EXPECT_EQ(KernelArgs().buffer(a, {1}).integer(-5).call(fn),
            "cannot allocate -5 elements of float32 for tmp");
}

TEST_F(KernelChecksTest, RuntimeChecksOffDropsDimAndDtypeChecks) {
  SymVar n("n");
  PrimFuncBuilder b("copy");
  Buffer A = b.buffer_param("A", {n}, kAbiF32);
  Buffer B = b.buffer_param("B", {n + 1}, kAbiF32);
  b.for_("i", 0, n, [&](SymVar i) { b.store(B, {i}, buffer_load(A, {i})); });
  Target unchecked = target_;
  unchecked.runtime_checks = false;
  RelaxKernelFn fn = jit_one(b, "copy", unchecked);
  ASSERT_NE(fn, nullptr);
  std::vector<float> a = {1, 2}, out(4);
  EXPECT_EQ(KernelArgs().buffer(a, {2}).buffer(out, {4}).call(fn), "");  // B's dim is not n + 1
  EXPECT_EQ(out, (std::vector<float>{1, 2, 0, 0}));
  // Rank and count are still checked: reading a missing dim would be out of bounds.
  EXPECT_EQ(KernelArgs().buffer(a, {2}).call(fn), "expected 2 arguments, got 1");
  EXPECT_EQ(KernelArgs().buffer(a, {2}).buffer(out, {2, 2}).call(fn),
            "argument B (#1) has ndim 2, expected 1");
  RelaxKernelFn checked = jit_one(b, "copy");
  ASSERT_NE(checked, nullptr);
  EXPECT_EQ(KernelArgs().buffer(a, {2}).buffer(out, {4}).call(checked),
            "argument B (#1) dim 0 is 4, expected 3 (n + 1)");
}

}  // namespace
}  // namespace relax
