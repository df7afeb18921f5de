// engines/gemm/gemm_declared.cpp — the specialisations the tree declares for
// the gemm family: every config the heuristics can propose, every layout and
// alignment class, both input types, each output type and every epilogue kind.
// The CI compiles them all with NVRTC for sm_90a (tests/gemm, tests/runtime).
#include "engines/gemm/gemm_declared.h"

namespace opgraph::gemm {

GemmProblem sample_problem(DataType in, DataType out, bool a_kmajor, bool b_kmajor, int vec,
                           std::vector<EpiKind> chain) {
  GemmProblem p;
  p.in = in;
  p.out = out;
  p.a_kmajor = a_kmajor;
  p.b_kmajor = b_kmajor;
  p.vec = vec;
  p.m = 1000;
  p.n = 1000;
  p.k = 1000;
  p.a = {1, in, 0, 0, a_kmajor ? p.k : 1, a_kmajor ? 1 : p.m};
  p.b = {2, in, 0, 0, b_kmajor ? 1 : p.n, b_kmajor ? p.k : 1};
  p.c = {3, out, 0, 0, p.n, 1};
  for (EpiKind k : chain) {
    EpiStep s{k, "n" + std::to_string(p.steps.size()), -1, 1.5};
    if (k == EpiKind::ADD || k == EpiKind::MUL) {
      EpiOperand o;
      o.by_value = k == EpiKind::MUL;
      o.value = 0.5;
      o.view = {10 + static_cast<std::int64_t>(p.operands.size()), DataType::BFLOAT16, 0, 0, 0, 1};
      s.operand = static_cast<int>(p.operands.size());
      p.operands.push_back(o);
    }
    p.steps.push_back(s);
  }
  return p;
}

std::vector<runtime::KernelRequest> declared_specialisations() {
  std::vector<runtime::KernelRequest> out;
  const auto bf = DataType::BFLOAT16, hf = DataType::HALF, f32 = DataType::FLOAT;
  // Every proposable config on the common class (row-major A, column-major B).
  for (const auto& c : proposable_configs())
    out.push_back(kernel_request(sample_problem(bf, bf, true, true, 8, {EpiKind::ADD, EpiKind::GELU}), c));
  // Every layout x alignment class, with the portable config.
  GemmConfig small;
  small.tile_m = small.tile_n = 64;
  small.stages = 2;
  for (bool ak : {true, false})
    for (bool bk : {true, false})
      for (int vec : {8, 1}) out.push_back(kernel_request(sample_problem(bf, bf, ak, bk, vec, {EpiKind::RELU}), small));
  // fp16 in, each output type, every epilogue kind; SWAP_AB and the other raster.
  GemmConfig swap;
  swap.swap_ab = true;
  swap.raster = 1;
  swap.stages = 4;
  out.push_back(kernel_request(sample_problem(hf, f32, true, false, 8,
                                              {EpiKind::MUL, EpiKind::ADD, EpiKind::SWISH, EpiKind::SIGMOID}),
                               swap));
  out.push_back(kernel_request(sample_problem(hf, hf, false, true, 8,
                                              {EpiKind::GELU_TANH, EpiKind::TANH, EpiKind::IDENTITY, EpiKind::ADD}),
                               GemmConfig{}));
  out.push_back(kernel_request(sample_problem(bf, f32, true, true, 1, {}), GemmConfig{}));
  // v2 (sm_90a): every layout class, fp16 in with each output type, the other raster.
  GemmConfig v2;
  v2.version = 2;
  v2.tile_n = 128;
  v2.stages = 4;
  for (bool ak : {true, false})
    for (bool bk : {true, false}) out.push_back(kernel_request(sample_problem(bf, bf, ak, bk, 8, {EpiKind::RELU}), v2));
  GemmConfig pair = v2;  // CLUSTER_M = 2 with an N-major B (its 64-wide boxes split between the CTAs)
  pair.cluster_m = 2;
  out.push_back(kernel_request(sample_problem(bf, bf, true, false, 8, {EpiKind::ADD}), pair));
  // EPI_TMA (a 16-bit output through TMA stores): 128 x 256 with 4 stages (a
  // copy of two boxes, two passes) on every layout class, an fp16 output, and
  // two chains (a row operand + gelu; a scale by value + a row operand).
  GemmConfig et = v2;
  et.tile_n = 256;
  et.stages = 4;
  for (bool ak : {true, false})
    for (bool bk : {true, false}) out.push_back(kernel_request(sample_problem(bf, bf, ak, bk, 8, {}), et));
  out.push_back(kernel_request(sample_problem(hf, hf, true, true, 8, {}), et));
  out.push_back(kernel_request(sample_problem(bf, bf, true, true, 8, {EpiKind::ADD, EpiKind::GELU}), et));
  out.push_back(kernel_request(sample_problem(bf, bf, true, true, 8, {EpiKind::MUL, EpiKind::ADD}), et));
  GemmConfig et3 = et;  // 3 stages: the whole tile's copy, one pass
  et3.stages = 3;
  out.push_back(kernel_request(sample_problem(bf, bf, true, true, 8, {EpiKind::ADD, EpiKind::GELU}), et3));
  GemmConfig etp = et;  // CTA pairs
  etp.cluster_m = 2;
  out.push_back(kernel_request(sample_problem(bf, bf, true, true, 8, {}), etp));
  GemmConfig et128 = v2;  // 128 x 128 with 5 stages (the pick of a plain 128-wide output)
  et128.tile_n = 128;
  et128.stages = 5;
  for (bool bk : {true, false}) out.push_back(kernel_request(sample_problem(bf, bf, true, bk, 8, {}), et128));
  GemmConfig et176 = v2;  // 128 x 176 with 4 stages (a K-major B; the copy's last box overlaps): both A layouts, fp16
  et176.tile_n = 176;
  et176.stages = 4;
  for (bool ak : {true, false}) out.push_back(kernel_request(sample_problem(bf, bf, ak, true, 8, {}), et176));
  out.push_back(kernel_request(sample_problem(hf, hf, true, true, 8, {EpiKind::ADD, EpiKind::GELU}), et176));
  et176.stages = 5;  // a copy of two of the three boxes: two passes, the second one box
  out.push_back(kernel_request(sample_problem(bf, bf, true, true, 8, {}), et176));
  v2.raster = 1;
  for (DataType o : {bf, hf, f32})
    out.push_back(kernel_request(sample_problem(hf, o, true, true, 8, {EpiKind::MUL, EpiKind::ADD, EpiKind::SWISH}), v2));
  return out;
}

}  // namespace opgraph::gemm
