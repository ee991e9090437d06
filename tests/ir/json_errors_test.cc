// The JSON reader's errors (relax/ir/json.h): versions, malformed text, and
// every kind of inconsistency, each named by its JSON path; the bound on
// nesting; and a fuzz test that mutates valid documents thousands of times.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <iterator>
#include <random>

#include "json_corpus.h"
#include "relax/ir/json.h"
#include "relax/support/limits.h"

namespace relax {
namespace {

using namespace json_testing;  // NOLINT(google-build-using-namespace)
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Errors.

TEST(JsonErrorsTest, VersionAndFormatErrors) {
  Json doc = doc_of(builder_module());
  doc["version"] = 7;
  EXPECT_EQ(read_error(doc.dump()),
            "version: unsupported relax IR JSON version 7 (this build reads version 1)");
  doc["version"] = "1";
  EXPECT_EQ(read_error(doc.dump()), "version: expected an integer, found \"1\"");
  doc.erase("version");
  EXPECT_EQ(read_error(doc.dump()), "<document>: missing field \"version\"");
  doc["version"] = 1;
  doc["format"] = "onnx";
  EXPECT_EQ(read_error(doc.dump()), "format: unsupported format \"onnx\" (expected \"relax.ir\")");
  doc.erase("format");
  EXPECT_EQ(read_error(doc.dump()), "<document>: not a relax IR JSON document: missing \"format\"");
  EXPECT_EQ(read_error("[1, 2]"),
            "<document>: not a relax IR JSON document: expected an object, found [1,2]");
}

TEST(JsonErrorsTest, MalformedJsonNamesThePosition) {
  std::string text = to_json(builder_module());
  EXPECT_THAT(read_error(text.substr(0, 20)), HasSubstr("malformed JSON: parse error at line 1, column 21"));
  EXPECT_THAT(read_error("{\"format\": \"relax.ir\",\n \"version\": 1,,}"),
              HasSubstr("malformed JSON: parse error at line 2, column 15"));
  EXPECT_THAT(read_error(""), HasSubstr("malformed JSON: parse error at line 1, column 1"));
}

TEST(JsonErrorsTest, WrongTypesNameTheJsonPath) {
  Json doc = doc_of(builder_module());
  const size_t call = node_index(doc, "expr.call");
  Json bad = doc;
  bad["nodes"][call]["args"][0] = "x";
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(call) + "].args[0]: expected a node index, found \"x\"");
  bad = doc;
  bad["nodes"][call]["args"] = 3;
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(call) + "].args: expected an array, found 3");
  const size_t fn = node_index(doc, "expr.function");
  bad = doc;
  bad["nodes"][fn]["pure"] = "yes";
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(fn) + "].pure: expected a boolean, found \"yes\"");
  bad = doc;
  bad["nodes"][fn]["upper_bounds"][0]["upper"] = 1.5;
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(fn) +
                                        "].upper_bounds[0].upper: expected an integer, found 1.5");
  bad = doc;
  bad["functions"][0]["name"] = nullptr;
  EXPECT_EQ(read_error(bad.dump()), "functions[0].name: expected a string, found null");
  bad = doc;
  bad["attrs"]["model_name"] = Json{{"text", "tiny"}};
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("attrs.model_name: unknown attribute type \"text\""));
}

TEST(JsonErrorsTest, MissingAndUnknownFieldsAreErrors) {
  Json doc = doc_of(builder_module());
  const size_t var = node_index(doc, "expr.var");
  Json bad = doc;
  bad["nodes"][var].erase("name");
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(var) + "]: missing field \"name\"");
  bad = doc;
  bad["nodes"][var]["nmae"] = "x";
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(var) + "]: unknown field \"nmae\"");
  bad = doc;
  bad["nodes"][var]["kind"] = "expr.variable";
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(var) + "].kind: unknown node kind \"expr.variable\"");
  bad = doc;
  bad["nodes"][var] = 12;
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(var) + "]: expected an object, found 12");
  bad = doc;
  bad.erase("nodes");
  EXPECT_EQ(read_error(bad.dump()), "<document>: missing field \"nodes\"");
}

