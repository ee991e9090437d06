// Reading and writing NumPy's `.npy` files: one array per file.
//
//   absl::StatusOr<relax::runtime::Tensor> x = relax::runtime::load_npy("x.npy");
//   absl::Status s = relax::runtime::save_npy("y.npy", *y);
//
// The format (NumPy's NEP 1): the magic "\x93NUMPY", a major and a minor version byte, the
// header length (a little-endian uint16 in version 1.0, uint32 in 2.0 and 3.0), the header --
// a Python dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by a newline so that the data starts at a multiple of 64
// bytes -- then the elements.
//
// Supported: versions 1.0, 2.0 and 3.0; little-endian (or byte-order-free) bool, int8-64,
// uint8-64, float16, float32 and float64 in C order; 0-d and zero-size arrays. Everything
// else -- a Fortran-order array, a big-endian or structured dtype, a malformed header, a data
// size that disagrees with the shape, bytes after the data, a bool byte other than 0 or 1 -- is
// an InvalidArgument naming the file and what is wrong (expected and actual); a missing or
// unreadable file is NotFound or an I/O error naming the path.
//
// save_npy writes what numpy.save writes for the same array (version 1.0, or 2.0 when the
// header does not fit in 64 KiB), so the files load in NumPy.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/tensor.h"

namespace relax::runtime {

/// Reads the .npy file at `path` into a new host tensor (see the file comment).
absl::StatusOr<Tensor> load_npy(const std::string& path);

/// Parses the bytes of a .npy file into a new host tensor; `name` names the file in messages.
absl::StatusOr<Tensor> parse_npy(std::string_view bytes, std::string_view name = "<npy>");

/// Writes `tensor` (a host tensor, strided or not, of a supported dtype) to `path` as a .npy
/// file. Errors: an undefined or non-host tensor, an unsupported dtype, or an I/O error; each
/// names the path.
absl::Status save_npy(const std::string& path, const Tensor& tensor);

/// The bytes save_npy writes for `tensor`.
absl::StatusOr<std::string> serialize_npy(const Tensor& tensor);

/// The .npy dtype string of `dtype` ("<f4", "|b1", ...), or InvalidArgument for a dtype
/// .npy files of relax cannot hold.
absl::StatusOr<std::string> npy_descr(DataType dtype);

}  // namespace relax::runtime
