// runtime/kernel_sources.cpp — lookup in the generated table of embedded sources.
#include "runtime/kernel_sources.h"

#include <algorithm>

namespace opgraph::runtime {

const EmbeddedSource* find_embedded_source(std::string_view name) {
  auto all = embedded_sources();
  auto it = std::lower_bound(all.begin(), all.end(), name,
                             [](const EmbeddedSource& s, std::string_view n) { return s.name < n; });
  return it != all.end() && it->name == name ? &*it : nullptr;
}

}  // namespace opgraph::runtime
