// PassManager, sequences and fixed-point groups (relax/transform/pass_manager.h).
//
// A pipeline is a tree: ordinary passes are leaves, sequences and fixed-point
// groups are composite passes whose children() the edits reach into. Before a
// run, the context is checked against the whole tree (options, disabled
// passes, required passes), so that a typo fails at once instead of after
// minutes of compilation.
#include "relax/transform/pass_manager.h"

#include <functional>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/ir/structural_equal.h"
#include "relax/transform/pass_registry.h"

namespace relax::transform {
namespace {

std::string join_passes(const std::vector<PassPtr>& passes) {
  return absl::StrJoin(passes, ",", [](std::string* out, const PassPtr& p) { out->append(p->to_string()); });
}

// Runs `passes` one after the other (each through run_pass).
absl::StatusOr<IRModule> run_in_order(const std::vector<PassPtr>& passes, const IRModule& mod, PassContext& ctx) {
  IRModule current = mod;
  for (const PassPtr& p : passes) {
    absl::StatusOr<IRModule> next = run_pass(*p, current, ctx);
    if (!next.ok()) return next.status();
    current = *std::move(next);
  }
  return current;
}

class Sequence : public Pass {
 public:
  explicit Sequence(std::vector<PassPtr> passes)
      : Pass(PassInfo("sequence", "runs its passes in order")), passes_(std::move(passes)) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    return run_in_order(passes_, mod, ctx);
  }
  std::vector<PassPtr>* children() override { return &passes_; }
  std::string to_string() const override { return absl::StrCat("sequence(", join_passes(passes_), ")"); }

 private:
  std::vector<PassPtr> passes_;
};

// Whether every function of `a` is the very node of `b`'s function of the
// same name (the cheap test that a round changed nothing).
bool same_functions(const IRModule& a, const IRModule& b) {
  if (a.functions().size() != b.functions().size()) return false;
  for (size_t i = 0; i < a.functions().size(); ++i) {
    if (a.functions()[i].first != b.functions()[i].first ||
        !a.functions()[i].second.same_as(b.functions()[i].second)) {
      return false;
    }
  }
  return true;
}

bool structurally_same(const IRModule& a, const IRModule& b) {
  if (same_functions(a, b)) return true;
  if (a.functions().size() != b.functions().size()) return false;
  for (size_t i = 0; i < a.functions().size(); ++i) {
    const auto& [name_a, fa] = a.functions()[i];
    const auto& [name_b, fb] = b.functions()[i];
    if (name_a != name_b) return false;
    if (fa.same_as(fb)) continue;
    if (structural_hash(fa) != structural_hash(fb) || !structural_equal(fa, fb)) return false;
  }
  return true;
}

class FixedPoint : public Pass {
 public:
  FixedPoint(std::vector<PassPtr> passes, int max_iterations)
      : Pass(PassInfo("fixed-point", "repeats its passes until the module no longer changes")
                 .with_statistic("iterations", "rounds run")
                 .with_statistic("unconverged", "groups stopped by max-iterations")),
        passes_(std::move(passes)),
        max_iterations_(max_iterations) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule current = mod;
    for (int round = 0; round < max_iterations_; ++round) {
      ctx.add_statistic("iterations");
      absl::StatusOr<IRModule> next = run_in_order(passes_, current, ctx);
      if (!next.ok()) return next.status();
      if (structurally_same(current, *next)) return *std::move(next);
      current = *std::move(next);
    }
    ctx.add_statistic("unconverged");
    return current;
  }
  std::vector<PassPtr>* children() override { return &passes_; }
  std::string to_string() const override {
    std::string head = "fixed-point";
    if (max_iterations_ != kDefaultFixedPointIterations) {
      absl::StrAppend(&head, "{max-iterations=", max_iterations_, "}");
    }
    return absl::StrCat(head, "(", join_passes(passes_), ")");
  }

 private:
  std::vector<PassPtr> passes_;
  int max_iterations_;
};

// Calls `fn(list, index)` for each pass named `name` depth first; stops when
// `fn` returns false. Returns whether any matched.
bool for_each_named(std::vector<PassPtr>& list, std::string_view name,
                    const std::function<bool(std::vector<PassPtr>&, size_t&)>& fn, bool& stop) {
  bool found = false;
  for (size_t i = 0; i < list.size() && !stop; ++i) {
    if (list[i]->name() == name) {
      found = true;
      if (!fn(list, i)) {
        stop = true;
        return true;
      }
      continue;
    }
    if (std::vector<PassPtr>* children = list[i]->children()) {
      found |= for_each_named(*children, name, fn, stop);
    }
  }
  return found;
}

void walk(const std::vector<PassPtr>& list, const std::function<void(const Pass&)>& fn) {
  for (const PassPtr& p : list) {
    fn(*p);
    if (const std::vector<PassPtr>* children = p->children()) walk(*children, fn);
  }
}

}  // namespace

PassPtr sequence(std::vector<PassPtr> passes) { return std::make_shared<Sequence>(std::move(passes)); }

