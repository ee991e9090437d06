// The memory planner (see the design comment of relax/transform/memory_planner.h).
#include "relax/transform/memory_planner.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/support/check.h"

namespace relax::transform::memory {
namespace {

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// A tensor as the walk sees it: its footprint is the constant upper bound of its size when
// the declared ranges give one, its size otherwise.
struct WalkTensor {
  size_t index;                  // into the input
  std::optional<int64_t> bound;  // upper bound of the size
  SymExpr size;                  // the size expression
  SymExpr footprint() const { return bound ? SymExpr(*bound) : size; }
};

// A block during the walk.
struct WalkBlock {
  SymExpr size;          // >= the size of every tensor it held, wherever the ranges hold
  int64_t alignment;     // the largest alignment of the tensors it held
  int64_t busy_until;    // the last use of its latest tensor
};

// Proofs, with two shortcuts: constants compare directly, and a comparison that is false at a
// sample point inside the declared ranges is refuted without a proof (prove() could not succeed:
// it is sound). Most pairs of sizes the walk compares are incomparable, and evaluating them at
// a few points costs far less than a proof. With constraint scopes alive the samples might
// break a fact the proof could use, so they are not used then.
class Prover {
 public:
  Prover(Analyzer& analyzer, const std::vector<PlannedTensor>& tensors) : analyzer_(analyzer) {
    if (analyzer.constraint_depth() > 0) return;
    std::vector<SymVar> vars;
    SymVarMap<bool> seen;
    for (const PlannedTensor& t : tensors) {
      for_each_var(t.size_bytes, [&](const SymVar& v) {
        if (seen.emplace(v, true).second) vars.push_back(v);
      });
    }
    // Each variable at its low end, one above, and two spread points (distinct per variable,
    // so that `n` and `m` do not look equal), all clamped into its range.
    const int64_t kSteps[] = {0, 1, 37, 4099};
    for (int64_t step : kSteps) {
      SymVarMap<int64_t> point;
      for (size_t i = 0; i < vars.size(); ++i) {
        const ConstIntBound range = analyzer.var_bound(vars[i]);
        const int64_t spread = step < 2 ? step : step + 13 * static_cast<int64_t>(i % 64);
        int64_t value = 0;
        if (range.has_lower()) {
          value = range.min_value > ConstIntBound::kPosInf - spread ? range.max_value
                                                                     : range.min_value + spread;
        } else if (range.has_upper()) {
          value = range.max_value;
        }
        point[vars[i]] = std::clamp(value, range.min_value, range.max_value);
      }
      samples_.push_back(std::move(point));
    }
  }

  bool le(const SymExpr& a, const SymExpr& b) {
    if (auto ca = a.as_const(), cb = b.as_const(); ca && cb) return *ca <= *cb;
    if (refuted(a, b, /*strict=*/false)) return false;
    return analyzer_.prove(a <= b);
  }
  bool lt(const SymExpr& a, const SymExpr& b) {
    if (auto ca = a.as_const(), cb = b.as_const(); ca && cb) return *ca < *cb;
    if (refuted(a, b, /*strict=*/true)) return false;
    return analyzer_.prove(a < b);
  }
  bool equal(const SymExpr& a, const SymExpr& b) {
    if (auto ca = a.as_const(), cb = b.as_const(); ca && cb) return *ca == *cb;
    if (refuted(a, b, /*strict=*/false) || refuted(b, a, /*strict=*/false)) return false;
    return analyzer_.prove_equal(a, b);
  }

 private:
  // Whether a sample shows a > b (a >= b when strict).
  bool refuted(const SymExpr& a, const SymExpr& b, bool strict) const {
    for (const SymVarMap<int64_t>& point : samples_) {
      absl::StatusOr<int64_t> va = evaluate(a, point);
      absl::StatusOr<int64_t> vb = evaluate(b, point);
      if (va.ok() && vb.ok() && (strict ? *va >= *vb : *va > *vb)) return true;
    }
    return false;
  }

