// lift-workspace end to end through relax::build's default pipeline: a kernel's
// split-K partial-sum buffer becomes a graph-level tensor (the kernel's heap
// allocation is gone from the IR and from the emitted C++), a library function
// gets its declared symbolic workspace after its outputs, and both compute the
// same values as plain loops at several sizes from one compilation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/codegen/cpp_codegen.h"
#include "relax/ir/parser.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/visitor.h"
#include "relax/runtime/module.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

using runtime::Tensor;
using runtime::Value;

// x (n, 64) @ w (64, 8) in four slices of k, each into its own partial sum of P,
// then the partials added: P is a workspace the kernel allocates for itself.
constexpr char kSplitK[] = R"(
module {
  func @main(x: Tensor[(n, 64), float32], w: Tensor[(64, 8), float32]) -> Tensor[(n, 8), float32] {
    y: Tensor[(n, 8), float32] = call_tir(@splitk, (x, w), sinfo=Tensor[(n, 8), float32])
    return y
  }
  prim_func @splitk(A: Buffer[(a, 64), float32], W: Buffer[(64, 8), float32], C: Buffer[(a, 8), float32]) attrs {global_symbol = "splitk"} {
    alloc P: Buffer[(4, a, 8), float32, workspace] {
      for k in range(4) {
        for i in range(a) {
          for j in range(8) {
            P[k, i, j] = 0f32
            for r in range(16) {
              P[k, i, j] = P[k, i, j] + A[i, k * 16 + r] * W[k * 16 + r, j]
            }
          }
        }
      }
      for i in range(a) {
        for j in range(8) {
          C[i, j] = P[0, i, j] + P[1, i, j] + P[2, i, j] + P[3, i, j]
        }
      }
    }
  }
}
)";

class AllocateCounter : public StmtVisitor {
 public:
  int count = 0;
  void visit_allocate(const Stmt& s, const AllocateNode& node) override {
    ++count;
    StmtVisitor::visit_allocate(s, node);
  }
};

int allocates_in(const IRModule& mod, const std::string& kernel) {
  AllocateCounter counter;
  counter.visit_prim_func(*mod.lookup(kernel).as<PrimFuncNode>());
  return counter.count;
}

// The C++ source of the module's kernels (what build compiled).
std::string cpp_source(const IRModule& mod, const Target& target) {
  absl::StatusOr<std::string> source = generate_cpp(mod, target);
  EXPECT_TRUE(source.ok()) << source.status();
  return source.ok() ? *source : std::string();
}

// Whether the C++ source heap-allocates a block (a relax_heap_block variable, not its definition).
bool heap_allocates(const std::string& source) {
  return std::regex_search(source, std::regex(R"(relax_heap_block \w+\()"));
}

// The bindings of a function's body, in order, by variable.
absl::flat_hash_map<const ExprNode*, Expr> bindings_of(const IRModule& mod, const std::string& function) {
  absl::flat_hash_map<const ExprNode*, Expr> out;
  const auto& body = *mod.lookup(function).as<FunctionNode>()->body.as<SeqExprNode>();
  for (const BindingBlock& block : body.blocks) {
    for (const Binding& b : block.bindings) out.emplace(b.var.get(), b.value);
  }
  return out;
}

std::string op_name(const Expr& e) {
  const auto* call = e.as<CallNode>();
  const auto* op = call != nullptr ? call->callee.as<OpNode>() : nullptr;
  return op != nullptr ? op->name : "";
}

Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t = *Tensor::empty(std::move(shape), DataType::float32());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as_or_die<float>()[i] = dist(rng);
  return t;
}

