// tests/ir/op_test_util.h — checks shared by the per-op IR tests (norm, conv):
// a JSON round trip that must be the identity with a stable key, and a refusal
// at validate() whose message names op, node, port/attribute, tensor and rule.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opgraph/op_graph.h"

namespace opgraph::test {

// validate → serialize → deserialize → serialize identical; same key; the copy validates.
inline void expect_round_trip(OpGraph& g) {
  Status v = g.validate();
  ASSERT_TRUE(v.is_good()) << v.to_string();
  auto s1 = g.serialize();
  ASSERT_TRUE(s1.is_good()) << s1.status().to_string();
  auto g2 = OpGraph::deserialize(s1.value());
  ASSERT_TRUE(g2.is_good()) << g2.status().to_string();
  auto s2 = g2->serialize();
  ASSERT_TRUE(s2.is_good());
  EXPECT_EQ(s1.value(), s2.value());
  EXPECT_EQ(g.key().value(), g2->key().value());
  Status v2 = g2->validate();
  ASSERT_TRUE(v2.is_good()) << v2.to_string();
  EXPECT_EQ(g2->serialize().value(), s1.value());
}

// validate() fails with `code` and a message holding every needle.
inline void expect_refused(OpGraph& g, ErrorCode code, const std::vector<std::string>& needles) {
  Status s = g.validate();
  ASSERT_EQ(s.code(), code) << s.to_string();
  for (const auto& n : needles) EXPECT_NE(s.message().find(n), std::string::npos) << "missing '" << n << "' in: " << s.message();
}

inline std::vector<std::int64_t> D(std::initializer_list<std::int64_t> d) { return d; }

}  // namespace opgraph::test
