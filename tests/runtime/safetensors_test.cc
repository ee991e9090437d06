// safetensors reading and writing (relax/runtime/safetensors.h). The reference for the format is
// a file whose bytes are written out by hand below after the spec's example (length, JSON
// header, little-endian data); round trips cover every dtype, scalars and empty tensors; every
// malformed header has a row in a table of corrupt files naming the message it must give.
#include "relax/runtime/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace relax::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Whether a temporary file of a writer of `path` is left in its folder.
bool temp_file_left(const std::string& path) {
  const std::filesystem::path p(path);
  for (const auto& e : std::filesystem::directory_iterator(p.parent_path())) {
    if (e.path().filename().string().starts_with(p.filename().string() + ".tmp.")) return true;
  }
  return false;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / ("safetensors_test_" + name)).string();
}

std::string le64(uint64_t v) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &v, 8);
  return out;
}

// A file: the header's length, the header, the data.
std::string file_bytes(const std::string& header, const std::string& data) { return le64(header.size()) + header + data; }

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The bytes of a contiguous tensor.
std::string bytes_of(const Tensor& t) { return std::string(static_cast<const char*>(t.data()), t.nbytes()); }

// A tensor of `shape` and `dtype` whose byte i is (seed + 7 i) mod 251 (bool: 0 or 1).
Tensor patterned(std::vector<int64_t> shape, DataType dtype, int seed) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), dtype);
  EXPECT_TRUE(t.ok()) << t.status();
  auto* b = static_cast<uint8_t*>(t->data());
  for (size_t i = 0; i < t->nbytes(); ++i) {
    b[i] = dtype.is_bool() ? static_cast<uint8_t>((seed + i) % 2) : static_cast<uint8_t>((seed + 7 * i) % 251);
  }
  return *t;
}

TEST(SafetensorsTest, ReadsAFileWrittenByHandAfterTheSpecsExample) {
  // {"TENSOR_NAME": {"dtype": "F16", "shape": [1, 2, 3], "data_offsets": [BEGIN, END]}, ...}
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"weight":{"dtype":"F16","shape":[1,2,3],"data_offsets":[0,12]},)"
      R"("bias":{"dtype":"I32","shape":[2],"data_offsets":[12,20]}})";
  const std::string data = std::string("\x00\x3c\x00\xc0\x00\x38\x00\x00\x00\x3c\x00\x3c", 12) +  // 1 -2 .5 0 1 1
                           std::string("\x07\x00\x00\x00\xff\xff\xff\xff", 8);                    // 7 -1
  const std::string path = write_file("spec.safetensors", file_bytes(header + "   ", data));
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(f->names(), ElementsAre("weight", "bias"));
  EXPECT_EQ(f->metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  absl::StatusOr<Tensor> w = f->tensor("weight", {1, 2, 3}, DataType::float16());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(bytes_of(*w), data.substr(0, 12));
  absl::StatusOr<Tensor> b = f->tensor("bias");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype(), DataType::int32());
  EXPECT_THAT(b->shape(), ElementsAre(2));
  EXPECT_EQ(b->data_as_or_die<int32_t>()[0], 7);
  EXPECT_EQ(b->data_as_or_die<int32_t>()[1], -1);
  EXPECT_EQ(f->find("bias")->begin, 12u);
  EXPECT_EQ(f->data_section_size(), 20u);
}

