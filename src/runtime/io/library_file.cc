// check_library_file and seal_library_file (relax/runtime/library_file.h).
//
// The whole file is read into memory with read(2), never mapped: a mapping of
// a file that shrinks under us would fault exactly like dlopen does. The ELF
// structures are copied out of the buffer (no aligned access into it) and
// every offset is compared to the size without overflow, so any byte string
// gives a Status. The check covers the bytes dlopen maps (the program headers
// and every segment's file range) and the section header table, which GNU ld
// places last: a file cut anywhere before its trailer names the bytes it lacks.
// A file cut inside its trailer (the bytes after the ELF content begin the
// trailer that content would have) is DataLoss naming the trailer's missing
// bytes too; so is one that lost exactly its whole trailer when its content
// carries kSealedMarker, which every AOT library relax exports does (without
// the marker, such a file cannot be told from one never sealed: an older
// relax's, or a kernel library built by hand, which is FailedPrecondition).
//
// Not handled: the file changing between the check and dlopen (the caller
// must not hand relax a file that another process is rewriting in place), and
// 32-bit or big-endian hosts (relax runs on 64-bit little-endian Linux).
//
// This file is part of the runtime: it knows nothing of the compiler.
#include "relax/runtime/library_file.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "relax/support/fnv1a.h"

namespace relax::runtime {
namespace {

constexpr char kTrailerMagic[8] = {'R', 'L', 'X', 'S', 'E', 'A', 'L', '1'};
constexpr unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
constexpr uint16_t kHostMachine = EM_NONE;  // not checked
#endif

static_assert(std::endian::native == std::endian::little, "relax reads ELF files of little-endian hosts");

/// Reads the regular file at `resolved` (named `name` in messages).
absl::StatusOr<std::vector<uint8_t>> read_file(const std::string& name, const std::string& resolved) {
  const int fd = ::open(resolved.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(name == resolved
                                     ? absl::StrCat(name, ": no such file")
                                     : absl::StrCat(name, ": no such file (looked for ", resolved, ")"));
    }
    return absl::PermissionDeniedError(absl::StrCat(name, ": cannot open: ", std::strerror(err)));
  }
  std::vector<uint8_t> bytes;
  absl::Status status;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    status = absl::InternalError(absl::StrCat(name, ": cannot stat: ", std::strerror(errno)));
  } else if (!S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat(name, " is not a regular file"));
  } else {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    // Read to the end of the file, whatever size fstat saw: the file may change.
    while (status.ok()) {
      if (done == bytes.size()) bytes.resize(bytes.size() + 4096);
      const ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (got < 0) {
        if (errno == EINTR) continue;
        status = absl::InternalError(absl::StrCat(name, ": cannot read: ", std::strerror(errno)));
      } else if (got == 0) {
        break;
      } else {
        done += static_cast<size_t>(got);
      }
    }
    bytes.resize(done);
  }
  ::close(fd);
  if (!status.ok()) return status;
  return bytes;
}

/// `path` relative to the working directory when it is relative, so that a
/// bare name never reaches dlopen's library search.
std::string absolute_path(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

uint64_t load_u64(std::span<const uint8_t> bytes, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof v);  // little-endian host (asserted above)
  return v;
}

void store_u64(uint8_t* out, uint64_t v) { std::memcpy(out, &v, sizeof v); }

/// The trailer for `content`.
std::vector<uint8_t> make_trailer(std::span<const uint8_t> content) {
  std::vector<uint8_t> trailer(kLibraryTrailerSize);
  store_u64(trailer.data(), content.size());
  store_u64(trailer.data() + 8, fnv1a64(content));
  std::memcpy(trailer.data() + 16, kTrailerMagic, sizeof kTrailerMagic);
  return trailer;
}

enum class Trailer { kAbsent, kValid };

