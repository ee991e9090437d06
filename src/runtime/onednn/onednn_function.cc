// The function objects of the family "onednn." and the public API of relax/runtime/onednn.h.
//
// A call: check the arguments (count, tensors, host, compact, dtypes), build the key of its
// concrete shapes and dtypes, find the primitive in the function object's LRU cache (or plan
// and create it, onednn_plan.h), bind the arguments to oneDNN memory objects over their data
// (a `:packed` weight to its packed copy, onednn_weights.h), give the scratchpad (the call's
// workspace when large enough, else an allocation that is counted) and execute on this
// thread's stream. Nothing is compiled per shape beyond oneDNN's own primitive creation.
// Plain weights of a matmul or linear of many rows: oneDNN 2.6 reads some plain layouts far
// slower than its own blocked one (measured, 2 threads, f32, 128 rows, K = 2048: N = 2048, 4096,
// 8192 within 1.2x of the packed weights; N = 2560 to 6144, TinyLlama's 5632 among them, 2.8-3.1x
// slower). Which way wins depends on the CPU and the library's version, so such calls time both
// on their shape's first calls (the weights reordered into a reused buffer for the trials; the
// reorder is not timed, nor is each weights tensor's first call, which may fault its mapped
// pages in) and keep the faster (Entry::repack). When that is oneDNN's layout, each weights
// tensor is copied into it once and its later calls read the copy, which the function object
// keeps (OnednnStats::repacked_weight_bytes; set_onednn_repack bounds them or decides without timing): weights are
// never reordered per call once the choice is made.
// Threads: a call claims its OpenMP team from the process's kernel thread budget
// (OmpThreads, onednn_common.h), so oneDNN's threads and the kernel pool's share one count;
// the primitive cache is keyed by the team's size too.
#include "relax/runtime/onednn.h"

#ifdef RELAX_WITH_ONEDNN

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onednn_common.h"
#include "onednn_function.h"
#include "onednn_plan.h"
#include "onednn_weights.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/thread_budget.h"
#include "relax/runtime/value.h"

namespace relax::runtime::onednn {
namespace {

constexpr size_t kPrimitiveCacheCapacity = 64;
constexpr size_t kPackedWeightsCapacity = 1024;

constexpr size_t kMaxTensors = 16;  // inputs and the output of one call

// Rows from which a plain-weights matmul or linear times reading its weights repacked.
constexpr int64_t kRepackMinRows = 32;
// Timed calls of each way before an entry decides (the first of each warms the buffers).
constexpr int kRepackTrials = 2;

// A call of fewer multiply-adds runs on the calling thread alone: about a microsecond of work
// at this machine's speed, less than forking and joining an OpenMP team costs (2-5 us), and a
// team that has to wait for a descheduled thread on a busy machine costs milliseconds (10,000
// calls of a 16-wide two-layer model took 80 s on 2 threads with the other core busy, 2.4 s
// on one).
constexpr int64_t kSerialMultiplyAdds = int64_t{1} << 17;

// The multiply-adds of a call: the output's elements times the length of each one's dot
// product (the operand's last dim for matmul and linear; the weights' elements per output
// channel for a convolution).
int64_t multiply_adds(const OpSpec& spec, std::span<const TensorInfo> tensors) {
  auto elements = [](const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  };
  const std::vector<int64_t>& src = *tensors[0].shape;
  const std::vector<int64_t>& weights = *tensors[1].shape;
  int64_t depth = 1;
  if (spec.kind == OpKind::kConv2dTranspose) {
    // (I, O / groups, kH, kW): each output element takes about I / groups * kH * kW of them.
    depth = weights.size() < 2 || weights[1] == 0 ? 0 : elements(weights) / weights[1] / std::max<int64_t>(spec.conv.groups, 1);
  } else if (spec.is_conv()) {
    depth = weights.empty() || weights[0] == 0 ? 0 : elements(weights) / weights[0];
  } else if (!src.empty()) {
    depth = src.back();
  }
  return elements(*tensors.back().shape) * depth;
}

// oneDNN memory objects for the arguments of one call of an entry (the scratchpad last),
// created once and pointed at each call's data: creating them per call cost a few
// allocations each.
struct Bindings {
  std::array<dnnl::memory, kMaxTensors + 1> memories;
  dnnl::memory repack_scratchpad;  // the repacked primitive's (Entry::repack)
  dnnl::memory inner_src, inner_dst;  // Entry::reorders_activations: the reordered activations
};

// Which way the calls of plain weights and many rows run (see the top of this file), shared
// by the entries of one weights shape and one power-of-two range of rows: before the decision
// the ways alternate and are timed; every call after it runs the faster one.
struct RepackChoice {
  enum class Way { kUndecided, kPlain, kRepacked };
  // The way of a call with `weights` at this address. A weights tensor's first call runs plain
  // and untimed: it may be the first touch of a mapped file's pages, whose faults would decide.
  Way next(const void* weights, bool* timed) {
    std::lock_guard<std::mutex> lock(mu);
    *timed = false;
    if (decided != Way::kUndecided) return decided;
    if (seen.insert(weights).second) return Way::kPlain;
    *timed = true;
    return started++ % 2 == 0 ? Way::kPlain : Way::kRepacked;
  }
  // Records a timed call; true when this one decided.
  bool record(Way way, double seconds) {
    std::lock_guard<std::mutex> lock(mu);
    if (decided != Way::kUndecided) return false;
    const int i = way == Way::kPlain ? 0 : 1;
    if (++samples[i] > 1) best[i] = std::min(best[i], seconds);  // the first one warms up
    if (samples[0] <= kRepackTrials || samples[1] <= kRepackTrials) return false;
    decided = best[1] < best[0] ? Way::kRepacked : Way::kPlain;
    seen.clear();
    return true;
  }

