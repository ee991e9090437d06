// Iteration maps (relax/shape/iter_map.h): detection of bijective and
// surjective affine maps of a loop nest, their inverse, and fuse_loops.
//
// Every map the detector calls bijective or surjective is checked against an
// independent oracle: the loop space is enumerated (for each value of the
// symbolic variables in its declared range) and the images counted inside the
// index box. Every inverse is checked both ways by evaluation:
// index(inverse(y)) == y over the whole box and inverse(index(v)) == v over the
// whole loop space.
#include "../test_env.h"
#include "relax/shape/iter_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace relax {
namespace {

using ::testing::HasSubstr;

int64_t eval(const SymExpr& e, const SymVarMap<int64_t>& env) {
  absl::StatusOr<int64_t> v = evaluate(e, env);
  EXPECT_TRUE(v.ok()) << e << ": " << v.status();
  return v.ok() ? *v : -1;
}

/// Calls `visit` with every point of the box [0, extent_k) of `vars`, under `env`.
template <typename Visit>
void for_each_point(const std::vector<SymVar>& vars, const std::vector<int64_t>& extents,
                    SymVarMap<int64_t>& env, Visit visit, size_t k = 0) {
  if (k == vars.size()) {
    visit();
    return;
  }
  for (int64_t v = 0; v < extents[k]; ++v) {
    env[vars[k]] = v;
    for_each_point(vars, extents, env, visit, k + 1);
  }
}

/// Checks `map` against enumeration at one assignment `symbols` of the
/// symbolic variables: a bijective map hits every point of its box once, a
/// surjective one every point at least once, and a bijective map's inverse
/// undoes it both ways.
::testing::AssertionResult check_at(const IterMap& map, const std::vector<SymExpr>& indices,
                                    const std::vector<LoopRange>& loops,
                                    const SymVarMap<int64_t>& symbols) {
  if (!map.surjective()) return ::testing::AssertionSuccess();
  SymVarMap<int64_t> env = symbols;
  std::vector<SymVar> loop_vars;
  std::vector<int64_t> loop_extents;
  for (const LoopRange& l : loops) {
    loop_vars.push_back(l.var);
    loop_extents.push_back(eval(l.extent, env));
  }
  std::vector<int64_t> box, offset;
  for (size_t k = 0; k < indices.size(); ++k) {
    box.push_back(eval(map.extents()[k], env));
    offset.push_back(eval(map.offsets()[k], env));
  }
  std::vector<SymVar> ys;
  for (size_t k = 0; k < indices.size(); ++k) ys.push_back(SymVar("y" + std::to_string(k)));
  std::vector<SymExpr> inverse;
  if (map.bijective()) {
    absl::StatusOr<std::vector<SymExpr>> inv = map.inverse({ys.begin(), ys.end()});
    if (!inv.ok()) return ::testing::AssertionFailure() << "inverse: " << inv.status();
    inverse = *inv;
  }
  std::map<std::vector<int64_t>, int> hits;
  std::string failure;
  for_each_point(loop_vars, loop_extents, env, [&] {
    std::vector<int64_t> y;
    for (size_t k = 0; k < indices.size(); ++k) {
      y.push_back(eval(indices[k], env));
      if (y[k] < offset[k] || y[k] >= offset[k] + box[k]) failure = "an image leaves the index box";
    }
    ++hits[y];
    if (map.bijective()) {
      SymVarMap<int64_t> at = symbols;
      for (size_t k = 0; k < ys.size(); ++k) at[ys[k]] = y[k];
      for (size_t l = 0; l < loops.size(); ++l) {
        if (eval(inverse[l], at) != env[loop_vars[l]]) failure = "inverse(index(v)) != v";
      }
    }
  });
  int64_t box_size = 1;
  for (int64_t b : box) box_size *= b;
  if (failure.empty() && static_cast<int64_t>(hits.size()) != box_size) {
    failure = "the images do not cover the index box";
  }
  if (failure.empty() && map.bijective()) {
    for (const auto& [y, count] : hits) {
      if (count != 1) failure = "a point is hit more than once";
    }
    // The other way: every point of the box maps back into the loops and to itself.
    SymVarMap<int64_t> at = symbols;
    std::vector<int64_t> shifted_box = box;
    for_each_point(ys, shifted_box, at, [&] {
      SymVarMap<int64_t> point = symbols, shifted = symbols;
      for (size_t k = 0; k < ys.size(); ++k) shifted[ys[k]] = at[ys[k]] + offset[k];
      for (size_t l = 0; l < loops.size(); ++l) {
        const int64_t v = eval(inverse[l], shifted);
        if (v < 0 || v >= loop_extents[l]) failure = "inverse(y) leaves the loop range";
        point[loop_vars[l]] = v;
      }
      for (size_t k = 0; k < indices.size(); ++k) {
        if (eval(indices[k], point) != shifted[ys[k]]) failure = "index(inverse(y)) != y";
      }
    });
  }
  if (!failure.empty()) {
    ::testing::AssertionResult r = ::testing::AssertionFailure();
    r << failure << " for " << map.to_string() << "\nindices:";
    for (const SymExpr& e : indices) r << " " << e;
    for (const auto& [v, value] : symbols) r << "\n  " << v << " = " << value;
    return r;
  }
  return ::testing::AssertionSuccess();
}

class IterMapTest : public ::testing::Test {
 protected:
  IterMapTest() {
    analyzer_.bind(n_, 1, 5);
    analyzer_.bind(m_, 1, 4);
  }

