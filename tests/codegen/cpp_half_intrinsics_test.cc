// Compiled kernels for the intrinsics added with the intrinsic table (sin ...
// shift_right), casts between every pair of dtypes, and float16/bfloat16
// buffers (16-bit storage, float32 arithmetic, rounding to nearest even on
// store). References are plain C++ written here; the loop-level evaluator
// (relax/transform/prim_eval.h) is run on the same PrimFuncs and must agree
// with the compiled kernels bit for bit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "codegen_test_util.h"
#include "relax/support/half_float.h"
#include "relax/transform/prim_eval.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using testing::JitTest;
using testing::KernelArgs;

constexpr DataType kF16 = DataType::float16();
constexpr DataType kBF16 = DataType::bfloat16();
constexpr DataType kHalfTestF32 = DataType::float32();
constexpr DataType kHalfTestF64 = DataType::float64();
constexpr DataType kHalfTestI32 = DataType::int32();
constexpr DataType kHalfTestI64 = DataType::int64();
constexpr DataType kHalfTestU8{DataType::Code::kUInt, 8, 1};
constexpr DataType kHalfTestI8{DataType::Code::kInt, 8, 1};
constexpr DataType kHalfTestU64{DataType::Code::kUInt, 64, 1};
constexpr DataType kHalfTestBool = DataType::boolean();

