// The schedule primitives (relax/transform/schedule.h): each one keeps what a
// kernel computes -- checked by running the kernel before and after through
// the loop-level evaluator on the same random inputs, at sizes that are and
// are not multiples of the split factors -- and refuses, with a message naming
// the loop, what it cannot do. The readable before/after forms are the
// pass-file tests under tests/transform/passes/schedule/.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/well_formed.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"
#include "relax/transform/schedule.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

using schedule_test::expect_same_results;
namespace st = schedule_test;





constexpr const char* kKernels = R"(module {
  prim_func @add(A: Buffer[(n, m), float32], B: Buffer[(n, m), float32], C: Buffer[(n, m), float32]) {
    for i in range(n) {
      for j in range(m) {
        block add(vi = spatial(n, i), vj = spatial(m, j)) {
          C[vi, vj] = A[vi, vj] * B[vi, vj] + A[vi, vj]
        }
      }
    }
  }
  prim_func @row_sum(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block sum(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 0f32
          }
          B[vi] = B[vi] + A[vi, vk] * A[vi, vk]
        }
      }
    }
  }
  prim_func @accumulate(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block acc(vi = spatial(n, i), vk = reduce(m, k)) {
          B[vi] = max(B[vi], A[vi, vk])
        }
      }
    }
  }
  prim_func @total(A: Buffer[(n, m), float32], B: Buffer[(), float32]) {
    for k in range(n) {
      for l in range(m) {
        block total(vk = reduce(n, k), vl = reduce(m, l)) {
          init {
            B[] = 1f32
          }
          B[] = B[] + A[vk, vl]
        }
      }
    }
  }
  prim_func @scatter(A: Buffer[(n, m), float32], B: Buffer[(m,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block scatter(vi = spatial(n, i), vk = reduce(m, k)) {
          B[vk] = B[vk] + A[vi, vk]
        }
      }
    }
  }
  prim_func @loose(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      B[0] = B[0] + A[i]
    }
  }
  prim_func @two_nests(A: Buffer[(n, m), float32], B: Buffer[(n, m), float32]) {
    for i in range(n) {
      for j in range(m) {
        block one(vi = spatial(n, i), vj = spatial(m, j)) {
          B[vi, vj] = A[vi, vj]
        }
      }
      for j in range(m) {
        block two(vi = spatial(n, i), vj = spatial(m, j)) {
          B[vi, vj] = B[vi, vj] * 2f32
        }
      }
    }
  }
})";

const std::vector<int64_t> kSizes = {1, 3, 16, 17, 33};

TEST(ScheduleTest, LoopNamesAreThePrintedOnes) {
  Expr f = st::function_of(kKernels, "two_nests");
  // The parser gives both loops `j` one variable: they print alike.
  EXPECT_EQ(schedule::loop_names(f), (std::vector<std::string>{"i", "j", "j#2"}));
  st::expect_error(schedule::split(f, "x", 4), "no loop `x`; its loops are i, j, j#2");
  Expr g = st::ok_or_die(schedule::split(f, "j#2", 4));
  EXPECT_EQ(schedule::loop_names(g), (std::vector<std::string>{"i", "j", "j_o", "j_i"}));
  EXPECT_TRUE(absl::StrContains(to_text(g), "vj = spatial(m, j_o * 4 + j_i)")) << to_text(g);
  expect_same_results(f, g, kSizes, "split(j#2)", /*distinct=*/true);
  EXPECT_TRUE(schedule::split(g, "j", 4).ok());
}

TEST(ScheduleTest, SplitKeepsValuesWithAndWithoutTail) {
  Expr f = st::function_of(kKernels, "add");
  for (int64_t factor : {1, 4, 16}) {
    Expr g = st::ok_or_die(schedule::split(f, "j", factor));
    st::expect_well_formed(g);
    EXPECT_EQ(expect_same_results(f, g, kSizes, "split(j)", /*distinct=*/true), 10);
    Expr h = st::ok_or_die(schedule::split(f, "i", factor));
    EXPECT_EQ(expect_same_results(f, h, kSizes, "split(i)", /*distinct=*/true), 10);
  }
  // A reduction loop split (the init still runs once: when both parts are 0).
  Expr r = st::function_of(kKernels, "row_sum");
  Expr s = st::ok_or_die(schedule::split(r, "k", 8));
  expect_same_results(r, s, kSizes, "split(k)", /*distinct=*/true);
  st::expect_error(schedule::split(f, "j", 0), "cannot split loop `j`: the factor must be >= 1, got 0");
}

