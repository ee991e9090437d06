// The start of a kernel: checking the arguments and binding the variables.
//
// Stages, in the order the generated code runs them:
//   1. the argument count, then per argument its kind (buffer, integer or
//      float scalar), its rank and (with runtime checks) its dtype;
//   2. the variables: every place that can define one -- a dim or a stride
//      that is a bare variable, a scalar parameter -- in parameter order; the
//      first place defines the variable, each later one must agree with it
//      (an integer variable of a narrower dtype must also hold the value);
//      then, until nothing changes, a dim `coeff * v + rest` whose only unknown
//      is v (solve_linear, relax/shape/solve.h) defines v = (dim - rest) / coeff,
//      when that division is exact ("dim 0 is 5, which is not n * 2 for any
//      integer n" otherwise); stage 4 re-checks the dim with the value found;
//   3. the buffers' data pointers and strides (compact row-major from the
//      shape, unless the Buffer declares strides);
//   4. with runtime checks, every other dim against its expression, and every
//      stride of an argument that passes strides (or of a Buffer that declares
//      them) against the buffer's; dims of extent 0 or 1 need no stride check.
//   5. the extents the PrimFunc requires nonempty (relax/ir/kernel_checks.h):
//      always, not only with runtime checks, since without them the kernel
//      would return a value it does not have (an argmax over nothing).
// A variable that no dim determines (only `n * n` or `floordiv(n, 2)`, or two
// unknowns in every dim it appears in) is defined by nothing: that is an error
// Status, since the kernel could not compute the expected value.
//
// Messages read "argument C (#2) dim 1 is 5, expected 4"; when the expected
// value comes from an expression it follows in parentheses ("expected 6
// (n * 2)"). They do not name the kernel: its caller adds that (kernel_abi.h).
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/cpp/cpp_codegen_impl.h"
#include "relax/ir/kernel_checks.h"
#include "relax/shape/solve.h"

