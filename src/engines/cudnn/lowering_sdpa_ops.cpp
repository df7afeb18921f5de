// engines/cudnn/lowering_sdpa_ops.cpp — the SDPA Builder (backend operations
// with their virtual tensors, as data), the score masks, and the composite
// forward: the sequence of operations cudnn-frontend's composite expansion
// hands the backend for cuDNN < 9.21, which the fused attention engines
// pattern-match (so the order, the data types and the extra ops matter):
//   K as K^T [b, h_k, d, s_kv] (strides swapped; or a paged cache load),
//   S = Q K^T (M/N overrides = SEQ_LEN_Q / SEQ_LEN_KV, padding value 0),
//   S *= attn_scale, S += Bias, S += ALiBi (slopes in an initialised workspace
//   tensor), padding mask (GEN_INDEX, CMP_LT, LOGICAL_AND,
//   BINARY_SELECT with -inf), diagonal band masks (right bound: CMP_GE, left
//   bound: CMP_GT), softmax (MAX [, pointwise MAX with the sink] [-> Max], SUB,
//   EXP, ADD [+ EXP(sink - max)] [-> Sum_exp], LOG + ADD -> Stats, DIV -> P in
//   the io type), O = P V (M/K overrides).
#include <cstring>
#include <limits>

#include "engines/cudnn/lowering_sdpa_internal.h"
#include "ir/ops/sdpa_common.h"

namespace opgraph::engines::cudnn::detail::sdpa {
namespace {

std::int64_t cu(DataType t) { return to_cudnn_data_type(t); }

double negative_inf(std::int64_t version) {
  // cuDNN before 9.10 prefers the lowest finite float for masked scores.
  return version < 91000 ? static_cast<double>(std::numeric_limits<float>::lowest())
                         : -std::numeric_limits<double>::infinity();
}

}  // namespace

int Builder::take(Result<int> r) {
  if (r.is_good()) return r.value();
  if (status_.is_good()) status_ = r.status();
  return -1;
}

int Builder::in(const ops::PortRef& port) {
  TensorPtr t = n_.input(port);
  if (!t || status_.is_bad()) return -1;
  return take(l_.tensor(t));
}

int Builder::out(const ops::PortRef& port) {
  TensorPtr t = n_.output(port);
  if (!t || status_.is_bad()) return -1;
  return take(l_.tensor(t));
}

int Builder::virt(const Dims& dims, DataType dt, Dims strides, int ragged_record) {
  if (status_.is_bad()) return -1;
  Lowerer::NewTensor t;
  t.ragged_record = ragged_record;
  t.dims = dims;
  t.strides = strides.empty() ? packed(dims) : std::move(strides);
  t.dt = dt;
  t.name = n_.name() + "::v";
  return take(l_.new_tensor(t));
}

int Builder::scratch(const Dims& dims, DataType dt) {
  if (status_.is_bad()) return -1;
  Lowerer::NewTensor t;
  t.dims = dims;
  t.strides = packed(dims);
  t.dt = dt;
  t.is_virtual = false;
  t.name = n_.name() + "::workspace";
  return take(l_.new_tensor(t));
}

int Builder::scratch_init(const Dims& dims, const std::vector<float>& values) {
  const int r = scratch(dims, DataType::FLOAT);
  if (r < 0) return r;
  auto& init = l_.plan().scratch.back().init;  // scratch() appended it
  init.resize(values.size() * sizeof(float));
  std::memcpy(init.data(), values.data(), init.size());
  return r;
}

int Builder::scalar(ScalarValue v, DataType dt) {
  if (status_.is_bad()) return -1;
  Lowerer::NewTensor t;
  t.dims = {1, 1, 1, 1};
  t.strides = {1, 1, 1, 1};
  t.dt = dt;
  t.scalar = v;
  t.name = n_.name() + "::scalar";
  return take(l_.new_tensor(t));
}

int Builder::scalar_f(double v) {
  ScalarValue s;
  s.data_type = DataType::FLOAT;
  s.f = v;
  return scalar(s, DataType::FLOAT);
}

int Builder::scalar_i32(std::int64_t v) {
  ScalarValue s;
  s.data_type = DataType::INT32;
  s.i = v;
  return scalar(s, DataType::INT32);
}

Dims Builder::dims(int record) const {
  for (const auto& t : l_.plan().tensors)
    if (t.record == record) return t.dims;
  return {};
}

Dims Builder::strides(int record) const {
  for (const auto& t : l_.plan().tensors)
    if (t.record == record) return t.strides;
  return {};
}

int Builder::pointwise(cudnnPointwiseMode_t mode, int x, int b, int t, int y, DataType prec,
                       std::optional<std::int64_t> axis) {
  if (status_.is_bad()) return -1;
  const std::string label = Lowerer::node_label(n_) + " pointwise " + std::to_string(static_cast<int>(mode));
  int desc = l_.add(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, label + " descriptor", std::string(n_.op()));
  l_.set_int(desc, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode);
  l_.set_int(desc, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, cu(prec));
  if (axis) l_.set_int(desc, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, *axis);
  int op = l_.add(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, label, std::string(n_.op()));
  l_.set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, {desc});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, {x});
  if (b >= 0) l_.set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, {b});
  if (t >= 0) l_.set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, {t});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, {y});
  l_.plan().operations.push_back(op);
  return y;
}