TEST(SafetensorsTest, RoundTripsEveryDtypeScalarsAndEmptyTensors) {
  const std::vector<std::string> dtypes = {"BOOL", "U8",  "I8",  "U16", "I16", "F16", "BF16",
                                           "U32",  "I32", "F32", "U64", "I64", "F64"};
  std::vector<std::pair<std::string, Tensor>> tensors;
  int seed = 0;
  for (const std::string& name : dtypes) {
    absl::StatusOr<DataType> dt = safetensors_dtype(name);
    ASSERT_TRUE(dt.ok()) << dt.status();
    EXPECT_EQ(*safetensors_dtype_name(*dt), name);
    tensors.emplace_back(name + ".matrix", patterned({3, 5}, *dt, ++seed));
    tensors.emplace_back(name + ".scalar", patterned({}, *dt, ++seed));
    tensors.emplace_back(name + ".empty", patterned({0, 4}, *dt, ++seed));
    tensors.emplace_back(name + ".wide", patterned({2, 64}, *dt, ++seed));
  }
  const std::string path = temp_path("every_dtype.safetensors");
  ASSERT_TRUE(write_safetensors(path, tensors).ok());
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->entries().size(), tensors.size());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f->data_section()) % 64, 0u) << "the data section starts at a multiple of 64";
  for (const auto& [name, want] : tensors) {
    SCOPED_TRACE(name);
    absl::StatusOr<Tensor> got = f->tensor(name, want.shape(), want.dtype());
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(bytes_of(*got), bytes_of(want));
    EXPECT_TRUE(f->is_zero_copy(name)) << "the writer aligns every tensor to its element size";
    const SafetensorsEntry& e = *f->find(name);
    if ((e.end - e.begin) % 64 == 0) {
      EXPECT_EQ(e.begin % 64, 0u) << "a 64-byte multiple starts on 64 bytes";
    }
  }
}

TEST(SafetensorsTest, TensorsAreViewsOfTheMappingAndOutliveTheFile) {
  const std::string path = temp_path("outlive.safetensors");
  const Tensor a = patterned({4, 16}, DataType::float32(), 3);
  ASSERT_TRUE(write_safetensors(path, {{"a", a}}, {{"k", "v"}}).ok());
  Tensor kept;
  {
    absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(path);
    ASSERT_TRUE(f.ok()) << f.status();
    absl::StatusOr<Tensor> t = f->tensor("a");
    ASSERT_TRUE(t.ok()) << t.status();
    const auto* begin = static_cast<const char*>(f->data_section());
    const auto* p = static_cast<const char*>(t->data());
    EXPECT_TRUE(p >= begin && p + t->nbytes() <= begin + f->data_section_size()) << "zero copy: inside the mapping";
    EXPECT_TRUE(t->owns_storage());
    EXPECT_EQ(f->metadata().at("k"), "v");
    kept = *t;
  }
  // The file object is gone; the tensor's view keeps the pages mapped.
  EXPECT_EQ(bytes_of(kept), bytes_of(a));
}

TEST(SafetensorsTest, MisalignedDataIsCopiedToAnAlignedTensor) {
  // A one-byte tensor first puts the float32 at data offset 1.
  const std::string header = R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"("f":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}})";
  const std::string data = std::string("\x05", 1) + std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);  // 1, -2
  std::string padded = header;
  while ((8 + padded.size()) % 8 != 0) padded += ' ';
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(write_file("misaligned.safetensors", file_bytes(padded, data)));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->is_zero_copy("b"));
  EXPECT_FALSE(f->is_zero_copy("f"));
  absl::StatusOr<Tensor> t = f->tensor("f");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
  EXPECT_EQ(t->data_as_or_die<float>()[0], 1.0f);
  EXPECT_EQ(t->data_as_or_die<float>()[1], -2.0f);
}

TEST(SafetensorsTest, AskingForAMissingTensorOrAnotherShapeNamesBoth) {
  const std::string path = temp_path("ask.safetensors");
  ASSERT_TRUE(write_safetensors(path, {{"x", patterned({2, 3}, DataType::float32(), 1)},
                                       {"y", patterned({4}, DataType::int64(), 2)}})
                  .ok());
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<Tensor> missing = f->tensor("z");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no tensor 'z' in file " + path + "; it has 2 tensors, e.g. "));
  EXPECT_THAT(missing.status().message(), HasSubstr("'x'"));
  absl::StatusOr<Tensor> shape = f->tensor("x", {3, 2}, DataType::float32());
  EXPECT_THAT(shape.status().message(),
              HasSubstr(path + ": tensor 'x' is [2, 3] float32, expected [3, 2] float32"));
  absl::StatusOr<Tensor> dtype = f->tensor("y", {4}, DataType::int32());
  EXPECT_THAT(dtype.status().message(), HasSubstr("tensor 'y' is [4] int64, expected [4] int32"));
  EXPECT_FALSE(f->is_zero_copy("z"));
}

