// Reading safetensors files (relax/runtime/safetensors.h) and the dtype table both directions use.
//
// open() reads the file's size, maps it whole (PROT_READ, MAP_PRIVATE), then checks in the order
// of the file: the 8-byte length, the header's size against the file, the JSON (parsed by
// nlohmann with a callback that catches duplicate top-level names, which the plain parser would
// silently merge), each entry, then the layout over all entries sorted by offset. The file is
// outside input: every check is an InvalidArgument "<path>: ...", never an abort, and no byte
// outside the mapping is read (the JSON parser reads only the header's N bytes).
//
// A tensor is handed out through Tensor::adopt with a shared_ptr to the Mapping as its owner,
// so the last tensor to die (or the file, if later) unmaps it.
#include "relax/runtime/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace relax::runtime {

static_assert(std::endian::native == std::endian::little,
              "relax's safetensors support assumes a little-endian host");

namespace {

using Json = nlohmann::json;

// safetensors' own limit on the header (the reference reader's MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeRow {
  const char* name;
  DataType dtype;
};

constexpr std::array<DtypeRow, 13> kDtypes = {{
    {"BOOL", DataType::boolean()},
    {"U8", DataType{DataType::Code::kUInt, 8, 1}},
    {"I8", DataType{DataType::Code::kInt, 8, 1}},
    {"U16", DataType{DataType::Code::kUInt, 16, 1}},
    {"I16", DataType{DataType::Code::kInt, 16, 1}},
    {"F16", DataType::float16()},
    {"BF16", DataType::bfloat16()},
    {"U32", DataType{DataType::Code::kUInt, 32, 1}},
    {"I32", DataType::int32()},
    {"F32", DataType::float32()},
    {"U64", DataType{DataType::Code::kUInt, 64, 1}},
    {"I64", DataType::int64()},
    {"F64", DataType::float64()},
}};

// safetensors dtypes without a relax DataType: named in the error rather than called unknown.
constexpr std::array<const char*, 6> kUnsupportedDtypes = {"F8_E4M3", "F8_E5M2", "F8_E8M0",
                                                           "F6_E2M3", "F6_E3M2", "F4"};

std::string supported_dtype_names() {
  std::vector<std::string> names;
  for (const DtypeRow& row : kDtypes) names.emplace_back(row.name);
  return absl::StrJoin(names, ", ");
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// The byte size of `shape` elements of `dtype`, or nullopt on overflow (of int64).
std::optional<uint64_t> byte_size(const std::vector<int64_t>& shape, DataType dtype) {
  int64_t bytes = (static_cast<int64_t>(dtype.bits) * dtype.lanes + 7) / 8;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(bytes, d, &bytes)) return std::nullopt;
  }
  return static_cast<uint64_t>(bytes);
}

// Reads one entry's JSON into `entry`; errors are "tensor '<name>': ...".
absl::Status read_entry(const std::string& name, const Json& value, SafetensorsEntry& entry,
                        uint64_t data_size) {
  const std::string where = absl::StrCat("tensor '", name, "'");
  auto bad = [&](const std::string& what) { return absl::InvalidArgumentError(absl::StrCat(where, ": ", what)); };
  if (!value.is_object()) return bad(absl::StrCat("expected an object, got ", value.type_name()));
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!value.contains(key)) return bad(absl::StrCat("missing \"", key, "\""));
  }
  entry.name = name;
  const Json& dtype = value["dtype"];
  if (!dtype.is_string()) return bad(absl::StrCat("\"dtype\" is a ", dtype.type_name(), ", expected a string"));
  absl::StatusOr<DataType> dt = safetensors_dtype(dtype.get<std::string>());
  if (!dt.ok()) return bad(std::string(dt.status().message()));
  entry.dtype = *dt;

  const Json& shape = value["shape"];
  if (!shape.is_array()) return bad(absl::StrCat("\"shape\" is a ", shape.type_name(), ", expected an array"));
  for (size_t i = 0; i < shape.size(); ++i) {
    const Json& d = shape[i];
    if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return bad(absl::StrCat("shape dim ", i, " is ", d.dump(), ", expected a non-negative integer below 2^63"));
    }
    entry.shape.push_back(d.get<int64_t>());
  }

  const Json& offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    return bad(absl::StrCat("\"data_offsets\" is ", offsets.dump(), ", expected [begin, end] (two non-negative integers)"));
  }
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  if (entry.begin > entry.end) {
    return bad(absl::StrCat("data_offsets [", entry.begin, ", ", entry.end, "] end before they begin"));
  }
  if (entry.end > data_size) {
    return bad(absl::StrCat("data_offsets [", entry.begin, ", ", entry.end, "] end beyond the data section of ",
                            data_size, " bytes"));
  }
  std::optional<uint64_t> bytes = byte_size(entry.shape, entry.dtype);
  if (!bytes) return bad(absl::StrCat("the byte size of shape ", shape_text(entry.shape), " overflows"));
  if (*bytes != entry.end - entry.begin) {
    return bad(absl::StrCat("shape ", shape_text(entry.shape), " of ", dtype.get<std::string>(), " needs ", *bytes,
                            " bytes, but data_offsets [", entry.begin, ", ", entry.end, "] hold ",
                            entry.end - entry.begin));
  }
  return absl::OkStatus();
}

