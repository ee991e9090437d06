// .npy reading and writing (relax/runtime/npy.h). The reference is the exact bytes numpy.save
// writes for a few arrays, written out by hand below (magic, version, header length, the
// header dict padded with spaces to 128 bytes, then the little-endian elements); round trips
// cover every dtype, and every malformed input has a test naming the message.
#include "relax/runtime/npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"

namespace relax::runtime {
namespace {

using namespace std::string_view_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))
const std::string kF32x2x3 =
    std::string("\x93NUMPY\x01\x00v\x00"sv) +
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') + "\n" +
    std::string("\x00\x00\x00\x00" "\x00\x00\x80\x3f" "\x00\x00\x00\x40"
                "\x00\x00\x40\x40" "\x00\x00\x80\x40" "\x00\x00\xa0\x40"sv);

// np.save(f, np.array(True))
const std::string kBoolScalar = std::string("\x93NUMPY\x01\x00v\x00"sv) +
                                "{'descr': '|b1', 'fortran_order': False, 'shape': (), }" +
                                std::string(62, ' ') + "\n\x01";

// np.save(f, np.array([1, -2, 3], dtype=np.int64))
const std::string kI64x3 =
    std::string("\x93NUMPY\x01\x00v\x00"sv) +
    "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }" + std::string(60, ' ') + "\n" +
    std::string("\x01\x00\x00\x00\x00\x00\x00\x00"
                "\xfe\xff\xff\xff\xff\xff\xff\xff"
                "\x03\x00\x00\x00\x00\x00\x00\x00"sv);

// np.save(f, np.zeros((0, 4)))
const std::string kF64x0x4 = std::string("\x93NUMPY\x01\x00v\x00"sv) +
                             "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }" +
                             std::string(58, ' ') + "\n";

// np.save(f, np.array([1.0, -2.0, 0.5], dtype=np.float16)): 0x3c00, 0xc000, 0x3800.
const std::string kF16x3 =
    std::string("\x93NUMPY\x01\x00v\x00"sv) +
    "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }" + std::string(60, ' ') + "\n" +
    std::string("\x00\x3c\x00\xc0\x00\x38"sv);

// np.lib.format.write_array(f, np.array([7, -1], dtype=np.int32), version=(2, 0))
const std::string kI32v2 =
    std::string("\x93NUMPY\x02\x00t\x00\x00\x00"sv) +
    "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }" + std::string(58, ' ') + "\n" +
    std::string("\x07\x00\x00\x00\xff\xff\xff\xff"sv);

// np.lib.format.write_array(f, np.array([258, 65535], dtype=np.uint16), version=(3, 0))
const std::string kU16v3 =
    std::string("\x93NUMPY\x03\x00t\x00\x00\x00"sv) +
    "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }" + std::string(58, ' ') + "\n" +
    std::string("\x02\x01\xff\xff"sv);

template <typename T>
std::vector<T> elements(const Tensor& t) {
  const T* p = t.data_as_or_die<T>();
  return std::vector<T>(p, p + t.numel());
}

