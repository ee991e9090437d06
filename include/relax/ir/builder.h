// The fluent builder: the main way to write a model in C++.
//
//   relax::ModuleBuilder mb;
//   relax::SymVar n("n");
//   auto f = mb.function("main");
//   relax::Var x = f.param("x", relax::tensor_sinfo({n, 4096}, relax::DataType::float32()));
//   relax::Var w = f.param("w", relax::tensor_sinfo({4096, 4096}, relax::DataType::float32()));
//   f.upper_bound(n, 4096);
//   relax::Var z;
//   {
//     auto df = f.dataflow();                           // a DataflowBlock until df dies
//     relax::Var y = f.emit(relax::op::matmul(x, w));   // a DataflowVar, annotated now
//     z = f.emit_output(relax::op::add(y, x));          // a Var that leaves the block
//   }
//   relax::Var m = f.match_cast(z, relax::tensor_sinfo({relax::SymVar("m"), 4096},
//                                                      relax::DataType::float32()), "zm");
//   f.ret(m);
//   absl::StatusOr<relax::IRModule> mod = mb.build();
//
// Every emit normalises its value and deduces its StructInfo at once; nested
// calls are bound to variables of their own first (A-normal form). Mistakes --
// wrong ranks, dims that do not fit, a variable used outside its scope, a
// symbolic variable that nothing defines, a function without ret, an empty
// function name, a default-constructed handle (Var, Expr, SymExpr, StructInfo)
// anywhere in a value or an annotation ("emit: add: argument 1 (rhs) is
// undefined (a default-constructed handle)") -- never abort: each is recorded with the caller's source location and build()
// returns them all as one InvalidArgument status, one "file:line: message"
// per line. After an error the builder goes on with an Object-annotated
// variable (and reports nothing more about values derived from it), so one
// build reports as many independent mistakes as possible.
//
// Functions may call each other in any order, and themselves: declare a
// function first (ModuleBuilder::declare_function), call its GlobalVar
// anywhere, and build its body later with mb.function(name):
//
//   relax::Expr f_gv = mb.declare_function("f", relax::func_sinfo({xs, ks}, xs));
//   auto f = mb.function("f");        // the body of the declared `f`
//   ...  f.emit(relax::make_call(f_gv, {y, k1}))  ...
//   f.ret(...);                       // checked against the declaration
//
// Without a declaration, a function's GlobalVar exists from its ret() on.
//
// Symbolic variables are defined by parameter annotations and by match_cast
// patterns: a dim (or Prim value) that is a bare variable defines it, and so
// does a dim linear in one otherwise undefined variable (`n * 2`, `m + n`
// with n defined: see defined_sym_vars in struct_info.h). Any other mention of
// a variable (a dim `n * n`) is a use, which must be defined somewhere in the
// function's parameters or earlier. Variables defined by a
// dim are known to be >= 0; upper_bound() adds an upper bound.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/struct_info.h"
#include "relax/support/source_location.h"

namespace relax {

namespace detail {
struct ModuleState;
class FunctionState;
}  // namespace detail

class FunctionBuilder;

/// The scope of a dataflow block (FunctionBuilder::dataflow): bindings emitted
/// while it is alive form one DataflowBlock, whose DataflowVars are not visible
/// after it ends (when the scope is destroyed, or at end()).
class [[nodiscard]] DataflowScope {
 public:
  DataflowScope(DataflowScope&& other) noexcept;
  DataflowScope& operator=(DataflowScope&&) = delete;
  DataflowScope(const DataflowScope&) = delete;
  DataflowScope& operator=(const DataflowScope&) = delete;
  ~DataflowScope();

  /// Ends the block now; later calls (and the destructor) do nothing.
  void end();

 private:
  friend class FunctionBuilder;
  DataflowScope(std::shared_ptr<detail::FunctionState> state, uint64_t token);
  std::shared_ptr<detail::FunctionState> state_;
  uint64_t token_ = 0;
};

/// Builds one graph function of a ModuleBuilder. Copies share the function
/// being built. Every method takes the caller's location for its diagnostics.
class FunctionBuilder {
 public:
  using Location = SourceLocation;

  /// Adds a parameter. The parameters together define the symbolic variables
  /// that are bare dims (or a bare Prim value) or that a linear dim solves for
  /// (`n * 2`); other variables they mention must be defined by some parameter.
  /// Parameters come before the body.
  Var param(std::string name, StructInfo sinfo, Location loc = Location::current());

  /// Declares upper >= var (and var >= 0) for memory planning and proofs;
  /// stored in FunctionNode::upper_bounds. `var` must be defined in the function.
  void upper_bound(const SymVar& var, int64_t upper, Location loc = Location::current());