TEST(JsonErrorsTest, ReferencesMustPointBackwardIntoTheTableAtTheRightFamily) {
  Json doc = doc_of(builder_module());
  const size_t call = node_index(doc, "expr.call");
  const std::string at = "nodes[" + std::to_string(call) + "]";
  Json bad = doc;
  bad["nodes"][call]["args"][0] = call;
  EXPECT_EQ(read_error(bad.dump()), at + ".args[0]: node " + std::to_string(call) + " refers to node " +
                                        std::to_string(call) +
                                        ": a node may only refer to nodes before it");
  bad = doc;
  bad["nodes"][call]["args"][0] = call + 1;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("a node may only refer to nodes before it"));
  bad = doc;
  const size_t total = doc["nodes"].size();
  bad["nodes"][call]["args"][0] = total + 5;
  EXPECT_EQ(read_error(bad.dump()), at + ".args[0]: node index " + std::to_string(total + 5) +
                                        " is out of range (the table has " +
                                        std::to_string(total) + " nodes)");
  bad = doc;
  bad["nodes"][call]["args"][0] = -1;
  EXPECT_EQ(read_error(bad.dump()), at + ".args[0]: node index -1 is negative");
  const size_t sinfo = node_index(doc, "sinfo.tensor");
  bad = doc;
  bad["nodes"][call]["args"][0] = sinfo;
  EXPECT_EQ(read_error(bad.dump()), at + ".args[0]: expected an Expr node, node " +
                                        std::to_string(sinfo) + " is sinfo.tensor");
  // A binding's var must be a Var, not any expression.
  const size_t seq = node_index(doc, "expr.seq");
  bad = doc;
  bad["nodes"][seq]["blocks"][0]["bindings"][0]["var"] = call;
  EXPECT_THAT(read_error(bad.dump()),
              HasSubstr("].blocks[0].bindings[0].var: expected an expr.var or expr.dataflow_var node"));
  // A module function must be a function.
  bad = doc;
  bad["functions"][0]["func"] = call;
  EXPECT_EQ(read_error(bad.dump()),
            "functions[0].func: a module function is a Function, PrimFunc or ExternFunc, not a Call");
  bad = doc;
  bad["functions"][1]["name"] = bad["functions"][0]["name"];
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("functions[1].name: function \""));
}

TEST(JsonErrorsTest, UnknownOpsDtypesAndEnumsAreErrors) {
  Json doc = doc_of(builder_module());
  const size_t op = node_index(doc, "expr.op");
  Json bad = doc;
  bad["nodes"][op]["name"] = "no_such_op";
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(op) + "].name: unknown operator \"no_such_op\"");
  const size_t tensor = node_index(doc, "sinfo.tensor");
  for (const char* dtype : {"float33x", "f32", "int064", "", "boolx1", "int0", "int256"}) {
    bad = doc;
    bad["nodes"][tensor]["dtype"] = dtype;
    EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(tensor) + "].dtype: unknown dtype \"" +
                                          dtype + "\"");
  }
  bad = doc;
  bad["nodes"][tensor]["ndim"] = 5;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].ndim: ndim is 5 but there are 2 dims"));
  bad = doc;
  bad["nodes"][tensor]["device"] = Json{{"type", "tpu"}, {"index", 0}};
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].device.type: unknown device type \"tpu\""));
  const size_t loop = node_index(doc, "stmt.for");
  bad = doc;
  bad["nodes"][loop]["for_kind"] = "sideways";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].for_kind: unknown loop kind \"sideways\""));
  const size_t buffer = node_index(doc, "buffer");
  bad = doc;
  bad["nodes"][buffer]["scope"] = "shared";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].scope: unknown buffer scope \"shared\""));
}

