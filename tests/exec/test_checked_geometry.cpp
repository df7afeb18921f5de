// Checked arithmetic in the declared layout and normalisation: a stride such as
// (2^64 + 5) / 7 once wrapped int64 in span_elements, so a buffer of a few elements
// "covered the declared bytes" and the reference engine read far past it. Every extent,
// stride and byte count is now checked: an overflow has no answer, the layout refuses
// the tensor naming it and the rule, and normalisation refuses buffers and overrides
// whose geometry overflows or has a negative extent.
#include <gtest/gtest.h>

#include <climits>

#include "exec/declared_layout.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using D = std::vector<std::int64_t>;

// (2^64 + 5) / 7: seven of them wrap to 5 in int64 arithmetic.
constexpr std::int64_t kWrapping = static_cast<std::int64_t>((static_cast<unsigned __int128>(1) << 64) / 7 + 1);

TEST(CheckedGeometry, SpanElementCountAndBytesHaveNoWrappedAnswer) {
  static_assert(kWrapping > 0);
  const D dims{8}, strides{kWrapping};
  EXPECT_FALSE(span_elements(1, dims.data(), strides.data()).has_value());
  EXPECT_EQ(span_elements(2, D{3, 4}.data(), D{4, 1}.data()), 12);
  EXPECT_EQ(span_elements(2, D{3, 0}.data(), D{kWrapping, 1}.data()), 0);  // empty: nothing addressed
  EXPECT_EQ(span_elements(2, D{3, 4}.data(), D{-4, 1}.data()), 12);
  EXPECT_FALSE(span_elements(1, D{2}.data(), D{INT64_MIN}.data()).has_value());
  EXPECT_FALSE(span_elements(1, D{-3}.data(), D{1}.data()).has_value());
  EXPECT_FALSE(element_count(3, D{1 << 30, 1 << 30, 1 << 30}.data()).has_value());
  EXPECT_EQ(element_count(2, D{1 << 30, 1 << 30}.data()), std::int64_t{1} << 60);
  EXPECT_FALSE(slot_bytes(std::int64_t{1} << 61, 16).has_value());
  EXPECT_EQ(slot_bytes(3, 4), 2);  // rounded up
  D s(3);
  EXPECT_FALSE(packed_strides(3, D{1 << 30, 1 << 30, 1 << 30}.data(), s.data()));
  EXPECT_FALSE(span_elements(3, D{1 << 30, 1 << 30, 1 << 30}.data(), s.data()).has_value());
  EXPECT_FALSE(is_dense(3, D{1 << 30, 1 << 30, 1 << 30}.data(), D{1, 1 << 30, std::int64_t{1} << 60}.data()));
}

TEST(CheckedGeometry, TheLayoutRefusesAWrappingSpanNamingTheTensor) {
  OpGraph g;
  g.set_name("wrap").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({8}, DataType::FLOAT, "wrapping_x", {kWrapping});
  auto y = g.relu(x);
  y->set_output(true).set_name("y").set_dim({8}).set_stride({1});
  ASSERT_TRUE(g.assign_uids().is_good());
  auto l = DeclaredLayout::compute(g);
  ASSERT_TRUE(l.is_bad());
  EXPECT_NE(l.status().message().find("'wrapping_x'"), std::string::npos) << l.status().message();
  EXPECT_NE(l.status().message().find("span_overflow"), std::string::npos) << l.status().message();
}

// Through the public API: the graph never reaches a kernel, whichever step refuses it.
TEST(CheckedGeometry, AWrappingStrideNeverExecutes) {
  Graph g;
  g.set_name("wrap").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({8}, DataType::FLOAT, "wrapping_x", {kWrapping});
  auto y = g.relu(x);
  y->set_output(true).set_name("y");
  Status v = g.validate();
  Status p = v.is_good() ? g.create_execution_plans({HeurMode::FALLBACK}) : v;
  ASSERT_TRUE(p.is_bad()) << "a tensor whose span wraps int64 was planned";
  EXPECT_NE(p.message().find("wrapping_x"), std::string::npos) << p.to_string();
  float small[6] = {1, 2, 3, 4, 5, 6}, out[8];
  VariantPack pack;
  pack.set(x, small).set(y, out);
  EXPECT_TRUE(g.execute(pack).is_bad());
}

struct Relu {
  OpGraph g;
  TensorPtr x, y;
  DeclaredLayout layout;
  Relu() {
    g.set_name("relu").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    x = g.tensor({4, 8}, DataType::FLOAT, "x");
    y = g.relu(x);
    y->set_output(true).set_name("y");
    EXPECT_TRUE(g.validate().is_good());
    layout = DeclaredLayout::compute(g).value();
  }
  Status norm(const VariantPack& p) const {
    VariantPack out;
    return VariantPack::normalize(p, layout, out);
  }
};

void expect_refused(const Status& s, const std::string& rule) {
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK) << s.to_string();
  EXPECT_NE(s.message().find("'x'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(rule), std::string::npos) << s.message();
}

TEST(CheckedGeometry, NormalisationRefusesOverflowingOrNegativeBufferGeometry) {
  Relu r;
  std::vector<float> buf(64);
  {
    VariantPack p;  // its extents' product overflows: once "dense and covering" by wrap-around
    p.set(r.x, OperandBuffer::make(buf.data(), {std::int64_t{1} << 40, std::int64_t{1} << 40}, {}, DataType::FLOAT));
    expect_refused(r.norm(p), "overflows");
  }
  {
    VariantPack p;
    p.set(r.x, OperandBuffer::make(buf.data(), {-4, 8}, {8, 1}, DataType::FLOAT));
    expect_refused(r.norm(p), "negative");
  }
  {
    VariantPack p;
    p.set(r.x, OperandBuffer::make(buf.data(), {8, 8}, {kWrapping, 1}, DataType::FLOAT));  // 7 * stride wraps
    expect_refused(r.norm(p), "overflows");
  }
  {
    VariantPack p;  // an override whose span wraps
    p.set(r.x, buf.data()).override_shape(r.x->get_uid(), {8, 8}, {kWrapping, 1});
    expect_refused(r.norm(p), "override");
  }
  {
    VariantPack p;  // and the declared geometry still passes
    p.set(r.x, OperandBuffer::make(buf.data(), {4, 8}, {}, DataType::FLOAT));
    EXPECT_TRUE(r.norm(p).is_good());
  }
}

}  // namespace
}  // namespace opgraph