  /// Marks the function impure (it may have side effects).
  void set_impure();
  /// Sets a function attribute (a non-empty name; symbolic values defined).
  void set_attr(std::string name, AttrValue value, Location loc = Location::current());

  /// Opens a dataflow block that lasts as long as the returned scope.
  DataflowScope dataflow(Location loc = Location::current());

  /// Binds `value` to a new variable (a DataflowVar inside a dataflow block)
  /// annotated with its deduced StructInfo. `name` defaults to lv<N> / gv<N>.
  Var emit(Expr value, std::string name = "", Location loc = Location::current());

  /// Inside a dataflow block: binds `value` to a Var that stays visible after
  /// the block ends.
  Var emit_output(Expr value, std::string name = "", Location loc = Location::current());

  /// Binds `value` checked against `pattern` at run time; the new variable has
  /// the pattern's annotation, and the pattern's bare-variable dims that are not
  /// yet defined become defined. A value that can never match is an error.
  Var match_cast(Expr value, StructInfo pattern, std::string name = "",
                 Location loc = Location::current());

  /// Binds an If of `cond` (a Prim[bool] value or a one-element bool tensor). Each branch function runs in
  /// a nested scope: what it emits forms the branch's SeqExpr and what it
  /// returns is the branch's value. The variable's annotation joins both
  /// branches (struct_info_lca).
  Var emit_if(Expr cond, const std::function<Expr()>& then_branch,
              const std::function<Expr()>& else_branch, std::string name = "",
              Location loc = Location::current());

  /// Finishes the function with `value` as its result and adds it to the
  /// module; returns its GlobalVar (undefined when the function could not be
  /// built).
  Expr ret(Expr value, Location loc = Location::current());

  /// The function's GlobalVar: once ret() has run, or from the start when the
  /// function was declared (ModuleBuilder::declare_function), so that its
  /// body can call it; else undefined.
  Expr global_var() const;

  const std::string& name() const;

  /// The analyzer that deductions in this function use (it knows the bounds).
  Analyzer& analyzer();

 private:
  friend class ModuleBuilder;
  explicit FunctionBuilder(std::shared_ptr<detail::FunctionState> state);
  std::shared_ptr<detail::FunctionState> state_;
};

/// Builds an IRModule: graph functions, PrimFuncs and extern functions.
class ModuleBuilder {
 public:
  using Location = SourceLocation;

  ModuleBuilder();

  /// Starts the graph function `name`; it joins the module at its ret(). When
  /// `name` was declared (declare_function), this builds the declared
  /// function's body. An empty name is an error of this call (the function is
  /// built but never added); so it is for declare_function, add_prim_func and
  /// add_extern_func (whose symbol must not be empty either).
  FunctionBuilder function(std::string name, Location loc = Location::current());

  /// Declares the graph function `name` by its annotation (a Func with
  /// parameters: `func_sinfo({tensor_sinfo({n}, f32), prim_sinfo(i64, k)},
  /// tensor_sinfo({n}, f32))`) before its body exists, and returns its
  /// GlobalVar, annotated `func_sinfo`: calls of it deduce through the
  /// declaration, so functions built earlier, later and the function itself
  /// (recursion) can call it. function(name) then builds its body; at ret()
  /// the parameters must equal the declared ones up to renaming their
  /// symbolic variables, purity must agree and the result must fit the
  /// declared return, which becomes the function's return annotation. The
  /// module keeps the returned GlobalVar for the function. A declared function
  /// that never gets a body is an error of build().
  Expr declare_function(std::string name, StructInfo func_sinfo,
                        Location loc = Location::current());

  /// The GlobalVar of the module function `name` (finished with ret, or added
  /// as a PrimFunc or extern function). An unknown name is an error.
  Expr global_var(std::string_view name, Location loc = Location::current());

  /// Adds a loop-level kernel; returns its GlobalVar (for call_tir).
  Expr add_prim_func(std::string name, Expr prim_func, Location loc = Location::current());

  /// Adds a function implemented outside the module under `name`, calling the
  /// symbol `symbol` and annotated `sinfo` (default: opaque, returning Object);
  /// returns its GlobalVar.
  Expr add_extern_func(std::string name, std::string symbol, StructInfo sinfo = StructInfo(),
                       Location loc = Location::current());

  /// The diagnostics recorded so far, "file:line: message" each.
  std::vector<std::string> errors() const;

  /// The module, or every diagnostic as one InvalidArgument status.
  absl::StatusOr<IRModule> build() const;

 private:
  std::shared_ptr<detail::ModuleState> state_;
};

}  // namespace relax
