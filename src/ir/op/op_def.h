// Declaring an operator: one entry in its family's table (private to src/ir).
//
// An operator is declared once, with everything the compiler needs of it:
//
//   struct SoftmaxAttrs {
//     int64_t axis = -1;
//     template <typename V> void fields(V& v) { v("axis", axis); }
//   };
//   table.def<SoftmaxAttrs>("softmax", "exp(x) normalised to sum to 1 along axis")
//       .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
//       .deduce(rules::same_as_arg<SoftmaxAttrs>(0))
//       .legalize(legalize_softmax);
//
// The attribute struct is the one declaration of the op's attributes: its
// `fields` lists each with its key, and the struct's initialisers are the
// defaults. From it come the checks of a call's attributes (an unknown or
// misspelled key, a value of the wrong type or outside its choices is an
// error naming the op and the key), their canonical form (defaults left out)
// that the printer, the JSON writer and the structural hash see, the typed
// value the deduction and legalization rules receive, and the listing of the
// op's attributes. The argument specs are checked before the deduction rule
// runs, so a rule may assume their kinds and dtype classes.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/op.h"

namespace relax::detail {

/// An int or a list of ints (split's indices_or_sections, a reduction's axis).
using IntOrInts = std::variant<int64_t, std::vector<int64_t>>;

/// The attributes of an operator that has none.
struct NoAttrs {
  template <typename V>
  void fields(V&) {}
};

/// A required result dtype (zeros, ones, astype).
struct DtypeAttrs {
  DataType dtype;
  template <typename V>
  void fields(V& v) {
    v.required("dtype", dtype);
  }
};

/// The axis of softmax and log_softmax (default: the last).
struct SoftmaxAttrs {
  int64_t axis = -1;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
  }
};

// ---------------------------------------------------------------------------
// Attribute value types. Each supported field type has a name for messages,
// a decoder from the stored AttrValue (nullopt: wrong type) and an encoder.

template <typename T>
struct AttrType;

template <>
struct AttrType<int64_t> {
  static constexpr const char* kName = "int";
  static std::optional<int64_t> decode(const AttrValue& v);
  static AttrValue encode(int64_t v) { return v; }
};
template <>
struct AttrType<double> {
  static constexpr const char* kName = "float";
  static std::optional<double> decode(const AttrValue& v);  // an int is accepted
  static AttrValue encode(double v) { return v; }
};
template <>
struct AttrType<bool> {
  static constexpr const char* kName = "bool";
  static std::optional<bool> decode(const AttrValue& v);
  static AttrValue encode(bool v) { return v; }
};
template <>
struct AttrType<std::string> {
  static constexpr const char* kName = "str";
  static std::optional<std::string> decode(const AttrValue& v);
  static AttrValue encode(const std::string& v) { return v; }
};
template <>
struct AttrType<DataType> {
  static constexpr const char* kName = "dtype";
  static std::optional<DataType> decode(const AttrValue& v);
  static AttrValue encode(DataType v) { return v; }
};
template <>
struct AttrType<std::vector<int64_t>> {
  static constexpr const char* kName = "[int]";
  static std::optional<std::vector<int64_t>> decode(const AttrValue& v);  // an int: [int]
  static AttrValue encode(const std::vector<int64_t>& v) { return v; }
};
template <>
struct AttrType<std::vector<SymExpr>> {
  static constexpr const char* kName = "sym[...]";
  static std::optional<std::vector<SymExpr>> decode(const AttrValue& v);  // ints accepted
  static AttrValue encode(const std::vector<SymExpr>& v) { return v; }
};
template <>
struct AttrType<IntOrInts> {
  static constexpr const char* kName = "int | [int]";
  static std::optional<IntOrInts> decode(const AttrValue& v);
  static AttrValue encode(const IntOrInts& v);
};

/// Whether two stored values are the same (symbolic lists structurally).
bool attr_values_equal(const AttrValue& a, const AttrValue& b);

// ---------------------------------------------------------------------------
// The visitors that `fields` is called with.

/// Fills a struct from stored attributes, recording the first error.
class AttrDecoder {
 public:
  AttrDecoder(const std::string& op, const Attrs& attrs) : op_(op), attrs_(attrs) {}

