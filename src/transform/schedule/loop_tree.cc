// Shared machinery of the schedule primitives (loop_tree.h).
//
// Loop names. Users read loop names off the printed kernel, where the printer
// makes every name unique within the kernel (a second `i` prints as `i_1`).
// Rather than restate the printer's naming rules here (and drift from them),
// the printed text is the source of the names: the loops are printed in
// pre-order, so the n-th `for NAME` line names the n-th loop of a pre-order
// walk. Should the two counts ever differ, the variables' own names are used.
// Loops that print alike (sibling loops sharing one variable, as the text
// parser makes them) are told apart by their occurrence: `j`, `j#2`, `j#3`.
#include "transform/schedule/loop_tree.h"

#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/ir/printer.h"
#include "relax/ir/visitor.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

class LoopCollector : public StmtVisitor {
 public:
  void visit_for(const Stmt& s, const ForNode& node) override {
    loops.push_back({s, &node, node.loop_var.name()});
    StmtVisitor::visit_for(s, node);
  }
  void visit_value(const SymExpr&) override {}
  std::vector<LoopRef> loops;
};

/// The names after `for ` at the start of each printed line, in order.
std::vector<std::string> printed_loop_names(const Expr& func) {
  std::vector<std::string> names;
  std::istringstream lines(to_text(func));
  std::string line;
  while (std::getline(lines, line)) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, 4, "for ") != 0) continue;
    const size_t name_start = start + 4;
    const size_t name_end = line.find_first_of(": ", name_start);
    if (name_end == std::string::npos) continue;
    names.push_back(line.substr(name_start, name_end - name_start));
  }
  return names;
}

class StmtReplacer : public StmtMutator {
 public:
  StmtReplacer(const StmtNode* target, Stmt replacement) : target_(target), replacement_(std::move(replacement)) {}
  Stmt visit_stmt(const Stmt& s) override {
    if (s.get() == target_) return replacement_;
    return StmtMutator::visit_stmt(s);
  }
  SymExpr visit_value(const SymExpr& value) override { return value; }

 private:
  const StmtNode* target_;
  Stmt replacement_;
};

class Substituter : public StmtMutator {
 public:
  explicit Substituter(const SymVarMap<SymExpr>& map) : map_(map) {}
  SymExpr visit_value(const SymExpr& value) override {
    return value.defined() ? substitute(value, map_) : value;
  }

 private:
  const SymVarMap<SymExpr>& map_;
};

class MentionFinder : public StmtVisitor {
 public:
  explicit MentionFinder(const SymVar& var) : var_(var) {}
  void visit_value(const SymExpr& value) override {
    if (value.defined() && !found && mentions_var(value, var_)) found = true;
  }
  bool found = false;

 private:
  const SymVar& var_;
};

class BlockCollector : public StmtVisitor {
 public:
  void visit_block(const Stmt& s, const BlockNode& node) override {
    blocks.push_back(&node);
    StmtVisitor::visit_block(s, node);
  }
  void visit_value(const SymExpr&) override {}
  std::vector<const BlockNode*> blocks;
};

/// Finds the first store under a loop that is neither inside a block nor into
/// storage allocated under the loop.
class LooseStoreFinder : public StmtVisitor {
 public:
  void visit_block(const Stmt&, const BlockNode&) override {}
  void visit_allocate(const Stmt& s, const AllocateNode& node) override {
    local_.push_back(node.buffer.get());
    StmtVisitor::visit_allocate(s, node);
    local_.pop_back();
  }
  void visit_buffer_store(const Stmt&, const BufferStoreNode& node) override {
    for (const BufferNode* b : local_) {
      if (b == node.buffer.get()) return;
    }
    if (found.empty()) found = node.buffer.name();
  }
  // An extern call's writes are opaque: nothing says two iterations write apart.
  void visit_extern_call(const Stmt&, const ExternCallNode& node) override {
    if (extern_call.empty()) extern_call = node.name;
  }
  void visit_value(const SymExpr&) override {}
  std::string found;
  std::string extern_call;  ///< the first micro-kernel called

 private:
  std::vector<const BufferNode*> local_;
};

}  // namespace

std::string kernel_label(const Expr& func) {
  if (const auto* node = func.as<PrimFuncNode>()) {
    auto it = node->attrs.find("global_symbol");
    if (it != node->attrs.end()) {
      if (const auto* name = std::get_if<std::string>(&it->second)) return "@" + *name;
    }
  }
  return "prim_func";
}

