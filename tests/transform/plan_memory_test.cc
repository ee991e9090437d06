// plan-memory beyond the before/after files of tests/transform/passes/plan-memory: what it
// leaves alone, the IR-level checker (check_memory_plan) on good and bad plans, reading a
// plan back, and a property test over thousands of random graph functions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../test_env.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/transform/pass.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"
#include "relax/transform/plan_memory.h"

namespace relax::transform {
namespace {

using ::testing::HasSubstr;
using memory::check_memory_plan;
using memory::function_sym_values;
using memory::read_memory_plan;

IRModule parse_plan_module(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status() << "\n" << text;
  return mod.ok() ? *mod : IRModule();
}

absl::StatusOr<IRModule> run_plan(const IRModule& mod) {
  PassManager pm;
  pm.add(create_plan_memory_pass());
  return pm.run(mod);
}

absl::StatusOr<IRModule> lower_and_plan(const IRModule& mod) {
  absl::StatusOr<IRModule> lowered = lower_alloc(mod);
  if (!lowered.ok()) return lowered.status();
  return run_plan(*lowered);
}

const char* const kKernels = R"(
  prim_func @u(X: Buffer[(a, b), float32], Y: Buffer[(c, d), float32]) attrs {global_symbol = "u"} {
    for i in range(c) {
      for j in range(d) {
        Y[i, j] = 1f32
      }
    }
  }
  prim_func @b2(X: Buffer[(a, b), float32], W: Buffer[(e, f), float32], Y: Buffer[(c, d), float32]) attrs {global_symbol = "b2"} {
    for i in range(c) {
      for j in range(d) {
        Y[i, j] = 2f32
      }
    }
  }
  prim_func @ip(X: Buffer[(a, b), float32]) attrs {global_symbol = "ip"} {
    for i in range(a) {
      for j in range(b) {
        X[i, j] = X[i, j] * 2f32
      }
    }
  }
)";

std::string module_text(const std::string& main) { return "module {\n" + main + kKernels + "}\n"; }

const char* const kChain = R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] upper_bounds {n: 1024} {
    a: Tensor[(n, 4), float32] = call_tir(@u, (x,), sinfo=Tensor[(n, 4), float32])
    b: Tensor[(n, 4), float32] = call_tir(@u, (a,), sinfo=Tensor[(n, 4), float32])
    c: Tensor[(n, 4), float32] = call_tir(@u, (b,), sinfo=Tensor[(n, 4), float32])
    d: Tensor[(n, 4), float32] = call_tir(@u, (c,), sinfo=Tensor[(n, 4), float32])
    return d
  }
)";

TEST(PlanMemoryTest, FunctionWithoutIntermediatesStaysTheSameNode) {
  // Only the output is allocated: nothing to plan.
  IRModule mod = parse_plan_module(module_text(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    y: Tensor[(n, 4), float32] = call_tir(@u, (x,), sinfo=Tensor[(n, 4), float32])
    return y
  }
)"));
  absl::StatusOr<IRModule> lowered = lower_alloc(mod);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<IRModule> planned = run_plan(*lowered);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_TRUE(planned->lookup("main").same_as(lowered->lookup("main")));
}

TEST(PlanMemoryTest, SecondRunChangesNothing) {
  absl::StatusOr<IRModule> once = lower_and_plan(parse_plan_module(module_text(kChain)));
  ASSERT_TRUE(once.ok()) << once.status();
  absl::StatusOr<IRModule> twice = run_plan(*once);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_TRUE(twice->lookup("main").same_as(once->lookup("main"))) << to_text(*twice);
}

