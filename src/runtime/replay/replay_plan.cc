// Running a recorded execution plan, and the cache of plans (see replay_plan.h).
//
// A replayed call costs, beyond its kernels: the argument checks (the VM's entry match, then
// bind_arguments comparing each argument with the plan's nodes), one lookup, one context
// request per storage, and per kernel call a copy of its recorded argument array with its
// patches applied. Intermediates never become Tensor objects; only library functions' arguments
// and the result are made into Values, as they must be.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "relax/support/check.h"
#include "replay/replay_plan.h"
#include "vm/sym_code_eval.h"
#include "vm/vm_device.h"

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

bool bind(const Plan& plan, const Value& v, bool strings, absl::InlinedVector<const Value*, 32>* nodes) {
  const size_t index = nodes->size();
  if (index >= plan.nodes.size()) return false;
  const ArgNode& node = plan.nodes[index];
  if (v.kind() != node.kind) return false;
  nodes->push_back(&v);
  switch (node.kind) {
    case ValueKind::kTensor: {
      const Tensor& t = v.tensor_or_die();
      return t.dtype() == node.dtype && t.device() == node.device && t.strides().empty() &&
             t.ndim() == node.ndim;
    }
    case ValueKind::kShape: return v.shape_dims_or_die().size() == static_cast<size_t>(node.ndim);
    case ValueKind::kTuple: {
      const std::vector<Value>& fields = v.fields_or_die();
      if (fields.size() != node.children.size()) return false;
      for (const Value& f : fields) {
        if (!bind(plan, f, strings, nodes)) return false;
      }
      return true;
    }
    case ValueKind::kString: return strings;  // not recorded: only the full path takes one
    default: return true;
  }
}

// A per-call Value of `r` (library arguments, the result).
absl::StatusOr<Value> materialize(const Ref& r, const Evaluated& values, std::span<const Value* const> nodes,
                                  std::span<const Tensor> bases, size_t num_nodes) {
  auto dims_of = [&](const std::vector<int32_t>& dims) {
    std::vector<int64_t> out(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) out[i] = values.ints[static_cast<size_t>(dims[i])];
    return out;
  };
  switch (r.kind) {
    case Ref::Kind::kNone: return Value();
    case Ref::Kind::kFixed: return r.fixed;
    case Ref::Kind::kInt: return Value(values.ints[static_cast<size_t>(r.value)]);
    case Ref::Kind::kShape: return Value::shape(dims_of(r.dims));
    case Ref::Kind::kArg: return *nodes[static_cast<size_t>(r.node)];
    case Ref::Kind::kTensor: {
      const auto b = static_cast<size_t>(r.base);
      const Tensor& base = b < num_nodes ? nodes[b]->tensor_or_die() : bases[b - num_nodes];
      if (r.whole) return Value(base);
      absl::StatusOr<Tensor> t = base.view(values.ints[static_cast<size_t>(r.offset)], dims_of(r.dims), r.dtype);
      if (!t.ok()) return t.status();
      return Value(*std::move(t));
    }
    case Ref::Kind::kTuple: {
      std::vector<Value> fields;
      fields.reserve(r.fields.size());
      for (const Ref& f : r.fields) {
        absl::StatusOr<Value> v = materialize(f, values, nodes, bases, num_nodes);
        if (!v.ok()) return v.status();
        fields.push_back(*std::move(v));
      }
      return Value::tuple(std::move(fields));
    }
  }
  return Value();
}

}  // namespace

bool eval_program(std::span<const SymInstr> code, const int64_t* ints, int64_t* out) {
  const EvalOutcome outcome = run_sym_code(code, [&](int64_t slot, int64_t* value) {
    *value = ints[slot];
    return true;
  });
  if (outcome.failure != EvalFailure::kNone) return false;
  *out = outcome.value;
  return true;
}

bool bind_arguments(const Plan& plan, std::span<const Value> params, bool strings,
                    absl::InlinedVector<const Value*, 32>* nodes) {
  nodes->clear();
  if (params.size() != static_cast<size_t>(plan.num_params)) return false;
  for (const Value& v : params) {
    if (!bind(plan, v, strings, nodes)) return false;
  }
  return nodes->size() == plan.nodes.size();
}

