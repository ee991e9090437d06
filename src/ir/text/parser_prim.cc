// The parser of the IR text format: PrimFuncs and their statements.
//
// Buffers are looked up by name in the item's ParseContext (a PrimFunc's
// parameters, plus each `alloc` while its body is read); symbolic variables
// share the item's namespace with the graph level (see parser_value.cc). Loop,
// `let` and block iteration variables are defined after their bounds or value
// are read. Each statement is checked before its constructor sees it (index
// counts, dtypes of bounds, conditions and stored values), so that no input
// reaches a constructor's internal checks.
#include "absl/strings/str_cat.h"
#include "ir/text/parser_impl.h"
#include "relax/ir/micro_kernel.h"
#include "ir/text/text_format.h"

namespace relax::text {
namespace {

bool is_int_dtype(DataType t) { return is_scalar_dtype(t) && t.is_int(); }

// A list of statements as one statement (printer.h: one element is itself).
Stmt as_stmt(std::vector<Stmt> stmts) {
  if (stmts.size() == 1) return std::move(stmts[0]);
  return make_seq(std::move(stmts));
}

}  // namespace

std::optional<PrimHeader> Parser::parse_prim_header() {
  DepthGuard guard(*this);
  PrimHeader h;
  if (!expect_punct("(")) return std::nullopt;
  begin_sym_region();
  while (ok() && !at_punct(")")) {
    const Token& at = tok();
    std::optional<std::string> name = expect_identifier("a parameter name");
    expect_punct(":");
    if (!ok()) break;
    if (at_name("Buffer")) {
      std::optional<Buffer> buffer = parse_buffer_type(*name, true);
      if (!buffer) break;
      if (!st_.syms.buffers.emplace(*name, *buffer).second) {
        fail(at, "duplicate buffer `" + *name + "`");
        break;
      }
      h.params.push_back(PrimParam{buffer, std::nullopt});
    } else {
      const Token& dtype_at = tok();
      std::optional<DataType> dtype = parse_dtype_token();
      if (!ok()) break;
      if (!is_int_dtype(*dtype) && !dtype->is_float()) {
        fail(dtype_at, "a scalar parameter must have an integer or float dtype, found " +
                           dtype->to_string());
        break;
      }
      h.params.push_back(PrimParam{std::nullopt, define_sym(*name, *dtype, at)});
    }
    if (!accept_punct(",")) break;
  }
  end_sym_region();
  expect_punct(")");
  if (accept_name("attrs")) {
    std::optional<Attrs> attrs = parse_attrs_body();
    if (attrs) h.attrs = std::move(*attrs);
  }
  if (!ok()) return std::nullopt;
  return h;
}

Expr Parser::parse_prim_body(PrimHeader h) {
  Stmt body = parse_stmt_block();
  if (!ok()) return Expr();
  return make_prim_func(std::move(h.params), body, std::move(h.attrs));
}

std::optional<Buffer> Parser::parse_buffer_type(const std::string& name, bool defining) {
  expect_name("Buffer");
  expect_punct("[");
  std::optional<std::vector<SymExpr>> shape = parse_dims(defining);
  expect_punct(",");
  const Token& dtype_at = tok();
  std::optional<DataType> dtype = parse_dtype_token();
  if (ok() && !is_scalar_dtype(*dtype)) {
    fail(dtype_at, "a buffer's dtype must be a scalar number or bool, found " + dtype->to_string());
  }
  std::vector<SymExpr> strides;
  BufferScope scope = BufferScope::kGlobal;
  while (ok() && accept_punct(",")) {
    if (accept_name("strides")) {
      expect_punct("=");
      std::optional<std::vector<SymExpr>> s = parse_dims(defining);
      if (s) strides = std::move(*s);
      if (ok() && strides.size() != shape->size()) {
        fail(dtype_at, absl::StrCat("a buffer of rank ", shape->size(), " needs as many strides, found ",
                                    strides.size()));
      }
      continue;
    }
    bool found = false;
    for (BufferScope s : {BufferScope::kGlobal, BufferScope::kLocal, BufferScope::kWorkspace}) {
      if (!found && at_name(buffer_scope_name(s))) {
        scope = s;
        found = true;
      }
    }
    if (!found) {
      fail_expected("`strides=` or a scope (global, local, workspace)");
      break;
    }
    advance();
  }
  expect_punct("]");
  if (!ok()) return std::nullopt;
  return Buffer(name, *dtype, std::move(*shape), std::move(strides), scope);
}

std::optional<std::vector<Stmt>> Parser::parse_stmt_list() {
  std::vector<Stmt> stmts;
  while (ok() && !at_punct("}") && tok().kind != TokenKind::kEnd) stmts.push_back(parse_stmt());
  if (!ok()) return std::nullopt;
  return stmts;
}

Stmt Parser::parse_stmt_block() {
  DepthGuard guard(*this);
  if (!expect_punct("{")) return Stmt();
  std::optional<std::vector<Stmt>> stmts = parse_stmt_list();
  expect_punct("}");
  if (!ok()) return Stmt();
  return as_stmt(std::move(*stmts));
}

Stmt Parser::parse_stmt() {
  DepthGuard guard(*this);
  if (!ok()) return Stmt();
  const Token& t = tok();
  if (t.kind != TokenKind::kName) {
    fail_expected("a statement");
    return Stmt();
  }
  if (at_name("for")) return parse_for();
  if (at_name("block")) return parse_block();
  if (at_name("seq") && peek().text == "{") {
    advance();
    advance();
    std::optional<std::vector<Stmt>> stmts = parse_stmt_list();
    expect_punct("}");
    return ok() ? make_seq(std::move(*stmts)) : Stmt();
  }
  if (accept_name("if")) {
    const Token& at = tok();
    SymExpr cond = parse_sym();
    if (ok() && !cond.dtype().is_bool()) {
      fail(at, "a condition must be boolean, found `" + cond.to_string() + "`");
    }
    Stmt then_case = parse_stmt_block();
    Stmt else_case;
    if (accept_name("else")) else_case = parse_stmt_block();
    return ok() ? make_if_then_else(cond, then_case, else_case) : Stmt();
  }
  if (accept_name("let")) {
    const Token& at = tok();
    std::optional<std::string> name = expect_identifier("a variable name");
    DataType dtype = DataType::int64();
    if (accept_punct(":")) {
      const Token& dtype_at = tok();
      std::optional<DataType> d = parse_dtype_token();
      if (d) dtype = *d;
      if (ok() && !is_scalar_dtype(dtype)) fail(dtype_at, "a variable cannot have dtype " + dtype.to_string());
    }
    expect_punct("=");
    const Token& value_at = tok();
    SymExpr value = parse_sym();
    if (ok() && value.dtype() != dtype) {
      fail(value_at, "`" + *name + "` is " + dtype.to_string() + " but its value `" +
                         value.to_string() + "` is " + value.dtype().to_string());
    }
    if (!ok()) return Stmt();
    SymVar var = define_sym(*name, dtype, at);
    Stmt body = parse_stmt_block();
    return ok() ? make_let(var, value, body) : Stmt();
  }
  if (accept_name("alloc")) {
    const Token& at = tok();
    std::optional<std::string> name = expect_identifier("a buffer name");
    expect_punct(":");
    if (!ok()) return Stmt();
    std::optional<Buffer> buffer = parse_buffer_type(*name, false);
    if (!buffer) return Stmt();
    if (!st_.syms.buffers.emplace(*name, *buffer).second) {
      fail(at, "duplicate buffer `" + *name + "`");
      return Stmt();
    }
    Stmt body = parse_stmt_block();
    st_.syms.buffers.erase(*name);
    return ok() ? make_allocate(*buffer, body) : Stmt();
  }
  if (accept_name("evaluate")) {
    SymExpr value = parse_sym();
    return ok() ? make_evaluate(value) : Stmt();
  }
  if (at_name("call_extern") && peek().kind == TokenKind::kName) return parse_extern_call();
  if (peek().kind == TokenKind::kPunct && peek().text == "[") return parse_store();
  fail_expected("a statement");
  return Stmt();
}

DataType Parser::parse_index_dtype(const std::string& what) {
  DataType dtype = DataType::int64();
  if (!accept_punct(":")) return dtype;
  const Token& dtype_at = tok();
  std::optional<DataType> d = parse_dtype_token();
  if (d) dtype = *d;
  if (ok() && !is_int_dtype(dtype)) {
    fail(dtype_at, what + " must have an integer dtype, found " + dtype.to_string());
  }
  return dtype;
}

Stmt Parser::parse_for() {
  advance();  // for
  const Token& at = tok();
  std::optional<std::string> name = expect_identifier("a loop variable");
  const DataType dtype = parse_index_dtype("a loop variable");
  expect_name("in");
  expect_name("range");
  expect_punct("(");
  const Token& first_at = tok();
  SymExpr first = parse_sym();
  SymExpr min;
  SymExpr extent = first;
  if (accept_punct(",")) {
    expect_name("extent");
    expect_punct("=");
    min = first;
    extent = parse_sym();
  }
  expect_punct(")");
  if (!ok()) return Stmt();
  if (!min.defined()) min = SymExpr::int_imm(0, dtype);
  if (min.dtype() != dtype || extent.dtype() != dtype) {
    fail(first_at, "the bounds of loop `" + *name + "` must be " + dtype.to_string() + ", found `" +
                       min.to_string() + "` and `" + extent.to_string() + "`");
    return Stmt();
  }
  ForKind kind = ForKind::kSerial;
  if (accept_name("parallel")) {
    kind = ForKind::kParallel;
  } else if (accept_name("vectorized")) {
    kind = ForKind::kVectorized;
  } else if (accept_name("unrolled")) {
    kind = ForKind::kUnrolled;
  }
  SymVar var = define_sym(*name, dtype, at);
  Stmt body = parse_stmt_block();
  return ok() ? make_for(var, min, extent, kind, body) : Stmt();
}

Stmt Parser::parse_store() {
  const Token& at = tok();
  const std::string name(at.text);
  advance();
  auto it = st_.syms.buffers.find(name);
  if (it == st_.syms.buffers.end()) {
    fail(at, "unknown buffer `" + name + "`");
    return Stmt();
  }
  const Buffer buffer = it->second;
  expect_punct("[");
  std::vector<SymExpr> indices;
  while (ok() && !at_punct("]")) {
    const Token& index_at = tok();
    SymExpr index = parse_sym();
    if (ok()) {  // an index that failed to parse is undefined
      const DataType t = index.dtype();
      if (!is_int_dtype(t) && !(t.lanes != 1 && t.code == DataType::Code::kInt && t.bits == 64)) {
        fail(index_at, "an index must be an integer or an int64 vector, found `" + index.to_string() + "`");
      }
    }
    indices.push_back(index);
    if (!accept_punct(",")) break;
  }
  expect_punct("]");
  expect_punct("=");
  const Token& value_at = tok();
  SymExpr value = parse_sym();
  if (!ok()) return Stmt();
  if (indices.size() != buffer.ndim()) {
    fail(at, absl::StrCat("a store to `", name, "` has ", indices.size(),
                          " indices, but the buffer has rank ", buffer.ndim()));
    return Stmt();
  }
  if (const std::string why = load_index_mismatch(buffer, indices); !why.empty()) {
    fail(at, why);
    return Stmt();
  }
  // A store takes what a load at the same indices gives (a vector at vector indices).
  const DataType expected = buffer_load(buffer, indices).dtype();
  if (value.dtype() != expected) {
    fail(value_at, "a store to `" + name + "` of dtype " + buffer.dtype().to_string() +
                       (expected != buffer.dtype() ? " at vector indices (" + expected.to_string() + ")" : "") +
                       " is given `" + value.to_string() + "` of dtype " + value.dtype().to_string());
    return Stmt();
  }
  return make_store(buffer, std::move(indices), value);
}

// call_extern name(&A[i, 0], n): a region argument is `&` and the indices of
// its first element, anything else a scalar value. Whether `name` is a
// registered micro-kernel that takes these arguments is well_formed()'s
// question (a module may be parsed where the kernel is not registered).
Stmt Parser::parse_extern_call() {
  advance();  // call_extern
  const Token& name_at = tok();
  std::optional<std::string> name = expect_identifier("a micro-kernel name");
  if (ok() && !is_micro_kernel_name(*name)) {
    fail(name_at, "a micro-kernel name must be a C identifier, found `" + *name + "`");
  }
  expect_punct("(");
  std::vector<ExternArg> args;
  while (ok() && !at_punct(")")) {
    const Token& at = tok();
    if (!accept_punct("&")) {
      SymExpr value = parse_sym();
      if (ok() && value.dtype().lanes != 1) {
        fail(at, "an extern call's scalar argument must be a scalar, found `" + value.to_string() + "`");
      }
      args.push_back(extern_scalar(value));
      if (!accept_punct(",")) break;
      continue;
    }
    const Token& buffer_at = tok();
    std::optional<std::string> buffer_name = expect_identifier("a buffer name");
    if (!ok()) break;
    auto it = st_.syms.buffers.find(*buffer_name);
    if (it == st_.syms.buffers.end()) {
      fail(buffer_at, "unknown buffer `" + *buffer_name + "`");
      break;
    }
    expect_punct("[");
    std::vector<SymExpr> indices;
    while (ok() && !at_punct("]")) {
      const Token& index_at = tok();
      SymExpr index = parse_sym();
      if (ok() && !is_int_dtype(index.dtype())) {
        fail(index_at, "an index must be an integer, found `" + index.to_string() + "`");
      }
      indices.push_back(index);
      if (!accept_punct(",")) break;
    }
    expect_punct("]");
    if (ok() && indices.size() != it->second.ndim()) {
      fail(at, absl::StrCat("the region of `", *buffer_name, "` has ", indices.size(),
                            " indices, but the buffer has rank ", it->second.ndim()));
    }
    if (!ok()) break;
    args.push_back(extern_region(it->second, std::move(indices)));
    if (!accept_punct(",")) break;
  }
  expect_punct(")");
  return ok() ? make_extern_call(*name, std::move(args)) : Stmt();
}

Stmt Parser::parse_block() {
  advance();  // block
  std::optional<std::string> name = expect_name_or_string("a block name");
  expect_punct("(");
  std::vector<IterVar> iters;
  while (ok() && !at_punct(")")) {
    const Token& at = tok();
    std::optional<std::string> var_name = expect_identifier("an iteration variable");
    const DataType dtype = parse_index_dtype("an iteration variable");
    expect_punct("=");
    IterType type = IterType::kSpatial;
    if (accept_name("reduce")) {
      type = IterType::kReduction;
    } else if (!accept_name("spatial")) {
      fail_expected("`spatial` or `reduce`");
    }
    expect_punct("(");
    const Token& extent_at = tok();
    SymExpr extent = parse_sym();
    expect_punct(",");
    SymExpr binding = parse_sym();
    expect_punct(")");
    if (!ok()) return Stmt();
    if (extent.dtype() != dtype || binding.dtype() != dtype) {
      fail(extent_at, "the extent and binding of `" + *var_name + "` must be " + dtype.to_string());
      return Stmt();
    }
    iters.push_back(IterVar{define_sym(*var_name, dtype, at), extent, type, binding});
    if (!accept_punct(",")) break;
  }
  expect_punct(")");
  expect_punct("{");
  Stmt init;
  if (at_name("init") && peek().text == "{") {
    advance();
    init = parse_stmt_block();
  }
  std::optional<std::vector<Stmt>> body = parse_stmt_list();
  expect_punct("}");
  if (!ok()) return Stmt();
  return make_block(std::move(*name), std::move(iters), init, as_stmt(std::move(*body)));
}

}  // namespace relax::text
