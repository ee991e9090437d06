// JSON form of an IRModule: a lossless, versioned exchange format.
//
//   std::string text = relax::to_json(mod, /*indent=*/2);
//   absl::StatusOr<relax::IRModule> back = relax::from_json(text);
//
// The document is one object:
//
//   {"format": "relax.ir", "version": 1,
//    "functions": [{"name": "main", "func": 17}, ...],   // in module order
//    "attrs": {"name": <attr>, ...},             // module attributes
//    "nodes": [ ... ]}                           // the node table
//
// Every distinct node -- expression, StructInfo, statement, SymExpr, buffer --
// is written once into "nodes" and referred to by its index there. So what is
// one object in memory is one object after reading: a Var used in many places,
// a shared subtree, a SymVar (two SymVars named `n` stay two variables), a
// Buffer. A node only refers to nodes before it (the table is in post-order),
// which makes the table acyclic by construction. Each entry is an object whose
// "kind" names the node; its other fields are:
//
//   SymExpr (value dtypes are exact: floats bit for bit, inf and nan included)
//     sym.int    dtype, value (an integer; bool constants are 0 or 1)
//     sym.float  dtype, value (a number, or "inf", "-inf", "nan", "0x<16 hex>"
//                for the bits of a double that no other spelling gives)
//     sym.var    dtype, name
//     sym.add sym.sub sym.mul sym.div sym.floordiv sym.floormod sym.min sym.max
//     sym.eq sym.ne sym.lt sym.le sym.gt sym.ge sym.and sym.or sym.not
//     sym.select operands                    (the node's dtype follows from them)
//     sym.cast   dtype, operands (one)
//     sym.call   intrinsic ("exp", "fma", ...), operands
//     sym.load   buffer, operands (the indices)
//   buffer       name, dtype, shape, strides, scope ("global", "local", "workspace")
//   StructInfo
//     sinfo.object
//     sinfo.prim    dtype, value (a sym node, or null)
//     sinfo.shape   ndim (-1: unknown), values (sym nodes, or null when not known)
//     sinfo.tensor  ndim, shape (or null), dtype (or null when unknown),
//                   device ({"type": "cpu"|"cuda", "index": i}; absent when unknown)
//     sinfo.tuple   fields
//     sinfo.func    params (or null when opaque), ret, pure
//   Expr (each also has "sinfo": its StructInfo node, or null when not normalised)
//     expr.var expr.dataflow_var  name
//     expr.global_var  name
//     expr.constant    dtype, shape (integers), data (the bytes, row-major, base64)
//     expr.tuple       fields
//     expr.tuple_get_item  tuple, index
//     expr.call        callee, args, attrs, sinfo_args
//     expr.shape       values
//     expr.prim_value  value
//     expr.string      value
//     expr.if          cond, then, else
//     expr.seq         blocks ([{"dataflow": b, "bindings": [{"var": v, "value": e}
//                      or {"var": v, "value": e, "match_cast": s}]}]), body
//     expr.function    params, body, ret, pure, upper_bounds ([{"var": v,
//                      "upper": n}]), attrs
//     expr.extern_func symbol
//     expr.op          name (no sinfo: an op is the registered one)
//     expr.prim_func   params ([{"buffer": b} or {"scalar": v}]), body, attrs
//   Stmt
//     stmt.for      var, min, extent, for_kind ("serial", "parallel",
//                   "vectorized", "unrolled"), body
//     stmt.seq      stmts
//     stmt.store    buffer, indices, value
//     stmt.if       cond, then, else (or null)
//     stmt.let      var, value, body
//     stmt.allocate buffer, body
//     stmt.evaluate value
//     stmt.extern_call name, args ([{"value": v} for a scalar, or
//                   {"buffer": b, "indices": [...]} for a region])
//     stmt.block    name, iter_vars ([{"var", "extent", "type": "spatial" |
//                   "reduction", "binding"}]), init (or null), body
//
// Attributes (of calls, functions, PrimFuncs and the module) are an object of
// one-key objects that say the alternative of AttrValue: {"int": 3},
// {"float": 0.5}, {"bool": true}, {"str": "x"}, {"dtype": "float32"},
// {"ints": [1, 2]}, {"syms": [<sym node>, ...]}.
//
// Dtypes are spelled as DataType::to_string ("float32", "int8", "bool",
// "float32x4"; a bool of other than 8 bits is "bool<bits>"). Any string field
// may instead be {"base64": "..."}, which is how bytes that are not UTF-8 are
// written. Annotations are read from the document, not deduced again: a
// module that was normalised is normalised after reading, with the same
// annotations.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "relax/ir/module.h"

namespace relax {

/// The version of the JSON form that to_json writes and from_json reads.
inline constexpr int kIRJsonVersion = 1;

/// The JSON text of `mod`. `indent` < 0 writes one line; otherwise each
/// top-level field, each function and each node gets a line of its own,
/// indented by `indent` spaces per level (nodes themselves stay compact, so a
/// diff of two documents reads node by node). Constants must be host tensors
/// (aborts otherwise); strided ones are written compact. Strings that are not
/// UTF-8 are written as {"base64": "..."}; attribute names must be UTF-8.
/// Works without recursion, so IR of any depth writes.
std::string to_json(const IRModule& mod, int indent = -1);

/// Reads a module written by to_json. Malformed JSON (the message gives
/// nlohmann's line and column), another format or version, and any
/// inconsistency -- a wrong type, a missing or unknown field, a node index out
/// of range or not before the referring node, a node of the wrong kind, an
/// unknown dtype, operator or intrinsic, operands that the operator does not
/// take -- are InvalidArgument errors naming the JSON path, e.g.
///   nodes[12].args[1]: expected a node index, found "x"
/// Nodes may nest at most 4096 levels deep (a chain of SymExpr operators,
/// statements inside statements), so that no document builds IR too deep for
/// the recursive walks over IR elsewhere. The reader checks the document's
/// form and what the IR constructors require; the rules of well-formed IR
/// (scoping, purity, ...) are well_formed()'s to check.
absl::StatusOr<IRModule> from_json(std::string_view json);

}  // namespace relax