Tensor parse_ok(std::string_view bytes) {
  absl::StatusOr<Tensor> t = parse_npy(bytes, "x.npy");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

std::string parse_error(std::string_view bytes) {
  absl::StatusOr<Tensor> t = parse_npy(bytes, "x.npy");
  EXPECT_FALSE(t.ok());
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
  EXPECT_THAT(t.status().message(), HasSubstr("x.npy: ")) << "names the file";
  return std::string(t.status().message());
}

// A version-1.0 file of the given header dict (padded as numpy pads it) and data.
std::string npy_file(std::string_view dict, std::string_view data, int version = 1) {
  const size_t length_bytes = version == 1 ? 2 : 4;
  const size_t hlen = dict.size() + 1;
  const size_t pad = 64 - (8 + length_bytes + hlen) % 64;
  std::string out("\x93NUMPY"sv);
  out += static_cast<char>(version);
  out += '\0';
  for (size_t i = 0; i < length_bytes; ++i) out += static_cast<char>(((hlen + pad) >> (8 * i)) & 0xff);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  out += data;
  return out;
}

TEST(NpyTest, HandWrittenFilesHaveNumpysLayout) {
  for (const std::string* file : {&kF32x2x3, &kBoolScalar, &kI64x3, &kF64x0x4, &kF16x3, &kI32v2, &kU16v3}) {
    ASSERT_GE(file->size(), 128u);
    EXPECT_EQ((*file)[127], '\n') << "the header ends at byte 128";
  }
}

TEST(NpyTest, ReadsFloat32Matrix) {
  Tensor t = parse_ok(kF32x2x3);
  EXPECT_EQ(t.dtype(), DataType::float32());
  EXPECT_THAT(t.shape(), ElementsAre(2, 3));
  EXPECT_THAT(elements<float>(t), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kTensorAlignment, 0u);
}

TEST(NpyTest, ReadsBoolScalar) {
  Tensor t = parse_ok(kBoolScalar);
  EXPECT_EQ(t.dtype(), DataType::boolean());
  EXPECT_EQ(t.ndim(), 0);
  EXPECT_THAT(elements<bool>(t), ElementsAre(true));
}

TEST(NpyTest, ReadsInt64Vector) {
  Tensor t = parse_ok(kI64x3);
  EXPECT_EQ(t.dtype(), DataType::int64());
  EXPECT_THAT(elements<int64_t>(t), ElementsAre(1, -2, 3));
}

TEST(NpyTest, ReadsZeroSizeArray) {
  Tensor t = parse_ok(kF64x0x4);
  EXPECT_EQ(t.dtype(), DataType::float64());
  EXPECT_THAT(t.shape(), ElementsAre(0, 4));
  EXPECT_EQ(t.numel(), 0);
}

TEST(NpyTest, ReadsFloat16Bits) {
  Tensor t = parse_ok(kF16x3);
  EXPECT_EQ(t.dtype(), DataType::float16());
  std::vector<uint16_t> bits(3);
  std::memcpy(bits.data(), t.data(), 6);
  EXPECT_THAT(bits, ElementsAre(0x3c00, 0xc000, 0x3800));
}

TEST(NpyTest, ReadsVersions2And3) {
  Tensor a = parse_ok(kI32v2);
  EXPECT_EQ(a.dtype(), DataType::int32());
  EXPECT_THAT(elements<int32_t>(a), ElementsAre(7, -1));
  Tensor b = parse_ok(kU16v3);
  EXPECT_EQ(b.dtype(), (DataType{DataType::Code::kUInt, 16, 1}));
  EXPECT_THAT(elements<uint16_t>(b), ElementsAre(258, 65535));
}

TEST(NpyTest, AcceptsWhatOlderWritersWrote) {
  // Python 2 long suffixes, double quotes, other key orders, no trailing comma, 16-byte
  // alignment (numpy < 1.9), '=' (native) and '>' on one-byte types.
  Tensor t = parse_ok(npy_file("{\"shape\": (2L, 1L), \"fortran_order\": False, \"descr\": \"=i2\"}",
                               "\x05\x00\x06\x00"sv));
  EXPECT_THAT(t.shape(), ElementsAre(2, 1));
  EXPECT_THAT(elements<int16_t>(t), ElementsAre(5, 6));
  std::string old = std::string("\x93NUMPY\x01\x00\x46\x00"sv) +
                    "{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }" +
                    std::string(12, ' ') + "\n\x09\x0a";
  ASSERT_EQ(old.size() % 16, 2u);
  EXPECT_THAT(elements<uint8_t>(parse_ok(old)), ElementsAre(9, 10));
}

TEST(NpyTest, WritesNumpysBytes) {
  for (const std::string* file : {&kF32x2x3, &kBoolScalar, &kI64x3, &kF64x0x4, &kF16x3}) {
    Tensor t = parse_ok(*file);
    absl::StatusOr<std::string> bytes = serialize_npy(t);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, *file);
  }
}

TEST(NpyTest, WritesTheGrowthPaddingOfNumpy) {
  // numpy >= 1.24 leaves room for the first dim to grow to 21 digits; with 16 dims this pushes
  // the header past 128 bytes (without the room it would fit in 128).
  Tensor t = *Tensor::empty(std::vector<int64_t>(16, 1), DataType::float32());
  absl::StatusOr<std::string> bytes = serialize_npy(t);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }";
  EXPECT_EQ(bytes->substr(10, dict.size()), dict);
  EXPECT_EQ(bytes->substr(10 + dict.size(), 20), std::string(20, ' '));
  EXPECT_EQ(bytes->size(), 192u + 4u);
  EXPECT_EQ((*bytes)[191], '\n');
  EXPECT_EQ((*bytes)[8], '\xb6');  // header length 182
}

