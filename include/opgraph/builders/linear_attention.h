// opgraph/builders/linear_attention.h — builders of the linear_attention op group
// (records in src/ir/ops/linear_attention_specs.cpp, rules in linear_attention_rules.cpp).
//
// Engine-only ops (OpMechanism::ENGINE_ONLY, no cuDNN backend lowering): gated
// delta-rule linear attention over token-packed (THD) varlen sequences.
//
//   gdn   Gated DeltaNet          S_t = a_t (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T, a_t = exp(g_t) scalar
//   kda   Kimi Delta Attention    S_t = (I - beta_t k_t k_t^T) Diag(exp(g_t)) S_{t-1} + beta_t k_t v_t^T, g_t in R^K
//   gdn2  Gated DeltaNet-2        S_t = (I - k_t (b_t . k_t)^T) Diag(exp(g_t)) S_{t-1} + k_t (w_t . v_t)^T
//   gdp   Gated DeltaProduct      per token: S <- a_t S, then num_householder delta sub-steps (no decay)
//   o_t = scale * S_t^T q_t.  S is K x V; state tensors are V-major [.., V, K] and hold S^T.
//
// Ports (lowercase names as the seed and research spell them):
//   inputs   q [T, HQ, K]; k [T*n, HK, K]; v [T*n, HV, V]   (n = num_householder for gdp, else 1)
//            g [T, HO] (gdn, gdp) or [T, HO, K] (kda, gdn2) — ln(alpha), or alpha under gate_domain "linear",
//              or raw logits under safe_gate
//            beta [T*n, HO] (gdn, kda, gdp); gdn2: b [T, HO, K] (erase gate), w [T, HO, V] (write gate)
//            cu_seqlens INT32/INT64 [N+1] (required; sequences may be empty)
//            initial_state [N, HO, V, K] (optional), a_log [HO] and dt_bias [HO] / [HO, K] (kda, gdn2)
//              (optional, only under safe_gate), state_indices INT32 [N] (forward only: initial_state is then
//              a pool [N_pool, HO, V, K], row state_indices[i] seeds sequence i)
//            backward adds dO [T, HO, V], d_final_state [N, HO, V, K] (optional) and state_checkpoints
//              [R, HO, V, K] (optional, only with checkpoint_every_n_tokens = c > 0: the forward's output of the
//              same inputs and cadence; the backward takes the state at each checkpoint from it, in place of
//              carrying its own recompute across, so a plan may recompute the spans between checkpoints at once)
//   outputs  forward: O [T, HO, V]; final_state (iff output_final_state; the pool's shape under state_indices);
//              state_checkpoints [R, HO, V, K] (iff checkpoint_every_n_tokens = c > 0; the final state's type):
//              sequence i's state after its first j c (sub-)tokens, j = 1 .. floor(L_i / c), at row
//              sum_{s<i} floor(L_s / c) + j - 1; R inferred as floor(T n / c), or the caller's (any R >= 0; rows
//              past the batch's checkpoints are not checkpoints: zero from the reference, untouched on the GPU)
//            backward: dQ dK dV dG, dBeta (gdn2: dB, dW), d_initial_state (iff initial_state),
//              d_a_log (iff safe_gate and a_log), d_dt_bias (iff safe_gate and dt_bias)
//            *_summary: H [N, HO, V, K] (final state from a zero seed), M [N, HO, K, K] (holds M^T), so that
//              X_{j+1} = X_j @ M_j + H_j chains spans in the stored (V-major) domain
//            *_summary_bwd: G [N, HO, V, K] (incoming state gradient from a zero outgoing gradient),
//              transition [N, HO, K, K] (iff output_transition; holds M), dX_j = dX_{j+1} @ transition_j + G_j
//   HO = max(HQ, HV); each of HQ, HK, HV divides HO; output head h reads head h / (HO / H*) (contiguous groups).
//
// Attributes: scale (FLOAT, default K^-0.5), use_qk_l2norm (BOOL), safe_gate (BOOL: g from logits,
//   gdn/gdp: g = -exp(a_log) * softplus(x + dt_bias); kda/gdn2: g = lower_bound * sigmoid(exp(a_log) * (x + dt_bias))),
//   lower_bound (FLOAT in [-5, 0), default -5; kda, gdn2), use_beta_sigmoid (BOOL: beta (gdn2: b) from logits),
//   allow_neg_eigval (BOOL: 2 * sigmoid; requires use_beta_sigmoid), gate_domain (ENUM {log, linear}),
//   num_householder (INT >= 1; gdp), output_final_state (BOOL; forward), checkpoint_every_n_tokens (INT,
//   0 or a multiple of 64, in (sub-)tokens; forward: the state_checkpoints cadence; backward: the cadence of
//   the state_checkpoints input, when bound; not with state_indices), overwrite_initial_state (BOOL: one buffer
//   serves initial_state and final_state — requires both; backward: d_final_state and d_initial_state),
//   batch_invariant (BOOL), output_transition (BOOL; *_summary_bwd).
// Every rule is checked by validate(); builders only bind ports.
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

