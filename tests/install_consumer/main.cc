// Uses an installed relax the way an application would: one include, a model
// with a symbolic dim built in-process, JIT-compiled and called at two sizes.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>

#include "relax/relax.h"

int main() {
  relax::SymVar n("n");
  relax::SymExpr e = n * 4 + 1;
  absl::StatusOr<int64_t> value = relax::evaluate(e, {{n, 3}});
  if (!value.ok() || *value != 13) {
    std::cerr << "evaluate(" << e << ") failed\n";
    return 1;
  }

  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  relax::Var x = f.param("x", relax::tensor_sinfo({n}, relax::DataType::float32()));
  f.ret(f.emit(relax::op::exp(x)));
  absl::StatusOr<relax::IRModule> mod = mb.build();
  if (!mod.ok()) {
    std::cerr << mod.status() << "\n";
    return 1;
  }
  relax::Target target;
  target.cache_dir = (std::filesystem::current_path() / "relax_cache").string();
  absl::StatusOr<relax::runtime::Module> m = relax::build(*mod, target);
  if (!m.ok()) {
    std::cerr << "build: " << m.status() << "\n";
    return 1;
  }
  for (int64_t size : {3, 100}) {
    relax::runtime::Tensor t = *relax::runtime::Tensor::empty({size}, relax::DataType::float32());
    for (int64_t i = 0; i < size; ++i) t.data_as_or_die<float>()[i] = static_cast<float>(i) / 50.0f;
    absl::StatusOr<relax::runtime::Value> y = (*m)["main"](t);
    if (!y.ok()) {
      std::cerr << "call: " << y.status() << "\n";
      return 1;
    }
    for (int64_t i = 0; i < size; ++i) {
      if (std::fabs(y->tensor_or_die().data_as_or_die<float>()[i] - std::exp(static_cast<float>(i) / 50.0f)) > 1e-5f) {
        std::cerr << "exp mismatch at " << i << "\n";
        return 1;
      }
    }
  }
  std::cout << e << " at n = 3 is " << *value << "; exp(x: (n,)) compiled once, ran at n = 3 and 100\n";
  return 0;
}