/// Looks at the end of `bytes`: no trailer, a valid one, or an error (DataLoss)
/// for a damaged trailer or a checksum mismatch. A trailer is recognised by its
/// magic or by a size field equal to the size of what precedes it, so that a
/// single damaged byte anywhere in it is still recognised as damage.
absl::StatusOr<Trailer> check_trailer(const std::string& name, std::span<const uint8_t> bytes) {
  if (bytes.size() < kLibraryTrailerSize) return Trailer::kAbsent;
  const size_t content_size = bytes.size() - kLibraryTrailerSize;
  const std::span<const uint8_t> trailer = bytes.subspan(content_size);
  const bool magic_ok = std::memcmp(trailer.data() + 16, kTrailerMagic, sizeof kTrailerMagic) == 0;
  const uint64_t recorded_size = load_u64(trailer, 0);
  const bool size_ok = recorded_size == content_size;
  if (!magic_ok && !size_ok) return Trailer::kAbsent;
  if (!magic_ok) {
    return absl::DataLossError(absl::StrCat(name, ": the integrity trailer at byte ", content_size + 16,
                                            " is damaged (its magic is not \"RLXSEAL1\"): the file is corrupt"));
  }
  if (!size_ok) {
    return absl::DataLossError(absl::StrCat(
        name, ": the integrity trailer records ", recorded_size, " bytes of content but the file holds ",
        content_size, recorded_size > content_size ? " (bytes are missing)" : " (bytes were added or the trailer is damaged)",
        ": the file is corrupt"));
  }
  const uint64_t recorded_sum = load_u64(trailer, 8);
  const uint64_t sum = fnv1a64(bytes.first(content_size));
  if (sum != recorded_sum) {
    return absl::DataLossError(absl::StrFormat(
        "%s: checksum mismatch (the trailer records %016x, the %d bytes before it hash to %016x): the "
        "file is corrupt",
        name, recorded_sum, content_size, sum));
  }
  return Trailer::kValid;
}

/// DataLoss: `what` occupies [begin, end) but the file ends at `size`.
absl::Status missing_range(const std::string& name, const std::string& what, uint64_t begin, uint64_t end,
                           uint64_t size) {
  return absl::DataLossError(absl::StrCat(name, ": truncated: ", what, " occupies bytes [", begin, ", ", end,
                                          ") but the file ends at byte ", size, ", so bytes [",
                                          begin > size ? begin : size, ", ", end, ") are missing"));
}

/// Whether [offset, offset + count * entry) lies inside `size`, without overflow.
/// Sets `end` to the end of the range (saturated).
bool inside(uint64_t offset, uint64_t count, uint64_t entry, uint64_t size, uint64_t* end) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, entry, &bytes) || __builtin_add_overflow(offset, bytes, end)) {
    *end = UINT64_MAX;
    return false;
  }
  return *end <= size;
}

std::string segment_type_name(uint32_t type) {
  switch (type) {
    case PT_LOAD: return "PT_LOAD";
    case PT_DYNAMIC: return "PT_DYNAMIC";
    case PT_INTERP: return "PT_INTERP";
    case PT_NOTE: return "PT_NOTE";
    case PT_TLS: return "PT_TLS";
    case PT_GNU_EH_FRAME: return "PT_GNU_EH_FRAME";
    case PT_GNU_RELRO: return "PT_GNU_RELRO";
    case PT_GNU_PROPERTY: return "PT_GNU_PROPERTY";
    default: return absl::StrFormat("type 0x%x", type);
  }
}

/// The ELF checks of check_library_file on the content (the file without its trailer). On
/// success `*elf_end` (when given) is the end of the last byte range the ELF headers describe
/// (program headers, segments, section headers): where the content of a sealed file ends.
absl::Status check_elf(const std::string& name, std::span<const uint8_t> bytes, uint64_t* elf_end = nullptr) {
  const uint64_t size = bytes.size();
  uint64_t last = 0;
  const size_t magic_seen = size < sizeof kElfMagic ? size : sizeof kElfMagic;
  if (magic_seen > 0 && std::memcmp(bytes.data(), kElfMagic, magic_seen) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is not a loadable shared object: it does not begin with the ELF magic bytes 7f 45 4c 46"));
  }
  if (size < sizeof(Elf64_Ehdr)) {
    return missing_range(name, "the ELF header", 0, sizeof(Elf64_Ehdr), size);
  }
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " is not a loadable shared object: ELF class ", header.e_ident[EI_CLASS],
                     " and data encoding ", header.e_ident[EI_DATA], ", but this runtime loads 64-bit "
                     "little-endian objects (class 2, encoding 1)"));
  }
  if (header.e_type != ET_DYN) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is not a loadable shared object: its ELF type is ",
                                                   header.e_type, ", not ET_DYN (", ET_DYN, ")"));
  }
  if (kHostMachine != EM_NONE && header.e_machine != kHostMachine) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is built for ELF machine ", header.e_machine,
                                                   ", but this process runs on machine ", kHostMachine));
  }
  if (header.e_phnum == 0 || header.e_phentsize != sizeof(Elf64_Phdr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is not a loadable shared object: its program header table has ", header.e_phnum,
        " entries of ", header.e_phentsize, " bytes (expected at least one entry of ", sizeof(Elf64_Phdr), ")"));
  }
  uint64_t end = 0;
  if (!inside(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr), size, &end)) {
    return missing_range(name, "the program header table", header.e_phoff, end, size);
  }
  last = std::max<uint64_t>(end, sizeof(Elf64_Ehdr));
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, bytes.data() + header.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr), sizeof segment);
    if (segment.p_filesz == 0) continue;
    if (!inside(segment.p_offset, 1, segment.p_filesz, size, &end)) {
      return missing_range(name, absl::StrCat("segment ", i, " (", segment_type_name(segment.p_type), ")"),
                           segment.p_offset, end, size);
    }
    last = std::max(last, end);
  }
  if (header.e_shnum > 0 && header.e_shoff != 0) {
    if (header.e_shentsize != sizeof(Elf64_Shdr)) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": section header entries of ", header.e_shentsize,
                                                     " bytes (expected ", sizeof(Elf64_Shdr), ")"));
    }
    if (!inside(header.e_shoff, header.e_shnum, sizeof(Elf64_Shdr), size, &end)) {
      return missing_range(name, "the section header table", header.e_shoff, end, size);
    }
    last = std::max(last, end);
  }
  if (elf_end != nullptr) *elf_end = last;
  return absl::OkStatus();
}

