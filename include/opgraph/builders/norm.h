// opgraph/builders/norm.h — builders of the norm op group (records in src/ir/ops/norm*.cpp).
//
// Port names are cudnn-frontend's (X, SCALE, BIAS, EPSILON, MEAN, INV_VARIANCE, ...).
// Multi-output builders return their outputs in the record's order; an output the
// node does not produce (MEAN/INV_VARIANCE outside TRAINING, NEXT_RUNNING_* without
// previous running stats, rmsnorm_backward's DBIAS with has_dbias=false) is nullptr.
// EPSILON and MOMENTUM are tensors holding one element, usually pass-by-value
// scalars from OpGraph::tensor_scalar(); ACCUM_COUNT is an INT32/INT64 one-element tensor.
//
// Shapes (units: elements), X of rank >= 2 with axis 0 the batch axis N and axis 1 the channel axis C:
//   SCALE/BIAS have X's rank; every extent is X's or 1.
//   layernorm/rmsnorm:  SCALE's axis 0 is 1; the normalized axes are those where SCALE's extent is not 1.
//   adalayernorm:       SCALE's axis 0 is N (per-sample scale/bias); normalized axes as layernorm's, axis 0 excluded.
//   instancenorm:       SCALE is [1, C, 1, ...]; the normalized axes are the spatial ones (2 and up).
//   batchnorm family:   SCALE is [1, C, 1, ...]; the normalized axes are every axis but 1.
//   Stats (MEAN, INV_VARIANCE) = X's dims with every normalized axis collapsed to 1 (LN [N,1,1,1],
//   IN [N,C,1,1], BN [1,C,1,1]); they are FLOAT unless the user sets a type.
#pragma once

#include <array>
#include <vector>

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class NormBuilders : public virtual NodeSink {
 public:
  // [SUM, SQ_SUM], each [1, C, 1, ...]: per-channel sum and sum of squares of X.
  std::array<TensorPtr, 2> genstats(TensorPtr x, const Attributes& attrs = {});
  // [EQ_SCALE, EQ_BIAS, MEAN, INV_VARIANCE, NEXT_RUNNING_MEAN, NEXT_RUNNING_VAR] from genstats' sums over
  // ACCUM_COUNT elements per channel. The running-stat outputs exist only when the previous running
  // stats (and MOMENTUM) are given.
  std::array<TensorPtr, 6> bn_finalize(TensorPtr sum, TensorPtr sq_sum, TensorPtr scale, TensorPtr bias,
                                       TensorPtr epsilon, TensorPtr accum_count, const Attributes& attrs = {},
                                       TensorPtr prev_running_mean = nullptr, TensorPtr prev_running_var = nullptr,
                                       TensorPtr momentum = nullptr);
  // Training batchnorm: [Y, MEAN, INV_VARIANCE, NEXT_RUNNING_MEAN, NEXT_RUNNING_VAR]. peer_stats: one
  // [2, C, 1, ...] FLOAT tensor per peer device holding that peer's per-channel (sum, sum of squares)
  // over the same element count as X (synchronized batchnorm).
  std::array<TensorPtr, 5> batchnorm(TensorPtr x, TensorPtr scale, TensorPtr bias, TensorPtr epsilon,
                                     const Attributes& attrs = {}, TensorPtr prev_running_mean = nullptr,
                                     TensorPtr prev_running_var = nullptr, TensorPtr momentum = nullptr,
                                     std::vector<TensorPtr> peer_stats = {});
  // Y = (X - MEAN) * INV_VARIANCE * SCALE + BIAS, all per channel.
  TensorPtr batchnorm_inference(TensorPtr x, TensorPtr mean, TensorPtr inv_variance, TensorPtr scale, TensorPtr bias,
                                const Attributes& attrs = {});
  // [DX, DSCALE, DBIAS]. peer_stats: one [2, C, 1, ...] tensor per peer holding its per-channel
  // (sum of DY, sum of DY * x_hat) over the same element count as X.
  std::array<TensorPtr, 3> batchnorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale, TensorPtr mean,
                                              TensorPtr inv_variance, const Attributes& attrs = {},
                                              std::vector<TensorPtr> peer_stats = {});
  // [DSCALE, DBIAS, EQ_BIAS, EQ_SCALE_DY, EQ_SCALE_X]: DX = EQ_SCALE_DY * DY + EQ_SCALE_X * X + EQ_BIAS.
  std::array<TensorPtr, 5> dbn_weight(TensorPtr dy, TensorPtr x, TensorPtr mean, TensorPtr inv_variance,
                                      TensorPtr scale, const Attributes& attrs = {});
  // [Y, MEAN, INV_VARIANCE]; attribute forward_phase (required: INFERENCE or TRAINING).
  std::array<TensorPtr, 3> layernorm(TensorPtr x, TensorPtr scale, TensorPtr bias, TensorPtr epsilon,
                                     const Attributes& attrs = {});
  // [DX, DSCALE, DBIAS] from the saved MEAN and INV_VARIANCE.
  std::array<TensorPtr, 3> layernorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale, TensorPtr mean,
                                              TensorPtr inv_variance, const Attributes& attrs = {},
                                              TensorPtr epsilon = nullptr);
  // [Y, INV_VARIANCE]: Y = X * rsqrt(mean(X^2) + EPSILON) * SCALE (+ BIAS when given).
  std::array<TensorPtr, 2> rmsnorm(TensorPtr x, TensorPtr scale, TensorPtr epsilon, const Attributes& attrs = {},
                                   TensorPtr bias = nullptr);
  // [DX, DSCALE, DBIAS]; DBIAS only with has_dbias (default true).
  std::array<TensorPtr, 3> rmsnorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale, TensorPtr inv_variance,
                                            const Attributes& attrs = {});
  std::array<TensorPtr, 3> instancenorm(TensorPtr x, TensorPtr scale, TensorPtr bias, TensorPtr epsilon,
                                        const Attributes& attrs = {});
  std::array<TensorPtr, 3> instancenorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale, TensorPtr mean,
                                                 TensorPtr inv_variance, const Attributes& attrs = {});
  std::array<TensorPtr, 3> adalayernorm(TensorPtr x, TensorPtr scale, TensorPtr bias, TensorPtr epsilon,
                                        const Attributes& attrs = {});
  std::array<TensorPtr, 3> adalayernorm_backward(TensorPtr dy, TensorPtr x, TensorPtr scale, TensorPtr mean,
                                                 TensorPtr inv_variance, const Attributes& attrs = {});
  // Rotary position embedding. X is [B, S, H, D] (a [B, H, S, D] memory layout is expressed by strides);
  // COS and SIN are [S, R/2] with R even and R <= D: the first R channels of each head rotate, the rest
  // pass through. Attribute rotation: ROTATE_HALF (GPT-NeoX, pairs (i, i + R/2), default) or
  // INTERLEAVED (GPT-J, pairs (2i, 2i + 1)).
  TensorPtr rope(TensorPtr x, TensorPtr cos, TensorPtr sin, const Attributes& attrs = {});
  // DX = the transpose of rope's rotation applied to DY (same COS, SIN, rotation).
  TensorPtr rope_backward(TensorPtr dy, TensorPtr cos, TensorPtr sin, const Attributes& attrs = {});
};

}  // namespace opgraph
