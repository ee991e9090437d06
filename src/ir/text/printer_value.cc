// The printer of the IR text format: annotations, attributes, constants and
// scalar expressions.
//
// Scalar expressions print through SymExpr::to_string. When the Namer gives a
// variable or buffer another name than its own (two variables called `n` in
// one function), the expression is first rebuilt over variables and buffers
// that carry the printed names; that copy exists only to be printed.
//
// Annotations follow StructInfo::to_string's form exactly, with dims printed
// through the same renaming. Constant elements print in the shortest decimal
// that reads back to the same bits; what cannot (other dtypes, NaN payloads,
// bools other than 0 and 1) prints as the hex of the bytes.
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <variant>

#include "absl/strings/str_format.h"
#include "ir/text/printer_impl.h"
#include "relax/runtime/tensor.h"
#include "ir/text/text_format.h"
#include "relax/support/float_format.h"

namespace relax::text {
namespace {

// The elements of a host tensor as compact row-major bytes.
std::vector<uint8_t> compact_bytes(const runtime::Tensor& t) {
  const size_t elem = t.element_bytes();
  std::vector<uint8_t> out(t.nbytes());
  if (out.empty()) return out;
  const auto* base = static_cast<const uint8_t*>(t.data());
  if (t.is_contiguous() || t.dtype().bits % 8 != 0) {
    std::memcpy(out.data(), base, out.size());
    return out;
  }
  const auto& shape = t.shape();
  const auto& strides = t.strides();
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t n = 0; n * elem < out.size(); ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
    std::memcpy(out.data() + n * elem, base + offset * static_cast<int64_t>(elem), elem);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// The shortest general-format decimal of `v` that `fits` accepts as reading back
// (17 significant digits always do).
template <typename Fits>
std::string shortest(double v, Fits&& fits) {
  std::string best;
  for (int precision = 1; precision <= 17; ++precision) {
    char buf[64];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, precision);
    if (ec != std::errc()) continue;
    std::string s(buf, ptr);
    if ((best.empty() || s.size() < best.size()) && fits(s)) best = std::move(s);
  }
  return best;
}

std::string special(double v) {
  if (std::isnan(v)) return "nan";
  return v < 0 ? "-inf" : "inf";
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// One element as text, or "" when it cannot be written as a number that reads back.
std::string element_text(DataType t, const uint8_t* p) {
  switch (t.code) {
    case DataType::Code::kBool: {
      const uint8_t b = *p;
      return b == 0 ? "false" : b == 1 ? "true" : "";
    }
    case DataType::Code::kInt:
      switch (t.bits) {
        case 8: return std::to_string(load<int8_t>(p));
        case 16: return std::to_string(load<int16_t>(p));
        case 32: return std::to_string(load<int32_t>(p));
        case 64: return std::to_string(load<int64_t>(p));
      }
      return "";
    case DataType::Code::kUInt:
      switch (t.bits) {
        case 8: return std::to_string(load<uint8_t>(p));
        case 16: return std::to_string(load<uint16_t>(p));
        case 32: return std::to_string(load<uint32_t>(p));
        case 64: return std::to_string(load<uint64_t>(p));
      }
      return "";
    case DataType::Code::kFloat:
      if (t.bits == 32) {
        const auto f = load<float>(p);
        if (std::isnan(f)) {
          const float canonical = std::numeric_limits<float>::quiet_NaN();
          return std::memcmp(&f, &canonical, sizeof f) == 0 ? "nan" : "";
        }
        if (std::isinf(f)) return special(f);
        char buf[64];
        auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), f);
        return ec == std::errc() ? std::string(buf, ptr) : "";
      }
      if (t.bits == 64) {
        const auto d = load<double>(p);
        if (std::isnan(d)) {
          const double canonical = std::numeric_limits<double>::quiet_NaN();
          return std::memcmp(&d, &canonical, sizeof d) == 0 ? "nan" : "";
        }
        if (std::isinf(d)) return special(d);
        char buf[64];
        auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), d);
        return ec == std::errc() ? std::string(buf, ptr) : "";
      }
      [[fallthrough]];
    case DataType::Code::kBFloat: {
      if (t.bits != 16) return "";
      const bool bf = t.code == DataType::Code::kBFloat;
      const auto bits = load<uint16_t>(p);
      const double v = bf ? bfloat16_value(bits) : float16_value(bits);
      const uint16_t back = bf ? bfloat16_bits(v) : float16_bits(v);
      if (back != bits) return "";  // a NaN with a payload or sign
      if (std::isnan(v) || std::isinf(v)) return special(v);
      return shortest(v, [&](const std::string& s) {
        double r = 0;
        std::from_chars(s.data(), s.data() + s.size(), r);
        return (bf ? bfloat16_bits(r) : float16_bits(r)) == bits;
      });
    }
    case DataType::Code::kHandle:
      return "";
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------
// Scalar expressions.

// Names every variable and buffer of `e`; true when one prints under another name.
bool Printer::name_all(const SymExpr& e) {
  const SymExprNode& node = *e;
  bool differs = false;
  if (node.kind() == SymKind::kVar) {
    differs = namer_.sym(SymVar::from_expr(e)) != node.name();
  } else if (node.kind() == SymKind::kBufferLoad) {
    differs = namer_.buffer(node.buffer_node()) != node.buffer_node()->name;
  }
  for (size_t i = 0; i < node.num_operands(); ++i) differs = name_all(node.operand(i)) || differs;
  return differs;
}

SymExpr Printer::renamed(const SymExpr& e) {
  const SymExprNode& node = *e;
  if (node.kind() == SymKind::kVar) {
    const SymVar var = SymVar::from_expr(e);
    const std::string& name = namer_.sym(var);
    if (name == var.name()) return e;
    auto it = renamed_vars_.find(var.id());
    if (it == renamed_vars_.end()) it = renamed_vars_.emplace(var.id(), SymVar(name, var.dtype())).first;
    return it->second;
  }
  if (node.num_operands() == 0) return e;
  std::vector<SymExpr> operands;
  operands.reserve(node.num_operands());
  for (size_t i = 0; i < node.num_operands(); ++i) operands.push_back(renamed(node.operand(i)));
  if (node.kind() == SymKind::kBufferLoad) {
    const BufferNode* b = node.buffer_node();
    const std::string& name = namer_.buffer(b);
    if (name != b->name) {
      auto it = renamed_buffers_.find(b);
      if (it == renamed_buffers_.end()) {
        it = renamed_buffers_.emplace(b, Buffer(name, b->dtype, b->shape, b->strides, b->scope)).first;
      }
      return buffer_load(it->second, std::move(operands));
    }
  }
  return e.with_operands(std::move(operands));
}

std::string Printer::sym(const SymExpr& e) {
  if (!e.defined()) return "<undefined>";
  return name_all(e) ? renamed(e).to_string() : e.to_string();
}

std::string Printer::dims(const std::vector<SymExpr>& values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) out += (i > 0 ? ", " : "") + sym(values[i]);
  return out + (values.size() == 1 ? ",)" : ")");
}

