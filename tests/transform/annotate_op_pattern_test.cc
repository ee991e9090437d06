// annotate-op-pattern and analyze_op_pattern: kernels written by hand (the
// loop-level builder and the text format) get the class their loops show;
// every legalized operator gets a class, a representative set the expected
// one; the pass overwrites stale values, keeps right ones (node and all), is
// idempotent, and its output round-trips through the text format.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "relax/ir/parser.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/transform/instrument.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/passes.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

namespace st = schedule_test;

constexpr DataType f32 = DataType::float32();
constexpr DataType i32 = DataType::int32();
constexpr DataType u8{DataType::Code::kUInt, 8, 1};



IRModule annotate(const IRModule& mod) {
  PassContext ctx;
  return st::run_verified(mod, {create_annotate_op_pattern_pass()}, ctx);
}

IRModule legalize_and_annotate(const IRModule& mod) {
  PassContext ctx;
  return st::run_verified(mod, {create_legalize_ops_pass(), create_annotate_op_pattern_pass()}, ctx);
}

int64_t statistic(const PassContext& ctx, const std::string& name) {
  auto p = ctx.statistics().find("annotate-op-pattern");
  if (p == ctx.statistics().end()) return -1;
  auto s = p->second.find(name);
  return s == p->second.end() ? -1 : s->second;
}

/// The class the analysis gives the PrimFunc `kernel`.
OpPattern pattern_of(const Expr& kernel) {
  const auto* func = kernel.as<PrimFuncNode>();
  RELAX_CHECK(func != nullptr);
  return analyze_op_pattern(*func);
}

/// The class of the one PrimFunc of the module `text`, checked to be what the
/// pass writes too.
OpPattern pattern_of(const std::string& text) {
  IRModule mod = st::parse_or_fail(text);
  Expr kernel;
  for (const auto& [name, func] : mod.functions()) {
    if (func.as<PrimFuncNode>() != nullptr) kernel = func;
  }
  if (!kernel.defined()) {
    ADD_FAILURE() << "no PrimFunc in\n" << text;
    return OpPattern::kOpaque;
  }
  OpPattern pattern = pattern_of(kernel);
  IRModule annotated = annotate(mod);
  for (const auto& [name, func] : annotated.functions()) {
    if (const auto* f = func.as<PrimFuncNode>()) {
      EXPECT_EQ(op_pattern_of(*f), pattern) << name;
    }
  }
  return pattern;
}

Expr build(const PrimFuncBuilder& b) {
  absl::StatusOr<Expr> f = b.build();
  RELAX_CHECK(f.ok()) << f.status().message();
  return *f;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---------------------------------------------------------------------------
// Kernels written with the builder.

TEST(AnalyzeOpPattern, SameShapedAddIsElementwise) {
  SymVar n("n");
  PrimFuncBuilder b("add");
  Buffer a = b.buffer_param("A", {n, 4}, f32);
  Buffer bb = b.buffer_param("B", {n, 4}, f32);
  Buffer c = b.buffer_param("C", {n, 4}, f32);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, 4, [&](SymVar j) {
      b.block("add", {b.spatial(n, i), b.spatial(4, j)}, [&](const std::vector<SymVar>& v) {
        b.store(c, {v[0], v[1]}, buffer_load(a, {v[0], v[1]}) + buffer_load(bb, {v[0], v[1]}));
      });
    });
  });
  EXPECT_EQ(pattern_of(build(b)), OpPattern::kElementwise);
}

