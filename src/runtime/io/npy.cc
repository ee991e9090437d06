// .npy reading and writing (relax/runtime/npy.h).
//
// Reading checks, in the order of the file: the magic, the version, the header length, the
// header dict (a small recursive-descent reader for the literal subset numpy writes: string
// keys, a string descr, True/False, a tuple of non-negative integers), the dtype, and the data
// size against the shape. Every check fails with "<name>: <what>: expected ..., got ...": the
// file is outside input, so nothing here may abort or read past the bytes it was given.
//
// Writing follows numpy.lib.format._write_array_header byte for byte: the sorted dict, the
// spaces numpy reserves after it so that a shape can grow in place (it pads the header as if
// the first dim had 21 digits), then spaces and a newline up to the next multiple of 64.
#include "tensor_compact.h"
#include "relax/runtime/npy.h"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace relax::runtime {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// Bytes of the magic, the two version bytes and (version 1.0) the header length.
constexpr size_t kMagicAndVersion = 8;
constexpr size_t kAlign = 64;
// numpy's GROWTH_AXIS_MAX_DIGITS: the header leaves room for a first dim of this many digits.
constexpr size_t kGrowthAxisDigits = 21;
// numpy's own limit (NPY_MAXDIMS in NumPy 2).
constexpr size_t kMaxDims = 64;

static_assert(std::endian::native == std::endian::little,
              "relax's .npy support assumes a little-endian host");

// absl here has its own string_view type, distinct from std::string_view.
absl::string_view sv(std::string_view s) { return {s.data(), s.size()}; }

std::string shape_repr(const std::vector<int64_t>& shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), shape.size() == 1 ? ",)" : ")");
}

// A printable rendering of file bytes for messages: at most `limit` bytes, non-printing ones
// as \xNN.
std::string quote_bytes(std::string_view bytes, size_t limit = 40) {
  std::string out = "\"";
  for (size_t i = 0; i < bytes.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    }
  }
  out += bytes.size() > limit ? "\"..." : "\"";
  return out;
}

uint64_t read_le(std::string_view bytes, size_t offset, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return v;
}

