// PrimFuncBuilder: kernels built from C++ callbacks -- their structure, what
// they compute (through a small reference interpreter of the loop-level IR,
// written here independently of the library), and the diagnostics of
// mistakes, each with the location of the call that made it.
#include "relax/ir/prim_func_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace relax {
namespace {

using ::testing::HasSubstr;

constexpr DataType kF32 = DataType::float32();
using Vars = std::vector<SymVar>;

// ---------------------------------------------------------------------------
// A reference interpreter: runs a PrimFunc body on row-major double arrays.
// Values go through evaluate_float after the loads in them are replaced by
// the loaded constants.

class Interpreter {
 public:
  explicit Interpreter(SymVarMap<int64_t> ints) : ints_(std::move(ints)) {}

  void bind(const Buffer& b, std::vector<double> values) {
    ASSERT_EQ(values.size(), size_of(b)) << b.name();
    data_[b.get()] = std::move(values);
  }
  const std::vector<double>& data(const Buffer& b) { return data_.at(b.get()); }

  void run(const Stmt& s) {
    if (!s.defined() || ::testing::Test::HasFatalFailure()) return;
    switch (s.kind()) {
      case StmtKind::kFor: {
        const ForNode& f = *s.as<ForNode>();
        const int64_t lo = index(f.min), extent = index(f.extent);
        for (int64_t v = lo; v < lo + extent; ++v) {
          ints_[f.loop_var] = v;
          run(f.body);
        }
        ints_.erase(f.loop_var);
        return;
      }
      case StmtKind::kSeq:
        for (const Stmt& x : s.as<SeqStmtNode>()->stmts) run(x);
        return;
      case StmtKind::kBufferStore: {
        const BufferStoreNode& st = *s.as<BufferStoreNode>();
        const double v = value(st.value);
        data_.at(st.buffer.get())[offset(st.buffer, st.indices)] = v;
        return;
      }
      case StmtKind::kIfThenElse: {
        const IfThenElseNode& node = *s.as<IfThenElseNode>();
        if (value(node.cond) != 0) {
          run(node.then_case);
        } else {
          run(node.else_case);
        }
        return;
      }
      case StmtKind::kLetStmt: {
        const LetStmtNode& let = *s.as<LetStmtNode>();
        if (let.var.dtype().is_float()) {
          floats_[let.var] = value(let.value);
        } else {
          ints_[let.var] = index(let.value);
        }
        run(let.body);
        return;
      }
      case StmtKind::kAllocate: {
        const AllocateNode& a = *s.as<AllocateNode>();
        data_[a.buffer.get()] = std::vector<double>(size_of(a.buffer), std::nan(""));
        run(a.body);
        data_.erase(a.buffer.get());
        return;
      }
      case StmtKind::kEvaluate:
        ++evaluated_;
        return;
      case StmtKind::kExternCall:
        ADD_FAILURE() << "this reference interpreter does not run extern calls";
        return;
      case StmtKind::kBlock: {
        const BlockNode& block = *s.as<BlockNode>();
        bool first_step = true;
        for (const IterVar& iv : block.iter_vars) {
          const int64_t v = index(iv.binding);
          ints_[iv.var] = v;
          if (iv.type == IterType::kReduction && v != 0) first_step = false;
        }
        if (first_step) run(block.init);
        run(block.body);
        return;
      }
    }
  }

  int evaluated() const { return evaluated_; }

 private:
  size_t size_of(const Buffer& b) {
    size_t n = 1;
    for (const SymExpr& d : b.shape()) n *= static_cast<size_t>(index(d));
    return n;
  }

  size_t offset(const Buffer& b, const std::vector<SymExpr>& indices) {
    size_t at = 0;
    for (size_t d = 0; d < indices.size(); ++d) {
      const int64_t extent = index(b.shape()[d]);
      const int64_t i = index(indices[d]);
      EXPECT_TRUE(i >= 0 && i < extent) << b.name() << " index " << d << " = " << i;
      at = at * static_cast<size_t>(extent) + static_cast<size_t>(i);
    }
    return at;
  }