TEST(JsonErrorsTest, SymExprArityAndDtypesAreChecked) {
  IRModule mod;
  mod.add("kernel", every_loop_kind_kernel());
  Json doc = doc_of(mod);
  const size_t add = node_index(doc, "sym.add");
  const std::string at = "nodes[" + std::to_string(add) + "].operands: ";
  Json bad = doc;
  bad["nodes"][add]["operands"].push_back(0);
  EXPECT_EQ(read_error(bad.dump()), at + "sym.add takes 2 operands, found 3");
  bad = doc;
  bad["nodes"][add]["kind"] = "sym.not";
  EXPECT_EQ(read_error(bad.dump()), at + "sym.not takes 1 operand, found 2");
  // An operand of another dtype.
  const size_t f32_var = [&] {
    for (size_t i = 0; i < doc["nodes"].size(); ++i) {
      if (doc["nodes"][i]["kind"] == "sym.var" && doc["nodes"][i]["dtype"] == "float32") return i;
    }
    return size_t{0};
  }();
  const size_t int_add = [&] {
    for (size_t i = f32_var + 1; i < doc["nodes"].size(); ++i) {
      const Json& n = doc["nodes"][i];
      if (n["kind"] == "sym.add" && doc["nodes"][n["operands"][0].get<size_t>()]["kind"] == "sym.var" &&
          doc["nodes"][n["operands"][0].get<size_t>()]["dtype"] == "int64") {
        return i;
      }
    }
    return size_t{0};
  }();
  ASSERT_GT(int_add, 0u);
  bad = doc;
  bad["nodes"][int_add]["operands"][1] = f32_var;
  EXPECT_THAT(read_error(bad.dump()),
              HasSubstr("].operands: operands of sym.add differ in dtype: int64 `"));
  const size_t call = node_index(doc, "sym.call");
  bad = doc;
  bad["nodes"][call]["intrinsic"] = "cbrt";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].intrinsic: unknown intrinsic \"cbrt\""));
  bad = doc;
  bad["nodes"][call]["intrinsic"] = "fma";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].operands: fma takes 3 operands, found 1"));
  const size_t load = node_index(doc, "sym.load");
  bad = doc;
  bad["nodes"][load]["operands"].erase(1);
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("has 1 indices, but the buffer has rank 2"));
  const size_t int_const = node_index(doc, "sym.int");
  bad = doc;
  bad["nodes"][int_const]["dtype"] = "uint8";
  bad["nodes"][int_const]["value"] = 256;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].value: 256 is not a value of uint8"));
  const size_t fl = node_index(doc, "sym.float");
  bad = doc;
  bad["nodes"][fl]["dtype"] = "float16";
  bad["nodes"][fl]["value"] = 0.1;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].value: 0.1 is not exactly a float16 value"));
  bad = doc;
  bad["nodes"][fl]["value"] = "infinity";
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].value: expected a number, \"inf\""));
  const size_t loop = node_index(doc, "stmt.for");
  bad = doc;
  bad["nodes"][loop]["var"] = int_const;
  EXPECT_THAT(read_error(bad.dump()), HasSubstr("].var: expected a sym.var node, node "));
}

TEST(JsonErrorsTest, ConstantDataMustMatchItsShape) {
  Json doc = doc_of(every_kind_module());
  const size_t c = node_index(doc, "expr.constant");
  Json bad = doc;
  bad["nodes"][c]["shape"] = Json::array({2, 3});
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(c) + "].data: holds 16 bytes, but 6 elements of float32 take 24");
  bad = doc;
  bad["nodes"][c]["data"] = "not base64!";
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(c) + "].data: not valid base64");
  bad = doc;
  bad["nodes"][c]["shape"] = Json::array({int64_t{1} << 62, 1 << 20});
  EXPECT_EQ(read_error(bad.dump()),
            "nodes[" + std::to_string(c) + "].shape: the element count overflows int64");
  bad = doc;
  bad["nodes"][c]["shape"] = Json::array({-4});
  EXPECT_EQ(read_error(bad.dump()), "nodes[" + std::to_string(c) + "].shape[0]: negative dim -4");
}

// A document whose module attribute "deep" is the chain n + 1 + 1 + ...: its
// last node (index `depth`) nests `depth` levels deep.
std::string chain_document(size_t depth) {
  Json nodes = Json::array();
  nodes.push_back(Json{{"kind", "sym.var"}, {"dtype", "int64"}, {"name", "n"}});
  nodes.push_back(Json{{"kind", "sym.int"}, {"dtype", "int64"}, {"value", 1}});
  for (size_t i = 2; i <= depth; ++i) {
    nodes.push_back(Json{{"kind", "sym.add"}, {"operands", Json::array({i == 2 ? 0 : i - 1, 1})}});
  }
  Json doc = {{"format", "relax.ir"}, {"version", 1}, {"functions", Json::array()},
              {"attrs", {{"deep", {{"syms", Json::array({depth})}}}}}, {"nodes", nodes}};
  return doc.dump();
}

