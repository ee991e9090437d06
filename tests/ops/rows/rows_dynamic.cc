// Rows of the data-dependent operators: nonzero, unique, masked_select. Their results are
// annotated by rank only; the numeric rows compare the whole result (its data-dependent
// shape included) with the plain loops of reference_dynamic.cc, on inputs made to hold
// zeros, repeated values and empty selections.
#include "families.h"
#include "reference/reference_dynamic.h"

namespace relax::ops_test {
namespace {

// Each element zero with probability 1/2, else uniform in [-4, 4] (integers: -4..4).
HostTensor half_zeros(const InputSpec& spec, Rng& rng) {
  HostTensor t = HostTensor::filled(spec.shape, spec.dtype);
  for (double& v : t.values) {
    if (rng.integer(0, 1) == 0) continue;
    v = spec.dtype.is_float() ? rng.uniform(-4, 4) : static_cast<double>(rng.integer(-4, 4));
    if (spec.dtype.is_bool()) v = 1;
  }
  return t;
}

// Values from a set of 9 (multiples of 0.25 in [-1, 1], exact in every float dtype), so that
// most repeat.
HostTensor few_values(const InputSpec& spec, Rng& rng) {
  HostTensor t = HostTensor::filled(spec.shape, spec.dtype);
  for (double& v : t.values) v = 0.25 * static_cast<double>(rng.integer(-4, 4));
  return t;
}

// All zeros (bool: all false): empty results.
HostTensor zeros(const InputSpec& spec, Rng&) { return HostTensor::filled(spec.shape, spec.dtype); }

Reference ref_nonzero() {
  return [](const RefInputs& in) { return nonzero(in[0]); };
}
Reference ref_unique() {
  return [](const RefInputs& in) { return unique(in[0]); };
}
Reference ref_masked_select() {
  return [](const RefInputs& in) { return masked_select(in[0], in[1]); };
}

}  // namespace

OpRows dynamic_rows() {
  return {
      // nonzero: int64 (ndim, count), by rank only.
      deduce("nonzero", "x: Tensor[(n, 4), float32]", "nonzero(x)", "Tensor[ndim=2, int64]"),
      deduce("nonzero", "x: Tensor[(2, 3, 5), bool]", "nonzero(x)", "Tensor[ndim=2, int64]"),
      deduce("nonzero", "x: Tensor[ndim=3, int32]", "nonzero(x)", "Tensor[ndim=2, int64]"),
      deduce("nonzero", "x: Tensor[ndim=?, ?]", "nonzero(x)", "Tensor[ndim=2, int64]"),
      deduce("nonzero", "x: Prim[int64]", "nonzero(x)",
             error("nonzero: argument 0 (x): expected a Tensor, got Prim[int64]")),
      numeric("nonzero", "x: Tensor[(n, 5), int32]", "nonzero(x)", {{"n", {0, 1, 13, 300}}},
              ref_nonzero())
          .inputs(half_zeros),
      numeric("nonzero", "x: Tensor[(n,), float32]", "nonzero(x)", ref_nonzero()).inputs(half_zeros),
      numeric("nonzero", "x: Tensor[(2, n, 3), bool]", "nonzero(x)", ref_nonzero()),
      numeric("nonzero", "x: Tensor[(n, 7), float32]", "nonzero(x)", ref_nonzero()).inputs(zeros),
      numeric("nonzero", "x: Tensor[(n, 2), float16]", "nonzero(x)", ref_nonzero()).inputs(half_zeros),

      // unique: 1-D, x's dtype, by rank only.
      deduce("unique", "x: Tensor[(n, m), float32]", "unique(x)", "Tensor[ndim=1, float32]"),
      deduce("unique", "x: Tensor[ndim=?, int8]", "unique(x)", "Tensor[ndim=1, int8]"),
      deduce("unique", "x: Tensor[ndim=2, ?]", "unique(x)", "Tensor[ndim=1, ?]"),
      deduce("unique", "x: Shape[(2, 3)]", "unique(x)",
             error("unique: argument 0 (x): expected a Tensor, got Shape[(2, 3)]")),
      numeric("unique", "x: Tensor[(n, 3), int32]", "unique(x)", {{"n", {0, 1, 13, 300}}},
              ref_unique()),
      numeric("unique", "x: Tensor[(n,), float32]", "unique(x)", ref_unique()).inputs(few_values),
      numeric("unique", "x: Tensor[(n, 4), float32]", "unique(x)", ref_unique()),
      numeric("unique", "x: Tensor[(n,), int64]", "unique(x)", ref_unique()).inputs(zeros),
      numeric("unique", "x: Tensor[(n, 2), float16]", "unique(x)", ref_unique()).inputs(few_values),
      numeric("unique", "x: Tensor[(n, 2), bfloat16]", "unique(x)", ref_unique()).inputs(few_values),
      numeric("unique", "x: Tensor[(n,), uint8]", "unique(x)", ref_unique()),

      // masked_select: 1-D, x's dtype; mask must have x's shape.
      deduce("masked_select", "x: Tensor[(n, 4), float32], m: Tensor[(n, 4), bool]",
             "masked_select(x, m)", "Tensor[ndim=1, float32]"),
      deduce("masked_select", "x: Tensor[(n, 4), int32], m: Tensor[ndim=2, bool]",
             "masked_select(x, m)", "Tensor[ndim=1, int32]"),
      deduce("masked_select", "x: Tensor[ndim=?, ?], m: Tensor[(3,), bool]", "masked_select(x, m)",
             "Tensor[ndim=1, ?]"),
      deduce("masked_select", "x: Tensor[(n, 4), float32], m: Tensor[(n, 5), bool]",
             "masked_select(x, m)",
             error("masked_select: argument 1 (mask) Tensor[(n, 5), bool] must have the shape of "
                   "argument 0 (x) Tensor[(n, 4), float32]: dim 1: `5` vs `4`")),
      deduce("masked_select", "x: Tensor[(n,), float32], m: Tensor[(k,), bool]",
             "masked_select(x, m)", error("masked_select: argument 1 (mask) Tensor[(k,), bool] must "
                                          "have the shape of argument 0 (x) Tensor[(n,), float32]: "
                                          "dim 0: `k` vs `n`")),
      deduce("masked_select", "x: Tensor[(n, 4), float32], m: Tensor[ndim=1, bool]",
             "masked_select(x, m)", error("masked_select: argument 1 (mask) Tensor[ndim=1, bool] "
                                          "must have the shape of argument 0 (x) Tensor[(n, 4), "
                                          "float32]: ranks 1 vs 2")),
      deduce("masked_select", "x: Tensor[(n,), float32], m: Tensor[(n,), int32]",
             "masked_select(x, m)", error("masked_select: argument 1 (mask)")),
      numeric("masked_select", "x: Tensor[(n, 3), float32], m: Tensor[(n, 3), bool]",
              "masked_select(x, m)", {{"n", {0, 1, 13, 300}}}, ref_masked_select()),
      numeric("masked_select", "x: Tensor[(n,), int64], m: Tensor[(n,), bool]",
              "masked_select(x, m)", ref_masked_select()),
      numeric("masked_select", "x: Tensor[(n, 2), float32], m: Tensor[(n, 2), bool]",
              "masked_select(x, m)", ref_masked_select())
          .inputs(zeros),
      numeric("masked_select", "x: Tensor[(n,), bfloat16], m: Tensor[(n,), bool]",
              "masked_select(x, m)", ref_masked_select()),
  };
}

}  // namespace relax::ops_test
