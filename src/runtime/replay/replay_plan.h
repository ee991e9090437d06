// Private to the runtime: recorded execution plans (relax/runtime/replay.h), how the VM records
// one while it interprets a call, checks that one applies to a call, runs one, and keeps them.
//
// A plan is recorded for one binding and replays every binding of its class: the numbers the
// recorded call computed from the binding (shapes, byte offsets and sizes, scalar kernel
// arguments, storage sizes) are kept as expressions of it -- `ints`, small postfix programs
// over the slots the entry match bound, the arguments' dims and int values, and earlier ints --
// and recomputed per call. What the class requires is kept as `guards`: each branch taken on a
// shape, each check of an inner match (a callee's arguments, a match_cast), each declared bound
// there, each view that must fit its storage. A call whose guards all hold takes exactly the
// recorded path, so replaying it with its own ints is the interpreted call; a call that fails
// one is interpreted (and may record a plan of its own).
//
// Every value of the recorded call is described by what makes it on every call (a Ref):
//   kFixed   the value itself: a constant (or a field or view of one);
//   kInt     an int computed from the binding (ints[value]);
//   kShape   a shape computed from the binding (dims);
//   kArg     a node of the arguments (argument i, or a field of one), which differs per call;
//   kTensor  a tensor inside a per-call base -- an argument tensor, a storage the call asked
//            its context for, a tensor the call allocated -- at a byte offset, with a shape;
//   kTuple   a tuple of such.
// Its steps are the calls' side effects in order: storage requests, fresh tensors, zeroing,
// kernel calls (their RelaxKernelArg arrays as recorded, with the data pointers, shapes and
// scalars that change per call listed as patches), library calls (their arguments as Refs),
// and the release of a storage after its last use. The plan also records the arguments'
// structure (kinds, dtypes, ranks, tuple sizes): a call replays only arguments that have it.
//
// On a CUDA device a plan also keeps the CUDA graphs its replays were captured into
// (replay_graph.h): run() then makes the call's storages first and launches (or captures) the
// graph of the call's key instead of enqueueing the steps one by one.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/kernel_abi.h"
#include "relax/runtime/module.h"
#include "relax/runtime/replay.h"
#include "relax/runtime/value.h"
#include "relax/support/device.h"
#include "replay/replay_graph.h"

