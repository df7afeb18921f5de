// engines/reference/tensor_ops_window.cpp — reference kernels of resample,
// diagonal_band_mask and paged_cache_load (semantics atop src/ir/ops/tensor_ops_window.cpp).
//
// resample pooling visits every window position of every output element; position
//   coordinates are o * stride - pre_padding + w. MAXPOOL keeps the first maximum (its
//   row-major position in the window goes to Index). Interpolation is separable:
//   NEAREST takes min(floor(o * in / out), in - 1); BILINEAR (multilinear in 3-D) blends the
//   two neighbours of the clamped half-pixel source coordinate.
// diagonal_band_mask and paged_cache_load read their bound/length/page tensors at run
//   time; a seqLen outside [0, pages * block_size] or a page id outside [0, num_blocks) is
//   GRAPH_EXECUTION_FAILED naming the batch entry and value.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engines/reference/tensor_ops_common.h"

namespace opgraph::reference {
namespace {

double pad_value(ops::PaddingMode padding) {
  return padding == ops::PaddingMode::NEG_INF_PAD ? -std::numeric_limits<double>::infinity() : 0.0;
}

Status pool(KernelContext& c, ops::ResamplingMode mode) {
  using RS = ops::ResamplingMode;
  using PM = ops::PaddingMode;
  const Node& n = c.node();
  const Array& x = c.in(ops::in::X);
  Array& y = c.out(ops::out::Y);
  Array* index = c.wants(ops::out::Index) ? &c.out(ops::out::Index) : nullptr;
  const std::size_t r = x.dims.size(), sp = r - 2;
  const Dims win = ops::attr::window(n).value_or(std::vector<std::int64_t>{}), str = ops::Resample::stride(n).value_or(std::vector<std::int64_t>{});
  const Dims pre = ops::Resample::pre_padding(n).value_or(Dims(sp, 0));
  const PM padding = ops::Resample::padding_mode(n).value_or(mode == RS::MAXPOOL ? PM::NEG_INF_PAD : PM::ZERO_PAD);
  std::int64_t cells = 1;
  for (auto w : win) cells *= w;
  std::vector<std::int64_t> xi(r);
  std::int64_t flat = 0;
  for_each_index(y.dims, [&](std::span<const std::int64_t> o) {
    xi[0] = o[0];
    xi[1] = o[1];
    double best = 0.0, sum = 0.0;
    std::int64_t arg = 0, inside = 0, pos = 0;
    for_each_index(win, [&](std::span<const std::int64_t> w) {
      bool in_bounds = true;
      for (std::size_t i = 0; i < sp; ++i) {
        std::int64_t q = o[2 + i] * str[i] - pre[i] + w[i], ext = x.dims[2 + i];
        if (q < 0 || q >= ext) {
          in_bounds = false;
          q = std::clamp<std::int64_t>(q, 0, ext - 1);  // EDGE_VAL_PAD reads the nearest element
        }
        xi[2 + i] = q;
      }
      const double v = in_bounds || padding == PM::EDGE_VAL_PAD ? x[x.offset(xi)] : pad_value(padding);
      if (pos == 0 || v > best) { best = v; arg = pos; }
      if (in_bounds) { sum += v; ++inside; }
      else if (mode == RS::AVGPOOL_INCLUDE_PADDING) sum += v;
      ++pos;
    });
    if (mode == RS::MAXPOOL) y[flat] = best;
    else if (mode == RS::AVGPOOL_INCLUDE_PADDING) y[flat] = sum / static_cast<double>(cells);
    else y[flat] = sum / static_cast<double>(inside);
    if (index) (*index)[flat] = static_cast<double>(arg);
    ++flat;
  });
  return Status::ok();
}

Status interpolate(KernelContext& c, bool bilinear) {
  const Array& x = c.in(ops::in::X);
  Array& y = c.out(ops::out::Y);
  const std::size_t r = x.dims.size(), sp = r - 2;
  std::vector<std::int64_t> lo(sp), hi(sp), xi(r);
  std::vector<double> frac(sp);
  std::int64_t flat = 0;
  for_each_index(y.dims, [&](std::span<const std::int64_t> o) {
    for (std::size_t i = 0; i < sp; ++i) {
      const double in = static_cast<double>(x.dims[2 + i]), out = static_cast<double>(y.dims[2 + i]);
      if (bilinear) {
        double s = std::clamp((static_cast<double>(o[2 + i]) + 0.5) * in / out - 0.5, 0.0, in - 1.0);
        lo[i] = static_cast<std::int64_t>(std::floor(s));
        hi[i] = std::min<std::int64_t>(lo[i] + 1, x.dims[2 + i] - 1);
        frac[i] = s - static_cast<double>(lo[i]);
      } else {
        lo[i] = hi[i] = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(o[2 + i] * in / out)), x.dims[2 + i] - 1);
        frac[i] = 0.0;
      }
    }
    xi[0] = o[0];
    xi[1] = o[1];
    double acc = 0.0;
    for (std::uint32_t corner = 0; corner < (1u << sp); ++corner) {
      double w = 1.0;
      for (std::size_t i = 0; i < sp; ++i) {
        const bool up = (corner >> i) & 1u;
        w *= up ? frac[i] : 1.0 - frac[i];
        xi[2 + i] = up ? hi[i] : lo[i];
      }
      if (w != 0.0) acc += w * x[x.offset(xi)];
    }
    y[flat++] = acc;
  });
  return Status::ok();
}

