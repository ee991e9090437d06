// generate_cpp (relax/codegen/cpp_codegen.h): one C++ translation unit for a
// list of PrimFuncs.
//
// The unit, top to bottom:
//   1. a header comment and the standard includes;
//   2. kernel_abi.h, verbatim (its text is embedded into the library by CMake,
//      see src/CMakeLists.txt, so the copy cannot drift from the header);
//   3. relax/support/half_float.h, verbatim (embedded likewise): the float16
//      and bfloat16 conversions, the same code the compiler rounds with;
//   4. relax/support/kernel_math.h, verbatim (embedded likewise): the
//      vectorisable float32 exp, sigmoid, tanh and erf that the intrinsic
//      table spells relax::vec_* (libm's would keep the loops scalar);
//   5. the helpers every kernel may use, in an anonymous namespace: floor
//      division and modulo, integer abs, shifts, float16/bfloat16 loads,
//      stores and roundings, the 64-byte aligned heap block,
//      argument strides, the error writer and the names of kinds and dtypes;
//   5a. the source of each micro-kernel a kernel calls (call_extern), each
//      text once, verbatim from the registry (relax/ir/micro_kernel.h);
//   6. one `static int32_t relax_kernel_<name>(...)` per PrimFunc, written by
//      KernelEmitter (cpp_codegen_args.cc, _stmt.cc, _expr.cc);
//   6a. (before the kernels) the runtime's table, relax_set_runtime_api, and
//      relax_parallel_for, which runs a parallel loop's body on the runtime's
//      thread pool;
//   7. the kernel table and the extern "C" entry points relax_abi_version and
//      relax_kernels (exported with default visibility, so that a compile with
//      -fvisibility=hidden still finds them);
//   8. the ISA record relax_isa_level / relax_isa_features (kernel_abi.h).
// Nothing is written when any kernel fails: the first problem is returned.
#include "relax/codegen/cpp_codegen.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codegen/cpp/cpp_codegen_impl.h"
#include "relax/ir/micro_kernel.h"
#include "relax/support/cpu_features.h"
#include "relax_half_float_text.h"
#include "relax_kernel_abi_text.h"
#include "relax_kernel_math_text.h"

