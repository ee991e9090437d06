// The operator examples of examples/ops/: every registered operator has a function named after
// it that calls it, and every function there has a `// relax-run:` line (tools/CMakeLists.txt
// turns each line into a relax_run.op.<function> test, so that each example also runs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "relax/ir/module.h"
#include "relax/ir/op.h"
#include "relax/ir/parser.h"
#include "relax/ir/visitor.h"

namespace relax {
namespace {

namespace fs = std::filesystem;

const fs::path kOps = fs::path(RELAX_SOURCE_DIR) / "examples" / "ops";

// Operators without an example, and why.
const std::map<std::string, std::string> kWithoutExample = {
    {"call_dps_library",
     "calls a function the embedding program registers (runtime::register_library_function); "
     "relax-run registers none"},
    {"call_library_dps",
     "the explicit form of call_dps_library: calls a function the embedding program registers; "
     "relax-run registers none"},
};

// The operators a function calls.
class CalledOps : public ExprVisitor {
 public:
  void visit_call(const Expr& e, const CallNode& call) override {
    if (const auto* op = call.callee.as<OpNode>()) ops.insert(op->name);
    ExprVisitor::visit_call(e, call);
  }
  std::set<std::string> ops;
};

struct Example {
  std::string file;
  std::set<std::string> calls;  // the operators its function calls
  bool has_run_line = false;
};

// Every function of examples/ops/*.relax, by name.
std::map<std::string, Example> read_examples() {
  std::map<std::string, Example> examples;
  for (const fs::directory_entry& entry : fs::directory_iterator(kOps)) {
    if (entry.path().extension() != ".relax") continue;
    const std::string file = entry.path().filename().string();
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<IRModule> mod = parse_module(text.str());
    EXPECT_TRUE(mod.ok()) << file << ": " << mod.status();
    if (!mod.ok()) continue;
    for (const auto& [name, fn] : mod->functions()) {
      if (fn.as<FunctionNode>() == nullptr) continue;  // the PrimFuncs the call examples call
      CalledOps called;
      called.visit_expr(fn);
      EXPECT_FALSE(examples.count(name)) << "@" << name << " is in two example files";
      Example& example = examples[name];
      example.file = file;
      example.calls = called.ops;
      const std::string run = "// relax-run: " + file + " --function=" + name + " ";
      example.has_run_line = text.str().find(run) != std::string::npos;
    }
  }
  return examples;
}

TEST(OpExamples, EveryOperatorHasAFunctionThatCallsIt) {
  const std::map<std::string, Example> examples = read_examples();
  ASSERT_FALSE(examples.empty()) << kOps;
  for (const OpInfo* op : all_ops()) {
    if (kWithoutExample.count(op->name)) continue;
    auto it = examples.find(op->name);
    if (it == examples.end()) {
      ADD_FAILURE() << "operator " << op->name << " has no example: add `func @" << op->name
                    << "(...)` calling it to examples/ops/" << op->family << ".relax, with a "
                    << "`// relax-run:` line";
      continue;
    }
    EXPECT_TRUE(it->second.calls.count(op->name))
        << it->second.file << ": @" << op->name << " does not call " << op->name;
  }
}

TEST(OpExamples, EveryExampleHasARunLine) {
  for (const auto& [name, example] : read_examples()) {
    EXPECT_TRUE(example.has_run_line)
        << example.file << ": @" << name << " has no `// relax-run: " << example.file
        << " --function=" << name << " ...` line";
  }
}

TEST(OpExamples, TheExceptionsAreOperators) {
  for (const auto& [name, why] : kWithoutExample) {
    EXPECT_NE(find_op(name), nullptr) << name << " (" << why << ")";
  }
}

}  // namespace
}  // namespace relax
