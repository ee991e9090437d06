// The vocabulary of the JSON form of an IRModule (relax/ir/json.h), shared by
// the writer and the reader: the spellings of node kinds, enums, dtypes and
// floats. The spellings are this file's own, not the printer's, so that the
// text form can change without changing version 1 of the JSON form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "relax/ir/prim_func.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"
#include "relax/support/data_type.h"
#include "relax/support/device.h"

namespace relax::json_detail {

inline constexpr std::string_view kFormat = "relax.ir";

/// "sym.add", "sym.call", ... for every SymKind.
std::string_view sym_kind_json(SymKind kind);
std::optional<SymKind> sym_kind_from_json(std::string_view name);

/// "exp", "fma", ... for every Intrinsic: its name in the intrinsic table.
std::string_view intrinsic_json(Intrinsic op);
std::optional<Intrinsic> intrinsic_from_json(std::string_view name);

std::string_view for_kind_json(ForKind kind);
std::optional<ForKind> for_kind_from_json(std::string_view name);

std::string_view iter_type_json(IterType type);
std::optional<IterType> iter_type_from_json(std::string_view name);

std::string_view scope_json(BufferScope scope);
std::optional<BufferScope> scope_from_json(std::string_view name);

std::string_view device_type_json(Device::Type type);
std::optional<Device::Type> device_type_from_json(std::string_view name);

/// dtype_name's spelling (relax/support/dtype_util.h), which parse_dtype reads
/// back. Aborts on a code that DataType::Code does not name.
std::string dtype_json(DataType t);
/// How a double is written so that it reads back bit for bit: the JSON
/// number for finite values (nlohmann writes the shortest form that round
/// trips, and -0.0 as such), else "inf", "-inf", "nan" (the default quiet NaN),
/// or "0x<16 hex digits>" for any other NaN.
struct FloatText {
  bool is_number;
  double number;     ///< when is_number
  std::string text;  ///< otherwise
};
FloatText float_json(double value);
/// The double a string spelling of float_json names.
std::optional<double> float_from_json_text(std::string_view text);

/// Whether `text` is valid UTF-8 (what a JSON string may hold). Strings that
/// are not are written as {"base64": "..."} instead.
bool is_valid_utf8(std::string_view text);

}  // namespace relax::json_detail
