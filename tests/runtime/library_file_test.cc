// check_library_file / seal_library_file and load_module on damaged files.
//
// The damaged files are copies of the sealed AOT test module (built from
// tests/runtime/kernels/ by CMake and sealed by make_test_module --seal). The
// check runs before dlopen, so every case runs in this process: a case that
// reached dlopen with a damaged file would crash the test binary.
#include "relax/runtime/library_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "library_file_test_util.h"
#include "relax/runtime/module.h"
#include "relax/support/fnv1a.h"

namespace relax::runtime {
namespace {

using ::testing::HasSubstr;
using testing::read_bytes;
using testing::ScratchDir;
using testing::write_bytes;

std::string status_message(const absl::Status& s) { return std::string(s.message()); }

std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(LibraryFileTest, Fnv1a64MatchesThePublishedValues) {
  // Test vectors of the FNV reference (draft-eastlake-fnv, isthe.com/chongo/tech/comp/fnv).
  EXPECT_EQ(fnv1a64(as_bytes("")), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64(as_bytes("a")), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64(as_bytes("foobar")), 0x85944171f73967e8ULL);
  // In pieces, the same as at once.
  EXPECT_EQ(fnv1a64(as_bytes("bar"), fnv1a64(as_bytes("foo"))), 0x85944171f73967e8ULL);
}

TEST(LibraryFileTest, TheTestModuleIsSealed) {
  const std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  ASSERT_GT(bytes.size(), kLibraryTrailerSize);
  const size_t content = bytes.size() - kLibraryTrailerSize;
  EXPECT_EQ(std::string(bytes.end() - 8, bytes.end()), "RLXSEAL1");
  uint64_t size = 0;
  uint64_t sum = 0;
  std::memcpy(&size, bytes.data() + content, 8);
  std::memcpy(&sum, bytes.data() + content + 8, 8);
  EXPECT_EQ(size, content);
  EXPECT_EQ(sum, fnv1a64(std::span<const uint8_t>(bytes.data(), content)));
  absl::StatusOr<std::string> checked = check_library_file(RELAX_TEST_AOT_MODULE);
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(*checked, RELAX_TEST_AOT_MODULE);
}

// Cut at every length from 0 to 128 bytes, then every 97 bytes, then every length of the last
// 200: always DataLoss naming the bytes that are missing, never a crash -- also a cut inside the
// trailer, or exactly before it (the test module carries the seal marker, as exports do).
TEST(LibraryFileTest, ATruncatedLibraryIsAnErrorAtEveryLength) {
  const std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  ScratchDir dir;
  const std::string path = dir.file("truncated.so");
  std::vector<size_t> cuts;
  for (size_t n = 0; n < 128; ++n) cuts.push_back(n);
  for (size_t n = 128; n < bytes.size(); n += 97) cuts.push_back(n);
  for (size_t n = bytes.size() - 200; n < bytes.size(); ++n) cuts.push_back(n);
  for (size_t cut : cuts) {
    write_bytes(path, bytes, cut);
    absl::StatusOr<Module> m = load_module(path);
    ASSERT_FALSE(m.ok()) << "cut at " << cut;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << "cut at " << cut << ": " << m.status();
    EXPECT_THAT(status_message(m.status()), HasSubstr(absl::StrCat(path, ": truncated: "))) << "cut at " << cut;
    EXPECT_THAT(status_message(m.status()), HasSubstr(absl::StrCat("the file ends at byte ", cut, ", so bytes [")))
        << "cut at " << cut;
  }
}

TEST(LibraryFileTest, ACutAtTheEndNamesTheTrailersMissingBytes) {
  const std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  const size_t content = bytes.size() - kLibraryTrailerSize;
  const size_t end = bytes.size();
  ScratchDir dir;
  const std::string path = dir.file("cut_trailer.so");
  // Inside the trailer: the bytes left begin the trailer of the content.
  for (size_t cut : {content + 1, content + 8, content + 17, end - 1}) {
    write_bytes(path, bytes, cut);
    const absl::StatusOr<std::string> checked = check_library_file(path);
    ASSERT_FALSE(checked.ok()) << "cut at " << cut;
    EXPECT_EQ(checked.status().code(), absl::StatusCode::kDataLoss) << "cut at " << cut;
    EXPECT_EQ(status_message(checked.status()),
              absl::StrCat(path, ": truncated: the integrity trailer occupies bytes [", content, ", ", end,
                           ") but the file ends at byte ", cut, ", so bytes [", cut, ", ", end, ") are missing"));
  }
  // The whole trailer lost: the seal marker in the content says there was one.
  write_bytes(path, bytes, content);
  const absl::StatusOr<std::string> checked = check_library_file(path);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status_message(checked.status()),
            absl::StrCat(path, ": truncated: the file carries relax's seal marker, so its 24-byte integrity "
                               "trailer should occupy bytes [",
                         content, ", ", end, ") but the file ends at byte ", content, ", so bytes [", content,
                         ", ", end, ") are missing"));
}

TEST(LibraryFileTest, ATruncatedSegmentIsNamedWithItsRange) {
  const std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  const std::vector<Elf64_Phdr> segments = testing::elf_segments(bytes);
  ASSERT_FALSE(segments.empty());
  // The first PT_LOAD segment with file bytes past the ELF and program headers, cut in its middle.
  int index = -1;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].p_type == PT_LOAD && segments[i].p_offset > 0 && segments[i].p_filesz > 2) {
      index = static_cast<int>(i);
      break;
    }
  }
  ASSERT_GE(index, 0);
  const Elf64_Phdr& seg = segments[static_cast<size_t>(index)];
  const uint64_t cut = seg.p_offset + seg.p_filesz / 2;
  ScratchDir dir;
  const std::string path = dir.file("cut_segment.so");
  write_bytes(path, bytes, cut);
  absl::StatusOr<Module> m = load_module(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss);
  // Segments are checked in table order, so an earlier segment may be the one reported; this one
  // is the first that reaches past the cut when every earlier one ends before it.
  bool earlier_cut = false;
  for (int i = 0; i < index; ++i) {
    const Elf64_Phdr& s = segments[static_cast<size_t>(i)];
    earlier_cut |= s.p_filesz > 0 && s.p_offset + s.p_filesz > cut;
  }
  if (!earlier_cut) {
    EXPECT_EQ(status_message(m.status()),
              absl::StrCat("load_module: kernel library ", path, ": truncated: segment ", index,
                           " (PT_LOAD) occupies bytes [", seg.p_offset, ", ", seg.p_offset + seg.p_filesz,
                           ") but the file ends at byte ", cut, ", so bytes [", cut, ", ",
                           seg.p_offset + seg.p_filesz, ") are missing"));
  }
}