  Analyzer& analyzer_;
  std::vector<SymVarMap<int64_t>> samples_;
};

// Whether `t` provably fits `block`: against a constant block a bounded tensor compares its
// bound; otherwise the size itself is compared (size <= bound, so it proves at least as much).
bool fits(Prover& prover, const WalkTensor& t, const WalkBlock& block) {
  if (t.bound && block.size.as_const()) return *t.bound <= *block.size.as_const();
  return prover.le(t.size, block.size);
}

// The block `t` takes (rules 2 and 3 of memory_planner.h): an index into `blocks`, and whether the
// block must grow to t's footprint; nullopt for a new block.
struct Choice {
  size_t block;
  bool grow;
};
std::optional<Choice> choose_block(Prover& prover, const WalkTensor& t, int64_t first_use,
                                   const std::vector<WalkBlock>& blocks) {
  const SymExpr footprint = t.footprint();
  std::optional<size_t> tightest;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].busy_until >= first_use || !fits(prover, t, blocks[b])) continue;
    if (prover.equal(footprint, blocks[b].size)) return Choice{b, false};
    if (!tightest || prover.lt(blocks[b].size, blocks[*tightest].size)) tightest = b;
  }
  if (tightest) return Choice{*tightest, false};
  std::optional<size_t> largest;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].busy_until >= first_use || !prover.le(blocks[b].size, footprint)) continue;
    if (!largest || prover.lt(blocks[*largest].size, blocks[b].size)) largest = b;
  }
  if (largest) return Choice{*largest, true};
  return std::nullopt;
}

absl::Status validate(const PlannedTensor& t) {
  if (!t.size_bytes.defined() || t.size_bytes.dtype() != DataType::int64()) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory plan: tensor `", t.name, "`: its size in bytes must be an int64 ",
                     "expression, got ", t.size_bytes.defined() ? t.size_bytes.to_string()
                                                                : std::string("nothing")));
  }
  if (!is_power_of_two(t.alignment)) {
    return absl::InvalidArgumentError(absl::StrCat("memory plan: tensor `", t.name,
                                                   "`: alignment must be a power of two, got ",
                                                   t.alignment));
  }
  if (t.first_use > t.last_use) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory plan: tensor `", t.name, "`: first use ", t.first_use,
                     " comes after its last use ", t.last_use));
  }
  return absl::OkStatus();
}

// `size` rounded up to a multiple of `alignment`.
SymExpr align_up(Analyzer& analyzer, const SymExpr& size, int64_t alignment) {
  // A multiple of the alignment (n*4096 for 64) needs no padding term.
  const ModularSet known = analyzer.modular_set(size);
  if (known.coeff % alignment == 0 && known.base % alignment == 0) return size;
  return analyzer.simplify(floordiv(size + (alignment - 1), alignment) * alignment);
}

std::optional<int64_t> align_up(int64_t end, int64_t alignment) {
  int64_t padded = 0;
  if (__builtin_add_overflow(end, alignment - 1, &padded)) return std::nullopt;
  return padded / alignment * alignment;
}

}  // namespace

SymExpr MemoryPlan::arena_offset(size_t tensor) const {
  RELAX_CHECK(tensor < tensors.size()) << "tensor " << tensor << " of " << tensors.size();
  const TensorPlacement& placement = tensors[tensor];
  const SymExpr& block_offset = blocks[placement.block].offset;
  if (placement.offset.is_const(0)) return block_offset;
  return block_offset + placement.offset;
}

std::string MemoryPlan::to_string(const std::vector<PlannedTensor>& inputs) const {
  std::ostringstream os;
  os << "arena " << arena_size << " bytes, aligned to " << arena_alignment << "\n";
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::vector<std::string> held;
    for (size_t t = 0; t < tensors.size() && t < inputs.size(); ++t) {
      if (tensors[t].block == b) held.push_back(inputs[t].name);
    }
    os << "  block " << b << ": offset " << blocks[b].offset << ", size " << blocks[b].size
       << ", align " << blocks[b].alignment << ": " << absl::StrJoin(held, ", ") << "\n";
  }
  return os.str();
}

