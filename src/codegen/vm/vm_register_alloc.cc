// Register liveness and reuse for one VMFunction (see vm_register_alloc.h).
//
// The code generator gives every value a register of its own, so a function
// of N bindings would keep N values -- every intermediate tensor -- alive
// until it returns. This pass turns that into code that frees each value
// after its last use and needs registers for the values live at once only.
//
// The code is structured: the only jumps are the forward kIf/kGoto of If
// regions, properly nested. So liveness needs no dataflow iteration: each
// register's live range is one interval of instruction positions, widened to
// the block structure:
//   - blocks form a tree: the function body; under it, for each If, its head
//     (the kIf), its then branch and its else branch; and so on down;
//   - a register's events (writes and reads, the parameters' arrival at entry
//     counted before instruction 0) span [first, last]; in the lowest block B
//     that holds both, an event inside a nested If widens the interval to the
//     whole If (from its kIf to its last instruction), so that the interval
//     starts and ends at instructions of B itself, which every path through B
//     runs in order;
//   - the register is killed just before the instruction after the interval
//     (jumps to that instruction land on the kill, so both paths out of an If
//     run it), except at the end of the function and before kRet, where the
//     frame is dropped anyway.
// Registers whose intervals do not overlap share a physical register (linear
// scan, lowest free number first). This is safe because a value is live at a
// position only inside its interval, and two intervals holding one physical
// register never overlap.
#include "codegen/vm/vm_register_alloc.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "relax/support/check.h"

namespace relax::codegen_detail {
namespace {

using runtime::Instruction;
using runtime::Opcode;
using runtime::Operand;

// The block tree: block 0 is the function body; region r has blocks
// 1 + 3r (its kIf), 2 + 3r (then) and 3 + 3r (else).
struct Blocks {
  std::vector<int32_t> of_pc;   // the innermost block of each instruction
  std::vector<int32_t> parent;  // -1 for the body
  std::vector<int32_t> depth;
  std::vector<int32_t> region;  // the If a block belongs to; -1 for the body
};

Blocks block_tree(size_t code_size, const std::vector<IfRegion>& regions) {
  Blocks b;
  b.of_pc.assign(code_size, 0);
  const size_t num_blocks = 1 + 3 * regions.size();
  b.parent.assign(num_blocks, -1);
  b.depth.assign(num_blocks, 0);
  b.region.assign(num_blocks, -1);
  // Outer Ifs start before the Ifs nested in them: assign outer blocks first.
  std::vector<size_t> order(regions.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t c) { return regions[a].if_pc < regions[c].if_pc; });
  for (size_t r : order) {
    const IfRegion& reg = regions[r];
    RELAX_CHECK(reg.if_pc < reg.goto_pc && reg.goto_pc < reg.join_pc &&
                static_cast<size_t>(reg.join_pc) <= code_size)
        << "malformed If region";
    const int32_t enclosing = b.of_pc[static_cast<size_t>(reg.if_pc)];
    const int32_t head = static_cast<int32_t>(1 + 3 * r);
    for (int32_t k = 0; k < 3; ++k) {
      b.parent[static_cast<size_t>(head + k)] = enclosing;
      b.depth[static_cast<size_t>(head + k)] = b.depth[static_cast<size_t>(enclosing)] + 1;
      b.region[static_cast<size_t>(head + k)] = static_cast<int32_t>(r);
    }
    b.of_pc[static_cast<size_t>(reg.if_pc)] = head;
    for (int64_t pc = reg.if_pc + 1; pc <= reg.goto_pc; ++pc) b.of_pc[static_cast<size_t>(pc)] = head + 1;
    for (int64_t pc = reg.goto_pc + 1; pc < reg.join_pc; ++pc) b.of_pc[static_cast<size_t>(pc)] = head + 2;
  }
  return b;
}

// The live interval [start, end] of a register whose events span [first, last]
// (first == -1: a parameter, live from entry).
std::pair<int64_t, int64_t> widen(const Blocks& b, const std::vector<IfRegion>& regions, int64_t first,
                                  int64_t last) {
  int32_t b1 = first < 0 ? 0 : b.of_pc[static_cast<size_t>(first)];
  int32_t b2 = b.of_pc[static_cast<size_t>(last)];
  int32_t c1 = -1, c2 = -1;  // the children of the common block on each side
  auto up = [&b](int32_t& block, int32_t& child) {
    child = block;
    block = b.parent[static_cast<size_t>(block)];
  };
  while (b.depth[static_cast<size_t>(b1)] > b.depth[static_cast<size_t>(b2)]) up(b1, c1);
  while (b.depth[static_cast<size_t>(b2)] > b.depth[static_cast<size_t>(b1)]) up(b2, c2);
  while (b1 != b2) {
    up(b1, c1);
    up(b2, c2);
  }
  const int64_t start = c1 >= 0 ? regions[static_cast<size_t>(b.region[static_cast<size_t>(c1)])].if_pc : first;
  const int64_t end =
      c2 >= 0 ? regions[static_cast<size_t>(b.region[static_cast<size_t>(c2)])].join_pc - 1 : last;
  return {start, end};
}

}  // namespace