Status resample(KernelContext& c) {
  using RS = ops::ResamplingMode;
  const std::optional<RS> mode = ops::Resample::resampling_mode(c.node());
  if (!mode) return c.fail("resample without a resampling mode", ErrorCode::INTERNAL_ERROR);  // validate() refuses it
  if (*mode == RS::NEAREST || *mode == RS::BILINEAR) return interpolate(c, *mode == RS::BILINEAR);
  return pool(c, *mode);
}

Status diagonal_band_mask(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  Array& y = c.out(ops::out::Y);
  const double fill = c.in(ops::in::B)[0];
  const bool ge = ops::attr::comparison_mode(c.node()) == ops::ComparisonMode::CMP_GE;
  const bool has_left = c.has(ops::in::LeftBound), has_right = c.has(ops::in::ShiftRightBound), aligned = c.has(ops::in::SEQ_LEN_Q);
  const std::int64_t left = has_left ? as_index(c.in(ops::in::LeftBound)[0]) : 0;
  const std::int64_t right = has_right ? as_index(c.in(ops::in::ShiftRightBound)[0]) : 0;
  auto cmp = [ge](std::int64_t a, std::int64_t b) { return ge ? a >= b : a > b; };
  const std::size_t r = x.dims.size();
  std::int64_t flat = 0;
  for_each_index(x.dims, [&](std::span<const std::int64_t> idx) {
    std::int64_t d = idx[r - 1] - idx[r - 2];
    if (aligned) d -= as_index(c.in(ops::in::SEQ_LEN_KV)[idx[0]]) - as_index(c.in(ops::in::SEQ_LEN_Q)[idx[0]]);
    const bool masked = (has_right && cmp(d, right)) || (has_left && cmp(-d, left));
    y[flat] = masked ? fill : x[flat];
    ++flat;
  });
  return Status::ok();
}

Status paged_cache_load(KernelContext& c) {
  const Array& cont = c.in(ops::in::container);
  const Array& len = c.in(ops::in::seqLen);
  const Array& pt = c.in(ops::in::pageTable);
  Array& y = c.out(ops::out::yOut);
  const std::int64_t blocks = cont.dims[0], heads = cont.dims[1], bs = cont.dims[2], dh = cont.dims[3];
  const std::int64_t pages = pt.dims[2], s_out = y.dims[2];
  std::int64_t capacity = 0;  // pages * block_size; past int64, no length reaches it
  if (__builtin_mul_overflow(pages, bs, &capacity)) capacity = INT64_MAX;
  for (std::int64_t b = 0; b < y.dims[0]; ++b) {
    const std::int64_t l = as_index(len[b]);
    if (l < 0 || l > capacity)
      return c.fail("seqLen of batch entry " + std::to_string(b) + " is " + std::to_string(l) + ", outside [0, " +
                    std::to_string(capacity) + "] (pages * block_size)");
    for (std::int64_t s = 0; s < std::min(l, s_out); ++s) {
      const std::int64_t page = as_index(pt[b * pages + s / bs]);
      if (page < 0 || page >= blocks)
        return c.fail("pageTable[" + std::to_string(b) + ", 0, " + std::to_string(s / bs) + ", 0] is " +
                      std::to_string(page) + ", outside [0, " + std::to_string(blocks) + ") (container blocks)");
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t d = 0; d < dh; ++d) y.at({b, h, s, d}) = cont.at({page, h, s % bs, d});
    }
  }
  return Status::ok();
}

const KernelRecord kKernels[] = {
    {ops::Resample::kIndex, resample}, {ops::DiagonalBandMask::kIndex, diagonal_band_mask}, {ops::PagedCacheLoad::kIndex, paged_cache_load}};

}  // namespace

std::span<const KernelRecord> tensor_op_window_kernels() { return kKernels; }

}  // namespace opgraph::reference
