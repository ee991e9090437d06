// What operator fusion buys, fused (the default pipeline) against unfused (the
// same pipeline with fuse-ops disabled), in the same run.
//
//   - A Llama-style decoder layer (hidden 256, 4 heads of 64, SwiGLU MLP of 688)
//     with a KV cache: n new tokens attend to the m cached ones and to each
//     other under a causal mask (written out: permute, matmul, scale, triu
//     mask, softmax, matmul). One compilation per variant, symbolic in n and
//     m; cases prefill n = 128 and 512 (m = 0) and decode n = 1 (m = 512).
//   - The silu-mul chain sigmoid(x) * x * z over (n, 4096) float32 alone, at
//     n = 1, 64, 512: three kernels unfused, one fused; against the machine's
//     bandwidth for the same traffic measured here (a two-input, one-output
//     std::transform of the same size, BM_Bandwidth).
//
// Counters per case: kernel_calls (call_tir / call_dps_library executed per
// call of main, counted in the module the pipeline makes before its memory
// passes (lower-alloc and after), through graph functions if any
// are left) and bytes_between_kernels (the sum over those calls of the bytes
// of every input and output, their annotated shapes evaluated at the case's n
// and m). The unfused benchmark of each case also reports unfused / fused
// ratios (calls_ratio, bytes_ratio, time_ratio); the silu-mul ones report GB/s
// as 3 * n * 4096 * 4 / time (the traffic of the fused kernel) and its
// fraction of the measured bandwidth (`of_roofline`).
//
// Kernels are compiled for one thread (parallel loops are plain loops), and
// the times behind the counters are the benchmark thread's CPU time: the
// kernels run on that thread alone, so other processes sharing the cores
// (they inflate wall time) do not count into the ratios. Before timing, each
// case checks once that fused and unfused outputs agree to 1e-4 relative to
// the largest magnitude of each output, and aborts if not.
// RELAX_FUSION_BENCH_DUMP=<dir> writes the lowered modules there as text and
// compiles the kernels afresh into <dir>/cache, keeping their C++ sources.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "decoder_layer.h"
#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/printer.h"
#include "relax/transform/pipeline.h"

