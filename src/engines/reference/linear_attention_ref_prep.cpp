// engines/reference/linear_attention_ref_prep.cpp — the input transforms of the
// linear_attention reference (research note §1.3) and their derivatives.
//
//   l2norm (use_qk_l2norm):  y = x r, r = (sum x^2 + 1e-6)^-1/2;  dx = r (dy - y <y, dy>)
//   beta sigmoid:            beta = s sigmoid(x), s = 2 under allow_neg_eigval;  dx = dbeta s sig (1 - sig)
//                            (gdn2 applies it to the erase gate b)
//   gate, log domain:        a = exp(g);                              dg = da a
//   gate, linear domain:     a = g;                                   dg = da
//   safe_gate, gdn/gdp:      g' = -exp(a_log) softplus(x + dt_bias);  a = exp(g')
//   safe_gate, kda/gdn2:     g' = lower_bound sigmoid(z), z = exp(a_log) (x + dt_bias);  a = exp(g')
//   (an unbound a_log is 0, i.e. unit amplitude; an unbound dt_bias is 0). softplus is
//   the exact log1p form (no linear cut-off), so the float64 derivative is sigmoid.
// Scalar gates (gdn, gdp) broadcast over K; their gradient is the sum over K.
#include <cmath>

#include "engines/reference/linear_attention_ref_internal.h"

namespace opgraph::reference::la_ref {
namespace {

using std::int64_t;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
bool vector_gate(Variant v) { return v == Variant::KDA || v == Variant::GDN2; }

// Row `row`, head `head` of a [rows, heads, dim] array.
Vec slice(const Array& a, int64_t row, int64_t head) {
  const int64_t heads = a.dims[1], dim = a.dims[2];
  const double* p = a.v.data() + (row * heads + head) * dim;
  return Vec(p, p + dim);
}
void add_slice(Array& a, int64_t row, int64_t head, const Vec& x) {
  const int64_t heads = a.dims[1], dim = a.dims[2];
  double* p = a.v.data() + (row * heads + head) * dim;
  for (int64_t i = 0; i < dim; ++i) p[i] += x[static_cast<std::size_t>(i)];
}

Vec l2norm(const Vec& x) {
  double ss = 1e-6;
  for (double e : x) ss += e * e;
  const double r = 1.0 / std::sqrt(ss);
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * r;
  return y;
}
// dx = r (dy - y <y, dy>) with y = l2norm(x).
Vec l2norm_bwd(const Vec& x, const Vec& dy) {
  double ss = 1e-6;
  for (double e : x) ss += e * e;
  const double r = 1.0 / std::sqrt(ss);
  double ydy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) ydy += x[i] * r * dy[i];
  Vec dx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dx[i] = r * (dy[i] - x[i] * r * ydy);
  return dx;
}

double beta_scale(const Config& c) { return c.allow_neg_eigval ? 2.0 : 1.0; }
double beta_value(const Config& c, double x) { return c.use_beta_sigmoid ? beta_scale(c) * sigmoid(x) : x; }
double beta_deriv(const Config& c, double x) {
  if (!c.use_beta_sigmoid) return 1.0;
  const double s = sigmoid(x);
  return beta_scale(c) * s * (1.0 - s);
}

// One gate element: the decay a and its partials w.r.t. the raw g, a_log and dt_bias.
struct GateElem {
  double a = 1.0, da_dx = 0.0, da_dalog = 0.0, da_ddt = 0.0;
};
GateElem gate_elem(const Config& c, const Inputs& in, const Shape& s, int64_t h, int64_t kk, double x) {
  GateElem r;
  if (!c.safe_gate) {
    r.a = c.linear_gate ? x : std::exp(x);
    r.da_dx = c.linear_gate ? 1.0 : r.a;
    return r;
  }
  const double alog = in.a_log ? in.a_log->v[static_cast<std::size_t>(h)] : 0.0;
  const double amp = std::exp(alog);
  if (vector_gate(c.variant)) {
    const double dt = in.dt_bias ? in.dt_bias->v[static_cast<std::size_t>(h * s.kd + kk)] : 0.0;
    const double z = amp * (x + dt), sz = sigmoid(z);
    const double gv = c.lower_bound * sz;
    r.a = std::exp(gv);
    const double dz = r.a * c.lower_bound * sz * (1.0 - sz);  // da/dz
    r.da_dx = dz * amp;
    r.da_ddt = dz * amp;
    r.da_dalog = dz * z;
  } else {
    const double dt = in.dt_bias ? in.dt_bias->v[static_cast<std::size_t>(h)] : 0.0;
    const double z = x + dt;
    const double gv = -amp * softplus(z);
    r.a = std::exp(gv);
    r.da_dx = r.a * (-amp * sigmoid(z));
    r.da_ddt = r.da_dx;
    r.da_dalog = r.a * gv;
  }
  return r;
}

// Raw gate of token t, head h, element kk (a scalar gate ignores kk).
double raw_gate(const Config& c, const Inputs& in, const Shape& s, int64_t t, int64_t h, int64_t kk) {
  return vector_gate(c.variant) ? in.g->v[static_cast<std::size_t>((t * s.ho + h) * s.kd + kk)]
                                : in.g->v[static_cast<std::size_t>(t * s.ho + h)];
}

}  // namespace

