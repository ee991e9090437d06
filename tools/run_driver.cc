// run_tool (run_driver.h): load or compile, read the inputs, call, write or print.
//
// The order of the checks is the order a user fixes things in: the flags themselves (a bad
// --repeat or --output form), the module, the function, the number of inputs, each input's
// form and file, then the call (the VM checks kinds, dtypes and shapes and names the argument),
// then the number of outputs against the flattened results, then the writes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "relax/codegen/build.h"
#include "relax/ir/json.h"
#include "relax/ir/parser.h"
#include "relax/frontend/onnx.h"
#include "relax/runtime/allocator.h"
#include "relax/runtime/cuda.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/npy.h"
#include "relax/support/float_format.h"
#include "relax/support/target.h"
#include "relax/transform/pass.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/pipeline.h"
#include "run_driver.h"

#if RELAX_WITH_ONNX
#include "relax/frontend/onnx.h"
#endif

namespace relax::tools {

namespace {

using runtime::Value;

absl::Status prefixed(const absl::Status& s, const std::string& prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

// The file's bytes, or its first `limit` bytes.
absl::StatusOr<std::string> read_file(const std::string& path, size_t limit = std::string::npos) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the module file"));
  if (limit != std::string::npos) {
    std::string head(limit, '\0');
    in.read(head.data(), static_cast<std::streamsize>(limit));
    head.resize(static_cast<size_t>(in.gcount()));
    return head;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": cannot read the module file"));
  return text.str();
}

// The pattern the function's entry match gives parameter `index`, or null when there is none
// (a module without argument checks). The code generator matches every parameter in the
// first instruction, register i holding parameter i.
const runtime::ValuePattern* parameter_pattern(const runtime::Module& module,
                                               const std::string& function, size_t index) {
  const runtime::Executable& exec = module.executable();
  const int f = exec.find_function(function);
  if (f < 0) return nullptr;
  const runtime::VMFunction& fn = exec.functions[static_cast<size_t>(f)];
  if (fn.code.empty() || fn.code[0].op != runtime::Opcode::kMatch) return nullptr;
  const auto group = static_cast<size_t>(fn.code[0].index);
  if (group >= fn.matches.size()) return nullptr;
  for (const runtime::MatchItem& item : fn.matches[group].items) {
    if (item.reg == static_cast<int32_t>(index) && item.pattern >= 0 &&
        static_cast<size_t>(item.pattern) < fn.patterns.size()) {
      return &fn.patterns[static_cast<size_t>(item.pattern)];
    }
  }
  return nullptr;
}

// The values random(...) draws from: [lo, hi) for floats, the integers in [lo, hi] for
// integer dtypes.
struct RandomRange {
  double lo = 0;
  double hi = 0;
};

// A tensor of `dims` and `dtype` holding deterministic pseudo-random values, different for
// each input position `seed`: drawn from `range` when given, else floats in [-1, 1), signed
// integers in [-5, 5], unsigned ones in [0, 9], bools either way.
absl::StatusOr<runtime::Tensor> random_tensor(const std::vector<int64_t>& dims, DataType dtype,
                                              uint64_t seed, std::optional<RandomRange> range) {
  using Code = DataType::Code;
  const bool is_int = dtype.code == Code::kInt || dtype.code == Code::kUInt;
  if (range && dtype.code == Code::kBool) {
    return absl::InvalidArgumentError("a range of values needs a numeric dtype, not bool");
  }
  // The integers a range holds, checked against what the dtype can represent.
  int64_t int_lo = dtype.code == Code::kUInt ? 0 : -5;
  int64_t int_hi = dtype.code == Code::kUInt ? 9 : 5;
  if (range && is_int) {
    const double lo = std::ceil(range->lo), hi = std::floor(range->hi);
    const double min = dtype.code == Code::kUInt ? 0.0 : -std::ldexp(1.0, dtype.bits - 1);
    const double max = std::ldexp(1.0, dtype.code == Code::kUInt ? dtype.bits : dtype.bits - 1) - 1;
    if (lo > hi) {
      return absl::InvalidArgumentError(
          absl::StrCat("the range [", range->lo, ", ", range->hi, "] holds no integer"));
    }
    if (lo < min || hi > max) {
      return absl::InvalidArgumentError(absl::StrCat("the range [", range->lo, ", ", range->hi,
                                                     "] does not fit ", dtype.to_string(), " [",
                                                     min, ", ", max, "]"));
    }
    int_lo = static_cast<int64_t>(lo);
    int_hi = static_cast<int64_t>(hi);
  }
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(dims, dtype);
  if (!t.ok()) return t.status();
  uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  auto next = [&state] {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  auto fill = [&](auto* data, auto make) {
    for (int64_t i = 0; i < t->numel(); ++i) data[i] = make(next());
  };
  const double lo = range ? range->lo : -1.0, width = range ? range->hi - range->lo : 2.0;
  auto unit = [&](uint64_t r) { return lo + static_cast<double>(r >> 11) * 0x1.0p-53 * width; };
  const auto span = static_cast<uint64_t>(int_hi - int_lo) + 1;
  const auto small_int = [&](uint64_t r) { return int_lo + static_cast<int64_t>(r % span); };
  void* raw = t->data();
  switch (dtype.code) {
    case Code::kFloat:
      if (dtype.bits == 32) fill(static_cast<float*>(raw), [&](uint64_t r) { return static_cast<float>(unit(r)); });
      if (dtype.bits == 64) fill(static_cast<double*>(raw), unit);
      if (dtype.bits == 16) fill(static_cast<uint16_t*>(raw), [&](uint64_t r) { return float16_bits(unit(r)); });
      break;
    case Code::kBFloat:
      fill(static_cast<uint16_t*>(raw), [&](uint64_t r) { return bfloat16_bits(unit(r)); });
      break;
    case Code::kInt:
      if (dtype.bits == 8) fill(static_cast<int8_t*>(raw), [&](uint64_t r) { return static_cast<int8_t>(small_int(r)); });
      if (dtype.bits == 16) fill(static_cast<int16_t*>(raw), [&](uint64_t r) { return static_cast<int16_t>(small_int(r)); });
      if (dtype.bits == 32) fill(static_cast<int32_t*>(raw), [&](uint64_t r) { return static_cast<int32_t>(small_int(r)); });
      if (dtype.bits == 64) fill(static_cast<int64_t*>(raw), small_int);
      break;
    case Code::kUInt:
      if (dtype.bits == 8) fill(static_cast<uint8_t*>(raw), [&](uint64_t r) { return static_cast<uint8_t>(small_int(r)); });
      if (dtype.bits == 16) fill(static_cast<uint16_t*>(raw), [&](uint64_t r) { return static_cast<uint16_t>(small_int(r)); });
      if (dtype.bits == 32) fill(static_cast<uint32_t*>(raw), [&](uint64_t r) { return static_cast<uint32_t>(small_int(r)); });
      if (dtype.bits == 64) fill(static_cast<uint64_t*>(raw), [&](uint64_t r) { return static_cast<uint64_t>(small_int(r)); });
      break;
    case Code::kBool:
      fill(static_cast<uint8_t*>(raw), [](uint64_t r) { return static_cast<uint8_t>(r & 1); });
      break;
    default:
      return absl::InvalidArgumentError("no random values of dtype " + dtype.to_string());
  }
  return t;
}

// The `lo, hi` after the `;` of random(dims; lo, hi).
absl::StatusOr<RandomRange> parse_range(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  RandomRange range;
  if (parts.size() != 2 || !absl::SimpleAtod(absl::StripAsciiWhitespace(parts[0]), &range.lo) ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(parts[1]), &range.hi) ||
      !std::isfinite(range.lo) || !std::isfinite(range.hi)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the range \"", text, "\" is not two finite numbers `lo, hi`"));
  }
  if (!(range.lo <= range.hi)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the range [", range.lo, ", ", range.hi, "] is empty (lo > hi)"));
  }
  return range;
}

