// tests/cudnn/test_cudnn_lowering_conv.cpp — conv fprop / dgrad / wgrad lowering
// plans (operation type, port → attribute, geometry from the IR attributes with
// its defaults), and device-less finalize of a conv fprop graph when libcudnn loads.
#include <cstdio>

#include "cudnn/cudnn_test_util.h"
#include "engines/cudnn/backend.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

using namespace cudnn_test;
namespace cu = engines::cudnn;

TEST(CudnnLoweringConv, FpropGeometryAndPorts) {
  Graph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({2, 8, 9, 11}, DataType::HALF, "x");
  auto w = g.tensor({16, 8, 3, 3}, DataType::HALF, "w");
  auto y = g.conv_fprop(x, w, Attributes().set("pre_padding", std::vector<std::int64_t>{1, 0})
                                  .set("post_padding", std::vector<std::int64_t>{1, 2})
                                  .set("stride", std::vector<std::int64_t>{2, 1}));
  y->set_output(true).set_name("y");
  Status v = g.validate();
  ASSERT_TRUE(v.is_good()) << v.to_string();
  auto p = cu::lower(g);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  const auto& op = p->records[p->operations.at(0)];
  EXPECT_EQ(op.type, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X), x->get_uid());
  EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W), w->get_uid());
  EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y), y->get_uid());
  const auto& cd = p->records[op.find(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC)->refs.at(0)];
  EXPECT_EQ(cd.type, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  EXPECT_EQ(int_of(cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS), 2);
  EXPECT_EQ(cd.find(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS)->ints, (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(cd.find(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS)->ints, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(cd.find(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES)->ints, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(cd.find(CUDNN_ATTR_CONVOLUTION_DILATIONS)->ints, (std::vector<std::int64_t>{1, 1}));  // default
  EXPECT_EQ(int_of(cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE), CUDNN_CROSS_CORRELATION);
  EXPECT_EQ(int_of(cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE), CUDNN_DATA_FLOAT);
  // y's dims are the IR's inference: (9 + 1 + 1 - 3) / 2 + 1 = 5, (11 + 0 + 2 - 3) / 1 + 1 = 11.
  EXPECT_EQ(p->tensor(y->get_uid())->dims, (std::vector<std::int64_t>{2, 16, 5, 11}));
  EXPECT_FALSE(p->tensor(y->get_uid())->dims_from_user);
}

TEST(CudnnLoweringConv, DgradAndWgradBindTheirPortsOneGraphEach) {
  // cuDNN's engines take one convolution per operation graph: dgrad and wgrad are two graphs.
  Graph gd, gw;
  auto dy = gd.tensor({2, 16, 7, 7}, DataType::FLOAT, "dy");
  auto w = gd.tensor({16, 8, 3, 3}, DataType::FLOAT, "w");
  auto dx = gd.conv_dgrad(dy, w);
  dx->set_output(true).set_dim({2, 8, 9, 9});
  auto dy2 = gw.tensor({2, 16, 7, 7}, DataType::FLOAT, "dy");
  auto x = gw.tensor({2, 8, 9, 9}, DataType::FLOAT, "x");
  auto dw = gw.conv_wgrad(dy2, x);
  dw->set_output(true).set_dim({16, 8, 3, 3});
  for (Graph* g : {&gd, &gw}) {
    Status v = g->validate();
    ASSERT_TRUE(v.is_good()) << v.to_string();
  }
  auto p = cu::lower(gd);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  auto q = cu::lower(gw);
  ASSERT_TRUE(q.is_good()) << q.status().to_string();
  ASSERT_EQ(p->operations.size(), 1u);
  ASSERT_EQ(q->operations.size(), 1u);
  const auto& d = p->records[p->operations[0]];
  const auto& f = q->records[q->operations[0]];
  EXPECT_EQ(d.type, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
  EXPECT_EQ(uid_at(*p, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY), dy->get_uid());
  EXPECT_EQ(uid_at(*p, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W), w->get_uid());
  EXPECT_EQ(uid_at(*p, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX), dx->get_uid());
  EXPECT_EQ(f.type, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
  EXPECT_EQ(uid_at(*q, f, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY), dy2->get_uid());
  EXPECT_EQ(uid_at(*q, f, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X), x->get_uid());
  EXPECT_EQ(uid_at(*q, f, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW), dw->get_uid());
  EXPECT_TRUE(q->tensor(dw->get_uid())->dims_from_user);
}

TEST(CudnnLoweringConv, FpropFinalizesDevicelessWhenLibcudnnLoads) {
  auto api = runtime::cudnn();
  if (api.is_bad()) {
    std::printf("libcudnn cannot be loaded here: %s\n", api.status().to_string().c_str());
    GTEST_SKIP() << "libcudnn not loadable";
  }
  Graph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({1, 8, 6, 6}, DataType::HALF, "x", {288, 1, 48, 8});  // NHWC
  auto w = g.tensor({8, 8, 3, 3}, DataType::HALF, "w", {72, 1, 24, 8});
  auto y = g.conv_fprop(x, w, Attributes().set("padding", std::vector<std::int64_t>{1, 1}));
  y->set_output(true).set_data_type(DataType::HALF);
  ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
  auto p = cu::lower(g);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  auto m = cu::materialise(*api.value(), p.value(), nullptr);
  ASSERT_TRUE(m.is_good()) << m.status().to_string();
}

}  // namespace
}  // namespace opgraph
