// The parser of the IR text format: annotations and scalar expressions
// (parser_attr.cc reads attributes and constants).
//
// Scalar expressions. The parser finds where one ends (printer.h: at a ',',
// ')', ']', '}', '{', ':' or '=' outside its own brackets, or at the end of its
// line) and hands that stretch of text to SymExpr::parse with the item's
// ParseContext, translating the offsets of its errors into line:column of the
// whole text. Names resolve to the item's symbolic variables and buffers.
//
// Definitions. A lone name in a defining position (a whole dim or Prim value of
// a parameter annotation, a match_cast pattern, a Func annotation's
// parameters) defines a variable unless one of that name exists; the printer
// makes names unique per item, so a name always means one variable. Elsewhere
// a name must already be defined, except inside a parameter list, where a use
// may come before the defining dim: SymExpr::parse then creates the variable,
// it is kept as pending, and the end of the list reports it unless a defining
// dim came along or the definition rule of struct_info.h solves a dim of the
// list for it (`x: Tensor[(n * 2,)]`). A pending name that a nested list (a
// Func annotation among parameters) leaves undefined is judged again at the
// end of the enclosing list.
#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ir/text/parser_impl.h"
#include "ir/text/text_format.h"

namespace relax::text {
namespace {

// Offsets a SymExpr::parse message gives ("column C" / "line L, column C")
// turned into offsets into the whole text.
class LocationTranslator {
 public:
  LocationTranslator(const Parser& p, std::string_view piece, size_t base)
      : p_(p), piece_(piece), base_(base) {}