absl::StatusOr<MemoryPlan> plan_memory(const std::vector<PlannedTensor>& tensors,
                                       Analyzer& analyzer) {
  std::vector<WalkTensor> walk;
  walk.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (absl::Status status = validate(tensors[i]); !status.ok()) return status;
    WalkTensor t{i, std::nullopt, analyzer.simplify(tensors[i].size_bytes)};
    if (absl::StatusOr<int64_t> bound = analyzer.upper_bound(t.size); bound.ok()) {
      if (*bound < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "memory plan: tensor `", tensors[i].name, "`: its size ", t.size.to_string(),
            " is negative for every value of its variables (at most ", *bound, ")"));
      }
      t.bound = *bound;
    }
    walk.push_back(std::move(t));
  }
  std::stable_sort(walk.begin(), walk.end(), [&](const WalkTensor& a, const WalkTensor& b) {
    return tensors[a.index].first_use < tensors[b.index].first_use;
  });

  // The walk (rules 1-4 of memory_planner.h).
  Prover prover(analyzer, tensors);
  std::vector<WalkBlock> blocks;
  std::vector<size_t> block_of(tensors.size());
  for (const WalkTensor& t : walk) {
    const PlannedTensor& input = tensors[t.index];
    std::optional<Choice> choice = choose_block(prover, t, input.first_use, blocks);
    if (!choice) {
      blocks.push_back(WalkBlock{t.footprint(), input.alignment, input.last_use});
      block_of[t.index] = blocks.size() - 1;
      continue;
    }
    WalkBlock& block = blocks[choice->block];
    if (choice->grow) block.size = t.footprint();
    block.alignment = std::max(block.alignment, input.alignment);
    block.busy_until = input.last_use;
    block_of[t.index] = choice->block;
  }

  // The layout: constant blocks first, then the symbolic ones, each group by alignment,
  // largest first. A symbolic block's offset is the previous one's plus the previous size
  // rounded up to this block's alignment: the previous offset is a multiple of the previous,
  // larger, alignment (powers of two), so this is the previous end rounded up, written as a
  // sum of short terms rather than a nest of floordivs.
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool ca = blocks[a].size.as_const().has_value();
    const bool cb = blocks[b].size.as_const().has_value();
    if (ca != cb) return ca;
    return blocks[a].alignment > blocks[b].alignment;
  });
  MemoryPlan plan;
  std::vector<size_t> position(blocks.size());
  int64_t constant_end = 0;
  std::optional<size_t> previous_symbolic;  // its index in plan.blocks
  for (size_t slot = 0; slot < order.size(); ++slot) {
    const WalkBlock& block = blocks[order[slot]];
    position[order[slot]] = slot;
    plan.arena_alignment = std::max(plan.arena_alignment, block.alignment);
    const std::optional<int64_t> size = block.size.as_const();
    if (size || !previous_symbolic) {
      // A constant block, or the first symbolic one: a constant offset.
      std::optional<int64_t> offset = align_up(constant_end, block.alignment);
      if (!offset || (size && __builtin_add_overflow(*offset, *size, &constant_end))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "memory plan: the arena's constant blocks exceed int64 bytes (",
            size ? absl::StrCat("a block of ", *size) : std::string("alignment padding"),
            " bytes after ", constant_end, ")"));
      }
      plan.blocks.push_back(PlannedBlock{block.size, block.alignment, SymExpr(*offset)});
    } else {
      const PlannedBlock& previous = plan.blocks[*previous_symbolic];
      SymExpr offset = analyzer.simplify(previous.offset +
                                         align_up(analyzer, previous.size, block.alignment));
      plan.blocks.push_back(PlannedBlock{block.size, block.alignment, offset});
    }
    if (!size) previous_symbolic = plan.blocks.size() - 1;
  }
  plan.arena_size =
      previous_symbolic
          ? analyzer.simplify(plan.blocks[*previous_symbolic].offset + plan.blocks[*previous_symbolic].size)
          : SymExpr(constant_end);
  plan.tensors.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    plan.tensors.push_back(TensorPlacement{position[block_of[i]], SymExpr(0)});
  }
  return plan;
}

// ---------------------------------------------------------------------------
// The checker.

namespace {

// "n = 3, m = 7", sorted by name, for messages.
std::string describe_values(const SymVarMap<int64_t>& values) {
  std::vector<std::pair<SymVar, int64_t>> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return structural_compare(a.first, b.first) < 0;
  });
  std::vector<std::string> parts;
  for (const auto& [var, value] : sorted) parts.push_back(absl::StrCat(var.to_string(), " = ", value));
  return parts.empty() ? std::string("no variables") : absl::StrJoin(parts, ", ");
}

// A byte range [begin, end) of the arena, for messages.
struct ByteRange {
  int64_t begin;
  int64_t end;
  std::string to_string() const { return absl::StrCat("[", begin, ", ", end, ")"); }
};

}  // namespace

