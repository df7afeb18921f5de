// engines/reference/sdpa_ref_core.cpp — float64 SDPA forward and backward on
// dense logical arrays (semantics in sdpa_ref.h). Plain loops, one row at a time.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engines/reference/convert.h"
#include "engines/reference/rng.h"
#include "engines/reference/sdpa_ref.h"

namespace opgraph::reference::sdpa_ref {

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Pointer to row (n, h, i) of a dense [b, h, s, d] array.
const double* row(const Array& a, std::int64_t n, std::int64_t h, std::int64_t i) {
  return a.v.data() + ((n * a.dims[1] + h) * a.dims[2] + i) * a.dims[3];
}
double* row(Array& a, std::int64_t n, std::int64_t h, std::int64_t i) {
  return a.v.data() + ((n * a.dims[1] + h) * a.dims[2] + i) * a.dims[3];
}
double dot(const double* x, const double* y, std::int64_t d) {
  double s = 0.0;
  for (std::int64_t t = 0; t < d; ++t) s += x[t] * y[t];
  return s;
}
}  // namespace

double Requant::operator()(double x) const {
  if (type == DataType::NOT_SET && scale == 1.0 && descale == 1.0) return x;
  return round_to(type, x * scale) * descale;
}

bool Problem::kept(std::int64_t n, std::int64_t h, std::int64_t i, std::int64_t j) const {
  if (i >= sq[n] || j >= skv[n]) return false;
  const std::int64_t ii = band.bottom_right ? i + (skv[n] - sq[n]) : i;
  if (band.right && j - ii > *band.right) return false;
  if (band.left && ii - j >= *band.left) return false;
  if (block_mask) {
    const std::int64_t idx[4] = {n, h, i / 128, j / 128};
    if (block_mask->broadcast_at(idx) == 0.0) return false;
  }
  return true;
}

double Problem::score(std::int64_t n, std::int64_t h, std::int64_t i, std::int64_t j, const double* q,
                      const double* k) const {
  double s = attn_scale * dot(q, k, d_qk);
  if (bias) {
    const std::int64_t idx[4] = {n, h, i, j};
    s += bias->broadcast_at(idx);
  }
  if (alibi) s += ops::sdpa::alibi_slope(h, h_q) * static_cast<double>(j - i);
  return s;
}

double Problem::dropout_factor(std::int64_t n, std::int64_t h, std::int64_t i, std::int64_t j) const {
  if (dropout_mask) {
    const std::int64_t idx[4] = {n, h, i, j};
    return dropout_mask->broadcast_at(idx) * dropout_scale;
  }
  if (dropout_p > 0.0) {
    const auto flat = static_cast<std::uint64_t>(((n * h_q + h) * s_q + i) * s_kv + j);
    return rng_bernoulli(seed, offset, flat, 1.0 - dropout_p) / (1.0 - dropout_p);
  }
  return 1.0;
}

ForwardResult forward(const Problem& pb, const Array& q, const Array& k, const Array& v, bool want_rng_dump,
                      const Requant& p_requant) {
  ForwardResult r;
  r.O = Array({pb.b, pb.h_q, pb.s_q, pb.d_v});
  const Dims stat_dims = {pb.b, pb.h_q, pb.s_q, 1};
  r.Stats = Array(stat_dims, kNegInf);
  r.Max = Array(stat_dims, kNegInf);
  r.Sum_exp = Array(stat_dims, 0.0);
  if (want_rng_dump) r.rng_dump = Array({pb.b, pb.h_q, pb.s_q, pb.s_kv});
  const std::int64_t gk = pb.h_q / pb.h_k, gv = pb.h_q / pb.h_v;
  std::vector<double> s(static_cast<std::size_t>(pb.s_kv));
  std::vector<char> keep(static_cast<std::size_t>(pb.s_kv));
  for (std::int64_t n = 0; n < pb.b; ++n)
    for (std::int64_t h = 0; h < pb.h_q; ++h)
      for (std::int64_t i = 0; i < pb.s_q; ++i) {
        if (want_rng_dump && pb.dropout_p > 0.0)
          for (std::int64_t j = 0; j < pb.s_kv; ++j)
            r.rng_dump.at({n, h, i, j}) = pb.dropout_factor(n, h, i, j) > 0.0 ? 1.0 : 0.0;
        if (i >= pb.sq[n]) continue;
        const double* qi = row(q, n, h, i);
        double m = pb.sink ? pb.sink->at({0, h, 0, 0}) : kNegInf;
        for (std::int64_t j = 0; j < pb.s_kv; ++j) {
          keep[j] = pb.kept(n, h, i, j);
          if (!keep[j]) continue;
          s[j] = pb.score(n, h, i, j, qi, row(k, n, h / gk, j));
          m = std::max(m, s[j]);
        }
        if (m == kNegInf) continue;  // nothing to attend
        double sum = pb.sink ? std::exp(pb.sink->at({0, h, 0, 0}) - m) : 0.0;
        for (std::int64_t j = 0; j < pb.s_kv; ++j)
          if (keep[j]) sum += std::exp(s[j] - m);
        const double lse = m + std::log(sum);
        r.Max.at({n, h, i, 0}) = m;
        r.Sum_exp.at({n, h, i, 0}) = sum;
        r.Stats.at({n, h, i, 0}) = lse;
        double* oi = row(r.O, n, h, i);
        for (std::int64_t j = 0; j < pb.s_kv; ++j) {
          if (!keep[j]) continue;
          const double p = std::exp(s[j] - lse) * pb.dropout_factor(n, h, i, j);
          r.amax_s = std::max(r.amax_s, std::fabs(p));
          const double pq = p_requant(p);
          const double* vj = row(v, n, h / gv, j);
          for (std::int64_t t = 0; t < pb.d_v; ++t) oi[t] += pq * vj[t];
        }
      }
  r.amax_o = amax(r.O);
  return r;
}