// Inputs of gdn, kda and gdp (and of their _bwd/_summary/_summary_bwd ops). Optional fields may be null.
struct DeltaRuleInputs {
  TensorPtr q, k, v, g, beta, cu_seqlens;
  TensorPtr initial_state, a_log, dt_bias, state_indices;
};
// Inputs of gdn2 and its variants: beta is replaced by the erase gate b and the write gate w.
struct Gdn2Inputs {
  TensorPtr q, k, v, g, b, w, cu_seqlens;
  TensorPtr initial_state, a_log, dt_bias, state_indices;
};
struct DeltaRuleOutputs {
  TensorPtr o, final_state;  // final_state is null unless output_final_state
  TensorPtr state_checkpoints;  // null unless checkpoint_every_n_tokens > 0
};
// Null for an output the node does not produce (dbeta for gdn2; db, dw otherwise; the conditional ones).
struct DeltaRuleGrads {
  TensorPtr dq, dk, dv, dg, dbeta, db, dw, d_initial_state, d_a_log, d_dt_bias;
};
struct StateSummary {
  TensorPtr h, m;
};
struct StateSummaryGrad {
  TensorPtr g, transition;  // transition is null unless output_transition
};

class LinearAttentionBuilders : public virtual NodeSink {
 public:
  DeltaRuleOutputs gdn(const DeltaRuleInputs& in, const Attributes& attrs = {});
  DeltaRuleOutputs kda(const DeltaRuleInputs& in, const Attributes& attrs = {});
  DeltaRuleOutputs gdp(const DeltaRuleInputs& in, const Attributes& attrs = {});
  DeltaRuleOutputs gdn2(const Gdn2Inputs& in, const Attributes& attrs = {});

  // Backward: the forward's inputs (state_indices is refused at validate()) plus dO, d_final_state and the
  // forward's state_checkpoints (with checkpoint_every_n_tokens set as the forward's).
  DeltaRuleGrads gdn_bwd(const DeltaRuleInputs& in, TensorPtr d_o, TensorPtr d_final_state = nullptr,
                         const Attributes& attrs = {}, TensorPtr state_checkpoints = nullptr);
  DeltaRuleGrads kda_bwd(const DeltaRuleInputs& in, TensorPtr d_o, TensorPtr d_final_state = nullptr,
                         const Attributes& attrs = {}, TensorPtr state_checkpoints = nullptr);
  DeltaRuleGrads gdp_bwd(const DeltaRuleInputs& in, TensorPtr d_o, TensorPtr d_final_state = nullptr,
                         const Attributes& attrs = {}, TensorPtr state_checkpoints = nullptr);
  DeltaRuleGrads gdn2_bwd(const Gdn2Inputs& in, TensorPtr d_o, TensorPtr d_final_state = nullptr,
                          const Attributes& attrs = {}, TensorPtr state_checkpoints = nullptr);

  // Forward summaries read k, v, g, beta (gdn2: b, w), cu_seqlens, a_log, dt_bias; q and the state fields are
  // not read (a summary starts from a zero seed).
  StateSummary gdn_summary(const DeltaRuleInputs& in, const Attributes& attrs = {});
  StateSummary kda_summary(const DeltaRuleInputs& in, const Attributes& attrs = {});
  StateSummary gdp_summary(const DeltaRuleInputs& in, const Attributes& attrs = {});
  StateSummary gdn2_summary(const Gdn2Inputs& in, const Attributes& attrs = {});

  // Backward summaries read q, k, g, beta (gdn2: b), cu_seqlens, a_log, dt_bias and dO; v, w and the state
  // fields are not read (G does not depend on them).
  StateSummaryGrad gdn_summary_bwd(const DeltaRuleInputs& in, TensorPtr d_o, const Attributes& attrs = {});
  StateSummaryGrad kda_summary_bwd(const DeltaRuleInputs& in, TensorPtr d_o, const Attributes& attrs = {});
  StateSummaryGrad gdp_summary_bwd(const DeltaRuleInputs& in, TensorPtr d_o, const Attributes& attrs = {});
  StateSummaryGrad gdn2_summary_bwd(const Gdn2Inputs& in, TensorPtr d_o, const Attributes& attrs = {});
};

}  // namespace opgraph
