// Conformance rows of the data-movement operators: reshape (a Shape argument, `-1` inferred)
// and permute_dims (attribute `axes`; reversed when absent).
#include "families.h"

namespace relax::ops_test {

OpRows manipulation_rows() {
  return {
      // reshape.
      deduce("reshape", "x: Tensor[(n, 4096), float32]", "reshape(x, shape(n, 64, 64))",
             "Tensor[(n, 64, 64), float32]"),
      deduce("reshape", "x: Tensor[(n, m), float32]", "reshape(x, shape(m * n))", "Tensor[(m * n,), float32]"),
      deduce("reshape", "x: Tensor[(n, 4096), float32]", "reshape(x, shape(-1, 64))",
             "Tensor[(n * 64, 64), float32]"),
      deduce("reshape", "x: Tensor[(6, 4), int32]", "reshape(x, shape(3, -1))", "Tensor[(3, 8), int32]"),
      deduce("reshape", "x: Tensor[ndim=2, float32]", "reshape(x, shape(6, 4))", "Tensor[(6, 4), float32]"),
      deduce("reshape", "x: Tensor[ndim=2, float32]", "reshape(x, shape(-1, 4))", "Tensor[ndim=2, float32]"),
      deduce("reshape", "x: Tensor[(n,), float32], s: Shape[ndim=3]", "reshape(x, s)", "Tensor[ndim=3, float32]"),
      deduce("reshape", "s: Shape[(p, q)], x: Tensor[(q, p), float32]", "reshape(x, s)",
             "Tensor[(p, q), float32]"),
      deduce("reshape", "x: Tensor[(n, 4), ?]", "reshape(x, shape(4, n))", "Tensor[(4, n), ?]"),
      deduce("reshape", "x: Tensor[(n, 4), float32]", "reshape(x, shape(n, 3))",
             error("reshape: element counts differ: x Tensor[(n, 4), float32] has n * 4 elements, new shape "
                   "(n, 3) has n * 3")),
      deduce("reshape", "x: Tensor[(6,), float32]", "reshape(x, shape(-1, 4))",
             error("reshape: cannot infer dim 0 of (-1, 4)")),
      deduce("reshape", "x: Tensor[(6,), float32]", "reshape(x, shape(-1, -1))",
             error("reshape: new shape (-1, -1) has more than one -1 (dims 0 and 1)")),
      deduce("reshape", "x: Tensor[(n,), float32], y: Tensor[(n,), float32]", "reshape(x, y)",
             error("reshape: argument 1 (shape): expected a Shape, got Tensor[(n,), float32]")),
      numeric("reshape", "x: Tensor[(n, 6), float32]", "reshape(x, shape(n * 2, 3))",
              [](const RefInputs& in) { return reshape(in[0], {in.dim("n") * 2, 3}); }),
      numeric("reshape", "x: Tensor[(n, 4, 16), int32]", "reshape(x, shape(n, -1))",
              [](const RefInputs& in) { return reshape(in[0], {in.dim("n"), 64}); }),
      numeric("reshape", "s: Shape[(p, q)], x: Tensor[(q, p), float32]", "reshape(x, s)",
              {{"p", {1, 7, 300}}, {"q", {1, 3, 20}}},
              [](const RefInputs& in) { return reshape(in[1], {in.dim("p"), in.dim("q")}); }),

      // permute_dims.
      deduce("permute_dims", "x: Tensor[(n, m, 4), float32]", "permute_dims(x)", "Tensor[(4, m, n), float32]"),
      deduce("permute_dims", "x: Tensor[(n, m, 4), float32]", "permute_dims(x, axes=[0, 2, 1])",
             "Tensor[(n, 4, m), float32]"),
      deduce("permute_dims", "x: Tensor[(n, m, 4), float32]", "permute_dims(x, axes=[-1, 0, 1])",
             "Tensor[(4, n, m), float32]"),
      deduce("permute_dims", "x: Tensor[(2, 3), int64]", "permute_dims(x, axes=[1, 0])", "Tensor[(3, 2), int64]"),
      deduce("permute_dims", "x: Tensor[ndim=3, float32]", "permute_dims(x)", "Tensor[ndim=3, float32]"),
      deduce("permute_dims", "x: Tensor[ndim=?, float32]", "permute_dims(x)", "Tensor[ndim=?, float32]"),
      deduce("permute_dims", "x: Tensor[ndim=?, float32]", "permute_dims(x, axes=[1, 0])",
             "Tensor[ndim=2, float32]"),
      deduce("permute_dims", "x: Tensor[(n, m), ?]", "permute_dims(x)", "Tensor[(m, n), ?]"),
      deduce("permute_dims", "x: Tensor[(n, m, 4), float32]", "permute_dims(x, axes=[0, 1])",
             error("permute_dims: axes (0, 1) have 2 entries, expected 3")),
      deduce("permute_dims", "x: Tensor[(n, m), float32]", "permute_dims(x, axes=[0, 2])",
             error("permute_dims: axis 2 in (0, 2) is out of range for rank 2")),
      deduce("permute_dims", "x: Tensor[(n, m), float32]", "permute_dims(x, axes=[1, -1])",
             error("permute_dims: axis 1 appears twice in (1, -1)")),
      numeric("permute_dims", "x: Tensor[(n, m), float32]", "permute_dims(x)",
              {{"n", {1, 7, 300}}, {"m", {1, 5, 64}}}, [](const RefInputs& in) { return permute_dims(in[0]); }),
      numeric("permute_dims", "x: Tensor[(b, n, 4), float32]", "permute_dims(x, axes=[0, 2, 1])",
              {{"b", {1, 3, 2}}, {"n", {1, 7, 300}}},
              [](const RefInputs& in) { return permute_dims(in[0], {0, 2, 1}); }),
      numeric("permute_dims", "x: Tensor[(a, 3, c, 2), int64]", "permute_dims(x, axes=[2, 0, -1, 1])",
              {{"a", {1, 5, 17}}, {"c", {1, 2, 31}}},
              [](const RefInputs& in) { return permute_dims(in[0], {2, 0, 3, 1}); }),
  };
}

}  // namespace relax::ops_test
