// make_op on a name a user may mistype: a Status, not an abort.
#include <gtest/gtest.h>

#include <string>

#include "relax/ir/expr.h"
#include "relax/ir/op.h"

namespace relax {
namespace {

TEST(MakeOpTest, AnUnknownNameIsNotFound) {
  absl::StatusOr<Expr> op = make_op("no_such_op");
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(op.status().message()),
            "make_op: no operator named `no_such_op` is registered (all_ops() lists them)");
}

TEST(MakeOpTest, AKnownNameIsTheRegisteredOp) {
  for (const OpInfo* info : all_ops()) {
    absl::StatusOr<Expr> op = make_op(info->name);
    ASSERT_TRUE(op.ok()) << info->name << ": " << op.status();
    EXPECT_TRUE(op->same_as(info->op)) << info->name;
    EXPECT_TRUE(make_op_or_die(info->name).same_as(info->op)) << info->name;
  }
}

TEST(MakeOpTest, OrDieAbortsOnAnUnknownName) {
  EXPECT_DEATH((void)make_op_or_die("no_such_op"), "make_op_or_die: no operator named `no_such_op`");
}

}  // namespace
}  // namespace relax
