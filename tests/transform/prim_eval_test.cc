// The loop-level evaluator (relax/transform/prim_eval.h): kernels of every
// dtype against plain-loop references written here (int64 and uint64 values
// beyond 2^53, float32 rounded per operation, float16/bfloat16 ties), and the
// errors that name the kernel and the statement.
#include "relax/transform/prim_eval.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "relax/ir/prim_func_builder.h"
#include "relax/support/float_format.h"
#include "relax/support/check.h"

namespace relax::transform {
namespace {

using ::testing::HasSubstr;

const DataType f32 = DataType::float32();
const DataType f64 = DataType::float64();
const DataType i32 = DataType::int32();
const DataType i64 = DataType::int64();
const DataType u64{DataType::Code::kUInt, 64, 1};
const DataType i8{DataType::Code::kInt, 8, 1};
const DataType u8{DataType::Code::kUInt, 8, 1};

template <typename T>
runtime::Tensor tensor(std::vector<int64_t> shape, DataType dtype, const std::vector<T>& values) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(std::move(shape), dtype);
  RELAX_CHECK(t.ok()) << t.status().message();
  RELAX_CHECK(t->nbytes() == values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(t->data(), values.data(), t->nbytes());
  return *t;
}

template <typename T>
std::vector<T> values_of(const runtime::Tensor& t) {
  RELAX_CHECK(t.nbytes() % sizeof(T) == 0);
  std::vector<T> out(t.nbytes() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), t.data(), t.nbytes());
  return out;
}

Expr build(const PrimFuncBuilder& b) {
  absl::StatusOr<Expr> f = b.build();
  RELAX_CHECK(f.ok()) << f.status().message();
  return *f;
}

// C[i] = op(A[i], B[i]) over Buffer[(n,), dtype].
Expr binary_kernel(const std::string& name, DataType dtype,
                   const std::function<SymExpr(SymExpr, SymExpr)>& op) {
  SymVar n("n");
  PrimFuncBuilder b(name);
  Buffer a = b.buffer_param("A", {n}, dtype);
  Buffer bb = b.buffer_param("B", {n}, dtype);
  Buffer c = b.buffer_param("C", {n}, dtype);
  b.for_("i", 0, n, [&](SymVar i) {
    b.store(c, {i}, op(buffer_load(a, {i}), buffer_load(bb, {i})));
  });
  return build(b);
}

// ---------------------------------------------------------------------------
// Integers are exact.

TEST(PrimEval, Int64ArithmeticIsExactBeyondTwoToThe53) {
  const std::vector<int64_t> a = {(int64_t{1} << 60) + 1, -(int64_t{1} << 62) - 3, 9007199254740993,
                                  INT64_MAX - 5, -7};
  const std::vector<int64_t> b = {3, 7, 2, 5, 2};
  Expr add = binary_kernel("add", i64, [](SymExpr x, SymExpr y) { return x + y; });
  Expr mul_sub = binary_kernel("mul_sub", i64, [](SymExpr x, SymExpr y) { return x - y * 2; });
  Expr div = binary_kernel("div", i64, [](SymExpr x, SymExpr y) { return floordiv(x, y) + floormod(x, y); });
  // The references: plain int64 loops (floor division written out).
  auto floor_div = [](int64_t x, int64_t y) { return x / y - ((x % y != 0) && ((x < 0) != (y < 0))); };
  for (const auto& [kernel, ref] :
       std::vector<std::pair<Expr, std::function<int64_t(int64_t, int64_t)>>>{
           {add, [](int64_t x, int64_t y) { return x + y; }},
           {mul_sub, [](int64_t x, int64_t y) { return x - y * 2; }},
           {div, [&](int64_t x, int64_t y) { return floor_div(x, y) + (x - y * floor_div(x, y)); }}}) {
    runtime::Tensor out = tensor<int64_t>({5}, i64, std::vector<int64_t>(5));
    ASSERT_TRUE(run_prim_func(kernel, {tensor({5}, i64, a), tensor({5}, i64, b), out}).ok());
    std::vector<int64_t> got = values_of<int64_t>(out);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(got[i], ref(a[i], b[i])) << "element " << i;
  }
}

TEST(PrimEval, Uint64ValuesAboveInt64MaxAreExact) {
  const uint64_t big = std::numeric_limits<uint64_t>::max() - 10;
  Expr add = binary_kernel("add", u64, [](SymExpr x, SymExpr y) { return x + y; });
  runtime::Tensor out = tensor<uint64_t>({2}, u64, {0, 0});
  ASSERT_TRUE(run_prim_func(add, {tensor<uint64_t>({2}, u64, {big, uint64_t{1} << 63}),
                                  tensor<uint64_t>({2}, u64, {7, 12345}), out})
                  .ok());
  EXPECT_EQ(values_of<uint64_t>(out), (std::vector<uint64_t>{big + 7, (uint64_t{1} << 63) + 12345}));
  // Past the top: an overflow, not a wrapped value.
  absl::Status s = run_prim_func(add, {tensor<uint64_t>({1}, u64, {big}),
                                       tensor<uint64_t>({1}, u64, {11}), tensor<uint64_t>({1}, u64, {0})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("uint64 overflow in `A[i] + B[i]`"));
}

TEST(PrimEval, EvaluateScalarIsExactWhereDoublesAreNot) {
  SymVar x("x");
  const int64_t value = (int64_t{1} << 61) + 1;
  const SymExpr e = x * 2 - 1;  // 2^62 + 1: not a double
  absl::StatusOr<PrimScalar> v = evaluate_scalar(e, {{x, PrimScalar::from_int(value)}});
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->int_value(), value * 2 - 1);
  EXPECT_EQ(v->dtype(), i64);
  // The shape layer's integer evaluation agrees; its double one cannot.
  EXPECT_EQ(*evaluate(e, {{x, value}}), value * 2 - 1);
  EXPECT_NE(static_cast<int64_t>(*evaluate_float(e, {{x, value}})), value * 2 - 1);
  // Overflow is an error, as in evaluate().
  absl::StatusOr<PrimScalar> over = evaluate_scalar(x * 4, {{x, PrimScalar::from_int(value)}});
  EXPECT_EQ(over.status().message(),
            "int64 overflow in `x * 4` (2305843009213693953 * 4)");
}

TEST(PrimEval, IntegerOverflowNamesKernelAndStatement) {
  Expr add = binary_kernel("add32", i32, [](SymExpr x, SymExpr y) { return x + y; });
  absl::Status s = run_prim_func(add, {tensor<int32_t>({1}, i32, {INT32_MAX}),
                                       tensor<int32_t>({1}, i32, {1}), tensor<int32_t>({1}, i32, {0})});
  EXPECT_EQ(s.message(),
            "@add32: in `C[i] = A[i] + B[i]`: int32 overflow in `A[i] + B[i]` (2147483647i32 + 1i32)");
}

TEST(PrimEval, CastsBetweenIntegersWrapAndToFloatsRoundOnce) {
  SymVar n("n");
  PrimFuncBuilder b("casts");
  Buffer a = b.buffer_param("A", {n}, i64);
  Buffer narrow = b.buffer_param("N", {n}, i8);
  Buffer f = b.buffer_param("F", {n}, f32);
  b.for_("i", 0, n, [&](SymVar i) {
    b.store(narrow, {i}, cast(i8, buffer_load(a, {i})));
    b.store(f, {i}, cast(f32, buffer_load(a, {i})));
  });
  Expr kernel = build(b);
  const std::vector<int64_t> in = {200, -129, (int64_t{1} << 60) + (int64_t{1} << 36) + 1,
                                   (int64_t{1} << 53) + 1, 16777217};
  runtime::Tensor out8 = tensor<int8_t>({5}, i8, std::vector<int8_t>(5));
  runtime::Tensor outf = tensor<float>({5}, f32, std::vector<float>(5));
  ASSERT_TRUE(run_prim_func(kernel, {tensor({5}, i64, in), out8, outf}).ok());
  std::vector<int8_t> got8 = values_of<int8_t>(out8);
  std::vector<float> gotf = values_of<float>(outf);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(got8[i], static_cast<int8_t>(in[i])) << i;   // C++ conversion: modulo 2^8
    EXPECT_EQ(gotf[i], static_cast<float>(in[i])) << i;    // one rounding from the integer
  }
}

