// Spelling rules of the IR text format that the printer and the parser share,
// so that what one writes the other reads: keywords, names, strings, dtypes
// and the exact decimal forms of floating-point numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "relax/support/data_type.h"

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

/// The dtype spelled `name` as DataType::to_string writes it ("float32", "int8",
/// "bool", "float32x4", "bfloat16", "handle64"), or nullopt.
std::optional<DataType> parse_dtype(std::string_view name);

/// A dtype that a SymExpr (and so a symbolic variable, a Prim value, a buffer
/// element) may have: a scalar int/uint of 8-64 bits, float16/32/64, bfloat16, bool.
bool is_sym_dtype(DataType t);

/// Whether the IR supports `t` anywhere a dtype is written (tensors, constants,
/// buffers, Prim values, symbolic variables, casts, attributes). It is the set
/// of is_sym_dtype: the IR has no vector or handle element types, and widths
/// such as int7 or float33 have no arithmetic, no kernels and no storage. Both
/// readers (text and JSON) refuse every other dtype where they read it.
bool is_supported_dtype(DataType t);

/// "unsupported dtype float33 (supported: int8, ..., bool)", for a reader's error.
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

// Half-precision conversions for constants. Decoding is exact; encoding rounds
// to nearest, ties to even, and every NaN becomes the canonical quiet NaN.
double decode_float16(uint16_t bits);
uint16_t encode_float16(double v);
double decode_bfloat16(uint16_t bits);
uint16_t encode_bfloat16(double v);

}  // namespace relax::text