  /// `e` with every load replaced by the constant it reads.
  SymExpr resolve(const SymExpr& e) {
    if (e.kind() == SymKind::kBufferLoad) {
      const Buffer b = e->buffer();
      std::vector<SymExpr> indices(e->operands().begin(), e->operands().end());
      const double v = data_.at(b.get())[offset(b, indices)];
      return b.dtype().is_float() ? SymExpr::float_imm(v, b.dtype())
                                  : SymExpr::int_imm(static_cast<int64_t>(v), b.dtype());
    }
    std::vector<SymExpr> operands;
    for (size_t i = 0; i < e.num_operands(); ++i) operands.push_back(resolve(e.operand(i)));
    return e.num_operands() == 0 ? e : e.with_operands(std::move(operands));
  }

  /// A float, or a boolean (comparisons of floats) as 0 or 1.
  double value(const SymExpr& e) {
    absl::StatusOr<double> v = evaluate_float(resolve(e), ints_, floats_);
    EXPECT_TRUE(v.ok()) << e << ": " << v.status();
    return v.ok() ? *v : std::nan("");
  }

  int64_t index(const SymExpr& e) {
    absl::StatusOr<int64_t> v = evaluate(resolve(e), ints_);
    EXPECT_TRUE(v.ok()) << e << ": " << v.status();
    return v.ok() ? *v : 0;
  }

  SymVarMap<int64_t> ints_;
  SymVarMap<double> floats_;
  absl::flat_hash_map<const BufferNode*, std::vector<double>> data_;
  int evaluated_ = 0;
};

std::vector<double> random_values(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n);
  // float32-exact values keep the float32 kernel and the double reference comparable.
  for (double& x : v) x = static_cast<double>(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 256.0f);
  return v;
}

/// The PrimFunc that `f` holds (an empty stand-in, after a failure, when it holds none).
const PrimFuncNode& prim(const absl::StatusOr<Expr>& f) {
  static const PrimFuncNode stand_in({}, make_seq({}), {}, StructInfo());
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok() || f->as<PrimFuncNode>() == nullptr) return stand_in;
  return *f->as<PrimFuncNode>();
}

std::string build_error(const PrimFuncBuilder& b) {
  absl::StatusOr<Expr> f = b.build();
  EXPECT_FALSE(f.ok());
  if (f.ok()) return "";
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(f.status().message());
}

/// "tests/ir/prim_func_builder_test.cc:<line>: " as a diagnostic starts.
std::string at(int line) { return absl::StrCat(SourceLocation::current().file_name(), ":", line, ": "); }

// ---------------------------------------------------------------------------
// Kernels.

/// C = A + B over (n, 4), as in the header's example.
absl::StatusOr<Expr> elementwise_add(const SymVar& n, Buffer* a, Buffer* bb, Buffer* c) {
  PrimFuncBuilder b("add");
  Buffer A = b.buffer_param("A", {n, 4}, kF32);
  Buffer B = b.buffer_param("B", {n, 4}, kF32);
  Buffer C = b.buffer_param("C", {n, 4}, kF32);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, 4, [&](SymVar j) {
      b.block("add", {b.spatial(n, i), b.spatial(4, j)}, [&](const Vars& v) {
        b.store(C, {v[0], v[1]}, buffer_load(A, {v[0], v[1]}) + buffer_load(B, {v[0], v[1]}));
      });
    });
  });
  *a = A;
  *bb = B;
  *c = C;
  return b.build();
}

TEST(PrimFuncBuilderTest, ElementwiseAddBuildsLoopsBlocksAndStores) {
  SymVar n("n");
  Buffer A, B, C;
  absl::StatusOr<Expr> f = elementwise_add(n, &A, &B, &C);
  const PrimFuncNode& func = prim(f);
  ASSERT_EQ(func.params.size(), 3u);
  EXPECT_TRUE(func.params[0].buffer->same_as(A));
  EXPECT_FALSE(func.params[0].scalar.has_value());
  EXPECT_EQ(std::get<std::string>(func.attrs.at("global_symbol")), "add");
  const ForNode* outer = func.body.as<ForNode>();
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->loop_var.name(), "i");
  EXPECT_EQ(outer->for_kind, ForKind::kParallel);
  EXPECT_TRUE(outer->extent.same_as(n));
  const ForNode* inner = outer->body.as<ForNode>();
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->for_kind, ForKind::kSerial);
  EXPECT_TRUE(inner->extent.is_const(4));
  const BlockNode* block = inner->body.as<BlockNode>();
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->name, "add");
  ASSERT_EQ(block->iter_vars.size(), 2u);
  EXPECT_EQ(block->iter_vars[0].var.name(), "vi");
  EXPECT_EQ(block->iter_vars[1].var.name(), "vj");
  EXPECT_TRUE(block->iter_vars[0].binding.same_as(outer->loop_var));
  EXPECT_EQ(block->iter_vars[0].type, IterType::kSpatial);
  EXPECT_FALSE(block->init.defined());
  const BufferStoreNode* store = block->body.as<BufferStoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->buffer.same_as(C));
  EXPECT_EQ(to_string(store->value), "A[vi, vj] + B[vi, vj]");
  EXPECT_EQ(for_kind_name(ForKind::kVectorized), "vectorized");
}

