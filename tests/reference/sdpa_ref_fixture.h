// Shared fixtures of the SDPA reference tests: a forward/backward graph builder
// over one option struct (shape, dtype, optional inputs and attributes), an
// independent naive attention loop (the closed form the kernels are checked
// against), and small array helpers.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "harness.h"

namespace sdpa_ref_test {

using namespace opgraph;
using namespace opgraph::harness;
using D = std::vector<std::int64_t>;
using reference::for_each_index;

struct Shape {
  std::int64_t b = 2, h_q = 2, h_k = 2, h_v = 2, s_q = 5, s_kv = 7, d_qk = 4, d_v = 3;
};

// Optional inputs shared by the forward and backward graphs (null = unbound).
struct Extras {
  TensorPtr attn_scale, bias, seq_len_q, seq_len_kv, seed, offset, dropout_mask, dropout_scale, sink;
};

struct Opts {
  Shape s;
  DataType t = DataType::DOUBLE;
  // Adds optional inputs (named uniquely) and attributes; runs for both graphs.
  std::function<void(OpGraph&, Extras&, Attributes&)> extra;
  bool max_sum = false, rng_dump = false;
};

inline D q_dims(const Shape& s) { return {s.b, s.h_q, s.s_q, s.d_qk}; }
inline D k_dims(const Shape& s) { return {s.b, s.h_k, s.s_kv, s.d_qk}; }
inline D v_dims(const Shape& s) { return {s.b, s.h_v, s.s_kv, s.d_v}; }
inline D o_dims(const Shape& s) { return {s.b, s.h_q, s.s_q, s.d_v}; }

// Forward: inputs q, k, v (+ extras); outputs o, stats (DOUBLE), [max, sum_exp], [rng_dump].
inline void build_fwd(OpGraph& g, const Opts& o) {
  auto q = g.tensor(q_dims(o.s), o.t, "q");
  auto k = g.tensor(k_dims(o.s), o.t, "k");
  auto v = g.tensor(v_dims(o.s), o.t, "v");
  Extras e;
  Attributes a;
  a.set("generate_stats", true);
  if (o.extra) o.extra(g, e, a);
  if (o.max_sum) a.set("score_max", true).set("score_sum_exp", true);
  if (o.rng_dump) a.set("rng_dump", true);
  SdpaInputs in;
  in.attn_scale = e.attn_scale; in.bias = e.bias; in.seq_len_q = e.seq_len_q; in.seq_len_kv = e.seq_len_kv;
  in.seed = e.seed; in.offset = e.offset; in.dropout_mask = e.dropout_mask; in.dropout_scale = e.dropout_scale;
  in.sink_token = e.sink;
  auto out = g.sdpa(q, k, v, a, in);
  out.O->set_output(true).set_name("o").set_data_type(o.t);
  out.Stats->set_output(true).set_name("stats").set_data_type(DataType::DOUBLE);
  if (out.Max) out.Max->set_output(true).set_name("max").set_data_type(DataType::DOUBLE);
  if (out.Sum_exp) out.Sum_exp->set_output(true).set_name("sum_exp").set_data_type(DataType::DOUBLE);
  if (out.RNG_DUMP) out.RNG_DUMP->set_output(true).set_name("rng_dump").set_data_type(DataType::DOUBLE);
}

// Backward: inputs q, k, v, o, dO, stats (+ extras); outputs dq, dk, dv, [dbias], [dsink].
inline void build_bwd(OpGraph& g, const Opts& o, bool dbias = false, bool dsink = false) {
  auto q = g.tensor(q_dims(o.s), o.t, "q");
  auto k = g.tensor(k_dims(o.s), o.t, "k");
  auto v = g.tensor(v_dims(o.s), o.t, "v");
  auto out = g.tensor(o_dims(o.s), o.t, "o");
  auto dO = g.tensor(o_dims(o.s), o.t, "dO");
  auto stats = g.tensor({o.s.b, o.s.h_q, o.s.s_q, 1}, DataType::DOUBLE, "stats");
  Extras e;
  Attributes a;
  a.set("generate_stats", true);
  if (o.extra) o.extra(g, e, a);
  Attributes b;
  for (const auto& [key, val] : a.values())
    if (key != "generate_stats") b.set(key, val);
  b.set("dbias", dbias).set("dsink_token", dsink);
  SdpaBackwardInputs in;
  in.attn_scale = e.attn_scale; in.bias = e.bias; in.seq_len_q = e.seq_len_q; in.seq_len_kv = e.seq_len_kv;
  in.seed = e.seed; in.offset = e.offset; in.dropout_mask = e.dropout_mask; in.dropout_scale = e.dropout_scale;
  in.sink_token = e.sink;
  auto r = g.sdpa_backward(q, k, v, out, dO, stats, b, in);
  r.dQ->set_output(true).set_name("dq").set_data_type(o.t);
  r.dK->set_output(true).set_name("dk").set_data_type(o.t);
  r.dV->set_output(true).set_name("dv").set_data_type(o.t);
  if (r.dBias) r.dBias->set_output(true).set_name("dbias").set_data_type(DataType::DOUBLE);
  if (r.DSINK_TOKEN) r.DSINK_TOKEN->set_output(true).set_name("dsink").set_data_type(DataType::DOUBLE);
}

// Runs the forward through the harness; returns inputs and outputs by name.
inline Values run_fwd(const Opts& o, const Values& fixed = {}, std::uint64_t seed = 1) {
  Case c;
  c.name = "sdpa_fwd";
  c.build = [o](OpGraph& g) { build_fwd(g, o); };
  c.fixed = fixed;
  c.seed = seed;
  return check_case(c);
}

inline Array ints(const D& dims, std::vector<double> v) {
  Array a(dims);
  a.v = std::move(v);
  return a;
}

// The independent closed form: per (n, h, i) a plain softmax over the keys the
// test's `keep` admits, scores `scale * q.k + add(n, h, i, j)`, optional sink
// logit per head, dropout factor `drop(n, h, i, j)`; GQA by integer division.
struct Naive {
  Shape s;
  double scale = 1.0;
  std::function<bool(std::int64_t, std::int64_t, std::int64_t, std::int64_t)> keep;
  std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)> add;
  std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)> drop;
  const Array* sink = nullptr;

  // O and log-sum-exp; rows with nothing to attend give O = 0, lse = -inf.
  std::pair<Array, Array> run(const Array& q, const Array& k, const Array& v) const {
    Array o(o_dims(s)), lse({s.b, s.h_q, s.s_q, 1}, -std::numeric_limits<double>::infinity());
    for (std::int64_t n = 0; n < s.b; ++n)
      for (std::int64_t h = 0; h < s.h_q; ++h)
        for (std::int64_t i = 0; i < s.s_q; ++i) {
          std::vector<double> w(static_cast<std::size_t>(s.s_kv), 0.0);
          double z = sink ? std::exp(sink->at({0, h, 0, 0})) : 0.0;
          bool any = sink != nullptr;
          for (std::int64_t j = 0; j < s.s_kv; ++j) {
            if (keep && !keep(n, h, i, j)) continue;
            double x = 0.0;
            for (std::int64_t t = 0; t < s.d_qk; ++t)
              x += q.at({n, h, i, t}) * k.at({n, h / (s.h_q / s.h_k), j, t});
            x = scale * x + (add ? add(n, h, i, j) : 0.0);
            w[static_cast<std::size_t>(j)] = std::exp(x);
            z += w[static_cast<std::size_t>(j)];
            any = true;
          }
          if (!any) continue;
          lse.at({n, h, i, 0}) = std::log(z);
          for (std::int64_t j = 0; j < s.s_kv; ++j) {
            double p = w[static_cast<std::size_t>(j)] / z * (drop ? drop(n, h, i, j) : 1.0);
            for (std::int64_t t = 0; t < s.d_v; ++t) o.at({n, h, i, t}) += p * v.at({n, h / (s.h_q / s.h_v), j, t});
          }
        }
    return {o, lse};
  }
};

inline double max_abs(const Array& a) {
  double m = 0.0;
  for (double x : a.v) m = std::max(m, std::fabs(x));
  return m;
}

// Every element equal within atol (inf equal to the same inf).
inline void expect_near_all(const Array& a, const Array& b, double atol, const char* what) {
  ASSERT_EQ(a.dims, b.dims) << what;
  int bad = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    bool ok = a[i] == b[i] || std::fabs(a[i] - b[i]) <= atol;
    if (!ok && bad++ < 3) ADD_FAILURE() << what << " at " << index_str(a.dims, i) << ": " << a[i] << " vs " << b[i];
  }
  EXPECT_EQ(bad, 0) << what;
}

}  // namespace sdpa_ref_test