absl::StatusOr<Value> parse_shape(absl::string_view inner) {
  std::vector<int64_t> dims;
  const absl::string_view trimmed = absl::StripAsciiWhitespace(inner);
  if (trimmed.empty()) return Value::shape({});
  for (absl::string_view part : absl::StrSplit(trimmed, ',')) {
    part = absl::StripAsciiWhitespace(part);
    int64_t d = 0;
    if (!absl::SimpleAtoi(part, &d) || d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", part, "\" of the shape is not a non-negative integer"));
    }
    dims.push_back(d);
  }
  return Value::shape(std::move(dims));
}

// Writes one flattened result as a .npy file (see run_driver.h for the non-tensor forms).
absl::Status write_output(const Value& v, const std::string& path) {
  runtime::Tensor t;
  switch (v.kind()) {
    case runtime::ValueKind::kTensor: t = v.tensor_or_die(); break;
    case runtime::ValueKind::kShape: {
      const std::vector<int64_t>& dims = v.shape_dims_or_die();
      absl::StatusOr<runtime::Tensor> s =
          runtime::Tensor::empty({static_cast<int64_t>(dims.size())}, DataType::int64());
      if (!s.ok()) return s.status();
      std::copy(dims.begin(), dims.end(), s->data_as_or_die<int64_t>());
      t = *s;
      break;
    }
    case runtime::ValueKind::kInt: {
      absl::StatusOr<runtime::Tensor> s = runtime::Tensor::empty({}, DataType::int64());
      if (!s.ok()) return s.status();
      *s->data_as_or_die<int64_t>() = v.int_value_or_die();
      t = *s;
      break;
    }
    case runtime::ValueKind::kFloat: {
      absl::StatusOr<runtime::Tensor> s = runtime::Tensor::empty({}, DataType::float64());
      if (!s.ok()) return s.status();
      *s->data_as_or_die<double>() = v.float_value_or_die();
      t = *s;
      break;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "a ", runtime::value_kind_name(v.kind()), " result (", v.describe(),
          ") has no .npy form; expected a tensor, a shape or a number"));
  }
  return runtime::save_npy(path, t);
}

