// Every input of the IR fuzz corpus (tests/fuzz/corpus/ir_json and ir_text:
// the fuzz findings of the hardening issue and later seeds) ends in a clear
// Status or in a module that round-trips: well_formed accepts it, its text
// parses back to a structurally equal module, and so does its JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "relax/ir/json.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus(const std::string& target) {
  std::vector<fs::path> out;
  const fs::path dir = fs::path(RELAX_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / target;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A refusal is clear: it says something, and nothing of relax's own source tree.
void expect_clear(const absl::Status& status, const std::string& what) {
  EXPECT_FALSE(status.message().empty()) << what;
  EXPECT_EQ(status.message().find("src/"), std::string_view::npos) << what << ": " << status;
  EXPECT_EQ(status.message().find(".cc:"), std::string_view::npos) << what << ": " << status;
}

// `mod` was read without error: well_formed refuses it clearly, or it round-trips.
void expect_refused_or_round_trips(const IRModule& mod, const std::string& what) {
  absl::Status wf = well_formed(mod);
  if (!wf.ok()) {
    expect_clear(wf, what + ": well_formed");
    return;
  }
  const std::string text = to_text(mod);
  absl::StatusOr<IRModule> reparsed = parse_module(text);
  ASSERT_TRUE(reparsed.ok()) << what << ": well-formed, but its text does not parse back: "
                             << reparsed.status();
  std::optional<std::string> diff = first_difference(mod, *reparsed);
  EXPECT_FALSE(diff.has_value()) << what << ": print -> parse changes it: " << *diff;
  absl::StatusOr<IRModule> from = from_json(to_json(*reparsed));
  ASSERT_TRUE(from.ok()) << what << ": its JSON does not read back: " << from.status();
  diff = first_difference(*reparsed, *from);
  EXPECT_FALSE(diff.has_value()) << what << ": text -> JSON -> module changes it: " << *diff;
}

// The first Status each finding of the hardening issue ends in (from_json,
// parse_module or well_formed): each was accepted, or crashed, before.
struct Finding {
  std::string file;
  std::string message;  ///< a part of the message
};

absl::Status first_refusal(const fs::path& path) {
  const std::string content = read_file(path);
  absl::StatusOr<IRModule> mod =
      path.parent_path().filename() == "ir_text" ? parse_module(content) : from_json(content);
  if (!mod.ok()) return mod.status();
  return well_formed(*mod);
}

TEST(FuzzCorpusTest, EachFindingIsRefusedWithItsReason) {
  const Finding findings[] = {
      {"ir_json/regression-ir_json-1.bin", "call to `x`: the callee is not a function"},
      {"ir_json/regression-ir_json-2.bin", "which does not fit its return annotation"},
      {"ir_json/regression-ir_json-3.bin", "loop variable `i` is int64, but `0i32` is int32"},
      {"ir_json/regression-ir_json-4.bin", "extern_func `opaque` is annotated Object"},
      {"ir_json/regression-ir_json-5.bin", "nodes[1].dtype: unsupported dtype int33"},
      {"ir_json/regression-ir_json-6.bin", "of dtype float32 stores `0f64` of dtype float64"},
      {"ir_json/regression-ir_json-7.bin", "a dim must be an int64 expression, found `4i32`"},
      {"ir_json/regression-ir_json-7.variant-int32-symvar-silent.bin",
       "a dim must be an int64 expression, found `k` of dtype int32"},
      {"ir_json/regression-ir_json-8.bin", "statements nest deeper than 256 levels"},
      {"ir_json/regression-ir_json-9.bin", "statements nest deeper than 256 levels"},
      {"ir_json/regression-ir_json-11.bin", "a scalar expression nests deeper than 256 levels"},
      {"ir_json/regression-ir_json-12.bin", "matmul: inner dims differ"},
      {"ir_json/regression-ir_json-13.bin", "matmul: inner dims differ"},
      {"ir_json/regression-ir_json-14.bin", "can never match"},
      {"ir_json/regression-ir_json-15.bin",
       "is annotated Tensor[(n, n), float16], but its value gives Tensor[(n, n), float32]"},
      {"ir_text/regression-ir_text-1.bin", "nested deeper than 256 levels"},
      {"ir_text/regression-ir_text-2.bin", "nested deeper than 256 levels"},
  };
  const fs::path root = fs::path(RELAX_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  for (const Finding& f : findings) {
    absl::Status status = first_refusal(root / f.file);
    EXPECT_FALSE(status.ok()) << f.file;
    EXPECT_NE(status.message().find(f.message), std::string_view::npos)
        << f.file << ": expected \"" << f.message << "\" in\n"
        << status.message();
  }
}

TEST(FuzzCorpusTest, EveryJsonInputIsRefusedClearlyOrRoundTrips) {
  std::vector<fs::path> files = corpus("ir_json");
  ASSERT_FALSE(files.empty());
  for (const fs::path& path : files) {
    const std::string what = path.filename().string();
    absl::StatusOr<IRModule> mod = from_json(read_file(path));
    if (!mod.ok()) {
      expect_clear(mod.status(), what + ": from_json");
      continue;
    }
    expect_refused_or_round_trips(*mod, what);
  }
}

TEST(FuzzCorpusTest, EveryTextInputIsRefusedClearlyOrRoundTrips) {
  std::vector<fs::path> files = corpus("ir_text");
  ASSERT_FALSE(files.empty());
  for (const fs::path& path : files) {
    const std::string what = path.filename().string();
    absl::StatusOr<IRModule> mod = parse_module(read_file(path));
    if (!mod.ok()) {
      expect_clear(mod.status(), what + ": parse_module");
      continue;
    }
    expect_refused_or_round_trips(*mod, what);
  }
}

}  // namespace
}  // namespace relax