// ---------------------------------------------------------------------------
// Floats are rounded to their dtype after each operation.

TEST(PrimEval, Float32IsRoundedAfterEachOperation) {
  // acc = acc + A[k] * B[k] in float32: the reference rounds each step, which
  // a double accumulation would not (1e8 + 1 is 1e8 in float32).
  SymVar n("n");
  PrimFuncBuilder b("dot");
  Buffer a = b.buffer_param("A", {n}, f32);
  Buffer bb = b.buffer_param("B", {n}, f32);
  Buffer c = b.buffer_param("C", {1}, f32);
  b.for_("k", 0, n, [&](SymVar k) {
    b.block("dot", {PrimFuncBuilder::reduce(n, k)},
            [&](const std::vector<SymVar>&) { b.store(c, {0}, 0); },
            [&](const std::vector<SymVar>& v) {
              b.store(c, {0}, buffer_load(c, {0}) + buffer_load(a, {v[0]}) * buffer_load(bb, {v[0]}));
            });
  });
  Expr kernel = build(b);
  const std::vector<float> x = {1e8f, 1.0f, 1.0f, 0.1f, 3.0f, -1e8f, 0.3f};
  const std::vector<float> y = {1.0f, 1.0f, 1.0f, 0.7f, 1.0f / 3.0f, 1.0f, 0.9f};
  runtime::Tensor out = tensor<float>({1}, f32, {0.0f});
  PrimEvalOptions options;
  options.access = {BufferAccess::kInput, BufferAccess::kInput, BufferAccess::kOutput};
  ASSERT_TRUE(run_prim_func(kernel, {tensor({7}, f32, x), tensor({7}, f32, y), out}, options).ok());
  float acc = 0.0f;
  for (size_t k = 0; k < x.size(); ++k) {
    volatile float product = x[k] * y[k];  // volatile: no fused multiply-add in the reference
    acc = acc + product;
  }
  EXPECT_EQ(values_of<float>(out)[0], acc);
  double unrounded = 0;
  for (size_t k = 0; k < x.size(); ++k) unrounded += static_cast<double>(x[k]) * y[k];
  EXPECT_NE(static_cast<double>(acc), unrounded);  // the case does tell the two apart
}

