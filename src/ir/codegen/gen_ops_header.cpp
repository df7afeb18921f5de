// ir/codegen/gen_ops_header.cpp — writes include/opgraph/ops.h from the op registry.
//
//   gen_ops_header --write include/opgraph/ops.h   regenerate after changing an op record
//   gen_ops_header --check include/opgraph/ops.h   exit 1 (with a diff hint) when the file is stale
//
// The records in src/ir/ops/* are the only source: per op a struct with the port
// enums (positions in the record), the enum attribute domains and one typed
// accessor per attribute (the record's default when unset; std::optional when the
// record has none). Shared forms for code that serves several ops: ops::in::X /
// ops::out::Y port names and ops::attr::name(node) accessors (only where every op
// declaring the attribute agrees on its type, domain and whether it has a default).
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "opgraph/op_spec.h"

namespace {

using opgraph::AttrSpec;
using opgraph::AttrType;
using opgraph::OpSpec;

std::string camel(std::string_view s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') { up = true; continue; }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

// Identifiers the records use that C++ reserves get a trailing underscore.
std::string ident(std::string_view s) {
  static const std::set<std::string, std::less<>> kReserved = {
      "and", "auto", "bool", "break", "case", "char", "class", "const", "default", "delete", "do", "double",
      "else", "enum", "false", "float", "for", "if", "int", "long", "new", "not", "operator", "or", "private",
      "public", "return", "short", "signed", "static", "struct", "switch", "template", "this", "true",
      "typename", "union", "unsigned", "using", "virtual", "void", "while", "xor"};
  std::string out(s);
  if (kReserved.count(out)) out += '_';
  return out;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string value_type(const AttrSpec& a, const std::string& enum_name) {
  switch (a.type) {
    case AttrType::BOOL: return "bool";
    case AttrType::INT: return "std::int64_t";
    case AttrType::FLOAT: return "double";
    case AttrType::STRING: return "std::string";
    case AttrType::ENUM: return enum_name;
    case AttrType::INT_LIST: return "std::vector<std::int64_t>";
    case AttrType::FLOAT_LIST: return "std::vector<double>";
  }
  return "?";
}

// The signature two ops must share for one shared accessor / one enum domain.
std::string domain_key(const AttrSpec& a) {
  std::string k;
  for (auto v : a.enum_values) k += std::string(v) + "|";
  return k;
}

std::string generate() {
  auto specs = opgraph::all_op_specs();
  // Enum domains: named after the attribute, unless ops disagree on the domain of
  // an attribute of that name: then after op + attribute.
  std::map<std::string, std::set<std::string>> domains_by_attr;
  for (const OpSpec* s : specs)
    for (const auto& a : s->attrs)
      if (a.type == AttrType::ENUM) domains_by_attr[std::string(a.name)].insert(domain_key(a));
  auto enum_name = [&](const OpSpec& s, const AttrSpec& a) {
    return domains_by_attr[std::string(a.name)].size() == 1 ? camel(a.name) : camel(s.name) + camel(a.name);
  };

  std::ostringstream o;
  o << "// opgraph/ops.h — GENERATED from the op registry (src/ir/ops/*) by\n"
       "// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then\n"
       "//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h\n"
       "// The test ops_header_generated fails when this file is not what the generator writes.\n"
       "//\n"
       "// Per op (registry order): a struct with kIndex (its position in all_op_specs()),\n"
       "// kName, the port enums In / Out (record positions; Node::input / output /\n"
       "// inputs_of take them), the enum attribute domains it uses and one accessor per\n"
       "// attribute: the value as set, else the record's default (std::optional when\n"
       "// the record has no default). Then the shared forms: ops::in / ops::out port\n"
       "// names and ops::attr accessors. Support code: opgraph/op_typed.h.\n"
       "#pragma once\n\n"
       "#include <cstddef>\n#include <cstdint>\n#include <optional>\n#include <string>\n#include <string_view>\n"
       "#include <vector>\n\n#include \"opgraph/op_typed.h\"\n\nnamespace opgraph::ops {\n\n";

  // 1. Enum domains.
  o << "// ---- enum attribute domains ----\n";
  std::set<std::string> emitted;
  for (const OpSpec* s : specs)
    for (const auto& a : s->attrs) {
      if (a.type != AttrType::ENUM) continue;
      std::string e = enum_name(*s, a);
      if (!emitted.insert(e).second) continue;
      o << "enum class " << e << " : std::uint8_t {";
      for (std::size_t i = 0; i < a.enum_values.size(); ++i) o << (i ? ", " : " ") << ident(a.enum_values[i]);
      o << " };\ntemplate <>\nstruct EnumDomain<" << e << "> {\n  static constexpr std::string_view kNames[] = {";
      for (std::size_t i = 0; i < a.enum_values.size(); ++i) o << (i ? ", " : "") << quoted(a.enum_values[i]);
      o << "};\n};\n";
    }

  // 2. One struct per op.
  o << "\n// ---- ops ----\n";
  for (std::size_t idx = 0; idx < specs.size(); ++idx) {
    const OpSpec& s = *specs[idx];
    std::string st = camel(s.name);
    o << "\n// " << s.name << ": " << s.summary << "\nstruct " << st << " {\n"
      << "  static constexpr std::size_t kIndex = " << idx << ";\n"
      << "  static constexpr std::string_view kName = " << quoted(s.name) << ";\n";
    o << "  enum class In : std::uint8_t {";
    for (std::size_t i = 0; i < s.inputs.size(); ++i) o << (i ? ", " : " ") << ident(s.inputs[i].name);
    o << (s.inputs.empty() ? "" : " ") << "};\n  enum class Out : std::uint8_t {";
    for (std::size_t i = 0; i < s.outputs.size(); ++i) o << (i ? ", " : " ") << ident(s.outputs[i].name);
    o << (s.outputs.empty() ? "" : " ") << "};\n";
    std::set<std::string> aliases;
    for (const auto& a : s.attrs)
      if (a.type == AttrType::ENUM) {
        std::string e = enum_name(s, a);
        if (aliases.insert(camel(a.name)).second) o << "  using " << camel(a.name) << " = ops::" << e << ";\n";
      }
    for (std::size_t i = 0; i < s.attrs.size(); ++i) {
      const AttrSpec& a = s.attrs[i];
      std::string t = value_type(a, enum_name(s, a));
      bool opt = !a.default_value.has_value();
      o << "  static " << (opt ? "std::optional<" + t + ">" : t) << " " << ident(a.name)
        << "(const Node& n) { return detail::" << (opt ? "get_opt" : "get") << "<" << t << ">(n, kIndex, " << i
        << "); }" << (a.required ? "  // required" : "") << "\n";
    }
    o << "};\n";
    for (bool in : {true, false}) {
      o << "template <>\nstruct PortTraits<" << st << "::" << (in ? "In" : "Out") << "> {\n  using Op = " << st
        << ";\n  static constexpr bool kInput = " << (in ? "true" : "false") << ";\n"
        << "  static constexpr std::string_view kNames[] = {";
      std::size_t n = in ? s.inputs.size() : s.outputs.size();
      for (std::size_t i = 0; i < n; ++i) o << (i ? ", " : "") << quoted(in ? s.inputs[i].name : s.outputs[i].name);
      if (n == 0) o << "\"\"";  // no port: a placeholder (an empty enum has no value to index it)
      o << "};\n};\n";
    }
  }

  // 3. Shared port names.
  std::set<std::string> ins, outs;
  for (const OpSpec* s : specs) {
    for (const auto& p : s->inputs) ins.insert(std::string(p.name));
    for (const auto& p : s->outputs) outs.insert(std::string(p.name));
  }
  o << "\n// ---- port names shared by several ops (resolved by name on the node's op) ----\nnamespace in {\n";
  for (const auto& p : ins) o << "inline constexpr InName " << ident(p) << "{" << quoted(p) << "};\n";
  o << "}  // namespace in\nnamespace out {\n";
  for (const auto& p : outs) o << "inline constexpr OutName " << ident(p) << "{" << quoted(p) << "};\n";
  o << "}  // namespace out\n";

  // 4. Shared attribute accessors where every op declaring the name agrees.
  struct Sig {
    std::string type;
    bool opt = false;
    bool ok = true;
  };
  std::map<std::string, Sig> shared;
  std::vector<std::string> order;
  for (const OpSpec* s : specs)
    for (const auto& a : s->attrs) {
      Sig sig{value_type(a, a.type == AttrType::ENUM ? enum_name(*s, a) : ""), !a.default_value.has_value()};
      auto [it, fresh] = shared.emplace(std::string(a.name), sig);
      if (fresh) order.push_back(std::string(a.name));
      else if (it->second.type != sig.type || it->second.opt != sig.opt) it->second.ok = false;
    }
  o << "\n// ---- attribute accessors shared by every op that declares the attribute ----\n"
       "// (the node's op must declare it: std::logic_error otherwise)\nnamespace attr {\n";
  for (const auto& name : order) {
    const Sig& g = shared[name];
    if (!g.ok) continue;
    o << "inline " << (g.opt ? "std::optional<" + g.type + ">" : g.type) << " " << ident(name)
      << "(const Node& n) { return detail::" << (g.opt ? "get_opt_named" : "get_named") << "<" << g.type << ">(n, "
      << quoted(name) << "); }\n";
  }
  o << "}  // namespace attr\n\n}  // namespace opgraph::ops\n";
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "--write" && std::string(argv[1]) != "--check")) {
    std::cerr << "usage: gen_ops_header --write|--check <path to include/opgraph/ops.h>\n";
    return 2;
  }
  const std::string text = generate();
  const std::string path = argv[2];
  if (std::string(argv[1]) == "--write") {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return f ? 0 : 1;
  }
  std::ifstream f(path, std::ios::binary);
  std::stringstream have;
  have << f.rdbuf();
  if (have.str() == text) return 0;
  std::cerr << path << " is stale: an op record changed since it was generated. Regenerate it with\n"
            << "  gen_ops_header --write " << path << "\n";
  return 1;
}
