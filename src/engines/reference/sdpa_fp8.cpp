// engines/reference/sdpa_fp8.cpp — reference kernels of the fp8 SDPA ops.
//
// Per-tensor fp8 (sdpa_fp8, sdpa_fp8_backward), following cudnn-frontend's
// composite lowering:
//   real operands: Q * Descale_Q, K * Descale_K, V * Descale_V, O * Descale_O,
//     dO * Descale_dO (dO_f16, when bound, is used as is for D_i = dO_i . O_i).
//   forward: P (after dropout) -> Amax_S = max |P|; P is quantized for P V as
//     round_to(Q's type, P * Scale_S) * Descale_S; O real -> Amax_O = max |O|;
//     O stored = O * Scale_O (the executor rounds it to O's type).
//   backward: P quantized the same way for dV = P^T dO; dS = P (dP - D) ->
//     Amax_dP = max |dS| (before the attn_scale factor); dS quantized for dQ, dK as
//     round_to(T, dS * Scale_dP) * Descale_dP with T = dO's type when it is fp8,
//     else FP8_E5M2; Amax_dQ/dK/dV = max |real gradient|; stored = gradient * Scale_d*.
// MXFP8 (sdpa_mxfp8, sdpa_mxfp8_backward): every operand is dequantized with its
//   block scales (ir/ops/sdpa_fp8.cpp says which axis); the products run in
//   float64 on the dequantized values, intermediates (P, dS) are NOT re-quantized
//   (cudnn's composite dequantizes and multiplies in high precision); O, dQ, dK,
//   dV are high-precision outputs reported with their Amax.
#include "engines/reference/sdpa_ref.h"