void print_result(const Value& v, size_t index, std::ostream& out) {
  out << "result " << index << ": " << v.describe() << "\n";
  if (v.is_tensor()) out << summarize_tensor(v.tensor_or_die()) << "\n";
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

}  // namespace

std::vector<Value> flatten_result(const Value& result) {
  if (!result.is_tuple()) return {result};
  std::vector<Value> out;
  for (const Value& field : result.fields_or_die()) {
    std::vector<Value> inner = flatten_result(field);
    out.insert(out.end(), inner.begin(), inner.end());
  }
  return out;
}

absl::StatusOr<runtime::Module> load_run_module(const RunOptions& options) {
  if (options.file.empty()) {
    return absl::InvalidArgumentError("no module file given; expected relax-run FILE [flags]");
  }
  if (!options.passes.empty() && !options.pipeline.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--passes=", options.passes, " and --pipeline=",
                                                   options.pipeline, ": expected one of the two"));
  }
  if (!options.pipeline.empty() && options.pipeline != "default") {
    return absl::InvalidArgumentError(
        absl::StrCat("--pipeline=", options.pipeline, ": unknown pipeline; expected default"));
  }
  if (absl::EndsWith(options.file, ".so")) {
    // Everything about compiling is fixed in a compiled library.
    const char* flag = !options.target.empty()            ? "--target"
                       : !options.passes.empty()          ? "--passes"
                       : !options.pipeline.empty()        ? "--pipeline"
                       : !options.disabled_passes.empty() ? "--disable-pass"
                                                          : nullptr;
    if (flag != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " applies to a module compiled here; ", options.file,
          " is a compiled library (its kernels were built for the target it was exported for)"));
    }
    return runtime::load_module(options.file);
  }
  // An ONNX model is never read as text: its bytes (hundreds of MB of weights) tokenized as a
  // module took gigabytes before the import even started. Its first bytes tell, and the importer
  // maps the file itself.
  absl::StatusOr<std::string> text = read_file(options.file, 16);
  if (!text.ok()) return text.status();
  const bool onnx = frontend::looks_like_onnx(*text);
  if (!onnx) text = read_file(options.file);
  if (!text.ok()) return text.status();
  absl::StatusOr<IRModule> mod = onnx                                    ? absl::StatusOr<IRModule>(IRModule())
                                 : absl::EndsWith(options.file, ".json") ? from_json(*text)
                                                                         : parse_module(*text);
  if (onnx) {
    // An ONNX model, recognised by its content: imported with its weights as constants, so that
    // the inputs are the graph's in order (initializers excluded).
#if RELAX_WITH_ONNX
    frontend::OnnxImportOptions import;
    import.weights_as_constants = true;
    for (const auto& [flag, given, into] :
         {std::tuple{"--upper-bound=", &options.upper_bounds, &import.upper_bounds},
          std::tuple{"--dim-multiple=", &options.dim_multiples, &import.dim_multiples}}) {
      for (const std::string& entry : *given) {
        const size_t eq = entry.find('=');
        int64_t value = 0;
        if (eq == std::string::npos || !absl::SimpleAtoi(entry.substr(eq + 1), &value) || value < 1) {
          return absl::InvalidArgumentError(absl::StrCat(flag, entry, ": expected NAME=VALUE with VALUE >= 1"));
        }
        (*into)[entry.substr(0, eq)] = value;
      }
    }
    absl::StatusOr<frontend::OnnxModel> model = frontend::import_onnx_file(options.file, import);
    if (!model.ok()) return prefixed(model.status(), options.file + ": ");
    mod = model->module;
#else
    return absl::UnimplementedError(absl::StrCat(options.file, ": an ONNX model, and this relax-run was built "
                                                 "without the ONNX importer (RELAX_WITH_ONNX; Debian: libonnx-dev)"));
#endif
  }
  if (!mod.ok()) return prefixed(mod.status(), options.file + ":");
  if ((!options.upper_bounds.empty() || !options.dim_multiples.empty()) && !onnx) {
    return absl::InvalidArgumentError(absl::StrCat(options.upper_bounds.empty() ? "--dim-multiple" : "--upper-bound",
                                                   " applies to ONNX models; ", options.file,
                                                   " declares its dims in its functions"));
  }
  Target target;
  if (!options.target.empty()) {
    absl::StatusOr<Target> parsed = Target::parse(options.target);
    if (!parsed.ok()) return prefixed(parsed.status(), "--target: ");
    target = *parsed;
  }
  transform::PassManager passes;
  if (options.passes.empty()) {
    transform::build_default_pipeline(passes, target);
  } else {
    absl::StatusOr<transform::PassManager> parsed = transform::parse_pipeline(options.passes);
    if (!parsed.ok()) return prefixed(parsed.status(), "--passes: ");
    passes = *std::move(parsed);
  }
  transform::PassContext ctx;
  for (const std::string& name : options.disabled_passes) ctx.disable_pass(name);
  absl::StatusOr<runtime::Module> module = build(*mod, target, passes, ctx);
  if (!module.ok()) {
    // A pipeline without legalize-ops leaves operator calls the VM cannot run; the library's
    // advice names the C++ function, a command-line user needs the flag.
    constexpr std::string_view kLibraryAdvice = "; run relax::transform::legalize_ops first";
    std::string message(module.status().message());
    const size_t at = message.find(kLibraryAdvice);
    if (at != std::string::npos && (!passes.contains("legalize-ops") || ctx.is_disabled("legalize-ops"))) {
      message.replace(at, kLibraryAdvice.size(),
                      ctx.is_disabled("legalize-ops")
                          ? ": the operators were not legalized because --disable-pass=legalize-ops turned "
                            "the pass off; drop that flag"
                          : absl::StrCat(": the operators were not legalized because the --passes pipeline (",
                                         options.passes, ") has no legalize-ops; put it first "
                                         "(--passes=legalize-ops,", options.passes,
                                         ") or leave --passes out to run the default pipeline"));
      return absl::Status(module.status().code(), absl::StrCat(options.file, ": build: ", message));
    }
    return prefixed(module.status(), options.file + ": build: ");
  }
  return module;
}

