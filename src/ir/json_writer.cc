// Writing an IRModule as JSON (relax/ir/json.h).
//
// One walk over the module fills the node table in post-order: a node's
// children are written (or found already written) before the node itself, so
// every reference points backwards. Nodes are remembered by address, which
// is what makes a shared node one entry; the module keeps every node alive
// while the walk runs, so no address is reused.
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
#include "json_schema.h"
#include "nlohmann/json.hpp"
#include "relax/ir/json.h"
#include "relax/support/check.h"

namespace relax {
namespace {

using Json = nlohmann::ordered_json;
using namespace json_detail;  // NOLINT(google-build-using-namespace)

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

class Writer {
 public:
  Json document(const IRModule& mod) {
    Json functions = Json::array();
    for (const auto& [name, func] : mod.functions()) {
      functions.push_back(Json{{"name", text(name)}, {"func", expr(func)}});
    }
    Json module_attrs = attrs(mod.attrs());
    Json doc = Json::object();
    doc["format"] = kFormat;
    doc["version"] = kIRJsonVersion;
    doc["functions"] = std::move(functions);
    doc["attrs"] = std::move(module_attrs);
    doc["nodes"] = std::move(nodes_);
    return doc;
  }

 private:
  // -------------------------------------------------------------------------
  // The table.

  const int64_t* find(const void* key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second;
  }

  int64_t add(const void* key, Json node) {
    const auto index = static_cast<int64_t>(nodes_.size());
    nodes_.push_back(std::move(node));
    index_.emplace(key, index);
    return index;
  }

  // -------------------------------------------------------------------------
  // SymExprs and buffers.

  // SymExprs are written without recursion: a long chain of operators (a sum of
  // many terms) is the one place where IR nests thousands of levels deep.
  Json sym(const SymExpr& root) {
    RELAX_CHECK(root.defined()) << "to_json: an undefined SymExpr where one is required";
    if (const int64_t* i = find(root.get())) return *i;
    // Post-order with an explicit stack; `ready` once the operands are pushed.
    struct Pending {
      const SymExpr* expr;
      bool ready;
    };
    std::vector<Pending> stack = {{&root, false}};
    while (!stack.empty()) {
      Pending& top = stack.back();
      const SymExpr& e = *top.expr;
      if (find(e.get()) != nullptr) {
        stack.pop_back();
      } else if (!top.ready) {
        top.ready = true;
        const auto& ops = e->operands();
        for (size_t i = ops.size(); i-- > 0;) {
          RELAX_CHECK(ops[i].defined()) << "to_json: a SymExpr with an undefined operand";
          stack.push_back({&ops[i], false});  // may invalidate `top`, not the nodes
        }
      } else {
        stack.pop_back();
        add(e.get(), sym_node(*e));
      }
    }
    return *find(root.get());
  }

  // The entry of `n`, whose operands are in the table already.
  Json sym_node(const SymExprNode& n) {
    Json operands = Json::array();
    for (const SymExpr& op : n.operands()) operands.push_back(*find(op.get()));
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
        node["buffer"] = buffer(n.buffer());
        break;
      default:
        break;
    }
    node["operands"] = std::move(operands);
    return node;
  }

  Json syms(const std::vector<SymExpr>& list) {
    Json out = Json::array();
    for (const SymExpr& e : list) out.push_back(sym(e));
    return out;
  }

  Json opt_sym(const SymExpr& e) { return e.defined() ? sym(e) : Json(nullptr); }

  Json buffer(const Buffer& b) {
    RELAX_CHECK(b.defined()) << "to_json: an undefined Buffer where one is required";
    if (const int64_t* i = find(b.get())) return *i;
    Json shape = syms(b->shape);
    Json strides = syms(b->strides);
    Json node = Json::object();
    node["kind"] = "buffer";
    node["name"] = text(b->name);
    node["dtype"] = dtype_json(b->dtype);
    node["shape"] = std::move(shape);
    node["strides"] = std::move(strides);
    node["scope"] = scope_json(b->scope);
    return add(b.get(), std::move(node));
  }

  // -------------------------------------------------------------------------
  // StructInfo.