TEST(PlanMemoryTest, BranchStoragesAreLeftAloneAndTheirUsesExtendLifetimes) {
  // `a` is read inside the branch: it lives across the whole If binding, so `b` (born before
  // the If) cannot share its block; the storage allocated inside the branch stays its own.
  IRModule mod = parse_plan_module(module_text(R"(
  func @main(x: Tensor[(n, 4), float32], c: Prim[bool]) -> Tensor[(n, 4), float32] upper_bounds {n: 16} {
    a: Tensor[(n, 4), float32] = call_tir(@u, (x,), sinfo=Tensor[(n, 4), float32])
    b: Tensor[(n, 4), float32] = call_tir(@u, (x,), sinfo=Tensor[(n, 4), float32])
    r: Tensor[(n, 4), float32] = if c {
      t: Tensor[(n, 4), float32] = call_tir(@b2, (a, b), sinfo=Tensor[(n, 4), float32])
      t
    } else {
      x
    }
    return r
  }
)"));
  absl::StatusOr<IRModule> planned = lower_and_plan(mod);
  ASSERT_TRUE(planned.ok()) << planned.status();
  const std::string text = to_text(*planned);
  EXPECT_THAT(text, HasSubstr("arena: Object = alloc_storage(prim(512))"));  // a and b: 2 * 16 * 16
  EXPECT_THAT(text, HasSubstr("      x\n    }\n    _kill_a: Tuple[()] = kill_tensor(a)"));
  EXPECT_THAT(text, HasSubstr("t_storage: Object = alloc_storage(prim(n * 16))"));
  for (int64_t n : {0, 1, 7, 16}) {
    absl::StatusOr<SymVarMap<int64_t>> values = function_sym_values(*planned, "main", {{"n", n}});
    ASSERT_TRUE(values.ok()) << values.status();
    EXPECT_TRUE(check_memory_plan(planned->lookup("main"), *values).ok());
  }
}

TEST(PlanMemoryTest, CheckerAcceptsPlansAndReadsThemBack) {
  absl::StatusOr<IRModule> planned = lower_and_plan(parse_plan_module(module_text(kChain)));
  ASSERT_TRUE(planned.ok()) << planned.status();
  for (int64_t n : {0, 1, 100, 1024}) {
    absl::StatusOr<SymVarMap<int64_t>> values = function_sym_values(*planned, "main", {{"n", n}});
    ASSERT_TRUE(values.ok()) << values.status();
    EXPECT_TRUE(check_memory_plan(planned->lookup("main"), *values).ok()) << n;
  }
  absl::StatusOr<memory::FunctionMemoryPlan> read = read_memory_plan(*planned, "main");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->storage, "arena");
  ASSERT_EQ(read->tensors.size(), 3u);  // a, b, c; d is returned
  EXPECT_EQ(read->plan.blocks.size(), 2u);  // a and c at offset 0, b after them
  EXPECT_EQ(read->plan.arena_size.as_const(), std::optional<int64_t>(32768));
  // The plan read back passes the planner's own checker and draws.
  absl::StatusOr<SymVarMap<int64_t>> at_bound = function_sym_values(*planned, "main", {});
  ASSERT_TRUE(at_bound.ok()) << at_bound.status();
  EXPECT_TRUE(memory::check_plan(read->plan, read->tensors, *at_bound).ok());
  absl::StatusOr<std::string> svg = memory::plan_to_svg(read->plan, read->tensors, *at_bound, "main");
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_THAT(*svg, HasSubstr("<svg"));
}

// A lowered function with a hand-made arena, its second tensor at `b_offset`.
std::string hand_plan(const std::string& b_offset, const std::string& arena_size, bool kill_early) {
  return module_text(absl::StrCat(R"(
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    arena: Object = alloc_storage(prim()", arena_size, R"())
    a: Tensor[(n, 4), float32] = alloc_tensor(arena, prim(0), shape(n, 4), dtype=float32)
    _a: Tuple[()] = call_tir_dps(@u, (x,), (a,))
    b: Tensor[(n, 4), float32] = alloc_tensor(arena, prim()", b_offset, R"(), shape(n, 4), dtype=float32)
    _b: Tuple[()] = call_tir_dps(@b2, (a, x), (b,)))",
                                  kill_early ? "\n    _k: Tuple[()] = kill_storage(arena)" : "", R"(
    d_storage: Object = alloc_storage(prim(n * 16))
    d: Tensor[(n, 4), float32] = alloc_tensor(d_storage, prim(0), shape(n, 4), dtype=float32)
    _d: Tuple[()] = call_tir_dps(@u, (b,), (d,))
    return d
  }
)"));
}