TEST(PrimFuncBuilderTest, ElementwiseAddComputesTheSum) {
  SymVar n("n");
  Buffer A, B, C;
  absl::StatusOr<Expr> f = elementwise_add(n, &A, &B, &C);
  ASSERT_TRUE(f.ok()) << f.status();
  for (int64_t rows : {1, 3, 7}) {
    SymVarMap<int64_t> env;
    env.emplace(n, rows);
    Interpreter run(env);
    const auto a = random_values(static_cast<size_t>(rows * 4), 1), b = random_values(static_cast<size_t>(rows * 4), 2);
    run.bind(A, a);
    run.bind(B, b);
    run.bind(C, std::vector<double>(a.size(), std::nan("")));
    run.run(f->as<PrimFuncNode>()->body);
    for (size_t k = 0; k < a.size(); ++k) EXPECT_EQ(run.data(C)[k], static_cast<float>(a[k] + b[k]));
  }
}

TEST(PrimFuncBuilderTest, AnnotationIsAnImpureFunctionOfTheParams) {
  SymVar n("n");
  PrimFuncBuilder b("scale");
  Buffer A = b.buffer_param("A", {n}, kF32);
  SymVar k = b.scalar_param("k");
  SymVar alpha = b.scalar_param("alpha", kF32);
  b.for_("i", 0, k, [&](SymVar i) { b.store(A, {i}, buffer_load(A, {i}) * alpha); });
  absl::StatusOr<Expr> f = b.build();
  ASSERT_TRUE(f.ok()) << f.status();
  const auto* sinfo = f->struct_info().as<FuncStructInfoNode>();
  ASSERT_NE(sinfo, nullptr);
  EXPECT_FALSE(sinfo->pure);
  ASSERT_TRUE(sinfo->params.has_value());
  ASSERT_EQ(sinfo->params->size(), 3u);
  EXPECT_EQ((*sinfo->params)[0].to_string(), "Tensor[(n,), float32]");
  EXPECT_EQ((*sinfo->params)[1].to_string(), "Prim[int64, k]");
  EXPECT_EQ((*sinfo->params)[2].to_string(), "Prim[float32]");
  EXPECT_EQ(sinfo->ret.to_string(), "Tuple[()]");
  const PrimFuncNode& func = prim(f);
  EXPECT_TRUE(func.params[1].scalar->same_as(k));
  EXPECT_EQ(func.params[2].scalar->dtype(), kF32);
}

