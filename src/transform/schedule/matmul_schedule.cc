// The default CPU schedule of a matmul nest (matmul_schedule.h).
//
// A matmul out[i, j] = init + sum_k lhs(i, k) * rhs(k, j) over m rows (often
// symbolic: 1 when decoding, hundreds in a prefill), n columns and depth k
// becomes three kinds of nest, so that neither full tiles nor single rows pay
// for the other (no row guard inside a vector loop):
//
//   1. Register tiles: floor(m / mr) tiles of mr = 8 rows, then one of 4 rows
//      if 4 are left (each nest skipped at run time when it has no tile; 8
//      rows: 0.86-0.93x oneDNN at M = 512 against 0.64x with 4, measured):
//        for jo in range(ceildiv(n, nr)) parallel {         // column panels
//          alloc panel[k, nr] {                            // the weights of the panel,
//            for kp, jp: panel[kp, jp] = rhs(kp, jo*nr+jp)  //   evaluated once (0 past n)
//            for io in range(floordiv(m, mr)) {
//              alloc acc[mr, nr] local {
//                for ii unrolled, ji vectorized: acc[ii, ji] = init
//                for kk { for ii unrolled { for ji vectorized {
//                  acc[ii, ji] = acc[ii, ji] + lhs(io*mr+ii, kk) * panel[kk, ji] } } }
//                for ii unrolled, ji vectorized: out[io*mr+ii, jo*nr+ji] = acc[ii, ji]  (ji < n)
//      The panel is contiguous, so the inner loop reads nr consecutive
//      elements per step whatever n is (row-major weights read in place at a
//      stride of n elements map every row of the panel to the same cache set
//      when n is a power of two, and thrash); it is where a fused
//      dequantisation (int4/int8 bytes and scales) or a W[n, k] transpose is
//      evaluated, once per panel rather than once per row tile. g++ keeps
//      acc[mr, nr] in mr * nr / lanes vector registers across the kk loop.
//   2. The m mod 4 remaining rows, one at a time (all of them when m < 4:
//      the one-row matmul of decoding), as a weight-streaming kernel that
//      reads each weight once per row, parallel over column blocks:
//      - weights varying fastest with j (W[k, j], packed int4 bytes q[k/2, j]
//        with scales s[k/32, j]): blocks of stream_cols columns, each a
//        contiguous run of a row of W per step of k, accumulated in a local
//        row acc[stream_cols] (L1) by a vectorized loop over j;
//      - weights varying fastest with k (W[n, k], as linear reads them):
//        blocks of dot_rows rows of W, each dotted with the row of lhs by a
//        vectorized loop over `lanes` consecutive k into lane-split
//        accumulators acc[dot_rows, lanes], the k tail added to lane 0, and a
//        final horizontal sum.
//
// Every element is computed by the same terms as the plain nest: the tiles
// and the column-streaming kernel add in the order of k (bit-identical up to
// the compiler's contraction into FMAs); the lane-split dot product
// reassociates the sum over k (a float reduction's usual tolerance).
// Not done: k-blocking of the panel (the panel is k * nr elements: 256 KiB
// for k = 2048, held in L2), batched matmuls, and weights prepacked at load.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr_search.h"
#include "transform/schedule/matmul_schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

class MatmulBuilder {
 public:
  MatmulBuilder(const MatmulNest& nest, const MatmulTiles& tiles)
      : nest_(nest), tiles_(tiles), index_(nest.vi.dtype()), acc_dtype_(nest.out.dtype()) {
    // Extents are sizes: >= 0 (so that m - floordiv(m, 4) * 4 becomes floormod(m, 4)).
    for (const SymExpr& e : {nest.rows, nest.cols, nest.depth}) {
      if (e.is_var()) analyzer_.bind(SymVar::from_expr(e), 0);
    }
  }