std::vector<LoopRef> all_loops(const Expr& func) {
  const auto* node = func.as<PrimFuncNode>();
  if (node == nullptr) return {};
  LoopCollector collector;
  collector.visit_stmt(node->body);
  std::vector<std::string> names = printed_loop_names(func);
  if (names.size() == collector.loops.size()) {
    for (size_t i = 0; i < names.size(); ++i) collector.loops[i].name = names[i];
  }
  // Loops that share one variable (the text parser gives sibling loops of one
  // name one variable) print alike: the second is `j#2`, the third `j#3`.
  absl::flat_hash_map<std::string, int> seen;
  for (LoopRef& loop : collector.loops) {
    const int count = ++seen[loop.name];
    if (count > 1) loop.name = absl::StrCat(loop.name, "#", count);
  }
  return collector.loops;
}

std::vector<std::string> loop_names(const Expr& func) {
  std::vector<std::string> names;
  for (const LoopRef& loop : all_loops(func)) names.push_back(loop.name);
  return names;
}

absl::StatusOr<LoopRef> find_loop(const Expr& func, std::string_view name) {
  if (func.as<PrimFuncNode>() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("schedule: expected a prim_func, found a ", std::string(expr_kind_name(func.kind()))));
  }
  std::vector<LoopRef> loops = all_loops(func);
  for (const LoopRef& loop : loops) {
    if (loop.name == name) return loop;
  }
  std::vector<std::string> names;
  for (const LoopRef& loop : loops) names.push_back(loop.name);
  return absl::InvalidArgumentError(absl::StrCat(kernel_label(func), ": no loop `", std::string(name), "`; its loops are ",
                                                 names.empty() ? "none" : absl::StrJoin(names, ", ")));
}

Expr replace_stmt(const Expr& func, const StmtNode* target, const Stmt& replacement) {
  StmtReplacer replacer(target, replacement);
  return replacer.visit_prim_func(func);
}

Stmt replace_in(const Stmt& root, const StmtNode* target, const Stmt& replacement) {
  StmtReplacer replacer(target, replacement);
  return replacer.visit_stmt(root);
}

absl::StatusOr<LoopRef> find_loop_var(const Expr& func, const SymVar& var) {
  for (const LoopRef& loop : all_loops(func)) {
    if (loop.node->loop_var.id() == var.id()) return loop;
  }
  return absl::NotFoundError(absl::StrCat(kernel_label(func), ": no loop over `", var.name(), "`"));
}

Stmt substitute_stmt(const Stmt& s, const SymVarMap<SymExpr>& map) {
  Substituter substituter(map);
  return substituter.visit_stmt(s);
}

bool stmt_mentions(const Stmt& s, const SymVar& var) {
  MentionFinder finder(var);
  finder.visit_stmt(s);
  return finder.found;
}

std::vector<const BlockNode*> blocks_under(const Stmt& s) {
  BlockCollector collector;
  collector.visit_stmt(s);
  return collector.blocks;
}

absl::Status loop_error(const Expr& func, std::string_view what, std::string_view name, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(kernel_label(func), ": cannot ", std::string(what), " loop `", std::string(name), "`: ", std::string(why)));
}

absl::Status check_independent_iterations(const Expr& func, const LoopRef& loop, std::string_view what) {
  const SymVar& var = loop.node->loop_var;
  for (const BlockNode* block : blocks_under(loop.node->body)) {
    for (const IterVar& iv : block->iter_vars) {
      if (iv.type == IterType::kReduction && mentions_var(iv.binding, var)) {
        return loop_error(func, what, loop.name,
                          absl::StrCat("block `", block->name, "` binds its reduction variable `", iv.var.name(),
                                       "` to it (iterations of a reduction depend on each other)"));
      }
    }
  }
  LooseStoreFinder loose;
  loose.visit_stmt(loop.node->body);
  if (!loose.found.empty()) {
    return loop_error(func, what, loop.name,
                      absl::StrCat("it stores into `", loose.found,
                                   "` outside a compute block (its iterations may write the same element)"));
  }
  if (!loose.extern_call.empty()) {
    return loop_error(func, what, loop.name,
                      absl::StrCat("it calls the micro-kernel `", loose.extern_call,
                                   "` (an opaque call: its iterations may write the same elements)"));
  }
  return absl::OkStatus();
}

SymExpr int_like(int64_t value, const SymExpr& like) { return SymExpr::int_imm(value, like.dtype()); }

}  // namespace relax::transform::schedule