  IterMap detect(const std::vector<SymExpr>& indices, const std::vector<LoopRange>& loops) {
    absl::StatusOr<IterMap> map = detect_iter_map(indices, loops, analyzer_);
    EXPECT_TRUE(map.ok()) << map.status();
    if (!map.ok()) std::abort();
    // The oracle, at every value of n and m.
    for (int64_t n = 1; n <= 5; ++n) {
      for (int64_t m = 1; m <= 4; ++m) {
        EXPECT_TRUE(check_at(*map, indices, loops, {{n_, n}, {m_, m}})) << "n = " << n << ", m = " << m;
      }
    }
    return *map;
  }

  std::vector<std::string> strings(const std::vector<SymExpr>& es) {
    std::vector<std::string> out;
    for (const SymExpr& e : es) out.push_back(to_string(e));
    return out;
  }

  std::vector<std::string> inverse(const IterMap& map) {
    std::vector<SymExpr> ys;
    for (size_t k = 0; k < map.indices().size(); ++k) ys.push_back(SymVar("y" + std::to_string(k)));
    absl::StatusOr<std::vector<SymExpr>> inv = map.inverse(ys);
    EXPECT_TRUE(inv.ok()) << inv.status();
    return inv.ok() ? strings(*inv) : std::vector<std::string>{};
  }

