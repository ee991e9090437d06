// The default CPU schedule of a matmul nest (matmul_schedule.h).
//
// A matmul out[i, j] = init + sum_k lhs(i, k) * rhs(k, j) over m rows (often
// symbolic: 1 when decoding, hundreds in a prefill), n columns and depth k
// becomes these kinds of nest, so that neither full tiles nor single rows pay
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
//        with scales s[k/32, j]): blocks of stream_cols = 1024 columns, each a
//        contiguous run of a row of W per step of k, accumulated in a local
//        row acc[stream_cols] (L1) by a vectorized loop over j that makes
//        stream_unroll = 4 steps of k (written out, in the order of k) per
//        pass, the row's x of each read into a scalar before the loop:
//          for ko { let a0..a3 = lhs(r, ko*4+0..3) { for jj vectorized {
//            acc[jj] = acc[jj] + a0 * rhs(ko*4, jb*1024+jj); ... a3 ... } } }
//        (the k tail of a depth 4 does not divide one step at a time). So
//        each pass reads 4 rows of W at once and loads and stores the
//        accumulator once per 4 products, and the two nibbles of a packed
//        byte come from one load. Measured at K = N = 4096, one thread, in a
//        C++ model of the loop (the old 256 columns, one k per pass: f32
//        0.57x, bf16 0.54x of the DRAM read; 1024 x 4: 1.0x, 1.1x; 256 x 4:
//        0.58x, 0.78x; 64 columns, the accumulator in registers: 0.38x,
//        0.34x): blocks of 1 KiB of weights per row leave the hardware
//        prefetchers little to work with;
//        group-wise int4 weights in the layout of
//        examples/models/dequant_matmul.relax (q[k/2, j] low nibble first,
//        minus 8, times s[k/32, j]; k a multiple of 32; the accumulation from
//        zero) call the micro-kernel relax_int4_row_f32
//        (relax/support/micro_kernels.h) per column block instead: the
//        generated loop is compute-bound there (g++ widens the bytes to
//        words to dwords and converts each nibble apart), the micro-kernel
//        masks the nibbles in place within 32-bit lanes and applies the
//        offset and the scale once per group;
//      - weights varying fastest with k (W[n, k], as linear reads them):
//        blocks of dot_rows rows of W, each dotted with the row of lhs by a
//        vectorized loop over `lanes` consecutive k into lane-split
//        accumulators acc[dot_rows, lanes], the k tail added to lane 0, and a
//        final horizontal sum.
//
//   3. Where the target has integer dot products (MatmulTiles::int8_rows > 0:
//      AVX-512 VNNI or AVX-VNNI, not -exact-float) and the weights are int4's layout or
//      dequantize's int8 one (bytes q[k, j], scales s[k / 32, j]), the rows in
//      chunks of int8_rows (64; a decode step's are one chunk), each chunk one
//      call of relax_int4_rows_i8 (relax_int8_rows_i8) per column block, in
//      parallel:
//        for rc in range(ceildiv(m, 64)) { for jb parallel:
//          relax_int4_rows_i8(&x[rc * 64, 0], min(64, m - rc * 64), ...) }
//      instead of 1 and 2. (Measured, 2 threads, K = 2048, N = 5632: 1.9 ms
//      per row in chunks of 64, 2.9 in chunks of 16.)
//      The kernel quantises the rows to int8 per group of 32 and multiplies
//      them by the nibbles (bytes) with vpdpbusd, reading each weight once for all
//      the rows (the float kernels above read them once per row, or widen
//      every nibble to a float per product). When the columns are too few
//      for each of T threads to stream long runs of them (a share below 2048),
//      the depth is split in T parts instead, one per thread, into a scratch
//      [T, chunk, n] whose parts are then added into the output.
//   4. Where the target has AVX-512 (MatmulTiles::stream_rows > 0), compact
//      float32 W[k, j] for at most stream_rows rows (`if m <= 16 { calls }
//      else { 1 and 2 }`), and bfloat16 / float16 W[k, j] at every row count in
//      chunks of 64, as calls of relax_f32_rows / relax_bf16_rows /
//      relax_f16_rows per column block:
//      each weight read once for the rows of a call, float products.
//   The column blocks of 3 and 4 are one thread's share of the columns (up
//   to 4096; MatmulTiles::threads), else 1024 and at least 2, so that every
//   thread has work even on a k or v projection's 256 columns; where that
//   share is below 2048 columns and the depth divides, 3 and 4 split the
//   depth across the threads instead (k_parts).
//
// Every element is computed by the same terms as the plain nest: the tiles
// and the column-streaming kernel add in the order of k (bit-identical up to
// the compiler's contraction into FMAs); the lane-split dot product and the
// int4 micro-kernel reassociate the sum over k (a float reduction's usual
// tolerance); the int8 kernel rounds the activations (its documented bound).
// Not done: k-blocking of the panel (the panel is k * nr elements: 256 KiB
// for k = 2048, held in L2), batched matmuls, and weights prepacked at load.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr_search.h"
#include "transform/schedule/matmul_schedule.h"
#include "transform/schedule/primitives.h"