TEST(PrimEval, HalfPrecisionTiesRoundToEven) {
  // IEEE binary16: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 (even: 1);
  // 1 + 3 * 2^-11 halfway between 1 + 2^-10 and 1 + 2^-9 (even: the latter).
  // 2^-11 and 3 * 2^-11 are 0x1000 and 0x1600; 1 is 0x3c00. 65504 (0x7bff) + 8
  // stays 65504; + 16 is halfway to 65536 and so, odd 65504 losing the tie,
  // overflows to inf (0x7c00).
  const DataType f16 = DataType::float16();
  Expr add = binary_kernel("add16", f16, [](SymExpr x, SymExpr y) { return x + y; });
  runtime::Tensor out = tensor<uint16_t>({4}, f16, std::vector<uint16_t>(4));
  ASSERT_TRUE(run_prim_func(add, {tensor<uint16_t>({4}, f16, {0x3c00, 0x3c00, 0x7bff, 0x7bff}),
                                  tensor<uint16_t>({4}, f16, {0x1000, 0x1600, 0x4800, 0x4c00}), out})
                  .ok());
  EXPECT_EQ(values_of<uint16_t>(out), (std::vector<uint16_t>{0x3c00, 0x3c02, 0x7bff, 0x7c00}));
  // bfloat16: 1 + 2^-8 ties to 1 (0x3f80); 1 + 3 * 2^-8 to 1 + 2^-6 (0x3f82).
  const DataType bf16 = DataType::bfloat16();
  Expr addb = binary_kernel("addb", bf16, [](SymExpr x, SymExpr y) { return x + y; });
  runtime::Tensor outb = tensor<uint16_t>({2}, bf16, std::vector<uint16_t>(2));
  ASSERT_TRUE(run_prim_func(addb, {tensor<uint16_t>({2}, bf16, {0x3f80, 0x3f80}),
                                   tensor<uint16_t>({2}, bf16, {0x3b80, 0x3c40}), outb})
                  .ok());
  EXPECT_EQ(values_of<uint16_t>(outb), (std::vector<uint16_t>{0x3f80, 0x3f82}));
}

