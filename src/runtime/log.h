// runtime/log.h — graded debug output of the runtime layer, on stderr.
//
// OPGRAPH_LOG_LEVEL (read once per process): 0 (default) silent; 1 libraries
// loaded and cache decisions; 2 also the specialised NVRTC source and the
// compile log of every compile.
#pragma once

#include <string_view>

namespace opgraph::runtime {

int log_level() noexcept;
// Writes "[opgraph] <text>\n" to stderr when log_level() >= level.
void log(int level, std::string_view text);

}  // namespace opgraph::runtime