namespace {

using relax::DataType;
using relax::SymExpr;
using relax::SymVar;
using relax::runtime::Tensor;
using relax::runtime::Value;

constexpr int64_t kDim = 256, kHeads = 4, kHeadDim = 64, kFfn = 688;
constexpr int64_t kChainCols = 4096;

[[noreturn]] void fail(const std::string& message) { relax_bench::fail("fusion_bench", message); }

// ---------------------------------------------------------------------------
// Static kernel-call and traffic count of a lowered module.

using SizeEnv = std::map<std::string, int64_t>;  // symbolic variable name -> value

int64_t eval_dim(const SymExpr& e, const SizeEnv& env) {
  relax::SymVarMap<int64_t> bindings;
  for (const SymVar& v : relax::used_sym_vars(relax::prim_sinfo(DataType::int64(), e))) {
    auto it = env.find(v.name());
    if (it == env.end()) fail("no value for the symbolic variable " + v.name());
    bindings[v] = it->second;
  }
  absl::StatusOr<int64_t> value = relax::evaluate(e, bindings);
  if (!value.ok()) fail("cannot evaluate a dim: " + std::string(value.status().message()));
  return *value;
}

int64_t sinfo_bytes(const relax::StructInfo& sinfo, const SizeEnv& env) {
  if (const auto* t = sinfo.as<relax::TensorStructInfoNode>()) {
    if (!t->shape || !t->dtype) fail("a kernel argument without a known shape or dtype");
    int64_t elems = 1;
    for (const SymExpr& d : *t->shape) elems *= eval_dim(d, env);
    return elems * t->dtype->bits / 8 * t->dtype->lanes;
  }
  if (const auto* tuple = sinfo.as<relax::TupleStructInfoNode>()) {
    int64_t total = 0;
    for (const relax::StructInfo& f : tuple->fields) total += sinfo_bytes(f, env);
    return total;
  }
  return 0;  // scalars and shapes travel as arguments, not through memory
}

struct Traffic {
  int64_t kernel_calls = 0;
  int64_t bytes = 0;
};

void count_function(const relax::IRModule& mod, const relax::FunctionNode& fn, const SizeEnv& env,
                    Traffic& traffic);

// The sizes of a graph function's own symbolic variables at a call: its
// parameters' plain-variable dims take the arguments' evaluated dims.
SizeEnv callee_env(const relax::FunctionNode& callee, const relax::CallNode& call, const SizeEnv& env) {
  SizeEnv inner;
  for (size_t i = 0; i < callee.params.size() && i < call.args.size(); ++i) {
    std::optional<std::vector<SymExpr>> formal, actual;
    if (const auto* t = callee.params[i].struct_info().as<relax::TensorStructInfoNode>()) formal = t->shape;
    if (const auto* s = callee.params[i].struct_info().as<relax::ShapeStructInfoNode>()) formal = s->values;
    if (const auto* t = call.args[i].struct_info().as<relax::TensorStructInfoNode>()) actual = t->shape;
    if (const auto* s = call.args[i].struct_info().as<relax::ShapeStructInfoNode>()) actual = s->values;
    if (!formal || !actual || formal->size() != actual->size()) continue;
    for (size_t d = 0; d < formal->size(); ++d) {
      if ((*formal)[d].is_var()) inner[SymVar::from_expr((*formal)[d]).name()] = eval_dim((*actual)[d], env);
    }
  }
  return inner;
}

void count_call(const relax::IRModule& mod, const relax::CallNode& call, const SizeEnv& env, Traffic& traffic) {
  if (const auto* op = call.callee.as<relax::OpNode>()) {
    if (op->name != "call_tir" && op->name != "call_tir_inplace" && op->name != "call_dps_library") return;
    ++traffic.kernel_calls;
    traffic.bytes += sinfo_bytes(call.args.at(1).struct_info(), env);
    traffic.bytes += sinfo_bytes(call.sinfo_args.at(0), env);
    return;
  }
  if (const auto* gv = call.callee.as<relax::GlobalVarNode>()) {
    if (const auto* callee = mod.lookup(gv->name).as<relax::FunctionNode>()) {
      count_function(mod, *callee, callee_env(*callee, call, env), traffic);
    }
  }
}

void count_function(const relax::IRModule& mod, const relax::FunctionNode& fn, const SizeEnv& env,
                    Traffic& traffic) {
  const auto* seq = fn.body.as<relax::SeqExprNode>();
  if (seq == nullptr) fail("a function body that is not a SeqExpr");
  for (const relax::BindingBlock& block : seq->blocks) {
    for (const relax::Binding& b : block.bindings) {
      if (b.value.as<relax::IfNode>() != nullptr) fail("control flow in a counted function");
      if (const auto* call = b.value.as<relax::CallNode>()) count_call(mod, *call, env, traffic);
    }
  }
}

Traffic count_traffic(const relax::IRModule& lowered, const SizeEnv& env) {
  const auto* main = lowered.lookup("main").as<relax::FunctionNode>();
  if (main == nullptr) fail("no main in the lowered module");
  Traffic traffic;
  count_function(lowered, *main, env, traffic);
  return traffic;
}

// ---------------------------------------------------------------------------
// Compilation, fused and unfused.

struct Compiled {
  relax::runtime::Module module;
  relax::IRModule lowered;  // before the memory passes: what the counters read
};

Compiled compile(const relax::IRModule& mod, bool fused, const std::string& name) {
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  target.threads = 1;
  if (const char* dir = std::getenv("RELAX_FUSION_BENCH_DUMP")) {
    target.cache_dir = (std::filesystem::path(dir) / "cache").string();  // compiled afresh, sources kept
    target.keep_source = true;
  }
  relax::transform::PassContext ctx;
  if (!fused) ctx.disable_pass("fuse-ops");
  relax::BuildInfo info;
  absl::StatusOr<relax::runtime::Module> m =
      relax::build(mod, target, relax::transform::default_pipeline(target), ctx, &info);
  if (!m.ok()) fail(name + ": build failed: " + std::string(m.status().message()));
  if (const char* dir = std::getenv("RELAX_FUSION_BENCH_DUMP")) {
    std::ofstream(std::filesystem::path(dir) / (name + (fused ? "_fused.txt" : "_unfused.txt")))
        << relax::to_text(info.lowered);
  }
  // The calls are counted in the form before lower-alloc (call_tir with implicit outputs), so
  // that a scratch buffer lift-workspace turns into a destination does not count as traffic
  // between kernels: the same pipeline without the three memory passes at its end.
  relax::transform::PassManager counted = relax::transform::default_pipeline(target);
  for (const char* pass : {"lower-alloc", "lift-workspace", "plan-memory"}) {
    if (!counted.remove(pass).ok()) fail(std::string("the default pipeline has no ") + pass);
  }
  relax::transform::PassContext count_ctx;
  if (!fused) count_ctx.disable_pass("fuse-ops");
  absl::StatusOr<relax::IRModule> before_alloc = counted.run(mod, count_ctx);
  if (!before_alloc.ok()) fail(name + ": " + std::string(before_alloc.status().message()));
  return {*m, *before_alloc};
}

Tensor random_tensor(std::vector<int64_t> shape, float scale, uint32_t seed) {
  Tensor t = *Tensor::empty(std::move(shape), DataType::float32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as_or_die<float>()[i] = d(rng);
  return t;
}

void flatten_tensors(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    out.push_back(v.tensor_or_die());
  } else if (v.is_tuple()) {
    for (const Value& f : v.fields_or_die()) flatten_tensors(f, out);
  }
}

// Aborts unless the two results agree to 1e-4 of the largest magnitude of each output.
void check_agree(const Value& fused, const Value& unfused, const std::string& what) {
  std::vector<Tensor> a, b;
  flatten_tensors(fused, a);
  flatten_tensors(unfused, b);
  if (a.size() != b.size() || a.empty()) fail(what + ": fused and unfused give different outputs");
  for (size_t t = 0; t < a.size(); ++t) {
    if (a[t].shape() != b[t].shape()) fail(what + ": output " + std::to_string(t) + " shapes differ");
    const float* pa = a[t].data_as_or_die<float>();
    const float* pb = b[t].data_as_or_die<float>();
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < b[t].numel(); ++i) {
      if (!std::isfinite(pa[i]) || !std::isfinite(pb[i])) fail(what + ": a non-finite output");
      scale = std::max(scale, std::fabs(static_cast<double>(pb[i])));
      worst = std::max(worst, std::fabs(static_cast<double>(pa[i]) - pb[i]));
    }
    if (worst > 1e-4 * scale) {
      fail(what + ": fused and unfused disagree in output " + std::to_string(t) + ": max error " +
           std::to_string(worst) + " against magnitude " + std::to_string(scale));
    }
  }
}