/// C[i, j] = sum_k A[i, k] * B[k, j], with an init block part.
TEST(PrimFuncBuilderTest, MatmulWithReductionAndInit) {
  SymVar n("n"), m("m"), p("p");
  PrimFuncBuilder b("matmul");
  Buffer A = b.buffer_param("A", {n, m}, kF32);
  Buffer B = b.buffer_param("B", {m, p}, kF32);
  Buffer C = b.buffer_param("C", {n, p}, kF32);
  b.for_("i", 0, n, [&](SymVar i) {
    b.for_("j", 0, p, [&](SymVar j) {
      b.for_("k", 0, m, [&](SymVar k) {
        b.block(
            "matmul", {b.spatial(n, i), b.spatial(p, j), b.reduce(m, k)},
            [&](const Vars& v) { b.store(C, {v[0], v[1]}, 0); },
            [&](const Vars& v) {
              b.store(C, {v[0], v[1]},
                      buffer_load(C, {v[0], v[1]}) +
                          buffer_load(A, {v[0], v[2]}) * buffer_load(B, {v[2], v[1]}));
            });
      });
    });
  });
  absl::StatusOr<Expr> f = b.build();
  const PrimFuncNode& func = prim(f);
  ASSERT_TRUE(f.ok());
  const BlockNode* block =
      func.body.as<ForNode>()->body.as<ForNode>()->body.as<ForNode>()->body.as<BlockNode>();
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->iter_vars[2].type, IterType::kReduction);
  EXPECT_EQ(block->iter_vars[2].var.name(), "vk");
  ASSERT_TRUE(block->init.defined());
  EXPECT_EQ(to_string(block->init.as<BufferStoreNode>()->value), "0f32");
  EXPECT_EQ(to_string(block->body.as<BufferStoreNode>()->value), "C[vi, vj] + A[vi, vk] * B[vk, vj]");

  for (auto [rows, inner, cols] : {std::tuple{2, 3, 4}, std::tuple{5, 1, 3}, std::tuple{4, 8, 2}}) {
    SymVarMap<int64_t> env;
    env.emplace(n, rows);
    env.emplace(m, inner);
    env.emplace(p, cols);
    Interpreter run(env);
    const auto a = random_values(static_cast<size_t>(rows * inner), 3);
    const auto bv = random_values(static_cast<size_t>(inner * cols), 4);
    run.bind(A, a);
    run.bind(B, bv);
    run.bind(C, std::vector<double>(static_cast<size_t>(rows * cols), std::nan("")));
    run.run(func.body);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        double expected = 0;
        for (int k = 0; k < inner; ++k) expected += a[r * inner + k] * bv[k * cols + c];
        EXPECT_NEAR(run.data(C)[r * cols + c], expected, 1e-3) << r << ", " << c;
      }
    }
  }
}

/// Row softmax in three blocks over two allocated row buffers.
TEST(PrimFuncBuilderTest, SoftmaxLikeKernelWithAllocate) {
  SymVar n("n"), m("m");
  PrimFuncBuilder b("softmax");
  Buffer A = b.buffer_param("A", {n, m}, kF32);
  Buffer B = b.buffer_param("B", {n, m}, kF32);
  Buffer row_max = b.allocate("row_max", {n}, kF32);
  Buffer row_sum = b.allocate("row_sum", {n}, kF32, BufferScope::kWorkspace);
  b.for_("i", 0, n, [&](SymVar i) {
    b.for_("j", 0, m, [&](SymVar j) {
      b.block(
          "max", {b.spatial(n, i), b.reduce(m, j)},
          [&](const Vars& v) {
            b.store(row_max, {v[0]}, SymExpr::float_imm(-std::numeric_limits<double>::infinity(), kF32));
          },
          [&](const Vars& v) {
            b.store(row_max, {v[0]}, max(buffer_load(row_max, {v[0]}), buffer_load(A, {v[0], v[1]})));
          });
    });
  });
  b.for_("i", 0, n, [&](SymVar i) {
    b.for_("j", 0, m, [&](SymVar j) {
      b.block(
          "sum", {b.spatial(n, i), b.reduce(m, j)}, [&](const Vars& v) { b.store(row_sum, {v[0]}, 0); },
          [&](const Vars& v) {
            b.store(row_sum, {v[0]},
                    buffer_load(row_sum, {v[0]}) +
                        exp(buffer_load(A, {v[0], v[1]}) - buffer_load(row_max, {v[0]})));
          });
    });
  });
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, m, ForKind::kVectorized, [&](SymVar j) {
      b.block("normalize", {b.spatial(n, i), b.spatial(m, j)}, [&](const Vars& v) {
        b.store(B, {v[0], v[1]},
                exp(buffer_load(A, {v[0], v[1]}) - buffer_load(row_max, {v[0]})) /
                    buffer_load(row_sum, {v[0]}));
      });
    });
  });
  absl::StatusOr<Expr> f = b.build();
  const PrimFuncNode& func = prim(f);
  ASSERT_TRUE(f.ok());
  // allocate row_max { allocate row_sum { for; for; for } }
  const AllocateNode* outer = func.body.as<AllocateNode>();
  ASSERT_NE(outer, nullptr);
  EXPECT_TRUE(outer->buffer.same_as(row_max));
  EXPECT_EQ(outer->buffer->scope, BufferScope::kLocal);
  const AllocateNode* inner = outer->body.as<AllocateNode>();
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->buffer->scope, BufferScope::kWorkspace);
  const SeqStmtNode* seq = inner->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->stmts.size(), 3u);
  for (const Stmt& s : seq->stmts) EXPECT_NE(s.as<ForNode>(), nullptr);

  for (auto [rows, cols] : {std::pair{1, 1}, std::pair{3, 5}, std::pair{4, 16}}) {
    SymVarMap<int64_t> env;
    env.emplace(n, rows);
    env.emplace(m, cols);
    Interpreter run(env);
    const auto a = random_values(static_cast<size_t>(rows * cols), 5);
    run.bind(A, a);
    run.bind(B, std::vector<double>(a.size(), std::nan("")));
    run.run(func.body);
    for (int r = 0; r < rows; ++r) {
      double top = -INFINITY, total = 0;
      for (int c = 0; c < cols; ++c) top = std::max(top, a[r * cols + c]);
      for (int c = 0; c < cols; ++c) total += std::exp(a[r * cols + c] - top);
      double row = 0;
      for (int c = 0; c < cols; ++c) {
        EXPECT_NEAR(run.data(B)[r * cols + c], std::exp(a[r * cols + c] - top) / total, 1e-6);
        row += run.data(B)[r * cols + c];
      }
      EXPECT_NEAR(row, 1.0, 1e-5);
    }
  }
}