  template <typename T>
  void operator()(const char* key, T& field) {
    if (const AttrValue* v = take(key)) decode_into(key, *v, field);
  }
  template <typename T>
  void operator()(const char* key, std::optional<T>& field) {
    if (const AttrValue* v = take(key)) {
      T value{};
      if (decode_into(key, *v, value)) field = std::move(value);
    }
  }
  /// A string attribute restricted to `choices`.
  void operator()(const char* key, std::string& field, std::initializer_list<const char*> choices);
  /// An attribute without a default: absent is an error.
  template <typename T>
  void required(const char* key, T& field) {
    if (const AttrValue* v = take(key)) {
      decode_into(key, *v, field);
    } else {
      fail("attribute `" + std::string(key) + "` (" + AttrType<T>::kName + ") is required");
    }
  }

  /// OK, or the first error; an attribute no field took is one.
  absl::Status finish(const std::vector<std::string>& declared);

 private:
  const AttrValue* take(const char* key);
  template <typename T>
  bool decode_into(const char* key, const AttrValue& v, T& field) {
    std::optional<T> decoded = AttrType<T>::decode(v);
    if (!decoded) {
      wrong_type(key, AttrType<T>::kName, v);
      return false;
    }
    field = std::move(*decoded);
    return true;
  }
  void wrong_type(const char* key, const char* expected, const AttrValue& v);
  void fail(const std::string& message);

  const std::string& op_;
  const Attrs& attrs_;
  std::vector<std::string> taken_;
  absl::Status status_;
};

/// Writes a struct's fields as stored attributes.
class AttrEncoder {
 public:
  template <typename T>
  void operator()(const char* key, const T& field) {
    out_.emplace(key, AttrType<T>::encode(field));
  }
  template <typename T>
  void operator()(const char* key, const std::optional<T>& field) {
    if (field) out_.emplace(key, AttrType<T>::encode(*field));
  }
  void operator()(const char* key, const std::string& field, std::initializer_list<const char*>) {
    (*this)(key, field);
  }
  template <typename T>
  void required(const char* key, const T& field) {
    out_.emplace(key, AttrType<T>::encode(field));
    required_.push_back(key);
  }

  Attrs& attrs() { return out_; }
  const std::vector<std::string>& required_keys() const { return required_; }

 private:
  Attrs out_;
  std::vector<std::string> required_;
};

/// Lists a struct's fields (name, type, default).
class AttrLister {
 public:
  template <typename T>
  void operator()(const char* key, const T& field) {
    out_.push_back({key, AttrType<T>::kName, attr_value_text(AttrType<T>::encode(field))});
  }
  template <typename T>
  void operator()(const char* key, const std::optional<T>&) {
    out_.push_back({key, AttrType<T>::kName, "none"});
  }
  void operator()(const char* key, const std::string& field,
                  std::initializer_list<const char*> choices);
  template <typename T>
  void required(const char* key, const T&) {
    out_.push_back({key, AttrType<T>::kName, ""});
  }
  std::vector<AttrFieldInfo>& fields() { return out_; }

 private:
  std::vector<AttrFieldInfo> out_;
};

/// The declared fields of A.
template <typename A>
std::vector<AttrFieldInfo> attr_fields() {
  A defaults{};
  AttrLister lister;
  defaults.fields(lister);
  return lister.fields();
}

/// The typed attributes of a call of `op`, or an error naming the op and the key.
template <typename A>
absl::StatusOr<A> decode_attrs(const std::string& op, const Attrs& attrs) {
  A value{};
  AttrDecoder decoder(op, attrs);
  value.fields(decoder);
  std::vector<std::string> declared;
  for (const AttrFieldInfo& f : attr_fields<A>()) declared.push_back(f.name);
  if (absl::Status s = decoder.finish(declared); !s.ok()) return s;
  return value;
}

