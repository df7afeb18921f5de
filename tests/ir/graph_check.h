// tests/ir/graph_check.h — helpers the op-group IR tests share: the JSON round trip
// (serialize → deserialize → serialize identical, same key) and the shape of a
// refusal (code plus the op, node, port/attribute, tensor and rule in the message).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opgraph/op_graph.h"

namespace opgraph::testing {

// Validates g, then checks the canonical-JSON round trip and that the copy validates too.
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

// validate() refuses g with `code`, and the message holds every fragment.
inline void expect_refused(OpGraph& g, ErrorCode code, const std::vector<std::string>& fragments) {
  Status s = g.validate();
  ASSERT_EQ(s.code(), code) << s.to_string();
  for (const auto& f : fragments) EXPECT_NE(s.message().find(f), std::string::npos) << "missing '" << f << "' in: " << s.message();
}

}  // namespace opgraph::testing
