// tests/cudnn_gpu/sdpa_gpu_util.h — the SDPA GPU cases' data and graphs: bf16
// helpers, one draw of fresh random inputs per case (lengths, Q/K/V/dO, page
// tables), the declarations (BHSD; THD-packed BSHD with ragged offsets in
// elements; paged caches; Bias, ALiBi, Max / Sum_exp, dBias, SINK_TOKEN), forward/backward
// graphs built identically for the device and the reference, and the reference run.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>

#include "cudnn_gpu/gpu_harness.h"
#include "opgraph/builders/sdpa.h"
#include "opgraph/graph.h"
#include "runtime/loader.h"

namespace sdpa_gpu {

using namespace opgraph;

// The harness's driver (device 0's primary context current) and allocation.
inline const runtime::CudaDriverApi* drv() { return cudnn_gpu::driver(); }
using cudnn_gpu::DevMem;

inline std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float from_bf16(std::uint16_t h) {
  std::uint32_t u = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// Element i of a BFLOAT16 or FLOAT buffer's bytes.
inline float value_at(const std::vector<unsigned char>& b, DataType t, std::int64_t i) {
  if (t == DataType::BFLOAT16) {
    std::uint16_t h;
    std::memcpy(&h, b.data() + i * 2, 2);
    return from_bf16(h);
  }
  float f;
  std::memcpy(&f, b.data() + i * 4, 4);
  return f;
}

struct Spec {
  std::string name;
  bool backward = false;
  std::int64_t b = 2, h_q = 4, h_k = 4, s_q = 128, s_kv = 128, d = 64;
  bool causal = false, bottom_right = false, padding = false, ragged = false, paged = false;
  std::int64_t window = 0;            // sliding_window_length (0 = none)
  std::string impl = "AUTO";
  bool alibi = false;                 // use_alibi_mask
  bool max_sum_exp = false;           // forward: the Max and Sum_exp outputs too
  std::vector<std::int64_t> bias;     // Bias dims (empty = none); bf16 random
  bool dbias = false;                 // backward: the dBias output too
  bool sink = false;                  // SINK_TOKEN [1, h_q, 1, 1] FLOAT, random in [0.5, 2.5]
  bool dsink = false;                 // backward: the DSINK_TOKEN output too
  bool deterministic = false;         // backward: use_deterministic_algorithm (Hopper: the dP-workspace form)
};

// One buffer of the case: the tensor of each graph (device d, host h) and its bytes.
struct Buf {
  TensorPtr d, h;
  std::vector<unsigned char> bytes;
};

// The per-case data every graph of the case shares (drawn once).
struct Data {
  std::vector<std::int32_t> sq, skv;      // valid lengths per batch entry
  std::vector<std::uint16_t> q, k, v, dO, bias;  // bf16
  std::vector<std::int32_t> pt;            // page table (paged)
  std::vector<float> sink;                 // SINK_TOKEN values
  std::int64_t blocks = 0, block = 32;
};

inline std::vector<std::int32_t> offsets(const std::vector<std::int32_t>& lens, std::int64_t per_token) {
  std::vector<std::int32_t> r(lens.size() + 1, 0);
  for (std::size_t i = 0; i < lens.size(); ++i) r[i + 1] = r[i] + static_cast<std::int32_t>(lens[i] * per_token);
  return r;
}

template <class T>
inline std::vector<unsigned char> raw(const std::vector<T>& v) {
  std::vector<unsigned char> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline Data draw(const Spec& s, std::mt19937& rng) {
  Data dt;
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto fill = [&](std::int64_t n) {
    std::vector<std::uint16_t> x(static_cast<std::size_t>(n));
    for (auto& e : x) e = to_bf16(u(rng));
    return x;
  };
  std::uniform_int_distribution<std::int32_t> lq(static_cast<std::int32_t>(s.s_q / 2), static_cast<std::int32_t>(s.s_q));
  std::uniform_int_distribution<std::int32_t> lkv(static_cast<std::int32_t>(s.s_kv / 2), static_cast<std::int32_t>(s.s_kv));
  for (std::int64_t n = 0; n < s.b; ++n) {
    dt.sq.push_back(s.padding ? lq(rng) : static_cast<std::int32_t>(s.s_q));
    dt.skv.push_back(s.padding ? lkv(rng) : static_cast<std::int32_t>(s.s_kv));
  }
  if (s.bottom_right)  // bottom-right needs s_q <= s_kv per entry
    for (std::int64_t n = 0; n < s.b; ++n) dt.sq[n] = std::min(dt.sq[n], dt.skv[n]);
  dt.q = fill(s.b * s.h_q * s.s_q * s.d);
  for (std::int64_t h = 0; s.sink && h < s.h_q; ++h) dt.sink.push_back(1.5f + u(rng));
  if (!s.bias.empty()) dt.bias = fill(std::accumulate(s.bias.begin(), s.bias.end(), std::int64_t{1}, std::multiplies<>()));
  dt.dO = fill(s.b * s.h_q * s.s_q * s.d);
  if (s.paged) {
    const std::int64_t pages = (s.s_kv + dt.block - 1) / dt.block;
    dt.blocks = s.b * pages;
    dt.pt.resize(static_cast<std::size_t>(dt.blocks));
    std::iota(dt.pt.begin(), dt.pt.end(), 0);
    std::shuffle(dt.pt.begin(), dt.pt.end(), rng);
    dt.k = fill(dt.blocks * s.h_k * dt.block * s.d);
    dt.v = fill(dt.blocks * s.h_k * dt.block * s.d);
  } else {
    dt.k = fill(s.b * s.h_k * s.s_kv * s.d);
    dt.v = fill(s.b * s.h_k * s.s_kv * s.d);
  }
  return dt;
}

// Q/K/V declarations (BHSD, or THD-packed BSHD strides with ragged offsets, or paged caches).
struct Qkv {
  TensorPtr q, k, v, rq, rkv;
  SdpaInputs in;
  std::vector<std::pair<TensorPtr, std::vector<unsigned char>>> inputs;
};

inline Qkv declare(Graph& g, const Spec& s, const Data& dt) {
  const DataType bf = DataType::BFLOAT16;
  Qkv x;
  auto bshd = [](std::int64_t h, std::int64_t sl, std::int64_t d) {
    return std::vector<std::int64_t>{sl * h * d, d, h * d, 1};
  };
  if (s.ragged) {
    x.rq = g.tensor({s.b + 1, 1, 1, 1}, DataType::INT32, "ragged_q");
    x.rkv = g.tensor({s.b + 1, 1, 1, 1}, DataType::INT32, "ragged_kv");
    x.inputs.push_back({x.rq, raw(offsets(dt.sq, s.h_q * s.d))});
    x.inputs.push_back({x.rkv, raw(offsets(dt.skv, s.h_k * s.d))});
  }
  x.q = g.tensor({s.b, s.h_q, s.s_q, s.d}, bf, "Q", s.ragged ? bshd(s.h_q, s.s_q, s.d) : std::vector<std::int64_t>{});
  if (s.paged) {
    x.k = g.tensor({dt.blocks, s.h_k, dt.block, s.d}, bf, "K_cache");
    x.v = g.tensor({dt.blocks, s.h_k, dt.block, s.d}, bf, "V_cache");
    const std::int64_t pages = dt.blocks / s.b;
    x.in.page_table_k = g.tensor({s.b, 1, pages, 1}, DataType::INT32, "page_table_k");
    x.in.page_table_v = g.tensor({s.b, 1, pages, 1}, DataType::INT32, "page_table_v");
    x.inputs.push_back({x.in.page_table_k, raw(dt.pt)});
    x.inputs.push_back({x.in.page_table_v, raw(dt.pt)});
  } else {
    auto st = s.ragged ? bshd(s.h_k, s.s_kv, s.d) : std::vector<std::int64_t>{};
    x.k = g.tensor({s.b, s.h_k, s.s_kv, s.d}, bf, "K", st);
    x.v = g.tensor({s.b, s.h_k, s.s_kv, s.d}, bf, "V", st);
  }
  if (s.ragged) {
    x.q->set_ragged_offset(x.rq);
    x.k->set_ragged_offset(x.rkv);
    x.v->set_ragged_offset(x.rkv);
  }
  x.inputs.push_back({x.q, raw(dt.q)});
  x.inputs.push_back({x.k, raw(dt.k)});
  x.inputs.push_back({x.v, raw(dt.v)});
  if (s.sink) {
    x.in.sink_token = g.tensor({1, s.h_q, 1, 1}, DataType::FLOAT, "SINK_TOKEN");
    x.inputs.push_back({x.in.sink_token, raw(dt.sink)});
  }
  if (!s.bias.empty()) {
    x.in.bias = g.tensor(s.bias, bf, "Bias");
    x.inputs.push_back({x.in.bias, raw(dt.bias)});
  }
  if (s.padding) {
    x.in.seq_len_q = g.tensor({s.b, 1, 1, 1}, DataType::INT32, "seq_len_q");
    x.in.seq_len_kv = g.tensor({s.b, 1, 1, 1}, DataType::INT32, "seq_len_kv");
    x.inputs.push_back({x.in.seq_len_q, raw(dt.sq)});
    x.inputs.push_back({x.in.seq_len_kv, raw(dt.skv)});
  }
  return x;
}

inline Attributes attrs_of(const Spec& s) {
  Attributes a;
  a.set("attn_scale", 1.0 / std::sqrt(static_cast<double>(s.d)));
  if (s.causal) a.set(s.bottom_right ? "use_causal_mask_bottom_right" : "use_causal_mask", true);
  if (s.window) a.set("sliding_window_length", s.window);
  if (s.padding) a.set("use_padding_mask", true);
  if (s.paged) a.set("paged_attention_max_seq_len_kv", s.s_kv);
  if (s.alibi) a.set("use_alibi_mask", true);
  return a;
}

// What a graph of the case binds and what it produces.
struct Built {
  std::vector<std::pair<TensorPtr, std::vector<unsigned char>>> inputs;
  std::vector<TensorPtr> outputs;
  std::vector<std::vector<std::int32_t>> lens;    // valid tokens per batch entry, per output
  std::vector<std::vector<std::int32_t>> ragged;  // per output: its ragged offsets (empty: none)
};

inline TensorPtr out(TensorPtr t, const char* name, DataType dt, const TensorPtr& ragged = nullptr) {
  t->set_output(true).set_name(name).set_data_type(dt);
  if (ragged) t->set_ragged_offset(ragged);
  return t;
}

inline Built build_forward(Graph& g, const Spec& s, const Data& dt) {
  Qkv x = declare(g, s, dt);
  Attributes a = attrs_of(s);
  a.set("generate_stats", true).set("implementation", s.impl);
  if (s.max_sum_exp && !s.backward)  // the composite softmax gives Max + Sum_exp instead of Stats
    a.set("score_max", true).set("score_sum_exp", true).set("generate_stats", false);
  auto o = g.sdpa(x.q, x.k, x.v, a, x.in);
  if (s.ragged) o.O->set_stride(x.q->get_stride());  // THD-packed like Q (offsets count BSHD tokens)
  Built b;
  b.inputs = x.inputs;
  b.outputs = {out(o.O, "O", DataType::BFLOAT16, s.ragged ? x.rq : nullptr)};
  if (o.Stats) b.outputs.push_back(out(o.Stats, "Stats", DataType::FLOAT));
  if (o.Max && o.Sum_exp) {
    b.outputs.push_back(out(o.Max, "Max", DataType::FLOAT));
    b.outputs.push_back(out(o.Sum_exp, "Sum_exp", DataType::FLOAT));
  }
  b.lens.assign(b.outputs.size(), dt.sq);
  b.ragged.assign(b.outputs.size(), {});
  if (s.ragged) b.ragged[0] = offsets(dt.sq, s.h_q * s.d);
  return b;
}

// Backward: O and Stats (from a reference forward) are extra inputs.
inline Built build_backward(Graph& g, const Spec& s, const Data& dt, const std::vector<unsigned char>& o_bytes,
                     const std::vector<unsigned char>& stats_bytes) {
  Qkv x = declare(g, s, dt);
  const DataType bf = DataType::BFLOAT16;
  auto st = x.q->get_stride();
  auto o = g.tensor({s.b, s.h_q, s.s_q, s.d}, bf, "O", st);
  auto dO = g.tensor({s.b, s.h_q, s.s_q, s.d}, bf, "dO", st);
  if (s.ragged) {
    o->set_ragged_offset(x.rq);
    dO->set_ragged_offset(x.rq);
  }
  auto stats = g.tensor({s.b, s.h_q, s.s_q, 1}, DataType::FLOAT, "Stats");
  SdpaBackwardInputs in;
  in.seq_len_q = x.in.seq_len_q;
  in.seq_len_kv = x.in.seq_len_kv;
  in.bias = x.in.bias;
  in.sink_token = x.in.sink_token;
  Attributes a = attrs_of(s);
  if (s.dbias) a.set("dbias", true);
  if (s.dsink) a.set("dsink_token", true);
  if (s.deterministic) a.set("use_deterministic_algorithm", true);
  auto r = g.sdpa_backward(x.q, x.k, x.v, o, dO, stats, a, in);
  if (s.ragged) {  // gradients THD-packed like their inputs (offsets count BSHD tokens)
    r.dQ->set_stride(x.q->get_stride());
    r.dK->set_stride(x.k->get_stride());
    r.dV->set_stride(x.v->get_stride());
  }
  Built b;
  b.inputs = x.inputs;
  b.inputs.push_back({o, o_bytes});
  b.inputs.push_back({dO, raw(dt.dO)});
  b.inputs.push_back({stats, stats_bytes});
  b.outputs = {out(r.dQ, "dQ", bf, s.ragged ? x.rq : nullptr), out(r.dK, "dK", bf, s.ragged ? x.rkv : nullptr),
               out(r.dV, "dV", bf, s.ragged ? x.rkv : nullptr)};
  b.lens = {dt.sq, dt.skv, dt.skv};
  if (s.ragged) b.ragged = {offsets(dt.sq, s.h_q * s.d), offsets(dt.skv, s.h_k * s.d), offsets(dt.skv, s.h_k * s.d)};
  else b.ragged.resize(3);
  if (r.dBias) {  // dims of Bias; its rows are all valid (no padding in these cases)
    b.outputs.push_back(out(r.dBias, "dBias", bf));
    b.lens.push_back(std::vector<std::int32_t>(static_cast<std::size_t>(s.bias[0]), static_cast<std::int32_t>(s.bias[2])));
    b.ragged.emplace_back();
  }
  if (r.DSINK_TOKEN) {  // [1, h_q, 1, 1]
    b.outputs.push_back(out(r.DSINK_TOKEN, "DSINK_TOKEN", DataType::FLOAT));
    b.lens.push_back({1});
    b.ragged.emplace_back();
  }
  return b;
}

inline std::size_t bytes_of(const Tensor& t) {
  std::int64_t span = 1;
  const auto& d = t.get_dim();
  auto st = t.get_stride().size() == d.size() ? t.get_stride() : Tensor::packed_strides(d);
  for (std::size_t i = 0; i < d.size(); ++i) span += (d[i] - 1) * st[i];
  return static_cast<std::size_t>(span) * bits_of(t.get_data_type()) / 8;
}

// Runs `b` (built on the reference graph `gh`) on the reference engine; returns each output's bytes.
inline std::vector<std::vector<unsigned char>> run_reference(Graph& gh, const Built& b) {
  EXPECT_TRUE(gh.create_execution_plans({HeurMode::FALLBACK}).is_good());
  EXPECT_TRUE(gh.build_plans().is_good());
  VariantPack p;
  std::vector<std::vector<unsigned char>> ins, outs;
  ins.reserve(b.inputs.size());
  for (const auto& [t, bytes] : b.inputs) {
    ins.push_back(bytes);
    p.set(t->get_uid(), ins.back().data());
  }
  outs.reserve(b.outputs.size());
  for (const auto& t : b.outputs) {
    outs.emplace_back(bytes_of(*t), 0xFF);
    p.set(t->get_uid(), outs.back().data());
  }
  Status s = gh.execute(p);
  EXPECT_TRUE(s.is_good()) << s.to_string();
  return outs;
}

}  // namespace sdpa_gpu