  Json sinfo(const StructInfo& s) {
    RELAX_CHECK(s.defined()) << "to_json: an undefined StructInfo where one is required";
    return opt_sinfo(s);
  }

  Json opt_sinfo(const StructInfo& s) {
    if (!s.defined()) return nullptr;
    if (const int64_t* i = find(s.get())) return *i;
    Json node = Json::object();
    switch (s.kind()) {
      case StructInfoKind::kObject:
        node["kind"] = "sinfo.object";
        break;
      case StructInfoKind::kPrim: {
        const auto* p = s.as<PrimStructInfoNode>();
        Json value = opt_sym(p->value);
        node["kind"] = "sinfo.prim";
        node["dtype"] = dtype_json(p->dtype);
        node["value"] = std::move(value);
        break;
      }
      case StructInfoKind::kShape: {
        const auto* p = s.as<ShapeStructInfoNode>();
        Json values = p->values ? syms(*p->values) : Json(nullptr);
        node["kind"] = "sinfo.shape";
        node["ndim"] = p->ndim;
        node["values"] = std::move(values);
        break;
      }
      case StructInfoKind::kTensor: {
        const auto* p = s.as<TensorStructInfoNode>();
        Json shape = p->shape ? syms(*p->shape) : Json(nullptr);
        node["kind"] = "sinfo.tensor";
        node["ndim"] = p->ndim;
        node["shape"] = std::move(shape);
        node["dtype"] = p->dtype ? Json(dtype_json(*p->dtype)) : Json(nullptr);
        if (p->device != Device()) {
          node["device"] = Json{{"type", device_type_json(p->device.type)},
                                {"index", p->device.index}};
        }
        break;
      }
      case StructInfoKind::kTuple: {
        const auto* p = s.as<TupleStructInfoNode>();
        Json fields = sinfos(p->fields);
        node["kind"] = "sinfo.tuple";
        node["fields"] = std::move(fields);
        break;
      }
      case StructInfoKind::kFunc: {
        const auto* p = s.as<FuncStructInfoNode>();
        Json params = p->params ? sinfos(*p->params) : Json(nullptr);
        Json ret = sinfo(p->ret);
        node["kind"] = "sinfo.func";
        node["params"] = std::move(params);
        node["ret"] = std::move(ret);
        node["pure"] = p->pure;
        break;
      }
    }
    return add(s.get(), std::move(node));
  }

  Json sinfos(const std::vector<StructInfo>& list) {
    Json out = Json::array();
    for (const StructInfo& s : list) out.push_back(sinfo(s));
    return out;
  }

  // -------------------------------------------------------------------------
  // Attributes.

  Json attrs(const Attrs& a) {
    Json out = Json::object();
    for (const auto& [name, value] : a) {
      // Object keys must be UTF-8 like any string; attribute names are identifiers.
      RELAX_CHECK(is_valid_utf8(name)) << "to_json: an attribute name is not UTF-8";
      out[name] = attr(value);
    }
    return out;
  }

