// The opaque extern-call statement (`call_extern`, ExternCallNode in
// relax/ir/prim_func.h) and the micro-kernel registry (relax/ir/micro_kernel.h):
// text and JSON round trips, structural equality and hashing, the visitor and
// mutator, the registry's checks of a registration, and well-formedness: an
// unknown kernel, arguments that do not fit the registered signature (named by
// kernel and position), and regions provably outside their buffer.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "relax/ir/json.h"
#include "relax/ir/micro_kernel.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;

// C[i, j] = dot(A[i, :], B[j, :]) through the built-in micro-kernel.
constexpr const char* kDotModule = R"(module {
  prim_func @dot_rows(A: Buffer[(n, k), float32], B: Buffer[(m, k), float32], C: Buffer[(n, m), float32]) {
    for i in range(n) {
      for j in range(m) {
        call_extern relax_dot_f32(&A[i, 0], &B[j, 0], k, &C[i, j])
      }
    }
  }
})";

IRModule parse_or_die(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

std::string one_prim_func(const std::string& params, const std::string& body) {
  return "module {\n  prim_func @k(" + params + ") {\n    " + body + "\n  }\n}";
}

std::vector<std::string> violations_of(const std::string& params, const std::string& body) {
  return well_formed_violations(parse_or_die(one_prim_func(params, body)));
}

const ExternCallNode* first_extern_call(const Stmt& s) {
  struct Finder : StmtVisitor {
    const ExternCallNode* found = nullptr;
    void visit_extern_call(const Stmt&, const ExternCallNode& node) override {
      if (found == nullptr) found = &node;
    }
  } finder;
  finder.visit_stmt(s);
  return finder.found;
}

TEST(ExternCall, PrintsAndParsesBack) {
  IRModule mod = parse_or_die(kDotModule);
  const std::string text = to_text(mod);
  EXPECT_THAT(text, HasSubstr("call_extern relax_dot_f32(&A[i, 0], &B[j, 0], k, &C[i, j])"));
  IRModule again = parse_or_die(text);
  EXPECT_EQ(to_text(again), text);
  EXPECT_TRUE(structural_equal(mod, again));
  EXPECT_EQ(structural_hash(mod), structural_hash(again));
  EXPECT_THAT(well_formed_violations(mod), IsEmpty());
}

TEST(ExternCall, JsonRoundTripIsStructurallyEqual) {
  IRModule mod = parse_or_die(kDotModule);
  absl::StatusOr<IRModule> back = from_json(to_json(mod));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(structural_equal(mod, *back));
  EXPECT_EQ(to_text(*back), to_text(mod));
}

TEST(ExternCall, JsonRejectsANameThatIsNotACIdentifier) {
  IRModule mod = parse_or_die(kDotModule);
  std::string json = to_json(mod);
  std::string renamed = json;
  renamed.replace(renamed.find("\"relax_dot_f32\""), 15, "\"relax.dot\"");
  absl::StatusOr<IRModule> bad_name = from_json(renamed);
  ASSERT_FALSE(bad_name.ok());
  EXPECT_THAT(bad_name.status().message(), HasSubstr("a micro-kernel name must be a C identifier"));
}

TEST(ExternCall, StructuralEqualityComparesNameArgumentsAndRegions) {
  const std::string base = one_prim_func("A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(1,), float32]",
                                         "call_extern relax_dot_f32(&A[0], &B[0], n, &C[0])");
  // Alpha-equivalent: other names for the same buffers and variables.
  const std::string renamed = one_prim_func("X: Buffer[(m,), float32], Y: Buffer[(m,), float32], Z: Buffer[(1,), float32]",
                                            "call_extern relax_dot_f32(&X[0], &Y[0], m, &Z[0])");
  const std::string swapped = one_prim_func("A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(1,), float32]",
                                            "call_extern relax_dot_f32(&B[0], &A[0], n, &C[0])");
  const std::string shifted = one_prim_func("A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(1,), float32]",
                                            "call_extern relax_dot_f32(&A[1], &B[0], n - 1, &C[0])");
  const std::string other_kernel = one_prim_func("A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(1,), float32]",
                                                 "call_extern other_dot(&A[0], &B[0], n, &C[0])");
  IRModule a = parse_or_die(base);
  EXPECT_TRUE(structural_equal(a, parse_or_die(renamed)));
  EXPECT_EQ(structural_hash(a), structural_hash(parse_or_die(renamed)));
  for (const std::string& other : {swapped, shifted, other_kernel}) {
    IRModule b = parse_or_die(other);
    EXPECT_FALSE(structural_equal(a, b)) << other;
    EXPECT_NE(structural_hash(a), structural_hash(b)) << other;
  }
  std::optional<std::string> diff = first_difference(a, parse_or_die(other_kernel));
  ASSERT_TRUE(diff.has_value());
  EXPECT_THAT(*diff, HasSubstr("relax_dot_f32"));
}

TEST(ExternCall, ParserErrorsNameTheProblem) {
  auto error_of = [](const std::string& params, const std::string& body) {
    absl::StatusOr<IRModule> mod = parse_module(one_prim_func(params, body));
    return mod.ok() ? std::string("parsed") : std::string(mod.status().message());
  };
  EXPECT_THAT(error_of("A: Buffer[(4,), float32]", "call_extern f(&B[0])"), HasSubstr("unknown buffer `B`"));
  EXPECT_THAT(error_of("A: Buffer[(4, 4), float32]", "call_extern f(&A[0])"),
              HasSubstr("the region of `A` has 1 indices, but the buffer has rank 2"));
  EXPECT_THAT(error_of("A: Buffer[(4,), float32]", "call_extern a.b(&A[0])"),
              HasSubstr("a micro-kernel name must be a C identifier, found `a.b`"));
  EXPECT_THAT(error_of("A: Buffer[(4,), float32]", "call_extern f(&A[1.5f32])"), HasSubstr("an index must be an integer"));
}

TEST(ExternCall, VisitorSeesArgumentsAndMutatorRewritesThem) {
  IRModule mod = parse_or_die(kDotModule);
  const auto* func = mod.lookup("dot_rows").as<PrimFuncNode>();
  ASSERT_NE(func, nullptr);
  const ExternCallNode* call = first_extern_call(func->body);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->name, "relax_dot_f32");
  ASSERT_EQ(call->args.size(), 4u);
  EXPECT_TRUE(call->args[0].is_region());
  EXPECT_EQ(call->args[0].buffer.name(), "A");
  EXPECT_FALSE(call->args[2].is_region());
  EXPECT_EQ(call->args[2].value.to_string(), "k");

  // Every int64 constant 0 becomes 1: the regions' indices change, the rest is kept.
  struct ZeroToOne : StmtMutator {
    SymExpr visit_value(const SymExpr& v) override {
      if (v.is_const(0) && v.dtype() == DataType::int64()) return SymExpr::int_imm(1, DataType::int64());
      return StmtMutator::visit_value(v);
    }
  } mutator;
  Expr changed = mutator.visit_prim_func(mod.lookup("dot_rows"));
  const ExternCallNode* after = first_extern_call(changed.as<PrimFuncNode>()->body);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->args[0].indices[1].to_string(), "1");
  EXPECT_EQ(after->args[3].indices[1].to_string(), "j");
  // Nothing to change: the same node.
  struct Identity : StmtMutator {} identity;
  EXPECT_TRUE(identity.visit_prim_func(mod.lookup("dot_rows")).same_as(mod.lookup("dot_rows")));
}

