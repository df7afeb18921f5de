// engines/reference/sdpa_ref_io.cpp — from the executor's arrays to the dense
// logical operands of the SDPA core, and back.
//
// Ragged (THD) tensors: the executor reads a buffer through the DECLARED dims and
// strides; with a ragged offset tensor R, token t of batch entry n of head h
// lives at element R[n] + h * stride_h + t * stride_s + x * stride_d instead
// (R in elements). gather() finds that element in the strided read (the
// declaration must cover it: a packed THD buffer declared [b, h, s_max, d] with
// BSHD strides does) and scatter() writes an output the same way, so every
// element of the declared extent that no valid token lands on is written 0.
// Paged caches: K/V [num_blocks, h, block_size, d]; key j of batch entry n is row
// j % block_size of block Page_table[n, 0, j / block_size, 0].
#include <string>
#include <unordered_map>

#include "engines/reference/sdpa_ref.h"

namespace opgraph::reference::sdpa_ref {
namespace {

std::vector<std::int64_t> strides_of(const Tensor& t) {
  return t.get_stride().size() == t.get_dim().size() ? t.get_stride() : Tensor::packed_strides(t.get_dim());
}

// Element offset (in the declared strides) -> row-major flat index of the strided read.
std::unordered_map<std::int64_t, std::int64_t> offset_index(const Tensor& t) {
  std::unordered_map<std::int64_t, std::int64_t> m;
  const auto st = strides_of(t);
  std::int64_t flat = 0;
  for_each_index(t.get_dim(), [&](std::span<const std::int64_t> idx) {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * st[k];
    m.emplace(off, flat++);
  });
  return m;
}

// Calls f(flat index in the strided read, flat index in the logical array) for
// every valid token of a ragged 4-D tensor; fails if a token is outside the declaration.
template <class F>
Status for_each_ragged(KernelContext& c, std::string_view port, const Tensor& t, const Array& offsets,
                       const std::vector<std::int64_t>& lens, F&& f) {
  const auto st = strides_of(t);
  const auto map = offset_index(t);
  const Dims& d = t.get_dim();
  for (std::int64_t n = 0; n < d[0]; ++n) {
    // The offset is caller data: |base| < 2^62 and the in-declaration part below
    // the declared span (< 2^63), so a sum that leaves int64 is outside the declaration.
    const auto base = to_index(offsets[n]);
    if (!base)
      return c.fail("port " + std::string(port) + " (tensor '" + t.get_name() + "'): ragged offset " +
                    std::to_string(offsets[n]) + " of batch entry " + std::to_string(n) +
                    " is not an integer offset in (-2^62, 2^62) (rule ragged_within_declaration)");
    for (std::int64_t h = 0; h < d[1]; ++h)
      for (std::int64_t s = 0; s < lens[n] && s < d[2]; ++s)
        for (std::int64_t x = 0; x < d[3]; ++x) {
          std::int64_t off = 0;
          const bool wraps = __builtin_add_overflow(*base, h * st[1] + s * st[2] + x * st[3], &off);
          auto it = wraps ? map.end() : map.find(off);
          if (it == map.end())
            return c.fail("port " + std::string(port) + " (tensor '" + t.get_name() + "'): ragged offset " +
                          std::to_string(*base) + " of batch entry " + std::to_string(n) + " puts token " +
                          std::to_string(s) + " outside the declared extent (rule ragged_within_declaration)");
          f(it->second, ((n * d[1] + h) * d[2] + s) * d[3] + x);
        }
  }
  return Status::ok();
}

Status lengths(KernelContext& c, std::string_view port, std::int64_t b, std::int64_t extent,
               std::vector<std::int64_t>& out) {
  out.assign(static_cast<std::size_t>(b), extent);
  if (!ops::attr::use_padding_mask(c.node())) return Status::ok();
  const Array& a = c.in(port);
  for (std::int64_t n = 0; n < b; ++n) {
    const double v = a[n];
    if (!(v >= 0.0) || v > static_cast<double>(extent))
      return c.fail(std::string(port) + " of batch entry " + std::to_string(n) + " is " + std::to_string(v) +
                    ", outside [0, " + std::to_string(extent) + "]");
    out[static_cast<std::size_t>(n)] = static_cast<std::int64_t>(v);
  }
  return Status::ok();
}

}  // namespace

ops::sdpa::Geometry geometry(const KernelContext& c) {
  ops::sdpa::Geometry g;
  const Dims &q = c.in_tensor(ops::in::Q).get_dim(), &k = c.in_tensor(ops::in::K).get_dim(), &v = c.in_tensor(ops::in::V).get_dim();
  g.b = q[0]; g.h_q = q[1]; g.s_q = q[2]; g.d_qk = q[3];
  g.h_k = k[1]; g.h_v = v[1]; g.d_v = v[3];
  g.paged = c.has(ops::in::Page_table_K);
  // Only the forward ops have page tables, and each declares the attribute.
  g.s_kv = g.paged ? ops::attr::paged_attention_max_seq_len_kv(c.node()).value_or(0) : k[2];
  g.block_size = g.paged ? k[2] : 0;
  return g;
}

Status read_problem(KernelContext& c, const ops::sdpa::Geometry& g, Problem& pb) {
  const Node& n = c.node();
  pb.b = g.b; pb.h_q = g.h_q; pb.h_k = g.h_k; pb.h_v = g.h_v;
  pb.s_q = g.s_q; pb.s_kv = g.s_kv; pb.d_qk = g.d_qk; pb.d_v = g.d_v;
  OPGRAPH_CHECK(lengths(c, "SEQ_LEN_Q", g.b, g.s_q, pb.sq));
  OPGRAPH_CHECK(lengths(c, "SEQ_LEN_KV", g.b, g.s_kv, pb.skv));
  pb.attn_scale = c.has(ops::in::Attn_scale) ? c.in(ops::in::Attn_scale)[0] : ops::sdpa::attn_scale_attr(n);
  pb.bias = c.has(ops::in::Bias) ? &c.in(ops::in::Bias) : nullptr;
  pb.alibi = ops::attr::use_alibi_mask(n);
  pb.band = ops::sdpa::band_of(n);
  pb.block_mask = c.has(ops::in::Block_mask) ? &c.in(ops::in::Block_mask) : nullptr;
  pb.sink = c.has(ops::in::SINK_TOKEN) ? &c.in(ops::in::SINK_TOKEN) : nullptr;
  pb.dropout_p = ops::attr::dropout_probability(n).value_or(0.0);
  if (pb.dropout_p > 0.0) {
    const auto seed = to_index(c.in(ops::in::Seed)[0]), offset = to_index(c.in(ops::in::Offset)[0]);
    if (!seed || !offset)
      return c.fail("dropout Seed " + std::to_string(c.in(ops::in::Seed)[0]) + " / Offset " +
                    std::to_string(c.in(ops::in::Offset)[0]) + ": each must be an integer in (-2^62, 2^62)");
    pb.seed = static_cast<std::uint64_t>(*seed);
    pb.offset = static_cast<std::uint64_t>(*offset);
  }
  if (c.has(ops::in::Dropout_mask)) {
    pb.dropout_mask = &c.in(ops::in::Dropout_mask);
    pb.dropout_scale = c.in(ops::in::Dropout_scale)[0];
  }
  return Status::ok();
}

Status gather(KernelContext& c, std::string_view port, const std::vector<std::int64_t>& lens, Array& out,
              const Array* values) {
  const Array& a = values ? *values : c.in(port);
  const Array* ro = c.ragged_offset(port);
  if (!ro) {
    out = a;
    return Status::ok();
  }
  out = Array(a.dims);
  return for_each_ragged(c, port, c.in_tensor(port), *ro, lens,
                         [&](std::int64_t read, std::int64_t logical) { out[logical] = a[read]; });
}

Status gather_kv(KernelContext& c, std::string_view port, std::string_view table, const Problem& pb, Array& out,
                 const Array* values) {
  if (!c.has(table)) return gather(c, port, pb.skv, out, values);
  const Array& cache = values ? *values : c.in(port);
  const Array& pt = c.in(table);
  const std::int64_t blocks = cache.dims[0], h = cache.dims[1], bs = cache.dims[2], d = cache.dims[3];
  out = Array({pb.b, h, pb.s_kv, d});
  for (std::int64_t n = 0; n < pb.b; ++n)
    for (std::int64_t j = 0; j < pb.skv[n]; ++j) {
      const double blk = pt.at({n, 0, j / bs, 0});
      if (!(blk >= 0.0) || blk >= static_cast<double>(blocks))
        return c.fail("port " + std::string(table) + ": batch entry " + std::to_string(n) + " page " +
                      std::to_string(j / bs) + " names block " + std::to_string(blk) + ", outside [0, " +
                      std::to_string(blocks) + ") (rule page_table_in_range)");
      const auto b = static_cast<std::int64_t>(blk);
      for (std::int64_t hh = 0; hh < h; ++hh)
        for (std::int64_t x = 0; x < d; ++x) out.at({n, hh, j, x}) = cache.at({b, hh, j % bs, x});
    }
  return Status::ok();
}

Status scatter(KernelContext& c, std::string_view port, const std::vector<std::int64_t>& lens, const Array& value) {
  if (!c.wants(port)) return Status::ok();
  Array& o = c.out(port);
  const Array* ro = c.ragged_offset(port);
  if (!ro) {
    o.v = value.v;
    return Status::ok();
  }
  return for_each_ragged(c, port, c.out_tensor(port), *ro, lens,
                         [&](std::int64_t write, std::int64_t logical) { o[write] = value[logical]; });
}

Array scaled(Array a, double s) {
  for (double& x : a.v) x *= s;
  return a;
}

Array dequant_mx(const Array& data, const Array& scale, int block_axis) {
  Array out = data;
  for_each_index(data.dims, [&](std::span<const std::int64_t> idx) {
    std::int64_t s[4] = {idx[0], idx[1], idx[2], idx[3]};
    s[block_axis] /= ops::sdpa::kMxBlock;
    out[data.offset(idx)] *= scale.at({s[0], s[1], s[2], s[3]});
  });
  return out;
}

}  // namespace opgraph::reference::sdpa_ref