// Seconds per call of the fused variant of each case, for the ratio the
// unfused benchmark (registered after it) reports.
std::map<std::string, std::pair<double, Traffic>>& fused_results() {
  static std::map<std::string, std::pair<double, Traffic>> results;
  return results;
}

using relax_bench::thread_seconds;

// Runs `call` under `state`, returning thread CPU seconds per iteration.
template <typename F>
double time_loop(benchmark::State& state, F&& call) {
  const double start = thread_seconds();
  for (auto _ : state) {
    absl::StatusOr<Value> r = call();
    benchmark::DoNotOptimize(r);
  }
  return (thread_seconds() - start) / static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
}

void report(benchmark::State& state, const std::string& key, bool fused, double seconds, const Traffic& traffic) {
  state.counters["kernel_calls"] = static_cast<double>(traffic.kernel_calls);
  state.counters["bytes_between_kernels"] = static_cast<double>(traffic.bytes);
  if (fused) {
    fused_results()[key] = {seconds, traffic};
    return;
  }
  auto it = fused_results().find(key);
  if (it == fused_results().end()) return;  // the fused case was filtered out
  state.counters["calls_ratio"] = static_cast<double>(traffic.kernel_calls) / it->second.second.kernel_calls;
  state.counters["bytes_ratio"] = static_cast<double>(traffic.bytes) / static_cast<double>(it->second.second.bytes);
  state.counters["time_ratio"] = seconds / it->second.first;
}

