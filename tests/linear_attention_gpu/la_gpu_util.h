// tests/linear_attention_gpu/la_gpu_util.h — what the linear_attention GPU suites
// share (test_gdn_gpu.cpp: the forward; test_la_bwd_gpu.cpp: gdn_bwd): host
// encodings of the inputs, the RMS-ratio comparison, the engine, the fields and
// input tensors both cases have, the random draw of those inputs, and the device
// buffers (inputs uploaded, outputs and workspace poisoned).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engines/linear_attention/la_engine.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "opgraph/device.h"
#include "opgraph/op_graph.h"

namespace opgraph::la_testing {

// Host bytes: the inputs by uid.
using HostInputs = std::map<std::int64_t, std::vector<unsigned char>>;

// fp16 round to nearest (normal and subnormal range; the inputs here stay well inside).
inline std::uint16_t to_f16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const float a = std::fabs(f);
  if (!(a == a)) return 0x7e00;
  if (a >= 65520.f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (a < 6.103515625e-05f) {  // subnormal: multiples of 2^-24
    const long m = std::lrint(a * 16777216.f);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(m));
  }
  int e;
  const float m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  long mant = std::lrint((m * 2.f - 1.f) * 1024.f);
  int be = e - 1 + 15;
  if (mant == 1024) mant = 0, ++be;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(be) << 10) | static_cast<std::uint32_t>(mant));
}

inline std::size_t width(DataType d) {
  switch (d) {
    case DataType::FLOAT:
    case DataType::INT32: return 4;
    case DataType::INT64: return 8;
    default: return 2;
  }
}

// Host bytes of `x` in type d (rounded as the device would read them).
inline std::vector<unsigned char> encode(const std::vector<double>& x, DataType d) {
  std::vector<unsigned char> b(x.size() * width(d));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float f = static_cast<float>(x[i]);
    if (d == DataType::FLOAT) {
      std::memcpy(b.data() + 4 * i, &f, 4);
    } else if (d == DataType::INT32) {
      const std::int32_t v = static_cast<std::int32_t>(x[i]);
      std::memcpy(b.data() + 4 * i, &v, 4);
    } else if (d == DataType::INT64) {
      const std::int64_t v = static_cast<std::int64_t>(x[i]);
      std::memcpy(b.data() + 8 * i, &v, 8);
    } else {
      const std::uint16_t h = d == DataType::BFLOAT16 ? gemm_testing::to_bf16(f) : to_f16(f);
      std::memcpy(b.data() + 2 * i, &h, 2);
    }
  }
  return b;
}
// Timing inputs (no reference at these sizes, cheap to draw for 32k-token cells): each call
// fills t's elements with lo + (hi - lo) U, U uniform in [0, 1) (its logsigmoid when logsig),
// straight into t's encoding.
struct UniformFill {
  std::uint64_t x;
  explicit UniformFill(std::uint64_t seed) : x(seed * 0x9E3779B97F4A7C15ull + 1) {}
  float uni() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((x >> 40) & 0xFFFFFF) / 16777216.f;
  }
  std::vector<unsigned char> operator()(const TensorPtr& t, float lo, float hi, bool logsig) {
    const DataType d = t->get_data_type();
    const std::size_t n = static_cast<std::size_t>(t->element_count());
    std::vector<unsigned char> b(n * width(d));
    for (std::size_t i = 0; i < n; ++i) {
      float f = lo + (hi - lo) * uni();
      if (logsig) f = -std::log1p(std::exp(-f));
      if (d == DataType::FLOAT) {
        std::memcpy(b.data() + 4 * i, &f, 4);
      } else {
        const std::uint16_t h = d == DataType::BFLOAT16 ? gemm_testing::to_bf16(f) : to_f16(f);
        std::memcpy(b.data() + 2 * i, &h, 2);
      }
    }
    return b;
  }
};

// The timing tests' gates (gdn forward and backward; OPGRAPH_GDN_TIMING_GATES): "weak" draws g uniform in
// [-0.02, 0) (a span of 256 chunks sums above -330 and of 128 above -165: a chain split's shortcuts for vanishing
// span transitions seldom or never apply); else logsigmoid of U[-2, 2) (~ -0.8 a token: every span transition
// vanishes). Each timing header says which.
inline bool timing_gates_weak() {
  const char* e = std::getenv("OPGRAPH_GDN_TIMING_GATES");
  return e && std::string(e) == "weak";
}
inline std::vector<unsigned char> timing_gates(UniformFill& fill, const TensorPtr& gate) {
  return timing_gates_weak() ? fill(gate, -0.02f, 0.f, false) : fill(gate, -2, 2, true);
}
inline const char* timing_gates_name() {
  return timing_gates_weak() ? "gates U[-0.02, 0) (weak decay, OPGRAPH_GDN_TIMING_GATES=weak)"
                             : "gates logsigmoid(U[-2, 2)) (strong decay)";
}

