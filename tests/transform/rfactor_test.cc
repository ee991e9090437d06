// rfactor and fuse_siblings (relax/transform/schedule.h): a reduction split
// into vector lanes computes what the loop computed -- bit for bit for integer
// sums and every min and max, within a tolerance for reassociated float sums
// -- at extents below, at and above the lane count, with and without a tail;
// the combiner is read off the update (not the names); what does not fit is
// refused with a message naming the loop. Neighbouring row loops merge where
// their rows are independent and not where a row reads another row's result.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/well_formed.h"
#include "relax/transform/schedule.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

namespace st = schedule_test;





// The reducers carry misleading block names on purpose: the combiner must come
// from the update. `from_two` has an init that is no identity (2 + the sum).
constexpr const char* kRfactorKernels = R"(module {
  prim_func @sum_sq(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block max(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 0f32
          }
          B[vi] = B[vi] + A[vi, vk] * A[vi, vk]
        }
      }
    }
  }
  prim_func @row_max(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block sum(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = -inf_f32
          }
          B[vi] = max(A[vi, vk], B[vi])
        }
      }
    }
  }
  prim_func @row_min(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 3f32
          }
          B[vi] = min(B[vi], A[vi, vk] - 0.5f32)
        }
      }
    }
  }
  prim_func @int_sum(A: Buffer[(n, m), int32], B: Buffer[(n,), int32]) {
    for i in range(n) {
      for k in range(m) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 0i32
          }
          B[vi] = B[vi] + (A[vi, vk] + cast<int32>(vk) * 7i32)
        }
      }
    }
  }
  prim_func @int_max(A: Buffer[(n, m), int64], B: Buffer[(n,), int64]) {
    for i in range(n) {
      for k in range(m) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 5
          }
          B[vi] = max(B[vi], A[vi, vk] + vk * vk - 3 * vk)
        }
      }
    }
  }
  prim_func @from_two(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 2f32
          }
          B[vi] = B[vi] + A[vi, vk]
        }
      }
    }
  }
  prim_func @no_init(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          B[vi] = B[vi] + A[vi, vk]
        }
      }
    }
  }
  prim_func @offset(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(1, extent=m - 1) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          B[vi] = B[vi] + A[vi, vk]
        }
      }
    }
  }
  prim_func @never_init(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(1, extent=m - 1) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 0f32
          }
          B[vi] = B[vi] + A[vi, vk]
        }
      }
    }
  }
  prim_func @total(A: Buffer[(n, m), float32], B: Buffer[(), float32]) {
    for k0 in range(n) {
      for k1 in range(m) {
        block r(vk0 = reduce(n, k0), vk1 = reduce(m, k1)) {
          init {
            B[] = 0f32
          }
          B[] = B[] + A[vk0, vk1]
        }
      }
    }
  }
  prim_func @minus(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 0f32
          }
          B[vi] = B[vi] - A[vi, vk]
        }
      }
    }
  }
  prim_func @softmax(A: Buffer[(n, m), float32], B: Buffer[(n, m), float32]) {
    alloc mx: Buffer[(n,), float32, workspace] {
      for i in range(n) {
        for k in range(m) {
          block mx(vi = spatial(n, i), vk = reduce(m, k)) {
            init {
              mx[vi] = -inf_f32
            }
            mx[vi] = max(mx[vi], A[vi, vk])
          }
        }
      }
      alloc s: Buffer[(n,), float32, workspace] {
        for i_1 in range(n) {
          for k_1 in range(m) {
            block s(vi = spatial(n, i_1), vk = reduce(m, k_1)) {
              init {
                s[vi] = 0f32
              }
              s[vi] = s[vi] + exp(A[vi, vk] - mx[vi])
            }
          }
        }
        for i_2 in range(n) {
          for j in range(m) {
            block out(vi = spatial(n, i_2), vj = spatial(m, j)) {
              B[vi, vj] = exp(A[vi, vj] - mx[vi]) / s[vi]
            }
          }
        }
      }
    }
  }
  prim_func @rms(A: Buffer[(n, m), float32], W: Buffer[(m,), float32], B: Buffer[(n, m), float32]) {
    alloc sq: Buffer[(n,), float32, workspace] {
      for i in range(n) {
        for k in range(m) {
          block sq(vi = spatial(n, i), vk = reduce(m, k)) {
            init {
              sq[vi] = 0f32
            }
            sq[vi] = sq[vi] + A[vi, vk] * A[vi, vk]
          }
        }
      }
      for i_1 in range(n) {
        for j in range(m) {
          block out(vi = spatial(n, i_1), vj = spatial(m, j)) {
            B[vi, vj] = A[vi, vj] * rsqrt(sq[vi] / cast<float32>(m) + 1e-05f32) * W[vj]
          }
        }
      }
    }
  }
  prim_func @shifted(A: Buffer[(n, m), float32], B: Buffer[(n,), float32], C: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block r(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 0f32
          }
          B[vi] = B[vi] + A[vi, vk]
        }
      }
    }
    for i_1 in range(n) {
      block c(vi = spatial(n, i_1)) {
        C[vi] = B[n - 1 - vi]
      }
    }
  }
})";