  Json attr(const AttrValue& value) {
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
            return Json{{"syms", syms(v)}};
          }
        },
        value);
  }

  // -------------------------------------------------------------------------
  // Graph expressions.

  Json exprs(const std::vector<Expr>& list) {
    Json out = Json::array();
    for (const Expr& e : list) out.push_back(expr(e));
    return out;
  }

  Json expr(const Expr& e) {
    RELAX_CHECK(e.defined()) << "to_json: an undefined Expr where one is required";
    if (const int64_t* i = find(e.get())) return *i;
    if (const auto* op = e.as<OpNode>()) {
      return add(e.get(), Json{{"kind", "expr.op"}, {"name", text(op->name)}});
    }
    // Children first; the annotation before the node's own fields (it is a child too).
    Json fields = Json::object();
    const char* kind = "";
    switch (e.kind()) {
      case ExprKind::kVar:
      case ExprKind::kDataflowVar:
        kind = e.kind() == ExprKind::kVar ? "expr.var" : "expr.dataflow_var";
        fields["name"] = text(e.as<VarNode>()->name_hint);
        break;
      case ExprKind::kGlobalVar:
        kind = "expr.global_var";
        fields["name"] = text(e.as<GlobalVarNode>()->name);
        break;
      case ExprKind::kConstant: {
        kind = "expr.constant";
        const runtime::Tensor& t = e.as<ConstantNode>()->data;
        RELAX_CHECK(t.defined()) << "to_json: a Constant without a tensor";
        RELAX_CHECK(t.device().type == Device::Type::kCPU)
            << "to_json: a Constant on " << t.device().to_string()
            << " (only host tensors can be written)";
        const std::string bytes = tensor_bytes(t);
        fields["dtype"] = dtype_json(t.dtype());
        fields["shape"] = t.shape();
        fields["data"] = base64(bytes.data(), bytes.size());
        break;
      }
      case ExprKind::kTuple:
        kind = "expr.tuple";
        fields["fields"] = exprs(e.as<TupleNode>()->fields);
        break;
      case ExprKind::kTupleGetItem: {
        kind = "expr.tuple_get_item";
        const auto* n = e.as<TupleGetItemNode>();
        fields["tuple"] = expr(n->tuple);
        fields["index"] = n->index;
        break;
      }
      case ExprKind::kCall: {
        kind = "expr.call";
        const auto* n = e.as<CallNode>();
        fields["callee"] = expr(n->callee);
        fields["args"] = exprs(n->args);
        fields["attrs"] = attrs(n->attrs);
        fields["sinfo_args"] = sinfos(n->sinfo_args);
        break;
      }
      case ExprKind::kShapeExpr:
        kind = "expr.shape";
        fields["values"] = syms(e.as<ShapeExprNode>()->values);
        break;
      case ExprKind::kPrimValue:
        kind = "expr.prim_value";
        fields["value"] = sym(e.as<PrimValueNode>()->value);
        break;
      case ExprKind::kStringImm:
        kind = "expr.string";
        fields["value"] = text(e.as<StringImmNode>()->value);
        break;
      case ExprKind::kIf: {
        kind = "expr.if";
        const auto* n = e.as<IfNode>();
        fields["cond"] = expr(n->cond);
        fields["then"] = expr(n->then_branch);
        fields["else"] = expr(n->else_branch);
        break;
      }
      case ExprKind::kSeqExpr: {
        kind = "expr.seq";
        const auto* n = e.as<SeqExprNode>();
        fields["blocks"] = blocks(n->blocks);
        fields["body"] = expr(n->body);
        break;
      }
      case ExprKind::kFunction: {
        kind = "expr.function";
        const auto* n = e.as<FunctionNode>();
        Json params = Json::array();
        for (const Var& p : n->params) params.push_back(expr(p));
        fields["params"] = std::move(params);
        fields["body"] = expr(n->body);
        fields["ret"] = sinfo(n->ret);
        fields["pure"] = n->pure;
        Json bounds = Json::array();
        for (const SymBound& b : n->upper_bounds) {
          bounds.push_back(Json{{"var", sym(b.var)}, {"upper", b.upper}});
        }
        fields["upper_bounds"] = std::move(bounds);
        fields["attrs"] = attrs(n->attrs);
        break;
      }
      case ExprKind::kExternFunc:
        kind = "expr.extern_func";
        fields["symbol"] = text(e.as<ExternFuncNode>()->symbol);
        break;
      case ExprKind::kPrimFunc: {
        kind = "expr.prim_func";
        const auto* n = e.as<PrimFuncNode>();
        Json params = Json::array();
        for (const PrimParam& p : n->params) {
          RELAX_CHECK(p.buffer.has_value() != p.scalar.has_value())
              << "to_json: a PrimFunc parameter must be a buffer or a scalar";
          params.push_back(p.buffer ? Json{{"buffer", buffer(*p.buffer)}}
                                    : Json{{"scalar", sym(*p.scalar)}});
        }
        fields["params"] = std::move(params);
        fields["body"] = stmt(n->body);
        fields["attrs"] = attrs(n->attrs);
        break;
      }
      case ExprKind::kOp:
        break;  // handled above
    }
    Json node = Json::object();
    node["kind"] = kind;
    for (auto& [key, value] : fields.items()) node[key] = std::move(value);
    node["sinfo"] = opt_sinfo(e.struct_info());
    return add(e.get(), std::move(node));
  }

  Json blocks(const std::vector<BindingBlock>& list) {
    Json out = Json::array();
    for (const BindingBlock& block : list) {
      Json bindings = Json::array();
      for (const Binding& b : block.bindings) {
        Json binding = Json::object();
        binding["var"] = expr(b.var);
        binding["value"] = expr(b.value);
        if (b.is_match_cast) binding["match_cast"] = opt_sinfo(b.cast_sinfo);
        bindings.push_back(std::move(binding));
      }
      out.push_back(Json{{"dataflow", block.is_dataflow}, {"bindings", std::move(bindings)}});
    }
    return out;
  }

  // -------------------------------------------------------------------------
  // Statements.

  Json opt_stmt(const Stmt& s) { return s.defined() ? stmt(s) : Json(nullptr); }

  Json stmt(const Stmt& s) {
    RELAX_CHECK(s.defined()) << "to_json: an undefined Stmt where one is required";
    if (const int64_t* i = find(s.get())) return *i;
    Json node = Json::object();
    switch (s.kind()) {
      case StmtKind::kFor: {
        const auto* n = s.as<ForNode>();
        Json var = sym(n->loop_var);
        Json min = sym(n->min);
        Json extent = sym(n->extent);
        Json body = stmt(n->body);
        node = Json{{"kind", "stmt.for"},  {"var", var},
                    {"min", min},          {"extent", extent},
                    {"for_kind", for_kind_json(n->for_kind)}, {"body", body}};
        break;
      }
      case StmtKind::kSeq: {
        Json stmts = Json::array();
        for (const Stmt& child : s.as<SeqStmtNode>()->stmts) stmts.push_back(stmt(child));
        node = Json{{"kind", "stmt.seq"}, {"stmts", std::move(stmts)}};
        break;
      }
      case StmtKind::kBufferStore: {
        const auto* n = s.as<BufferStoreNode>();
        Json b = buffer(n->buffer);
        Json indices = syms(n->indices);
        Json value = sym(n->value);
        node = Json{{"kind", "stmt.store"}, {"buffer", b}, {"indices", indices}, {"value", value}};
        break;
      }
      case StmtKind::kIfThenElse: {
        const auto* n = s.as<IfThenElseNode>();
        Json cond = sym(n->cond);
        Json then_case = stmt(n->then_case);
        Json else_case = opt_stmt(n->else_case);
        node = Json{{"kind", "stmt.if"}, {"cond", cond}, {"then", then_case}, {"else", else_case}};
        break;
      }
      case StmtKind::kLetStmt: {
        const auto* n = s.as<LetStmtNode>();
        Json var = sym(n->var);
        Json value = sym(n->value);
        Json body = stmt(n->body);
        node = Json{{"kind", "stmt.let"}, {"var", var}, {"value", value}, {"body", body}};
        break;
      }
      case StmtKind::kAllocate: {
        const auto* n = s.as<AllocateNode>();
        Json b = buffer(n->buffer);
        Json body = stmt(n->body);
        node = Json{{"kind", "stmt.allocate"}, {"buffer", b}, {"body", body}};
        break;
      }
      case StmtKind::kEvaluate:
        node = Json{{"kind", "stmt.evaluate"}, {"value", sym(s.as<EvaluateNode>()->value)}};
        break;
      case StmtKind::kBlock: {
        const auto* n = s.as<BlockNode>();
        Json iter_vars = Json::array();
        for (const IterVar& iv : n->iter_vars) {
          Json var = sym(iv.var);
          Json extent = sym(iv.extent);
          Json binding = sym(iv.binding);
          iter_vars.push_back(Json{{"var", var},
                                   {"extent", extent},
                                   {"type", iter_type_json(iv.type)},
                                   {"binding", binding}});
        }
        Json init = opt_stmt(n->init);
        Json body = stmt(n->body);
        node = Json{{"kind", "stmt.block"}, {"name", text(n->name)}, {"iter_vars", iter_vars},
                    {"init", init},         {"body", body}};
        break;
      }
    }
    return add(s.get(), std::move(node));
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