TEST(PrimEval, HalfPrecisionIsComputedAsFloat32AndRoundedOnStore) {
  // As the generated code computes: (a * a) / b keeps the float32 product 90000,
  // beyond float16's 65504, and stores 300 exactly; rounding each operation to
  // float16 would give inf / 300 = inf. A cast to float16 inside rounds.
  const DataType f16 = DataType::float16();
  Expr wide = binary_kernel("wide", f16, [](SymExpr x, SymExpr y) { return x * x / y; });
  runtime::Tensor out = tensor<uint16_t>({1}, f16, std::vector<uint16_t>(1));
  ASSERT_TRUE(run_prim_func(wide, {tensor<uint16_t>({1}, f16, {float16_bits(300.0)}),
                                   tensor<uint16_t>({1}, f16, {float16_bits(300.0)}), out})
                  .ok());
  EXPECT_EQ(float16_value(values_of<uint16_t>(out)[0]), 300.0);
  Expr narrowed = binary_kernel("narrowed", f16, [&](SymExpr x, SymExpr y) { return cast(f16, x * x) / y; });
  ASSERT_TRUE(run_prim_func(narrowed, {tensor<uint16_t>({1}, f16, {float16_bits(300.0)}),
                                       tensor<uint16_t>({1}, f16, {float16_bits(300.0)}), out})
                  .ok());
  EXPECT_EQ(values_of<uint16_t>(out)[0], 0x7c00);  // inf
  // bfloat16 likewise: 1 + 2^-9 + 2^-9 in float32 is 1 + 2^-8, a bfloat16 tie
  // stored as 1; but each sum kept in float32 first: (a + b) + b = 1 + 2^-8.
  const DataType bf16 = DataType::bfloat16();
  Expr sum3 = binary_kernel("sum3", bf16, [](SymExpr x, SymExpr y) { return x + y + y; });
  runtime::Tensor outb = tensor<uint16_t>({1}, bf16, std::vector<uint16_t>(1));
  // 1 + 3 * 2^-9: per-op bfloat16 rounding would give 1 (1 + 2^-9 rounds to 1, twice);
  // in float32 it is 1 + 1.5 * 2^-8, stored as 1 + 2^-7 (0x3f81).
  ASSERT_TRUE(run_prim_func(sum3, {tensor<uint16_t>({1}, bf16, {0x3f80}),
                                   tensor<uint16_t>({1}, bf16, {bfloat16_bits(std::ldexp(1.0, -9) * 1.5)}),
                                   outb})
                  .ok());
  EXPECT_EQ(values_of<uint16_t>(outb)[0], 0x3f81);
}

TEST(PrimEval, IntrinsicsOfTheTableEvaluate) {
  Expr unpack = binary_kernel("unpack", u8, [](SymExpr x, SymExpr y) {
    return bitwise_or(shift_left(bitwise_and(x, 15), 4), shift_right(y, 4));
  });
  runtime::Tensor out = tensor<uint8_t>({2}, u8, std::vector<uint8_t>(2));
  ASSERT_TRUE(run_prim_func(unpack, {tensor<uint8_t>({2}, u8, {0xAB, 0x0F}), tensor<uint8_t>({2}, u8, {0xCD, 0xF0}), out})
                  .ok());
  EXPECT_EQ(values_of<uint8_t>(out), (std::vector<uint8_t>{0xBC, 0xFF}));
  Expr rounding = binary_kernel("rounding", f32, [](SymExpr x, SymExpr y) {
    return round(x) + floor(y) * 10.0 + select(isnan(x * 0.0), SymExpr::float_imm(1000, f32), SymExpr::float_imm(0, f32)) + trunc(-x) * 100.0;
  });
  runtime::Tensor outf = tensor<float>({3}, f32, std::vector<float>(3));
  ASSERT_TRUE(run_prim_func(rounding, {tensor<float>({3}, f32, {2.5f, -0.5f, INFINITY}),
                                       tensor<float>({3}, f32, {-1.5f, 1.5f, 0.0f}), outf})
                  .ok());
  // round(2.5) = 2, floor(-1.5) = -2, trunc(-2.5) = -2; round(-0.5) = -0, floor(1.5) = 1, trunc(0.5) = 0;
  // inf * 0 is NaN.
  EXPECT_EQ(values_of<float>(outf)[0], 2.0f - 20.0f - 200.0f);
  EXPECT_EQ(values_of<float>(outf)[1], 10.0f);
  EXPECT_TRUE(std::isnan(values_of<float>(outf)[2]) || values_of<float>(outf)[2] > 999.0f);
  Expr shift = binary_kernel("shift", i32, [](SymExpr x, SymExpr y) { return shift_left(x, y); });
  runtime::Tensor outs = tensor<int32_t>({1}, i32, std::vector<int32_t>(1));
  const absl::Status s = run_prim_func(shift, {tensor<int32_t>({1}, i32, {1}), tensor<int32_t>({1}, i32, {32}), outs});
  EXPECT_THAT(s.message(), HasSubstr("int32 shift count out of range in `shift_left("));
}

