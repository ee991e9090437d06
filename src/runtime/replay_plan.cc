// Running a recorded execution plan, and the cache of plans (see replay_plan.h).
//
// A replayed call costs, beyond its kernels: the argument checks (the VM's entry match, then
// bind_arguments comparing each argument with the plan's nodes), one lookup, one context
// request per storage, and per kernel call a copy of its recorded argument array with its
// patches applied. Intermediates never become Tensor objects; only library functions' arguments
// and the result are made into Values, as they must be.
#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "relax/support/check.h"
#include "replay_plan.h"

namespace relax::runtime::replay {

// What a replayed call does with its context, as the VM's instructions do.
class ContextAccess {
 public:
  static absl::StatusOr<Tensor> storage(ExecutionContext& ctx, size_t site, int64_t bytes, size_t alignment) {
    return ctx.storage(site, bytes, alignment);
  }
  static void count_allocator_call(ExecutionContext& ctx) { ctx.count_allocator_call(); }
};

namespace {

bool bind(const Plan& plan, const Value& v, bool exact, absl::InlinedVector<const Value*, 32>* nodes) {
  const size_t index = nodes->size();
  if (index >= plan.nodes.size()) return false;
  const ArgNode& node = plan.nodes[index];
  if (v.kind() != node.kind) return false;
  nodes->push_back(&v);
  switch (node.kind) {
    case ValueKind::kTensor: {
      const Tensor& t = v.tensor_or_die();
      return t.dtype() == node.dtype && t.device() == node.device && t.strides().empty() &&
             t.shape() == node.dims;
    }
    case ValueKind::kShape: return v.shape_dims_or_die() == node.dims;
    case ValueKind::kTuple: {
      const std::vector<Value>& fields = v.fields_or_die();
      if (fields.size() != node.children.size()) return false;
      for (const Value& f : fields) {
        if (!bind(plan, f, exact, nodes)) return false;
      }
      return true;
    }
    case ValueKind::kInt: return !exact || v.int_value_or_die() == node.int_value;
    case ValueKind::kFloat: {
      const double x = v.float_value_or_die();
      return !exact || std::memcmp(&x, &node.float_value, sizeof x) == 0;
    }
    case ValueKind::kString: return !exact;  // not recorded: only the slow path takes one
    default: return true;
  }
}

// A per-call Value of `r` (library arguments, the result).
absl::StatusOr<Value> materialize(const Ref& r, std::span<const Value* const> nodes,
                                  std::span<const Tensor> bases, size_t num_nodes) {
  switch (r.kind) {
    case Ref::Kind::kNone: return Value();
    case Ref::Kind::kFixed: return r.fixed;
    case Ref::Kind::kArg: return *nodes[static_cast<size_t>(r.node)];
    case Ref::Kind::kTensor: {
      const auto b = static_cast<size_t>(r.base);
      const Tensor& base = b < num_nodes ? nodes[b]->tensor_or_die() : bases[b - num_nodes];
      if (r.whole) return Value(base);
      absl::StatusOr<Tensor> t = base.view(r.offset, r.shape, r.dtype);
      if (!t.ok()) return t.status();
      return Value(*std::move(t));
    }
    case Ref::Kind::kTuple: {
      std::vector<Value> fields;
      fields.reserve(r.fields.size());
      for (const Ref& f : r.fields) {
        absl::StatusOr<Value> v = materialize(f, nodes, bases, num_nodes);
        if (!v.ok()) return v.status();
        fields.push_back(*std::move(v));
      }
      return Value::tuple(std::move(fields));
    }
  }
  return Value();
}

}  // namespace

bool bind_arguments(const Plan& plan, std::span<const Value> params, bool exact,
                    absl::InlinedVector<const Value*, 32>* nodes) {
  nodes->clear();
  if (params.size() != static_cast<size_t>(plan.num_params)) return false;
  for (const Value& v : params) {
    if (!bind(plan, v, exact, nodes)) return false;
  }
  return nodes->size() == plan.nodes.size();
}

absl::StatusOr<Value> run(const Plan& plan, const Tables& tables, std::span<const Value* const> nodes,
                          ExecutionContext& ctx) {
  const size_t num_nodes = plan.nodes.size();
  // The data of every base: argument tensors, then the call's storages and fresh tensors.
  absl::InlinedVector<char*, 64> data(static_cast<size_t>(plan.num_bases), nullptr);
  for (size_t i = 0; i < num_nodes; ++i) {
    if (nodes[i]->is_tensor()) data[i] = static_cast<char*>(nodes[i]->tensor_or_die().data());
  }
  absl::InlinedVector<Tensor, 16> handles(static_cast<size_t>(plan.num_bases) - num_nodes);
  constexpr size_t kInline = 16;
  RelaxKernelArg inline_args[kInline];
  std::vector<RelaxKernelArg> heap_args;
  const Executable& exec = *tables.exec;
  auto name_of = [&](const Step& s) -> const std::string& {
    return exec.functions[static_cast<size_t>(s.function)].name;
  };
  for (const Step& s : plan.steps) {
    switch (s.kind) {
      case StepKind::kKernel: {
        const auto n = static_cast<size_t>(s.count);
        RelaxKernelArg* args = inline_args;
        if (n > kInline) {
          heap_args.resize(n);
          args = heap_args.data();
        }
        std::memcpy(args, plan.kernel_args.data() + s.first, n * sizeof(RelaxKernelArg));
        const Patch* patch = plan.patches.data() + s.patch_first;
        for (int32_t k = 0; k < s.patch_count; ++k, ++patch) {
          RelaxKernelArg& arg = args[patch->arg - s.first];
          switch (patch->kind) {
            case Patch::Kind::kData: arg.data = data[static_cast<size_t>(patch->source)] + patch->offset; break;
            case Patch::Kind::kInt: arg.int_value = nodes[static_cast<size_t>(patch->source)]->int_value_or_die(); break;
            case Patch::Kind::kFloat:
              arg.float_value = nodes[static_cast<size_t>(patch->source)]->float_value_or_die();
              break;
          }
        }
        constexpr int32_t kErrorCapacity = 512;
        char error[kErrorCapacity];
        error[0] = '\0';
        const int32_t rc = (*tables.kernels)[static_cast<size_t>(s.index)](args, s.count, error, kErrorCapacity);
        if (rc != 0) {
          error[kErrorCapacity - 1] = '\0';
          const std::string message = error[0] != '\0'
                                          ? std::string(error)
                                          : absl::StrCat("failed with code ", rc, " and no message");
          return absl::InvalidArgumentError(absl::StrCat(
              name_of(s), ": kernel ", exec.kernel_names[static_cast<size_t>(s.index)], ": ", message));
        }
        break;
      }
      case StepKind::kStorage: {
        absl::StatusOr<Tensor> t = ContextAccess::storage(ctx, static_cast<size_t>(s.index), s.bytes, static_cast<size_t>(s.offset));
        if (!t.ok()) {
          return absl::Status(t.status().code(),
                              absl::StrCat(name_of(s), ": alloc_storage: ", t.status().message()));
        }
        const size_t b = static_cast<size_t>(s.base);
        data[b] = static_cast<char*>(t->data());
        handles[b - num_nodes] = *std::move(t);
        break;
      }
      case StepKind::kRelease: handles[static_cast<size_t>(s.base) - num_nodes] = Tensor(); break;
      case StepKind::kZero: std::memset(data[static_cast<size_t>(s.base)] + s.offset, 0, static_cast<size_t>(s.bytes)); break;
      case StepKind::kFresh: {
        ContextAccess::count_allocator_call(ctx);
        absl::StatusOr<Tensor> t = Tensor::empty(plan.arrays[static_cast<size_t>(s.first)], s.dtype);
        if (!t.ok()) {
          return absl::Status(t.status().code(),
                              absl::StrCat(name_of(s), ": alloc_tensor: ", t.status().message()));
        }
        const size_t b = static_cast<size_t>(s.base);
        data[b] = static_cast<char*>(t->data());
        handles[b - num_nodes] = *std::move(t);
        break;
      }
      case StepKind::kLibrary: {
        std::vector<Value> args;
        args.reserve(static_cast<size_t>(s.count));
        for (int32_t k = 0; k < s.count; ++k) {
          absl::StatusOr<Value> v = materialize(plan.library_args[static_cast<size_t>(s.first + k)], nodes, handles, num_nodes);
          if (!v.ok()) return v.status();
          args.push_back(*std::move(v));
        }
        absl::Status status = (*tables.library)[static_cast<size_t>(s.index)](args);
        if (!status.ok()) {
          return absl::Status(status.code(), absl::StrCat(name_of(s), ": library function ",
                                                          exec.library_functions[static_cast<size_t>(s.index)],
                                                          ": ", status.message()));
        }
        break;
      }
    }
  }
  return materialize(plan.result, nodes, handles, num_nodes);
}

// ---------------------------------------------------------------------------
// PlanCache

PlanCache::PlanCache(size_t num_functions) : functions_(num_functions) {}

void PlanCache::set_options(const ReplayOptions& options) {
  std::unique_lock lock(mu_);
  options_ = options;
  options_.record_on_call = std::max(options_.record_on_call, 1);
  options_.max_plans_per_function = std::max(options_.max_plans_per_function, 1);
  for (Entries& e : functions_) e.clear();
  replayed_ = interpreted_ = recorded_ = not_recordable_ = argument_mismatches_ = evicted_ = 0;
  enabled_.store(options.enabled, std::memory_order_relaxed);
}

ReplayOptions PlanCache::options() const {
  std::shared_lock lock(mu_);
  return options_;
}

ReplayStats PlanCache::stats() const {
  ReplayStats s;
  s.replayed = replayed_.load();
  s.interpreted = interpreted_.load();
  s.recorded = recorded_.load();
  s.not_recordable = not_recordable_.load();
  s.argument_mismatches = argument_mismatches_.load();
  s.evicted = evicted_.load();
  std::shared_lock lock(mu_);
  for (const Entries& entries : functions_) {
    for (const std::unique_ptr<Entry>& e : entries) s.plans += e->plan != nullptr;
  }
  return s;
}

namespace {

// The plans a thread ran last, per (cache, function), held weakly: a plan lives as long as its
// cache keeps it, so a hint of a dead module's cache (whose address a new one may reuse) never
// locks.
struct Hint {
  const PlanCache* cache = nullptr;
  int32_t function = -1;
  std::weak_ptr<const Plan> plan;
};
constexpr size_t kHintsPerThread = 8;
thread_local Hint thread_hints[kHintsPerThread];
thread_local size_t next_thread_hint = 0;

}  // namespace

std::shared_ptr<const Plan> PlanCache::hint(int32_t function) const {
  for (const Hint& h : thread_hints) {
    if (h.cache == this && h.function == function) return h.plan.lock();
  }
  return nullptr;
}

void PlanCache::set_hint(int32_t function, const std::shared_ptr<const Plan>& plan) const {
  Hint* slot = nullptr;
  for (Hint& h : thread_hints) {
    if (h.cache == this && h.function == function) slot = &h;
  }
  if (slot == nullptr) slot = &thread_hints[next_thread_hint++ % kHintsPerThread];
  *slot = Hint{this, function, plan};
}

PlanCache::Entry* PlanCache::find(Entries& entries, std::span<const int64_t> key) {
  for (const std::unique_ptr<Entry>& e : entries) {
    if (std::equal(e->key.begin(), e->key.end(), key.begin(), key.end())) return e.get();
  }
  return nullptr;
}

PlanCache::Entry* PlanCache::insert(Entries& entries, std::span<const int64_t> key) {
  if (entries.size() >= static_cast<size_t>(options_.max_plans_per_function)) {
    auto oldest = std::min_element(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a->last_use.load(std::memory_order_relaxed) < b->last_use.load(std::memory_order_relaxed);
    });
    entries.erase(oldest);
    evicted_.fetch_add(1, std::memory_order_relaxed);
  }
  auto e = std::make_unique<Entry>();
  e->key.assign(key.begin(), key.end());
  e->last_use.store(clock_.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
  entries.push_back(std::move(e));
  return entries.back().get();
}

PlanCache::Lookup PlanCache::lookup(int32_t function, std::span<const int64_t> key) {
  Entries& entries = functions_[static_cast<size_t>(function)];
  {
    std::shared_lock lock(mu_);
    if (Entry* e = find(entries, key); e != nullptr && (e->plan || e->unrecordable)) {
      e->last_use.store(clock_.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
      return {e->plan, false};
    }
  }
  std::unique_lock lock(mu_);
  Entry* e = find(entries, key);
  if (e == nullptr) e = insert(entries, key);
  e->last_use.store(clock_.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
  if (e->plan || e->unrecordable) return {e->plan, false};
  ++e->calls;
  return {nullptr, e->calls >= options_.record_on_call};
}

void PlanCache::store(int32_t function, std::span<const int64_t> key, std::shared_ptr<const Plan> plan) {
  (plan ? recorded_ : not_recordable_).fetch_add(1, std::memory_order_relaxed);
  std::unique_lock lock(mu_);
  Entries& entries = functions_[static_cast<size_t>(function)];
  Entry* e = find(entries, key);
  if (e == nullptr) e = insert(entries, key);  // evicted while recording
  if (e->plan) return;  // another thread recorded it first
  e->plan = std::move(plan);
  e->unrecordable = e->plan == nullptr;
}

}  // namespace relax::runtime::replay
