// `opgraph run`'s random inputs (tools/cli_inputs.h): delta-rule ops get inputs that
// keep the recurrence contractive. With uniform [-1, 1] gates and betas the gdn
// example grew like e^T and the H200 engine and the float64 reference differed by
// 1e3 in bf16 — a fault of the inputs, not of either engine.
#include <gtest/gtest.h>

#include <cmath>

#include "cli_inputs.h"
#include "cli_layout.h"
#include "opgraph/builders/linear_attention.h"
#include "opgraph/reference.h"

namespace opgraph::cli {
namespace {

struct Drawn {
  double min = 1e300, max = -1e300;
};

// Every input value of the tensor named `name`, as make_buffers drew it.
Drawn range_of(const std::vector<HostTensor>& bufs, const std::string& name) {
  Drawn d;
  for (const auto& h : bufs) {
    if (h.tensor->get_name() != name) continue;
    const std::int64_t n = h.tensor->element_count();
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = read_element(h.bytes.data(), i, h.tensor->get_data_type());
      d.min = std::min(d.min, v);
      d.max = std::max(d.max, v);
    }
  }
  return d;
}

std::vector<HostTensor> gdn_inputs(Attributes attrs, std::uint64_t seed) {
  OpGraph g;  // the buffers hold shared pointers to its tensors
  g.set_io_data_type(DataType::BFLOAT16).set_compute_data_type(DataType::FLOAT);
  const std::int64_t T = 40, H = 4, K = 64, N = 3;
  DeltaRuleInputs in;
  in.q = g.tensor({T, H, K}, DataType::BFLOAT16, "q");
  in.k = g.tensor({T, H, K}, DataType::BFLOAT16, "k");
  in.v = g.tensor({T, H, K}, DataType::BFLOAT16, "v");
  in.g = g.tensor({T, H}, DataType::FLOAT, "g");
  in.beta = g.tensor({T, H}, DataType::BFLOAT16, "beta");
  in.cu_seqlens = g.tensor({N + 1}, DataType::INT32, "cu_seqlens");
  auto out = g.gdn(in, attrs.set_name("gdn"));
  out.o->set_output(true).set_name("o");
  EXPECT_TRUE(g.validate().is_good());
  auto layout = layout_buffers(g);
  EXPECT_TRUE(layout.is_good());
  return make_buffers(g, *layout, seed);
}

TEST(CliInputs, DeltaRuleGatesBetasAndKeysKeepTheRecurrenceContractive) {
  for (std::uint64_t seed : {0u, 1u, 7u}) {
    auto b = gdn_inputs(Attributes(), seed);
    const Drawn g = range_of(b, "g"), beta = range_of(b, "beta"), k = range_of(b, "k"), v = range_of(b, "v");
    EXPECT_GE(g.min, -1.0);
    EXPECT_LT(g.max, 0.0);  // a log-domain decay: e^g < 1
    EXPECT_GE(beta.min, 0.0);
    EXPECT_LE(beta.max, 1.0);
    EXPECT_LE(std::max(-k.min, k.max), 1.0 / 8.0 + 1e-3);  // 1/sqrt(64), bf16-rounded
    EXPECT_GT(v.max, 0.5);                                 // other inputs keep [-1, 1]
    EXPECT_LT(v.min, -0.5);
  }
}

TEST(CliInputs, TheRangesFollowTheAttributesThatMapTheValues) {
  auto lin = gdn_inputs(Attributes().set("gate_domain", std::string("linear")), 3);
  EXPECT_GE(range_of(lin, "g").min, std::exp(-1.0) - 1e-6);
  EXPECT_LE(range_of(lin, "g").max, 1.0);
  // safe_gate, a sigmoid beta and l2-normalised keys take any value: the plain range.
  auto mapped = gdn_inputs(
      Attributes().set("safe_gate", true).set("use_beta_sigmoid", true).set("use_qk_l2norm", true), 3);
  EXPECT_GT(range_of(mapped, "g").max, 0.5);
  EXPECT_LT(range_of(mapped, "beta").min, -0.5);
  EXPECT_GT(range_of(mapped, "k").max, 0.5);
}

}  // namespace
}  // namespace opgraph::cli