TEST(PrimFuncBuilderTest, LetBindsTheRestOfTheBody) {
  SymVar n("n");
  PrimFuncBuilder b("square_plus");
  Buffer A = b.buffer_param("A", {n}, kF32);
  Buffer B = b.buffer_param("B", {n}, kF32);
  b.for_("i", 0, n, [&](SymVar i) {
    SymVar t = b.let("t", buffer_load(A, {i}) * buffer_load(A, {i}));
    SymVar next = b.let("next", floormod(i + 1, n));
    b.store(B, {i}, t + buffer_load(A, {next}));
  });
  absl::StatusOr<Expr> f = b.build();
  const PrimFuncNode& func = prim(f);
  ASSERT_TRUE(f.ok());
  const LetStmtNode* let = func.body.as<ForNode>()->body.as<LetStmtNode>();
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(let->var.name(), "t");
  EXPECT_EQ(let->var.dtype(), kF32);
  const LetStmtNode* let2 = let->body.as<LetStmtNode>();
  ASSERT_NE(let2, nullptr);
  EXPECT_EQ(let2->var.dtype(), DataType::int64());
  EXPECT_NE(let2->body.as<BufferStoreNode>(), nullptr);

  SymVarMap<int64_t> env;
  env.emplace(n, 4);
  Interpreter run(env);
  run.bind(A, {1, 2, 3, 4});
  run.bind(B, {0, 0, 0, 0});
  run.run(func.body);
  EXPECT_EQ(run.data(B), (std::vector<double>{3, 7, 13, 17}));
}

TEST(PrimFuncBuilderTest, IfThenElseWithAndWithoutElse) {
  SymVar n("n");
  PrimFuncBuilder b("relu");
  Buffer A = b.buffer_param("A", {n}, kF32);
  Buffer B = b.buffer_param("B", {n}, kF32);
  b.for_("i", 0, n, [&](SymVar i) {
    b.if_then_else(
        buffer_load(A, {i}) > 0.0, [&] { b.store(B, {i}, buffer_load(A, {i})); },
        [&] { b.store(B, {i}, 0); });
    b.if_then_else(i == 0, [&] { b.evaluate(exp(buffer_load(A, {i}))); });
  });
  absl::StatusOr<Expr> f = b.build();
  const PrimFuncNode& func = prim(f);
  ASSERT_TRUE(f.ok());
  const SeqStmtNode* body = func.body.as<ForNode>()->body.as<SeqStmtNode>();
  ASSERT_NE(body, nullptr);
  const IfThenElseNode* relu = body->stmts[0].as<IfThenElseNode>();
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(to_string(relu->cond), "A[i] > 0f32");
  EXPECT_TRUE(relu->else_case.defined());
  const IfThenElseNode* once = body->stmts[1].as<IfThenElseNode>();
  ASSERT_NE(once, nullptr);
  EXPECT_FALSE(once->else_case.defined());
  ASSERT_NE(once->then_case.as<EvaluateNode>(), nullptr);
  EXPECT_EQ(to_string(once->then_case.as<EvaluateNode>()->value), "exp(A[i])");

  SymVarMap<int64_t> env;
  env.emplace(n, 5);
  Interpreter run(env);
  run.bind(A, {-2, 0.5, 0, 3, -0.25});
  run.bind(B, std::vector<double>(5, 9));
  run.run(func.body);
  EXPECT_EQ(run.data(B), (std::vector<double>{0, 0.5, 0, 3, 0}));
  EXPECT_EQ(run.evaluated(), 1);
}