TEST(SafetensorsTest, OpeningAMissingFileIsNotFound) {
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open("/nonexistent-dir/m.safetensors");
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(f.status().message(), HasSubstr("/nonexistent-dir/m.safetensors"));
}

// ---------------------------------------------------------------------------
// Corrupt files.

struct Corrupt {
  const char* name;
  std::string bytes;
  std::vector<std::string> message;  // substrings the error must contain (after the path)
};

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, const std::string& offsets) {
  return absl::StrCat("\"", name, "\":{\"dtype\":", dtype, ",\"shape\":", shape, ",\"data_offsets\":", offsets, "}");
}

std::vector<Corrupt> corrupt_files() {
  const std::string d8(8, '\x01');
  return {
      {"short", std::string("\x02\x00\x00", 3), {"the file has 3 bytes, fewer than the 8 of the header length"}},
      {"header_past_end", le64(100) + "{}", {"the header length is 100 bytes, but only 2 follow the length"}},
      {"header_absurd", le64(uint64_t{1} << 62) + "{}", {"the header length is 4611686018427387904 bytes, more than the limit"}},
      {"not_json", file_bytes("{\"a\":", ""), {"the header is not valid JSON", "parse error"}},
      {"not_object", file_bytes("[1, 2]", ""), {"the header is a JSON array, expected an object"}},
      {"entry_not_object", file_bytes(R"({"a":[1]})", ""), {"tensor 'a': expected an object, got array"}},
      {"no_dtype", file_bytes(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", d8), {"tensor 'a': missing \"dtype\""}},
      {"no_shape", file_bytes(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", d8), {"tensor 'a': missing \"shape\""}},
      {"no_offsets", file_bytes(R"({"a":{"dtype":"F32","shape":[2]}})", d8), {"tensor 'a': missing \"data_offsets\""}},
      {"dtype_number", file_bytes("{" + entry("a", "4", "[2]", "[0,8]") + "}", d8),
       {"tensor 'a': \"dtype\" is a number, expected a string"}},
      {"dtype_unknown", file_bytes("{" + entry("a", "\"F7\"", "[2]", "[0,8]") + "}", d8),
       {"tensor 'a': unknown dtype \"F7\"; expected one of BOOL, U8"}},
      {"dtype_fp8", file_bytes("{" + entry("a", "\"F8_E4M3\"", "[8]", "[0,8]") + "}", d8),
       {"tensor 'a': dtype \"F8_E4M3\" is not supported by relax"}},
      {"shape_object", file_bytes("{" + entry("a", "\"F32\"", "{}", "[0,8]") + "}", d8),
       {"tensor 'a': \"shape\" is a object, expected an array"}},
      {"shape_negative", file_bytes("{" + entry("a", "\"F32\"", "[-2]", "[0,8]") + "}", d8),
       {"tensor 'a': shape dim 0 is -2, expected a non-negative integer"}},
      {"shape_fraction", file_bytes("{" + entry("a", "\"F32\"", "[1,1.5]", "[0,8]") + "}", d8),
       {"tensor 'a': shape dim 1 is 1.5, expected a non-negative integer"}},
      {"shape_overflow", file_bytes("{" + entry("a", "\"F32\"", "[4611686018427387904,4]", "[0,8]") + "}", d8),
       {"tensor 'a': the byte size of shape [4611686018427387904, 4] overflows"}},
      {"offsets_one", file_bytes("{" + entry("a", "\"F32\"", "[2]", "[8]") + "}", d8),
       {"tensor 'a': \"data_offsets\" is [8], expected [begin, end]"}},
      {"offsets_negative", file_bytes("{" + entry("a", "\"F32\"", "[2]", "[-8,0]") + "}", d8),
       {"tensor 'a': \"data_offsets\" is [-8,0], expected [begin, end]"}},
      {"offsets_reversed", file_bytes("{" + entry("a", "\"F32\"", "[0]", "[8,0]") + "}", d8),
       {"tensor 'a': data_offsets [8, 0] end before they begin"}},
      {"offsets_past_end", file_bytes("{" + entry("a", "\"F32\"", "[4]", "[0,16]") + "}", d8),
       {"tensor 'a': data_offsets [0, 16] end beyond the data section of 8 bytes"}},
      {"size_mismatch", file_bytes("{" + entry("a", "\"F32\"", "[3]", "[0,8]") + "}", d8),
       {"tensor 'a': shape [3] of F32 needs 12 bytes, but data_offsets [0, 8] hold 8"}},
      {"overlap", file_bytes("{" + entry("a", "\"F32\"", "[2]", "[0,8]") + "," + entry("b", "\"F32\"", "[1]", "[4,8]") + "}", d8),
       {"tensor 'b' (bytes [4, 8)) overlaps tensor 'a' (bytes [0, 8))"}},
      {"hole", file_bytes("{" + entry("a", "\"F32\"", "[1]", "[4,8]") + "}", d8),
       {"tensor 'a' begins at byte 4 of the data section, expected 0 (its start)"}},
      {"trailing", file_bytes("{" + entry("a", "\"F32\"", "[1]", "[0,4]") + "}", d8),
       {"the tensors end at byte 4 of the data section, but it has 8 bytes"}},
      {"duplicate", file_bytes("{" + entry("a", "\"F32\"", "[2]", "[0,8]") + "," + entry("a", "\"F32\"", "[2]", "[0,8]") + "}", d8),
       {"the header names tensor 'a' twice"}},
      {"metadata_array", file_bytes(R"({"__metadata__":[]})", ""), {"\"__metadata__\" is a array, expected an object"}},
      {"metadata_number", file_bytes(R"({"__metadata__":{"k":1}})", ""),
       {"\"__metadata__\" entry 'k' is 1, expected a string"}},
  };
}

