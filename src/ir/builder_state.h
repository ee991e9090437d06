// The state behind ModuleBuilder and FunctionBuilder (private to src/ir).
//
// A FunctionState keeps a stack of frames: frame 0 is the function body, and
// each emit_if branch pushes one while its callback runs. Each frame collects
// binding blocks; a dataflow scope switches the top frame into a dataflow
// block. Visibility of variables is a stack plus a set (popped when a dataflow
// block or a branch ends); symbolic variables likewise.
//
// Errors are recorded in the ModuleState and never abort. A value whose
// building failed is bound to an Object-annotated "poisoned" variable; values
// that use a poisoned variable are poisoned silently, so that one mistake is
// reported once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "relax/ir/builder.h"
#include "relax/ir/op.h"

namespace relax::detail {

/// A function started with ModuleBuilder::function, until its ret.
struct PendingFunction {
  std::string name;
  SourceLocation loc;
  bool finished = false;
  bool duplicate = false;  ///< the name was taken or empty: the function is never added
  /// Set by ModuleBuilder::declare_function: the declared annotation, the
  /// GlobalVar handed out for it (the module's, through the declaration entry) and
  /// whether mb.function(name) has started the body.
  StructInfo declared_sinfo;
  Expr declared_gvar;
  SourceLocation decl_loc;
  bool has_body = false;
};

struct ModuleState {
  IRModule module;
  std::vector<std::string> errors;
  std::vector<std::shared_ptr<PendingFunction>> functions;
  /// GlobalVars handed out for names that do not exist (owned: a node address
  /// must not be reused while it is in the set).
  absl::flat_hash_set<Expr, ExprPtrHash, ExprPtrEqual> poisoned;

  void error(const SourceLocation& loc, const std::string& message);
};

class FunctionState {
 public:
  FunctionState(std::shared_ptr<ModuleState> module, std::shared_ptr<PendingFunction> record);

  Var add_param(std::string name, StructInfo sinfo, const SourceLocation& loc);
  void add_upper_bound(const SymVar& var, int64_t upper, const SourceLocation& loc);
  uint64_t begin_dataflow(const SourceLocation& loc);
  void end_dataflow(uint64_t token);
  /// Binds `value`; `output` asks for a Var that leaves the dataflow block.
  Var emit(Expr value, std::string name, bool output, const SourceLocation& loc);
  Var match_cast(Expr value, StructInfo pattern, std::string name, const SourceLocation& loc);
  Var emit_if(Expr cond, const std::function<Expr()>& then_branch,
              const std::function<Expr()>& else_branch, std::string name,
              const SourceLocation& loc);
  Expr ret(Expr value, const SourceLocation& loc);

  const std::string& name() const { return record_->name; }
  Analyzer& analyzer() { return analyzer_; }
  Expr global_var() const { return global_var_.defined() ? global_var_ : record_->declared_gvar; }
  void set_impure() { pure_ = false; }
  void set_attr(std::string name, AttrValue value, const SourceLocation& loc);

 private:
  struct Frame {
    std::vector<BindingBlock> blocks;
    bool in_dataflow = false;
    bool new_block = false;  ///< the next binding starts a new block
    uint64_t dataflow_token = 0;
    size_t dataflow_var_mark = 0;  ///< visible_ size when the dataflow block began
    size_t var_mark = 0;           ///< visible_ size when the frame began
    size_t sym_mark = 0;           ///< syms_ size when the frame began
  };

  // For a declared function: `params`/`ret` fit the declaration; the
  // return annotation the function gets (the declared one in terms of the
  // actual parameters), undefined after a reported mismatch.
  StructInfo check_declaration(const StructInfo& body_sinfo, const SourceLocation& loc);
  // Checks that the function can still take bindings; false after an error.
  bool can_emit(const SourceLocation& loc);
  void seal_params();
  DeduceContext context();
  // Scope and poison check of every variable `value` mentions: 1 ok, 0 poisoned, -1 error.
  int check_scope(const Expr& value, const SourceLocation& loc);
  // Binds the non-leaf children of `value` (A-normal form).
  Expr flatten(const Expr& value, const SourceLocation& loc);
  Expr flatten_operand(const Expr& operand, const SourceLocation& loc);
  // check_defined + check_scope (unless `call` is null: a part of a value
  // checked already) + flatten + normalize; undefined on failure (reported, or
  // poisoned silently). `call` is the builder method the value came through
  // ("emit"), for messages.
  Expr prepare(const Expr& value, const SourceLocation& loc, const char* call);
  // A prepared value as a SeqExpr body: leaves and tuples stay, anything else
  // is bound to a variable first (undefined when that fails).
  Expr as_body(const Expr& prepared, const SourceLocation& loc);
  // prepare + bind to a new variable (poisoned on failure).
  Var bind_value(const Expr& value, std::string name, bool output, const SourceLocation& loc,
                 const char* call);
  // Every symbolic variable of `sinfo` is defined; reports otherwise.
  bool check_sym_defined(const StructInfo& sinfo, const std::string& what,
                         const SourceLocation& loc);
  // Defines what `sinfos` define together (defined_sym_vars) and records that
  // their bare dims are sizes (>= 0).
  void define_syms(const std::vector<StructInfo>& sinfos,
                   const std::function<bool(const SymVar&)>& outer_known);
  Var new_var(std::string name, StructInfo sinfo, bool dataflow);
  Var poisoned_var(std::string name, bool dataflow);
  void append(Binding binding);
  void make_visible(const Var& var);
  void pop_visible(size_t mark, bool dataflow_only);
  void pop_syms(size_t mark);
  bool sym_defined(const SymVar& v) const { return sym_ids_.contains(v.id()); }
  Frame& frame() { return frames_.back(); }
  void error(const SourceLocation& loc, const std::string& message) {
    module_->error(loc, message);
  }

  std::shared_ptr<ModuleState> module_;
  std::shared_ptr<PendingFunction> record_;
  Analyzer analyzer_;
  std::vector<Var> params_;
  std::vector<SourceLocation> param_locs_;
  bool params_sealed_ = false;
  size_t param_sym_mark_ = 0;  ///< syms_ size once the parameters were sealed
  bool pure_ = true;
  Attrs attrs_;
  std::vector<SymBound> upper_bounds_;
  std::vector<SourceLocation> upper_bound_locs_;
  std::vector<Frame> frames_;
  std::vector<Expr> visible_;  ///< owns the nodes of visible_set_
  absl::flat_hash_set<const ExprNode*> visible_set_;
  std::vector<SymVar> syms_;
  absl::flat_hash_set<uint64_t> sym_ids_;
  absl::flat_hash_set<Expr, ExprPtrHash, ExprPtrEqual> poisoned_;
  uint64_t next_token_ = 1;
  int next_name_ = 0;
  bool flatten_poisoned_ = false;  ///< an operand bound by flatten() was poisoned
  Expr global_var_;
};

}  // namespace relax::detail