TEST(PrimEval, BoolBuffersAndFloat64) {
  SymVar n("n");
  PrimFuncBuilder b("cmp");
  Buffer a = b.buffer_param("A", {n}, f64);
  Buffer out = b.buffer_param("B", {n}, DataType::boolean());
  b.for_("i", 0, n, [&](SymVar i) { b.store(out, {i}, buffer_load(a, {i}) > 0.1); });
  Expr kernel = build(b);
  runtime::Tensor o = tensor<uint8_t>({3}, DataType::boolean(), {7, 7, 7});
  ASSERT_TRUE(run_prim_func(kernel, {tensor<double>({3}, f64, {0.1, 0.10000000000000002, -1}), o}).ok());
  EXPECT_EQ(values_of<uint8_t>(o), (std::vector<uint8_t>{0, 1, 0}));
}

TEST(PrimEval, ReadsStridedTensorsByTheirStrides) {
  Expr add = binary_kernel("add", i32, [](SymExpr x, SymExpr y) { return x + y; });
  std::vector<int32_t> storage = {1, -1, 2, -1, 3, -1};  // every other element
  runtime::Tensor strided = runtime::Tensor::borrow(storage.data(), {3}, i32, {2});
  runtime::Tensor out = tensor<int32_t>({3}, i32, {0, 0, 0});
  ASSERT_TRUE(run_prim_func(add, {strided, tensor<int32_t>({3}, i32, {10, 20, 30}), out}).ok());
  EXPECT_EQ(values_of<int32_t>(out), (std::vector<int32_t>{11, 22, 33}));
}

TEST(PrimEval, RunsReductionsWithInitOncePerOutput) {
  SymVar n("n");
  PrimFuncBuilder b("row_sum");
  Buffer a = b.buffer_param("A", {n, 3}, f32);
  Buffer out = b.buffer_param("B", {n}, f32);
  b.for_("i", 0, n, [&](SymVar i) {
    b.for_("k", 0, 3, [&](SymVar k) {
      b.block(
          "sum", {PrimFuncBuilder::spatial(n, i), PrimFuncBuilder::reduce(3, k)},
          [&](const std::vector<SymVar>& v) { b.store(out, {v[0]}, 0); },
          [&](const std::vector<SymVar>& v) {
            b.store(out, {v[0]}, buffer_load(out, {v[0]}) + buffer_load(a, {v[0], v[1]}));
          });
    });
  });
  Expr kernel = build(b);
  runtime::Tensor y = tensor<float>({2}, f32, {100, 100});
  ASSERT_TRUE(run_prim_func(kernel, {tensor<float>({2, 3}, f32, {1, 2, 3, 4, 5, 6}), y}).ok());
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{6, 15}));
}

TEST(PrimEval, ScalarParametersAndLetAndAllocate) {
  SymVar n("n");
  PrimFuncBuilder b("scaled");
  Buffer a = b.buffer_param("A", {n}, f32);
  SymVar s = b.scalar_param("s", f32);
  Buffer c = b.buffer_param("C", {n}, f32);
  Buffer t = b.allocate("T", {n}, f32);
  b.for_("i", 0, n, [&](SymVar i) { b.store(t, {i}, buffer_load(a, {i}) * s); });
  b.for_("i", 0, n, [&](SymVar i) {
    SymVar twice = b.let("twice", buffer_load(t, {i}) * 2.0);
    b.store(c, {i}, twice + 1.0);
  });
  Expr kernel = build(b);
  runtime::Tensor out = tensor<float>({2}, f32, {0, 0});
  ASSERT_TRUE(run_prim_func(kernel, {tensor<float>({2}, f32, {1.5f, -2}), PrimScalar::from_float(0.5, f32), out}).ok());
  EXPECT_EQ(values_of<float>(out), (std::vector<float>{2.5f, -1.0f}));
}

