// relax::inits_when_empty: what a reduction loop that runs no iteration must still do (its
// blocks' inits), for every pass or code generator that removes or emits such a loop.
//
// A block's init runs when its reduction iteration variables are all 0, that
// is inside its reduction loops; a reduction loop that runs no iteration (a
// sum over an empty axis, a matmul with K = 0) would leave the accumulator as
// it found it instead of at the init (the reduction's identity). Whatever
// removes or emits a loop that may run no iteration (simplify-loops, the code
// generators, the loop-level evaluator) runs, in its place, the inits its
// body owes: inits_when_empty(loop).
//
// It applies to a loop whose variable feeds only reduction iteration variables
// of blocks in its body, at least one of them a block with an init, and nothing
// else (no spatial binding, no index or value outside a block, no inner loop's
// bounds) -- a loop that only reductions use. Its body's copy keeps the loops,
// lets, allocations and conditions around the blocks with an init, and of each
// such block its iteration variables and its init (the body dropped), so the
// init runs under its usual guard: once per element of the result. A
// condition that mentions the loop variable (the tail guard of a split
// reduction loop) is taken as true. The loop variable stays free in the copy:
// the caller binds it to the loop's start.
//
// So an empty sum gives 0, an empty product 1 and a mean 0 / 0 = NaN, the
// values numpy and PyTorch give; the ops without an identity (max, argmax,
// pooling) reject an empty extent before running (relax/ir/kernel_checks.h).
#pragma once

#include <optional>

#include "relax/ir/prim_func.h"

namespace relax {

/// The inits that `loop`'s body owes when the loop runs no iteration (see
/// above), over `loop`'s variable; nullopt when the loop is not one that only
/// reductions with an init use, or its extent is a constant above 0.
std::optional<Stmt> inits_when_empty(const ForNode& loop);

}  // namespace relax