TEST(PrimFuncBuilderTest, IntegerConstantsAndLoopVariablesTakeTheRightDtype) {
  SymVar n32("n", DataType::int32());
  PrimFuncBuilder b("fill");
  Buffer C = b.buffer_param("C", {n32}, DataType::float16());
  Buffer I = b.buffer_param("I", {n32}, DataType::int32());
  b.for_("i", 0, n32, [&](SymVar i) {
    EXPECT_EQ(i.dtype(), DataType::int32());
    b.store(C, {i}, 1);
    b.store(I, {i}, i * 2);
  });
  absl::StatusOr<Expr> f = b.build();
  const PrimFuncNode& func = prim(f);
  ASSERT_TRUE(f.ok());
  const ForNode* loop = func.body.as<ForNode>();
  EXPECT_EQ(loop->min.dtype(), DataType::int32());
  const SeqStmtNode* seq = loop->body.as<SeqStmtNode>();
  EXPECT_EQ(to_string(seq->stmts[0].as<BufferStoreNode>()->value), "1f16");
  EXPECT_EQ(to_string(seq->stmts[1].as<BufferStoreNode>()->value), "i * 2i32");
  EXPECT_EQ(func.params[0].buffer->shape()[0].dtype(), DataType::int32());
}

TEST(PrimFuncBuilderTest, IterationVariableNames) {
  SymVar n("n");
  PrimFuncBuilder b("names");
  Buffer A = b.buffer_param("A", {n, 8}, kF32);
  b.for_("i", 0, n, [&](SymVar i) {
    b.for_("j", 0, 4, [&](SymVar j) {
      b.block("copy", {b.spatial(n, i), b.spatial(8, j * 2), b.spatial(1, 0, "unit")},
              [&](const Vars& v) {
                EXPECT_EQ(v[0].name(), "vi");
                EXPECT_EQ(v[1].name(), "v1");
                EXPECT_EQ(v[2].name(), "unit");
                b.store(A, {v[0], v[1] + v[2]}, 0);
              });
    });
  });
  EXPECT_TRUE(b.build().ok()) << b.build().status();
  EXPECT_TRUE(b.errors().empty());
}

// ---------------------------------------------------------------------------
// Mistakes.

TEST(PrimFuncBuilderTest, StoreMistakesCarryTheCallersLocation) {
  SymVar n("n");
  PrimFuncBuilder b("bad_stores");
  Buffer A = b.buffer_param("A", {n, 4}, kF32);
  Buffer H = b.buffer_param("H", {n}, DataType::float16());
  int undefined_line = 0, count_line = 0, dtype_line = 0, index_line = 0;
  b.for_("i", 0, n, [&](SymVar i) {
    undefined_line = __LINE__ + 1;
    b.store(Buffer(), {i}, 0);
    count_line = __LINE__ + 1;
    b.store(A, {i}, 0);
    dtype_line = __LINE__ + 1;
    b.store(A, {i, 0}, buffer_load(H, {i}));
    index_line = __LINE__ + 1;
    b.store(A, {i, buffer_load(A, {i, 0})}, 1);
  });
  const std::string message = build_error(b);
  EXPECT_THAT(message, HasSubstr(at(undefined_line) +
                                 "store to an undefined buffer (use one from buffer_param or allocate)"));
  EXPECT_THAT(message, HasSubstr(at(count_line) + "store to `A`: 1 index, but the buffer has rank 2"));
  EXPECT_THAT(message, HasSubstr(at(dtype_line) +
                                 "store to `A`: the value `H[i]` is float16, but the buffer holds float32"));
  EXPECT_THAT(message, HasSubstr(at(index_line) +
                                 "store to `A`: index 1 must be an integer, found float32 `A[i, 0]`"));
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(message, '\n')).size(), 4u) << message;
  EXPECT_EQ(b.errors().size(), 4u);
}