namespace relax::runtime::replay {

/// An int64 a plan computes per call from the binding.
struct IntExpr {
  enum class Kind : uint8_t {
    kConst,    ///< `value`
    kSlot,     ///< slot `value` of the called function, bound by its entry match
    kArgDim,   ///< dim `value` of argument node `node` (a tensor or a shape)
    kArgInt,   ///< the int argument node `node`
    kProgram,  ///< Plan::int_code[first, first + count): its kSlot operands name earlier ints
  };
  Kind kind = Kind::kConst;
  int32_t node = -1;
  int64_t value = 0;
  int32_t first = 0;
  int32_t count = 0;
};

/// ints[value] != 0 must be `holds` for a call to take the recorded path.
struct Guard {
  int32_t value = 0;
  bool holds = true;
};

/// What a value of the recorded call is on every call of its class (see the file comment).
struct Ref {
  enum class Kind : uint8_t { kNone, kFixed, kInt, kShape, kArg, kTensor, kTuple };
  Kind kind = Kind::kNone;
  Value fixed;                 ///< kFixed
  int32_t value = -1;          ///< kInt: the int
  int32_t node = -1;           ///< kArg: the argument node
  int32_t base = -1;           ///< kTensor: the per-call base (argument nodes first, then handles)
  int32_t offset = -1;         ///< kTensor: the int of its bytes from the base's data
  bool whole = false;          ///< kTensor: the base tensor itself, not a view of it
  std::vector<int32_t> dims;   ///< kTensor: its shape; kShape: the dims (ints)
  DataType dtype;              ///< kTensor
  std::vector<Ref> fields;     ///< kTuple
};

/// A node of the arguments, in preorder: what a call's argument must look like to replay.
struct ArgNode {
  ValueKind kind = ValueKind::kNone;
  DataType dtype;                 ///< kTensor
  Device device;                  ///< kTensor
  int32_t ndim = 0;               ///< kTensor, kShape
  std::vector<int32_t> children;  ///< kTuple: the fields' nodes
};

enum class StepKind : uint8_t { kStorage, kFresh, kZero, kKernel, kLibrary, kRelease };

struct Step {
  StepKind kind = StepKind::kKernel;
  int32_t function = 0;  ///< the VM function of the instruction (messages)
  int32_t index = 0;     ///< kStorage: the site; kKernel, kLibrary: the table index
  int32_t base = 0;      ///< kStorage, kFresh, kRelease, kZero: the base
  int32_t bytes = 0;     ///< kStorage, kZero: the int of the size
  int32_t offset = 0;    ///< kZero: the int of the byte offset
  int64_t alignment = 0; ///< kStorage
  int32_t first = 0;     ///< kKernel: kernel_args; kLibrary: library_args; kFresh: shape_pool
  int32_t count = 0;
  int32_t patch_first = 0;
  int32_t patch_count = 0;
  DataType dtype;        ///< kFresh
};

/// A per-call value written into a recorded kernel argument.
struct Patch {
  enum class Kind : uint8_t { kData, kShape, kArgShape, kInt, kFloat };
  Kind kind = Kind::kData;
  int32_t arg = 0;     ///< index into the plan's kernel_args
  int32_t source = 0;  ///< kData: the base; kArgShape, kFloat: the argument node
  int32_t value = 0;   ///< kData: the int of the byte offset; kShape: shape_pool; kInt: the int
};

struct Plan {
  std::vector<ArgNode> nodes;
  int32_t num_params = 0;
  int32_t num_bases = 0;  ///< nodes, then the storages and fresh tensors of the call
  std::vector<IntExpr> ints;
  std::vector<SymInstr> int_code;
  std::vector<Guard> guards;
  /// The ints gathered per call into one array: the shapes of kernel arguments and of fresh
  /// tensors, each a run of positions (identical runs shared).
  std::vector<int32_t> shape_pool;
  std::vector<Step> steps;
  std::vector<RelaxKernelArg> kernel_args;
  std::vector<Patch> patches;
  std::vector<Ref> library_args;
  std::vector<Value> keep_alive;  ///< constant tensors whose data, shapes and strides kernel args point into
  Ref result;
  int64_t kernel_calls = 0;
  /// The CUDA graphs of its replays (a plan recorded on a CUDA device), else null.
  std::shared_ptr<GraphCache> graphs;
  /// On a CUDA device, the steps a stream capture cannot hold (library calls that synchronise
  /// with the host: LibraryFunctionTraits::synchronises_host), in order: a replay captures the
  /// device work between them as one graph each and runs them directly (replay_graph.h).
  std::vector<int32_t> graph_breaks;
};

/// A plan's ints and shape pool for one binding.
struct Evaluated {
  std::vector<int64_t> ints;
  std::vector<int64_t> shapes;
};

/// The executable-wide tables a plan's steps call into; they outlive every plan.
struct Tables {
  const Executable* exec = nullptr;
  const std::vector<RelaxKernelFn>* kernels = nullptr;
  const std::vector<LibraryFunction>* library = nullptr;
  const std::vector<std::vector<int32_t>>* storage_site = nullptr;  // [function][pc]
  /// The executable's constants on its device (the VM's copies).
  const std::vector<Value>* constants = nullptr;
  /// Where the executable's tensors live.
  Device device = Device::cpu();
};

/// Records a plan while the VM interprets a call; the VM reports every instruction it ran.
/// Every int the recorder derives is checked against the one the VM computed; once something
/// is seen that cannot be replayed (or a derived int differs), the recorder is `aborted()` and
/// ignores the rest.
class Recorder {
 public:
  /// The most steps a plan may have; a longer call is not recorded.
  static constexpr size_t kMaxSteps = 1 << 20;

  /// Starts on `function` called with `params` (its registers 0..P-1), after its entry match
  /// bound the slots flagged in `bound` to `slots`.
  Recorder(const Tables& tables, int32_t function, std::span<const Value> params,
           std::span<const int64_t> slots, std::span<const uint8_t> bound);

  bool aborted() const { return aborted_; }
  /// Whether the arguments themselves cannot be replayed (a strided tensor): a property of
  /// this call, not of the function, so nothing is remembered about it.
  bool strided_argument() const { return strided_argument_; }

