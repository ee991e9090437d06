// BoundWeights (relax/runtime/bound_weights.h).
#include "relax/runtime/bound_weights.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace relax::runtime {
namespace {

const VMFunction* find(const Module& module, const std::string& name) {
  const Executable& exec = module.executable();
  const int index = exec.find_function(name);
  return index < 0 ? nullptr : &exec.functions[static_cast<size_t>(index)];
}

absl::Status bad_result(const std::string& what) {
  return absl::InternalError(absl::StrCat("BoundWeights::bind: @", kWeightTransformFunction, " returned ", what,
                                          " (expected a tuple of (name, tensor) pairs)"));
}

}  // namespace

absl::StatusOr<BoundWeights> BoundWeights::bind(const Module& module, std::map<std::string, Value> weights) {
  BoundWeights out;
  for (const auto& [name, value] : weights) out.given_.push_back(name);
  out.values_ = std::move(weights);
  const VMFunction* transform = find(module, kWeightTransformFunction);
  if (transform == nullptr) return out;
  std::vector<Value> args;
  for (const std::string& name : transform->param_names) {
    auto it = out.values_.find(name);
    if (it == out.values_.end()) {
      return absl::NotFoundError(absl::StrCat("BoundWeights::bind: @", kWeightTransformFunction, " reads the weight `",
                                              name, "`, which is not among the ", out.values_.size(), " given"));
    }
    args.push_back(it->second);
  }
  absl::StatusOr<Value> result = module[kWeightTransformFunction].call(std::move(args));
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat("BoundWeights::bind: ", result.status().message()));
  }
  absl::StatusOr<std::vector<Value>> pairs = result->fields();
  if (!pairs.ok()) return bad_result(value_kind_name(result->kind()));
  for (const Value& pair : *pairs) {
    absl::StatusOr<std::vector<Value>> fields = pair.fields();
    if (!fields.ok() || fields->size() != 2 || !(*fields)[0].is_string() || !(*fields)[1].is_tensor()) {
      return bad_result(absl::StrCat("an item of kind ", value_kind_name(pair.kind())));
    }
    const std::string name = *(*fields)[0].string_value();
    const Tensor& tensor = (*fields)[1].tensor_or_die();
    out.computed_bytes_ += tensor.nbytes();
    out.computed_.push_back(name);
    out.values_[name] = (*fields)[1];
  }
  return out;
}

absl::StatusOr<std::vector<Value>> BoundWeights::arguments(const Module& module, const std::string& function,
                                                           std::vector<Value> leading) const {
  const VMFunction* fn = find(module, function);
  if (fn == nullptr) {
    return absl::NotFoundError(absl::StrCat("BoundWeights::arguments: the module has no function `", function,
                                            "` (functions: ", absl::StrJoin(module.function_names(), ", "), ")"));
  }
  if (leading.size() > fn->param_names.size()) {
    return absl::InvalidArgumentError(absl::StrCat("BoundWeights::arguments: @", function, " takes ",
                                                   fn->param_names.size(), " parameters, ", leading.size(),
                                                   " leading arguments given"));
  }
  std::vector<Value> args = std::move(leading);
  for (size_t i = args.size(); i < fn->param_names.size(); ++i) {
    const std::string& name = fn->param_names[i];
    auto it = values_.find(name);
    if (it == values_.end()) {
      return absl::NotFoundError(absl::StrCat("BoundWeights::arguments: @", function, "'s parameter ", i, " `", name,
                                              "` is not a bound weight"));
    }
    args.push_back(it->second);
  }
  return args;
}

std::vector<std::string> BoundWeights::unread_by_functions(const Module& module) const {
  std::set<std::string> read;
  for (const VMFunction& fn : module.executable().functions) {
    if (fn.name == kWeightTransformFunction) continue;
    read.insert(fn.param_names.begin(), fn.param_names.end());
  }
  std::vector<std::string> out;
  for (const std::string& name : given_) {
    if (!read.contains(name)) out.push_back(name);
  }
  return out;
}

}  // namespace relax::runtime
