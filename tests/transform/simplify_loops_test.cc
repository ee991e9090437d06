// simplify-loops (its before/after cases are text files under
// tests/transform/passes/simplify-loops/): kernels give the same results
// before and after, run by the loop-level evaluator over several sizes;
// statistics; unchanged kernels keep their node; the default pipeline ends
// with the pass.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/support/check.h"
#include "relax/transform/instrument.h"
#include "relax/transform/passes.h"
#include "relax/transform/pipeline.h"
#include "relax/transform/prim_eval.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

namespace st = schedule_test;


IRModule run_pass(const IRModule& mod, PassContext& ctx) {
  return st::run_verified(mod, {create_simplify_loops_pass()}, ctx);
}

int64_t statistic(const PassContext& ctx, const std::string& name) {
  auto p = ctx.statistics().find("simplify-loops");
  if (p == ctx.statistics().end()) return 0;
  auto s = p->second.find(name);
  return s == p->second.end() ? 0 : s->second;
}

runtime::Tensor int_tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(std::move(shape), DataType::int64());
  RELAX_CHECK(t.ok()) << t.status().message();
  RELAX_CHECK(t->nbytes() == values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(t->data(), values.data(), t->nbytes());
  return *t;
}

std::vector<int64_t> values_of(const runtime::Tensor& t) {
  std::vector<int64_t> out(t.nbytes() / sizeof(int64_t));
  if (!out.empty()) std::memcpy(out.data(), t.data(), t.nbytes());
  return out;
}

// A copy tiled by 4 over floordiv(n + 3, 4) tiles: its tail check is needed
// (n need not be a multiple of 4), but a check implied by another is not, nor is
// the one under `floormod(n, 4) == 0`; an else-branch and a let bring their own
// facts.
constexpr const char* kSimplifyKernels = R"(module {
  prim_func @tiles(A: Buffer[(n,), int64], B: Buffer[(n,), int64], C: Buffer[(n,), int64], m: int64) {
    for i in range(floordiv(n + 3, 4)) {
      for j in range(4) {
        if i * 4 + j < n {
          B[i * 4 + j] = A[floordiv(i * 4 + j, 4) * 4 + floormod(j, 4)] * 3
          if i * 4 + j < m {
            if i * 4 + j < m + 2 {
              B[i * 4 + j] = B[i * 4 + j] + select(i * 4 + j < m + 1, 1, 100)
            }
          }
        }
      }
    }
    if floormod(n, 4) == 0 {
      for i in range(floordiv(n, 4)) {
        for j in range(4) {
          let k = i * 4 + j {
            if k < n {
              C[k] = A[floordiv(k, 4) * 4 + floormod(k, 4)] + floordiv(k, 4)
            }
          }
        }
      }
    } else {
      for i in range(n) {
        C[i] = select(floormod(n, 4) == 0, 0, min(i, n) + A[i])
      }
    }
  }
})";

TEST(SimplifyLoopsTest, SameResultsBeforeAndAfter) {
  IRModule before = st::parse_or_fail(kSimplifyKernels);
  PassContext ctx;
  IRModule after = run_pass(before, ctx);
  // i*4 + j < m + 2 under i*4 + j < m, and k < n under floormod(n, 4) == 0
  EXPECT_EQ(statistic(ctx, "removed_ifs"), 2);
  for (int64_t n : {0, 1, 3, 4, 7, 8, 13, 16}) {
    for (int64_t m : {int64_t{0}, n / 2, n + 5}) {
      std::vector<int64_t> a(n);
      for (int64_t x = 0; x < n; ++x) a[x] = x * 7 - 3;
      std::vector<std::vector<int64_t>> results;
      for (const IRModule* mod : {&before, &after}) {
        runtime::Tensor b = int_tensor({n}, std::vector<int64_t>(n, -1));
        runtime::Tensor c = int_tensor({n}, std::vector<int64_t>(n, -1));
        absl::Status s = run_prim_func(mod->lookup("tiles"),
                                       {int_tensor({n}, a), b, c, PrimScalar::from_int(m)});
        ASSERT_TRUE(s.ok()) << s;
        std::vector<int64_t> out = values_of(b), more = values_of(c);
        out.insert(out.end(), more.begin(), more.end());
        results.push_back(std::move(out));
      }
      EXPECT_EQ(results[0], results[1]) << "n = " << n << ", m = " << m;
    }
  }
  // The reference: B[x] = 3*A[x] (+1 where x < m), C[x] = A[x] + (x / 4 or x) by n % 4.
  runtime::Tensor b = int_tensor({6}, std::vector<int64_t>(6, 0));
  runtime::Tensor c = int_tensor({6}, std::vector<int64_t>(6, 0));
  ASSERT_TRUE(run_prim_func(after.lookup("tiles"),
                            {int_tensor({6}, {1, 2, 3, 4, 5, 6}), b, c, PrimScalar::from_int(2)})
                  .ok());
  EXPECT_EQ(values_of(b), (std::vector<int64_t>{4, 7, 9, 12, 15, 18}));
  EXPECT_EQ(values_of(c), (std::vector<int64_t>{1, 3, 5, 7, 9, 11}));
}