TEST(AnalyzeOpPattern, MatmulIsOutputElementwiseFusible) {
  SymVar n("n"), k("k"), m("m");
  PrimFuncBuilder b("matmul");
  Buffer a = b.buffer_param("A", {n, k}, f32);
  Buffer w = b.buffer_param("W", {k, m}, f32);
  Buffer c = b.buffer_param("C", {n, m}, f32);
  b.for_("i", 0, n, [&](SymVar i) {
    b.for_("j", 0, m, [&](SymVar j) {
      b.for_("r", 0, k, [&](SymVar r) {
        b.block(
            "matmul", {b.spatial(n, i), b.spatial(m, j), b.reduce(k, r)},
            [&](const std::vector<SymVar>& v) { b.store(c, {v[0], v[1]}, 0); },
            [&](const std::vector<SymVar>& v) {
              b.store(c, {v[0], v[1]},
                      buffer_load(c, {v[0], v[1]}) +
                          buffer_load(a, {v[0], v[2]}) * buffer_load(w, {v[2], v[1]}));
            });
      });
    });
  });
  EXPECT_EQ(pattern_of(build(b)), OpPattern::kOutputElementwiseFusible);
}

// W[k, n] = (float((q[k / 2, n] >> (4 * (k % 2))) & 15) - 8) * scale[k / 32, n]:
// the packed reads (k / 2) and the group scale (k / 32) are index functions
// of the output's indices, not subsequences of them: injective.
TEST(AnalyzeOpPattern, GroupwiseInt4DequantisationIsInjective) {
  SymVar k("k"), n("n");
  PrimFuncBuilder b("dequantize_int4");
  Buffer q = b.buffer_param("q", {floordiv(k, 2), n}, u8);
  Buffer scale = b.buffer_param("scale", {floordiv(k, 32), n}, f32);
  Buffer w = b.buffer_param("W", {k, n}, f32);
  b.for_("i", 0, k, [&](SymVar i) {
    b.for_("j", 0, n, [&](SymVar j) {
      b.block("dequantize", {b.spatial(k, i), b.spatial(n, j)}, [&](const std::vector<SymVar>& v) {
        SymExpr byte = cast(i32, buffer_load(q, {floordiv(v[0], 2), v[1]}));
        SymExpr nibble = bitwise_and(shift_right(byte, cast(i32, floormod(v[0], 2) * 4)),
                                     SymExpr::int_imm(15, i32));
        b.store(w, {v[0], v[1]},
                (cast(f32, nibble) - SymExpr::float_imm(8, f32)) *
                    buffer_load(scale, {floordiv(v[0], 32), v[1]}));
      });
    });
  });
  EXPECT_EQ(pattern_of(build(b)), OpPattern::kInjective);
}

// ---------------------------------------------------------------------------
// Kernels written in the text format.

TEST(AnalyzeOpPattern, BiasAddAlongRowsIsBroadcast) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @bias_add(A: Buffer[(n, m), float32], B: Buffer[(m,), float32], C: Buffer[(n, m), float32]) {
      for i in range(n) {
        for j in range(m) {
          block bias_add(vi = spatial(n, i), vj = spatial(m, j)) {
            C[vi, vj] = A[vi, vj] + B[vj]
          }
        }
      }
    }
  })"),
            OpPattern::kBroadcast);
}

TEST(AnalyzeOpPattern, UnitDimsReadAtZeroAreBroadcast) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @outer(A: Buffer[(n, 1), float32], B: Buffer[(1, m), float32], C: Buffer[(n, m), float32]) {
      for i in range(n) {
        for j in range(m) {
          block outer(vi = spatial(n, i), vj = spatial(m, j)) {
            C[vi, vj] = A[vi, 0] * B[0, vj]
          }
        }
      }
    }
  })"),
            OpPattern::kBroadcast);
}

TEST(AnalyzeOpPattern, ATransposedReadIsInjective) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @add_transposed(A: Buffer[(n, n), float32], B: Buffer[(n, n), float32], C: Buffer[(n, n), float32]) {
      for i in range(n) {
        for j in range(n) {
          block add(vi = spatial(n, i), vj = spatial(n, j)) {
            C[vi, vj] = A[vi, vj] + B[vj, vi]
          }
        }
      }
    }
  })"),
            OpPattern::kInjective);
}

