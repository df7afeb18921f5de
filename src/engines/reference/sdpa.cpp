// engines/reference/sdpa.cpp — reference kernels of the SDPA group: sdpa and
// sdpa_backward here, the fp8 variants in sdpa_fp8.cpp, the float64 math in
// sdpa_ref_core.cpp (semantics in sdpa_ref.h), operand preparation (ragged THD,
// paged K/V) in sdpa_ref_io.cpp.
//
// sdpa_backward: the exact gradient of sdpa for the given Stats (P is recomputed
// as exp(s - Stats)), with D_i = dO_i . O_i. dBias sums dS (the gradient w.r.t.
// the scores, which is the gradient w.r.t. the added Bias) over the axes where
// Bias broadcasts; DSINK_TOKEN[h] = -sum_i exp(sink_h - Stats_i) D_i. With a user
// dropout mask the gradient uses Dropout_mask * Dropout_scale (Dropout_scale_inv
// is accepted and not needed by the exact gradient).
#include "engines/reference/sdpa_ref.h"

namespace opgraph::reference {
namespace sdpa_ref {

Status write_forward(KernelContext& c, const Problem& pb, const ForwardResult& r, double o_scale) {
  OPGRAPH_CHECK(scatter(c, "O", pb.sq, o_scale == 1.0 ? r.O : scaled(r.O, o_scale)));
  OPGRAPH_CHECK(scatter(c, "Stats", pb.sq, r.Stats));
  OPGRAPH_CHECK(scatter(c, "Max", pb.sq, r.Max));
  OPGRAPH_CHECK(scatter(c, "Sum_exp", pb.sq, r.Sum_exp));
  if (c.wants(ops::out::RNG_DUMP)) c.out(ops::out::RNG_DUMP).v = r.rng_dump.v;
  return Status::ok();
}

namespace {

Status sdpa_kernel(KernelContext& c) {
  const auto g = geometry(c);
  Problem pb;
  OPGRAPH_CHECK(read_problem(c, g, pb));
  Array q, k, v;
  OPGRAPH_CHECK(gather(c, "Q", pb.sq, q));
  OPGRAPH_CHECK(gather_kv(c, "K", "Page_table_K", pb, k));
  OPGRAPH_CHECK(gather_kv(c, "V", "Page_table_V", pb, v));
  return write_forward(c, pb, forward(pb, q, k, v, c.wants(ops::out::RNG_DUMP)), 1.0);
}

Status sdpa_backward_kernel(KernelContext& c) {
  const auto g = geometry(c);
  Problem pb;
  OPGRAPH_CHECK(read_problem(c, g, pb));
  Array q, k, v, o, dO, stats;
  OPGRAPH_CHECK(gather(c, "Q", pb.sq, q));
  OPGRAPH_CHECK(gather(c, "K", pb.skv, k));
  OPGRAPH_CHECK(gather(c, "V", pb.skv, v));
  OPGRAPH_CHECK(gather(c, "O", pb.sq, o));
  OPGRAPH_CHECK(gather(c, "dO", pb.sq, dO));
  OPGRAPH_CHECK(gather(c, "Stats", pb.sq, stats));
  BackwardOperands in{&q, &k, &v, &o, &dO, &stats};
  BackwardResult r = backward(pb, in);
  OPGRAPH_CHECK(scatter(c, "dQ", pb.sq, r.dQ));
  OPGRAPH_CHECK(scatter(c, "dK", pb.skv, r.dK));
  OPGRAPH_CHECK(scatter(c, "dV", pb.skv, r.dV));
  if (c.wants(ops::out::dBias)) c.out(ops::out::dBias).v = reduce_to(r.dS, c.in(ops::in::Bias).dims).v;
  if (c.wants(ops::out::DSINK_TOKEN)) c.out(ops::out::DSINK_TOKEN).v = r.dSink.v;
  if (c.wants(ops::out::RNG_DUMP)) {
    Array& dump = c.out(ops::out::RNG_DUMP);
    for_each_index(dump.dims, [&](std::span<const std::int64_t> i) {
      dump[dump.offset(i)] = pb.dropout_factor(i[0], i[1], i[2], i[3]) > 0.0 ? 1.0 : 0.0;
    });
  }
  return Status::ok();
}

const KernelRecord kKernels[] = {
    {ops::Sdpa::kIndex, sdpa_kernel},
    {ops::SdpaBackward::kIndex, sdpa_backward_kernel},
    {ops::SdpaFp8::kIndex, sdpa_fp8_kernel},
    {ops::SdpaFp8Backward::kIndex, sdpa_fp8_backward_kernel},
    {ops::SdpaMxfp8::kIndex, sdpa_mxfp8_kernel},
    {ops::SdpaMxfp8Backward::kIndex, sdpa_mxfp8_backward_kernel},
};

}  // namespace
}  // namespace sdpa_ref

std::span<const KernelRecord> sdpa_kernels() { return sdpa_ref::kKernels; }

}  // namespace opgraph::reference
