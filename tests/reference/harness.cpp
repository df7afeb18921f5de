// tests/reference/harness.cpp — buffers, poison, comparison and finite differences of harness.h.
#include "harness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

namespace opgraph::harness {
namespace {

std::uint64_t mix(std::uint64_t seed, std::string_view name) {
  std::uint64_t h = 1469598103934665603ull ^ seed;  // FNV-1a over the name, keyed by the seed
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::vector<std::int64_t> strides_of(const Tensor& t) {
  return t.get_stride().size() == t.get_dim().size() ? t.get_stride() : Tensor::packed_strides(t.get_dim());
}

// Elements [0, span) the tensor's buffer covers.
std::int64_t span_of(const Tensor& t) {
  auto stride = strides_of(t);
  std::int64_t last = 0;
  for (std::size_t k = 0; k < stride.size(); ++k) {
    if (t.get_dim()[k] == 0) return 0;
    last += (t.get_dim()[k] - 1) * stride[k];
  }
  return last + 1;
}

std::int64_t strided(std::span<const std::int64_t> idx, const std::vector<std::int64_t>& stride) {
  std::int64_t off = 0;
  for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * stride[k];
  return off;
}

bool close(double e, double a, Tolerance tol) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (std::isinf(e) || std::isinf(a)) return e == a;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
}

}  // namespace

Tolerance default_tolerance(DataType t) {
  switch (t) {
    case DataType::DOUBLE: return {1e-12, 1e-12};
    case DataType::FLOAT: return {1e-6, 1e-5};
    case DataType::HALF: return {1e-3, 2e-3};
    case DataType::BFLOAT16: return {8e-3, 1.6e-2};
    case DataType::FP8_E4M3: return {3e-2, 1.25e-1};
    case DataType::FP8_E5M2: return {6e-2, 2.5e-1};
    case DataType::FP8_E8M0: return {0.0, 1.0};
    case DataType::FP4_E2M1: return {0.5, 0.25};
    default: return {0.0, 0.0};
  }
}

Engine reference_engine() {
  return {"reference", [](const OpGraph& g) {
            for (const auto& n : g.nodes())
              if (!reference::find_kernel(n->op())) return false;
            return true;
          },
          [](const OpGraph& g, const std::map<std::int64_t, reference::HostBuffer>& b) {
            return reference::execute(g, b);
          }};
}

std::vector<TensorPtr> graph_inputs(const OpGraph& g) {
  std::unordered_set<const Tensor*> produced, seen;
  for (const auto& n : g.nodes())
    for (const auto& port : n->outputs())
      for (const auto& t : port)
        if (t) produced.insert(t.get());
  std::vector<TensorPtr> r;
  auto add = [&](const TensorPtr& t) {
    if (t && !t->get_is_pass_by_value() && !produced.count(t.get()) && seen.insert(t.get()).second) r.push_back(t);
  };
  for (const auto& n : g.nodes()) {
    for (const auto& port : n->inputs())
      for (const auto& t : port) {
        add(t);
        if (t) add(t->get_ragged_offset());
      }
    for (const auto& port : n->outputs())
      for (const auto& t : port)
        if (t) add(t->get_ragged_offset());
  }
  return r;
}

std::vector<TensorPtr> graph_outputs(const OpGraph& g) {
  std::vector<TensorPtr> r;
  for (const auto& n : g.nodes())
    for (const auto& port : n->outputs())
      for (const auto& t : port)
        if (t && !t->get_is_virtual()) r.push_back(t);
  return r;
}

Status build(const Case& c, OpGraph& g) {
  g.set_name(c.name);
  c.build(g);
  return g.validate();
}

Array random_array(const Dims& dims, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  Array a(dims);
  bool nonzero = false;
  for (double& x : a.v) {
    x = lo + (hi - lo) * uniform01(rng);
    nonzero |= x != 0.0;
  }
  if (!nonzero && a.numel() > 0) a[0] = hi != 0.0 ? hi : lo;
  return a;
}

Values make_inputs(const Case& c, const OpGraph& g) {
  Values r;
  for (const auto& t : graph_inputs(g)) {
    const DataType dt = t->get_data_type();
    if (auto it = c.fixed.find(t->get_name()); it != c.fixed.end()) {
      Array a = it->second;
      for (double& x : a.v) x = reference::round_to(dt, x);
      r[t->get_name()] = std::move(a);
      continue;
    }
    InputRange range = c.range;
    if (auto it = c.ranges.find(t->get_name()); it != c.ranges.end()) range = it->second;
    std::mt19937_64 rng(mix(c.seed, t->get_name()));
    Array a(t->get_dim());
    const bool integral = is_integral(dt) || dt == DataType::BOOLEAN;
    double lo = range.lo, hi = range.hi;
    if (dt == DataType::BOOLEAN) lo = 0, hi = 1;
    if (integral) lo = std::ceil(lo), hi = std::floor(hi);
    bool nonzero = false;
    for (double& x : a.v) {
      double u = uniform01(rng);
      x = integral ? std::min(hi, lo + std::floor(u * (hi - lo + 1))) : reference::round_to(dt, lo + (hi - lo) * u);
      nonzero |= x != 0.0;
    }
    if (!nonzero && a.numel() > 0) {
      // Leave the range for one element if it must: the nearest nonzero value of the type beyond hi (or lo).
      double x = hi != 0.0 ? hi : (lo != 0.0 ? lo : 1.0);
      while (reference::round_to(dt, x) == 0.0) x *= 2.0;
      a[0] = reference::round_to(dt, x);
    }
    r[t->get_name()] = std::move(a);
  }
  return r;
}

Result<Values> run_on(const Engine& e, const OpGraph& g, const Values& inputs) {
  std::vector<std::vector<unsigned char>> storage;
  std::map<std::int64_t, reference::HostBuffer> buffers;
  auto alloc = [&](const Tensor& t) -> unsigned char* {
    storage.emplace_back(static_cast<std::size_t>(reference::bytes_for_elements(t.get_data_type(), span_of(t)) + 1),
                         static_cast<unsigned char>(0xFF));
    buffers[t.get_uid()] = reference::HostBuffer{storage.back().data()};
    return storage.back().data();
  };
  storage.reserve(64);
  auto ins = graph_inputs(g);
  auto outs = graph_outputs(g);
  storage.reserve(ins.size() + outs.size());
  for (const auto& t : ins) {
    auto it = inputs.find(t->get_name());
    if (it == inputs.end())
      return Status(ErrorCode::INVALID_VALUE, "harness: no value for graph input '" + t->get_name() + "'");
    if (it->second.numel() != t->element_count())
      return Status(ErrorCode::INVALID_VALUE, "harness: value of '" + t->get_name() + "' has " +
                                                  std::to_string(it->second.numel()) + " elements, the tensor " +
                                                  std::to_string(t->element_count()));
    unsigned char* p = alloc(*t);
    auto stride = strides_of(*t);
    std::int64_t i = 0;
    reference::for_each_index(t->get_dim(), [&](std::span<const std::int64_t> idx) {
      reference::store_element(p, strided(idx, stride), t->get_data_type(), it->second[i++]);
    });
  }
  for (const auto& t : outs) alloc(*t);
  OPGRAPH_CHECK(e.execute(g, buffers));
  Values r;
  for (const auto& t : outs) {
    const void* p = buffers.at(t->get_uid()).data;
    auto stride = strides_of(*t);
    Array a(t->get_dim());
    std::int64_t i = 0;
    reference::for_each_index(t->get_dim(), [&](std::span<const std::int64_t> idx) {
      a[i++] = reference::load_element(p, strided(idx, stride), t->get_data_type());
    });
    r[t->get_name()] = std::move(a);
  }
  return r;
}

Result<Values> run_reference(const OpGraph& g, const Values& inputs) { return run_on(reference_engine(), g, inputs); }

std::string index_str(const Dims& dims, std::int64_t flat) {
  std::vector<std::int64_t> idx(dims.size());
  for (std::size_t k = dims.size(); k-- > 0;) {
    idx[k] = dims[k] ? flat % dims[k] : 0;
    flat = dims[k] ? flat / dims[k] : 0;
  }
  std::ostringstream os;
  os << '[';
  for (std::size_t k = 0; k < idx.size(); ++k) os << (k ? ", " : "") << idx[k];
  os << ']';
  return os.str();
}

std::string compare(std::string_view case_name, const OpGraph& g, const Values& expected, const Values& actual,
                    const std::map<std::string, Tolerance>& tolerances) {
  std::ostringstream msg;
  for (const auto& [name, e] : expected) {
    auto it = actual.find(name);
    if (it == actual.end()) {
      msg << "case '" << case_name << "': output '" << name << "' missing from the engine's results\n";
      continue;
    }
    const Array& a = it->second;
    if (a.dims != e.dims) {
      msg << "case '" << case_name << "': output '" << name << "' has " << a.numel() << " elements, expected "
          << e.numel() << "\n";
      continue;
    }
    DataType dt = DataType::DOUBLE;
    for (const auto& t : g.tensors())
      if (t->get_name() == name) dt = t->get_data_type();
    Tolerance tol = default_tolerance(dt);
    if (auto tt = tolerances.find(name); tt != tolerances.end()) tol = tt->second;
    std::int64_t bad = 0, first = -1;
    for (std::int64_t i = 0; i < e.numel(); ++i)
      if (!close(e[i], a[i], tol)) {
        if (first < 0) first = i;
        ++bad;
      }
    if (bad) {
      msg.precision(17);
      msg << "case '" << case_name << "': output '" << name << "' (" << to_string(dt) << ") at "
          << index_str(e.dims, first) << ": got " << a[first] << ", expected " << e[first] << " (|diff| "
          << std::fabs(a[first] - e[first]) << " > atol " << tol.atol << " + rtol " << tol.rtol << " * |expected|); "
          << bad << " of " << e.numel() << " elements differ\n";
    }
  }
  return msg.str();
}

Values check_case(const Case& c, std::span<const Engine> engines) {
  OpGraph g;
  Status s = build(c, g);
  if (s.is_bad()) {
    ADD_FAILURE() << "case '" << c.name << "': graph does not validate: " << s.to_string();
    return {};
  }
  Values in = make_inputs(c, g);
  auto ref = run_reference(g, in);
  if (!ref) {
    ADD_FAILURE() << "case '" << c.name << "': reference failed: " << ref.status().to_string();
    return {};
  }
  for (const Engine& e : engines) {
    if (!e.accepts(g)) continue;
    auto got = run_on(e, g, in);
    if (!got) {
      ADD_FAILURE() << "case '" << c.name << "': engine '" << e.name << "' failed: " << got.status().to_string();
      continue;
    }
    std::string m = compare(c.name + " on " + e.name, g, *ref, *got, c.tolerances);
    if (!m.empty()) ADD_FAILURE() << m;
  }
  Values all = std::move(in);
  for (auto& [k, v] : *ref) all[k] = std::move(v);
  return all;
}

double weighted_sum(const Values& outputs, const Values& weights) {
  double l = 0.0;
  for (const auto& [name, w] : weights) {
    const Array& o = outputs.at(name);
    for (std::int64_t i = 0; i < o.numel(); ++i) l += w[i] * o[i];
  }
  return l;
}

Result<Array> fd_gradient(const OpGraph& g, const Values& inputs, std::string_view wrt, const Values& weights,
                          double h) {
  auto it = inputs.find(wrt);
  if (it == inputs.end())
    return Status(ErrorCode::INVALID_VALUE, "fd_gradient: no input named '" + std::string(wrt) + "'");
  Array grad(it->second.dims);
  Values x = inputs;
  Array& xi = x.find(wrt)->second;
  for (std::int64_t i = 0; i < xi.numel(); ++i) {
    const double x0 = xi[i];
    xi[i] = x0 + h;
    auto plus = run_reference(g, x);
    if (!plus) return plus.status();
    xi[i] = x0 - h;
    auto minus = run_reference(g, x);
    if (!minus) return minus.status();
    xi[i] = x0;
    grad[i] = (weighted_sum(*plus, weights) - weighted_sum(*minus, weights)) / (2.0 * h);
  }
  return grad;
}

}  // namespace opgraph::harness