  /// The two nests (either may be left out when the row count is a constant
  /// that needs none of it).
  Stmt build() {
    std::vector<Stmt> parts;
    // Tiles of mr rows, then (when the rest still has that many) of mr / 2,
    // then single rows: at most mr / 2 - 1 rows read the weights again.
    SymExpr first = c(0);
    std::vector<int64_t> heights{tiles_.rows};
    if (tiles_.rows >= 4 && tiles_.rows % 2 == 0) heights.push_back(tiles_.rows / 2);
    for (int64_t mr : heights) {
      const SymExpr count = fold(floordiv(nest_.rows - first, c(mr)));
      const std::optional<int64_t> known = count.as_const();
      if (!known || *known > 0) {
        Stmt tiles = tile_nest(mr, first, count);
        if (!known) tiles = make_if_then_else(count >= c(1), tiles);
        parts.push_back(tiles);
      }
      first = fold(first + count * c(mr));
    }
    const SymExpr rest = fold(nest_.rows - first);
    if (!rest.is_const(0)) parts.push_back(row_nest(first, rest));
    return parts.size() == 1 ? parts[0] : make_seq(std::move(parts));
  }

 private:
  SymExpr c(int64_t v) const { return SymExpr::int_imm(v, index_); }
  SymVar var(const std::string& name) const { return SymVar(name, index_); }
  SymExpr zero() const { return SymExpr::float_imm(0.0, acc_dtype_); }
  std::string name(const std::string& suffix) const { return nest_.out.name() + suffix; }

  SymExpr at(const SymExpr& e, const SymExpr& i, const SymExpr& j, const SymExpr& k) const {
    SymVarMap<SymExpr> map;
    if (i.defined()) map.emplace(nest_.vi, i);
    if (j.defined()) map.emplace(nest_.vj, j);
    if (k.defined()) map.emplace(nest_.vk, k);
    return substitute(e, map);
  }
  SymExpr lhs(const SymExpr& i, const SymExpr& k) const { return at(nest_.lhs, i, SymExpr(), k); }
  SymExpr rhs(const SymExpr& k, const SymExpr& j) const { return at(nest_.rhs, SymExpr(), j, k); }
  SymExpr init(const SymExpr& i, const SymExpr& j) const { return at(nest_.init, i, j, SymExpr()); }

  /// The k loop as a nest whose variables index the weights affinely. A
  /// weight expression that reads packed or grouped data divides k
  /// (q[floordiv(k, 2), j], s[floordiv(k, 32), j]); g++ vectorises no inner
  /// loop whose addresses move non-affinely with an enclosing loop ("evolution
  /// of base is not affine", measured: the int4 row kernel stayed scalar). When
  /// the divisors form a chain d1 | d2 | ... | K, k runs as loops of extents
  /// K / dn, dn / dn-1, ..., d1 and k = v_n * dn + ... + v_1 * d1 + v_0, whose
  /// floordiv and floormod the Analyzer, told the loops' ranges, makes affine.
  struct KLoops {
    std::vector<SymVar> vars;      ///< outermost first
    std::vector<int64_t> extents;
    SymExpr k;                     ///< k in terms of vars
  };
  KLoops k_loops(const std::string& stem) const {
    KLoops out;
    std::vector<int64_t> divisors;
    any_subexpr(nest_.rhs, [&](const SymExpr& e) {
      if ((e.kind() == SymKind::kFloorDiv || e.kind() == SymKind::kFloorMod) && mentions_var(e.operand(0), nest_.vk)) {
        if (std::optional<int64_t> d = e.operand(1).as_const(); d && *d > 1) divisors.push_back(*d);
      }
      return false;
    });
    std::sort(divisors.begin(), divisors.end());
    divisors.erase(std::unique(divisors.begin(), divisors.end()), divisors.end());
    const std::optional<int64_t> depth = nest_.depth.as_const();
    bool chain = depth.has_value() && !divisors.empty() && *depth % divisors.back() == 0;
    for (size_t i = 1; chain && i < divisors.size(); ++i) chain = divisors[i] % divisors[i - 1] == 0;
    if (!chain) {
      out.vars.push_back(var(stem));
      out.extents.push_back(-1);  // the depth itself
      out.k = out.vars[0];
      return out;
    }
    // Outermost first: K / dn, dn / dn-1, ..., d1.
    std::vector<int64_t> strides;
    int64_t above = *depth;
    for (size_t i = divisors.size(); i-- > 0;) {
      out.extents.push_back(above / divisors[i]);
      strides.push_back(divisors[i]);
      above = divisors[i];
    }
    out.extents.push_back(above);
    strides.push_back(1);
    for (size_t i = 0; i < out.extents.size(); ++i) {
      out.vars.push_back(var(absl::StrCat(stem, i)));
      analyzer_.bind(out.vars.back(), 0, out.extents[i] - 1);
      const SymExpr term = strides[i] == 1 ? SymExpr(out.vars[i]) : SymExpr(out.vars[i]) * c(strides[i]);
      out.k = out.k.defined() ? out.k + term : term;
    }
    return out;
  }
  /// `body` under the loops of `ks` (the innermost unrolled when it is short).
  Stmt over_k(const KLoops& ks, const Stmt& body) const {
    Stmt out = body;
    for (size_t i = ks.vars.size(); i-- > 0;) {
      const bool innermost = i + 1 == ks.vars.size();
      const SymExpr extent = ks.extents[i] < 0 ? nest_.depth : c(ks.extents[i]);
      const ForKind kind = innermost && ks.vars.size() > 1 && ks.extents[i] <= 8 ? ForKind::kUnrolled : ForKind::kSerial;
      out = loop(ks.vars[i], extent, kind, out);
    }
    return out;
  }