TEST(RfactorTest, FloatSumsStayWithinRoundingAtEveryExtent) {
  for (const char* name : {"sum_sq", "from_two", "no_init", "offset"}) {
    Expr f = st::function_of(kRfactorKernels, name);
    for (int64_t lanes : {2, 16}) {
      Expr g = st::ok_or_die(schedule::rfactor(f, "k", lanes));
      st::expect_well_formed(g);
      const std::string text = to_text(g);
      EXPECT_TRUE(absl::StrContains(text, absl::StrCat("range(", lanes, ") vectorized"))) << text;
      EXPECT_TRUE(absl::StrContains(text, "floormod(")) << "a tail loop: " << text;
      EXPECT_EQ(schedule_test::expect_close_results(f, g, {1, 3, 15, 16, 17, 40}, std::string(name), 1e-5, true), 12) << name;
    }
  }
}

TEST(RfactorTest, IntegerSumsMinAndMaxAreExact) {
  for (const char* name : {"row_max", "row_min", "int_sum", "int_max"}) {
    Expr f = st::function_of(kRfactorKernels, name);
    Expr g = st::ok_or_die(schedule::rfactor(f, "k", 16));
    st::expect_well_formed(g);
    EXPECT_EQ(schedule_test::expect_same_results(f, g, {1, 3, 15, 16, 17, 40}, std::string(name), true), 12) << name;
  }
}

TEST(RfactorTest, TheCombinerComesFromTheUpdateNotTheName) {
  // Named `max`, reduced with +; named `sum`, reduced with max.
  const std::string sum = to_text(st::ok_or_die(schedule::rfactor(st::function_of(kRfactorKernels, "sum_sq"), "k", 16)));
  EXPECT_TRUE(absl::StrContains(sum, "max_rf[vl] = 0f32")) << sum;
  const std::string max = to_text(st::ok_or_die(schedule::rfactor(st::function_of(kRfactorKernels, "row_max"), "k", 16)));
  EXPECT_TRUE(absl::StrContains(max, "sum_rf[vl] = -inf_f32")) << max;
  const std::string min = to_text(st::ok_or_die(schedule::rfactor(st::function_of(kRfactorKernels, "row_min"), "k", 16)));
  EXPECT_TRUE(absl::StrContains(min, "r_rf[vl] = inf_f32")) << min;
  // The init that is no identity starts the combine, not the lanes.
  const std::string two = to_text(st::ok_or_die(schedule::rfactor(st::function_of(kRfactorKernels, "from_two"), "k", 16)));
  EXPECT_TRUE(absl::StrContains(two, "r_acc[0] = 2f32")) << two;
  EXPECT_TRUE(absl::StrContains(two, "r_rf[vl] = 0f32")) << two;
}

TEST(RfactorTest, ConstantExtentsDropTheEmptyParts) {
  const std::string text = R"(module {
    prim_func @k(A: Buffer[(n, 64), float32], B: Buffer[(n,), float32]) {
      for i in range(n) {
        for k in range(64) {
          block r(vi = spatial(n, i), vk = reduce(64, k)) {
            init {
              B[vi] = 0f32
            }
            B[vi] = B[vi] + A[vi, vk]
          }
        }
      }
    }
  })";
  Expr f = st::function_of(text, "k");
  Expr g = st::ok_or_die(schedule::rfactor(f, "k", 16));
  EXPECT_FALSE(absl::StrContains(to_text(g), "k_t")) << "no tail: " << to_text(g);
  EXPECT_TRUE(absl::StrContains(to_text(g), "k_o in range(4)")) << to_text(g);
  EXPECT_EQ(schedule_test::expect_close_results(f, g, {1, 5}, "k"), 4);
}

TEST(RfactorTest, AReductionOverSeveralLoopsFusedFirst) {
  Expr f = st::function_of(kRfactorKernels, "total");
  st::expect_error(schedule::rfactor(f, "k0", 16), "its body is not one compute block");
  Expr fused = st::ok_or_die(schedule::fuse(f, "k0", "k1"));
  Expr g = st::ok_or_die(schedule::rfactor(fused, "k0_k1", 16));
  st::expect_well_formed(g);
  EXPECT_EQ(schedule_test::expect_close_results(f, g, {1, 3, 7}, "total", 1e-5, true), 6);
}