TEST(AnalyzeOpPattern, ReshapeWithFloordivAndFloormodIsInjective) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @reshape(A: Buffer[(n, 6), float32], B: Buffer[(n * 2, 3), float32]) {
      for i in range(n * 2) {
        for j in range(3) {
          block reshape(vi = spatial(n * 2, i), vj = spatial(3, j)) {
            B[vi, vj] = A[floordiv(vi, 2), vj + floormod(vi, 2) * 3]
          }
        }
      }
    }
  })"),
            OpPattern::kInjective);
}

// Reading the first columns of a wider buffer: the indices are the output's,
// but the input is not read whole, point for point.
TEST(AnalyzeOpPattern, ASliceReadAtTheOutputIndicesIsInjective) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @slice(A: Buffer[(n, 10), float32], B: Buffer[(n, 3), float32]) {
      for i in range(n) {
        for j in range(3) {
          block slice(vi = spatial(n, i), vj = spatial(3, j)) {
            B[vi, vj] = A[vi, vj]
          }
        }
      }
    }
  })"),
            OpPattern::kInjective);
}

TEST(AnalyzeOpPattern, RowSumIsReduction) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @row_sum(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
      for i in range(n) {
        for k in range(m) {
          block sum(vi = spatial(n, i), vk = reduce(m, k)) {
            init {
              B[vi] = 0f32
            }
            B[vi] = B[vi] + A[vi, vk]
          }
        }
      }
    }
  })"),
            OpPattern::kReduction);
}

// x * x reads one buffer twice: a sum of squares, not a multiply-accumulate of two operands.
TEST(AnalyzeOpPattern, SumOfSquaresIsAReductionNotAMultiplyAccumulate) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @sum_sq(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
      for i in range(n) {
        for k in range(m) {
          block sum_sq(vi = spatial(n, i), vk = reduce(m, k)) {
            init {
              B[vi] = 0f32
            }
            B[vi] = B[vi] + A[vi, vk] * A[vi, vk]
          }
        }
      }
    }
  })"),
            OpPattern::kReduction);
}

// The bias add reads the matmul's result from the same output buffer, in a second block.
TEST(AnalyzeOpPattern, MatmulWithABiasAddEpilogueIsOutputElementwiseFusible) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @matmul_bias(A: Buffer[(n, k), float32], W: Buffer[(k, m), float32], bias: Buffer[(m,), float32], C: Buffer[(n, m), float32]) {
      for i in range(n) {
        for j in range(m) {
          for r in range(k) {
            block matmul(vi = spatial(n, i), vj = spatial(m, j), vr = reduce(k, r)) {
              init {
                C[vi, vj] = 0f32
              }
              C[vi, vj] = C[vi, vj] + cast<float32>(A[vi, vr]) * W[vr, vj]
            }
          }
        }
      }
      for i2 in range(n) {
        for j2 in range(m) {
          block bias(vi2 = spatial(n, i2), vj2 = spatial(m, j2)) {
            C[vi2, vj2] = C[vi2, vj2] + bias[vj2]
          }
        }
      }
    }
  })"),
            OpPattern::kOutputElementwiseFusible);
  // The same with the product in an intermediate buffer.
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @matmul_bias(A: Buffer[(n, k), float32], W: Buffer[(k, m), float32], bias: Buffer[(m,), float32], C: Buffer[(n, m), float32]) {
      alloc acc: Buffer[(n, m), float32, workspace] {
        for i in range(n) {
          for j in range(m) {
            for r in range(k) {
              block matmul(vi = spatial(n, i), vj = spatial(m, j), vr = reduce(k, r)) {
                init {
                  acc[vi, vj] = 0f32
                }
                acc[vi, vj] = fma(A[vi, vr], W[vr, vj], acc[vi, vj])
              }
            }
          }
        }
        for i2 in range(n) {
          for j2 in range(m) {
            block bias(vi2 = spatial(n, i2), vj2 = spatial(m, j2)) {
              C[vi2, vj2] = acc[vi2, vj2] + bias[vj2]
            }
          }
        }
      }
    }
  })"),
            OpPattern::kOutputElementwiseFusible);
}

