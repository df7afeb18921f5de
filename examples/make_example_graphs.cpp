// examples/make_example_graphs.cpp — writes the serialized example graphs that
// `opgraph plan` / `opgraph run` replay (examples/graphs/*.json).
//
// usage: make_example_graphs OUT_DIR
// Each graph is small enough for the CPU reference to run in well under a
// second, and shaped like the real workload it stands for (a transformer MLP
// up-projection, a pre-attention RMSNorm, a causal GQA prefill, a varlen GDN
// prefill). Regenerate after an IR change: the JSON is canonical.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "opgraph/op_graph.h"

using namespace opgraph;

namespace {

// y = gelu(x @ w + bias): [1, 32, 64] @ [1, 64, 48] + [1, 1, 48], bf16 io, fp32 compute.
void matmul_bias_gelu(OpGraph& g) {
  g.set_name("matmul_bias_gelu").set_io_data_type(DataType::BFLOAT16).set_intermediate_data_type(DataType::FLOAT);
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({1, 32, 64}, DataType::BFLOAT16, "x");
  auto w = g.tensor({1, 64, 48}, DataType::BFLOAT16, "w");
  auto bias = g.tensor({1, 1, 48}, DataType::BFLOAT16, "bias");
  auto y = g.gelu(g.add(g.matmul(x, w, Attributes().set_name("up")), bias, Attributes().set_name("bias_add")),
                  Attributes().set_name("gelu"));
  y->set_output(true).set_name("y").set_data_type(DataType::BFLOAT16);
}

// RMSNorm over the hidden axis of [8, 256, 1, 1] (cudnn's N, C, 1, 1 spelling), bf16 io.
void rmsnorm(OpGraph& g) {
  g.set_name("rmsnorm").set_io_data_type(DataType::BFLOAT16).set_intermediate_data_type(DataType::FLOAT);
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({8, 256, 1, 1}, DataType::BFLOAT16, "x");
  auto scale = g.tensor({1, 256, 1, 1}, DataType::BFLOAT16, "scale");
  auto eps = g.tensor_scalar(1e-5, DataType::FLOAT);
  auto out = g.rmsnorm(x, scale, eps, Attributes().set_name("rmsnorm").set("forward_phase", "INFERENCE"));
  out[0]->set_output(true).set_name("y");
}

// Causal GQA prefill: 8 query heads share 2 KV heads, b = 2, s = 32, d = 64, bf16,
// BSHD memory layout (dims stay BHSD; strides carry the layout), with Stats.
void sdpa_causal_gqa_prefill(OpGraph& g) {
  g.set_name("sdpa_causal_gqa_prefill").set_io_data_type(DataType::BFLOAT16);
  g.set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  const std::int64_t b = 2, hq = 8, hk = 2, s = 32, d = 64;
  auto bshd = [](std::int64_t h, std::int64_t seq, std::int64_t dd) {
    return std::vector<std::int64_t>{seq * h * dd, dd, h * dd, 1};
  };
  auto q = g.tensor({b, hq, s, d}, DataType::BFLOAT16, "q", bshd(hq, s, d));
  auto k = g.tensor({b, hk, s, d}, DataType::BFLOAT16, "k", bshd(hk, s, d));
  auto v = g.tensor({b, hk, s, d}, DataType::BFLOAT16, "v", bshd(hk, s, d));
  auto out = g.sdpa(q, k, v,
                    Attributes()
                        .set_name("attention")
                        .set("use_causal_mask", true)
                        .set("generate_stats", true)
                        .set("attn_scale", 0.125));
  out.O->set_output(true).set_name("o").set_stride(bshd(hq, s, d));
  out.Stats->set_output(true).set_name("stats").set_data_type(DataType::FLOAT);
}

// Gated DeltaNet prefill over 3 packed sequences (T = 40 tokens), 4 heads, K = V = 64
// (a head dim the linear_attention engine serves, so it plans first on an sm_90 GPU).
void gdn_prefill_varlen(OpGraph& g) {
  g.set_name("gdn_prefill_varlen").set_io_data_type(DataType::BFLOAT16).set_compute_data_type(DataType::FLOAT);
  const std::int64_t T = 40, H = 4, K = 64, V = 64, N = 3;
  DeltaRuleInputs in;
  in.q = g.tensor({T, H, K}, DataType::BFLOAT16, "q");
  in.k = g.tensor({T, H, K}, DataType::BFLOAT16, "k");
  in.v = g.tensor({T, H, V}, DataType::BFLOAT16, "v");
  in.g = g.tensor({T, H}, DataType::FLOAT, "g");
  in.beta = g.tensor({T, H}, DataType::BFLOAT16, "beta");
  in.cu_seqlens = g.tensor({N + 1}, DataType::INT32, "cu_seqlens");
  auto out = g.gdn(in, Attributes().set_name("gdn"));
  out.o->set_output(true).set_name("o");
}

// Gated DeltaNet prefill at K = V = 128 with l2norm and beta's sigmoid in the kernel: 2 packed sequences (T = 256),
// q / k 4 heads, v 16 (grouped), an initial state in and the final state out. On an sm_90 GPU its 32 (sequence, head)
// CTAs make the fused prefill rank first, and its declaration puts the fp16-inverse build (PIPELINE_ARCH 4) ahead
// of the fp32 one (rule f16_inverse_domain, docs/linear_attention.md).
void gdn_prefill_l2norm_sigmoid(OpGraph& g) {
  g.set_name("gdn_prefill_l2norm_sigmoid").set_io_data_type(DataType::BFLOAT16).set_compute_data_type(DataType::FLOAT);
  const std::int64_t T = 256, HQK = 4, HV = 16, D = 128, N = 2;
  DeltaRuleInputs in;
  in.q = g.tensor({T, HQK, D}, DataType::BFLOAT16, "q");
  in.k = g.tensor({T, HQK, D}, DataType::BFLOAT16, "k");
  in.v = g.tensor({T, HV, D}, DataType::BFLOAT16, "v");
  in.g = g.tensor({T, HV}, DataType::FLOAT, "g");
  in.beta = g.tensor({T, HV}, DataType::FLOAT, "b");  // logits: the kernel applies the sigmoid
  in.cu_seqlens = g.tensor({N + 1}, DataType::INT32, "cu_seqlens");
  in.initial_state = g.tensor({N, HV, D, D}, DataType::FLOAT, "initial_state");
  auto out = g.gdn(in, Attributes()
                           .set("use_qk_l2norm", true)
                           .set("use_beta_sigmoid", true)
                           .set("output_final_state", true)
                           .set_name("gdn"));
  out.o->set_output(true).set_name("o");
  out.final_state->set_output(true).set_name("final_state");
}

bool write(const std::string& dir, const std::string& name, const std::function<void(OpGraph&)>& make) {
  OpGraph g;
  make(g);
  if (Status s = g.validate(); s.is_bad()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), s.to_string().c_str());
    return false;
  }
  auto json = g.serialize();
  if (json.is_bad()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), json.status().to_string().c_str());
    return false;
  }
  std::ofstream f(dir + "/" + name + ".json");
  f << json.value() << "\n";
  if (!f) {
    std::fprintf(stderr, "%s: cannot write %s/%s.json\n", name.c_str(), dir.c_str(), name.c_str());
    return false;
  }
  std::printf("wrote %s/%s.json\n", dir.c_str(), name.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_example_graphs OUT_DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  bool ok = write(dir, "matmul_bias_gelu", matmul_bias_gelu);
  ok = write(dir, "rmsnorm", rmsnorm) && ok;
  ok = write(dir, "sdpa_causal_gqa_prefill", sdpa_causal_gqa_prefill) && ok;
  ok = write(dir, "gdn_prefill_varlen", gdn_prefill_varlen) && ok;
  ok = write(dir, "gdn_prefill_l2norm_sigmoid", gdn_prefill_l2norm_sigmoid) && ok;
  return ok ? 0 : 1;
}
