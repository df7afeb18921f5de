// tests/ir/op_test_util.h — the norm/conv IR tests' spelling of the shared checks
// in graph_check.h (one implementation; this header only re-exports it).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "graph_check.h"

namespace opgraph::test {
using opgraph::testing::expect_refused;
using opgraph::testing::expect_round_trip;

// Dims literal: D({2, 3, 4}).
inline std::vector<std::int64_t> D(std::initializer_list<std::int64_t> d) { return d; }
}  // namespace opgraph::test
