// tests/reference/linear_attention_ref_fixture.h — random problems for the float64
// linear-attention reference, and the loss L = sum(O . dO) + sum(final_state . dS)
// whose gradients the backward must reproduce.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engines/reference/linear_attention_ref_internal.h"

namespace la_ref_test {

using namespace opgraph;
using namespace opgraph::reference;
using la_ref::Variant;
using I64 = std::int64_t;

struct Opts {
  Variant variant = Variant::GDN;
  std::vector<I64> cu = {0, 5, 5, 12};  // N = 3, one empty sequence
  I64 hq = 1, hk = 1, hv = 2, kd = 4, vd = 3, n = 1;
  bool init = true, l2norm = false, safe_gate = false, a_log = false, dt_bias = false;
  bool beta_sigmoid = false, neg_eigval = false, linear_gate = false;
  std::optional<double> scale;
  I64 ho() const { return std::max(hq, hv); }
  I64 t() const { return cu.back(); }
  I64 n_seq() const { return static_cast<I64>(cu.size()) - 1; }
};

// One process-wide generator with a fresh seed per run (printed by seed_trace()).
inline std::mt19937_64& rng() {
  static std::mt19937_64 r = [] {
    std::random_device rd;
    return std::mt19937_64((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  }();
  return r;
}
inline double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng()); }
inline Array rand_array(Dims d, double lo, double hi) {
  Array a = la_ref::zeros(std::move(d));
  for (double& x : a.v) x = uniform(lo, hi);
  return a;
}

struct Problem {
  Opts o;
  la_ref::Config cfg;
  Array q, k, v, g, beta, b, w, a_log, dt_bias, init, d_o, d_final;

  la_ref::Inputs inputs() const {
    la_ref::Inputs in;
    in.q = &q;
    in.k = &k;
    in.v = &v;
    in.g = &g;
    if (o.variant == Variant::GDN2) {
      in.b = &b;
      in.w = &w;
    } else {
      in.beta = &beta;
    }
    if (o.a_log) in.a_log = &a_log;
    if (o.dt_bias) in.dt_bias = &dt_bias;
    if (o.init) in.initial_state = &init;
    in.cu_seqlens = o.cu;
    return in;
  }
};

inline bool vector_gate(Variant v) { return v == Variant::KDA || v == Variant::GDN2; }

inline Problem make_problem(const Opts& o) {
  Problem p;
  p.o = o;
  const I64 T = o.t(), HO = o.ho(), N = o.n_seq(), n = o.variant == Variant::GDP ? o.n : 1;
  p.cfg.variant = o.variant;
  p.cfg.scale = o.scale;
  p.cfg.use_qk_l2norm = o.l2norm;
  p.cfg.safe_gate = o.safe_gate;
  p.cfg.use_beta_sigmoid = o.beta_sigmoid;
  p.cfg.allow_neg_eigval = o.neg_eigval;
  p.cfg.linear_gate = o.linear_gate;
  p.cfg.num_householder = n;
  p.cfg.lower_bound = -3.0;
  const double kr = 1.2 / std::sqrt(static_cast<double>(o.kd));  // keys of norm ~1
  p.q = rand_array({T, o.hq, o.kd}, -1.0, 1.0);
  p.k = rand_array({T * n, o.hk, o.kd}, -kr, kr);
  p.v = rand_array({T * n, o.hv, o.vd}, -1.0, 1.0);
  Dims gd = vector_gate(o.variant) ? Dims{T, HO, o.kd} : Dims{T, HO};
  if (o.safe_gate) p.g = rand_array(gd, -2.0, 2.0);
  else if (o.linear_gate) p.g = rand_array(gd, 0.4, 1.0);
  else p.g = rand_array(gd, -0.8, -0.05);
  p.beta = o.beta_sigmoid ? rand_array({T * n, HO}, -2.0, 2.0) : rand_array({T * n, HO}, 0.2, 0.9);
  p.b = o.beta_sigmoid ? rand_array({T, HO, o.kd}, -2.0, 2.0) : rand_array({T, HO, o.kd}, 0.0, 1.5);
  p.w = rand_array({T, HO, o.vd}, 0.0, 1.0);
  p.a_log = rand_array({HO}, -1.0, 0.5);
  p.dt_bias = vector_gate(o.variant) ? rand_array({HO, o.kd}, -0.5, 0.5) : rand_array({HO}, -0.5, 0.5);
  p.init = rand_array({N, HO, o.vd, o.kd}, -1.0, 1.0);
  p.d_o = rand_array({T, HO, o.vd}, -1.0, 1.0);
  p.d_final = rand_array({N, HO, o.vd, o.kd}, -1.0, 1.0);
  return p;
}

// Element of a dense row-major array by full index.
inline double& el(Array& a, std::initializer_list<I64> idx) {
  I64 off = 0, r = 0;
  for (I64 i : idx) off = off * a.dims[static_cast<std::size_t>(r++)] + i;
  return a.v[static_cast<std::size_t>(off)];
}
inline double el(const Array& a, std::initializer_list<I64> idx) { return el(const_cast<Array&>(a), idx); }

inline double dot(const Array& a, const Array& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.v.size(); ++i) s += a.v[i] * b.v[i];
  return s;
}

// L = sum(O . dO) + sum(final . d_final).
inline double loss(const Problem& p) {
  auto f = la_ref::forward(p.cfg, p.inputs());
  EXPECT_TRUE(f.is_good()) << f.status().to_string();
  return dot(f->o, p.d_o) + dot(f->final_state, p.d_final);
}

// max |a - b| / (atol + rtol |b|) over elements; <= 1 passes.
inline void expect_close(const Array& a, const Array& b, double atol, double rtol, const std::string& what) {
  ASSERT_EQ(a.dims, b.dims) << what;
  ASSERT_EQ(a.v.size(), b.v.size()) << what;
  double worst = 0.0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) {
    double r = std::abs(a.v[i] - b.v[i]) / (atol + rtol * std::abs(b.v[i]));
    if (!(r <= worst)) {
      worst = r;
      at = i;
    }
  }
  EXPECT_LE(worst, 1.0) << what << ": element " << at << " got " << a.v[at] << " want " << b.v[at];
}

}  // namespace la_ref_test
