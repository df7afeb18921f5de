// tests/cudnn/test_cudnn_norm_phase.cpp — the cuDNN lowering reads a norm's
// forward_phase the way the IR does. The record has no default for it (it is
// required); the IR's conditional outputs (MEAN / INV_VARIANCE) treat an unset
// phase as not training, and the lowering must set NORM_FWD_PHASE the same way
// rather than keep a default of its own.
#include <gtest/gtest.h>

#include "cudnn/cudnn_test_util.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using namespace cudnn_test;
using engines::cudnn::lower;

// The IR's reading: the record's MEAN output is produced only in training.
bool ir_says_training(const Node& n) {
  int mean = n.spec().output_index("MEAN");
  return n.spec().outputs[static_cast<std::size_t>(mean)].present(n);
}

std::int64_t lowered_phase(const Graph& g) {
  auto p = lower(g);
  EXPECT_TRUE(p.is_good()) << p.status().to_string();
  if (!p.is_good()) return -1;
  auto ops = of_type(*p, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR);
  EXPECT_EQ(ops.size(), 1u);
  return ops.empty() ? -1 : int_of(*ops[0], CUDNN_ATTR_OPERATION_NORM_FWD_PHASE);
}

TEST(CudnnNormPhase, LoweredPhaseAgreesWithTheIrForEverySettingOfForwardPhase) {
  for (const char* phase : {"TRAINING", "INFERENCE", ""}) {
    Graph g;
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto x = g.tensor({4, 8, 3}, DataType::FLOAT, "x");
    auto s = g.tensor({1, 8, 3}, DataType::FLOAT, "s");
    auto b = g.tensor({1, 8, 3}, DataType::FLOAT, "b");
    const bool set = *phase != '\0';
    auto [y, mean, inv] = g.layernorm(x, s, b, g.tensor_scalar(1e-5),
                                      Attributes().set_name("ln").set("forward_phase", set ? phase : "TRAINING"));
    y->set_output(true);
    if (mean) mean->set_output(true);
    if (inv) inv->set_output(true);
    ASSERT_TRUE(g.validate().is_good());
    const Node& n = *g.nodes().front();
    // Unset: the phase is required, so no valid graph lacks it; a node that lost it
    // after validation is where the two readers could part.
    if (!set) const_cast<Node&>(n).set_attributes(Attributes());
    const bool training = ir_says_training(n);
    EXPECT_EQ(training, std::string(phase) == "TRAINING") << "phase '" << phase << "'";
    EXPECT_EQ(lowered_phase(g), training ? CUDNN_NORM_FWD_TRAINING : CUDNN_NORM_FWD_INFERENCE)
        << "phase '" << phase << "': the lowering must read forward_phase as the IR does";
  }
}

}  // namespace
}  // namespace opgraph