TEST(AnalyzeOpPattern, PaddedMaxPoolingIsOutputElementwiseFusible) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @max_pool(A: Buffer[(n, w), float32], B: Buffer[(n, w), float32]) {
      for i in range(n) {
        for x in range(w) {
          for r in range(3) {
            block pool(vi = spatial(n, i), vx = spatial(w, x), vr = reduce(3, r)) {
              init {
                B[vi, vx] = -inf_f32
              }
              B[vi, vx] = max(B[vi, vx], select(vx - 1 + vr >= 0 && vx - 1 + vr < w, A[vi, min(max(vx - 1 + vr, 0), w - 1)], -inf_f32))
            }
          }
        }
      }
    }
  })"),
            OpPattern::kOutputElementwiseFusible);
}

// take: rows of a table at indices read from another buffer. Each output
// element is written once, at its own index; only the read is data-dependent.
TEST(AnalyzeOpPattern, AGatherIsInjective) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @take(T: Buffer[(10, d), float32], I: Buffer[(n,), int32], O: Buffer[(n, d), float32]) {
      for i in range(n) {
        for j in range(d) {
          block take(vi = spatial(n, i), vj = spatial(d, j)) {
            O[vi, vj] = T[min(max(cast<int64>(I[vi]), 0), 9), vj]
          }
        }
      }
    }
  })"),
            OpPattern::kInjective);
}

// A data-dependent write is opaque, unlike a data-dependent read.
TEST(AnalyzeOpPattern, AScatterIsOpaque) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @scatter(V: Buffer[(n,), float32], I: Buffer[(n,), int64], O: Buffer[(n,), float32]) {
      for i in range(n) {
        block scatter(vi = spatial(n, i)) {
          O[I[vi]] = V[vi]
        }
      }
    }
  })"),
            OpPattern::kOpaque);
}

// accumulate(A, B): A += B, for call_tir_inplace: the written buffer comes
// before an input, and it is read before anything writes it.
TEST(AnalyzeOpPattern, WritingAnInputInPlaceIsOpaque) {
  // The kernel with its parameters `params` (A and B, in some order).
  auto accumulate = [](const std::string& params) {
    return R"(module {
    prim_func @accumulate()" + params + R"() {
      for i in range(m) {
        for j in range(4) {
          block accumulate(vi = spatial(m, i), vj = spatial(4, j)) {
            A[vi, vj] = A[vi, vj] + B[vi, vj]
          }
        }
      }
    }
  })";
  };
  EXPECT_EQ(pattern_of(accumulate("A: Buffer[(m, 4), float32], B: Buffer[(m, 4), float32]")), OpPattern::kOpaque);
  // The written buffer last, but still read before it is written.
  EXPECT_EQ(pattern_of(accumulate("B: Buffer[(m, 4), float32], A: Buffer[(m, 4), float32]")), OpPattern::kOpaque);
}

TEST(AnalyzeOpPattern, AnEvaluateStatementIsOpaque) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @effect(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) {
      for i in range(n) {
        block copy(vi = spatial(n, i)) {
          B[vi] = A[vi]
        }
      }
      evaluate exp(A[0])
    }
  })"),
            OpPattern::kOpaque);
}

TEST(AnalyzeOpPattern, DataDependentControlIsOpaque) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @guarded(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) {
      for i in range(n) {
        block copy(vi = spatial(n, i)) {
          if A[vi] > 0f32 {
            B[vi] = A[vi]
          }
        }
      }
    }
  })"),
            OpPattern::kOpaque);
}

// A condition on the indices alone: only part of the output is written here.
TEST(AnalyzeOpPattern, AStoreUnderAnIndexConditionIsInjective) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @lower(A: Buffer[(n, n), float32], B: Buffer[(n, n), float32]) {
      for i in range(n) {
        for j in range(n) {
          block lower(vi = spatial(n, i), vj = spatial(n, j)) {
            if vj <= vi {
              B[vi, vj] = A[vi, vj]
            }
          }
        }
      }
    }
  })"),
            OpPattern::kInjective);
}

