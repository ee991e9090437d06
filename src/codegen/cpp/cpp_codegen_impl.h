// Private parts of the C++ code generator (src/codegen/cpp_codegen*.cc).
//
// KernelEmitter writes one kernel function: the argument checks and bindings
// (cpp_codegen_args.cc), the statements (cpp_codegen_stmt.cc) and the values
// (cpp_codegen_expr.cc). It never aborts on bad input: the first problem is
// recorded as a Status naming the PrimFunc and the construct, placeholders
// keep the walk going, and the caller discards the text.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "relax/support/target.h"
#include "relax/ir/prim_func.h"
#include "relax/shape/buffer.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/sym_expr.h"

namespace relax::transform::schedule {
struct MatmulNest;  // transform/schedule/matmul_schedule.h
}  // namespace relax::transform::schedule

namespace relax::cpp_codegen {

struct MatvecPlan;  // codegen/cuda/cuda_codegen_impl.h

// ---------------------------------------------------------------------------
// Text helpers (cpp_codegen_util.cc).

/// `name` as a C++ identifier: letters, digits and '_' only, not starting with
/// a digit, no "__"; a name that could clash with a keyword, a standard type
/// or macro, or the generator's own `relax_` names gets a trailing '_'.
std::string sanitize_identifier(std::string_view name);
/// `text` as a C++ string literal with quotes; when `for_printf`, '%' is doubled.
std::string string_literal(std::string_view text, bool for_printf = false);
/// `text` escaped for the inside of a printf format string literal (no quotes).
std::string printf_text(std::string_view text);
/// `text` made safe for a `//` comment (no line breaks, no line continuation).
std::string comment_text(std::string_view text);

/// Unique identifiers for one scope (a kernel, or the unit's functions).
class NameTable {
 public:
  NameTable();
  /// A fresh identifier derived from `hint` (sanitized, then suffixed `_1`,
  /// `_2`, ... until unused).
  std::string fresh(std::string_view hint);
  /// As fresh(), for a generator-made `hint` that is an identifier already
  /// (such as "relax_kernel_add"): only made unique.
  std::string fresh_generated(std::string hint);
  /// Marks `name` as used (a fixed name of the generated code).
  void reserve(std::string name) { used_.insert(std::move(name)); }

