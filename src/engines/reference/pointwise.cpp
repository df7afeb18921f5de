// engines/reference/pointwise.cpp — the reference kernel of the pointwise op: all 50
// modes in float64 with numpy broadcasting (the executor rounds OUT_0 to its type).
//
// Semantics (cudnn's, written out; x = IN_0, y = IN_1, m = IN_2; backward modes get
// dy = IN_0 and x = IN_1 and return dy * f'(x)):
//   ADD x+y, SUB x-y, MUL x*y, DIV x/y, ADD_SQUARE x + y², MAX, MIN, MOD fmod(x, y)
//   (sign of x), POW x^y; SQRT, RSQRT 1/√x, RECIPROCAL 1/x, EXP, LOG (natural), NEG, ABS,
//   CEIL, FLOOR, SIN, COS, TAN, ERF, IDENTITY.
//   RELU_FWD with lower clip lo (default 0), upper clip hi (default +inf) and slope s
//   (default 0): x < lo → lo + s (x - lo); x > hi → hi; else x. RELU_BWD: dy * (s for
//   x <= lo, 0 for x >= hi, 1 between).
//   TANH, SIGMOID 1/(1+e^-x), ELU (x > 0 ? x : α(e^x - 1)), GELU x Φ(x) with the exact
//   erf, GELU_APPROX_TANH ½x(1 + tanh(√(2/π)(x + 0.044715 x³))), SOFTPLUS log(1+e^{βx})/β
//   (evaluated without overflow), SWISH x σ(βx); their _BWD are the exact derivatives.
//   GEN_INDEX: the output index along `axis`. BINARY_SELECT: m ≠ 0 ? x : y.
//   CMP_*: 1 or 0. LOGICAL_AND/OR/NOT on (value ≠ 0).
#include <cmath>
#include <limits>
#include <numbers>

#include "engines/reference/ref_kernel.h"
#include "opgraph/builders/pointwise.h"

namespace opgraph::reference {
namespace {

using M = PointwiseMode;

struct Params {
  double relu_lo = 0.0, relu_hi = std::numeric_limits<double>::infinity(), relu_slope = 0.0;
  double swish_beta = 1.0, elu_alpha = 1.0, softplus_beta = 1.0;
};

double sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }
double normal_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi); }
double normal_cdf(double x) { return 0.5 * (1.0 + std::erf(x / std::numbers::sqrt2)); }
constexpr double kGeluK = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluC = 0.044715;