inline std::vector<double> decode(const std::vector<unsigned char>& b, DataType d) {
  std::vector<double> x(b.size() / width(d));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = gemm_testing::read_elem(b, d, i);
  return x;
}

// ||got - want|| / ||want|| (||got - want|| where want is zero); NaN when an element
// of got is NaN (an unwritten, poisoned one). `worst`: the largest absolute error
// (NaN likewise).
inline double rms_ratio(const std::vector<double>& got, const std::vector<double>& want, double* worst = nullptr) {
  double num = 0, den = 0, w = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = got[i] - want[i];
    num += e * e;
    den += want[i] * want[i];
    if (!(std::fabs(e) <= w)) w = std::fabs(e);
  }
  if (worst) *worst = w;
  if (!(num == num)) return num;
  if (den == 0) return std::sqrt(num);
  return std::sqrt(num / den);
}

// The engine under test (one instance for the whole binary).
inline const Engine& la_engine() {
  static std::unique_ptr<Engine> e = linear_attention::make_la_engine(EngineIdentity{20500, "linear_attention"});
  return *e;
}

// What a forward case and a backward case both say: the sequences, heads, types
// and attributes of the gdn inputs. Each suite's Case adds its own fields.
struct CaseBase {
  std::string name;
  std::vector<std::int64_t> lens;
  std::int64_t hq = 2, hk = 2, hv = 8, d = 128;
  DataType io = DataType::BFLOAT16, gate_t = DataType::FLOAT, beta_t = DataType::FLOAT, state_t = DataType::FLOAT;
  bool init = true, overwrite = false, l2 = false, safe = false, a_log = false, dt = false, beta_sig = false,
       neg = false, linear = false, strong = false, batch_inv = false, cu64 = false;
  // weak_low_heads: heads below HO / 2 decay weakly (g in [-0.02, 0]: a chain split's span transitions stay far
  // from zero there), the others as drawn (logsigmoid, or strong decay: their span transitions vanish in bf16).
  bool weak_low_heads = false;
  // beta_wide: beta ~ U(0, 3) on the tokens of the batch's odd 64-token blocks (U(0, 1) elsewhere): chunks outside
  // the fp16 inverse's domain (beta in [0, 2]; GDN_WS3_F16INV) beside chunks inside it, in one CTA.
  bool beta_wide = false;
  std::optional<double> scale;
  std::int64_t t() const { return std::accumulate(lens.begin(), lens.end(), std::int64_t{0}); }
  std::int64_t n() const { return static_cast<std::int64_t>(lens.size()); }
  std::int64_t ho() const { return std::max(hq, hv); }
};

// The gdn inputs both graphs have (null where the case has none).
struct Inputs {
  TensorPtr q, k, v, gate, beta, cu, init, a_log, dt;
};

// q, k, v [T, H*, D], g and beta [T, HO] and cu_seqlens [N + 1] of case c in g, in
// that order (the order fixes the uids validate() gives them).
inline void add_token_inputs(OpGraph& g, const CaseBase& c, Inputs& in) {
  const std::int64_t T = c.t(), N = c.n(), HO = c.ho(), D = c.d;
  in.q = g.tensor({T, c.hq, D}, c.io, "q");
  in.k = g.tensor({T, c.hk, D}, c.io, "k");
  in.v = g.tensor({T, c.hv, D}, c.io, "v");
  in.gate = g.tensor({T, HO}, c.gate_t, "g");
  in.beta = g.tensor({T, HO}, c.beta_t, "beta");
  in.cu = g.tensor({N + 1}, c.cu64 ? DataType::INT64 : DataType::INT32, "cu_seqlens");
}