/// `value` as stored attributes, leaving out the fields equal to their defaults.
template <typename A>
Attrs encode_attrs(const A& value) {
  A copy = value;
  AttrEncoder all;
  copy.fields(all);
  AttrEncoder defaults;
  A d{};
  d.fields(defaults);
  Attrs out;
  for (auto& [key, v] : all.attrs()) {
    auto it = defaults.attrs().find(key);
    bool required = false;
    for (const std::string& r : all.required_keys()) required = required || r == key;
    if (!required && it != defaults.attrs().end() && attr_values_equal(it->second, v)) continue;
    out.emplace(key, std::move(v));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Argument checks.

/// OK when the call's arguments fit `specs` (kinds and dtype classes; a
/// Tensor or Prim of unknown dtype passes the dtype check). Errors read
/// "<op>: argument <i> (<role>): expected <what>, got <annotation>".
absl::Status check_args(const OpInfo& info, const CallNode& call);

// ---------------------------------------------------------------------------
// The table.

template <typename A>
using TypedDeduceFn =
    std::function<absl::StatusOr<StructInfo>(const CallNode&, const A&, DeduceContext&)>;
template <typename A>
using TypedLegalizeFn =
    std::function<absl::StatusOr<Lowering>(const CallNode&, const A&, Analyzer&)>;

/// The entry of one operator while it is being declared (see the top of this file).
template <typename A>
class OpDef {
 public:
  explicit OpDef(OpInfo& info) : info_(&info) {
    info_->attrs = attr_fields<A>();
    const std::string op = info_->name;
    info_->canonical_attrs = [op](const Attrs& attrs) -> absl::StatusOr<Attrs> {
      absl::StatusOr<A> typed = decode_attrs<A>(op, attrs);
      if (!typed.ok()) return typed.status();
      return encode_attrs(*typed);
    };
  }

  /// The next argument.
  OpDef& arg(std::string role, ArgKind kind = ArgKind::kTensor,
             DtypeClass dtypes = DtypeClass::kAny) {
    info_->args.push_back({std::move(role), kind, dtypes, false});
    info_->num_args = static_cast<int>(info_->args.size());
    info_->min_args = info_->num_args;
    return *this;
  }
  /// The next argument, which calls may leave out (it and all after it).
  OpDef& optional_arg(std::string role, ArgKind kind = ArgKind::kTensor,
                      DtypeClass dtypes = DtypeClass::kAny) {
    info_->args.push_back({std::move(role), kind, dtypes, true});
    info_->num_args = static_cast<int>(info_->args.size());
    return *this;
  }
  /// Any number of arguments (the specs declared so far are not checked).
  OpDef& variadic() {
    info_->num_args = -1;
    return *this;
  }
  /// The op has effects: a dataflow block may not hold its calls.
  OpDef& impure() {
    info_->pure = false;
    return *this;
  }
  /// The deduction rule; it sees checked arguments and decoded attributes.
  OpDef& deduce(TypedDeduceFn<A> fn) {
    const OpInfo* info = info_;
    info_->deduce = [info, fn = std::move(fn)](const CallNode& call,
                                              DeduceContext& ctx) -> absl::StatusOr<StructInfo> {
      absl::StatusOr<A> attrs = decode_attrs<A>(info->name, call.attrs);
      if (!attrs.ok()) return attrs.status();
      if (absl::Status s = check_args(*info, call); !s.ok()) return s;
      return fn(call, *attrs, ctx);
    };
    return *this;
  }
  /// The legalization rule (built with relax/ir/compute.h).
  OpDef& legalize(TypedLegalizeFn<A> fn) {
    const OpInfo* info = info_;
    info_->legalize = [info, fn = std::move(fn)](const CallNode& call,
                                                Analyzer& analyzer) -> absl::StatusOr<Lowering> {
      absl::StatusOr<A> attrs = decode_attrs<A>(info->name, call.attrs);
      if (!attrs.ok()) return attrs.status();
      return fn(call, *attrs, analyzer);
    };
    return *this;
  }

  OpInfo& info() { return *info_; }

 private:
  OpInfo* info_;
};

/// Collects operators while the registry is being built.
class OpTable {
 public:
  /// Declares `name` with attributes A; aborts on a duplicate name.
  template <typename A = NoAttrs>
  OpDef<A> def(std::string name, std::string summary) {
    return OpDef<A>(add_entry(std::move(name), std::move(summary)));
  }

  std::vector<std::unique_ptr<OpInfo>>& entries() { return entries_; }
  /// The family of the operators declared next.
  void set_family(std::string family) { family_ = std::move(family); }

 private:
  OpInfo& add_entry(std::string name, std::string summary);
  std::vector<std::unique_ptr<OpInfo>> entries_;
  std::string family_;
};

}  // namespace relax::detail
