// Conformance rows of the manipulation operators: expand_dims, squeeze, flatten, broadcast_to,
// astype, flip, repeat, tile (manipulate.cc), concat, split, strided_slice, take, pad, one_hot
// (manipulate_index.cc), gather_elements, scatter_nd (manipulate_scatter.cc, references inline), reshape (a Shape argument, `-1` inferred as an exact quotient) and
// permute_dims (attribute `axes`; reversed when absent). References: reference.h,
// reference_manipulate.h.
#include <algorithm>
#include <cmath>

#include "families.h"
#include "reference/reference_manipulate.h"

namespace relax::ops_test {
namespace {

const DataType kF32 = DataType::float32();

Reference ref_reshape_to(std::function<std::vector<int64_t>(const RefInputs&)> shape) {
  return [shape](const RefInputs& in) { return reshape(in[0], shape(in)); };
}

}  // namespace

OpRows manipulate_rows() {
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
      // reshape: -1 is the quotient with common factors cancelled.
      deduce("reshape", "x: Tensor[(b, n, 32, 128), float32]", "reshape(x, shape(b, n, -1))",
             "Tensor[(b, n, 4096), float32]"),
      deduce("reshape", "x: Tensor[(n, 4, 16), float32]", "reshape(x, shape(n, -1))", "Tensor[(n, 64), float32]"),
      deduce("reshape", "x: Tensor[(n, m, 6), float32]", "reshape(x, shape(n * 3, -1))",
             "Tensor[(n * 3, m * 2), float32]"),
      numeric("reshape", "x: Tensor[(b, n, 8, 4), float32]", "reshape(x, shape(b, n, -1))",
              {{"b", {1, 2, 3}}, {"n", {1, 13, 300}}},
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{in.dim("b"), in.dim("n"), 32}; })),

      // expand_dims.
      deduce("expand_dims", "x: Tensor[(n, m), float32]", "expand_dims(x, axis=1)", "Tensor[(n, 1, m), float32]"),
      deduce("expand_dims", "x: Tensor[(n, m), float32]", "expand_dims(x, axis=[0, -1])",
             "Tensor[(1, n, m, 1), float32]"),
      deduce("expand_dims", "x: Tensor[ndim=2, int32]", "expand_dims(x, axis=0)", "Tensor[ndim=3, int32]"),
      deduce("expand_dims", "x: Tensor[ndim=?, float32]", "expand_dims(x, axis=0)", "Tensor[ndim=?, float32]"),
      deduce("expand_dims", "x: Tensor[(n, m), float32]", "expand_dims(x, axis=3)",
             error("expand_dims: axis 3 in [3] is out of range for the result's rank 3")),
      deduce("expand_dims", "x: Tensor[(n,), float32]", "expand_dims(x, axis=[1, -2])",
             error("expand_dims: axis 1 appears twice in [1, -2]")),
      deduce("expand_dims", "x: Tensor[(n,), float32]", "expand_dims(x)",
             error("expand_dims: attribute `axis` (int | [int]) is required")),
      numeric("expand_dims", "x: Tensor[(n, 3), float32]", "expand_dims(x, axis=[0, 2])",
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{1, in.dim("n"), 1, 3}; })),

      // squeeze.
      deduce("squeeze", "x: Tensor[(n, 1, 4, 1), float32]", "squeeze(x)", "Tensor[(n, 4), float32]"),
      deduce("squeeze", "x: Tensor[(n, 1, 4, 1), float32]", "squeeze(x, axis=1)", "Tensor[(n, 4, 1), float32]"),
      deduce("squeeze", "x: Tensor[(n, 1, 4, 1), float32]", "squeeze(x, axis=[1, -1])", "Tensor[(n, 4), float32]"),
      deduce("squeeze", "x: Tensor[ndim=3, float32]", "squeeze(x, axis=0)", "Tensor[ndim=2, float32]"),
      deduce("squeeze", "x: Tensor[ndim=3, float32]", "squeeze(x)", "Tensor[ndim=?, float32]"),
      deduce("squeeze", "x: Tensor[(n, m), float32]", "squeeze(x, axis=1)",
             error("squeeze: dim 1 of x Tensor[(n, m), float32] is `m`, not provably 1")),
      deduce("squeeze", "x: Tensor[(n, 1), float32]", "squeeze(x, axis=2)",
             error("squeeze: axis 2 is out of range for rank 2")),
      numeric("squeeze", "x: Tensor[(n, 1, 3, 1), float32]", "squeeze(x)",
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{in.dim("n"), 3}; })),

      // flatten.
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x)", "Tensor[(m * n * 4,), float32]"),
      deduce("flatten", "x: Tensor[(), int32]", "flatten(x)", "Tensor[(1,), int32]"),
      deduce("flatten", "x: Tensor[ndim=3, float32]", "flatten(x)", "Tensor[ndim=1, float32]"),
      deduce("flatten", "x: Tensor[(n,), float32], y: Tensor[(n,), float32]", "flatten(x, y)",
             error("`flatten` takes 1 argument, found 2")),
      numeric("flatten", "x: Tensor[(n, 3, m), int32]", "flatten(x)", {{"n", {1, 7, 30}}, {"m", {1, 5, 64}}},
              ref_reshape_to([](const RefInputs&) { return std::vector<int64_t>{-1}; })),
      // flatten with start_dim / end_dim (torch.flatten): the merged dim is the product.
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, start_dim=1)", "Tensor[(n, m * 4), float32]"),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, end_dim=1)", "Tensor[(n * 4, m), float32]"),
      deduce("flatten", "x: Tensor[(b, n, 4, m), float32]", "flatten(x, start_dim=-3, end_dim=-2)",
             "Tensor[(b, n * 4, m), float32]"),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, start_dim=1, end_dim=1)",
             "Tensor[(n, 4, m), float32]"),
      deduce("flatten", "x: Tensor[(), int32]", "flatten(x, start_dim=-1, end_dim=0)", "Tensor[(1,), int32]"),
      deduce("flatten", "x: Tensor[ndim=4, float32]", "flatten(x, start_dim=1)", "Tensor[ndim=2, float32]"),
      deduce("flatten", "x: Tensor[ndim=?, float32]", "flatten(x, start_dim=1)", "Tensor[ndim=?, float32]"),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, start_dim=3)",
             error("flatten: axis 3 is out of range for rank 3 (x Tensor[(n, 4, m), float32])")),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, end_dim=-4)",
             error("flatten: axis -4 is out of range for rank 3")),
      deduce("flatten", "x: Tensor[(n, 4, m), float32]", "flatten(x, start_dim=2, end_dim=-2)",
             error("flatten: start_dim 2 (dim 2) comes after end_dim -2 (dim 1) for rank 3")),
      numeric("flatten", "x: Tensor[(n, 3, m), int32]", "flatten(x, start_dim=1)",
              {{"n", {1, 7, 30}}, {"m", {1, 5, 64}}},
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{in.dim("n"), -1}; })),
      numeric("flatten", "x: Tensor[(n, 2, 3, m), float32]", "flatten(x, start_dim=1, end_dim=-2)",
              {{"n", {1, 7, 30}}, {"m", {1, 5, 64}}},
              ref_reshape_to([](const RefInputs& in) { return std::vector<int64_t>{in.dim("n"), 6, in.dim("m")}; })),

      // broadcast_to.
      deduce("broadcast_to", "x: Tensor[(1, m), float32], y: Tensor[(n,), float32]", "broadcast_to(x, shape(n, m))",
             "Tensor[(n, m), float32]"),
      deduce("broadcast_to", "x: Tensor[(m,), float32], s: Shape[(b, n, m)]", "broadcast_to(x, s)",
             "Tensor[(b, n, m), float32]"),
      deduce("broadcast_to", "x: Tensor[(n, 1), float32], s: Shape[ndim=3]", "broadcast_to(x, s)",
             "Tensor[ndim=3, float32]"),
      deduce("broadcast_to", "x: Tensor[ndim=?, float32]", "broadcast_to(x, shape(4, 5))", "Tensor[(4, 5), float32]"),
      deduce("broadcast_to", "x: Tensor[(n, 3), float32]", "broadcast_to(x, shape(n, 4))",
             error("broadcast_to: dim 1 of x Tensor[(n, 3), float32] is `3`, neither the target's dim 1 `4` nor 1")),
      deduce("broadcast_to", "x: Tensor[(n, 3), float32]", "broadcast_to(x, shape(3,))",
             error("broadcast_to: x Tensor[(n, 3), float32] has rank 2, more than the target shape (3,)")),
      numeric("broadcast_to", "x: Tensor[(n, 1), float32]", "broadcast_to(x, shape(3, n, 5))",
              [](const RefInputs& in) { return broadcast_to(in[0], {3, in.dim("n"), 5}); }),

      // astype.
      deduce("astype", "x: Tensor[(n, 4), float32]", "astype(x, dtype=int32)", "Tensor[(n, 4), int32]"),
      deduce("astype", "x: Tensor[ndim=2, float32]", "astype(x, dtype=float16)", "Tensor[ndim=2, float16]"),
      deduce("astype", "x: Tensor[(n,), ?]", "astype(x, dtype=bool)", "Tensor[(n,), bool]"),
      deduce("astype", "x: Tensor[(n,), float32]", "astype(x)",
             error("astype: attribute `dtype` (dtype) is required")),
      numeric("astype", "x: Tensor[(n, 3), float32]", "astype(x, dtype=int32)",
              [](const RefInputs& in) { return astype(in[0], DataType::int32()); }).range(-9.9, 9.9),
      numeric("astype", "x: Tensor[(n,), int32]", "astype(x, dtype=float32)",
              [](const RefInputs& in) { return astype(in[0], kF32); }),
      numeric("astype", "x: Tensor[(n,), float32]", "astype(x, dtype=bool)",
              [](const RefInputs& in) { return astype(in[0], DataType::boolean()); }).range(-1.5, 1.5),
      numeric("astype", "x: Tensor[(n,), bool]", "astype(x, dtype=float64)",
              [](const RefInputs& in) { return astype(in[0], DataType::float64()); }),
      numeric("astype", "x: Tensor[(n,), int64]", "astype(x, dtype=int8)",
              [](const RefInputs& in) { return astype(in[0], DataType{DataType::Code::kInt, 8, 1}); }).range(-500, 500),
      numeric("astype", "x: Tensor[(n,), uint8]", "astype(x, dtype=int64)",
              [](const RefInputs& in) { return astype(in[0], DataType::int64()); }),
      numeric("astype", "x: Tensor[(n,), float64]", "astype(x, dtype=uint8)",
              [](const RefInputs& in) { return astype(in[0], DataType{DataType::Code::kUInt, 8, 1}); }).range(0, 255),

      // flip.
      deduce("flip", "x: Tensor[(n, m), float32]", "flip(x, axis=1)", "Tensor[(n, m), float32]"),
      deduce("flip", "x: Tensor[ndim=?, float32]", "flip(x, axis=3)", "Tensor[ndim=?, float32]"),
      deduce("flip", "x: Tensor[(n, m), float32]", "flip(x, axis=2)", error("flip: axis 2 is out of range for rank 2")),
      numeric("flip", "x: Tensor[(n, 3), float32]", "flip(x, axis=0)",
              [](const RefInputs& in) { return flip(in[0], 0); }),
      numeric("flip", "x: Tensor[(2, n), int32]", "flip(x, axis=-1)",
              [](const RefInputs& in) { return flip(in[0], -1); }),

      // repeat.
      deduce("repeat", "x: Tensor[(n, 3), float32]", "repeat(x, repeats=2, axis=1)", "Tensor[(n, 6), float32]"),
      deduce("repeat", "x: Tensor[(n, 3), float32]", "repeat(x, repeats=2)", "Tensor[(n * 6,), float32]"),
      deduce("repeat", "x: Tensor[ndim=2, float32]", "repeat(x, repeats=2, axis=0)", "Tensor[ndim=2, float32]"),
      deduce("repeat", "x: Tensor[(n, 3), float32]", "repeat(x, repeats=-1, axis=1)",
             error("repeat: repeats [-1] has -1, expected counts >= 0")),
      numeric("repeat", "x: Tensor[(n, 3), float32]", "repeat(x, repeats=3, axis=0)",
              [](const RefInputs& in) { return repeat(in[0], 3, 0); }),
      numeric("repeat", "x: Tensor[(2, n), int64]", "repeat(x, repeats=2)",
              [](const RefInputs& in) { return repeat(in[0], 2, std::nullopt); }),

      // tile.
      deduce("tile", "x: Tensor[(n, 3), float32]", "tile(x, repeats=[2, 2])", "Tensor[(n * 2, 6), float32]"),
      deduce("tile", "x: Tensor[(n, 3), float32]", "tile(x, repeats=[2])", "Tensor[(n, 6), float32]"),
      deduce("tile", "x: Tensor[(n, 3), float32]", "tile(x, repeats=[2, 1, 1])", "Tensor[(2, n, 3), float32]"),
      deduce("tile", "x: Tensor[ndim=2, float32]", "tile(x, repeats=[2, 1, 1])", "Tensor[ndim=3, float32]"),
      deduce("tile", "x: Tensor[(n,), float32]", "tile(x, repeats=[-2])",
             error("tile: repeats [-2] has -2, expected counts >= 0")),
      numeric("tile", "x: Tensor[(n, 3), float32]", "tile(x, repeats=[2, 3])",
              [](const RefInputs& in) { return tile(in[0], {2, 3}); }),
      numeric("tile", "x: Tensor[(n,), int32]", "tile(x, repeats=[3, 1])",
              [](const RefInputs& in) { return tile(in[0], {3, 1}); }),

      // concat.
      deduce("concat", "x: Tensor[(n, 4), float32], y: Tensor[(m, 4), float32]", "concat((x, y))",
             "Tensor[(m + n, 4), float32]"),
      deduce("concat", "x: Tensor[(n, 2), float32], y: Tensor[(n, 3), float32]", "concat((x, y, x), axis=-1)",
             "Tensor[(n, 7), float32]"),
      deduce("concat", "x: Tensor[ndim=2, float32], y: Tensor[(n, 3), float32]", "concat((x, y), axis=1)",
             "Tensor[ndim=2, float32]"),
      deduce("concat", "x: Tensor[(n, 4), float32], y: Tensor[(n, 5), float32]", "concat((x, y))",
             error("concat: dim 1 of field 1 Tensor[(n, 5), float32] is `5`, field 0's is `4` (only axis 0 may differ)")),
      deduce("concat", "x: Tensor[(n, 4), float32], y: Tensor[(n, 4), int32]", "concat((x, y))",
             error("concat: field 1 has dtype int32, field 0's is float32")),
      deduce("concat", "x: Tensor[(n, 4), float32], y: Tensor[(4,), float32]", "concat((x, y))",
             error("concat: field 1 Tensor[(4,), float32] has rank 1, expected 2")),
      deduce("concat", "x: Tensor[(n, 4), float32]", "concat((x,), axis=2)",
             error("concat: axis 2 is out of range for rank 2")),
      deduce("concat", "x: Tensor[(n, 4), float32]", "concat(x)",
             error("concat: argument 0 (tensors): expected a Tuple")),
      numeric("concat", "x: Tensor[(n, 2), float32], y: Tensor[(n, 3), float32], z: Tensor[(n, k), float32]",
              "concat((x, y, z), axis=1)", {{"n", {1, 13, 300}}, {"k", {1, 4, 17}}},
              [](const RefInputs& in) { return concat({in[0], in[1], in[2]}, 1); }),
      numeric("concat", "x: Tensor[(n, 3), int32], y: Tensor[(m, 3), int32]", "concat((x, y))",
              {{"n", {1, 13, 300}}, {"m", {2, 1, 77}}},
              [](const RefInputs& in) { return concat({in[0], in[1]}, 0); }),

      // split.
      deduce("split", "x: Tensor[(n, 6), float32]", "split(x, indices_or_sections=3, axis=1)",
             "Tuple[(Tensor[(n, 2), float32], Tensor[(n, 2), float32], Tensor[(n, 2), float32])]"),
      deduce("split", "x: Tensor[(n * 4,), float32]", "split(x, indices_or_sections=2)",
             "Tuple[(Tensor[(n * 2,), float32], Tensor[(n * 2,), float32])]"),
      deduce("split", "x: Tensor[(n, 8), float32]", "split(x, indices_or_sections=[2, 5], axis=-1)",
             "Tuple[(Tensor[(n, 2), float32], Tensor[(n, 3), float32], Tensor[(n, 3), float32])]"),
      deduce("split", "x: Tensor[ndim=2, float32]", "split(x, indices_or_sections=2, axis=1)",
             "Tuple[(Tensor[ndim=2, float32], Tensor[ndim=2, float32])]"),
      deduce("split", "x: Tensor[(n, 5), float32]", "split(x, indices_or_sections=2, axis=1)",
             error("split: dim 1 of x Tensor[(n, 5), float32] is `5`, not provably divisible into 2 sections")),
      deduce("split", "x: Tensor[(n, m), float32]", "split(x, indices_or_sections=2)",
             error("split: dim 0 of x Tensor[(n, m), float32] is `n`, not provably divisible into 2 sections")),
      deduce("split", "x: Tensor[(n, 8), float32]", "split(x, indices_or_sections=[5, 2], axis=1)",
             error("split: split points [5, 2] must be non-negative and ascending")),
      deduce("split", "x: Tensor[(n, 8), float32]", "split(x, indices_or_sections=0)",
             error("split: indices_or_sections is 0, expected a number of sections >= 1")),
      numeric("split", "x: Tensor[(n, 6), float32]", "split(x, indices_or_sections=3, axis=1)",
              [](const RefInputs& in) { return RefResult::tuple(split_sections(in[0], 3, 1)); }),
      numeric("split", "x: Tensor[(9, n), int32]", "split(x, indices_or_sections=[2, 4, 12])",
              [](const RefInputs& in) { return RefResult::tuple(split_points(in[0], {2, 4, 12}, 0)); }),

      // strided_slice.
      deduce("strided_slice", "x: Tensor[(n, 64), float32]", "strided_slice(x, axes=[1], begin=[0], end=[32])",
             "Tensor[(n, 32), float32]"),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]",
             "strided_slice(x, axes=[1], begin=[-3], end=[100])", "Tensor[(n, 3), float32]"),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]",
             "strided_slice(x, axes=[1], begin=[1], end=[10], strides=[2])", "Tensor[(n, 5), float32]"),
      deduce("strided_slice", "x: Tensor[ndim=2, float32]", "strided_slice(x, axes=[1], begin=[1], end=[4])",
             "Tensor[ndim=2, float32]"),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]", "strided_slice(x, axes=[1], begin=[1, 2], end=[4])",
             error("strided_slice: axes [1] have 1 entries, begin (1, 2) 2, end (4,) 1")),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]",
             "strided_slice(x, axes=[1], begin=[1], end=[4], strides=[0])",
             error("strided_slice: stride 0 of axis 1 is not positive")),
      deduce("strided_slice", "x: Tensor[(n, 10), float32]", "strided_slice(x, axes=[2], begin=[1], end=[4])",
             error("strided_slice: axis 2 is out of range for rank 2")),
      deduce("strided_slice", "x: Tensor[(n, 10), float32], p: Prim[int64, k]",
             "strided_slice(x, axes=[1], begin=sym[k], end=sym[k + 4])",
             "Tensor[(n, max(0, min(10, max(0, k + 4)) - min(10, max(0, k)))), float32]"),
      // Bounds the Analyzer cannot prove within [0, dim] keep numpy's clamping (n may be 0).
      deduce("strided_slice", "x: Tensor[(n, m), float32]", "strided_slice(x, axes=[0], begin=[1], end=sym[n])",
             "Tensor[(max(1, n) - 1, m), float32]"),
      numeric("strided_slice", "x: Tensor[(n, 10), float32]",
              "strided_slice(x, axes=[1, 0], begin=[-8, 0], end=[9, 200], strides=[3, 1])",
              [](const RefInputs& in) { return strided_slice(in[0], {1, 0}, {-8, 0}, {9, 200}, {3, 1}); }),
      numeric("strided_slice", "x: Tensor[(n, 4), float32], p: Prim[int64, k]",
              "strided_slice(x, axes=[0], begin=sym[k], end=sym[k + 3])", {{"n", {1, 13, 300}}, {"k", {0, 11, 290}}},
              [](const RefInputs& in) {
                const int64_t k = in.dim("k");
                return strided_slice(in[0], {0}, {k}, {k + 3}, {1});
              }),
      numeric("strided_slice", "x: Tensor[(n, m), int32]", "strided_slice(x, axes=[0, 1], begin=[1, 0], end=sym[n, m - 1])",
              [](const RefInputs& in) { return strided_slice(in[0], {0, 1}, {1, 0}, {in.dim("n"), in.dim("m") - 1}, {1, 1}); }),

      // take.
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(n,), int32]", "take(x, i, axis=0)",
             "Tensor[(n, d), float32]"),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(b, n), int64]", "take(x, i, axis=0)",
             "Tensor[(b, n, d), float32]"),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(b, n), int64]", "take(x, i, axis=1)",
             "Tensor[(v, b, n), float32]"),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(n,), int64]", "take(x, i)", "Tensor[(n,), float32]"),
      deduce("take", "x: Tensor[ndim=2, float32], i: Tensor[(n,), int64]", "take(x, i, axis=0)",
             "Tensor[ndim=2, float32]"),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(n,), float32]", "take(x, i, axis=0)",
             error("take: argument 1 (indices): expected")),
      deduce("take", "x: Tensor[(v, d), float32], i: Tensor[(n,), int64]", "take(x, i, axis=0, mode=\"raise\")",
             error("take: attribute `mode`")),
      numeric("take", "x: Tensor[(10, d), float32], i: Tensor[(n,), int32]", "take(x, i, axis=0)",
              {{"d", {1, 13, 64}}, {"n", {1, 7, 300}}},
              [](const RefInputs& in) { return take(in[0], in[1], 0, false); }).range(1, -3, 12),
      numeric("take", "x: Tensor[(3, 5), int32], i: Tensor[(n, 2), int64]", "take(x, i, axis=1, mode=\"wrap\")",
              [](const RefInputs& in) { return take(in[0], in[1], 1, true); }).range(1, -9, 9),
      numeric("take", "x: Tensor[(3, 5), float32], i: Tensor[(n,), int64]", "take(x, i)",
              [](const RefInputs& in) { return take(in[0], in[1], std::nullopt, false); }).range(1, 0, 14),

      // gather_elements: x at indices' positions, the index along axis read from indices.
      deduce("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(n, 3), int64]", "gather_elements(x, i, axis=1)",
             "Tensor[(n, 3), float32]"),
      deduce("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(m, 5), int32]", "gather_elements(x, i)",
             "Tensor[(m, 5), float32]"),
      deduce("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(n, 6), int64]", "gather_elements(x, i)",
             error("gather_elements: dim 1 of argument 1 (indices) is `6`, not provably at most x's `5`")),
      deduce("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(n,), int64]", "gather_elements(x, i)",
             error("gather_elements: argument 1 (indices) Tensor[(n,), int64] has rank 1, expected x's rank 2")),
      numeric("gather_elements", "x: Tensor[(n, 5), float32], i: Tensor[(n, 3), int64]", "gather_elements(x, i, axis=1)",
              {{"n", {1, 4, 33}}},
              [](const RefInputs& in) {
                HostTensor out = HostTensor::filled(in[1].shape, in[0].dtype);
                for (int64_t r = 0; r < in[1].shape[0]; ++r) {
                  for (int64_t c = 0; c < in[1].shape[1]; ++c) {
                    auto k = static_cast<int64_t>(in[1].at({r, c}));
                    if (k < 0) k += 5;
                    out.at({r, c}) = in[0].at({r, k});
                  }
                }
                return out;
              }).range(1, -5, 4),
      numeric("gather_elements", "x: Tensor[(n, 4), int32], i: Tensor[(m, 4), int32]", "gather_elements(x, i, axis=0)",
              {{"n", {3, 7}}, {"m", {2, 9}}},
              [](const RefInputs& in) {
                HostTensor out = HostTensor::filled(in[1].shape, in[0].dtype);
                for (int64_t r = 0; r < in[1].shape[0]; ++r) {
                  for (int64_t c = 0; c < 4; ++c) {
                    auto k = static_cast<int64_t>(in[1].at({r, c}));
                    k = std::clamp<int64_t>(k, 0, in[0].shape[0] - 1);  // 0..2 are in range for both n
                    out.at({r, c}) = in[0].at({k, c});
                  }
                }
                return out;
              }).range(1, 0, 2),
      // scatter_nd: data with the rows (k = 1) or elements (k = 2) at indices' coordinates replaced
      // or combined, entry after entry.
      deduce("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 1), int64], u: Tensor[(m, 4), float32]",
             "scatter_nd(d, i, u)", "Tensor[(n, 4), float32]"),
      deduce("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 2), int64], u: Tensor[(m,), float32]",
             "scatter_nd(d, i, u, reduction=\"add\")", "Tensor[(n, 4), float32]"),
      deduce("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 1), int64], u: Tensor[(m, 3), float32]",
             "scatter_nd(d, i, u)",
             error("scatter_nd: argument 2 (updates) is Tensor[(m, 3), float32], expected the dims (m, 4)")),
      deduce("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 3), int64], u: Tensor[(m,), float32]",
             "scatter_nd(d, i, u)", error("scatter_nd: the last dim of argument 1 (indices) Tensor[(m, 3), int64] must be a constant from 1 to data's rank 2")),
      numeric("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 1), int64], u: Tensor[(m, 4), float32]",
              "scatter_nd(d, i, u)", {{"n", {3, 6}}, {"m", {1, 5}}},
              [](const RefInputs& in) {
                HostTensor out = in[0];
                for (int64_t e = 0; e < in[1].shape[0]; ++e) {
                  auto k = static_cast<int64_t>(in[1].at({e, 0}));
                  if (k < 0) k += in[0].shape[0];
                  for (int64_t c = 0; c < 4; ++c) out.at({k, c}) = in[2].at({e, c});
                }
                return out;
              }).range(1, -3, 2),
      numeric("scatter_nd", "d: Tensor[(n, 4), float32], i: Tensor[(m, 2), int64], u: Tensor[(m,), float32]",
              "scatter_nd(d, i, u, reduction=\"add\")", {{"n", {3, 6}}, {"m", {4, 9}}},
              [](const RefInputs& in) {
                HostTensor out = in[0];
                for (int64_t e = 0; e < in[1].shape[0]; ++e) {
                  const auto r = static_cast<int64_t>(in[1].at({e, 0})), c = static_cast<int64_t>(in[1].at({e, 1}));
                  out.at({r, c}) += in[2].at({e});
                }
                return out;
              }).range(1, 0, 2),

      // pad.
      deduce("pad", "x: Tensor[(n, 3), float32]", "pad(x, pad_width=[1, 2, 0, 1])", "Tensor[(n + 3, 4), float32]"),
      deduce("pad", "x: Tensor[ndim=2, float32]", "pad(x, pad_width=[1, 2, 0, 1])", "Tensor[ndim=2, float32]"),
      deduce("pad", "x: Tensor[(n, 3), float32]", "pad(x, pad_width=[1, 2])",
             error("pad: pad_width [1, 2] has 2 entries, expected 4")),
      deduce("pad", "x: Tensor[(n,), float32]", "pad(x, pad_width=[1, -2])",
             error("pad: pad_width [1, -2] has -2, expected widths >= 0")),
      numeric("pad", "x: Tensor[(n, 3), float32]", "pad(x, pad_width=[1, 2, 0, 3], pad_value=1.5)",
              [](const RefInputs& in) { return pad(in[0], {1, 2, 0, 3}, 1.5); }),
      numeric("pad", "x: Tensor[(2, n), int32]", "pad(x, pad_width=[0, 0, 4, 0])",
              [](const RefInputs& in) { return pad(in[0], {0, 0, 4, 0}, 0); }),

      // one_hot.
      deduce("one_hot", "i: Tensor[(n,), int32], on: Prim[float32], off: Prim[float32]", "one_hot(i, on, off, depth=5)",
             "Tensor[(n, 5), float32]"),
      deduce("one_hot", "i: Tensor[(b, n), int64]", "one_hot(i, prim(1), prim(0), depth=3, axis=0)",
             "Tensor[(3, b, n), int64]"),
      deduce("one_hot", "i: Tensor[ndim=2, int64]", "one_hot(i, prim(1), prim(0), depth=3)", "Tensor[ndim=3, int64]"),
      deduce("one_hot", "i: Tensor[(n,), int32], on: Prim[float32], off: Prim[float16]", "one_hot(i, on, off, depth=5)",
             error("one_hot: on_value Prim[float32] and off_value Prim[float16] differ in dtype")),
      deduce("one_hot", "i: Tensor[(n,), int32]", "one_hot(i, prim(1), prim(0), depth=5, axis=2)",
             error("one_hot: axis 2 is out of range for rank 2")),
      deduce("one_hot", "i: Tensor[(n,), float32]", "one_hot(i, prim(1), prim(0), depth=5)",
             error("one_hot: argument 0 (indices): expected")),
      numeric("one_hot", "i: Tensor[(n,), int32], on: Prim[float32], off: Prim[float32]", "one_hot(i, on, off, depth=5)",
              [](const RefInputs& in) { return one_hot(in[0], 5, -1, in[1].values[0], in[2].values[0], kF32); })
          .range(0, -1, 6),
      numeric("one_hot", "i: Tensor[(2, n), int64]", "one_hot(i, prim(7), prim(-1), depth=4, axis=1)",
              [](const RefInputs& in) { return one_hot(in[0], 4, 1, 7, -1, DataType::int64()); })
          .range(0, 0, 4),
  };
}

}  // namespace relax::ops_test