absl::Status check_plan(const MemoryPlan& plan, const std::vector<PlannedTensor>& tensors,
                        const SymVarMap<int64_t>& values) {
  const std::string at = describe_values(values);
  auto fail = [&](const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat("memory plan check at ", at, ": ", what));
  };
  // A non-negative value of `e`, or an error naming `what`.
  auto eval = [&](const SymExpr& e, const std::string& what) -> absl::StatusOr<int64_t> {
    if (!e.defined()) return fail(absl::StrCat(what, " is missing"));
    absl::StatusOr<int64_t> value = evaluate(e, values);
    if (!value.ok()) {
      return fail(absl::StrCat(what, " ", e.to_string(), " does not evaluate: ",
                               value.status().message()));
    }
    if (*value < 0) return fail(absl::StrCat(what, " ", e.to_string(), " is ", *value));
    return *value;
  };
  if (plan.tensors.size() != tensors.size()) {
    return fail(absl::StrCat("the plan places ", plan.tensors.size(), " tensors, the program has ",
                             tensors.size()));
  }
  if (!is_power_of_two(plan.arena_alignment)) {
    return fail(absl::StrCat("arena alignment ", plan.arena_alignment, " is not a power of two"));
  }
  absl::StatusOr<int64_t> arena = eval(plan.arena_size, "arena size");
  if (!arena.ok()) return arena.status();

  std::vector<ByteRange> block_ranges;
  for (size_t b = 0; b < plan.blocks.size(); ++b) {
    const PlannedBlock& block = plan.blocks[b];
    const std::string name = absl::StrCat("block ", b);
    absl::StatusOr<int64_t> size = eval(block.size, name + " size");
    if (!size.ok()) return size.status();
    absl::StatusOr<int64_t> offset = eval(block.offset, name + " offset");
    if (!offset.ok()) return offset.status();
    if (!is_power_of_two(block.alignment) || block.alignment > plan.arena_alignment) {
      return fail(absl::StrCat(name, ": alignment ", block.alignment,
                               " is not a power of two at most the arena's ",
                               plan.arena_alignment));
    }
    if (*offset % block.alignment != 0) {
      return fail(absl::StrCat(name, ": offset ", *offset, " is not a multiple of its alignment ",
                               block.alignment));
    }
    if (*size > *arena - *offset) {
      return fail(absl::StrCat(name, " at bytes [", *offset, ", ", *offset, " + ", *size,
                               ") ends past the arena's ", *arena, " bytes"));
    }
    block_ranges.push_back(ByteRange{*offset, *offset + *size});
  }

  std::vector<ByteRange> ranges;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const PlannedTensor& t = tensors[i];
    const TensorPlacement& placement = plan.tensors[i];
    const std::string name = absl::StrCat("tensor `", t.name, "`");
    if (placement.block >= plan.blocks.size()) {
      return fail(absl::StrCat(name, " is placed in block ", placement.block, " of ",
                               plan.blocks.size()));
    }
    absl::StatusOr<int64_t> size = eval(t.size_bytes, name + " size");
    if (!size.ok()) return size.status();
    absl::StatusOr<int64_t> offset = eval(placement.offset, name + " offset in its block");
    if (!offset.ok()) return offset.status();
    const ByteRange& block = block_ranges[placement.block];
    if (*offset > block.end - block.begin || *size > block.end - block.begin - *offset) {
      return fail(absl::StrCat(name, " (", *size, " bytes at offset ", *offset, ") lies outside ",
                               "block ", placement.block, " (", block.end - block.begin,
                               " bytes)"));
    }
    const int64_t begin = block.begin + *offset;
    if (t.alignment <= 0 || begin % t.alignment != 0) {
      return fail(absl::StrCat(name, " at arena offset ", begin, " breaks its alignment ",
                               t.alignment));
    }
    ranges.push_back(ByteRange{begin, begin + *size});
  }

  // Overlaps among tensors live at once: sweep in order of first use, keeping the live ones.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tensors[a].first_use < tensors[b].first_use;
  });
  std::vector<size_t> live;
  for (size_t i : order) {
    std::erase_if(live, [&](size_t j) { return tensors[j].last_use < tensors[i].first_use; });
    for (size_t j : live) {
      const bool empty = ranges[i].begin == ranges[i].end || ranges[j].begin == ranges[j].end;
      if (empty || ranges[i].end <= ranges[j].begin || ranges[j].end <= ranges[i].begin) continue;
      return fail(absl::StrCat("tensors `", tensors[j].name, "` (live [", tensors[j].first_use,
                               ", ", tensors[j].last_use, "], bytes ", ranges[j].to_string(),
                               ") and `", tensors[i].name, "` (live [", tensors[i].first_use,
                               ", ", tensors[i].last_use, "], bytes ", ranges[i].to_string(),
                               ") overlap"));
    }
    live.push_back(i);
  }
  return absl::OkStatus();
}

}  // namespace relax::transform::memory