namespace opgraph::reference::sdpa_ref {
namespace {

double scalar(KernelContext& c, std::string_view port) { return c.in(port)[0]; }

void set_amax(KernelContext& c, std::string_view port, double v) {
  if (c.wants(port)) c.out(port)[0] = v;
}

bool is_fp8_type(DataType t) { return t == DataType::FP8_E4M3 || t == DataType::FP8_E5M2; }

// Q/K/V dequantized (per tensor) and gathered (ragged / paged).
Status fp8_qkv(KernelContext& c, const Problem& pb, Array& q, Array& k, Array& v) {
  Array raw = scaled(c.in(ops::in::Q), scalar(c, "Descale_Q"));
  OPGRAPH_CHECK(gather(c, "Q", pb.sq, q, &raw));
  raw = scaled(c.in(ops::in::K), scalar(c, "Descale_K"));
  OPGRAPH_CHECK(gather_kv(c, "K", "Page_table_K", pb, k, &raw));
  raw = scaled(c.in(ops::in::V), scalar(c, "Descale_V"));
  return gather_kv(c, "V", "Page_table_V", pb, v, &raw);
}

}  // namespace

Status sdpa_fp8_kernel(KernelContext& c) {
  Problem pb;
  OPGRAPH_CHECK(read_problem(c, geometry(c), pb));
  Array q, k, v;
  OPGRAPH_CHECK(fp8_qkv(c, pb, q, k, v));
  const Requant p_q{scalar(c, "Scale_S"), scalar(c, "Descale_S"), c.in_tensor(ops::in::Q).get_data_type()};
  ForwardResult r = forward(pb, q, k, v, c.wants(ops::out::RNG_DUMP), p_q);
  set_amax(c, "Amax_S", r.amax_s);
  set_amax(c, "Amax_O", r.amax_o);
  return write_forward(c, pb, r, scalar(c, "Scale_O"));
}

Status sdpa_fp8_backward_kernel(KernelContext& c) {
  Problem pb;
  OPGRAPH_CHECK(read_problem(c, geometry(c), pb));
  Array q, k, v, o, dO, stats, dO16;
  Array raw = scaled(c.in(ops::in::Q), scalar(c, "Descale_Q"));
  OPGRAPH_CHECK(gather(c, "Q", pb.sq, q, &raw));
  raw = scaled(c.in(ops::in::K), scalar(c, "Descale_K"));
  OPGRAPH_CHECK(gather(c, "K", pb.skv, k, &raw));
  raw = scaled(c.in(ops::in::V), scalar(c, "Descale_V"));
  OPGRAPH_CHECK(gather(c, "V", pb.skv, v, &raw));
  raw = scaled(c.in(ops::in::O), scalar(c, "Descale_O"));
  OPGRAPH_CHECK(gather(c, "O", pb.sq, o, &raw));
  raw = scaled(c.in(ops::in::dO), scalar(c, "Descale_dO"));
  OPGRAPH_CHECK(gather(c, "dO", pb.sq, dO, &raw));
  OPGRAPH_CHECK(gather(c, "Stats", pb.sq, stats));
  BackwardOperands in{&q, &k, &v, &o, &dO, &stats};
  if (c.has(ops::in::dO_f16)) {
    OPGRAPH_CHECK(gather(c, "dO_f16", pb.sq, dO16));
    in.do_for_d = &dO16;
  }
  const DataType do_type = c.in_tensor(ops::in::dO).get_data_type();
  const Requant p_q{scalar(c, "Scale_S"), scalar(c, "Descale_S"), c.in_tensor(ops::in::Q).get_data_type()};
  const Requant ds_q{scalar(c, "Scale_dP"), scalar(c, "Descale_dP"), is_fp8_type(do_type) ? do_type : DataType::FP8_E5M2};
  BackwardResult r = backward(pb, in, p_q, ds_q);
  OPGRAPH_CHECK(scatter(c, "dQ", pb.sq, scaled(r.dQ, scalar(c, "Scale_dQ"))));
  OPGRAPH_CHECK(scatter(c, "dK", pb.skv, scaled(r.dK, scalar(c, "Scale_dK"))));
  OPGRAPH_CHECK(scatter(c, "dV", pb.skv, scaled(r.dV, scalar(c, "Scale_dV"))));
  set_amax(c, "Amax_dQ", r.amax_dq);
  set_amax(c, "Amax_dK", r.amax_dk);
  set_amax(c, "Amax_dV", r.amax_dv);
  set_amax(c, "Amax_dP", r.amax_dp);
  if (c.wants(ops::out::DSINK_TOKEN)) c.out(ops::out::DSINK_TOKEN).v = r.dSink.v;
  return Status::ok();
}

Status sdpa_mxfp8_kernel(KernelContext& c) {
  Problem pb;
  OPGRAPH_CHECK(read_problem(c, geometry(c), pb));
  Array q, k, v;
  Array raw = dequant_mx(c.in(ops::in::Q), c.in(ops::in::Descale_Q), 3);
  OPGRAPH_CHECK(gather(c, "Q", pb.sq, q, &raw));
  raw = dequant_mx(c.in(ops::in::K), c.in(ops::in::Descale_K), 3);
  OPGRAPH_CHECK(gather_kv(c, "K", "Page_table_K", pb, k, &raw));
  raw = dequant_mx(c.in(ops::in::V), c.in(ops::in::Descale_V), 2);
  OPGRAPH_CHECK(gather_kv(c, "V", "Page_table_V", pb, v, &raw));
  ForwardResult r = forward(pb, q, k, v, c.wants(ops::out::RNG_DUMP));
  set_amax(c, "Amax_O", r.amax_o);
  return write_forward(c, pb, r, 1.0);
}

Status sdpa_mxfp8_backward_kernel(KernelContext& c) {
  Problem pb;
  OPGRAPH_CHECK(read_problem(c, geometry(c), pb));
  struct Operand {
    const char* port;
    const char* scale;
    int axis;
    bool kv;
    Array value;
  };
  Operand ops[] = {{"Q", "Descale_Q", 3, false, {}},     {"Q_T", "Descale_Q_T", 2, false, {}},
                   {"K", "Descale_K", 3, true, {}},      {"K_T", "Descale_K_T", 2, true, {}},
                   {"V", "Descale_V", 3, true, {}},      {"dO", "Descale_dO", 3, false, {}},
                   {"dO_T", "Descale_dO_T", 2, false, {}}};
  for (Operand& op : ops) {
    Array raw = dequant_mx(c.in(op.port), c.in(op.scale), op.axis);
    OPGRAPH_CHECK(gather(c, op.port, op.kv ? pb.skv : pb.sq, op.value, &raw));
  }
  Array o, stats;
  OPGRAPH_CHECK(gather(c, "O", pb.sq, o));
  OPGRAPH_CHECK(gather(c, "Stats", pb.sq, stats));
  BackwardOperands in{&ops[0].value, &ops[2].value, &ops[4].value, &o, &ops[5].value, &stats};
  in.q_for_dk = &ops[1].value;
  in.k_for_dq = &ops[3].value;
  in.do_for_dv = &ops[6].value;
  BackwardResult r = backward(pb, in);
  OPGRAPH_CHECK(scatter(c, "dQ", pb.sq, r.dQ));
  OPGRAPH_CHECK(scatter(c, "dK", pb.skv, r.dK));
  OPGRAPH_CHECK(scatter(c, "dV", pb.skv, r.dV));
  set_amax(c, "Amax_dQ", r.amax_dq);
  set_amax(c, "Amax_dK", r.amax_dk);
  set_amax(c, "Amax_dV", r.amax_dv);
  if (c.wants(ops::out::DSINK_TOKEN)) c.out(ops::out::DSINK_TOKEN).v = r.dSink.v;
  return Status::ok();
}

}  // namespace opgraph::reference::sdpa_ref