absl::StatusOr<Value> parse_input(const std::string& text, size_t index,
                                  const runtime::Function& fn, const runtime::Module& module) {
  const std::string where = absl::StrCat("--input #", index + 1, ": ");
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (absl::StartsWith(trimmed, "@")) {
    absl::StatusOr<runtime::Tensor> t = runtime::load_npy(std::string(trimmed.substr(1)));
    if (!t.ok()) return prefixed(t.status(), where);
    return Value(*t);
  }
  absl::string_view inner = trimmed;
  if (absl::ConsumePrefix(&inner, "shape(") && absl::ConsumeSuffix(&inner, ")")) {
    absl::StatusOr<Value> shape = parse_shape(inner);
    if (!shape.ok()) return prefixed(shape.status(), where);
    return shape;
  }
  const runtime::ValuePattern* pattern = parameter_pattern(module, fn.name(), index);
  inner = trimmed;
  if (absl::ConsumePrefix(&inner, "random(") && absl::ConsumeSuffix(&inner, ")")) {
    // random(d0, d1, ...) or random(d0, d1, ...; lo, hi)
    std::optional<RandomRange> range;
    if (const size_t semicolon = inner.find(';'); semicolon != absl::string_view::npos) {
      absl::StatusOr<RandomRange> parsed = parse_range(inner.substr(semicolon + 1));
      if (!parsed.ok()) return prefixed(parsed.status(), where);
      range = *parsed;
      inner = inner.substr(0, semicolon);
    }
    absl::StatusOr<Value> shape = parse_shape(inner);
    if (!shape.ok()) return prefixed(shape.status(), where);
    if (pattern == nullptr || pattern->kind != runtime::PatternKind::kTensor || !pattern->dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "random(...) needs a tensor parameter of known dtype"));
    }
    absl::StatusOr<runtime::Tensor> t = random_tensor(shape->shape_dims_or_die(), *pattern->dtype, index, range);
    if (!t.ok()) return prefixed(t.status(), where);
    return Value(*t);
  }
  const bool wants_float = pattern != nullptr && pattern->kind == runtime::PatternKind::kPrim &&
                           pattern->dtype && pattern->dtype->is_float();
  int64_t i = 0;
  if (absl::SimpleAtoi(trimmed, &i)) {
    if (wants_float) return Value(static_cast<double>(i));
    return Value(i);
  }
  double d = 0;
  // SimpleAtod also reads "inf" and "nan", which are numbers here too.
  if (!trimmed.empty() && absl::SimpleAtod(trimmed, &d)) return Value(d);
  return absl::InvalidArgumentError(absl::StrCat(
      where, "cannot read \"", text,
      "\"; expected @FILE.npy (a tensor), random(d0, d1, ...) or random(d0, d1, ...; lo, hi) (a "
      "tensor of pseudo-random values), an integer or a number (a Prim), or shape(d0, d1, ...)"));
}