  Analyzer analyzer_;
  SymVar n_{"n"}, m_{"m"}, i_{"i"}, j_{"j"}, k_{"k"};
};

using Strings = std::vector<std::string>;

TEST_F(IterMapTest, SplitOfOneLoopIsTheTwoDimensionalSpace) {
  const IterMap map = detect({floordiv(i_, 4), floormod(i_, 4)}, {{i_, n_ * 4}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(map.reason(), "");
  EXPECT_EQ(strings(map.extents()), (Strings{"n", "4"}));
  EXPECT_EQ(strings(map.offsets()), (Strings{"0", "0"}));
  const IterSplit& outer = map.indices()[0].splits.at(0);
  EXPECT_EQ(outer.loop, 0);
  EXPECT_EQ(to_string(outer.lower), "4");
  EXPECT_EQ(to_string(outer.extent), "n");
  EXPECT_EQ(to_string(outer.value), "floordiv(i, 4)");
  EXPECT_EQ(inverse(map), (Strings{"y0 * 4 + y1"}));
}

TEST_F(IterMapTest, FusedPairIsOneDimension) {
  const IterMap map = detect({i_ * 4 + j_}, {{i_, n_}, {j_, 4}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"n * 4"}));
  ASSERT_EQ(map.indices()[0].splits.size(), 2u);
  EXPECT_EQ(to_string(map.indices()[0].splits[0].value), "j");
  EXPECT_EQ(to_string(map.indices()[0].splits[1].scale), "4");
  EXPECT_EQ(inverse(map), (Strings{"floordiv(y0, 4)", "floormod(y0, 4)"}));
}

TEST_F(IterMapTest, SplitOfAFusedPair) {
  const SymExpr fused = i_ * 4 + j_;
  const IterMap map = detect({floordiv(fused, 8), floormod(fused, 8)}, {{i_, m_ * 2}, {j_, 4}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"m", "8"}));
  // The divisor 8 meets i's range at a multiple (i*4 + j: i's digits start at 4),
  // so the splits are of the loops themselves.
  ASSERT_EQ(map.indices()[0].splits.size(), 1u);
  EXPECT_EQ(to_string(map.indices()[0].splits[0].value), "floordiv(i, 2)");
  EXPECT_EQ(map.indices()[0].splits[0].loop, 0);
  ASSERT_EQ(map.indices()[1].splits.size(), 2u);
  EXPECT_EQ(to_string(map.indices()[1].splits[0].value), "j");
  EXPECT_EQ(to_string(map.indices()[1].splits[1].value), "floormod(i, 2)");
  EXPECT_EQ(to_string(map.indices()[1].splits[1].scale), "4");
  EXPECT_EQ(inverse(map), (Strings{"y0 * 2 + floordiv(y1, 4)", "floormod(y1, 4)"}));
}

TEST_F(IterMapTest, SplitOfAFusedPairAcrossItsTerms) {
  // The divisor 2 cuts j's range [0, 3): the splits stay splits of the fused sum.
  const SymExpr fused = i_ * 3 + j_;
  const IterMap map = detect({floordiv(fused, 2), floormod(fused, 2)}, {{i_, m_ * 2}, {j_, 3}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"m * 3", "2"}));
  const IterSplit& outer = map.indices()[0].splits.at(0);
  EXPECT_EQ(to_string(outer.source), "i * 3 + j");
  EXPECT_EQ(outer.loop, -1);
  EXPECT_EQ(to_string(outer.source_extent), "m * 6");
  EXPECT_EQ(to_string(outer.value), "floordiv(i * 3 + j, 2)");
  EXPECT_EQ(inverse(map), (Strings{"floordiv(y0 * 2 + y1, 3)", "floormod(y0 * 2 + y1, 3)"}));
}

TEST_F(IterMapTest, SplitsOfAFusedSumStayWholeWhenOneMustStay) {
  // floordiv(F, 6) and floormod(F, 6) cut j's range [0, 4) of F = i*4 + j, but
  // floormod(floormod(F, 6), 2) alone would be floormod(j, 2): all of F's pieces
  // stay pieces of F, or j would be read as used by F and by that index.
  const SymExpr fused = i_ * 4 + j_;
  const SymExpr low = floormod(fused, 6);
  const IterMap map = detect({floordiv(fused, 6), floordiv(low, 2), floormod(low, 2)}, {{i_, 3}, {j_, 4}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"2", "3", "2"}));
  EXPECT_EQ(to_string(map.indices()[2].splits.at(0).value), "floormod(i * 4 + j, 2)");
}

TEST_F(IterMapTest, RemainderWithScalesReducedByTheSimplifier) {
  // The canonical form of floormod(i*3 + j, 2) is floormod(i + j, 2): scales
  // reduced modulo 2. Scales that differ by multiples of the divisor and form a
  // mixed radix (3 for i, given j in [0, 3)) read it back.
  const SymExpr mod = analyzer_.simplify(floormod(i_ * 3 + j_, 2));
  EXPECT_EQ(to_string(mod), "floormod(i + j, 2)");
  const IterMap map = detect({floordiv(i_ * 3 + j_, 2), mod}, {{i_, m_ * 2}, {j_, 3}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"m * 3", "2"}));
}

