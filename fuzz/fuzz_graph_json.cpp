// Feeds arbitrary bytes to graph JSON deserialization, validation and
// re-serialization. Any crash, leak, hang or sanitizer report is a bug; every
// input it finds goes to tests/ir/test_fuzz_regressions.cpp.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "opgraph/op_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto g = opgraph::OpGraph::deserialize(text);
  if (!g) return 0;
  if (g->validate().is_good()) {
    auto s = g->serialize();
    if (s) {
      auto g2 = opgraph::OpGraph::deserialize(s.value());
      if (!g2) __builtin_trap();  // our own canonical output must load back
      if (g2->serialize().value() != s.value()) __builtin_trap();  // round trip is identity
    }
  }
  return 0;
}
