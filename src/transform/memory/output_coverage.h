// Whether a kernel writes every element of an output before reading it
// (private to src/transform). lower-alloc asks it to decide which outputs the
// VM must zero: a tensor is allocated uninitialised unless the analysis
// cannot prove that the kernel's stores cover it.
#pragma once

#include "relax/ir/prim_func.h"

namespace relax::transform {

/// True when `buffer` (a buffer parameter of `func`) is provably written at
/// every element before any of its elements is read. Conservative: false means
/// "not proven" (the caller zeroes the output). What is proven:
///   the first top-level statement of the body (through lets and allocations,
///   in sequence order) that mentions `buffer` is a nest of serial or parallel
///   loops `for i in range(0, d)` (vectorized and unrolled too) around either
///     - a store `buffer[i_a, i_b, ...]` (the first statement of the innermost
///       body, through sequences, that mentions `buffer`) of a value that does not read
///       `buffer`, each index a distinct loop variable whose extent is the
///       buffer's dim (proven equal), or
///     - a block whose iteration variables are bound to such loop variables,
///       storing `buffer[v_a, v_b, ...]` over distinct spatial ones of the
///       buffer's dims: unconditionally in its `init` (a reduction: the body
///       may then read it), or first in its body with a value that does not
///       read `buffer`.
/// Nests with ifs, offsets or split loops, and rank-0 outputs written under
/// loops, are not proven.
bool writes_every_element(const PrimFuncNode& func, const Buffer& buffer);

}  // namespace relax::transform