// ---------------------------------------------------------------------------
// The decoder layer.

relax::IRModule decoder_layer() {
  relax_bench::DecoderLayerShape shape{kDim, kHeads, kHeadDim, kFfn, /*batched=*/false, {{"n", 1024}, {"m", 1024}}};
  return relax_bench::decoder_layer(shape, "fusion_bench");
}

const Compiled& decoder(bool fused) {
  static const Compiled fused_layer = compile(decoder_layer(), true, "decoder");
  static const Compiled unfused_layer = compile(decoder_layer(), false, "decoder");
  return fused ? fused_layer : unfused_layer;
}

std::vector<Value> decoder_inputs(int64_t n, int64_t m) {
  const float w = 1.0f / std::sqrt(static_cast<float>(kDim));
  Tensor positions = *Tensor::empty({n}, DataType::int64());
  for (int64_t i = 0; i < n; ++i) positions.data_as_or_die<int64_t>()[i] = m + i;
  Tensor norm1 = random_tensor({kDim}, 0.1f, 5), norm2 = random_tensor({kDim}, 0.1f, 6);
  for (int64_t i = 0; i < kDim; ++i) {
    norm1.data_as_or_die<float>()[i] += 1.0f;
    norm2.data_as_or_die<float>()[i] += 1.0f;
  }
  return {Value(random_tensor({n, kDim}, 1.0f, 1)),
          Value(positions),
          Value(random_tensor({1, m, kHeads, kHeadDim}, 1.0f, 2)),
          Value(random_tensor({1, m, kHeads, kHeadDim}, 1.0f, 3)),
          Value(norm1),
          Value(random_tensor({kDim, kDim}, w, 7)),
          Value(random_tensor({kDim, kDim}, w, 8)),
          Value(random_tensor({kDim, kDim}, w, 9)),
          Value(random_tensor({kDim, kDim}, w, 10)),
          Value(norm2),
          Value(random_tensor({kDim, kFfn}, w, 11)),
          Value(random_tensor({kDim, kFfn}, w, 12)),
          Value(random_tensor({kFfn, kDim}, 1.0f / std::sqrt(static_cast<float>(kFfn)), 13))};
}

void BM_DecoderLayer(benchmark::State& state, bool fused) {
  const int64_t n = state.range(0), m = state.range(1);
  const std::string key = "decoder/" + std::to_string(n) + "/" + std::to_string(m);
  const std::vector<Value> inputs = decoder_inputs(n, m);
  const relax::runtime::Function fn = decoder(fused).module["main"];
  static std::map<std::string, bool> checked;
  if (!checked[key]) {
    absl::StatusOr<Value> a = decoder(true).module["main"].call(inputs);
    absl::StatusOr<Value> b = decoder(false).module["main"].call(inputs);
    if (!a.ok() || !b.ok()) fail(key + ": a call failed: " + a.status().ToString() + " / " + b.status().ToString());
    check_agree(*a, *b, key);
    checked[key] = true;
  }
  const Traffic traffic = count_traffic(decoder(fused).lowered, {{"n", n}, {"m", m}});
  const double seconds = time_loop(state, [&] { return fn.call(inputs); });
  report(state, key, fused, seconds, traffic);
  state.SetLabel(fused ? "fused" : "unfused");
}

// ---------------------------------------------------------------------------
// The silu-mul chain.

