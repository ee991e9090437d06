// relax::Buffer: an n-dimensional array as loop-level code sees it.
//
// A buffer has a name, an element dtype, a symbolic shape, optional strides
// (empty: compact row-major) and a storage scope. Loop-level loads and stores
// name a buffer; two Buffer handles are the same buffer only when they share
// a node (like SymVar, identity makes a buffer, not its name).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "relax/shape/sym_expr.h"
#include "relax/support/data_type.h"

namespace relax {

/// Where a buffer's storage lives.
enum class BufferScope : uint8_t {
  kGlobal,     ///< a kernel parameter or graph-level tensor
  kLocal,      ///< private to the kernel invocation (registers / stack)
  kWorkspace,  ///< scratch storage the caller may provide (liftable into the memory plan)
};

std::string_view buffer_scope_name(BufferScope scope);

class BufferNode {
 public:
  BufferNode(std::string name, DataType dtype, std::vector<SymExpr> shape,
             std::vector<SymExpr> strides, BufferScope scope)
      : name(std::move(name)), dtype(dtype), shape(std::move(shape)), strides(std::move(strides)), scope(scope) {}
  std::string name;
  DataType dtype;
  std::vector<SymExpr> shape;
  std::vector<SymExpr> strides;  ///< empty: compact row-major
  BufferScope scope;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string name, DataType dtype, std::vector<SymExpr> shape,
         std::vector<SymExpr> strides = {}, BufferScope scope = BufferScope::kGlobal)
      : node_(std::make_shared<const BufferNode>(std::move(name), dtype, std::move(shape),
                                                 std::move(strides), scope)) {}

  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  bool same_as(const Buffer& other) const { return node_ == other.node_; }

  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  const std::vector<SymExpr>& shape() const { return node_->shape; }
  size_t ndim() const { return node_->shape.size(); }

 private:
  std::shared_ptr<const BufferNode> node_;
};

}  // namespace relax