TEST(PlanMemoryTest, CheckerNamesOverlappingLiveTensors) {
  IRModule mod = parse_plan_module(hand_plan("n * 8", "n * 32", false));
  absl::StatusOr<SymVarMap<int64_t>> values = function_sym_values(mod, "main", {{"n", 4}});
  ASSERT_TRUE(values.ok()) << values.status();
  absl::Status s = check_memory_plan(mod.lookup("main"), *values);
  EXPECT_THAT(s.message(), HasSubstr("storage `arena`: tensors `a` bytes [0, 64) live [1, 4] and `b` bytes "
                                     "[32, 96) live [3, 7] are live at once and overlap"));
  // The same offsets with a zero-sized n overlap nowhere.
  values = function_sym_values(mod, "main", {{"n", 0}});
  EXPECT_TRUE(check_memory_plan(mod.lookup("main"), *values).ok());
  // Disjoint offsets pass.
  IRModule good = parse_plan_module(hand_plan("n * 16", "n * 32", false));
  EXPECT_TRUE(check_memory_plan(good.lookup("main"), *function_sym_values(good, "main", {{"n", 4}})).ok());
}

TEST(PlanMemoryTest, CheckerNamesTensorsOutsideTheirStorage) {
  IRModule mod = parse_plan_module(hand_plan("n * 16", "n * 31", false));
  absl::Status s = check_memory_plan(mod.lookup("main"), *function_sym_values(mod, "main", {{"n", 2}}));
  EXPECT_THAT(s.message(),
              HasSubstr("tensor `b` in storage `arena`: bytes [32, 64) do not fit the storage's 62 bytes"));
}

TEST(PlanMemoryTest, CheckerNamesUsesAfterTheStorageIsKilled) {
  IRModule mod = parse_plan_module(hand_plan("n * 16", "n * 32", true));
  absl::Status s = check_memory_plan(mod.lookup("main"), *function_sym_values(mod, "main", {{"n", 2}}));
  EXPECT_THAT(s.message(), HasSubstr("tensor `b` in storage `arena` (live [3, 8]) is used after binding 5 "
                                     "killed its storage"));
}

TEST(PlanMemoryTest, SymbolValuesNeedABoundOrAValue) {
  IRModule mod = parse_plan_module(hand_plan("n * 16", "n * 32", false));
  EXPECT_THAT(function_sym_values(mod, "main", {}).status().message(),
              HasSubstr("@main: symbolic variable `n` has no declared upper bound; give its value"));
  EXPECT_THAT(function_sym_values(mod, "main", {{"n", 1}, {"q", 1}}).status().message(),
              HasSubstr("@main has no symbolic variable `q`"));
}

// ---------------------------------------------------------------------------
// The property test: random graph functions of call_tir calls over 1-3 symbolic variables,
// lowered and planned, checked by check_memory_plan at random values.

struct RandomVar {
  std::string name;
  int64_t bound;  // 0: not declared
};

class GraphGenerator {
 public:
  explicit GraphGenerator(uint32_t seed) : rng_(seed) {}

  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(int percent) { return pick(1, 100) <= percent; }

  std::vector<RandomVar> variables(int mode) {  // 0 bounded, 1 unbounded, 2 mixed
    const char* names[] = {"n", "m", "k"};
    std::vector<RandomVar> vars;
    const int64_t count = pick(1, 3);
    for (int64_t i = 0; i < count; ++i) {
      const bool bounded = mode == 0 || (mode == 2 && (i == 0 || chance(50)));
      vars.push_back(RandomVar{names[i], bounded ? pick(1, 300) : 0});
    }
    if (mode == 2 && vars.size() > 1) vars.back().bound = 0;  // mixed has both kinds
    return vars;
  }

  std::string dim(const std::vector<RandomVar>& vars) {
    const std::string v = vars[static_cast<size_t>(pick(0, static_cast<int64_t>(vars.size()) - 1))].name;
    switch (pick(0, 4)) {
      case 0: return std::to_string(pick(1, 64));
      case 1: return v;
      case 2: return absl::StrCat(v, " * ", pick(2, 16));
      case 3: return absl::StrCat(v, " + ", pick(1, 8));
      default: return v;
    }
  }

