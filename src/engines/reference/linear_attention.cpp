// engines/reference/linear_attention.cpp — reference kernels of the linear_attention op
// group: each reads the node's attributes and bound inputs, runs the float64
// recurrence of linear_attention_ref_core.cpp and writes the outputs the node has.
// Runtime-only rules (cu_seqlens offsets, state_indices rows) fail with
// INVALID_VALUE naming the node and the rule.
#include <cmath>

#include "engines/reference/linear_attention_ref.h"
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {
namespace {

using la_ref::Variant;

la_ref::Config config_of(const Node& n, Variant v) {
  la_ref::Config c;
  c.variant = v;
  if (n.attr_is_set("scale")) c.scale = ops::attr::scale(n).value_or(0.0);  // set: the op declares it
  c.use_qk_l2norm = ops::attr::use_qk_l2norm(n);
  c.safe_gate = ops::attr::safe_gate(n);
  // Only the KDA and GDN2 families declare lower_bound (record default -5).
  c.lower_bound = v == Variant::KDA || v == Variant::GDN2 ? ops::attr::lower_bound(n) : -5.0;
  c.use_beta_sigmoid = ops::attr::use_beta_sigmoid(n);
  c.allow_neg_eigval = ops::attr::allow_neg_eigval(n);
  c.linear_gate = ops::attr::gate_domain(n) == ops::GateDomain::linear;
  c.num_householder = v == Variant::GDP ? ops::attr::num_householder(n) : 1;
  return c;
}

la_ref::Inputs inputs_of(const KernelContext& ctx) {
  auto opt = [&](std::string_view port) -> const Array* { return ctx.has(port) ? &ctx.in(port) : nullptr; };
  la_ref::Inputs in;
  in.q = opt("q");
  in.k = opt("k");
  in.v = opt("v");
  in.g = opt("g");
  in.beta = opt("beta");
  in.b = opt("b");
  in.w = opt("w");
  in.a_log = opt("a_log");
  in.dt_bias = opt("dt_bias");
  in.initial_state = opt("initial_state");
  in.state_indices = opt("state_indices");
  // Caller data: a value that is no int64 offset (NaN, |x| >= 2^62) reads as -1,
  // which prepare_shape's cu_seqlens rule refuses (offsets start at 0 and never decrease).
  for (double x : ctx.in(ops::in::cu_seqlens).v) in.cu_seqlens.push_back(to_index(std::round(x)).value_or(-1));
  return in;
}

// Moves `a` into the output `port` when the node produces it.
void put(KernelContext& ctx, std::string_view port, Array& a) {
  if (ctx.wants(port)) ctx.out(port).v = std::move(a.v);
}

Status fail_with(KernelContext& ctx, const Status& s) { return ctx.fail(s.message(), s.code()); }

template <Variant V>
Status forward_kernel(KernelContext& ctx) {
  la_ref::Config cfg = config_of(ctx.node(), V);
  if (ctx.wants("state_checkpoints")) {
    cfg.checkpoint_every = ops::attr::checkpoint_every_n_tokens(ctx.node());
    cfg.checkpoint_rows = ctx.out("state_checkpoints").dims.at(0);
  }
  auto r = la_ref::forward(cfg, inputs_of(ctx));
  if (!r) return fail_with(ctx, r.status());
  put(ctx, "O", r->o);
  put(ctx, "final_state", r->final_state);
  put(ctx, "state_checkpoints", r->checkpoints);
  return Status::ok();
}

template <Variant V>
Status backward_kernel(KernelContext& ctx) {
  const la_ref::Inputs in = inputs_of(ctx);
  la_ref::Config cfg = config_of(ctx.node(), V);
  const bool ck = ctx.has(ops::in::state_checkpoints);  // the forward's: the recompute takes its states there
  if (ck) cfg.checkpoint_every = ops::attr::checkpoint_every_n_tokens(ctx.node());
  auto r = la_ref::backward(cfg, in, ctx.in(ops::in::dO),
                            ctx.has(ops::in::d_final_state) ? &ctx.in(ops::in::d_final_state) : nullptr,
                            ck ? &ctx.in(ops::in::state_checkpoints) : nullptr);
  if (!r) return fail_with(ctx, r.status());
  put(ctx, "dQ", r->dq);
  put(ctx, "dK", r->dk);
  put(ctx, "dV", r->dv);
  put(ctx, "dG", r->dg);
  if (V == Variant::GDN2) {
    put(ctx, "dB", r->db);
    put(ctx, "dW", r->dw);
  } else {
    put(ctx, "dBeta", r->dbeta);
  }
  put(ctx, "d_initial_state", r->d_initial_state);
  put(ctx, "d_a_log", r->d_a_log);
  put(ctx, "d_dt_bias", r->d_dt_bias);
  return Status::ok();
}

template <Variant V>
Status summary_kernel(KernelContext& ctx) {
  auto r = la_ref::summary(config_of(ctx.node(), V), inputs_of(ctx));
  if (!r) return fail_with(ctx, r.status());
  put(ctx, "H", r->h);
  put(ctx, "M", r->m);
  return Status::ok();
}

template <Variant V>
Status summary_bwd_kernel(KernelContext& ctx) {
  auto r = la_ref::summary_bwd(config_of(ctx.node(), V), inputs_of(ctx), ctx.in(ops::in::dO));
  if (!r) return fail_with(ctx, r.status());
  put(ctx, "G", r->g);
  put(ctx, "transition", r->transition);
  return Status::ok();
}

const KernelRecord kKernels[] = {
    {ops::Gdn::kIndex, forward_kernel<Variant::GDN>},
    {ops::GdnBwd::kIndex, backward_kernel<Variant::GDN>},
    {ops::GdnSummary::kIndex, summary_kernel<Variant::GDN>},
    {ops::GdnSummaryBwd::kIndex, summary_bwd_kernel<Variant::GDN>},
    {ops::Kda::kIndex, forward_kernel<Variant::KDA>},
    {ops::KdaBwd::kIndex, backward_kernel<Variant::KDA>},
    {ops::KdaSummary::kIndex, summary_kernel<Variant::KDA>},
    {ops::KdaSummaryBwd::kIndex, summary_bwd_kernel<Variant::KDA>},
    {ops::Gdn2::kIndex, forward_kernel<Variant::GDN2>},
    {ops::Gdn2Bwd::kIndex, backward_kernel<Variant::GDN2>},
    {ops::Gdn2Summary::kIndex, summary_kernel<Variant::GDN2>},
    {ops::Gdn2SummaryBwd::kIndex, summary_bwd_kernel<Variant::GDN2>},
    {ops::Gdp::kIndex, forward_kernel<Variant::GDP>},
    {ops::GdpBwd::kIndex, backward_kernel<Variant::GDP>},
    {ops::GdpSummary::kIndex, summary_kernel<Variant::GDP>},
    {ops::GdpSummaryBwd::kIndex, summary_bwd_kernel<Variant::GDP>},
};

}  // namespace

std::span<const KernelRecord> linear_attention_kernels() { return kKernels; }

}  // namespace opgraph::reference