// ---------------------------------------------------------------------------
// Annotations.

std::string Printer::sinfo(const StructInfo& s) {
  if (!s.defined()) return "<undefined>";
  switch (s.kind()) {
    case StructInfoKind::kObject:
      return "Object";
    case StructInfoKind::kPrim: {
      const auto* p = s.as<PrimStructInfoNode>();
      std::string out = "Prim[" + p->dtype.to_string();
      if (p->value.defined()) out += ", " + sym(p->value);
      return out + "]";
    }
    case StructInfoKind::kShape: {
      const auto* sh = s.as<ShapeStructInfoNode>();
      if (sh->values) return "Shape[" + dims(*sh->values) + "]";
      if (sh->ndim == kUnknownNDim) return "Shape[]";
      return "Shape[ndim=" + std::to_string(sh->ndim) + "]";
    }
    case StructInfoKind::kTensor: {
      const auto* t = s.as<TensorStructInfoNode>();
      std::string out = "Tensor[";
      if (t->shape) {
        out += dims(*t->shape);
      } else {
        out += t->ndim == kUnknownNDim ? "ndim=?" : "ndim=" + std::to_string(t->ndim);
      }
      out += ", " + (t->dtype ? t->dtype->to_string() : std::string("?"));
      if (t->device.type != Device::Type::kUnknown) out += ", " + t->device.to_string();
      return out + "]";
    }
    case StructInfoKind::kTuple: {
      const auto& fields = s.as<TupleStructInfoNode>()->fields;
      std::string out = "Tuple[(";
      for (size_t i = 0; i < fields.size(); ++i) out += (i > 0 ? ", " : "") + sinfo(fields[i]);
      return out + (fields.size() == 1 ? ",)]" : ")]");
    }
    case StructInfoKind::kFunc: {
      const auto* f = s.as<FuncStructInfoNode>();
      std::string out = "Func[";
      if (f->params) {
        out += "(";
        for (size_t i = 0; i < f->params->size(); ++i) {
          out += (i > 0 ? ", " : "") + sinfo((*f->params)[i]);
        }
        out += ")";
      } else {
        out += "opaque";
      }
      out += " -> " + sinfo(f->ret);
      if (!f->pure) out += ", impure";
      return out + "]";
    }
  }
  return "<undefined>";
}

