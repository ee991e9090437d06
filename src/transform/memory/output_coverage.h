// Whether a kernel writes every element of an output before reading it
// (private to src/transform). lower-alloc asks it to decide which outputs the
// VM must zero: a tensor is allocated uninitialised unless the analysis
// cannot prove that the kernel's stores cover it.
#pragma once

#include "relax/ir/prim_func.h"

namespace relax::transform {

/// True when `buffer` (a buffer parameter of `func`) is provably written at
/// every element before any of its elements is read. Conservative: false means
/// "not proven" (the caller zeroes the output). What is proven: the top-level
/// statements of the body (through sequences, allocations and lets whose value
/// does not read `buffer`) that mention `buffer`, in order, are each a nest of
/// loops `for i in range(0, d)` (any kind) around either
///   - a store `buffer[...]` (the first statement of the innermost body, through
///     sequences, that mentions `buffer`) of a value that does not read
///     `buffer`, or
///   - a block whose iteration variables are bound to such loop variables,
///     storing `buffer[...]` over its spatial variables: unconditionally in its
///     `init` (a reduction: the body may then read it), or first in its body
///     with a value that does not read `buffer`;
/// each index being a distinct loop (or spatial) variable plus an offset free of
/// them, so that the nest writes a box of the buffer; and before any other
/// mention, the boxes written so far span the buffer: in every dim but one each
/// box is the whole dim, and along that one their intervals chain from 0 to the
/// dim (the parts of a concat, in any order). Nests with ifs or split loops,
/// boxes that leave a gap, and rank-0 outputs written under loops are not
/// proven.
bool writes_every_element(const PrimFuncNode& func, const Buffer& buffer);

}  // namespace relax::transform