void append_le(std::string& out, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// ---------------------------------------------------------------------------
// The header dict.

struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

// Reads the dict literal of a header. Errors are InvalidArgument "header: ..." (the caller adds
// the file name).
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view text) : text_(text) {}

  absl::StatusOr<Header> read() {
    Header h;
    skip_space();
    if (!eat('{')) return expected("'{' opening the header dict");
    while (true) {
      skip_space();
      if (eat('}')) break;
      absl::StatusOr<std::string> key = read_string("a key");
      if (!key.ok()) return key.status();
      skip_space();
      if (!eat(':')) return expected(absl::StrCat("':' after the key '", *key, "'"));
      skip_space();
      absl::Status s = read_value(*key, h);
      if (!s.ok()) return s;
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat('}')) break;
      return expected("',' or '}' after a dict entry");
    }
    skip_space();
    if (pos_ != text_.size()) return expected("only spaces and a newline after the dict");
    if (!h.descr) return missing("descr");
    if (!h.fortran_order) return missing("fortran_order");
    if (!h.shape) return missing("shape");
    return h;
  }

 private:
  absl::Status read_value(const std::string& key, Header& h) {
    if (key == "descr") {
      if (h.descr) return duplicate(key);
      if (peek() == '[') {
        return absl::InvalidArgumentError(
            "header: descr is a list (a structured dtype); expected one of bool, int8-64, "
            "uint8-64, float16, float32, float64");
      }
      absl::StatusOr<std::string> s = read_string("the descr string");
      if (!s.ok()) return s.status();
      h.descr = *s;
      return absl::OkStatus();
    }
    if (key == "fortran_order") {
      if (h.fortran_order) return duplicate(key);
      if (eat_word("True")) {
        h.fortran_order = true;
      } else if (eat_word("False")) {
        h.fortran_order = false;
      } else {
        return expected("True or False for fortran_order");
      }
      return absl::OkStatus();
    }
    if (key == "shape") {
      if (h.shape) return duplicate(key);
      absl::StatusOr<std::vector<int64_t>> shape = read_shape();
      if (!shape.ok()) return shape.status();
      h.shape = *std::move(shape);
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "header: unexpected key '", key, "'; expected only 'descr', 'fortran_order' and 'shape'"));
  }

  // A Python tuple of non-negative integers: "()", "(3,)", "(2, 3)", "(2L, 3L)".
  absl::StatusOr<std::vector<int64_t>> read_shape() {
    if (!eat('(')) return expected("a tuple '(...)' for shape");
    std::vector<int64_t> dims;
    bool trailing_comma = false;
    while (true) {
      skip_space();
      if (eat(')')) break;
      if (!dims.empty() && !trailing_comma) return expected("',' or ')' in the shape tuple");
      if (dims.size() == kMaxDims) {
        return absl::InvalidArgumentError(
            absl::StrCat("header: the shape has more than ", kMaxDims, " dims"));
      }
      absl::StatusOr<int64_t> dim = read_dim(dims.size());
      if (!dim.ok()) return dim.status();
      dims.push_back(*dim);
      skip_space();
      trailing_comma = eat(',');
    }
    // In Python "(3)" is the integer 3, not a tuple; numpy rejects it too.
    if (dims.size() == 1 && !trailing_comma) {
      return absl::InvalidArgumentError(absl::StrCat("header: shape (", dims[0],
                                                     ") is not a tuple; expected (", dims[0],
                                                     ",)"));
    }
    return dims;
  }

  absl::StatusOr<int64_t> read_dim(size_t index) {
    if (pos_ < text_.size() && text_[pos_] == '-') {
      return absl::InvalidArgumentError(
          absl::StrCat("header: dim ", index, " of the shape is negative"));
    }
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("header: dim ", index, " of the shape does not fit in int64"));
      }
      ++pos_;
    }
    if (pos_ == start) return expected(absl::StrCat("an integer for dim ", index, " of the shape"));
    eat('L');  // Python 2 wrote long integers with a suffix
    return v;
  }

  // A string literal in single or double quotes, without escapes (numpy writes none).
  absl::StatusOr<std::string> read_string(std::string_view what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return expected(absl::StrCat("a quoted string for ", sv(what)));
    const size_t start = ++pos_;
    // A Python string literal cannot span lines.
    while (pos_ < text_.size() && text_[pos_] != quote && text_[pos_] != '\n') {
      if (text_[pos_] == '\\') return expected(absl::StrCat("a plain string for ", sv(what)));
      ++pos_;
    }
    if (pos_ == text_.size() || text_[pos_] == '\n') return expected(absl::StrCat("the closing quote of ", sv(what)));
    std::string s(text_.substr(start, pos_ - start));
    ++pos_;
    return s;
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool eat_word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  absl::Status expected(std::string_view what) const {
    const std::string_view rest = text_.substr(pos_);
    return absl::InvalidArgumentError(
        absl::StrCat("header: expected ", sv(what), " at byte ", pos_, " of the header dict, got ",
                     rest.empty() ? "its end" : quote_bytes(rest, 20)));
  }
  static absl::Status missing(std::string_view key) {
    return absl::InvalidArgumentError(absl::StrCat("header: the key '", sv(key), "' is missing"));
  }
  static absl::Status duplicate(std::string_view key) {
    return absl::InvalidArgumentError(absl::StrCat("header: the key '", sv(key), "' appears twice"));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// The dtype of a descr string ("<f4", "|b1", "=i8", ...).
absl::StatusOr<DataType> dtype_of_descr(std::string_view descr) {
  constexpr std::string_view kSupported =
      "expected a little-endian bool, int8-64, uint8-64, float16, float32 or float64";
  const auto unsupported = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported dtype ", quote_bytes(descr), "; ", sv(kSupported)));
  };
  if (descr.size() < 3) return unsupported();
  const char order = descr[0];
  const char kind = descr[1];
  const std::string_view size = descr.substr(2);
  if (order != '<' && order != '>' && order != '|' && order != '=') return unsupported();
  int bytes = 0;
  if (size == "1") {
    bytes = 1;
  } else if (size == "2") {
    bytes = 2;
  } else if (size == "4") {
    bytes = 4;
  } else if (size == "8") {
    bytes = 8;
  } else {
    return unsupported();
  }
  const auto bits = static_cast<uint8_t>(bytes * 8);
  DataType dtype;
  switch (kind) {
    case 'b':
      if (bytes != 1) return unsupported();
      dtype = DataType::boolean();
      break;
    case 'i': dtype = DataType{DataType::Code::kInt, bits, 1}; break;
    case 'u': dtype = DataType{DataType::Code::kUInt, bits, 1}; break;
    case 'f':
      if (bytes == 1) return unsupported();
      dtype = DataType{DataType::Code::kFloat, bits, 1};
      break;
    default: return unsupported();
  }
  // One-byte elements have no byte order; '>' on wider ones is big-endian.
  if (order == '>' && bytes > 1) {
    return absl::InvalidArgumentError(absl::StrCat("big-endian dtype ", quote_bytes(descr),
                                                   " is not supported; ", sv(kSupported), " ('<",
                                                   sv(descr.substr(1)), "')"));
  }
  return dtype;
}

absl::Status with_name(std::string_view name, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(sv(name), ": ", s.message()));
}

