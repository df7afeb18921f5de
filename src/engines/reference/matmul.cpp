// engines/reference/matmul.cpp — reference kernels of the matmul op group
// (semantics at the top of src/ir/ops/matmul.cpp), accumulating in float64.
//
// matmul overrides: the batch entry b is the row-major flat index over C's batch
// axes. With M_override, rows m >= M_override[b] of C hold `padding`; with
// N_override, columns n >= N_override[b] hold `padding`; with K_override, the sum
// runs over k < K_override[b] only. An override outside [0, extent] is
// GRAPH_EXECUTION_FAILED naming the port, batch entry and value.
// moe_grouped_matmul: expert e owns token rows [FirstTokenOffset[e], FirstTokenOffset[e+1])
// (the last ends at T); offsets must be non-decreasing in [0, T] or the kernel fails.
//   NONE: Output row t = Token[t] @ W_e(t).
//   GATHER: Output row i = Token[TokenIndex[i]] @ W_e(i); expert groups index Output rows.
//   SCATTER: Output row TokenIndex[i] += TokenKs[i] * (Token[i] @ W_e(i)); groups index Token rows.
// moe_grouped_matmul_bwd: DWeight[e] = sum over t in group e of Token[t]^T DOutput[t].
#include <cmath>
#include <string>

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

// The override of `port` at batch entry b (or `full` if the port is unbound), checked against [0, full].
Status override_at(KernelContext& c, std::string_view port, std::int64_t b, std::int64_t full, std::int64_t* out) {
  *out = full;
  if (!c.has(port)) return Status::ok();
  double v = c.in(port)[b];
  if (!(v >= 0.0) || v > static_cast<double>(full))
    return c.fail(std::string(port) + " of batch entry " + std::to_string(b) + " is " + std::to_string(v) +
                  ", outside [0, " + std::to_string(full) + "]");
  *out = static_cast<std::int64_t>(v);
  return Status::ok();
}

Status matmul(KernelContext& c) {
  const Array& a = c.in("A");
  const Array& bm = c.in("B");
  Array& out = c.out("C");
  const std::int64_t m_full = a.dims[a.dims.size() - 2], k_full = a.dims.back(), n_full = bm.dims.back();
  const Dims a_batch(a.dims.begin(), a.dims.end() - 2), b_batch(bm.dims.begin(), bm.dims.end() - 2);
  const Dims c_batch(out.dims.begin(), out.dims.end() - 2);
  const double padding = c.node().get_float("padding", 0.0);
  std::int64_t b = 0;
  Status status;
  for_each_index(c_batch, [&](std::span<const std::int64_t> idx) {
    std::int64_t mo = 0, no = 0, ko = 0;
    if (status.is_good()) status = override_at(c, "M_override", b, m_full, &mo);
    if (status.is_good()) status = override_at(c, "N_override", b, n_full, &no);
    if (status.is_good()) status = override_at(c, "K_override", b, k_full, &ko);
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

const KernelRecord kKernels[] = {
    {"matmul", matmul},
};

}  // namespace

std::span<const KernelRecord> matmul_kernels() { return kKernels; }

}  // namespace opgraph::reference