/// A file without a whole trailer whose ELF content is whole: DataLoss when it was sealed and
/// cut at its end -- the bytes after the ELF content are the start of its trailer, or there are
/// none but the content carries kSealedMarker -- else OK (an unsealed file).
absl::Status check_cut_trailer(const std::string& name, std::span<const uint8_t> bytes, uint64_t elf_end) {
  const uint64_t size = bytes.size();
  if (elf_end > size) return absl::OkStatus();
  const uint64_t extra = size - elf_end;
  if (extra > 0 && extra < kLibraryTrailerSize) {
    // The bytes a trailer for the content [0, elf_end) would begin with.
    const std::vector<uint8_t> expected = make_trailer(bytes.first(elf_end));
    if (std::memcmp(bytes.data() + elf_end, expected.data(), extra) == 0) {
      return missing_range(name, "the integrity trailer", elf_end, elf_end + kLibraryTrailerSize, size);
    }
    return absl::OkStatus();
  }
  if (extra == 0) {
    const std::string_view content(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (content.find(kSealedMarker) != std::string_view::npos) {
      return absl::DataLossError(absl::StrCat(
          name, ": truncated: the file carries relax's seal marker, so its 24-byte integrity trailer should "
                "occupy bytes [", size, ", ", size + kLibraryTrailerSize, ") but the file ends at byte ", size,
          ", so bytes [", size, ", ", size + kLibraryTrailerSize, ") are missing"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> check_library_file(const std::string& path) {
  const std::string resolved = absolute_path(path);
  absl::StatusOr<std::vector<uint8_t>> bytes = read_file(path, resolved);
  if (!bytes.ok()) return bytes.status();
  const std::span<const uint8_t> all(*bytes);
  absl::StatusOr<Trailer> trailer = check_trailer(path, all);
  if (!trailer.ok()) return trailer.status();
  const std::span<const uint8_t> content =
      *trailer == Trailer::kValid ? all.first(all.size() - kLibraryTrailerSize) : all;
  uint64_t elf_end = 0;
  if (absl::Status s = check_elf(path, content, &elf_end); !s.ok()) return s;
  if (*trailer == Trailer::kAbsent) {
    if (absl::Status s = check_cut_trailer(path, all, elf_end); !s.ok()) return s;
    return absl::FailedPreconditionError(absl::StrCat(
        path, " has no relax integrity trailer (\"RLXSEAL1\" at its end): it was written by an older relax or "
              "another tool, or cut short. Export it again with this relax (a kernel library built by hand "
              "is sealed with relax::runtime::seal_library_file)"));
  }
  return resolved;
}

absl::Status seal_library_file(const std::string& path) {
  const std::string resolved = absolute_path(path);
  absl::StatusOr<std::vector<uint8_t>> bytes = read_file(path, resolved);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Trailer> trailer = check_trailer(path, *bytes);
  if (!trailer.ok()) return trailer.status();  // damaged: sealing it would bless the damage
  if (*trailer == Trailer::kValid) return absl::OkStatus();
  if (absl::Status s = check_elf(path, *bytes); !s.ok()) return s;
  const std::vector<uint8_t> appendix = make_trailer(*bytes);
  const int fd = ::open(resolved.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open to seal: ", std::strerror(errno)));
  size_t done = 0;
  absl::Status status;
  while (done < appendix.size()) {
    const ssize_t put = ::write(fd, appendix.data() + done, appendix.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      status = absl::InternalError(absl::StrCat(path, ": cannot write the integrity trailer: ", std::strerror(errno)));
      break;
    }
    done += static_cast<size_t>(put);
  }
  if (::close(fd) != 0 && status.ok()) {
    status = absl::InternalError(absl::StrCat(path, ": cannot write the integrity trailer: ", std::strerror(errno)));
  }
  return status;
}

}  // namespace relax::runtime