int Builder::pointwise_new(cudnnPointwiseMode_t mode, int x, int b, int t, DataType out_dt, DataType prec,
                           std::optional<std::int64_t> axis) {
  int y = virt(dims(x), out_dt, strides(x));
  return pointwise(mode, x, b, t, y, prec, axis);
}

void Builder::matmul(int a, int b, int c, int m_ovr, int n_ovr, int k_ovr, std::optional<double> padding) {
  if (status_.is_bad()) return;
  const std::string label = Lowerer::node_label(n_) + " matmul";
  int desc = l_.add(CUDNN_BACKEND_MATMUL_DESCRIPTOR, label + " descriptor", std::string(n_.op()));
  l_.set_int(desc, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
  if (padding) l_.set_real(desc, CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, *padding);
  int op = l_.add(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, label, std::string(n_.op()));
  l_.set_refs(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, {a});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, {b});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, {c});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, {desc});
  if (m_ovr >= 0) l_.set_refs(op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, {m_ovr});
  if (n_ovr >= 0) l_.set_refs(op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, {n_ovr});
  if (k_ovr >= 0) l_.set_refs(op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, {k_ovr});
  l_.plan().operations.push_back(op);
}

void Builder::reduction(cudnnReduceTensorOp_t red, int x, int y) {
  if (status_.is_bad()) return;
  const std::string label = Lowerer::node_label(n_) + " reduction";
  int desc = l_.add(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, label + " descriptor", std::string(n_.op()));
  l_.set_int(desc, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, red);
  l_.set_int(desc, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
  int op = l_.add(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, label, std::string(n_.op()));
  l_.set_refs(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, {x});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, {y});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, {desc});
  l_.plan().operations.push_back(op);
}

void Builder::reshape(int x, int y) {
  if (status_.is_bad()) return;
  int op = l_.add(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, Lowerer::node_label(n_) + " reshape", std::string(n_.op()));
  l_.set_refs(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, {x});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, {y});
  l_.plan().operations.push_back(op);
}

void Builder::paged_load(int container, int seq_len, int page_table, int y) {
  if (status_.is_bad()) return;
  int op = l_.add(CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR, Lowerer::node_label(n_) + " paged cache load",
                  std::string(n_.op()));
  l_.set_refs(op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, {container});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, {y});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, {seq_len});
  l_.set_refs(op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, {page_table});
  l_.plan().operations.push_back(op);
}

int Builder::padding_mask(int s, int seq_q, int seq_kv) {
  const DataType I = DataType::INT32, B = DataType::BOOLEAN;
  int row = pointwise_new(CUDNN_POINTWISE_GEN_INDEX, s, -1, -1, I, I, 2);
  int col = pointwise_new(CUDNN_POINTWISE_GEN_INDEX, s, -1, -1, I, I, 3);
  int row_ok = pointwise_new(CUDNN_POINTWISE_CMP_LT, row, seq_q, -1, B, B);
  int col_ok = pointwise_new(CUDNN_POINTWISE_CMP_LT, col, seq_kv, -1, B, B);
  int keep = pointwise_new(CUDNN_POINTWISE_LOGICAL_AND, row_ok, col_ok, -1, B, B);
  int inf = scalar_f(negative_inf(l_.options().cudnn_version));
  return pointwise_new(CUDNN_POINTWISE_BINARY_SELECT, s, inf, keep);
}

