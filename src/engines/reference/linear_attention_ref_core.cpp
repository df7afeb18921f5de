// engines/reference/linear_attention_ref_core.cpp — the float64 token-level recurrence
// (research note §1.2) and its exact reverse (§1.4), run per (sequence, output head),
// plus the span summaries that chain sequence pieces:
//   forward:  S_end = M S_0 + H,  M = A_T ... A_1,  A_t = (I - k_t e_t^T) Diag(a_t)
//   backward: dS_0 = M^T dS_end + G, G the state gradient from the outputs alone.
// State tensors hold S^T (V-major), so the stored chains read X_{j+1} = X_j M^T + H^T
// and dX_j = dX_{j+1} M + G^T.
#include <algorithm>
#include <cmath>
#include <string>

#include "engines/reference/linear_attention_ref_internal.h"

namespace opgraph::reference::la_ref {
namespace {

using std::int64_t;

// S is K x V row-major (S[i * V + j]); stored states are [.., V, K] (S^T).
void load_state(const Array& st, int64_t row, int64_t h, const Shape& s, Vec& S) {
  const double* p = st.v.data() + (row * s.ho + h) * s.vd * s.kd;
  for (int64_t j = 0; j < s.vd; ++j)
    for (int64_t i = 0; i < s.kd; ++i) S[static_cast<std::size_t>(i * s.vd + j)] = p[j * s.kd + i];
}
void store_state(Array& st, int64_t row, int64_t h, const Shape& s, const Vec& S) {
  double* p = st.v.data() + (row * s.ho + h) * s.vd * s.kd;
  for (int64_t j = 0; j < s.vd; ++j)
    for (int64_t i = 0; i < s.kd; ++i) p[j * s.kd + i] = S[static_cast<std::size_t>(i * s.vd + j)];
}

struct Trace {
  std::vector<Vec> s_prev;  // S before each step (after a checkpoint: the checkpoint's state)
  std::vector<Vec> u;       // the delta u of each step
  std::vector<Vec> s_end;   // S as the step computed it, where a checkpoint replaced it (else empty)
};

// Where a sequence's checkpoints go: after every `every` steps, rows row0, row0 + 1, ... of `dst`; or, with
// `src`, where the recompute takes its state from after every `every` steps.
struct Checkpoints {
  Array* dst = nullptr;
  int64_t every = 0, row0 = 0;
  const Array* src = nullptr;
};

// The first checkpoint row of each sequence (the sum of floor(L_s n / c) over the ones before it); refuses a
// batch whose checkpoints `rows` cannot hold.
Result<std::vector<int64_t>> checkpoint_rows0(const Inputs& in, const Shape& s, int64_t n_house, int64_t every,
                                              int64_t rows) {
  std::vector<int64_t> row0(static_cast<std::size_t>(s.n_seq), 0);
  int64_t total = 0;
  for (int64_t seq = 0; seq < s.n_seq; ++seq) {
    const std::size_t i = static_cast<std::size_t>(seq);
    row0[i] = total;
    total += (in.cu_seqlens[i + 1] - in.cu_seqlens[i]) * n_house / every;
  }
  if (total > rows)
    return Status(ErrorCode::INVALID_VALUE, "checkpoints: the sequences need " + std::to_string(total) +
                                                " rows of state_checkpoints (the sum of floor(L_i * n / " +
                                                std::to_string(every) + ")), which has " + std::to_string(rows));
  return row0;
}

// Runs `steps` on S in place. Records the trace when asked; writes O rows and checkpoints when asked.
void run(const Shape& s, const std::vector<Step>& steps, int64_t h, Vec& S, Trace* tr, Array* o,
         const Checkpoints& ck = {}) {
  const std::size_t kd = static_cast<std::size_t>(s.kd), vd = static_cast<std::size_t>(s.vd);
  Vec u(vd);
  int64_t done = 0;
  for (const Step& st : steps) {
    if (tr) tr->s_prev.push_back(S);
    for (std::size_t i = 0; i < kd; ++i)
      for (std::size_t j = 0; j < vd; ++j) S[i * vd + j] *= st.a[i];
    for (std::size_t j = 0; j < vd; ++j) {
      double p = 0.0;
      for (std::size_t i = 0; i < kd; ++i) p += S[i * vd + j] * st.e[i];
      u[j] = st.c[j] * st.v[j] - p;
    }
    for (std::size_t i = 0; i < kd; ++i)
      for (std::size_t j = 0; j < vd; ++j) S[i * vd + j] += st.k[i] * u[j];
    if (tr) tr->u.push_back(u);
    if (st.readout && o) {
      double* out = o->v.data() + (st.token * s.ho + h) * s.vd;
      for (std::size_t j = 0; j < vd; ++j) {
        double acc = 0.0;
        for (std::size_t i = 0; i < kd; ++i) acc += S[i * vd + j] * st.q[i];
        out[j] = s.scale * acc;
      }
    }
    if (tr) tr->s_end.emplace_back();
    if ((ck.dst || ck.src) && ++done % ck.every == 0) {
      if (ck.dst) {
        store_state(*ck.dst, ck.row0 + done / ck.every - 1, h, s, S);
      } else {
        if (tr) tr->s_end.back() = S;  // the step's own output read this state
        load_state(*ck.src, ck.row0 + done / ck.every - 1, h, s, S);
      }
    }
  }
}

// The transition M = A_T ... A_1 (K x K row-major) of `steps`.
Vec transition_of(const Shape& s, const std::vector<Step>& steps) {
  const std::size_t kd = static_cast<std::size_t>(s.kd);
  Vec M(kd * kd, 0.0);
  for (std::size_t i = 0; i < kd; ++i) M[i * kd + i] = 1.0;
  Vec r(kd);
  for (const Step& st : steps) {
    for (std::size_t i = 0; i < kd; ++i)
      for (std::size_t j = 0; j < kd; ++j) M[i * kd + j] *= st.a[i];
    for (std::size_t j = 0; j < kd; ++j) {
      r[j] = 0.0;
      for (std::size_t i = 0; i < kd; ++i) r[j] += st.e[i] * M[i * kd + j];
    }
    for (std::size_t i = 0; i < kd; ++i)
      for (std::size_t j = 0; j < kd; ++j) M[i * kd + j] -= st.k[i] * r[j];
  }
  return M;
}

// The reverse of one step on the state gradient G (K x V), in place. With `tr`
// and `gr`, also the step's operand gradients (needs S before the step).
void reverse_step(const Shape& s, const Step& st, const double* d_o, const Vec* s_after, const Vec* s_prev,
                  const Vec* u, Vec& G, StepGrad* gr) {
  const std::size_t kd = static_cast<std::size_t>(s.kd), vd = static_cast<std::size_t>(s.vd);
  if (st.readout) {
    if (gr) {
      gr->q.assign(kd, 0.0);
      for (std::size_t i = 0; i < kd; ++i)
        for (std::size_t j = 0; j < vd; ++j) gr->q[i] += s.scale * (*s_after)[i * vd + j] * d_o[j];
    }
    for (std::size_t i = 0; i < kd; ++i)
      for (std::size_t j = 0; j < vd; ++j) G[i * vd + j] += s.scale * st.q[i] * d_o[j];
  }
  Vec du(vd, 0.0);
  for (std::size_t i = 0; i < kd; ++i)
    for (std::size_t j = 0; j < vd; ++j) du[j] += G[i * vd + j] * st.k[i];
  if (gr) {
    gr->k.assign(kd, 0.0);
    gr->e.assign(kd, 0.0);
    gr->a.assign(kd, 0.0);
    gr->v.assign(vd, 0.0);
    gr->c.assign(vd, 0.0);
    for (std::size_t i = 0; i < kd; ++i)
      for (std::size_t j = 0; j < vd; ++j) {
        gr->k[i] += G[i * vd + j] * (*u)[j];
        gr->e[i] -= st.a[i] * (*s_prev)[i * vd + j] * du[j];  // de = -S~ du
      }
    for (std::size_t j = 0; j < vd; ++j) {
      gr->v[j] = st.c[j] * du[j];
      gr->c[j] = st.v[j] * du[j];
    }
  }
  for (std::size_t i = 0; i < kd; ++i)
    for (std::size_t j = 0; j < vd; ++j) {
      const double dst = G[i * vd + j] - st.e[i] * du[j];  // dS~
      if (gr) gr->a[i] += dst * (*s_prev)[i * vd + j];
      G[i * vd + j] = st.a[i] * dst;
    }
}

// state_indices: every row in [0, pool) and no row twice (INVALID_VALUE naming the rule).
Result<std::vector<int64_t>> state_rows(const Inputs& in, const Shape& s) {
  std::vector<int64_t> rows(static_cast<std::size_t>(s.n_seq));
  for (int64_t i = 0; i < s.n_seq; ++i) rows[static_cast<std::size_t>(i)] = i;
  if (!in.state_indices || !in.initial_state) return rows;
  const int64_t pool = in.initial_state->dims[0];
  std::vector<int64_t> owner(static_cast<std::size_t>(pool), -1);
  for (int64_t i = 0; i < s.n_seq; ++i) {
    const double x = in.state_indices->v[static_cast<std::size_t>(i)];
    const int64_t r = to_index(x).value_or(-1);  // not an int64 index: outside the pool
    if (r < 0 || r >= pool)
      return Status(ErrorCode::INVALID_VALUE, "state pool: state_indices[" + std::to_string(i) + "] = " +
                                                  std::to_string(r) + " is outside the pool [0, " +
                                                  std::to_string(pool) + ")");
    if (owner[static_cast<std::size_t>(r)] >= 0)
      return Status(ErrorCode::INVALID_VALUE, "state pool: state_indices[" +
                                                  std::to_string(owner[static_cast<std::size_t>(r)]) + "] and [" +
                                                  std::to_string(i) + "] both address row " + std::to_string(r));
    owner[static_cast<std::size_t>(r)] = i;
    rows[static_cast<std::size_t>(i)] = r;
  }
  return rows;
}

}  // namespace

Result<Forward> forward(const Config& cfg, const Inputs& in) {
  auto sh = shape_of(cfg, in, nullptr);
  if (!sh) return sh.status();
  const Shape& s = *sh;
  auto rows = state_rows(in, s);
  if (!rows) return rows.status();
  Forward f;
  f.o = zeros({s.t, s.ho, s.vd});
  // Under a pool, rows no sequence addresses keep their incoming value.
  f.final_state = (in.state_indices && in.initial_state) ? *in.initial_state : zeros({s.n_seq, s.ho, s.vd, s.kd});
  // Checkpoint rows: sequence i's first at the sum of the earlier sequences' counts floor(L n / c).
  std::vector<int64_t> ck_row0(static_cast<std::size_t>(s.n_seq), 0);
  if (cfg.checkpoint_rows >= 0 && cfg.checkpoint_every > 0) {
    auto r0 = checkpoint_rows0(in, s, cfg.num_householder, cfg.checkpoint_every, cfg.checkpoint_rows);
    if (!r0) return r0.status();
    ck_row0 = std::move(*r0);
    f.checkpoints = zeros({cfg.checkpoint_rows, s.ho, s.vd, s.kd});
  }
  Vec S(static_cast<std::size_t>(s.kd * s.vd));
  for (int64_t seq = 0; seq < s.n_seq; ++seq)
    for (int64_t h = 0; h < s.ho; ++h) {
      const int64_t row = (*rows)[static_cast<std::size_t>(seq)];
      if (in.initial_state) load_state(*in.initial_state, row, h, s, S);
      else std::fill(S.begin(), S.end(), 0.0);
      Checkpoints ck;
      if (cfg.checkpoint_rows >= 0 && cfg.checkpoint_every > 0)
        ck = {&f.checkpoints, cfg.checkpoint_every, ck_row0[static_cast<std::size_t>(seq)]};
      run(s, prepare(cfg, in, s, seq, h), h, S, nullptr, &f.o, ck);
      store_state(f.final_state, row, h, s, S);
    }
  return f;
}

Result<Grads> backward(const Config& cfg, const Inputs& in, const Array& d_o, const Array* d_final_state,
                       const Array* checkpoints) {
  auto sh = shape_of(cfg, in, &d_o);
  if (!sh) return sh.status();
  const Shape& s = *sh;
  std::vector<int64_t> ck_row0;
  if (checkpoints && cfg.checkpoint_every > 0) {
    auto r0 = checkpoint_rows0(in, s, cfg.num_householder, cfg.checkpoint_every, checkpoints->dims.at(0));
    if (!r0) return r0.status();
    ck_row0 = std::move(*r0);
  }
  GradSink sink = make_sink(cfg, in);
  Grads out;
  if (in.initial_state) out.d_initial_state = zeros({s.n_seq, s.ho, s.vd, s.kd});
  const std::size_t kv = static_cast<std::size_t>(s.kd * s.vd);
  for (int64_t seq = 0; seq < s.n_seq; ++seq)
    for (int64_t h = 0; h < s.ho; ++h) {
      std::vector<Step> steps = prepare(cfg, in, s, seq, h);
      Vec S(kv, 0.0);
      if (in.initial_state) load_state(*in.initial_state, seq, h, s, S);
      Trace tr;
      Checkpoints ck;
      if (!ck_row0.empty()) ck = {nullptr, cfg.checkpoint_every, ck_row0[static_cast<std::size_t>(seq)], checkpoints};
      run(s, steps, h, S, &tr, nullptr, ck);
      Vec G(kv, 0.0);
      if (d_final_state) load_state(*d_final_state, seq, h, s, G);
      std::vector<StepGrad> grads(steps.size());
      for (std::size_t i = steps.size(); i-- > 0;) {
        const Vec& after = !tr.s_end[i].empty() ? tr.s_end[i] : i + 1 < steps.size() ? tr.s_prev[i + 1] : S;
        const double* dor = d_o.v.data() + (steps[i].token * s.ho + h) * s.vd;
        reverse_step(s, steps[i], dor, &after, &tr.s_prev[i], &tr.u[i], G, &grads[i]);
      }
      scatter(cfg, in, s, seq, h, steps, grads, sink);
      if (in.initial_state) store_state(out.d_initial_state, seq, h, s, G);
    }
  finish(cfg, in, sink, out);
  return out;
}

Result<Summary> summary(const Config& cfg, const Inputs& in) {
  auto sh = shape_of(cfg, in, nullptr);
  if (!sh) return sh.status();
  const Shape& s = *sh;
  Summary out;
  out.h = zeros({s.n_seq, s.ho, s.vd, s.kd});
  out.m = zeros({s.n_seq, s.ho, s.kd, s.kd});
  const std::size_t kd = static_cast<std::size_t>(s.kd);
  for (int64_t seq = 0; seq < s.n_seq; ++seq)
    for (int64_t h = 0; h < s.ho; ++h) {
      std::vector<Step> steps = prepare(cfg, in, s, seq, h);
      Vec S(static_cast<std::size_t>(s.kd * s.vd), 0.0);
      run(s, steps, h, S, nullptr, nullptr);
      store_state(out.h, seq, h, s, S);
      Vec M = transition_of(s, steps);
      double* p = out.m.v.data() + (seq * s.ho + h) * s.kd * s.kd;
      for (std::size_t i = 0; i < kd; ++i)
        for (std::size_t j = 0; j < kd; ++j) p[i * kd + j] = M[j * kd + i];  // M^T
    }
  return out;
}

Result<SummaryGrad> summary_bwd(const Config& cfg, const Inputs& in, const Array& d_o) {
  auto sh = shape_of(cfg, in, &d_o);
  if (!sh) return sh.status();
  const Shape& s = *sh;
  SummaryGrad out;
  out.g = zeros({s.n_seq, s.ho, s.vd, s.kd});
  out.transition = zeros({s.n_seq, s.ho, s.kd, s.kd});
  for (int64_t seq = 0; seq < s.n_seq; ++seq)
    for (int64_t h = 0; h < s.ho; ++h) {
      std::vector<Step> steps = prepare(cfg, in, s, seq, h);
      Vec G(static_cast<std::size_t>(s.kd * s.vd), 0.0);
      for (std::size_t i = steps.size(); i-- > 0;)
        reverse_step(s, steps[i], d_o.v.data() + (steps[i].token * s.ho + h) * s.vd, nullptr, nullptr, nullptr, G,
                     nullptr);
      store_state(out.g, seq, h, s, G);
      Vec M = transition_of(s, steps);
      std::copy(M.begin(), M.end(), out.transition.v.begin() + (seq * s.ho + h) * s.kd * s.kd);
    }
  return out;
}

}  // namespace opgraph::reference::la_ref