// A document whose kernel "k" is `depth` - 1 sequences nested in one another
// around an evaluate, with a tuple annotation nested as deep.
std::string nested_statements_document(size_t depth) {
  Json nodes = Json::array();
  nodes.push_back(Json{{"kind", "sym.int"}, {"dtype", "int64"}, {"value", 0}});
  nodes.push_back(Json{{"kind", "stmt.evaluate"}, {"value", 0}});
  for (size_t i = 2; i < depth; ++i) {
    nodes.push_back(Json{{"kind", "stmt.seq"}, {"stmts", Json::array({i - 1})}});
  }
  nodes.push_back(Json{{"kind", "sinfo.object"}});
  for (size_t i = 1; i < depth; ++i) {
    nodes.push_back(Json{{"kind", "sinfo.tuple"}, {"fields", Json::array({nodes.size() - 1})}});
  }
  nodes.push_back(Json{{"kind", "expr.prim_func"},
                       {"params", Json::array()},
                       {"body", depth - 1},
                       {"attrs", Json::object()},
                       {"sinfo", nodes.size() - 1}});
  Json doc = {{"format", "relax.ir"},
              {"version", 1},
              {"functions", Json::array({Json{{"name", "k"}, {"func", nodes.size() - 1}}})},
              {"attrs", Json::object()},
              {"nodes", nodes}};
  return doc.dump();
}

