// Symbolic slots, expression programs and match patterns of one VMFunction.
//
// A graph function's symbolic variables live in int64 slots of its call
// frame. A slot is filled where the IR defines the variable -- a parameter
// annotation or a match_cast pattern -- by the VM matching the value against a
// compiled pattern, and read by postfix programs wherever a shape value is
// needed (allocation sizes, shape values, scalar kernel arguments).
//
// Patterns follow the IR's definition rule for symbolic variables (see
// defined_sym_vars in relax/ir/struct_info.h): a bare-variable dim defines its
// variable, then dims linear in one undefined variable (`2 * n + 1`) solve
// for it, and every other dim is a check. The VM runs the three kinds in that
// order over the whole group, so a check may use variables bound by a later
// argument.
#include "codegen/vm/vm_frame_layout.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "relax/shape/solve.h"

namespace relax::codegen_detail {
namespace {

using runtime::DimPattern;
using runtime::DimRule;
using runtime::PatternKind;
using runtime::SymInstr;
using runtime::SymOp;
using runtime::SymProgram;
using runtime::ValuePattern;

// A dim of a pattern under construction, with the IR expression it came from.
struct DimRef {
  DimPattern* pattern;
  SymExpr expr;
  bool decided = false;
};

static_assert(kUnknownNDim == -1, "ValuePattern::ndim uses -1 for any rank");

// The pattern of `sinfo` with every dim kAny (decided later), or an error.
absl::StatusOr<ValuePattern> skeleton(const StructInfo& sinfo, const std::string& what) {
  ValuePattern p;
  auto dims_of = [&](const std::vector<SymExpr>& values) {
    for (const SymExpr& v : values) {
      DimPattern d;
      d.text = v.to_string();
      p.dims.push_back(std::move(d));
    }
  };
  switch (sinfo.kind()) {
    case StructInfoKind::kObject:
      p.kind = PatternKind::kObject;
      return p;
    case StructInfoKind::kPrim: {
      const auto* prim = sinfo.as<PrimStructInfoNode>();
      p.kind = PatternKind::kPrim;
      p.dtype = prim->dtype;
      // Only integer values live in slots; a float value is checked by kind and dtype.
      if (prim->value.defined() && (prim->dtype.is_int() || prim->dtype.is_bool())) {
        dims_of({prim->value});
      }
      return p;
    }
    case StructInfoKind::kShape: {
      const auto* shape = sinfo.as<ShapeStructInfoNode>();
      p.kind = PatternKind::kShape;
      p.ndim = shape->ndim;  // kUnknownNDim is -1, "any rank", as in the pattern
      if (shape->values) dims_of(*shape->values);
      return p;
    }
    case StructInfoKind::kTensor: {
      const auto* tensor = sinfo.as<TensorStructInfoNode>();
      p.kind = PatternKind::kTensor;
      p.dtype = tensor->dtype;
      p.ndim = tensor->ndim;
      if (tensor->shape) dims_of(*tensor->shape);
      return p;
    }
    case StructInfoKind::kTuple: {
      p.kind = PatternKind::kTuple;
      for (const StructInfo& field : sinfo.as<TupleStructInfoNode>()->fields) {
        absl::StatusOr<ValuePattern> f = skeleton(field, what);
        if (!f.ok()) return f.status();
        p.fields.push_back(*std::move(f));
      }
      return p;
    }
    case StructInfoKind::kFunc:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat(what, ": function-valued arguments (", sinfo.to_string(),
                   ") are not supported by the VM yet"));
}

// Pairs every dim pattern of `p` with its expression in `sinfo` (same walk as skeleton).
void collect_dims(const StructInfo& sinfo, ValuePattern& p, std::vector<DimRef>& out) {
  std::vector<SymExpr> values;
  switch (sinfo.kind()) {
    case StructInfoKind::kPrim:
      if (!p.dims.empty()) values = {sinfo.as<PrimStructInfoNode>()->value};
      break;
    case StructInfoKind::kShape:
      if (sinfo.as<ShapeStructInfoNode>()->values) values = *sinfo.as<ShapeStructInfoNode>()->values;
      break;
    case StructInfoKind::kTensor:
      if (sinfo.as<TensorStructInfoNode>()->shape) values = *sinfo.as<TensorStructInfoNode>()->shape;
      break;
    case StructInfoKind::kTuple: {
      const auto& fields = sinfo.as<TupleStructInfoNode>()->fields;
      for (size_t i = 0; i < fields.size(); ++i) collect_dims(fields[i], p.fields[i], out);
      return;
    }
    case StructInfoKind::kObject:
    case StructInfoKind::kFunc:
      return;
  }
  for (size_t i = 0; i < values.size(); ++i) out.push_back(DimRef{&p.dims[i], values[i]});
}

/// How the VM's postfix programs compute a SymKind: its operands (in order, or the two
/// swapped: `a > b` is `b < a`), then one instruction. One row per SymKind, in enumerator
/// order, checked at compile time; kinds without an instruction are not shape values
/// (floats, loads, vectors) or are written by emit() itself (constants, variables, casts).
struct VmSymKind {
  SymKind kind;
  bool computed = false;
  SymOp op = SymOp::kConst;
  bool swapped = false;
};
using K = SymKind;
constexpr VmSymKind kVmSymKinds[] = {
    {K::kIntImm},
    {K::kVar},
    {K::kAdd, true, SymOp::kAdd},
    {K::kSub, true, SymOp::kSub},
    {K::kMul, true, SymOp::kMul},
    {K::kFloorDiv, true, SymOp::kFloorDiv},
    {K::kFloorMod, true, SymOp::kFloorMod},
    {K::kMin, true, SymOp::kMin},
    {K::kMax, true, SymOp::kMax},
    {K::kEQ, true, SymOp::kEq},
    {K::kNE, true, SymOp::kNe},
    {K::kLT, true, SymOp::kLt},
    {K::kLE, true, SymOp::kLe},
    {K::kGT, true, SymOp::kLt, true},
    {K::kGE, true, SymOp::kLe, true},
    {K::kAnd, true, SymOp::kAnd},
    {K::kOr, true, SymOp::kOr},
    {K::kNot, true, SymOp::kNot},
    {K::kSelect, true, SymOp::kSelect},
    {K::kFloatImm},
    {K::kDiv},
    {K::kCast},
    {K::kCall},
    {K::kBufferLoad},
    {K::kRamp},
    {K::kBroadcast},
};
constexpr bool vm_rows_complete() {
  for (size_t i = 0; i < std::size(kVmSymKinds); ++i) {
    if (static_cast<size_t>(kVmSymKinds[i].kind) != i) return false;
  }
  return std::size(kVmSymKinds) == static_cast<size_t>(kNumSymKinds);
}
static_assert(vm_rows_complete(), "one VM row per SymKind, in enumerator order");

absl::Status emit(const SymExpr& e, const std::function<int(const SymVar&)>& slot_of,
                  std::vector<SymInstr>& code) {
  const VmSymKind& row = kVmSymKinds[static_cast<size_t>(e.kind())];
  if (row.computed) {
    for (size_t k = 0; k < e.num_operands(); ++k) {
      const size_t i = row.swapped ? e.num_operands() - 1 - k : k;
      if (absl::Status s = emit(e.operand(i), slot_of, code); !s.ok()) return s;
    }
    code.push_back({row.op});
    return absl::OkStatus();
  }
  switch (e.kind()) {
    case SymKind::kIntImm:
      code.push_back({SymOp::kConst, *e.as_const()});
      return absl::OkStatus();
    case SymKind::kVar: {
      SymVar v = SymVar::from_expr(e);
      int slot = slot_of(v);
      if (slot < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("symbolic variable ", v.name(), " is not defined here (no parameter or "
                         "match_cast binds it)"));
      }
      code.push_back({SymOp::kSlot, slot});
      return absl::OkStatus();
    }
    case SymKind::kCast:
      // Integer-to-integer casts of shape values: the VM computes in int64.
      if ((e.dtype().is_int() || e.dtype().is_bool()) &&
          (e.operand(0).dtype().is_int() || e.operand(0).dtype().is_bool())) {
        return emit(e.operand(0), slot_of, code);
      }
      break;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "`", e.to_string(), "` is not an integer expression, so it cannot be a shape value"));
}

}  // namespace