TEST(NpyTest, RoundTripsEveryDtype) {
  const std::vector<DataType> dtypes = {
      DataType::boolean(),
      {DataType::Code::kInt, 8, 1},   {DataType::Code::kInt, 16, 1},
      {DataType::Code::kInt, 32, 1},  {DataType::Code::kInt, 64, 1},
      {DataType::Code::kUInt, 8, 1},  {DataType::Code::kUInt, 16, 1},
      {DataType::Code::kUInt, 32, 1}, {DataType::Code::kUInt, 64, 1},
      DataType::float16(),            DataType::float32(),
      DataType::float64()};
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 4}};
  for (DataType dtype : dtypes) {
    for (const std::vector<int64_t>& shape : shapes) {
      SCOPED_TRACE(absl::StrCat(dtype.to_string(), " rank ", shape.size()));
      Tensor t = *Tensor::empty(shape, dtype);
      auto* bytes = static_cast<unsigned char*>(t.data());
      for (size_t i = 0; i < t.nbytes(); ++i) {
        bytes[i] = dtype.is_bool() ? static_cast<unsigned char>(i % 3 == 0)
                                   : static_cast<unsigned char>(i * 37 + 11);
      }
      absl::StatusOr<std::string> file = serialize_npy(t);
      ASSERT_TRUE(file.ok()) << file.status();
      EXPECT_EQ(file->size() % 64, t.nbytes() % 64) << "the data starts 64-byte aligned";
      Tensor back = parse_ok(*file);
      ASSERT_TRUE(back.defined());
      EXPECT_EQ(back.dtype(), dtype);
      EXPECT_EQ(back.shape(), shape);
      ASSERT_EQ(back.nbytes(), t.nbytes());
      EXPECT_EQ(std::memcmp(back.data(), t.data(), t.nbytes()), 0);
    }
  }
}

