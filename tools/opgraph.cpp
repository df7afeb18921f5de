// tools/opgraph.cpp — the `opgraph` command: dispatch to one file per subcommand.
//
// No command ends in an abort: whatever a command throws (std::bad_alloc from a
// buffer the machine cannot give, a std::length_error, anything else) becomes the
// one error line of cli_common.h and exit 1.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "cli_cache.h"
#include "cli_common.h"

namespace opgraph::cli {
int cmd_info(int argc, char** argv);
int cmd_plan(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_graph(int argc, char** argv);
int cmd_autotune(int argc, char** argv);
}  // namespace opgraph::cli

namespace {

int cmd_cache(int argc, char** argv) { return opgraph_cli_cache(argc, argv); }

// Every subcommand: its entry point (argv starts after the command's name) and its
// usage, which `opgraph --help` lists and `opgraph <command> --help` prints alone.
struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* usage;
};

constexpr Command kCommands[] = {
    {"info", opgraph::cli::cmd_info,
     "  info                                   devices, libraries, families and engines\n"},
    {"plan", opgraph::cli::cmd_plan,
     "  plan GRAPH.json [--modes A,FALLBACK] [--device DEV.json]\n"
     "                                         the ranked plan list: index, id, mode, workspace, name\n"},
    {"run", opgraph::cli::cmd_run,
     "  run GRAPH.json [--plan I | --engine ID [--knobs K=V,...]] [--iters N] [--seed S] [--modes ...]\n"
     "      [--max-bytes N]                    run a plan on random inputs, compare with the reference;\n"
     "                                         refuses to allocate more than N bytes (default 1G)\n"},
    {"autotune", opgraph::cli::cmd_autotune,
     "  autotune GRAPH.json [--top K] [--rounds N] [--seed S] [--modes ...] [--device DEV.json]\n"
     "      [--max-bytes N] [--no-record]      time the first K plans (default 4) on random inputs, select\n"
     "                                         the fastest and record it in the plan-choice file\n"},
    {"graph", opgraph::cli::cmd_graph,
     "  graph GRAPH.json --dot                 Graphviz of the graph, engine per node\n"},
    {"cache", cmd_cache,
     "  cache stats|list|prune|clear|warm ...  the compiled-kernel cache (opgraph cache --help)\n"},
};

bool is_help(const std::string& s) { return s == "-h" || s == "--help"; }

void usage() {
  std::fputs("usage: opgraph <command> [args]\n", stdout);
  for (const Command& c : kCommands) std::fputs(c.usage, stdout);
  std::fputs("  <command> --help                       that command's usage\n", stdout);
}

int dispatch(const std::string& cmd, int argc, char** argv) {
  if (is_help(cmd) || cmd == "help") {
    usage();
    return 0;
  }
  for (const Command& c : kCommands) {
    if (cmd != c.name) continue;
    // `opgraph <command> --help` (anywhere among its arguments): its usage, exit 0.
    // `cache` prints its own, which describes each subcommand.
    if (cmd != "cache") {
      for (int i = 2; i < argc; ++i) {
        if (!is_help(argv[i])) continue;
        std::printf("usage: opgraph %s", c.usage + 2);  // the table's line without its indent
        return 0;
      }
    }
    return c.run(argc - 2, argv + 2);
  }
  return opgraph::cli::fail(cmd, "unknown command '" + opgraph::cli::clip(cmd) + "' (try: opgraph --help)", 2);
}

// Called from a catch handler: the exception in flight as the one error line, exit 1.
int report_exception(const char* cmd) noexcept {
  try {
    try {
      throw;
    } catch (const std::bad_alloc&) {
      return opgraph::cli::fail(cmd, "out of memory: an allocation failed (`run` refuses what exceeds --max-bytes "
                                     "before it allocates; other commands have no cap)");
    } catch (const std::exception& e) {
      return opgraph::cli::fail(cmd, std::string("internal error: ") + e.what());
    } catch (...) {
      return opgraph::cli::fail(cmd, "internal error: an exception of unknown type");
    }
  } catch (...) {  // building the line itself failed
    std::fputs("opgraph: an error occurred and there was no memory left to describe it\n", stderr);
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  try {
    return dispatch(argv[1], argc, argv);
  } catch (...) {
    return report_exception(argv[1]);
  }
}