/// Raw element storage of any dtype, for the kernel and the evaluator alike.
struct Raw {
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  Raw(DataType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    bytes.assign(static_cast<size_t>(n) * (t.is_bool() ? 1 : t.bits / 8), 0xcd);
  }
  template <typename T>
  T at(size_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <typename T>
  void set(size_t i, T v) {
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
  runtime::Tensor tensor() { return runtime::Tensor::borrow(bytes.data(), shape, dtype); }
};

/// Calls `fn` on `args`, then the evaluator on copies of the same inputs; when
/// `exact`, expects the two to have written the same bytes into every buffer.
/// Returns the evaluator's buffers. (Transcendental functions may differ in the
/// last bit: the kernel calls the float ones, the evaluator the double ones.)
std::vector<Raw> run_both(RelaxKernelFn fn, const Expr& func, std::vector<Raw*> args, bool exact = true) {
  std::vector<Raw> copies;
  for (Raw* a : args) copies.push_back(*a);
  KernelArgs kernel_args;
  for (Raw* a : args) kernel_args.buffer(a->bytes.data(), a->dtype, a->shape);
  EXPECT_EQ(kernel_args.call(fn), "");
  std::vector<transform::PrimArg> eval_args;
  for (Raw& c : copies) eval_args.push_back(c.tensor());
  const absl::Status s = transform::run_prim_func(func, eval_args);
  EXPECT_TRUE(s.ok()) << s;
  for (size_t k = 0; k < args.size() && exact; ++k) {
    EXPECT_EQ(args[k]->bytes, copies[k].bytes) << "argument " << k << ": kernel and evaluator differ";
  }
  return copies;
}

class HalfKernelTest : public JitTest {
 public:
  using JitTest::last_source_;
  /// Builds, compiles and loads `b`, keeping the PrimFunc for the evaluator.
  RelaxKernelFn compile(const PrimFuncBuilder& b, const std::string& name) {
    func_ = build(b);
    std::shared_ptr<const runtime::KernelLibrary> lib = jit({{name, func_}});
    if (lib == nullptr) return nullptr;
    libraries_.push_back(lib);
    absl::StatusOr<RelaxKernelFn> fn = lib->find(name);
    return fn.ok() ? *fn : nullptr;
  }
  Expr func_;
};

// ---------------------------------------------------------------------------
// The new float intrinsics.

/// Round half to even, written independently of nearbyint.
double round_half_even(double x) {
  const double f = std::floor(x);
  const double d = x - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

template <typename T>
void check_float_intrinsics(HalfKernelTest& test, DataType t) {
  SymVar n("n");
  PrimFuncBuilder b("fi");
  Buffer X = b.buffer_param("X", {n}, t);
  Buffer Y = b.buffer_param("Y", {8, n}, t);
  b.for_("i", 0, n, [&](SymVar i) {
    SymExpr x = buffer_load(X, {i});
    const SymExpr one = SymExpr::float_imm(1, t), zero = SymExpr::float_imm(0, t);
    const std::vector<SymExpr> values = {sin(x),   cos(x),  floor(x),
                                         ceil(x),  round(x), trunc(x),
                                         select(isnan(x), one, zero), select(isinf(x), one, zero)};
    for (size_t f = 0; f < values.size(); ++f) b.store(Y, {static_cast<int64_t>(f), i}, values[f]);
  });
  RelaxKernelFn fn = test.compile(b, "fi");
  ASSERT_NE(fn, nullptr);
  const std::vector<T> xs = {0.5,  1.5,  2.5,  -0.5, -2.5, 3.5,  -1.25, 2.75, 0.0,
                             -0.0, 1e6 + 0.5, std::numeric_limits<T>::infinity(),
                             -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()};
  const int64_t count = static_cast<int64_t>(xs.size());
  Raw x(t, {count}), y(t, {8, count});
  for (size_t k = 0; k < xs.size(); ++k) x.set<T>(k, xs[k]);
  const std::vector<Raw> evaluated = run_both(fn, test.func_, {&x, &y}, /*exact=*/false);
  const double tolerance = sizeof(T) == 4 ? 2e-7 : 1e-15;
  // Everything but sin and cos agrees with the evaluator bit for bit.
  const size_t row_bytes = xs.size() * sizeof(T);
  EXPECT_TRUE(std::equal(y.bytes.begin() + 2 * row_bytes, y.bytes.end(), evaluated[1].bytes.begin() + 2 * row_bytes));
  for (size_t k = 0; k < xs.size(); ++k) {
    const double v = xs[k];
    auto got = [&](size_t f) { return static_cast<double>(y.at<T>(f * xs.size() + k)); };
    if (std::isfinite(v)) {
      EXPECT_NEAR(got(0), std::sin(v), tolerance * 4) << v;
      EXPECT_NEAR(got(1), std::cos(v), tolerance * 4) << v;
    }
    auto same = [](double p, double q) { return (std::isnan(p) && std::isnan(q)) || p == q; };
    EXPECT_TRUE(same(got(2), std::floor(v))) << v << " floor " << got(2);
    EXPECT_TRUE(same(got(3), std::ceil(v))) << v << " ceil " << got(3);
    EXPECT_TRUE(same(got(4), std::isfinite(v) ? round_half_even(v) : v)) << v << " round " << got(4);
    EXPECT_TRUE(same(got(5), std::trunc(v))) << v << " trunc " << got(5);
    EXPECT_EQ(got(6), std::isnan(v) ? 1.0 : 0.0) << v;
    EXPECT_EQ(got(7), std::isinf(v) ? 1.0 : 0.0) << v;
  }
  // -0.5 rounds to -0 (the sign kept), as numpy's round.
  EXPECT_TRUE(std::signbit(y.at<T>(4 * xs.size() + 3)));
}

TEST_F(HalfKernelTest, NewFloatIntrinsicsFloat32) {
  check_float_intrinsics<float>(*this, kHalfTestF32);
  EXPECT_THAT(last_source_, HasSubstr("std::nearbyint("));
}

TEST_F(HalfKernelTest, NewFloatIntrinsicsFloat64) { check_float_intrinsics<double>(*this, kHalfTestF64); }

// ---------------------------------------------------------------------------
// Bitwise intrinsics and shifts.

TEST_F(HalfKernelTest, Int4UnpackingWithShiftsAndMasks) {
  // Lo[i, 2k] = low nibble of P[i, k] - 8, Lo[i, 2k + 1] = high nibble - 8 (int32).
  SymVar n("n");
  PrimFuncBuilder b("unpack");
  Buffer P = b.buffer_param("P", {n}, kHalfTestU8);
  Buffer Q = b.buffer_param("Q", {n * 2}, kHalfTestI32);
  b.for_("k", 0, n, [&](SymVar k) {
    const SymExpr byte = buffer_load(P, {k});
    b.store(Q, {k * 2}, cast(kHalfTestI32, bitwise_and(byte, 15)) - 8);
    b.store(Q, {k * 2 + 1}, cast(kHalfTestI32, bitwise_and(shift_right(byte, 4), 15)) - 8);
  });
  RelaxKernelFn fn = compile(b, "unpack");
  ASSERT_NE(fn, nullptr);
  Raw p(kHalfTestU8, {256}), q(kHalfTestI32, {512});
  for (size_t k = 0; k < 256; ++k) p.set<uint8_t>(k, static_cast<uint8_t>(k));
  run_both(fn, func_, {&p, &q});
  for (size_t k = 0; k < 256; ++k) {
    ASSERT_EQ(q.at<int32_t>(2 * k), static_cast<int32_t>(k & 15) - 8) << k;
    ASSERT_EQ(q.at<int32_t>(2 * k + 1), static_cast<int32_t>(k >> 4) - 8) << k;
  }
}

template <typename T>
void check_bitwise(HalfKernelTest& test, DataType t) {
  SymVar n("n");
  PrimFuncBuilder b("bits");
  Buffer A = b.buffer_param("A", {n}, t);
  Buffer S = b.buffer_param("S", {n}, t);
  Buffer Y = b.buffer_param("Y", {6, n}, t);
  b.for_("i", 0, n, [&](SymVar i) {
    SymExpr a = buffer_load(A, {i}), s = buffer_load(S, {i});
    const std::vector<SymExpr> values = {bitwise_and(a, s), bitwise_or(a, s), bitwise_xor(a, s),
                                         bitwise_not(a),    shift_left(a, s), shift_right(a, s)};
    for (size_t f = 0; f < values.size(); ++f) b.store(Y, {static_cast<int64_t>(f), i}, values[f]);
  });
  RelaxKernelFn fn = test.compile(b, "bits");
  ASSERT_NE(fn, nullptr);
  const int bits = static_cast<int>(sizeof(T) * 8);
  std::vector<T> as, ss;
  for (T a : {T(0), T(1), T(5), T(-1), T(-100), std::numeric_limits<T>::max(), std::numeric_limits<T>::min(),
              T(0x5a)}) {
    for (int s : {0, 1, 3, bits - 1}) {
      as.push_back(a);
      ss.push_back(static_cast<T>(s));
    }
  }
  const int64_t count = static_cast<int64_t>(as.size());
  Raw ra(t, {count}), rs(t, {count}), y(t, {6, count});
  for (size_t k = 0; k < as.size(); ++k) {
    ra.set<T>(k, as[k]);
    rs.set<T>(k, ss[k]);
  }
  run_both(fn, test.func_, {&ra, &rs, &y});
  using U = std::make_unsigned_t<T>;
  for (size_t k = 0; k < as.size(); ++k) {
    const T a = as[k];
    const int s = static_cast<int>(ss[k]);
    auto got = [&](size_t f) { return y.at<T>(f * as.size() + k); };
    EXPECT_EQ(got(0), static_cast<T>(a & ss[k]));
    EXPECT_EQ(got(1), static_cast<T>(a | ss[k]));
    EXPECT_EQ(got(2), static_cast<T>(a ^ ss[k]));
    EXPECT_EQ(got(3), static_cast<T>(~a));
    EXPECT_EQ(got(4), static_cast<T>(static_cast<U>(static_cast<U>(a) << s))) << +a << " << " << s;
    // Arithmetic for signed T (floor division by 2^s), logical for unsigned.
    const T shr = a >= 0 ? static_cast<T>(a >> s) : static_cast<T>(~(static_cast<T>(~a) >> s));
    EXPECT_EQ(got(5), shr) << +a << " >> " << s;
  }
}

TEST_F(HalfKernelTest, BitwiseAndShiftsInt8) { check_bitwise<int8_t>(*this, kHalfTestI8); }
TEST_F(HalfKernelTest, BitwiseAndShiftsUint8) { check_bitwise<uint8_t>(*this, kHalfTestU8); }
TEST_F(HalfKernelTest, BitwiseAndShiftsInt32) { check_bitwise<int32_t>(*this, kHalfTestI32); }
TEST_F(HalfKernelTest, BitwiseAndShiftsInt64) { check_bitwise<int64_t>(*this, kHalfTestI64); }

// ---------------------------------------------------------------------------
// Casts between every pair of dtypes, compiled and evaluated.

TEST_F(HalfKernelTest, CastsBetweenEveryPairAgreeWithTheEvaluator) {
  const std::vector<DataType> dtypes = {kHalfTestBool, kHalfTestI8, kHalfTestU8, kHalfTestI32, kHalfTestI64, kHalfTestU64, kF16, kBF16, kHalfTestF32, kHalfTestF64};
  // Values every dtype holds and every float converts back into every integer
  // dtype without leaving its range (a float cast out of range is undefined).
  const std::vector<double> values = {0, 1, 2.75, 100.5, 127, 3, 77.25, 1};
  std::vector<std::pair<std::string, Expr>> funcs;
  std::vector<std::pair<DataType, DataType>> pairs;
  for (DataType from : dtypes) {
    for (DataType to : dtypes) {
      PrimFuncBuilder b("cast");
      Buffer X = b.buffer_param("X", {8}, from);
      Buffer Y = b.buffer_param("Y", {8}, to);
      b.for_("i", 0, 8, [&](SymVar i) { b.store(Y, {i}, cast(to, buffer_load(X, {i}))); });
      funcs.emplace_back("cast_" + from.to_string() + "_" + to.to_string(), build(b));
      pairs.emplace_back(from, to);
    }
  }
  std::shared_ptr<const runtime::KernelLibrary> lib = jit(funcs);
  ASSERT_NE(lib, nullptr);
  for (size_t p = 0; p < funcs.size(); ++p) {
    const auto [from, to] = pairs[p];
    SCOPED_TRACE(funcs[p].first);
    Raw x(from, {8}), y(to, {8});
    // The input values, written through a float64 kernel-free path: the evaluator's own
    // scalar conversion of each constant to `from`.
    for (size_t k = 0; k < values.size(); ++k) {
      const SymExpr c = from.is_bool() ? SymExpr::boolean(values[k] != 0)
                        : from.is_float() ? SymExpr::float_imm(values[k], from)
                                          : SymExpr::int_imm(static_cast<int64_t>(values[k]), from);
      absl::StatusOr<transform::PrimScalar> s = transform::evaluate_scalar(c, {});
      ASSERT_TRUE(s.ok()) << s.status();
      const size_t size = from.is_bool() ? 1 : from.bits / 8;
      if (from.is_bool()) {
        x.set<uint8_t>(k, static_cast<uint8_t>(s->int_value() != 0));
      } else if (from == kF16) {
        x.set<uint16_t>(k, float16_bits(s->float_value()));
      } else if (from == kBF16) {
        x.set<uint16_t>(k, bfloat16_bits(s->float_value()));
      } else if (from == kHalfTestF32) {
        x.set<float>(k, static_cast<float>(s->float_value()));
      } else if (from == kHalfTestF64) {
        x.set<double>(k, s->float_value());
      } else {
        const int64_t v = s->int_value();
        std::memcpy(x.bytes.data() + k * size, &v, size);  // little-endian low bytes
      }
    }
    absl::StatusOr<RelaxKernelFn> fn = lib->find(funcs[p].first);
    ASSERT_TRUE(fn.ok()) << fn.status();
    run_both(*fn, funcs[p].second, {&x, &y});
    // Spot checks against plain C++: float -> int truncates toward zero.
    if (from.is_float() && to == kHalfTestI32) {
      EXPECT_EQ(y.at<int32_t>(2), 2);
    }
    if (from.is_float() && to == kHalfTestI8) {
      EXPECT_EQ(y.at<int8_t>(3), 100);
    }
    if (from.is_float() && to == kHalfTestBool) {
      EXPECT_EQ(y.at<uint8_t>(0), 0);
    }
    if (from.is_float() && to == kHalfTestBool) {
      EXPECT_EQ(y.at<uint8_t>(2), 1);
    }
    if (from == kHalfTestF32 && to == kF16) {
      EXPECT_EQ(y.at<uint16_t>(6), 0x54d4);  // 77.25 exactly
    }
    if (from == kHalfTestI32 && to == kBF16) {
      EXPECT_EQ(y.at<uint16_t>(4), 0x42fe);  // 127
    }
  }
}

// ---------------------------------------------------------------------------
// float16 and bfloat16 buffers.

double f16(uint16_t b) { return float16_value(b); }
double bf16(uint16_t b) { return bfloat16_value(b); }

TEST_F(HalfKernelTest, RoundingOnStoreTiesNanAndInfinity) {
  // Y16[i] = cast<float16>(X[i]) and Yb[i] = cast<bfloat16>(X[i]) from float32.
  PrimFuncBuilder b("narrow");
  Buffer X = b.buffer_param("X", {12}, kHalfTestF32);
  Buffer Y16 = b.buffer_param("Y16", {12}, kF16);
  Buffer Yb = b.buffer_param("Yb", {12}, kBF16);
  b.for_("i", 0, 12, [&](SymVar i) {
    b.store(Y16, {i}, cast(kF16, buffer_load(X, {i})));
    b.store(Yb, {i}, cast(kBF16, buffer_load(X, {i})));
  });
  RelaxKernelFn fn = compile(b, "narrow");
  ASSERT_NE(fn, nullptr);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {
      1.0f + std::ldexp(1.0f, -11),      // f16 tie: to even 1 (0x3c00)
      1.0f + 3 * std::ldexp(1.0f, -11),  // f16 tie: to even 1 + 2^-9 (0x3c02)
      65520.0f,                          // f16 tie between 65504 (odd) and 65536: inf
      65519.0f,                          // below the tie: 65504
      std::ldexp(1.0f, -25),             // f16 tie between 0 and the smallest subnormal: 0
      3 * std::ldexp(1.0f, -25),         // tie between 1 and 2 subnormal units: 2
      nan,
      inf,
      -inf,
      1.0f + std::ldexp(1.0f, -8),       // bf16 tie: 1 (0x3f80)
      1.0f + 3 * std::ldexp(1.0f, -8),   // bf16 tie: 0x3f82
      std::numeric_limits<float>::max(),  // bf16: rounds up to inf
  };
  Raw x(kHalfTestF32, {12}), y16(kF16, {12}), yb(kBF16, {12});
  for (size_t k = 0; k < xs.size(); ++k) x.set<float>(k, xs[k]);
  run_both(fn, func_, {&x, &y16, &yb});
  const std::vector<uint16_t> want16 = {0x3c00, 0x3c02, 0x7c00, 0x7bff, 0x0000, 0x0002,
                                        0x7e00, 0x7c00, 0xfc00, 0x3c04, 0x3c0c, 0x7c00};
  const std::vector<uint16_t> wantb = {0x3f80, 0x3f80, 0x4780, 0x4780, 0x3300, 0x33c0,
                                       0x7fc0, 0x7f80, 0xff80, 0x3f80, 0x3f82, 0x7f80};
  for (size_t k = 0; k < xs.size(); ++k) {
    EXPECT_EQ(y16.at<uint16_t>(k), want16[k]) << "float16 of " << xs[k] << " #" << k;
    EXPECT_EQ(yb.at<uint16_t>(k), wantb[k]) << "bfloat16 of " << xs[k] << " #" << k;
  }
}

/// C[i] = A[i] * B[i] + exp(A[i]) - 1 on buffers of `t`; S[r] = sum_k A[r, k].
void check_half_elementwise_and_sum(HalfKernelTest& test, DataType t, double unit) {
  const bool brain = t == kBF16;
  auto value = [&](uint16_t bits) { return brain ? bf16(bits) : f16(bits); };
  auto bits_of = [&](double v) { return brain ? bfloat16_bits(v) : float16_bits(v); };
  SymVar n("n");
  PrimFuncBuilder b("half");
  Buffer A = b.buffer_param("A", {n}, t);
  Buffer B = b.buffer_param("B", {n}, t);
  Buffer C = b.buffer_param("C", {n}, t);
  b.for_("i", 0, n, [&](SymVar i) {
    SymExpr a = buffer_load(A, {i}), bb = buffer_load(B, {i});
    b.store(C, {i}, a * bb + exp(a) - SymExpr::float_imm(1, t));
  });
  RelaxKernelFn fn = test.compile(b, "half");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(test.last_source_, HasSubstr(brain ? "relax_bfloat16_store(" : "relax_float16_store("));
  const int64_t count = 64;
  Raw ra(t, {count}), rb(t, {count}), rc(t, {count});
  for (int64_t k = 0; k < count; ++k) {
    ra.set<uint16_t>(static_cast<size_t>(k), bits_of(-2.0 + 0.0625 * static_cast<double>(k)));
    rb.set<uint16_t>(static_cast<size_t>(k), bits_of(3.0 - 0.1 * static_cast<double>(k)));
  }
  const std::vector<Raw> evaluated = run_both(fn, test.func_, {&ra, &rb, &rc}, /*exact=*/false);
  for (size_t k = 0; k < static_cast<size_t>(count); ++k) {
    // exp may differ in float32's last bit; after rounding to 16 bits, by one unit at most.
    const int kernel_bits = rc.at<uint16_t>(k), eval_bits = evaluated[2].at<uint16_t>(k);
    EXPECT_LE(std::abs(kernel_bits - eval_bits), 1) << k;
    // The reference in float32 from the same 16-bit inputs; one rounding to 16 bits on store.
    const float a = static_cast<float>(value(ra.at<uint16_t>(k)));
    const float bv = static_cast<float>(value(rb.at<uint16_t>(k)));
    const double want = static_cast<double>(a * bv + std::exp(a) - 1.0f);
    const double got = value(rc.at<uint16_t>(k));
    EXPECT_LE(std::fabs(got - want), unit * std::fabs(want) + 1e-6) << "k=" << k << " want " << want;
  }

  // A sum reduction over k with the accumulator in the 16-bit output: one
  // rounding per step, so K steps are within K units (relative to the sum of |a|).
  SymVar r("r"), K("K");
  PrimFuncBuilder s("half_sum");
  Buffer X = s.buffer_param("X", {r, K}, t);
  Buffer S = s.buffer_param("S", {r}, t);
  s.for_("i", 0, r, [&](SymVar i) {
    s.for_("k", 0, K, [&](SymVar k) {
      s.block(
          "sum", {s.spatial(r, i), s.reduce(K, k)},
          [&](const std::vector<SymVar>& v) { s.store(S, {v[0]}, SymExpr::float_imm(0, t)); },
          [&](const std::vector<SymVar>& v) { s.store(S, {v[0]}, buffer_load(S, {v[0]}) + buffer_load(X, {v[0], v[1]})); });
    });
  });
  RelaxKernelFn sum = test.compile(s, "half_sum");
  ASSERT_NE(sum, nullptr);
  for (int64_t rows : {1, 3}) {
    for (int64_t cols : {1, 17, 100}) {
      Raw x(t, {rows, cols}), out(t, {rows});
      for (int64_t q = 0; q < rows * cols; ++q) {
        x.set<uint16_t>(static_cast<size_t>(q), bits_of(std::sin(0.37 * static_cast<double>(q)) * 4.0));
      }
      run_both(sum, test.func_, {&x, &out});
      for (int64_t i = 0; i < rows; ++i) {
        float want = 0;
        float magnitude = 0;
        for (int64_t k = 0; k < cols; ++k) {
          const float v = static_cast<float>(value(x.at<uint16_t>(static_cast<size_t>(i * cols + k))));
          want += v;
          magnitude += std::fabs(v);
        }
        const double got = value(out.at<uint16_t>(static_cast<size_t>(i)));
        EXPECT_LE(std::fabs(got - want), unit * static_cast<double>(cols) * magnitude + 1e-6)
            << rows << "x" << cols << " row " << i;
      }
    }
  }
}

TEST_F(HalfKernelTest, Float16ElementwiseAndSum) {
  check_half_elementwise_and_sum(*this, kF16, std::ldexp(1.0, -11));
}

TEST_F(HalfKernelTest, BFloat16ElementwiseAndSum) {
  check_half_elementwise_and_sum(*this, kBF16, std::ldexp(1.0, -8));
}

TEST_F(HalfKernelTest, HalfValuesAreComputedAsFloat32) {
  // (a * b) / b in float32 keeps a product that float16 would overflow:
  // 300 * 300 = 90000 > 65504, yet (300 * 300) / 300 stores 300 exactly.
  PrimFuncBuilder b("wide");
  Buffer A = b.buffer_param("A", {1}, kF16);
  Buffer C = b.buffer_param("C", {1}, kF16);
  SymExpr a = buffer_load(A, {0});
  b.store(C, {0}, a * a / a);
  RelaxKernelFn fn = compile(b, "wide");
  ASSERT_NE(fn, nullptr);
  Raw ra(kF16, {1}), rc(kF16, {1});
  ra.set<uint16_t>(0, float16_bits(300.0));
  run_both(fn, func_, {&ra, &rc});
  EXPECT_EQ(f16(rc.at<uint16_t>(0)), 300.0);
}

TEST_F(HalfKernelTest, WideIntegersRoundOnceToBFloat16) {
  // 2^60 + 2^52 + 1 is just above the bfloat16 tie 2^60 + 2^52 (halfway
  // between 2^60 and 2^60 + 2^53): rounding once gives the upper neighbour;
  // rounding to double first (to 2^60 + 2^52, a tie) and then to bfloat16
  // would give the even lower one.
  PrimFuncBuilder b("wide_int");
  Buffer X = b.buffer_param("X", {2}, kHalfTestI64);
  Buffer Y = b.buffer_param("Y", {2}, kBF16);
  b.for_("i", 0, 2, [&](SymVar i) { b.store(Y, {i}, cast(kBF16, buffer_load(X, {i}))); });
  RelaxKernelFn fn = compile(b, "wide_int");
  ASSERT_NE(fn, nullptr);
  Raw x(kHalfTestI64, {2}), y(kBF16, {2});
  x.set<int64_t>(0, (int64_t{1} << 60) + (int64_t{1} << 52) + 1);
  x.set<int64_t>(1, -((int64_t{1} << 60) + (int64_t{1} << 52) + 1));
  run_both(fn, func_, {&x, &y});
  EXPECT_EQ(bf16(y.at<uint16_t>(0)), std::ldexp(1.0, 60) + std::ldexp(1.0, 53));
  EXPECT_EQ(bf16(y.at<uint16_t>(1)), -(std::ldexp(1.0, 60) + std::ldexp(1.0, 53)));
}

}  // namespace
}  // namespace relax
