// tools/cli_inputs.cpp — random but valid inputs (rules in cli_inputs.h).
#include "cli_inputs.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "engines/reference/convert.h"
#include "engines/reference/ref_kernel.h"

namespace opgraph::cli {
namespace {

struct Use {
  const Node* node = nullptr;
  std::string port;
};

std::int64_t dim_or(const TensorPtr& t, std::size_t axis, std::int64_t dflt) {
  return t && t->get_dim().size() > axis ? t->get_dim()[axis] : dflt;
}

// Values (row-major over the tensor's dims) for an integer input.
std::vector<double> integer_values(const Tensor& t, const Use& use, const Tensor* ragged_owner, std::mt19937_64& rng) {
  std::int64_t n = t.element_count();
  std::vector<double> v(static_cast<std::size_t>(n), 0.0);
  if (ragged_owner) {
    std::int64_t per = 1;
    for (std::size_t i = 1; i < ragged_owner->get_dim().size(); ++i) per *= ragged_owner->get_dim()[i];
    for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i * per);
    return v;
  }
  if (use.port == "cu_seqlens" && use.node && n >= 2) {
    TensorPtr first = use.node->input("q") ? use.node->input("q") : use.node->inputs().front().front();
    std::int64_t total = dim_or(first, 0, n - 1), seqs = n - 1;
    std::vector<std::int64_t> cuts;
    if (total >= seqs) {
      std::set<std::int64_t> pick;
      std::uniform_int_distribution<std::int64_t> d(1, std::max<std::int64_t>(1, total - 1));
      while (static_cast<std::int64_t>(pick.size()) < seqs - 1) pick.insert(d(rng));
      cuts.assign(pick.begin(), pick.end());
    } else {
      for (std::int64_t i = 1; i < seqs; ++i) cuts.push_back(std::min(i, total));
    }
    v[0] = 0;
    for (std::int64_t i = 1; i < seqs; ++i) v[i] = static_cast<double>(cuts[i - 1]);
    v[n - 1] = static_cast<double>(total);
    return v;
  }
  if (use.port == "state_indices" && use.node) {
    std::int64_t pool = dim_or(use.node->input("initial_state"), 0, n);
    for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % std::max<std::int64_t>(pool, 1));
    return v;
  }
  if ((use.port == "SEQ_LEN_Q" || use.port == "SEQ_LEN_KV") && use.node) {
    std::int64_t s = dim_or(use.node->input(use.port == "SEQ_LEN_Q" ? "Q" : "K"), 2, 1);
    std::uniform_int_distribution<std::int64_t> d(1, std::max<std::int64_t>(s, 1));
    for (auto& x : v) x = static_cast<double>(d(rng));
    return v;
  }
  std::uniform_int_distribution<int> d(0, 3);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace

std::int64_t span_elements(const Tensor& t) {
  std::int64_t span = 1;
  const auto& d = t.get_dim();
  const auto& s = t.get_stride();
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] == 0) return 0;
    span += (d[i] - 1) * (i < s.size() ? s[i] : 1);
  }
  return span;
}

std::vector<HostTensor> make_buffers(const OpGraph& g, std::uint64_t seed) {
  std::map<const Tensor*, Use> uses;
  for (const auto& node : g.nodes())
    for (std::size_t p = 0; p < node->inputs().size(); ++p)
      for (const auto& t : node->inputs()[p]) uses[t.get()] = Use{node.get(), std::string(node->spec().inputs[p].name)};
  std::map<const Tensor*, const Tensor*> ragged_owner;
  for (const auto& t : g.tensors())
    if (t->get_ragged_offset()) ragged_owner[t->get_ragged_offset().get()] = t.get();

  std::mt19937_64 rng(seed);
  std::vector<HostTensor> out;
  for (const auto& t : g.tensors()) {
    if (t->get_is_virtual() || t->get_is_pass_by_value()) continue;
    HostTensor h;
    h.tensor = t;
    h.is_input = g.producer_of(t.get()) == nullptr;
    DataType dt = t->get_data_type();
    h.bytes.assign(static_cast<std::size_t>(reference::bytes_for_elements(dt, span_elements(*t))), 0);
    if (h.is_input) {
      std::vector<double> vals;
      auto owner = ragged_owner.find(t.get());
      if (is_integral(dt) || owner != ragged_owner.end()) {
        vals = integer_values(*t, uses[t.get()], owner == ragged_owner.end() ? nullptr : owner->second, rng);
      } else {
        std::uniform_real_distribution<double> d(-1.0, 1.0);
        vals.resize(static_cast<std::size_t>(t->element_count()));
        for (auto& x : vals) x = dt == DataType::BOOLEAN ? static_cast<double>(rng() & 1) : d(rng);
      }
      std::size_t k = 0;
      reference::for_each_index(t->get_dim(), [&](std::span<const std::int64_t> idx) {
        std::int64_t off = 0;
        for (std::size_t a = 0; a < idx.size(); ++a) off += idx[a] * t->get_stride()[a];
        reference::store_element(h.bytes.data(), off, dt, vals[k++]);
      });
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace opgraph::cli
