// relax::Buffer: an n-dimensional array as loop-level code sees it.
//
// A buffer has a name, an element dtype, a symbolic shape, optional strides
// (empty: compact row-major) and a storage scope. Loop-level loads and stores
// name a buffer; two Buffer handles are the same buffer only when they share
// a node (like SymVar, identity makes a buffer, not its name). The dtype is a
// scalar one (lanes == 1).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
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
      : name(std::move(name)), dtype(dtype), shape(std::move(shape)), strides(std::move(strides)), scope(scope),
        id(next_id()) {}
  std::string name;
  DataType dtype;
  std::vector<SymExpr> shape;
  std::vector<SymExpr> strides;  ///< empty: compact row-major
  BufferScope scope;
  /// Creation-ordered, unique within the process; orders buffers that share a
  /// name (structural_compare of loads), like SymVar::id.
  uint64_t id;

 private:
  static uint64_t next_id() {
    static std::atomic<uint64_t> counter{1};
    return counter.fetch_add(1, std::memory_order_relaxed);
  }
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string name, DataType dtype, std::vector<SymExpr> shape,
         std::vector<SymExpr> strides = {}, BufferScope scope = BufferScope::kGlobal)
      : node_(std::make_shared<const BufferNode>(std::move(name), dtype, std::move(shape),
                                                 std::move(strides), scope)) {}

  /// Views an existing node (how a load hands back its buffer).
  explicit Buffer(std::shared_ptr<const BufferNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  /// The shared node, for holders that keep the buffer alive (a load node).
  const std::shared_ptr<const BufferNode>& node() const { return node_; }
  const BufferNode* operator->() const { return node_.get(); }
  bool same_as(const Buffer& other) const { return node_ == other.node_; }

  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  const std::vector<SymExpr>& shape() const { return node_->shape; }
  size_t ndim() const { return node_->shape.size(); }

 private:
  std::shared_ptr<const BufferNode> node_;
};

/// What the text parser resolves names through (SymExpr::parse(text, context)):
/// `vars` maps names to variables -- names found there reuse those variables,
/// new names get fresh int64 variables that are added on a successful parse --
/// and `buffers` maps the names that loads `A[i, j]` may use to buffers.
struct ParseContext {
  absl::flat_hash_map<std::string, SymVar> vars;
  absl::flat_hash_map<std::string, Buffer> buffers;
};

}  // namespace relax