 private:
  absl::flat_hash_set<std::string> used_;
};

/// The C++ type of a value of `dtype` ("float", "int64_t", "bool"), or empty
/// when the generator does not support it. float16 and bfloat16 values are
/// computed as float.
std::string value_type(DataType dtype);
/// The C++ element type of a buffer of `dtype` (bool is stored as uint8_t,
/// float16 and bfloat16 as their uint16_t bit patterns).
std::string storage_type(DataType dtype);
/// float16 or bfloat16: stored in 16 bits, computed as float.
bool is_half_float(DataType dtype);
/// The prelude helper that rounds a double to `dtype` (a half float) and gives
/// it as a float: "relax_round_float16" or "relax_round_bfloat16".
std::string half_round_helper(DataType dtype);
/// The GCC vector-extension helpers of vector values (cpp_codegen_vector.cc), in
/// every unit after the scalar prelude.
extern const char kVectorPrelude[];
/// The IR's integer helpers (floor division and modulo, abs, shifts, min and
/// max) as templates qualified by RELAX_HELPER, which the prelude including
/// them defines: `inline` on the host, `static __device__ __forceinline__` in
/// CUDA device code (cpp_codegen.cc).
extern const char kIntegerHelpers[];
/// The helpers every unit carries after the copied headers (cpp_codegen.cc):
/// the integer helpers, half-float loads and stores, the error writer ...
const std::string& scalar_prelude();
/// The runtime's table, relax_set_runtime_api and relax_parallel_for (cpp_codegen.cc).
extern const char kThreadPrelude[];
/// The ISA record relax_isa_level / relax_isa_features of a unit (cpp_codegen.cc).
std::string isa_record(const Target& target);
/// A summary of a PrimFunc's signature for the comment above its kernel.
std::string signature_comment(const std::string& name, const PrimFuncNode& func);

/// What the CUDA mode of KernelEmitter writes besides the launchers
/// (src/codegen/cuda/cuda_codegen_impl.h).
struct CudaSink;

// ---------------------------------------------------------------------------
// A kernel.

/// Precedence of an emitted C++ expression, lowest first.
enum Precedence : int {
  kPrecSelect = 0,
  kPrecOr,
  kPrecAnd,
  kPrecEquality,
  kPrecRelational,
  kPrecAdd,
  kPrecMul,
  kPrecUnary,
  kPrecPrimary,
};

/// Emitted C++ expression text and the precedence of its top operator.
struct CExpr {
  std::string text;
  int prec = kPrecPrimary;
};

/// How the C++ and CUDA code generators spell an intrinsic (cpp_intrinsics.cc: one row per
/// Intrinsic, checked at compile time): templates over float and over integer operands, empty
/// where the intrinsic takes no such operands, and the CUDA prelude's device overloads.
struct CppIntrinsic {
  Intrinsic op;
  std::string_view float_spelling;
  std::string_view int_spelling;
  /// Device code: the CUDA prelude's relax_<name> overloads of a float intrinsic over float
  /// and over double (empty for the integer ones, which device code spells as above).
  std::string_view device_params;  ///< "x", "x, y": every parameter of the overload's type
  std::string_view device_float;
  std::string_view device_double;
  bool device_predicate = false;  ///< returns bool, not the argument's type
};
const CppIntrinsic& cpp_intrinsic(Intrinsic op);

/// How the C++ code generator spells a SymKind (cpp_intrinsics.cc: one row per SymKind,
/// checked at compile time). Scalars: an infix operator at a C++ precedence, or a call
/// template (as an intrinsic's: `$T` the type, `$0`.. the operands), with the device code's
/// template where it differs. Vectors: the GCC vector extension's own operator, or a
/// template over one lane's values `x0`, `x1`, ... applied lane by lane. kOwn: the emitter
/// writes the kind itself (constants, variables, !, select, casts, calls, loads, vectors).
struct CppSymKind {
  enum class Form : uint8_t { kOwn, kInfix, kCall };
  enum class Vector : uint8_t { kOwn, kNative, kLanes, kBoolLanes };
  SymKind kind;
  Form form = Form::kOwn;
  std::string_view spelling;
  int prec = kPrecPrimary;
  std::string_view device_spelling;
  Vector vector = Vector::kOwn;
  std::string_view vector_spelling;
};
const CppSymKind& cpp_sym_kind(SymKind kind);

/// An intrinsic's C++ spelling (CppIntrinsic) with `$T`
/// replaced by `type`, `$O` by one of that type and `$0`.. by the operands,
/// parenthesized where needed.
CExpr expand_spelling(std::string_view spelling, const std::string& type,
                      const std::vector<CExpr>& operands);

class KernelEmitter {
 public:
  /// An estimate of the work a statement does: the innermost statements it
  /// runs, as a C++ double expression, folded to `constant` when known now.
  struct Work {
    std::string text;
    std::optional<double> constant;
  };

  /// `kernel_name` is the table name (used in messages), `fn_name` the C++
  /// function name.
  KernelEmitter(std::string kernel_name, std::string fn_name, const PrimFuncNode& func,
                const Target& target);

  /// The kernel function's definition, or the first problem found.
  absl::Status emit(std::string* out);

  /// The micro-kernels the kernel calls (call_extern), in order of first call.
  const std::vector<std::string>& micro_kernels() const { return micro_kernels_; }

  /// CUDA mode (src/codegen/cuda/): emit() then writes a host launcher -- the
  /// same argument checks and bindings, then one cuda_launch per top-level
  /// nest -- and appends the device functions to `sink`. `func` is the
  /// PrimFunc itself (matmul nests are recognised on it).
  void set_cuda(CudaSink* sink, const Expr& func) {
    cuda_ = sink;
    cuda_func_ = func;
  }

