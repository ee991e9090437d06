// One evaluator of the runtime's postfix symbolic programs (SymInstr, relax/runtime/executable.h),
// shared by the VM (slots of a frame, some unbound) and execution-plan replay (ints computed per
// call, always bound). Internal to the runtime.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "relax/runtime/executable.h"
#include "relax/support/check.h"
#include "relax/support/int_math.h"

namespace relax::runtime {

enum class EvalFailure : uint8_t { kNone, kUnbound, kOverflow, kDivByZero };

struct EvalOutcome {
  int64_t value = 0;
  EvalFailure failure = EvalFailure::kNone;
  int64_t slot = -1;  ///< kUnbound: the slot read
};

/// Runs a validated program (a balanced stack, known ops). `read(slot, &value)` gives a kSlot
/// operand's value, or false when that slot is unbound.
template <typename ReadSlot>
EvalOutcome run_sym_code(std::span<const SymInstr> code, ReadSlot&& read) {
  constexpr size_t kInline = 32;
  int64_t inline_stack[kInline];
  std::vector<int64_t> heap_stack;
  int64_t* stack = inline_stack;
  if (code.size() > kInline) {
    heap_stack.resize(code.size());
    stack = heap_stack.data();
  }
  size_t sp = 0;
  for (const SymInstr& instr : code) {
    switch (instr.op) {
      case SymOp::kConst: stack[sp++] = instr.operand; continue;
      case SymOp::kSlot:
        if (!read(instr.operand, &stack[sp])) return {0, EvalFailure::kUnbound, instr.operand};
        ++sp;
        continue;
      case SymOp::kNeg:
        if (stack[sp - 1] == INT64_MIN) return {0, EvalFailure::kOverflow};
        stack[sp - 1] = -stack[sp - 1];
        continue;
      case SymOp::kNot: stack[sp - 1] = stack[sp - 1] == 0 ? 1 : 0; continue;
      case SymOp::kSelect: {
        const int64_t b = stack[--sp];
        const int64_t a = stack[--sp];
        stack[sp - 1] = stack[sp - 1] != 0 ? a : b;
        continue;
      }
      default: break;
    }
    const int64_t b = stack[--sp];
    const int64_t a = stack[sp - 1];
    int64_t r = 0;
    switch (instr.op) {
      case SymOp::kAdd:
        if (__builtin_add_overflow(a, b, &r)) return {0, EvalFailure::kOverflow};
        break;
      case SymOp::kSub:
        if (__builtin_sub_overflow(a, b, &r)) return {0, EvalFailure::kOverflow};
        break;
      case SymOp::kMul:
        if (__builtin_mul_overflow(a, b, &r)) return {0, EvalFailure::kOverflow};
        break;
      case SymOp::kFloorDiv:
        if (b == 0) return {0, EvalFailure::kDivByZero};
        if (a == INT64_MIN && b == -1) return {0, EvalFailure::kOverflow};
        r = floor_div(a, b);
        break;
      case SymOp::kFloorMod:
        if (b == 0) return {0, EvalFailure::kDivByZero};
        r = floor_mod(a, b);
        break;
      case SymOp::kMin: r = a < b ? a : b; break;
      case SymOp::kMax: r = a < b ? b : a; break;
      case SymOp::kEq: r = a == b; break;
      case SymOp::kNe: r = a != b; break;
      case SymOp::kLt: r = a < b; break;
      case SymOp::kLe: r = a <= b; break;
      case SymOp::kAnd: r = (a != 0 && b != 0); break;
      case SymOp::kOr: r = (a != 0 || b != 0); break;
      default: RELAX_CHECK(false) << "unvalidated symbolic op " << static_cast<int>(instr.op);
    }
    stack[sp - 1] = r;
  }
  RELAX_CHECK(sp == 1) << "unbalanced symbolic program";
  return {stack[0]};
}

}  // namespace relax::runtime
