// The built-in pass instruments (relax/transform/instrument.h).
#include "relax/transform/instrument.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "relax/ir/normalize.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "relax/ir/well_formed.h"

namespace relax::transform {

void PassInstrument::before_pass(const Pass&, const IRModule&, const PassContext&) {}
absl::Status PassInstrument::after_pass(const Pass&, const IRModule&, const IRModule&, const PassContext&) {
  return absl::OkStatus();
}
void PassInstrument::skipped_pass(const Pass&, const PassContext&) {}

// ---------------------------------------------------------------------------
// TimingInstrument.

void TimingInstrument::before_pass(const Pass& pass, const IRModule&, const PassContext&) {
  size_t parent = open_.empty() ? 0 : open_.back().row + 1;
  size_t row = rows_.size();
  auto key = std::make_pair(parent, &pass);
  auto it = std::find_if(index_.begin(), index_.end(), [&](const auto& e) { return e.first == key; });
  if (it != index_.end()) {
    row = it->second;
  } else {
    // A row goes after its parent's existing descendants, so the table reads in pipeline order.
    rows_.push_back({pass.name(), static_cast<int>(open_.size()), 0, 0});
    index_.push_back({key, row});
  }
  open_.push_back({&pass, row, std::chrono::steady_clock::now()});
}

absl::Status TimingInstrument::after_pass(const Pass& pass, const IRModule&, const IRModule&,
                                          const PassContext&) {
  if (open_.empty() || open_.back().pass != &pass) return absl::OkStatus();
  Open o = open_.back();
  open_.pop_back();
  Row& row = rows_[o.row];
  row.runs += 1;
  row.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - o.start).count();
  return absl::OkStatus();
}

std::string TimingInstrument::report() const {
  double total = 0;
  for (const Row& r : rows_) {
    if (r.depth == 0) total += r.seconds;
  }
  std::string out = "===- Pass execution timing report -===\n";
  absl::StrAppendFormat(&out, "  Total: %.4f s\n\n", total);
  absl::StrAppend(&out, "  Wall time (s)      %   Runs  Name\n");
  for (const Row& r : rows_) {
    double pct = total > 0 ? 100.0 * r.seconds / total : 0.0;
    absl::StrAppendFormat(&out, "  %13.4f  %5.1f%%  %5d  %s%s\n", r.seconds, pct, r.runs,
                          std::string(2 * static_cast<size_t>(r.depth), ' '), r.name);
  }
  absl::StrAppendFormat(&out, "  %13.4f  100.0%%         Total\n", total);
  return out;
}

// ---------------------------------------------------------------------------
// PrintIRInstrument.

void PrintIRInstrument::before_pass(const Pass& pass, const IRModule& mod, const PassContext&) {
  if (pass.children() != nullptr) return;
  if (options_.before_all || options_.before.contains(pass.name())) {
    absl::Status s = print(pass, mod, "before");
    if (!s.ok() && folder_error_.ok()) folder_error_ = s;
  }
}

absl::Status PrintIRInstrument::after_pass(const Pass& pass, const IRModule&, const IRModule& after,
                                           const PassContext&) {
  if (!folder_error_.ok()) return std::exchange(folder_error_, absl::OkStatus());
  if (pass.children() != nullptr) return absl::OkStatus();
  if (options_.after_all || options_.after.contains(pass.name())) return print(pass, after, "after");
  return absl::OkStatus();
}

absl::Status PrintIRInstrument::print(const Pass& pass, const IRModule& mod, const char* when) {
  ++printed_;
  std::string text = to_text(mod);
  if (options_.folder.empty()) {
    std::ostream& out = options_.out != nullptr ? *options_.out : std::cerr;
    out << "// ----- IR " << when << " pass " << pass.name() << " -----\n" << text;
    if (!text.empty() && text.back() != '\n') out << '\n';
    return absl::OkStatus();
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.folder, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create the folder ", options_.folder, ": ", ec.message()));
  }
  std::string path = absl::StrFormat("%s/%02d-%s-%s.relax", options_.folder, printed_, pass.name(), when);
  std::ofstream file(path);
  file << text;
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// VerifyInstrument.

absl::Status VerifyInstrument::after_pass(const Pass& pass, const IRModule& before,
                                          const IRModule& after, const PassContext&) {
  if (pass.children() != nullptr) return absl::OkStatus();
  if (absl::Status s = well_formed(after); !s.ok()) {
    return absl::InternalError(absl::StrCat("the module is not well formed after the pass:\n", s.message()));
  }
  // An input that came with coarser annotations than deduction gives (JSON
  // takes them as written) is not this pass's doing.
  if (absl::Status s = check_annotations_current(after); !s.ok() && check_annotations_current(before).ok()) {
    return absl::InternalError(absl::StrCat("the pass left a stale annotation: ", s.message()));
  }
  return absl::OkStatus();
}

namespace {

// Re-deduces each call, tuple and tuple-get-item and compares.
class AnnotationChecker : public ExprVisitor {
 public:
  explicit AnnotationChecker(const IRModule& mod) : ctx_{analyzer_, &mod} {}

  void set_function(const std::string& name) { function_ = name; }
  const std::string& error() const { return error_; }

  void visit_binding(const Binding& binding) override {
    binding_ = binding.var.name_hint();
    ExprVisitor::visit_binding(binding);
  }
  void visit_call(const Expr& e, const CallNode& node) override {
    ExprVisitor::visit_call(e, node);
    check(e);
  }
  void visit_tuple(const Expr& e, const TupleNode& node) override {
    ExprVisitor::visit_tuple(e, node);
    check(e);
  }
  void visit_tuple_get_item(const Expr& e, const TupleGetItemNode& node) override {
    ExprVisitor::visit_tuple_get_item(e, node);
    check(e);
  }

 private:
  void check(const Expr& e) {
    if (!error_.empty()) return;
    absl::StatusOr<StructInfo> deduced = deduce_struct_info(e, ctx_);
    if (!deduced.ok()) return fail(std::string(deduced.status().message()));
    if (!structural_equal(*deduced, e.struct_info())) {
      fail(absl::StrCat("annotated ", e.struct_info().to_string(), ", deduction gives ", deduced->to_string()));
    }
  }
  void fail(const std::string& message) {
    if (!error_.empty()) return;
    error_ = absl::StrCat("@", function_, ": ", binding_.empty() ? "" : absl::StrCat("binding ", binding_, ": "),
                          message);
  }

  Analyzer analyzer_;
  DeduceContext ctx_;
  std::string function_;
  std::string binding_;
  std::string error_;
};

}  // namespace

absl::Status check_annotations_current(const IRModule& mod) {
  AnnotationChecker checker(mod);
  for (const auto& [name, func] : mod.functions()) {
    if (func.as<FunctionNode>() == nullptr) continue;
    checker.set_function(name);
    checker.visit_expr(func);
    if (!checker.error().empty()) return absl::InvalidArgumentError(checker.error());
  }
  return absl::OkStatus();
}

std::string statistics_report(const PassContext& ctx) {
  std::string out;
  for (const auto& [pass, counters] : ctx.statistics()) {
    for (const auto& [name, value] : counters) absl::StrAppendFormat(&out, "%-40s %lld\n", absl::StrCat(pass, ".", name), static_cast<long long>(value));
  }
  return out;
}

}  // namespace relax::transform
