// relax::generate_cpp: loop-level PrimFuncs as one C++ translation unit.
//
// The unit follows the kernel ABI of relax/runtime/kernel_abi.h: it carries a
// verbatim copy of that header's declarations, one static kernel function per
// PrimFunc, and the two extern "C" entry points relax_abi_version and
// relax_kernels (the table names each kernel by the name it was given here).
// It includes standard headers only, so the host compiler needs nothing of
// relax to build it (see relax/codegen/compiler.h).
//
// A kernel first checks its arguments: their count, each one's kind (buffer,
// integer or float scalar), rank and dtype; it binds the symbolic variables
// that appear as whole dims or strides or are scalar parameters, solves those
// that a dim determines linearly (`n * 2`: relax/shape/solve.h; the division
// must be exact), then checks every other dim against its expression and any
// strides against the buffer's (compact row-major unless the Buffer declares
// strides). A mismatch writes a message
// such as "kernel add: argument C (#2) dim 1 is 5, expected 4" into the error
// buffer and returns non-zero. Target::runtime_checks == false drops the dtype,
// dim and stride checks (variables are still bound).
//
// Loops map to C++ loops: `parallel` to `#pragma omp parallel for` (unless
// Target::threads == 1), `vectorized` to `#pragma omp simd`, `unrolled` to
// `#pragma GCC unroll`. Integer floordiv/floormod round toward negative
// infinity as in the IR. Allocate gives a stack array when the buffer is
// local with a small constant size, else a 64-byte aligned heap block freed
// when its scope ends (on every path).
//
// Supported dtypes: bool, int8..int64, uint8..uint64, float32, float64.
// float16/bfloat16 and vector dtypes, unknown variables or buffers, and other
// constructs the generator cannot translate are an error Status naming the
// PrimFunc and the construct; the generator never emits code it cannot stand
// behind.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/support/target.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"

namespace relax {

/// One translation unit holding a kernel for each (name, PrimFunc) pair; the
/// names are those of the kernel table and must be distinct and non-empty.
absl::StatusOr<std::string> generate_cpp(const std::vector<std::pair<std::string, Expr>>& prim_funcs,
                                         const Target& target);

/// As above, for every PrimFunc of `module` (in its order, under its names).
absl::StatusOr<std::string> generate_cpp(const IRModule& module, const Target& target);

/// The text of relax/runtime/kernel_abi.h that every generated unit carries.
std::string_view kernel_abi_text();

}  // namespace relax