namespace relax {
namespace cpp_codegen {

const char kIntegerHelpers[] = R"cpp(// Integer division of the IR rounds toward negative infinity (C++'s truncates).
template <typename T>
RELAX_HELPER T relax_floordiv(T a, T b) {
  const T q = static_cast<T>(a / b);
  return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
}

// The remainder of relax_floordiv: it has the divisor's sign.
template <typename T>
RELAX_HELPER T relax_floormod(T a, T b) {
  const T r = static_cast<T>(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
}

template <typename T>
RELAX_HELPER T relax_abs(T a) {
  return a < 0 ? static_cast<T>(-a) : a;
}

// Shifts of the IR: the count is in [0, bits of T). A left shift drops the bits
// that leave T (computed in uint64_t, so it never overflows, then wrapped to T);
// a right shift is arithmetic for signed T and logical for unsigned T.
template <typename T>
RELAX_HELPER T relax_shift_left(T a, T n) {
  return static_cast<T>(static_cast<uint64_t>(a) << n);
}

template <typename T>
RELAX_HELPER T relax_shift_right(T a, T n) {
  return static_cast<T>(a >> n);
}

template <typename T>
RELAX_HELPER T relax_min(T a, T b) {
  return b < a ? b : a;
}

template <typename T>
RELAX_HELPER T relax_max(T a, T b) {
  return a < b ? b : a;
}
)cpp";

const char kScalarPreludeHead[] = R"cpp(// ---- Helpers shared by the kernels -----------------------------------------
namespace {

#define RELAX_HELPER inline
)cpp";

const char kScalarPreludeTail[] = R"cpp(
// float16 and bfloat16 (relax/support/half_float.h, copied above): stored as
// 16-bit patterns, computed as float. A load widens exactly; a store and a
// cast round to nearest, ties to even, NaN kept a NaN.
[[maybe_unused]] inline float relax_float16_load(uint16_t bits) {
  return static_cast<float>(relax::float16_value(bits));
}
[[maybe_unused]] inline float relax_bfloat16_load(uint16_t bits) {
  return static_cast<float>(relax::bfloat16_value(bits));
}
[[maybe_unused]] inline uint16_t relax_float16_store(float v) { return relax::float16_bits(v); }
[[maybe_unused]] inline uint16_t relax_bfloat16_store(float v) { return relax::bfloat16_bits_of_float(v); }
[[maybe_unused]] inline float relax_round_float16(double v) {
  return static_cast<float>(relax::round_to_float16(v));
}
[[maybe_unused]] inline float relax_round_bfloat16(double v) {
  return static_cast<float>(relax::round_to_bfloat16(v));
}
// The same for a float32 operand, on its bits (no libm calls: the loop vectorises).
[[maybe_unused]] inline float relax_round_bfloat16_of_float(float v) {
  return static_cast<float>(relax::bfloat16_value(relax::bfloat16_bits_of_float(v)));
}

// The error paths' helpers are cold and never inlined: inlined, g++ 12 lets
// the dtype check's message formatting make the whole kernel body "cold" and
// leaves its loops unvectorised (kernel_math_test.cc checks they vectorise).
#if defined(__GNUC__)
#define RELAX_COLD __attribute__((cold, noinline))
#else
#define RELAX_COLD
#endif

// Writes a message into the caller's error buffer (bounded, NUL-terminated).
template <typename... Args>
RELAX_COLD int32_t relax_fail(char* error, int32_t error_capacity, const char* format, Args... args) {
  if (error != nullptr && error_capacity > 0) {
    std::snprintf(error, static_cast<size_t>(error_capacity), format, args...);
  }
  return 1;
}

[[maybe_unused]] RELAX_COLD const char* relax_kind_name(int32_t kind) {
  switch (kind) {
    case RELAX_ARG_BUFFER: return "a buffer";
    case RELAX_ARG_INT: return "an integer";
    case RELAX_ARG_FLOAT: return "a float";
    default: return "of an unknown kind";
  }
}

// An argument's dtype, spelled as relax spells it ("float32", "int64x4", "bool").
[[maybe_unused]] RELAX_COLD void relax_dtype_text(const RelaxKernelArg& a, char* out, size_t size) {
  const char* base = a.dtype_code == 0 ? "int" : a.dtype_code == 1 ? "uint" : a.dtype_code == 2 ? "float"
                   : a.dtype_code == 3 ? "handle" : a.dtype_code == 4 ? "bfloat" : nullptr;
  int n = 0;
  if (a.dtype_code == 6) {
    n = std::snprintf(out, size, "bool");
  } else if (base != nullptr) {
    n = std::snprintf(out, size, "%s%d", base, static_cast<int>(a.dtype_bits));
  } else {
    n = std::snprintf(out, size, "(code %d, %d bits)", static_cast<int>(a.dtype_code),
                      static_cast<int>(a.dtype_bits));
  }
  if (a.dtype_lanes != 1 && n > 0 && static_cast<size_t>(n) < size) {
    std::snprintf(out + n, size - static_cast<size_t>(n), "x%d", static_cast<int>(a.dtype_lanes));
  }
}

// Stride `d` of a buffer argument, in elements: its own, or compact row-major.
[[maybe_unused]] int64_t relax_arg_stride(const RelaxKernelArg& a, int32_t d) {
  if (a.strides != nullptr) return a.strides[d];
  int64_t stride = 1;
  for (int32_t k = d + 1; k < a.ndim; ++k) stride *= a.shape[k];
  return stride;
}

// A 64-byte aligned heap block, freed when it goes out of scope. `ptr` is null
// when the size is negative, overflows or cannot be allocated.
struct relax_heap_block {
  void* ptr = nullptr;
  relax_heap_block(int64_t count, int64_t elem_bytes) {
    if (count < 0 || count > (INT64_MAX - 64) / elem_bytes) return;
    const size_t bytes = static_cast<size_t>((count * elem_bytes + 63) / 64 * 64);
    ptr = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
  }
  ~relax_heap_block() { std::free(ptr); }
  relax_heap_block(const relax_heap_block&) = delete;
  relax_heap_block& operator=(const relax_heap_block&) = delete;
};

}  // namespace

#if defined(__GNUC__)
#define RELAX_EXPORT __attribute__((visibility("default")))
#else
#define RELAX_EXPORT
#endif
)cpp";

const std::string& scalar_prelude() {
  static const std::string* const text =
      new std::string(absl::StrCat(kScalarPreludeHead, kIntegerHelpers, kScalarPreludeTail));
  return *text;
}

// The runtime's table and the parallel loops (kernel_abi.h, "Threads"; the
// runtime side is relax/runtime/thread_pool.h). A parallel loop's body is a
// lambda over a range of the loop's iterations; relax_parallel_for hands it to
// the runtime's pool as a function pointer (relax_parallel_body<F>, one per
// lambda type) and the lambda's address. Without a table (a library dlopen'ed
// by something other than relax's runtime) the loop runs on the calling thread.
const char kThreadPrelude[] = R"cpp(
// ---- The runtime's table: one pool of kernel threads per process -----------
static const RelaxRuntimeApi* relax_runtime_api = nullptr;

