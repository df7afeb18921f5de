// runtime/log.cpp — OPGRAPH_LOG_LEVEL and the stderr sink.
#include "runtime/log.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace opgraph::runtime {

int log_level() noexcept {
  static const int level = [] {
    const char* v = std::getenv("OPGRAPH_LOG_LEVEL");
    return v ? std::atoi(v) : 0;
  }();
  return level;
}

void log(int level, std::string_view text) {
  if (log_level() < level) return;
  std::string line = "[opgraph] ";
  line.append(text);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace opgraph::runtime
