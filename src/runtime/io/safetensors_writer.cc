// Writing safetensors files (relax/runtime/safetensors.h).
//
// create() decides the whole layout from the declarations -- data offsets, then the header,
// padded with spaces so that the data section starts at a multiple of 64 -- writes the header
// and sizes the temporary file, so that write() can put each tensor's bytes at its offset
// (pwrite) in whatever order they come. Tensors whose byte size is a multiple of 64 go first,
// in declaration order, each on a 64-byte boundary; the rest follow by decreasing element size
// (8, 4, 2, 1 bytes: all powers of two), so each of them starts at a multiple of its element
// size. There are no holes, as the spec requires.
//
// The temporary file is "<path>.tmp.<pid>.<count>" next to `path`, renamed over it by finish(); no
// fsync, so a machine crash may leave the old file or nothing, never a partial file at `path`
// unless the file system reorders the rename before the data.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tensor_compact.h"
#include "relax/runtime/safetensors.h"

namespace relax::runtime {

namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr uint64_t kAlign = 64;

uint64_t element_bytes(DataType dtype) { return (static_cast<uint64_t>(dtype.bits) * dtype.lanes + 7) / 8; }

std::string shape_text(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Writes all of `size` bytes at `offset`; an errno on failure.
int write_all(int fd, const char* data, uint64_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = pwrite(fd, data, std::min<uint64_t>(size, 1u << 30), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return 0;
}

}  // namespace

absl::StatusOr<SafetensorsWriter> SafetensorsWriter::create(const std::string& path, std::vector<Declaration> tensors,
                                                            const std::map<std::string, std::string>& metadata) {
  auto bad = [&](const std::string& name, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", name, "': ", what));
  };
  SafetensorsWriter w;
  w.path_ = path;
  std::vector<uint64_t> sizes(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Declaration& d = tensors[i];
    if (d.name.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": tensor ", i, " has an empty name"));
    if (d.name == "__metadata__") return bad(d.name, "the name is reserved for the metadata");
    if (absl::StatusOr<std::string> n = safetensors_dtype_name(d.dtype); !n.ok()) {
      return bad(d.name, std::string(n.status().message()));
    }
    auto bytes = static_cast<int64_t>(element_bytes(d.dtype));
    for (size_t k = 0; k < d.shape.size(); ++k) {
      if (d.shape[k] < 0) return bad(d.name, absl::StrCat("dim ", k, " of shape ", shape_text(d.shape), " is negative"));
      if (__builtin_mul_overflow(bytes, d.shape[k], &bytes)) {
        return bad(d.name, absl::StrCat("the byte size of shape ", shape_text(d.shape), " overflows"));
      }
    }
    sizes[i] = static_cast<uint64_t>(bytes);
    if (!w.index_.emplace(d.name, i).second) return bad(d.name, "declared twice");
  }

  // The layout (file comment): 64-byte multiples first, then by decreasing element size.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool a64 = sizes[a] % kAlign == 0, b64 = sizes[b] % kAlign == 0;
    if (a64 != b64) return a64;
    return !a64 && element_bytes(tensors[a].dtype) > element_bytes(tensors[b].dtype);
  });
  uint64_t at = 0;
  for (size_t i : order) {
    Declaration d = std::move(tensors[i]);
    d.begin = at;
    if (__builtin_add_overflow(at, sizes[i], &d.end)) return bad(d.name, "the data section's size overflows");
    at = d.end;
    w.entries_.push_back(std::move(d));
  }
  w.index_.clear();
  for (size_t i = 0; i < w.entries_.size(); ++i) w.index_[w.entries_[i].name] = i;
  w.written_.assign(w.entries_.size(), false);

  OrderedJson header = OrderedJson::object();
  if (!metadata.empty()) {
    OrderedJson meta = OrderedJson::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  for (const SafetensorsEntry& e : w.entries_) {
    header[e.name] = OrderedJson{{"dtype", *safetensors_dtype_name(e.dtype)},
                                 {"shape", e.shape},
                                 {"data_offsets", {e.begin, e.end}}};
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const OrderedJson::exception& e) {  // a name or metadata that is not UTF-8
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot write the header: ", e.what()));
  }
  text.append((kAlign - (8 + text.size()) % kAlign) % kAlign, ' ');
  w.data_start_ = 8 + text.size();
  std::string head(8, '\0');
  const uint64_t n = text.size();
  std::memcpy(head.data(), &n, 8);
  head += text;

  // The process id and a count: writers of one process, as of several, never share a file.
  static std::atomic<uint64_t> writers{0};
  w.tmp_path_ = absl::StrCat(path, ".tmp.", getpid(), ".", writers.fetch_add(1));
  w.fd_ = ::open(w.tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w.fd_ < 0) {
    const int err = errno;
    w.tmp_path_.clear();
    return absl::UnavailableError(absl::StrCat("cannot create ", path, ".tmp.*: ", std::strerror(err)));
  }
  int err = write_all(w.fd_, head.data(), head.size(), 0);
  if (err == 0 && ftruncate(w.fd_, static_cast<off_t>(w.data_start_ + at)) != 0) err = errno;
  if (err != 0) return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
  return w;
}