// ---- The registry ----------------------------------------------------------

void scale_f32(const float* x, float a, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i];
}

TEST(MicroKernelRegistry, BuiltinsAreRegisteredWithTheirSignatures) {
  EXPECT_THAT(micro_kernel_names(), IsSupersetOf({"relax_axpy_f32", "relax_dot_f32"}));
  const MicroKernel* dot = find_micro_kernel("relax_dot_f32");
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(micro_kernel_signature(*dot),
            "relax_dot_f32(x: const float32*[n], y: const float32*[n], n: int64, out: float32*[1])");
  EXPECT_THAT(dot->source, HasSubstr("static inline void relax_dot_f32("));
  EXPECT_EQ(find_micro_kernel("relax_axpy_f32")->source, dot->source);  // one shared text
  EXPECT_EQ(find_micro_kernel("no_such_kernel"), nullptr);
}

TEST(MicroKernelRegistry, MakeMicroKernelReadsTheSignatureAndTheHostCallsTheFunction) {
  MicroKernel k = make_micro_kernel<&scale_f32>("registry_test_scale", "/* source */", {"x[n]", "a", "n", "y[n]"});
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_EQ(micro_kernel_signature(k), "registry_test_scale(x: const float32*[n], a: float32, n: int64, y: float32*[n])");
  float x[3] = {1, 2, 3}, y[3] = {};
  MicroKernelArg args[4];
  args[0].pointer = x;
  args[1].f = 0.5;
  args[2].i = 3;
  args[3].pointer = y;
  k.host(args);
  EXPECT_THAT(y, ElementsAre(0.5f, 1.0f, 1.5f));
}