int Builder::band_mask(int s, const Geom& g, int seq_q, int seq_kv) {
  const DataType I = DataType::INT32, B = DataType::BOOLEAN, F = DataType::FLOAT;
  const ops::sdpa::Band band = ops::sdpa::band_of(n_);
  if (band.right) {  // keep iff row (+ s_kv - s_q) + right >= col
    int row = pointwise_new(CUDNN_POINTWISE_GEN_INDEX, s, -1, -1, I, F, 2);
    int col = pointwise_new(CUDNN_POINTWISE_GEN_INDEX, s, -1, -1, I, F, 3);
    if (band.bottom_right) {  // the seq lens with the padding mask, else the declared extents
      int kv = g.padding ? seq_kv : scalar_i32(g.s_kv);
      int q = g.padding ? seq_q : scalar_i32(g.s_q);
      row = pointwise_new(CUDNN_POINTWISE_ADD, row, kv, -1, I, I, 3);
      row = pointwise_new(CUDNN_POINTWISE_SUB, row, q, -1, I, I, 3);
    }
    if (*band.right != 0) row = pointwise_new(CUDNN_POINTWISE_ADD, row, scalar_i32(*band.right), -1, I, I, 3);
    int keep = pointwise_new(CUDNN_POINTWISE_CMP_GE, row, col, -1, B, B);
    s = pointwise_new(CUDNN_POINTWISE_BINARY_SELECT, s, scalar_f(negative_inf(l_.options().cudnn_version)), keep);
  }
  if (band.left) {  // keep iff col + left (- s_kv + s_q) > row
    int row = pointwise_new(CUDNN_POINTWISE_GEN_INDEX, s, -1, -1, I, F, 2);
    int col = pointwise_new(CUDNN_POINTWISE_GEN_INDEX, s, -1, -1, I, F, 3);
    if (!band.bottom_right || !g.padding) {
      double lb = static_cast<double>(*band.left);
      if (band.bottom_right) lb += static_cast<double>(g.s_q - g.s_kv);
      col = pointwise_new(CUDNN_POINTWISE_ADD, col, scalar_f(lb), -1, F, F, 3);
    } else {
      col = pointwise_new(CUDNN_POINTWISE_ADD, col, scalar_i32(*band.left), -1, I, I, 3);
      col = pointwise_new(CUDNN_POINTWISE_SUB, col, seq_kv, -1, I, I, 3);
      col = pointwise_new(CUDNN_POINTWISE_ADD, col, seq_q, -1, I, I, 3);
    }
    int keep = pointwise_new(CUDNN_POINTWISE_CMP_GT, col, row, -1, B, B);
    s = pointwise_new(CUDNN_POINTWISE_BINARY_SELECT, s, scalar_f(negative_inf(l_.options().cudnn_version)), keep);
  }
  return s;
}

int Builder::alibi(int s, const Geom& g) {
  if (!ops::attr::use_alibi_mask(n_) || status_.is_bad()) return s;
  const DataType I = DataType::INT32;
  std::vector<float> slopes;
  for (std::int64_t h = 0; h < g.h_q; ++h) slopes.push_back(static_cast<float>(ops::sdpa::alibi_slope(h, g.h_q)));
  const int slope = scratch_init({1, g.h_q, 1, 1}, slopes);
  int row = pointwise_new(CUDNN_POINTWISE_GEN_INDEX, s, -1, -1, I, I, 2);
  int col = pointwise_new(CUDNN_POINTWISE_GEN_INDEX, s, -1, -1, I, I, 3);
  int diff = pointwise_new(CUDNN_POINTWISE_SUB, col, row, -1, I, I);
  int bias = pointwise_new(CUDNN_POINTWISE_MUL, diff, slope);
  return pointwise_new(CUDNN_POINTWISE_ADD, s, bias);
}

