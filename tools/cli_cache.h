// tools/cli_cache.h — `opgraph cache ...` (stats|list|prune|clear|warm), in
// tools/cli_cache.cpp. argv starts after "cache".
// Returns the exit status: 0 success, 1 failure, 2 usage error.
#pragma once

int opgraph_cli_cache(int argc, char** argv);