Array zeros(Dims dims) { return Array(std::move(dims)); }

Result<Shape> shape_of(const Config& cfg, const Inputs& in, const Array* d_o) {
  Shape s;
  s.kd = in.k->dims[2];
  s.hk = in.k->dims[1];
  s.t = in.g->dims[0];
  s.ho = in.g->dims[1];
  s.hq = in.q ? in.q->dims[1] : s.ho;
  s.hv = in.v ? in.v->dims[1] : s.ho;
  s.vd = in.v ? in.v->dims[2] : d_o->dims[2];
  s.n_house = cfg.variant == Variant::GDP ? cfg.num_householder : 1;
  s.n_seq = static_cast<std::int64_t>(in.cu_seqlens.size()) - 1;
  s.scale = cfg.scale.value_or(1.0 / std::sqrt(static_cast<double>(s.kd)));
  const auto& cu = in.cu_seqlens;
  bool ok = !cu.empty() && cu.front() == 0 && cu.back() == s.t;
  for (std::size_t i = 1; ok && i < cu.size(); ++i) ok = cu[i] >= cu[i - 1];
  if (!ok) {
    std::string got;
    for (auto x : cu) got += (got.empty() ? "" : ", ") + std::to_string(x);
    return Status(ErrorCode::INVALID_VALUE, "cu_seqlens: offsets must start at 0, never decrease and end at T = " +
                                                std::to_string(s.t) + ", got [" + got + "]");
  }
  return s;
}

std::vector<Step> prepare(const Config& cfg, const Inputs& in, const Shape& s, std::int64_t seq, std::int64_t h) {
  std::vector<Step> steps;
  const int64_t bos = in.cu_seqlens[static_cast<std::size_t>(seq)];
  const int64_t eos = in.cu_seqlens[static_cast<std::size_t>(seq + 1)];
  const int64_t n = s.n_house;
  for (int64_t t = bos; t < eos; ++t) {
    Vec gate(static_cast<std::size_t>(s.kd));
    for (int64_t kk = 0; kk < s.kd; ++kk)
      gate[static_cast<std::size_t>(kk)] = gate_elem(cfg, in, s, h, kk, raw_gate(cfg, in, s, t, h, kk)).a;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t row = t * n + j;
      Step st;
      st.token = t;
      st.sub = j;
      st.decay = j == 0;
      st.readout = j == n - 1;
      st.a = st.decay ? gate : Vec(static_cast<std::size_t>(s.kd), 1.0);
      st.k = slice(*in.k, row, s.k_head(h));
      if (cfg.use_qk_l2norm) st.k = l2norm(st.k);
      st.v = in.v ? slice(*in.v, row, s.v_head(h)) : Vec(static_cast<std::size_t>(s.vd), 0.0);
      if (cfg.variant == Variant::GDN2) {
        Vec bv = slice(*in.b, t, h);
        st.e.resize(bv.size());
        for (std::size_t i = 0; i < bv.size(); ++i) st.e[i] = beta_value(cfg, bv[i]) * st.k[i];
        st.c = in.w ? slice(*in.w, t, h) : Vec(static_cast<std::size_t>(s.vd), 0.0);
      } else {
        const double beta = beta_value(cfg, in.beta->v[static_cast<std::size_t>(row * s.ho + h)]);
        st.e = st.k;
        for (double& x : st.e) x *= beta;
        st.c.assign(static_cast<std::size_t>(s.vd), beta);
      }
      if (st.readout && in.q) {
        st.q = slice(*in.q, t, s.q_head(h));
        if (cfg.use_qk_l2norm) st.q = l2norm(st.q);
      }
      steps.push_back(std::move(st));
    }
  }
  return steps;
}

