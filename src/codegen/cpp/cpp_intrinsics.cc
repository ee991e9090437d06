// How the C++ code generator spells each intrinsic and each SymKind (cpp_codegen_impl.h:
// cpp_intrinsic, cpp_sym_kind).
//
// One row per Intrinsic, in enumerator order, checked at compile time against kNumIntrinsics:
// a new intrinsic does not build until it has its row here (and in the CUDA generator's
// table). A spelling is a template: `$0`..`$2` are the operands, `$T` the C++ type of the
// computation ("float", "double", "int32_t", ...), `$O` the constant one of that type ("1.0f",
// "1.0"); a template that is not a single call is parenthesized as a whole. exp, log, sigmoid,
// tanh, erf, sin and cos are relax/support/kernel_math.h's vectorisable functions (copied into
// every generated unit); the integer helpers (relax_abs, relax_shift_left, ...) are the
// generated code's prelude.
#include <iterator>

#include "codegen/cpp/cpp_codegen_impl.h"

namespace relax::cpp_codegen {
namespace {

// op, over float operands, over integer operands; then the CUDA device overloads of a float
// intrinsic (the CUDA prelude defines relax_<name> over float and over double from them): the
// parameters, the float body, the double body, and whether it returns bool.
constexpr CppIntrinsic kCppIntrinsics[] = {
    {Intrinsic::kExp, "relax::vec_exp($0)", {},
     "x", "expf(x)", "exp(x)"},
    {Intrinsic::kLog, "relax::vec_log($0)", {},
     "x", "logf(x)", "log(x)"},
    {Intrinsic::kSqrt, "std::sqrt($0)", {},
     "x", "sqrtf(x)", "sqrt(x)"},
    {Intrinsic::kRsqrt, "$O / std::sqrt($0)", {},
     "x", "1.0f / sqrtf(x)", "1.0 / sqrt(x)"},
    {Intrinsic::kTanh, "relax::vec_tanh($0)", {},
     "x", "tanhf(x)", "tanh(x)"},
    {Intrinsic::kErf, "relax::vec_erf($0)", {},
     "x", "erff(x)", "erf(x)"},
    {Intrinsic::kSigmoid, "relax::vec_sigmoid($0)", {},
     "x", "1.0f / (1.0f + expf(-x))", "1.0 / (1.0 + exp(-x))"},
    {Intrinsic::kPow, "std::pow($0, $1)", {},
     "x, y", "powf(x, y)", "pow(x, y)"},
    {Intrinsic::kAbs, "std::fabs($0)", "relax_abs<$T>($0)",
     "x", "fabsf(x)", "fabs(x)"},
    {Intrinsic::kFma, "std::fma($0, $1, $2)", {},
     "x, y, z", "fmaf(x, y, z)", "fma(x, y, z)"},
    {Intrinsic::kSin, "relax::vec_sin($0)", {},
     "x", "sinf(x)", "sin(x)"},
    {Intrinsic::kCos, "relax::vec_cos($0)", {},
     "x", "cosf(x)", "cos(x)"},
    {Intrinsic::kFloor, "std::floor($0)", {},
     "x", "floorf(x)", "floor(x)"},
    {Intrinsic::kCeil, "std::ceil($0)", {},
     "x", "ceilf(x)", "ceil(x)"},
    {Intrinsic::kRound, "std::nearbyint($0)", {},
     "x", "rintf(x)", "rint(x)"},
    {Intrinsic::kTrunc, "std::trunc($0)", {},
     "x", "truncf(x)", "trunc(x)"},
    {Intrinsic::kIsNan, "std::isnan($0)", {},
     "x", "x != x", "x != x", true},
    {Intrinsic::kIsInf, "std::isinf($0)", {},
     "x", "fabsf(x) == HUGE_VALF", "fabs(x) == HUGE_VAL", true},
    {Intrinsic::kBitwiseAnd, {}, "static_cast<$T>($0 & $1)", {}, {}, {}},
    {Intrinsic::kBitwiseOr, {}, "static_cast<$T>($0 | $1)", {}, {}, {}},
    {Intrinsic::kBitwiseXor, {}, "static_cast<$T>($0 ^ $1)", {}, {}, {}},
    {Intrinsic::kBitwiseNot, {}, "static_cast<$T>(~$0)", {}, {}, {}},
    {Intrinsic::kShiftLeft, {}, "relax_shift_left<$T>($0, $1)", {}, {}, {}},
    {Intrinsic::kShiftRight, {}, "relax_shift_right<$T>($0, $1)", {}, {}, {}},
};

constexpr bool rows_complete() {
  for (size_t i = 0; i < std::size(kCppIntrinsics); ++i) {
    if (static_cast<size_t>(kCppIntrinsics[i].op) != i) return false;
  }
  return std::size(kCppIntrinsics) == kNumIntrinsics;
}
static_assert(rows_complete(), "one C++ spelling row per Intrinsic, in enumerator order");

// One row per SymKind, in enumerator order, checked against kNumSymKinds: a new kind does
// not build until it says here how C++ writes it (or that the emitter writes it itself).
using K = SymKind;
using F = CppSymKind::Form;
using V = CppSymKind::Vector;
/// A kind the emitter writes itself, scalar and vector.
constexpr CppSymKind own(SymKind kind) { return {kind, F::kOwn, {}, kPrecPrimary, {}, V::kOwn, {}}; }

// kind, scalar form, spelling, precedence, device spelling, vector form, vector spelling
constexpr CppSymKind kCppSymKinds[] = {
    own(K::kIntImm),
    own(K::kVar),
    {K::kAdd, F::kInfix, "+", kPrecAdd, {}, V::kNative, "+"},
    {K::kSub, F::kInfix, "-", kPrecAdd, {}, V::kNative, "-"},
    {K::kMul, F::kInfix, "*", kPrecMul, {}, V::kNative, "*"},
    {K::kFloorDiv, F::kCall, "relax_floordiv<$T>($0, $1)", kPrecPrimary, {}, V::kLanes,
     "relax_floordiv<$T>(x0, x1)"},
    {K::kFloorMod, F::kCall, "relax_floormod<$T>($0, $1)", kPrecPrimary, {}, V::kLanes,
     "relax_floormod<$T>(x0, x1)"},
    // Device code has no <algorithm>: the CUDA prelude defines relax_min and relax_max.
    // Vectors: relax_vmin / relax_vmax, the same comparison on whole vectors (packed min/max).
    {K::kMin, F::kCall, "std::min<$T>($0, $1)", kPrecPrimary, "relax_min<$T>($0, $1)", V::kOwn, {}},
    {K::kMax, F::kCall, "std::max<$T>($0, $1)", kPrecPrimary, "relax_max<$T>($0, $1)", V::kOwn, {}},
    {K::kEQ, F::kInfix, "==", kPrecEquality, {}, V::kBoolLanes, "x0 == x1"},
    {K::kNE, F::kInfix, "!=", kPrecEquality, {}, V::kBoolLanes, "x0 != x1"},
    {K::kLT, F::kInfix, "<", kPrecRelational, {}, V::kBoolLanes, "x0 < x1"},
    {K::kLE, F::kInfix, "<=", kPrecRelational, {}, V::kBoolLanes, "x0 <= x1"},
    {K::kGT, F::kInfix, ">", kPrecRelational, {}, V::kBoolLanes, "x0 > x1"},
    {K::kGE, F::kInfix, ">=", kPrecRelational, {}, V::kBoolLanes, "x0 >= x1"},
    // Bool vectors are uint8_t lanes of 0 or 1: bitwise operators are the logical ones.
    {K::kAnd, F::kInfix, "&&", kPrecAnd, {}, V::kNative, "&"},
    {K::kOr, F::kInfix, "||", kPrecOr, {}, V::kNative, "|"},
    {K::kNot, F::kOwn, {}, kPrecPrimary, {}, V::kBoolLanes, "x0 == 0"},
    {K::kSelect, F::kOwn, {}, kPrecPrimary, {}, V::kLanes, "x0 != 0 ? x1 : x2"},
    own(K::kFloatImm),
    {K::kDiv, F::kInfix, "/", kPrecMul, {}, V::kNative, "/"},
    own(K::kCast),
    own(K::kCall),
    own(K::kBufferLoad),
    own(K::kRamp),
    own(K::kBroadcast),
};

constexpr bool sym_rows_complete() {
  for (size_t i = 0; i < std::size(kCppSymKinds); ++i) {
    if (static_cast<size_t>(kCppSymKinds[i].kind) != i) return false;
  }
  return std::size(kCppSymKinds) == static_cast<size_t>(kNumSymKinds);
}
static_assert(sym_rows_complete(), "one C++ spelling row per SymKind, in enumerator order");

}  // namespace

const CppIntrinsic& cpp_intrinsic(Intrinsic op) { return kCppIntrinsics[static_cast<size_t>(op)]; }

const CppSymKind& cpp_sym_kind(SymKind kind) { return kCppSymKinds[static_cast<size_t>(kind)]; }

}  // namespace relax::cpp_codegen
