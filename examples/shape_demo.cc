// The shape algebra on a decoder-only language model.
//
// Symbolic batch `b`, sequence `n` and KV-cache length `m` with declared
// ranges; hidden size 4096 = 32 heads x 128. Each line shows an expression and
// what the Analyzer proves or derives about it. Every claim is also checked
// independently by evaluating at the corners and the middle of the declared
// ranges; a claim that fails prints a FAILED line and the demo exits with 1.
#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"

namespace {

using relax::Analyzer;
using relax::SymExpr;
using relax::SymVar;

/// The model's symbolic sizes, the Analyzer that knows their ranges, and a tally of claims.
class Demo {
 public:
  SymVar b{"b"}, n{"n"}, m{"m"};  ///< batch, new tokens, cached tokens
  SymVar h{"h"}, d{"d"};          ///< head index and index within a head

  Demo() {
    for (const Range& r : ranges_) analyzer.bind(r.var, r.lo, r.hi);
  }

  /// A section title.
  void section(const std::string& title) { std::cout << title << "\n"; }

  /// One line: the expression, then what was proven or derived.
  void row(const std::string& what, const std::string& verdict) {
    std::cout << "  " << std::left << std::setw(40) << what << "  " << verdict << "\n";
  }

  /// Claims that `cond` holds over the declared ranges.
  void prove(const SymExpr& cond, const std::string& note = "") {
    check(analyzer.prove(cond) && everywhere([&](const Env& env) { return eval(cond, env) == 1; }),
          cond.to_string(), note.empty() ? "proven" : "proven (" + note + ")");
  }

  /// Claims that `lhs` and `rhs` have the same value everywhere.
  void prove_equal(const SymExpr& lhs, const SymExpr& rhs, const std::string& note) {
    check(analyzer.prove_equal(lhs, rhs) &&
              everywhere([&](const Env& env) { return eval(lhs, env) == eval(rhs, env); }),
          lhs.to_string() + " == " + rhs.to_string(), "proven, " + note);
  }

  /// Claims that `e` simplifies to the canonical form of `expected`.
  void simplify(const SymExpr& e, const SymExpr& expected) {
    const SymExpr s = analyzer.simplify(e);
    check(structural_equal(s, analyzer.simplify(expected)) &&
              everywhere([&](const Env& env) { return eval(e, env) == eval(s, env); }),
          e.to_string(), "-> " + s.to_string());
  }

  /// Claims that [lo, hi] is the tightest interval holding every value of `e`.
  void bound(const SymExpr& e, int64_t lo, int64_t hi, const std::string& unit = "") {
    const auto upper = analyzer.upper_bound(e);
    const auto lower = analyzer.lower_bound(e);
    bool attained_lo = false, attained_hi = false;
    const bool inside = everywhere([&](const Env& env) {
      const int64_t v = eval(e, env);
      attained_lo |= v == lo;
      attained_hi |= v == hi;
      return lo <= v && v <= hi;
    });
    check(upper.ok() && lower.ok() && *upper == hi && *lower == lo && inside && attained_lo &&
              attained_hi,
          e.to_string(), "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]" + unit);
  }

  /// Prints the tally; true when every claim held.
  bool summary() {
    std::cout << (failures_ == 0 ? "all " + std::to_string(claims_) + " claims hold"
                                 : std::to_string(failures_) + " of " + std::to_string(claims_) +
                                       " claims FAILED")
              << "\n";
    return failures_ == 0;
  }

  /// Records a claim that holds (`ok`) or prints it as FAILED.
  void check(bool ok, const std::string& what, const std::string& verdict) {
    ++claims_;
    if (!ok) ++failures_;
    row(what, ok ? verdict : "FAILED, claimed: " + verdict);
  }

  Analyzer analyzer;

 private:
  using Env = relax::SymVarMap<int64_t>;
  struct Range {
    SymVar var;
    int64_t lo, hi;
  };

  /// The value of `e` at `env`, or -1 when it does not evaluate (none of the claims divides by 0).
  static int64_t eval(const SymExpr& e, const Env& env) {
    const auto v = relax::evaluate(e, env);
    return v.ok() ? *v : -1;
  }

  /// True when `test` holds at every point of {lo, middle, hi} for each variable.
  bool everywhere(const std::function<bool(const Env&)>& test) {
    std::vector<Env> points(1);
    for (const Range& r : ranges_) {
      std::vector<Env> next;
      for (const Env& p : points) {
        for (int64_t v : {r.lo, (r.lo + r.hi) / 2 + 1, r.hi}) {
          Env q = p;
          q[r.var] = v;
          next.push_back(std::move(q));
        }
      }
      points = std::move(next);
    }
    bool ok = true;
    for (const Env& p : points) ok = test(p) && ok;  // visit every point (bound() tallies them)
    return ok;
  }