bool evaluate(const Plan& plan, std::span<const Value* const> nodes, std::span<const int64_t> slots,
              Evaluated* out) {
  out->ints.resize(plan.ints.size());
  int64_t* ints = out->ints.data();
  for (size_t i = 0; i < plan.ints.size(); ++i) {
    const IntExpr& e = plan.ints[i];
    switch (e.kind) {
      case IntExpr::Kind::kConst: ints[i] = e.value; break;
      case IntExpr::Kind::kSlot: ints[i] = slots[static_cast<size_t>(e.value)]; break;
      case IntExpr::Kind::kArgDim: {
        const Value& v = *nodes[static_cast<size_t>(e.node)];
        const auto d = static_cast<size_t>(e.value);
        ints[i] = v.is_tensor() ? v.tensor_or_die().shape()[d] : v.shape_dims_or_die()[d];
        break;
      }
      case IntExpr::Kind::kArgInt: ints[i] = nodes[static_cast<size_t>(e.node)]->int_value_or_die(); break;
      case IntExpr::Kind::kProgram:
        if (!eval_program(std::span<const SymInstr>(plan.int_code.data() + e.first, static_cast<size_t>(e.count)),
                          ints, &ints[i])) {
          return false;
        }
        break;
    }
  }
  for (const Guard& g : plan.guards) {
    if ((ints[g.value] != 0) != g.holds) return false;
  }
  out->shapes.resize(plan.shape_pool.size());
  for (size_t i = 0; i < plan.shape_pool.size(); ++i) out->shapes[i] = ints[plan.shape_pool[i]];
  return true;
}