// ---------------------------------------------------------------------------
// Errors.

TEST(PrimEval, ReportsOutOfBoundsAccessAndIterVarsOutsideTheirExtent) {
  SymVar n("n");
  PrimFuncBuilder b("bad");
  Buffer a = b.buffer_param("A", {n}, f32);
  b.for_("i", 0, n + 1, [&](SymVar i) { b.store(a, {i}, SymExpr::float_imm(1.0, f32)); });
  Expr bad = build(b);
  runtime::Tensor x = tensor<float>({3}, f32, {0, 0, 0});
  EXPECT_EQ(run_prim_func(bad, {x}).message(),
            "@bad: in `A[i] = 1f32`: index [3] is out of bounds of `A` (shape (3,))");

  PrimFuncBuilder c("bad_block");
  Buffer a2 = c.buffer_param("A", {n}, f32);
  c.for_("i", 0, n, [&](SymVar i) {
    c.block("b", {PrimFuncBuilder::spatial(n - 1, i)},
            [&](const std::vector<SymVar>& v) { c.store(a2, {v[0]}, 0); });
  });
  EXPECT_THAT(std::string(run_prim_func(build(c), {x}).message()),
              HasSubstr("@bad_block: in `block b`: `vi` = 2 is outside [0, 2)"));
}

TEST(PrimEval, DivisionByZeroNamesTheBlockAndStatement) {
  SymVar n("n");
  PrimFuncBuilder b("divide");
  Buffer a = b.buffer_param("A", {n}, i64);
  Buffer c = b.buffer_param("C", {n}, i64);
  b.for_("i", 0, n, [&](SymVar i) {
    b.block("d", {PrimFuncBuilder::spatial(n, i)}, [&](const std::vector<SymVar>& v) {
      b.store(c, {v[0]}, floordiv(7, buffer_load(a, {v[0]})));
    });
  });
  absl::Status s = run_prim_func(build(b), {tensor<int64_t>({2}, i64, {1, 0}),
                                            tensor<int64_t>({2}, i64, {0, 0})});
  EXPECT_EQ(s.message(),
            "@divide: block `d`: in `C[vi] = floordiv(7, A[vi])`: division by zero in "
            "`floordiv(7, A[vi])`");
}

TEST(PrimEval, ArgumentsThatDoNotFitTheParameters) {
  Expr add = binary_kernel("add", f32, [](SymExpr x, SymExpr y) { return x + y; });
  runtime::Tensor two = tensor<float>({2}, f32, {1, 2});
  runtime::Tensor three = tensor<float>({3}, f32, {1, 2, 3});
  EXPECT_EQ(run_prim_func(add, {two, three, two}).message(),
            "@add: argument 1 (`B`): expected shape (n,), got (3,) (dim 0 is 3, `n` is 2)");
  EXPECT_EQ(run_prim_func(add, {two, two}).message(), "@add: expected 3 arguments, got 2");
  EXPECT_EQ(run_prim_func(add, {two, tensor<double>({2}, f64, {1, 2}), two}).message(),
            "@add: argument 1 (`B`): expected dtype float32, got float64");
  EXPECT_EQ(run_prim_func(add, {two, PrimScalar::from_float(1.0, f32), two}).message(),
            "@add: argument 1 (`B`): expected a tensor, got a scalar");
  EXPECT_EQ(run_prim_func(add, {two, tensor<float>({1, 2}, f32, {1, 2}), two}).message(),
            "@add: argument 1 (`B`): expected rank 1, got shape (1, 2)");
}