TEST(SafetensorsTest, CorruptFilesGiveErrorsNamingTheFileTheTensorAndTheValues) {
  for (const Corrupt& c : corrupt_files()) {
    SCOPED_TRACE(c.name);
    const std::string path = write_file(std::string(c.name) + ".safetensors", c.bytes);
    absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(path);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << f.status();
    EXPECT_THAT(f.status().message(), HasSubstr(path + ": "));
    for (const std::string& m : c.message) EXPECT_THAT(f.status().message(), HasSubstr(m));
  }
}

// ---------------------------------------------------------------------------
// The streaming writer.

TEST(SafetensorsWriterTest, TakesTensorsInAnyOrderAndLaysThemOutAligned) {
  const std::string path = temp_path("stream.safetensors");
  const Tensor a = patterned({3}, DataType::float16(), 1);    // 6 bytes
  const Tensor b = patterned({16}, DataType::float32(), 2);   // 64 bytes
  const Tensor c = patterned({3}, DataType::float64(), 3);    // 24 bytes
  absl::StatusOr<SafetensorsWriter> w = SafetensorsWriter::create(
      path, {{"a", a.dtype(), a.shape()}, {"b", b.dtype(), b.shape()}, {"c", c.dtype(), c.shape()}}, {{"m", "1"}});
  ASSERT_TRUE(w.ok()) << w.status();
  // b (a 64-byte multiple) first, then c (8-byte elements), then a (2-byte elements).
  ASSERT_EQ(w->entries().size(), 3u);
  EXPECT_EQ(w->entries()[0].name, "b");
  EXPECT_EQ(w->entries()[1].name, "c");
  EXPECT_EQ(w->entries()[1].begin, 64u);
  EXPECT_EQ(w->entries()[2].name, "a");
  EXPECT_EQ(w->entries()[2].begin, 88u);
  ASSERT_TRUE(w->write("c", c).ok());
  ASSERT_TRUE(w->write("a", a).ok());
  ASSERT_TRUE(w->write("b", b).ok());
  ASSERT_TRUE(w->finish().ok());
  EXPECT_FALSE(temp_file_left(path));
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(f->names(), ElementsAre("b", "c", "a"));
  for (const auto& [name, t] : std::vector<std::pair<std::string, Tensor>>{{"a", a}, {"b", b}, {"c", c}}) {
    EXPECT_EQ(bytes_of(*f->tensor(name)), bytes_of(t)) << name;
  }
}