TEST_F(IterMapTest, TransposeIsBijective) {
  const IterMap map = detect({j_, i_}, {{i_, n_}, {j_, m_}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"m", "n"}));
  EXPECT_EQ(inverse(map), (Strings{"y1", "y0"}));
}

TEST_F(IterMapTest, ALoopUsedTwiceIsNotAMap) {
  const IterMap map = detect({i_, i_}, {{i_, n_}});
  EXPECT_EQ(map.kind(), IterMapKind::kNone);
  EXPECT_EQ(map.reason(), "index 1: split `i` of `i` is used twice (also by index 0)");
  EXPECT_FALSE(map.inverse({SymVar("a"), SymVar("b")}).ok());
}

TEST_F(IterMapTest, ASplitUsedTwiceInsideAFusedSum) {
  SymExpr fused = i_ * 3 + j_;
  IterMap map = detect({fused, floordiv(fused, 2)}, {{i_, m_ * 2}, {j_, 3}});
  EXPECT_EQ(map.kind(), IterMapKind::kNone);
  EXPECT_EQ(map.reason(), "the fused sum `i * 3 + j`: split `i` of `i` is used twice (also by index 0)");
  // Where the division lines up with the terms, the same shape is an overlap of i's splits.
  fused = i_ * 4 + j_;
  map = detect({fused, floordiv(fused, 8)}, {{i_, m_ * 2}, {j_, 4}});
  EXPECT_EQ(map.kind(), IterMapKind::kNone);
  EXPECT_EQ(map.reason(), "splits `i` of `i` and `floordiv(i, 2)` overlap or are not nested");
}

TEST_F(IterMapTest, QuotientAloneIsSurjectiveOnly) {
  const IterMap map = detect({floordiv(i_, 4)}, {{i_, n_ * 4}});
  EXPECT_EQ(map.kind(), IterMapKind::kSurjective);
  EXPECT_EQ(strings(map.extents()), (Strings{"n"}));
  EXPECT_EQ(map.reason(), "`floormod(i, 4)` of `i` is not used by any index");
  absl::StatusOr<std::vector<SymExpr>> inv = map.inverse({SymVar("y")});
  ASSERT_FALSE(inv.ok());
  EXPECT_THAT(inv.status().message(), HasSubstr("not bijective"));
}

TEST_F(IterMapTest, RemainderAloneAndGapsAreSurjectiveOnly) {
  IterMap map = detect({floormod(i_, 4)}, {{i_, n_ * 4}});
  EXPECT_EQ(map.kind(), IterMapKind::kSurjective);
  EXPECT_EQ(map.reason(), "`floordiv(i, 4)` of `i` is not used by any index");
  // Bits 0 and 3..4 of i, but not 1..2.
  map = detect({floordiv(i_, 8), floormod(i_, 2)}, {{i_, 16}});
  EXPECT_EQ(map.kind(), IterMapKind::kSurjective);
  EXPECT_EQ(map.reason(), "`floormod(floordiv(i, 2), 4)` of `i` is not used by any index");
  map = detect({i_}, {{i_, n_}, {j_, 3}});
  EXPECT_EQ(map.kind(), IterMapKind::kSurjective);
  EXPECT_EQ(map.reason(), "loop `j` is not used by any index");
}