  /// Whether the column count is provably a multiple of `f`.
  bool cols_multiple_of(int64_t f) const {
    const std::optional<int64_t> n = nest_.cols.as_const();
    return n && *n % f == 0;
  }
  static SymExpr ceildiv(const SymExpr& a, int64_t b, const SymExpr& bb) {
    if (std::optional<int64_t> x = a.as_const()) return SymExpr::int_imm((*x + b - 1) / b, a.dtype());
    return floordiv(a + SymExpr::int_imm(b - 1, a.dtype()), bb);  // (simplified by the caller)
  }
  /// `e` simplified: constant extents print and compile as constants.
  SymExpr fold(const SymExpr& e) const { return analyzer_.simplify(e); }
  /// `s` under `j < cols` (with `otherwise` in the else branch) unless the
  /// columns are a multiple of `f`.
  Stmt guard_col(const SymExpr& j, int64_t f, const Stmt& s, const Stmt& otherwise = Stmt()) const {
    if (cols_multiple_of(f)) return s;
    return make_if_then_else(j < nest_.cols, s, otherwise);
  }
  Stmt loop(const SymVar& v, const SymExpr& extent, ForKind kind, const Stmt& body) const {
    return make_for(v, c(0), extent, kind, body);
  }
  /// `count` tiles of `mr` rows from row `first` on.
  Stmt tile_nest(int64_t mr, const SymExpr& first, const SymExpr& count) const {
    const int64_t nr = tiles_.cols;
    const SymVar jo = var("jo"), kp = var("kp"), jp = var("jp"), io = var("io"), ii = var("ii"), ji = var("ji"),
                 kk = var("kk");
    // The panel is heap storage whatever its size: next to a second stack
    // array g++ (12) no longer keeps acc[mr, nr] in registers across the kk
    // loop (it loads and stores every accumulator per FMA; measured).
    const Buffer panel(name("_panel"), nest_.rhs.dtype(), {nest_.depth, c(nr)}, {}, BufferScope::kGlobal);
    const Buffer acc(name("_acc"), acc_dtype_, {c(mr), c(nr)}, {}, BufferScope::kLocal);
    const SymExpr col = SymExpr(jo) * c(nr) + SymExpr(jp);
    auto pack_at = [&](const SymExpr& k) {
      return guard_col(col, nr, make_store(panel, {k, jp}, fold(rhs(k, col))),
                       make_store(panel, {k, jp}, SymExpr::float_imm(0.0, nest_.rhs.dtype())));
    };
    Stmt pack;
    if (nest_.weights_k_contiguous) {
      // Each column of the panel is a contiguous row of W[n, k].
      pack = loop(jp, c(nr), ForKind::kSerial, loop(kp, nest_.depth, ForKind::kSerial, pack_at(kp)));
    } else {
      const KLoops ks = k_loops("kp");
      pack = over_k(ks, loop(jp, c(nr), ForKind::kVectorized, pack_at(fold(ks.k))));
    }
    const SymExpr row = first.is_const(0) ? SymExpr(io) * c(mr) + SymExpr(ii)
                                          : SymExpr(io) * c(mr) + SymExpr(ii) + first;
    const SymExpr out_col = SymExpr(jo) * c(nr) + SymExpr(ji);
    auto tile_loops = [&](const Stmt& body) {
      return loop(ii, c(mr), ForKind::kUnrolled, loop(ji, c(nr), ForKind::kVectorized, body));
    };
    Stmt start = make_store(acc, {ii, ji}, init(row, out_col));
    if (reads_memory(nest_.init)) start = guard_col(out_col, nr, start, make_store(acc, {ii, ji}, zero()));
    const SymExpr acc_here = buffer_load(acc, {ii, ji});
    Stmt update = loop(kk, nest_.depth, ForKind::kSerial,
                       tile_loops(make_store(acc, {ii, ji}, acc_here + lhs(row, kk) * buffer_load(panel, {kk, ji}))));
    Stmt write = tile_loops(guard_col(out_col, nr, make_store(nest_.out, {row, out_col}, acc_here)));
    Stmt tile = make_allocate(acc, make_seq({tile_loops(start), update, write}));
    Stmt row_tiles = loop(io, count, ForKind::kSerial, tile);
    return loop(jo, fold(ceildiv(nest_.cols, nr, c(nr))), ForKind::kParallel,
                make_allocate(panel, make_seq({pack, row_tiles})));
  }