TEST(RfactorTest, RefusesWhatItCannotDo) {
  st::expect_error(schedule::rfactor(st::function_of(kRfactorKernels, "minus"), "k", 16), "is not `B[...] = c(B[...], x)`");
  st::expect_error(schedule::rfactor(st::function_of(kRfactorKernels, "sum_sq"), "i", 16), "its body is not one compute block");
  Expr rows_and_k = st::ok_or_die(schedule::fuse(st::function_of(kRfactorKernels, "sum_sq"), "i", "k"));
  st::expect_error(schedule::rfactor(rows_and_k, "i_k", 16), "binds its spatial variable `vi` to it");
  st::expect_error(schedule::rfactor(st::function_of(kRfactorKernels, "sum_sq"), "k", 1), "the lane count must be >= 2, got 1");
  // Its first iteration binds vk to 1: the init never runs, so it cannot be hoisted.
  st::expect_error(schedule::rfactor(st::function_of(kRfactorKernels, "never_init"), "k", 16),
               "runs its init only when `vk` is 0, which its first iteration does not bind it to");
  Expr split = st::ok_or_die(schedule::split(st::function_of(kRfactorKernels, "sum_sq"), "k", 4));
  st::expect_error(schedule::rfactor(split, "k_o", 16), "its body is not one compute block");
  st::expect_error(schedule::rfactor(split, "k_i", 16), "cannot rfactor loop `k_i`");
}

TEST(FuseSiblingsTest, MergesTheRowsOfASoftmax) {
  Expr f = st::function_of(kRfactorKernels, "softmax");
  // The allocation between the first loop and the others is in the way.
  st::expect_error(schedule::fuse_siblings(f, "i", "i_1"), "they are not neighbours in one sequence");
  // schedule_cpu hoists the allocations and merges the three row loops into one.
  Expr g = schedule::schedule_cpu(f);
  st::expect_well_formed(g);
  const std::string text = to_text(g);
  size_t parallel = 0;
  for (size_t at = text.find(" parallel"); at != std::string::npos; at = text.find(" parallel", at + 1)) ++parallel;
  EXPECT_EQ(parallel, 1u) << text;
  EXPECT_TRUE(absl::StrContains(text, "mx_rf")) << text;
  // The row max and sum, carried from nest to nest, are locals of the row now.
  EXPECT_TRUE(absl::StrContains(text, "alloc mx: Buffer[(1,), float32, local]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "alloc s: Buffer[(1,), float32, local]")) << text;
  EXPECT_FALSE(absl::StrContains(text, "workspace")) << text;
  EXPECT_TRUE(absl::StrContains(text, "s_rf")) << text;
  EXPECT_EQ(schedule_test::expect_close_results(f, g, {1, 3, 17, 40}, "softmax", 1e-5, true), 8);
}

TEST(FuseSiblingsTest, ANormsScaleIsComputedOncePerRow) {
  Expr f = st::function_of(kRfactorKernels, "rms");
  Expr g = schedule::schedule_cpu(f);
  st::expect_well_formed(g);
  const std::string text = to_text(g);
  // The scale depends on the row only: computed before the row's vector loop.
  EXPECT_TRUE(absl::StrContains(text, "out_inv[0] = rsqrt(sq[0] / cast<float32>(m) + 1e-05f32)")) << text;
  EXPECT_TRUE(absl::StrContains(text, "B[vi_2, vj] = A[vi_2, vj] * out_inv[0] * W[vj]")) << text;
  EXPECT_EQ(schedule_test::expect_close_results(f, g, {1, 3, 17, 40}, "rms", 1e-5, true), 8);
}

TEST(FuseSiblingsTest, RefusesARowThatReadsAnotherRow) {
  Expr f = st::function_of(kRfactorKernels, "shifted");
  st::expect_error(schedule::fuse_siblings(f, "i", "i_1"),
               "is not indexed by the loop variable in one position in every access (`B`)");
  // schedule_cpu leaves the two row loops apart and still computes the same.
  Expr g = schedule::schedule_cpu(f);
  EXPECT_EQ(schedule_test::expect_close_results(f, g, {1, 3, 17}, "shifted", 1e-5, true), 6);
}

TEST(FuseSiblingsTest, MergesNeighboursAndRefusesUnequalBounds) {
  const std::string text = R"(module {
    prim_func @k(A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(m,), float32]) {
      for i in range(n) {
        block b(vi = spatial(n, i)) {
          B[vi] = A[vi] * 2f32
        }
      }
      for j in range(n) {
        block c(vj = spatial(n, j)) {
          B[vj] = B[vj] + 1f32
        }
      }
      for t in range(m) {
        block d(vt = spatial(m, t)) {
          C[vt] = 3f32
        }
      }
    }
  })";
  Expr f = st::function_of(text, "k");
  Expr g = st::ok_or_die(schedule::fuse_siblings(f, "i", "j"));
  st::expect_well_formed(g);
  EXPECT_EQ(schedule::loop_names(g).size(), 2u) << to_text(g);
  EXPECT_EQ(schedule_test::expect_same_results(f, g, {1, 4}, "k", true), 4);
  st::expect_error(schedule::fuse_siblings(g, "i", "t"), "their bounds differ");
}

}  // namespace
}  // namespace relax::transform
