// opgraph/builders/tensor_ops.h — builders of the tensor-ops group (records in src/ir/ops/tensor_ops*.cpp).
//
// Port and attribute names are cudnn-frontend's (research/cudnn_frontend.md §1.2);
// each record's semantics and validation rules are written atop its source file:
//   tensor_ops.cpp             reduction, rng, reshape, transpose, slice, concatenate
//   tensor_ops_window.cpp      resample, diagonal_band_mask, paged_cache_load
//   tensor_ops_block_scale.cpp block_scale_quantize, block_scale_dequantize
// Units: dims, strides, windows, paddings, slices and block sizes are in ELEMENTS.
#pragma once

#include <array>
#include <vector>

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class TensorOpBuilders : public virtual NodeSink {
 public:
  // Y from X reduced by `mode` over every axis where Y's dim is 1 and X's is not.
  // The caller sets Y's dims on the returned tensor (each axis equal to X's or 1).
  TensorPtr reduction(TensorPtr x, const Attributes& attrs);
  // Y[dim] of random numbers from `distribution`, counter-based from (seed, offset):
  // the seed comes from the Seed tensor or the `seed` attribute; Offset may be null (0).
  TensorPtr rng(TensorPtr seed, TensorPtr offset, const Attributes& attrs);
  // {Y, Index}: pooling (window/stride/padding) or interpolation; Index is nullptr
  // unless generate_index (MAXPOOL only).
  std::array<TensorPtr, 2> resample(TensorPtr x, const Attributes& attrs);
  // Y with dims `dim` (or Y's user-set dims) and X's elements.
  TensorPtr reshape(TensorPtr x, const Attributes& attrs = {});
  // Y[i...] = X permuted: Y.dim[k] = X.dim[permutation[k]].
  TensorPtr transpose(TensorPtr x, const Attributes& attrs);
  // Y = X[start:end:stride] per axis; `slices` is the flat list {start0, end0, start1, end1, ...}.
  TensorPtr slice(TensorPtr x, const Attributes& attrs);
  // Y = the inputs joined along `axis`.
  TensorPtr concatenate(std::vector<TensorPtr> xs, const Attributes& attrs);
  // Y = X with entries outside the diagonal band set to B (see tensor_ops_window.cpp).
  TensorPtr diagonal_band_mask(TensorPtr x, TensorPtr fill, TensorPtr seq_len_q, TensorPtr seq_len_kv,
                               TensorPtr left_bound, TensorPtr shift_right_bound, const Attributes& attrs = {});
  // {Y, scale}: X quantized in blocks of `block_size` along `axis`. Set Y's data type
  // (FP8_E4M3, FP8_E5M2 or FP4_E2M1) on the returned tensor; scale's follows the format.
  std::array<TensorPtr, 2> block_scale_quantize(TensorPtr x, const Attributes& attrs);
  // Y = X * scale broadcast over its blocks.
  TensorPtr block_scale_dequantize(TensorPtr x, TensorPtr scale, const Attributes& attrs);
  // yOut[b, h, s, d] = container[pageTable[b, 0, s / block, 0], h, s % block, d] for s < seqLen[b], else 0.
  TensorPtr paged_cache_load(TensorPtr container, TensorPtr seq_len, TensorPtr page_table,
                             const Attributes& attrs = {});
};

}  // namespace opgraph
