// tools/cli_graph.cpp — `opgraph graph GRAPH.json --dot`: Graphviz of the graph.
//
// Tensors are ellipses (name, dims, dtype; virtual ones dashed), nodes are boxes
// (name, op, and the engine of the plan build_plans selects — one plan runs the
// whole graph, so every node shows the same engine; "none" when nothing builds).
#include <cstdio>
#include <map>

#include "cli_common.h"

namespace opgraph::cli {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

}  // namespace

int cmd_graph(int argc, char** argv) {
  const std::string cmd = "graph";
  auto args = parse_args(cmd, argc, argv, {"--modes", "--device"}, {"--dot"});
  if (!args) return 2;
  if (args->positional.size() != 1 || !args->has("--dot"))
    return fail(cmd, "usage: opgraph graph GRAPH.json --dot", 2);
  auto modes = parse_modes(cmd, args->get("--modes"));
  if (!modes) return 2;
  auto g = load_graph(cmd, args->positional[0]);
  if (!g) return 1;
  if (!apply_device(cmd, *args, *g)) return 1;
  std::string engine = "none";
  if (g->create_execution_plans(*modes).is_good() && g->build_plans().is_good())
    engine = g->get_plan_name_at_index(g->get_selected_plan_index().value()).value();
  std::printf("digraph \"%s\" {\n  rankdir=LR;\n", esc(g->context().name).c_str());
  std::map<const Tensor*, std::string> ids;
  for (const auto& t : g->tensors()) {
    std::string id = "t" + std::to_string(ids.size());
    ids[t.get()] = id;
    std::printf("  %s [shape=ellipse%s label=\"%s\\n%s %s\"];\n", id.c_str(), t->get_is_virtual() ? " style=dashed" : "",
                esc(t->get_name()).c_str(), dims_to_string(t->get_dim()).c_str(),
                std::string(to_string(t->get_data_type())).c_str());
  }
  int n = 0;
  for (const auto& node : g->nodes()) {
    std::string id = "n" + std::to_string(n++);
    std::printf("  %s [shape=box label=\"%s\\n%s\\nengine: %s\"];\n", id.c_str(), esc(node->name()).c_str(),
                std::string(node->op()).c_str(), esc(engine).c_str());
    for (const auto& port : node->inputs())
      for (const auto& t : port) std::printf("  %s -> %s;\n", ids[t.get()].c_str(), id.c_str());
    for (const auto& port : node->outputs())
      for (const auto& t : port) std::printf("  %s -> %s;\n", id.c_str(), ids[t.get()].c_str());
  }
  std::printf("}\n");
  return 0;
}

}  // namespace opgraph::cli