  std::mutex mu;
  Way decided = Way::kUndecided;
  absl::flat_hash_set<const void*> seen;  // weights called with before the decision
  int started = 0;
  int samples[2] = {0, 0};
  double best[2] = {1e30, 1e30};
};

// Reading plain weights repacked, where it may pay: the primitive over oneDNN's own weights
// layout, the reorder into it (for the trials), and the shared choice.
struct Repack {
  dnnl::primitive primitive;
  dnnl::primitive reorder;  // the plain weights -> md
  dnnl::memory::desc md;
  dnnl::memory::desc scratchpad_md;
  int64_t scratchpad_bytes = 0;
  std::shared_ptr<RepackChoice> choice;
};

// Buffers reused by the calls of one function object: the trials' reordered weights, and the
// scratch of calls without a large enough workspace. A call takes one at least as large as it
// needs (or makes one) and gives it back; `bytes` (when given) counts what they hold.
class BufferPool {
 public:
  explicit BufferPool(std::atomic<int64_t>* bytes = nullptr) : bytes_(bytes) {}
  absl::StatusOr<Tensor> take(int64_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < idle_.size(); ++i) {
        if (static_cast<int64_t>(idle_[i].nbytes()) >= bytes) {
          Tensor t = std::move(idle_[i]);
          idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
          return t;
        }
      }
    }
    absl::StatusOr<Tensor> fresh = Tensor::storage(bytes);
    if (fresh.ok() && bytes_ != nullptr) bytes_->fetch_add(bytes, std::memory_order_relaxed);
    return fresh;
  }
  void give_back(Tensor t) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(t));
  }
  void free_idle() {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes_ != nullptr) {
      for (const Tensor& t : idle_) bytes_->fetch_sub(static_cast<int64_t>(t.nbytes()), std::memory_order_relaxed);
    }
    idle_.clear();
  }
  ~BufferPool() { free_idle(); }

 private:
  std::atomic<int64_t>* bytes_;
  std::mutex mu_;
  std::vector<Tensor> idle_;
};

// A primitive for one set of shapes and dtypes, with what binding its arguments needs.
struct Entry {
  dnnl::primitive primitive;
  std::vector<ArgDesc> args;     // call order, the output last
  dnnl::memory::desc packed_md;  // `:packed`: the primitive's weights layout
  bool reorder_weights = false;  // `:packed` and that layout is not the user's
  dnnl::memory::desc scratchpad_md;
  int64_t scratchpad_bytes = 0;
  std::unique_ptr<Repack> repack;  // plain weights and many rows: reading them repacked may pay
  // A convolution over oneDNN's activation layouts (Plan::inner_src): the reorders around it
  // (each side's only when its md is not empty).
  bool reorders_activations = false;
  dnnl::memory::desc inner_src_md, inner_dst_md;
  dnnl::primitive src_reorder, dst_reorder;
  int64_t extra_bytes = 0;

