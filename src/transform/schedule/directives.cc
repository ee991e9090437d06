// The text of schedule directives and their application (relax/transform/schedule.h).
//
//   directives := directive (';' directive)* [';']
//   directive  := ['@'] kernel '.' primitive '(' arg (',' arg)* ')'
// with spaces allowed between tokens. split and rfactor take a loop and a
// factor, fuse and fuse_siblings two loops, reorder one or more, the others
// one loop each.
#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "relax/transform/schedule.h"
#include "transform/schedule/loop_tree.h"

namespace relax::transform::schedule {
namespace {

class DirectiveParser {
 public:
  explicit DirectiveParser(std::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<Directive>> parse() {
    std::vector<Directive> out;
    skip_space();
    while (pos_ < text_.size()) {
      absl::StatusOr<Directive> d = directive();
      if (!d.ok()) return d.status();
      out.push_back(*std::move(d));
      skip_space();
      if (pos_ == text_.size()) break;
      if (text_[pos_] != ';') return error("expected `;` between directives");
      ++pos_;
      skip_space();
    }
    if (out.empty()) return error("no directive");
    return out;
  }

 private:
  absl::StatusOr<Directive> directive() {
    Directive d;
    if (pos_ < text_.size() && text_[pos_] == '@') ++pos_;
    d.kernel = word();
    if (d.kernel.empty()) return error("expected a kernel name");
    if (pos_ >= text_.size() || text_[pos_] != '.') return error("expected `.` after the kernel name");
    ++pos_;
    const size_t primitive_at = pos_;
    d.primitive = word();
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] != '(') return error("expected `(`");
    ++pos_;
    std::vector<std::string> args;
    while (true) {
      skip_space();
      std::string arg = word();
      if (arg.empty()) return error("expected a loop name or a number");
      args.push_back(std::move(arg));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ')') {
        ++pos_;
        break;
      }
      return error("expected `,` or `)`");
    }
    const std::string& p = d.primitive;
    auto arity = [&](size_t n) -> absl::Status {
      if (args.size() == n) return absl::OkStatus();
      return error_at(primitive_at, absl::StrCat("`", p, "` takes ", n, n == 1 ? " argument" : " arguments", ", got ",
                                                 args.size()));
    };
    absl::Status s;
    if (p == "split" || p == "rfactor") {
      s = arity(2);
      if (s.ok() && (!absl::SimpleAtoi(args[1], &d.factor) || d.factor < 1)) {
        s = error_at(primitive_at, absl::StrCat("the factor of `", p, "` must be an integer >= 1, got `", args[1], "`"));
      }
      args.resize(1);
    } else if (p == "fuse" || p == "fuse_siblings") {
      s = arity(2);
    } else if (p == "reorder") {
      s = absl::OkStatus();
    } else if (p == "parallel" || p == "vectorize" || p == "unroll" || p == "cache_local") {
      s = arity(1);
    } else {
      s = error_at(primitive_at, absl::StrCat("unknown primitive `", p,
                                              "`; known: split, reorder, fuse, parallel, vectorize, unroll, cache_local, "
                                              "rfactor, fuse_siblings"));
    }
    if (!s.ok()) return s;
    d.loops = std::move(args);
    return d;
  }

  std::string word() {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                   text_[pos_] == '#')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  absl::Status error(const std::string& message) const { return error_at(pos_, message); }
  absl::Status error_at(size_t pos, const std::string& message) const {
    return absl::InvalidArgumentError(absl::StrCat("schedule directives:", pos + 1, ": ", message));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<Directive>> parse_directives(std::string_view text) {
  return DirectiveParser(text).parse();
}

absl::StatusOr<Expr> apply(const Expr& func, const Directive& d) {
  const std::string& p = d.primitive;
  if (p == "split" && d.loops.size() == 1) return split(func, d.loops[0], d.factor);
  if (p == "fuse" && d.loops.size() == 2) return fuse(func, d.loops[0], d.loops[1]);
  if (p == "rfactor" && d.loops.size() == 1) return rfactor(func, d.loops[0], d.factor);
  if (p == "fuse_siblings" && d.loops.size() == 2) return fuse_siblings(func, d.loops[0], d.loops[1]);
  if (p == "reorder") return reorder(func, d.loops);
  if (d.loops.size() == 1) {
    if (p == "parallel") return parallel(func, d.loops[0]);
    if (p == "vectorize") return vectorize(func, d.loops[0]);
    if (p == "unroll") return unroll(func, d.loops[0]);
    if (p == "cache_local") return cache_local(func, d.loops[0]);
  }
  return absl::InvalidArgumentError(absl::StrCat(kernel_label(func), ": cannot apply `", p, "` to ",
                                                 d.loops.size(), " loops"));
}

}  // namespace relax::transform::schedule