// Every byte of .dynamic, every 13th byte of .text, every 61st byte elsewhere and every byte of
// the trailer, one bit flipped at a time: always DataLoss, never a dlopen.
TEST(LibraryFileTest, AFlippedByteIsDataLoss) {
  const std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  const std::optional<testing::FileRange> text = testing::elf_section(bytes, ".text");
  const std::optional<testing::FileRange> dynamic = testing::elf_section(bytes, ".dynamic");
  ASSERT_TRUE(text.has_value());
  ASSERT_TRUE(dynamic.has_value());
  std::vector<size_t> positions;
  for (size_t i = 0; i < dynamic->size; ++i) positions.push_back(dynamic->offset + i);
  for (size_t i = 0; i < text->size; i += 13) positions.push_back(text->offset + i);
  for (size_t i = 0; i < bytes.size(); i += 61) positions.push_back(i);
  for (size_t i = bytes.size() - kLibraryTrailerSize; i < bytes.size(); ++i) positions.push_back(i);
  ScratchDir dir;
  const std::string path = dir.file("flipped.so");
  for (size_t at : positions) {
    std::vector<uint8_t> damaged = bytes;
    damaged[at] ^= static_cast<uint8_t>(1u << (at % 8));
    write_bytes(path, damaged, damaged.size());
    absl::StatusOr<Module> m = load_module(path);
    ASSERT_FALSE(m.ok()) << "byte " << at;
    ASSERT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << "byte " << at << ": " << m.status();
    EXPECT_THAT(status_message(m.status()), HasSubstr(path));
    EXPECT_THAT(status_message(m.status()), HasSubstr("the file is corrupt"));
  }
}

TEST(LibraryFileTest, AChecksumMismatchNamesBothSums) {
  std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  const size_t content = bytes.size() - kLibraryTrailerSize;
  uint64_t recorded = 0;
  std::memcpy(&recorded, bytes.data() + content + 8, 8);
  bytes[content / 2] ^= 0x10;
  const uint64_t actual = fnv1a64(std::span<const uint8_t>(bytes.data(), content));
  ScratchDir dir;
  const std::string path = dir.file("mismatch.so");
  write_bytes(path, bytes, bytes.size());
  absl::StatusOr<std::string> checked = check_library_file(path);
  ASSERT_FALSE(checked.ok());
  char expected[256];
  std::snprintf(expected, sizeof expected,
                ": checksum mismatch (the trailer records %016llx, the %zu bytes before it hash to %016llx): "
                "the file is corrupt",
                static_cast<unsigned long long>(recorded), content, static_cast<unsigned long long>(actual));
  EXPECT_EQ(status_message(checked.status()), path + expected);
}