// The spec's layout: sorted by offset, the tensors tile the data section exactly.
absl::Status check_layout(const std::vector<SafetensorsEntry>& entries, uint64_t data_size) {
  uint64_t at = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry& e : entries) {
    if (e.begin < at) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", e.name, "' (bytes [", e.begin, ", ", e.end,
                                                     ")) overlaps tensor '", previous->name, "' (bytes [",
                                                     previous->begin, ", ", previous->end, "))"));
    }
    if (e.begin > at) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", e.name, "' begins at byte ", e.begin, " of the data section, expected ", at,
          previous ? absl::StrCat(" where tensor '", previous->name, "' ends") : std::string(" (its start)"),
          ": the spec forbids holes"));
    }
    at = e.end;
    previous = &e;
  }
  if (at != data_size) {
    return absl::InvalidArgumentError(absl::StrCat("the tensors end at byte ", at, " of the data section, but it has ",
                                                   data_size, " bytes: the spec forbids trailing bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> safetensors_dtype_name(DataType dtype) {
  for (const DtypeRow& row : kDtypes) {
    if (row.dtype == dtype) return std::string(row.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("safetensors has no dtype for ", dtype.to_string(), "; it holds ", supported_dtype_names()));
}

absl::StatusOr<DataType> safetensors_dtype(const std::string& name) {
  for (const DtypeRow& row : kDtypes) {
    if (name == row.name) return row.dtype;
  }
  for (const char* unsupported : kUnsupportedDtypes) {
    if (name == unsupported) {
      return absl::InvalidArgumentError(absl::StrCat("dtype \"", name, "\" is not supported by relax; expected one of ",
                                                     supported_dtype_names()));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype \"", name, "\"; expected one of ", supported_dtype_names()));
}

// ---------------------------------------------------------------------------
// The mapping.

absl::StatusOr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  auto fail = [&](const std::string& what) { return absl::InvalidArgumentError(absl::StrCat(path, ": ", what)); };
  absl::StatusOr<std::shared_ptr<const MappedFile>> mapped = MappedFile::open(path, "safetensors file");
  if (!mapped.ok()) return mapped.status();
  const uint64_t file_size = (*mapped)->size();
  if (file_size < 8) {
    return fail(absl::StrCat("the file has ", file_size, " bytes, fewer than the 8 of the header length"));
  }
  SafetensorsFile file;
  file.mapping_ = *std::move(mapped);
  file.path_ = path;
  const char* bytes = file.mapping_->bytes();

  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes, 8);
  if (header_size > kMaxHeaderBytes) {
    return fail(absl::StrCat("the header length is ", header_size, " bytes, more than the limit of ", kMaxHeaderBytes));
  }
  if (header_size > file_size - 8) {
    return fail(absl::StrCat("the header length is ", header_size, " bytes, but only ", file_size - 8,
                             " follow the length"));
  }
  file.data_start_ = 8 + header_size;
  const uint64_t data_size = file_size - file.data_start_;

  // The header: one JSON object; the callback records names seen twice at the top level.
  std::set<std::string> seen;
  std::string duplicate;
  Json header;
  try {
    header = Json::parse(bytes + 8, bytes + 8 + header_size,
                         [&](int depth, Json::parse_event_t event, Json& parsed) {
                           if (event == Json::parse_event_t::key && depth == 1 && duplicate.empty() &&
                               !seen.insert(parsed.get<std::string>()).second) {
                             duplicate = parsed.get<std::string>();
                           }
                           return true;
                         });
  } catch (const Json::exception& e) {
    // nlohmann's message names the position: "parse error at line 1, column 9: ...".
    return fail(absl::StrCat("the header is not valid JSON: ", e.what()));
  }
  if (!header.is_object()) return fail(absl::StrCat("the header is a JSON ", header.type_name(), ", expected an object"));
  if (!duplicate.empty()) return fail(absl::StrCat("the header names tensor '", duplicate, "' twice"));

  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) return fail(absl::StrCat("\"__metadata__\" is a ", value.type_name(), ", expected an object"));
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) {
          return fail(absl::StrCat("\"__metadata__\" entry '", key, "' is ", text.dump(), ", expected a string"));
        }
        file.metadata_[key] = text.get<std::string>();
      }
      continue;
    }
    SafetensorsEntry entry;
    if (absl::Status s = read_entry(name, value, entry, data_size); !s.ok()) return fail(std::string(s.message()));
    file.entries_.push_back(std::move(entry));
  }
  std::stable_sort(file.entries_.begin(), file.entries_.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  if (absl::Status s = check_layout(file.entries_, data_size); !s.ok()) return fail(std::string(s.message()));
  for (size_t i = 0; i < file.entries_.size(); ++i) file.index_[file.entries_[i].name] = i;
  return file;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const SafetensorsEntry& e : entries_) out.push_back(e.name);
  return out;
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const void* SafetensorsFile::data_section() const { return mapping_->bytes() + data_start_; }

