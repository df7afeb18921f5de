// tools/cli_inputs.cpp — random but valid inputs (rules in cli_inputs.h).
#include "cli_inputs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <variant>

#include "cli_common.h"
#include "opgraph/ops.h"
#include "opgraph/reference.h"

namespace opgraph::cli {
namespace {

struct Use {
  const Node* node = nullptr;
  std::string port;
};

std::int64_t dim_or(const TensorPtr& t, std::size_t axis, std::int64_t dflt) {
  return t && t->get_dim().size() > axis ? t->get_dim()[axis] : dflt;
}

// An input's values in row-major order over its dims, one per next() call, drawn
// from the shared generator in that order (so a seed gives the same inputs
// whatever the layout). Only cu_seqlens stages its values: a random partition
// needs its cut points sorted.
class ValueSource {
 public:
  ValueSource(const Tensor& t, const Use& use, const Tensor* ragged_owner, std::mt19937_64& rng) : rng_(rng) {
    const DataType dt = t.get_data_type();
    const std::int64_t n = t.element_count();
    if (ragged_owner) {
      rule_ = Rule::RAGGED;
      for (std::size_t i = 1; i < ragged_owner->get_dim().size(); ++i)
        per_ *= static_cast<double>(ragged_owner->get_dim()[i]);  // double: large products round, never wrap
    } else if (!is_integral(dt)) {
      rule_ = dt == DataType::BOOLEAN ? Rule::BOOLEAN : Rule::UNIFORM;
      if (rule_ == Rule::UNIFORM && use.node && use.node->spec().mechanism == OpMechanism::ENGINE_ONLY)
        delta_rule_range(t, use);
    } else if (use.port == "cu_seqlens" && use.node && n >= 2) {
      rule_ = Rule::STAGED;
      staged_ = seqlen_cuts(use, n);
    } else if (use.port == "state_indices" && use.node) {
      rule_ = Rule::STATE_INDEX;
      pool_ = std::max<std::int64_t>(dim_or(use.node->input(ops::in::initial_state), 0, n), 1);
    } else if ((use.port == "SEQ_LEN_Q" || use.port == "SEQ_LEN_KV") && use.node) {
      rule_ = Rule::SEQ_LEN;
      const std::int64_t s = dim_or(use.node->input(use.port == "SEQ_LEN_Q" ? ops::in::Q : ops::in::K), 2, 1);
      seq_len_ = std::uniform_int_distribution<std::int64_t>(1, std::max<std::int64_t>(s, 1));
    }
  }

  // Delta-rule ops (gdn, kda, gdn2, gdp and their summaries / backwards): inputs that
  // keep the recurrence contractive, as real models feed it — uniform inputs in
  // [-1, 1] make it grow like e^T and any two engines differ in the rounding of
  // huge numbers. A log-domain gate in [-1, 0) (a linear one in [e^-1, 1)), unless
  // safe_gate maps any value; beta in (0, 1) unless a sigmoid maps it; q and k scaled
  // by 1/sqrt(their last extent) unless the op normalises them (|k|^2 about 1/3).
  void delta_rule_range(const Tensor& t, const Use& use) {
    const Node& n = *use.node;
    auto flag = [&](const char* name) {
      const AttrValue* a = n.attr(name);
      return a && std::holds_alternative<bool>(*a) && std::get<bool>(*a);
    };
    if (use.port == "g" && !flag("safe_gate")) {
      const AttrValue* d = n.attr("gate_domain");
      const bool linear = d && std::holds_alternative<std::string>(*d) && std::get<std::string>(*d) == "linear";
      uniform_ = linear ? std::uniform_real_distribution<double>(0.36787944117144233, 1.0)
                        : std::uniform_real_distribution<double>(-1.0, 0.0);
    } else if (use.port == "beta" && !flag("use_beta_sigmoid")) {
      uniform_ = std::uniform_real_distribution<double>(0.0, 1.0);
    } else if ((use.port == "q" || use.port == "k") && !flag("use_qk_l2norm") && !t.get_dim().empty()) {
      const double r = 1.0 / std::sqrt(static_cast<double>(std::max<std::int64_t>(t.get_dim().back(), 1)));
      uniform_ = std::uniform_real_distribution<double>(-r, r);
    }
  }

