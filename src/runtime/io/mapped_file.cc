// MappedFile (relax/runtime/mapped_file.h): mmap of a whole regular file, read-only, private.
#include "relax/runtime/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace relax::runtime {

absl::StatusOr<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string text = absl::StrCat("cannot open ", what, " ", path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(text) : absl::UnavailableError(text);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* addr = nullptr;
  if (size > 0) {
    addr = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int map_err = errno;
    if (addr == MAP_FAILED) {
      ::close(fd);
      return absl::UnavailableError(absl::StrCat("cannot map ", what, " ", path, ": ", std::strerror(map_err)));
    }
  }
  ::close(fd);  // the mapping stays valid after the descriptor is closed
  return std::shared_ptr<const MappedFile>(new MappedFile(addr, size, path));
}

MappedFile::~MappedFile() {
  if (addr_ != nullptr) munmap(addr_, size_);
}

}  // namespace relax::runtime
