// Index expressions of tiled loops, as schedules make them: loops of constant and symbolic
// extents, split (v = vo * f + vi) and fused (v = floordiv(f, ew), w = floormod(f, ew)) at
// random, then the original indices (the loop variables and their row-major flattening) written
// over the final loops. The simplified form of each index must have the same value at points of
// the final loops' ranges, no more divisions and remainders than the expression it came from,
// and no more nodes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "../test_env.h"
#include "random_expr.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace relax {
namespace {

int64_t node_count(const SymExpr& e) {
  int64_t n = 1;
  for (size_t i = 0; i < e.num_operands(); ++i) n += node_count(e.operand(i));
  return n;
}

int64_t div_mod_count(const SymExpr& e) {
  int64_t n = e.kind() == SymKind::kFloorDiv || e.kind() == SymKind::kFloorMod ? 1 : 0;
  for (size_t i = 0; i < e.num_operands(); ++i) n += div_mod_count(e.operand(i));
  return n;
}

/// A loop of the current nest: its variable and extent (a SymExpr over n).
struct Loop {
  SymVar var;
  SymExpr extent;
};

class TiledNest {
 public:
  TiledNest(std::mt19937& rng, const SymVar& n) : rng_(rng), n_(n) {}

  /// Builds a nest of 1-3 loops, transforms it 1-4 times, and gives the original indices
  /// written over the final loops.
  std::vector<SymExpr> build() {
    loops_.clear();
    image_.clear();
    const int depth = pick(1, 3);
    std::vector<Loop> original;
    for (int d = 0; d < depth; ++d) {
      SymExpr extent;
      switch (pick(0, 3)) {
        case 0: extent = SymExpr(pick(2, 8)); break;
        case 1: extent = n_; break;
        case 2: extent = n_ * 4; break;
        default: extent = SymExpr(int64_t{1} << pick(1, 4)); break;
      }
      Loop loop{SymVar("i" + std::to_string(d)), extent};
      original.push_back(loop);
      loops_.push_back(loop);
      image_[loop.var] = loop.var;
    }
    const int steps = pick(1, 4);
    for (int s = 0; s < steps; ++s) {
      if (loops_.size() >= 2 && pick(0, 1) == 1) {
        fuse();
      } else {
        split();
      }
    }
    // The original indices: each loop variable, and the row-major flattening of all of them.
    std::vector<SymExpr> indices;
    SymExpr flat = SymExpr(0);
    for (const Loop& l : original) {
      indices.push_back(substitute(l.var, image_));
      flat = flat * l.extent + l.var;
    }
    indices.push_back(substitute(flat, image_));
    return indices;
  }

  const std::vector<Loop>& loops() const { return loops_; }

 private:
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

  // v = vo * f + vi over vo in [0, ceil(e / f)), vi in [0, f).
  void split() {
    const size_t at = static_cast<size_t>(pick(0, static_cast<int64_t>(loops_.size()) - 1));
    const Loop v = loops_[at];
    const int64_t f = int64_t{1} << pick(1, 3);
    Loop outer{SymVar(v.var.name() + "o"), floordiv(v.extent + (f - 1), f)};
    Loop inner{SymVar(v.var.name() + "i"), SymExpr(f)};
    rewrite(v.var, outer.var * f + inner.var);
    loops_[at] = outer;
    loops_.insert(loops_.begin() + static_cast<std::ptrdiff_t>(at) + 1, inner);
  }

  // Adjacent v, w fused into one loop f of extent ev * ew.
  void fuse() {
    const size_t at = static_cast<size_t>(pick(0, static_cast<int64_t>(loops_.size()) - 2));
    const Loop v = loops_[at], w = loops_[at + 1];
    Loop fused{SymVar(v.var.name() + w.var.name()), v.extent * w.extent};
    rewrite(v.var, floordiv(fused.var, w.extent));
    rewrite(w.var, floormod(fused.var, w.extent));
    loops_[at] = fused;
    loops_.erase(loops_.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }

  // Every image that uses `var` now uses `value` instead.
  void rewrite(const SymVar& var, const SymExpr& value) {
    SymVarMap<SymExpr> one = {{var, value}};
    for (auto& [original, image] : image_) image = substitute(image, one);
  }

  std::mt19937& rng_;
  SymVar n_;
  std::vector<Loop> loops_;
  SymVarMap<SymExpr> image_;  // each original loop variable over the current loops
};

TEST(TiledIndexFuzz, SimplifiedIndicesKeepTheirValueAndDoNotGrow) {
  const int64_t trials = testing_util::fuzz_trials(4000);
  std::mt19937 rng(static_cast<uint32_t>(testing_util::fuzz_seed(20261201)));
  constexpr int64_t kMaxN = 6;
  SymVar n("n");
  int64_t simplified_smaller = 0, indices_checked = 0;
  for (int64_t trial = 0; trial < trials; ++trial) {
    TiledNest nest(rng, n);
    const std::vector<SymExpr> indices = nest.build();
    Analyzer analyzer;
    analyzer.bind(n, 1, kMaxN);
    // Each final loop variable lies in [0, its extent's largest value - 1].
    for (const Loop& l : nest.loops()) {
      absl::StatusOr<int64_t> hi = analyzer.upper_bound(l.extent);
      ASSERT_TRUE(hi.ok()) << hi.status();
      analyzer.bind(l.var, 0, *hi - 1);
    }
    std::uniform_int_distribution<int64_t> pick_n(1, kMaxN);
    for (const SymExpr& index : indices) {
      const SymExpr simplified = analyzer.simplify(index);
      ++indices_checked;
      // The divisions and remainders (the dead index arithmetic of a schedule) never grow,
      // nor does the expression (simplify takes the factors the canonical form distributes
      // back out: (i*8 + j) * (n*4) stays (i*8 + j)*n*4).
      ASSERT_LE(div_mod_count(simplified), div_mod_count(index))
          << "more divisions:\n  index:      " << index << "\n  simplified: " << simplified;
      ASSERT_LE(node_count(simplified), node_count(index))
          << "grew:\n  index:      " << index << "\n  simplified: " << simplified;
      if (node_count(simplified) < node_count(index)) ++simplified_smaller;
      for (int point = 0; point < 24; ++point) {
        SymVarMap<int64_t> values = {{n, pick_n(rng)}};
        bool inside = true;
        for (const Loop& l : nest.loops()) {
          absl::StatusOr<int64_t> extent = evaluate(l.extent, values);
          ASSERT_TRUE(extent.ok());
          if (*extent <= 0) inside = false;
          values[l.var] = inside ? std::uniform_int_distribution<int64_t>(0, *extent - 1)(rng) : 0;
        }
        if (!inside) continue;
        absl::StatusOr<int64_t> want = evaluate(index, values);
        absl::StatusOr<int64_t> got = evaluate(simplified, values);
        ASSERT_TRUE(want.ok() && got.ok());
        ASSERT_EQ(*got, *want) << "index " << index << "\nsimplified " << simplified;
      }
    }
  }
  // The schedules' dead index arithmetic goes away in most cases.
  EXPECT_GT(simplified_smaller * 2, indices_checked)
      << simplified_smaller << " of " << indices_checked << " indices got smaller";
  std::printf("tiled indices: %lld checked, %lld smaller\n", static_cast<long long>(indices_checked),
              static_cast<long long>(simplified_smaller));
}

}  // namespace
}  // namespace relax