TEST(PrimFuncBuilderTest, LoopVariableUsedOutsideItsLoop) {
  SymVar n("n");
  PrimFuncBuilder b("escape");
  Buffer A = b.buffer_param("A", {n}, kF32);
  std::vector<SymVar> saved;
  b.for_("i", 0, n, [&](SymVar i) { saved.push_back(i); });
  const int line = __LINE__ + 1;
  b.store(A, {saved[0]}, 0);
  EXPECT_EQ(build_error(b), at(line) + "store to `A`: loop variable `i` is used outside its loop");
}

TEST(PrimFuncBuilderTest, BlockBindingUsesAnUndefinedVariable) {
  SymVar n("n"), stray("k");
  PrimFuncBuilder b("bad_block");
  Buffer A = b.buffer_param("A", {n}, kF32);
  SymVar block_var_kept("unset");
  int line = 0;
  b.for_("i", 0, n, [&](SymVar i) {
    line = __LINE__ + 1;
    b.block("copy", {b.spatial(n, i + stray)}, [&](const Vars& v) {
      block_var_kept = v[0];
      b.store(A, {v[0]}, 1);
    });
  });
  const int after_line = __LINE__ + 1;
  b.store(A, {block_var_kept}, 2);
  const std::string message = build_error(b);
  EXPECT_THAT(message, HasSubstr(at(line) + "block `copy`, spatial variable `v0`: the binding: symbolic "
                                            "variable `k` is not defined here"));
  EXPECT_THAT(message, HasSubstr(at(after_line) + "store to `A`: iteration variable `v0` of block "
                                                  "`copy` is used outside the block"));
}

TEST(PrimFuncBuilderTest, BuffersMustBeParametersOrLiveAllocations) {
  SymVar n("n");
  PrimFuncBuilder other("other");
  Buffer foreign = other.buffer_param("X", {n}, kF32);
  PrimFuncBuilder b("scopes");
  Buffer A = b.buffer_param("A", {n}, kF32);
  Buffer tmp;
  b.for_("i", 0, n, [&](SymVar i) {
    tmp = b.allocate("tmp", {4}, kF32);
    b.store(tmp, {0}, buffer_load(A, {i}));
  });
  const int foreign_line = __LINE__ + 1;
  b.store(foreign, {0}, 0);
  const int after_line = __LINE__ + 1;
  b.for_("j", 0, n, [&](SymVar j) { b.store(A, {j}, buffer_load(tmp, {0})); });
  const std::string message = build_error(b);
  EXPECT_THAT(message, HasSubstr(at(foreign_line) + "store to `X`: buffer `X` is neither a parameter "
                                                    "of `scopes` nor allocated around here"));
  EXPECT_THAT(message, HasSubstr(at(after_line) +
                                 "store to `A`: buffer `tmp` is used outside its allocation"));
}

TEST(PrimFuncBuilderTest, ParameterDimsMustBeDefinedByParameters) {
  SymVar n("n"), m("m");
  PrimFuncBuilder b("dims");
  const int line = __LINE__ + 1;
  Buffer A = b.buffer_param("A", {n * 2, m}, kF32);
  b.for_("i", 0, m, [&](SymVar i) { b.store(A, {i, i}, 0); });
  EXPECT_EQ(build_error(b), at(line) + "buffer parameter `A`: symbolic variable `n` in dim `n * 2` is "
                                       "defined by no parameter (a parameter defines a variable that "
                                       "is a whole dim, or a scalar parameter)");
  // Defined by a later parameter is fine.
  PrimFuncBuilder ok("dims_ok");
  ok.buffer_param("B", {n * 2}, kF32);
  ok.buffer_param("C", {n}, kF32);
  EXPECT_TRUE(ok.build().ok()) << ok.build().status();
}