absl::StatusOr<SymProgram> compile_sym_program(const SymExpr& expr,
                                               const std::function<int(const SymVar&)>& slot_of) {
  SymProgram program;
  program.text = expr.to_string();
  if (absl::Status s = emit(expr, slot_of, program.code); !s.ok()) return s;
  return program;
}

int FrameLayout::slot_of(const SymVar& var) const {
  auto it = slots_.find(var);
  return it == slots_.end() ? -1 : it->second;
}

int FrameLayout::new_slot(const SymVar& var) {
  int slot = static_cast<int>(fn_.slot_names.size());
  fn_.slot_names.push_back(var.name());
  slots_.emplace(var, slot);
  if (auto it = upper_bounds_.find(var); it != upper_bounds_.end()) {
    new_bounds_.push_back(runtime::SlotBound{slot, it->second});
  }
  return slot;
}

absl::StatusOr<int> FrameLayout::add_expr(const SymExpr& expr) {
  if (auto it = exprs_.find(expr); it != exprs_.end()) return it->second;
  absl::StatusOr<SymProgram> program =
      compile_sym_program(expr, [this](const SymVar& v) { return slot_of(v); });
  if (!program.ok()) return program.status();
  fn_.exprs.push_back(*std::move(program));
  const int index = static_cast<int>(fn_.exprs.size()) - 1;
  exprs_.emplace(expr, index);
  return index;
}

