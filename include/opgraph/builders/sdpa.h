// opgraph/builders/sdpa.h — builders of the captured SDPA family (records in
// src/ir/ops/sdpa.cpp and sdpa_fp8.cpp): sdpa, sdpa_backward, sdpa_fp8,
// sdpa_fp8_backward, sdpa_mxfp8, sdpa_mxfp8_backward.
//
// Port names are cudnn-frontend's (Q, K, V, Attn_scale, Bias, SEQ_LEN_Q, ...).
// Optional inputs travel in a typed struct (a null member leaves the port
// unbound); attributes (generate_stats, use_causal_mask, dropout_probability, ...)
// in the Attributes bag. Outputs come back in a struct whose member is nullptr
// when the node does not produce that conditional output (Stats only with
// generate_stats, dBias only with a Bias and dbias = true, ...).
//
// Layout contract: Q [b, h_q, s_q, d_qk], K [b, h_k, s_kv, d_qk], V [b, h_v, s_kv, d_v],
// O [b, h_q, s_q, d_v]; dims in BHSD order, strides carry the memory layout (BSHD
// etc.), the last stride is 1. Paged K/V are caches [num_blocks, h, block_size, d].
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

// Optional inputs of the forward ops (sdpa, sdpa_fp8, sdpa_mxfp8).
struct SdpaInputs {
  TensorPtr attn_scale;      // Attn_scale: one FLOAT element (alternative to the attn_scale attribute)
  TensorPtr bias;            // Bias: broadcastable to [b, h_q, s_q, s_kv]
  TensorPtr seq_len_q;       // SEQ_LEN_Q: [b, 1, 1, 1] INT32/INT64 (use_padding_mask)
  TensorPtr seq_len_kv;      // SEQ_LEN_KV: [b, 1, 1, 1] INT32/INT64 (use_padding_mask)
  TensorPtr seed;            // Seed: one INT32/INT64 element (dropout_probability > 0)
  TensorPtr offset;          // Offset: one INT32/INT64 element (dropout_probability > 0)
  TensorPtr dropout_mask;    // Dropout_mask: broadcastable to [b, h_q, s_q, s_kv] (user dropout)
  TensorPtr dropout_scale;   // Dropout_scale: one FLOAT element (user dropout)
  TensorPtr page_table_k;    // Page_table_K: [b, 1, pages, 1] INT32 (paged K)
  TensorPtr page_table_v;    // Page_table_V: [b, 1, pages, 1] INT32 (paged V)
  TensorPtr block_mask;      // Block_mask: one flag per 128x128 tile (sdpa only, UNIFIED)
  TensorPtr sink_token;      // SINK_TOKEN: [1, h_q, 1, 1]
};

// Optional inputs of the backward ops.
struct SdpaBackwardInputs {
  TensorPtr attn_scale, bias, seq_len_q, seq_len_kv, seed, offset, dropout_mask, dropout_scale;
  TensorPtr dropout_scale_inv;  // Dropout_scale_inv: one FLOAT element (user dropout)
  TensorPtr sink_token;
};

struct SdpaOutputs {
  TensorPtr O;         // [b, h_q, s_q, d_v]
  TensorPtr Stats;     // [b, h_q, s_q, 1] FLOAT log-sum-exp per row (generate_stats)
  TensorPtr Max;       // [b, h_q, s_q, 1] FLOAT row max (score_max)
  TensorPtr Sum_exp;   // [b, h_q, s_q, 1] FLOAT sum of exp(s - max) (score_sum_exp)
  TensorPtr RNG_DUMP;  // [b, h_q, s_q, s_kv] FLOAT dropout mask drawn (rng_dump)
  TensorPtr Amax_S;    // [1, 1, 1, 1] FLOAT (sdpa_fp8 only)
  TensorPtr Amax_O;    // [1, 1, 1, 1] FLOAT (sdpa_fp8, sdpa_mxfp8)
};

struct SdpaBackwardOutputs {
  TensorPtr dQ, dK, dV;  // dims of Q, K, V
  TensorPtr dBias;       // dims of Bias (sdpa_backward with Bias and dbias = true)
  TensorPtr RNG_DUMP;    // sdpa_backward with rng_dump
  TensorPtr DSINK_TOKEN; // [1, h_q, 1, 1] FLOAT (SINK_TOKEN and dsink_token = true)
  TensorPtr Amax_dQ, Amax_dK, Amax_dV;  // fp8 / mxfp8 backward
  TensorPtr Amax_dP;                    // sdpa_fp8_backward only
};

// Per-tensor fp8 scales of sdpa_fp8: one FLOAT element each.
struct SdpaFp8Scales {
  TensorPtr descale_q, descale_k, descale_v, descale_s, scale_s, scale_o;
};
// Per-tensor fp8 scales of sdpa_fp8_backward: one FLOAT element each; dO_f16 is
// an optional high-precision copy of dO for the softmax-gradient row sums.
struct SdpaFp8BackwardScales {
  TensorPtr descale_q, descale_k, descale_v, descale_o, descale_dO, descale_s, descale_dP;
  TensorPtr scale_s, scale_dQ, scale_dK, scale_dV, scale_dP;
  TensorPtr dO_f16;
};
// MXFP8 block scales (FP8_E8M0, F8_128x4) of sdpa_mxfp8.
struct SdpaMxfp8Scales {
  TensorPtr descale_q, descale_k, descale_v;
};
// MXFP8 backward operands: transposed-quantized copies (blocks along s instead
// of d) of Q, K and dO, and every block scale.
struct SdpaMxfp8BackwardOperands {
  TensorPtr q_t, k_t, dO_t;
  TensorPtr descale_q, descale_q_t, descale_k, descale_k_t, descale_v, descale_dO, descale_dO_t;
};

class SdpaBuilders : public virtual NodeSink {
 public:
  SdpaOutputs sdpa(TensorPtr q, TensorPtr k, TensorPtr v, const Attributes& attrs = {},
                   const SdpaInputs& in = {});
  SdpaBackwardOutputs sdpa_backward(TensorPtr q, TensorPtr k, TensorPtr v, TensorPtr o, TensorPtr dO,
                                    TensorPtr stats, const Attributes& attrs = {},
                                    const SdpaBackwardInputs& in = {});
  SdpaOutputs sdpa_fp8(TensorPtr q, TensorPtr k, TensorPtr v, const SdpaFp8Scales& scales,
                       const Attributes& attrs = {}, const SdpaInputs& in = {});
  SdpaBackwardOutputs sdpa_fp8_backward(TensorPtr q, TensorPtr k, TensorPtr v, TensorPtr o, TensorPtr dO,
                                        TensorPtr stats, const SdpaFp8BackwardScales& scales,
                                        const Attributes& attrs = {}, const SdpaBackwardInputs& in = {});
  SdpaOutputs sdpa_mxfp8(TensorPtr q, TensorPtr k, TensorPtr v, const SdpaMxfp8Scales& scales,
                         const Attributes& attrs = {}, const SdpaInputs& in = {});
  SdpaBackwardOutputs sdpa_mxfp8_backward(TensorPtr q, TensorPtr k, TensorPtr v, TensorPtr o, TensorPtr dO,
                                          TensorPtr stats, const SdpaMxfp8BackwardOperands& ops,
                                          const Attributes& attrs = {}, const SdpaBackwardInputs& in = {});
};

}  // namespace opgraph