  // main's text: parameters x0.. (one per variable), a random DAG of calls, views, in-place
  // calls and tuples, returning one or two of its values.
  std::string function(const std::vector<RandomVar>& vars) {
    struct Value {
      std::string name;
      std::string d0, d1;
    };
    std::vector<Value> values;
    std::vector<std::string> params;
    std::vector<std::string> bounds;
    for (size_t i = 0; i < vars.size(); ++i) {
      Value x{absl::StrCat("x", i), vars[i].name, std::to_string(pick(1, 8))};
      params.push_back(absl::StrCat(x.name, ": Tensor[(", x.d0, ", ", x.d1, "), float32]"));
      values.push_back(x);
      if (vars[i].bound > 0) bounds.push_back(absl::StrCat(vars[i].name, ": ", vars[i].bound));
    }
    auto tensor = [](const std::string& d0, const std::string& d1) {
      return absl::StrCat("Tensor[(", d0, ", ", d1, "), float32]");
    };
    auto any = [&]() -> const Value& { return values[static_cast<size_t>(pick(0, static_cast<int64_t>(values.size()) - 1))]; };
    auto recent = [&]() -> const Value& {
      const int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(values.size()) - 4);
      return values[static_cast<size_t>(pick(lo, static_cast<int64_t>(values.size()) - 1))];
    };
    std::string body;
    const int64_t nodes = pick(2, 16);
    for (int64_t i = 0; i < nodes; ++i) {
      const std::string name = absl::StrCat("t", i);
      const int kind = static_cast<int>(pick(0, 9));
      Value out{name, dim(vars), dim(vars)};
      if (kind <= 3) {  // elementwise-like: one input, a random output shape
        body += absl::StrCat("    ", name, ": ", tensor(out.d0, out.d1), " = call_tir(@u, (", recent().name,
                             ",), sinfo=", tensor(out.d0, out.d1), ")\n");
      } else if (kind <= 6) {  // matmul-like: (a0, a1) x (b0, b1) -> (a0, b1)
        const Value& a = recent();
        const Value& b = any();
        out.d0 = a.d0;
        out.d1 = b.d1;
        body += absl::StrCat("    ", name, ": ", tensor(out.d0, out.d1), " = call_tir(@b2, (", a.name, ", ",
                             b.name, "), sinfo=", tensor(out.d0, out.d1), ")\n");
      } else if (kind == 7) {  // a view: the dims swapped
        const Value& a = recent();
        out.d0 = a.d1;
        out.d1 = a.d0;
        body += absl::StrCat("    ", name, ": ", tensor(out.d0, out.d1), " = view(", a.name, ", shape(", out.d0,
                             ", ", out.d1, "))\n");
      } else if (kind == 8) {  // in place: the result is the argument
        const Value& a = recent();
        if (a.name[0] == 'x') continue;  // never write a parameter
        out.d0 = a.d0;
        out.d1 = a.d1;
        body += absl::StrCat("    ", name, ": ", tensor(out.d0, out.d1), " = call_tir_inplace(@ip, (", a.name,
                             ",), inplace_indices=[0], sinfo=", tensor(out.d0, out.d1), ")\n");
      } else {  // a tuple of two values and an item of it
        const Value& a = recent();
        const Value& b = any();
        body += absl::StrCat("    ", name, "_tup: Tuple[(", tensor(a.d0, a.d1), ", ", tensor(b.d0, b.d1),
                             ")] = (", a.name, ", ", b.name, ")\n");
        out.d0 = b.d0;
        out.d1 = b.d1;
        body += absl::StrCat("    ", name, ": ", tensor(out.d0, out.d1), " = ", name, "_tup[1]\n");
      }
      values.push_back(out);
    }
    const Value& last = values.back();
    std::string ret = tensor(last.d0, last.d1);
    std::string result = last.name;
    if (chance(40)) {
      const Value& other = any();
      ret = absl::StrCat("Tuple[(", ret, ", ", tensor(other.d0, other.d1), ")]");
      body += absl::StrCat("    r: ", ret, " = (", last.name, ", ", other.name, ")\n");
      result = "r";
    }
    std::string head = absl::StrCat("  func @main(", absl::StrJoin(params, ", "), ") -> ", ret);
    if (!bounds.empty()) head += absl::StrCat(" upper_bounds {", absl::StrJoin(bounds, ", "), "}");
    return absl::StrCat(head, " {\n", body, "    return ", result, "\n  }\n");
  }

 private:
  std::mt19937 rng_;
};