Status lower_forward_composite(Builder& bld, const Geom& g) {
  Lowerer& l = bld.lowerer();
  const Node& n = bld.node();
  const int q = bld.in(ops::in::Q), k = bld.in(ops::in::K), v = bld.in(ops::in::V), o = bld.out(ops::out::O);
  const int seq_q = bld.in(ops::in::SEQ_LEN_Q), seq_kv = bld.in(ops::in::SEQ_LEN_KV);
  OPGRAPH_CHECK(bld.status());
  int kt = k;
  if (g.paged) {  // K^T [b, h_k, d, s_kv] gathered through the page table (PAGED_CACHE_LOAD: cuDNN >= 9.5)
    l.require_version(n, 90500);
    kt = bld.virt({g.b, g.h_k, g.d_qk, g.s_kv}, n.input(ops::in::K)->get_data_type(),
                  {g.d_qk * g.s_kv * g.h_k, g.d_qk * g.s_kv, 1, g.d_qk});
    bld.paged_load(k, seq_kv, bld.in(ops::in::Page_table_K), kt);
  } else {  // the backend reads K as K^T: swap the last two dims and strides of K's own record
    Dims d = bld.dims(k), st = bld.strides(k);
    std::swap(d[2], d[3]);
    std::swap(st[2], st[3]);
    l.retarget(k, d, st);
  }
  const Dims full = {g.b, g.h_q, g.s_q, g.s_kv};
  int s = bld.virt(full);
  bld.matmul(q, kt, s, seq_q, seq_kv, -1, g.padding ? std::optional<double>(0.0) : std::nullopt);
  if (n.input(ops::in::Attn_scale))
    s = bld.pointwise_new(CUDNN_POINTWISE_MUL, s, bld.in(ops::in::Attn_scale));
  else if (n.attr_is_set("attn_scale"))
    s = bld.pointwise_new(CUDNN_POINTWISE_MUL, s, bld.scalar_f(ops::attr::attn_scale(n).value_or(0.0)));
  if (n.input(ops::in::Bias)) s = bld.pointwise_new(CUDNN_POINTWISE_ADD, s, bld.in(ops::in::Bias));
  s = bld.alibi(s, g);
  if (g.padding) s = bld.padding_mask(s, seq_q, seq_kv);
  s = bld.band_mask(s, g, seq_q, seq_kv);
  // Softmax with stats: Stats = max + log(sum exp(s - max)), P = exp(s - max) / sum;
  // the max and the sum are the Max / Sum_exp outputs when the node asks for them.
  // A SINK_TOKEN [1, h_q, 1, 1] joins the max (pointwise MAX) and the sum (+ exp(sink - max)).
  const Dims row = {g.b, g.h_q, g.s_q, 1}, row_st = {g.h_q * g.s_q, g.s_q, 1, 1};
  const int sink = n.input(ops::in::SINK_TOKEN) ? bld.in(ops::in::SINK_TOKEN) : -1;
  if (sink >= 0) l.require_version(n, 91300);  // cudnn-frontend's sink gate
  auto row_out = [&](const char* port) { return n.output(port) ? bld.out(port) : bld.virt(row, DataType::FLOAT, row_st); };
  int mx = sink >= 0 ? bld.virt(row, DataType::FLOAT, row_st) : row_out("Max");
  bld.reduction(CUDNN_REDUCE_TENSOR_MAX, s, mx);
  if (sink >= 0) mx = bld.pointwise(CUDNN_POINTWISE_MAX, mx, sink, -1, row_out("Max"));
  int ex = bld.pointwise_new(CUDNN_POINTWISE_EXP, bld.pointwise_new(CUDNN_POINTWISE_SUB, s, mx));
  int sum = sink >= 0 ? bld.virt(row, DataType::FLOAT, row_st) : row_out("Sum_exp");
  bld.reduction(CUDNN_REDUCE_TENSOR_ADD, ex, sum);
  if (sink >= 0) {
    // exp(sink - max): SUB with the [1, h_q, 1, 1] sink as X broadcast to the row tensor, as the frontend does.
    int sink_exp = bld.virt(row, DataType::FLOAT, row_st);
    bld.pointwise(CUDNN_POINTWISE_SUB, sink, mx, -1, sink_exp);
    sink_exp = bld.pointwise_new(CUDNN_POINTWISE_EXP, sink_exp);
    sum = bld.pointwise(CUDNN_POINTWISE_ADD, sum, sink_exp, -1, row_out("Sum_exp"));
  }
  int lg = bld.pointwise_new(CUDNN_POINTWISE_LOG, sum);
  int stats = n.output(ops::out::Stats) ? bld.out(ops::out::Stats) : bld.virt(row, DataType::FLOAT, row_st);
  bld.pointwise(CUDNN_POINTWISE_ADD, mx, lg, -1, stats);
  int p = bld.virt(full, g.io);  // bmm2 takes P in the io type
  bld.pointwise(CUDNN_POINTWISE_DIV, ex, sum, -1, p);
  int vv = v;
  if (g.paged) {
    vv = bld.virt({g.b, g.h_v, g.s_kv, g.d_v}, n.input(ops::in::V)->get_data_type());
    bld.paged_load(v, seq_kv, bld.in(ops::in::Page_table_V), vv);
  }
  bld.matmul(p, vv, o, seq_q, -1, seq_kv);
  return bld.status();
}

}  // namespace opgraph::engines::cudnn::detail::sdpa