TEST(ScheduleTest, SplitOfAConstantMultipleHasNoTailCheck) {
  Expr f = st::function_of(R"(module {
  prim_func @copy(A: Buffer[(n, 64), float32], B: Buffer[(n, 64), float32]) {
    for i in range(n) {
      for j in range(64) {
        block copy(vi = spatial(n, i), vj = spatial(64, j)) {
          B[vi, vj] = A[vi, vj]
        }
      }
    }
  }
})", "copy");
  Expr g = st::ok_or_die(schedule::split(f, "j", 16));
  EXPECT_FALSE(absl::StrContains(to_text(g), "if ")) << to_text(g);
  EXPECT_TRUE(absl::StrContains(to_text(g), "for j_o in range(4)")) << to_text(g);
  expect_same_results(f, g, kSizes, "split(j, 16)");
  Expr h = st::ok_or_die(schedule::split(f, "j", 24));
  EXPECT_TRUE(absl::StrContains(to_text(h), "if j_o * 24 + j_i < 64")) << to_text(h);
  expect_same_results(f, h, kSizes, "split(j, 24)");
}

// The tail check of a split under `floormod(n, 16) == 0` is proven by
// simplify-loops (the Analyzer's scoped facts: the loop range and the branch).
TEST(ScheduleTest, SimplifyLoopsRemovesAProvableTailCheck) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  prim_func @copy(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) {
    if floormod(n, 16) == 0 {
      for i in range(n) {
        block copy(vi = spatial(n, i)) {
          B[vi] = A[vi]
        }
      }
    }
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  Expr g = st::ok_or_die(schedule::split(mod->lookup("copy"), "i", 16));
  ASSERT_TRUE(absl::StrContains(to_text(g), "if i_o * 16 + i_i < n")) << to_text(g);
  IRModule scheduled = *mod;
  scheduled.add("copy", g);
  PassContext ctx;
  absl::StatusOr<IRModule> out = PassManager({create_simplify_loops_pass()}).run(scheduled, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string text = to_text(out->lookup("copy"));
  EXPECT_FALSE(absl::StrContains(text, "i_o * 16 + i_i < n")) << text;
  expect_same_results(mod->lookup("copy"), out->lookup("copy"), {0, 16, 48, 17}, "simplified split");
}

TEST(ScheduleTest, FuseKeepsValues) {
  Expr f = st::function_of(kKernels, "add");
  Expr g = st::ok_or_die(schedule::fuse(f, "i", "j"));
  st::expect_well_formed(g);
  EXPECT_EQ(schedule::loop_names(g), (std::vector<std::string>{"i_j"}));
  EXPECT_EQ(expect_same_results(f, g, kSizes, "fuse(i, j)", /*distinct=*/true), 10);
  // Fused, split, parallel outer and vectorized inner: the default schedule's steps.
  Expr h = st::ok_or_die(schedule::split(g, "i_j", 16));
  h = st::ok_or_die(schedule::parallel(h, "i_j_o"));
  h = st::ok_or_die(schedule::vectorize(h, "i_j_i"));
  st::expect_well_formed(h);
  EXPECT_EQ(expect_same_results(f, h, kSizes, "fuse+split", /*distinct=*/true), 10);
  st::expect_error(schedule::fuse(f, "j", "i"), "cannot fuse loop `j`: its body is not exactly the loop `i`");
  Expr two = st::function_of(kKernels, "two_nests");
  st::expect_error(schedule::fuse(two, "i", "j"), "not perfectly nested");
}

TEST(ScheduleTest, ReorderKeepsValues) {
  Expr f = st::function_of(kKernels, "add");
  Expr g = st::ok_or_die(schedule::reorder(f, {"j", "i"}));
  EXPECT_EQ(schedule::loop_names(g), (std::vector<std::string>{"j", "i"}));
  st::expect_well_formed(g);
  EXPECT_EQ(expect_same_results(f, g, kSizes, "reorder(j, i)", /*distinct=*/true), 10);
  // A reduction loop moved outside the spatial one: the init still runs first.
  Expr r = st::function_of(kKernels, "row_sum");
  Expr s = st::ok_or_die(schedule::reorder(r, {"k", "i"}));
  EXPECT_EQ(expect_same_results(r, s, kSizes, "reorder(k, i)", /*distinct=*/true), 10);
  // After a split, the named loops move among their positions; the others stay.
  Expr t = st::ok_or_die(schedule::split(f, "j", 4));
  t = st::ok_or_die(schedule::reorder(t, {"j_o", "i"}));
  EXPECT_EQ(schedule::loop_names(t), (std::vector<std::string>{"j_o", "i", "j_i"}));
  EXPECT_EQ(expect_same_results(f, t, kSizes, "split+reorder", /*distinct=*/true), 10);
}

TEST(ScheduleTest, ReorderRefusesWhatItCannotProve) {
  st::expect_error(schedule::reorder(st::function_of(kKernels, "scatter"), {"k", "i"}),
               "block `scatter` stores into `B` at an index of its reduction variable `vk`");
  st::expect_error(schedule::reorder(st::function_of(kKernels, "two_nests"), {"j", "i"}),
               "not in one perfectly nested chain");
  st::expect_error(schedule::reorder(st::function_of(kKernels, "add"), {"i", "i"}), "cannot reorder loop `i`: it is named twice");
  st::expect_error(schedule::reorder(st::function_of(R"(module {
  prim_func @diag(A: Buffer[(n, n), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for j in range(n) {
        block d(vi = spatial(n, i), vk = reduce(n, i)) {
          B[vi] = B[vi] + A[vi, j]
        }
      }
    }
  }
})", "diag"), {"j", "i"}), "block `d` binds it to both a spatial and a reduction iteration variable");
  st::expect_error(schedule::reorder(st::function_of(R"(module {
  prim_func @tri(A: Buffer[(n, n), float32], B: Buffer[(n, n), float32]) {
    for i in range(n) {
      for j in range(i) {
        block t(vi = spatial(n, i), vj = spatial(n, j)) {
          B[vi, vj] = A[vi, vj]
        }
      }
    }
  }
})", "tri"), {"j", "i"}), "cannot reorder loop `j`: its bounds depend on `i`");
}

TEST(ScheduleTest, LoopKindsKeepValuesAndRefuseReductions) {
  Expr f = st::function_of(kKernels, "add");
  Expr g = st::ok_or_die(schedule::parallel(f, "i"));
  g = st::ok_or_die(schedule::vectorize(g, "j"));
  EXPECT_TRUE(absl::StrContains(to_text(g), "for i in range(n) parallel")) << to_text(g);
  EXPECT_TRUE(absl::StrContains(to_text(g), "for j in range(m) vectorized")) << to_text(g);
  expect_same_results(f, g, kSizes, "parallel+vectorize", true);
  Expr u = st::ok_or_die(schedule::unroll(st::function_of(kKernels, "row_sum"), "k"));
  EXPECT_TRUE(absl::StrContains(to_text(u), "unrolled")) << to_text(u);
  expect_same_results(st::function_of(kKernels, "row_sum"), u, kSizes, "unroll(k)", true);
  Expr r = st::function_of(kKernels, "row_sum");
  EXPECT_TRUE(schedule::parallel(r, "i").ok());
  st::expect_error(schedule::parallel(r, "k"),
               "cannot parallelize loop `k`: block `sum` binds its reduction variable `vk` to it");
  st::expect_error(schedule::vectorize(r, "k"), "cannot vectorize loop `k`");
  st::expect_error(schedule::parallel(st::function_of(kKernels, "loose"), "i"),
               "cannot parallelize loop `i`: it stores into `B` outside a compute block");
}

TEST(ScheduleTest, CacheLocalKeepsValues) {
  for (const char* name : {"row_sum", "accumulate"}) {
    Expr f = st::function_of(kKernels, name);
    Expr g = st::ok_or_die(schedule::cache_local(f, "k"));
    st::expect_well_formed(g);
    EXPECT_TRUE(absl::StrContains(to_text(g), "_acc: Buffer[(1,)")) << to_text(g);
    EXPECT_EQ(expect_same_results(f, g, kSizes, name, /*distinct=*/true), 10) << name;
    // The rows are then independent: parallel.
    Expr h = st::ok_or_die(schedule::parallel(g, "i"));
    EXPECT_EQ(expect_same_results(f, h, kSizes, name, /*distinct=*/true), 10) << name;
    // A split reduction loop (with its tail check) accumulates locally too.
    Expr s = st::ok_or_die(schedule::split(f, "k", 8));
    s = st::ok_or_die(schedule::cache_local(s, "k_o"));
    EXPECT_EQ(expect_same_results(f, s, kSizes, name, /*distinct=*/true), 10) << name;
  }
}

// A 0-d output (a load without indices) is redirected like any other.
TEST(ScheduleTest, CacheLocalOfAZeroDimOutput) {
  Expr f = st::function_of(kKernels, "total");
  Expr g = st::ok_or_die(schedule::cache_local(f, "k"));
  EXPECT_FALSE(absl::StrContains(to_text(g), "B[] +")) << to_text(g);
  EXPECT_EQ(expect_same_results(f, g, kSizes, "total", /*distinct=*/true), 10);
}

// An init may read the reduction variables (it runs when they are all 0); hoisted before the
// loop it reads them as 0. Found by the passes fuzz target (tests/fuzz/corpus/passes/
// regression-passes-3.relax): the hoisted init used `vk` where it was not defined.
TEST(ScheduleTest, CacheLocalOfAnInitReadingTheReductionVariable) {
  constexpr const char* kInitReadsVk = R"(module {
  prim_func @sum(A: Buffer[(n, 8), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(8) {
        block sum(vi = spatial(n, i), vk = reduce(8, k)) {
          init {
            B[vi] = select(vk == 0, 2f32, 99f32)
          }
          B[vi] = B[vi] + A[vi, min(vk, 7)]
        }
      }
    }
  }
})";
  Expr f = st::function_of(kInitReadsVk, "sum");
  Expr g = st::ok_or_die(schedule::cache_local(f, "k"));
  st::expect_well_formed(g);
  EXPECT_EQ(expect_same_results(f, g, kSizes, "sum", /*distinct=*/true), 10);
}

TEST(ScheduleTest, CacheLocalRefusesWhatItCannotDo) {
  Expr r = st::function_of(kKernels, "row_sum");
  st::expect_error(schedule::cache_local(r, "i"),
               "cannot cache_local loop `i`: block `sum` binds its spatial variable `vi` to it or a loop under it");
  Expr s = st::ok_or_die(schedule::split(r, "k", 4));
  st::expect_error(schedule::cache_local(s, "k_i"), "binds its reduction variable `vk` to a loop outside it");
  st::expect_error(schedule::cache_local(st::function_of(kKernels, "add"), "j"), "cannot cache_local loop `j`");
  st::expect_error(schedule::cache_local(st::function_of(kKernels, "scatter"), "k"), "stores at an index of its reduction variable");
  st::expect_error(schedule::cache_local(st::function_of(kKernels, "loose"), "i"), "not loops around one compute block");
}

TEST(ScheduleTest, DirectivesParseAndApply) {
  absl::StatusOr<std::vector<schedule::Directive>> d =
      schedule::parse_directives(" add.split(j, 16); @add.vectorize(j_i) ;add.reorder(j_o, i);");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->size(), 3u);
  EXPECT_EQ((*d)[0].kernel, "add");
  EXPECT_EQ((*d)[0].factor, 16);
  EXPECT_EQ((*d)[2].loops, (std::vector<std::string>{"j_o", "i"}));
  Expr f = st::function_of(kKernels, "add");
  Expr g = f;
  for (const schedule::Directive& x : *d) g = st::ok_or_die(schedule::apply(g, x));
  EXPECT_EQ(expect_same_results(f, g, kSizes, "directives", true), 10);
  struct Bad {
    const char* text;
    const char* error;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"add.split(i)", "schedule directives:5: `split` takes 2 arguments, got 1"},
           {"add.split(i, x)", "the factor of `split` must be an integer >= 1, got `x`"},
           {"add.tile(i)", "unknown primitive `tile`"},
           {"add.fuse(i j)", "schedule directives:12: expected `,` or `)`"},
           {"add split(i)", "expected `.` after the kernel name"},
           {"add.parallel(i) add.unroll(j)", "expected `;` between directives"},
           {"", "no directive"},
       }) {
    absl::StatusOr<std::vector<schedule::Directive>> r = schedule::parse_directives(bad.text);
    ASSERT_FALSE(r.ok()) << bad.text;
    EXPECT_TRUE(absl::StrContains(r.status().message(), bad.error)) << bad.text << ": " << r.status();
  }
}

TEST(ScheduleTest, PrimitivesRefuseAGraphFunction) {
  absl::StatusOr<IRModule> mod = parse_module(
      "module { func @f(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] { return x } }");
  ASSERT_TRUE(mod.ok()) << mod.status();
  st::expect_error(schedule::split(mod->lookup("f"), "i", 4), "schedule: expected a prim_func");
}

}  // namespace
}  // namespace relax::transform
