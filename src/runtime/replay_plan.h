// Private to the runtime: recorded execution plans (relax/runtime/replay.h), how the VM records
// one while it interprets a call, runs one, and keeps them.
//
// A plan describes every value the recorded call computed by what fixes it on every call of
// the same binding (a Ref):
//   kFixed   the value itself: a constant, a shape or an int computed from the binding;
//   kArg     a node of the arguments (argument i, or a field of one), which differs per call;
//   kTensor  a tensor inside a per-call base -- an argument tensor, a storage the call asked
//            its context for, a tensor the call allocated -- at a byte offset, with a shape;
//   kTuple   a tuple of such.
// Its steps are the calls' side effects in order: storage requests, fresh tensors, zeroing,
// kernel calls (their RelaxKernelArg arrays as recorded, with the data pointers and scalars
// that change per call listed as patches), library calls (their arguments as Refs), and the
// release of a storage after its last use. The plan also records the arguments' structure
// (kinds, dtypes, shapes, tuple sizes): a call is replayed only when its arguments have it.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/kernel_abi.h"
#include "relax/runtime/module.h"
#include "relax/runtime/replay.h"
#include "relax/runtime/value.h"

namespace relax::runtime::replay {

/// What a value of the recorded call is on every call of its binding (see the file comment).
struct Ref {
  enum class Kind : uint8_t { kNone, kFixed, kArg, kTensor, kTuple };
  Kind kind = Kind::kNone;
  Value fixed;                 ///< kFixed
  int32_t node = -1;           ///< kArg: the argument node
  int32_t base = -1;           ///< kTensor: the per-call base (argument nodes first, then handles)
  int64_t offset = 0;          ///< kTensor: bytes from the base's data
  bool whole = false;          ///< kTensor: the base tensor itself, not a view of it
  std::vector<int64_t> shape;  ///< kTensor
  DataType dtype;              ///< kTensor
  std::vector<Ref> fields;     ///< kTuple
};

/// A node of the arguments, in preorder: what a call's argument must look like to replay.
struct ArgNode {
  ValueKind kind = ValueKind::kNone;
  DataType dtype;              ///< kTensor
  Device device;               ///< kTensor
  std::vector<int64_t> dims;   ///< kTensor: the shape; kShape: the dims
  std::vector<int32_t> children;  ///< kTuple: the fields' nodes
  int64_t int_value = 0;       ///< kInt: the recorded call's (compared by an exact binding only)
  double float_value = 0;      ///< kFloat: likewise
};

enum class StepKind : uint8_t { kStorage, kFresh, kZero, kKernel, kLibrary, kRelease };

struct Step {
  StepKind kind = StepKind::kKernel;
  int32_t function = 0;  ///< the VM function of the instruction (messages)
  int32_t index = 0;     ///< kStorage: the site; kKernel, kLibrary: the table index
  int32_t base = 0;      ///< kStorage, kFresh, kRelease, kZero: the base
  int64_t bytes = 0;     ///< kStorage, kZero
  int64_t offset = 0;    ///< kStorage: the alignment; kZero: the byte offset
  int32_t first = 0;     ///< kKernel: kernel_args; kLibrary: library_args; kFresh: arrays
  int32_t count = 0;
  int32_t patch_first = 0;
  int32_t patch_count = 0;
  DataType dtype;        ///< kFresh
};

/// A per-call value written into a recorded kernel argument.
struct Patch {
  enum class Kind : uint8_t { kData, kInt, kFloat };
  Kind kind = Kind::kData;
  int32_t arg = 0;     ///< index into the plan's kernel_args
  int32_t source = 0;  ///< kData: the base; kInt, kFloat: the argument node
  int64_t offset = 0;  ///< kData: bytes from the base's data
};

struct Plan {
  std::vector<ArgNode> nodes;
  int32_t num_params = 0;
  int32_t num_bases = 0;  ///< nodes, then the storages and fresh tensors of the call
  std::vector<Step> steps;
  std::vector<RelaxKernelArg> kernel_args;
  std::vector<Patch> patches;
  std::deque<std::vector<int64_t>> arrays;  ///< shapes and strides kernel args point into
  std::vector<Ref> library_args;
  std::vector<Value> keep_alive;  ///< constant tensors the kernel args point into
  Ref result;
  int64_t kernel_calls = 0;
};

/// The executable-wide tables a plan's steps call into; they outlive every plan.
struct Tables {
  const Executable* exec = nullptr;
  const std::vector<RelaxKernelFn>* kernels = nullptr;
  const std::vector<LibraryFunction>* library = nullptr;
  const std::vector<std::vector<int32_t>>* storage_site = nullptr;  // [function][pc]
};

/// Records a plan while the VM interprets a call; the VM reports every instruction it ran.
/// Once something is seen that cannot be replayed, the recorder is `aborted()` and ignores the
/// rest.
class Recorder {
 public:
  /// The most steps a plan may have; a longer call is not recorded.
  static constexpr size_t kMaxSteps = 1 << 20;

  /// Starts on `function` called with `params` (its registers 0..P-1).
  Recorder(const Tables& tables, int32_t function, std::span<const Value> params);

  bool aborted() const { return aborted_; }
  /// Whether the arguments themselves cannot be replayed (a strided tensor): a property of
  /// this call, not of its binding, so nothing is remembered about the binding.
  bool strided_argument() const { return strided_argument_; }