void count_up(int32_t* counter) noexcept { ++*counter; }

TEST(MicroKernelRegistry, ANoexceptFunctionWithAnUnknownExtentIsAKernelToo) {
  MicroKernel k = make_micro_kernel<&count_up>("registry_test_count_up", "/* source */", {"counter"});
  EXPECT_EQ(micro_kernel_signature(k), "registry_test_count_up(counter: int32*)");
  int32_t counter = 41;
  MicroKernelArg arg;
  arg.pointer = &counter;
  k.host(&arg);
  EXPECT_EQ(counter, 42);
}

TEST(MicroKernelRegistry, BadRegistrationsAreErrorsNamingTheKernel) {
  auto error_of = [](MicroKernel k) { return std::string(register_micro_kernel(std::move(k)).message()); };
  EXPECT_THAT(error_of(make_micro_kernel<&scale_f32>("not an identifier", "s", {"x[n]", "a", "n", "y[n]"})),
              HasSubstr("micro-kernel `not an identifier`: the name is not a C identifier"));
  EXPECT_THAT(error_of(make_micro_kernel<&scale_f32>("relax_dot_f32", "s", {"x[n]", "a", "n", "y[n]"})),
              HasSubstr("micro-kernel `relax_dot_f32` is already registered"));
  EXPECT_THAT(error_of(make_micro_kernel<&scale_f32>("reg_bad_source", "", {"x[n]", "a", "n", "y[n]"})),
              HasSubstr("micro-kernel `reg_bad_source`: no C++ source"));
  EXPECT_THAT(error_of(make_micro_kernel<&scale_f32>("reg_bad_names", "s", {"x[n]", "a", "n"})),
              HasSubstr("micro-kernel `reg_bad_names`: parameter 3 has no name"));
  EXPECT_THAT(error_of(make_micro_kernel<&scale_f32>("reg_bad_extent", "s", {"x[a]", "a", "n", "y[n]"})),
              HasSubstr("parameter 0 (`x`): the extent `a` is neither a count nor an integer scalar parameter"));
  EXPECT_THAT(error_of(make_micro_kernel<&scale_f32>("reg_scalar_extent", "s", {"x[n]", "a[2]", "n", "y[n]"})),
              HasSubstr("parameter 1 (`a`) is a scalar: it has no extent"));
  EXPECT_THAT(error_of(make_micro_kernel<&scale_f32>("reg_twice", "s", {"x[n]", "x", "n", "y[n]"})),
              HasSubstr("parameter 1: a second parameter `x`"));
  for (const char* name : {"not an identifier", "reg_bad_source", "reg_bad_names", "reg_bad_extent",
                           "reg_scalar_extent", "reg_twice"}) {
    EXPECT_EQ(find_micro_kernel(name), nullptr) << name;
  }
}

// ---- Well-formedness -------------------------------------------------------

constexpr const char* kDotParams = "A: Buffer[(n,), float32], B: Buffer[(n,), float32], C: Buffer[(1,), float32]";

TEST(ExternCallWellFormed, AnUnknownKernelIsNamed) {
  EXPECT_THAT(violations_of(kDotParams, "call_extern no_such_dot(&A[0], &B[0], n, &C[0])"),
              ElementsAre("@k: extern call of `no_such_dot`: no micro-kernel of that name is registered"));
}

