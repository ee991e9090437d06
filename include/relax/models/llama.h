// relax::models: Llama-architecture decoders built with the public builder, as a user would.
//
// A model is a LlamaConfig (sizes, the declared upper bounds of batch and context, the weight
// format) and a parameter file (relax/runtime/safetensors.h) holding the tensors weight_specs()
// names. build_llama() makes one module with two functions over the same weights:
//
//   prefill(tokens: Tensor[(b, n), int64], seq_ids: Tensor[(b,), int64],
//           kv_lengths: Tensor[(B,), int64], k_0, v_0, ..., k_{L-1}, v_{L-1}, <weights...>)
//     -> Tensor[(b, vocab), float32]                   the logits of each row's last token
//   decode(tokens: Tensor[(b, 1), int64], ...)         the same with n = 1
//   decode_one(tokens: Tensor[(1, 1), int64], ...)     the same with b = n = 1: every product
//                                                      one row (the weight-streaming kernels)
//
// b <= max_batch and n <= max_context are declared upper bounds; B = max_batch, and the
// caches k_l, v_l are float32 (B, max_context, kv_heads, head_dim), the tensors of a
// runtime::KVCache (relax/runtime/kv_cache.h). Row r of the batch continues the sequence
// seq_ids[r], which holds kv_lengths[seq_ids[r]] tokens: its new tokens sit at the positions
// that follow (rotary embedding per row), each layer appends their keys and values to the
// cache in place and attends over the sequence so far (library function kv_cache.attention).
// The caller advances the lengths after a call (LlamaModel does all of this).
//
// Each layer: RMSNorm, q/k/v projections, rotary embedding, attention over the cache with
// grouped KV heads and a causal mask, output projection and residual, RMSNorm, SwiGLU MLP
// (silu(x Wgate) * (x Wup)) Wdown and residual; then the final RMSNorm and the LM head.
// Weight matrices are stored (in, out): y = x W.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/module.h"
#include "relax/support/data_type.h"

namespace relax::models {

/// How the weight matrices are stored. Norm weights are float32 always; the embedding table
/// has the matrices' dtype for the float formats and is float32 for kInt4.
enum class WeightFormat : uint8_t {
  kFloat32,   // float32 (in, out)
  kBfloat16,  // bfloat16 (in, out), widened inside the matmul kernel
  kInt4,      // group-wise int4: <name>.q4 uint8 (in/2, out) and <name>.scales float32
              // (in/group, out), the layout of op::dequantize(axis=0, bits=4), dequantised
              // inside the matmul kernel
  kFloat16,   // IEEE float16 (in, out), widened inside the matmul kernel
};

/// "f32", "bf16", "int4", "f16".
const char* weight_format_name(WeightFormat format);
/// The dtype the matrices of a float format are stored in (float32, bfloat16, float16), or
/// nullopt for kInt4.
std::optional<DataType> float_weight_dtype(WeightFormat format);
/// The inverse of weight_format_name; InvalidArgument naming the accepted names.
absl::StatusOr<WeightFormat> parse_weight_format(std::string_view name);

struct LlamaConfig {
  int64_t hidden = 2048;
  int64_t layers = 22;
  int64_t heads = 32;
  int64_t kv_heads = 4;
  int64_t head_dim = 64;
  int64_t intermediate = 5632;
  int64_t vocab = 32000;
  double rope_theta = 10000.0;
  double norm_epsilon = 1e-5;
  /// Declared upper bounds: batch rows per call and tokens per sequence (the cache capacity).
  int64_t max_batch = 4;
  int64_t max_context = 2048;
  WeightFormat weights = WeightFormat::kFloat32;
  /// Rows of a weight matrix per int4 scale (kInt4 only).
  int64_t group_size = 32;

  /// TinyLlama-1.1B's shape (hidden 2048, 22 layers, 32 heads, 4 KV heads, intermediate 5632,
  /// vocab 32000), max batch 4, max context 2048.
  static LlamaConfig tiny_llama();
  /// A few-layer model with the same structure (grouped KV heads, int4-compatible sizes) that
  /// compiles and runs in seconds: the demo's and the tests'.
  static LlamaConfig small();

  /// OK when every size is positive, heads a multiple of kv_heads, head_dim even, and for
  /// kInt4 hidden and intermediate multiples of an even group_size; else InvalidArgument
  /// naming the field, its value and what it must be.
  absl::Status validate() const;

  /// The config as the string map a parameter file's metadata holds, and back (errors name the
  /// missing or malformed key).
  std::map<std::string, std::string> to_metadata() const;
  static absl::StatusOr<LlamaConfig> from_metadata(const std::map<std::string, std::string>& metadata);

  /// Parameter count (logical weights, before quantisation) and the bytes of the stored
  /// tensors of weight_specs().
  int64_t parameter_count() const;
  int64_t weight_bytes() const;
  /// The bytes of the weight tensors a decode step reads (every matrix, every norm, one row of
  /// the embedding table per token): the bandwidth roofline's numerator.
  int64_t decode_bytes_per_step(int64_t batch) const;
  /// One-line summary: "hidden 2048, 22 layers, 32 heads (4 KV), ... int4 g32".
  std::string to_string() const;
};

/// A tensor of the parameter file: its name in the file, the name of the functions' parameter
/// ('.' written '_'), shape and dtype.
struct WeightSpec {
  std::string name;
  std::string param;
  std::vector<int64_t> shape;
  DataType dtype;
};

/// Every tensor of the parameter file, in the order prefill and decode take them (after the
/// tokens, the sequence ids, the lengths and the caches).
std::vector<WeightSpec> weight_specs(const LlamaConfig& config);

/// The logical weight matrices (name, in, out) in file order, before their format splits a
/// matrix into tensors: "layers.<l>.wq", ..., "lm_head".
struct MatrixSpec {
  std::string name;
  int64_t in = 0;
  int64_t out = 0;
};
std::vector<MatrixSpec> matrix_specs(const LlamaConfig& config);

/// Number of leading non-weight parameters of prefill and decode: tokens, seq_ids, kv_lengths
/// and two caches per layer.
int64_t leading_params(const LlamaConfig& config);

/// The module of prefill, decode and decode_one for `config` (validated first). The functions'
/// `weights` attribute names every weight parameter: the default pipeline joins each layer's
/// q/k/v and gate/up weights once, when they are bound (runtime::BoundWeights). With
/// `prepack_weights`, library calls also keep a prepacked copy of each weight (oneDNN's blocked
/// layout: faster prefill, twice the float32 weight memory); without it the library reads the
/// weights' own layout.
absl::StatusOr<IRModule> build_llama(const LlamaConfig& config, bool prepack_weights = false);

/// Writes a parameter file of seeded pseudo-random weights for `config` (its metadata the
/// config): the same seed gives the same bytes on every machine. Matrices uniform in
/// +-sqrt(3 / in) (unit gain), norm weights 1 +- 0.1, the embedding uniform in +-1; bfloat16
/// rounded to nearest even, int4 quantised group-wise from the float32 matrix
/// (runtime::quantize_int4). Written one tensor at a time: a 4.4 GB file needs one matrix in
/// memory. `progress`, when given, is called after each tensor with (written, total).
absl::Status write_random_weights(const LlamaConfig& config, uint64_t seed, const std::string& path,
                                  const std::function<void(size_t, size_t)>& progress = {});

}  // namespace relax::models