GradSink make_sink(const Config& cfg, const Inputs& in) {
  GradSink g;
  auto like = [](const Array* a) { return a ? zeros(a->dims) : Array{}; };
  g.dq_hat = like(in.q);
  g.dk_hat = like(in.k);
  g.dv = like(in.v);
  g.dg = like(in.g);
  g.dbeta = like(in.beta);
  g.db = like(in.b);
  g.dw = like(in.w);
  g.d_a_log = cfg.safe_gate ? like(in.a_log) : Array{};
  g.d_dt_bias = cfg.safe_gate ? like(in.dt_bias) : Array{};
  return g;
}

void scatter(const Config& cfg, const Inputs& in, const Shape& s, std::int64_t /*seq*/, std::int64_t h,
             const std::vector<Step>& steps, const std::vector<StepGrad>& grads, GradSink& sink) {
  const std::size_t kd = static_cast<std::size_t>(s.kd), vd = static_cast<std::size_t>(s.vd);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    const StepGrad& gr = grads[i];
    const int64_t row = st.token * s.n_house + st.sub;
    Vec dk = gr.k;
    if (cfg.variant == Variant::GDN2) {
      Vec bv = slice(*in.b, st.token, h), db(kd);
      for (std::size_t j = 0; j < kd; ++j) {
        dk[j] += beta_value(cfg, bv[j]) * gr.e[j];
        db[j] = st.k[j] * gr.e[j] * beta_deriv(cfg, bv[j]);
      }
      add_slice(sink.db, st.token, h, db);
      if (!sink.dw.v.empty()) add_slice(sink.dw, st.token, h, gr.c);
    } else {
      const double x = in.beta->v[static_cast<std::size_t>(row * s.ho + h)];
      const double beta = beta_value(cfg, x);
      double dbeta = 0.0;
      for (std::size_t j = 0; j < kd; ++j) {
        dk[j] += beta * gr.e[j];
        dbeta += st.k[j] * gr.e[j];
      }
      for (std::size_t j = 0; j < vd; ++j) dbeta += gr.c[j];
      sink.dbeta.v[static_cast<std::size_t>(row * s.ho + h)] += dbeta * beta_deriv(cfg, x);
    }
    add_slice(sink.dk_hat, row, s.k_head(h), dk);
    if (!sink.dv.v.empty()) add_slice(sink.dv, row, s.v_head(h), gr.v);
    if (st.readout && !sink.dq_hat.v.empty()) add_slice(sink.dq_hat, st.token, s.q_head(h), gr.q);
    if (!st.decay) continue;
    // The gate: one raw value per K element (vector gates) or one per token (summed over K).
    const bool vec = vector_gate(cfg.variant);
    for (int64_t kk = 0; kk < (vec ? s.kd : 1); ++kk) {
      double da = 0.0;
      if (vec) da = gr.a[static_cast<std::size_t>(kk)];
      else for (double x : gr.a) da += x;
      GateElem ge = gate_elem(cfg, in, s, h, kk, raw_gate(cfg, in, s, st.token, h, kk));
      const std::size_t gi = vec ? static_cast<std::size_t>((st.token * s.ho + h) * s.kd + kk)
                                 : static_cast<std::size_t>(st.token * s.ho + h);
      sink.dg.v[gi] += da * ge.da_dx;
      if (!sink.d_a_log.v.empty()) sink.d_a_log.v[static_cast<std::size_t>(h)] += da * ge.da_dalog;
      if (!sink.d_dt_bias.v.empty())
        sink.d_dt_bias.v[static_cast<std::size_t>(vec ? h * s.kd + kk : h)] += da * ge.da_ddt;
    }
  }
}

void finish(const Config& cfg, const Inputs& in, GradSink& sink, Grads& out) {
  auto unnorm = [&](const Array* x, Array& d) {
    if (!x || !cfg.use_qk_l2norm) return;
    const int64_t rows = x->dims[0], heads = x->dims[1];
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t hh = 0; hh < heads; ++hh) {
        Vec dx = l2norm_bwd(slice(*x, r, hh), slice(d, r, hh));
        double* p = d.v.data() + (r * heads + hh) * x->dims[2];
        for (std::size_t i = 0; i < dx.size(); ++i) p[i] = dx[i];
      }
  };
  unnorm(in.q, sink.dq_hat);
  unnorm(in.k, sink.dk_hat);
  out.dq = std::move(sink.dq_hat);
  out.dk = std::move(sink.dk_hat);
  out.dv = std::move(sink.dv);
  out.dg = std::move(sink.dg);
  out.dbeta = std::move(sink.dbeta);
  out.db = std::move(sink.db);
  out.dw = std::move(sink.dw);
  out.d_a_log = std::move(sink.d_a_log);
  out.d_dt_bias = std::move(sink.d_dt_bias);
}

}  // namespace opgraph::reference::la_ref
