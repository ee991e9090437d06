// Spelling rules of the IR text format that the printer and the parser share,
// so that what one writes the other reads: keywords, names, strings and the
// exact decimal forms of floating-point numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "relax/support/data_type.h"
#include "relax/support/dtype_util.h"

namespace relax::text {

/// [A-Za-z_][A-Za-z0-9_.]*: what the lexer reads as one name.
bool is_identifier(std::string_view name);

/// Words with a meaning in graph-level expressions and function bodies
/// (`const`, `shape`, `if`, `return`, `dataflow`, ...): a Var may not be called so.
bool is_graph_keyword(std::string_view name);

/// Words that start a loop-level statement (`for`, `let`, `block`, ...): a
/// buffer or symbolic variable may not be called so.
bool is_stmt_keyword(std::string_view name);

/// `hint` made into an identifier: other bytes become '_', and a name that
/// does not start like one gets a `v` in front ("" -> "v", "0x" -> "v0x").
std::string sanitize_name(std::string_view hint);

/// `s` as a string literal: "..." with \" \\ \n \t \r and \xHH for other control bytes.
std::string quote(std::string_view s);

/// `name` bare when it is an identifier and not a graph keyword, else quoted.
std::string name_or_quoted(std::string_view name);

/// "unsupported dtype float33 (supported: int8, ..., bool)", for a reader's error about a
/// dtype that is not is_scalar_dtype (relax/support/dtype_util.h: the dtypes the IR supports).
std::string unsupported_dtype_message(DataType t);

/// The shortest decimal that reads back (std::from_chars) as exactly `v`,
/// always with a '.' or an exponent so that it reads as a float ("1.0",
/// "0.1", "1e+30"); "inf", "-inf", "nan" for the special values.
std::string format_double(double v);

/// The decimal unsigned integer that fills `s` exactly, or nullopt.
std::optional<uint64_t> read_u64(std::string_view s);
/// The decimal float that fills `s` exactly, rounded once to float / double, or
/// nullopt (also when out of range).
std::optional<float> read_float32(std::string_view s);
std::optional<double> read_float64(std::string_view s);
/// Whether a number token is written as a float (it has a '.' or an exponent).
bool looks_float(std::string_view s);

}  // namespace relax::text
