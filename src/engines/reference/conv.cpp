// engines/reference/conv.cpp — reference kernels of the conv op group (float64).
//
// Layout and attributes: include/opgraph/builders/conv.h. With X [N, C, in...],
// W [K, C/G, f...], G = C / (C/G), Kg = K / G, for every output position o and filter
// tap t (per spatial axis) the input position is i = o * stride - pre_padding + t * dilation;
// taps whose i falls in the padding contribute zero. CROSS_CORRELATION reads W at t,
// CONVOLUTION at f - 1 - t (the spatially flipped filter). Then
//   conv_fprop: Y[n, k, o]   = sum over (cg, t) of X[n, g*Cg + cg, i] * W[k, cg, t'],  g = k / Kg
//   conv_dgrad: DX[n, c, i]  = sum over the (k, o, t) reaching i of DY[n, k, o] * W[k, cg, t']
//   conv_wgrad: DW[k, cg, t'] = sum over (n, o) of DY[n, k, o] * X[n, g*Cg + cg, i]
// i.e. dgrad and wgrad are the exact adjoints of fprop. 1- and 2-D convs run as 3-D
// with unit leading spatial axes.
#include <array>
#include <string>

#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {
namespace {

struct Geometry {
  std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, f{1, 1, 1}, pre{0, 0, 0}, stride{1, 1, 1}, dil{1, 1, 1};
  std::int64_t n = 0, c = 0, k = 0, cg = 0;
  bool flip = false;
};

using List = std::vector<std::int64_t>;

List list_or(const std::optional<List>& v, std::size_t n, std::int64_t dflt) { return v ? *v : List(n, dflt); }

// `padding` (both sides) of whichever of the three conv records the node is.
std::optional<List> conv_padding(const Node& node) {
  switch (op_index(node.spec())) {
    case ops::ConvFprop::kIndex: return ops::ConvFprop::padding(node);
    case ops::ConvDgrad::kIndex: return ops::ConvDgrad::padding(node);
    default: return ops::ConvWgrad::padding(node);
  }
}

// x: activation dims, w: filter dims, y: output-gradient/output dims (all NC...).
Geometry geometry(const Node& node, const Dims& x, const Dims& w, const Dims& y) {
  Geometry g;
  const std::size_t sp = x.size() - 2, lead = 3 - sp;
  auto pad = list_or(conv_padding(node), sp, 0);
  auto pre = ops::attr::pre_padding(node).value_or(pad);
  auto stride = list_or(ops::attr::stride(node), sp, 1);
  auto dil = list_or(ops::attr::dilation(node), sp, 1);
  for (std::size_t s = 0; s < sp; ++s) {
    g.in[lead + s] = x[2 + s];
    g.out[lead + s] = y[2 + s];
    g.f[lead + s] = w[2 + s];
    g.pre[lead + s] = pre[s];
    g.stride[lead + s] = stride[s];
    g.dil[lead + s] = dil[s];
  }
  g.n = x[0];
  g.c = x[1];
  g.k = w[0];
  g.cg = w[1];
  g.flip = ops::attr::convolution_mode(node) == ops::ConvolutionMode::CONVOLUTION;
  return g;
}

// Calls f(x_flat, w_flat, y_flat) for every (n, k, o, cg, t) whose input position is inside X.
template <class F>
void for_each_tap(const Geometry& g, F&& f) {
  const std::int64_t groups = g.c / g.cg, kg = g.k / groups;
  const auto& in = g.in;
  const auto& out = g.out;
  const auto& fs = g.f;
  const std::int64_t in_sp = in[0] * in[1] * in[2], out_sp = out[0] * out[1] * out[2], f_sp = fs[0] * fs[1] * fs[2];
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t k = 0; k < g.k; ++k) {
      const std::int64_t grp = k / kg;
      for (std::int64_t o0 = 0; o0 < out[0]; ++o0)
        for (std::int64_t o1 = 0; o1 < out[1]; ++o1)
          for (std::int64_t o2 = 0; o2 < out[2]; ++o2) {
            const std::int64_t yi = (n * g.k + k) * out_sp + (o0 * out[1] + o1) * out[2] + o2;
            for (std::int64_t t0 = 0; t0 < fs[0]; ++t0) {
              const std::int64_t i0 = o0 * g.stride[0] - g.pre[0] + t0 * g.dil[0];
              if (i0 < 0 || i0 >= in[0]) continue;
              for (std::int64_t t1 = 0; t1 < fs[1]; ++t1) {
                const std::int64_t i1 = o1 * g.stride[1] - g.pre[1] + t1 * g.dil[1];
                if (i1 < 0 || i1 >= in[1]) continue;
                for (std::int64_t t2 = 0; t2 < fs[2]; ++t2) {
                  const std::int64_t i2 = o2 * g.stride[2] - g.pre[2] + t2 * g.dil[2];
                  if (i2 < 0 || i2 >= in[2]) continue;
                  const std::int64_t tap = g.flip ? ((fs[0] - 1 - t0) * fs[1] + (fs[1] - 1 - t1)) * fs[2] + (fs[2] - 1 - t2)
                                                  : (t0 * fs[1] + t1) * fs[2] + t2;
                  const std::int64_t sp_in = (i0 * in[1] + i1) * in[2] + i2;
                  for (std::int64_t cg = 0; cg < g.cg; ++cg) {
                    const std::int64_t xi = (n * g.c + grp * g.cg + cg) * in_sp + sp_in;
                    const std::int64_t wi = (k * g.cg + cg) * f_sp + tap;
                    f(xi, wi, yi);
                  }
                }
              }
            }
          }
    }
}

Status conv_fprop(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  const Array& w = c.in(ops::in::W);
  Array& y = c.out(ops::out::Y);
  for_each_tap(geometry(c.node(), x.dims, w.dims, y.dims),
               [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) { y[yi] += x[xi] * w[wi]; });
  return Status::ok();
}

Status conv_dgrad(KernelContext& c) {
  const Array& dy = c.in(ops::in::DY);
  const Array& w = c.in(ops::in::W);
  Array& dx = c.out(ops::out::DX);
  for_each_tap(geometry(c.node(), dx.dims, w.dims, dy.dims),
               [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) { dx[xi] += dy[yi] * w[wi]; });
  return Status::ok();
}

Status conv_wgrad(KernelContext& c) {
  const Array& dy = c.in(ops::in::DY);
  const Array& x = c.in(ops::in::X);
  Array& dw = c.out(ops::out::DW);
  for_each_tap(geometry(c.node(), x.dims, dw.dims, dy.dims),
               [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) { dw[wi] += dy[yi] * x[xi]; });
  return Status::ok();
}

constexpr KernelRecord kKernels[] = {
    {ops::ConvFprop::kIndex, conv_fprop},
    {ops::ConvDgrad::kIndex, conv_dgrad},
    {ops::ConvWgrad::kIndex, conv_wgrad},
};

}  // namespace

std::span<const KernelRecord> conv_kernels() { return kKernels; }

}  // namespace opgraph::reference