  // The offset in the whole text of line L (1-based, of the piece), column C.
  size_t offset(size_t line, size_t column) const {
    size_t start = 0;
    for (size_t l = 1; l < line && start < piece_.size(); ++l) {
      const size_t nl = piece_.find('\n', start);
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
    return base_ + std::min(start + (column > 0 ? column - 1 : 0), piece_.size());
  }

  // Replaces each "line L, column C" and "column C" in `message` by "L:C" of the whole
  // text; the first one found also gives `*first` (the error's own position).
  std::string translate(std::string_view message, size_t* first) const {
    std::string out;
    bool found = false;
    size_t i = 0;
    while (i < message.size()) {
      size_t line = 1;
      size_t j = i;
      if (message.compare(i, 5, "line ") == 0 && read_number(message, i + 5, &line, &j) &&
          message.compare(j, 9, ", column ") == 0) {
        j += 9;
      } else if (message.compare(i, 7, "column ") == 0) {
        j = i + 7;
        line = 1;
      } else {
        out += message[i++];
        continue;
      }
      size_t column = 0;
      size_t end = 0;
      if (!read_number(message, j, &column, &end)) {
        out += message[i++];
        continue;
      }
      const size_t off = offset(line, column);
      if (!found) *first = off;
      found = true;
      out += p_.location_of(off);
      i = end;
    }
    return out;
  }

 private:
  static bool read_number(std::string_view s, size_t at, size_t* value, size_t* end) {
    size_t v = 0;
    size_t k = at;
    while (k < s.size() && s[k] >= '0' && s[k] <= '9' && k - at < 12) v = v * 10 + (s[k++] - '0');
    if (k == at) return false;
    *value = v;
    *end = k;
    return true;
  }

  const Parser& p_;
  std::string_view piece_;
  size_t base_;
};

}  // namespace

void Parser::end_sym_region(const std::vector<StructInfo>& annotations,
                            const std::function<bool(const SymVar&)>& outer_known) {
  if (regions_.empty()) return;
  std::vector<std::pair<std::string, size_t>> pending = std::move(regions_.back());
  regions_.pop_back();
  if (pending.empty()) return;
  absl::flat_hash_set<uint64_t> solved;
  if (ok() && !annotations.empty()) {
    for (const SymVar& v : defined_sym_vars(annotations, outer_known)) solved.insert(v.id());
  }
  for (auto& use : pending) {
    const std::string& name = use.first;
    auto it = st_.syms.vars.find(name);
    if (it != st_.syms.vars.end() && solved.contains(it->second.id())) continue;
    if (regions_.empty()) {
      fail_at(use.second, "unknown symbolic variable `" + name +
                              "` (no whole dim defines it and no dim can be solved for it)");
      continue;
    }
    auto& outer = regions_.back();
    const bool known = std::any_of(outer.begin(), outer.end(), [&](const auto& p) { return p.first == name; });
    if (!known) outer.push_back(std::move(use));
  }
}

SymVar Parser::define_sym(const std::string& name, DataType dtype, const Token& at) {
  if (name.empty()) {
    fail(at, "a symbolic variable needs a name");
    return SymVar("invalid");
  }
  auto it = st_.syms.vars.find(name);
  if (it != st_.syms.vars.end()) {
    for (auto& region : regions_) std::erase_if(region, [&](const auto& p) { return p.first == name; });
    if (it->second.dtype() != dtype) {
      fail(at, absl::StrCat("`", name, "` is of dtype ", it->second.dtype().to_string(), ", not ",
                            dtype.to_string()));
    }
    return it->second;
  }
  SymVar var(name, dtype);
  st_.syms.vars.emplace(name, var);
  return var;
}

SymExpr Parser::parse_sym(bool defining, DataType bare_dtype) {
  if (!ok()) return SymExpr();
  const size_t start = pos_;
  size_t end = start;
  for (int depth = 0; end < toks_.size(); ++end) {
    const Token& t = toks_[end];
    if (t.kind == TokenKind::kEnd) break;
    if (t.kind == TokenKind::kInvalid && t.text.substr(0, 2) == "/*") break;  // reported by the caller
    if (end > start && depth == 0 && t.line != toks_[end - 1].line) break;
    if (t.kind != TokenKind::kPunct) continue;
    if (t.text == "(" || t.text == "[") {
      ++depth;
    } else if (t.text == ")" || t.text == "]") {
      if (depth == 0) break;
      --depth;
    } else if (t.text == "{" || t.text == "}") {
      break;
    } else if (depth == 0 && (t.text == "," || t.text == "=" || t.text == ":")) {
      break;
    }
  }
  if (end == start) {
    fail_expected("an expression");
    return SymExpr();
  }
  const Token& first = toks_[start];
  if (defining && end == start + 1 && is_scalar_dtype(bare_dtype)) {
    std::optional<std::string> name;
    if (first.kind == TokenKind::kString) name = first.value;
    if (first.kind == TokenKind::kName && SymVar(std::string(first.text)).to_string() == first.text) {
      name = std::string(first.text);
    }
    if (name) {
      pos_ = end;
      return define_sym(*name, bare_dtype, first);
    }
  }
  // Names that are not variables yet: if SymExpr::parse adds one, it was undefined.
  std::vector<size_t> fresh;
  for (size_t i = start; i < end; ++i) {
    const Token& t = toks_[i];
    if (t.kind == TokenKind::kName && !st_.syms.vars.contains(std::string(t.text))) fresh.push_back(i);
    if (t.kind == TokenKind::kString && !st_.syms.vars.contains(t.value)) fresh.push_back(i);
  }
  const size_t base = first.offset;
  // The stretch as written, with the comments between its tokens blanked (same length, its
  // line breaks kept, so positions in SymExpr::parse's messages still map to the text).
  std::string piece(text_.substr(base, toks_[end - 1].end - base));
  for (size_t i = start; i + 1 < end; ++i) {
    for (size_t b = toks_[i].end; b < toks_[i + 1].offset; ++b) {
      if (piece[b - base] != '\n') piece[b - base] = ' ';
    }
  }
  absl::StatusOr<SymExpr> parsed = SymExpr::parse(piece, st_.syms);
  if (!parsed.ok()) {
    size_t at = base;
    const std::string raw(parsed.status().message());
    const std::string message = LocationTranslator(*this, piece, base).translate(raw, &at);
    // The message starts with the translated location; keep just the text after it.
    const size_t colon = message.find(": ");
    fail_at(at, colon == std::string::npos ? message : message.substr(colon + 2));
    return SymExpr();
  }
  for (size_t i : fresh) {
    const Token& t = toks_[i];
    const std::string name = t.kind == TokenKind::kString ? t.value : std::string(t.text);
    if (!st_.syms.vars.contains(name) || st_.lenient_syms) continue;
    if (!regions_.empty()) {
      bool known = false;
      for (const auto& region : regions_) {
        for (const auto& p : region) known = known || p.first == name;
      }
      if (!known) regions_.back().emplace_back(name, t.offset);
    } else {
      st_.syms.vars.erase(name);
      fail(t, "unknown symbolic variable `" + name + "`");
      return SymExpr();
    }
  }
  if ((*parsed)->depth() > static_cast<uint32_t>(kMaxNestingDepth)) {
    fail(first, absl::StrCat("a scalar expression nests ", (*parsed)->depth(),
                             " levels deep, deeper than ", kMaxNestingDepth,
                             " (the limit of every reader)"));
    return SymExpr();
  }
  pos_ = end;
  return *std::move(parsed);
}

std::optional<std::vector<SymExpr>> Parser::parse_dims(bool defining) {
  if (!expect_punct("(")) return std::nullopt;
  std::vector<SymExpr> dims;
  while (ok() && !at_punct(")")) {
    const Token& at = tok();
    SymExpr d = parse_sym(defining);
    if (ok() && d.dtype() != DataType::int64()) {
      fail(at, "a dim must be an int64 expression, found `" + d.to_string() + "` of dtype " +
                   d.dtype().to_string());
    }
    dims.push_back(d);
    if (!accept_punct(",")) break;
  }
  expect_punct(")");
  if (!ok()) return std::nullopt;
  return dims;
}

std::optional<DataType> Parser::parse_dtype_token() {
  if (!ok()) return std::nullopt;
  std::optional<DataType> t;
  if (tok().kind == TokenKind::kName) t = parse_dtype(tok().text);
  if (!t) {
    fail_expected("a dtype");
    return std::nullopt;
  }
  if (!is_scalar_dtype(*t)) {
    fail(tok(), unsupported_dtype_message(*t));
    return std::nullopt;
  }
  advance();
  return t;
}

std::optional<int64_t> Parser::parse_int() {
  if (!ok()) return std::nullopt;
  const bool negative = accept_punct("-");
  std::optional<uint64_t> magnitude;
  if (tok().kind == TokenKind::kNumber) magnitude = read_u64(tok().text);
  const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX};
  if (!magnitude || *magnitude > limit) {
    fail_expected(magnitude ? "an integer in the int64 range" : "an integer");
    return std::nullopt;
  }
  advance();
  return static_cast<int64_t>(negative ? ~*magnitude + 1 : *magnitude);
}

// ---------------------------------------------------------------------------
// Annotations.

StructInfo Parser::parse_sinfo(bool defining) {
  DepthGuard guard(*this);
  if (!ok()) return StructInfo();
  const char* kWhat = "an annotation (Object, Prim, Shape, Tensor, Tuple or Func)";
  if (accept_name("Object")) return object_sinfo();
  if (accept_name("Prim")) {
    expect_punct("[");
    std::optional<DataType> dtype = parse_dtype_token();
    SymExpr value;
    if (ok() && accept_punct(",")) {
      const Token& at = tok();
      if (!is_scalar_dtype(*dtype)) {
        fail(at, "a Prim of dtype " + dtype->to_string() + " cannot have a value");
        return StructInfo();
      }
      value = parse_sym(defining, *dtype);
      if (ok() && value.dtype() != *dtype) {
        fail(at, "the value of Prim[" + dtype->to_string() + "] is `" + value.to_string() +
                     "` of dtype " + value.dtype().to_string());
      }
    }
    expect_punct("]");
    return ok() ? prim_sinfo(*dtype, value) : StructInfo();
  }
  if (accept_name("Shape")) {
    expect_punct("[");
    if (accept_punct("]")) return shape_sinfo_rank(kUnknownNDim);
    if (accept_name("ndim")) {
      expect_punct("=");
      const Token& at = tok();
      std::optional<int64_t> ndim = parse_int();
      if (ok() && (*ndim < 0 || *ndim > INT32_MAX)) fail(at, "a rank must be in [0, 2^31)");
      expect_punct("]");
      return ok() ? shape_sinfo_rank(static_cast<int>(*ndim)) : StructInfo();
    }
    std::optional<std::vector<SymExpr>> dims = parse_dims(defining);
    expect_punct("]");
    return ok() ? shape_sinfo(std::move(*dims)) : StructInfo();
  }
  if (accept_name("Tensor")) {
    expect_punct("[");
    std::optional<std::vector<SymExpr>> dims;
    int ndim = kUnknownNDim;
    if (accept_name("ndim")) {
      expect_punct("=");
      if (!accept_punct("?")) {
        const Token& at = tok();
        std::optional<int64_t> n = parse_int();
        if (ok() && (*n < 0 || *n > INT32_MAX)) fail(at, "a rank must be in [0, 2^31)");
        if (ok()) ndim = static_cast<int>(*n);
      }
    } else {
      dims = parse_dims(defining);
    }
    expect_punct(",");
    std::optional<DataType> dtype;
    if (!accept_punct("?")) dtype = parse_dtype_token();
    Device device;
    if (ok() && accept_punct(",")) {
      const Token& at = tok();
      if (accept_name("cpu")) {
        device = Device::cpu();
      } else if (accept_name("cuda")) {
        device = Device::cuda();
      } else {
        fail_expected("a device (cpu, cpu:N or cuda:N)");
      }
      if (ok() && accept_punct(":")) {
        std::optional<int64_t> index = parse_int();
        if (ok() && (*index < 0 || *index > INT32_MAX)) fail(at, "a device index must be in [0, 2^31)");
        if (ok()) device.index = static_cast<int32_t>(*index);
      }
    }
    expect_punct("]");
    if (!ok()) return StructInfo();
    return dims ? tensor_sinfo(std::move(*dims), dtype, device) : tensor_sinfo_rank(ndim, dtype, device);
  }
  if (accept_name("Tuple")) {
    expect_punct("[");
    expect_punct("(");
    std::vector<StructInfo> fields;
    while (ok() && !at_punct(")")) {
      fields.push_back(parse_sinfo(defining));
      if (!accept_punct(",")) break;
    }
    expect_punct(")");
    expect_punct("]");
    return ok() ? tuple_sinfo(std::move(fields)) : StructInfo();
  }
  if (accept_name("Func")) {
    expect_punct("[");
    std::optional<std::vector<StructInfo>> params;
    begin_sym_region();
    if (!accept_name("opaque") && expect_punct("(")) {
      params.emplace();
      while (ok() && !at_punct(")")) {
        params->push_back(parse_sinfo(true));
        if (!accept_punct(",")) break;
      }
      expect_punct(")");
    }
    // A Func annotation's parameters define their variables as a function's do.
    end_sym_region(params.value_or(std::vector<StructInfo>{}));
    expect_punct("->");
    StructInfo ret = parse_sinfo(false);
    bool pure = true;
    if (ok() && accept_punct(",")) {
      expect_name("impure");
      pure = false;
    }
    expect_punct("]");
    if (!ok()) return StructInfo();
    return params ? func_sinfo(std::move(*params), ret, pure) : opaque_func_sinfo(ret, pure);
  }
  fail_expected(kWhat);
  return StructInfo();
}

}  // namespace relax::text
