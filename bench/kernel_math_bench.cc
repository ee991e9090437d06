// silu(x) * z over float32 vectors: the generated kernel with relax/support/
// kernel_math.h's vectorisable sigmoid against the libm spelling it replaced,
// against the memory roofline, and g++ against clang++-14, in one run.
//
// relax::build compiles main(x, z) = silu(x) * z (one fused kernel, one
// thread); its kept source is then compiled again in variants:
//   vec       as generated (relax::vec_sigmoid, inline and branch-free);
//   libm      relax::vec_sigmoid(v) replaced by 1.0f / (1.0f + std::exp(-v)),
//             the spelling before kernel_math.h (a scalar expf call);
//   restrict  vec with every buffer pointer __restrict__ (true here: x, z and
//             the output are distinct; not emitted by the code generator,
//             which cannot know it -- see the report);
//   aligned   vec with every data pointer __builtin_assume_aligned(p, 64);
// each by g++ and by clang++-14 (when installed). The roofline is the
// generated kernel of x * z: the same 12 bytes per element and no math.
// `module` calls the compiled module's main (vec, the default compiler), to
// show that the VM's share is nil at these sizes. Bytes per second count x, z
// and the output once each.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/prim_func.h"
#include "relax/runtime/kernel_library.h"

namespace {

using relax::DataType;
using relax::runtime::Tensor;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "kernel_math_bench: %s\n", what.c_str());
  std::abort();
}

relax::Target bench_target(const std::string& compiler) {
  relax::Target target;
  target.cache_dir = (std::filesystem::temp_directory_path() / "relax_bench_cache").string();
  target.threads = 1;
  target.keep_source = true;
  target.compiler = compiler;
  return target;
}

/// main(x, z) = silu(x) * z, or x * z for the roofline.
relax::IRModule silu_mul_module(bool with_silu) {
  relax::SymVar n("n");
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n}, DataType::float32()));
  relax::Var z = f.param("z", relax::tensor_sinfo({n}, DataType::float32()));
  relax::Var out;
  {
    auto df = f.dataflow();  // so that fuse-ops makes one kernel of silu and multiply
    relax::Expr gate = with_silu ? relax::Expr(f.emit(relax::op::silu(x))) : relax::Expr(x);
    out = f.emit_output(relax::op::multiply(gate, z), "out");
  }
  f.ret(out);
  absl::StatusOr<relax::IRModule> mod = mb.build();
  if (!mod.ok()) die(std::string(mod.status().message()));
  return *mod;
}