  double next() {
    const std::int64_t k = k_++;
    switch (rule_) {
      case Rule::RAGGED: return static_cast<double>(k) * per_;
      case Rule::STAGED: return staged_[static_cast<std::size_t>(k)];
      case Rule::STATE_INDEX: return static_cast<double>(k % pool_);
      case Rule::SEQ_LEN: return static_cast<double>(seq_len_(rng_));
      case Rule::SMALL_INT: return small_(rng_);
      case Rule::BOOLEAN: return static_cast<double>(rng_() & 1);
      case Rule::UNIFORM: return uniform_(rng_);
    }
    return 0.0;
  }

 private:
  enum class Rule { RAGGED, STAGED, STATE_INDEX, SEQ_LEN, SMALL_INT, BOOLEAN, UNIFORM };

  // cu_seqlens [n]: 0, then n - 2 distinct sorted cuts in (0, T), then T, with T the
  // node's token count (its first input's dim 0); the first n - 2 distinct draws.
  std::vector<double> seqlen_cuts(const Use& use, std::int64_t n) {
    std::vector<double> v(static_cast<std::size_t>(n), 0.0);
    TensorPtr first = use.node->input(ops::in::q);
    if (!first && !use.node->inputs().empty() && !use.node->inputs().front().empty())
      first = use.node->inputs().front().front();
    const std::int64_t total = dim_or(first, 0, n - 1), seqs = n - 1;
    std::vector<std::int64_t> cuts;
    if (total >= seqs) {
      std::uniform_int_distribution<std::int64_t> d(1, std::max<std::int64_t>(1, total - 1));
      const auto want = static_cast<std::size_t>(seqs - 1);
      cuts.reserve(want);
      while (cuts.size() < want) {  // a batch of the missing count never overshoots
        for (std::size_t i = cuts.size(); i < want; ++i) cuts.push_back(d(rng_));
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      }
    } else {
      for (std::int64_t i = 1; i < seqs; ++i) cuts.push_back(std::min(i, total));
    }
    for (std::int64_t i = 1; i < seqs; ++i) v[static_cast<std::size_t>(i)] = static_cast<double>(cuts[i - 1]);
    v[static_cast<std::size_t>(n - 1)] = static_cast<double>(total);
    return v;
  }

  std::mt19937_64& rng_;
  Rule rule_ = Rule::SMALL_INT;
  std::int64_t k_ = 0;
  double per_ = 1.0;        // RAGGED: elements per row of the owner
  std::int64_t pool_ = 1;   // STATE_INDEX
  std::vector<double> staged_;
  std::uniform_int_distribution<std::int64_t> seq_len_{1, 1};
  std::uniform_int_distribution<int> small_{0, 3};
  std::uniform_real_distribution<double> uniform_{-1.0, 1.0};
};

}  // namespace

std::vector<HostTensor> make_buffers(const OpGraph& g, const BufferLayout& layout, std::uint64_t seed) {
  std::map<const Tensor*, Use> uses;
  for (const auto& node : g.nodes())
    for (std::size_t p = 0; p < node->inputs().size(); ++p)
      for (const auto& t : node->inputs()[p]) uses[t.get()] = Use{node.get(), std::string(node->spec().inputs[p].name)};
  std::map<const Tensor*, const Tensor*> ragged_owner;
  for (const auto& t : g.tensors())
    if (t->get_ragged_offset()) ragged_owner[t->get_ragged_offset().get()] = t.get();

  std::mt19937_64 rng(seed);
  std::vector<HostTensor> out;
  out.reserve(layout.buffers.size());
  for (const TensorSpan& span : layout.buffers) {
    const TensorPtr& t = span.tensor;
    HostTensor h;
    h.tensor = t;
    h.is_input = g.producer_of(t.get()) == nullptr;
    h.bytes.assign(static_cast<std::size_t>(span.bytes), 0);
    if (h.is_input) {
      auto owner = ragged_owner.find(t.get());
      ValueSource values(*t, uses[t.get()], owner == ragged_owner.end() ? nullptr : owner->second, rng);
      const DataType dt = t->get_data_type();
      // Offsets stay below span.elements: the layout checked the largest one.
      for_each_offset(*t, [&](std::int64_t off) { write_element(h.bytes.data(), off, dt, values.next()); });
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace opgraph::cli
