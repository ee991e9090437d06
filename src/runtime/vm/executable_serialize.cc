// Executable::serialize / deserialize: the versioned binary form of a program.
//
// Layout (every integer little-endian, see executable.h):
//   header   "RLXEXEC\0"  u32 version  u64 payload size  u64 FNV-1a 64 of the payload
//   payload  constants    u32 count, values
//            kernels      u32 count, strings
//            libraries    u32 count, strings
//            functions    u32 count, functions
//            device       u8 type (Device::Type), i32 index   (version 5 on; version 4: the CPU)
// A string is a u32 length and its bytes; a list is a u32 count and its
// entries; a DataType is u8 code, u8 bits, u16 lanes; a float is its IEEE bits.
// A value is a u8 ValueKind and then: nothing (none); dtype, u32 rank, i64
// dims, u64 byte count and the compact row-major bytes (tensor); u32 rank and
// i64 dims (shape); i64 (int); f64 (float); a string; u32 count and values
// (tuple). A function is its name, parameter names, i32 register count, slot
// names, exprs, patterns, match groups and code, each entry in the field order
// of executable.h.
//
// The reader checks bounds before every read and every count against the
// bytes left (so no count allocates more than the blob could describe), and
// runs the per-entry checks of vm.h as soon as an entry is read, naming the
// byte offset where the entry starts.
#include <cstring>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "relax/runtime/executable.h"
#include "relax/support/check.h"
#include "relax/support/fnv1a.h"
#include "vm/vm.h"

