// Operators and their shape deduction.
//
// Every operator is registered once with a deduction function that computes
// the StructInfo of a call from its arguments' StructInfo (and its attributes).
// The builder runs it as each binding is emitted, so annotations are always
// current. The registry is built on first use (thread-safe static
// initialisation, from the list of operator families) and read-only
// afterwards. Constructors of operator calls are in ops.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/shape/analyzer.h"

namespace relax {

class IRModule;

/// What a deduction function may consult besides the call itself.
struct DeduceContext {
  Analyzer& analyzer;
  /// The module being built, for calls whose callee is a GlobalVar (may be null).
  const IRModule* module = nullptr;
  /// The symbolic variables defined where the expression stands (function
  /// parameters, earlier match_casts). A SeqExpr's annotation keeps only those
  /// and the ones its enclosing SeqExprs define; when empty, it drops exactly
  /// the variables that its own match_casts define.
  std::function<bool(const SymVar&)> sym_in_scope = nullptr;
};

/// Computes the StructInfo of `call` (its arguments are normalised), or an
/// error that names the argument, the expected and the actual annotation.
using DeduceFn = std::function<absl::StatusOr<StructInfo>(const CallNode& call, DeduceContext& ctx)>;

/// What an operator argument must be.
enum class ArgKind : uint8_t {
  kTensor,          ///< a Tensor
  kTensorOrScalar,  ///< a Tensor or a numeric/bool Prim (a scalar broadcast like a 0-d tensor)
  kPrim,            ///< a Prim (a scalar, possibly symbolic)
  kShape,           ///< a Shape value
  kTuple,           ///< a Tuple (of Tensors, for concat)
  kAny,             ///< anything; the deduction checks it
};

/// The element types an argument (or a kernel) accepts.
enum class DtypeClass : uint8_t {
  kAny,      ///< every dtype
  kNumeric,  ///< integers and floats
  kFloat,    ///< floats (float16, bfloat16, float32, float64)
  kInt,      ///< signed and unsigned integers
  kIntOrBool,  ///< integers and bool
  kBool,     ///< bool
};
/// "a float", "an integer", ... (for messages).
std::string_view dtype_class_text(DtypeClass c);
/// Whether `dtype` belongs to `c`.
bool dtype_in_class(DataType dtype, DtypeClass c);

/// One argument of an operator, in order.
struct ArgSpec {
  std::string role;  ///< "x", "lhs", "weight", ...
  ArgKind kind = ArgKind::kTensor;
  DtypeClass dtypes = DtypeClass::kAny;
  bool optional = false;  ///< may be left out (only trailing arguments)
};

/// One declared attribute of an operator (for documentation and listings).
struct AttrFieldInfo {
  std::string name;
  std::string type;           ///< "int", "float", "bool", "str", "dtype", "[int]", "int | [int]"
  std::string default_value;  ///< its text, "" when required, "none" when optional
};

/// What legalization makes of one operator call: a kernel and the arguments
/// of the call_tir that replaces the call, or (without a kernel) a value that
/// replaces it directly. Built with the compute library (relax/ir/compute.h).
struct Lowering {
  /// The kernel, its "global_symbol" the op's name (legalize-ops renames it).
  Expr prim_func;
  /// The call_tir arguments (Tensors and Prims), in parameter order.
  std::vector<Expr> args;
  /// The graph-level values of the kernel's trailing int64 scalar parameters.
  std::vector<SymExpr> extra_sym_args;
  /// Set instead of prim_func: the value that replaces the call.
  Expr replacement;
};

/// Legalizes one normalised call of an operator. `analyzer` is the one the
/// call's annotations were deduced with (it proves dims equal or 1). Errors
/// are InvalidArgument "<op>: <what>".
using LegalizeFn =
    std::function<absl::StatusOr<Lowering>(const CallNode& call, Analyzer& analyzer)>;

struct OpInfo {
  std::string name;
  std::string summary;
  /// The family whose table declares it ("elementwise", "nn", ...).
  std::string family;
  /// The number of arguments, or -1 when variadic; min_args <= it.
  int num_args = -1;
  int min_args = 0;
  /// The arguments in order (empty for the variadic cross-level calls).
  std::vector<ArgSpec> args;
  /// The declared attributes; a call with another key is an error.
  std::vector<AttrFieldInfo> attrs;
  bool pure = true;
  /// Checks the attributes of a call (unknown keys, wrong types, values out
  /// of their choices) and returns them in canonical form: defaults left out,
  /// an int given for a list as that list. Errors name the op and the key.
  std::function<absl::StatusOr<Attrs>(const Attrs&)> canonical_attrs;
  DeduceFn deduce;
  /// Turns a call into a loop-level kernel; empty when the op has none.
  LegalizeFn legalize;
  /// The Op expression that calls use as their callee.
  Expr op;
};

/// The registered operator called `name`, or nullptr.
const OpInfo* find_op(std::string_view name);
/// Every registered operator, in registration order.
std::vector<const OpInfo*> all_ops();

/// The declared role of argument `index` of a call of an operator ("x",
/// "weight"), or "argument <index>" when the callee declares none.
std::string arg_role(const CallNode& call, size_t index);

/// How a call is written: "sum(x, axis=none, keepdims=false)", optional
/// arguments with `?` ("linear(x, weight, bias?, out_dtype=none)").
std::string op_signature(const OpInfo& info);
/// The operator table as Markdown, one row per operator (family, signature,
/// summary), as docs/operators.md lists it.
std::string op_table_markdown();

}  // namespace relax