PassPtr fixed_point(std::vector<PassPtr> passes, int max_iterations) {
  RELAX_CHECK(max_iterations >= 1) << "fixed_point needs at least one iteration";
  return std::make_shared<FixedPoint>(std::move(passes), max_iterations);
}

PassManager& PassManager::add(PassPtr pass) {
  RELAX_CHECK(pass != nullptr);
  passes_.push_back(std::move(pass));
  return *this;
}

absl::Status PassManager::add(std::string_view name) {
  absl::StatusOr<PassPtr> pass = create_pass(name);
  if (!pass.ok()) return pass.status();
  passes_.push_back(*std::move(pass));
  return absl::OkStatus();
}

namespace {

absl::Status not_in_pipeline(std::string_view name, const PassManager& pm) {
  return absl::NotFoundError(
      absl::StrCat("no pass `", std::string(name), "` in the pipeline `", pm.to_string(), "`"));
}

}  // namespace

namespace {

// Inserts `pass` at the first pass named `anchor` (offset 0: before it, 1: after it).
bool insert_at(std::vector<PassPtr>& passes, std::string_view anchor, const PassPtr& pass, ptrdiff_t offset) {
  bool stop = false;
  return for_each_named(passes, anchor, [&](std::vector<PassPtr>& list, size_t& i) {
    list.insert(list.begin() + static_cast<ptrdiff_t>(i) + offset, pass);
    return false;
  }, stop);
}

}  // namespace

absl::Status PassManager::insert_before(std::string_view anchor, PassPtr pass) {
  return insert_at(passes_, anchor, pass, 0) ? absl::OkStatus() : not_in_pipeline(anchor, *this);
}

absl::Status PassManager::insert_after(std::string_view anchor, PassPtr pass) {
  return insert_at(passes_, anchor, pass, 1) ? absl::OkStatus() : not_in_pipeline(anchor, *this);
}

absl::Status PassManager::remove(std::string_view name) {
  bool stop = false;
  bool found = for_each_named(passes_, name, [&](std::vector<PassPtr>& list, size_t& i) {
    list.erase(list.begin() + static_cast<ptrdiff_t>(i));
    --i;  // the loop's ++i lands on the next pass
    return true;
  }, stop);
  return found ? absl::OkStatus() : not_in_pipeline(name, *this);
}

absl::Status PassManager::replace(std::string_view name, PassPtr pass) {
  bool stop = false;
  bool found = for_each_named(passes_, name, [&](std::vector<PassPtr>& list, size_t& i) {
    list[i] = pass;
    return true;
  }, stop);
  return found ? absl::OkStatus() : not_in_pipeline(name, *this);
}

bool PassManager::contains(std::string_view name) const {
  bool found = false;
  walk(passes_, [&](const Pass& p) { found |= p.name() == name; });
  return found;
}

std::string PassManager::to_string() const { return join_passes(passes_); }

absl::StatusOr<IRModule> PassManager::run(const IRModule& mod) const {
  PassContext ctx;
  return run(mod, ctx);
}

absl::StatusOr<IRModule> PassManager::run(const IRModule& mod, PassContext& ctx) const {
  // Options: each key must be declared by a pass of this pipeline, with its type.
  std::map<std::string, const PassOption*, std::less<>> declared;
  std::set<std::string, std::less<>> names;
  walk(passes_, [&](const Pass& p) {
    names.insert(p.name());
    for (const PassOption& o : p.info().options) declared.emplace(absl::StrCat(p.name(), ".", o.name), &o);
  });
  for (const auto& [key, value] : ctx.options()) {
    auto it = declared.find(key);
    if (it == declared.end()) {
      std::vector<std::string> known;
      for (const auto& [k, o] : declared) known.push_back(absl::StrCat(k, " (", std::string(option_type_name(o->type())), ")"));
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown option `", key, "`: no pass of the pipeline declares it; declared options: ",
          known.empty() ? "none" : absl::StrJoin(known, ", ")));
    }
    if (option_type(value) != it->second->type()) {
      return absl::InvalidArgumentError(absl::StrCat("option `", key, "` is of type ",
                                                     std::string(option_type_name(it->second->type())), ", given a ",
                                                     std::string(option_type_name(option_type(value))), " (",
                                                     option_value_to_string(value), ")"));
    }
  }
  for (const std::string& name : ctx.disabled_passes()) {
    if (!names.contains(name) && find_pass_info(name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("cannot disable unknown pass `", name, "`"));
    }
  }
  // Required passes must come earlier (in pipeline order, nested groups flattened).
  std::set<std::string, std::less<>> seen;
  absl::Status order = absl::OkStatus();
  walk(passes_, [&](const Pass& p) {
    if (p.children() == nullptr && !ctx.is_disabled(p.name())) {
      for (const std::string& r : p.info().required) {
        if (order.ok() && !seen.contains(r)) {
          order = absl::FailedPreconditionError(
              absl::StrCat("pass ", p.name(), " requires ", r, " to run before it in the pipeline `",
                           to_string(), "`"));
        }
      }
    }
    if (!ctx.is_disabled(p.name())) seen.insert(p.name());
  });
  if (!order.ok()) return order;

  return run_in_order(passes_, mod, ctx);
}

}  // namespace relax::transform