namespace relax::cpp_codegen {
namespace {

std::string long_long(const std::string& value) {
  return absl::StrCat("static_cast<long long>(", value, ")");
}

}  // namespace

std::string KernelEmitter::arg_label(size_t index) const {
  return absl::StrCat("argument ", printf_text(param_names_[index]), " (#", index, ")");
}

std::string KernelEmitter::fail_stmt(const std::string& format,
                                     const std::vector<std::string>& format_args) const {
  std::string call = absl::StrCat("return relax_fail(error, error_capacity, \"", format, "\"");
  for (const std::string& a : format_args) absl::StrAppend(&call, ", ", a);
  return call + ");";
}

void KernelEmitter::emit_arg_checks(size_t i, const PrimParam& param) {
  const std::string arg = absl::StrCat("args[", i, "]");
  const std::string label = arg_label(i);
  if (param.buffer) {
    const Buffer& b = *param.buffer;
    line(absl::StrCat("if (", arg, ".kind != RELAX_ARG_BUFFER) ",
                      fail_stmt(label + " is %s, expected a buffer",
                                {absl::StrCat("relax_kind_name(", arg, ".kind)")})));
    line(absl::StrCat("if (", arg, ".ndim != ", b.ndim(), ") ",
                      fail_stmt(absl::StrCat(label, " has ndim %d, expected ", b.ndim()),
                                {absl::StrCat("static_cast<int>(", arg, ".ndim)")})));
    if (target_.runtime_checks) {
      const DataType t = b.dtype();
      open(absl::StrCat("if (", arg, ".dtype_code != ", static_cast<int>(t.code), " || ", arg,
                        ".dtype_bits != ", static_cast<int>(t.bits), " || ", arg, ".dtype_lanes != ", t.lanes,
                        ")"));
      line("char relax_dtype[48];");
      line(absl::StrCat("relax_dtype_text(", arg, ", relax_dtype, sizeof relax_dtype);"));
      line(fail_stmt(absl::StrCat(label, " has dtype %s, expected ", t.to_string()), {"relax_dtype"}));
      close();
    }
    return;
  }
  const SymVar& v = *param.scalar;
  const bool is_float = v.dtype().is_float();
  line(absl::StrCat("if (", arg, ".kind != ", is_float ? "RELAX_ARG_FLOAT" : "RELAX_ARG_INT", ") ",
                    fail_stmt(absl::StrCat(label, " is %s, expected ", is_float ? "a float" : "an integer"),
                              {absl::StrCat("relax_kind_name(", arg, ".kind)")})));
}

void KernelEmitter::bind_variables() {
  std::vector<DefSite> sites;
  for (size_t i = 0; i < func_.params.size(); ++i) {
    const PrimParam& p = func_.params[i];
    const std::string arg = absl::StrCat("args[", i, "]");
    if (p.scalar) {
      const bool is_float = p.scalar->dtype().is_float();
      sites.push_back({*p.scalar, arg + (is_float ? ".float_value" : ".int_value"), arg_label(i), is_float});
      continue;
    }
    const Buffer& b = *p.buffer;
    for (size_t d = 0; d < b.ndim(); ++d) {
      if (!b.shape()[d].is_var()) continue;
      sites.push_back({SymVar::from_expr(b.shape()[d]), absl::StrCat(arg, ".shape[", d, "]"),
                       absl::StrCat(arg_label(i), " dim ", d)});
    }
    for (size_t d = 0; d < b->strides.size(); ++d) {
      if (!b->strides[d].is_var()) continue;
      sites.push_back({SymVar::from_expr(b->strides[d]), absl::StrCat("relax_arg_stride(", arg, ", ", d, ")"),
                       absl::StrCat(arg_label(i), " stride ", d)});
    }
  }
  for (const DefSite& site : sites) {
    emit_def_site(site);
    if (!ok()) return;
  }
  solve_linear_dims();
}

void KernelEmitter::emit_def_site(const DefSite& site) {
  const std::string type = checked_type(site.var.dtype(), "variable `" + site.var.name() + "`");
  if (!ok()) return;
  auto bound = vars_.find(site.var);
  if (bound == vars_.end()) {
    const std::string name = names_.fresh(site.var.name());
    bind_var(site.var, name);
    const bool exact_type = site.is_float ? type == "double" : type == "int64_t";
    // A float16 or bfloat16 scalar is its argument rounded to 16 bits, held as a float.
    const std::string converted = is_half_float(site.var.dtype())
                                      ? absl::StrCat(half_round_helper(site.var.dtype()), "(", site.actual, ")")
                                      : absl::StrCat("static_cast<", type, ">(", site.actual, ")");
    line(absl::StrCat("const ", type, " ", name, " = ", exact_type ? site.actual : converted, ";"));
    if (!exact_type && !site.is_float && target_.runtime_checks) {
      line(absl::StrCat("if (static_cast<int64_t>(", name, ") != ", site.actual, ") ",
                        fail_stmt(absl::StrCat(site.what, " is %lld, which does not fit ", printf_text(site.var.name()),
                                               " (", type, ")"),
                                  {long_long(site.actual)})));
    }
    return;
  }
  if (!target_.runtime_checks) return;
  if (site.is_float) {
    line(absl::StrCat("if (", site.actual, " != static_cast<double>(", bound->second, ")) ",
                      fail_stmt(absl::StrCat(site.what, " is %g, expected %g (", printf_text(site.var.name()), ")"),
                                {site.actual, absl::StrCat("static_cast<double>(", bound->second, ")")})));
    return;
  }
  line(absl::StrCat("if (", site.actual, " != ", bound->second, ") ",
                    fail_stmt(absl::StrCat(site.what, " is %lld, expected %lld (", printf_text(site.var.name()), ")"),
                              {long_long(site.actual), long_long(bound->second)})));
}

void KernelEmitter::solve_linear_dims() {
  // Each pass may make more variables known; stop when one finds nothing new.
  auto known = [&](const SymVar& v) { return vars_.contains(v); };
  for (bool progress = true; progress && ok();) {
    progress = false;
    for (size_t i = 0; i < func_.params.size(); ++i) {
      if (!func_.params[i].buffer) continue;
      const Buffer& b = *func_.params[i].buffer;
      for (size_t d = 0; d < b.ndim(); ++d) {
        const SymExpr& dim = b.shape()[d];
        if (dim.is_var() || dim.dtype() != DataType::int64()) continue;
        std::optional<LinearSolution> solution = solve_linear(dim, known);
        if (!solution) continue;
        const std::string actual = absl::StrCat("args[", i, "].shape[", d, "]");
        std::string numerator = actual;
        if (!solution->rest.is_const(0)) {
          const CExpr rest = expr(solution->rest, /*typed=*/true);
          absl::StrAppend(&numerator, " - ", rest.prec <= kPrecAdd ? "(" + rest.text + ")" : rest.text);
        }
        const std::string name = names_.fresh(solution->var.name());
        if (solution->coeff == 1) {
          line(absl::StrCat("const int64_t ", name, " = ", numerator, ";"));
        } else {
          // Exact division only: otherwise no integer value gives this dim.
          const std::string remainder = names_.fresh(name + "_numerator");
          line(absl::StrCat("const int64_t ", remainder, " = ", numerator, ";"));
          line(absl::StrCat("if (", remainder, " % ", solution->coeff, " != 0) ",
                            fail_stmt(absl::StrCat(arg_label(i), " dim ", d, " is %lld, which is not ",
                                                   printf_text(dim.to_string()), " for any integer ",
                                                   printf_text(solution->var.name())),
                                      {long_long(actual)})));
          line(absl::StrCat("const int64_t ", name, " = ", remainder, " / ", solution->coeff, ";"));
        }
        bind_var(solution->var, name);
        progress = true;
      }
    }
  }
}

void KernelEmitter::check_params_defined() {
  for (const PrimParam& p : func_.params) {
    if (!p.buffer) continue;
    const Buffer& b = *p.buffer;
    auto check_defined = [&](const SymExpr& e, const std::string& where) {
      for_each_var(e, [&](const SymVar& v) {
        if (ok() && !vars_.contains(v)) {
          fail(absl::StatusCode::kInvalidArgument,
               absl::StrCat(where, " of buffer parameter `", b.name(), "` (`", e.to_string(), "`) uses `",
                            v.name(),
                            "`, which no parameter defines (a variable is defined by a scalar parameter, a "
                            "dim or stride that is the bare variable, or a dim linear in it)"));
        }
      });
    };
    for (size_t d = 0; d < b.ndim(); ++d) check_defined(b.shape()[d], absl::StrCat("dim ", d));
    for (size_t d = 0; d < b->strides.size(); ++d) check_defined(b->strides[d], absl::StrCat("stride ", d));
  }
}

void KernelEmitter::emit_dim_checks() {
  if (!target_.runtime_checks) return;
  for (size_t i = 0; i < func_.params.size(); ++i) {
    const PrimParam& p = func_.params[i];
    if (!p.buffer) continue;
    const Buffer& b = *p.buffer;
    const std::string arg = absl::StrCat("args[", i, "]");
    const std::string label = arg_label(i);
    auto expected_text = [](const SymExpr& e) {
      return e.kind() == SymKind::kIntImm ? std::string() : absl::StrCat(" (", printf_text(e.to_string()), ")");
    };
    for (size_t d = 0; d < b.ndim(); ++d) {
      const SymExpr& dim = b.shape()[d];
      if (dim.is_var()) continue;
      const std::string actual = absl::StrCat(arg, ".shape[", d, "]");
      const std::string expected = as_int64(dim).text;
      line(absl::StrCat("if (", actual, " != ", expected, ") ",
                        fail_stmt(absl::StrCat(label, " dim ", d, " is %lld, expected %lld", expected_text(dim)),
                                  {long_long(actual), long_long(expected)})));
    }
    const BufferInfo& info = buffers_.at(b.get());
    const bool declared = !b->strides.empty();
    if (!declared) open(absl::StrCat("if (", arg, ".strides != nullptr)"));
    for (size_t d = 0; d < b.ndim(); ++d) {
      if (declared && b->strides[d].is_var()) continue;  // a definition site, checked above
      const std::string actual = absl::StrCat("relax_arg_stride(", arg, ", ", d, ")");
      const std::string& expected = info.strides[d];
      line(absl::StrCat("if (", arg, ".shape[", d, "] > 1 && ", actual, " != ", expected, ") ",
                        fail_stmt(absl::StrCat(label, " stride ", d, " is %lld, expected %lld",
                                               declared ? expected_text(b->strides[d]) : std::string()),
                                  {long_long(actual), long_long(expected)})));
    }
    if (!declared) close();
  }
}

void KernelEmitter::emit_nonempty_checks() {
  const std::vector<NonemptyExtent> required = nonempty_extents(func_.attrs);
  if (required.empty()) return;
  line("// Extents required nonempty.");
  for (const NonemptyExtent& r : required) {
    const std::string extent = as_int64(r.extent).text;
    if (!ok()) return;
    const std::string text = r.extent.kind() == SymKind::kIntImm ? std::string()
                                                                  : absl::StrCat(" (", r.extent.to_string(), ")");
    line(absl::StrCat("if (", extent, " == 0) ",
                      fail_stmt(printf_text(absl::StrCat(r.what, " is 0", text,
                                                         ", and an empty extent has no value to give")),
                                {})));
  }
}

void KernelEmitter::emit_prologue() {
  const std::vector<PrimParam>& params = func_.params;
  for (const PrimParam& p : params) {
    param_names_.push_back(p.buffer ? p.buffer->name() : p.scalar->name());
  }
  line("// Arguments.");
  line(absl::StrCat("if (num_args != ", params.size(), ") ",
                    fail_stmt(absl::StrCat("expected ", params.size(), " argument", params.size() == 1 ? "" : "s",
                                           ", got %d"),
                              {"static_cast<int>(num_args)"})));
  for (size_t i = 0; i < params.size(); ++i) emit_arg_checks(i, params[i]);
  if (!params.empty()) line("// Symbolic variables.");
  bind_variables();
  check_params_defined();
  if (!ok()) return;
  emit_nonempty_checks();
  if (!ok()) return;
  bool any_buffer = false;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].buffer) continue;
    const Buffer& b = *params[i].buffer;
    if (!any_buffer) line("// Buffers.");
    any_buffer = true;
    const std::string storage = storage_type(b.dtype());
    checked_type(b.dtype(), absl::StrCat("buffer parameter `", b.name(), "`"));
    if (!ok()) return;
    const std::string name = names_.fresh(b.name());
    line(absl::StrCat(storage, "* const ", name, " = static_cast<", storage, "*>(args[", i, "].data);"));
    add_buffer(b, name);
  }
  if (target_.runtime_checks && any_buffer) line("// Dims and strides.");
  emit_dim_checks();
}

}  // namespace relax::cpp_codegen
