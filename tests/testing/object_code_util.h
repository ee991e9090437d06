// Reading generated kernels' object code in tests (objdump): the tests that
// require packed vector arithmetic in a kernel share these.
#pragma once

#include <cstdio>
#include <optional>
#include <sstream>
#include <string>

namespace relax::testing {

/// The standard output of `command`, or nullopt when it cannot be run or fails.
inline std::optional<std::string> run_command(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buf[4096];
  for (size_t got; (got = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, got);
  if (::pclose(pipe) != 0) return std::nullopt;
  return out;
}

/// Whether objdump can be run.
inline bool objdump_available() { return run_command("objdump --version >/dev/null 2>&1").has_value(); }

/// The disassembly of the functions of `library` whose symbol contains `part`
/// (a kernel and its outlined bodies), together; "" when objdump fails.
inline std::string disassembly_of(const std::string& library, const std::string& part) {
  std::optional<std::string> text = run_command("objdump -d --no-show-raw-insn '" + library + "' 2>/dev/null");
  if (!text) return "";
  std::string out;
  bool inside = false;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    const size_t open = line.find(" <");
    if (!line.empty() && line.back() == ':' && open != std::string::npos) {
      inside = line.find(part, open) != std::string::npos;
    }
    if (inside) out += line + "\n";
  }
  return out;
}

}  // namespace relax::testing
