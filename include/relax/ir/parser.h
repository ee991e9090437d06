// Reading the IR text format (the grammar is in printer.h).
//
//   absl::StatusOr<relax::IRModule> mod = relax::parse_module(R"(
//     module {
//       func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
//         y: Tensor[(n, 4), float32] = add(x, x)
//         return y
//       }
//     })");
//
// The parser builds nodes with their constructors and normalises each binding
// as it reads it (normalize.h), so the module carries deduced annotations like
// one built with the builder. A binding's written annotation becomes its
// variable's; it must fit the deduced one (an annotation that can never hold,
// such as another rank, is an error). parse_module(to_text(m)) is structurally
// equal to m for every well-formed module m.
//
// Errors are InvalidArgument statuses that start with `line:column: ` and say
// what was expected and what was found, or name the unknown variable, operator,
// buffer or function, the duplicate definition or the wrong argument count.
// The parser never aborts on any input and bounds its nesting depth.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "relax/ir/module.h"

namespace relax {

/// Reads a module written in the text format.
absl::StatusOr<IRModule> parse_module(std::string_view text);

}  // namespace relax