namespace relax::transform::schedule {
namespace {

// Rows per call of the float rows kernels when they take every row count (bfloat16 weights).
constexpr int64_t kFloatRowsChunk = 64;

class MatmulBuilder {
 public:
  MatmulBuilder(const MatmulNest& nest, const MatmulTiles& tiles)
      : nest_(nest), tiles_(tiles), index_(nest.vi.dtype()), acc_dtype_(nest.out.dtype()) {
    // Extents are sizes: >= 0 (so that m - floordiv(m, 4) * 4 becomes floormod(m, 4)).
    for (const SymExpr& e : {nest.rows, nest.cols, nest.depth}) {
      if (e.is_var()) analyzer_.bind(SymVar::from_expr(e), 0);
    }
  }

  /// The rows kernels' calls (3 and 4 of the file comment) where they apply,
  /// else the tiles and single rows (either left out when the row count is a
  /// constant that needs none of it).
  Stmt build() {
    // int4 / int8 weights with int8 activations: every row count, in chunks of int8_rows rows.
    if (tiles_.int8_rows > 0) {
      if (std::optional<Stmt> chunks = rows_i8_call()) return *chunks;
    }
    std::optional<Stmt> few;
    const int64_t limit = tiles_.stream_rows;
    bool all_rows = false;
    if (limit > 0) few = float_rows_call(&all_rows);
    if (few && all_rows) return *few;
    Stmt general = build_general();
    if (!few) return general;
    const std::optional<int64_t> m = nest_.rows.as_const();
    if (m) return *m <= limit ? *few : general;
    return make_if_then_else(nest_.rows <= c(limit), *few, general);
  }

