// KernelTable: interning by structure, naming, kernels already in the module,
// and adding the new kernels to a module.
#include "relax/ir/kernel_table.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "relax/ir/parser.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/well_formed.h"

namespace relax {
namespace {

// The module of `text`, which must parse.
IRModule parse(std::string_view text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status().message();
  return mod.ok() ? *mod : IRModule();
}

// Kernels to intern: @double and @also_double are equal but for their names
// (parameters included); @square differs.
const IRModule& kernels() {
  static const IRModule mod = parse(R"(module {
  prim_func @double(A: Buffer[(8,), float32], B: Buffer[(8,), float32]) {
    for i in range(8) {
      B[i] = A[i] + A[i]
    }
  }
  prim_func @also_double(X: Buffer[(8,), float32], Y: Buffer[(8,), float32]) {
    for j in range(8) {
      Y[j] = X[j] + X[j]
    }
  }
  prim_func @square(A: Buffer[(8,), float32], B: Buffer[(8,), float32]) {
    for i in range(8) {
      B[i] = A[i] * A[i]
    }
  }
})");
  return mod;
}

// `name` of kernels(), with "global_symbol" set to `symbol`.
Expr kernel(std::string_view name, const std::string& symbol) {
  const auto* node = kernels().lookup(name).as<PrimFuncNode>();
  Attrs attrs = node->attrs;
  attrs["global_symbol"] = symbol;
  return make_prim_func(node->params, node->body, std::move(attrs));
}

std::string global_name(const Expr& gvar) {
  const auto* node = gvar.as<GlobalVarNode>();
  return node != nullptr ? node->name : "<not a GlobalVar>";
}

std::string global_symbol(const Expr& func) {
  const auto* node = func.as<PrimFuncNode>();
  auto it = node->attrs.find("global_symbol");
  if (it == node->attrs.end()) return "<none>";
  const auto* s = std::get_if<std::string>(&it->second);
  return s != nullptr ? *s : "<not a string>";
}

// A module with a graph function @main and nothing else.
IRModule main_only() {
  return parse(R"(module {
  func @main(x: Tensor[(8,), float32]) -> Tensor[(8,), float32] {
    return x
  }
})");
}

TEST(KernelTableTest, InternsEqualKernelsOnce) {
  KernelTable table(main_only());
  // Equal up to "global_symbol" and the names of bound variables.
  Expr first = table.intern(kernel("double", "double"), "add");
  Expr second = table.intern(kernel("also_double", "something_else"), "add");
  EXPECT_TRUE(first.same_as(second));
  EXPECT_EQ(global_name(first), "add");
  ASSERT_EQ(table.added().size(), 1u);
  EXPECT_EQ(table.added()[0].first, "add");
  EXPECT_EQ(global_symbol(table.added()[0].second), "add");
  // The GlobalVar carries the kernel's annotation.
  EXPECT_TRUE(StructuralEqual()(first.struct_info(), table.added()[0].second.struct_info()));

  Expr other = table.intern(kernel("square", "square"), "multiply");
  EXPECT_FALSE(other.same_as(first));
  EXPECT_EQ(table.added().size(), 2u);
}

TEST(KernelTableTest, NamesNewKernelsAfterTheBaseWithSuffixes) {
  // `add` and `add_2` are taken by the module (a graph function and an extern
  // function count as much as a kernel); `add_1` is free.
  KernelTable table(parse(R"(module {
  func @add(x: Tensor[(8,), float32]) -> Tensor[(8,), float32] {
    return x
  }
  extern_func @add_2 = "add_2" : Func[opaque -> Object, impure]
})"));
  Expr a = table.intern(kernel("double", "double"), "add");
  Expr b = table.intern(kernel("square", "square"), "add");
  EXPECT_EQ(global_name(a), "add_1");
  EXPECT_EQ(global_name(b), "add_3");
  ASSERT_EQ(table.added().size(), 2u);
  EXPECT_EQ(table.added()[0].first, "add_1");
  EXPECT_EQ(table.added()[1].first, "add_3");
  EXPECT_EQ(global_symbol(table.added()[1].second), "add_3");
  // A name the table gave away is taken for later kernels too.
  KernelTable fresh(main_only());
  EXPECT_EQ(global_name(fresh.intern(kernel("double", "double"), "k")), "k");
  EXPECT_EQ(global_name(fresh.intern(kernel("square", "square"), "k")), "k_1");
}

TEST(KernelTableTest, FindsKernelsAlreadyInTheModule) {
  IRModule mod = main_only();
  mod.add("existing", kernel("double", "existing"));
  KernelTable table(mod);
  Expr gvar = table.intern(kernel("also_double", "new_name"), "add");
  // The module's own GlobalVar, and nothing new.
  EXPECT_TRUE(gvar.same_as(mod.global_var("existing")));
  EXPECT_TRUE(table.added().empty());
  EXPECT_TRUE(StructuralEqual()(table.add_new_to(mod).lookup("existing"), mod.lookup("existing")));
}

TEST(KernelTableTest, AddsTheNewKernelsAfterTheModulesFunctions) {
  IRModule mod = main_only();
  mod.add("existing", kernel("double", "existing"));
  KernelTable table(mod);
  table.intern(kernel("square", "square"), "multiply");
  table.intern(kernel("double", "double"), "add");  // already there as @existing
  table.intern(kernel("square", "x"), "exp");       // already added as @multiply

  IRModule out = table.add_new_to(mod);
  ASSERT_EQ(out.functions().size(), 3u);
  EXPECT_EQ(out.functions()[0].first, "main");
  EXPECT_EQ(out.functions()[1].first, "existing");
  EXPECT_EQ(out.functions()[2].first, "multiply");
  EXPECT_TRUE(StructuralEqual()(out.lookup("multiply"), table.added()[0].second));
  EXPECT_EQ(global_symbol(out.lookup("multiply")), "multiply");
  EXPECT_TRUE(well_formed(out).ok()) << well_formed(out).message();
  // The table's module is left as it was.
  EXPECT_EQ(mod.functions().size(), 2u);
}

}  // namespace
}  // namespace relax
