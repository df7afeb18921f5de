// tools/cli_cache.h — `opgraph cache ...`, implemented by the runtime layer in
// tools/cli_cache.cpp (stats|list|prune|clear|warm). argv starts after "cache".
// When that file is not in the tree, the tool reports the subcommand as not built.
// Returns the exit status: 0 success, 1 failure, 2 usage error.
#pragma once

int opgraph_cli_cache(int argc, char** argv);
