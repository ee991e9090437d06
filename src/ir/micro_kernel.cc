// The micro-kernel registry (relax/ir/micro_kernel.h).
//
// One process-wide table, created on first use with the built-in kernels of
// relax/support/micro_kernels.h already in it (their source is that header's
// text, embedded by src/CMakeLists.txt, so the copy a generated unit gets is
// the code the host functions were compiled from). Records live in a deque and
// are never removed, so a pointer find_micro_kernel returns stays valid while
// other threads register more.
#include "relax/ir/micro_kernel.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <mutex>
#include <shared_mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/prim_func.h"
#include "relax/support/check.h"
#include "relax/support/micro_kernels.h"
#include "relax_micro_kernels_text.h"

namespace relax {
namespace {

bool is_kernel_dtype(DataType t) {
  if (t.lanes != 1) return false;
  if (t.is_bool()) return true;
  // float16 and bfloat16 elements as the generated code stores them (uint16_t bits), behind a
  // pointer.
  if (t.code == DataType::Code::kFloat) return t.bits == 16 || t.bits == 32 || t.bits == 64;
  if (t.code == DataType::Code::kBFloat) return t.bits == 16;
  if (t.is_int()) return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  return false;
}

bool is_count(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && v >= 0;
}

absl::Status check_record(const MicroKernel& k) {
  const std::string who = absl::StrCat("micro-kernel `", k.name, "`");
  if (!is_micro_kernel_name(k.name)) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": the name is not a C identifier"));
  }
  if (k.source.empty()) return absl::InvalidArgumentError(absl::StrCat(who, ": no C++ source"));
  if (k.host == nullptr) return absl::InvalidArgumentError(absl::StrCat(who, ": no host function"));
  for (size_t i = 0; i < k.params.size(); ++i) {
    const MicroKernelParam& p = k.params[i];
    const std::string where = absl::StrCat(who, ": parameter ", i);
    if (!is_micro_kernel_name(p.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, p.name.empty() ? " has no name (one name per parameter)"
                                : absl::StrCat(" is named `", p.name, "`, not an identifier")));
    }
    for (size_t j = 0; j < i; ++j) {
      if (k.params[j].name == p.name) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": a second parameter `", p.name, "`"));
      }
    }
    if (!is_kernel_dtype(p.dtype)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " (`", p.name, "`): dtype ", p.dtype.to_string(), " is not supported"));
    }
    if (p.kind == MicroKernelParam::Kind::kScalar) {
      if (p.dtype.bits == 16 && (p.dtype.code == DataType::Code::kBFloat || p.dtype.code == DataType::Code::kFloat)) {
        return absl::InvalidArgumentError(absl::StrCat(where, " (`", p.name, "`): a ", p.dtype.to_string(),
                                                       " scalar is not supported (", p.dtype.to_string(),
                                                       " elements behind a pointer are)"));
      }
      if (!p.extent.empty() || p.writes) {
        return absl::InvalidArgumentError(absl::StrCat(where, " (`", p.name, "`) is a scalar: it has no extent"));
      }
      continue;
    }
    if (p.extent.empty() || is_count(p.extent)) continue;
    auto named = std::find_if(k.params.begin(), k.params.end(),
                              [&](const MicroKernelParam& q) { return q.name == p.extent; });
    if (named == k.params.end() || named->kind != MicroKernelParam::Kind::kScalar ||
        !named->dtype.is_int() || named->dtype.is_bool()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " (`", p.name, "`): the extent `", p.extent,
                                                     "` is neither a count nor an integer scalar parameter"));
    }
  }
  return absl::OkStatus();
}

class Registry {
 public:
  Registry() {
    const std::string builtin_source = detail::kMicroKernelsText;
    add_builtin(make_micro_kernel<&relax_dot_f32>("relax_dot_f32", builtin_source,
                                                  {"x[n]", "y[n]", "n", "out[1]"}));
    add_builtin(make_micro_kernel<&relax_axpy_f32>("relax_axpy_f32", builtin_source,
                                                   {"a", "x[n]", "n", "y[n]"}));
    add_builtin(make_micro_kernel<&relax_int4_row_f32>("relax_int4_row_f32", builtin_source,
                                                       {"x[depth]", "q", "s", "depth", "cols", "stride", "y[cols]"}));
    add_builtin(make_micro_kernel<&relax_f32_rows>("relax_f32_rows", builtin_source,
                                                   {"x", "rows", "ldx", "w", "depth", "cols", "stride", "y", "ldy"}));
    // Their weights are bfloat16 / float16: their bits in uint16_t, the generated code's storage.
    MicroKernel bf16_rows = make_micro_kernel<&relax_bf16_rows>(
        "relax_bf16_rows", builtin_source, {"x", "rows", "ldx", "w", "depth", "cols", "stride", "y", "ldy"});
    bf16_rows.params[3].dtype = DataType::bfloat16();
    add_builtin(std::move(bf16_rows));
    MicroKernel f16_rows = make_micro_kernel<&relax_f16_rows>(
        "relax_f16_rows", builtin_source, {"x", "rows", "ldx", "w", "depth", "cols", "stride", "y", "ldy"});
    f16_rows.params[3].dtype = DataType::float16();
    add_builtin(std::move(f16_rows));
    add_builtin(make_micro_kernel<&relax_int4_rows_i8>(
        "relax_int4_rows_i8", builtin_source,
        {"x", "rows", "ldx", "q", "s", "depth", "cols", "stride", "y", "ldy"}));
    add_builtin(make_micro_kernel<&relax_int8_rows_i8>(
        "relax_int8_rows_i8", builtin_source,
        {"x", "rows", "ldx", "q", "s", "depth", "cols", "stride", "y", "ldy"}));
  }

