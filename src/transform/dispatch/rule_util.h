// What the built-in dispatch rules share (onednn_rules.cc, cuda_rules.cc): reading operands'
// annotations, the post-op chain patterns, conv attributes in the names' form, and the test
// for weights the graph dequantises or widens.
#pragma once

#include <optional>

#include <functional>
#include <string>
#include <vector>

#include "relax/runtime/library_call.h"
#include "relax/ir/expr.h"
#include "relax/ir/struct_info.h"
#include "relax/shape/analyzer.h"
#include "relax/transform/dispatch_library.h"
#include "relax/transform/pattern.h"

namespace relax::transform::rule_util {

/// `e`'s tensor annotation when its shape and dtype are known and it has at most `max_rank`
/// dims; null otherwise.
const TensorStructInfoNode* known_tensor(const Expr& e, int max_rank);

/// `e`'s rank (kUnknownNDim when it is not a tensor of known rank).
int rank_of(const Expr& e);

/// Whether every dim of `a` is provably equal to the same dim of `b` (and the ranks match).
bool dims_equal(Analyzer& analyzer, const std::vector<SymExpr>& a, const std::vector<SymExpr>& b);

/// Whether `dim` is provably 1.
bool is_one(Analyzer& analyzer, const SymExpr& dim);

/// The product of dims[from..] (1 when empty), as an int64 expression.
SymExpr product(const std::vector<SymExpr>& dims, size_t from = 0);

/// `e` as a call of an operator (named `name` when not null); null otherwise.
const CallNode* op_call(const Expr& e, const char* name = nullptr);

/// Whether `e` has the channel shape of a conv bias with `spatial` spatial dims:
/// [1, O, 1...] or [O, 1...].
bool has_channel_bias_shape(const Expr& e, int spatial);

/// core, then optionally an add of a bias (captured "bias"; is_bias tells it from the other
/// operand), then optionally one activation of `activations` (captured "act"):
///   act(add(core, bias) | add(bias, core) | core) | add(...) | ... | core
Pattern bias_activation_chain(const Pattern& core, const std::function<bool(const Expr&)>& is_bias,
                              const std::vector<std::string>& activations);

/// The activation's post name as the names write it (relu, gelu_erf, gelu_tanh, silu,
/// sigmoid, tanh: the op's name, gelu by its `approximate`), or empty for a gelu of another
/// approximation.
std::string activation_post(const CallNode& act);

/// The window of the convolution `call` with `spatial` dims, every attribute per dim (a
/// library call's name carries it: relax/runtime/library_call.h), or nullopt when its
/// attributes are not plain lists of integers.
std::optional<runtime::ConvWindow> conv_window(const CallNode& call, size_t spatial);

/// The 1-D [O] tensor to pass for a conv bias of channel shape added to `out`: what a
/// reshape made it from, or a Constant viewed as 1-D; undefined when there is none.
Expr conv_bias_1d(const DispatchSite& site, const Expr& bias, const TensorStructInfoNode& out);

/// The conv call's own `bias` argument (conv2d(data, weight, bias)) when it is what a library
/// takes: 1-D, [O] of `out`'s channels provably, `out`'s dtype; undefined otherwise.
Expr conv_arg_bias(const DispatchSite& site, const Expr& bias, const TensorStructInfoNode& out);

/// conv1d or conv2d (`kind`) of a, b, with or without its own bias argument (captured
/// "conv_bias"), captured "core".
Pattern conv_core(const std::string& kind, const Pattern& a, const Pattern& b);

/// Whether `weight` is computed in the graph from narrower storage: a call taking a tensor of
/// integers of at most 8 bits (quantised: int8, int4) or of floats narrower than the weight
/// (a widening astype). Such a product stays generated code, so that the dequantisation fuses
/// into it instead of the wide weight being written out and read back.
bool is_dequantised(const DispatchSite& site, const Expr& weight);

}  // namespace relax::transform::rule_util