TEST_F(IterMapTest, UnusedLoopOfExtentOneKeepsTheMapBijective) {
  const IterMap map = detect({i_}, {{i_, n_}, {j_, 1}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(inverse(map), (Strings{"y0", "0"}));
}

TEST_F(IterMapTest, SumOfTwoRangesIsNotAMap) {
  const IterMap map = detect({i_ + j_}, {{i_, n_}, {j_, 4}});
  EXPECT_EQ(map.kind(), IterMapKind::kNone);
  EXPECT_THAT(map.reason(), HasSubstr("index 0: "));
  EXPECT_THAT(map.reason(), HasSubstr("mixed radix"));
}

TEST_F(IterMapTest, OverlappingSplitsAreNotAMap) {
  const IterMap map = detect({floordiv(i_, 2), floormod(i_, 4)}, {{i_, 8}});
  EXPECT_EQ(map.kind(), IterMapKind::kNone);
  EXPECT_THAT(map.reason(), HasSubstr("overlap"));
}

TEST_F(IterMapTest, ConstantOffsetIsKept) {
  const IterMap map = detect({i_ + 3, j_}, {{i_, n_}, {j_, 4}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"n", "4"}));
  EXPECT_EQ(strings(map.offsets()), (Strings{"3", "0"}));
  EXPECT_EQ(inverse(map), (Strings{"y0 - 3", "y1"}));
  // A symbolic offset, and an offset that is a multiple of the divisor.
  const IterMap shifted = detect({floordiv(i_ + m_ * 4, 4), floormod(i_, 4)}, {{i_, n_ * 4}});
  ASSERT_TRUE(shifted.bijective()) << shifted.to_string();
  EXPECT_EQ(strings(shifted.offsets()), (Strings{"m", "0"}));
}

TEST_F(IterMapTest, OffsetInsideADivisionIsRejected) {
  const IterMap map = detect({floordiv(i_ + 3, 4), floormod(i_ + 3, 4)}, {{i_, n_ * 4}});
  EXPECT_EQ(map.kind(), IterMapKind::kNone);
  EXPECT_THAT(map.reason(), HasSubstr("is not a multiple of the divisor `4`"));
}

TEST_F(IterMapTest, SymbolicDivisor) {
  const IterMap map = detect({floordiv(i_, m_), floormod(i_, m_)}, {{i_, m_ * n_}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"n", "m"}));
  EXPECT_EQ(inverse(map), (Strings{"m * y0 + y1"}));
  // The fused form over a symbolic inner extent, split back by it.
  const SymExpr fused = i_ * m_ + j_;
  const IterMap again = detect({floordiv(fused, m_), floormod(fused, m_)}, {{i_, n_}, {j_, m_}});
  ASSERT_TRUE(again.bijective()) << again.to_string();
  EXPECT_EQ(strings(again.extents()), (Strings{"n", "m"}));
  EXPECT_EQ(inverse(again), (Strings{"y0", "y1"}));
}

TEST_F(IterMapTest, ThreeLevelSplit) {
  // i in [0, 4*n*2): (floordiv(i, 8), floormod(floordiv(i, 2), 4), floormod(i, 2)).
  const IterMap map = detect({floordiv(i_, 8), floormod(floordiv(i_, 2), 4), floormod(i_, 2)},
                             {{i_, n_ * 8}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"n", "4", "2"}));
  EXPECT_EQ(to_string(map.indices()[1].splits[0].value), "floormod(floordiv(i, 2), 4)");
}

TEST_F(IterMapTest, SymbolicThreeLevelSplitAndRefuse) {
  // i in [0, n*m*4) as (n, m, 4), then the inner two fused back and split by 2.
  const SymExpr mid = floormod(floordiv(i_, 4), m_), low = floormod(i_, 4);
  IterMap map = detect({floordiv(i_, m_ * 4), mid, low}, {{i_, n_ * m_ * 4}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"n", "m", "4"}));
  EXPECT_EQ(inverse(map), (Strings{"m * y0 * 4 + y1 * 4 + y2"}));
  const SymExpr refused = mid * 4 + low;
  map = detect({floordiv(i_, m_ * 4), floordiv(refused, 2), floormod(refused, 2)}, {{i_, n_ * m_ * 4}});
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_EQ(strings(map.extents()), (Strings{"n", "m * 2", "2"}));
}