// The attributes of case c every gdn op reads (gdn_summary_bwd among them).
inline Attributes gate_attributes(const CaseBase& c) {
  Attributes a;
  if (c.scale) a.set("scale", *c.scale);
  a.set("use_qk_l2norm", c.l2);
  a.set("safe_gate", c.safe);
  a.set("use_beta_sigmoid", c.beta_sig);
  a.set("allow_neg_eigval", c.neg);
  if (c.linear) a.set("gate_domain", std::string("linear"));
  a.set("batch_invariant", c.batch_inv);
  return a;
}
// The attributes of case c both the forward and the backward read.
inline Attributes common_attributes(const CaseBase& c) {
  Attributes a = gate_attributes(c);
  a.set("overwrite_initial_state", c.overwrite);
  return a;
}

// The bytes of a draw are keyed by uid: an unvalidated graph's tensors share the unset
// uid, and every input would get the last one's bytes (the summary test once read
// cu_seqlens as k and v). Fails the test when two of `inputs` share one.
inline void expect_distinct_uids(std::initializer_list<TensorPtr> inputs) {
  std::set<std::int64_t> seen;
  for (const TensorPtr& t : inputs)
    if (t && !seen.insert(t->get_uid()).second)
      ADD_FAILURE() << "draw: tensor '" << t->get_name() << "' shares uid " << t->get_uid()
                    << " with another input; validate the graph before drawing";
}

// The random source of one draw: one normal and one uniform distribution over rng
// (the normal distribution keeps its second value between calls, so every input of
// a draw comes from these two, in the suite's order). The inputs follow fla's tests.
struct Drawer {
  std::mt19937& rng;
  std::normal_distribution<double> nd{0.0, 1.0};
  std::uniform_real_distribution<double> ud{0.0, 1.0};

  // T x heads rows of D elements ~ N(0, 1), each scaled to unit norm when `unit`.
  std::vector<double> rows(std::int64_t T, std::int64_t heads, std::int64_t D, bool unit) {
    std::vector<double> x(static_cast<std::size_t>(T * heads * D));
    for (auto& e : x) e = nd(rng);
    if (unit)
      for (std::int64_t r = 0; r < T * heads; ++r) {
        double ss = 0;
        for (std::int64_t i = 0; i < D; ++i) ss += x[r * D + i] * x[r * D + i];
        for (std::int64_t i = 0; i < D; ++i) x[r * D + i] /= std::sqrt(ss);
      }
    return x;
  }
  // g and beta [T, HO] of case c into h: the gates (raw logits N(0, 1) under safe_gate:
  // the kernel computes g = -e^a_log softplus(x + dt_bias); else logsigmoid(N(0, 1)) or
  // strong decay in [-10, -5], or (weak_low_heads, heads below HO / 2) weak decay in [-0.02, 0];
  // alpha = e^g under the linear gate), then the betas (logits N(0, 1) under use_beta_sigmoid,
  // else in (0, 1)).
  void gates_betas(const CaseBase& c, const Inputs& in, HostInputs& h) {
    std::vector<double> g(static_cast<std::size_t>(c.t() * c.ho())), b(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      double& e = g[i];
      if (c.safe) {
        e = nd(rng);
        continue;
      }
      const bool weak = c.weak_low_heads && static_cast<std::int64_t>(i) % c.ho() < c.ho() / 2;
      const double lg = weak       ? -0.02 * ud(rng)
                        : c.strong ? -5.0 - 5.0 * ud(rng)
                                   : -std::log1p(std::exp(-nd(rng)));  // logsigmoid
      e = c.linear ? std::exp(lg) : lg;
    }
    for (std::size_t i = 0; i < b.size(); ++i) {
      const bool wide = c.beta_wide && (static_cast<std::int64_t>(i) / c.ho() / 64) % 2 == 1;
      b[i] = c.beta_sig ? nd(rng) : (wide ? 3.0 : 1.0) * ud(rng);
    }
    h[in.gate->get_uid()] = encode(g, c.gate_t);
    h[in.beta->get_uid()] = encode(b, c.beta_t);
  }
  // `count` state elements ~ N(0, 1/4) in type d.
  std::vector<unsigned char> state(std::int64_t count, DataType d) {
    std::vector<double> s(static_cast<std::size_t>(count));
    for (auto& e : s) e = 0.5 * nd(rng);
    return encode(s, d);
  }
  // safe_gate's a_log [HO] = log(1 + 15 U), then dt_bias [HO] ~ N(0, 1), those c has.
  void gate_params(const CaseBase& c, const Inputs& in, HostInputs& h) {
    if (in.a_log) {
      std::vector<double> x(static_cast<std::size_t>(c.ho()));
      for (auto& e : x) e = std::log(1.0 + 15.0 * ud(rng));
      h[in.a_log->get_uid()] = encode(x, DataType::FLOAT);
    }
    if (in.dt) {
      std::vector<double> x(static_cast<std::size_t>(c.ho()));
      for (auto& e : x) e = nd(rng);
      h[in.dt->get_uid()] = encode(x, DataType::FLOAT);
    }
  }
};

