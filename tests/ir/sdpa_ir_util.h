// Shared fixtures of the SDPA IR tests: one valid base graph per op that a test
// tweaks (replace a tensor, set an attribute, bind an optional port) before the
// node is added, and a checker that an error names op, node, where and rule.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "opgraph/op_graph.h"

namespace sdpa_test {

using namespace opgraph;
using D = std::vector<std::int64_t>;

// Forward base: b = 2, h_q = 4, h_k = 2, h_v = 1 (GQA + MQA), s_q = 8, s_kv = 12, d_qk = 16, d_v = 8.
struct Fwd {
  OpGraph g;
  TensorPtr q, k, v;
  SdpaInputs in;
  Attributes a;
  SdpaOutputs out;
  explicit Fwd(DataType t = DataType::HALF) {
    g.set_io_data_type(DataType::HALF).set_compute_data_type(DataType::FLOAT);
    q = g.tensor({2, 4, 8, 16}, t, "q");
    k = g.tensor({2, 2, 12, 16}, t, "k");
    v = g.tensor({2, 1, 12, 8}, t, "v");
    a.set_name("attn");
  }
  TensorPtr seq_lens(const char* name, DataType t = DataType::INT32) { return g.tensor({2, 1, 1, 1}, t, name); }
  void padding() {
    a.set("use_padding_mask", true);
    in.seq_len_q = seq_lens("sq");
    in.seq_len_kv = seq_lens("skv");
  }
};

// Backward base: the forward's geometry plus O, dO [2, 4, 8, 8] and Stats [2, 4, 8, 1] FLOAT.
struct Bwd {
  OpGraph g;
  TensorPtr q, k, v, o, dO, stats;
  SdpaBackwardInputs in;
  Attributes a;
  SdpaBackwardOutputs out;
  explicit Bwd(DataType t = DataType::HALF, DataType o_type = DataType::NOT_SET) {
    if (o_type == DataType::NOT_SET) o_type = t;
    g.set_io_data_type(DataType::HALF).set_compute_data_type(DataType::FLOAT);
    q = g.tensor({2, 4, 8, 16}, t, "q");
    k = g.tensor({2, 2, 12, 16}, t, "k");
    v = g.tensor({2, 1, 12, 8}, t, "v");
    o = g.tensor({2, 4, 8, 8}, o_type, "o");
    dO = g.tensor({2, 4, 8, 8}, o_type, "dO");
    stats = g.tensor({2, 4, 8, 1}, DataType::FLOAT, "stats");
    a.set_name("attn_bwd");
  }
};

inline TensorPtr scalar(OpGraph& g, const char* name, DataType t = DataType::FLOAT) {
  return g.tensor({1, 1, 1, 1}, t, name);
}

// The status is `code` and its message names the op, node, `where` (e.g.
// "port Bias (tensor 'bias')" or "attribute 'dropout_probability'") and "rule <rule>".
inline void expect_refused(const Status& s, ErrorCode code, const std::string& op, const std::string& node,
                           const std::string& where, const std::string& rule) {
  ASSERT_TRUE(s.is_bad()) << "expected rule " << rule;
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const std::string& part : {"op '" + op + "'", "node '" + node + "'", where, "rule " + rule})
    EXPECT_NE(s.message().find(part), std::string::npos) << "missing '" << part << "' in: " << s.message();
}

// serialize -> deserialize -> serialize is the identity, and the copy validates.
inline void expect_round_trip(OpGraph& g) {
  auto j = g.serialize();
  ASSERT_TRUE(j.is_good()) << j.status().to_string();
  auto g2 = OpGraph::deserialize(*j);
  ASSERT_TRUE(g2.is_good()) << g2.status().to_string();
  auto j2 = g2->serialize();
  ASSERT_TRUE(j2.is_good());
  EXPECT_EQ(*j, *j2);
  EXPECT_TRUE(g2->validate().is_good());
  EXPECT_EQ(g.key().value(), g2->key().value());
}

}  // namespace sdpa_test