namespace {

// The memory of a replayed call: the data of every base (argument tensors, then the call's
// storages and fresh tensors) and the handles that keep the call's own bases alive.
struct Bases {
  absl::InlinedVector<char*, 64> data;
  absl::InlinedVector<Tensor, 16> handles;
};

// Which steps a pass runs: all of them in order (the CPU, or a device replay without a graph);
// the host's (storages and fresh tensors: every data pointer of the call, releases deferred to
// the end of the call since the device pass still uses them); the device's (kernels, library
// calls, zeroing: the work a CUDA graph captures).
enum class Pass : uint8_t { kAll, kHost, kDevice };

bool is_host_step(StepKind kind) {
  return kind == StepKind::kStorage || kind == StepKind::kFresh || kind == StepKind::kRelease;
}

absl::Status run_steps(const Plan& plan, const Evaluated& values, const Tables& tables,
                       std::span<const Value* const> nodes, ExecutionContext& ctx, Bases& bases, Pass pass,
                       size_t first_step = 0, size_t end_step = SIZE_MAX) {
  const size_t num_nodes = plan.nodes.size();
  const int64_t* ints = values.ints.data();
  const int64_t* shapes = values.shapes.data();
  char** data = bases.data.data();
  constexpr size_t kInline = 16;
  RelaxKernelArg inline_args[kInline];
  std::vector<RelaxKernelArg> heap_args;
  const Executable& exec = *tables.exec;
  const bool on_host = tables.device.type == Device::Type::kCPU;
  auto name_of = [&](const Step& s) -> const std::string& {
    return exec.functions[static_cast<size_t>(s.function)].name;
  };
  end_step = std::min(end_step, plan.steps.size());
  for (size_t step = first_step; step < end_step; ++step) {
    const Step& s = plan.steps[step];
    if (pass != Pass::kAll && (pass == Pass::kHost) != is_host_step(s.kind)) continue;
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
            case Patch::Kind::kData: arg.data = data[static_cast<size_t>(patch->source)] + ints[patch->value]; break;
            case Patch::Kind::kShape: arg.shape = shapes + patch->value; break;
            case Patch::Kind::kArgShape:
              arg.shape = nodes[static_cast<size_t>(patch->source)]->tensor_or_die().shape().data();
              break;
            case Patch::Kind::kInt: arg.int_value = ints[patch->value]; break;
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
        absl::StatusOr<Tensor> t = ContextAccess::storage(ctx, static_cast<size_t>(s.index), ints[s.bytes],
                                                          static_cast<size_t>(s.alignment));
        if (!t.ok()) {
          return absl::Status(t.status().code(),
                              absl::StrCat(name_of(s), ": alloc_storage: ", t.status().message()));
        }
        const size_t b = static_cast<size_t>(s.base);
        data[b] = static_cast<char*>(t->data());
        bases.handles[b - num_nodes] = *std::move(t);
        break;
      }
      case StepKind::kRelease:
        if (pass == Pass::kAll) bases.handles[static_cast<size_t>(s.base) - num_nodes] = Tensor();
        break;
      case StepKind::kZero: {
        const int64_t bytes = ints[s.bytes];
        char* at = data[static_cast<size_t>(s.base)] + ints[s.offset];
        if (on_host) {
          if (bytes != 0) std::memset(at, 0, static_cast<size_t>(bytes));
        } else if (absl::Status z = vm_device::zero(at, bytes, tables.device); !z.ok()) {
          return absl::Status(z.code(), absl::StrCat(name_of(s), ": alloc_tensor: zeroing: ", z.message()));
        }
        break;
      }
      case StepKind::kFresh: {
        ContextAccess::count_allocator_call(ctx);
        absl::StatusOr<Tensor> t = Tensor::empty(
            std::vector<int64_t>(shapes + s.first, shapes + s.first + s.count), s.dtype, tables.device);
        if (!t.ok()) {
          return absl::Status(t.status().code(),
                              absl::StrCat(name_of(s), ": alloc_tensor: ", t.status().message()));
        }
        const size_t b = static_cast<size_t>(s.base);
        data[b] = static_cast<char*>(t->data());
        bases.handles[b - num_nodes] = *std::move(t);
        break;
      }
      case StepKind::kLibrary: {
        std::vector<Value> args;
        args.reserve(static_cast<size_t>(s.count));
        for (int32_t k = 0; k < s.count; ++k) {
          absl::StatusOr<Value> v = materialize(plan.library_args[static_cast<size_t>(s.first + k)], values, nodes,
                                                bases.handles, num_nodes);
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
  return absl::OkStatus();
}

// What the device pass of a replay depends on (replay_graph.h): the plan's ints, the numbers and
// strings of the arguments, and the data of every base.
GraphKey graph_key(const Evaluated& values, std::span<const Value* const> nodes, const Bases& bases) {
  GraphKey key(values.ints.begin(), values.ints.end());
  for (const Value* v : nodes) {
    switch (v->kind()) {
      case ValueKind::kTensor:
        key.insert(key.end(), v->tensor_or_die().shape().begin(), v->tensor_or_die().shape().end());
        break;
      case ValueKind::kShape: key.insert(key.end(), v->shape_dims_or_die().begin(), v->shape_dims_or_die().end()); break;
      case ValueKind::kInt: key.push_back(v->int_value_or_die()); break;
      case ValueKind::kFloat: {
        int64_t bits = 0;
        const double f = v->float_value_or_die();
        std::memcpy(&bits, &f, sizeof bits);
        key.push_back(bits);
        break;
      }
      case ValueKind::kString: {
        const std::string& text = v->string_value_or_die();
        key.push_back(static_cast<int64_t>(text.size()));
        for (size_t i = 0; i < text.size(); i += sizeof(int64_t)) {
          int64_t word = 0;
          std::memcpy(&word, text.data() + i, std::min(sizeof word, text.size() - i));
          key.push_back(word);
        }
        break;
      }
      default: break;
    }
  }
  for (char* p : bases.data) key.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(p)));
  return key;
}

}  // namespace

