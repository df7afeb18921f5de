// One execute path for every engine: the gemm and cuDNN plans build an operand table
// from the graph's declared layout, as the reference does, and their execute is that
// table's check. These tests drive the tables each engine builds (gemm:
// operand_table_for, cuDNN: operand_table_of; both pure, no GPU) with the misbindings
// that used to reach a kernel unchecked — strides other than declared (a channels-last
// buffer where the graph declares packed NCHW, which a cuDNN plan once wrote silently
// wrong), another dtype, a misaligned address, host memory, a read-only output, a
// missing buffer — and expect each refused naming operand and rule, while declared
// bindings (bare addresses, dense re-described buffers, arbitrary strides on extent-1
// axes) pass. On the H200, bench/run.sh trust runs the same misbindings through built
// plans.
#include <gtest/gtest.h>

#include "engines/cudnn/cudnn_engine.h"
#include "engines/cudnn/lowering.h"
#include "engines/gemm/gemm_exec.h"
#include "engines/gemm/gemm_problem.h"
#include "exec/declared_layout.h"
#include "exec/operand_table.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using D = std::vector<std::int64_t>;

alignas(256) unsigned char g_arena[1 << 20];
void* at(std::size_t offset) { return g_arena + offset; }

void expect_refused(const Status& s, const std::string& operand, const std::string& rule) {
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK) << s.to_string();
  EXPECT_NE(s.message().find("'" + operand + "'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(rule), std::string::npos) << s.message();
}

// Normalises `caller` against `layout` (must succeed) and checks it against `table`.
Status check(const OperandTable& table, const DeclaredLayout& layout, const VariantPack& caller) {
  VariantPack pack;
  Status n = VariantPack::normalize(caller, layout, pack);
  if (n.is_bad()) return n;
  const bool fast = table.accepts(pack);
  Status s = table.check(pack);
  EXPECT_EQ(fast, s.is_good()) << "the loop and the checker disagree: " << s.to_string();
  return s;
}

// bf16 A[1, 64, 32] (row-major) @ B[1, 32, 48] (column-major) + bias[1, 1, 48] -> C[1, 64, 48] bf16.
struct GemmCase {
  OpGraph g;
  TensorPtr a, b, bias, c;
  DeclaredLayout layout;
  gemm::OperandSlots slots;
  OperandTable table;
  GemmCase() {
    g.set_name("gemm").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    a = g.tensor({1, 64, 32}, DataType::BFLOAT16, "A");
    b = g.tensor({1, 32, 48}, DataType::BFLOAT16, "B", {32 * 48, 1, 32});
    bias = g.tensor({1, 1, 48}, DataType::BFLOAT16, "bias");
    c = g.bias(g.matmul(a, b), bias);
    c->set_output(true).set_name("C").set_data_type(DataType::BFLOAT16);
    EXPECT_TRUE(g.validate().is_good());
    g.freeze();
    layout = DeclaredLayout::compute(g).value();
    auto p = gemm::analyze_gemm(g);
    EXPECT_TRUE(p.is_good()) << p.status().to_string();
    auto t = gemm::operand_table_for(p.value(), &layout, slots);
    EXPECT_TRUE(t.is_good()) << t.status().to_string();
    table = std::move(t.value());
  }
  // Every operand at its own 4 KiB-aligned offset.
  VariantPack bare() const {
    VariantPack p;
    p.set(a, at(0)).set(b, at(1 << 14)).set(bias, at(2 << 14)).set(c, at(3 << 14));
    return p;
  }
};

TEST(EngineTables, GemmTableHasOneRowPerOperandAndMapsEveryPointer) {
  GemmCase k;
  ASSERT_EQ(k.table.rows().size(), 4u);
  auto pos = [&](const TensorPtr& t) { return k.layout.index_of(t->get_uid()); };
  EXPECT_EQ(k.table.rows()[static_cast<std::size_t>(k.slots.a)].position, pos(k.a));
  EXPECT_EQ(k.table.rows()[static_cast<std::size_t>(k.slots.b)].position, pos(k.b));
  EXPECT_EQ(k.table.rows()[static_cast<std::size_t>(k.slots.c)].position, pos(k.c));
  EXPECT_EQ(k.table.rows()[static_cast<std::size_t>(k.slots.epi[0])].position, pos(k.bias));
  EXPECT_EQ(k.slots.epi[1], -1);
  EXPECT_TRUE(check(k.table, k.layout, k.bare()).is_good());
}

TEST(EngineTables, GemmRefusesWhatItsKernelWouldMisread) {
  GemmCase k;
  // The declaration (bare addresses, a dense 2-D matrix for [1, 64, 32]) passes.
  {
    VariantPack p = k.bare();
    p.set(k.a, OperandBuffer::make(at(0), {64, 32}, {}, DataType::BFLOAT16));
    EXPECT_TRUE(check(k.table, k.layout, p).is_good());
  }
  // Arbitrary strides on the extent-1 batch axis address nothing: accepted.
  {
    VariantPack p = k.bare();
    p.set(k.a, OperandBuffer::make(at(0), {1, 64, 32}, {7, 32, 1}, DataType::BFLOAT16));
    EXPECT_TRUE(check(k.table, k.layout, p).is_good()) << check(k.table, k.layout, p).to_string();
  }
  // B bound row-major (the declaration is column-major): the kernel would read it transposed.
  {
    VariantPack p = k.bare();
    p.set(k.b, OperandBuffer::make(at(1 << 14), {1, 32, 48}, {32 * 48, 48, 1}, DataType::BFLOAT16));
    expect_refused(check(k.table, k.layout, p), "B", "strides");
  }
  // C written into a padded-row buffer of the declared extents.
  {
    VariantPack p = k.bare();
    p.set(k.c, OperandBuffer::make(at(3 << 14), {1, 64, 48}, {64 * 64, 64, 1}, DataType::BFLOAT16));
    expect_refused(check(k.table, k.layout, p), "C", "strides");
  }
  // fp16 bits for bf16, fp32 for bf16.
  for (DataType t : {DataType::HALF, DataType::FLOAT}) {
    VariantPack p = k.bare();
    p.set(k.a, OperandBuffer::make(at(0), {1, 64, 32}, {}, t));
    expect_refused(check(k.table, k.layout, p), "A", "the declaration is BFLOAT16");
  }
  // Misaligned for the 16-byte class (declared alignment 16).
  {
    VariantPack p = k.bare();
    p.set(k.a, at(2));
    expect_refused(check(k.table, k.layout, p), "A", "aligned to 16 bytes");
  }
  // Host memory for a device engine; a read-only output; a missing operand.
  {
    VariantPack p = k.bare();
    p.set(k.bias, OperandBuffer::make(at(2 << 14), {1, 1, 48}, {}, DataType::BFLOAT16, MemoryKind::HOST));
    expect_refused(check(k.table, k.layout, p), "bias", "host memory");
  }
  {
    VariantPack p = k.bare();
    D shape{1, 64, 48};
    DLTensor t{at(3 << 14), {kDLCUDA, 0}, 3, {kDLBfloat, 16, 1}, shape.data(), nullptr, 0};
    DLManagedTensorVersioned v{{1, 1}, nullptr, nullptr, kDLFlagReadOnly, t};
    p.set(k.c, &v);
    expect_refused(check(k.table, k.layout, p), "C", "read-only");
  }
  {
    VariantPack p;
    p.set(k.a, at(0)).set(k.b, at(1 << 14)).set(k.c, at(3 << 14));
    expect_refused(check(k.table, k.layout, p), "bias", "no buffer bound");
  }
}

// conv fprop on channels-last x, then bias and relu: the graph whose cuDNN plans once wrote a
// channels-last output in packed NCHW order without an error.
TEST(EngineTables, CudnnTableRefusesAChannelsLastMismatchAndOtherMisbinds) {
  Graph g;
  g.set_name("conv").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  const std::int64_t n = 2, c = 8, h = 5, w = 6, k = 16;
  auto x = g.tensor({n, c, h, w}, DataType::HALF, "x", {c * h * w, 1, w * c, c});
  auto f = g.tensor({k, c, 3, 3}, DataType::HALF, "w", {c * 9, 1, 3 * c, c});
  auto bias = g.tensor({1, k, 1, 1}, DataType::HALF, "bias");
  auto y = g.relu(g.bias(g.conv_fprop(x, f, Attributes()
                                                .set("pre_padding", D{1, 1})
                                                .set("post_padding", D{1, 1})
                                                .set("stride", D{1, 1})),
                         bias));
  y->set_output(true).set_name("y").set_data_type(DataType::HALF);
  y->set_stride({k * h * w, 1, w * k, k});  // channels-last output, set by hand
  ASSERT_TRUE(g.validate().is_good());
  g.freeze();
  auto lp = engines::cudnn::lower(g);
  ASSERT_TRUE(lp.is_good()) << lp.status().to_string();
  DeclaredLayout layout = DeclaredLayout::compute(g).value();
  auto table = engines::operand_table_of(lp.value(), &layout);
  ASSERT_TRUE(table.is_good()) << table.status().to_string();
  EXPECT_EQ(table->rows().size(), lp->caller_uids.size());
  auto bare = [&] {
    VariantPack p;
    p.set(x, at(0)).set(f, at(1 << 14)).set(bias, at(2 << 14)).set(y, at(3 << 14));
    return p;
  };
  EXPECT_TRUE(check(*table, layout, bare()).is_good());
  // y bound as a packed NCHW tensor of the declared extents: the plan writes channels-last.
  {
    VariantPack p = bare();
    p.set(y, OperandBuffer::make(at(3 << 14), {n, k, h, w}, {}, DataType::HALF));
    expect_refused(check(*table, layout, p), "y", "strides");
  }
  // x as fp32, misaligned, or on the host.
  {
    VariantPack p = bare();
    p.set(x, OperandBuffer::make(at(0), {n, c, h, w}, {c * h * w, 1, w * c, c}, DataType::FLOAT));
    expect_refused(check(*table, layout, p), "x", "the declaration is HALF");
  }
  {
    VariantPack p = bare();
    p.set(x, at(6));
    expect_refused(check(*table, layout, p), "x", "aligned to 16 bytes");
  }
  {
    VariantPack p = bare();
    p.set(bias, OperandBuffer::make(at(2 << 14), {1, k, 1, 1}, {}, DataType::HALF, MemoryKind::HOST));
    expect_refused(check(*table, layout, p), "bias", "host memory");
  }
}

}  // namespace
}  // namespace opgraph
