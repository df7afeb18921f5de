// engines/reference/linear_attention_ref_internal.h — what the reference files of the
// linear_attention group share: the problem's extents, one (sub-)step of the
// expanded timeline with its transformed operands, and the maps between the op's
// inputs and those steps (linear_attention_ref_prep.cpp) in both directions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/reference/linear_attention_ref.h"

namespace opgraph::reference::la_ref {

using Vec = std::vector<double>;

// A dense zero-filled array.
Array zeros(Dims dims);

struct Shape {
  std::int64_t t = 0, n_seq = 0, n_house = 1, hq = 0, hk = 0, hv = 0, ho = 0, kd = 0, vd = 0;
  double scale = 1.0;
  // The input head read by output head h (contiguous groups).
  std::int64_t q_head(std::int64_t h) const { return h / (ho / hq); }
  std::int64_t k_head(std::int64_t h) const { return h / (ho / hk); }
  std::int64_t v_head(std::int64_t h) const { return h / (ho / hv); }
};

// Extents from the bound arrays, and the runtime rules on cu_seqlens (INVALID_VALUE).
Result<Shape> shape_of(const Config& cfg, const Inputs& in, const Array* d_o);

// One step of the expanded timeline of one (sequence, output head): token `token`,
// sub-step `sub` (row token * n + sub of k, v, beta).
struct Step {
  std::int64_t token = 0, sub = 0;
  bool decay = false;    // the gate applies before this step (sub-step 0)
  bool readout = false;  // O is read after this step (last sub-step)
  Vec a;                 // [K] decay (1 when !decay; a scalar gate is broadcast)
  Vec k, e;              // [K] key and erase vector
  Vec v, c;              // [V] value and write gate
  Vec q;                 // [K] the (scaled-free, transformed) query when readout
};

// The transformed steps of sequence `seq`, head h, in time order.
std::vector<Step> prepare(const Config& cfg, const Inputs& in, const Shape& s, std::int64_t seq, std::int64_t h);

// Gradients of one step w.r.t. its operands, as the recurrence produces them.
struct StepGrad {
  Vec a, k, e, v, c, q;
};

// Gradient accumulators in the inputs' layouts. q/k gradients are gathered w.r.t.
// the transformed q, k and mapped through l2norm by finish().
struct GradSink {
  Array dq_hat, dk_hat, dv, dg, dbeta, db, dw, d_a_log, d_dt_bias;
};
GradSink make_sink(const Config& cfg, const Inputs& in);
// Adds the step gradients of (seq, h) into the sink, through beta/b/w/gate transforms.
void scatter(const Config& cfg, const Inputs& in, const Shape& s, std::int64_t seq, std::int64_t h,
             const std::vector<Step>& steps, const std::vector<StepGrad>& grads, GradSink& sink);
// Moves the sink into `out`, applying the l2norm backward to q and k.
void finish(const Config& cfg, const Inputs& in, GradSink& sink, Grads& out);

}  // namespace opgraph::reference::la_ref