absl::StatusOr<int> FrameLayout::add_match(const std::vector<Item>& items, bool checked) {
  std::vector<ValuePattern> patterns;
  patterns.reserve(items.size());  // DimRefs point into these: no reallocation after this
  for (const Item& item : items) {
    absl::StatusOr<ValuePattern> p = skeleton(item.sinfo, item.what);
    if (!p.ok()) return p.status();
    patterns.push_back(*std::move(p));
  }
  std::vector<DimRef> dims;
  for (size_t i = 0; i < items.size(); ++i) collect_dims(items[i].sinfo, patterns[i], dims);
  new_bounds_.clear();

  // 1. Bare variables without a slot are bound where they first appear.
  for (DimRef& d : dims) {
    if (!d.expr.is_var() || !(d.expr.dtype().is_int())) continue;
    SymVar v = SymVar::from_expr(d.expr);
    if (slot_of(v) >= 0) continue;
    d.pattern->rule = DimRule::kBind;
    d.pattern->slot = new_slot(v);
    d.decided = true;
  }
  // 2. Dims linear in one variable without a slot solve for it, until none does.
  auto known = [this](const SymVar& v) { return slot_of(v) >= 0; };
  for (bool progress = true; progress;) {
    progress = false;
    for (DimRef& d : dims) {
      if (d.decided) continue;
      std::optional<LinearSolution> solution = solve_linear(d.expr, known);
      if (!solution) continue;
      absl::StatusOr<int> rest = add_expr(solution->rest);
      if (!rest.ok()) return rest.status();
      d.pattern->rule = DimRule::kSolve;
      d.pattern->slot = new_slot(solution->var);
      d.pattern->coeff = solution->coeff;
      d.pattern->expr = *rest;
      d.decided = true;
      progress = true;
    }
  }
  // 3. Everything else is checked against its value.
  for (DimRef& d : dims) {
    if (d.decided) continue;
    absl::StatusOr<int> expected = add_expr(d.expr);
    if (!expected.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(items.front().what, ": dim `", d.expr.to_string(),
                       "`: ", expected.status().message()));
    }
    d.pattern->rule = DimRule::kCheck;
    d.pattern->expr = *expected;
  }

  runtime::MatchGroup group;
  group.checked = checked;
  group.upper_bounds = std::move(new_bounds_);
  new_bounds_.clear();
  for (size_t i = 0; i < items.size(); ++i) {
    fn_.patterns.push_back(std::move(patterns[i]));
    group.items.push_back(runtime::MatchItem{
        items[i].reg, static_cast<int32_t>(fn_.patterns.size()) - 1, items[i].what});
  }
  fn_.matches.push_back(std::move(group));
  return static_cast<int>(fn_.matches.size()) - 1;
}

}  // namespace relax::codegen_detail