  absl::Status add(MicroKernel kernel) {
    if (absl::Status s = check_record(kernel); !s.ok()) return s;
    std::unique_lock lock(mu_);
    if (by_name_.contains(kernel.name)) {
      return absl::AlreadyExistsError(absl::StrCat("micro-kernel `", kernel.name, "` is already registered"));
    }
    records_.push_back(std::move(kernel));
    by_name_[records_.back().name] = &records_.back();
    return absl::OkStatus();
  }

  const MicroKernel* find(std::string_view name) const {
    std::shared_lock lock(mu_);
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : it->second;
  }

  std::vector<std::string> names() const {
    std::shared_lock lock(mu_);
    std::vector<std::string> out;
    for (const auto& [name, _] : by_name_) out.push_back(name);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  void add_builtin(MicroKernel kernel) {
    absl::Status s = add(std::move(kernel));
    RELAX_CHECK(s.ok()) << s.message();
  }

  mutable std::shared_mutex mu_;
  std::deque<MicroKernel> records_;
  absl::flat_hash_map<std::string, const MicroKernel*> by_name_;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: kernels may be looked up at exit
  return *r;
}

}  // namespace

absl::Status register_micro_kernel(MicroKernel kernel) { return registry().add(std::move(kernel)); }

const MicroKernel* find_micro_kernel(std::string_view name) { return registry().find(name); }

std::vector<std::string> micro_kernel_names() { return registry().names(); }

bool is_micro_kernel_name(std::string_view name) {
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !start(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

namespace {
// "a float32 scalar", "an int64 scalar".
std::string a_scalar(DataType t) {
  const std::string name = t.to_string();
  return absl::StrCat(name[0] == 'i' ? "an " : "a ", name, " scalar");
}
}  // namespace

absl::Status check_extern_call(const ExternCallNode& call) {
  const MicroKernel* kernel = find_micro_kernel(call.name);
  if (kernel == nullptr) {
    return absl::NotFoundError(absl::StrCat("extern call of `", call.name,
                                            "`: no micro-kernel of that name is registered"));
  }
  const std::string who = absl::StrCat("extern call of `", call.name, "`");
  if (call.args.size() != kernel->params.size()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", call.args.size(), " arguments, but ",
                                                   micro_kernel_signature(*kernel), " takes ",
                                                   kernel->params.size()));
  }
  for (size_t i = 0; i < call.args.size(); ++i) {
    const ExternArg& a = call.args[i];
    const MicroKernelParam& p = kernel->params[i];
    const std::string where = absl::StrCat(who, ": argument ", i, " (`", p.name, "`)");
    if (p.kind == MicroKernelParam::Kind::kScalar) {
      if (a.is_region()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": expected ", a_scalar(p.dtype),
                                                       ", found the region of `", a.buffer.name(), "`"));
      }
      if (a.value.dtype() != p.dtype) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": expected ", a_scalar(p.dtype), ", found `",
                                                       a.value.to_string(), "` of dtype ", a.value.dtype().to_string()));
      }
      continue;
    }
    if (!a.is_region()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": expected a region of ", p.dtype.to_string(),
                                                     " elements (&buffer[...]), found `", a.value.to_string(), "`"));
    }
    if (a.buffer.dtype() != p.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": expected a region of ", p.dtype.to_string(),
                                                     " elements, found `", a.buffer.name(), "` of dtype ",
                                                     a.buffer.dtype().to_string()));
    }
  }
  return absl::OkStatus();
}

SymExpr extern_region_extent(const MicroKernel& kernel, const ExternCallNode& call, size_t arg) {
  const std::string& extent = kernel.params[arg].extent;
  if (extent.empty()) return SymExpr();
  if (is_count(extent)) return SymExpr::int_imm(std::stoll(extent), DataType::int64());
  for (size_t j = 0; j < kernel.params.size(); ++j) {
    if (kernel.params[j].name != extent || j >= call.args.size()) continue;
    const SymExpr& v = call.args[j].value;
    if (!v.defined() || !v.dtype().is_int()) return SymExpr();
    return v.dtype() == DataType::int64() ? v : cast(DataType::int64(), v);
  }
  return SymExpr();
}

std::string micro_kernel_signature(const MicroKernel& kernel) {
  std::string s = kernel.name + "(";
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const MicroKernelParam& p = kernel.params[i];
    absl::StrAppend(&s, i > 0 ? ", " : "", p.name, ": ");
    if (p.kind == MicroKernelParam::Kind::kScalar) {
      absl::StrAppend(&s, p.dtype.to_string());
    } else {
      absl::StrAppend(&s, p.writes ? "" : "const ", p.dtype.to_string(), "*",
                      p.extent.empty() ? "" : absl::StrCat("[", p.extent, "]"));
    }
  }
  return s + ")";
}

}  // namespace relax