TEST(PrimFuncBuilderTest, ConditionsInitsAndParametersOutOfPlace) {
  SymVar n("n");
  PrimFuncBuilder b("misc");
  Buffer A = b.buffer_param("A", {n}, kF32);
  int cond_line = 0, init_line = 0, param_line = 0, evaluate_line = 0;
  b.for_("i", 0, n, [&](SymVar i) {
    cond_line = __LINE__ + 1;
    b.if_then_else(i + 1, [&] { b.store(A, {i}, 0); });
    init_line = __LINE__ + 1;
    b.block("no_reduce", {b.spatial(n, i)}, [&](const Vars& v) { b.store(A, {v[0]}, 1); },
            [&](const Vars& v) { b.store(A, {v[0]}, 2); });
    param_line = __LINE__ + 1;
    b.scalar_param("late");
    evaluate_line = __LINE__ + 1;
    b.evaluate(SymVar("ghost", kF32) + 1);
  });
  const std::string message = build_error(b);
  EXPECT_THAT(message, HasSubstr(at(cond_line) + "if: the condition must be boolean, found int64 `i + 1`"));
  EXPECT_THAT(message, HasSubstr(at(init_line) + "block `no_reduce` has an init part but no reduction variable"));
  EXPECT_THAT(message, HasSubstr(at(param_line) + "scalar parameter `late`: parameters are declared at the "
                                                  "top level"));
  EXPECT_THAT(message, HasSubstr(at(evaluate_line) + "evaluate `ghost + 1f32`: symbolic variable `ghost` "
                                                     "is not defined here"));
}

TEST(PrimFuncBuilderTest, CheckedLoadReportsInsteadOfAborting) {
  SymVar n("n");
  PrimFuncBuilder b("loads");
  Buffer A = b.buffer_param("A", {n, 4}, kF32);
  Buffer B = b.buffer_param("B", {n}, kF32);
  int line = 0;
  b.for_("i", 0, n, [&](SymVar i) {
    line = __LINE__ + 1;
    SymExpr bad = b.load(A, {i});
    EXPECT_EQ(to_string(bad), "0f32");  // the placeholder
    SymExpr good = b.load(A, {i, 3});
    EXPECT_EQ(to_string(good), "A[i, 3]");
    b.store(B, {i}, good + bad);
  });
  EXPECT_EQ(build_error(b), at(line) + "load from `A`: 1 index, but the buffer has rank 2");
}

TEST(PrimFuncBuilderTest, LoopBoundsMustBeIntegersOfOneDtype) {
  SymVar n("n"), n32("m", DataType::int32());
  PrimFuncBuilder b("bounds");
  Buffer A = b.buffer_param("A", {n}, kF32);
  b.buffer_param("B", {n32}, kF32);
  const int float_line = __LINE__ + 1;
  b.for_("i", 0, SymExpr::float_imm(4, kF32), [&](SymVar i) { b.store(A, {i}, 0); });
  const int mixed_line = __LINE__ + 1;
  b.for_("j", n, n32, [&](SymVar j) { EXPECT_EQ(j.dtype(), DataType::int32()); });
  const std::string message = build_error(b);
  EXPECT_THAT(message, HasSubstr(at(float_line) + "loop `i`: the extent must be an integer, found float32 `4f32`"));
  EXPECT_THAT(message, HasSubstr(at(mixed_line) + "loop `j`: the start `n` is int64 but the extent `m` is int32"));
}

TEST(PrimFuncBuilderTest, BuildInsideACallbackIsAnError) {
  SymVar n("n");
  PrimFuncBuilder b("reentrant");
  Buffer A = b.buffer_param("A", {n}, kF32);
  int line = 0;
  b.for_("i", 0, n, [&](SymVar i) {
    b.store(A, {i}, 0);
    line = __LINE__ + 1;
    absl::StatusOr<Expr> inside = b.build();
    EXPECT_THAT(std::string(inside.status().message()),
                HasSubstr(at(line) + "build() of `reentrant` called inside a loop, block or branch body"));
  });
  EXPECT_TRUE(b.build().ok());
}

TEST(PrimFuncBuilderTest, AnEmptyKernelAndAMovedBuilder) {
  PrimFuncBuilder b("empty");
  PrimFuncBuilder moved = std::move(b);
  moved.set_attr("note", std::string("nothing to do"));
  absl::StatusOr<Expr> f = moved.build();
  const PrimFuncNode& func = prim(f);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(func.params.empty());
  ASSERT_NE(func.body.as<SeqStmtNode>(), nullptr);
  EXPECT_TRUE(func.body.as<SeqStmtNode>()->stmts.empty());
  EXPECT_EQ(std::get<std::string>(func.attrs.at("note")), "nothing to do");
}

}  // namespace
}  // namespace relax
