// Generates the seed corpora of the fuzz targets from the test corpora of this tree, at build
// time (nothing generated is committed):
//
//   make_seeds <out-dir> [--library] <test-source>...
//
// writes <out-dir>/<target>/seed-<hash> for the targets
//   symexpr     every string literal of the given test sources that SymExpr::parse reads;
//   ir_text     every string literal that parse_module reads, and the text of the modules of
//               tests/ir/text_corpus.h and tests/ir/json_corpus.h;
//   ir_json     the JSON form (to_json) of each of those modules;
//   executable  the executables of tests/runtime/test_programs.h, and those compile_to_executable
//               makes of each module above that legalizes and compiles;
//   library     with --library: one small module built with relax::build and written with
//               export_library (this runs the host compiler; without one the target keeps the
//               seeds CMake gives it).
// Literals are read with a small scanner that knows comments, character literals, escapes and
// raw strings -- enough for this tree's tests, not a C++ lexer.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../ir/json_corpus.h"
#include "../ir/text_corpus.h"
#include "../runtime/test_programs.h"
#include "relax/codegen/build.h"
#include "relax/codegen/vm_codegen.h"
#include "relax/ir/json.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/shape/sym_expr.h"
#include "relax/transform/legalize_ops.h"

namespace relax::fuzz {
namespace {

namespace fs = std::filesystem;

// The string literals of C++ source `text`, escapes resolved.
std::vector<std::string> string_literals(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const char c = text[i];
    if (text.substr(i, 2) == "//") {
      i = text.find('\n', i);
      if (i == std::string_view::npos) break;
    } else if (text.substr(i, 2) == "/*") {
      i = text.find("*/", i + 2);
      if (i == std::string_view::npos) break;
      i += 2;
    } else if (c == '\'') {
      // A character literal ('"', '\''), or a digit separator (1'000), which has no closing
      // quote before the next non-digit: either way skip to the closing quote on this line.
      size_t j = i + 1;
      while (j < n && text[j] != '\'' && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      i = j < n && text[j] == '\'' ? j + 1 : i + 1;
    } else if (c == 'R' && text.substr(i + 1, 1) == "\"" &&
               (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
      const size_t open = text.find('(', i + 2);
      if (open == std::string_view::npos) break;
      const std::string close = ")" + std::string(text.substr(i + 2, open - i - 2)) + "\"";
      const size_t end = text.find(close, open + 1);
      if (end == std::string_view::npos) break;
      out.emplace_back(text.substr(open + 1, end - open - 1));
      i = end + close.size();
    } else if (c == '"') {
      std::string value;
      size_t j = i + 1;
      for (; j < n && text[j] != '"'; ++j) {
        if (text[j] != '\\' || j + 1 >= n) {
          value += text[j];
          continue;
        }
        const char e = text[++j];
        switch (e) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case '0': value += '\0'; break;
          case 'x': {
            size_t k = j + 1;
            int v = 0;
            while (k < n && std::isxdigit(static_cast<unsigned char>(text[k]))) {
              v = v * 16 + std::stoi(std::string(1, text[k]), nullptr, 16);
              ++k;
            }
            value += static_cast<char>(v);
            j = k - 1;
            break;
          }
          default: value += e; break;  // \\ \" \' and the rest
        }
      }
      out.push_back(std::move(value));
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (char b : bytes) {
    hash ^= static_cast<uint8_t>(b);
    hash *= 1099511628211ull;
  }
  return hash;
}

class SeedWriter {
 public:
  explicit SeedWriter(fs::path root) : root_(std::move(root)) {}

  // Writes `bytes` as a seed of `target` (once per distinct content).
  void add(const std::string& target, std::string_view bytes) {
    const fs::path dir = root_ / target;
    fs::create_directories(dir);
    char name[32];
    std::snprintf(name, sizeof name, "seed-%016llx", static_cast<unsigned long long>(fnv1a64(bytes)));
    std::ofstream out(dir / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "make_seeds: cannot write %s\n", (dir / name).c_str());
      std::exit(1);
    }
  }
  void add(const std::string& target, std::span<const uint8_t> bytes) {
    add(target, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }

  // The module's text, JSON and (when it compiles) executable.
  void add_module(const IRModule& mod) {
    add("ir_text", to_text(mod));
    add("ir_json", to_json(mod));
    absl::StatusOr<IRModule> legal = transform::legalize_ops(mod);
    if (!legal.ok()) return;
    absl::StatusOr<runtime::Executable> exec = compile_to_executable(*legal);
    if (exec.ok()) add("executable", exec->serialize());
  }

 private:
  fs::path root_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One small module built with relax::build and exported, as the seed of the library target.
bool add_library(SeedWriter& seeds, const fs::path& scratch) {
  absl::StatusOr<IRModule> mod = parse_module(R"(
    module {
      func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
        z: Tensor[(n, 4), float32] = add(x, y)
        return z
      }
    })");
  if (!mod.ok()) {
    std::fprintf(stderr, "make_seeds: %s\n", std::string(mod.status().message()).c_str());
    return false;
  }
  absl::StatusOr<runtime::Module> built = build(*mod, "cpu -threads=1 -O1");
  if (!built.ok()) {
    std::fprintf(stderr, "make_seeds: no library seed: %s\n", std::string(built.status().message()).c_str());
    return false;
  }
  const fs::path path = scratch / "library_seed.so";
  if (absl::Status s = built->export_library(path.string()); !s.ok()) {
    std::fprintf(stderr, "make_seeds: no library seed: %s\n", std::string(s.message()).c_str());
    return false;
  }
  seeds.add("library", read_file(path.string()));
  fs::remove(path);
  return true;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <out-dir> [--library] <test-source>...\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  fs::create_directories(root);
  SeedWriter seeds(root);
  bool library = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--library") {
      library = true;
      continue;
    }
    const std::string source = read_file(argv[i]);
    if (source.empty()) {
      std::fprintf(stderr, "make_seeds: cannot read %s\n", argv[i]);
      return 1;
    }
    for (const std::string& literal : string_literals(source)) {
      if (literal.empty()) continue;
      if (SymExpr::parse(literal).ok()) seeds.add("symexpr", literal);
      if (absl::StatusOr<IRModule> mod = parse_module(literal); mod.ok()) seeds.add_module(*mod);
    }
  }
  for (const IRModule& mod :
       {text_corpus::example_module(), text_corpus::constants_module(), text_corpus::calls_module(),
        text_corpus::control_module(), text_corpus::names_module(), text_corpus::loops_module(),
        text_corpus::builder_module(), json_testing::builder_module(), json_testing::every_kind_module()}) {
    seeds.add_module(mod);
  }
  seeds.add("executable", runtime::testing::add_program(true).serialize());
  seeds.add("executable", runtime::testing::add_program(false).serialize());
  seeds.add("executable", runtime::testing::aot_program().serialize());
  if (library) add_library(seeds, root);  // a warning, not an error, without a host compiler
  return 0;
}

}  // namespace
}  // namespace relax::fuzz

int main(int argc, char** argv) { return relax::fuzz::run(argc, argv); }
