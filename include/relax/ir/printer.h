// The text format of relax IR: what to_text writes and parse_module (parser.h) reads.
//
// A module prints as a readable program. Every binding is on its own line with
// its annotation; PrimFuncs are loop nests; symbolic variables, buffers and
// variables are written by name, and names are made unique within each
// function (two Vars hinted `lv` print as `lv` and `lv_1`; likewise SymVars
// and buffers that share a name), so that the text names each variable once:
//
//   module {
//     prim_func @add(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32],
//                    C: Buffer[(n, 4), float32]) {
//       for i in range(n) parallel {
//         for j in range(4) {
//           block add(vi = spatial(n, i), vj = spatial(4, j)) {
//             C[vi, vj] = A[vi, vj] + B[vi, vj]
//           }
//         }
//       }
//     }
//     func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32])
//         -> Tensor[ndim=2, float32] upper_bounds {n: 4096} {
//       dataflow {
//         lv: Tensor[(n, 4), float32] = call_tir(@add, (x, y), sinfo=Tensor[(n, 4), float32])
//         output gv: Tensor[(n, 4), float32] = add(lv, x)
//       }
//       z: Tensor[(m, 4), float32] = match_cast(gv, Tensor[(m, 4), float32])
//       return z
//     }
//     extern_func @gemm = "cblas_sgemm" : Func[opaque -> Object, impure]
//   }
//
// (The printer writes each header on one line; the text may break lines
// anywhere between tokens except inside a scalar expression, see SYMEXPR.)
//
// Grammar. `x?` optional, `x*` repeated, `x,*` comma-separated (possibly
// empty), `(...)` grouping; quoted text is literal.
//
//   module     := 'module' attrs? '{' item* '}'
//   item       := 'func' GLOBAL func_rest
//               | 'prim_func' GLOBAL prim_rest
//               | 'extern_func' GLOBAL ('=' STRING)? ':' SINFO   -- symbol defaults to the name
//   GLOBAL     := '@' (NAME | STRING)
//   attrs      := 'attrs' '{' (KEY '=' attr_value),* '}'
//   KEY        := NAME | STRING
//   attr_value := INT | FLOAT | 'true' | 'false' | STRING | DTYPE
//               | '[' INT,* ']'                 -- a list of integers
//               | 'sym' '[' SYMEXPR,* ']'       -- a list of symbolic expressions
//
// Graph level (SINFO is StructInfo's own text form, see struct_info.h):
//   func_rest  := '(' (NAME ':' SINFO),* ')' '->' SINFO 'impure'?
//                 ('upper_bounds' '{' (NAME ':' INT),* '}')? attrs?
//                 '{' seq_items 'return' expr '}'
//   seq_items  := (binding | 'dataflow' '{' ('output'? binding)* '}'
//                          | 'bindings' '{' binding* '}')*
//   binding    := NAME (':' SINFO)? '=' (expr | 'match_cast' '(' expr ',' SINFO ')')
//   expr       := primary ('(' call_args ')' | '[' INT ']')*   -- call, tuple item
//   call_args  := expr,* (',' (KEY '=' attr_value | 'sinfo' '=' SINFO))*  -- arguments first
//   primary    := NAME                           -- a Var in scope, else an Op by name
//               | GLOBAL | STRING
//               | '(' ')' | '(' expr ')' | '(' expr ',' (expr,*)? ')'   -- (a) is a; (a,) a tuple
//               | 'const' '(' DTYPE ',' DIMS ',' ('[' number,* ']' | 'bytes' STRING) ')'
//               | 'shape' '(' SYMEXPR,* ')' | 'prim' '(' SYMEXPR ')'
//               | '-'? NUMBER                    -- a bare number: a PrimValue, see below
//               | 'extern_func' '(' STRING (',' SINFO)? ')' | 'op' '(' STRING ')'
//               | 'if' expr '{' seq_items expr '}' 'else' '{' seq_items expr '}'
//               | 'seq' '{' seq_items expr '}'
//               | 'func' func_rest | 'prim_func' prim_rest
//
// Bindings directly in a body form one binding block until a `dataflow`
// block; `bindings { }` writes a block that would otherwise merge with the one
// before it (or an empty one). In a dataflow block a binding defines a
// DataflowVar unless it is marked `output`. A binding's annotation is read
// after its value: the symbolic variables that a match_cast pattern defines
// may appear in it. Constants list their elements in row-major order (ints,
// `true`/`false`, floats in the shortest decimal that reads back exactly,
// `inf`, `-inf`, `nan`); other dtypes, and NaNs with a payload, are written as
// the hex of their bytes (`bytes "003c0040"`). DIMS is `(d0, d1,)` as in SINFO.
// A bare number where an expression goes is a PrimValue, with the dtype the C++
// builder gives a C++ number (relax/ir/op/elementwise.h): an unsuffixed float
// (`1.0`, `-2.5e-3`) is a float64 constant and an unsuffixed integer (`2`) an
// int64 constant, both of which adapt to the dtype of the tensor operand they
// meet, so `multiply(x, 1.0)` multiplies a float16 x by a float16 1; a
// suffixed literal (`0.5f16`, `3i32`) has its suffix's dtype, and one followed
// by more of a scalar expression (`2 * n`) reads as `prim(2 * n)`. The printer
// writes every PrimValue as `prim(...)` (`prim(1f64)`), which reads back the same.
// Call attributes are written `key=value` after the arguments, then each
// sinfo_arg as `sinfo=SINFO`. An Op that a name cannot reach is `op("name")`.
//
// Loop level:
//   prim_rest  := '(' prim_param,* ')' attrs? '{' stmt* '}'
//   prim_param := NAME ':' buffer_type | NAME ':' DTYPE      -- a buffer, or a scalar
//   buffer_type:= 'Buffer' '[' DIMS ',' DTYPE (',' 'strides' '=' DIMS)? (',' SCOPE)? ']'
//   stmt       := 'for' NAME (':' DTYPE)? 'in' 'range' '(' SYMEXPR (',' 'extent' '=' SYMEXPR)? ')'
//                 ('parallel' | 'vectorized' | 'unrolled')? '{' stmt* '}'
//               | NAME '[' SYMEXPR,* ']' '=' SYMEXPR           -- a buffer store
//               | 'if' SYMEXPR '{' stmt* '}' ('else' '{' stmt* '}')?
//               | 'let' NAME (':' DTYPE)? '=' SYMEXPR '{' stmt* '}'
//               | 'alloc' NAME ':' buffer_type '{' stmt* '}'
//               | 'evaluate' SYMEXPR
//               | 'block' (NAME | STRING) '(' iter_var,* ')' '{' ('init' '{' stmt* '}')? stmt* '}'
//               | 'seq' '{' stmt* '}'
//   iter_var   := NAME (':' DTYPE)? '=' ('spatial' | 'reduce') '(' SYMEXPR ',' SYMEXPR ')'
//
// `range(e)` starts at 0 and runs e iterations; `range(a, extent=e)` starts at
// a. A list of statements is one statement when it has one element and a
// SeqStmt otherwise; `seq { }` writes a SeqStmt that this rule would not give
// (one element, or one inside another). Variables without a `: DTYPE` are
// int64. SCOPE is `local` or `workspace` (global when left out).
//
// SYMEXPR is the SymExpr text form (sym_expr.h): `n * 4 + 1`, `A[i, j] * 2f32`,
// `cast<float32>(x)`. One ends at a ',', ')', ']', '}', '{', ':' or '=' outside
// its own brackets, or at the end of its line. `//` starts a comment that runs
// to the end of the line; `/* ... */` is a comment that may span lines and does
// not nest (the first `*/` ends it, as in C). Comments may stand between any
// two tokens, inside a SYMEXPR too (which still ends at the end of its line, so
// a comment inside one stays on that line); a `/*` without its `*/` is an error
// at the `/*` ("1:5: unterminated comment: ...").
//
// Symbolic variables are defined where they first appear as a whole dim (or
// Prim value) of a parameter annotation, of a match_cast pattern or of a Func
// annotation's parameters, or as a PrimFunc scalar parameter, loop, `let` or
// block iteration variable; any other use must come after the definition
// (within one parameter list, anywhere in the list). A parameter list (or a
// match_cast pattern) also defines each variable that one of its dims can be
// solved for once the list is read (relax/shape/solve.h; the rule is
// defined_sym_vars in struct_info.h): `(x: Tensor[(n * 2,), f32])` defines n,
// as does `match_cast(y, Tensor[(m + k * 4,), f32])` k when m is in scope,
// while `(x: Tensor[(n * n,), f32])` does not, and a name no rule defines is
// an error at its first use.
//
// Limits: a function body that is not a SeqExpr prints as a SeqExpr without
// bindings (and so reads back as one); constants must be on the host.
#pragma once

#include <cstdint>
#include <string>

#include "relax/ir/expr.h"
#include "relax/ir/module.h"

namespace relax {

/// How to_text writes what can be long.
struct PrintOptions {
  /// Constants with more elements than this print as `const(float32, (16, 32), ...)`,
  /// which the parser does not read back; -1 (the default) prints every element.
  int64_t max_constant_elements = -1;
};

/// The text form of a whole module (parse_module reads it back, unless
/// `options` elides something).
std::string to_text(const IRModule& mod, const PrintOptions& options = {});

/// The text form of one expression: a Function as `func(...) -> ... { ... }`,
/// a PrimFunc as `prim_func(...) { ... }`, anything else as it would appear
/// inside a function body (free variables by their name hints).
std::string to_text(const Expr& expr);

}  // namespace relax
