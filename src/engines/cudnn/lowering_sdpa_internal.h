// engines/cudnn/lowering_sdpa_internal.h — what the SDPA lowering files share
// (lowering_sdpa.cpp: declines, native forward, composite forward, masks;
// lowering_sdpa_bwd.cpp: composite backward): the geometry read off the node
// and a small builder that appends backend operations (matmul, pointwise,
// reduction, reshape, paged cache load) with their virtual tensors to the plan.
//
// Every record index below is an index into LoweringPlan::records (a TENSOR
// record for tensors). Dims are elements, strides elements, rank 4 (the SDPA
// layout contract); virtual intermediates are FLOAT unless a step says otherwise,
// as cudnn-frontend's composite expansion builds them (research doc, section 2).
#pragma once

#include <cudnn_graph.h>

#include <optional>
#include <string>
#include <vector>

#include "engines/cudnn/lowering_internal.h"

namespace opgraph::engines::cudnn::detail::sdpa {

using Dims = std::vector<std::int64_t>;

// Extents of one SDPA node (paged caches: s_kv is paged_attention_max_seq_len_kv).
struct Geom {
  std::int64_t b = 0, h_q = 0, h_k = 0, h_v = 0, s_q = 0, s_kv = 0, d_qk = 0, d_v = 0;
  bool paged = false, padding = false;
  DataType io = DataType::NOT_SET;  // Q's data type
};
Geom geom_of(const Node& n);

// Packed row-major strides of `d`.
Dims packed(const Dims& d);

// Builds operations with a sticky status: a failing step records its error
// and turns every later call into a no-op returning -1; status() reports it.
class Builder {
 public:
  Builder(Lowerer& l, const Node& n) : l_(l), n_(n) {}
  Lowerer& lowerer() { return l_; }
  const Node& node() const { return n_; }
  const Status& status() const { return status_; }

  // The record of the IR tensor at input/output `port` (-1 when unbound).
  int in(const ops::PortRef& port);
  int out(const ops::PortRef& port);
  // A new virtual tensor (strides default to packed) / a non-virtual workspace one.
  int virt(const Dims& dims, DataType dt = DataType::FLOAT, Dims strides = {}, int ragged_record = -1);
  int scratch(const Dims& dims, DataType dt);
  // A FLOAT workspace tensor the plan fills with `values` before each execute.
  int scratch_init(const Dims& dims, const std::vector<float>& values);
  // By-value scalars [1, 1, 1, 1].
  int scalar_f(double v);
  int scalar_i32(std::int64_t v);
  Dims dims(int record) const;
  Dims strides(int record) const;

  // Operations: each appends its descriptor(s) and operation, and returns `y`.
  // `prec` is the pointwise math precision; `axis` is set when given; b / t
  // of -1 are unbound.
  int pointwise(cudnnPointwiseMode_t mode, int x, int b, int t, int y, DataType prec = DataType::FLOAT,
                std::optional<std::int64_t> axis = std::nullopt);
  // Same, with a new virtual output of x's dims/strides and data type `out_dt`.
  int pointwise_new(cudnnPointwiseMode_t mode, int x, int b = -1, int t = -1, DataType out_dt = DataType::FLOAT,
                    DataType prec = DataType::FLOAT, std::optional<std::int64_t> axis = std::nullopt);
  // C = A B with the optional M/N/K override tensors (-1 = none).
  void matmul(int a, int b, int c, int m_ovr = -1, int n_ovr = -1, int k_ovr = -1,
              std::optional<double> padding = std::nullopt);
  void reduction(cudnnReduceTensorOp_t op, int x, int y);
  void reshape(int x, int y);
  void paged_load(int container, int seq_len, int page_table, int y);

  // Masks on the score tensor `s` (returns the masked score): padding (both seq
  // lens), and the diagonal band (right bound: causal; left bound: sliding window).
  int padding_mask(int s, int seq_q, int seq_kv);
  int band_mask(int s, const Geom& g, int seq_q, int seq_kv);
  // ALiBi (use_alibi_mask; returns s unchanged without it): s + slope_h * (col - row),
  // slope_h = ops::sdpa::alibi_slope(h, h_q) (cudnn-frontend's) in a [1, h_q, 1, 1]
  // FLOAT workspace tensor the plan initialises; col - row as INT32 (GEN_INDEX, SUB).
  int alibi(int s, const Geom& g);

 private:
  int scalar(ScalarValue v, DataType dt);
  int take(Result<int> r);  // records a failure, returns the record or -1
  Lowerer& l_;
  const Node& n_;
  Status status_;
};

// The composite forward / backward (the node passed the declines).
Status lower_forward_composite(Builder& bld, const Geom& g);
Status lower_backward_composite(Builder& bld, const Geom& g);

}  // namespace opgraph::engines::cudnn::detail::sdpa