  // Bindings no running call uses; a call takes one (or makes one) and gives it back.
  std::unique_ptr<Bindings> take_bindings() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        std::unique_ptr<Bindings> b = std::move(idle.back());
        idle.pop_back();
        return b;
      }
    }
    auto b = std::make_unique<Bindings>();
    for (size_t i = 0; i < args.size(); ++i) {
      b->memories[i] = dnnl::memory(args[i].md, cpu_engine(), DNNL_MEMORY_NONE);
    }
    if (scratchpad_bytes > 0) {
      b->memories[args.size()] = dnnl::memory(scratchpad_md, cpu_engine(), DNNL_MEMORY_NONE);
    }
    if (repack != nullptr && repack->scratchpad_bytes > 0) {
      b->repack_scratchpad = dnnl::memory(repack->scratchpad_md, cpu_engine(), DNNL_MEMORY_NONE);
    }
    if (inner_src_md != dnnl::memory::desc()) b->inner_src = dnnl::memory(inner_src_md, cpu_engine(), DNNL_MEMORY_NONE);
    if (inner_dst_md != dnnl::memory::desc()) b->inner_dst = dnnl::memory(inner_dst_md, cpu_engine(), DNNL_MEMORY_NONE);
    return b;
  }
  void give_back(std::unique_ptr<Bindings> b) {
    std::lock_guard<std::mutex> lock(mu);
    idle.push_back(std::move(b));
  }

  std::mutex mu;
  std::vector<std::unique_ptr<Bindings>> idle;
};

absl::StatusOr<Plan> plan(const OpSpec& spec, std::span<const TensorInfo> tensors) {
  return spec.is_conv() ? plan_conv(spec, tensors) : plan_matmul(spec, tensors);
}

std::string describe_call(std::span<const TensorInfo> tensors) {
  return absl::StrJoin(tensors, ", ", [](std::string* out, const TensorInfo& t) {
    absl::StrAppend(out, shape_text(*t.shape), " ", t.dtype.to_string());
  });
}

// Plans for `tensors` and gives the planned primitive descriptor to `use`, turning oneDNN's
// exceptions into statuses.
template <typename Use>
absl::Status with_plan(const OpSpec& spec, std::span<const TensorInfo> tensors, Use&& use) {
  return guard_dnnl(
      [&] { return absl::StrCat(spec.name, ": no oneDNN primitive for ", describe_call(tensors)); },
      [&]() -> absl::Status {
        absl::StatusOr<Plan> p = plan(spec, tensors);
        if (!p.ok()) return p.status();
        return use(*p);
      });
}

class Function {
 public:
  explicit Function(OpSpec spec) : spec_(std::move(spec)) {}