TEST_F(IterMapTest, UnsupportedFormsSayWhy) {
  struct Case {
    SymExpr index;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {min(i_, 3), "uses a loop variable under min, which is not affine"},
      {i_ * j_, "multiplies two loop-dependent factors"},
      {floordiv(i_, j_ + 1), "divides by a loop-dependent divisor"},
      {n_ * 4 - 1 - i_, "is not proven positive"},
      {i_ * 2, "its smallest scale is `2`, not 1"},
      {floordiv(i_, 3), "is not a multiple of `3`"},
  };
  for (const Case& c : cases) {
    const IterMap map = detect({c.index}, {{i_, n_ * 4}, {j_, 4}});
    EXPECT_EQ(map.kind(), IterMapKind::kNone) << c.index;
    EXPECT_THAT(map.reason(), HasSubstr(c.reason)) << c.index;
    EXPECT_TRUE(map.indices().empty());
  }
}

TEST_F(IterMapTest, ExtentNotProvenPositive) {
  Analyzer unbounded;
  SymVar z("z");
  absl::StatusOr<IterMap> map = detect_iter_map({i_}, {{i_, z}}, unbounded);
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->kind(), IterMapKind::kNone);
  EXPECT_EQ(map->reason(), "the extent `z` of loop `i` is not proven >= 1");
}

TEST_F(IterMapTest, BadInputIsAnError) {
  absl::StatusOr<IterMap> map = detect_iter_map({i_}, {{i_, n_}, {i_, 4}}, analyzer_);
  ASSERT_FALSE(map.ok());
  EXPECT_THAT(map.status().message(), HasSubstr("loop variable i is listed twice (loops 0 and 1)"));
  map = detect_iter_map({i_}, {{i_, n_}, {j_, i_ + 1}}, analyzer_);
  ASSERT_FALSE(map.ok());
  EXPECT_THAT(map.status().message(), HasSubstr("uses the loop variable i"));
  map = detect_iter_map({cast(DataType::int32(), i_)}, {{i_, n_}}, analyzer_);
  ASSERT_FALSE(map.ok());
  EXPECT_THAT(map.status().message(), HasSubstr("index 0 is not an int64 expression"));
  map = detect_iter_map({i_}, {{i_, n_}}, analyzer_);
  ASSERT_TRUE(map.ok());
  EXPECT_FALSE(map->inverse({}).ok());
  EXPECT_FALSE(map->inverse({SymExpr::boolean(true)}).ok());
}

TEST_F(IterMapTest, InverseOfExpressions) {
  // The inverse takes expressions for the index values, not only variables.
  const IterMap map = detect({floordiv(i_, 4), floormod(i_, 4)}, {{i_, n_ * 4}});
  SymVar a("a"), b("b");
  absl::StatusOr<std::vector<SymExpr>> inv = map.inverse({a * 2 + b, SymExpr(3)});
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(to_string(inv->at(0)), "a * 8 + b * 4 + 3");
}

TEST_F(IterMapTest, FuseLoopsAndItsSplitsAreInverse) {
  const std::vector<LoopRange> loops = {{i_, n_}, {j_, 3}, {k_, m_}};
  SymVar f("f");
  const FusedLoops fused = fuse_loops(loops, f, analyzer_);
  EXPECT_EQ(to_string(fused.extent), "m * n * 3");
  EXPECT_EQ(to_string(fused.index), "(i * 3 + j) * m + k");
  EXPECT_EQ(strings(fused.loop_values),
            (Strings{"floordiv(f, m * 3)", "floormod(floordiv(f, m), 3)", "floormod(f, m)"}));
  // The fused index is a bijection onto [0, extent) whose inverse is the splits...
  const IterMap map = detect({fused.index}, loops);
  ASSERT_TRUE(map.bijective()) << map.to_string();
  EXPECT_TRUE(analyzer_.prove_equal(map.extents()[0], fused.extent));
  absl::StatusOr<std::vector<SymExpr>> inv = map.inverse({f});
  ASSERT_TRUE(inv.ok());
  // ...and the splits over f, as a map of the single loop f, invert to the fused index.
  const IterMap back = detect(fused.loop_values, {{f, fused.extent}});
  ASSERT_TRUE(back.bijective()) << back.to_string();
  absl::StatusOr<std::vector<SymExpr>> fused_again = back.inverse({i_, j_, k_});
  ASSERT_TRUE(fused_again.ok());
  EXPECT_TRUE(analyzer_.prove_equal(fused_again->at(0), fused.index)) << fused_again->at(0);
}

