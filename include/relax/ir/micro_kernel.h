// Micro-kernels: hand-written C++ functions a PrimFunc calls with the opaque
// statement `call_extern name(args...)` (ExternCallNode, prim_func.h).
//
// A micro-kernel is registered once, at start-up, with
//   - its name, a C identifier: the function the generated code calls;
//   - its C++ source, defining that function (`static inline` is best): the C++
//     code generator copies it verbatim, once, into every generated unit that
//     calls it, so that compiled and exported (AOT) libraries stay
//     self-contained; kernels registered with the same source text share one copy;
//   - its parameters: a scalar of a dtype, or a pointer to elements of a dtype
//     (read-only or written), with the extent a pointer covers when known;
//   - a host function the loop-level evaluator calls (the same code, compiled
//     into the program).
// make_micro_kernel<&fn>() derives the parameters and the host function from
// fn's C++ signature, so that the two cannot disagree:
//
//   static inline void my_scale(const float* x, float a, int64_t n, float* y) { ... }
//   register_micro_kernel(make_micro_kernel<&my_scale>(
//       "my_scale", kMyScaleSource, {"x[n]", "a", "n", "y[n]"}));
//
// Each parameter is named in the list; a pointer's name may carry its extent in
// elements, `[n]` (an integer scalar parameter) or `[4]`; a pointer without one
// covers an unknown extent (from its first element to the end of its buffer).
// The registry is filled at start-up and read-only after (registration is
// thread-safe; a registered kernel is never removed or changed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "relax/shape/sym_expr.h"
#include "relax/support/data_type.h"

