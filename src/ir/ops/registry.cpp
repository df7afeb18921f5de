// ir/ops/registry.cpp — THE op registry: every group's records, one line a group.
// Order is fixed (it is the order `opgraph info` and the docs list ops in).
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ops/groups.h"

namespace opgraph {

std::span<const OpSpec* const> all_op_specs() {
  static const std::vector<const OpSpec*> kAll = [] {
    std::vector<const OpSpec*> v;
    for (auto group : {ops::pointwise_specs(), ops::matmul_specs(), ops::tensor_op_specs(), ops::norm_specs(),
                       ops::conv_specs(), ops::sdpa_specs(), ops::linear_attention_specs()})
      for (const OpSpec& s : group) v.push_back(&s);
    return v;
  }();
  return kAll;
}

const OpSpec* find_op_spec(std::string_view name) {
  for (const OpSpec* s : all_op_specs())
    if (s->name == name) return s;
  return nullptr;
}

std::size_t op_index(const OpSpec& spec) {
  static const std::unordered_map<const OpSpec*, std::size_t> kIndex = [] {
    std::unordered_map<const OpSpec*, std::size_t> m;
    auto all = all_op_specs();
    for (std::size_t i = 0; i < all.size(); ++i) m.emplace(all[i], i);
    return m;
  }();
  auto it = kIndex.find(&spec);
  if (it == kIndex.end()) throw std::logic_error("op '" + std::string(spec.name) + "' is not a record of the registry");
  return it->second;
}

const PortSpec* OpSpec::find_input(std::string_view port) const {
  for (const auto& p : inputs)
    if (p.name == port) return &p;
  return nullptr;
}
int OpSpec::input_index(std::string_view port) const {
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == port) return static_cast<int>(i);
  return -1;
}
int OpSpec::output_index(std::string_view port) const {
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == port) return static_cast<int>(i);
  return -1;
}
const AttrSpec* OpSpec::find_attr(std::string_view attr) const {
  for (const auto& a : attrs)
    if (a.name == attr) return &a;
  return nullptr;
}

}  // namespace opgraph