absl::Status invalid(std::string_view name, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(sv(name), ": ", sv(message)));
}

}  // namespace

absl::StatusOr<std::string> npy_descr(DataType dtype) {
  if (dtype.lanes == 1) {
    if (dtype == DataType::boolean()) return std::string("|b1");
    const bool width_ok = dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64;
    char kind = '\0';
    if (dtype.code == DataType::Code::kInt) kind = 'i';
    if (dtype.code == DataType::Code::kUInt) kind = 'u';
    if (dtype.code == DataType::Code::kFloat && dtype.bits != 8) kind = 'f';
    if (kind != '\0' && width_ok) {
      return absl::StrCat(dtype.bits == 8 ? "|" : "<", std::string(1, kind), dtype.bits / 8);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype ", dtype.to_string(),
      " has no .npy form here; expected bool, int8-64, uint8-64, float16, float32 or float64"));
}

absl::StatusOr<Tensor> parse_npy(std::string_view bytes, std::string_view name) {
  // The magic and the version.
  if (bytes.size() < kMagicAndVersion) {
    if (bytes.empty()) return invalid(name, "the file is empty; expected a .npy file");
    if (kMagic.substr(0, std::min(bytes.size(), kMagic.size())) ==
        bytes.substr(0, std::min(bytes.size(), kMagic.size()))) {
      return invalid(name, absl::StrCat("truncated: the file is ", bytes.size(),
                                        " bytes, shorter than the 8-byte magic and version"));
    }
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return invalid(name, absl::StrCat("not a .npy file: expected the magic \"\\x93NUMPY\", got ",
                                      quote_bytes(bytes.substr(0, kMagic.size()))));
  }
  const auto major = static_cast<unsigned char>(bytes[6]);
  const auto minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return invalid(name, absl::StrCat("format version ", major, ".", minor,
                                      " is not supported; expected 1.0, 2.0 or 3.0"));
  }
  // The header.
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < kMagicAndVersion + length_bytes) {
    return invalid(name, absl::StrCat("truncated: the file is ", bytes.size(),
                                      " bytes, shorter than the header length field (",
                                      kMagicAndVersion + length_bytes, " bytes)"));
  }
  const uint64_t header_len = read_le(bytes, kMagicAndVersion, length_bytes);
  const size_t header_start = kMagicAndVersion + length_bytes;
  if (header_len > bytes.size() - header_start) {
    return invalid(name, absl::StrCat("truncated: the header is ", header_len, " bytes, only ",
                                      bytes.size() - header_start, " follow the length field"));
  }
  const std::string_view header_text = bytes.substr(header_start, header_len);
  absl::StatusOr<Header> header = HeaderReader(header_text).read();
  if (!header.ok()) return with_name(name, header.status());
  absl::StatusOr<DataType> dtype = dtype_of_descr(*header->descr);
  if (!dtype.ok()) return with_name(name, dtype.status());
  if (*header->fortran_order) {
    return invalid(name,
                   "fortran_order is True: Fortran-order (column-major) arrays are not "
                   "supported; expected a C-order array (numpy.ascontiguousarray)");
  }
  // The data.
  const std::vector<int64_t>& shape = *header->shape;
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(numel, d, &numel)) {
      return invalid(name,
                     absl::StrCat("the element count of shape ", shape_repr(shape), " overflows int64"));
    }
  }
  const size_t item = dtype->bits / 8;
  uint64_t expected_bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel), item, &expected_bytes)) {
    return invalid(name, absl::StrCat("the byte size of shape ", shape_repr(shape), " of ",
                                      dtype->to_string(), " overflows"));
  }
  const size_t data_start = header_start + header_len;
  const size_t data_bytes = bytes.size() - data_start;
  const std::string what = absl::StrCat("shape ", shape_repr(shape), " of ", dtype->to_string());
  if (data_bytes < expected_bytes) {
    return invalid(name, absl::StrCat("truncated: expected ", expected_bytes, " bytes of data for ",
                                      what, ", got ", data_bytes));
  }
  if (data_bytes > expected_bytes) {
    return invalid(name, absl::StrCat(data_bytes - expected_bytes, " trailing bytes after the data: expected ",
                                      expected_bytes, " bytes of data for ", what, ", got ",
                                      data_bytes));
  }
  const std::string_view data = bytes.substr(data_start);
  if (dtype->is_bool()) {
    for (size_t i = 0; i < data.size(); ++i) {
      const auto b = static_cast<unsigned char>(data[i]);
      if (b > 1) {
        return invalid(name, absl::StrCat("element ", i, " of the bool array is ", b,
                                          "; expected 0 or 1"));
      }
    }
  }
  absl::StatusOr<Tensor> t = Tensor::empty(shape, *dtype);
  if (!t.ok()) return with_name(name, t.status());
  if (!data.empty()) std::memcpy(t->data(), data.data(), data.size());
  return t;
}