// cumsum: a serial loop inside the block carries the running sum.
TEST(AnalyzeOpPattern, AScanLoopInsideABlockIsOpaque) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @cumsum(A: Buffer[(n, m), float32], B: Buffer[(n, m), float32]) {
      alloc run: Buffer[(n,), float32, workspace] {
        for i in range(n) {
          block cumsum(vi = spatial(n, i)) {
            run[vi] = 0f32
            for k in range(m) {
              run[vi] = run[vi] + A[vi, k]
              B[vi, k] = run[vi]
            }
          }
        }
      }
    }
  })"),
            OpPattern::kOpaque);
}

// Concatenation by two blocks writing two boxes of the output.
TEST(AnalyzeOpPattern, BlocksWritingBoxesOfOneOutputAreInjective) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @concat(A: Buffer[(n, 2), float32], B: Buffer[(n, 3), float32], C: Buffer[(n, 5), float32]) {
      for i in range(n) {
        for j in range(2) {
          block first(vi = spatial(n, i), vj = spatial(2, j)) {
            C[vi, vj] = A[vi, vj]
          }
        }
      }
      for i2 in range(n) {
        for j2 in range(3) {
          block second(vi2 = spatial(n, i2), vj2 = spatial(3, j2)) {
            C[vi2, vj2 + 2] = B[vi2, vj2]
          }
        }
      }
    }
  })"),
            OpPattern::kInjective);
}

// A reduction block and a block writing only a diagonal of the same output.
TEST(AnalyzeOpPattern, BlocksWritingOneOutputInUnrelatedShapesAreOpaque) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @mixed(A: Buffer[(n, n), float32], C: Buffer[(n, n), float32]) {
      for i in range(n) {
        for j in range(n) {
          for r in range(n) {
            block sum(vi = spatial(n, i), vj = spatial(n, j), vr = reduce(n, r)) {
              init {
                C[vi, vj] = 0f32
              }
              C[vi, vj] = C[vi, vj] + A[vi, vr]
            }
          }
        }
      }
      for i2 in range(n) {
        block diagonal(vi2 = spatial(n, i2)) {
          C[vi2, vi2] = 1f32
        }
      }
    }
  })"),
            OpPattern::kOpaque);
}

TEST(AnalyzeOpPattern, OutputsOfUnrelatedShapesAreOpaque) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @two(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32], C: Buffer[(n,), float32]) {
      for i in range(n) {
        for j in range(4) {
          block copy(vi = spatial(n, i), vj = spatial(4, j)) {
            B[vi, vj] = A[vi, vj]
          }
        }
      }
      for i2 in range(n) {
        block first(vi2 = spatial(n, i2)) {
          C[vi2] = A[vi2, 0]
        }
      }
    }
  })"),
            OpPattern::kOpaque);
}

// Plain loops without blocks: a copy is elementwise, a reduction (whose
// store misses a loop variable) opaque.
TEST(AnalyzeOpPattern, LoopsWithoutBlocksAreReadThroughTheirLoopVariables) {
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @relu(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32]) {
      for i in range(n) {
        for j in range(4) {
          let x: float32 = A[i, j] {
            B[i, j] = max(x, 0f32)
          }
        }
      }
    }
  })"),
            OpPattern::kElementwise);
  EXPECT_EQ(pattern_of(R"(module {
    prim_func @row_sum(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
      for i in range(n) {
        B[i] = 0f32
        for k in range(m) {
          B[i] = B[i] + A[i, k]
        }
      }
    }
  })"),
            OpPattern::kOpaque);
}

// ---------------------------------------------------------------------------
// Legalized operators.

/// The class of the kernel legalize-ops makes for the one call in `func`.
OpPattern legalized_pattern(const std::string& func) {
  IRModule mod = legalize_and_annotate(st::parse_or_fail("module {\n" + func + "\n}"));
  std::vector<OpPattern> patterns;
  for (const auto& [name, f] : mod.functions()) {
    if (const auto* kernel = f.as<PrimFuncNode>()) {
      std::optional<OpPattern> pattern = op_pattern_of(*kernel);
      EXPECT_TRUE(pattern.has_value()) << name;
      patterns.push_back(pattern.value_or(OpPattern::kOpaque));
    }
  }
  EXPECT_EQ(patterns.size(), 1u) << func;
  return patterns.empty() ? OpPattern::kOpaque : patterns[0];
}