TEST(LiftWorkspaceBuild, SplitKScratchBecomesAGraphTensorAndMatchesPlainLoops) {
  absl::StatusOr<IRModule> mod = parse_module(kSplitK);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Target target = testing::build_test_target();

  // Without the pass the kernel heap-allocates P on every call (what the test guards against).
  transform::PassContext ctx;
  ctx.disable_pass("lift-workspace");
  BuildInfo unlifted;
  ASSERT_TRUE(build(*mod, target, transform::default_pipeline(target), ctx, &unlifted).ok());
  EXPECT_EQ(allocates_in(unlifted.lowered, "splitk"), 1);
  EXPECT_TRUE(heap_allocates(cpp_source(unlifted.lowered, target)));

  BuildInfo info;
  absl::StatusOr<runtime::Module> m = build(*mod, target, &info);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(allocates_in(info.lowered, "splitk"), 0);
  EXPECT_EQ(info.lowered.lookup("splitk").as<PrimFuncNode>()->params.size(), 4u);
  EXPECT_FALSE(heap_allocates(cpp_source(info.lowered, target)));

  // The kernel call's last destination is the workspace: a tensor of (4, n, 8) made by
  // alloc_tensor from a graph-level storage, which the memory plan can place.
  absl::flat_hash_map<const ExprNode*, Expr> values = bindings_of(info.lowered, "main");
  const CallNode* kernel_call = nullptr;
  for (const auto& [var, value] : values) {
    if (op_name(value) == "call_tir_dps") kernel_call = value.as<CallNode>();
  }
  ASSERT_NE(kernel_call, nullptr);
  const std::vector<Expr>& outs = kernel_call->args[2].as<TupleNode>()->fields;
  ASSERT_EQ(outs.size(), 2u);
  const Expr& workspace = values.at(outs[1].get());
  ASSERT_EQ(op_name(workspace), "alloc_tensor");
  EXPECT_EQ(outs[1].struct_info().to_string(), "Tensor[(4, n, 8), float32]");
  ASSERT_TRUE(values.contains(workspace.as<CallNode>()->args[0].get()));
  EXPECT_EQ(op_name(values.at(workspace.as<CallNode>()->args[0].get())), "alloc_storage");
  // ... and plan-memory placed it in the function's arena (the output y keeps its own storage).
  const auto* storage = workspace.as<CallNode>()->args[0].as<VarNode>();
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->name_hint, "arena");

  std::mt19937 rng(13);
  for (int64_t n : {1, 5, 33, 130}) {
    Tensor x = random_tensor({n, 64}, rng);
    Tensor w = random_tensor({64, 8}, rng);
    absl::StatusOr<Value> y = (*m)["main"](x, w);
    ASSERT_TRUE(y.ok()) << y.status();
    const float* got = y->tensor_or_die().data_as_or_die<float>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 8; ++j) {
        double expected = 0;
        for (int64_t k = 0; k < 64; ++k) {
          expected += double{x.data_as_or_die<float>()[i * 64 + k]} * w.data_as_or_die<float>()[k * 8 + j];
        }
        ASSERT_NEAR(got[i * 8 + j], expected, 1e-4) << "n = " << n << ", element (" << i << ", " << j << ")";
      }
    }
  }
}

constexpr char kPrefixSum[] = "lift_workspace_test.prefix_sum";

// out[i] = x[0] + ... + x[i], accumulated in doubles kept in the workspace (after the
// outputs, n * 8 + 16 bytes: n doubles and 16 bytes the function checks are there).
absl::Status prefix_sum(const std::vector<Value>& args) {
  if (args.size() != 3) return absl::InvalidArgumentError("prefix_sum: expected x, out, workspace");
  const Tensor& x = args[0].tensor_or_die();
  const Tensor& ws = args[2].tensor_or_die();
  const int64_t n = x.numel();
  if (ws.dtype() != DataType{DataType::Code::kUInt, 8, 1} || ws.shape().size() != 1 || ws.numel() != n * 8 + 16) {
    return absl::InvalidArgumentError("prefix_sum: workspace of " + std::to_string(ws.numel()) + " bytes, expected " +
                                      std::to_string(n * 8 + 16));
  }
  auto* partial = static_cast<double*>(ws.data());
  const float* in = x.data_as_or_die<float>();
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) partial[i] = sum += in[i];
  float* out = args[1].tensor_or_die().data_as_or_die<float>();
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(partial[i]);
  auto* tail = static_cast<uint8_t*>(ws.data()) + n * 8;
  for (int i = 0; i < 16; ++i) tail[i] = 0xab;  // the last bytes are writable too
  return absl::OkStatus();
}

TEST(LiftWorkspaceBuild, LibraryFunctionGetsItsSymbolicWorkspaceAfterItsOutputs) {
  runtime::register_library_function(kPrefixSum, prefix_sum);
  absl::StatusOr<IRModule> mod = parse_module(std::string(R"(
module {
  func @main(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
    y: Tensor[(n,), float32] = call_dps_library(extern_func(")") + kPrefixSum + R"("), (x,), prim(n * 8 + 16), sinfo=Tensor[(n,), float32])
    return y
  }
}
)");
  ASSERT_TRUE(mod.ok()) << mod.status();
  BuildInfo info;
  absl::StatusOr<runtime::Module> m = build(*mod, testing::build_test_target(), &info);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::flat_hash_map<const ExprNode*, Expr> values = bindings_of(info.lowered, "main");
  const CallNode* library_call = nullptr;
  for (const auto& [var, value] : values) {
    if (op_name(value) == "call_library_dps") library_call = value.as<CallNode>();
  }
  ASSERT_NE(library_call, nullptr);
  EXPECT_EQ(library_call->args.size(), 3u) << "the declared workspace is an argument no more";
  const std::vector<Expr>& outs = library_call->args[2].as<TupleNode>()->fields;
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[1].struct_info().to_string(), "Tensor[(n * 8 + 16,), uint8]");

  std::mt19937 rng(7);
  for (int64_t n : {1, 7, 100, 1000}) {
    Tensor x = random_tensor({n}, rng);
    absl::StatusOr<Value> y = (*m)["main"](x);
    ASSERT_TRUE(y.ok()) << y.status();
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      sum += x.data_as_or_die<float>()[i];
      ASSERT_EQ(y->tensor_or_die().data_as_or_die<float>()[i], static_cast<float>(sum)) << "n = " << n << ", i = " << i;
    }
  }
}

}  // namespace
}  // namespace relax