absl::StatusOr<Tensor> load_npy(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    const std::string message = absl::StrCat(path, ": cannot open: ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::PermissionDeniedError(message);
  }
  std::string bytes;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) bytes.append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) {
    return absl::DataLossError(absl::StrCat(path, ": cannot read: ", std::strerror(err)));
  }
  return parse_npy(bytes, path);
}

absl::StatusOr<std::string> serialize_npy(const Tensor& tensor) {
  if (!tensor.defined()) return absl::InvalidArgumentError("serialize_npy: the tensor is undefined");
  if (tensor.device().type != Device::Type::kCPU) {
    return absl::InvalidArgumentError(absl::StrCat("serialize_npy: ", tensor.describe(),
                                                   " is not a host tensor"));
  }
  absl::StatusOr<std::string> descr = npy_descr(tensor.dtype());
  if (!descr.ok()) return absl::InvalidArgumentError(absl::StrCat("serialize_npy: ", descr.status().message()));
  absl::StatusOr<Tensor> dense_or = compact(tensor);
  if (!dense_or.ok()) return dense_or.status();
  const Tensor& dense = *dense_or;
  const std::vector<int64_t>& shape = dense.shape();
  std::string dict = absl::StrCat("{'descr': '", *descr, "', 'fortran_order': False, 'shape': ",
                                  shape_repr(shape), ", }");
  if (!shape.empty()) dict.append(kGrowthAxisDigits - absl::StrCat(shape[0]).size(), ' ');
  const size_t hlen = dict.size() + 1;  // the newline
  // Version 1.0 when the header length fits its 16-bit field, else 2.0 (as numpy decides).
  size_t length_bytes = 2;
  size_t pad = kAlign - (kMagicAndVersion + length_bytes + hlen) % kAlign;
  if (hlen + pad > std::numeric_limits<uint16_t>::max()) {
    length_bytes = 4;
    pad = kAlign - (kMagicAndVersion + length_bytes + hlen) % kAlign;
  }
  std::string out(kMagic);
  out += static_cast<char>(length_bytes == 2 ? 1 : 2);
  out += '\0';
  append_le(out, hlen + pad, length_bytes);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  out.append(static_cast<const char*>(dense.data()), dense.nbytes());
  return out;
}

absl::Status save_npy(const std::string& path, const Tensor& tensor) {
  absl::StatusOr<std::string> bytes = serialize_npy(tensor);
  if (!bytes.ok()) return with_name(path, bytes.status());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open for writing: ", std::strerror(errno)));
  }
  const bool wrote = std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    return absl::DataLossError(absl::StrCat(path, ": cannot write: ", std::strerror(wrote ? errno : err)));
  }
  return absl::OkStatus();
}

}  // namespace relax::runtime
