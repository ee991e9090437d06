// LlamaConfig: validation, the parameter file's metadata, and the tensors of the file.
#include <array>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "relax/models/llama.h"

namespace relax::models {
namespace {

// The integer fields of the config, by their metadata key.
constexpr std::array<std::pair<const char*, int64_t LlamaConfig::*>, 10> kIntFields = {{
    {"hidden", &LlamaConfig::hidden},
    {"layers", &LlamaConfig::layers},
    {"heads", &LlamaConfig::heads},
    {"kv_heads", &LlamaConfig::kv_heads},
    {"head_dim", &LlamaConfig::head_dim},
    {"intermediate", &LlamaConfig::intermediate},
    {"vocab", &LlamaConfig::vocab},
    {"max_batch", &LlamaConfig::max_batch},
    {"max_context", &LlamaConfig::max_context},
    {"group_size", &LlamaConfig::group_size},
}};

constexpr std::array<std::pair<const char*, double LlamaConfig::*>, 2> kFloatFields = {{
    {"rope_theta", &LlamaConfig::rope_theta},
    {"norm_epsilon", &LlamaConfig::norm_epsilon},
}};

// Each format's name and, for the float ones, the dtype (code, bits) of its matrices.
struct FormatRow {
  WeightFormat format;
  const char* name;
  DataType::Code code;
  int bits;  // 0: not a float format
};
constexpr std::array<FormatRow, 4> kFormats = {{
    {WeightFormat::kFloat32, "f32", DataType::Code::kFloat, 32},
    {WeightFormat::kBfloat16, "bf16", DataType::Code::kBFloat, 16},
    {WeightFormat::kInt4, "int4", DataType::Code::kUInt, 0},
    {WeightFormat::kFloat16, "f16", DataType::Code::kFloat, 16},
}};

absl::Status invalid(const std::string& field, int64_t value, const std::string& expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("Llama config: ", field, " is ", value, ", expected ", expected));
}

std::string param_name(const std::string& name) { return absl::StrReplaceAll(name, {{".", "_"}}); }

int64_t dtype_bytes(const DataType& dtype) { return (dtype.bits * dtype.lanes + 7) / 8; }

}  // namespace

const char* weight_format_name(WeightFormat format) {
  for (const FormatRow& row : kFormats) {
    if (row.format == format) return row.name;
  }
  return "?";
}

std::optional<DataType> float_weight_dtype(WeightFormat format) {
  for (const FormatRow& row : kFormats) {
    if (row.format == format && row.bits > 0) return DataType{row.code, static_cast<uint8_t>(row.bits), 1};
  }
  return std::nullopt;
}

absl::StatusOr<WeightFormat> parse_weight_format(std::string_view name) {
  std::vector<std::string> names;
  for (const FormatRow& row : kFormats) {
    if (name == row.name) return row.format;
    names.emplace_back(row.name);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown weight format '", std::string(name),
                                                 "', expected one of ", absl::StrJoin(names, ", ")));
}

LlamaConfig LlamaConfig::tiny_llama() { return LlamaConfig{}; }

LlamaConfig LlamaConfig::small() {
  LlamaConfig c;
  c.hidden = 256;
  c.layers = 2;
  c.heads = 8;
  c.kv_heads = 2;
  c.head_dim = 32;
  c.intermediate = 512;
  c.vocab = 512;
  c.max_batch = 4;
  c.max_context = 256;
  return c;
}

absl::Status LlamaConfig::validate() const {
  for (const auto& [key, field] : kIntFields) {
    if (this->*field <= 0) return invalid(key, this->*field, "a positive size");
  }
  if (heads % kv_heads != 0) {
    return invalid("heads", heads, absl::StrCat("a multiple of kv_heads (", kv_heads, ")"));
  }
  if (head_dim % 2 != 0) return invalid("head_dim", head_dim, "an even size (rotary pairs)");
  if (!(rope_theta > 0) || !(norm_epsilon > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("Llama config: rope_theta (", rope_theta,
                                                   ") and norm_epsilon (", norm_epsilon,
                                                   ") must be positive"));
  }
  if (weights == WeightFormat::kInt4) {
    if (group_size % 2 != 0) return invalid("group_size", group_size, "an even size (two int4 per byte)");
    const int64_t attention = heads * head_dim;
    for (const auto& [key, in] : {std::pair<const char*, int64_t>{"hidden", hidden}, {"intermediate", intermediate},
                                  {"heads * head_dim", attention}}) {
      if (in % group_size != 0) {
        return invalid(key, in, absl::StrCat("a multiple of group_size (", group_size, ") for int4 weights"));
      }
    }
  }
  return absl::OkStatus();
}

std::map<std::string, std::string> LlamaConfig::to_metadata() const {
  std::map<std::string, std::string> m;
  m["format"] = "relax-llama";
  for (const auto& [key, field] : kIntFields) m[key] = std::to_string(this->*field);
  for (const auto& [key, field] : kFloatFields) m[key] = absl::StrCat(this->*field);
  m["weights"] = weight_format_name(weights);
  return m;
}