// The value of a mode on one element (x, y, m) — backward modes take (dy, x) as (x, y).
double eval(M mode, double x, double y, double m, const Params& p) {
  switch (mode) {
    case M::ADD: return x + y;
    case M::SUB: return x - y;
    case M::MUL: return x * y;
    case M::DIV: return x / y;
    case M::ADD_SQUARE: return x + y * y;
    case M::MAX: return std::fmax(x, y);
    case M::MIN: return std::fmin(x, y);
    case M::MOD: return std::fmod(x, y);
    case M::POW: return std::pow(x, y);
    case M::SQRT: return std::sqrt(x);
    case M::RSQRT: return 1.0 / std::sqrt(x);
    case M::RECIPROCAL: return 1.0 / x;
    case M::EXP: return std::exp(x);
    case M::LOG: return std::log(x);
    case M::NEG: return -x;
    case M::ABS: return std::fabs(x);
    case M::CEIL: return std::ceil(x);
    case M::FLOOR: return std::floor(x);
    case M::SIN: return std::sin(x);
    case M::COS: return std::cos(x);
    case M::TAN: return std::tan(x);
    case M::ERF: return std::erf(x);
    case M::IDENTITY: return x;
    case M::RELU_FWD:
      if (x < p.relu_lo) return p.relu_lo + p.relu_slope * (x - p.relu_lo);
      return x > p.relu_hi ? p.relu_hi : x;
    case M::RELU_BWD: return x * (y <= p.relu_lo ? p.relu_slope : y >= p.relu_hi ? 0.0 : 1.0);
    case M::TANH_FWD: return std::tanh(x);
    case M::TANH_BWD: { double t = std::tanh(y); return x * (1.0 - t * t); }
    case M::SIGMOID_FWD: return sigmoid(x);
    case M::SIGMOID_BWD: { double s = sigmoid(y); return x * s * (1.0 - s); }
    case M::ELU_FWD: return x > 0 ? x : p.elu_alpha * std::expm1(x);
    case M::ELU_BWD: return x * (y > 0 ? 1.0 : p.elu_alpha * std::exp(y));
    case M::GELU_FWD: return x * normal_cdf(x);
    case M::GELU_BWD: return x * (normal_cdf(y) + y * normal_pdf(y));
    case M::GELU_APPROX_TANH_FWD: return 0.5 * x * (1.0 + std::tanh(kGeluK * (x + kGeluC * x * x * x)));
    case M::GELU_APPROX_TANH_BWD: {
      double t = std::tanh(kGeluK * (y + kGeluC * y * y * y));
      return x * (0.5 * (1.0 + t) + 0.5 * y * (1.0 - t * t) * kGeluK * (1.0 + 3.0 * kGeluC * y * y));
    }
    case M::SOFTPLUS_FWD: {
      double z = p.softplus_beta * x;
      return (std::fmax(z, 0.0) + std::log1p(std::exp(-std::fabs(z)))) / p.softplus_beta;
    }
    case M::SOFTPLUS_BWD: return x * sigmoid(p.softplus_beta * y);
    case M::SWISH_FWD: return x * sigmoid(p.swish_beta * x);
    case M::SWISH_BWD: {
      double s = sigmoid(p.swish_beta * y);
      return x * (s + p.swish_beta * y * s * (1.0 - s));
    }
    case M::BINARY_SELECT: return m != 0.0 ? x : y;
    case M::CMP_EQ: return x == y;
    case M::CMP_NEQ: return x != y;
    case M::CMP_GT: return x > y;
    case M::CMP_GE: return x >= y;
    case M::CMP_LT: return x < y;
    case M::CMP_LE: return x <= y;
    case M::LOGICAL_AND: return (x != 0.0) && (y != 0.0);
    case M::LOGICAL_OR: return (x != 0.0) || (y != 0.0);
    case M::LOGICAL_NOT: return x == 0.0;
    case M::GEN_INDEX: return 0.0;  // handled by the caller (needs the index)
  }
  return std::numeric_limits<double>::quiet_NaN();
}

Status pointwise(KernelContext& c) {
  const Node& n = c.node();
  const std::optional<ops::PointwiseMode> mode = ops::Pointwise::mode(n);
  const PointwiseModeInfo* info = mode ? find_pointwise_mode(ops::to_string(*mode)) : nullptr;
  if (!info) return c.fail("pointwise node without a known mode", ErrorCode::INTERNAL_ERROR);
  Params p;
  p.relu_lo = ops::attr::relu_lower_clip(n);
  if (n.attr_is_set("relu_upper_clip")) p.relu_hi = ops::attr::relu_upper_clip(n).value_or(0.0);
  p.relu_slope = ops::attr::relu_lower_clip_slope(n);
  p.swish_beta = ops::attr::swish_beta(n);
  p.elu_alpha = ops::attr::elu_alpha(n);
  p.softplus_beta = ops::attr::softplus_beta(n);
  using In = ops::Pointwise::In;
  static constexpr In kPorts[] = {In::IN_0, In::IN_1, In::IN_2};
  const Array* in[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < info->arity; ++i) in[i] = &c.in(kPorts[i]);
  Array& out = c.out(ops::out::OUT_0);
  std::int64_t axis = 0;
  if (info->mode == M::GEN_INDEX) {
    axis = ops::Pointwise::axis(n).value_or(0);
    if (axis < 0) axis += out.rank();
  }
  std::int64_t flat = 0;
  for_each_index(out.dims, [&](std::span<const std::int64_t> idx) {
    double v[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < info->arity; ++i) v[i] = in[i]->broadcast_at(idx);
    out[flat++] = info->mode == M::GEN_INDEX ? static_cast<double>(idx[static_cast<std::size_t>(axis)])
                                             : eval(info->mode, v[0], v[1], v[2], p);
  });
  return Status::ok();
}

const KernelRecord kKernels[] = {{ops::Pointwise::kIndex, pointwise}};

}  // namespace

std::span<const KernelRecord> pointwise_kernels() { return kKernels; }

}  // namespace opgraph::reference