relax::IRModule silu_mul_chain() {
  SymVar n("n");
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n, kChainCols}, DataType::float32()));
  relax::Var z = f.param("z", relax::tensor_sinfo({n, kChainCols}, DataType::float32()));
  f.upper_bound(n, 1024);
  relax::Var out;
  {
    auto df = f.dataflow();
    // silu written out as sigmoid(x) * x: three kernels before fusion (op::silu legalizes to one).
    relax::Var s = f.emit(relax::op::sigmoid(x));
    relax::Var sx = f.emit(relax::op::multiply(x, s));
    out = f.emit_output(relax::op::multiply(sx, z), "out");
  }
  f.ret(out);
  absl::StatusOr<relax::IRModule> mod = mb.build();
  if (!mod.ok()) fail("silu-mul chain: " + std::string(mod.status().message()));
  return *mod;
}

const Compiled& chain(bool fused) {
  static const Compiled fused_chain = compile(silu_mul_chain(), true, "silu_mul");
  static const Compiled unfused_chain = compile(silu_mul_chain(), false, "silu_mul");
  return fused ? fused_chain : unfused_chain;
}

// The bytes the fused chain moves: x and z read, the result written.
double chain_bytes(int64_t n) { return 3.0 * static_cast<double>(n * kChainCols) * sizeof(float); }

// Bytes per second of a two-input, one-output pass over (n, 4096) floats, by n.
std::map<int64_t, double>& bandwidth() {
  static std::map<int64_t, double> measured;
  return measured;
}

void BM_Bandwidth(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor x = random_tensor({n, kChainCols}, 1.0f, 21), z = random_tensor({n, kChainCols}, 1.0f, 22);
  std::vector<float> out(static_cast<size_t>(n * kChainCols));
  const float* px = x.data_as_or_die<float>();
  const float* pz = z.data_as_or_die<float>();
  const double start = thread_seconds();
  for (auto _ : state) {
    std::transform(px, px + n * kChainCols, pz, out.begin(), [](float a, float b) { return a * b; });
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const double seconds = (thread_seconds() - start) / static_cast<double>(state.iterations());
  bandwidth()[n] = chain_bytes(n) / seconds;
  state.counters["GB/s"] = chain_bytes(n) / seconds / 1e9;
  state.SetLabel("std::transform x * z, 2 reads + 1 write");
}

void BM_SiluMul(benchmark::State& state, bool fused) {
  const int64_t n = state.range(0);
  const std::string key = "silu_mul/" + std::to_string(n);
  Tensor x = random_tensor({n, kChainCols}, 4.0f, 23), z = random_tensor({n, kChainCols}, 1.0f, 24);
  const relax::runtime::Function fn = chain(fused).module["main"];
  static std::map<int64_t, bool> checked;
  if (!checked[n]) {
    absl::StatusOr<Value> a = chain(true).module["main"](x, z);
    absl::StatusOr<Value> b = chain(false).module["main"](x, z);
    if (!a.ok() || !b.ok()) fail(key + ": a call failed: " + a.status().ToString() + " / " + b.status().ToString());
    check_agree(*a, *b, key);
    checked[n] = true;
  }
  const Traffic traffic = count_traffic(chain(fused).lowered, {{"n", n}});
  const double seconds = time_loop(state, [&] { return fn(x, z); });
  report(state, key, fused, seconds, traffic);
  state.counters["GB/s"] = chain_bytes(n) / seconds / 1e9;
  if (auto it = bandwidth().find(n); it != bandwidth().end()) {
    state.counters["of_roofline"] = chain_bytes(n) / seconds / it->second;
  }
  state.SetLabel(fused ? "fused" : "unfused");
}

void decoder_cases(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "m"})->Args({128, 0})->Args({512, 0})->Args({1, 512})->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_DecoderLayer, fused, true)->Apply(decoder_cases);
BENCHMARK_CAPTURE(BM_DecoderLayer, unfused, false)->Apply(decoder_cases);
BENCHMARK(BM_Bandwidth)->ArgName("n")->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SiluMul, fused, true)->ArgName("n")->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SiluMul, unfused, false)->ArgName("n")->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

}  // namespace
