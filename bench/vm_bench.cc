// The VM's per-call overhead: calls per second of a tiny function -- match
// the arguments, allocate the output, one library call (an elementwise add),
// return -- with runtime checks on (MatchGroup::checked: dtype, rank, the
// bound dim of x and the checked dim of y) and off (bind only), against
// allocating the output and calling the library function directly. Three
// tensor sizes, so that the fixed cost shows against the work.
//
// BM_VMChain: the cost per binding of one call of a function of N chained
// bindings (v_{i+1} = v_i + x through the same library add, 16 floats), made
// by the VM code generator, at N = 1k, 10k and 100k. With register liveness
// every intermediate goes back to the pool after its last use, so the cost
// per binding should stay flat as N grows.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "relax/codegen/vm_codegen.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/runtime/module.h"

namespace {

using relax::DataType;
using namespace relax::runtime;  // NOLINT(google-build-using-namespace)

absl::Status add_f32(const std::vector<Value>& args) {
  const Tensor& a = args[0].tensor_or_die();
  const Tensor& b = args[1].tensor_or_die();
  const Tensor& out = args[2].tensor_or_die();
  const float* x = a.data_as_or_die<float>();
  const float* y = b.data_as_or_die<float>();
  float* z = out.data_as_or_die<float>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) z[i] = x[i] + y[i];
  return absl::OkStatus();
}

// main(x: Tensor[(n,), float32], y: Tensor[(n,), float32]) = bench.add_f32(x, y) into a new tensor.
Executable add_program(bool checked) {
  VMFunction fn;
  fn.name = "main";
  fn.param_names = {"x", "y"};
  fn.num_registers = 3;
  fn.slot_names = {"n"};
  fn.exprs = {SymProgram{{{SymOp::kSlot, 0}}, "n"}};
  ValuePattern x;
  x.kind = PatternKind::kTensor;
  x.dtype = DataType::float32();
  x.ndim = 1;
  x.dims = {DimPattern{DimRule::kBind, 0, 1, -1, "n"}};
  ValuePattern y = x;
  y.dims = {DimPattern{DimRule::kCheck, -1, 1, 0, "n"}};
  fn.patterns = {x, y};
  fn.matches = {MatchGroup{{{0, 0, "argument x"}, {1, 1, "argument y"}}, checked, {}}};
  auto instruction = [](Opcode op) {
    Instruction ins;
    ins.op = op;
    return ins;
  };
  Instruction match = instruction(Opcode::kMatch);
  Instruction alloc = instruction(Opcode::kAllocTensor);
  alloc.dst = 2;
  alloc.dtype = DataType::float32();
  alloc.operands = {{Operand::Kind::kSym, 0}};
  Instruction call = instruction(Opcode::kCallLibrary);
  call.operands = {{Operand::Kind::kReg, 0}, {Operand::Kind::kReg, 1}, {Operand::Kind::kReg, 2}};
  Instruction ret = instruction(Opcode::kRet);
  ret.operands = {{Operand::Kind::kReg, 2}};
  fn.code = {match, alloc, call, ret};
  Executable exec;
  exec.functions = {fn};
  exec.library_functions = {"bench.add_f32"};
  return exec;
}

Tensor filled(int64_t n, float v) {
  Tensor t = *Tensor::empty({n}, DataType::float32());
  for (int64_t i = 0; i < n; ++i) t.data_as_or_die<float>()[i] = v;
  return t;
}

void run_vm(benchmark::State& state, bool checked) {
  register_library_function("bench.add_f32", add_f32);
  absl::StatusOr<Module> m = Module::create(add_program(checked), nullptr);
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  const Function main = (*m)["main"];
  const int64_t n = state.range(0);
  const Value x = filled(n, 1), y = filled(n, 2);
  for (auto _ : state) {
    absl::StatusOr<Value> out = main(x, y);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out->tensor_or_die().data());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_VMChecked(benchmark::State& state) { run_vm(state, true); }
void BM_VMUnchecked(benchmark::State& state) { run_vm(state, false); }

// The baseline: what the VM call does minus the VM.
void BM_DirectCall(benchmark::State& state) {
  register_library_function("bench.add_f32", add_f32);
  const LibraryFunction& fn = *find_library_function("bench.add_f32");
  const int64_t n = state.range(0);
  const Value x = filled(n, 1), y = filled(n, 2);
  for (auto _ : state) {
    absl::StatusOr<Tensor> out = Tensor::empty({n}, DataType::float32());
    if (!out.ok() || !fn({x, y, Value(*out)}).ok()) {
      state.SkipWithError("direct call failed");
      return;
    }
    benchmark::DoNotOptimize(out->data());
  }
  state.SetItemsProcessed(state.iterations());
}

// main(x: Tensor[(n,), float32]) with `length` chained adds, compiled once per length.
const Module& chain_module(int64_t length) {
  static std::map<int64_t, Module> modules;
  auto it = modules.find(length);
  if (it != modules.end()) return it->second;
  relax::SymVar n("n");
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n}, DataType::float32()));
  relax::Var v = x;
  for (int64_t i = 0; i < length; ++i) {
    v = f.emit(relax::op::call_dps_library("bench.add_f32", {v, x}, relax::tensor_sinfo({n}, DataType::float32())));
  }
  f.ret(v);
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "chain module: %s\n", std::string(s.message()).c_str());
    std::abort();
  };
  absl::StatusOr<relax::IRModule> mod = mb.build();
  if (!mod.ok()) fail(mod.status());
  absl::StatusOr<Executable> exec = relax::compile_to_executable(*mod);
  if (!exec.ok()) fail(exec.status());
  absl::StatusOr<Module> m = Module::create(*std::move(exec), nullptr);
  if (!m.ok()) fail(m.status());
  return modules.emplace(length, *std::move(m)).first->second;
}

void BM_VMChain(benchmark::State& state) {
  register_library_function("bench.add_f32", add_f32);
  const int64_t length = state.range(0);
  const Function main = chain_module(length)["main"];
  const Value x = filled(16, 1);
  absl::StatusOr<Value> check = main(x);
  if (!check.ok() || check->tensor_or_die().data_as_or_die<float>()[0] != static_cast<float>(length + 1)) {
    state.SkipWithError("wrong result");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(main(x));
  state.counters["per_binding"] = benchmark::Counter(static_cast<double>(state.iterations() * length),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_VMChain)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

BENCHMARK(BM_VMChecked)->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK(BM_VMUnchecked)->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK(BM_DirectCall)->Arg(16)->Arg(256)->Arg(4096);

}  // namespace