TEST(NpyTest, WritesStridedTensorsCompact) {
  std::vector<int32_t> storage = {0, 1, 2, 3, 4, 5};
  // The transpose of a 2x3 matrix: shape (3, 2), strides (1, 3).
  Tensor view = Tensor::borrow(storage.data(), {3, 2}, DataType::int32(), {1, 3});
  absl::StatusOr<std::string> file = serialize_npy(view);
  ASSERT_TRUE(file.ok()) << file.status();
  Tensor back = parse_ok(*file);
  EXPECT_THAT(back.shape(), ElementsAre(3, 2));
  EXPECT_THAT(elements<int32_t>(back), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(NpyTest, SavesAndLoadsFiles) {
  const std::string path = ::testing::TempDir() + "/npy_test_roundtrip.npy";
  Tensor t = parse_ok(kF32x2x3);
  ASSERT_TRUE(save_npy(path, t).ok());
  absl::StatusOr<Tensor> back = load_npy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(elements<float>(*back), ElementsAre(0, 1, 2, 3, 4, 5));
  std::remove(path.c_str());
}

TEST(NpyTest, MissingFileIsNotFoundNamingThePath) {
  absl::StatusOr<Tensor> t = load_npy("/nonexistent-dir/x.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr("/nonexistent-dir/x.npy: cannot open"));
}

TEST(NpyTest, ReadingADirectoryIsAnError) {
  absl::StatusOr<Tensor> t = load_npy(::testing::TempDir());
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr(::testing::TempDir()));
}

TEST(NpyTest, SaveErrorsNameThePath) {
  Tensor t = parse_ok(kI64x3);
  absl::Status s = save_npy("/nonexistent-dir/y.npy", t);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent-dir/y.npy: cannot open for writing"));
  Tensor bf16 = *Tensor::empty({2}, DataType::bfloat16());
  s = save_npy("y.npy", bf16);
  EXPECT_THAT(s.message(), HasSubstr("y.npy: serialize_npy: dtype bfloat16 has no .npy form"));
  EXPECT_THAT(serialize_npy(Tensor()).status().message(), HasSubstr("undefined"));
  EXPECT_FALSE(npy_descr({DataType::Code::kFloat, 32, 4}).ok());
  EXPECT_FALSE(npy_descr({DataType::Code::kFloat, 8, 1}).ok());
  EXPECT_EQ(*npy_descr(DataType::boolean()), "|b1");
  EXPECT_EQ(*npy_descr({DataType::Code::kUInt, 8, 1}), "|u1");
  EXPECT_EQ(*npy_descr(DataType::float64()), "<f8");
}

// ---------------------------------------------------------------------------
// Malformed files.

TEST(NpyErrorTest, NotANpyFile) {
  EXPECT_THAT(parse_error(""), HasSubstr("x.npy: the file is empty"));
  EXPECT_THAT(parse_error("PK\x03\x04 zip file"),
              HasSubstr("x.npy: not a .npy file: expected the magic \"\\x93NUMPY\", got \"PK\\x03\\x04 z\""));
  EXPECT_THAT(parse_error("\x93NUMP"), HasSubstr("truncated: the file is 5 bytes"));
  EXPECT_THAT(parse_error("\x93NUMPY\x01"), HasSubstr("truncated: the file is 7 bytes"));
}

TEST(NpyErrorTest, UnsupportedVersion) {
  std::string file = kI64x3;
  file[6] = 4;
  EXPECT_THAT(parse_error(file), HasSubstr("format version 4.0 is not supported; expected 1.0, 2.0 or 3.0"));
  file[6] = 1;
  file[7] = 1;
  EXPECT_THAT(parse_error(file), HasSubstr("format version 1.1 is not supported"));
}

TEST(NpyErrorTest, TruncatedHeader) {
  EXPECT_THAT(parse_error(kI64x3.substr(0, 9)), HasSubstr("shorter than the header length field (10 bytes)"));
  EXPECT_THAT(parse_error(kI32v2.substr(0, 11)), HasSubstr("shorter than the header length field (12 bytes)"));
  EXPECT_THAT(parse_error(kI64x3.substr(0, 100)),
              HasSubstr("truncated: the header is 118 bytes, only 90 follow the length field"));
}

TEST(NpyErrorTest, TruncatedData) {
  EXPECT_THAT(parse_error(kI64x3.substr(0, kI64x3.size() - 1)),
              HasSubstr("x.npy: truncated: expected 24 bytes of data for shape (3,) of int64, got 23"));
  EXPECT_THAT(parse_error(kBoolScalar.substr(0, 128)),
              HasSubstr("expected 1 bytes of data for shape () of bool, got 0"));
}

TEST(NpyErrorTest, TrailingBytes) {
  EXPECT_THAT(parse_error(kF32x2x3 + "ab"),
              HasSubstr("2 trailing bytes after the data: expected 24 bytes of data for shape (2, 3) "
                        "of float32, got 26"));
  EXPECT_THAT(parse_error(kF64x0x4 + "\n"), HasSubstr("1 trailing bytes"));
}

TEST(NpyErrorTest, FortranOrder) {
  EXPECT_THAT(parse_error(npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                   std::string(24, '\0'))),
              HasSubstr("x.npy: fortran_order is True: Fortran-order (column-major) arrays are not "
                        "supported; expected a C-order array"));
}

TEST(NpyErrorTest, BigEndianAndUnsupportedDtypes) {
  const auto with_descr = [](const std::string& descr) {
    return npy_file(absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (1,), }"),
                    std::string(16, '\0'));
  };
  EXPECT_THAT(parse_error(with_descr(">f4")),
              HasSubstr("x.npy: big-endian dtype \">f4\" is not supported; expected a little-endian "
                        "bool, int8-64, uint8-64, float16, float32 or float64 ('<f4')"));
  EXPECT_THAT(parse_error(with_descr(">i8")), HasSubstr("big-endian dtype \">i8\""));
  for (std::string descr : {"<c8", "<U5", "|O", "<M8[ns]", "<f16", "|V4", "<b2", "|f1", "<i3", "", "f4"}) {
    EXPECT_THAT(parse_error(with_descr(descr)), HasSubstr(absl::StrCat("x.npy: unsupported dtype \"", descr, "\"")));
  }
  EXPECT_THAT(parse_error(npy_file("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", "")),
              HasSubstr("descr is a list (a structured dtype)"));
}