  absl::Status call(const std::vector<Value>& args) {
    const size_t num_tensors = spec_.num_inputs() + 1;
    if (args.size() != num_tensors && args.size() != num_tensors + 1) {
      std::vector<std::string> labels;
      for (size_t i = 0; i < num_tensors; ++i) labels.push_back(arg_label(spec_, i));
      return absl::InvalidArgumentError(absl::StrCat(
          spec_.name, ": expected ", num_tensors, " arguments (", absl::StrJoin(labels, ", "),
          ") and an optional workspace, got ", args.size()));
    }
    // Check the tensors and build the key of their shapes and dtypes.
    TensorInfo infos[kMaxTensors];
    if (num_tensors > kMaxTensors) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec_.name, ": more than ", kMaxTensors - 2, " residual tensors"));
    }
    LruCache<Entry>::Key key;
    key.reserve(num_tensors * 4);
    for (size_t i = 0; i < num_tensors; ++i) {
      absl::StatusOr<const Tensor*> t = checked_tensor(args, i);
      if (!t.ok()) return t.status();
      infos[i] = TensorInfo{&(*t)->shape(), (*t)->dtype()};
      const DataType dtype = (*t)->dtype();
      key.push_back((static_cast<int64_t>(dtype.code) << 24) | (int64_t{dtype.bits} << 16) |
                    dtype.lanes);
      key.push_back(static_cast<int64_t>((*t)->shape().size()));
      key.insert(key.end(), (*t)->shape().begin(), (*t)->shape().end());
    }
    const Tensor* workspace = nullptr;
    if (args.size() > num_tensors) {
      absl::StatusOr<const Tensor*> w = checked_workspace(args, num_tensors);
      if (!w.ok()) return w.status();
      workspace = *w;
    }
    const std::span<const TensorInfo> tensors(infos, num_tensors);

    // The call's threads, claimed from the kernel thread budget for the creation (a
    // primitive's thread decomposition is fixed then) and the run of its primitive; one
    // thread for a small call.
    const OmpThreads team(OmpThreads::kClaim, multiply_adds(spec_, tensors) < kSerialMultiplyAdds ? 1 : 0);
    key.push_back(team.threads());
    std::shared_ptr<Entry> entry = primitives_.find(key);
    if (entry != nullptr) {
      counters().primitive_cache_hits.fetch_add(1, std::memory_order_relaxed);
    } else {
      bool empty_output = false;
      absl::Status s = with_plan(spec_, tensors, [&](const Plan& p) {
        if (p.empty_output) {
          empty_output = true;
          return absl::OkStatus();
        }
        auto fresh = std::make_shared<Entry>();
        fresh->args = p.args;
        if (spec_.packed) {
          fresh->packed_md = p.pd.weights_desc();
          fresh->reorder_weights = !(fresh->packed_md == p.args[1].md);
        }
        fresh->scratchpad_md = p.pd.scratchpad_desc();
        fresh->scratchpad_bytes = static_cast<int64_t>(fresh->scratchpad_md.get_size());
        fresh->primitive = dnnl::primitive(p.pd);
        if (p.reorders_activations()) {
          fresh->reorders_activations = true;
          fresh->inner_src_md = p.inner_src;
          fresh->inner_dst_md = p.inner_dst;
          if (p.inner_src != dnnl::memory::desc()) {
            fresh->src_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), p.args[0].md, cpu_engine(), p.inner_src));
          }
          if (p.inner_dst != dnnl::memory::desc()) {
            fresh->dst_reorder =
                dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), p.inner_dst, cpu_engine(), p.args.back().md));
          }
          fresh->extra_bytes = p.extra_bytes();
        }
        if (!spec_.packed && !spec_.is_conv() && rows(tensors) >= kRepackMinRows) {
          absl::StatusOr<std::unique_ptr<Repack>> r = make_repack(tensors, p);
          if (!r.ok()) return r.status();
          fresh->repack = *std::move(r);
        }
        counters().primitives_created.fetch_add(1, std::memory_order_relaxed);
        entry = primitives_.insert(key, std::move(fresh));
        return absl::OkStatus();
      });
      if (!s.ok() || empty_output) return s;
    }
    return guard_dnnl(
        [&] { return absl::StrCat(spec_.name, ": executing for ", describe_call(tensors)); },
        [&] { return execute(*entry, args, workspace); });
  }

 private:
  // The rows of a matmul's or linear's source: its elements over its last dim.
  static int64_t rows(std::span<const TensorInfo> tensors) {
    const std::vector<int64_t>& src = *tensors[0].shape;
    int64_t n = 1;
    for (size_t i = 0; i + 1 < src.size(); ++i) n *= src[i];
    return n;
  }

  // The repacked way of a plain-weights plan, or null when oneDNN's layout is the plain one.
  absl::StatusOr<std::unique_ptr<Repack>> make_repack(std::span<const TensorInfo> tensors, const Plan& plain) {
    OpSpec packed = spec_;
    packed.packed = true;
    absl::StatusOr<Plan> p = plan(packed, tensors);
    if (!p.ok()) return p.status();
    const dnnl::memory::desc md = p->pd.weights_desc();
    if (md == plain.args[1].md) return std::unique_ptr<Repack>();
    auto r = std::make_unique<Repack>();
    r->md = md;
    r->primitive = dnnl::primitive(p->pd);
    r->reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plain.args[1].md, cpu_engine(), md));
    r->scratchpad_md = p->pd.scratchpad_desc();
    r->scratchpad_bytes = static_cast<int64_t>(r->scratchpad_md.get_size());
    // Shared by the calls of these weights whose rows lie in the same power-of-two range.
    std::vector<int64_t> key = *tensors[1].shape;
    key.push_back(static_cast<int64_t>(tensors[1].dtype.bits));
    key.push_back(static_cast<int64_t>(std::bit_width(static_cast<uint64_t>(rows(tensors)))));
    std::lock_guard<std::mutex> lock(choices_mu_);
    std::shared_ptr<RepackChoice>& choice = choices_[key];
    if (choice == nullptr) choice = std::make_shared<RepackChoice>();
    r->choice = choice;
    return r;
  }

  absl::StatusOr<const Tensor*> checked_tensor(const std::vector<Value>& args, size_t i) const {
    if (!args[i].is_tensor()) {
      return arg_error(spec_, i, absl::StrCat("expected a tensor, got ", args[i].describe()));
    }
    const Tensor& t = args[i].tensor_or_die();
    if (t.device().type != Device::cpu().type) {
      return arg_error(spec_, i, absl::StrCat("expected a host tensor, got ", t.describe()));
    }
    if (!t.is_contiguous()) {
      return arg_error(spec_, i,
                       absl::StrCat("expected a compact row-major tensor, got strides ",
                                    shape_text(t.strides()), " for shape ", shape_text(t.shape())));
    }
    if (!dnnl_type(t.dtype())) {
      return arg_error(spec_, i,
                       absl::StrCat("expected float32 or bfloat16, got ", t.dtype().to_string()));
    }
    return &t;
  }

  absl::StatusOr<const Tensor*> checked_workspace(const std::vector<Value>& args, size_t i) const {
    const Tensor* t = args[i].is_tensor() ? &args[i].tensor_or_die() : nullptr;
    if (t == nullptr || t->dtype() != DataType{DataType::Code::kUInt, 8, 1} || t->ndim() != 1 ||
        !t->is_contiguous() || t->device().type != Device::cpu().type) {
      return arg_error(
          spec_, i,
          absl::StrCat("expected a compact host uint8 tensor of rank 1, got ", args[i].describe()));
    }
    return t;
  }

  // Binds the arguments and runs the primitive: the entry's memory objects are pointed at
  // this call's data and go to oneDNN's C entry point as an array (the C++ API's
  // std::unordered_map of arguments cost a few allocations per call).
  absl::Status execute(Entry& entry, const std::vector<Value>& args, const Tensor* workspace) {
    using Way = RepackChoice::Way;
    if (entry.repack == nullptr) return execute_plain(entry, args, workspace);
    switch (static_cast<OnednnRepack::Mode>(counters().repack_mode.load(std::memory_order_relaxed))) {
      case OnednnRepack::Mode::kNever:
        return execute_plain(entry, args, workspace);
      case OnednnRepack::Mode::kAlways:
        return execute_repacked(entry, args, workspace);
      case OnednnRepack::Mode::kTimed:
        break;
    }
    bool timed = false;
    const Way way = entry.repack->choice->next(args[1].tensor_or_die().data(), &timed);
    if (!timed) {
      return way == Way::kRepacked ? execute_repacked(entry, args, workspace) : execute_plain(entry, args, workspace);
    }
    double seconds = 0;
    absl::Status s = way == Way::kRepacked ? execute_trial(entry, args, workspace, &seconds)
                                           : execute_plain(entry, args, workspace, &seconds);
    if (s.ok() && entry.repack->choice->record(way, seconds)) repack_buffers_.free_idle();
    return s;
  }

  // A trial of the repacked way: the weights reordered into a buffer of this function object
  // (not timed), then the repacked primitive (timed into `seconds`).
  absl::Status execute_trial(Entry& entry, const std::vector<Value>& args, const Tensor* workspace, double* seconds) {
    Repack& r = *entry.repack;
    absl::StatusOr<Tensor> buffer = repack_buffers_.take(static_cast<int64_t>(r.md.get_size()));
    if (!buffer.ok()) {
      return absl::Status(buffer.status().code(), absl::StrCat(spec_.name, ": repacked weights of ", r.md.get_size(),
                                                               " bytes: ", buffer.status().message()));
    }
    absl::Cleanup give_back_buffer = [&] { repack_buffers_.give_back(*std::move(buffer)); };
    std::unique_ptr<Bindings> bindings = entry.take_bindings();
    absl::Cleanup give_back_bindings = [&] { entry.give_back(std::move(bindings)); };
    const dnnl::memory repacked(r.md, cpu_engine(), buffer->data());
    bindings->memories[1].set_data_handle(args[1].tensor_or_die().data());
    r.reorder.execute(thread_stream(), {{DNNL_ARG_FROM, bindings->memories[1]}, {DNNL_ARG_TO, repacked}});
    thread_stream().wait();
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = run(entry, *bindings, args, workspace, r.primitive, r.scratchpad_bytes,
                         bindings->repack_scratchpad, &repacked);
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s.ok()) counters().calls_repacked.fetch_add(1, std::memory_order_relaxed);
    return s;
  }

  // The repacked way once chosen: the weights' copy in oneDNN's layout (made on this tensor's
  // first such call, kept by this function object), or the plain way when the process's bound
  // on such copies leaves no room for it.
  absl::Status execute_repacked(Entry& entry, const std::vector<Value>& args, const Tensor* workspace) {
    Repack& r = *entry.repack;
    const dnnl::memory copy = repacked_.get(args[1].tensor_or_die(), entry.args[1].md, r.md,
                                            counters().repack_limit_bytes.load(std::memory_order_relaxed));
    if (!copy) return execute_plain(entry, args, workspace);
    std::unique_ptr<Bindings> bindings = entry.take_bindings();
    absl::Cleanup give_back_bindings = [&] { entry.give_back(std::move(bindings)); };
    absl::Status s = run(entry, *bindings, args, workspace, r.primitive, r.scratchpad_bytes,
                         bindings->repack_scratchpad, &copy);
    if (s.ok()) counters().calls_repacked.fetch_add(1, std::memory_order_relaxed);
    return s;
  }

  // The entry's own primitive (`:packed`: over the weights' packed copy), timed into `seconds`
  // when given.
  absl::Status execute_plain(Entry& entry, const std::vector<Value>& args, const Tensor* workspace,
                             double* seconds = nullptr) {
    std::unique_ptr<Bindings> bindings = entry.take_bindings();
    absl::Cleanup give_back_bindings = [&] { entry.give_back(std::move(bindings)); };
    // The packed copy, held here too: the store may forget it while this call runs.
    dnnl::memory packed;
    if (entry.reorder_weights) packed = weights_.get(args[1].tensor_or_die(), entry.args[1].md, entry.packed_md);
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = run(entry, *bindings, args, workspace, entry.primitive, entry.scratchpad_bytes,
                         bindings->memories[entry.args.size()], entry.reorder_weights ? &packed : nullptr);
    if (seconds != nullptr) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return s;
  }

  // Runs `primitive` on this thread's stream over the call's arguments (the weights as
  // `weights` when given) and a scratchpad of `scratchpad_bytes` bound to `scratchpad`: the
  // call's workspace when large enough, else an allocation that is counted.
  absl::Status run(const Entry& entry, Bindings& bindings, const std::vector<Value>& args, const Tensor* workspace,
                   const dnnl::primitive& primitive, int64_t scratchpad_bytes, dnnl::memory& scratchpad,
                   const dnnl::memory* weights) {
    std::array<dnnl_exec_arg_t, kMaxTensors + 1> bound;
    size_t count = 0;
    for (size_t i = 0; i < entry.args.size(); ++i) {
      if (i == 1 && weights != nullptr) {
        bound[count++] = {entry.args[i].arg, weights->get()};
      } else {
        bindings.memories[i].set_data_handle(args[i].tensor_or_die().data());
        bound[count++] = {entry.args[i].arg, bindings.memories[i].get()};
      }
    }
    // The scratch: the primitive's scratchpad, then the reordered activations.
    const int64_t pad_bytes = entry.reorders_activations ? align64(scratchpad_bytes) : scratchpad_bytes;
    const int64_t scratch_bytes = pad_bytes + entry.extra_bytes;
    std::optional<Tensor> scratch;
    absl::Cleanup give_back_scratch = [&] {
      if (scratch) scratch_buffers_.give_back(*std::move(scratch));
    };
    char* scratch_data = nullptr;
    if (scratch_bytes > 0) {
      if (workspace != nullptr && static_cast<int64_t>(workspace->nbytes()) >= scratch_bytes) {
        scratch_data = static_cast<char*>(workspace->data());
      } else {
        absl::StatusOr<Tensor> s = scratch_buffers_.take(scratch_bytes);
        if (!s.ok()) {
          return absl::Status(s.status().code(), absl::StrCat(spec_.name, ": scratchpad of ", scratch_bytes,
                                                              " bytes: ", s.status().message()));
        }
        scratch = *std::move(s);
        scratch_data = static_cast<char*>(scratch->data());
        counters().scratchpads_allocated.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (scratchpad_bytes > 0) {
      scratchpad.set_data_handle(scratch_data);
      bound[count++] = {DNNL_ARG_SCRATCHPAD, scratchpad.get()};
    }
    dnnl::stream& stream = thread_stream();
    const bool src_reorder = entry.inner_src_md != dnnl::memory::desc();
    const bool dst_reorder = entry.inner_dst_md != dnnl::memory::desc();
    if (src_reorder) {
      bindings.inner_src.set_data_handle(scratch_data + pad_bytes);
      entry.src_reorder.execute(stream, {{DNNL_ARG_FROM, bindings.memories[0]}, {DNNL_ARG_TO, bindings.inner_src}});
      bound[0].memory = bindings.inner_src.get();
    }
    if (dst_reorder) {
      bindings.inner_dst.set_data_handle(scratch_data + pad_bytes + align64(static_cast<int64_t>(entry.inner_src_md.get_size())));
      for (size_t i = 0; i < count; ++i) {
        if (bound[i].arg == DNNL_ARG_DST) bound[i].memory = bindings.inner_dst.get();
      }
    }
    const dnnl_status_t status =
        dnnl_primitive_execute(primitive.get(), stream.get(), static_cast<int>(count), bound.data());
    dnnl::error::wrap_c_api(status, "could not execute a primitive");
    if (dst_reorder) {
      entry.dst_reorder.execute(stream, {{DNNL_ARG_FROM, bindings.inner_dst},
                                         {DNNL_ARG_TO, bindings.memories[entry.args.size() - 1]}});
    }
    stream.wait();
    return absl::OkStatus();
  }

  const OpSpec spec_;
  LruCache<Entry> primitives_{kPrimitiveCacheCapacity};
  PackedWeights weights_{kPackedWeightsCapacity, &counters().weights_packed, &counters().packed_weight_bytes};
  // The copies of plain weights whose calls chose oneDNN's layout.
  PackedWeights repacked_{kPackedWeightsCapacity, &counters().weights_repacked, &counters().repacked_weight_bytes};
  BufferPool repack_buffers_{&counters().repack_buffer_bytes};
  // The scratch of calls whose workspace is missing or too small (dims without declared bounds):
  // kept between calls, not allocated (and its pages faulted in) anew by each.
  BufferPool scratch_buffers_;
  std::mutex choices_mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<RepackChoice>> choices_;
};

}  // namespace

