// The parser of the IR text format: modules and graph-level functions.
//
// Stages. A module is read in two passes. The first reads every item's header
// (parameters, return annotation, attributes) and skips its body, adding a
// placeholder with the final annotation to the module, so that a body may call
// any function of the module, earlier or later, and its GlobalVar is the one
// the module hands out. The second pass reads the bodies, each with the names
// its header defined, and replaces the placeholders.
//
// Bindings are normalised as they are read: the value is built with the node
// constructors and normalize() deduces its annotation (op deduction,
// cross-function calls), which the written annotation must fit; one that fits
// only if a run-time check passes makes the binding a match_cast. A SeqExpr is
// normalised when its result has been read, with the symbolic variables
// defined outside it as the scope its annotation may keep.
//
// Scopes. Graph variables are looked up innermost scope first (function
// parameters, then each enclosing SeqExpr, then a dataflow block's own
// DataflowVars, which vanish at its end). A name is defined at most once per
// module item, as the printer writes them. A name that is no variable in scope
// is an operator when one is registered under it. Symbolic variables and
// buffers are per item (see parser_value.cc).
#include "relax/ir/parser.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/nesting.h"
#include "ir/text/parser_impl.h"
#include "relax/ir/normalize.h"

namespace relax {
namespace text {
namespace {

absl::string_view sv(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace

// ---------------------------------------------------------------------------
// Tokens and errors.

Parser::Parser(std::string_view text) : text_(text) {
  if (text.size() >= (size_t{1} << 31)) {
    status_ = absl::InvalidArgumentError("the text is too large (2 GiB or more)");
    text_ = {};
  }
  toks_ = tokenize(text_);
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::string Parser::location_of(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const size_t line = static_cast<size_t>(it - line_starts_.begin());
  return absl::StrCat(line, ":", offset - line_starts_[line - 1] + 1);
}

void Parser::fail_at(size_t offset, const std::string& message) {
  if (status_.ok()) status_ = absl::InvalidArgumentError(absl::StrCat(location_of(offset), ": ", message));
}

void Parser::fail(const Token& at, const std::string& message) { fail_at(at.offset, message); }

void Parser::fail_expected(std::string_view what) {
  const Token& t = tok();
  if (t.kind == TokenKind::kInvalid && !t.value.empty()) {
    fail(t, t.value);
  } else {
    fail(t, absl::StrCat("expected ", sv(what), ", found ", describe(t)));
  }
}

bool Parser::accept_punct(std::string_view p) {
  if (!ok() || !at_punct(p)) return false;
  advance();
  return true;
}

bool Parser::accept_name(std::string_view n) {
  if (!ok() || !at_name(n)) return false;
  advance();
  return true;
}

bool Parser::expect_punct(std::string_view p) {
  if (!ok()) return false;
  if (accept_punct(p)) return true;
  fail_expected(absl::StrCat("'", sv(p), "'"));
  return false;
}

bool Parser::expect_name(std::string_view n) {
  if (!ok()) return false;
  if (accept_name(n)) return true;
  fail_expected(absl::StrCat("`", sv(n), "`"));
  return false;
}

std::optional<std::string> Parser::expect_identifier(std::string_view what) {
  if (!ok()) return std::nullopt;
  if (tok().kind != TokenKind::kName) {
    fail_expected(what);
    return std::nullopt;
  }
  std::string name(tok().text);
  advance();
  return name;
}

std::optional<std::string> Parser::expect_name_or_string(std::string_view what) {
  if (!ok()) return std::nullopt;
  if (tok().kind == TokenKind::kString) {
    std::string name = tok().value;
    advance();
    return name;
  }
  return expect_identifier(what);
}

Parser::DepthGuard::DepthGuard(Parser& p) : p_(p) {
  if (++p_.depth_ > kMaxNesting) {
    p_.fail(p_.tok(), absl::StrCat("nesting deeper than ", kMaxNesting,
                                   " levels of brackets and blocks (trees may nest ",
                                   kMaxNestingDepth, " levels deep)"));
  }
}

// ---------------------------------------------------------------------------
// Module.

namespace {

enum class ItemKind { kFunc, kPrimFunc };

struct PendingItem {
  ItemKind kind;
  std::string name;
  size_t body_pos = 0;
  FuncHeader func;
  PrimHeader prim;
  ItemState state;
};

}  // namespace

absl::StatusOr<IRModule> Parser::run() {
  if (!ok()) return status_;
  expect_name("module");
  if (accept_name("attrs")) {
    st_.lenient_syms = true;
    std::optional<Attrs> attrs = parse_attrs_body();
    if (attrs) module_.attrs() = std::move(*attrs);
  }
  expect_punct("{");
  std::vector<PendingItem> items;
  while (ok() && !at_punct("}")) {
    const bool is_func = at_name("func");
    const bool is_prim = at_name("prim_func");
    if (!is_func && !is_prim && !at_name("extern_func")) {
      fail_expected("`func`, `prim_func`, `extern_func` or '}'");
      break;
    }
    advance();
    expect_punct("@");
    const Token& name_tok = tok();
    std::optional<std::string> name = expect_name_or_string("a function name");
    if (!ok()) break;
    if (module_.contains(*name)) {
      fail(name_tok, "duplicate function @" + *name);
      break;
    }
    st_ = ItemState();
    if (!is_func && !is_prim) {
      std::string symbol = *name;
      if (accept_punct("=")) {
        if (tok().kind != TokenKind::kString) {
          fail_expected("a symbol name string");
          break;
        }
        symbol = tok().value;
        advance();
      }
      expect_punct(":");
      const Token& at = tok();
      begin_sym_region();
      StructInfo sinfo = parse_sinfo(true);
      end_sym_region();
      if (ok() && sinfo.kind() != StructInfoKind::kFunc) {
        fail(at, "an extern function needs a Func annotation, found " + sinfo.to_string());
      }
      if (ok() && detail::sinfo_depth(sinfo, kMaxNestingDepth) > kMaxNestingDepth) {
        fail(at, absl::StrCat("annotations nest deeper than ", kMaxNestingDepth,
                              " levels (the limit of every reader)"));
      }
      if (ok()) module_.add(*name, make_extern_func(symbol, sinfo));
      continue;
    }
    PendingItem item{is_func ? ItemKind::kFunc : ItemKind::kPrimFunc, *name, 0, {}, {}, {}};
    if (is_func) {
      std::optional<FuncHeader> header = parse_func_header();
      if (!header) break;
      item.func = std::move(*header);
      module_.add(*name, make_function(item.func.params, make_tuple({}), item.func.ret,
                                       item.func.pure, item.func.bounds, item.func.attrs));
    } else {
      std::optional<PrimHeader> header = parse_prim_header();
      if (!header) break;
      item.prim = std::move(*header);
      module_.add(*name, make_prim_func(item.prim.params, make_seq({}), item.prim.attrs));
    }
    // Skip the body; the second pass reads it.
    item.body_pos = pos_;
    const Token& open = tok();
    if (!expect_punct("{")) break;
    for (int depth = 1; depth > 0 && ok();) {
      if (tok().kind == TokenKind::kEnd) {
        fail_expected("'}' to close '{' at " + location_of(open.offset));
      } else if (tok().kind == TokenKind::kInvalid) {
        fail(tok(), tok().value.empty() ? "unexpected " + describe(tok()) : tok().value);
      } else if (at_punct("{")) {
        ++depth;
      } else if (at_punct("}")) {
        --depth;
      }
      advance();
    }
    item.state = std::move(st_);
    items.push_back(std::move(item));
  }
  expect_punct("}");
  if (ok() && tok().kind != TokenKind::kEnd) fail_expected("end of input");
  for (PendingItem& item : items) {
    if (!ok()) break;
    st_ = std::move(item.state);
    pos_ = item.body_pos;
    Expr func = item.kind == ItemKind::kFunc ? parse_func_body(std::move(item.func))
                                             : parse_prim_body(std::move(item.prim));
    // The tree's own depth, which the JSON reader bounds the same way; the
    // DepthGuard only bounds the parser's recursion.
    if (ok()) {
      if (std::optional<std::string> why = detail::nesting_violation(func)) {
        fail(toks_[item.body_pos],
             "the body of @" + item.name + ": " + *why + " (the limit of every reader)");
      }
    }
    if (ok()) module_.add(item.name, func);
  }
  if (!ok()) return status_;
  return std::move(module_);
}

// ---------------------------------------------------------------------------
// Scopes.

void Parser::push_seq_scope() {
  st_.var_scopes.emplace_back();
  st_.sym_frames.emplace_back();
}

void Parser::pop_seq_scope() {
  if (!st_.var_scopes.empty()) st_.var_scopes.pop_back();
  if (!st_.sym_frames.empty()) st_.sym_frames.pop_back();
}

bool Parser::define_var(const std::string& name, const Var& var, const Token& at, size_t scope_index) {
  if (!st_.var_names.insert(name).second) {
    fail(at, "duplicate definition of `" + name + "`");
    return false;
  }
  if (scope_index < st_.var_scopes.size()) st_.var_scopes[scope_index][name] = var;
  return true;
}

void Parser::note_defined_syms(const std::vector<StructInfo>& sinfos,
                               const std::function<bool(const SymVar&)>& outer_known) {
  if (!ok() || st_.sym_frames.empty()) return;
  for (const SymVar& v : defined_sym_vars(sinfos, outer_known)) st_.sym_frames.back().push_back(v);
  for (const SymVar& v : bare_dim_vars(sinfos)) st_.analyzer->bind(v, 0);
}

bool Parser::sym_in_scope(const SymVar& v) const {
  for (const auto& frame : st_.sym_frames) {
    for (const SymVar& d : frame) {
      if (d.same_as(v)) return true;
    }
  }
  return false;
}

Expr Parser::normalize_at(const Expr& e, const Token& at, std::string_view what) {
  if (!ok()) return Expr();
  DeduceContext ctx{*st_.analyzer, &module_, [this](const SymVar& v) { return sym_in_scope(v); }};
  absl::StatusOr<Expr> out = normalize(e, ctx);
  if (!out.ok()) {
    fail(at, absl::StrCat(sv(what), ": ", out.status().message()));
    return Expr();
  }
  return *std::move(out);
}

// ---------------------------------------------------------------------------
// Functions.

std::optional<FuncHeader> Parser::parse_func_header() {
  DepthGuard guard(*this);
  FuncHeader h;
  if (!expect_punct("(")) return std::nullopt;
  push_seq_scope();
  begin_sym_region();
  while (ok() && !at_punct(")")) {
    const Token& at = tok();
    std::optional<std::string> name = expect_identifier("a parameter name");
    expect_punct(":");
    StructInfo sinfo = parse_sinfo(true);
    if (!ok()) break;
    Var param(*name, sinfo);
    define_var(*name, param, at, st_.var_scopes.size() - 1);
    h.params.push_back(param);
    if (!accept_punct(",")) break;
  }
  std::vector<StructInfo> annotations;
  for (const Var& p : h.params) annotations.push_back(p.struct_info());
  end_sym_region(annotations);
  expect_punct(")");
  note_defined_syms(annotations, nullptr);
  expect_punct("->");
  h.ret = parse_sinfo(false);
  if (accept_name("impure")) h.pure = false;
  if (accept_name("upper_bounds")) {
    expect_punct("{");
    while (ok() && !at_punct("}")) {
      const Token& at = tok();
      std::optional<std::string> name = expect_identifier("a symbolic variable");
      if (!ok()) break;
      auto it = st_.syms.vars.find(*name);
      if (it == st_.syms.vars.end()) {
        fail(at, "unknown symbolic variable `" + *name + "`");
        break;
      }
      expect_punct(":");
      const Token& value_at = tok();
      std::optional<int64_t> upper = parse_int();
      if (!upper) break;
      if (*upper < 0) {
        fail(value_at, "an upper bound must be >= 0");
        break;
      }
      h.bounds.push_back({it->second, *upper});
      st_.analyzer->bind(it->second, 0, *upper);
      if (!accept_punct(",")) break;
    }
    expect_punct("}");
  }
  if (accept_name("attrs")) {
    std::optional<Attrs> attrs = parse_attrs_body();
    if (attrs) h.attrs = std::move(*attrs);
  }
  if (!ok()) return std::nullopt;
  return h;
}

Expr Parser::parse_func_body(FuncHeader h) {
  DepthGuard guard(*this);
  const Token& at = tok();
  if (!expect_punct("{")) return Expr();
  push_seq_scope();
  std::optional<std::vector<BindingBlock>> blocks = parse_seq_items();
  expect_name("return");
  const Token& result_at = tok();
  Expr result = normalize_at(parse_expr(), result_at, "the result");
  expect_punct("}");
  if (!ok()) return Expr();
  Expr body = finish_seq(std::move(*blocks), result, at);
  pop_seq_scope();  // the parameters
  if (!ok()) return Expr();
  if (check_base_of(h.ret, body.struct_info(), *st_.analyzer) == BaseCheck::kFail) {
    fail(result_at, "the function returns " + body.struct_info().to_string() +
                        ", which does not fit its return annotation " + h.ret.to_string());
    return Expr();
  }
  return make_function(std::move(h.params), body, h.ret, h.pure, std::move(h.bounds),
                       std::move(h.attrs));
}

Expr Parser::finish_seq(std::vector<BindingBlock> blocks, Expr result, const Token& at) {
  pop_seq_scope();
  if (!ok()) return Expr();
  return normalize_at(make_seq_expr(std::move(blocks), std::move(result)), at, "the block");
}

Expr Parser::parse_braced_seq() {
  DepthGuard guard(*this);
  const Token& at = tok();
  if (!expect_punct("{")) return Expr();
  push_seq_scope();
  std::optional<std::vector<BindingBlock>> blocks = parse_seq_items();
  const Token& result_at = tok();
  Expr result = normalize_at(parse_expr(), result_at, "the result");
  expect_punct("}");
  if (!ok()) return Expr();
  return finish_seq(std::move(*blocks), result, at);
}

std::optional<std::vector<BindingBlock>> Parser::parse_seq_items() {
  std::vector<BindingBlock> blocks;
  bool open_plain = false;
  while (ok()) {
    const bool dataflow = at_name("dataflow") && peek().text == "{";
    if (dataflow || (at_name("bindings") && peek().text == "{")) {
      advance();
      advance();
      BindingBlock block;
      block.is_dataflow = dataflow;
      if (dataflow) st_.var_scopes.emplace_back();
      while (ok() && !at_punct("}") && tok().kind != TokenKind::kEnd) {
        parse_binding(dataflow, block.bindings);
      }
      expect_punct("}");
      if (dataflow && !st_.var_scopes.empty()) st_.var_scopes.pop_back();
      blocks.push_back(std::move(block));
      open_plain = false;
      continue;
    }
    const bool binding = tok().kind == TokenKind::kName &&
                         ((peek().kind == TokenKind::kPunct && (peek().text == ":" || peek().text == "=")) ||
                          (at_name("output") && peek().kind == TokenKind::kName));
    if (!binding) break;
    if (!open_plain) blocks.push_back(BindingBlock{});
    open_plain = true;
    parse_binding(false, blocks.back().bindings);
  }
  if (!ok()) return std::nullopt;
  return blocks;
}

bool Parser::parse_binding(bool in_dataflow, std::vector<Binding>& out) {
  bool output = false;
  if (at_name("output") && peek().kind == TokenKind::kName) {
    if (!in_dataflow) {
      fail(tok(), "`output` marks a binding of a dataflow block, and this one is outside any");
      return false;
    }
    output = true;
    advance();
  }
  const Token& name_at = tok();
  std::optional<std::string> name = expect_identifier("a variable name");
  // The annotation is read after the value: a match_cast pattern may define its variables.
  size_t annotation = 0;
  if (accept_punct(":")) {
    annotation = pos_;
    for (int depth = 0; ok() && tok().kind != TokenKind::kEnd; advance()) {
      if (at_punct("(") || at_punct("[") || at_punct("{")) ++depth;
      if (at_punct(")") || at_punct("]") || at_punct("}")) {
        if (depth == 0) break;
        --depth;
      }
      if (depth == 0 && at_punct("=")) break;
    }
  }
  expect_punct("=");
  if (!ok()) return false;
  const Token& value_at = tok();
  const bool is_cast = at_name("match_cast") && peek().text == "(";
  Expr value;
  StructInfo pattern;
  if (is_cast) {
    advance();
    advance();
    value = parse_expr();
    expect_punct(",");
    begin_sym_region();
    pattern = parse_sinfo(true);
    end_sym_region({pattern}, [this](const SymVar& v) { return sym_in_scope(v); });
    expect_punct(")");
  } else {
    value = parse_expr();
  }
  value = normalize_at(value, value_at, "the value of `" + name.value_or("") + "`");
  if (!ok()) return false;
  if (is_cast) {
    if (check_base_of(pattern, value.struct_info(), *st_.analyzer) == BaseCheck::kFail) {
      fail(value_at, "match_cast: a value annotated " + value.struct_info().to_string() +
                         " can never match " + pattern.to_string());
      return false;
    }
    note_defined_syms({pattern}, [this](const SymVar& v) { return sym_in_scope(v); });
  }
  const StructInfo& actual = is_cast ? pattern : value.struct_info();
  StructInfo sinfo = actual;
  bool checked_annotation = false;
  if (annotation != 0) {
    const size_t resume = pos_;
    pos_ = annotation;
    sinfo = parse_sinfo(false);
    if (ok() && !at_punct("=")) fail_expected("'='");
    pos_ = resume;
    if (!ok()) return false;
    const BaseCheck fit = check_base_of(sinfo, actual, *st_.analyzer);
    if (fit == BaseCheck::kFail) {
      fail(name_at, "the annotation " + sinfo.to_string() + " of `" + *name +
                        "` does not fit its value, " + actual.to_string());
      return false;
    }
    // An annotation that deduction cannot prove (`Tensor[(n, 64)]` for a value
    // deduced `(n, floordiv(n * 64, n))`) is checked when the binding runs: it
    // becomes a match_cast of the value, which keeps the annotation through
    // every pass (a plain binding takes its value's deduced annotation as soon
    // as a pass rewrites the value) and which the VM checks.
    checked_annotation = fit == BaseCheck::kRuntimeCheck && !is_cast;
  }
  const bool dataflow_var = in_dataflow && !output;
  Var var = dataflow_var ? DataflowVar(*name, sinfo) : Var(*name, sinfo);
  const size_t scope = st_.var_scopes.size() - (in_dataflow ? 2 : 1) + (dataflow_var ? 1 : 0);
  if (!define_var(*name, var, name_at, scope)) return false;
  if (checked_annotation) {
    out.push_back(Binding{var, value, true, sinfo});
  } else {
    out.push_back(Binding{var, value, is_cast, is_cast ? pattern : StructInfo()});
  }
  return true;
}

}  // namespace text

absl::StatusOr<IRModule> parse_module(std::string_view text) { return text::Parser(text).run(); }

}  // namespace relax