TEST_F(IterMapTest, FuseOfNoLoopsIsOnePoint) {
  const FusedLoops fused = fuse_loops({}, SymVar("f"), analyzer_);
  EXPECT_EQ(to_string(fused.index), "0");
  EXPECT_EQ(to_string(fused.extent), "1");
  EXPECT_TRUE(fused.loop_values.empty());
}

// ---------------------------------------------------------------------------
// Random tilings: loops whose extents are products of factors (2, 3, 4 or the
// symbolic n), split at a factor boundary, fused with a neighbour, swapped and
// offset at random. Each is bijective by construction: the detector must say
// so with the constructed extents, and the oracle checks it and the inverse.
// Dropping an index leaves a surjective map; repeating one leaves none.

struct Item {
  SymExpr index;
  std::vector<SymExpr> factors;  // outermost first
  SymExpr offset = SymExpr(0);
};

SymExpr product(const std::vector<SymExpr>& factors) {
  SymExpr p = 1;
  for (const SymExpr& f : factors) p = p * f;
  return p;
}

TEST(IterMapRandomTest, TilingsRoundTrip) {
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(20240611);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  SymVar n("n");
  Analyzer analyzer;
  analyzer.bind(n, 1, 3);
  const std::vector<SymVar> vars = {SymVar("i"), SymVar("j"), SymVar("k")};
  int bijective = 0, surjective = 0, rejected = 0, fused_sources = 0;
  const int64_t cases = testing_util::fuzz_trials(3000);
  for (int64_t c = 0; c < cases; ++c) {
    const int num_loops = pick(1, 3);
    int budget = pick(num_loops, 5);  // factors in all
    std::vector<LoopRange> loops;
    std::vector<Item> items;
    for (int l = 0; l < num_loops; ++l) {
      std::vector<SymExpr> factors;
      const int count = l + 1 == num_loops ? budget : pick(1, budget - (num_loops - l - 1));
      budget -= count;
      for (int f = 0; f < count; ++f) {
        const int kind = pick(0, 3);
        factors.push_back(kind == 3 ? SymExpr(n) : SymExpr(kind + 2));
      }
      loops.push_back({vars[static_cast<size_t>(l)], product(factors)});
      items.push_back({vars[static_cast<size_t>(l)], factors});
    }
    auto split_item = [&](size_t a) {
      if (items[a].factors.size() < 2) return;
      const auto cut = static_cast<std::ptrdiff_t>(pick(1, static_cast<int>(items[a].factors.size()) - 1));
      const std::vector<SymExpr> outer(items[a].factors.begin(), items[a].factors.begin() + cut);
      const std::vector<SymExpr> inner(items[a].factors.begin() + cut, items[a].factors.end());
      const SymExpr e = items[a].index;
      items[a] = {floordiv(e, product(inner)), outer};
      items.insert(items.begin() + static_cast<std::ptrdiff_t>(a) + 1, Item{floormod(e, product(inner)), inner});
    };
    for (int op = pick(0, 5); op > 0; --op) {
      const size_t a = static_cast<size_t>(pick(0, static_cast<int>(items.size()) - 1));
      switch (pick(0, 4)) {
        case 0:  // split at a factor boundary
          split_item(a);
          break;
        case 1:
        case 4: {  // fuse with the next item
          if (a + 1 >= items.size()) break;
          std::vector<SymExpr> factors = items[a].factors;
          factors.insert(factors.end(), items[a + 1].factors.begin(), items[a + 1].factors.end());
          items[a] = {items[a].index * product(items[a + 1].factors) + items[a + 1].index, factors};
          items.erase(items.begin() + static_cast<std::ptrdiff_t>(a) + 1);
          break;
        }
        case 2: {  // split by other digits of the same extent: 2*3 as 3*2, 4*3 as 2*3*2
          std::vector<SymExpr> primes;
          for (const SymExpr& f : items[a].factors) {
            if (!f.as_const()) {
              primes.clear();
              break;
            }
            for (int64_t v = *f.as_const(); v > 1;) {
              const int64_t p = v % 2 == 0 ? 2 : 3;
              primes.push_back(SymExpr(p));
              v /= p;
            }
          }
          if (primes.empty()) break;
          std::shuffle(primes.begin(), primes.end(), rng);
          items[a].factors = primes;
          split_item(a);
          break;
        }
        default:
          std::swap(items[a], items[static_cast<size_t>(pick(0, static_cast<int>(items.size()) - 1))]);
          break;
      }
    }
    if (pick(0, 4) == 0) {
      Item& shifted = items[static_cast<size_t>(pick(0, static_cast<int>(items.size()) - 1))];
      shifted.offset = pick(1, 5);
      shifted.index = shifted.index + shifted.offset;
    }
    std::vector<SymExpr> indices;
    for (const Item& item : items) indices.push_back(item.index);
    const int variant = pick(0, 5);  // 0: drop an index, 1: repeat one, else as built
    if (variant == 0 && indices.size() > 1) {
      indices.erase(indices.begin() + pick(0, static_cast<int>(indices.size()) - 1));
    } else if (variant == 1) {
      indices.push_back(indices[static_cast<size_t>(pick(0, static_cast<int>(indices.size()) - 1))]);
    }
    // Half of the cases give the detector the simplifier's canonical form.
    if (pick(0, 1) == 1) {
      Analyzer with_loops = analyzer;
      for (const LoopRange& l : loops) with_loops.bind(l.var, 0, *with_loops.upper_bound(l.extent) - 1);
      for (SymExpr& e : indices) e = with_loops.simplify(e);
    }
    absl::StatusOr<IterMap> map = detect_iter_map(indices, loops, analyzer);
    ASSERT_TRUE(map.ok()) << map.status();
    std::string text;
    for (const SymExpr& e : indices) text += " " + to_string(e);
    if (indices.size() == items.size()) {
      ASSERT_TRUE(map->bijective()) << "case " << c << ":" << text << "\n" << map->to_string();
      for (size_t k = 0; k < items.size(); ++k) {
        EXPECT_TRUE(analyzer.prove_equal(map->extents()[k], product(items[k].factors))) << text;
        EXPECT_TRUE(analyzer.prove_equal(map->offsets()[k], items[k].offset)) << text;
      }
    } else if (indices.size() < items.size()) {
      EXPECT_EQ(map->kind(), IterMapKind::kSurjective) << "case " << c << ":" << text << "\n" << map->to_string();
    } else {
      EXPECT_EQ(map->kind(), IterMapKind::kNone) << "case " << c << ":" << text << "\n" << map->to_string();
      EXPECT_THAT(map->reason(), HasSubstr("used twice"));
    }
    for (const IterIndex& index : map->indices()) {
      bool any = false;
      for (const IterSplit& sp : index.splits) any = any || sp.loop < 0;
      fused_sources += any;
    }
    bijective += map->bijective();
    surjective += map->kind() == IterMapKind::kSurjective;
    rejected += map->kind() == IterMapKind::kNone;
    for (int64_t nv = 1; nv <= 3; ++nv) {
      ASSERT_TRUE(check_at(*map, indices, loops, {{n, nv}})) << "case " << c << ", n = " << nv;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "[ iter_map ] %lld random tilings: %d bijective, %d surjective, %d rejected; %d indices split "
      "a fused sum; %.2f s\n",
      static_cast<long long>(cases), bijective, surjective, rejected, fused_sources, seconds);
}

}  // namespace
}  // namespace relax