TEST(ExternCallWellFormed, ArgumentsThatDoNotFitTheSignatureAreNamedByPosition) {
  EXPECT_THAT(violations_of(kDotParams, "call_extern relax_dot_f32(&A[0], &B[0], n)"),
              ElementsAre(HasSubstr("extern call of `relax_dot_f32`: 3 arguments, but relax_dot_f32(x: const "
                                    "float32*[n], y: const float32*[n], n: int64, out: float32*[1]) takes 4")));
  EXPECT_THAT(violations_of(kDotParams, "call_extern relax_dot_f32(&A[0], &B[0], &C[0], &C[0])"),
              ElementsAre("@k: extern call of `relax_dot_f32`: argument 2 (`n`): expected an int64 scalar, "
                          "found the region of `C`"));
  EXPECT_THAT(violations_of(kDotParams, "call_extern relax_dot_f32(&A[0], 1f32, n, &C[0])"),
              ElementsAre("@k: extern call of `relax_dot_f32`: argument 1 (`y`): expected a region of float32 "
                          "elements (&buffer[...]), found `1f32`"));
  EXPECT_THAT(violations_of(kDotParams, "call_extern relax_dot_f32(&A[0], &B[0], 4i32, &C[0])"),
              ElementsAre("@k: extern call of `relax_dot_f32`: argument 2 (`n`): expected an int64 scalar, "
                          "found `4i32` of dtype int32"));
  EXPECT_THAT(violations_of("A: Buffer[(n,), float32], B: Buffer[(n,), float64], C: Buffer[(1,), float32]",
                            "call_extern relax_dot_f32(&A[0], &B[0], n, &C[0])"),
              ElementsAre("@k: extern call of `relax_dot_f32`: argument 1 (`y`): expected a region of float32 "
                          "elements, found `B` of dtype float64"));
}

TEST(ExternCallWellFormed, RegionsProvablyOutsideTheirBufferAreErrors) {
  // Starts past the end.
  EXPECT_THAT(violations_of(kDotParams, "call_extern relax_dot_f32(&A[n], &B[0], 1, &C[0])"),
              ElementsAre(HasSubstr("argument 0 (`x`): the region `&A[...]` starts at index `n` of dim 0, "
                                    "outside [0, n)")));
  // Inside a loop: i + 1 < n + 1 is not enough for `&A[i + 1]`, which reaches n at the last i.
  EXPECT_THAT(violations_of(kDotParams, "for i in range(n) { call_extern relax_dot_f32(&A[i], &B[0], n - i + 1, &C[0]) }"),
              ElementsAre(HasSubstr("argument 0 (`x`): the region `&A[...]` covers n - i + 1 elements from "
                                    "element i, past the end of the buffer's n")));
  // Covers more than is there: n + 1 elements of an n-element buffer.
  EXPECT_THAT(violations_of(kDotParams, "call_extern relax_dot_f32(&A[0], &B[0], n + 1, &C[0])"),
              ElementsAre(HasSubstr("argument 0 (`x`): the region `&A[...]` covers n + 1 elements from element 0, "
                                    "past the end of the buffer's n"),
                          HasSubstr("argument 1 (`y`): the region `&B[...]` covers n + 1 elements")));
  // The output's extent is one element: &C[1] of a (1,) buffer starts outside.
  EXPECT_THAT(violations_of(kDotParams, "call_extern relax_dot_f32(&A[0], &B[0], n, &C[1])"),
              ElementsAre(HasSubstr("argument 3 (`out`): the region `&C[...]` starts at index `1` of dim 0")));
  // Exactly in range, and what cannot be proven either way, are accepted.
  EXPECT_THAT(violations_of(kDotParams, "for i in range(n) { call_extern relax_dot_f32(&A[i], &B[i], n - i, &C[0]) }"),
              IsEmpty());
  EXPECT_THAT(violations_of(kDotParams + std::string(", m: int64"), "call_extern relax_dot_f32(&A[0], &B[0], m, &C[0])"),
              IsEmpty());
}

TEST(ExternCallWellFormed, RegionsOfUndefinedBuffersAndUndefinedVariablesAreReported) {
  // A buffer allocated in another scope, reached through the builder API.
  IRModule mod = parse_or_die(kDotModule);
  const auto* func = mod.lookup("dot_rows").as<PrimFuncNode>();
  Buffer stray("S", DataType::float32(), {SymExpr::int_imm(4, DataType::int64())});
  SymVar free_var("q");
  Stmt body = make_extern_call("relax_dot_f32", {extern_region(stray, {SymExpr::int_imm(0, DataType::int64())}),
                                                 extern_region(func->params[1].buffer.value(),
                                                               {SymExpr::int_imm(0, DataType::int64()), free_var}),
                                                 extern_scalar(SymExpr::int_imm(4, DataType::int64())),
                                                 extern_region(func->params[2].buffer.value(),
                                                               {SymExpr::int_imm(0, DataType::int64()),
                                                                SymExpr::int_imm(0, DataType::int64())})});
  IRModule bad;
  bad.add("k", make_prim_func(func->params, body));
  EXPECT_THAT(well_formed_violations(bad),
              IsSupersetOf({"@k: the region of undefined buffer `S`", "@k: symbolic variable `q` is not defined"}));
}

}  // namespace
}  // namespace relax
