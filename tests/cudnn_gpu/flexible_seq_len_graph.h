// tests/cudnn_gpu/flexible_seq_len_graph.h — cudnn-frontend's
// test_flexible_sdpa.py::test_sdpa_with_flexible_graph as the Python package writes it
// (python/opgraph/_porting.py flexible_sdpa): paged K / V, SEQ_LEN_Q / SEQ_LEN_KV
// [b, 1, 1, 1] as the two matmuls' GEMM overrides (Q K^T: M / N; P V: M / K), the
// test's softcap and padding mask as score_mod, then the softmax; O [b, h, s_q, d] in
// BSHD strides. One builder at any extents: the CPU lowering test takes the test's own
// (tests/cudnn/test_cudnn_flexible_seq_len.cpp), test_cudnn_gpu's case small ones.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "opgraph/graph.h"

namespace cudnn_gpu {

struct FlexibleSeqLen {
  std::int64_t b, h, s_q, s_kv, d, blk;  // blk: the page size (tokens a page)
  opgraph::TensorPtr q, k_cont, v_cont, table_k, table_v, seq_q, seq_kv;  // the inputs
  opgraph::TensorPtr k, v, bmm1, o;  // the paged loads, Q K^T, the output
  std::vector<std::int64_t> bshd() const { return {s_q * h * d, d, h * d, 1}; }

  // Declares the graph into g (its types set here).
  void build(opgraph::Graph& g) {
    using opgraph::Attributes;
    using opgraph::DataType;
    using D = std::vector<std::int64_t>;
    g.set_io_data_type(DataType::HALF).set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    const std::int64_t pages = s_kv / blk;
    q = g.tensor({b, h, s_q, d}, DataType::HALF, "q", bshd());
    k_cont = g.tensor({b * pages, h, blk, d}, DataType::HALF, "container_k");
    v_cont = g.tensor({b * pages, h, blk, d}, DataType::HALF, "container_v");
    table_k = g.tensor({b, 1, pages, 1}, DataType::INT32, "page_table_k");
    table_v = g.tensor({b, 1, pages, 1}, DataType::INT32, "page_table_v");
    seq_q = g.tensor({b, 1, 1, 1}, DataType::INT32, "seq_len_q");
    seq_kv = g.tensor({b, 1, 1, 1}, DataType::INT32, "seq_len_kv");
    auto cap = g.tensor_scalar(0.8), neg_inf = g.tensor_scalar(-1e9);
    k = g.paged_cache_load(k_cont, seq_kv, table_k);
    k->set_dim({b, h, s_kv, d});
    v = g.paged_cache_load(v_cont, seq_kv, table_v);
    v->set_dim({b, h, s_kv, d});
    auto kt = g.transpose(k, Attributes().set("permutation", D{0, 1, 3, 2}));
    kt->set_data_type(DataType::HALF);
    bmm1 = g.matmul(q, kt, Attributes().set_name("sdpa::matmul_q_kt"), seq_q, seq_kv);
    auto s = g.mul(bmm1, g.tensor_scalar(1.0 / std::sqrt(static_cast<double>(d))));
    s = g.mul(g.tanh(g.div(s, cap)), cap);  // the test's softcap
    auto row = g.gen_index(s, 2), col = g.gen_index(s, 3);
    row->set_data_type(DataType::INT32);
    col->set_data_type(DataType::INT32);
    auto row_mask = g.cmp_ge(row, seq_q), col_mask = g.cmp_ge(col, seq_kv);
    row_mask->set_data_type(DataType::BOOLEAN);
    col_mask->set_data_type(DataType::BOOLEAN);
    auto both = g.logical_and(row_mask, col_mask);
    both->set_data_type(DataType::BOOLEAN);
    s = g.binary_select(s, neg_inf, both);  // the test's padding mask (its score_mod ends here)
    auto mx = g.reduction(s, Attributes().set("mode", "MAX"));
    mx->set_dim({b, h, s_q, 1});
    auto e = g.exp(g.sub(s, mx));
    auto z = g.reduction(e, Attributes().set("mode", "ADD"));
    z->set_dim({b, h, s_q, 1});
    g.add(mx, g.log(z))->set_data_type(DataType::FLOAT);  // Stats, virtual (generate_stats=False)
    auto p = g.div(e, z);
    p->set_data_type(DataType::HALF);
    o = g.matmul(p, v, Attributes().set_name("sdpa::matmul_p_v"), seq_q, nullptr, seq_kv);
    o->set_output(true).set_name("O").set_data_type(DataType::HALF).set_stride(bshd());
  }
};

}  // namespace cudnn_gpu
