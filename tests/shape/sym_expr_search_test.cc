// any_subexpr, reads_memory and mentions_var (relax/shape/sym_expr_search.h).
#include <gtest/gtest.h>

#include <vector>

#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"
#include "relax/shape/sym_expr_search.h"

namespace relax {
namespace {

TEST(SymExprSearch, ReadsMemoryFindsALoadAtAnyDepthAndOnlyThere) {
  SymVar n("n"), i("i");
  Buffer a("A", DataType::float32(), {n});
  Buffer idx("idx", DataType::int64(), {n});
  EXPECT_FALSE(reads_memory(n * 4 + i));
  EXPECT_TRUE(reads_memory(buffer_load(a, {i})));
  EXPECT_TRUE(reads_memory(i + floordiv(buffer_load(idx, {i}), 2)));
  EXPECT_FALSE(reads_memory(SymExpr()));  // an undefined expression reads nothing
}

TEST(SymExprSearch, MentionsVarComparesIdentityNotName) {
  SymVar n("n"), other_n("n"), i("i");
  Buffer a("A", DataType::int64(), {n});
  EXPECT_TRUE(mentions_var(n * 4 + i, n));
  EXPECT_FALSE(mentions_var(n * 4 + i, other_n));  // same name, another variable
  EXPECT_TRUE(mentions_var(buffer_load(a, {i * 2}), i));  // through a load's indices
  EXPECT_FALSE(mentions_var(buffer_load(a, {i * 2}), n));  // not through its buffer's shape
}

TEST(SymExprSearch, AnySubexprStopsAtTheFirstHitAndVisitsASharedSubtreeOnce) {
  SymVar n("n");
  SymExpr shared = n * 3 + 1;
  SymExpr e = shared;
  for (int k = 0; k < 60; ++k) e = e * shared + e;  // a DAG of 2^60 paths
  int visited = 0;
  EXPECT_FALSE(any_subexpr(e, [&](const SymExpr&) {
    ++visited;
    return false;
  }));
  EXPECT_LT(visited, 1000);  // linear in the distinct nodes, not in the paths
  int before_hit = 0;
  EXPECT_TRUE(any_subexpr(e, [&](const SymExpr& x) {
    ++before_hit;
    return x.is_var();
  }));
  EXPECT_LT(before_hit, visited);
}

}  // namespace
}  // namespace relax