TEST(JsonErrorsTest, NestingDepthIsBounded) {
  // Statements (255 levels) and annotations (256) nested to the limit of every
  // reader (relax/support/limits.h) write and read back.
  const std::string statements = nested_statements_document(kMaxNestingDepth);
  EXPECT_TRUE(to_json(read_ok(statements)) == statements);
  // One more level of either is refused where it is read.
  EXPECT_EQ(read_error(nested_statements_document(kMaxNestingDepth + 2)),
            "nodes[257]: statements nest deeper than 256 levels (the limit of every reader)");
  EXPECT_EQ(read_error(nested_statements_document(kMaxNestingDepth + 1)),
            "nodes[513]: annotations nest deeper than 256 levels (the limit of every reader)");

  // The deepest chain accepted reads, writes and reads again; depth is that of
  // the SymExpr tree (SymExprNode::depth()).
  const std::string deepest = chain_document(kMaxNestingDepth);
  IRModule mod = read_ok(deepest);
  EXPECT_TRUE(to_json(mod) == deepest);  // (not EXPECT_EQ: a failure would print 20 KB)
  EXPECT_EQ(read_error(chain_document(kMaxNestingDepth + 1)),
            "nodes[257]: a scalar expression nests deeper than 256 levels (the limit of every "
            "reader)");
  // A value nested a million levels deep is described without recursing through it.
  const std::string nested = std::string(300000, '[') + std::string(300000, ']');
  Json doc = Json::parse(to_json(IRModule()));
  std::string text = doc.dump();
  const std::string empty_functions = "\"functions\":[]";
  text.replace(text.find(empty_functions), empty_functions.size(), "\"functions\":" + nested);
  EXPECT_EQ(read_error(text), "functions[0]: expected an object, found [[[[...]]]]");
  std::string objects;
  for (int i = 0; i < 300000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(300000, '}');
  text = doc.dump();
  const std::string empty_attrs = "\"attrs\":{}";
  text.replace(text.find(empty_attrs), empty_attrs.size(), "\"attrs\":{\"x\":" + objects + "}");
  EXPECT_THAT(read_error(text), HasSubstr("attrs.x: unknown attribute type \"a\""));
}

// ---------------------------------------------------------------------------
// Fuzzing: no input crashes the reader, and whatever it accepts writes again.

// Every node kind, for mutations that change a node into another kind.
const char* const kKinds[] = {
    "sym.int", "sym.float", "sym.var", "sym.add", "sym.div", "sym.not", "sym.select",
    "sym.cast", "sym.call", "sym.load", "buffer", "sinfo.object", "sinfo.prim", "sinfo.shape",
    "sinfo.tensor", "sinfo.tuple", "sinfo.func", "expr.var", "expr.dataflow_var",
    "expr.global_var", "expr.constant", "expr.tuple", "expr.tuple_get_item", "expr.call",
    "expr.shape", "expr.prim_value", "expr.string", "expr.if", "expr.seq", "expr.function",
    "expr.extern_func", "expr.op", "expr.prim_func", "stmt.for", "stmt.seq", "stmt.store",
    "stmt.if", "stmt.let", "stmt.allocate", "stmt.evaluate", "stmt.block"};

// A random JSON value; often a node index (valid or not) or a node kind.
Json random_value(std::mt19937_64& rng, size_t table_size) {
  switch (rng() % 12) {
    case 0: return nullptr;
    case 1: return static_cast<bool>(rng() % 2);
    case 2:
    case 3: return static_cast<int64_t>(rng() % (table_size + 3)) - 1;
    case 4: return static_cast<int64_t>(rng());
    case 5: return std::bit_cast<double>(rng() & 0x7fefffffffffffffULL);
    case 6: return "x";
    case 7: return Json::array({rng() % table_size, rng() % table_size});
    case 8: return Json::object({{"int", 1}});
    case 9: return rng() % 2 ? "float32" : "int8";
    default: return kKinds[rng() % std::size(kKinds)];
  }
}

// Replaces, removes or duplicates one random value somewhere in `doc`, most
// often inside a node of the table.
void mutate(Json& doc, std::mt19937_64& rng, size_t table_size) {
  Json* v = &doc;
  const uint64_t where = rng() % 10;
  if (where < 8 && doc.contains("nodes") && doc["nodes"].is_array() && !doc["nodes"].empty()) {
    v = &doc["nodes"][rng() % doc["nodes"].size()];
  } else if (where == 8 && doc.contains("functions")) {
    v = &doc["functions"];
  }
  // Walk down a random path; stop at a random depth.
  for (int depth = 0; depth < 4; ++depth) {
    if (!(v->is_object() || v->is_array()) || v->empty() || (depth > 0 && rng() % 3 == 0)) break;
    const size_t i = rng() % v->size();
    if (v->is_array()) {
      v = &(*v)[i];
    } else {
      auto it = v->begin();
      std::advance(it, static_cast<ptrdiff_t>(i));
      if (rng() % 8 == 0) {  // drop the field
        v->erase(it);
        return;
      }
      v = &it.value();
    }
  }
  if (v->is_array() && !v->empty() && rng() % 4 == 0) {
    v->push_back((*v)[rng() % v->size()]);  // duplicate an element
    return;
  }
  *v = random_value(rng, table_size);
}

// Reads `text`; whatever reads must write, and what it writes must read again.
// Returns whether `text` was accepted.
bool read_and_rewrite(const std::string& text) {
  absl::StatusOr<IRModule> mod = from_json(text);
  if (!mod.ok()) {
    EXPECT_FALSE(mod.status().message().empty());
    return false;
  }
  const std::string again = to_json(*mod);
  absl::StatusOr<IRModule> back = from_json(again);
  EXPECT_TRUE(back.ok()) << back.status();
  if (back.ok()) {
    EXPECT_EQ(to_json(*back), again);
  }
  return true;
}

TEST(JsonErrorsTest, FuzzedDocumentsNeverCrashTheReader) {
  IRModule corpus = every_kind_module();
  corpus.add("main", builder_module().lookup("main"));
  const std::string text = to_json(corpus);
  const Json doc = Json::parse(text);
  const size_t table_size = doc["nodes"].size();
  std::mt19937_64 rng(20240611);
  size_t accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string input;
    switch (round % 4) {
      case 0:  // truncated text
        input = text.substr(0, rng() % text.size());
        break;
      case 1: {  // one byte changed
        input = text;
        input[rng() % input.size()] = static_cast<char>("{}[]\",:0123456789-ex \x80"[rng() % 23]);
        break;
      }
      default: {  // one or a few structural mutations
        Json mutated = doc;
        const int count = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < count; ++k) mutate(mutated, rng, table_size);
        input = mutated.dump();
        break;
      }
    }
    accepted += read_and_rewrite(input) ? 1 : 0;
    if (HasFailure()) return;
  }
  // Some mutations are harmless (a name changed, an attribute value changed).
  EXPECT_GT(accepted, 0u);
}

}  // namespace
}  // namespace relax
