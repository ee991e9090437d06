// Writing an IRModule as JSON (relax/ir/json.h).
//
// One walk over the module fills the node table in post-order: a node's
// children are written (or found already written) before the node itself, so
// every reference points backwards. Nodes are remembered by address, which
// is what makes a shared node one entry; the module keeps every node alive
// while the walk runs, so no address is reused.
//
// The walk keeps its own stack instead of recursing, so IR of any depth
// writes (a sum of thousands of terms is a chain that deep). The nodes a node
// refers to come from the field description that structural equality and
// hashing share (Children below); entry() builds its table entry, in the
// format's own keys, once they all have indices. (The reader, which builds
// nodes from those keys and checks them, is written per node kind.)
//
// Undefined children are written as null where the IR allows them (a missing
// annotation, the else of an IfThenElse, a block's init, a Prim value);
// anywhere else an undefined child is a broken invariant and aborts.
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "ir/json/json_schema.h"
#include "ir/structural/structural_fields.h"
#include "nlohmann/json.hpp"
#include "relax/ir/functor.h"
#include "relax/ir/json.h"
#include "relax/support/check.h"

namespace relax {
namespace {

using Json = nlohmann::ordered_json;
using namespace json_detail;  // NOLINT(google-build-using-namespace)
using detail::BindMode;
using detail::reduce_attr_value;
using detail::reduce_buffer_def;
using detail::reduce_fields;
using detail::reduce_item;

std::string base64(const void* data, size_t size) {
  return absl::Base64Escape(absl::string_view(static_cast<const char*>(data), size));
}

// A string field: the string itself, or {"base64": ...} when it is not UTF-8.
Json text(const std::string& s) {
  if (is_valid_utf8(s)) return s;
  return Json{{"base64", base64(s.data(), s.size())}};
}

Json float_value(double v) {
  FloatText f = float_json(v);
  if (f.is_number) return f.number;
  return f.text;
}

// The bytes of a host tensor in row-major order, compact even when it is strided.
std::string tensor_bytes(const runtime::Tensor& t) {
  if (t.numel() == 0) return "";
  const size_t elem = t.element_bytes();
  const auto* base = static_cast<const char*>(t.data());
  if (t.is_contiguous()) return std::string(base, t.nbytes());
  std::string out;
  out.reserve(t.nbytes());
  const int ndim = t.ndim();
  std::vector<int64_t> index(static_cast<size_t>(ndim), 0);
  for (int64_t n = 0; n < t.numel(); ++n) {
    int64_t offset = 0;
    for (int d = 0; d < ndim; ++d) offset += index[d] * t.strides()[d];
    out.append(base + offset * static_cast<int64_t>(elem), elem);
    for (int d = ndim - 1; d >= 0; --d) {
      if (++index[d] < t.shape()[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// A node of any family, as the walk holds it.
using AnyNode = std::variant<SymExpr, Buffer, StructInfo, Expr, Stmt>;

const void* key_of(const AnyNode& n) {
  return std::visit([](const auto& h) -> const void* { return h.get(); }, n);
}

// ---------------------------------------------------------------------------
// children(): the nodes each node refers to, in the order of the fields that structural
// equality and hashing walk. Children is a reducer of the one field description of every
// node (ir/structural/structural_fields.h) that collects each child where those compare or
// hash it, and descends no further: a node kind or field added there is written here.

class Children {
 public:
  explicit Children(std::vector<AnyNode>& out) : out_(out) {}

  void of(const AnyNode& node) {
    std::visit([this](const auto& h) { of_node(h); }, node);
  }

  // ---- The reducer of structural_fields.h (`b` is `a`): children collected. ----
  bool expr(const char*, const Expr& e, const Expr&) { return add(e); }
  bool stmt(const char*, const Stmt& s, const Stmt&) { return add(s); }
  bool sinfo(const char*, const StructInfo& s, const StructInfo&, BindMode) { return add(s); }
  bool sym(const char*, const SymExpr& e, const SymExpr&, BindMode) { return add(e); }
  bool dim(const SymExpr& e, const SymExpr&, BindMode) { return add(e); }
  template <typename T, typename Fn>
  bool list(const char*, const std::vector<T>& a, const std::vector<T>&, const char*, Fn&& each) {
    for (const T& x : a) each(x, x);
    return true;
  }
  template <typename T>
  bool list(const char* field, const std::vector<T>& a, const std::vector<T>& b, const char* noun) {
    return list(field, a, b, noun, [this](const T& x, const T& y) { return reduce_item(*this, x, y); });
  }
  bool attrs(const char*, const Attrs& a, const Attrs&) {
    for (const auto& entry : a) reduce_attr_value(*this, entry.second, entry.second);
    return true;
  }
  template <typename T, typename... Message>
  bool value(const char*, const T&, const T&, Message&&...) {
    return true;
  }
  template <typename T>
  bool label(const T&, const T&) {
    return true;
  }
  bool label_buffer(const BufferNode*, const BufferNode*) { return true; }  // a load's: of_node
  bool constant(const ConstantNode&, const ConstantNode&) { return true; }
  template <typename List>
  bool define_together(const List&, const List&) {
    return true;
  }
  bool define_var(const char*, const Var& v, const Var&, BindMode) { return add(v); }
  bool define_sym(const char*, const SymVar& v, const SymVar&) { return add(SymExpr(v)); }
  bool define_buffer(const char*, const Buffer& b, const Buffer&) { return add(b); }
  bool bind_var(const Var&, const Var&) { return true; }
  bool bind_buffer(const Buffer&, const Buffer&) { return true; }
  bool use_var(const VarNode&, const VarNode&) { return true; }
  bool use_sym_var(const SymExprNode&, const SymExprNode&, BindMode) { return true; }
  bool use_buffer(const char*, const Buffer& b, const Buffer&) { return add(b); }

 private:
  // Undefined children are left out; the entries write null where the IR allows one and
  // abort where it does not (Writer::ref).
  template <typename T>
  bool add(const T& child) {
    if (child.defined()) out_.emplace_back(child);
    return true;
  }

  void of_node(const SymExpr& e) {
    // A load's buffer comes first (the description labels it by its node).
    if (e.kind() == SymKind::kBufferLoad) add(e->buffer());
    reduce_fields(*this, *e, *e, BindMode::kUse);
  }
  void of_node(const Buffer& b) { reduce_buffer_def(*this, b, b); }
  void of_node(const StructInfo& s) {
    dispatch_struct_info(s, [this](const auto& n) { return reduce_fields(*this, n, n, BindMode::kUse); });
  }
  void of_node(const Expr& e) {
    if (e.as<OpNode>()) return;  // written by name only
    if (const auto* f = e.as<PrimFuncNode>()) {
      for (const PrimParam& p : f->params) {
        RELAX_CHECK(p.buffer.has_value() != p.scalar.has_value())
            << "to_json: a PrimFunc parameter must be a buffer or a scalar";
      }
    }
    dispatch_expr(e, [this](const auto& n) { return reduce_fields(*this, n, n); });
    add(e.struct_info());
  }
  void of_node(const Stmt& s) {
    dispatch_stmt(s, [this](const auto& n) { return reduce_fields(*this, n, n); });
  }

  std::vector<AnyNode>& out_;
};

// ---------------------------------------------------------------------------
// The walk and entry(): a node's table entry, its children written already.

class Writer {
 public:
  Json document(const IRModule& mod) {
    Json functions = Json::array();
    for (const auto& [name, func] : mod.functions()) {
      RELAX_CHECK(func.defined()) << "to_json: module function `" << name << "` is undefined";
      functions.push_back(Json{{"name", text(name)}, {"func", write(func)}});
    }
    for (const auto& [name, value] : mod.attrs()) {
      if (const auto* syms = std::get_if<std::vector<SymExpr>>(&value)) {
        for (const SymExpr& e : *syms) {
          RELAX_CHECK(e.defined()) << "to_json: an undefined SymExpr in module attribute " << name;
          write(e);
        }
      }
    }
    Json doc = Json::object();
    doc["format"] = kFormat;
    doc["version"] = kIRJsonVersion;
    doc["functions"] = std::move(functions);
    doc["attrs"] = attrs(mod.attrs());
    doc["nodes"] = std::move(nodes_);
    return doc;
  }

 private:
  // -------------------------------------------------------------------------
  // The table.

  // Writes `root` and every node it refers to that is not in the table yet,
  // children first; returns the index of `root`.
  int64_t write(const AnyNode& root) {
    struct Pending {
      AnyNode node;
      bool ready;  ///< its children are on the stack above it (or written)
    };
    std::vector<Pending> stack = {{root, false}};
    std::vector<AnyNode> children;
    while (!stack.empty()) {
      if (index_.contains(key_of(stack.back().node))) {
        stack.pop_back();
      } else if (!stack.back().ready) {
        stack.back().ready = true;
        children.clear();
        Children(children).of(stack.back().node);
        // Reversed, so that the first child is written first.
        for (size_t i = children.size(); i-- > 0;) {
          if (!index_.contains(key_of(children[i]))) stack.push_back({std::move(children[i]), false});
        }
      } else {
        AnyNode node = std::move(stack.back().node);
        stack.pop_back();
        Json e = std::visit([this](const auto& h) { return entry(h); }, node);
        index_.emplace(key_of(node), static_cast<int64_t>(nodes_.size()));
        nodes_.push_back(std::move(e));
      }
    }
    return ref(key_of(root));
  }

  // The index of a node written already.
  int64_t ref(const void* key) const {
    auto it = index_.find(key);
    RELAX_CHECK(it != index_.end()) << "to_json: a node was not written before its user";
    return it->second;
  }
  // A required child: undefined only where an invariant of the IR is broken.
  template <typename T>
  int64_t required(const T& node, const char* family) const {
    RELAX_CHECK(node.defined()) << "to_json: an undefined " << family << " where one is required";
    return ref(static_cast<const void*>(node.get()));
  }
  int64_t ref(const SymExpr& e) const { return required(e, "SymExpr"); }
  int64_t ref(const Buffer& b) const { return required(b, "Buffer"); }
  int64_t ref(const StructInfo& s) const { return required(s, "StructInfo"); }
  int64_t ref(const Expr& e) const { return required(e, "Expr"); }
  int64_t ref(const Stmt& s) const { return required(s, "Stmt"); }

  template <typename T>
  Json refs(const std::vector<T>& list) const {
    Json out = Json::array();
    for (const T& x : list) out.push_back(ref(x));
    return out;
  }
  template <typename T>
  Json opt_ref(const T& x) const {
    return x.defined() ? Json(ref(x)) : Json(nullptr);
  }

  // -------------------------------------------------------------------------
  // Entries.

  Json entry(const SymExpr& e) const {
    const SymExprNode& n = *e;
    Json node = Json::object();
    node["kind"] = sym_kind_json(n.kind());
    switch (n.kind()) {
      case SymKind::kIntImm:
        node["dtype"] = dtype_json(n.dtype());
        node["value"] = n.value();
        return node;
      case SymKind::kFloatImm:
        node["dtype"] = dtype_json(n.dtype());
        node["value"] = float_value(n.float_value());
        return node;
      case SymKind::kVar:
        node["dtype"] = dtype_json(n.dtype());
        node["name"] = text(n.name());
        return node;
      case SymKind::kCast:
        node["dtype"] = dtype_json(n.dtype());
        break;
      case SymKind::kCall:
        node["intrinsic"] = intrinsic_json(n.intrinsic());
        break;
      case SymKind::kBufferLoad:
        node["buffer"] = ref(n.buffer());
        break;
      case SymKind::kRamp:
      case SymKind::kBroadcast:
        node["lanes"] = n.dtype().lanes;
        break;
      default:
        break;
    }
    Json operands = Json::array();
    for (const SymExpr& op : n.operands()) operands.push_back(ref(op));
    node["operands"] = std::move(operands);
    return node;
  }

  Json entry(const Buffer& b) const {
    Json node = Json::object();
    node["kind"] = "buffer";
    node["name"] = text(b->name);
    node["dtype"] = dtype_json(b->dtype);
    node["shape"] = refs(b->shape);
    node["strides"] = refs(b->strides);
    node["scope"] = scope_json(b->scope);
    return node;
  }

  Json entry(const StructInfo& s) const {
    Json node = Json::object();
    switch (s.kind()) {
      case StructInfoKind::kObject:
        node["kind"] = "sinfo.object";
        break;
      case StructInfoKind::kPrim: {
        const auto* p = s.as<PrimStructInfoNode>();
        node["kind"] = "sinfo.prim";
        node["dtype"] = dtype_json(p->dtype);
        node["value"] = opt_ref(p->value);
        break;
      }
      case StructInfoKind::kShape: {
        const auto* p = s.as<ShapeStructInfoNode>();
        node["kind"] = "sinfo.shape";
        node["ndim"] = p->ndim;
        node["values"] = p->values ? refs(*p->values) : Json(nullptr);
        break;
      }
      case StructInfoKind::kTensor: {
        const auto* p = s.as<TensorStructInfoNode>();
        node["kind"] = "sinfo.tensor";
        node["ndim"] = p->ndim;
        node["shape"] = p->shape ? refs(*p->shape) : Json(nullptr);
        node["dtype"] = p->dtype ? Json(dtype_json(*p->dtype)) : Json(nullptr);
        if (p->device != Device()) {
          node["device"] = Json{{"type", device_type_json(p->device.type)},
                                {"index", p->device.index}};
        }
        break;
      }
      case StructInfoKind::kTuple:
        node["kind"] = "sinfo.tuple";
        node["fields"] = refs(s.as<TupleStructInfoNode>()->fields);
        break;
      case StructInfoKind::kFunc: {
        const auto* p = s.as<FuncStructInfoNode>();
        node["kind"] = "sinfo.func";
        node["params"] = p->params ? refs(*p->params) : Json(nullptr);
        node["ret"] = ref(p->ret);
        node["pure"] = p->pure;
        break;
      }
    }
    return node;
  }

  Json attrs(const Attrs& a) const {
    Json out = Json::object();
    for (const auto& [name, value] : a) {
      // Object keys must be UTF-8 like any string; attribute names are identifiers.
      RELAX_CHECK(is_valid_utf8(name)) << "to_json: an attribute name is not UTF-8";
      out[name] = attr(value);
    }
    return out;
  }

  Json attr(const AttrValue& value) const {
    return std::visit(
        [this](const auto& v) -> Json {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            return Json{{"int", v}};
          } else if constexpr (std::is_same_v<T, double>) {
            return Json{{"float", float_value(v)}};
          } else if constexpr (std::is_same_v<T, bool>) {
            return Json{{"bool", v}};
          } else if constexpr (std::is_same_v<T, std::string>) {
            return Json{{"str", text(v)}};
          } else if constexpr (std::is_same_v<T, DataType>) {
            return Json{{"dtype", dtype_json(v)}};
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            return Json{{"ints", v}};
          } else {
            static_assert(std::is_same_v<T, std::vector<SymExpr>>);
            return Json{{"syms", refs(v)}};
          }
        },
        value);
  }

  Json entry(const Expr& e) const {
    Json node = Json::object();
    if (const auto* op = e.as<OpNode>()) {
      node["kind"] = "expr.op";
      node["name"] = text(op->name);
      return node;
    }
    switch (e.kind()) {
      case ExprKind::kVar:
      case ExprKind::kDataflowVar:
        node["kind"] = e.kind() == ExprKind::kVar ? "expr.var" : "expr.dataflow_var";
        node["name"] = text(e.as<VarNode>()->name_hint);
        break;
      case ExprKind::kGlobalVar:
        node["kind"] = "expr.global_var";
        node["name"] = text(e.as<GlobalVarNode>()->name);
        break;
      case ExprKind::kConstant: {
        const runtime::Tensor& t = e.as<ConstantNode>()->data;
        RELAX_CHECK(t.defined()) << "to_json: a Constant without a tensor";
        RELAX_CHECK(t.device().type == Device::Type::kCPU)
            << "to_json: a Constant on " << t.device().to_string()
            << " (only host tensors can be written)";
        const std::string bytes = tensor_bytes(t);
        node["kind"] = "expr.constant";
        node["dtype"] = dtype_json(t.dtype());
        node["shape"] = t.shape();
        node["data"] = base64(bytes.data(), bytes.size());
        break;
      }
      case ExprKind::kTuple:
        node["kind"] = "expr.tuple";
        node["fields"] = refs(e.as<TupleNode>()->fields);
        break;
      case ExprKind::kTupleGetItem: {
        const auto* n = e.as<TupleGetItemNode>();
        node["kind"] = "expr.tuple_get_item";
        node["tuple"] = ref(n->tuple);
        node["index"] = n->index;
        break;
      }
      case ExprKind::kCall: {
        const auto* n = e.as<CallNode>();
        node["kind"] = "expr.call";
        node["callee"] = ref(n->callee);
        node["args"] = refs(n->args);
        node["attrs"] = attrs(n->attrs);
        node["sinfo_args"] = refs(n->sinfo_args);
        break;
      }
      case ExprKind::kShapeExpr:
        node["kind"] = "expr.shape";
        node["values"] = refs(e.as<ShapeExprNode>()->values);
        break;
      case ExprKind::kPrimValue:
        node["kind"] = "expr.prim_value";
        node["value"] = ref(e.as<PrimValueNode>()->value);
        break;
      case ExprKind::kStringImm:
        node["kind"] = "expr.string";
        node["value"] = text(e.as<StringImmNode>()->value);
        break;
      case ExprKind::kIf: {
        const auto* n = e.as<IfNode>();
        node["kind"] = "expr.if";
        node["cond"] = ref(n->cond);
        node["then"] = ref(n->then_branch);
        node["else"] = ref(n->else_branch);
        break;
      }
      case ExprKind::kSeqExpr: {
        const auto* n = e.as<SeqExprNode>();
        node["kind"] = "expr.seq";
        node["blocks"] = blocks(n->blocks);
        node["body"] = ref(n->body);
        break;
      }
      case ExprKind::kFunction: {
        const auto* n = e.as<FunctionNode>();
        Json params = Json::array();
        for (const Var& p : n->params) params.push_back(ref(p));
        Json bounds = Json::array();
        for (const SymBound& b : n->upper_bounds) {
          bounds.push_back(Json{{"var", ref(b.var)}, {"upper", b.upper}});
        }
        node["kind"] = "expr.function";
        node["params"] = std::move(params);
        node["body"] = ref(n->body);
        node["ret"] = ref(n->ret);
        node["pure"] = n->pure;
        node["upper_bounds"] = std::move(bounds);
        node["attrs"] = attrs(n->attrs);
        break;
      }
      case ExprKind::kExternFunc:
        node["kind"] = "expr.extern_func";
        node["symbol"] = text(e.as<ExternFuncNode>()->symbol);
        break;
      case ExprKind::kPrimFunc: {
        const auto* n = e.as<PrimFuncNode>();
        Json params = Json::array();
        for (const PrimParam& p : n->params) {
          params.push_back(p.buffer ? Json{{"buffer", ref(*p.buffer)}}
                                    : Json{{"scalar", ref(*p.scalar)}});
        }
        node["kind"] = "expr.prim_func";
        node["params"] = std::move(params);
        node["body"] = ref(n->body);
        node["attrs"] = attrs(n->attrs);
        break;
      }
      case ExprKind::kOp:
        break;  // handled above
    }
    node["sinfo"] = opt_ref(e.struct_info());
    return node;
  }

  Json blocks(const std::vector<BindingBlock>& list) const {
    Json out = Json::array();
    for (const BindingBlock& block : list) {
      Json bindings = Json::array();
      for (const Binding& b : block.bindings) {
        Json binding = Json::object();
        binding["var"] = ref(b.var);
        binding["value"] = ref(b.value);
        if (b.is_match_cast) binding["match_cast"] = opt_ref(b.cast_sinfo);
        bindings.push_back(std::move(binding));
      }
      out.push_back(Json{{"dataflow", block.is_dataflow}, {"bindings", std::move(bindings)}});
    }
    return out;
  }

  Json entry(const Stmt& s) const {
    Json node = Json::object();
    switch (s.kind()) {
      case StmtKind::kFor: {
        const auto* n = s.as<ForNode>();
        node["kind"] = "stmt.for";
        node["var"] = ref(n->loop_var);
        node["min"] = ref(n->min);
        node["extent"] = ref(n->extent);
        node["for_kind"] = for_kind_json(n->for_kind);
        node["body"] = ref(n->body);
        break;
      }
      case StmtKind::kSeq:
        node["kind"] = "stmt.seq";
        node["stmts"] = refs(s.as<SeqStmtNode>()->stmts);
        break;
      case StmtKind::kBufferStore: {
        const auto* n = s.as<BufferStoreNode>();
        node["kind"] = "stmt.store";
        node["buffer"] = ref(n->buffer);
        node["indices"] = refs(n->indices);
        node["value"] = ref(n->value);
        break;
      }
      case StmtKind::kIfThenElse: {
        const auto* n = s.as<IfThenElseNode>();
        node["kind"] = "stmt.if";
        node["cond"] = ref(n->cond);
        node["then"] = ref(n->then_case);
        node["else"] = opt_ref(n->else_case);
        break;
      }
      case StmtKind::kLetStmt: {
        const auto* n = s.as<LetStmtNode>();
        node["kind"] = "stmt.let";
        node["var"] = ref(n->var);
        node["value"] = ref(n->value);
        node["body"] = ref(n->body);
        break;
      }
      case StmtKind::kAllocate: {
        const auto* n = s.as<AllocateNode>();
        node["kind"] = "stmt.allocate";
        node["buffer"] = ref(n->buffer);
        node["body"] = ref(n->body);
        break;
      }
      case StmtKind::kEvaluate:
        node["kind"] = "stmt.evaluate";
        node["value"] = ref(s.as<EvaluateNode>()->value);
        break;
      case StmtKind::kExternCall: {
        const auto* n = s.as<ExternCallNode>();
        Json args = Json::array();
        for (const ExternArg& a : n->args) {
          if (a.is_region()) {
            args.push_back(Json{{"buffer", ref(a.buffer)}, {"indices", refs(a.indices)}});
          } else {
            args.push_back(Json{{"value", ref(a.value)}});
          }
        }
        node["kind"] = "stmt.extern_call";
        node["name"] = text(n->name);
        node["args"] = std::move(args);
        break;
      }
      case StmtKind::kBlock: {
        const auto* n = s.as<BlockNode>();
        Json iter_vars = Json::array();
        for (const IterVar& iv : n->iter_vars) {
          iter_vars.push_back(Json{{"var", ref(iv.var)},
                                   {"extent", ref(iv.extent)},
                                   {"type", iter_type_json(iv.type)},
                                   {"binding", ref(iv.binding)}});
        }
        node["kind"] = "stmt.block";
        node["name"] = text(n->name);
        node["iter_vars"] = std::move(iter_vars);
        node["init"] = opt_ref(n->init);
        node["body"] = ref(n->body);
        break;
      }
    }
    return node;
  }

  Json nodes_ = Json::array();
  absl::flat_hash_map<const void*, int64_t> index_;
};

// The readable layout: one line per top-level field, per function and per node.
std::string indented(const Json& doc, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  std::string out = "{\n";
  bool first = true;
  for (const auto& [key, value] : doc.items()) {
    if (!first) out += ",\n";
    first = false;
    out += pad + Json(key).dump() + ": ";
    if (value.is_array() && !value.empty()) {
      out += "[\n";
      for (size_t i = 0; i < value.size(); ++i) {
        out += pad + pad + value[i].dump() + (i + 1 < value.size() ? ",\n" : "\n");
      }
      out += pad + "]";
    } else {
      out += value.dump();
    }
  }
  return out + "\n}\n";
}

}  // namespace

std::string to_json(const IRModule& mod, int indent) {
  Json doc = Writer().document(mod);
  return indent < 0 ? doc.dump() : indented(doc, indent);
}

}  // namespace relax