TEST(NpyErrorTest, MalformedHeaderDict) {
  const std::string d = "'descr': '<i4', 'fortran_order': False";
  const struct {
    std::string dict;
    std::string message;
  } cases[] = {
      {"'descr': '<i4'}", "expected '{' opening the header dict at byte 0 of the header dict, got \"'descr'"},
      {"{" + d + ", 'shape': (2,), ", "expected a quoted string for a key at byte"},
      {"{" + d + ", 'shape': (2,) 'x': 1}", "expected ',' or '}' after a dict entry"},
      {"{" + d + ", 'shape': (2,)} junk", "expected only spaces and a newline after the dict"},
      {"{" + d + "}", "header: the key 'shape' is missing"},
      {"{'fortran_order': False, 'shape': (2,)}", "the key 'descr' is missing"},
      {"{'descr': '<i4', 'shape': (2,)}", "the key 'fortran_order' is missing"},
      {"{" + d + ", 'shape': (2,), 'shape': (2,)}", "the key 'shape' appears twice"},
      {"{'descr': '<i4', 'descr': '<i4'}", "the key 'descr' appears twice"},
      {"{'descr': '<i4', 'fortran_order': 0, 'shape': (2,)}", "expected True or False for fortran_order"},
      {"{" + d + ", 'shape': (2,), 'align': True}", "unexpected key 'align'; expected only 'descr', 'fortran_order' and 'shape'"},
      {"{" + d + ", 'shape': [2]}", "expected a tuple '(...)' for shape"},
      {"{" + d + ", 'shape': (2)}", "shape (2) is not a tuple; expected (2,)"},
      {"{" + d + ", 'shape': (2 3)}", "expected ',' or ')' in the shape tuple"},
      {"{" + d + ", 'shape': (2, -1)}", "dim 1 of the shape is negative"},
      {"{" + d + ", 'shape': (99999999999999999999,)}", "dim 0 of the shape does not fit in int64"},
      {"{" + d + ", 'shape': (2, x)}", "expected an integer for dim 1 of the shape"},
      {"{'descr: '<i4'}", "expected ':' after the key 'descr: '"},
      {"{'descr': <i4}", "expected a quoted string for the descr string"},
      {"{'descr': '<i4", "expected the closing quote of the descr string"},
      {"{'de\\'scr': '<i4'}", "expected a plain string for a key"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.dict);
    std::string message = parse_error(npy_file(c.dict, std::string(8, '\0')));
    EXPECT_THAT(message, HasSubstr("x.npy: header: "));
    EXPECT_THAT(message, HasSubstr(c.message));
  }
}

TEST(NpyErrorTest, TooManyDims) {
  std::string shape = "(";
  for (int i = 0; i < 65; ++i) shape += "1, ";
  shape += ")";
  EXPECT_THAT(parse_error(npy_file(absl::StrCat("{'descr': '<i4', 'fortran_order': False, 'shape': ", shape, "}"),
                                   "\0\0\0\0"sv)),
              HasSubstr("the shape has more than 64 dims"));
}

TEST(NpyErrorTest, ShapeSizeOverflows) {
  EXPECT_THAT(parse_error(npy_file("{'descr': '<i4', 'fortran_order': False, "
                                   "'shape': (4294967296, 4294967296), }",
                                   "")),
              HasSubstr("the element count of shape (4294967296, 4294967296) overflows int64"));
  EXPECT_THAT(parse_error(npy_file("{'descr': '<i8', 'fortran_order': False, "
                                   "'shape': (4611686018427387904,), }",
                                   "")),
              HasSubstr("the byte size of shape (4611686018427387904,) of int64 overflows"));
}

TEST(NpyErrorTest, BoolBytesOtherThanZeroOrOne) {
  EXPECT_THAT(parse_error(npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                   "\x01\x00\x02"sv)),
              HasSubstr("element 2 of the bool array is 2; expected 0 or 1"));
}

TEST(NpyErrorTest, ErrorsInVersion2HeadersToo) {
  EXPECT_THAT(parse_error(npy_file("{'descr': '<i4', 'fortran_order': True, 'shape': (1,), }",
                                   "\0\0\0\0"sv, 2)),
              HasSubstr("fortran_order is True"));
}

}  // namespace
}  // namespace relax::runtime