TEST(AnnotateOpPattern, RepresentativeLegalizedOperatorsGetTheirClasses) {
  struct Case {
    const char* func;
    OpPattern expected;
  };
  const std::vector<Case> cases = {
      {"func @f(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {"
       " r = add(x, y)  return r }",
       OpPattern::kElementwise},
      {"func @f(x: Tensor[(n, 4), float32], y: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {"
       " r = add(x, y)  return r }",
       OpPattern::kBroadcast},
      {"func @f(x: Tensor[(n, 4), float32]) -> Tensor[(4, n), float32] {"
       " r = permute_dims(x)  return r }",
       OpPattern::kInjective},
      {"func @f(x: Tensor[(n, 4), float32]) -> Tensor[(n,), float32] {"
       " r = sum(x, axis=[1])  return r }",
       OpPattern::kReduction},
      {"func @f(x: Tensor[(n, 8), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 4), float32] {"
       " r = matmul(x, w)  return r }",
       OpPattern::kOutputElementwiseFusible},
      {"func @f(x: Tensor[(n, 16), float32]) -> Tensor[(n, 16), float32] {"
       " r = softmax(x)  return r }",
       OpPattern::kReduction},
      {"func @f(x: Tensor[(n, 3, h, w), float32], k: Tensor[(4, 3, 3, 3), float32]) -> Tensor[(n, 4, h, w), float32] {"
       " r = conv2d(x, k, padding=[1, 1])  return r }",
       OpPattern::kOutputElementwiseFusible},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(op_pattern_name(legalized_pattern(c.func)), op_pattern_name(c.expected)) << c.func;
  }
}

// Every operator of examples/ops/ (one call of each family) gets a class;
// a spot check of the families the representative test above does not cover.
TEST(AnnotateOpPattern, EveryLegalizedExampleOperatorGetsAClass) {
  const std::filesystem::path dir = std::filesystem::path(RELAX_SOURCE_DIR) / "examples" / "ops";
  std::map<std::string, OpPattern> classes;
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".relax") continue;
    ++files;
    IRModule mod = legalize_and_annotate(st::parse_or_fail(read_file(entry.path())));
    for (const auto& [name, f] : mod.functions()) {
      const auto* kernel = f.as<PrimFuncNode>();
      if (kernel == nullptr) continue;
      std::optional<OpPattern> pattern = op_pattern_of(*kernel);
      ASSERT_TRUE(pattern.has_value()) << entry.path().filename() << ": " << name;
      classes[name] = *pattern;
    }
  }
  EXPECT_GE(files, 5u);
  EXPECT_GE(classes.size(), 80u);
  const std::map<std::string, OpPattern> expected = {
      {"exp_1", OpPattern::kElementwise},
      {"add_1", OpPattern::kBroadcast},  // (n, 1) + (1, m)
      {"broadcast_to_1", OpPattern::kBroadcast},
      {"permute_dims_1", OpPattern::kInjective},  // (reshape is a view, no kernel)
      {"concat_1", OpPattern::kInjective},
      {"split_1", OpPattern::kInjective},
      {"take_1", OpPattern::kInjective},
      {"dequantize_1", OpPattern::kInjective},
      {"layer_norm_1", OpPattern::kReduction},
      {"argmax_1", OpPattern::kReduction},
      {"linear_1", OpPattern::kOutputElementwiseFusible},
      {"max_pool2d_1", OpPattern::kOutputElementwiseFusible},
      {"avg_pool2d_1", OpPattern::kOutputElementwiseFusible},
      {"cumsum_1", OpPattern::kOpaque},
      {"quantize_1", OpPattern::kOpaque},  // two outputs of unrelated shapes
      {"accumulate", OpPattern::kOpaque},  // written in place (call_tir_inplace)
  };
  for (const auto& [name, pattern] : expected) {
    auto it = classes.find(name);
    ASSERT_NE(it, classes.end()) << name;
    EXPECT_EQ(op_pattern_name(it->second), op_pattern_name(pattern)) << name;
  }
}