  /// After `ins` of `function` ran in a frame whose registers are `regs` (for the
  /// instructions not reported below).
  void after(int32_t function, const Instruction& ins, const std::vector<Value>& regs);
  /// After a kCallKernel ran with `args`.
  void kernel(int32_t function, const Instruction& ins, const RelaxKernelArg* args, size_t n);
  /// After a kCallLibrary ran with `args`.
  void library(int32_t function, const Instruction& ins, const std::vector<Value>& args);
  /// After a kAllocStorage at `site` produced `storage`.
  void storage(int32_t function, const Instruction& ins, int32_t site, const Value& storage);
  /// Before a kCallFunc pushes the callee's frame.
  void call(const Instruction& ins, const VMFunction& callee);
  /// After a kRet returned `value` (to the caller, or from the call).
  void ret(const Instruction& ins, const Value& value);

  /// The plan, once the call returned; null when aborted.
  std::shared_ptr<const Plan> finish();

 private:
  struct Frame {
    std::vector<Ref> regs;
    int32_t return_dst = -1;
  };

  void abort() { aborted_ = true; }
  Ref& reg(int64_t r) { return frames_.back().regs[static_cast<size_t>(r)]; }
  Ref operand(const Operand& op, const Value& value) const;
  int32_t add_node(const Value& v);
  // The per-call memory of a tensor Ref: its base and offset; false for other Refs.
  bool location(const Ref& r, int32_t* base, int64_t* offset) const;
  Ref derived(const Ref& source, const Value& source_value, const Value& result);
  bool fixed_by_binding(const ValuePattern& p, const Ref& r) const;
  Step& add_step(StepKind kind, int32_t function);
  int32_t new_base() { return plan_->num_bases++; }
  void add_releases();

  const Tables& tables_;
  std::shared_ptr<Plan> plan_;
  std::vector<Frame> frames_;
  bool aborted_ = false;
  bool strided_argument_ = false;
  bool returned_ = false;
};

/// Whether `params` have the structure `plan` was recorded with; fills `nodes` with the
/// argument nodes, in the plan's preorder. `exact` also requires the int and float arguments
/// of the recorded call: the arguments are then the recorded ones in everything the entry
/// match reads, so it would succeed and bind the same slots (see PlanCache::hint).
bool bind_arguments(const Plan& plan, std::span<const Value> params, bool exact,
                    absl::InlinedVector<const Value*, 32>* nodes);

/// Runs `plan` on the arguments bound by bind_arguments, its storages from `ctx`.
absl::StatusOr<Value> run(const Plan& plan, const Tables& tables,
                          std::span<const Value* const> nodes, ExecutionContext& ctx);

/// The plans of one module: per function, a bounded list of bindings, each with its plan, or
/// with the calls seen so far when not recorded yet. Thread-safe; a hit takes a shared lock.
class PlanCache {
 public:
  explicit PlanCache(size_t num_functions);

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void set_options(const ReplayOptions& options);
  ReplayOptions options() const;
  ReplayStats stats() const;

  struct Lookup {
    std::shared_ptr<const Plan> plan;  ///< the binding's plan, when recorded
    bool record = false;               ///< when not: whether this call records it
  };
  Lookup lookup(int32_t function, std::span<const int64_t> key);
  /// The recording of `key` ended: `plan` null when it could not be recorded.
  void store(int32_t function, std::span<const int64_t> key, std::shared_ptr<const Plan> plan);

  /// The plan the calling thread last replayed or recorded for `function` of this cache, if
  /// it is still alive (evicted or forgotten plans die). A call whose arguments bind it
  /// exactly (bind_arguments) replays it without running the entry match: a check of every
  /// argument against the recorded, matched ones, stricter than the match; any difference
  /// (a bad argument among them) takes the full path, whose match reports it.
  std::shared_ptr<const Plan> hint(int32_t function) const;
  void set_hint(int32_t function, const std::shared_ptr<const Plan>& plan) const;

  void count_replayed() { replayed_.fetch_add(1, std::memory_order_relaxed); }
  void count_interpreted() { interpreted_.fetch_add(1, std::memory_order_relaxed); }
  void count_argument_mismatch() { argument_mismatches_.fetch_add(1, std::memory_order_relaxed); }

 private:
  struct Entry {
    std::vector<int64_t> key;
    std::shared_ptr<const Plan> plan;
    int32_t calls = 0;          // calls seen before it was recorded
    bool unrecordable = false;  // interpreted from now on
    std::atomic<uint64_t> last_use{0};
  };
  using Entries = std::vector<std::unique_ptr<Entry>>;
  static Entry* find(Entries& entries, std::span<const int64_t> key);
  // A new entry for `key` in `entries`, evicting the least recently used when full.
  Entry* insert(Entries& entries, std::span<const int64_t> key);

  std::atomic<bool> enabled_{true};
  mutable std::shared_mutex mu_;
  ReplayOptions options_;
  std::vector<Entries> functions_;
  std::atomic<uint64_t> clock_{0};
  std::atomic<int64_t> replayed_{0}, interpreted_{0}, recorded_{0}, not_recordable_{0},
      argument_mismatches_{0}, evicted_{0};
};

}  // namespace relax::runtime::replay
