// Private to the runtime: the VirtualMachine that runs an Executable, and the
// per-entry program checks it relies on (shared by Executable::validate and
// Executable::deserialize, which adds byte offsets to their messages).
//
// The VM interprets one call at a time on an explicit stack of frames (so
// deep kCallFunc recursion is a depth-limit error, not a C++ stack overflow).
// A frame holds the function's registers and its int64 symbolic slots with
// their bound flags; nothing is shared between calls except through the
// ExecutionContext each call runs on (which serves one call at a time), so
// one VirtualMachine serves any number of threads at once.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vm/builtins.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/kernel_abi.h"
#include "relax/runtime/module.h"
#include "relax/runtime/value.h"
#include "replay/replay_plan.h"

namespace relax::runtime {

namespace program_check {

/// The sizes of the executable-wide tables that instructions index.
struct TableSizes {
  size_t functions = 0;
  size_t kernels = 0;
  size_t library_functions = 0;
  size_t builtin_functions = 0;
  size_t constants = 0;
  /// The constants themselves, when read already (kAllocTensorAt names a string one).
  const std::vector<Value>* constant_values = nullptr;
};

/// "match", "load_const", ... ("opcode 200" when out of range).
std::string opcode_name(Opcode op);
/// "const", "slot", "add", ... ("op 200" when out of range).
std::string sym_op_name(SymOp op);

// Each check returns the empty string when the entry is valid, else what is
// wrong with it ("register 9 out of range (4 registers)").
std::string check_data_type(const DataType& dtype);
/// A CPU or CUDA device of index >= 0.
std::string check_device(const Device& device);
std::string check_constant(const Value& value, int depth = 0);
/// Before the function's tables are read: registers against parameters.
std::string check_function_header(const VMFunction& fn);
std::string check_sym_program(const SymProgram& program, size_t num_slots);
/// `fn`'s slots and exprs must be complete.
std::string check_pattern(const ValuePattern& pattern, const VMFunction& fn, int depth = 0);
/// `fn`'s registers and patterns must be complete.
std::string check_match_group(const MatchGroup& group, const VMFunction& fn);
/// `fn`'s tables before code must be complete; `code_size` bounds jump targets.
std::string check_instruction(const Instruction& ins, const VMFunction& fn, size_t code_size,
                              const TableSizes& tables);
/// After the code: it is not empty and ends in kRet or kGoto.
std::string check_code_end(const VMFunction& fn);

}  // namespace program_check

class VirtualMachine {
 public:
  /// Calls nested deeper than this (kCallFunc) fail instead of growing further.
  static constexpr size_t kMaxCallDepth = 10000;

  /// `exec` must be valid (Executable::validate) and outlive the VM; kernels
  /// and library functions are resolved already, one per name of the
  /// executable's tables, in order. `constants` are the executable's, on its device
  /// (Module::create uploads them): the VM reads these, never exec->constants.
  VirtualMachine(const Executable* exec, std::vector<RelaxKernelFn> kernels,
                 std::vector<LibraryFunction> library, std::vector<BuiltinFunction> builtins,
                 std::vector<Value> constants);

  /// Runs functions[function] on `args`, its alloc_storage instructions served by `ctx`
  /// (which the caller has bound to this VM's module with num_storage_sites() and device()).
  /// Every tensor argument must be on device(): InvalidArgument naming the function, the
  /// argument and both devices otherwise. Thread-safe
  /// for calls on different contexts. With replay on, a call whose binding is in the class of
  /// a recorded plan replays it (relax/runtime/replay.h), and a call that records one is
  /// interpreted with a Recorder watching.
  absl::StatusOr<Value> invoke(int32_t function, std::vector<Value> args, ExecutionContext& ctx) const;

  /// The recorded plans of the executable's functions (thread-safe).
  replay::PlanCache& plans() const { return *plans_; }

  /// The alloc_storage instructions of the executable: the sites an ExecutionContext keeps
  /// storages for.
  size_t num_storage_sites() const { return num_storage_sites_; }
  /// Where the executable's tensors live (Executable::device).
  Device device() const { return exec_->device; }