/// `source` with `call(arg)` replaced by `before + arg + after` everywhere.
std::string replace_calls(std::string source, const std::string& call, const std::string& before,
                          const std::string& after) {
  for (size_t at = source.find(call); at != std::string::npos; at = source.find(call, at)) {
    size_t end = at + call.size();
    for (int depth = 1; depth > 0; ++end) depth += source[end] == '(' ? 1 : source[end] == ')' ? -1 : 0;
    const std::string arg = source.substr(at + call.size(), end - 1 - at - call.size());
    const std::string text = before + arg + after;
    source.replace(at, end - at, text);
    at += text.size();
  }
  return source;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

struct Kernel {
  std::shared_ptr<const relax::runtime::KernelLibrary> library;
  RelaxKernelFn fn = nullptr;
  relax::runtime::Module module;
};

enum Variant : int { kVec, kLibm, kRestrict, kAligned, kRoofline, kModule };
const char* const kVariantNames[] = {"vec", "libm", "restrict", "aligned", "roofline", "module"};
const char* const kCompilers[] = {"g++", "clang++-14"};

const Kernel& kernel(int variant, int compiler) {
  static std::map<std::pair<int, int>, Kernel> kernels;
  auto it = kernels.find({variant, compiler});
  if (it != kernels.end()) return it->second;
  const relax::Target target = bench_target(kCompilers[compiler]);
  relax::BuildInfo info;
  absl::StatusOr<relax::runtime::Module> built =
      relax::build(silu_mul_module(variant != kRoofline), target, &info);
  if (!built.ok()) die(std::string(built.status().message()));
  Kernel k;
  k.module = *built;
  std::string name;
  std::string names;
  for (const auto& [fn_name, fn] : info.lowered.functions()) {
    if (fn.as<relax::PrimFuncNode>() == nullptr) continue;
    names += " " + fn_name;
    if (!name.empty()) die("main(x, z) has more than one kernel after fusion:" + names);
    name = fn_name;
  }
  std::ifstream in(info.source_path);
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str();
  if (source.empty()) die("no kept source at " + info.source_path);
  if (variant == kLibm) {
    source = replace_calls(source, "relax::vec_sigmoid(", "(1.0f / (1.0f + std::exp(-(", "))))");
  } else if (variant == kRestrict) {
    source = replace_all(source, "float* const ", "float* __restrict__ const ");
  } else if (variant == kAligned) {
    source = replace_calls(source, "static_cast<float*>(", "static_cast<float*>(__builtin_assume_aligned(",
                           ", 64))");
  }
  absl::StatusOr<relax::CompiledLibrary> compiled = relax::compile_shared_object(source, target);
  if (!compiled.ok()) die(std::string(compiled.status().message()));
  auto library = relax::runtime::KernelLibrary::open(compiled->library_path);
  if (!library.ok()) die(std::string(library.status().message()));
  k.library = *library;
  absl::StatusOr<RelaxKernelFn> fn = k.library->find(name);
  if (!fn.ok()) die(std::string(fn.status().message()));
  k.fn = *fn;
  return kernels.emplace(std::make_pair(variant, compiler), k).first->second;
}

Tensor filled(int64_t n, int seed) {
  Tensor t = *Tensor::empty({n}, DataType::float32());
  float* p = t.data_as_or_die<float>();
  uint32_t s = static_cast<uint32_t>(seed) * 2654435761u + 1;
  for (int64_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    p[i] = static_cast<float>(s % 20001) / 1000.0f - 10.0f;  // [-10, 10]
  }
  return t;
}

RelaxKernelArg buffer_arg(void* data, const int64_t* shape) {
  RelaxKernelArg a{};
  a.kind = RELAX_ARG_BUFFER;
  a.ndim = 1;
  a.dtype_code = 2;
  a.dtype_bits = 32;
  a.dtype_lanes = 1;
  a.data = data;
  a.shape = shape;
  return a;
}

// Args: variant, compiler, n.
void BM_SiluMul(benchmark::State& state) {
  const int variant = static_cast<int>(state.range(0));
  const int compiler = static_cast<int>(state.range(1));
  const int64_t n = state.range(2);
  if (compiler == 1 && !std::filesystem::exists("/usr/bin/clang++-14")) {
    state.SkipWithError("clang++-14 is not installed");
    return;
  }
  const Kernel& k = kernel(variant, compiler);
  const Tensor x = filled(n, 1), z = filled(n, 2);
  Tensor y = *Tensor::empty({n}, DataType::float32());
  const int64_t shape[1] = {n};
  const RelaxKernelArg args[3] = {buffer_arg(x.data_as_or_die<float>(), shape),
                                  buffer_arg(z.data_as_or_die<float>(), shape),
                                  buffer_arg(y.data_as_or_die<float>(), shape)};
  char error[256] = "";
  auto run = [&] {
    if (variant == kModule) {
      absl::StatusOr<relax::runtime::Value> v = k.module["main"](x, z);
      if (!v.ok()) die(std::string(v.status().message()));
      y = v->tensor_or_die();
      return;
    }
    if (k.fn(args, 3, error, sizeof error) != 0) die(error);
  };
  run();
  // Checked once against a double reference (1e-5 relative: the libm
  // variant differs from vec by the ulps kernel_math_test.cc bounds).
  for (int64_t i = 0; i < n; i += 997) {
    const double xv = x.data_as_or_die<float>()[i], zv = z.data_as_or_die<float>()[i];
    const double want = variant == kRoofline ? xv * zv : xv / (1 + std::exp(-xv)) * zv;
    const double got = y.data_as_or_die<float>()[i];
    if (std::fabs(got - want) > 1e-5 * (1 + std::fabs(want))) {
      state.SkipWithError("wrong result");
      return;
    }
  }
  for (auto _ : state) run();
  state.SetLabel(std::string(kVariantNames[variant]) + ", " + kCompilers[compiler]);
  state.SetBytesProcessed(state.iterations() * n * 12);
}

BENCHMARK(BM_SiluMul)
    ->ArgsProduct({{kRoofline, kVec, kLibm, kRestrict, kAligned}, {0, 1}, {1 << 20, 1 << 22, 1 << 24}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SiluMul)->ArgsProduct({{kModule}, {0}, {1 << 20, 1 << 24}})->Unit(benchmark::kMicrosecond);

}  // namespace