  /// The `count` rows from row `first` on, one at a time.
  Stmt row_nest(const SymExpr& first, const SymExpr& count) const {
    const SymVar r = var("r");
    const SymExpr row = fold(first + SymExpr(r));
    Stmt per_row = nest_.weights_k_contiguous ? dot_row(row) : stream_row(row);
    return loop(r, count, ForKind::kSerial, per_row);
  }

  /// One row against W varying fastest with j: column blocks streaming rows of W.
  Stmt stream_row(const SymExpr& row) const {
    const int64_t nb = tiles_.stream_cols;
    const SymVar jo = var("jb"), ji = var("jj");
    const std::optional<int64_t> n = nest_.cols.as_const();
    const bool one_block = n && *n <= nb;
    const SymExpr col = SymExpr(jo) * c(nb) + SymExpr(ji);
    SymExpr width = c(nb);
    if (one_block) {
      width = c(*n);
    } else if (!cols_multiple_of(nb)) {
      width = fold(min(c(nb), nest_.cols - SymExpr(jo) * c(nb)));
    }
    const Buffer acc(name("_row"), acc_dtype_, {one_block ? c(*n) : c(nb)}, {}, BufferScope::kLocal);
    auto over_block = [&](const Stmt& body) { return loop(ji, width, ForKind::kVectorized, body); };
    const SymExpr acc_here = buffer_load(acc, {ji});
    Stmt start = over_block(make_store(acc, {ji}, init(row, col)));
    const KLoops ks = k_loops("k");
    const SymExpr k = fold(ks.k);
    Stmt update = over_k(ks, over_block(make_store(acc, {ji}, acc_here + fold(lhs(row, k) * rhs(k, col)))));
    Stmt write = over_block(make_store(nest_.out, {row, col}, acc_here));
    return loop(jo, fold(ceildiv(nest_.cols, nb, c(nb))), ForKind::kParallel,
                make_allocate(acc, make_seq({start, update, write})));
  }