struct ReuseFigure {
  double tensor_bytes = 0;
  double arena_bytes = 0;
  double peak_bytes = 0;  // the most bytes of planned tensors live at once: no plan does better
  int64_t functions = 0;
};

TEST(PlanMemoryPropertyTest, RandomGraphsPassTheChecker) {
  // RELAX_FUZZ_TRIALS functions (3,000 by default), a third each bounded, unbounded and mixed;
  // each checked at its bounds (unbounded variables at a random value) and at three random
  // points (unbounded variables up to 4,096). RELAX_PLAN_DUMP=1 prints every planned module.
  const int64_t trials = testing_util::fuzz_trials(3000);
  GraphGenerator gen(static_cast<uint32_t>(testing_util::fuzz_seed(20261314)));
  const bool dump = std::getenv("RELAX_PLAN_DUMP") != nullptr;
  ReuseFigure figures[3];
  int64_t checks = 0;
  for (int64_t trial = 0; trial < trials; ++trial) {
    const int mode = static_cast<int>(trial % 3);
    const std::vector<RandomVar> vars = gen.variables(mode);
    const std::string text = module_text(gen.function(vars));
    absl::StatusOr<IRModule> mod = parse_module(text);
    ASSERT_TRUE(mod.ok()) << mod.status() << "\n" << text;
    absl::StatusOr<IRModule> planned = lower_and_plan(*mod);
    ASSERT_TRUE(planned.ok()) << planned.status() << "\n" << text;
    if (dump) std::cout << to_text(*planned) << "\n";
    const Expr fn = planned->lookup("main");
    for (int point = 0; point < 4; ++point) {
      std::map<std::string, int64_t> given;
      for (const RandomVar& v : vars) {
        if (point == 0 && v.bound > 0) continue;  // at the declared bound
        given[v.name] = v.bound > 0 ? gen.pick(0, v.bound) : gen.pick(0, 4096);
      }
      absl::StatusOr<SymVarMap<int64_t>> values = function_sym_values(*planned, "main", given);
      ASSERT_TRUE(values.ok()) << values.status();
      absl::Status s = check_memory_plan(fn, *values);
      ASSERT_TRUE(s.ok()) << s << "\n" << text << "\nplanned:\n" << to_text(*planned);
      ++checks;
      absl::StatusOr<memory::FunctionMemoryPlan> read = read_memory_plan(*planned, "main");
      if (point != 0 || !read.ok() || read->tensors.size() < 2) continue;
      // The reuse figure at the bounds (unbounded variables random): bytes of the planned tensors / arena bytes.
      double sum = 0;
      std::map<int64_t, double> live_change;
      for (const memory::PlannedTensor& t : read->tensors) {
        const double bytes = static_cast<double>(*evaluate(t.size_bytes, *values));
        sum += bytes;
        live_change[t.first_use] += bytes;
        live_change[t.last_use + 1] -= bytes;
      }
      double live = 0;
      double peak = 0;
      for (const auto& [at, change] : live_change) peak = std::max(peak, live += change);
      const int64_t arena = *evaluate(read->plan.arena_size, *values);
      if (arena == 0) continue;
      figures[mode].tensor_bytes += sum;
      figures[mode].arena_bytes += static_cast<double>(arena);
      figures[mode].peak_bytes += peak;
      ++figures[mode].functions;
    }
    absl::StatusOr<IRModule> again = run_plan(*planned);
    ASSERT_TRUE(again.ok()) << again.status();
    ASSERT_TRUE(again->lookup("main").same_as(fn)) << "a second run changed\n" << to_text(*planned);
  }
  const char* names[] = {"bounded", "unbounded", "mixed"};
  for (int mode = 0; mode < 3; ++mode) {
    std::cout << "plan-memory reuse, " << names[mode] << ": sum of tensor bytes / arena bytes = "
              << (figures[mode].arena_bytes > 0 ? figures[mode].tensor_bytes / figures[mode].arena_bytes : 0)
              << " (peak live bytes / arena bytes = "
              << (figures[mode].arena_bytes > 0 ? figures[mode].peak_bytes / figures[mode].arena_bytes : 0) << ")"
              << " over " << figures[mode].functions << " functions with >= 2 planned tensors\n";
  }
  EXPECT_EQ(checks, trials * 4);
}

}  // namespace
}  // namespace relax::transform
