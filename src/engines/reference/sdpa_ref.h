// engines/reference/sdpa_ref.h — the float64 core of the SDPA reference kernels,
// shared by the six ops (sdpa.cpp, sdpa_fp8.cpp) and fed by the operand
// preparation of sdpa_ref_io.cpp.
//
// Every array here is DENSE and LOGICAL: Q [b, h_q, s_q, d_qk], K [b, h_k, s_kv, d_qk],
// V [b, h_v, s_kv, d_v], O/dO [b, h_q, s_q, d_v], Stats [b, h_q, s_q, 1], holding REAL
// values (fp8 data already multiplied by its descale, paged caches already read
// through their page tables, ragged (THD) tensors already gathered).
//
// Semantics (row i = query, column j = key of batch entry n, query head h):
//   s_ij = attn_scale * q_i . k_j + Bias[n, h, i, j] + slope_h * (j - i) [ALiBi]
//   kept(i, j): i < sq[n], j < skv[n] (padding), the diagonal band of
//     ops::sdpa::Band, and the Block_mask flag of tile (i / 128, j / 128).
//   Stats_i = log(sum_kept exp(s_ij) + exp(sink_h)) (log-sum-exp, sink optional);
//   Max_i = max(s_ij kept, sink_h); Sum_exp_i = sum exp(s_ij - Max_i) (+ sink term);
//   P_ij = exp(s_ij - Stats_i); with dropout P_ij * keep_ij / (1 - p) (Philox
//   Bernoulli(1 - p) on the row-major flat index of [b, h_q, s_q, s_kv], see rng.h)
//   or P_ij * Dropout_mask * Dropout_scale;  O_i = sum_j P_ij v_j.
//   A row with nothing to attend (padded row, or every key masked and no sink):
//   O = 0, Stats = Max = -inf, Sum_exp = 0; the backward skips it (zero gradient).
//   GQA/MQA: head h reads K head h / (h_q / h_k), V head h / (h_q / h_v); the
//   backward sums dK / dV over the query heads of a group.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engines/reference/ref_kernel.h"
#include "ir/ops/sdpa_common.h"

namespace opgraph::reference::sdpa_ref {

// Quantize-dequantize of an intermediate (fp8 per-tensor recipes): x ->
// round_to(type, x * scale) * descale.
struct Requant {
  double scale = 1.0, descale = 1.0;
  DataType type = DataType::NOT_SET;  // NOT_SET: no rounding
  double operator()(double x) const;
};

// What decides the scores, the mask and the dropout; shared by forward and backward.
struct Problem {
  std::int64_t b = 0, h_q = 0, h_k = 0, h_v = 0, s_q = 0, s_kv = 0, d_qk = 0, d_v = 0;
  std::vector<std::int64_t> sq, skv;  // per batch entry valid lengths
  double attn_scale = 1.0;
  const Array* bias = nullptr;        // broadcast to [b, h_q, s_q, s_kv]
  bool alibi = false;
  ops::sdpa::Band band;
  const Array* block_mask = nullptr;  // broadcast to [b, h_q, ceil(s_q/128), ceil(s_kv/128)]
  const Array* sink = nullptr;        // [1, h_q, 1, 1]
  // Dropout: Philox (p > 0) or a user mask.
  double dropout_p = 0.0;
  std::uint64_t seed = 0, offset = 0;
  const Array* dropout_mask = nullptr;
  double dropout_scale = 1.0;

