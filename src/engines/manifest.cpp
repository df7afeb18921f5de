// engines/manifest.cpp — THE one table: every family, its anchors, id block,
// hooks and engine slots. Nothing else makes an engine exist.
//
// Why the rows live here and not in src/plan/: a row names engine factories, and
// engines sit above the plan layer (CMake links only downward). src/plan/manifest.*
// holds the rules (classification, ids, opt-in, the test hook); this file is data.
//
// Blocks are fixed forever (ids 20000 + 100*block + slot): append new families
// with new blocks, never renumber. A family with no engine slot of ours still
// classifies graphs: such a graph is served by the backend and the universal
// reference.
#include "engines/manifest.h"

#include "engines/cudnn/cudnn_engine.h"
#include "engines/gemm/gemm_engine.h"
#include "engines/linear_attention/la_engine.h"
#include "engines/reference_adapter/reference_engine.h"

namespace opgraph::engines {
namespace {

plan::Family family(std::string name, int block, std::vector<std::string> anchors, std::string summary) {
  plan::Family f;
  f.name = std::move(name);
  f.block = block;
  f.anchors = std::move(anchors);
  f.summary = std::move(summary);
  return f;
}

plan::Manifest make_default() {
  plan::Manifest m;
  // Block 0: offered for every graph, outside classification.
  m.universal = family("reference", 0, {}, "CPU oracle: every op with a reference kernel, host buffers");
  m.universal.slots.push_back({"reference", make_reference_engine, false, "float64-accumulating CPU executor"});

  m.families.push_back(family("gemm", 1, {"matmul", "moe_grouped_matmul", "moe_grouped_matmul_bwd"},
                              "matmul with fused prologue/epilogue pointwise ops"));
  // On by default: the H200 numerics pass and gemm_v2 leads cuBLAS on part of the
  // table of shapes (bench/results/2026-11-30-gemm-v2-h200.txt); where it ranks
  // against cuDNN is the heuristics' BACKEND marker, per shape class.
  m.families.back().analyzer = gemm::analyze_facts;
  m.families.back().heuristics = gemm::heuristics;
  m.families.back().slots.push_back({"gemm", gemm::make_gemm_engine, false,
                                     "NVRTC matmul + fused pointwise epilogue (v2: TMA + wgmma, sm_90a; v1: mma.sync)"});
  m.families.push_back(family("norm", 2,
                              {"layernorm", "layernorm_backward", "rmsnorm", "rmsnorm_backward", "adalayernorm",
                               "adalayernorm_backward", "batchnorm", "batchnorm_inference", "batchnorm_backward",
                               "instancenorm", "instancenorm_backward"},
                              "normalisations, forward and backward"));
  m.families.push_back(family("sdpa_fwd", 3, {"sdpa", "sdpa_fp8", "sdpa_mxfp8"}, "scaled dot-product attention, forward"));
  m.families.push_back(family("sdpa_bwd", 4, {"sdpa_backward", "sdpa_fp8_backward", "sdpa_mxfp8_backward"},
                              "scaled dot-product attention, backward"));
  m.families.push_back(family("linear_attention", 5,
                              {"gdn", "gdn_bwd", "gdn_summary", "gdn_summary_bwd", "kda", "kda_bwd", "gdn2", "gdn2_bwd",
                               "gdp", "gdp_bwd"},
                              "gated delta rule linear attention (GDN, KDA, GDN-2, GDP)"));
  // On by default for gdn, gdn_bwd, gdn_summary and gdn_summary_bwd (the other ops decline at
  // check_support and run on the reference): numerics in bench/results/ (docs/linear_attention.md).
  // Its plans: the one-pass prefill, then the two-pass (la_engine.h, heuristics).
  m.families.back().heuristics = linear_attention::heuristics;
  m.families.back().slots.push_back({"linear_attention", linear_attention::make_la_engine, false,
                                     "NVRTC gdn forward: chunked mma.sync / wgmma prefill, token-recurrent decode (sm_90)"});
  m.families.push_back(family("conv", 6, {"conv_fprop", "conv_dgrad", "conv_wgrad"}, "convolutions"));
  // The cuDNN backend: its plans per mode, discovered per graph (empty without a device or libcudnn).
  m.backend = make_cudnn_provider();
  return m;
}

}  // namespace

const plan::Manifest& default_manifest() {
  static const plan::Manifest* m = new plan::Manifest(make_default());
  return *m;
}

}  // namespace opgraph::engines