TEST(SafetensorsWriterTest, WritesAStridedTensorsElements) {
  const Tensor base = patterned({2, 4}, DataType::int32(), 5);
  // Column 1 of each row: a (2,) view with stride 4.
  const Tensor column = Tensor::borrow(base.data_as_or_die<int32_t>() + 1, {2}, DataType::int32(), {4});
  const std::string path = temp_path("strided.safetensors");
  ASSERT_TRUE(write_safetensors(path, {{"col", column}}).ok());
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  const auto* v = f->tensor("col")->data_as_or_die<int32_t>();
  EXPECT_EQ(v[0], base.data_as_or_die<int32_t>()[1]);
  EXPECT_EQ(v[1], base.data_as_or_die<int32_t>()[5]);
}

TEST(SafetensorsWriterTest, BadWritesNameThePathAndTheTensor) {
  const std::string path = temp_path("bad_writes.safetensors");
  std::filesystem::remove(path);
  const Tensor a = patterned({2}, DataType::float32(), 1);
  {
    absl::StatusOr<SafetensorsWriter> w =
        SafetensorsWriter::create(path, {{"a", a.dtype(), a.shape()}, {"b", DataType{DataType::Code::kInt, 8, 1}, {4}}});
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_THAT(w->write("z", a).message(), HasSubstr(path + ": tensor 'z': not declared (2 tensors were)"));
    EXPECT_THAT(w->write("a", patterned({3}, DataType::float32(), 1)).message(),
                HasSubstr(path + ": tensor 'a': declared [2] float32, got [3] float32"));
    ASSERT_TRUE(w->write("a", a).ok());
    EXPECT_THAT(w->write("a", a).message(), HasSubstr("tensor 'a': written twice"));
    absl::Status finished = w->finish();
    EXPECT_EQ(finished.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(finished.message(), HasSubstr(path + ": tensor 'b' was declared but not written"));
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "an unfinished writer leaves no file";
  EXPECT_FALSE(temp_file_left(path)) << "nor its temporary file";

  absl::StatusOr<SafetensorsWriter> twice =
      SafetensorsWriter::create(path, {{"a", a.dtype(), {2}}, {"a", a.dtype(), {2}}});
  EXPECT_THAT(twice.status().message(), HasSubstr(path + ": tensor 'a': declared twice"));
  absl::StatusOr<SafetensorsWriter> negative = SafetensorsWriter::create(path, {{"n", a.dtype(), {2, -1}}});
  EXPECT_THAT(negative.status().message(), HasSubstr("tensor 'n': dim 1 of shape [2, -1] is negative"));
  absl::StatusOr<SafetensorsWriter> reserved = SafetensorsWriter::create(path, {{"__metadata__", a.dtype(), {2}}});
  EXPECT_THAT(reserved.status().message(), HasSubstr("the name is reserved"));
  absl::StatusOr<SafetensorsWriter> handle =
      SafetensorsWriter::create(path, {{"h", DataType{DataType::Code::kHandle, 64, 1}, {2}}});
  EXPECT_THAT(handle.status().message(), HasSubstr("tensor 'h': safetensors has no dtype for handle64"));
  absl::Status nowhere = write_safetensors("/nonexistent-dir/w.safetensors", {{"a", a}});
  EXPECT_THAT(nowhere.message(), HasSubstr("cannot create /nonexistent-dir/w.safetensors"));
}

}  // namespace
}  // namespace relax::runtime
