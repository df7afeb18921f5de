// tools/opgraph.cpp — the `opgraph` command: dispatch to one file per subcommand.
#include <cstdio>
#include <string>

#include "cli_cache.h"
#include "cli_common.h"

namespace opgraph::cli {
int cmd_info(int argc, char** argv);
int cmd_plan(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_graph(int argc, char** argv);
}  // namespace opgraph::cli

namespace {

void usage() {
  std::fputs(
      "usage: opgraph <command> [args]\n"
      "  info                                   devices, libraries, families and engines\n"
      "  plan GRAPH.json [--modes A,FALLBACK] [--device DEV.json]\n"
      "                                         the ranked plan list: index, id, mode, workspace, name\n"
      "  run GRAPH.json [--plan I | --engine ID [--knobs K=V,...]] [--iters N] [--seed S] [--modes ...]\n"
      "                                         run a plan on random inputs, compare with the reference\n"
      "  graph GRAPH.json --dot                 Graphviz of the graph, engine per node\n"
      "  cache stats|list|prune|clear|warm ...  the compiled-kernel cache\n",
      stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage();
    return 0;
  }
  if (cmd == "info") return opgraph::cli::cmd_info(argc - 2, argv + 2);
  if (cmd == "plan") return opgraph::cli::cmd_plan(argc - 2, argv + 2);
  if (cmd == "run") return opgraph::cli::cmd_run(argc - 2, argv + 2);
  if (cmd == "graph") return opgraph::cli::cmd_graph(argc - 2, argv + 2);
  if (cmd == "cache") {
#ifdef OPGRAPH_HAVE_CLI_CACHE
    return opgraph_cli_cache(argc - 2, argv + 2);
#else
    return opgraph::cli::fail("cache", "not built: the runtime layer's compiled-kernel cache is not in this build");
#endif
  }
  return opgraph::cli::fail(cmd, "unknown command '" + cmd + "' (try: opgraph --help)", 2);
}
