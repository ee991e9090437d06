// Helpers of the tests that damage shared objects on purpose
// (library_file_test.cc, tests/codegen/export_integrity_test.cc): read and
// write whole files, and find where a section or segment lies in an ELF file,
// read with <elf.h> independently of src/runtime/io/library_file.cc.
#pragma once

#include <elf.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace relax::runtime::testing {

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes, size_t count) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(count));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// A byte range of a file.
struct FileRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// Where the section called `name` lies in the ELF file `bytes`, if it has one with file bytes.
inline std::optional<FileRange> elf_section(const std::vector<uint8_t>& bytes, const std::string& name) {
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  auto section = [&](size_t i) {
    Elf64_Shdr s;
    std::memcpy(&s, bytes.data() + header.e_shoff + i * sizeof(Elf64_Shdr), sizeof s);
    return s;
  };
  const Elf64_Shdr names = section(header.e_shstrndx);
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr s = section(i);
    const char* section_name = reinterpret_cast<const char*>(bytes.data() + names.sh_offset + s.sh_name);
    if (name == section_name && s.sh_type != SHT_NOBITS) return FileRange{s.sh_offset, s.sh_size};
  }
  return std::nullopt;
}

/// The program headers of the ELF file `bytes`.
inline std::vector<Elf64_Phdr> elf_segments(const std::vector<uint8_t>& bytes) {
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  for (size_t i = 0; i < segments.size(); ++i) {
    std::memcpy(&segments[i], bytes.data() + header.e_phoff + i * sizeof(Elf64_Phdr), sizeof(Elf64_Phdr));
  }
  return segments;
}

/// A fresh directory under the test's temporary directory, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::path(::testing::TempDir()) / "relax_library_file.XXXXXX").string();
    const char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp " << pattern;
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Changes the working directory for its lifetime.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::string& dir) : saved_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~WorkingDirectory() {
    std::error_code ec;
    std::filesystem::current_path(saved_, ec);
  }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  std::filesystem::path saved_;
};

}  // namespace relax::runtime::testing
