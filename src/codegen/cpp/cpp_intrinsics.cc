// How the C++ code generator spells each intrinsic (cpp_codegen_impl.h: cpp_intrinsic).
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

// op, over float operands, over integer operands
constexpr CppIntrinsic kCppIntrinsics[] = {
    {Intrinsic::kExp, "relax::vec_exp($0)", {}},
    {Intrinsic::kLog, "relax::vec_log($0)", {}},
    {Intrinsic::kSqrt, "std::sqrt($0)", {}},
    {Intrinsic::kRsqrt, "$O / std::sqrt($0)", {}},
    {Intrinsic::kTanh, "relax::vec_tanh($0)", {}},
    {Intrinsic::kErf, "relax::vec_erf($0)", {}},
    {Intrinsic::kSigmoid, "relax::vec_sigmoid($0)", {}},
    {Intrinsic::kPow, "std::pow($0, $1)", {}},
    {Intrinsic::kAbs, "std::fabs($0)", "relax_abs<$T>($0)"},
    {Intrinsic::kFma, "std::fma($0, $1, $2)", {}},
    {Intrinsic::kSin, "relax::vec_sin($0)", {}},
    {Intrinsic::kCos, "relax::vec_cos($0)", {}},
    {Intrinsic::kFloor, "std::floor($0)", {}},
    {Intrinsic::kCeil, "std::ceil($0)", {}},
    {Intrinsic::kRound, "std::nearbyint($0)", {}},
    {Intrinsic::kTrunc, "std::trunc($0)", {}},
    {Intrinsic::kIsNan, "std::isnan($0)", {}},
    {Intrinsic::kIsInf, "std::isinf($0)", {}},
    {Intrinsic::kBitwiseAnd, {}, "static_cast<$T>($0 & $1)"},
    {Intrinsic::kBitwiseOr, {}, "static_cast<$T>($0 | $1)"},
    {Intrinsic::kBitwiseXor, {}, "static_cast<$T>($0 ^ $1)"},
    {Intrinsic::kBitwiseNot, {}, "static_cast<$T>(~$0)"},
    {Intrinsic::kShiftLeft, {}, "relax_shift_left<$T>($0, $1)"},
    {Intrinsic::kShiftRight, {}, "relax_shift_right<$T>($0, $1)"},
};

constexpr bool rows_complete() {
  for (size_t i = 0; i < std::size(kCppIntrinsics); ++i) {
    if (static_cast<size_t>(kCppIntrinsics[i].op) != i) return false;
  }
  return std::size(kCppIntrinsics) == kNumIntrinsics;
}
static_assert(rows_complete(), "one C++ spelling row per Intrinsic, in enumerator order");

}  // namespace

const CppIntrinsic& cpp_intrinsic(Intrinsic op) { return kCppIntrinsics[static_cast<size_t>(op)]; }

}  // namespace relax::cpp_codegen
