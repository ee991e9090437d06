// Which dtypes the IR supports (relax/support/dtype_util.h: is_scalar_dtype): both
// readers refuse every other one where they read it, with its position, and
// well_formed refuses modules built with one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "ir_fixtures.h"
#include "json_corpus.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string parse_error(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  return mod.ok() ? "<parsed>" : std::string(mod.status().message());
}

const char* const kSupported =
    " (supported: int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, "
    "float64, bfloat16, bool)";

TEST(DtypeSupportTest, TheTextParserRefusesUnsupportedDtypesWhereTheyAreRead) {
  for (const char* dtype : {"float33", "int7", "uint1", "handle64", "float32x4"}) {
    const std::string text = "module {\n  func @f(x: Tensor[(4,), " + std::string(dtype) +
                             "]) -> Object {\n    return x\n  }\n}\n";
    EXPECT_EQ(parse_error(text), "2:27: unsupported dtype " + std::string(dtype) + kSupported);
  }
  // Buffers, Prim annotations and attribute values alike.
  EXPECT_THAT(parse_error("module {\n  prim_func @k(A: Buffer[(4,), int7]) {\n  }\n}\n"),
              StartsWith("2:32: unsupported dtype int7"));
  EXPECT_THAT(
      parse_error("module {\n  func @f(p: Prim[uint1]) -> Object {\n    return p\n  }\n}\n"),
      StartsWith("2:19: unsupported dtype uint1"));
  EXPECT_THAT(parse_error("module {\n  func @f(x: Tensor[(4,), float32]) -> Object {\n"
                          "    y = sum(x, axis=float33)\n    return y\n  }\n}\n"),
              StartsWith("3:21: unsupported dtype float33"));
}

TEST(DtypeSupportTest, TheJsonReaderRefusesUnsupportedDtypesWhereTheyAreRead) {
  using json_testing::Json;
  for (const char* dtype : {"float33", "int7", "uint1", "handle64", "float32x4"}) {
    Json doc = Json::parse(to_json(IRModule()));
    doc["nodes"].push_back(
        Json{{"kind", "sinfo.tensor"}, {"ndim", -1}, {"shape", nullptr}, {"dtype", dtype}});
    EXPECT_EQ(json_testing::read_error(doc.dump()),
              "nodes[0].dtype: unsupported dtype " + std::string(dtype) + kSupported);
  }
}

// Both readers read dtype names with one parse_dtype (relax/support/dtype_util.h): a bool of
// other than 8 bits is named by its width in messages (it was "unsupported dtype bool" in the
// JSON reader, and not a dtype at all in the text one), and the text format no longer takes the
// non-canonical "int64x1" that the JSON reader refused.
TEST(DtypeSupportTest, BothReadersNameDtypesAlike) {
  using json_testing::Json;
  for (const char* dtype : {"bool16", "bool1"}) {
    Json doc = Json::parse(to_json(IRModule()));
    doc["nodes"].push_back(
        Json{{"kind", "sinfo.tensor"}, {"ndim", -1}, {"shape", nullptr}, {"dtype", dtype}});
    EXPECT_EQ(json_testing::read_error(doc.dump()),
              "nodes[0].dtype: unsupported dtype " + std::string(dtype) + kSupported);
    const std::string text = "module {\n  func @f(x: Tensor[(4,), " + std::string(dtype) +
                             "]) -> Object {\n    return x\n  }\n}\n";
    EXPECT_EQ(parse_error(text), "2:27: unsupported dtype " + std::string(dtype) + kSupported);
  }
  EXPECT_THAT(parse_error("module {\n  func @f(x: Tensor[(4,), int64x1]) -> Object {\n"
                          "    return x\n  }\n}\n"),
              StartsWith("2:27: expected a dtype"));
  Json doc = Json::parse(to_json(IRModule()));
  doc["nodes"].push_back(
      Json{{"kind", "sinfo.tensor"}, {"ndim", -1}, {"shape", nullptr}, {"dtype", "int64x1"}});
  EXPECT_EQ(json_testing::read_error(doc.dump()), "nodes[0].dtype: unknown dtype \"int64x1\"");
}

TEST(DtypeSupportTest, WellFormedRefusesUnsupportedDtypesOfBuiltModules) {
  const DataType int7{DataType::Code::kInt, 7, 1};
  IRModule mod;
  SymVar n("n");
  Var x("x", tensor_sinfo({n}, int7));
  mod.add("f", make_function({x}, x, object_sinfo(), true));
  Buffer a("A", DataType{DataType::Code::kInt, 33, 1}, {4});
  mod.add("k", fixtures::prim_func({fixtures::buffer_param(a)}, make_evaluate(0)));
  std::vector<std::string> violations = well_formed_violations(mod);
  EXPECT_THAT(violations, ::testing::Contains(
                              HasSubstr("annotation Tensor[(n,), int7]: unsupported dtype int7")));
  EXPECT_THAT(violations, ::testing::Contains(HasSubstr("buffer `A`: unsupported dtype int33")));
}

}  // namespace
}  // namespace relax