  /// One row against W[n, k]: blocks of rows of W dotted with lane-split accumulators.
  Stmt dot_row(const SymExpr& row) const {
    const int64_t jr = tiles_.dot_rows, lanes = tiles_.lanes;
    const SymVar jo = var("jb"), jj = var("jj"), ko = var("ko"), kl = var("kl"), kt = var("kt");
    const Buffer acc(name("_dot"), acc_dtype_, {c(jr), c(lanes)}, {}, BufferScope::kLocal);
    const SymExpr col = SymExpr(jo) * c(jr) + SymExpr(jj);
    Stmt start = loop(jj, c(jr), ForKind::kUnrolled, loop(kl, c(lanes), ForKind::kVectorized,
                                                          make_store(acc, {jj, kl}, zero())));
    const SymExpr k = SymExpr(ko) * c(lanes) + SymExpr(kl);
    const SymExpr acc_here = buffer_load(acc, {jj, kl});
    Stmt body = loop(kl, c(lanes), ForKind::kVectorized,
                     make_store(acc, {jj, kl}, acc_here + lhs(row, k) * rhs(k, col)));
    std::vector<Stmt> steps{start, loop(ko, fold(floordiv(nest_.depth, c(lanes))), ForKind::kSerial,
                                        loop(jj, c(jr), ForKind::kUnrolled, guard_col(col, jr, body)))};
    const std::optional<int64_t> depth = nest_.depth.as_const();
    if (!depth || *depth % lanes != 0) {
      const SymExpr tail_k = fold(floordiv(nest_.depth, c(lanes)) * c(lanes) + SymExpr(kt));
      const SymExpr acc0 = buffer_load(acc, {jj, c(0)});
      Stmt tail = make_store(acc, {jj, c(0)}, acc0 + lhs(row, tail_k) * rhs(tail_k, col));
      steps.push_back(loop(kt, fold(nest_.depth - floordiv(nest_.depth, c(lanes)) * c(lanes)), ForKind::kSerial,
                           loop(jj, c(jr), ForKind::kUnrolled, guard_col(col, jr, tail))));
    }
    // The horizontal sum, pairwise.
    std::vector<SymExpr> terms;
    for (int64_t l = 0; l < lanes; ++l) terms.push_back(buffer_load(acc, {jj, c(l)}));
    while (terms.size() > 1) {
      std::vector<SymExpr> next;
      for (size_t t = 0; t + 1 < terms.size(); t += 2) next.push_back(terms[t] + terms[t + 1]);
      if (terms.size() % 2 == 1) next.push_back(terms.back());
      terms = std::move(next);
    }
    steps.push_back(loop(jj, c(jr), ForKind::kUnrolled,
                         guard_col(col, jr, make_store(nest_.out, {row, col}, init(row, col) + terms[0]))));
    return loop(jo, fold(ceildiv(nest_.cols, jr, c(jr))), ForKind::kParallel, make_allocate(acc, make_seq(std::move(steps))));
  }

  const MatmulNest& nest_;
  const MatmulTiles& tiles_;
  DataType index_;
  DataType acc_dtype_;
  mutable Analyzer analyzer_;
};

}  // namespace

absl::StatusOr<Expr> schedule_matmul(const Expr& func, const MatmulNest& nest, const MatmulTiles& tiles) {
  if (tiles.rows < 1 || tiles.cols < 1 || tiles.stream_cols < 1 || tiles.dot_rows < 1 || tiles.lanes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(kernel_label(func), ": matmul tiles must be >= 1"));
  }
  MatmulBuilder builder(nest, tiles);
  return replace_stmt(func, nest.outer, builder.build());
}

}  // namespace relax::transform::schedule
