// relax::PrimFuncBuilder: the fluent way to write a loop-level kernel in C++.
//
//   relax::SymVar n("n");
//   relax::PrimFuncBuilder b("add");
//   relax::Buffer A = b.buffer_param("A", {n, 4}, relax::DataType::float32());
//   relax::Buffer B = b.buffer_param("B", {n, 4}, relax::DataType::float32());
//   relax::Buffer C = b.buffer_param("C", {n, 4}, relax::DataType::float32());
//   b.for_("i", 0, n, relax::ForKind::kParallel, [&](relax::SymVar i) {
//     b.for_("j", 0, 4, [&](relax::SymVar j) {
//       b.block("add", {b.spatial(n, i), b.spatial(4, j)},
//               [&](const std::vector<relax::SymVar>& v) {
//         b.store(C, {v[0], v[1]},
//                 relax::buffer_load(A, {v[0], v[1]}) + relax::buffer_load(B, {v[0], v[1]}));
//       });
//     });
//   });
//   absl::StatusOr<relax::Expr> f = b.build();   // a PrimFunc
//
// Statements are appended to the innermost open body: the function's, or
// that of the loop, block or branch whose callback is running. `let` and
// `allocate` open a scope that lasts to the end of the body they are called
// in: the statements that follow become the LetStmt's or Allocate's body, and
// the variable or buffer they return is usable exactly there.
//
// Scopes. Parameters define the symbolic variables that appear bare as
// buffer dims (`{n, 4}` defines n: the call binds it) and scalar parameters;
// a dim like `n * 2` only uses n, which some parameter must define. A loop
// variable lives inside its loop, a block's iteration variables inside the
// block, a `let` variable and an allocated buffer to the end of their body.
// Every value a statement mentions -- indices, stored values, conditions,
// extents, bindings -- is checked against these scopes when the statement
// is added, and so is every buffer it stores to or loads from.
//
// Mistakes never abort: each is recorded with the caller's source location
// (every method takes one, defaulted to the call site) and build() returns
// them all as one InvalidArgument status, one "file:line: message" per line.
// After a mistake the builder skips the bad statement (or uses a placeholder
// value) and goes on, so one build reports as many mistakes as possible.
// Building the SymExpr values themselves is strict (relax::buffer_load with
// the wrong index count aborts); load() is the checked alternative.
//
// Integer constants adapt, as in the SymExpr operators: a stored int64
// constant takes the buffer's dtype (`b.store(C, {i}, 0)` stores 0f32 into a
// float32 C), and so does an int64 constant loop start next to an int32
// extent.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"
#include "relax/support/source_location.h"

namespace relax {

namespace detail {
class PrimFuncState;
}  // namespace detail

/// Builds one PrimFunc. Not copyable; movable.
class PrimFuncBuilder {
 public:
  using Location = SourceLocation;
  using BodyFn = std::function<void()>;
  using LoopFn = std::function<void(SymVar)>;
  using BlockFn = std::function<void(const std::vector<SymVar>&)>;

  /// An iteration variable of a block, before the block creates it: it ranges
  /// over [0, extent) and takes the value `binding` (of the enclosing loop
  /// variables). `name` defaults to "v" + the binding's name when the binding is
  /// a bare variable (`vi` for `i`), else "v" + its position.
  struct IterSpec {
    SymExpr extent;
    SymExpr binding;
    IterType type = IterType::kSpatial;
    std::string name;
  };

  /// Starts the kernel `name` (recorded as the attribute "global_symbol").
  explicit PrimFuncBuilder(std::string name);
  ~PrimFuncBuilder();
  PrimFuncBuilder(PrimFuncBuilder&&) noexcept;
  PrimFuncBuilder& operator=(PrimFuncBuilder&&) noexcept;
  PrimFuncBuilder(const PrimFuncBuilder&) = delete;
  PrimFuncBuilder& operator=(const PrimFuncBuilder&) = delete;

  // ---- Parameters (at the top level, outside any loop or block) ----------

  /// Adds a buffer parameter (global scope, compact row-major). Bare-variable
  /// dims define their variables; dims must be integers.
  Buffer buffer_param(std::string name, std::vector<SymExpr> shape, DataType dtype,
                      Location loc = Location::current());
  /// Adds a scalar parameter of an integer or float dtype.
  SymVar scalar_param(std::string name, DataType dtype = DataType::int64(),
                      Location loc = Location::current());

  // ---- Structure ---------------------------------------------------------

  /// `for name in range(min, min + extent)`: runs `body` with the loop variable
  /// (of the extent's integer dtype) to build the loop body.
  void for_(std::string name, SymExpr min, SymExpr extent, ForKind kind, const LoopFn& body,
            Location loc = Location::current());
  /// A serial loop.
  void for_(std::string name, SymExpr min, SymExpr extent, const LoopFn& body,
            Location loc = Location::current());

  /// A spatial iteration variable for block().
  static IterSpec spatial(SymExpr extent, SymExpr binding, std::string name = "");
  /// A reduction iteration variable for block().
  static IterSpec reduce(SymExpr extent, SymExpr binding, std::string name = "");

  /// A compute block: creates its iteration variables and runs `body` with them.
  void block(std::string name, std::vector<IterSpec> iters, const BlockFn& body,
             Location loc = Location::current());
  /// A block with an `init` part, run when every reduction variable is 0
  /// (the block needs at least one reduction variable).
  void block(std::string name, std::vector<IterSpec> iters, const BlockFn& init,
             const BlockFn& body, Location loc = Location::current());

  /// `if cond { then_body }` (cond boolean).
  void if_then_else(SymExpr cond, const BodyFn& then_body, Location loc = Location::current());
  /// `if cond { then_body } else { else_body }`.
  void if_then_else(SymExpr cond, const BodyFn& then_body, const BodyFn& else_body,
                    Location loc = Location::current());

  /// `let name = value` for the rest of the current body; returns the variable
  /// (of the value's dtype).
  SymVar let(std::string name, SymExpr value, Location loc = Location::current());

  /// Storage for a new buffer for the rest of the current body; returns it.
  Buffer allocate(std::string name, std::vector<SymExpr> shape, DataType dtype,
                  BufferScope scope = BufferScope::kLocal, Location loc = Location::current());

  // ---- Statements and values ---------------------------------------------

  /// `buffer[indices] = value`.
  void store(const Buffer& buffer, std::vector<SymExpr> indices, SymExpr value,
             Location loc = Location::current());
  /// `buffer[indices]` as a value, checked: a wrong index count or a non-integer
  /// index is recorded as an error and gives a zero of the buffer's dtype.
  SymExpr load(const Buffer& buffer, std::vector<SymExpr> indices,
               Location loc = Location::current());
  /// Evaluates `value` for its effect.
  void evaluate(SymExpr value, Location loc = Location::current());

  /// Sets a function attribute.
  void set_attr(std::string name, AttrValue value);

  /// The diagnostics recorded so far, "file:line: message" each.
  std::vector<std::string> errors() const;

  /// The PrimFunc, or every diagnostic as one InvalidArgument status. May be
  /// called more than once (each call builds from the statements so far), but
  /// not from inside a loop, block or branch callback.
  absl::StatusOr<Expr> build(Location loc = Location::current()) const;

 private:
  std::unique_ptr<detail::PrimFuncState> state_;
};

}  // namespace relax