TEST(PrimEval, InputsAreReadOnlyAndOutputsMustBeWrittenBeforeRead) {
  SymVar n("n");
  PrimFuncBuilder b("acc");
  Buffer a = b.buffer_param("A", {n}, f32);
  Buffer c = b.buffer_param("C", {n}, f32);
  b.for_("i", 0, n, [&](SymVar i) { b.store(c, {i}, buffer_load(c, {i}) + buffer_load(a, {i})); });
  Expr kernel = build(b);
  runtime::Tensor x = tensor<float>({2}, f32, {1, 2});
  runtime::Tensor y = tensor<float>({2}, f32, {1, 2});
  PrimEvalOptions options;
  options.access = {BufferAccess::kInput, BufferAccess::kOutput};
  EXPECT_EQ(run_prim_func(kernel, {x, y}, options).message(),
            "@acc: in `C[i] = C[i] + A[i]`: `C[0]` is read before it is written");
  options.access = {BufferAccess::kReadWrite, BufferAccess::kReadWrite};
  ASSERT_TRUE(run_prim_func(kernel, {x, y}, options).ok());  // in/out: reads what is there
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{2, 4}));

  options.access = {BufferAccess::kInput, BufferAccess::kInput};
  EXPECT_EQ(run_prim_func(kernel, {x, y}, options).message(),
            "@acc: in `C[i] = C[i] + A[i]`: `C` is an input and is not written");
}

TEST(PrimEval, AnOutputElementNeverWrittenIsAnError) {
  SymVar n("n");
  PrimFuncBuilder b("half");
  Buffer c = b.buffer_param("C", {n}, i32);
  b.for_("i", 0, n - 1, [&](SymVar i) { b.store(c, {i}, 1); });
  Expr kernel = build(b);
  PrimEvalOptions options;
  options.access = {BufferAccess::kOutput};
  EXPECT_EQ(run_prim_func(kernel, {tensor<int32_t>({3}, i32, {0, 0, 0})}, options).message(),
            "@half: the output `C[2]` is never written");
  EXPECT_TRUE(run_prim_func(kernel, {tensor<int32_t>({3}, i32, {0, 0, 0})}).ok());
}

TEST(PrimEval, StopsAfterMaxSteps) {
  Expr add = binary_kernel("add", f32, [](SymExpr x, SymExpr y) { return x + y; });
  runtime::Tensor big = tensor<float>({100}, f32, std::vector<float>(100));
  PrimEvalOptions options;
  options.max_steps = 50;
  absl::Status s = run_prim_func(add, {big, big, big}, options);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("@add: more than 50 steps"));
  options.max_steps = 1000;
  EXPECT_TRUE(run_prim_func(add, {big, big, big}, options).ok());
}

TEST(PrimEval, FloatCastOutOfRangeIsAnError) {
  SymVar x("x", f32);
  absl::StatusOr<PrimScalar> v =
      evaluate_scalar(cast(u8, x), {{x, PrimScalar::from_float(256.5, f32)}});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "the cast of 256.5f32 to uint8 is out of range in `cast<uint8>(x)`");
  v = evaluate_scalar(cast(u8, x), {{x, PrimScalar::from_float(255.9, f32)}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->int_value(), 255);
}

// ---------------------------------------------------------------------------
// The 16-bit formats (relax/support/float_format.h).

TEST(FloatFormat, EveryHalfAndBfloatPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    const double h = float16_value(b);
    if (std::isnan(h)) {
      EXPECT_EQ(float16_bits(h), 0x7e00);
    } else {
      ASSERT_EQ(float16_bits(h), b) << std::hex << bits;
    }
    const double bf = bfloat16_value(b);
    if (std::isnan(bf)) {
      EXPECT_EQ(bfloat16_bits(bf), 0x7fc0);
    } else {
      ASSERT_EQ(bfloat16_bits(bf), b) << std::hex << bits;
    }
  }
  // Known values: the largest finite float16, its smallest subnormal, bfloat16 1.
  EXPECT_EQ(float16_value(0x7bff), 65504.0);
  EXPECT_EQ(float16_value(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(bfloat16_value(0x3f80), 1.0);
}

TEST(FloatFormat, RoundingAgreesWithTheShapeLayersConstants) {
  // SymExpr::float_imm rounds to its dtype with the shape layer's own code.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-2.0, 2.0);
  std::uniform_int_distribution<int> exponent(-30, 20);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::ldexp(mantissa(rng), exponent(rng));
    for (DataType t : {DataType::float16(), DataType::bfloat16(), DataType::float32()}) {
      ASSERT_EQ(round_to_dtype(v, t), *SymExpr::float_imm(v, t).as_float()) << v << " " << t;
    }
  }
}

}  // namespace
}  // namespace relax::transform
