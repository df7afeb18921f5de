// engines/reference/matmul.cpp — reference kernels of the matmul op group
// (semantics at the top of src/ir/ops/matmul.cpp), accumulating in float64.
//
// matmul overrides: an override holding one element per batch entry is read at the
// row-major flat index b over C's batch axes; one in cuDNN's broadcast form (C's
// rank, unit M/N axes, batch axes 1 or C's, e.g. [b, 1, 1, 1] for a [b, h] batch)
// at C's batch index, broadcast. With M_override, rows m >= M_override[b] of C hold
// `padding`; with N_override, columns n >= N_override[b] hold `padding`; with
// K_override, the sum runs over k < K_override[b] only. An override outside
// [0, extent] is GRAPH_EXECUTION_FAILED naming the port, batch entry and value.
// moe_grouped_matmul: expert e owns rows [FirstTokenOffset[e], FirstTokenOffset[e+1]) (the
// last ends at the row count); offsets must be non-decreasing within [0, rows] or the
// kernel fails; rows before the first group belong to no expert and stay 0.
//   NONE: Output row t = Token[t] @ W_e(t); groups index Token (= Output) rows.
//   GATHER: Output row i = Token[TokenIndex[i]] @ W_e(i); groups index Output rows.
//   SCATTER: Output row TokenIndex[i] += TokenKs[i] * (Token[i] @ W_e(i)); groups index
//     Token rows; rows no token lands on stay 0.
//   TokenIndex (read flat) outside [0, Token rows) for GATHER or [0, Output rows) for
//   SCATTER is GRAPH_EXECUTION_FAILED naming the entry.
// moe_grouped_matmul_bwd: DWeight[e] = sum over t in group e of Token[t]^T DOutput[t]
//   (the weight gradient of mode NONE).
#include <cmath>
#include <string>
#include <vector>