namespace relax::runtime {
namespace {

constexpr char kMagic[8] = {'R', 'L', 'X', 'E', 'X', 'E', 'C', '\0'};
constexpr size_t kHeaderSize = 8 + 4 + 8 + 8;

// ---------------------------------------------------------------------------
// Writing.

class Writer {
 public:
  std::vector<uint8_t>& bytes() { return out_; }

  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i32(int32_t v) { le(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { le(static_cast<uint64_t>(v), 8); }
  void f64(double v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void count(size_t n) {
    RELAX_CHECK(n <= UINT32_MAX) << "a list of " << n << " entries is too long to serialise";
    u32(static_cast<uint32_t>(n));
  }
  void str(const std::string& s) {
    count(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void raw(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  void dtype(const DataType& t) {
    u8(static_cast<uint8_t>(t.code));
    u8(t.bits);
    u16(t.lanes);
  }

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> out_;
};

// Appends the elements of `t` in compact row-major order, whatever its strides.
void write_tensor_bytes(Writer& w, const Tensor& t) {
  const size_t elem = t.element_bytes();
  if (t.is_contiguous()) {
    w.raw(t.data(), t.nbytes());
    return;
  }
  const std::vector<int64_t>& shape = t.shape();
  const std::vector<int64_t>& strides = t.strides();
  const int64_t numel = t.numel();
  std::vector<int64_t> index(shape.size(), 0);
  const auto* base = static_cast<const uint8_t*>(t.data());
  for (int64_t n = 0; n < numel; ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
    w.raw(base + offset * static_cast<int64_t>(elem), elem);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

void write_value(Writer& w, const Value& v) {
  w.u8(static_cast<uint8_t>(v.kind()));
  switch (v.kind()) {
    case ValueKind::kNone: break;
    case ValueKind::kTensor: {
      const Tensor& t = v.tensor_or_die();
      RELAX_CHECK(t.device().type == Device::Type::kCPU) << "constant tensors live on the host";
      w.dtype(t.dtype());
      w.count(t.shape().size());
      for (int64_t d : t.shape()) w.i64(d);
      w.u64(t.nbytes());
      write_tensor_bytes(w, t);
      break;
    }
    case ValueKind::kShape:
      w.count(v.shape_dims_or_die().size());
      for (int64_t d : v.shape_dims_or_die()) w.i64(d);
      break;
    case ValueKind::kInt: w.i64(v.int_value_or_die()); break;
    case ValueKind::kFloat: w.f64(v.float_value_or_die()); break;
    case ValueKind::kString: w.str(v.string_value_or_die()); break;
    case ValueKind::kTuple:
      w.count(v.fields_or_die().size());
      for (const Value& f : v.fields_or_die()) write_value(w, f);
      break;
  }
}

void write_pattern(Writer& w, const ValuePattern& p) {
  w.u8(static_cast<uint8_t>(p.kind));
  w.u8(p.dtype.has_value() ? 1 : 0);
  w.dtype(p.dtype.value_or(DataType()));
  w.i32(p.ndim);
  w.count(p.dims.size());
  for (const DimPattern& d : p.dims) {
    w.u8(static_cast<uint8_t>(d.rule));
    w.i32(d.slot);
    w.i64(d.coeff);
    w.i32(d.expr);
    w.str(d.text);
  }
  w.count(p.fields.size());
  for (const ValuePattern& f : p.fields) write_pattern(w, f);
}

void write_function(Writer& w, const VMFunction& fn) {
  w.str(fn.name);
  w.count(fn.param_names.size());
  for (const std::string& s : fn.param_names) w.str(s);
  w.i32(fn.num_registers);
  w.count(fn.slot_names.size());
  for (const std::string& s : fn.slot_names) w.str(s);
  w.count(fn.exprs.size());
  for (const SymProgram& e : fn.exprs) {
    w.count(e.code.size());
    for (const SymInstr& instr : e.code) {
      w.u8(static_cast<uint8_t>(instr.op));
      w.i64(instr.operand);
    }
    w.str(e.text);
  }
  w.count(fn.patterns.size());
  for (const ValuePattern& p : fn.patterns) write_pattern(w, p);
  w.count(fn.matches.size());
  for (const MatchGroup& g : fn.matches) {
    w.u8(g.checked ? 1 : 0);
    w.count(g.items.size());
    for (const MatchItem& item : g.items) {
      w.i32(item.reg);
      w.i32(item.pattern);
      w.str(item.what);
    }
    w.count(g.upper_bounds.size());
    for (const SlotBound& b : g.upper_bounds) {
      w.i32(b.slot);
      w.i64(b.upper);
    }
  }
  w.count(fn.code.size());
  for (const Instruction& ins : fn.code) {
    w.u8(static_cast<uint8_t>(ins.op));
    w.i32(ins.dst);
    w.i64(ins.index);
    w.dtype(ins.dtype);
    w.count(ins.operands.size());
    for (const Operand& op : ins.operands) {
      w.u8(static_cast<uint8_t>(op.kind));
      w.i64(op.value);
    }
  }
}

// ---------------------------------------------------------------------------
// Reading.

// The fewest bytes one entry of each list takes, to bound counts by the bytes left.
constexpr size_t kMinValue = 1;
constexpr size_t kMinString = 4;
constexpr size_t kMinI64 = 8;
constexpr size_t kMinSymInstr = 1 + 8;
constexpr size_t kMinExpr = 4 + 4;
constexpr size_t kMinDim = 1 + 4 + 8 + 4 + 4;
constexpr size_t kMinPattern = 1 + 1 + 4 + 4 + 4 + 4;
constexpr size_t kMinMatch = 1 + 4 + 4;
constexpr size_t kMinItem = 4 + 4 + 4;
constexpr size_t kMinBound = 4 + 8;
constexpr size_t kMinInstruction = 1 + 4 + 8 + 4 + 4;
constexpr size_t kMinOperand = 1 + 8;
constexpr size_t kMinFunction = 8 * 4;

#define RELAX_TRY(expr)                            \
  do {                                             \
    if (absl::Status try_status_ = (expr); !try_status_.ok()) return try_status_; \
  } while (false)

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> payload) : bytes_(payload) {}

  /// The absolute byte offset in the blob of the next read.
  size_t offset() const { return kHeaderSize + pos_; }
  size_t left() const { return bytes_.size() - pos_; }
  bool at_end() const { return pos_ == bytes_.size(); }

  /// Names the entry being read in messages ("function 0 (main): instruction 3").
  void set_where(std::string where) { where_ = std::move(where); }

  absl::Status invalid(size_t at, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("Executable::deserialize: at byte ", at, ": ",
                                                   where_, where_.empty() ? "" : ": ", what));
  }

  absl::Status u8(uint8_t* v, const char* what) {
    RELAX_TRY(need(1, what));
    *v = bytes_[pos_++];
    return absl::OkStatus();
  }
  absl::Status u16(uint16_t* v, const char* what) {
    uint64_t x = 0;
    RELAX_TRY(le(&x, 2, what));
    *v = static_cast<uint16_t>(x);
    return absl::OkStatus();
  }
  absl::Status u32(uint32_t* v, const char* what) {
    uint64_t x = 0;
    RELAX_TRY(le(&x, 4, what));
    *v = static_cast<uint32_t>(x);
    return absl::OkStatus();
  }
  absl::Status u64(uint64_t* v, const char* what) { return le(v, 8, what); }
  absl::Status i32(int32_t* v, const char* what) {
    uint32_t x = 0;
    RELAX_TRY(u32(&x, what));
    *v = static_cast<int32_t>(x);
    return absl::OkStatus();
  }
  absl::Status i64(int64_t* v, const char* what) {
    uint64_t x = 0;
    RELAX_TRY(le(&x, 8, what));
    *v = static_cast<int64_t>(x);
    return absl::OkStatus();
  }
  absl::Status f64(double* v, const char* what) {
    uint64_t bits = 0;
    RELAX_TRY(le(&bits, 8, what));
    std::memcpy(v, &bits, sizeof bits);
    return absl::OkStatus();
  }
  absl::Status flag(bool* v, const char* what) {
    const size_t at = offset();
    uint8_t x = 0;
    RELAX_TRY(u8(&x, what));
    if (x > 1) return invalid(at, absl::StrCat(what, " is ", x, ", not 0 or 1"));
    *v = x == 1;
    return absl::OkStatus();
  }
  /// A u8 that must be at most `max` (the last enumerator).
  absl::Status enumerator(uint8_t* v, uint8_t max, const char* what) {
    const size_t at = offset();
    RELAX_TRY(u8(v, what));
    if (*v > max) {
      return invalid(at, absl::StrCat(what, " ", *v, " is out of range (at most ", max, ")"));
    }
    return absl::OkStatus();
  }
  /// A list length whose entries take at least `min_entry` bytes each.
  absl::Status count(uint32_t* n, size_t min_entry, const char* what) {
    const size_t at = offset();
    RELAX_TRY(u32(n, what));
    if (static_cast<uint64_t>(*n) * min_entry > left()) {
      return absl::DataLossError(absl::StrCat(
          "Executable::deserialize: at byte ", at, ": ", where_, where_.empty() ? "" : ": ", *n, " ",
          what, " cannot fit in the ", left(), " bytes left (truncated or corrupt)"));
    }
    return absl::OkStatus();
  }
  absl::Status str(std::string* s, const char* what) {
    uint32_t n = 0;
    RELAX_TRY(count(&n, 1, what));
    s->assign(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return absl::OkStatus();
  }
  absl::Status raw(void* out, size_t n, const char* what) {
    RELAX_TRY(need(n, what));
    if (n > 0) std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
    return absl::OkStatus();
  }
  /// A DataType as stored, unchecked.
  absl::Status raw_dtype(DataType* t, const char* what) {
    uint8_t code = 0;
    RELAX_TRY(u8(&code, what));
    RELAX_TRY(u8(&t->bits, what));
    RELAX_TRY(u16(&t->lanes, what));
    t->code = static_cast<DataType::Code>(code);
    return absl::OkStatus();
  }
  absl::Status dtype(DataType* t, const char* what) {
    const size_t at = offset();
    RELAX_TRY(raw_dtype(t, what));
    if (std::string e = program_check::check_data_type(*t); !e.empty()) {
      return invalid(at, absl::StrCat(what, ": ", e));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status need(size_t n, const char* what) const {
    if (left() >= n) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("Executable::deserialize: truncated at byte ", offset(),
                                            ": ", where_, where_.empty() ? "" : ": ", what, " needs ",
                                            n, " bytes, ", left(), " left"));
  }
  absl::Status le(uint64_t* v, int n, const char* what) {
    RELAX_TRY(need(static_cast<size_t>(n), what));
    uint64_t x = 0;
    for (int i = 0; i < n; ++i) x |= static_cast<uint64_t>(bytes_[pos_ + static_cast<size_t>(i)]) << (8 * i);
    pos_ += static_cast<size_t>(n);
    *v = x;
    return absl::OkStatus();
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  std::string where_;
};

absl::Status read_value(Reader& r, Value* out, int depth) {
  const size_t at = r.offset();
  if (depth >= Executable::kMaxNesting) {
    return r.invalid(at, absl::StrCat("tuples nested deeper than ", Executable::kMaxNesting));
  }
  uint8_t kind = 0;
  RELAX_TRY(r.enumerator(&kind, static_cast<uint8_t>(ValueKind::kTuple), "value kind"));
  switch (static_cast<ValueKind>(kind)) {
    case ValueKind::kNone: *out = Value(); return absl::OkStatus();
    case ValueKind::kTensor: {
      DataType dtype;
      RELAX_TRY(r.dtype(&dtype, "tensor dtype"));
      uint32_t ndim = 0;
      RELAX_TRY(r.count(&ndim, kMinI64, "tensor dims"));
      std::vector<int64_t> shape(ndim);
      int64_t numel = 1;
      for (uint32_t i = 0; i < ndim; ++i) {
        const size_t dim_at = r.offset();
        RELAX_TRY(r.i64(&shape[i], "tensor dim"));
        if (shape[i] < 0) return r.invalid(dim_at, absl::StrCat("tensor dim ", i, " is negative (", shape[i], ")"));
        if (__builtin_mul_overflow(numel, shape[i], &numel)) {
          return r.invalid(dim_at, "the tensor's element count overflows int64");
        }
      }
      const size_t bytes_at = r.offset();
      uint64_t nbytes = 0;
      RELAX_TRY(r.u64(&nbytes, "tensor byte count"));
      const uint64_t elem = (static_cast<uint64_t>(dtype.bits) * dtype.lanes + 7) / 8;
      uint64_t expected = 0;
      if (__builtin_mul_overflow(static_cast<uint64_t>(numel), elem, &expected) || nbytes != expected) {
        return r.invalid(bytes_at, absl::StrCat("tensor byte count ", nbytes, " does not match ", numel,
                                                " elements of ", dtype.to_string()));
      }
      if (nbytes > r.left()) {
        return absl::DataLossError(absl::StrCat("Executable::deserialize: truncated at byte ", r.offset(),
                                                ": tensor data needs ", nbytes, " bytes, ", r.left(), " left"));
      }
      absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype);
      if (!t.ok()) return r.invalid(bytes_at, std::string(t.status().message()));
      RELAX_TRY(r.raw(t->data(), nbytes, "tensor data"));
      *out = Value(*std::move(t));
      return absl::OkStatus();
    }
    case ValueKind::kShape: {
      uint32_t n = 0;
      RELAX_TRY(r.count(&n, kMinI64, "shape dims"));
      std::vector<int64_t> dims(n);
      for (uint32_t i = 0; i < n; ++i) RELAX_TRY(r.i64(&dims[i], "shape dim"));
      *out = Value::shape(std::move(dims));
      return absl::OkStatus();
    }
    case ValueKind::kInt: {
      int64_t v = 0;
      RELAX_TRY(r.i64(&v, "int value"));
      *out = Value(v);
      return absl::OkStatus();
    }
    case ValueKind::kFloat: {
      double v = 0;
      RELAX_TRY(r.f64(&v, "float value"));
      *out = Value(v);
      return absl::OkStatus();
    }
    case ValueKind::kString: {
      std::string s;
      RELAX_TRY(r.str(&s, "string value"));
      *out = Value(std::move(s));
      return absl::OkStatus();
    }
    case ValueKind::kTuple: {
      uint32_t n = 0;
      RELAX_TRY(r.count(&n, kMinValue, "tuple fields"));
      std::vector<Value> fields(n);
      for (uint32_t i = 0; i < n; ++i) RELAX_TRY(read_value(r, &fields[i], depth + 1));
      *out = Value::tuple(std::move(fields));
      return absl::OkStatus();
    }
  }
  return r.invalid(at, "unreachable value kind");
}

absl::Status read_pattern(Reader& r, ValuePattern* p, int depth) {
  const size_t at = r.offset();
  if (depth >= Executable::kMaxNesting) {
    return r.invalid(at, absl::StrCat("tuple patterns nested deeper than ", Executable::kMaxNesting));
  }
  uint8_t kind = 0;
  RELAX_TRY(r.enumerator(&kind, static_cast<uint8_t>(PatternKind::kFunc), "pattern kind"));
  p->kind = static_cast<PatternKind>(kind);
  bool has_dtype = false;
  RELAX_TRY(r.flag(&has_dtype, "pattern dtype flag"));
  DataType dtype;
  if (has_dtype) {
    RELAX_TRY(r.dtype(&dtype, "pattern dtype"));
    p->dtype = dtype;
  } else {
    uint32_t unused = 0;  // the dtype's place, written as DataType() and not read
    RELAX_TRY(r.u32(&unused, "pattern dtype"));
  }
  RELAX_TRY(r.i32(&p->ndim, "pattern rank"));
  uint32_t ndims = 0;
  RELAX_TRY(r.count(&ndims, kMinDim, "pattern dims"));
  p->dims.resize(ndims);
  for (DimPattern& d : p->dims) {
    uint8_t rule = 0;
    RELAX_TRY(r.enumerator(&rule, static_cast<uint8_t>(DimRule::kCheck), "dim rule"));
    d.rule = static_cast<DimRule>(rule);
    RELAX_TRY(r.i32(&d.slot, "dim slot"));
    RELAX_TRY(r.i64(&d.coeff, "dim coefficient"));
    RELAX_TRY(r.i32(&d.expr, "dim expr"));
    RELAX_TRY(r.str(&d.text, "dim text"));
  }
  uint32_t nfields = 0;
  RELAX_TRY(r.count(&nfields, kMinPattern, "pattern fields"));
  p->fields.resize(nfields);
  for (ValuePattern& f : p->fields) RELAX_TRY(read_pattern(r, &f, depth + 1));
  return absl::OkStatus();
}

absl::Status read_function(Reader& r, VMFunction* fn, size_t index,
                           const program_check::TableSizes& tables, std::set<std::string>& names) {
  using namespace program_check;  // NOLINT(google-build-using-namespace)
  const size_t start = r.offset();
  r.set_where(absl::StrCat("function ", index));
  RELAX_TRY(r.str(&fn->name, "function name"));
  const std::string where = absl::StrCat("function ", index, " (", fn->name, ")");
  r.set_where(where);
  if (!names.insert(fn->name).second) return r.invalid(start, "a second function of this name");
  uint32_t n = 0;
  RELAX_TRY(r.count(&n, kMinString, "parameter names"));
  fn->param_names.resize(n);
  for (std::string& s : fn->param_names) RELAX_TRY(r.str(&s, "parameter name"));
  const size_t regs_at = r.offset();
  RELAX_TRY(r.i32(&fn->num_registers, "register count"));
  if (std::string e = check_function_header(*fn); !e.empty()) return r.invalid(regs_at, e);

  RELAX_TRY(r.count(&n, kMinString, "slot names"));
  fn->slot_names.resize(n);
  for (std::string& s : fn->slot_names) RELAX_TRY(r.str(&s, "slot name"));

  RELAX_TRY(r.count(&n, kMinExpr, "exprs"));
  fn->exprs.resize(n);
  for (size_t i = 0; i < fn->exprs.size(); ++i) {
    SymProgram& e = fn->exprs[i];
    const size_t at = r.offset();
    r.set_where(absl::StrCat(where, ": expr ", i));
    uint32_t len = 0;
    RELAX_TRY(r.count(&len, kMinSymInstr, "symbolic instructions"));
    e.code.resize(len);
    for (SymInstr& instr : e.code) {
      uint8_t op = 0;
      RELAX_TRY(r.enumerator(&op, static_cast<uint8_t>(SymOp::kSelect), "symbolic op"));
      instr.op = static_cast<SymOp>(op);
      RELAX_TRY(r.i64(&instr.operand, "symbolic operand"));
    }
    RELAX_TRY(r.str(&e.text, "expr text"));
    r.set_where(absl::StrCat(where, ": expr ", i, " (", e.text, ")"));
    if (std::string err = check_sym_program(e, fn->slot_names.size()); !err.empty()) {
      return r.invalid(at, err);
    }
  }

  r.set_where(where);
  RELAX_TRY(r.count(&n, kMinPattern, "patterns"));
  fn->patterns.resize(n);
  for (size_t i = 0; i < fn->patterns.size(); ++i) {
    const size_t at = r.offset();
    r.set_where(absl::StrCat(where, ": pattern ", i));
    RELAX_TRY(read_pattern(r, &fn->patterns[i], 0));
    if (std::string e = check_pattern(fn->patterns[i], *fn); !e.empty()) return r.invalid(at, e);
  }

  r.set_where(where);
  RELAX_TRY(r.count(&n, kMinMatch, "match groups"));
  fn->matches.resize(n);
  for (size_t i = 0; i < fn->matches.size(); ++i) {
    MatchGroup& g = fn->matches[i];
    const size_t at = r.offset();
    r.set_where(absl::StrCat(where, ": match group ", i));
    RELAX_TRY(r.flag(&g.checked, "checked flag"));
    uint32_t items = 0;
    RELAX_TRY(r.count(&items, kMinItem, "match items"));
    g.items.resize(items);
    for (MatchItem& item : g.items) {
      RELAX_TRY(r.i32(&item.reg, "match register"));
      RELAX_TRY(r.i32(&item.pattern, "match pattern"));
      RELAX_TRY(r.str(&item.what, "match description"));
    }
    uint32_t bounds = 0;
    RELAX_TRY(r.count(&bounds, kMinBound, "upper bounds"));
    g.upper_bounds.resize(bounds);
    for (SlotBound& b : g.upper_bounds) {
      RELAX_TRY(r.i32(&b.slot, "bound slot"));
      RELAX_TRY(r.i64(&b.upper, "upper bound"));
    }
    if (std::string e = check_match_group(g, *fn); !e.empty()) return r.invalid(at, e);
  }

  r.set_where(where);
  RELAX_TRY(r.count(&n, kMinInstruction, "instructions"));
  fn->code.resize(n);
  for (size_t i = 0; i < fn->code.size(); ++i) {
    Instruction& ins = fn->code[i];
    const size_t at = r.offset();
    r.set_where(absl::StrCat(where, ": instruction ", i));
    uint8_t op = 0;
    RELAX_TRY(r.enumerator(&op, static_cast<uint8_t>(Opcode::kView), "opcode"));
    ins.op = static_cast<Opcode>(op);
    r.set_where(absl::StrCat(where, ": instruction ", i, " (", opcode_name(ins.op), ")"));
    RELAX_TRY(r.i32(&ins.dst, "destination register"));
    RELAX_TRY(r.i64(&ins.index, "instruction index"));
    RELAX_TRY(r.raw_dtype(&ins.dtype, "instruction dtype"));  // checked with the instruction
    uint32_t nops = 0;
    RELAX_TRY(r.count(&nops, kMinOperand, "operands"));
    ins.operands.resize(nops);
    for (Operand& o : ins.operands) {
      uint8_t kind = 0;
      RELAX_TRY(r.enumerator(&kind, static_cast<uint8_t>(Operand::Kind::kImm), "operand kind"));
      o.kind = static_cast<Operand::Kind>(kind);
      RELAX_TRY(r.i64(&o.value, "operand value"));
    }
    if (std::string e = check_instruction(ins, *fn, fn->code.size(), tables); !e.empty()) {
      return r.invalid(at, e);
    }
  }
  r.set_where(where);
  if (std::string e = check_code_end(*fn); !e.empty()) return r.invalid(start, e);
  return absl::OkStatus();
}

}  // namespace

std::vector<uint8_t> Executable::serialize() const {
  Writer payload;
  payload.count(constants.size());
  for (const Value& v : constants) write_value(payload, v);
  payload.count(kernel_names.size());
  for (const std::string& s : kernel_names) payload.str(s);
  payload.count(library_functions.size());
  for (const std::string& s : library_functions) payload.str(s);
  payload.count(builtin_functions.size());
  for (const std::string& s : builtin_functions) payload.str(s);
  payload.count(functions.size());
  for (const VMFunction& fn : functions) write_function(payload, fn);
  payload.u8(static_cast<uint8_t>(device.type));
  payload.i32(device.index);

  Writer blob;
  blob.raw(kMagic, sizeof kMagic);
  blob.u32(kFormatVersion);
  blob.u64(payload.bytes().size());
  blob.u64(fnv1a64(payload.bytes()));
  blob.bytes().insert(blob.bytes().end(), payload.bytes().begin(), payload.bytes().end());
  return std::move(blob.bytes());
}

absl::StatusOr<Executable> Executable::deserialize(std::span<const uint8_t> bytes) {
  const std::string prefix = "Executable::deserialize: ";
  for (size_t i = 0; i < sizeof kMagic && i < bytes.size(); ++i) {
    if (bytes[i] != static_cast<uint8_t>(kMagic[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, "not a relax executable: byte ", i, " differs from the magic \"RLXEXEC\""));
    }
  }
  if (bytes.size() < kHeaderSize) {
    return absl::DataLossError(absl::StrCat(prefix, "truncated at byte ", bytes.size(),
                                            ": the header needs ", kHeaderSize, " bytes"));
  }
  auto le = [&](size_t at, int n) {
    uint64_t x = 0;
    for (int i = 0; i < n; ++i) x |= static_cast<uint64_t>(bytes[at + static_cast<size_t>(i)]) << (8 * i);
    return x;
  };
  const uint64_t version = le(8, 4);
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, "at byte 8: format version ", version,
                                                   " is not supported (this runtime reads versions ",
                                                   kOldestFormatVersion, " to ", kFormatVersion,
                                                   "; rebuild the executable with this relax)"));
  }
  const uint64_t size = le(12, 8);
  const uint64_t stored_sum = le(20, 8);
  const std::span<const uint8_t> payload = bytes.subspan(kHeaderSize);
  if (size != payload.size()) {
    return absl::DataLossError(absl::StrCat(
        prefix, "at byte 12: the header gives a payload of ", size, " bytes but ", payload.size(),
        size > payload.size() ? " follow it (truncated)" : " follow it (trailing bytes)"));
  }
  const uint64_t sum = fnv1a64(payload);
  if (sum != stored_sum) {
    return absl::DataLossError(absl::StrFormat(
        "%sat byte 20: checksum mismatch (stored %016x, payload hashes to %016x): the data is corrupt",
        prefix, stored_sum, sum));
  }

  Reader r(payload);
  Executable exec;
  uint32_t n = 0;
  RELAX_TRY(r.count(&n, kMinValue, "constants"));
  exec.constants.resize(n);
  for (size_t i = 0; i < exec.constants.size(); ++i) {
    const size_t at = r.offset();
    r.set_where(absl::StrCat("constant ", i));
    RELAX_TRY(read_value(r, &exec.constants[i], 0));
    if (std::string e = program_check::check_constant(exec.constants[i]); !e.empty()) {
      return r.invalid(at, e);
    }
  }
  r.set_where("");
  RELAX_TRY(r.count(&n, kMinString, "kernel names"));
  exec.kernel_names.resize(n);
  for (std::string& s : exec.kernel_names) RELAX_TRY(r.str(&s, "kernel name"));
  RELAX_TRY(r.count(&n, kMinString, "library function names"));
  exec.library_functions.resize(n);
  for (std::string& s : exec.library_functions) RELAX_TRY(r.str(&s, "library function name"));
  RELAX_TRY(r.count(&n, kMinString, "builtin names"));
  exec.builtin_functions.resize(n);
  for (std::string& s : exec.builtin_functions) RELAX_TRY(r.str(&s, "builtin name"));
  RELAX_TRY(r.count(&n, kMinFunction, "functions"));
  exec.functions.resize(n);
  const program_check::TableSizes tables{exec.functions.size(), exec.kernel_names.size(),
                                         exec.library_functions.size(),
                                         exec.builtin_functions.size(), exec.constants.size(),
                                         &exec.constants};
  std::set<std::string> names;
  for (size_t i = 0; i < exec.functions.size(); ++i) {
    RELAX_TRY(read_function(r, &exec.functions[i], i, tables, names));
  }
  r.set_where("");
  if (version >= 5) {
    const size_t at = r.offset();
    uint8_t type = 0;
    RELAX_TRY(r.u8(&type, "device type"));
    RELAX_TRY(r.i32(&exec.device.index, "device index"));
    exec.device.type = static_cast<Device::Type>(type);
    if (std::string e = program_check::check_device(exec.device); !e.empty()) return r.invalid(at, e);
  }
  if (!r.at_end()) {
    return r.invalid(r.offset(), absl::StrCat(r.left(), " bytes follow the end of the executable"));
  }
  // Every entry was checked as it was read; the whole program must pass too.
  RELAX_TRY(exec.validate());
  return exec;
}

}  // namespace relax::runtime
