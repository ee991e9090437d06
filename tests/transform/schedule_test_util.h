// Helpers of the schedule tests: the kernels of a module as the default
// pipeline has them before scheduling, and running a kernel before and after a
// schedule on the same random inputs (relax/transform/prim_eval.h).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/module.h"
#include "relax/ir/parser.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/printer.h"
#include "relax/ir/well_formed.h"
#include "relax/runtime/tensor.h"
#include "relax/shape/sym_expr.h"
#include "relax/support/check.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/passes.h"
#include "relax/transform/prim_eval.h"

namespace relax::transform::schedule_test {

/// The module of `text` (a test failure and an empty module when it does not parse).
inline IRModule parse_or_fail(const std::string& text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? *mod : IRModule();
}

/// Function `name` of the module `module_text` (a test failure and an undefined Expr when the
/// text does not parse or has no such function).
inline Expr function_of(const std::string& module_text, const std::string& name) {
  absl::StatusOr<IRModule> mod = parse_module(module_text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return Expr();
  Expr f = mod->lookup(name);
  EXPECT_TRUE(f.defined()) << name;
  return f;
}

/// The function a schedule step made (a test failure and an undefined Expr on its error).
inline Expr ok_or_die(const absl::StatusOr<Expr>& f) {
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : Expr();
}

/// A schedule step refused, saying `text`.
inline void expect_error(const absl::StatusOr<Expr>& f, const std::string& text) {
  ASSERT_FALSE(f.ok()) << to_text(*f);
  EXPECT_TRUE(absl::StrContains(f.status().message(), text)) << f.status();
}

/// `f` is well formed in a module of its own.
inline void expect_well_formed(const Expr& f) {
  IRModule mod;
  mod.add("k", f);
  absl::Status s = well_formed(mod);
  EXPECT_TRUE(s.ok()) << s << "\n" << to_text(f);
}

/// `passes` run over `mod` under `ctx`, the IR verified after each (a test
/// failure and `mod` itself when one fails).
inline IRModule run_verified(const IRModule& mod, std::vector<PassPtr> passes, PassContext& ctx) {
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = PassManager(std::move(passes)).run(mod, ctx);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : mod;
}

/// The kernels of `mod` legalized, classified, and (when `fuse`) fused, then
/// simplified: what the schedules see in the default pipeline.
inline IRModule kernels_of(const IRModule& mod, bool fuse) {
  PassContext ctx;
  std::vector<PassPtr> passes = {create_legalize_ops_pass(), create_annotate_op_pattern_pass()};
  if (fuse) {
    passes.push_back(create_fuse_ops_pass());
    passes.push_back(create_fuse_tir_pass());
    passes.push_back(create_dce_pass());
  }
  passes.push_back(create_simplify_loops_pass());
  return run_verified(mod, std::move(passes), ctx);
}

/// What a run left: its status and the bytes of every buffer argument.
struct KernelRun {
  absl::Status status;
  std::vector<std::vector<uint8_t>> buffers;
};

/// Fills `t` with values drawn from `rng`: floats in [0.5, 1) or [-1, 1),
/// integers and bools 0 (a safe index, and never a divisor the kernel checks).
inline void fill_random(runtime::Tensor& t, std::mt19937& rng) {
  const DataType dtype = t.dtype();
  const size_t count = t.nbytes() / (dtype.bits / 8);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  auto* bytes = static_cast<uint8_t*>(t.data());
  for (size_t i = 0; i < count; ++i) {
    if (dtype == DataType::float32()) {
      float v = static_cast<float>(dist(rng));
      std::memcpy(bytes + i * 4, &v, 4);
    } else if (dtype == DataType::float64()) {
      double v = dist(rng);
      std::memcpy(bytes + i * 8, &v, 8);
    } else if (dtype.is_float() && dtype.bits == 16) {
      // [0.5, 1) in float16 (0x38xx..0x3Bxx) or bfloat16 (0x3Fxx).
      const uint16_t v = dtype == DataType::float16() ? static_cast<uint16_t>(0x3800 | (rng() & 0x3FF))
                                                      : static_cast<uint16_t>(0x3F00 | (rng() & 0x7F));
      std::memcpy(bytes + i * 2, &v, 2);
    }
  }
}

/// Runs `func` with every symbolic variable that is a bare buffer dim or an
/// integer scalar parameter bound to `size` (the i-th distinct one to size + i
/// when `distinct`), buffers filled from `seed`.
inline KernelRun run_kernel(const Expr& func, int64_t size, uint32_t seed, bool distinct = false) {
  const auto* node = func.as<PrimFuncNode>();
  RELAX_CHECK(node != nullptr);
  SymVarMap<int64_t> values;
  auto value_of = [&](const SymVar& v) {
    auto it = values.find(v);
    if (it != values.end()) return it->second;
    const int64_t value = distinct ? size + static_cast<int64_t>(values.size()) : size;
    values.emplace(v, value);
    return value;
  };
  std::mt19937 rng(seed);
  std::vector<PrimArg> args;
  std::vector<runtime::Tensor> tensors;
  KernelRun run;
  for (const PrimParam& p : node->params) {
    if (p.scalar) {
      if (p.scalar->dtype().is_float()) {
        args.emplace_back(PrimScalar::from_float(0.5, p.scalar->dtype()));
      } else {
        args.emplace_back(PrimScalar::from_int(value_of(*p.scalar), p.scalar->dtype()));
      }
      continue;
    }
    std::vector<int64_t> shape;
    for (const SymExpr& d : p.buffer->shape()) {
      if (d.is_var()) {
        shape.push_back(value_of(SymVar::from_expr(d)));
        continue;
      }
      for_each_var(d, [&](const SymVar& v) { value_of(v); });
      absl::StatusOr<int64_t> e = evaluate(d, values);
      if (!e.ok()) {
        run.status = e.status();
        return run;
      }
      shape.push_back(*e);
    }
    absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(shape, p.buffer->dtype());
    if (!t.ok()) {
      run.status = t.status();
      return run;
    }
    fill_random(*t, rng);
    tensors.push_back(*t);
    args.emplace_back(*t);
  }
  run.status = run_prim_func(func, args);
  for (const runtime::Tensor& t : tensors) {
    const auto* b = static_cast<const uint8_t*>(t.data());
    run.buffers.emplace_back(b, b + t.nbytes());
  }
  return run;
}

/// Expects `after` to compute exactly what `before` computes (bit for bit) at
/// every size of `sizes`; returns how many sizes ran without an error.
inline int expect_same_results(const Expr& before, const Expr& after, const std::vector<int64_t>& sizes,
                               const std::string& what, bool distinct = false) {
  int ran = 0;
  for (int64_t size : sizes) {
    for (uint32_t seed : {1u, 2u}) {
      KernelRun a = run_kernel(before, size, seed, distinct);
      KernelRun b = run_kernel(after, size, seed, distinct);
      EXPECT_EQ(a.status.ok(), b.status.ok()) << what << " at size " << size << ": " << a.status << " / " << b.status;
      if (!a.status.ok() || !b.status.ok()) continue;
      ++ran;
      EXPECT_EQ(a.buffers, b.buffers) << what << " at size " << size << " differs";
    }
  }
  return ran;
}

/// The value of element `i` of a buffer of `dtype` as a double (float dtypes only).
inline double float_at(const std::vector<uint8_t>& bytes, DataType dtype, size_t i) {
  if (dtype == DataType::float32()) {
    float v;
    std::memcpy(&v, bytes.data() + i * 4, 4);
    return v;
  }
  if (dtype == DataType::float64()) {
    double v;
    std::memcpy(&v, bytes.data() + i * 8, 8);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + i * 2, 2);
  if (dtype == DataType::bfloat16()) {
    const uint32_t u = static_cast<uint32_t>(h) << 16;
    float v;
    std::memcpy(&v, &u, 4);
    return v;
  }
  // float16: sign, 5 exponent bits, 10 mantissa bits.
  const int exponent = (h >> 10) & 0x1F;
  const double mantissa = h & 0x3FF;
  const double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                           : exponent == 31 ? (mantissa == 0 ? INFINITY : NAN)
                                            : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

/// Expects `after` to compute what `before` computes up to reassociated float
/// arithmetic: float buffers within `tolerance` (relative to 1 + |value|;
/// 16-bit floats within 30 times it), the other buffers bit for bit, at every
/// size of `sizes`; returns how many sizes ran without an error.
inline int expect_close_results(const Expr& before, const Expr& after, const std::vector<int64_t>& sizes,
                                const std::string& what, double tolerance = 1e-5, bool distinct = false) {
  const auto* node = before.as<PrimFuncNode>();
  RELAX_CHECK(node != nullptr);
  std::vector<DataType> dtypes;
  for (const PrimParam& p : node->params) {
    if (p.buffer) dtypes.push_back(p.buffer->dtype());
  }
  int ran = 0;
  for (int64_t size : sizes) {
    for (uint32_t seed : {1u, 2u}) {
      KernelRun a = run_kernel(before, size, seed, distinct);
      KernelRun b = run_kernel(after, size, seed, distinct);
      EXPECT_EQ(a.status.ok(), b.status.ok()) << what << " at size " << size << ": " << a.status << " / " << b.status;
      if (!a.status.ok() || !b.status.ok()) continue;
      ++ran;
      EXPECT_EQ(a.buffers.size(), b.buffers.size());
      for (size_t k = 0; k < a.buffers.size() && k < b.buffers.size() && k < dtypes.size(); ++k) {
        const DataType dtype = dtypes[k];
        if (!dtype.is_float()) {
          EXPECT_EQ(a.buffers[k], b.buffers[k]) << what << " at size " << size << ": buffer " << k << " differs";
          continue;
        }
        const double tol = dtype.bits == 16 ? 30 * tolerance : tolerance;
        const size_t count = a.buffers[k].size() / (dtype.bits / 8);
        for (size_t i = 0; i < count; ++i) {
          const double x = float_at(a.buffers[k], dtype, i), y = float_at(b.buffers[k], dtype, i);
          if (std::isnan(x) && std::isnan(y)) continue;
          if (!(std::fabs(x - y) <= tol * (1 + std::fabs(x)))) {
            ADD_FAILURE() << what << " at size " << size << ": buffer " << k << " element " << i << " is " << y
                          << ", expected " << x << " within " << tol;
            break;
          }
        }
      }
    }
  }
  return ran;
}

}  // namespace relax::transform::schedule_test
