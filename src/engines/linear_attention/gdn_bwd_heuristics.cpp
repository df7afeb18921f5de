// engines/linear_attention/gdn_bwd_heuristics.cpp — gdn_bwd's heuristics (gdn_bwd.h): the chain split rules of
// the scans (PIPELINE_ARCH 0) and of the fused forms (PIPELINE_ARCH 3), whether the one-pass form (5) and the fused
// forms come first, and the family's proposals in their order. The kernels and the plan are gdn_bwd.cpp's, the
// rules B1..B11 gdn_bwd_rules.cpp's.
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/la_engine.h"

namespace opgraph::linear_attention {

long long gdn_bwd_chain_split_rule(const GdnBwdProblem& p, long long sm_count) {
  if (sm_count <= 0 || p.n_seq <= 0 || p.ho <= 0 || p.t <= 0 || p.batch_invariant || p.summary) return 0;
  // In units of a third of a forward-scan chunk step: a reverse step 5 (5/3 of a forward one),
  // a fix-up step 12 a span (the H200's per-kernel times at 2/8, 1 x 32768, where neither scan
  // fills the device: 3.1 and 5.2 us a chunk step, ~13 us a fix-up step). The forward scans fit
  // two CTAs a multiprocessor, the reverse ones one. Split, the forward summary runs value rows
  // for every span but the last and M rows for all, the reverse summary every span but the first.
  constexpr long long kFwd = 3, kRev = 5, kFix = 12;
  const long long slices = p.d / 64, a = p.n_seq * p.ho;
  const long long chunks = (p.t / p.n_seq + 63) / 64;  // per sequence, on average
  auto waves = [&](long long ctas, long long per_sm) { return (ctas + per_sm * sm_count - 1) / (per_sm * sm_count); };
  const long long unsplit = chunks * (kFwd * waves(a * slices, 2) + kRev * waves(a * slices, 1));
  // Taken where it saves 5 %: the model's ranking matched the H200's at every measured span length on
  // the one-sequence cells (2/8: 64; 16/32: 128, 8.10 ms against 8.55 whole; 16/64: none).
  return cheapest_split(chunks, p.n_seq, p.t, unsplit, 19, 20, [&](long long j, long long spans) {
    const long long x = a * spans * slices, xm = a * (spans - 1) * slices;
    return j * (kFwd * (waves(xm + x, 2) + waves(x, 2)) + kRev * (waves(xm, 1) + waves(x, 1))) + kFix * spans;
  });
}

long long gdn_bwd_fused_split_rule(const GdnBwdProblem& p, long long sm_count) {
  if (sm_count <= 0 || p.n_seq <= 0 || p.ho <= 0 || p.t <= 0 || p.batch_invariant || p.summary) return 0;
  if (!gdn_bwd_b9_refusal(p, 0, kPrefillFusedWs).empty() || p.checkpoints >= 0) return 0;
  // In tenths of a microsecond a chunk step, from the H200's per-kernel times at 16/64, 4 x 8192 (one CTA a
  // multiprocessor, bench/results/2026-12-05-gdn-bwd-fused-profile-h200.txt): the forward recompute 93, the reverse
  // scan 74; the forward summaries as the forward's fused prefill (44: no stores), the reverse summaries ~0.7 of the
  // reverse scan (52: no stores, no S^T); a fix-up step 130 a span and direction (the scans' split).
  constexpr long long kF = 93, kR = 74, kFs = 44, kRs = 52, kFix = 130;
  const long long a = p.n_seq * p.ho;
  const long long chunks = (p.t / p.n_seq + 63) / 64;  // per sequence, on average
  auto waves = [&](long long ctas) { return (ctas + sm_count - 1) / sm_count; };
  const long long unsplit = chunks * waves(a) * (kF + kR);
  return cheapest_split(chunks, p.n_seq, p.t, unsplit, 19, 20, [&](long long j, long long spans) {
    return j * (waves(a * (2 * spans - 1)) * kFs + waves(a * spans) * (kF + kR) + waves(a * (spans - 1)) * kRs) +
           2 * kFix * spans;
  });
}

namespace {
// gdn_bwd_onepass_split_rule given the fused split rule's pick `j` (the proposals have it already).
long long onepass_split_of(const GdnBwdProblem& p, long long sm_count, long long j) {
  if (j <= 0 || !gdn_bwd_b11_refusal(p).empty()) return 0;
  // Its spans' first pass is PIPELINE_ARCH 3's split; its second, one CTA a span, gains from two waves of spans where
  // those stay 64+ chunks long. On the H100 (GdnBwdGpu.TimingOnePassSplit,
  // bench/results/2026-12-07-gdn-onepass-split-h100.txt) the fastest spans: 128 or 64 at 16/64 (0.948x, 0.949x 3's
  // split at its rule's 256), 64 at 16/32 (0.970x; 3's 128), 32 at 2/8 (0.946x, as 3's; 16: 1.025x).
  const long long a = p.n_seq * p.ho, chunks = (p.t / p.n_seq + 63) / 64;
  while (j > 64 && a * ((chunks + j / 2 - 1) / (j / 2)) <= 2 * sm_count) j /= 2;
  return j;
}
}  // namespace

long long gdn_bwd_onepass_split_rule(const GdnBwdProblem& p, long long sm_count) {
  return onepass_split_of(p, sm_count, gdn_bwd_fused_split_rule(p, sm_count));
}

namespace {
// gdn_bwd_fused_first given the chain split rule's pick `split`: where the (head, sequence) chains fill 3/4 of the
// multiprocessors, or with state_checkpoints bound (the fused forward recompute then runs the cadence's spans at
// once: on the H100, GdnBwdGpu.TimingCheckpoints, every 256..4096 tokens PIPELINE_ARCH 3 took 0.71-0.90x the
// whole-sequence plan's time at 16/64 and 16/32, 4 x 8192 and 16/64, 1 x 32768,
// bench/results/2026-12-05-gdn-split-mskip-h100.txt); never where the scans' rule splits.
bool fused_first(const GdnBwdProblem& p, long long sm_count, long long split) {
  return split <= 0 && sm_count > 0 && gdn_bwd_b9_refusal(p, 0, kPrefillFusedWs).empty() &&
         (p.checkpoints >= 0 || 4 * p.n_seq * p.ho >= 3 * sm_count);
}
}  // namespace

bool gdn_bwd_fused_first(const GdnBwdProblem& p, long long sm_count) {
  return fused_first(p, sm_count, gdn_bwd_chain_split_rule(p, sm_count));
}

bool gdn_bwd_onepass_first(const GdnBwdProblem& p, long long sm_count) {
  return sm_count > 0 && p.n_seq > 0 && gdn_bwd_b11_refusal(p).empty() && 10 * p.n_seq * p.ho >= 9 * sm_count &&
         p.t >= 4096 * p.n_seq;
}

void gdn_bwd_proposals(const Engine& engine, const OpGraph& graph, long long sm_count,
                       std::vector<plan::Proposal>& out) {
  auto p = analyze_gdn_bwd(graph);
  if (p.is_bad()) return;
  auto push = [&](long long arch, long long split) {
    out.push_back(
        plan::Proposal::plan(engine.id(), Knobs{{KnobType::PIPELINE_ARCH, arch}, {KnobType::CHAIN_SPLIT, split}}));
  };
  // PIPELINE_ARCH 3 split first where its rule splits (on the H200 0.75-0.95x the scans' plan on the one-sequence
  // cells: bench/results/2026-12-05-gdn-bwd-fused-split-h200.txt); then, where the rule splits the scans, their split
  // plan; the fused forms (3, then 2) first where their chains fill the device, else after the whole-sequence plan
  // (2, then 3), which is always proposed.
  const long long j = gdn_bwd_chain_split_rule(*p, sm_count);
  const long long jf = gdn_bwd_fused_split_rule(*p, sm_count);
  const bool first = fused_first(*p, sm_count, j);
  // The one-pass form (PIPELINE_ARCH 5) first where its chains fill the device and run long (gdn_bwd_onepass_first),
  // its split before 3's where both split (gdn_bwd_onepass_split_rule).
  if (gdn_bwd_onepass_first(*p, sm_count)) push(kBwdOnePass, 0);
  const long long j1 = onepass_split_of(*p, sm_count, jf);
  if (j1 > 0 && !first) push(kBwdOnePass, j1);
  if (jf > 0 && !first) push(kPrefillFusedWs, jf);
  if (j > 0) push(kPrefillOnePass, j);
  if (first) push(kPrefillFusedWs, 0), push(kPrefillFused, 0);
  push(kPrefillOnePass, 0);
  if (!first && gdn_bwd_b9_refusal(*p, 0, kPrefillFused).empty()) push(kPrefillFused, 0), push(kPrefillFusedWs, 0);
  if (jf > 0 && first) push(kPrefillFusedWs, jf);
}

}  // namespace opgraph::linear_attention