TEST(SimplifyLoopsTest, ProvenChecksLeaveAndOthersStay) {
  PassContext ctx;
  IRModule after = run_pass(st::parse_or_fail(kSimplifyKernels), ctx);
  const std::string text = to_text(after);
  // The tail check and the check against m stay, the one nested under it goes and
  // so does the select; in the divisible branch the let's check goes and the
  // indices fold to k; in the else-branch floormod(n, 4) != 0 decides the select.
  EXPECT_NE(text.find("if i * 4 + j < n {"), std::string::npos) << text;
  EXPECT_NE(text.find("if i * 4 + j < m {"), std::string::npos) << text;
  EXPECT_EQ(text.find("m + 2"), std::string::npos) << text;
  EXPECT_NE(text.find("B[i * 4 + j] = B[i * 4 + j] + 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("if k < n"), std::string::npos) << text;
  EXPECT_NE(text.find("C[k] = floordiv(k, 4) + A[k]"), std::string::npos) << text;
  EXPECT_NE(text.find("C[i] = i + A[i]"), std::string::npos) << text;
}

TEST(SimplifyLoopsTest, UnchangedKernelKeepsItsNode) {
  IRModule mod = st::parse_or_fail(R"(module {
  prim_func @copy(A: Buffer[(n,), int64], B: Buffer[(n,), int64]) {
    for i in range(n) {
      B[i] = A[i]
    }
  }
})");
  PassContext ctx;
  IRModule out = run_pass(mod, ctx);
  EXPECT_TRUE(out.lookup("copy").same_as(mod.lookup("copy")));
  EXPECT_EQ(statistic(ctx, "simplified_values"), 0);
}

TEST(SimplifyLoopsTest, ConditionsReadingBuffersAreNoFacts) {
  // The branch writes A[0], so `A[0] < 5` may be false again inside it: the
  // inner select must stay.
  IRModule mod = st::parse_or_fail(R"(module {
  prim_func @self_modifying(A: Buffer[(4,), int64]) {
    if A[0] < 5 {
      A[0] = 10
      A[1] = select(A[0] < 5, 1, 2)
    }
  }
})");
  PassContext ctx;
  IRModule out = run_pass(mod, ctx);
  EXPECT_NE(to_text(out).find("select(A[0] <= 4, 1, 2)"), std::string::npos) << to_text(out);
  runtime::Tensor a = int_tensor({4}, {0, 0, 0, 0});
  ASSERT_TRUE(run_prim_func(out.lookup("self_modifying"), {a}).ok());
  EXPECT_EQ(values_of(a), (std::vector<int64_t>{10, 2, 0, 0}));
}

TEST(SimplifyLoopsTest, ReductionInitKnowsItsFirstStep) {
  IRModule mod = st::parse_or_fail(R"(module {
  prim_func @sum(A: Buffer[(n, 8), int64], B: Buffer[(n,), int64]) {
    for i in range(n) {
      for k in range(8) {
        block sum(vi = spatial(n, i), vk = reduce(8, k)) {
          init {
            B[vi] = select(vk == 0, 0, 99)
          }
          B[vi] = B[vi] + A[vi, min(vk, 7)]
        }
      }
    }
  }
})");
  PassContext ctx;
  IRModule out = run_pass(mod, ctx);
  const std::string text = to_text(out);
  EXPECT_NE(text.find("B[vi] = 0"), std::string::npos) << text;
  EXPECT_NE(text.find("A[vi, vk]"), std::string::npos) << text;
}

TEST(SimplifyLoopsTest, DefaultPipelineRunsItLastBeforeLowerAlloc) {
  Target without_libraries;
  without_libraries.libraries = {};
  EXPECT_EQ(default_pipeline(without_libraries).to_string(),
            "combine-parallel-matmul,lift-weight-transforms,legalize-ops,fixed-point(canonicalize-bindings,fold-constant,"
            "cse,dce),annotate-op-pattern,"
            "fuse-ops,fuse-tir,dce,simplify-loops,lower-alloc,schedule-cpu,lift-workspace,plan-memory");
  // With a library, dispatch-library runs first, so what it leaves is legalized as before.
  Target with_onednn;
  with_onednn.libraries = {"onednn"};
  EXPECT_EQ(default_pipeline(with_onednn).to_string(),
            "combine-parallel-matmul,lift-weight-transforms,dispatch-library,legalize-ops,"
            "fixed-point(canonicalize-bindings,fold-constant,cse,dce),"
            "annotate-op-pattern,fuse-ops,fuse-tir,dce,simplify-loops,lower-alloc,schedule-cpu,lift-workspace,plan-memory");
}

}  // namespace
}  // namespace relax::transform