int64_t reuse_registers(runtime::VMFunction& fn, const std::vector<IfRegion>& regions, int32_t num_params) {
  const size_t code_size = fn.code.size();
  const size_t num_virtual = static_cast<size_t>(fn.num_registers);
  constexpr int64_t kNone = INT64_MIN;
  std::vector<int64_t> first(num_virtual, kNone), last(num_virtual, kNone);
  auto event = [&](int64_t reg, int64_t pc) {
    const size_t r = static_cast<size_t>(reg);
    if (first[r] == kNone) first[r] = pc;
    last[r] = pc;  // pcs are visited in increasing order
  };
  for (int32_t p = 0; p < num_params; ++p) event(p, -1);
  for (size_t pc = 0; pc < code_size; ++pc) {
    const Instruction& ins = fn.code[pc];
    const int64_t at = static_cast<int64_t>(pc);
    for (const Operand& op : ins.operands) {
      if (op.kind == Operand::Kind::kReg) event(op.value, at);
    }
    if (ins.op == Opcode::kMatch) {
      for (const runtime::MatchItem& item : fn.matches[static_cast<size_t>(ins.index)].items) event(item.reg, at);
    }
    if (ins.dst >= 0) event(ins.dst, at);
  }

  // Live intervals, then linear scan in order of start.
  const Blocks blocks = block_tree(code_size, regions);
  std::vector<std::pair<int64_t, int64_t>> interval(num_virtual);
  std::vector<int32_t> order;
  for (size_t v = 0; v < num_virtual; ++v) {
    if (first[v] == kNone) continue;  // never used
    // A parameter that no instruction reads dies at entry.
    interval[v] = last[v] < 0 ? std::pair<int64_t, int64_t>{-1, -1} : widen(blocks, regions, first[v], last[v]);
    order.push_back(static_cast<int32_t>(v));
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t c) {
    return interval[static_cast<size_t>(a)].first < interval[static_cast<size_t>(c)].first;
  });
  std::vector<int32_t> phys(num_virtual, 0);
  using Active = std::pair<int64_t, int32_t>;  // (end, physical register)
  std::priority_queue<Active, std::vector<Active>, std::greater<>> active;
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> free_regs;
  int32_t num_phys = num_params;
  for (int32_t v : order) {
    const auto [start, end] = interval[static_cast<size_t>(v)];
    while (!active.empty() && active.top().first < start) {
      free_regs.push(active.top().second);
      active.pop();
    }
    int32_t p = 0;
    if (v < num_params) {
      p = v;  // parameters arrive in their own registers
    } else if (!free_regs.empty()) {
      p = free_regs.top();
      free_regs.pop();
    } else {
      p = num_phys++;
    }
    phys[static_cast<size_t>(v)] = p;
    active.emplace(end, p);
  }

  // Kills, by the instruction they precede.
  std::vector<std::pair<int64_t, int32_t>> kills;
  for (int32_t v : order) {
    const int64_t at = interval[static_cast<size_t>(v)].second + 1;
    if (static_cast<size_t>(at) >= code_size || fn.code[static_cast<size_t>(at)].op == Opcode::kRet) continue;
    kills.emplace_back(at, phys[static_cast<size_t>(v)]);
  }
  std::sort(kills.begin(), kills.end());

  // Rewrite: kills in front of their instruction, registers renamed, jumps retargeted.
  auto rename = [&](int64_t reg) { return phys[static_cast<size_t>(reg)]; };
  std::vector<Instruction> code;
  code.reserve(code_size + kills.size());
  std::vector<int64_t> new_pc(code_size);
  size_t k = 0;
  for (size_t pc = 0; pc < code_size; ++pc) {
    new_pc[pc] = static_cast<int64_t>(code.size());
    if (k < kills.size() && kills[k].first == static_cast<int64_t>(pc)) {
      Instruction kill;
      kill.op = Opcode::kKill;
      for (; k < kills.size() && kills[k].first == static_cast<int64_t>(pc); ++k) {
        kill.operands.push_back(Operand{Operand::Kind::kReg, kills[k].second});
      }
      code.push_back(std::move(kill));
    }
    Instruction ins = std::move(fn.code[pc]);
    for (Operand& op : ins.operands) {
      if (op.kind == Operand::Kind::kReg) op.value = rename(op.value);
    }
    if (ins.dst >= 0) ins.dst = rename(ins.dst);
    code.push_back(std::move(ins));
  }
  for (Instruction& ins : code) {
    if (ins.op == Opcode::kIf || ins.op == Opcode::kGoto) ins.index = new_pc[static_cast<size_t>(ins.index)];
  }
  for (runtime::MatchGroup& g : fn.matches) {
    for (runtime::MatchItem& item : g.items) item.reg = rename(item.reg);
  }
  fn.code = std::move(code);
  fn.num_registers = num_phys;
  return num_phys;
}

}  // namespace relax::codegen_detail
