// ir/codegen/gen_ops_header.cpp — writes include/opgraph/ops.h and its parts
// include/opgraph/ops/*.h from the op registry.
//
//   gen_ops_header --write include/opgraph/ops.h   regenerate after changing an op record
//   gen_ops_header --check include/opgraph/ops.h   exit 1 (with a diff hint) when a file is stale
//
// ops.h includes the parts, so including it gives every declaration: ops/enums.h
// (the enum attribute domains), one part per op group of the registry
// (src/ir/ops/groups.h, in registry order: ops/pointwise.h, ops/matmul.h, ..)
// and ops/shared.h (the shared port names and attribute accessors). The parts
// sit in the directory ops/ beside the ops.h path given.
//
// The records in src/ir/ops/* are the only source: per op a struct with the port
// enums (positions in the record), the enum attribute domains and one typed
// accessor per attribute (the record's default when unset; std::optional when the
// record has none). Shared forms for code that serves several ops: ops::in::X /
// ops::out::Y port names and ops::attr::name(node) accessors (only where every op
// declaring the attribute agrees on its type, domain and whether it has a default).
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "ir/ops/groups.h"
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

// The op groups of the registry, in its order (registry.cpp concatenates them
// so): each group's structs go to ops/<file>.h.
struct Group {
  const char* file;
  const char* what;
  std::span<const OpSpec> specs;
};

std::vector<Group> groups() {
  namespace g = opgraph::ops;
  return {{"pointwise", "pointwise", g::pointwise_specs()},
          {"matmul", "matmul", g::matmul_specs()},
          {"tensor_ops", "tensor (reduction, rng, layout, resampling, masking, paged cache, block scale)",
           g::tensor_op_specs()},
          {"norm", "normalisation", g::norm_specs()},
          {"conv", "convolution", g::conv_specs()},
          {"sdpa", "scaled dot-product attention", g::sdpa_specs()},
          {"linear_attention", "linear attention", g::linear_attention_specs()}};
}

const char* const kPartIncludes = "#pragma once\n\n#include \"opgraph/ops/enums.h\"\n\nnamespace opgraph::ops {\n";

// The files, by path relative to include/opgraph/: ops.h and its parts.
std::map<std::string, std::string> generate() {
  auto specs = opgraph::all_op_specs();
  std::map<std::string, std::string> files;
  const std::vector<Group> gs = groups();
  {
    std::size_t at = 0;
    for (const Group& g : gs)
      for (const OpSpec& s : g.specs)
        if (at >= specs.size() || specs[at++] != &s) {
          std::cerr << "gen_ops_header: the registry's order is not its groups' (src/ir/ops/registry.cpp, groups())\n";
          std::exit(1);
        }
    if (at != specs.size()) {
      std::cerr << "gen_ops_header: an op outside the groups (src/ir/ops/groups.h)\n";
      std::exit(1);
    }
  }
  // Enum domains: named after the attribute, unless ops disagree on the domain of
  // an attribute of that name: then after op + attribute.
  std::map<std::string, std::set<std::string>> domains_by_attr;
  for (const OpSpec* s : specs)
    for (const auto& a : s->attrs)
      if (a.type == AttrType::ENUM) domains_by_attr[std::string(a.name)].insert(domain_key(a));
  auto enum_name = [&](const OpSpec& s, const AttrSpec& a) {
    return domains_by_attr[std::string(a.name)].size() == 1 ? camel(a.name) : camel(s.name) + camel(a.name);
  };

  const std::string banner =
      "GENERATED from the op registry (src/ir/ops/*) by\n"
      "// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then\n"
      "//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h\n"
      "// The test ops_header_generated fails when this file is not what the generator writes.\n";
  {
    std::ostringstream o;
    o << "// opgraph/ops.h — " << banner
      << "//\n"
         "// Per op (registry order): a struct with kIndex (its position in all_op_specs()),\n"
         "// kName, the port enums In / Out (record positions; Node::input / output /\n"
         "// inputs_of take them), the enum attribute domains it uses and one accessor per\n"
         "// attribute: the value as set, else the record's default (std::optional when\n"
         "// the record has no default). Then the shared forms: ops::in / ops::out port\n"
         "// names and ops::attr accessors. Support code: opgraph/op_typed.h.\n"
         "//\n"
         "// The declarations are in parts, included here: ops/enums.h (the enum\n"
         "// attribute domains), one part per op group (ops/<group>.h, registry order)\n"
         "// and ops/shared.h (the shared port names and attribute accessors).\n"
         "#pragma once\n\n"
         "#include \"opgraph/ops/enums.h\"\n";
    for (const Group& g : gs) o << "#include \"opgraph/ops/" << g.file << ".h\"\n";
    o << "#include \"opgraph/ops/shared.h\"\n";
    files["ops.h"] = o.str();
  }

  std::ostringstream o;
  o << "// opgraph/ops/enums.h — " << banner
    << "// Part of opgraph/ops.h (include that): the enum attribute domains.\n"
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

  o << "\n}  // namespace opgraph::ops\n";
  files["ops/enums.h"] = o.str();

  // 2. One struct per op, a part per group.
  std::size_t idx = 0;
  for (const Group& g : gs) {
    o.str("");
    o << "// opgraph/ops/" << g.file << ".h — " << banner << "// Part of opgraph/ops.h (include that): the " << g.what
      << " ops.\n" << kPartIncludes;
    o << "\n// ---- " << g.what << " ops ----\n";
    for (const OpSpec& s : g.specs) {
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
      ++idx;
    }
    o << "\n}  // namespace opgraph::ops\n";
    files["ops/" + std::string(g.file) + ".h"] = o.str();
  }

  // 3. Shared port names.
  std::set<std::string> ins, outs;
  for (const OpSpec* s : specs) {
    for (const auto& p : s->inputs) ins.insert(std::string(p.name));
    for (const auto& p : s->outputs) outs.insert(std::string(p.name));
  }
  o.str("");
  o << "// opgraph/ops/shared.h — " << banner
    << "// Part of opgraph/ops.h (include that): the port names and attribute accessors\n"
       "// shared by several ops.\n"
    << kPartIncludes;
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
  files["ops/shared.h"] = o.str();
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "--write" && std::string(argv[1]) != "--check")) {
    std::cerr << "usage: gen_ops_header --write|--check <path to include/opgraph/ops.h>\n";
    return 2;
  }
  const std::map<std::string, std::string> files = generate();
  const std::filesystem::path path = argv[2];
  // ops.h is the path given; its parts are ops/*.h beside it.
  auto target = [&](const std::string& name) { return name == "ops.h" ? path : path.parent_path() / name; };
  if (std::string(argv[1]) == "--write") {
    std::filesystem::create_directories(path.parent_path() / "ops");
    for (const auto& f : files) {
      std::ofstream out(target(f.first), std::ios::binary);
      out << f.second;
      if (!out) {
        std::cerr << "gen_ops_header: cannot write " << target(f.first).string() << "\n";
        return 1;
      }
    }
    return 0;
  }
  int stale = 0;
  for (const auto& f : files) {
    std::ifstream in(target(f.first), std::ios::binary);
    std::stringstream have;
    have << in.rdbuf();
    if (in && have.str() == f.second) continue;
    std::cerr << target(f.first).string() << " is stale: an op record changed since it was generated.\n";
    stale = 1;
  }
  if (stale) std::cerr << "Regenerate with\n  gen_ops_header --write " << path.string() << "\n";
  return stale;
}