// ---------------------------------------------------------------------------
// Attributes.

std::string Printer::attr_value(const AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return format_double(*d);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&v)) return quote(*s);
  if (const auto* t = std::get_if<DataType>(&v)) return t->to_string();
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&v)) {
    std::string out = "[";
    for (size_t i = 0; i < ints->size(); ++i) out += (i > 0 ? ", " : "") + std::to_string((*ints)[i]);
    return out + "]";
  }
  const auto& syms = std::get<std::vector<SymExpr>>(v);
  std::string out = "sym[";
  for (size_t i = 0; i < syms.size(); ++i) out += (i > 0 ? ", " : "") + sym(syms[i]);
  return out + "]";
}

void Printer::attrs_clause(const Attrs& attrs) {
  if (attrs.empty()) return;
  put(" attrs {");
  bool first = true;
  for (const auto& [key, value] : attrs) {
    if (!first) put(", ");
    first = false;
    put(name_or_quoted(key) + " = " + attr_value(value));
  }
  put("}");
}

// ---------------------------------------------------------------------------
// Constants.

void Printer::constant(const ConstantNode& c) {
  const runtime::Tensor& t = c.data;
  if (!t.defined()) {
    put("const(<undefined>)");
    return;
  }
  std::vector<SymExpr> shape;
  for (int64_t d : t.shape()) shape.push_back(SymExpr(d));
  put("const(" + t.dtype().to_string() + ", " + dims(shape) + ", ");
  if (options_.max_constant_elements >= 0 && t.numel() > options_.max_constant_elements) {
    put("...)");
    return;
  }
  if (t.device().type != Device::Type::kCPU) {
    // Only host memory can be read here; the parser rejects this form.
    put("device " + quote(t.device().to_string()) + ")");
    return;
  }
  const std::vector<uint8_t> bytes = compact_bytes(t);
  const size_t elem = t.element_bytes();
  std::string values = "[";
  bool exact = t.dtype().lanes == 1 && elem > 0 && t.dtype().bits % 8 == 0;
  for (size_t off = 0; exact && off < bytes.size(); off += elem) {
    const std::string item = element_text(t.dtype(), bytes.data() + off);
    if (item.empty()) exact = false;
    values += (off > 0 ? ", " : "") + item;
  }
  if (exact) {
    put(values + "])");
    return;
  }
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) hex += absl::StrFormat("%02x", b);
  put("bytes \"" + hex + "\")");
}

}  // namespace relax::text