absl::StatusOr<Value> run(const Plan& plan, const Evaluated& values, const Tables& tables,
                          std::span<const Value* const> nodes, ExecutionContext& ctx, PlanCache* cache) {
  const size_t num_nodes = plan.nodes.size();
  Bases bases;
  bases.data.assign(static_cast<size_t>(plan.num_bases), nullptr);
  for (size_t i = 0; i < num_nodes; ++i) {
    if (nodes[i]->is_tensor()) bases.data[i] = static_cast<char*>(nodes[i]->tensor_or_die().data());
  }
  bases.handles.resize(static_cast<size_t>(plan.num_bases) - num_nodes);
  if (plan.graphs != nullptr && cache != nullptr && cache->max_cuda_graphs() > 0 && !plan.graphs->disabled()) {
    if (absl::Status s = run_steps(plan, values, tables, nodes, ctx, bases, Pass::kHost); !s.ok()) return s;
    // The device pass: a graph per stretch between the steps a capture cannot hold, which run
    // directly (replay_graph.h).
    GraphKey key = graph_key(values, nodes, bases);
    size_t first = 0;
    for (size_t segment = 0; segment <= plan.graph_breaks.size(); ++segment) {
      const bool last = segment == plan.graph_breaks.size();
      const size_t end = last ? plan.steps.size() : static_cast<size_t>(plan.graph_breaks[segment]);
      bool any = false;  // a stretch of host steps only has nothing to capture
      for (size_t i = first; i < end && !any; ++i) any = !is_host_step(plan.steps[i].kind);
      if (any) {
        GraphKey segment_key = last ? std::move(key) : key;  // a plan without breaks copies nothing
        segment_key.push_back(static_cast<int64_t>(segment));
        absl::Status s = plan.graphs->run(tables.device, std::move(segment_key), cache->max_cuda_graphs(),
                                          cache->graph_counters(), [&] {
                                            return run_steps(plan, values, tables, nodes, ctx, bases, Pass::kDevice,
                                                             first, end);
                                          });
        if (!s.ok()) return s;
      }
      if (last) break;
      if (absl::Status s = run_steps(plan, values, tables, nodes, ctx, bases, Pass::kDevice, end, end + 1); !s.ok()) {
        return s;
      }
      first = end + 1;
    }
  } else if (absl::Status s = run_steps(plan, values, tables, nodes, ctx, bases, Pass::kAll); !s.ok()) {
    return s;
  }
  return materialize(plan.result, values, nodes, bases.handles, num_nodes);
}

// ---------------------------------------------------------------------------
// PlanCache

PlanCache::PlanCache(size_t num_functions) : functions_(num_functions) {}

void PlanCache::set_options(const ReplayOptions& options) {
  std::unique_lock lock(mu_);
  options_ = options;
  options_.record_on_call = std::max(options_.record_on_call, 1);
  options_.max_plans_per_function = std::max(options_.max_plans_per_function, 1);
  options_.max_cuda_graphs = std::max(options_.max_cuda_graphs, 0);
  for (Function& f : functions_) f = Function();
  ++generation_;
  replayed_ = interpreted_ = recorded_ = not_recordable_ = argument_mismatches_ = guard_misses_ = evicted_ = 0;
  graph_counters_.reset();
  max_cuda_graphs_.store(static_cast<size_t>(options_.max_cuda_graphs), std::memory_order_relaxed);
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
  s.guard_misses = guard_misses_.load();
  s.evicted = evicted_.load();
  s.graph_launches = graph_counters_.launches.load();
  s.graph_captures = graph_counters_.captures.load();
  s.graph_failures = graph_counters_.failures.load();
  std::shared_lock lock(mu_);
  for (const Function& f : functions_) s.plans += static_cast<int64_t>(f.entries.size());
  return s;
}