#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {
namespace {

// Flat batch index of an operand with batch dims `bd` (right-aligned, 1 broadcasts) at output batch index `idx`.
std::int64_t batch_offset(const Dims& bd, std::span<const std::int64_t> idx) {
  const std::size_t lead = idx.size() - bd.size();
  std::int64_t off = 0;
  for (std::size_t k = 0; k < bd.size(); ++k) off = off * bd[k] + (bd[k] == 1 ? 0 : idx[lead + k]);
  return off;
}

// The override of `port` at batch entry b, C's batch index idx (or `full` if the port is unbound),
// checked against [0, full]. One element per batch entry: read at b; otherwise the broadcast form
// the IR admits (C's rank, unit M/N axes): read at idx, axes of extent 1 broadcast.
Status override_at(KernelContext& c, std::string_view port, std::int64_t b, std::span<const std::int64_t> idx,
                   std::int64_t batch_count, std::int64_t full, std::int64_t* out) {
  *out = full;
  if (!c.has(port)) return Status::ok();
  const Array& o = c.in(port);
  std::int64_t at = b;
  if (o.numel() != batch_count) {
    if (o.dims.size() != idx.size() + 2)  // validate() admits no other shape
      return c.fail(std::string(port) + " has dims of neither admitted form");
    at = batch_offset(Dims(o.dims.begin(), o.dims.end() - 2), idx);
  }
  double v = o[at];
  if (!(v >= 0.0) || v > static_cast<double>(full))
    return c.fail(std::string(port) + " of batch entry " + std::to_string(b) + " is " + std::to_string(v) +
                  ", outside [0, " + std::to_string(full) + "]");
  *out = static_cast<std::int64_t>(v);
  return Status::ok();
}

Status matmul(KernelContext& c) {
  const Array& a = c.in(ops::in::A);
  const Array& bm = c.in(ops::in::B);
  Array& out = c.out(ops::out::C);
  const std::int64_t m_full = a.dims[a.dims.size() - 2], k_full = a.dims.back(), n_full = bm.dims.back();
  const Dims a_batch(a.dims.begin(), a.dims.end() - 2), b_batch(bm.dims.begin(), bm.dims.end() - 2);
  const Dims c_batch(out.dims.begin(), out.dims.end() - 2);
  const double padding = ops::Matmul::padding(c.node());
  std::int64_t batch_count = 1;
  for (auto x : c_batch) batch_count *= x;
  std::int64_t b = 0;
  Status status;
  for_each_index(c_batch, [&](std::span<const std::int64_t> idx) {
    std::int64_t mo = 0, no = 0, ko = 0;
    if (status.is_good()) status = override_at(c, "M_override", b, idx, batch_count, m_full, &mo);
    if (status.is_good()) status = override_at(c, "N_override", b, idx, batch_count, n_full, &no);
    if (status.is_good()) status = override_at(c, "K_override", b, idx, batch_count, k_full, &ko);
    if (status.is_bad()) return;
    const double* pa = a.v.data() + batch_offset(a_batch, idx) * m_full * k_full;
    const double* pb = bm.v.data() + batch_offset(b_batch, idx) * k_full * n_full;
    double* pc = out.v.data() + b * m_full * n_full;
    for (std::int64_t m = 0; m < m_full; ++m)
      for (std::int64_t n = 0; n < n_full; ++n) {
        if (m >= mo || n >= no) {
          pc[m * n_full + n] = padding;
          continue;
        }
        double acc = 0.0;
        for (std::int64_t k = 0; k < ko; ++k) acc += pa[m * k_full + k] * pb[k * n_full + n];
        pc[m * n_full + n] = acc;
      }
    ++b;
  });
  return status;
}

// Expert of each of `rows` rows from FirstTokenOffset (-1: a row before the first group).
Status expert_groups(KernelContext& c, std::int64_t rows, std::vector<std::int64_t>* expert_of) {
  const Array& off = c.in(ops::in::FirstTokenOffset);
  const std::int64_t experts = off.numel();
  expert_of->assign(static_cast<std::size_t>(rows), -1);
  for (std::int64_t e = 0; e < experts; ++e) {
    const double start = off[e], end = e + 1 < experts ? off[e + 1] : static_cast<double>(rows);
    if (!(start >= 0.0) || start > end || end > static_cast<double>(rows))
      return c.fail("FirstTokenOffset must be non-decreasing starts within [0, " + std::to_string(rows) +
                    "]; expert " + std::to_string(e) + " spans [" + std::to_string(start) + ", " +
                    std::to_string(end) + ")");
    for (auto r = static_cast<std::int64_t>(start); r < static_cast<std::int64_t>(end); ++r)
      (*expert_of)[static_cast<std::size_t>(r)] = e;
  }
  return Status::ok();
}

// out[0..N) (+)= scale * (token row `t` @ Weight[e]).
void row_times_expert(const Array& token, std::int64_t t, const Array& w, std::int64_t e, double scale, double* out) {
  const std::int64_t k_dim = w.dims[1], n_dim = w.dims[2];
  const double* x = token.v.data() + t * k_dim;
  const double* we = w.v.data() + e * k_dim * n_dim;
  for (std::int64_t n = 0; n < n_dim; ++n) {
    double acc = 0.0;
    for (std::int64_t k = 0; k < k_dim; ++k) acc += x[k] * we[k * n_dim + n];
    out[n] += scale * acc;
  }
}

Status moe_grouped_matmul(KernelContext& c) {
  const Array& token = c.in(ops::in::Token);
  const Array& w = c.in(ops::in::Weight);
  Array& out = c.out(ops::out::Output);
  using MM = ops::MoeGroupedMatmulMode;
  const MM mode = ops::MoeGroupedMatmul::mode(c.node());
  const std::int64_t t_rows = token.dims[1], n_dim = w.dims[2], out_rows = out.dims[1];
  std::vector<std::int64_t> expert_of;
  auto index_at = [&](std::int64_t i, std::int64_t bound, std::int64_t* r) -> Status {
    double v = c.in(ops::in::TokenIndex)[i];
    if (!(v >= 0.0) || v >= static_cast<double>(bound))
      return c.fail("TokenIndex[" + std::to_string(i) + "] is " + std::to_string(v) + ", outside [0, " +
                    std::to_string(bound) + ")");
    *r = static_cast<std::int64_t>(v);
    return Status::ok();
  };
  if (mode == MM::NONE || mode == MM::GATHER) {
    OPGRAPH_CHECK(expert_groups(c, out_rows, &expert_of));
    for (std::int64_t i = 0; i < out_rows; ++i) {
      std::int64_t src = i;
      if (mode == MM::GATHER) OPGRAPH_CHECK(index_at(i, t_rows, &src));
      if (expert_of[static_cast<std::size_t>(i)] >= 0)
        row_times_expert(token, src, w, expert_of[static_cast<std::size_t>(i)], 1.0, out.v.data() + i * n_dim);
    }
    return Status::ok();
  }
  // SCATTER: groups index Token rows; each adds its weighted product into its destination row.
  OPGRAPH_CHECK(expert_groups(c, t_rows, &expert_of));
  const Array& ks = c.in(ops::in::TokenKs);
  for (std::int64_t i = 0; i < t_rows; ++i) {
    std::int64_t dst = 0;
    OPGRAPH_CHECK(index_at(i, out_rows, &dst));
    if (expert_of[static_cast<std::size_t>(i)] >= 0)
      row_times_expert(token, i, w, expert_of[static_cast<std::size_t>(i)], ks[i], out.v.data() + dst * n_dim);
  }
  return Status::ok();
}

Status moe_grouped_matmul_bwd(KernelContext& c) {
  const Array& dy = c.in(ops::in::DOutput);
  const Array& token = c.in(ops::in::Token);
  Array& dw = c.out(ops::out::DWeight);
  const std::int64_t t_rows = token.dims[1], k_dim = token.dims[2], n_dim = dy.dims[2];
  std::vector<std::int64_t> expert_of;
  OPGRAPH_CHECK(expert_groups(c, t_rows, &expert_of));
  for (std::int64_t t = 0; t < t_rows; ++t) {
    const std::int64_t e = expert_of[static_cast<std::size_t>(t)];
    if (e < 0) continue;
    double* g = dw.v.data() + e * k_dim * n_dim;
    for (std::int64_t k = 0; k < k_dim; ++k)
      for (std::int64_t n = 0; n < n_dim; ++n) g[k * n_dim + n] += token[t * k_dim + k] * dy[t * n_dim + n];
  }
  return Status::ok();
}

const KernelRecord kKernels[] = {
    {ops::Matmul::kIndex, matmul},
    {ops::MoeGroupedMatmul::kIndex, moe_grouped_matmul},
    {ops::MoeGroupedMatmulBwd::kIndex, moe_grouped_matmul_bwd},
};

}  // namespace

std::span<const KernelRecord> matmul_kernels() { return kKernels; }

}  // namespace opgraph::reference
