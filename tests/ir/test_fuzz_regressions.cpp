// tests/ir/test_fuzz_regressions.cpp — inputs of the fuzz targets replayed at the IR
// layer: each holds fuzz/fuzz_graph_json.cpp's invariant (deserialize; if it
// validates, serialize, load back, serialize identically) and never crashes.
// Inputs that need planning or execute live in
// tests/exec/test_fuzz_execute_regressions.cpp (test_ir links the IR only).
#include <gtest/gtest.h>

#include <string>

#include "opgraph/op_graph.h"

namespace opgraph {
namespace {

// fuzz_graph_json's checks, as expectations. Returns whether the graph validated.
bool holds_json_invariant(const std::string& text) {
  auto g = OpGraph::deserialize(text);
  if (!g) return false;
  if (g->validate().is_bad()) return false;
  auto s = g->serialize();
  EXPECT_TRUE(s.is_good()) << s.status().to_string();
  if (!s) return true;
  auto g2 = OpGraph::deserialize(s.value());
  EXPECT_TRUE(g2.is_good()) << "our own canonical output must load back: " << g2.status().to_string();
  if (!g2) return true;
  auto s2 = g2->serialize();
  EXPECT_TRUE(s2.is_good());
  if (s2) {
    EXPECT_EQ(s2.value(), s.value()) << "the round trip must be the identity";
  }
  return true;
}

// A matmul whose A declares strides (2^64 + 5) / 7: seven of them wrap int64 to 5
// (a span overflow a fuzzer found; execute side in tests/exec/). Whether validate
// refuses it (an overflow rule) or accepts it, the JSON layer must hold, and an
// accepted graph must round-trip the stride exactly.
TEST(FuzzRegressions, WrappingStrideRoundTripsOrIsRefused) {
  const std::string big = "2635249153387078803";
  const std::string json =
      R"({"context":{"compute_data_type":"FLOAT","intermediate_data_type":"NOT_SET","io_data_type":"HALF","name":"wrap"},)"
      R"("nodes":[{"attributes":{},"compute_data_type":"FLOAT","inputs":{"A":[1],"B":[2]},"name":"mm0","op":"matmul","outputs":{"C":3}}],)"
      R"("tensors":[{"alignment":16,"data_type":"HALF","dim":[1,8,1],"is_virtual":false,"name":"a","reordering_type":"NONE","stride":[)" +
      big + "," + big +
      R"(,1],"uid":1,"uid_by_user":false,"user_set":{"data_type":true,"dim":true,"stride":true}},)"
      R"({"alignment":16,"data_type":"HALF","dim":[1,1,2],"is_virtual":false,"name":"b","reordering_type":"NONE","stride":[2,2,1],"uid":2,"uid_by_user":false,"user_set":{"data_type":true,"dim":true,"stride":true}},)"
      R"({"alignment":16,"data_type":"HALF","dim":[1,8,2],"is_virtual":false,"name":"c","reordering_type":"NONE","stride":[16,2,1],"uid":3,"uid_by_user":false,"user_set":{"data_type":false,"dim":false,"stride":false}}],)"
      R"("version":1})";
  if (holds_json_invariant(json)) {
    auto g = OpGraph::deserialize(json);
    ASSERT_TRUE(g.is_good());
    ASSERT_TRUE(g->validate().is_good());
    EXPECT_NE(g->serialize().value().find(big), std::string::npos);
  }
}

}  // namespace
}  // namespace opgraph
