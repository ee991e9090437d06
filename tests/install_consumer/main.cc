// Uses an installed relax the way an application would: n * 4 + 1 at n = 3 is 13.
#include <cstdint>
#include <iostream>

#include "absl/status/statusor.h"
#include "relax/shape/sym_expr.h"

int main() {
  relax::SymVar n("n");
  relax::SymExpr e = n * 4 + 1;
  absl::StatusOr<int64_t> value = relax::evaluate(e, {{n, 3}});
  if (!value.ok()) {
    std::cerr << "evaluate(" << e << ") failed: " << value.status() << "\n";
    return 1;
  }
  std::cout << e << " at n = 3 is " << *value << "\n";
  return *value == 13 ? 0 : 1;
}