TEST(LibraryFileTest, AnUnsealedLibraryIsRefusedUntilSealed) {
  // The test module without its trailer and without the seal marker (one byte of it changed,
  // in read-only data): a library written by an older relax or built by hand.
  std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  bytes.resize(bytes.size() - kLibraryTrailerSize);
  const std::string_view marker = kSealedMarker;
  auto at = std::search(bytes.begin(), bytes.end(), marker.begin(), marker.end());
  ASSERT_NE(at, bytes.end());
  *at = 'R';
  ScratchDir dir;
  const std::string path = dir.file("unsealed.so");
  write_bytes(path, bytes, bytes.size());
  absl::StatusOr<Module> m = load_module(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status_message(m.status()), HasSubstr(absl::StrCat(path, " has no relax integrity trailer")));
  ASSERT_TRUE(seal_library_file(path).ok());
  std::vector<uint8_t> sealed = read_bytes(path);
  EXPECT_EQ(sealed.size(), bytes.size() + kLibraryTrailerSize);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), sealed.begin()));
  // Sealing a sealed file changes nothing.
  ASSERT_TRUE(seal_library_file(path).ok());
  EXPECT_EQ(read_bytes(path), sealed);
  m = load_module(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->function_names(), (std::vector<std::string>{"main", "offset"}));
}

TEST(LibraryFileTest, SealRefusesWhatIsNotAWholeSharedObject) {
  const std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  ScratchDir dir;
  const std::string path = dir.file("half.so");
  write_bytes(path, bytes, bytes.size() / 2);
  absl::Status s = seal_library_file(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status_message(s), HasSubstr("truncated"));
  EXPECT_EQ(read_bytes(path).size(), bytes.size() / 2);
}

TEST(LibraryFileTest, ARelativePathIsReadFromTheWorkingDirectory) {
  ScratchDir dir;
  const std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  write_bytes(dir.file("model.so"), bytes, bytes.size());
  testing::WorkingDirectory cwd(dir.path());
  // A bare name is a file of the working directory, not a name for dlopen's library search.
  absl::StatusOr<Module> m = load_module("model.so");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->function_names(), (std::vector<std::string>{"main", "offset"}));
  absl::StatusOr<std::string> checked = check_library_file("model.so");
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(*checked, dir.file("model.so"));
  // The exporter of the loaded module copies the file it came from, by its absolute path.
  std::filesystem::create_directory("sub");
  ASSERT_TRUE(m->export_library("sub/copy.so").ok());
  EXPECT_EQ(read_bytes("sub/copy.so"), bytes);
}

TEST(LibraryFileTest, AMissingFileSaysNoSuchFile) {
  ScratchDir dir;
  const std::string path = dir.file("missing.so");
  absl::StatusOr<Module> m = load_module(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status_message(m.status()), absl::StrCat("load_module: kernel library ", path, ": no such file"));

  testing::WorkingDirectory cwd(dir.path());
  m = load_module("model.so");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status_message(m.status()), absl::StrCat("load_module: kernel library model.so: no such file (looked for ",
                                              dir.file("model.so"), ")"));
}

TEST(LibraryFileTest, WhatIsNotASharedObjectIsInvalidArgument) {
  ScratchDir dir;
  const std::string text = dir.file("text.so");
  const std::string content = "not a shared object, but longer than an ELF header would be, to be sure.\n";
  write_bytes(text, std::vector<uint8_t>(content.begin(), content.end()), content.size());
  absl::StatusOr<std::string> checked = check_library_file(text);
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status_message(checked.status()),
            text + " is not a loadable shared object: it does not begin with the ELF magic bytes 7f 45 4c 46");

  checked = check_library_file(dir.path());
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status_message(checked.status()), dir.path() + " is not a regular file");

  // A whole ELF file that is not a shared object.
  std::vector<uint8_t> bytes = read_bytes(RELAX_TEST_AOT_MODULE);
  bytes[16] = ET_EXEC;  // e_type
  bytes.resize(bytes.size() - kLibraryTrailerSize);
  const std::string exec = dir.file("exec.so");
  write_bytes(exec, bytes, bytes.size());
  ASSERT_TRUE(seal_library_file(exec).ok() == false);  // seal checks the ELF structure too
  checked = check_library_file(exec);
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status_message(checked.status()), HasSubstr("its ELF type is 2, not ET_DYN (3)"));
}

}  // namespace
}  // namespace relax::runtime