 private:
  /// How the generated code reaches a buffer.
  struct BufferInfo {
    std::string name;                  ///< the data pointer (or array)
    DataType dtype;
    /// One per dim: a decimal constant or the name of an int64_t local.
    std::vector<std::string> strides;
  };

  /// One place that can define a variable, or must agree with it: a whole dim,
  /// a whole stride or a scalar parameter.
  struct DefSite {
    SymVar var;
    std::string actual;  ///< the argument's value (an int64 or double C++ expression)
    std::string what;    ///< "argument A (#0) dim 1", for messages
    bool is_float = false;
  };

  // ---- problems (cpp_codegen.cc) -------------------------------------------
  void fail(absl::StatusCode code, const std::string& message);
  bool ok() const { return status_.ok(); }

  // ---- arguments (cpp_codegen_args.cc) -------------------------------------
  void emit_prologue();
  void emit_arg_checks(size_t index, const PrimParam& param);
  void bind_variables();
  void emit_def_site(const DefSite& site);
  /// Defines the variables that linear dims determine (see cpp_codegen_args.cc).
  void solve_linear_dims();
  /// Records a problem for a dim or stride that uses a variable nothing defines.
  void check_params_defined();
  void emit_dim_checks();
  /// Fails when an extent the PrimFunc requires nonempty is 0 (relax/ir/kernel_checks.h).
  void emit_nonempty_checks();
  std::string arg_label(size_t index) const;
  /// `return relax_fail(...)`: a formatted message; `format` is a printf
  /// format whose fixed parts are already escaped.
  std::string fail_stmt(const std::string& format, const std::vector<std::string>& format_args) const;

  // ---- statements (cpp_codegen_stmt.cc) ------------------------------------
  void emit_stmt(const Stmt& s);
  void emit_for(const ForNode& node);
  /// Before loop `node`: its blocks' inits when it runs no iteration (see
  /// "Empty reductions" in cpp_codegen_stmt.cc).
  void emit_inits_when_empty(const ForNode& node, const std::string& type, const std::string& begin,
                             const std::string& end);
  void emit_store(const BufferStoreNode& node);
  void emit_if(const IfThenElseNode& node);
  void emit_let(const LetStmtNode& node);
  /// `const T name = value;` for the let's variable, bound to that name (the
  /// body is the caller's); false when its type or value is unsupported.
  bool declare_let(const LetStmtNode& node);
  void emit_allocate(const AllocateNode& node);
  void emit_block(const BlockNode& node);
  /// Before a vectorised loop over `loop_var` whose body is `block`: the block's iteration
  /// variables bound without `loop_var` declared once, outside the loop (hoisted_iter_vars_).
  void hoist_invariant_iter_vars(const BlockNode& block, const SymVar& loop_var);
  /// At the top of a loop's body that holds other loops: its integer floordiv/floormod
  /// subexpressions that no variable bound under the loop enters (a fused loop's row index
  /// taken apart), each declared once there and read by name below (hoisted_exprs_); returns
  /// them, for the caller to forget after the body. Only divisions that cannot trap: by a
  /// constant, or by a factor of an enclosing loop's extent (at least 1 where the body runs).
  std::vector<SymExpr> hoist_index_arithmetic(const ForNode& node);
  void emit_extern_call(const ExternCallNode& node);
  /// The work of `s` (see Work), or nullopt when an extent inside it depends
  /// on a variable that is not bound yet (so it cannot be computed here).
  std::optional<Work> work_of(const Stmt& s);
  /// Whether `e` is an integer expression of variables bound already.
  bool known_before_loop(const SymExpr& e) const;
  /// A heap allocation failed: a return outside concurrent loops, else a flag.
  void emit_alloc_failure(const std::string& message_format, const std::vector<std::string>& args);
  /// Registers `buffer` under `c_name` with strides computed from its shape.
  void add_buffer(const Buffer& buffer, const std::string& c_name);
  void line(const std::string& text);
  void open(const std::string& text);   ///< `text {` and indent
  void close(const std::string& text = "}");