  bool kept(std::int64_t n, std::int64_t h, std::int64_t i, std::int64_t j) const;
  // Score s_ij before masking (q: row of Q, k: row of K).
  double score(std::int64_t n, std::int64_t h, std::int64_t i, std::int64_t j, const double* q, const double* k) const;
  // Dropout factor of (n, h, i, j): keep / (1 - p), mask * scale, or 1.
  double dropout_factor(std::int64_t n, std::int64_t h, std::int64_t i, std::int64_t j) const;
  bool has_dropout() const { return dropout_p > 0.0 || dropout_mask != nullptr; }
};

struct ForwardResult {
  Array O, Stats, Max, Sum_exp, rng_dump;
  double amax_s = 0.0, amax_o = 0.0;  // max |P after dropout|, max |O| (before any output scale)
};
// `p_requant`: applied to each P (after dropout) before P V (fp8 recipes).
ForwardResult forward(const Problem& pb, const Array& q, const Array& k, const Array& v, bool want_rng_dump,
                      const Requant& p_requant = {});

struct BackwardOperands {
  const Array *q, *k, *v, *o, *dO, *stats;
  // MXFP8 reads other copies for some products (default: the ones above).
  const Array* q_for_dk = nullptr;  // dK = dS^T Q
  const Array* k_for_dq = nullptr;  // dQ = dS K
  const Array* do_for_dv = nullptr; // dV = P^T dO
  const Array* do_for_d = nullptr;  // D_i = dO_i . O_i (fp8: the dO_f16 copy)
};
struct BackwardResult {
  Array dQ, dK, dV;
  Array dS;      // [b, h_q, s_q, s_kv] gradient w.r.t. the scores s (for dBias)
  Array dSink;   // [1, h_q, 1, 1]
  double amax_dq = 0.0, amax_dk = 0.0, amax_dv = 0.0, amax_dp = 0.0;
};
// `p_requant` quantizes P (after dropout) for dV; `ds_requant` quantizes dS for dQ/dK.
BackwardResult backward(const Problem& pb, const BackwardOperands& in, const Requant& p_requant = {},
                        const Requant& ds_requant = {});

// Sums `full` [b, h_q, s_q, s_kv] over the axes where `dims` (same rank) is 1.
Array reduce_to(const Array& full, const Dims& dims);
double amax(const Array& a);

// --- operand preparation (sdpa_ref_io.cpp) ---

// Reads the common Problem fields from the node and its inputs (scale, bias,
// alibi, masks, seq lens, block mask, sink, dropout). Fails on a seq len
// outside [0, extent] naming the port and batch entry.
Status read_problem(KernelContext& c, const ops::sdpa::Geometry& g, Problem& pb);
// Geometry of the node's Q/K/V declarations (paged caches included).
ops::sdpa::Geometry geometry(const KernelContext& c);

// The logical dense value of an input port: ragged (THD) offsets resolved with
// `lens` tokens per batch entry, or the array itself. `values` (same dims as the
// port's declaration, e.g. dequantized data) replaces the port's own values.
// Fails if a needed token lies outside the declared extent.
Status gather(KernelContext& c, std::string_view port, const std::vector<std::int64_t>& lens, Array& out,
              const Array* values = nullptr);
// K or V as [b, h, s_kv, d]: through the page table when paged, else gather().
Status gather_kv(KernelContext& c, std::string_view port, std::string_view table, const Problem& pb, Array& out,
                 const Array* values = nullptr);
// Writes the logical dense `value` to output `port`, placing rows by the
// output's ragged offsets (with `lens` tokens per batch entry) when it has them.
Status scatter(KernelContext& c, std::string_view port, const std::vector<std::int64_t>& lens, const Array& value);
// Multiplies every element by s.
Array scaled(Array a, double s);
// MXFP8: data[b, h, r, c] times its block scale (the E8M0 value, already decoded
// to 2^(e - 127) by the executor; blocks of 32 along `block_axis`; the executor
// already undid the F8_128x4 tiling, so `scale` is indexed logically).
Array dequant_mx(const Array& data, const Array& scale, int block_axis);

// Kernels (sdpa.cpp: sdpa, sdpa_backward; sdpa_fp8.cpp: the four fp8 ops) and
// the forward's output writer they share.
Status write_forward(KernelContext& c, const Problem& pb, const ForwardResult& r, double o_scale);
Status sdpa_fp8_kernel(KernelContext& c);
Status sdpa_fp8_backward_kernel(KernelContext& c);
Status sdpa_mxfp8_kernel(KernelContext& c);
Status sdpa_mxfp8_backward_kernel(KernelContext& c);

}  // namespace opgraph::reference::sdpa_ref
