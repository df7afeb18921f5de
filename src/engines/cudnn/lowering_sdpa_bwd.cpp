// engines/cudnn/lowering_sdpa_bwd.cpp — sdpa_backward as the composite the
// cuDNN backend fuses (cudnn-frontend's composite backward for cuDNN >= 9.0
// without the dP workspace, research doc section 2.5):
//   K, V read as K^T, V^T (dims/strides swapped on their own records);
//   softmax_sum = rowsum(dO * O) * 1            -> FLOAT [b, h_q, s_q, 1] in the workspace
//   [DSINK_TOKEN = reduce ADD of NEG(EXP(SINK - Stats) * rowsum(dO * O)) -> [1, h_q, 1, 1]]
//   S = Q K^T * scale + Bias + ALiBi - Stats, padding / band masks, P = exp(S)
//   dV = reshape(P)^T dO        (GQA: full-head dV, then ADD over the head group)
//   dS = (dO V^T - softmax_sum) * P [-> reduce ADD -> dBias] * scale
//   dK = reshape(dS)^T Q        (GQA: full-head dK, then ADD)
//   dQ = dS reshape(K^T)        -> FLOAT dQ accumulator in the workspace -> IDENTITY -> dQ
//                                  (with dBias or use_deterministic_algorithm on
//                                  Hopper: the matmul writes dQ directly)
// The two workspace tensors are ScratchTensors of the plan (the engine binds
// them after its own workspace bytes; no initialisation is needed from 9.6).
#include "engines/cudnn/lowering_sdpa_internal.h"