extern "C" RELAX_EXPORT void relax_set_runtime_api(const RelaxRuntimeApi* api) {
  __atomic_store_n(&relax_runtime_api, api, __ATOMIC_RELEASE);
}

namespace {

template <typename F>
int32_t relax_parallel_body(void* ctx, int64_t lo, int64_t hi) {
  return (*static_cast<F*>(ctx))(lo, hi);
}

// Runs body(lo, hi) over [begin, end) on the runtime's pool, on a team of at
// most `wanted` threads (0: the budget's); non-zero when a chunk failed (the
// first failing iteration wrote the message into `error`).
template <typename F>
int32_t relax_parallel_for(int64_t begin, int64_t end, int32_t wanted, F& body) {
  const RelaxRuntimeApi* api = __atomic_load_n(&relax_runtime_api, __ATOMIC_ACQUIRE);
  if (api == nullptr) return body(begin, end);
  return api->parallel_for(begin, end, wanted, &relax_parallel_body<F>, &body);
}

// The calling thread's scratch block held by the runtime, for the micro-kernels
// (relax/support/micro_kernels.h); null without a runtime table.
inline void* relax_runtime_scratch(size_t bytes) {
  const RelaxRuntimeApi* api = __atomic_load_n(&relax_runtime_api, __ATOMIC_ACQUIRE);
  return api == nullptr ? nullptr : api->thread_scratch(bytes);
}
#define RELAX_MK_RUNTIME_SCRATCH relax_runtime_scratch

}  // namespace
)cpp";

// The ISA record (kernel_abi.h): the level the target named, and one line per
// known feature, kept when the compiler predefines its macro, so that the
// record says exactly what the flags allowed the compiler to use.
std::string isa_record(const Target& target) {
  std::string text = absl::StrCat(
      "\n// ---- The ISA this library was compiled for (read by the loader as data) ----\n",
      "extern \"C\" {\nRELAX_EXPORT extern const char relax_isa_level[];\n",
      "RELAX_EXPORT extern const char relax_isa_features[];\n}\n",
      "const char relax_isa_level[] = ", string_literal(target.isa_level()), ";\n",
      "const char relax_isa_features[] = \"\"\n");
  for (const CpuFeature& feature : known_cpu_features()) {
    absl::StrAppend(&text, "#ifdef ", std::string(feature.macro), "\n    \" ", std::string(feature.name),
                    "\"\n#endif\n");
  }
  return text + "    ;\n";
}

std::string signature_comment(const std::string& name, const PrimFuncNode& func) {
  std::string s = absl::StrCat("// kernel ", comment_text(string_literal(name)), "(");
  for (size_t i = 0; i < func.params.size(); ++i) {
    const PrimParam& p = func.params[i];
    if (i > 0) s += ", ";
    if (p.buffer) {
      absl::StrAppend(&s, comment_text(p.buffer->name()), ": ", p.buffer->dtype().to_string(), "[");
      for (size_t d = 0; d < p.buffer->ndim(); ++d) {
        absl::StrAppend(&s, d > 0 ? ", " : "", comment_text(p.buffer->shape()[d].to_string()));
      }
      s += "]";
    } else {
      absl::StrAppend(&s, comment_text(p.scalar->name()), ": ", p.scalar->dtype().to_string());
    }
  }
  return s + ")\n";
}

KernelEmitter::KernelEmitter(std::string kernel_name, std::string fn_name, const PrimFuncNode& func,
                             const Target& target)
    : kernel_name_(std::move(kernel_name)), fn_name_(std::move(fn_name)), func_(func), target_(target) {}

void KernelEmitter::fail(absl::StatusCode code, const std::string& message) {
  if (!status_.ok()) return;
  status_ = absl::Status(code, absl::StrCat("PrimFunc `", kernel_name_, "`: ", message));
}

absl::Status KernelEmitter::emit(std::string* out) {
  emit_prologue();
  if (!ok()) return status_;
  const std::string prologue = std::move(out_);
  out_.clear();
  line("// Body.");
  if (cuda_ != nullptr) {
    emit_cuda_body(func_.body);  // src/codegen/cuda/
  } else {
    emit_stmt(func_.body);
  }
  if (!ok()) return status_;
  *out = signature_comment(kernel_name_, func_);
  absl::StrAppend(out, "static int32_t ", fn_name_,
                  "(const RelaxKernelArg* args, int32_t num_args, char* error, int32_t error_capacity) {\n",
                  prologue);
  // Set (with an atomic compare-and-swap) by a failure inside a parallel or simd loop.
  if (uses_failed_flag_) absl::StrAppend(out, "  int32_t relax_failed = 0;\n");
  absl::StrAppend(out, out_, "  return 0;\n}\n");
  return absl::OkStatus();
}

}  // namespace cpp_codegen