// ---------------------------------------------------------------------------
// The pass.

constexpr const char* kTwoKernels = R"(module {
  prim_func @copy(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) attrs {op_pattern = "opaque"} {
    for i in range(n) {
      block copy(vi = spatial(n, i)) {
        B[vi] = A[vi]
      }
    }
  }
  prim_func @flip(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) attrs {global_symbol = "flip", op_pattern = "injective"} {
    for i in range(n) {
      block flip(vi = spatial(n, i)) {
        B[vi] = A[n - 1 - vi]
      }
    }
  }
})";

TEST(AnnotateOpPattern, OverwritesAStaleValueAndKeepsARightOne) {
  IRModule before = st::parse_or_fail(kTwoKernels);
  PassContext ctx;
  IRModule after = st::run_verified(before, {create_annotate_op_pattern_pass()}, ctx);
  EXPECT_EQ(op_pattern_of(*after.lookup("copy").as<PrimFuncNode>()), OpPattern::kElementwise);
  EXPECT_EQ(op_pattern_of(*after.lookup("flip").as<PrimFuncNode>()), OpPattern::kInjective);
  EXPECT_TRUE(after.lookup("flip").same_as(before.lookup("flip")));
  EXPECT_FALSE(after.lookup("copy").same_as(before.lookup("copy")));
  EXPECT_EQ(statistic(ctx, "annotated"), 1);
  EXPECT_EQ(statistic(ctx, "opaque"), 0);
  // The other attributes stay.
  const Attrs& attrs = after.lookup("flip").as<PrimFuncNode>()->attrs;
  EXPECT_EQ(std::get<std::string>(attrs.at("global_symbol")), "flip");
}

TEST(AnnotateOpPattern, IsIdempotent) {
  IRModule once = annotate(st::parse_or_fail(kTwoKernels));
  PassContext ctx;
  IRModule twice = st::run_verified(once, {create_annotate_op_pattern_pass()}, ctx);
  RELAX_EXPECT_STRUCTURAL_EQ(once, twice);
  for (const auto& [name, func] : once.functions()) {
    EXPECT_TRUE(twice.lookup(name).same_as(func)) << name;
  }
  EXPECT_EQ(statistic(ctx, "annotated"), 0);
}

// What `relax-opt --passes=legalize-ops,annotate-op-pattern` prints parses
// back to the same module, classes included.
TEST(AnnotateOpPattern, AnnotatedModulesRoundTripThroughText) {
  IRModule mod = legalize_and_annotate(st::parse_or_fail(R"(module {
    func @main(x: Tensor[(n, 8), float32], w: Tensor[(8, 4), float32], b: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {
      h = matmul(x, w)
      y = add(h, b)
      z = softmax(y)
      return z
    }
  })"));
  const std::string text = to_text(mod);
  EXPECT_NE(text.find("op_pattern = \"output-elementwise-fusible\""), std::string::npos) << text;
  EXPECT_NE(text.find("op_pattern = \"broadcast\""), std::string::npos) << text;
  EXPECT_NE(text.find("op_pattern = \"reduction\""), std::string::npos) << text;
  IRModule reparsed = st::parse_or_fail(text);
  RELAX_EXPECT_STRUCTURAL_EQ(mod, reparsed);
  EXPECT_EQ(to_text(reparsed), text);
}

TEST(AnnotateOpPattern, IsKnownByNameToPipelines) {
  absl::StatusOr<PassPtr> pass = create_pass("annotate-op-pattern");
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ((*pass)->info().name, "annotate-op-pattern");
  EXPECT_TRUE(parse_pipeline("legalize-ops,annotate-op-pattern").ok());
}

}  // namespace
}  // namespace relax::transform