BackwardResult backward(const Problem& pb, const BackwardOperands& in, const Requant& p_requant,
                        const Requant& ds_requant) {
  BackwardResult r;
  r.dQ = Array({pb.b, pb.h_q, pb.s_q, pb.d_qk});
  r.dK = Array({pb.b, pb.h_k, pb.s_kv, pb.d_qk});
  r.dV = Array({pb.b, pb.h_v, pb.s_kv, pb.d_v});
  r.dS = Array({pb.b, pb.h_q, pb.s_q, pb.s_kv});
  r.dSink = Array({1, pb.h_q, 1, 1});
  const Array& q_dk = in.q_for_dk ? *in.q_for_dk : *in.q;
  const Array& k_dq = in.k_for_dq ? *in.k_for_dq : *in.k;
  const Array& do_dv = in.do_for_dv ? *in.do_for_dv : *in.dO;
  const Array& do_d = in.do_for_d ? *in.do_for_d : *in.dO;
  const std::int64_t gk = pb.h_q / pb.h_k, gv = pb.h_q / pb.h_v;
  for (std::int64_t n = 0; n < pb.b; ++n)
    for (std::int64_t h = 0; h < pb.h_q; ++h)
      for (std::int64_t i = 0; i < pb.sq[n] && i < pb.s_q; ++i) {
        const double lse = in.stats->at({n, h, i, 0});
        if (!std::isfinite(lse)) continue;  // a row with nothing to attend has no gradient
        const double* qi = row(*in.q, n, h, i);
        const double* dOi = row(*in.dO, n, h, i);
        const double D = dot(row(do_d, n, h, i), row(*in.o, n, h, i), pb.d_v);
        if (pb.sink) r.dSink.at({0, h, 0, 0}) -= std::exp(pb.sink->at({0, h, 0, 0}) - lse) * D;
        double* dqi = row(r.dQ, n, h, i);
        for (std::int64_t j = 0; j < pb.s_kv; ++j) {
          if (!pb.kept(n, h, i, j)) continue;
          const double* kj = row(*in.k, n, h / gk, j);
          const double* vj = row(*in.v, n, h / gv, j);
          const double p = std::exp(pb.score(n, h, i, j, qi, kj) - lse);
          const double f = pb.dropout_factor(n, h, i, j);
          const double dp = f * dot(dOi, vj, pb.d_v);
          const double ds = p * (dp - D);
          r.dS.at({n, h, i, j}) = ds;
          r.amax_dp = std::max(r.amax_dp, std::fabs(ds));
          const double pq = p_requant(p * f), dsq = ds_requant(ds) * pb.attn_scale;
          double* dvj = row(r.dV, n, h / gv, j);
          const double* dov = row(do_dv, n, h, i);
          for (std::int64_t t = 0; t < pb.d_v; ++t) dvj[t] += pq * dov[t];
          const double* kq = row(k_dq, n, h / gk, j);
          for (std::int64_t t = 0; t < pb.d_qk; ++t) dqi[t] += dsq * kq[t];
          double* dkj = row(r.dK, n, h / gk, j);
          const double* qk = row(q_dk, n, h, i);
          for (std::int64_t t = 0; t < pb.d_qk; ++t) dkj[t] += dsq * qk[t];
        }
      }
  r.amax_dq = amax(r.dQ);
  r.amax_dk = amax(r.dK);
  r.amax_dv = amax(r.dV);
  return r;
}

Array reduce_to(const Array& full, const Dims& dims) {
  Array out(dims);
  for_each_index(full.dims, [&](std::span<const std::int64_t> idx) {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < dims.size(); ++k) off = off * dims[k] + (dims[k] == 1 ? 0 : idx[k]);
    out[off] += full[full.offset(idx)];
  });
  return out;
}

double amax(const Array& a) {
  double m = 0.0;
  for (double x : a.v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace opgraph::reference::sdpa_ref