std::string_view kernel_abi_text() { return detail::kKernelAbiText; }

absl::StatusOr<std::string> generate_cpp(const std::vector<std::pair<std::string, Expr>>& prim_funcs,
                                         const Target& target) {
  if (target.kind != "cpu" && target.kind != "llvm") {
    return absl::InvalidArgumentError(
        absl::StrCat("the C++ code generator compiles for target kind \"cpu\", not \"", target.kind, "\""));
  }
  cpp_codegen::NameTable functions;
  absl::flat_hash_set<std::string> seen;
  std::string kernels;
  std::string table;
  // The micro-kernels called, in order of first call, and their sources, each
  // text once (the built-ins share one).
  std::vector<std::string> micro_sources;
  absl::flat_hash_set<std::string> micro_seen;
  for (const auto& [name, func] : prim_funcs) {
    const PrimFuncNode* node = func.as<PrimFuncNode>();
    if (node == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("`", name, "` is not a PrimFunc"));
    }
    if (name.empty()) return absl::InvalidArgumentError("a PrimFunc without a name");
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("two PrimFuncs are named `", name, "`"));
    }
    const std::string fn_name = functions.fresh_generated("relax_kernel_" + cpp_codegen::sanitize_identifier(name));
    std::string text;
    cpp_codegen::KernelEmitter emitter(name, fn_name, *node, target);
    if (absl::Status s = emitter.emit(&text); !s.ok()) return s;
    for (const std::string& micro : emitter.micro_kernels()) {
      const MicroKernel* k = find_micro_kernel(micro);  // checked by the emitter
      if (!micro_seen.insert(micro).second) continue;
      if (std::find(micro_sources.begin(), micro_sources.end(), k->source) == micro_sources.end()) {
        micro_sources.push_back(k->source);
      }
    }
    absl::StrAppend(&kernels, "\n", text);
    absl::StrAppend(&table, "    {", cpp_codegen::string_literal(name), ", &", fn_name, "},\n");
  }
  std::string out = absl::StrCat(
      "// Generated by relax's C++ code generator: ", prim_funcs.size(), " kernel",
      prim_funcs.size() == 1 ? "" : "s", ", target \"", cpp_codegen::comment_text(target.to_string()),
      "\".\n// Kernel ABI: relax/runtime/kernel_abi.h (copied below).\n"
      "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n"
      "#include <cstdlib>\n#include <cstring>\n\n",
      "// ---- relax/runtime/kernel_abi.h --------------------------------------------\n",
      std::string(kernel_abi_text()), "// ---- end of relax/runtime/kernel_abi.h -------------------------------------\n\n",
      "// ---- relax/support/half_float.h --------------------------------------------\n",
      std::string(detail::kHalfFloatText),
      "// ---- end of relax/support/half_float.h -------------------------------------\n\n",
      "// ---- relax/support/kernel_math.h -------------------------------------------\n",
      std::string(detail::kKernelMathText),
      "// ---- end of relax/support/kernel_math.h ------------------------------------\n\n",
      cpp_codegen::scalar_prelude(), cpp_codegen::kVectorPrelude, cpp_codegen::kThreadPrelude);
  for (const std::string& source : micro_sources) {
    absl::StrAppend(&out, "\n// ---- micro-kernel source (relax/ir/micro_kernel.h) --------------------------\n",
                    source, "\n// ---- end of micro-kernel source ---------------------------------------------\n");
  }
  absl::StrAppend(&out, kernels, "\n");
  if (prim_funcs.empty()) {
    absl::StrAppend(&out, "static const RelaxKernelEntry* const relax_kernel_table = nullptr;\n");
  } else {
    absl::StrAppend(&out, "static const RelaxKernelEntry relax_kernel_table[] = {\n", table, "};\n");
  }
  absl::StrAppend(&out, "\nextern \"C\" RELAX_EXPORT int32_t relax_abi_version(void) { return RELAX_KERNEL_ABI_VERSION; }\n\n",
                  "extern \"C\" RELAX_EXPORT const RelaxKernelEntry* relax_kernels(int32_t* count) {\n",
                  "  if (count != nullptr) *count = ", prim_funcs.size(), ";\n",
                  "  return relax_kernel_table;\n}\n");
  absl::StrAppend(&out, cpp_codegen::isa_record(target));
  return out;
}

absl::StatusOr<std::string> generate_cpp(const IRModule& module, const Target& target) {
  std::vector<std::pair<std::string, Expr>> prim_funcs;
  for (const auto& [name, func] : module.functions()) {
    if (func.as<PrimFuncNode>() != nullptr) prim_funcs.emplace_back(name, func);
  }
  return generate_cpp(prim_funcs, target);
}

}  // namespace relax
