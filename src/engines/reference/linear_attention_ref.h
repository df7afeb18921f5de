// engines/reference/linear_attention_ref.h — the float64 token-level recurrence of the
// linear_attention group (gdn, kda, gdn2, gdp), forward, backward and summaries.
//
// This is the oracle the chunked engines are judged against, so it runs the
// recurrence one (sub-)token at a time, exactly as written (research note
// linear_attention.md §1.2–§1.4), with S the K x V state:
//   S~  = diag(a_t) S_{t-1}           a_t = exp(g_t) (log domain) or g_t (linear domain)
//   u_t = c_t . v_t - S~^T e_t        gdn/kda/gdp: e = beta k, c = beta; gdn2: e = b . k, c = w
//   S_t = S~ + k_t u_t^T
//   o_t = scale * S_t^T q_t
// gdp runs num_householder sub-steps per token (rows t*n + j of k, v, beta), the
// gate at sub-step 0 and the read-out after sub-step n-1. State tensors are
// V-major [rows, HO, V, K] and hold S^T. Input transforms (l2norm, beta sigmoid,
// safe_gate) and their derivatives follow §1.3; see linear_attention_ref_prep.cpp.
//
// Units: every extent and index is in elements. Arrays are dense row-major in the
// ports' layouts (see include/opgraph/builders/linear_attention.h).
// Errors: INVALID_VALUE naming the rule for runtime-only violations (cu_seqlens
// not 0..T non-decreasing, state_indices out of range or repeated, more checkpoints
// than the state_checkpoints rows hold: refused before anything is written); shapes are
// assumed valid (validate() checked them).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engines/reference/ref_kernel.h"
#include "opgraph/status.h"

namespace opgraph::reference::la_ref {

enum class Variant : std::uint8_t { GDN, KDA, GDN2, GDP };

struct Config {
  Variant variant = Variant::GDN;
  std::optional<double> scale;        // nullopt: K^-0.5
  bool use_qk_l2norm = false;         // q, k <- x / sqrt(sum x^2 + 1e-6) over K
  bool safe_gate = false;             // g holds logits (see prep)
  double lower_bound = -5.0;          // kda/gdn2 safe gate: g = lower_bound * sigmoid(exp(a_log) (x + dt_bias))
  bool use_beta_sigmoid = false;      // beta (gdn2: b) holds logits: s * sigmoid(x)
  bool allow_neg_eigval = false;      // s = 2 (else 1)
  bool linear_gate = false;           // gate_domain "linear": g is alpha itself
  std::int64_t num_householder = 1;   // gdp sub-steps per token
  // state_checkpoints: the cadence c in (sub-)steps and the rows R of the forward's output (R < 0: not produced);
  // the backward reads the cadence when given the checkpoints.
  std::int64_t checkpoint_every = 0;
  std::int64_t checkpoint_rows = -1;
};

// Optional pointers may be null. Which are read depends on the op (summaries read no state).
struct Inputs {
  const Array* q = nullptr;              // [T, HQ, K]
  const Array* k = nullptr;              // [T*n, HK, K]
  const Array* v = nullptr;              // [T*n, HV, V]
  const Array* g = nullptr;              // [T, HO] or [T, HO, K]
  const Array* beta = nullptr;           // [T*n, HO] (gdn, kda, gdp)
  const Array* b = nullptr;              // [T, HO, K] (gdn2)
  const Array* w = nullptr;              // [T, HO, V] (gdn2)
  const Array* a_log = nullptr;          // [HO]
  const Array* dt_bias = nullptr;        // [HO] or [HO, K]
  const Array* initial_state = nullptr;  // [N or N_pool, HO, V, K]
  const Array* state_indices = nullptr;  // [N]
  std::vector<std::int64_t> cu_seqlens;  // [N+1]
};

struct Forward {
  Array o;            // [T, HO, V]
  Array final_state;  // [N, HO, V, K], or the pool's shape under state_indices
  Array checkpoints;  // [R, HO, V, K] under checkpoint_rows >= 0: sequence i's state after its first j c steps
                      // at row sum_{s<i} floor(L_s n / c) + j - 1 (rows past the last checkpoint zero)
};
// Gradients of sum(O . dO) + sum(final_state . d_final_state) w.r.t. the inputs as
// given (raw logits under safe_gate / use_beta_sigmoid, alpha under the linear gate).
// Arrays of inputs the op does not have (or did not bind) are left empty.
struct Grads {
  Array dq, dk, dv, dg, dbeta, db, dw, d_initial_state, d_a_log, d_dt_bias;
};
struct Summary {
  Array h;  // [N, HO, V, K]: the final state from a zero seed (S^T)
  Array m;  // [N, HO, K, K]: M^T, where S_end = M S_0 + S_end(zero seed)
};
struct SummaryGrad {
  Array g;           // [N, HO, V, K]: dS_0^T from the outputs alone (zero outgoing gradient)
  Array transition;  // [N, HO, K, K]: M, so dS_0^T = dS_end^T M + g
};

Result<Forward> forward(const Config& cfg, const Inputs& in);
// `checkpoints` (optional, [R, HO, V, K], at cfg.checkpoint_every steps, the forward's layout): the forward's
// state_checkpoints; the recompute starts the steps after each checkpoint from it (the state after a
// sequence's first j c steps is row sum_{s<i} floor(L_s n / c) + j - 1) in place of carrying its own across:
// the gradients are those of the sequence cut at its checkpoints, piece j + 1 seeded by checkpoint j and each
// piece's state gradient flowing into the piece before it (the unseeded ones, up to rounding, when the
// checkpoints are the forward's). R short of the batch's checkpoints: refused before anything is written.
Result<Grads> backward(const Config& cfg, const Inputs& in, const Array& d_o, const Array* d_final_state,
                       const Array* checkpoints = nullptr);
Result<Summary> summary(const Config& cfg, const Inputs& in);
Result<SummaryGrad> summary_bwd(const Config& cfg, const Inputs& in, const Array& d_o);

}  // namespace opgraph::reference::la_ref
