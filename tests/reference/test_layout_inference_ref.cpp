// Layout inference end to end on the reference engine: a conv + bias + relu graph
// declared channels-last (X strided NHWC, outputs' strides left to inference) runs
// on buffers the caller lays out channels-last — the output buffer is read back as
// NHWC memory, the way a caller who declared NHWC allocates it — and must equal the
// same graph declared packed NCHW. Before layout inference followed the input, the
// epilogue's output was inferred packed NCHW and the NHWC read-back was scrambled.
// Tolerance: float64 with identical accumulation order, 1e-12 absolute.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "harness.h"

using namespace opgraph;
using namespace opgraph::harness;

namespace {

constexpr std::int64_t N = 2, C = 3, H = 5, W = 4, K = 6;

Dims nhwc(const Dims& d) { return {d[2] * d[3] * d[1], 1, d[3] * d[1], d[1]}; }

// conv (padding 1) → bias → relu [→ scale], x channels-last when `cl`; the output is "y".
void build(OpGraph& g, bool cl, bool with_scale) {
  g.set_io_data_type(DataType::DOUBLE).set_intermediate_data_type(DataType::DOUBLE);
  g.set_compute_data_type(DataType::DOUBLE);
  auto x = cl ? g.tensor({N, C, H, W}, DataType::DOUBLE, "x", nhwc({N, C, H, W}))
              : g.tensor({N, C, H, W}, DataType::DOUBLE, "x");
  auto w = g.tensor({K, C, 3, 3}, DataType::DOUBLE, "w");
  auto b = g.tensor({1, K, 1, 1}, DataType::DOUBLE, "b");
  auto t = g.relu(g.bias(g.conv_fprop(x, w, Attributes().set("padding", std::vector<std::int64_t>{1, 1})), b));
  if (with_scale) t = g.scale(t, g.tensor({1, K, 1, 1}, DataType::DOUBLE, "s"));
  t->set_output(true).set_name("y");
}

// Runs `g` on the reference with every buffer laid out as `layout_of` says (the
// caller's allocation, whatever the graph inferred), and reads "y" back that way.
Array run_with_caller_layout(const OpGraph& g, const Values& in, const std::function<Dims(const Tensor&)>& layout_of) {
  std::vector<std::vector<double>> storage;
  storage.reserve(8);
  std::map<std::int64_t, reference::HostBuffer> buffers;
  TensorPtr y;
  for (const auto& t : g.tensors()) {
    if (t->get_is_virtual() || t->get_is_pass_by_value()) continue;
    Dims st = layout_of(*t);
    storage.emplace_back(static_cast<std::size_t>(t->element_count()), std::nan(""));
    auto& buf = storage.back();
    buffers[t->get_uid()] = reference::HostBuffer{buf.data()};
    if (t->get_name() == "y") {
      y = t;
      continue;
    }
    const Array& v = in.at(t->get_name());
    std::int64_t i = 0;
    reference::for_each_index(t->get_dim(), [&](std::span<const std::int64_t> idx) {
      std::int64_t off = 0;
      for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * st[k];
      buf[static_cast<std::size_t>(off)] = v[i++];
    });
  }
  Status s = reference::execute(g, buffers);
  EXPECT_TRUE(s.is_good()) << s.to_string();
  Array out(y->get_dim());
  const Dims st = layout_of(*y);
  const double* p = static_cast<const double*>(buffers.at(y->get_uid()).data);
  std::int64_t i = 0;
  reference::for_each_index(y->get_dim(), [&](std::span<const std::int64_t> idx) {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * st[k];
    out[i++] = p[off];
  });
  return out;
}

}  // namespace

TEST(LayoutInferenceRef, ChannelsLastConvBiasReluWritesTheCallersChannelsLastBuffer) {
  for (bool with_scale : {false, true}) {
    Values in;
    in["x"] = random_array({N, C, H, W}, 71);
    in["w"] = random_array({K, C, 3, 3}, 72);
    in["b"] = random_array({1, K, 1, 1}, 73);
    in["s"] = random_array({1, K, 1, 1}, 74);

    OpGraph nchw;
    build(nchw, false, with_scale);
    ASSERT_TRUE(nchw.validate().is_good());
    auto want = run_reference(nchw, in);
    ASSERT_TRUE(want.is_good()) << want.status().to_string();

    OpGraph cl;
    build(cl, true, with_scale);
    ASSERT_TRUE(cl.validate().is_good());
    // The caller allocates every 4-D activation channels-last, bias / scale / filter packed.
    auto caller = [](const Tensor& t) {
      return t.get_dim().size() == 4 && t.get_dim()[0] == N ? nhwc(t.get_dim()) : Tensor::packed_strides(t.get_dim());
    };
    for (const auto& t : cl.tensors()) {
      if (t->get_name() == "y") {
        EXPECT_EQ(t->get_stride(), nhwc(t->get_dim())) << "inferred layout of y";
      }
    }
    Array got = run_with_caller_layout(cl, in, caller);
    const Array& ref = want.value().at("y");
    ASSERT_EQ(got.numel(), ref.numel());
    std::int64_t wrong = 0, first = -1;
    for (std::int64_t i = 0; i < ref.numel(); ++i)
      if (!(std::fabs(got[i] - ref[i]) <= 1e-12)) {
        ++wrong;
        if (first < 0) first = i;
      }
    EXPECT_EQ(wrong, 0) << "with_scale " << with_scale << ": " << wrong << " of " << ref.numel()
                        << " elements differ, first at " << index_str(ref.dims, first);
  }
}