  // ---- values (cpp_codegen_expr.cc) ----------------------------------------
  /// `e` as C++; `typed` when the context fixes an integer constant's type
  /// (see cpp_codegen_expr.cc).
  CExpr expr(const SymExpr& e, bool typed = false);
  /// `e` as text for a typed destination (a store, a declaration, a condition).
  std::string value(const SymExpr& e);
  /// `e` as an int64_t expression (with a cast when it has another integer dtype).
  CExpr as_int64(const SymExpr& e);
  CExpr binary(const SymExpr& e, std::string_view op, int prec);
  CExpr literal(const SymExpr& e, bool typed);
  CExpr call(const SymExpr& e);
  CExpr load(const SymExpr& e);
  /// The flat element offset of `indices` into `buffer`.
  std::string flat_index(const BufferInfo& buffer, const std::vector<SymExpr>& indices);
  /// The checked C++ type of `dtype` for `what`; records a problem when unsupported.
  std::string checked_type(DataType dtype, const std::string& what);

  // ---- vector values (cpp_codegen_vector.cc) --------------------------------
  /// A vector (lanes > 1) `e` as a relax_v<T, L> expression.
  CExpr vector_expr(const SymExpr& e);
  CExpr vector_load(const SymExpr& e);
  /// relax_vmap over `e`'s operands with the lambda body `body` (operands x0, x1, ...).
  CExpr lanewise(const SymExpr& e, const std::string& result_type, const std::string& body);
  /// The element type of a vector of `dtype` (bool: uint8_t); records a problem when unsupported.
  std::string vector_element_type(DataType dtype, const std::string& what);
  /// The flat offset of the first lane when `indices` address consecutive elements.
  std::optional<std::string> contiguous_offset(const BufferInfo& buffer, const std::vector<SymExpr>& indices);
  /// The int64 vector of flat offsets of each lane's element.
  std::string flat_offsets(const BufferInfo& buffer, const std::vector<SymExpr>& indices, int lanes);
  void emit_vector_store(const BufferStoreNode& node, const BufferInfo& info);
  std::string var_name(const SymVar& v);
  void bind_var(const SymVar& v, std::string name) { vars_[v] = std::move(name); }