  /// After `ins` of `function` ran in a frame whose registers are `regs` and whose slots are
  /// `slots` (for the instructions not reported below).
  void after(int32_t function, const Instruction& ins, const std::vector<Value>& regs,
             std::span<const int64_t> slots);
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
    const VMFunction* fn = nullptr;
    std::vector<Ref> regs;
    std::vector<int32_t> slots;       // the int of each bound slot, else -1
    std::vector<int32_t> expr_ints;   // the int of each expr evaluated so far, else -1
    int32_t return_dst = -1;
  };
  // One pattern's dims matched against a value's (see match_group).
  struct MatchedDims {
    const ValuePattern* pattern;
    std::vector<int32_t> dims;
  };

  void abort() { aborted_ = true; }
  Ref& reg(int64_t r) { return frames_.back().regs[static_cast<size_t>(r)]; }
  Ref operand(const Operand& op, const Value& value);
  int32_t add_node(const Value& v);
  // The per-call memory of a tensor Ref: its base, offset int and dims; false for other Refs.
  bool location(const Ref& r, int32_t* base, int32_t* offset) const;
  Step& add_step(StepKind kind, int32_t function);
  int32_t new_base() { return plan_->num_bases++; }
  void add_releases();

  // ints: each made once (same content, same int), its value on the recorded call kept.
  int32_t add_int(const IntExpr& e, std::span<const SymInstr> code);
  int32_t constant(int64_t v);
  int32_t program(std::span<const SymInstr> code);  // operands: kSlot of ints
  int32_t binary(SymOp op, int32_t a, int32_t b);
  int32_t expr_int(int32_t expr);                     // exprs[expr] of the current frame
  int32_t operand_int(const Operand& op);             // kSym / kImm
  int32_t numel(std::span<const int32_t> dims);
  int32_t nbytes(std::span<const int32_t> dims, DataType dtype);
  // The int when it has the VM's value, else -1 (and aborted).
  int32_t checked(int32_t i, int64_t expected);
  void guard(int32_t i);  // ints[i] != 0 held on the recorded call, and must on a replayed one
  // The ints of the dims `p` reads from the value described by `r` (-1 entries: none).
  bool dims_of(const ValuePattern& p, const Ref& r, std::vector<int32_t>* dims);
  void match_group(const VMFunction& fn, const MatchGroup& g);
  void collect(const ValuePattern& p, const Ref& r, bool checked, std::vector<MatchedDims>* out);
  int32_t shape_run(std::span<const int32_t> dims);  // a run of shape_pool
  int32_t add_root(const IntExpr& e, int64_t value);
  int32_t arg_dim(int32_t node, int64_t dim);
  int32_t arg_int(int32_t node);
  bool tensor_dims(const Ref& r, std::vector<int32_t>* dims);  // of a tensor Ref
  bool same_dims(std::span<const int32_t> dims, std::span<const int64_t> shape);
  void require_fits(int32_t offset, std::span<const int32_t> dims, DataType dtype, int32_t size);

  const Tables& tables_;
  std::shared_ptr<Plan> plan_;
  std::vector<int64_t> values_;     // each int's value on the recorded call
  std::vector<Value> node_values_;  // each argument node's value on the recorded call
  absl::flat_hash_map<int64_t, bool> guarded_;  // ints guarded already, and how
  absl::flat_hash_map<std::string, int32_t> int_index_;
  absl::flat_hash_map<std::string, int32_t> shape_runs_;
  std::vector<Frame> frames_;
  bool aborted_ = false;
  bool strided_argument_ = false;
  bool returned_ = false;
};

/// Runs `code` (kSlot operands index `ints`) into `out`; false on overflow or division by
/// zero.
bool eval_program(std::span<const SymInstr> code, const int64_t* ints, int64_t* out);

/// Whether `params` have the structure `plan` was recorded with (kinds, dtypes, devices,
/// ranks, tuple sizes, compact tensors); fills `nodes` with the argument nodes, in the plan's
/// preorder. `strings`: whether string arguments are accepted.
bool bind_arguments(const Plan& plan, std::span<const Value> params, bool strings,
                    absl::InlinedVector<const Value*, 32>* nodes);

/// Computes `plan`'s ints for the call whose argument nodes are `nodes` and whose entry match
/// bound `slots`; false when one cannot be computed (overflow, division by zero) or a guard
/// fails: the call is not of the plan's class.
bool evaluate(const Plan& plan, std::span<const Value* const> nodes, std::span<const int64_t> slots,
              Evaluated* out);