  const std::vector<Range> ranges_ = {
      {b, 1, 64}, {n, 1, 4096}, {m, 0, 4096}, {h, 0, 31}, {d, 0, 127}};
  int claims_ = 0;
  int failures_ = 0;
};

}  // namespace

int main() {
  Demo demo;
  const SymVar &b = demo.b, &n = demo.n, &m = demo.m, &h = demo.h, &d = demo.d;
  std::cout << "relax shape algebra: a decoder-only LM, hidden 4096 = 32 heads x 128\n"
            << "declared ranges: b in [1, 64], n in [1, 4096], m in [0, 4096]\n\n";

  demo.section("reshape (b, n, 4096) -> (b, n, 32, 128)");
  demo.prove_equal(b * n * 32 * 128, b * (n * 4096),
                   "both are " + demo.analyzer.simplify(b * (n * 4096)).to_string());

  demo.section("attention scores (b, 32, n, n + m): queries against new and cached keys");
  demo.simplify(b * 32 * n * (n + m), b * n * n * 32 + b * n * m * 32);
  demo.prove(n <= n + m, "every query has its keys");

  demo.section("padding n up to a multiple of 16");
  const SymExpr padded = floordiv(n + 15, 16) * 16;
  demo.prove(padded >= n);
  demo.prove(padded < n + 16);
  demo.bound(padded - n, 0, 15, " padding rows");

  demo.section("index and size expressions (h: head in [0, 31], d: lane in [0, 127])");
  demo.simplify(floordiv(h * 128 + d, 128), h);
  demo.simplify(floormod(h * 128 + d, 128), d);
  demo.simplify(floordiv(h * 128 + d, 64), h * 2 + floordiv(d, 64));
  demo.simplify(floormod(b * n * 4096, 128), 0);
  demo.simplify(floordiv(b * n * 4096, n * 32), b * 128);
  demo.simplify(min(n + m, 8192), n + m);

  demo.section("KV cache of one layer's keys, fp16: b * 32 * (n + m) * 128 * 2 bytes");
  const SymExpr kv_bytes = b * 32 * (n + m) * 128 * 2;
  demo.bound(kv_bytes, 8192, int64_t{4} << 30, " bytes (4 GiB at most)");
  SymVar p("p");  // a prompt length nobody declared a range for
  const auto unbounded = demo.analyzer.upper_bound(b * 32 * (p + m) * 128 * 2);
  demo.check(!unbounded.ok(), "same with p (no declared range)", "no upper bound, as expected:");
  std::cout << "    " << unbounded.status().message() << "\n";

  demo.section("at b = 8, n = 512, m = 1024");
  const relax::SymVarMap<int64_t> at = {{b, 8}, {n, 512}, {m, 1024}};
  const auto bytes = relax::evaluate(kv_bytes, at);
  std::string shape;
  for (const SymExpr& dim : {SymExpr(b), SymExpr(32), SymExpr(n), n + m}) {
    const auto v = relax::evaluate(dim, at);
    shape += (shape.empty() ? "(" : ", ") + (v.ok() ? std::to_string(*v) : "?");
  }
  shape += ")";
  demo.check(shape == "(8, 32, 512, 1536)", "scores shape (b, 32, n, n + m)", shape);
  demo.check(bytes.ok() && *bytes == int64_t{8} * 32 * 1536 * 128 * 2, "KV cache bytes",
             (bytes.ok() ? std::to_string(*bytes) : "?") + " (96 MiB)");

  demo.section("text form");
  absl::flat_hash_map<std::string, SymVar> names = {{"b", b}, {"n", n}, {"m", m}};
  const std::string text = "b * 32 * (n + m) * 128 * 2";
  const auto parsed = SymExpr::parse(text, &names);
  demo.check(parsed.ok() && demo.analyzer.prove_equal(*parsed, kv_bytes), "\"" + text + "\"",
             "parsed; equal to the built KV size: proven");
  const auto broken = SymExpr::parse("b * (n + ", &names);
  demo.check(!broken.ok(), "\"b * (n + \"", "rejected: " + std::string(broken.status().message()));

  std::cout << "\n";
  return demo.summary() ? 0 : 1;
}
