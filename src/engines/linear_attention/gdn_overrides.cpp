// engines/linear_attention/gdn_overrides.cpp — the problem an execute with shape overrides runs (la_engine.h,
// overridden_problem): the built plan's GdnProblem at the call's token count, sequence count, state rows and q / k / v
// strides, read from the normalised variant pack; every other change refused naming the tensor, its port and the
// rule; and override_operand (gdn_overrides.h), the operand lookup gdn_bwd_overridden_problem shares. Split out of
// la_engine.cpp.
#include <cstdint>
#include <string>

#include "engines/linear_attention/gdn_overrides.h"
#include "engines/linear_attention/la_engine.h"
#include "exec/declared_layout.h"

namespace opgraph::linear_attention {

OverrideOperand override_operand(const VariantPack& pack, const DeclaredLayout& layout, std::int64_t uid) {
  OverrideOperand x;
  if (uid < 0) return x;
  const std::int64_t pos = layout.index_of(uid);
  if (pos < 0 || static_cast<std::size_t>(pos) >= pack.operands().size()) return x;
  x.buf = &pack.operand(static_cast<std::size_t>(pos));
  x.slot = &layout.slot(static_cast<std::size_t>(pos));
  return x;
}

Result<GdnProblem> overridden_problem(const GdnProblem& built, const VariantPack& pack, const DeclaredLayout& layout) {
  using Seen = OverrideOperand;
  auto seen = [&](std::int64_t uid) { return override_operand(pack, layout, uid); };
  auto extent = [](const Seen& x, int i) { return x.extent(i); };
  auto refuse = [](const Seen& x, const std::string& rule) {
    return Status(ErrorCode::INVALID_VARIANT_PACK,
                  "engine linear_attention: shape override of " + operand_label(*x.slot) + ": " + rule);
  };
  auto dims_str = [](const Seen& x) { return int_list(x.buf->dims.data(), x.slot->rank); };
  // Only the token count T (dim 0 of q, k, v, g, beta, O), the sequence count N
  // (cu_seqlens [N + 1], state_indices [N]) and the state rows (dim 0 of the
  // states) may change: heads and the head dim select the kernels.
  auto same_tail = [&](const Seen& x) -> Status {
    for (int i = 1; i < x.slot->rank; ++i)
      if (x.buf->dims[i] != x.slot->dims[i])
        return refuse(x, "rule built_extents: extents " + dims_str(x) + " change dim " + std::to_string(i) + " (" +
                             std::to_string(x.slot->dims[i]) + " when built); only the token count, the sequence "
                             "count and the state rows may change (heads and the head dim select the kernels)");
    return Status::ok();
  };
  GdnProblem p = built;
  const Seen tok[] = {seen(built.q), seen(built.k), seen(built.v),
                      seen(built.g), seen(built.beta), seen(built.o)};
  std::int64_t t = -1;
  const Seen* t_from = nullptr;
  for (const Seen& x : tok) {
    if (!x.buf) continue;
    if (x.buf->overridden) OPGRAPH_CHECK(same_tail(x));
    const std::int64_t e = extent(x, 0);
    if (t < 0) t = e, t_from = &x;
    else if (e != t)
      return refuse(x, "rule token_axis: " + std::to_string(e) + " tokens here, " + std::to_string(t) + " for '" +
                           (t_from->slot->tensor ? t_from->slot->tensor->get_name() : std::string("?")) +
                           "'; override every tensor the token axis spans (q, k, v, g, beta, O) alike");
  }
  // q, k, v: a view's token and head strides (rule L6 of check_support).
  struct Strides {
    const Seen& x;
    std::int64_t *ts, *hs;
  };
  for (const Strides& st : {Strides{tok[0], &p.q_ts, &p.q_hs}, Strides{tok[1], &p.k_ts, &p.k_hs},
                            Strides{tok[2], &p.v_ts, &p.v_hs}}) {
    if (!st.x.buf || !st.x.buf->overridden) continue;
    const auto& b = *st.x.buf;
    auto fits = [&](int i) { return b.dims[i] == 1 || (b.strides[i] >= 0 && b.strides[i] % 8 == 0); };
    if (b.strides[2] != 1 || !fits(0) || !fits(1))
      return refuse(st.x, "rule L6 layout: the head dim must stay contiguous and the token and head strides "
                          "multiples of 8 elements; got strides [" + std::to_string(b.strides[0]) + ", " +
                          std::to_string(b.strides[1]) + ", " + std::to_string(b.strides[2]) + "]");
    *st.ts = b.dims[0] == 1 ? 0 : b.strides[0];
    *st.hs = b.dims[1] == 1 ? 0 : b.strides[1];
  }
  p.t = t;
  const Seen cu = seen(built.cu_seqlens);
  p.n_seq = cu.buf ? extent(cu, 0) - 1 : built.n_seq;
  if (p.n_seq < 0 || p.n_seq > 65535)
    return refuse(cu, "rule L7 grid: cu_seqlens holds N + 1 offsets with 0 <= N <= 65535; got " +
                          std::to_string(p.n_seq + 1));
  if (const Seen idx = seen(built.state_indices); idx.buf && extent(idx, 0) != p.n_seq)
    return refuse(idx, "rule sequences: state_indices has " + std::to_string(extent(idx, 0)) +
                           " entries, cu_seqlens names " + std::to_string(p.n_seq) + " sequences");
  const Seen states[] = {seen(built.initial_state), seen(built.final_state)};
  std::int64_t rows = -1;
  for (const Seen& x : states) {
    if (!x.buf) continue;
    if (x.buf->overridden) OPGRAPH_CHECK(same_tail(x));
    const std::int64_t r = extent(x, 0);
    if (rows >= 0 && r != rows)
      return refuse(x, "rule state_rows: " + std::to_string(r) + " rows here, " + std::to_string(rows) +
                           " in the other state tensor; initial_state and final_state have one row count");
    rows = r;
    if (built.state_indices < 0 && r != p.n_seq)
      return refuse(x, "rule state_rows: " + std::to_string(r) + " state rows for " + std::to_string(p.n_seq) +
                           " sequences; without state_indices there is one row a sequence");
  }
  p.state_rows = rows >= 0 ? rows : p.n_seq;
  // state_checkpoints: its rows may change with T (the kernels write none at or past them).
  if (const Seen ck = seen(built.checkpoints); ck.buf) {
    if (ck.buf->overridden) OPGRAPH_CHECK(same_tail(ck));
    p.ckpt_rows = extent(ck, 0);
  }
  return p;
}

}  // namespace opgraph::linear_attention