absl::StatusOr<LibraryFunction> resolve_function(const std::string& name) {
  absl::StatusOr<OpSpec> spec = parse_name(name);
  if (!spec.ok()) return spec.status();
  auto fn = std::make_shared<Function>(*std::move(spec));
  return LibraryFunction([fn](const std::vector<Value>& args) { return fn->call(args); });
}

}  // namespace relax::runtime::onednn

namespace relax::runtime {

bool onednn_available() { return true; }

absl::StatusOr<int64_t> onednn_workspace_bytes(const std::string& name,
                                               const std::vector<std::vector<int64_t>>& shapes,
                                               const std::vector<DataType>& dtypes) {
  using namespace onednn;  // NOLINT(google-build-using-namespace): the implementation's own
  absl::StatusOr<OpSpec> spec = parse_name(name);
  if (!spec.ok()) return spec.status();
  const size_t count = spec->num_inputs() + 1;
  if (shapes.size() != count || dtypes.size() != count) {
    return absl::InvalidArgumentError(
        absl::StrCat("onednn_workspace_bytes: ", name, " takes ", count,
                     " tensors (inputs, then the output), got ", shapes.size(), " shapes and ",
                     dtypes.size(), " dtypes"));
  }
  std::vector<TensorInfo> tensors(count);
  for (size_t i = 0; i < count; ++i) {
    if (!dnnl_type(dtypes[i])) {
      return arg_error(*spec, i,
                       absl::StrCat("expected float32 or bfloat16, got ", dtypes[i].to_string()));
    }
    tensors[i] = TensorInfo{&shapes[i], dtypes[i]};
  }
  int64_t bytes = 0;
  // Planned for the most threads a call may get: the scratchpad grows with them.
  const OmpThreads team(kernel_thread_budget());
  absl::Status s = with_plan(*spec, tensors, [&](const Plan& p) {
    if (p.empty_output) return absl::OkStatus();
    const auto pad = static_cast<int64_t>(p.pd.scratchpad_desc().get_size());
    bytes = p.reorders_activations() ? align64(pad) + p.extra_bytes() : pad;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return bytes;
}

OnednnStats onednn_stats() {
  const onednn::Counters& c = onednn::counters();
  OnednnStats s;
  s.primitives_created = c.primitives_created.load(std::memory_order_relaxed);
  s.primitive_cache_hits = c.primitive_cache_hits.load(std::memory_order_relaxed);
  s.weights_packed = c.weights_packed.load(std::memory_order_relaxed);
  s.scratchpads_allocated = c.scratchpads_allocated.load(std::memory_order_relaxed);
  s.calls_repacked = c.calls_repacked.load(std::memory_order_relaxed);
  s.weights_repacked = c.weights_repacked.load(std::memory_order_relaxed);
  s.packed_weight_bytes = c.packed_weight_bytes.load(std::memory_order_relaxed);
  s.repacked_weight_bytes = c.repacked_weight_bytes.load(std::memory_order_relaxed);
  s.repack_buffer_bytes = c.repack_buffer_bytes.load(std::memory_order_relaxed);
  return s;
}

void reset_onednn_stats() {
  onednn::Counters& c = onednn::counters();
  c.primitives_created.store(0);
  c.primitive_cache_hits.store(0);
  c.weights_packed.store(0);
  c.scratchpads_allocated.store(0);
  c.calls_repacked.store(0);
  c.weights_repacked.store(0);
}

void set_onednn_repack(OnednnRepack repack) {
  onednn::Counters& c = onednn::counters();
  c.repack_mode.store(static_cast<int>(repack.mode), std::memory_order_relaxed);
  c.repack_limit_bytes.store(repack.limit_bytes < 0 ? -1 : repack.limit_bytes, std::memory_order_relaxed);
}

OnednnRepack onednn_repack() {
  const onednn::Counters& c = onednn::counters();
  return OnednnRepack{static_cast<OnednnRepack::Mode>(c.repack_mode.load(std::memory_order_relaxed)),
                      c.repack_limit_bytes.load(std::memory_order_relaxed)};
}

}  // namespace relax::runtime

#else  // !RELAX_WITH_ONEDNN

namespace relax::runtime {

bool onednn_available() { return false; }

absl::StatusOr<int64_t> onednn_workspace_bytes(const std::string& name,
                                               const std::vector<std::vector<int64_t>>&,
                                               const std::vector<DataType>&) {
  return absl::UnimplementedError(
      absl::StrCat("onednn_workspace_bytes: ", name, ": this runtime was built without oneDNN"));
}

OnednnStats onednn_stats() { return {}; }
void reset_onednn_stats() {}
void set_onednn_repack(OnednnRepack) {}
OnednnRepack onednn_repack() { return OnednnRepack{OnednnRepack::Mode::kNever, 0}; }

}  // namespace relax::runtime

#endif  // RELAX_WITH_ONEDNN
