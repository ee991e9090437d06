// Constructors of explicit-allocation operator calls: the form a module takes
// after the pass lower-alloc (relax/transform/passes.h), which the memory
// planner rewrites and the VM code generator translates one to one.
//
//   s: Object = alloc_storage(1024, alignment=64)            // 1024 bytes
//   t: Tensor[(n, 4), float32] = alloc_tensor(s, 0, shape(n, 4), dtype="float32")
//   _: () = call_tir_dps(@add, (x, y), (t,))                  // writes t
//   _1: () = kill_tensor(t)
//   _2: () = kill_storage(s)
//
// A storage is a block of bytes (annotated Object); a tensor made by
// alloc_tensor is a view into it at a byte offset, so tensors placed at
// different offsets of one storage, or at the same offset at different times,
// share its memory. Contents are not initialised unless alloc_tensor asks
// (`zero_init=true`, which lower-alloc sets for kernels that do not write
// every element of their output). The destination-passing calls write their
// destinations and return the empty tuple; they, and the kills, are effects
// (impure), so the lowered form lives outside dataflow blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/op.h"

namespace relax::op {

/// A storage of `size` bytes (an int Prim, possibly symbolic, or a one-dim
/// Shape), its address a multiple of `alignment` (a power of two); `dtype` is
/// the element type the storage is meant for (informative; uint8 by default).
Expr alloc_storage(Expr size, int64_t alignment = 64, DataType dtype = DataType{DataType::Code::kUInt, 8, 1});

/// A tensor of `shape` and `dtype` placed at byte `offset` (an int Prim,
/// possibly symbolic) of `storage`; with `zero_init`, its bytes are zeroed when
/// it is made. The runtime checks that offset + its byte size fits the storage.
Expr alloc_tensor(Expr storage, Expr offset, Expr shape, DataType dtype, bool zero_init = false);

/// Ends `storage`'s life: its memory goes back where it came from once no
/// tensor made from it is alive. Returns the empty tuple.
Expr kill_storage(Expr storage);
/// Ends `tensor`'s life (its register is released). Returns the empty tuple.
Expr kill_tensor(Expr tensor);

/// `x` with the dims `shape` (the element count must be proven equal), sharing
/// x's memory: reshape without a copy.
Expr view(Expr x, Expr shape);

/// The copy kernel of a normalised reshape call (x's elements in row-major
/// order into a fresh result). Legalization makes a reshape a
/// view instead, except in a module that writes tensors in place, where
/// legalize-ops asks for this one.
absl::StatusOr<Lowering> reshape_copy_kernel(const CallNode& call);

/// Calls the PrimFunc `callee` with `args` (Tensors and Prims), then the
/// destination tensors `outs`, then `extra_sym_args` as int64 scalars. It
/// writes `outs` and returns the empty tuple: the explicit form of call_tir.
Expr call_tir_dps(Expr callee, std::vector<Expr> args, std::vector<Expr> outs,
                  std::vector<SymExpr> extra_sym_args = {});

/// Calls the library function `symbol` with `args` and then the destinations
/// `outs`, which it writes; returns the empty tuple: the explicit form of
/// call_dps_library. A defined `workspace_bytes` (an int, possibly symbolic)
/// declares the scratch the function needs; lift-workspace turns it into a
/// uint8 tensor of that many bytes passed after `outs` (relax/runtime/module.h).
Expr call_library_dps(std::string symbol, std::vector<Expr> args, std::vector<Expr> outs,
                      SymExpr workspace_bytes = SymExpr());

/// call_dps_library (relax/ir/ops.h) whose function needs `workspace_bytes` of
/// scratch (an int, possibly symbolic): `call_dps_library(f, (args...),
/// prim(bytes), sinfo=...)`.
Expr call_dps_library(std::string symbol, std::vector<Expr> args, StructInfo out_sinfo,
                      SymExpr workspace_bytes);

}  // namespace relax::op
