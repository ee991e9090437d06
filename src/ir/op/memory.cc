// Explicit allocation: alloc_storage, alloc_tensor, kill_storage,
// kill_tensor, view (see relax/ir/op/memory.h; the explicit calls
// call_tir_dps and call_library_dps are in call.cc with the other
// cross-level calls).
//
// A storage is annotated Object: the graph level knows nothing of it but that
// it is a value; what a tensor made from it may be is checked where it can be
// proven (a negative or misaligned constant offset, a negative size) and the
// rest at run time (offset + bytes <= size, by the VM, naming the numbers).
//
// Purity. alloc_storage, alloc_tensor and view are pure (they make a value and
// touch nothing else), but each alloc is a distinct object: cse never merges
// two (purity.h: makes_fresh_object), and dce keeps an alloc while anything,
// a kill included, uses it. The kills are effects.
#include "ir/op/deduce_rules.h"
#include "ir/op/manipulate_util.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/op/memory.h"

namespace relax {
namespace detail {
namespace {

struct AllocStorageAttrs {
  int64_t alignment = 64;
  DataType dtype = DataType{DataType::Code::kUInt, 8, 1};
  template <typename V>
  void fields(V& v) {
    v("alignment", alignment);
    v("dtype", dtype);
  }
};

struct AllocTensorAttrs {
  DataType dtype;
  bool zero_init = false;
  template <typename V>
  void fields(V& v) {
    v.required("dtype", dtype);
    v("zero_init", zero_init);
  }
};

int64_t element_bytes(DataType dtype) { return (int64_t{dtype.bits} * dtype.lanes + 7) / 8; }

// The byte count of an int Prim or a one-dim Shape argument, or an error.
absl::StatusOr<SymExpr> byte_count(const CallNode& call, size_t index, const std::string& op,
                                   const std::string& role) {
  const StructInfo& sinfo = call.args[index].struct_info();
  SymExpr value;
  bool ok = false;
  if (const auto* prim = sinfo.as<PrimStructInfoNode>()) {
    ok = prim->dtype.is_int();
    value = prim->value;
  } else if (const auto* shape = sinfo.as<ShapeStructInfoNode>()) {
    ok = shape->ndim == 1 || (shape->values && shape->values->size() == 1);
    if (shape->values && shape->values->size() == 1) value = (*shape->values)[0];
  }
  if (!ok) {
    return op_error(op, arg_label(index, role) +
                            ": expected an integer Prim or a Shape of one dim, got " +
                            sinfo.to_string());
  }
  return value;  // undefined when not known at compile time
}

absl::StatusOr<StructInfo> deduce_alloc_storage(const CallNode& call, const AllocStorageAttrs& attrs,
                                                DeduceContext& ctx) {
  const std::string op = "alloc_storage";
  absl::StatusOr<SymExpr> size = byte_count(call, 0, op, "size");
  if (!size.ok()) return size.status();
  if (size->defined() && ctx.analyzer.prove(*size < 0)) {
    return op_error(op, arg_label(0, "size") + ": " + quoted(*size) +
                            " bytes is negative, expected a size >= 0");
  }
  if (attrs.alignment <= 0 || (attrs.alignment & (attrs.alignment - 1)) != 0) {
    return op_error(op, "alignment " + std::to_string(attrs.alignment) +
                            " is not a power of two");
  }
  return object_sinfo();
}

absl::StatusOr<StructInfo> deduce_alloc_tensor(const CallNode& call, const AllocTensorAttrs& attrs,
                                               DeduceContext& ctx) {
  const std::string op = "alloc_tensor";
  const StructInfo& storage = call.args[0].struct_info();
  if (storage.kind() != StructInfoKind::kObject) {
    return op_error(op, arg_label(0, "storage") +
                            ": expected a storage (Object, from alloc_storage), got " +
                            storage.to_string());
  }
  const StructInfo& offset_sinfo = call.args[1].struct_info();
  const auto* offset = offset_sinfo.as<PrimStructInfoNode>();
  if (!offset->dtype.is_int()) {
    return op_error(op, arg_label(1, "offset") + ": expected an integer Prim, got " +
                            offset_sinfo.to_string());
  }
  if (offset->value.defined()) {
    const SymExpr& at = offset->value;
    if (ctx.analyzer.prove(at < 0)) {
      return op_error(op, arg_label(1, "offset") + ": " + quoted(at) +
                              " is out of range: a byte offset is >= 0");
    }
    // An element must start on a multiple of its size (what the storage's
    // alignment guarantees for offset 0).
    const int64_t unit = element_bytes(attrs.dtype);
    std::optional<int64_t> c = ctx.analyzer.simplify(floormod(at, unit)).as_const();
    if (unit > 1 && c && *c != 0) {
      return op_error(op, arg_label(1, "offset") + ": " + quoted(at) + " is not a multiple of " +
                              std::to_string(unit) + ", the byte size of " +
                              attrs.dtype.to_string());
    }
  }
  const auto* shape = call.args[2].struct_info().as<ShapeStructInfoNode>();
  if (!shape->values) return tensor_sinfo_rank(shape->ndim, attrs.dtype);
  const std::vector<SymExpr>& dims = *shape->values;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (ctx.analyzer.prove(dims[i] < 0)) {
      return op_error(op, "shape " + dims_string(dims) + ": dim " + std::to_string(i) + " is " +
                              quoted(dims[i]) + ", expected a size >= 0");
    }
  }
  return tensor_sinfo(dims, attrs.dtype);
}

absl::StatusOr<StructInfo> deduce_kill_storage(const CallNode& call, DeduceContext&) {
  const StructInfo& storage = call.args[0].struct_info();
  if (storage.kind() != StructInfoKind::kObject) {
    return op_error("kill_storage", arg_label(0, "storage") +
                                        ": expected a storage (Object, from alloc_storage), got " +
                                        storage.to_string());
  }
  return tuple_sinfo({});
}

absl::StatusOr<StructInfo> deduce_kill_tensor(const CallNode&, DeduceContext&) {
  return tuple_sinfo({});
}

absl::StatusOr<StructInfo> deduce_view(const CallNode& call, DeduceContext& ctx) {
  const std::string op = "view";
  const TensorStructInfoNode& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  const auto* shape = call.args[1].struct_info().as<ShapeStructInfoNode>();
  if (!shape->values) return tensor_sinfo_rank(shape->ndim, x.dtype, x.device);
  const std::vector<SymExpr>& dims = *shape->values;
  if (absl::Status s = check_defined(op, "shape " + dims_string(dims), dims, ctx); !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (ctx.analyzer.prove(dims[i] < 0)) {
      return op_error(op, "shape " + dims_string(dims) + ": dim " + std::to_string(i) + " is " +
                              quoted(dims[i]) + ", expected a size >= 0");
    }
  }
  if (!x.shape) {
    return op_error(op, arg_label(0, "x") + " " + call.args[0].struct_info().to_string() +
                            ": the element count must be known to view it without a copy");
  }
  SymExpr old_count = product(*x.shape, ctx.analyzer);
  SymExpr new_count = product(dims, ctx.analyzer);
  if (!ctx.analyzer.prove_equal(old_count, new_count)) {
    return op_error(op, "element counts are not provably equal: " + arg_label(0, "x") + " " +
                            call.args[0].struct_info().to_string() + " has " +
                            quoted(old_count) + ", shape " + dims_string(dims) + " has " +
                            quoted(new_count));
  }
  return tensor_sinfo(dims, x.dtype, x.device);
}

}  // namespace

void register_memory_ops(OpTable& table) {
  table.def<AllocStorageAttrs>("alloc_storage",
                               "an uninitialised block of size bytes (Object), aligned to alignment")
      .arg("size", ArgKind::kAny)
      .deduce(deduce_alloc_storage);
  table.def<AllocTensorAttrs>("alloc_tensor",
                              "a tensor of shape and dtype at byte offset of storage (its memory)")
      .arg("storage", ArgKind::kAny)
      .arg("offset", ArgKind::kPrim)
      .arg("shape", ArgKind::kShape)
      .deduce(deduce_alloc_tensor);
  table.def("kill_storage", "ends the storage's life; its memory is freed once no tensor of it lives")
      .arg("storage", ArgKind::kAny)
      .impure()
      .deduce(rules::without_attrs(deduce_kill_storage));
  table.def("kill_tensor", "ends the tensor's life (its register is released)")
      .arg("tensor", ArgKind::kTensor)
      .impure()
      .deduce(rules::without_attrs(deduce_kill_tensor));
  table.def("view", "x with the dims of shape, sharing x's memory (reshape without a copy)")
      .arg("x", ArgKind::kTensor)
      .arg("shape", ArgKind::kShape)
      .deduce(rules::without_attrs(deduce_view));
}

}  // namespace detail

namespace op {

Expr alloc_storage(Expr size, int64_t alignment, DataType dtype) {
  return make_call(make_op_or_die("alloc_storage"), {std::move(size)},
                   detail::encode_attrs(detail::AllocStorageAttrs{alignment, dtype}));
}

Expr alloc_tensor(Expr storage, Expr offset, Expr shape, DataType dtype, bool zero_init) {
  return make_call(make_op_or_die("alloc_tensor"),
                   {std::move(storage), std::move(offset), std::move(shape)},
                   detail::encode_attrs(detail::AllocTensorAttrs{dtype, zero_init}));
}

Expr kill_storage(Expr storage) {
  return make_call(make_op_or_die("kill_storage"), {std::move(storage)});
}

Expr kill_tensor(Expr tensor) { return make_call(make_op_or_die("kill_tensor"), {std::move(tensor)}); }

Expr view(Expr x, Expr shape) {
  return make_call(make_op_or_die("view"), {std::move(x), std::move(shape)});
}

}  // namespace op
}  // namespace relax
