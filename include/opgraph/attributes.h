// opgraph/attributes.h — typed attribute values of a node.
//
// An attribute is a (name, AttrValue) pair checked against the op's spec: the
// name must be declared, the value must have the declared type, an enum value
// must be in the declared domain. Names equal cudnn-frontend's setters without
// "set_" (e.g. "epsilon", "causal_mask", "block_size").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "opgraph/data_type.h"

namespace opgraph {

enum class AttrType : std::uint8_t { BOOL, INT, FLOAT, STRING, ENUM, INT_LIST, FLOAT_LIST };
std::string_view to_string(AttrType t) noexcept;

// Enum attributes are held as their (upper-case) value name, checked against the spec's domain.
using AttrValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>>;

// The builder-side bag: name, compute type, and the op's attributes.
class Attributes {
 public:
  Attributes() = default;
  Attributes& set_name(std::string n) { name_ = std::move(n); return *this; }
  Attributes& set_compute_data_type(DataType t) { compute_data_type_ = t; return *this; }

  Attributes& set(std::string key, bool v) { values_[std::move(key)] = v; return *this; }
  Attributes& set(std::string key, int v) { values_[std::move(key)] = std::int64_t{v}; return *this; }
  Attributes& set(std::string key, std::int64_t v) { values_[std::move(key)] = v; return *this; }
  Attributes& set(std::string key, double v) { values_[std::move(key)] = v; return *this; }
  Attributes& set(std::string key, float v) { values_[std::move(key)] = double{v}; return *this; }
  Attributes& set(std::string key, const char* v) { values_[std::move(key)] = std::string(v); return *this; }
  Attributes& set(std::string key, std::string v) { values_[std::move(key)] = std::move(v); return *this; }
  Attributes& set(std::string key, std::vector<std::int64_t> v) { values_[std::move(key)] = std::move(v); return *this; }
  Attributes& set(std::string key, std::vector<double> v) { values_[std::move(key)] = std::move(v); return *this; }
  Attributes& set(std::string key, AttrValue v) { values_[std::move(key)] = std::move(v); return *this; }

  const std::string& name() const noexcept { return name_; }
  DataType compute_data_type() const noexcept { return compute_data_type_; }
  const std::map<std::string, AttrValue, std::less<>>& values() const noexcept { return values_; }
  const AttrValue* find(std::string_view key) const;

 private:
  std::string name_;
  DataType compute_data_type_ = DataType::NOT_SET;
  std::map<std::string, AttrValue, std::less<>> values_;
};

std::string attr_value_to_string(const AttrValue& v);

}  // namespace opgraph