class PlanCache;

/// Runs `plan` with the ints `values` (evaluate) on the arguments bound by bind_arguments, its
/// storages from `ctx`. A plan with graphs (a CUDA device) replays through them under the
/// options of `cache` (max_cuda_graphs), counted there; a null `cache` uses none.
absl::StatusOr<Value> run(const Plan& plan, const Evaluated& values, const Tables& tables,
                          std::span<const Value* const> nodes, ExecutionContext& ctx,
                          PlanCache* cache);

/// The plans of one module: per function, a bounded list of plans, each for a class of
/// bindings. Thread-safe; finding a plan takes a shared lock.
class PlanCache {
 public:
  explicit PlanCache(size_t num_functions);

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void set_options(const ReplayOptions& options);
  ReplayOptions options() const;
  ReplayStats stats() const;

  struct Lookup {
    std::shared_ptr<const Plan> plan;              ///< the plan whose class the call is in
    std::shared_ptr<const Evaluated> values;       ///< its ints for the call
    bool record = false;                           ///< when none: whether this call records one
    uint64_t generation = 0;                       ///< record: the options it records under
  };
  /// The plan of `function` for the call with arguments `params` whose entry match bound
  /// `slots`; fills `nodes` for it.
  Lookup lookup(int32_t function, std::span<const Value> params, std::span<const int64_t> slots,
                absl::InlinedVector<const Value*, 32>* nodes);
  /// The recording that lookup asked for ended: `plan` null when the call could not be
  /// recorded (the function is interpreted from then on), `abandoned` when the call failed or
  /// had a strided argument (nothing is learnt; a later call may record).
  void store(int32_t function, uint64_t generation, std::shared_ptr<const Plan> plan, bool abandoned);

  /// The plan and ints the calling thread last replayed for `function` of this cache, if the
  /// plan is still alive (evicted or forgotten plans die) and `nodes` (bound to it) are the
  /// arguments of that call in every dim and int: a call that is replays it without running
  /// the entry match (the arguments pass it as they did) or computing the ints; any
  /// difference (a bad argument among them) takes the full path, whose match reports it.
  std::shared_ptr<const Plan> hint(int32_t function, std::span<const Value> params,
                                   absl::InlinedVector<const Value*, 32>* nodes,
                                   std::shared_ptr<const Evaluated>* values) const;
  void set_hint(int32_t function, const std::shared_ptr<const Plan>& plan,
                std::span<const Value* const> nodes, std::shared_ptr<const Evaluated> values) const;

  void count_replayed() { replayed_.fetch_add(1, std::memory_order_relaxed); }
  /// ReplayOptions::max_cuda_graphs (0 when it is not positive).
  size_t max_cuda_graphs() const { return max_cuda_graphs_.load(std::memory_order_relaxed); }
  GraphCounters& graph_counters() { return graph_counters_; }
  void count_interpreted() { interpreted_.fetch_add(1, std::memory_order_relaxed); }

 private:
  struct Entry {
    std::shared_ptr<const Plan> plan;
    std::atomic<uint64_t> last_use{0};
  };
  struct Function {
    std::vector<std::unique_ptr<Entry>> entries;
    int32_t uncovered = 0;      // calls no plan covered since the last recording
    bool recording = false;     // a call is recording a plan now
    bool unrecordable = false;  // interpreted from now on
    uint64_t stored = 0;        // plans stored so far: a lookup that saw fewer missed a new one
  };

  std::atomic<bool> enabled_{true};
  std::atomic<size_t> max_cuda_graphs_{static_cast<size_t>(ReplayOptions{}.max_cuda_graphs)};
  GraphCounters graph_counters_;
  mutable std::shared_mutex mu_;
  ReplayOptions options_;
  std::vector<Function> functions_;
  std::atomic<uint64_t> clock_{0};
  uint64_t generation_ = 1;  // set_options counts up: recordings begun before it are dropped
  std::atomic<int64_t> replayed_{0}, interpreted_{0}, recorded_{0}, not_recordable_{0},
      argument_mismatches_{0}, guard_misses_{0}, evicted_{0};
};

}  // namespace relax::runtime::replay