  // ---- CUDA (src/codegen/cuda/cuda_launch_emit.cc, cuda_device_emit.cc) ------
  /// How a top-level nest maps onto the device (see cuda_launch_emit.cc).
  enum class CudaMapping { kThread, kGridStride, kRows, kBlock, kMatmul, kMatvec };
  /// The launcher's body after the prologue: the runtime's CUDA support
  /// checked, then every top-level nest launched.
  void emit_cuda_body(const Stmt& s);
  /// The top-level walk: lets that load nothing are computed on the host,
  /// every other statement is a unit (a device function and its launch).
  void emit_cuda_stmt(const Stmt& s);
  /// One top-level nest: its device function and its launch (a matmul nest
  /// with a symbolic row count: two, the matvec's for at most kMatvecMaxRows
  /// rows and the tiled one's, chosen on the host).
  void emit_cuda_unit(const Stmt& s);
  /// The device function of `s` under `mapping` and its launch on `grid` x `threads`.
  void emit_cuda_launch(const Stmt& s, CudaMapping mapping, const std::string (&grid)[3], int threads);
  CudaMapping cuda_mapping(const Stmt& s);
  /// The device function's statements for each mapping (cuda_device_emit.cc).
  void emit_device_coop(const Stmt& s);
  void emit_device_reduction(const ForNode& loop, const BufferStoreNode& store, const SymExpr& operand, SymKind combiner);
  void emit_device_matmul(const ForNode& outer, bool matvec);
  /// The matvec kernel with four consecutive elements per thread along the
  /// weights' contiguous dimension and vector loads (cuda_matmul_emit.cc).
  /// `plan` is plan_matvec(nest), plan.vector(); `m`, `n` and `k` the names of the extents.
  void emit_device_matvec4(const transform::schedule::MatmulNest& nest, const MatvecPlan& plan, const std::string& m,
                           const std::string& n, const std::string& k);
  /// The end of a matvec whose warp holds one column: each row's relax_acc[vi] (type `t`)
  /// summed over the lanes by shuffles, lane 0 writing it with `write_out(sum)`.
  void emit_matvec_warp_sums(const std::string& t, const std::string& vi, const std::string& rows_loop,
                             const std::function<void(const std::string&)>& write_out);
  /// `for (T v = begin + first; v < end; v += step)` around the loop's body
  /// (a cooperative region when `coop_body`).
  void emit_strided_for(const ForNode& node, const std::string& first, const std::string& step, bool coop_body);
  /// Threads per block of a cooperative region: its largest constant extent
  /// rounded up to a warp, 32 to kCudaThreads.
  int coop_threads(const Stmt& s) const;
  /// Whether `s` (a statement of a row or a block) cooperates: a parallel loop
  /// or a reduction into a local of the region; `locals` are the region's.
  bool has_coop_stage(const Stmt& s, std::vector<const BufferNode*>& locals) const;
  /// Whether the region `s` can run cooperatively (no stage stores both into
  /// locals of the region and into memory, no parallel loop stores a local).
  bool coop_legal(const Stmt& s, std::vector<const BufferNode*>& locals) const;
  /// `A[flat] = v;` for a store of the C++ value `v` (narrowed for half floats).
  std::string store_line(const BufferInfo& info, const std::vector<SymExpr>& indices, std::string v);

  CudaSink* cuda_ = nullptr;
  Expr cuda_func_;
  /// Writing device code (CUDA spellings, plain loops).
  bool device_ = false;
  /// The region's one-element locals while a cooperative region is written.
  std::vector<const BufferNode*> coop_locals_;
  /// A reduction's update written as `redirect_prefix_ + value + redirect_suffix_`
  /// (the thread's partial) instead of its store.
  const BufferStoreNode* redirect_store_ = nullptr;
  SymExpr redirect_value_;
  std::string redirect_prefix_, redirect_suffix_;
  /// Loads written as the given text instead of `A[flat]` (a vector load's
  /// element); keyed by the load's node.
  absl::flat_hash_map<const SymExprNode*, std::string> load_overrides_;

  // The kernel.
  std::string kernel_name_;
  std::string fn_name_;
  const PrimFuncNode& func_;
  const Target& target_;
  absl::Status status_;
  NameTable names_;
  SymVarMap<std::string> vars_;
  /// Iteration variables declared before their vectorised loop: their names there.
  SymVarMap<std::string> hoisted_iter_vars_;
  /// Index arithmetic declared at the top of an enclosing loop's body: its names there.
  absl::flat_hash_map<SymExpr, std::string, SymExprHash, SymExprEqual> hoisted_exprs_;
  /// The extents of the loops being emitted, outermost first.
  std::vector<SymExpr> loop_extents_;
  absl::flat_hash_map<const BufferNode*, BufferInfo> buffers_;
  std::vector<std::string> param_names_;  ///< per parameter: its name in messages

  // The text being written.
  std::string out_;
  int indent_ = 1;
  /// Loops entered that are OpenMP parallel or simd regions (no `return` inside).
  int concurrent_depth_ = 0;
  bool in_simd_ = false;
  /// Inside the serial copy of a parallel loop (which forks below its threshold).
  bool in_serial_copy_ = false;
  /// A failure inside a concurrent region sets relax_failed.
  bool uses_failed_flag_ = false;
  bool failed_flag_since_region_ = false;
  std::vector<std::string> micro_kernels_;  ///< see micro_kernels()
};

}  // namespace relax::cpp_codegen
