// opgraph/op_typed.h — the hand-written half of the typed op API; the generated
// half is opgraph/ops.h (one struct per op record: port enums, enum domains,
// attribute accessors).
//
// A port enum (ops::Sdpa::In::Q) names a port of ONE op by its position in the
// record; Node::input / output / inputs_of take it and index the port directly,
// and refuse (std::logic_error) a node of another op. A shared port name
// (ops::in::SCALE, ops::out::MEAN) is for code that serves several ops: it is
// resolved by name, so a port the node's op lacks reads as unbound, but a
// misspelled one does not compile. PortRef accepts either, or a string at the
// JSON / Python boundary, so the infer and kernel contexts take all three.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/attributes.h"

namespace opgraph {

class Node;
struct OpSpec;

namespace ops {

// Specialised by ops.h for every port enum: Op (the op struct), kInput, kNames.
template <class E>
struct PortTraits {};
// Specialised by ops.h for every enum attribute domain: kNames (the record's spelling).
template <class E>
struct EnumDomain {};

template <class E>
concept PortEnum = requires { PortTraits<E>::kInput; };
template <class E>
concept InputPort = PortEnum<E> && PortTraits<E>::kInput;
template <class E>
concept OutputPort = PortEnum<E> && !PortTraits<E>::kInput;
template <class E>
concept AttrEnum = requires { EnumDomain<E>::kNames; };

// The record's name of a port.
template <PortEnum E>
constexpr std::string_view name(E port) {
  return PortTraits<E>::kNames[static_cast<std::size_t>(port)];
}
// An enum attribute value as the record spells it, and back (nullopt outside the domain).
template <AttrEnum E>
constexpr std::string_view to_string(E v) {
  return EnumDomain<E>::kNames[static_cast<std::size_t>(v)];
}
template <AttrEnum E>
constexpr std::optional<E> parse(std::string_view s) {
  std::size_t i = 0;
  for (std::string_view n : EnumDomain<E>::kNames) {
    if (n == s) return static_cast<E>(i);
    ++i;
  }
  return std::nullopt;
}

// A port name shared by several ops (generated as ops::in::X / ops::out::Y).
struct InName {
  std::string_view name;
};
struct OutName {
  std::string_view name;
};

// A port as the infer and kernel contexts take it. kind: STRING (a name that is
// not checked at compile time: JSON / Python boundary), SHARED (ops::in / ops::out),
// TYPED (a port enum: the node's op must be `op_index`).
struct PortRef {
  enum class Kind : std::uint8_t { STRING, SHARED, TYPED };
  std::string_view name;
  Kind kind = Kind::STRING;
  bool input = true;          // meaningful unless STRING
  std::size_t op_index = 0;   // TYPED: the op's position in all_op_specs()
  std::size_t position = 0;   // TYPED: the port's position in the record

  PortRef(std::string_view n) : name(n) {}  // NOLINT(google-explicit-constructor)
  PortRef(const char* n) : name(n) {}       // NOLINT(google-explicit-constructor)
  PortRef(const std::string& n) : name(n) {}  // NOLINT(google-explicit-constructor)
  PortRef(InName n) : name(n.name), kind(Kind::SHARED), input(true) {}    // NOLINT
  PortRef(OutName n) : name(n.name), kind(Kind::SHARED), input(false) {}  // NOLINT
  template <PortEnum E>
  PortRef(E p)  // NOLINT(google-explicit-constructor)
      : name(ops::name(p)), kind(Kind::TYPED), input(PortTraits<E>::kInput),
        op_index(PortTraits<E>::Op::kIndex), position(static_cast<std::size_t>(p)) {}
};

namespace detail {
// Throws std::logic_error naming the node's op and the op the caller meant.
[[noreturn]] void wrong_op(const Node& n, std::size_t op_index, std::string_view what);
// Checks a typed or shared PortRef against `n` (wrong op, or an output used as an
// input and the other way round: std::logic_error).
void check_port(const Node& n, const PortRef& p, bool want_input);
// The attribute at position `pos` of op `op_index`'s record: as set on `n`, else
// the record's default, else nullptr. `n` must be of that op.
const AttrValue* attr_at(const Node& n, std::size_t op_index, std::size_t pos);
// The attribute `name` of `n`'s op (set, else default, else nullptr); the op must declare it.
const AttrValue* attr_named(const Node& n, std::string_view name);
// The record default of the attribute at `pos` of op `op_index` (which has one).
const AttrValue& attr_default(std::size_t op_index, std::size_t pos);
const AttrValue& attr_default_named(const Node& n, std::string_view name);

template <class T>
std::optional<T> as(const AttrValue* v) {
  if (!v) return std::nullopt;
  if constexpr (std::is_same_v<T, bool>) {
    if (auto p = std::get_if<bool>(v)) return *p;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (auto p = std::get_if<std::int64_t>(v)) return *p;
    if (auto p = std::get_if<bool>(v)) return *p ? 1 : 0;
  } else if constexpr (std::is_same_v<T, double>) {
    if (auto p = std::get_if<double>(v)) return *p;
    if (auto p = std::get_if<std::int64_t>(v)) return static_cast<double>(*p);
  } else if constexpr (AttrEnum<T>) {
    if (auto p = std::get_if<std::string>(v)) return parse<T>(*p);
  } else {
    if (auto p = std::get_if<T>(v)) return *p;
  }
  return std::nullopt;
}

// Accessor bodies of ops.h: `Opt` (no record default) returns nullopt when unset.
template <class T>
std::optional<T> get_opt(const Node& n, std::size_t op_index, std::size_t pos) {
  return as<T>(attr_at(n, op_index, pos));
}
template <class T>
T get(const Node& n, std::size_t op_index, std::size_t pos) {
  if (auto v = as<T>(attr_at(n, op_index, pos))) return *v;
  return *as<T>(&attr_default(op_index, pos));  // a value outside the type/domain: validate() refuses it
}
template <class T>
std::optional<T> get_opt_named(const Node& n, std::string_view name) {
  return as<T>(attr_named(n, name));
}
template <class T>
T get_named(const Node& n, std::string_view name) {
  if (auto v = as<T>(attr_named(n, name))) return *v;
  return *as<T>(&attr_default_named(n, name));
}
}  // namespace detail

}  // namespace ops
}  // namespace opgraph