absl::Status run_tool(const RunOptions& options, std::ostream& out) {
  if (options.repeat < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--repeat=", options.repeat, ": expected a count of at least 1"));
  }
  for (size_t i = 0; i < options.outputs.size(); ++i) {
    if (!absl::StartsWith(options.outputs[i], "@") || options.outputs[i].size() == 1) {
      return absl::InvalidArgumentError(absl::StrCat("--output #", i + 1, ": \"", options.outputs[i],
                                                     "\" is not of the form @PATH.npy"));
    }
  }
  absl::StatusOr<runtime::Module> module = load_run_module(options);
  if (!module.ok()) return module.status();
  absl::StatusOr<runtime::Function> fn = module->get_function(options.function);
  if (!fn.ok()) return prefixed(fn.status(), "--function=" + options.function + ": ");
  const runtime::Executable& exec = module->executable();
  const std::vector<std::string>& params =
      exec.functions[static_cast<size_t>(exec.find_function(options.function))].param_names;
  // Inputs that name their parameter (`NAME=...`), put in parameter order.
  std::vector<std::string> inputs = options.inputs;
  size_t named = 0;
  for (const std::string& in : inputs) {
    const size_t eq = in.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = in.substr(0, eq);
    if (std::find(params.begin(), params.end(), name) != params.end()) {
      ++named;
    } else if (name.find_first_of("@( ") == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--input=", in, ": ", options.function, " has no parameter ", name,
                                                     " (", absl::StrJoin(params, ", "), ")"));
    }
  }
  if (named > 0) {
    if (named != inputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(named, " of the ", inputs.size(),
                                                     " --inputs name a parameter; name every one or none"));
    }
    std::vector<std::string> ordered(params.size());
    for (const std::string& in : inputs) {
      const size_t eq = in.find('=');
      const size_t at = static_cast<size_t>(std::find(params.begin(), params.end(), in.substr(0, eq)) - params.begin());
      if (!ordered[at].empty()) {
        return absl::InvalidArgumentError(absl::StrCat("--input=", in, ": parameter ", params[at], " is given twice"));
      }
      ordered[at] = in.substr(eq + 1);
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (ordered[i].empty()) {
        return absl::InvalidArgumentError(absl::StrCat("no --input names parameter ", params[i], " of ",
                                                       options.function, " (", absl::StrJoin(params, ", "), ")"));
      }
    }
    inputs = std::move(ordered);
  }
  if (params.size() != inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function ", options.function, " takes ", params.size(),
        params.size() == 1 ? " argument" : " arguments", " (", absl::StrJoin(params, ", "), "), got ",
        inputs.size(), " --input", inputs.size() == 1 ? "" : "s"));
  }
  // A module for a GPU (target cuda) takes device tensors: each tensor input is copied to the
  // module's device once, before the calls, and the results are copied back for printing.
  const Device device = exec.device;
  const bool on_device = device.type != Device::Type::kCPU;
  std::vector<Value> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<Value> v = parse_input(inputs[i], i, *fn, *module);
    if (!v.ok()) return prefixed(v.status(), "");
    if (on_device && v->is_tensor()) {
      absl::StatusOr<runtime::Tensor> moved = v->tensor_or_die().to(device);
      if (!moved.ok()) return prefixed(moved.status(), absl::StrCat("--input #", i + 1, ": "));
      v = Value(*std::move(moved));
    }
    args.push_back(*std::move(v));
  }

  // The statistics are those of the pool the calls allocate from: the device's for a GPU module.
  runtime::PooledAllocator* pool = &runtime::default_allocator();
  if (on_device) {
    absl::StatusOr<runtime::PooledAllocator*> device_pool = runtime::cuda::device_allocator(device.index);
    if (!device_pool.ok()) return device_pool.status();
    pool = *device_pool;
  }
  runtime::PooledAllocator& allocator = *pool;
  allocator.reset_peak();
  const int64_t allocations_before = allocator.stats().num_allocations;
  const int64_t calls = std::max<int64_t>(options.repeat, 1);
  std::vector<double> seconds;
  std::vector<runtime::CallMemoryStats> call_stats;
  // The calls share one context, as a caller's repeated calls do: after the first, they reuse
  // the storage it allocated.
  runtime::ExecutionContext context;
  Value result;
  for (int64_t c = 0; c < calls; ++c) {
    result = Value();  // the last call's result is kept; earlier ones die before the next call
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Value> r = fn->call(context, args);
    // A call on a GPU returns with its work queued: the time includes waiting for it.
    absl::Status done = on_device && r.ok() ? runtime::cuda::synchronize(device.index) : absl::OkStatus();
    const auto stop = std::chrono::steady_clock::now();
    if (!r.ok()) return r.status();
    if (!done.ok()) return done;
    result = *std::move(r);
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
    if (options.memory_stats) call_stats.push_back(context.last_call_stats());
  }
  const runtime::AllocatorStats stats = allocator.stats();

  std::vector<Value> results = flatten_result(result);
  for (size_t i = 0; i < results.size() && on_device; ++i) {
    if (!results[i].is_tensor()) continue;
    absl::StatusOr<runtime::Tensor> host = results[i].tensor_or_die().to(Device::cpu());
    if (!host.ok()) return prefixed(host.status(), absl::StrCat("result ", i, ": "));
    results[i] = Value(*std::move(host));
  }
  if (!options.outputs.empty()) {
    if (options.outputs.size() != results.size()) {
      std::vector<std::string> described;
      for (const Value& v : results) described.push_back(v.describe());
      return absl::InvalidArgumentError(absl::StrCat(
          options.function, " returned ", results.size(), results.size() == 1 ? " result" : " results",
          " (", absl::StrJoin(described, ", "), "), got ", options.outputs.size(), " --output",
          options.outputs.size() == 1 ? "" : "s"));
    }
    for (size_t i = 0; i < results.size(); ++i) {
      absl::Status s = write_output(results[i], options.outputs[i].substr(1));
      if (!s.ok()) return prefixed(s, absl::StrCat("--output #", i + 1, ": "));
    }
  } else {
    for (size_t i = 0; i < results.size(); ++i) print_result(results[i], i, out);
  }
  if (!options.expects.empty()) {
    if (options.expects.size() != results.size()) {
      return absl::InvalidArgumentError(absl::StrCat(options.function, " returned ", results.size(),
                                                     results.size() == 1 ? " result" : " results", ", got ",
                                                     options.expects.size(), " --expect",
                                                     options.expects.size() == 1 ? "" : "s"));
    }
    for (size_t i = 0; i < results.size(); ++i) {
      const std::string where = absl::StrCat("--expect #", i + 1, ": ");
      if (!absl::StartsWith(options.expects[i], "@")) {
        return absl::InvalidArgumentError(absl::StrCat(where, "\"", options.expects[i], "\" is not of the form @PATH.npy"));
      }
      absl::StatusOr<runtime::Tensor> want = runtime::load_npy(options.expects[i].substr(1));
      if (!want.ok()) return prefixed(want.status(), where);
      if (!results[i].is_tensor()) return absl::InvalidArgumentError(absl::StrCat(where, "result ", i, " is not a tensor"));
      const runtime::Tensor& got = results[i].tensor_or_die();
      if (got.shape() != want->shape() || got.dtype() != want->dtype()) {
        return absl::InvalidArgumentError(absl::StrCat(where, "result ", i, " is ", got.describe(), ", the file holds ",
                                                       want->describe()));
      }
      absl::StatusOr<std::pair<double, double>> errors = tensor_errors(got, *want);
      if (!errors.ok()) return prefixed(errors.status(), where);
      out << "expect " << i + 1 << ": max_abs_error=" << errors->first << " max_rel_error=" << errors->second << "\n";
    }
  }
  if (options.repeat >= 1) {
    const auto [lo, hi] = std::minmax_element(seconds.begin(), seconds.end());
    out << "time: median " << median(seconds) * 1e3 << " ms over " << calls
        << (calls == 1 ? " call" : " calls") << " (min " << *lo * 1e3 << " ms, max " << *hi * 1e3
        << " ms)\n";
  }
  if (options.memory_stats) {
    for (size_t c = 0; c < call_stats.size(); ++c) {
      const runtime::CallMemoryStats& cs = call_stats[c];
      out << "call " << c + 1 << ": arena_bytes=" << cs.arena_bytes
          << " output_bytes=" << cs.output_bytes << " allocator_calls=" << cs.allocator_calls
          << " context_reserved_bytes=" << cs.reserved_bytes << "\n";
    }
    out << "peak_bytes=" << stats.peak_bytes_in_use
        << " allocations=" << stats.num_allocations - allocations_before
        << " reserved_bytes=" << stats.bytes_reserved << "\n";
  }
  return absl::OkStatus();
}

}  // namespace relax::tools