uint64_t SafetensorsFile::data_section_size() const { return mapping_->size() - data_start_; }

uint64_t SafetensorsFile::release_pages(const std::string& name) const {
  const SafetensorsEntry* e = find(name);
  if (e == nullptr) return 0;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(tensor_data(*e));
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + (e->end - e->begin)) / page * page;
  if (last <= first) return 0;
  // The mapping is private and never written: dropping the pages loses nothing.
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

const char* SafetensorsFile::tensor_data(const SafetensorsEntry& entry) const {
  return mapping_->bytes() + data_start_ + entry.begin;
}

bool SafetensorsFile::is_zero_copy(const std::string& name) const {
  const SafetensorsEntry* e = find(name);
  if (e == nullptr) return false;
  const size_t element = (static_cast<size_t>(e->dtype.bits) * e->dtype.lanes + 7) / 8;
  return reinterpret_cast<uintptr_t>(tensor_data(*e)) % element == 0;
}

absl::StatusOr<Tensor> SafetensorsFile::tensor(const std::string& name) const {
  const SafetensorsEntry* e = find(name);
  if (e == nullptr) {
    std::vector<std::string> some;
    for (size_t i = 0; i < entries_.size() && i < 5; ++i) some.push_back("'" + entries_[i].name + "'");
    return absl::NotFoundError(absl::StrCat("no tensor '", name, "' in file ", path_, "; it has ", entries_.size(),
                                            " tensors", some.empty() ? "" : ", e.g. ", absl::StrJoin(some, ", ")));
  }
  const char* data = tensor_data(*e);
  if (!is_zero_copy(name)) {
    // Misaligned for its element type: an aligned copy (see the header's file comment).
    absl::StatusOr<Tensor> copy = Tensor::empty(e->shape, e->dtype);
    if (!copy.ok()) return copy.status();
    std::memcpy(copy->data(), data, e->end - e->begin);
    return copy;
  }
  // The pages are read-only: a write faults (file comment). The tensor shares the mapping.
  void* address = const_cast<char*>(data);
  return Tensor::adopt(address, e->shape, e->dtype, std::shared_ptr<void>(mapping_, address));
}

absl::StatusOr<Tensor> SafetensorsFile::tensor(const std::string& name, const std::vector<int64_t>& shape,
                                               DataType dtype) const {
  const SafetensorsEntry* e = find(name);
  if (e != nullptr && (e->shape != shape || e->dtype != dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": tensor '", name, "' is ", shape_text(e->shape), " ",
                                                   e->dtype.to_string(), ", expected ", shape_text(shape), " ",
                                                   dtype.to_string()));
  }
  return tensor(name);
}

}  // namespace relax::runtime