namespace relax {

class ExternCallNode;

/// One parameter of a micro-kernel.
struct MicroKernelParam {
  enum class Kind : uint8_t { kScalar, kPointer };
  std::string name;
  Kind kind = Kind::kScalar;
  DataType dtype;       ///< the scalar's dtype, or the dtype a pointer points to
  bool writes = false;  ///< a pointer the kernel writes through (not `const T*`)
  /// For a pointer: how many contiguous elements it covers: a decimal count,
  /// the name of an integer scalar parameter, or empty when unknown.
  std::string extent;
};

/// One argument as the host function receives it: `pointer` for a pointer
/// parameter; `i` for an integer or bool scalar, `f` for a float one.
struct MicroKernelArg {
  void* pointer = nullptr;
  int64_t i = 0;
  double f = 0;
};

/// The host version of a micro-kernel: called with one MicroKernelArg per parameter.
using MicroKernelHostFn = void (*)(const MicroKernelArg* args);

/// A micro-kernel's registration record.
struct MicroKernel {
  std::string name;
  std::string source;  ///< C++ defining `name`, copied verbatim into generated units
  std::vector<MicroKernelParam> params;
  MicroKernelHostFn host = nullptr;
};

/// Adds `kernel` to the registry. Errors: a name that is not a C identifier or
/// is taken, no source, no host function, a parameter without a name or of a
/// dtype kernels do not use, an extent that names no integer scalar parameter.
absl::Status register_micro_kernel(MicroKernel kernel);

/// The registered kernel `name`, or null. The pointer stays valid.
const MicroKernel* find_micro_kernel(std::string_view name);

/// The names of the registered kernels, sorted.
std::vector<std::string> micro_kernel_names();

/// Whether `name` can name a micro-kernel (a C identifier).
bool is_micro_kernel_name(std::string_view name);

/// The signature of `kernel` in one line, for messages: `relax_dot_f32(x: const float32*, ...)`.
std::string micro_kernel_signature(const MicroKernel& kernel);

/// Whether `call` fits the kernel it names: NotFound when no kernel of that
/// name is registered; InvalidArgument naming the kernel, the argument's
/// position and parameter when the number of arguments differs from the
/// parameters, a scalar is given for a pointer or a region for a scalar, or a
/// dtype differs (a scalar's own dtype, a region's buffer dtype vs the pointee).
absl::Status check_extern_call(const ExternCallNode& call);

/// The number of elements argument `arg` of `call` (a region, the call fitting
/// `kernel`) covers, as an expression of the call's arguments; undefined when
/// the kernel does not declare it.
SymExpr extern_region_extent(const MicroKernel& kernel, const ExternCallNode& call, size_t arg);

// ---------------------------------------------------------------------------
// Deriving a record from a C++ function.

namespace micro_kernel_detail {

template <typename T>
constexpr DataType dtype_of() {
  static_assert(std::is_arithmetic_v<T>, "a micro-kernel takes scalars and pointers to scalars");
  constexpr auto bits = static_cast<uint8_t>(sizeof(T) * 8);
  using Code = DataType::Code;
  if constexpr (std::is_same_v<T, bool>) return DataType::boolean();
  else if constexpr (std::is_floating_point_v<T>) return DataType{Code::kFloat, bits, 1};
  else if constexpr (std::is_signed_v<T>) return DataType{Code::kInt, bits, 1};
  else return DataType{Code::kUInt, bits, 1};
}

template <typename T>
MicroKernelParam param_of(std::string spec) {
  MicroKernelParam p;
  if (const size_t open = spec.find('['); open != std::string::npos && spec.back() == ']') {
    p.extent = spec.substr(open + 1, spec.size() - open - 2);
    spec.resize(open);
  }
  p.name = std::move(spec);
  if constexpr (std::is_pointer_v<T>) {
    using Pointee = std::remove_pointer_t<T>;
    p.kind = MicroKernelParam::Kind::kPointer;
    p.dtype = dtype_of<std::remove_const_t<Pointee>>();
    p.writes = !std::is_const_v<Pointee>;
  } else {
    p.kind = MicroKernelParam::Kind::kScalar;
    p.dtype = dtype_of<T>();
  }
  return p;
}

template <typename T>
T arg_as(const MicroKernelArg& a) {
  if constexpr (std::is_pointer_v<T>) return static_cast<T>(a.pointer);
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(a.f);
  else return static_cast<T>(a.i);
}

template <auto Fn, typename Sig>
struct Host;

template <auto Fn, typename... Params>
struct Host<Fn, void (*)(Params...)> {
  static void call(const MicroKernelArg* args) { call_with(args, std::index_sequence_for<Params...>{}); }
  template <size_t... I>
  static void call_with(const MicroKernelArg* args, std::index_sequence<I...>) {
    Fn(arg_as<Params>(args[I])...);
  }
  static std::vector<MicroKernelParam> params(const std::vector<std::string>& specs) {
    std::vector<MicroKernelParam> out;
    [[maybe_unused]] size_t i = 0;
    // An unnamed parameter keeps an empty name: register_micro_kernel reports it.
    ((out.push_back(param_of<Params>(i < specs.size() ? specs[i] : std::string())), ++i), ...);
    return out;
  }
};

// A noexcept function is called the same way.
template <auto Fn, typename... Params>
struct Host<Fn, void (*)(Params...) noexcept> : Host<Fn, void (*)(Params...)> {};

}  // namespace micro_kernel_detail

/// The record of `Fn` (a `void` function of scalars and pointers to scalars):
/// its parameters and host function from its signature, each parameter named
/// by `param_specs` ("x", "x[n]", "x[4]"; one per parameter), and `source`,
/// the C++ text that defines the same function for generated units.
template <auto Fn>
MicroKernel make_micro_kernel(std::string name, std::string source,
                              const std::vector<std::string>& param_specs) {
  using Host = micro_kernel_detail::Host<Fn, decltype(Fn)>;
  MicroKernel k;
  k.name = std::move(name);
  k.source = std::move(source);
  k.params = Host::params(param_specs);
  // More names than parameters: a parameter the registry reports as unnamed.
  if (param_specs.size() > k.params.size()) k.params.push_back(MicroKernelParam{});
  k.host = &Host::call;
  return k;
}

}  // namespace relax
