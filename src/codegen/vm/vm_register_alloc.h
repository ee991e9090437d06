// Private to the VM code generator: register liveness and reuse for one
// VMFunction whose code was emitted with a fresh register per value.
#pragma once

#include <cstdint>
#include <vector>

#include "relax/runtime/executable.h"

namespace relax::codegen_detail {

/// The instructions of one If, as the code generator emitted them:
///   if_pc:   kIf (cond) else goto goto_pc + 1
///   ...      the then branch
///   goto_pc: kGoto join_pc
///   ...      the else branch
///   join_pc: the first instruction after the If.
struct IfRegion {
  int64_t if_pc;
  int64_t goto_pc;
  int64_t join_pc;
};

/// Rewrites `fn` (code and match groups) so that every value is released
/// after its last use -- a kKill of its register, placed where every path
/// that used the value passes -- and registers whose values are never live
/// at once share one; sets fn.num_registers to the registers needed. The
/// first `num_params` registers keep their numbers (parameters arrive there).
/// Requires: jumps only forward and only those described by `regions`
/// (properly nested), each register written before it is read on every path,
/// and each match group referenced by one kMatch. Returns the register count,
/// which may exceed Executable::kMaxRegisters (the caller reports that).
int64_t reuse_registers(runtime::VMFunction& fn, const std::vector<IfRegion>& regions, int32_t num_params);

}  // namespace relax::codegen_detail