 private:
  /// The register tiles, then the single rows.
  Stmt build_general() const {
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
  struct KLoop {
    SymVar var;
    int64_t extent = -1;  ///< -1: the depth itself (one loop over all of k)
    int64_t stride = 1;   ///< what one step of `var` adds to k
  };
  struct KLoops {
    std::vector<KLoop> loops;  ///< outermost first
    SymExpr k;                 ///< k in terms of the loops' variables
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
      out.loops.push_back({var(stem), depth.value_or(-1), 1});
      if (depth) analyzer_.bind(out.loops[0].var, 0, *depth - 1);
      out.k = out.loops[0].var;
      return out;
    }
    // Outermost first: K / dn, dn / dn-1, ..., d1.
    int64_t above = *depth;
    for (size_t i = divisors.size(); i-- > 0;) {
      out.loops.push_back({var(absl::StrCat(stem, out.loops.size())), above / divisors[i], divisors[i]});
      above = divisors[i];
    }
    out.loops.push_back({var(absl::StrCat(stem, out.loops.size())), above, 1});
    bind_and_sum(out);
    return out;
  }
  /// Binds the ranges of the loops of `ks` and sets ks.k.
  void bind_and_sum(KLoops& ks) const {
    ks.k = SymExpr();
    for (const KLoop& l : ks.loops) {
      if (l.extent > 0) analyzer_.bind(l.var, 0, l.extent - 1);
      const SymExpr term = l.stride == 1 ? SymExpr(l.var) : SymExpr(l.var) * c(l.stride);
      ks.k = ks.k.defined() ? ks.k + term : term;
    }
  }
  /// `ks` with its innermost loops covering `unroll` consecutive k (the k
  /// steps the row kernel unrolls inside its column loop): the innermost loops
  /// that fit, the next one split (v -> v_o * r + v_i); also the index of the
  /// first of those inner loops. nullopt when the extents do not allow it (a
  /// symbolic depth, or one that `unroll` does not divide).
  std::optional<std::pair<KLoops, size_t>> split_inner(const KLoops& ks, int64_t unroll) const {
    KLoops out{ks.loops, SymExpr()};
    int64_t left = unroll;
    size_t first_inner = out.loops.size();
    while (left > 1) {
      if (first_inner == 0) return std::nullopt;
      KLoop& l = out.loops[first_inner - 1];
      if (l.extent <= 0) return std::nullopt;
      if (left % l.extent == 0) {
        left /= l.extent;
        --first_inner;
        continue;
      }
      if (l.extent % left != 0) return std::nullopt;
      const KLoop inner{var(l.var.name() + "i"), left, l.stride};
      l = KLoop{var(l.var.name() + "o"), l.extent / left, l.stride * left};
      out.loops.insert(out.loops.begin() + static_cast<std::ptrdiff_t>(first_inner), inner);
      left = 1;
    }
    bind_and_sum(out);
    return std::make_pair(std::move(out), first_inner);
  }
  /// `body` under the loops of `ks` from `from` to `to` (the innermost of all
  /// unrolled when it is short).
  Stmt over_k(const KLoops& ks, const Stmt& body, size_t from = 0, size_t to = SIZE_MAX) const {
    Stmt out = body;
    to = std::min(to, ks.loops.size());
    for (size_t i = to; i-- > from;) {
      const KLoop& l = ks.loops[i];
      const bool innermost = i + 1 == ks.loops.size();
      const SymExpr extent = l.extent < 0 ? nest_.depth : c(l.extent);
      const ForKind kind =
          innermost && ks.loops.size() > 1 && l.extent <= 8 ? ForKind::kUnrolled : ForKind::kSerial;
      out = loop(l.var, extent, kind, out);
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

  /// The columns of block `jo` of `nb` columns: all of them when they fit in
  /// one block, else nb, or min(nb, cols - jo * nb) unless the column count is
  /// a known multiple of nb.
  SymExpr block_width(const SymVar& jo, int64_t nb) const {
    const std::optional<int64_t> n = nest_.cols.as_const();
    if (n && *n <= nb) return c(*n);
    if (!cols_multiple_of(nb)) return fold(min(c(nb), nest_.cols - SymExpr(jo) * c(nb)));
    return c(nb);
  }
  /// The group-wise int4 weight of examples/models/dequant_matmul.relax at
  /// (k, j): two 4-bit weights per byte of q[k / 2, j], the low nibble first,
  /// minus 8, times the float scale s[k / 32, j].
  SymExpr int4_weight(const Buffer& q, const Buffer& s, const SymExpr& k, const SymExpr& j) const {
    const DataType u8{DataType::Code::kUInt, 8, 1};
    const SymExpr nibble = bitwise_and(shift_right(buffer_load(q, {floordiv(k, c(2)), j}), cast(u8, c(4) * floormod(k, c(2)))),
                                       cast(u8, c(15)));
    return (cast(DataType::float32(), nibble) - SymExpr::float_imm(8.0, DataType::float32())) *
           buffer_load(s, {floordiv(k, c(32)), j});
  }
  /// The same weight as op::dequantize(axis=0, bits=4, group_size=32) legalizes it: the
  /// nibble taken and offset in int32, then converted.
  SymExpr int4_weight_of_dequantize(const Buffer& q, const Buffer& s, const SymExpr& k, const SymExpr& j) const {
    const DataType i32 = DataType::int32();
    const SymExpr byte = cast(i32, buffer_load(q, {floordiv(k, c(2)), j}));
    const SymExpr value = bitwise_and(shift_right(byte, cast(i32, floormod(k, c(2)) * c(4))), SymExpr::int_imm(15, i32)) -
                          SymExpr::int_imm(8, i32);
    return cast(DataType::float32(), value) * buffer_load(s, {floordiv(k, c(32)), j});
  }
  /// The group-wise int8 weight as op::dequantize(axis=0, bits=8, group_size=32) legalizes it:
  /// the signed byte q[k, j] converted, times the scale s[k / 32, j].
  SymExpr int8_weight_of_dequantize(const Buffer& q, const Buffer& s, const SymExpr& k, const SymExpr& j) const {
    return cast(DataType::float32(), buffer_load(q, {k, j})) * buffer_load(s, {floordiv(k, c(32)), j});
  }
  /// The buffers of a quantised matmul the micro-kernels take: X[i, k] (compact rows over k),
  /// the packed bytes and the scales s[k / 32, j] of int4_weight (or of the dequantize
  /// operator: int4 bytes q[k / 2, j], int8 bytes q[k, j]), a compact output, k a known
  /// multiple of 32 and the accumulation from zero.
  struct QuantOperands {
    Buffer x, q, s;
    int64_t depth = 0;
    int bits = 4;
  };
  std::optional<QuantOperands> quant_operands() const {
    const std::optional<int64_t> depth = nest_.depth.as_const();
    const std::optional<double> start = nest_.init.as_float();
    if (!depth || *depth <= 0 || *depth % 32 != 0 || !start || *start != 0.0) return std::nullopt;
    const std::optional<Buffer> x = compact_rows_lhs();
    if (!x) return std::nullopt;
    auto compact_2d = [&](const Buffer& b, DataType dtype, const SymExpr& rows) {
      return b.dtype() == dtype && b.ndim() == 2 && b->strides.empty() &&
             structural_equal(fold(b.shape()[0]), fold(rows)) && structural_equal(fold(b.shape()[1]), fold(nest_.cols));
    };
    // The packed bytes and the scales: the loads of the weight expression.
    Buffer q, s;
    any_subexpr(nest_.rhs, [&](const SymExpr& e) {
      if (e.kind() == SymKind::kBufferLoad) (e.dtype() == DataType::float32() ? s : q) = e->buffer();
      return false;
    });
    if (!q.defined() || !s.defined() || !compact_2d(s, DataType::float32(), c(*depth / 32))) return std::nullopt;
    const SymExpr rhs = fold(nest_.rhs);
    if (compact_2d(q, DataType{DataType::Code::kUInt, 8, 1}, c(*depth / 2)) &&
        (structural_equal(rhs, fold(int4_weight(q, s, nest_.vk, nest_.vj))) ||
         structural_equal(rhs, fold(int4_weight_of_dequantize(q, s, nest_.vk, nest_.vj))))) {
      return QuantOperands{*x, q, s, *depth, 4};
    }
    if (compact_2d(q, DataType{DataType::Code::kInt, 8, 1}, c(*depth)) &&
        structural_equal(rhs, fold(int8_weight_of_dequantize(q, s, nest_.vk, nest_.vj)))) {
      return QuantOperands{*x, q, s, *depth, 8};
    }
    return std::nullopt;
  }
  static ExternArg region(const Buffer& b, std::vector<SymExpr> at) { return ExternArg{SymExpr(), b, std::move(at)}; }
  static ExternArg scalar(const SymExpr& v) { return ExternArg{v, Buffer(), {}}; }

  /// The row kernel as calls of the micro-kernel relax_int4_row_f32 (one per
  /// column block, in parallel) when quant_operands finds int4 weights; nullopt otherwise.
  std::optional<Stmt> int4_row_call(const SymExpr& row) const {
    const std::optional<QuantOperands> ops = quant_operands();
    if (!ops || ops->bits != 4) return std::nullopt;
    const int64_t nb = tiles_.stream_cols;
    const SymVar jo = var("jb");
    const SymExpr col = SymExpr(jo) * c(nb);
    const SymExpr width = block_width(jo, nb);
    Stmt call = make_extern_call("relax_int4_row_f32",
                                 {region(ops->x, {row, c(0)}), region(ops->q, {c(0), col}), region(ops->s, {c(0), col}),
                                  scalar(c(ops->depth)), scalar(width), scalar(nest_.cols), region(nest_.out, {row, col})});
    return loop(jo, fold(ceildiv(nest_.cols, nb, c(nb))), ForKind::kParallel, call);
  }

  /// The columns of each parallel block of the rows kernels (a multiple of their 64 columns).
  /// With the thread count known: one thread's share, in equal parts of up to 4096 (each row of weights a long
  /// run the prefetchers follow; measured, 2 threads, K = 2048, N = 5632, one row: float32
  /// 24.1 GB/s in blocks of 1024, 27.8 in 2816; bfloat16 21.1 and 29.3; N = 32000: 4096 columns
  /// 26.1, 16000 19.4). Else 1024 (K = N = 2048, one row: 10.8 GB/s in blocks of 256, 21.4 in
  /// 512, 27.1 in 1024), and at least 2 blocks, so that two threads have work even for the 256
  /// columns of a k or v projection.
  int64_t rows_block() const {
    const std::optional<int64_t> n = nest_.cols.as_const();
    if (!n) return 1024;
    if (tiles_.threads > 0) {
      // A share over 4096 in as many equal blocks per thread as that takes: blocks of 4096 and
      // a tail would leave one thread the most (joined gate/up, N = 11264 on 2 threads: 8192
      // and 3072 columns; the decode step 262 ms against 202 for 4 blocks of 2816).
      const int64_t share = (*n + tiles_.threads - 1) / tiles_.threads;
      const int64_t blocks = tiles_.threads * ((share + 4095) / 4096);
      const int64_t width = (*n + blocks - 1) / blocks;
      return std::clamp<int64_t>((width + 63) / 64 * 64, 64, 4096);
    }
    return std::clamp<int64_t>((*n + 2 * 64 - 1) / (2 * 64) * 64, 64, 1024);
  }

  /// X[vi, vk] of a compact float32 X whose rows are `depth` long, the output compact.
  std::optional<Buffer> compact_rows_lhs() const {
    if (acc_dtype_ != DataType::float32() || nest_.lhs.kind() != SymKind::kBufferLoad ||
        nest_.lhs.num_operands() != 2) {
      return std::nullopt;
    }
    const SymExpr& xi = nest_.lhs.operand(0);
    const SymExpr& xk = nest_.lhs.operand(1);
    auto compact_2d = [&](const Buffer& b, const SymExpr& cols) {
      return b.dtype() == DataType::float32() && b.ndim() == 2 && b->strides.empty() &&
             structural_equal(fold(b.shape()[1]), fold(cols));
    };
    const Buffer x = nest_.lhs->buffer();
    if (!xi.is_var() || SymVar::from_expr(xi).id() != nest_.vi.id() || !xk.is_var() ||
        SymVar::from_expr(xk).id() != nest_.vk.id() || !compact_2d(x, nest_.depth) ||
        !compact_2d(nest_.out, nest_.cols)) {
      return std::nullopt;
    }
    return x;
  }

  /// The threads' parts of k when the columns are too few for each thread to stream long runs
  /// of them: with T threads known, a constant column count whose share per thread is below
  /// 2048 and a depth that T parts of whole groups of 32 divide, T; else 1. (Measured, one
  /// row, 2 threads: K = N = 2048 19.5 GB/s split by columns, 24.9 by k; K = 5632, N = 2048
  /// 22.1 and 25.2.)
  int64_t k_parts(int64_t depth, int64_t multiple = 32) const {
    const std::optional<int64_t> n = nest_.cols.as_const();
    const int64_t t = tiles_.threads;
    if (t < 2 || !n || (*n + t - 1) / t >= 2048 || depth % (t * multiple) != 0) return 1;
    return t;
  }

  /// The weight arguments of a rows kernel for part p of kp k (p = 0 without a split) and the
  /// columns from `col` on.
  using WeightArgs = std::function<std::vector<ExternArg>(const SymExpr& p, int64_t kp, const SymExpr& col)>;

  /// Calls of a rows kernel, kernel(x, rows, ldx, weights..., depth, cols, stride, y, ldy), for
  /// every row, in chunks of `chunk` rows (`one_call`: the rows, at most `chunk` of them, in one
  /// call). Without a split
  /// of k (k_parts 1): one call per column block (rows_block), in parallel. With one: one call
  /// per part of k in parallel, each over all the columns into its part of a scratch
  /// [parts, chunk, n], the parts then added into the output:
  ///   alloc out_kpart { for rc: { for p parallel: kernel(&x[first, p * kp], rows, K, weights(p),
  ///     kp, n, n, &out_kpart[p, 0, 0], n); for i < rows, j vectorized: out[first + i, j] =
  ///     out_kpart[0, i, j] + ... } }
  Stmt rows_kernel_calls(const char* kernel, const Buffer& x, int64_t chunk, bool one_call, int64_t parts,
                         const WeightArgs& weights) const {
    const SymExpr depth = fold(nest_.depth);
    const int64_t kp = parts > 1 ? *nest_.depth.as_const() / parts : 0;
    const std::optional<int64_t> m = nest_.rows.as_const();
    const Buffer part(name("_kpart"), DataType::float32(), {c(parts), c(m ? std::min(*m, chunk) : chunk), nest_.cols},
                      {}, BufferScope::kGlobal);
    auto calls = [&](const SymExpr& first, const SymExpr& rows) -> Stmt {
      auto call = [&](const SymExpr& p, const SymExpr& col, const SymExpr& k_depth, const SymExpr& width,
                      const ExternArg& y) {
        std::vector<ExternArg> args{region(x, {first, fold(p * c(kp))}), scalar(rows), scalar(depth)};
        for (ExternArg& w : weights(p, kp, col)) args.push_back(std::move(w));
        args.insert(args.end(), {scalar(k_depth), scalar(width), scalar(nest_.cols), y, scalar(nest_.cols)});
        return make_extern_call(kernel, std::move(args));
      };
      if (parts <= 1) {
        const int64_t nb = rows_block();
        const SymVar jo = var("jb");
        const SymExpr col = SymExpr(jo) * c(nb);
        return loop(jo, fold(ceildiv(nest_.cols, nb, c(nb))), ForKind::kParallel,
                    call(c(0), col, depth, block_width(jo, nb), region(nest_.out, {first, col})));
      }
      const SymVar p = var("p"), i = var("i"), j = var("j");
      SymExpr sum = buffer_load(part, {c(0), i, j});
      for (int64_t q = 1; q < parts; ++q) sum = sum + buffer_load(part, {c(q), i, j});
      const SymExpr row = first.is_const(0) ? SymExpr(i) : fold(first + SymExpr(i));
      Stmt add = loop(i, rows, ForKind::kSerial,
                      loop(j, nest_.cols, ForKind::kVectorized, make_store(nest_.out, {row, j}, sum)));
      Stmt each = call(p, c(0), c(kp), nest_.cols, region(part, {SymExpr(p), c(0), c(0)}));
      return make_seq({loop(p, c(parts), ForKind::kParallel, each), add});
    };
    Stmt out = one_call ? calls(c(0), nest_.rows) : over_row_chunks(chunk, calls);
    return parts > 1 ? make_allocate(part, out) : out;
  }

  /// All the rows (at most stream_rows) against compact float32 W[k, j], or bfloat16 / float16
  /// W[k, j] widened (cast<float32>(W[k, j])) at every row count in chunks, accumulated from
  /// zero, as calls of relax_f32_rows / relax_bf16_rows / relax_f16_rows, one per column block,
  /// in parallel; nullopt for other weights.
  std::optional<Stmt> float_rows_call(bool* all_rows) const {
    *all_rows = false;
    const std::optional<double> start = nest_.init.as_float();
    if (!start || *start != 0.0) return std::nullopt;
    const std::optional<Buffer> x = compact_rows_lhs();
    if (!x) return std::nullopt;
    SymExpr load = nest_.rhs;
    const char* kernel = "relax_f32_rows";
    if (load.kind() == SymKind::kCast && load.dtype() == DataType::float32() &&
        (load.operand(0).dtype() == DataType::bfloat16() || load.operand(0).dtype() == DataType::float16())) {
      kernel = load.operand(0).dtype() == DataType::bfloat16() ? "relax_bf16_rows" : "relax_f16_rows";
      load = load.operand(0);
    }
    if (load.kind() != SymKind::kBufferLoad || load.num_operands() != 2) return std::nullopt;
    const Buffer w = load->buffer();
    const SymExpr& wk = load.operand(0);
    const SymExpr& wj = load.operand(1);
    if (!wk.is_var() || SymVar::from_expr(wk).id() != nest_.vk.id() || !wj.is_var() ||
        SymVar::from_expr(wj).id() != nest_.vj.id() || w.ndim() != 2 || !w->strides.empty() ||
        (w.dtype() != DataType::float32() && w.dtype() != DataType::bfloat16() && w.dtype() != DataType::float16()) ||
        !structural_equal(fold(w.shape()[1]), fold(nest_.cols))) {
      return std::nullopt;
    }
    // The depth split across the threads when the columns are few (as for int4; 16 k per block
    // of the kernels). bfloat16: every row count, in chunks (its rows kernel beats the widened
    // panel's tiles); float32: the caller's m <= stream_rows (tiles above, and oneDNN when it
    // has the matmul), one call.
    const std::optional<int64_t> depth = nest_.depth.as_const();
    const int64_t parts = depth ? k_parts(*depth, 16) : 1;
    *all_rows = w.dtype() != DataType::float32();
    return rows_kernel_calls(kernel, *x, *all_rows ? kFloatRowsChunk : tiles_.stream_rows, !*all_rows, parts,
                             [&](const SymExpr& p, int64_t kp, const SymExpr& col) {
                               return std::vector<ExternArg>{region(w, {fold(p * c(kp)), col})};
                             });
  }

  /// `calls(first, rows)` for the rows in chunks of `chunk`, a serial loop over the chunks (no
  /// loop when the row count is a constant of at most one chunk).
  Stmt over_row_chunks(int64_t chunk, const std::function<Stmt(const SymExpr&, const SymExpr&)>& calls) const {
    const std::optional<int64_t> m = nest_.rows.as_const();
    if (m && *m <= chunk) return calls(c(0), nest_.rows);
    const SymVar rc = var("rc");
    return loop(rc, fold(ceildiv(nest_.rows, chunk, c(chunk))), ForKind::kSerial,
                calls(SymExpr(rc) * c(chunk), fold(min(c(chunk), nest_.rows - SymExpr(rc) * c(chunk)))));
  }

  /// The rows in chunks of int8_rows as calls of relax_int4_rows_i8 or relax_int8_rows_i8
  /// (rows_kernel_calls): each block's weights are read once per chunk (a decode step's rows are
  /// one chunk; a prefill's weights are read once per int8_rows rows).
  std::optional<Stmt> rows_i8_call() const {
    const std::optional<QuantOperands> ops = quant_operands();
    if (!ops) return std::nullopt;
    const int64_t k_per_row = ops->bits == 4 ? 2 : 1;  // k per row of packed bytes
    return rows_kernel_calls(ops->bits == 4 ? "relax_int4_rows_i8" : "relax_int8_rows_i8", ops->x, tiles_.int8_rows,
                             /*one_call=*/false, k_parts(ops->depth),
                             [&](const SymExpr& p, int64_t kp, const SymExpr& col) {
                               return std::vector<ExternArg>{region(ops->q, {fold(p * c(kp / k_per_row)), col}),
                                                             region(ops->s, {fold(p * c(kp / 32)), col})};
                             });
  }

  /// One row against W varying fastest with j: column blocks streaming rows of W.
  Stmt stream_row(const SymExpr& row) const {
    if (std::optional<Stmt> call = int4_row_call(row)) return *call;
    const int64_t nb = tiles_.stream_cols;
    const SymVar jo = var("jb"), ji = var("jj");
    const std::optional<int64_t> n = nest_.cols.as_const();
    const bool one_block = n && *n <= nb;
    const SymExpr col = SymExpr(jo) * c(nb) + SymExpr(ji);
    const SymExpr width = block_width(jo, nb);
    const Buffer acc(name("_row"), acc_dtype_, {one_block ? c(*n) : c(nb)}, {}, BufferScope::kLocal);
    auto over_block = [&](const Stmt& body) { return loop(ji, width, ForKind::kVectorized, body); };
    const SymExpr acc_here = buffer_load(acc, {ji});
    Stmt start = over_block(make_store(acc, {ji}, init(row, col)));
    // The steps of one pass, with lhs(row, k) of each read into a scalar
    // before the column loop (read inside it, under a symbolic row index, it
    // keeps g++ from vectorising the loop: "data ref analysis failed").
    auto pass = [&](const std::vector<SymExpr>& ks) {
      std::vector<Stmt> steps;
      std::vector<std::pair<SymVar, SymExpr>> values;
      for (const SymExpr& k : ks) {
        const SymVar a(absl::StrCat("a", values.size()), nest_.lhs.dtype());
        values.emplace_back(a, fold(lhs(row, k)));
        steps.push_back(make_store(acc, {ji}, acc_here + fold(SymExpr(a) * rhs(k, col))));
      }
      Stmt out = over_block(steps.size() == 1 ? steps[0] : make_seq(std::move(steps)));
      for (size_t i = values.size(); i-- > 0;) out = make_let(values[i].first, values[i].second, out);
      return out;
    };
    const int64_t unroll = tiles_.stream_unroll;
    const KLoops ks = k_loops("k");
    Stmt update;
    if (std::optional<std::pair<KLoops, size_t>> split = unroll > 1 ? split_inner(ks, unroll) : std::nullopt) {
      // `unroll` steps of k inside the column loop, in the order of k, written
      // out (an unrolled loop there keeps g++ from vectorising the column
      // loop when the row index is symbolic: "data ref analysis failed").
      const auto& [loops, first_inner] = *split;
      std::vector<SymExpr> ks_here;
      std::vector<int64_t> at(loops.loops.size() - first_inner, 0);  // the inner loops' values
      for (bool more = true; more;) {
        SymVarMap<SymExpr> values;
        for (size_t i = 0; i < at.size(); ++i) values.emplace(loops.loops[first_inner + i].var, c(at[i]));
        ks_here.push_back(fold(substitute(loops.k, values)));
        size_t d = at.size();
        while (d > 0 && ++at[d - 1] == loops.loops[first_inner + d - 1].extent) at[--d] = 0;
        more = d > 0;
      }
      update = over_k(loops, pass(ks_here), 0, first_inner);
    } else if (unroll > 1 && ks.loops.size() == 1) {
      // A symbolic depth, or one `unroll` does not divide: the unrolled steps,
      // then the k tail one step at a time.
      const SymVar ko = var("ko"), kt = var("kt");
      const SymExpr main = fold(floordiv(nest_.depth, c(unroll)));
      std::vector<SymExpr> ks_here;
      for (int64_t u = 0; u < unroll; ++u) ks_here.push_back(fold(SymExpr(ko) * c(unroll) + c(u)));
      update = loop(ko, main, ForKind::kSerial, pass(ks_here));
      const SymExpr rest = fold(nest_.depth - main * c(unroll));
      if (!rest.is_const(0)) {
        update = make_seq({update, loop(kt, rest, ForKind::kSerial, pass({fold(main * c(unroll) + SymExpr(kt))}))});
      }
    } else {
      update = over_k(ks, pass({fold(ks.k)}));
    }
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
  if (tiles.rows < 1 || tiles.cols < 1 || tiles.stream_cols < 1 || tiles.stream_unroll < 1 || tiles.dot_rows < 1 ||
      tiles.lanes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(kernel_label(func), ": matmul tiles must be >= 1"));
  }
  MatmulBuilder builder(nest, tiles);
  return replace_stmt(func, nest.outer, builder.build());
}

}  // namespace relax::transform::schedule