absl::StatusOr<LlamaConfig> LlamaConfig::from_metadata(const std::map<std::string, std::string>& metadata) {
  auto value = [&](const char* key) -> absl::StatusOr<std::string> {
    auto it = metadata.find(key);
    if (it == metadata.end()) {
      return absl::InvalidArgumentError(absl::StrCat("Llama parameter file metadata: no key '", key, "'"));
    }
    return it->second;
  };
  absl::StatusOr<std::string> format = value("format");
  if (!format.ok()) return format.status();
  if (*format != "relax-llama") {
    return absl::InvalidArgumentError(
        absl::StrCat("Llama parameter file metadata: format is '", *format, "', expected 'relax-llama'"));
  }
  LlamaConfig c;
  for (const auto& [key, field] : kIntFields) {
    absl::StatusOr<std::string> text = value(key);
    if (!text.ok()) return text.status();
    if (!absl::SimpleAtoi(*text, &(c.*field))) {
      return absl::InvalidArgumentError(
          absl::StrCat("Llama parameter file metadata: ", key, " is '", *text, "', expected an integer"));
    }
  }
  for (const auto& [key, field] : kFloatFields) {
    absl::StatusOr<std::string> text = value(key);
    if (!text.ok()) return text.status();
    if (!absl::SimpleAtod(*text, &(c.*field))) {
      return absl::InvalidArgumentError(
          absl::StrCat("Llama parameter file metadata: ", key, " is '", *text, "', expected a number"));
    }
  }
  absl::StatusOr<std::string> weights = value("weights");
  if (!weights.ok()) return weights.status();
  absl::StatusOr<WeightFormat> format_of = parse_weight_format(*weights);
  if (!format_of.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Llama parameter file metadata: ", format_of.status().message()));
  }
  c.weights = *format_of;
  if (absl::Status s = c.validate(); !s.ok()) return s;
  return c;
}

std::vector<MatrixSpec> matrix_specs(const LlamaConfig& c) {
  const int64_t q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  std::vector<MatrixSpec> out;
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = absl::StrCat("layers.", l, ".");
    out.push_back({p + "wq", c.hidden, q});
    out.push_back({p + "wk", c.hidden, kv});
    out.push_back({p + "wv", c.hidden, kv});
    out.push_back({p + "wo", q, c.hidden});
    out.push_back({p + "w_gate", c.hidden, c.intermediate});
    out.push_back({p + "w_up", c.hidden, c.intermediate});
    out.push_back({p + "w_down", c.intermediate, c.hidden});
  }
  out.push_back({"lm_head", c.hidden, c.vocab});
  return out;
}

std::vector<WeightSpec> weight_specs(const LlamaConfig& c) {
  std::vector<WeightSpec> out;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, DataType dtype) {
    out.push_back({name, param_name(name), std::move(shape), dtype});
  };
  const std::optional<DataType> float_dtype = float_weight_dtype(c.weights);
  auto matrix = [&](const MatrixSpec& m) {
    if (float_dtype) {
      add(m.name, {m.in, m.out}, *float_dtype);
      return;
    }
    add(m.name + ".q4", {m.in / 2, m.out}, DataType{DataType::Code::kUInt, 8, 1});
    add(m.name + ".scales", {m.in / c.group_size, m.out}, DataType::float32());
  };
  add("embed", {c.vocab, c.hidden}, float_dtype.value_or(DataType::float32()));
  const std::vector<MatrixSpec> matrices = matrix_specs(c);
  constexpr size_t kPerLayer = 7;
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = absl::StrCat("layers.", l, ".");
    add(p + "attn_norm", {c.hidden}, DataType::float32());
    for (size_t i = 0; i < 4; ++i) matrix(matrices[static_cast<size_t>(l) * kPerLayer + i]);
    add(p + "mlp_norm", {c.hidden}, DataType::float32());
    for (size_t i = 4; i < kPerLayer; ++i) matrix(matrices[static_cast<size_t>(l) * kPerLayer + i]);
  }
  add("final_norm", {c.hidden}, DataType::float32());
  matrix(matrices.back());
  return out;
}

int64_t leading_params(const LlamaConfig& c) { return 3 + 2 * c.layers; }

int64_t LlamaConfig::parameter_count() const {
  int64_t n = vocab * hidden + (2 * layers + 1) * hidden;
  for (const MatrixSpec& m : matrix_specs(*this)) n += m.in * m.out;
  return n;
}

int64_t LlamaConfig::weight_bytes() const {
  int64_t bytes = 0;
  for (const WeightSpec& w : weight_specs(*this)) {
    int64_t elements = 1;
    for (int64_t d : w.shape) elements *= d;
    bytes += elements * dtype_bytes(w.dtype);
  }
  return bytes;
}

int64_t LlamaConfig::decode_bytes_per_step(int64_t batch) const {
  int64_t bytes = 0;
  for (const WeightSpec& w : weight_specs(*this)) {
    int64_t elements = 1;
    for (int64_t d : w.shape) elements *= d;
    // The embedding table: one row per token; everything else is read whole.
    if (w.name == "embed") elements = batch * hidden;
    bytes += elements * dtype_bytes(w.dtype);
  }
  return bytes;
}

std::string LlamaConfig::to_string() const {
  std::string s = absl::StrCat("hidden ", hidden, ", ", layers, " layers, ", heads, " heads (", kv_heads,
                               " KV) of ", head_dim, ", intermediate ", intermediate, ", vocab ", vocab,
                               ", max batch ", max_batch, ", max context ", max_context, ", ",
                               weight_format_name(weights));
  if (weights == WeightFormat::kInt4) absl::StrAppend(&s, " g", group_size);
  return s;
}

}  // namespace relax::models