 private:
  struct Frame;
  struct MatchPath;
  struct MatchContext;
  // Whether a match group has kSolve / kCheck dims (else its phase is skipped).
  struct GroupInfo {
    bool has_solve = false;
    bool has_check = false;
  };

  static void push_frame(std::vector<Frame>& stack, const Executable& exec, int32_t f,
                         std::vector<Value>&& call_args, int32_t return_dst);
  // The interpreter loop over `stack` (its bottom frame is the call's), from each frame's pc.
  absl::StatusOr<Value> interpret(std::vector<Frame>& stack, ExecutionContext& ctx,
                                  replay::Recorder* rec) const;
  absl::Status check_arity(const VMFunction& fn, size_t num_args) const;
  // Every tensor of the arguments (through tuples) is on the executable's device.
  absl::Status check_devices(const VMFunction& fn, std::span<const Value> args) const;
  // Replaces every strided tensor of the arguments (through tuples) by a compact copy on its
  // device: kernels and library functions take compact buffers only. InvalidArgument naming
  // the argument, its shape and strides when the copy cannot be made.
  static absl::Status compact_arguments(const VMFunction& fn, std::vector<Value>& args);
  absl::StatusOr<int64_t> eval(const Frame& frame, int32_t expr, const std::string& context) const;
  absl::StatusOr<Value> operand_value(const Frame& frame, const Operand& op) const;
  absl::StatusOr<int64_t> operand_int(const Frame& frame, const Operand& op) const;

  static std::string subject(const MatchContext& ctx);
  absl::Status run_match(Frame& frame, int32_t group) const;
  absl::Status match_structure(Frame& frame, const ValuePattern& p, const Value& v,
                               const MatchContext& ctx) const;
  // The kSolve / kCheck phase over the dims of one (non-tuple) pattern.
  using DimsPhase = absl::Status (VirtualMachine::*)(Frame&, const ValuePattern&,
                                                     std::span<const int64_t>,
                                                     const MatchContext&) const;
  // Runs `phase` on `p` and on every tuple field below it that has dims.
  absl::Status match_dims(Frame& frame, const ValuePattern& p, const Value& v,
                          const MatchContext& ctx, DimsPhase phase) const;
  absl::Status solve_dims(Frame& frame, const ValuePattern& p, std::span<const int64_t> dims,
                          const MatchContext& ctx) const;
  absl::Status check_dims(Frame& frame, const ValuePattern& p, std::span<const int64_t> dims,
                          const MatchContext& ctx) const;

  absl::Status call_kernel(const Frame& frame, const Instruction& ins, replay::Recorder* rec) const;
  absl::Status call_library(const Frame& frame, const Instruction& ins, replay::Recorder* rec) const;
  absl::StatusOr<Value> call_builtin(const Frame& frame, const Instruction& ins) const;
  absl::StatusOr<bool> condition(const Frame& frame, const Operand& op) const;
  // kAllocStorage, kAllocTensorAt, kView (explicit allocation).
  absl::StatusOr<Value> alloc_storage(const Frame& frame, const Instruction& ins,
                                      ExecutionContext& ctx) const;
  absl::StatusOr<Value> alloc_tensor_at(const Frame& frame, const Instruction& ins) const;
  absl::StatusOr<Value> view(const Frame& frame, const Instruction& ins) const;

  const Executable* exec_;
  bool on_host_ = true;  // exec_->device is the CPU
  std::vector<Value> constants_;  // exec_->constants on exec_->device
  std::vector<RelaxKernelFn> kernels_;
  std::vector<LibraryFunction> library_;
  std::vector<BuiltinFunction> builtins_;
  std::vector<std::vector<GroupInfo>> groups_;  // [function][match group]
  std::vector<std::vector<int32_t>> storage_site_;  // [function][pc]: the site of a kAllocStorage
  size_t num_storage_sites_ = 0;
  // [function]: the match group of the function's first instruction when it matches only
  // parameters (the argument checks that bind the call's symbolic variables), else -1.
  std::vector<int32_t> entry_group_;
  replay::Tables tables_;  // what recorded plans call into
  std::unique_ptr<replay::PlanCache> plans_;
};

}  // namespace relax::runtime
