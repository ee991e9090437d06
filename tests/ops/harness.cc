// The machinery behind the conformance rows: rows to IR text, deduction through the parser,
// one relax::build per family, runs at each size set, comparison with the reference.
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include <gtest/gtest.h>

#include "families.h"
#include "relax/codegen/build.h"
#include "relax/ir/expr.h"
#include "relax/ir/parser.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/well_formed.h"
#include "relax/support/dtype_util.h"
#include "relax/support/float_format.h"

namespace relax::ops_test {

namespace {

// The binding every row function makes (a parameter must not have this name).
constexpr const char* kResultName = "row_result";

std::string row_header(const char* kind, const std::string& op, const std::string& params, const std::string& call,
                       const RowSite& site) {
  std::ostringstream os;
  os << site.file << ":" << site.line << ": " << kind << " row of " << op << "\n  params: " << params
     << "\n  call:   " << call << "\n";
  return os.str();
}

// gtest names allow letters, digits and '_'.
std::string test_name_part(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

std::vector<RowCase> cases_of_kind(bool numeric) {
  std::vector<RowCase> cases;
  std::map<std::string, int> seen;  // rows of this kind per op so far
  const std::vector<OpRows>& rows = all_rows();
  for (size_t f = 0; f < rows.size(); ++f) {
    for (size_t i = 0; i < rows[f].size(); ++i) {
      if (std::holds_alternative<NumericRow>(rows[f][i]) != numeric) continue;
      const std::string& op = numeric ? std::get<NumericRow>(rows[f][i]).op : std::get<DeduceRow>(rows[f][i]).op;
      cases.push_back(RowCase{f, i, test_name_part(op) + "_" + std::to_string(seen[op]++)});
    }
  }
  return cases;
}

// The function of a parsed one-function module, and its one binding.
const FunctionNode* only_function(const IRModule& mod) {
  if (mod.functions().size() != 1) return nullptr;
  return mod.functions().front().second.as<FunctionNode>();
}

const Binding* only_binding(const FunctionNode& fn) {
  const auto* seq = fn.body.as<SeqExprNode>();
  if (seq == nullptr || seq->blocks.size() != 1 || seq->blocks[0].bindings.size() != 1) return nullptr;
  return &seq->blocks[0].bindings[0];
}

std::string module_text(const std::string& functions) { return "module {\n" + functions + "}\n"; }

// The line of the row's binding in module_text(row_function_text(...)): errors of the call
// start with it.
int binding_line(const std::string& params) {
  return 3 + static_cast<int>(std::count(params.begin(), params.end(), '\n'));
}

Target test_target() {
  Target t;
  // Shared by the processes of one ctest run (one per row), so that a family's module is
  // compiled once and then found in the cache.
  t.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_ops_test_cache").string();
  return t;
}

// ---------------------------------------------------------------------------
// Numerical rows: one module per family.

struct PreparedRow {
  std::string error;     // why the row could not be built (deduction failed), else ""
  std::string function;  // its function's name in the family module
  std::string text;      // its function's text, returning the deduced annotation
  std::vector<StructInfo> params;
  std::vector<SymVar> vars;  // what the parameters define, in order
};

struct FamilyBuild {
  std::map<size_t, PreparedRow> rows;
  absl::Status status;  // of building the module of every prepared row
  runtime::Module module;
};

PreparedRow prepare_row(const NumericRow& row, size_t index) {
  PreparedRow p;
  p.function = "row_" + std::to_string(index);
  const std::string header = row_header("numeric", row.op, row.params, row.call, row.site);
  absl::StatusOr<IRModule> mod = parse_module(module_text(row_function_text("main", row.params, row.call, "Object")));
  if (!mod.ok()) {
    p.error = header + "  deduction failed: " + std::string(mod.status().message());
    return p;
  }
  const FunctionNode* fn = only_function(*mod);
  const Binding* binding = fn ? only_binding(*fn) : nullptr;
  if (binding == nullptr) {
    p.error = header + "  the row does not make one function with one binding (is `call` one call?)";
    return p;
  }
  for (const Var& v : fn->params) p.params.push_back(v.struct_info());
  p.vars = defined_sym_vars(p.params);
  p.text = row_function_text(p.function, row.params, row.call, binding->var.struct_info().to_string());
  return p;
}

FamilyBuild& family_build(const std::string& family, const OpRows& rows) {
  static std::map<std::string, std::unique_ptr<FamilyBuild>> builds;
  std::unique_ptr<FamilyBuild>& slot = builds[family];
  if (slot) return *slot;
  slot = std::make_unique<FamilyBuild>();
  std::string functions;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (const auto* row = std::get_if<NumericRow>(&rows[i])) {
      PreparedRow p = prepare_row(*row, i);
      if (p.error.empty()) functions += p.text;
      slot->rows.emplace(i, std::move(p));
    }
  }
  absl::StatusOr<IRModule> mod = parse_module(module_text(functions));
  if (!mod.ok()) {
    slot->status = mod.status();
    return *slot;
  }
  absl::StatusOr<runtime::Module> built = build(*mod, test_target());
  if (built.ok()) {
    slot->module = *built;
  } else {
    slot->status = built.status();
  }
  return *slot;
}

// A row's Module: the family's, or (when the family's failed to build) one of the row alone,
// so that only the rows that fail to build fail.
absl::StatusOr<runtime::Module> row_module(const FamilyBuild& fb, const PreparedRow& p) {
  if (fb.status.ok()) return fb.module;
  absl::StatusOr<IRModule> mod = parse_module(module_text(p.text));
  if (!mod.ok()) return mod.status();
  return build(*mod, test_target());
}

// The seed of the inputs of one run: the same for the same family, row and run.
uint64_t seed_of(const std::string& family, size_t row, size_t run) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the family's name
  for (char c : family) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  for (uint64_t v : {uint64_t{row}, uint64_t{run}}) h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

std::string dims_text(const std::map<std::string, int64_t>& dims) {
  std::string s;
  for (const auto& [name, value] : dims) s += (s.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  return s.empty() ? "no symbolic dims" : s;
}

// The size sets of a row: runs[r][v] is the value of vars[v] in run r; or an error.
absl::StatusOr<std::vector<std::vector<int64_t>>> size_sets(const NumericRow& row, const std::vector<SymVar>& vars) {
  std::map<std::string, const std::vector<int64_t>*> listed;
  for (const DimSizes& d : row.sizes) {
    const bool known = std::any_of(vars.begin(), vars.end(), [&](const SymVar& v) { return v.name() == d.var; });
    if (!known) return absl::InvalidArgumentError("sizes name `" + d.var + "`, which the parameters do not define");
    listed[d.var] = &d.values;
  }
  size_t runs = 0;
  for (const SymVar& v : vars) {
    auto it = listed.find(v.name());
    const size_t count = it == listed.end() ? kDefaultSizes.size() : it->second->size();
    if (runs != 0 && count != runs) {
      return absl::InvalidArgumentError("the size lists have different lengths (" + std::to_string(runs) + " and " +
                                   std::to_string(count) + " at `" + v.name() +
                                   "`); unlisted variables take kDefaultSizes");
    }
    runs = count;
  }
  std::vector<std::vector<int64_t>> sets(std::max<size_t>(runs, 1));
  for (size_t r = 0; r < runs; ++r) {
    for (const SymVar& v : vars) {
      auto it = listed.find(v.name());
      sets[r].push_back(it == listed.end() ? kDefaultSizes[r] : (*it->second)[r]);
    }
  }
  return sets;
}

absl::StatusOr<std::vector<int64_t>> evaluate_dims(const std::vector<SymExpr>& dims, const SymVarMap<int64_t>& env) {
  std::vector<int64_t> out;
  for (const SymExpr& d : dims) {
    absl::StatusOr<int64_t> v = evaluate(d, env);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  return out;
}

// The arguments of one run: the Values to call with and the reference's view of them.
absl::Status make_inputs(const NumericRow& row, const PreparedRow& p, const SymVarMap<int64_t>& env,
                         uint64_t seed_base, std::vector<runtime::Value>* args, std::vector<HostTensor>* host) {
  for (size_t i = 0; i < p.params.size(); ++i) {
    const StructInfo& s = p.params[i];
    const std::string where = "parameter " + std::to_string(i) + " " + s.to_string();
    Rng rng(seed_base + i * 0x632be59bd9b4e019ull);
    if (const auto* t = s.as<TensorStructInfoNode>()) {
      if (!t->shape || !t->dtype) return absl::InvalidArgumentError(where + ": a numeric row needs known shapes and dtypes");
      absl::StatusOr<std::vector<int64_t>> shape = evaluate_dims(*t->shape, env);
      if (!shape.ok()) return absl::InvalidArgumentError(where + ": " + std::string(shape.status().message()));
      if (numel_of(*shape) > kMaxInputElements) {
        return absl::InvalidArgumentError(where + " has " + std::to_string(numel_of(*shape)) + " elements, more than " +
                                     std::to_string(kMaxInputElements) + ": list smaller sizes");
      }
      InputSpec spec{i, *shape, *t->dtype};
      HostTensor x = row.generator ? row.generator(spec, rng) : default_input(row, spec, rng);
      if (x.shape != spec.shape || x.dtype != spec.dtype || x.numel() != numel_of(spec.shape)) {
        return absl::InvalidArgumentError(where + ": the input generator made " + x.describe());
      }
      args->push_back(to_runtime(x));
      host->push_back(std::move(x));
    } else if (const auto* prim = s.as<PrimStructInfoNode>()) {
      HostTensor x;
      if (prim->value.defined()) {
        absl::StatusOr<int64_t> v = evaluate(prim->value, env);
        if (!v.ok()) return absl::InvalidArgumentError(where + ": " + std::string(v.status().message()));
        x = HostTensor::scalar(static_cast<double>(*v), prim->dtype);
      } else {
        InputSpec spec{i, {}, prim->dtype};
        x = row.generator ? row.generator(spec, rng) : default_input(row, spec, rng);
      }
      if (x.numel() != 1) return absl::InvalidArgumentError(where + ": the input generator made " + x.describe());
      if (is_scalar_float(prim->dtype)) {
        args->push_back(runtime::Value(x.values[0]));
      } else {
        args->push_back(runtime::Value(static_cast<int64_t>(x.values[0])));
      }
      host->push_back(std::move(x));
    } else if (const auto* shape = s.as<ShapeStructInfoNode>()) {
      if (!shape->values) return absl::InvalidArgumentError(where + ": a numeric row needs known Shape parameters");
      absl::StatusOr<std::vector<int64_t>> dims = evaluate_dims(*shape->values, env);
      if (!dims.ok()) return absl::InvalidArgumentError(where + ": " + std::string(dims.status().message()));
      HostTensor x = HostTensor::filled({static_cast<int64_t>(dims->size())}, DataType::int64());
      for (size_t d = 0; d < dims->size(); ++d) x.values[d] = static_cast<double>((*dims)[d]);
      args->push_back(runtime::Value::shape(*dims));
      host->push_back(std::move(x));
    } else {
      return absl::InvalidArgumentError(where + ": numeric rows take Tensor, Prim and Shape parameters");
    }
  }
  return absl::OkStatus();
}

bool is_float_dtype(DataType t) { return is_scalar_float(t); }

std::string value_text(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

std::string index_text(const std::vector<int64_t>& shape, int64_t flat) {
  std::string s = "(";
  const std::vector<int64_t> index = unravel(flat, shape);
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + ")";
}

}  // namespace

// ---------------------------------------------------------------------------

void PrintTo(const RowCase& c, std::ostream* os) { *os << c.name; }

const std::vector<OpRows>& all_rows() {
  static const std::vector<OpRows> rows = [] {
    std::vector<OpRows> r;
    for (const OpFamily& f : op_families()) r.push_back(f.rows());
    return r;
  }();
  return rows;
}

std::vector<RowCase> deduce_cases() { return cases_of_kind(false); }
std::vector<RowCase> numeric_cases() { return cases_of_kind(true); }

std::string row_function_text(const std::string& name, const std::string& params, const std::string& call,
                              const std::string& ret) {
  return "  func @" + name + "(" + params + ") -> " + ret + " {\n    " + kResultName + " = " + call +
         "\n    return " + kResultName + "\n  }\n";
}

std::string check_deduce_row(const DeduceRow& row) {
  const std::string header = row_header("deduce", row.op, row.params, row.call, row.site);
  if (row.expect_error && row.expected.find(row.op) == std::string::npos) {
    return header + "  the expected error text `" + row.expected + "` must name the op `" + row.op + "`";
  }
  absl::StatusOr<IRModule> mod = parse_module(module_text(row_function_text("main", row.params, row.call, "Object")));
  if (!mod.ok()) {
    const std::string message(mod.status().message());
    if (!row.expect_error) return header + "  expected: " + row.expected + "\n  got the error: " + message;
    if (message.find(row.expected) == std::string::npos) {
      return header + "  expected an error containing: " + row.expected + "\n  got: " + message;
    }
    // The error must come from the call, not from the parameters' text.
    const std::string at_call = std::to_string(binding_line(row.params)) + ":";
    if (message.rfind(at_call, 0) != 0) {
      return header + "  expected the error at the call (line " + at_call + "), got: " + message;
    }
    return "";
  }
  const FunctionNode* fn = only_function(*mod);
  const Binding* binding = fn ? only_binding(*fn) : nullptr;
  if (binding == nullptr) return header + "  the row does not make one function with one binding";
  const std::string got = binding->var.struct_info().to_string();
  if (row.expect_error) return header + "  expected an error containing: " + row.expected + "\n  got: " + got;
  if (got != row.expected) return header + "  expected: " + row.expected + "\n  got:      " + got;
  if (absl::Status s = well_formed(*mod); !s.ok()) return header + "  not well formed: " + std::string(s.message());
  return "";
}

std::string check_numeric_row(const std::string& family, const OpRows& rows, size_t row_index) {
  const auto& row = std::get<NumericRow>(rows[row_index]);
  const std::string header = row_header("numeric", row.op, row.params, row.call, row.site);
  FamilyBuild& fb = family_build(family, rows);
  const PreparedRow& p = fb.rows.at(row_index);
  if (!p.error.empty()) return p.error;
  absl::StatusOr<runtime::Module> module = row_module(fb, p);
  if (!module.ok()) {
    return header + "  relax::build failed: " + std::string(module.status().message()) +
           "\n  (the family module: " + fb.status.ToString() + ")";
  }
  absl::StatusOr<std::vector<std::vector<int64_t>>> sets = size_sets(row, p.vars);
  if (!sets.ok()) return header + "  " + std::string(sets.status().message());
  const runtime::Function fn = (*module)[p.function];
  for (size_t r = 0; r < sets->size(); ++r) {
    SymVarMap<int64_t> env;
    RefInputs in;
    for (size_t v = 0; v < p.vars.size(); ++v) {
      env[p.vars[v]] = (*sets)[r][v];
      in.dims[p.vars[v].name()] = (*sets)[r][v];
    }
    const std::string run = "  run " + std::to_string(r) + " (" + dims_text(in.dims) + "): ";
    std::vector<runtime::Value> args;
    if (absl::Status s = make_inputs(row, p, env, seed_of(family, row_index, r), &args, &in.args); !s.ok()) {
      return header + run + std::string(s.message());
    }
    const RefResult want = row.reference(in);
    absl::StatusOr<runtime::Value> out = fn.call(std::move(args));
    if (want.error) {
      if (want.error->find(row.op) == std::string::npos) {
        return header + run + "the expected error text `" + *want.error + "` must name the op `" + row.op + "`";
      }
      if (out.ok()) return header + run + "expected the call to fail with: " + *want.error + "\n  it succeeded";
      const std::string message(out.status().message());
      if (message.find(*want.error) == std::string::npos) {
        return header + run + "expected the call to fail with: " + *want.error + "\n  got: " + message;
      }
      continue;
    }
    if (!out.ok()) return header + run + "the call failed: " + std::string(out.status().message());
    const CallResult got = result_of(*out);
    if (want.is_tuple != got.is_tuple) {
      return header + run + (got.is_tuple ? "got a tuple, the reference gives a tensor"
                                      : "got a tensor, the reference gives a tuple");
    }
    const Tolerance tol =
        row.tol ? *row.tol : default_tolerance(want.fields.empty() ? DataType::float32() : want.fields[0].dtype);
    std::string diff = compare_results(got, want, tol);
    if (!diff.empty()) return header + run + diff;
  }
  return "";
}

std::string compare_results(const CallResult& got, const RefResult& want, Tolerance tol) {
  if (got.fields.size() != want.fields.size()) {
    return "got " + std::to_string(got.fields.size()) + " outputs, the reference gives " +
           std::to_string(want.fields.size());
  }
  for (size_t o = 0; o < got.fields.size(); ++o) {
    const HostTensor& g = got.fields[o];
    const HostTensor& w = want.fields[o];
    const std::string which = got.fields.size() > 1 ? "output " + std::to_string(o) + ": " : "";
    if (g.shape != w.shape) return which + "got " + g.describe() + ", the reference gives " + w.describe();
    // A scalar result (a Prim) comes back as int64 or float64 whatever its dtype.
    if (g.dtype != w.dtype && !got.scalar[o]) {
      return which + "got " + g.describe() + ", the reference gives " + w.describe();
    }
    const bool exact = !is_float_dtype(w.dtype);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < g.numel(); ++i) {
      const double a = g.values[static_cast<size_t>(i)], b = w.values[static_cast<size_t>(i)];
      bool ok = false;
      if (exact || std::isinf(b)) {
        ok = a == b;
      } else if (std::isnan(b)) {
        ok = std::isnan(a);
      } else {
        ok = std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b);  // false for a NaN a
      }
      if (!ok && bad++ == 0) first = i;
    }
    if (bad > 0) {
      const auto f = static_cast<size_t>(first);
      std::string s = which + std::to_string(bad) + " of " + std::to_string(g.numel()) + " elements differ; first at " +
                      index_text(g.shape, first) + ": got " + value_text(g.values[f]) + ", want " +
                      value_text(w.values[f]);
      if (!exact) s += " (rtol " + value_text(tol.rtol) + ", atol " + value_text(tol.atol) + ")";
      return s;
    }
  }
  return "";
}

namespace {

template <typename T>
void read_elements(const runtime::Tensor& t, std::vector<double>& out) {
  const T* p = static_cast<const T*>(t.data());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
}

template <typename T>
void write_elements(const std::vector<double>& in, const runtime::Tensor& t) {
  T* p = static_cast<T*>(t.data());
  for (size_t i = 0; i < in.size(); ++i) p[i] = static_cast<T>(in[i]);
}

}  // namespace

HostTensor to_host(const runtime::Tensor& tensor) {
  runtime::Tensor t = tensor;
  if (!t.is_contiguous()) {
    t = *runtime::Tensor::empty(tensor.shape(), tensor.dtype());
    RELAX_CHECK(t.copy_from(tensor).ok()) << "copying " << tensor.describe();
  }
  HostTensor h = HostTensor::filled(t.shape(), t.dtype());
  const DataType d = t.dtype();
  RELAX_CHECK(d.lanes == 1) << "to_host of " << t.describe();
  if (d.code == DataType::Code::kBFloat) {
    const auto* p = static_cast<const uint16_t*>(t.data());
    for (size_t i = 0; i < h.values.size(); ++i) h.values[i] = bfloat16_value(p[i]);
  } else if (d.code == DataType::Code::kFloat && d.bits == 16) {
    const auto* p = static_cast<const uint16_t*>(t.data());
    for (size_t i = 0; i < h.values.size(); ++i) h.values[i] = float16_value(p[i]);
  } else if (d == DataType::float32()) {
    read_elements<float>(t, h.values);
  } else if (d == DataType::float64()) {
    read_elements<double>(t, h.values);
  } else if (d == DataType::boolean()) {
    read_elements<bool>(t, h.values);
  } else if (d.code == DataType::Code::kInt || d.code == DataType::Code::kUInt) {
    const bool s = d.code == DataType::Code::kInt;
    switch (d.bits) {
      case 8: s ? read_elements<int8_t>(t, h.values) : read_elements<uint8_t>(t, h.values); break;
      case 16: s ? read_elements<int16_t>(t, h.values) : read_elements<uint16_t>(t, h.values); break;
      case 32: s ? read_elements<int32_t>(t, h.values) : read_elements<uint32_t>(t, h.values); break;
      case 64: s ? read_elements<int64_t>(t, h.values) : read_elements<uint64_t>(t, h.values); break;
      default: RELAX_CHECK(false) << "to_host of " << t.describe();
    }
  } else {
    RELAX_CHECK(false) << "to_host of " << t.describe();
  }
  return h;
}

runtime::Tensor to_runtime(const HostTensor& h) {
  runtime::Tensor t = *runtime::Tensor::empty(h.shape, h.dtype);
  const DataType d = h.dtype;
  if (d.code == DataType::Code::kBFloat) {
    auto* p = static_cast<uint16_t*>(t.data());
    for (size_t i = 0; i < h.values.size(); ++i) p[i] = bfloat16_bits(h.values[i]);
  } else if (d.code == DataType::Code::kFloat && d.bits == 16) {
    auto* p = static_cast<uint16_t*>(t.data());
    for (size_t i = 0; i < h.values.size(); ++i) p[i] = float16_bits(h.values[i]);
  } else if (d == DataType::float32()) {
    write_elements<float>(h.values, t);
  } else if (d == DataType::float64()) {
    write_elements<double>(h.values, t);
  } else if (d == DataType::boolean()) {
    auto* p = static_cast<bool*>(t.data());
    for (size_t i = 0; i < h.values.size(); ++i) p[i] = h.values[i] != 0;
  } else if (d.code == DataType::Code::kInt || d.code == DataType::Code::kUInt) {
    const bool s = d.code == DataType::Code::kInt;
    switch (d.bits) {
      case 8: s ? write_elements<int8_t>(h.values, t) : write_elements<uint8_t>(h.values, t); break;
      case 16: s ? write_elements<int16_t>(h.values, t) : write_elements<uint16_t>(h.values, t); break;
      case 32: s ? write_elements<int32_t>(h.values, t) : write_elements<uint32_t>(h.values, t); break;
      case 64: s ? write_elements<int64_t>(h.values, t) : write_elements<uint64_t>(h.values, t); break;
      default: RELAX_CHECK(false) << "to_runtime of " << h.describe();
    }
  } else {
    RELAX_CHECK(false) << "to_runtime of " << h.describe();
  }
  return t;
}

CallResult result_of(const runtime::Value& v) {
  CallResult r;
  r.is_tuple = v.is_tuple();
  const std::vector<runtime::Value> single{v};
  for (const runtime::Value& f : v.is_tuple() ? v.fields_or_die() : single) {
    r.scalar.push_back(f.is_int() || f.is_float());
    if (f.is_tensor()) {
      r.fields.push_back(to_host(f.tensor_or_die()));
    } else if (f.is_shape()) {
      const std::vector<int64_t>& dims = f.shape_dims_or_die();
      HostTensor h = HostTensor::filled({static_cast<int64_t>(dims.size())}, DataType::int64());
      for (size_t i = 0; i < dims.size(); ++i) h.values[i] = static_cast<double>(dims[i]);
      r.fields.push_back(std::move(h));
    } else if (f.is_int()) {
      r.fields.push_back(HostTensor::scalar(static_cast<double>(f.int_value_or_die()), DataType::int64()));
    } else if (f.is_float()) {
      r.fields.push_back(HostTensor::scalar(f.float_value_or_die(), DataType::float64()));
    } else {
      RELAX_CHECK(false) << "unsupported result " << v.describe() << " (a nested tuple, a string or none)";
    }
  }
  return r;
}

Tolerance default_tolerance(DataType dtype) {
  if (dtype.code == DataType::Code::kBFloat) return Tolerance{1e-2, 1e-2};
  if (dtype.code == DataType::Code::kFloat && dtype.bits == 16) return Tolerance{2e-3, 2e-3};
  if (dtype == DataType::float64()) return Tolerance{1e-10, 1e-10};
  return kDefaultTolerance;
}

}  // namespace relax::ops_test