PlanCache::Lookup PlanCache::lookup(int32_t function, std::span<const Value> params,
                                    std::span<const int64_t> slots,
                                    absl::InlinedVector<const Value*, 32>* nodes) {
  Function& f = functions_[static_cast<size_t>(function)];
  bool mismatch = false, missed = false;
  uint64_t stored = 0;
  {
    std::shared_lock lock(mu_);
    stored = f.stored;
    for (const std::unique_ptr<Entry>& e : f.entries) {
      if (!bind_arguments(*e->plan, params, /*strings=*/true, nodes)) {
        mismatch = true;
        continue;
      }
      auto values = std::make_shared<Evaluated>();
      if (!evaluate(*e->plan, *nodes, slots, values.get())) {
        missed = true;
        continue;
      }
      e->last_use.store(clock_.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
      return {e->plan, std::move(values), false, 0};
    }
  }
  if (missed) {
    guard_misses_.fetch_add(1, std::memory_order_relaxed);
  } else if (mismatch) {
    argument_mismatches_.fetch_add(1, std::memory_order_relaxed);
  }
  std::unique_lock lock(mu_);
  // A plan stored between the two locks may cover this call: it is interpreted, not recorded
  // again (eight threads racing once recorded the same plan three times).
  if (f.unrecordable || f.recording || f.stored != stored) return {};
  if (++f.uncovered < options_.record_on_call) return {};
  f.recording = true;
  return {nullptr, nullptr, true, generation_};
}

void PlanCache::store(int32_t function, uint64_t generation, std::shared_ptr<const Plan> plan, bool abandoned) {
  std::unique_lock lock(mu_);
  if (generation != generation_) return;  // the options were set since: forgotten
  Function& f = functions_[static_cast<size_t>(function)];
  f.recording = false;
  if (abandoned) return;  // the next call no plan covers records
  f.uncovered = 0;
  if (!plan) {
    not_recordable_.fetch_add(1, std::memory_order_relaxed);
    f.unrecordable = true;
    return;
  }
  recorded_.fetch_add(1, std::memory_order_relaxed);
  if (f.entries.size() >= static_cast<size_t>(options_.max_plans_per_function)) {
    auto oldest = std::min_element(f.entries.begin(), f.entries.end(), [](const auto& a, const auto& b) {
      return a->last_use.load(std::memory_order_relaxed) < b->last_use.load(std::memory_order_relaxed);
    });
    f.entries.erase(oldest);
    evicted_.fetch_add(1, std::memory_order_relaxed);
  }
  ++f.stored;
  auto e = std::make_unique<Entry>();
  e->plan = std::move(plan);
  e->last_use.store(clock_.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
  f.entries.push_back(std::move(e));
}

namespace {

// The plans a thread ran last, per (cache, function), held weakly (a plan lives as long as its
// cache keeps it, so a hint of a dead module's cache, whose address a new one may reuse, never
// locks), with their ints and the dims and ints of the arguments they were computed for.
struct Hint {
  const PlanCache* cache = nullptr;
  int32_t function = -1;
  std::weak_ptr<const Plan> plan;
  std::shared_ptr<const Evaluated> values;
  std::vector<int64_t> signature;
};
constexpr size_t kHintsPerThread = 8;
thread_local Hint thread_hints[kHintsPerThread];
thread_local size_t next_thread_hint = 0;

// Calls `f` on every number of `nodes` the plan's ints may read: dims and int values.
template <typename F>
bool for_each_number(std::span<const Value* const> nodes, F&& f) {
  for (const Value* v : nodes) {
    switch (v->kind()) {
      case ValueKind::kTensor:
        for (int64_t d : v->tensor_or_die().shape()) {
          if (!f(d)) return false;
        }
        break;
      case ValueKind::kShape:
        for (int64_t d : v->shape_dims_or_die()) {
          if (!f(d)) return false;
        }
        break;
      case ValueKind::kInt:
        if (!f(v->int_value_or_die())) return false;
        break;
      default: break;
    }
  }
  return true;
}

}  // namespace

std::shared_ptr<const Plan> PlanCache::hint(int32_t function, std::span<const Value> params,
                                            absl::InlinedVector<const Value*, 32>* nodes,
                                            std::shared_ptr<const Evaluated>* values) const {
  for (const Hint& h : thread_hints) {
    if (h.cache != this || h.function != function) continue;
    std::shared_ptr<const Plan> plan = h.plan.lock();
    if (!plan || !bind_arguments(*plan, params, /*strings=*/false, nodes)) return nullptr;
    size_t k = 0;
    const bool same = for_each_number(*nodes, [&](int64_t x) { return k < h.signature.size() && h.signature[k++] == x; });
    if (!same || k != h.signature.size()) return nullptr;
    *values = h.values;
    return plan;
  }
  return nullptr;
}

void PlanCache::set_hint(int32_t function, const std::shared_ptr<const Plan>& plan,
                         std::span<const Value* const> nodes, std::shared_ptr<const Evaluated> values) const {
  Hint* slot = nullptr;
  for (Hint& h : thread_hints) {
    if (h.cache == this && h.function == function) slot = &h;
  }
  if (slot == nullptr) slot = &thread_hints[next_thread_hint++ % kHintsPerThread];
  slot->cache = this;
  slot->function = function;
  slot->plan = plan;
  slot->values = std::move(values);
  slot->signature.clear();
  for_each_number(nodes, [&](int64_t x) {
    slot->signature.push_back(x);
    return true;
  });
}

}  // namespace relax::runtime::replay