// cu_seqlens of c's sequences, in its declared type.
inline std::vector<unsigned char> cu_seqlens_bytes(const CaseBase& c) {
  std::vector<double> cu{0};
  for (auto l : c.lens) cu.push_back(cu.back() + static_cast<double>(l));
  return encode(cu, c.cu64 ? DataType::INT64 : DataType::INT32);
}

// ---- device buffers ----
using DeviceBuffers = std::map<std::int64_t, std::unique_ptr<DeviceBuffer>>;

// Every host input to a device buffer of its own (at least 4 bytes), bound in `pack`.
inline void upload_inputs(const HostInputs& host, DeviceBuffers& dev, VariantPack& pack) {
  const auto& api = *gemm_testing::gpu().api;
  for (const auto& [uid, bytes] : host) {
    auto b = std::make_unique<DeviceBuffer>(api, std::max<std::size_t>(bytes.size(), 4));
    EXPECT_TRUE(b->status().is_good());
    if (!bytes.empty()) {
      EXPECT_EQ(api.memcpy_htod(b->ptr(), bytes.data(), bytes.size()), CUDA_SUCCESS);
    }
    pack.set(uid, reinterpret_cast<void*>(b->ptr()));
    dev[uid] = std::move(b);
  }
}

// A device buffer of `bytes` (at least 4) with every bit set (NaN in every type).
inline std::unique_ptr<DeviceBuffer> poisoned_buffer(std::size_t bytes) {
  const auto& api = *gemm_testing::gpu().api;
  const std::size_t n = std::max<std::size_t>(bytes, 4);
  auto b = std::make_unique<DeviceBuffer>(api, n);
  EXPECT_EQ(api.memset_d32(b->ptr(), 0xFFFFFFFFu, n / 4), CUDA_SUCCESS);
  return b;
}

// The plan's workspace of `bytes` (none for 0), poisoned as the outputs are: a read of
// anything not written fails.
inline std::unique_ptr<DeviceBuffer> poisoned_workspace(std::int64_t bytes) {
  if (bytes <= 0) return nullptr;
  const auto& api = *gemm_testing::gpu().api;
  auto ws = std::make_unique<DeviceBuffer>(api, static_cast<std::size_t>(bytes));
  EXPECT_TRUE(ws->status().is_good());
  EXPECT_EQ(api.memset_d32(ws->ptr(), 0xFFFFFFFFu, static_cast<std::size_t>(bytes) / 4), CUDA_SUCCESS);
  return ws;
}

// The median time (ms) of `reps` executes of `plan` on the suites' stream (after three
// untimed ones), CUDA events around each; -1 when the events cannot be made (the test
// fails then).
inline double median_execute_ms(const CompiledPlan& plan, const VariantPack& pack, const ExecutionContext& ec,
                                int reps) {
  const auto& api = *gemm_testing::gpu().api;
  CUevent e0, e1;
  const bool made = api.event_create(&e0, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
  EXPECT_TRUE(made) << "event_create";
  if (!made) return -1;
  if (api.event_create(&e1, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    ADD_FAILURE() << "event_create";
    api.event_destroy(e0);
    return -1;
  }
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(plan.execute(pack, ec).is_good());
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    api.event_record(e0, gemm_testing::gpu().stream);
    const Status st = plan.execute(pack, ec);
    EXPECT_TRUE(st.is_good()) << st.message();
    api.event_record(e1, gemm_testing::gpu().stream);
    EXPECT_EQ(api.event_synchronize(e1), CUDA_SUCCESS);
    float x = 0;
    api.event_elapsed_time(&x, e0, e1);
    ms.push_back(x);
  }
  api.event_destroy(e0);
  api.event_destroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The suites' fixture: fails without a GPU, makes the shared stream once.
class LaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& g = gemm_testing::gpu();
    if (!g.context || !g.api || g.props.sm_count == 0) GTEST_FAIL() << "no GPU: these tests run on the H200 only";
    if (!g.stream) {
      ASSERT_EQ(g.api->stream_create(&g.stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    }
  }
};

}  // namespace opgraph::la_testing