namespace opgraph::engines::cudnn::detail::sdpa {
namespace {

// K or V seen transposed: its record's last two dims and strides swapped.
void transpose_in_place(Builder& bld, int rec) {
  Dims d = bld.dims(rec), st = bld.strides(rec);
  std::swap(d[2], d[3]);
  std::swap(st[2], st[3]);
  bld.lowerer().retarget(rec, d, st);
}

// y = x^T over the last two axes (a RESHAPE with transposed strides), in `dt`.
int transposed(Builder& bld, int x, DataType dt, int ragged_record = -1) {
  Dims d = bld.dims(x), st = bld.strides(x);
  if (d.size() != 4) return x;
  std::swap(d[2], d[3]);
  std::swap(st[2], st[3]);
  int y = bld.virt(d, dt, st, ragged_record);
  bld.reshape(x, y);
  return y;
}

}  // namespace

Status lower_backward_composite(Builder& bld, const Geom& g) {
  const Node& n = bld.node();
  const int q = bld.in(ops::in::Q), k = bld.in(ops::in::K), v = bld.in(ops::in::V), o = bld.in(ops::in::O), dO = bld.in(ops::in::dO);
  const int stats = bld.in(ops::in::Stats), dq = bld.out(ops::out::dQ), dk = bld.out(ops::out::dK), dv = bld.out(ops::out::dV);
  const int seq_q = bld.in(ops::in::SEQ_LEN_Q), seq_kv = bld.in(ops::in::SEQ_LEN_KV);
  OPGRAPH_CHECK(bld.status());
  const Dims k_dims = bld.dims(k), k_strides = bld.strides(k);
  const int k_ragged = n.input(ops::in::K)->get_ragged_offset() ? bld.lowerer().tensor(n.input(ops::in::K)->get_ragged_offset()).value() : -1;
  transpose_in_place(bld, k);
  transpose_in_place(bld, v);
  const Dims row = {g.b, g.h_q, g.s_q, 1}, row_st = {g.h_q * g.s_q, g.s_q, 1, 1};
  const Dims full = {g.b, g.h_q, g.s_q, g.s_kv};
  const int scale = n.input(ops::in::Attn_scale)        ? bld.in(ops::in::Attn_scale)
                    : n.attr_is_set("attn_scale") ? bld.scalar_f(ops::attr::attn_scale(n).value_or(0.0))
                                                  : -1;
  // softmax_sum = rowsum(dO * O) * 1 (the 1 stands where dropout's scale inverse would).
  int one = bld.scalar_f(1.0);
  int prod = bld.virt({g.b, g.h_q, g.s_q, g.d_v}, DataType::FLOAT, {g.h_q * g.s_q * g.d_v, g.s_q * g.d_v, g.h_q * g.d_v, 1});
  bld.pointwise(CUDNN_POINTWISE_MUL, dO, o, -1, prod);
  int rsum = bld.virt(row, DataType::FLOAT, row_st);
  bld.reduction(CUDNN_REDUCE_TENSOR_ADD, prod, rsum);
  if (n.output(ops::out::DSINK_TOKEN)) {  // DSINK_TOKEN = -sum over (b, s_q) of exp(SINK - Stats) * rowsum(dO * O)
    int d = bld.virt(row, DataType::FLOAT, row_st);
    bld.pointwise(CUDNN_POINTWISE_SUB, bld.in(ops::in::SINK_TOKEN), stats, -1, d);  // the sink broadcast as X (frontend)
    d = bld.pointwise_new(CUDNN_POINTWISE_MUL, bld.pointwise_new(CUDNN_POINTWISE_EXP, d), rsum);
    bld.reduction(CUDNN_REDUCE_TENSOR_ADD, bld.pointwise_new(CUDNN_POINTWISE_NEG, d), bld.out(ops::out::DSINK_TOKEN));
  }
  int softmax_sum = bld.scratch(row, DataType::FLOAT);
  bld.pointwise(CUDNN_POINTWISE_MUL, rsum, one, -1, softmax_sum);
  // P = exp(Q K^T * scale + Bias - Stats), masked.
  int s = bld.virt(full);
  bld.matmul(q, k, s, seq_q, seq_kv);
  if (scale >= 0) s = bld.pointwise_new(CUDNN_POINTWISE_MUL, s, scale);
  if (n.input(ops::in::Bias)) s = bld.pointwise_new(CUDNN_POINTWISE_ADD, s, bld.in(ops::in::Bias));
  s = bld.alibi(s, g);
  s = bld.pointwise_new(CUDNN_POINTWISE_SUB, s, stats);
  if (g.padding) {
    s = bld.padding_mask(s, seq_q, seq_kv);
    const std::int64_t ver = bld.lowerer().options().cudnn_version;
    if (ver >= 90000 && ver < 91000) s = bld.padding_mask(s, seq_q, seq_kv);  // re-applied after the stats (9.0 - 9.9)
  }
  s = bld.band_mask(s, g, seq_q, seq_kv);
  const int p = bld.pointwise_new(CUDNN_POINTWISE_EXP, s);
  // dV = P^T dO.
  const int pt = transposed(bld, p, g.io);
  if (g.h_q == g.h_v) {
    bld.matmul(pt, dO, dv, seq_kv, -1, seq_q);
  } else {
    int dv_full = bld.virt({g.b, g.h_q, g.s_kv, g.d_v}, g.io);
    bld.matmul(pt, dO, dv_full, seq_kv, -1, seq_q);
    bld.reduction(CUDNN_REDUCE_TENSOR_ADD, dv_full, dv);
  }
  // dS = (dO V^T - softmax_sum) * P * scale.
  int dp = bld.virt(full);
  bld.matmul(dO, v, dp, seq_q, seq_kv);
  int ds = bld.pointwise_new(CUDNN_POINTWISE_SUB, dp, softmax_sum);
  ds = bld.pointwise_new(CUDNN_POINTWISE_MUL, ds, p);
  const bool dbias = n.output(ops::out::dBias) != nullptr;
  if (dbias && (g.padding || g.s_q % 64 || g.s_kv % 64)) bld.lowerer().require_version(n, 90500);  // FE's dBias gate
  if (dbias) bld.reduction(CUDNN_REDUCE_TENSOR_ADD, ds, bld.out(ops::out::dBias));  // over Bias's broadcast axes
  if (scale >= 0) ds = bld.pointwise_new(CUDNN_POINTWISE_MUL, ds, scale);
  // dK = dS^T Q.
  const int dst = transposed(bld, ds, g.io);
  if (g.h_q == g.h_k) {
    bld.matmul(dst, q, dk, seq_kv, -1, seq_q);
  } else {
    int dk_full = bld.virt({g.b, g.h_q, g.s_kv, g.d_qk}, g.io);
    bld.matmul(dst, q, dk_full, seq_kv, -1, seq_q);
    bld.reduction(CUDNN_REDUCE_TENSOR_ADD, dk_full, dk);
  }
  // dQ = dS K through an fp32 accumulator (with dBias or the deterministic
  // algorithm: straight into dQ, the dP-workspace composite cudnn-frontend
  // forces for both on Hopper).
  int k_again = bld.virt(k_dims, n.input(ops::in::K)->get_data_type(), k_strides, k_ragged);
  bld.reshape(k, k_again);
  if (dbias || ops::SdpaBackward::use_deterministic_algorithm(n)) {
    bld.matmul(ds, k_again, dq, seq_q, -1, seq_kv);
    return bld.status();
  }
  int dq_acc = bld.scratch({g.b, g.h_q, g.s_q, g.d_qk}, DataType::FLOAT);
  bld.matmul(ds, k_again, dq_acc, seq_q, -1, seq_kv);
  bld.pointwise(CUDNN_POINTWISE_IDENTITY, dq_acc, -1, -1, dq);
  return bld.status();
}

}  // namespace opgraph::engines::cudnn::detail::sdpa