SafetensorsWriter::SafetensorsWriter(SafetensorsWriter&& other) noexcept { *this = std::move(other); }

SafetensorsWriter& SafetensorsWriter::operator=(SafetensorsWriter&& other) noexcept {
  if (this != &other) {
    abandon();
    path_ = std::move(other.path_);
    tmp_path_ = std::exchange(other.tmp_path_, std::string());
    fd_ = std::exchange(other.fd_, -1);
    data_start_ = other.data_start_;
    entries_ = std::move(other.entries_);
    index_ = std::move(other.index_);
    written_ = std::move(other.written_);
  }
  return *this;
}

SafetensorsWriter::~SafetensorsWriter() { abandon(); }

void SafetensorsWriter::abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_path_.empty()) ::unlink(tmp_path_.c_str());
  tmp_path_.clear();
}

absl::Status SafetensorsWriter::write(const std::string& name, const Tensor& tensor) {
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": tensor '", name, "': ", what));
  };
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, ": write after finish() or a failed create()"));
  auto it = index_.find(name);
  if (it == index_.end()) return bad(absl::StrCat("not declared (", entries_.size(), " tensors were)"));
  const SafetensorsEntry& e = entries_[it->second];
  if (written_[it->second]) return bad("written twice");
  if (!tensor.defined()) return bad("the tensor is undefined");
  if (tensor.device().type != Device::Type::kCPU) return bad(absl::StrCat("not a host tensor: ", tensor.describe()));
  if (tensor.shape() != e.shape || tensor.dtype() != e.dtype) {
    return bad(absl::StrCat("declared ", shape_text(e.shape), " ", e.dtype.to_string(), ", got ",
                            shape_text(tensor.shape()), " ", tensor.dtype().to_string()));
  }
  absl::StatusOr<Tensor> dense_or = compact(tensor);
  if (!dense_or.ok()) return dense_or.status();
  const Tensor& dense = *dense_or;
  if (int err = write_all(fd_, static_cast<const char*>(dense.data()), e.end - e.begin, data_start_ + e.begin);
      err != 0) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path_, " (tensor '", name, "'): ", std::strerror(err)));
  }
  written_[it->second] = true;
  return absl::OkStatus();
}

absl::Status SafetensorsWriter::finish() {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, ": finish() twice or after a failed create()"));
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!written_[i]) {
      return absl::FailedPreconditionError(absl::StrCat(path_, ": tensor '", entries_[i].name,
                                                        "' was declared but not written"));
    }
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 || std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    abandon();
    return absl::UnavailableError(absl::StrCat("cannot write ", path_, ": ", std::strerror(err)));
  }
  tmp_path_.clear();
  return absl::OkStatus();
}

absl::Status write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  std::vector<SafetensorsWriter::Declaration> declared;
  declared.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    if (!t.defined()) return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", name, "' is undefined"));
    declared.push_back({name, t.dtype(), t.shape(), 0, 0});
  }
  absl::StatusOr<SafetensorsWriter> w = SafetensorsWriter::create(path, std::move(declared), metadata);
  if (!w.ok()) return w.status();
  for (const auto& [name, t] : tensors) {
    if (absl::Status s = w->write(name, t); !s.ok()) return s;
  }
  return w->finish();
}

}  // namespace relax::runtime
