// tests/exec/test_fuzz_execute_regressions.cpp — inputs of fuzz/fuzz_graph_execute.cpp
// (deserialize, validate, plan on the reference engine, execute on host buffers)
// that crashed or misbehaved, each replayed the way the fuzzer runs it.
//
// The contract every case checks: a graph either is refused (by validate, by
// planning, by the build, or by execute with an error naming the problem) or runs;
// a buffer smaller than its declaration is never run (that would read or write
// past it); nothing crashes. Which layer refuses is free — the IR's validate-time
// rules, the declared layout's checked spans and the reference engine's own checks
// overlap on purpose — so a case passes with any refusal, never with an OK.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engines/reference/executor.h"
#include "exec/declared_layout.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

constexpr std::int64_t kReferenceEngine = 20000;

// A matmul C[1,8,2] = A[1,8,1] x B[1,1,2] in HALF, A's strides given as text.
std::string matmul_with_a_strides(const std::string& a_strides) {
  return R"({"context":{"compute_data_type":"FLOAT","intermediate_data_type":"NOT_SET","io_data_type":"HALF","name":"wrap"},)"
         R"("nodes":[{"attributes":{},"compute_data_type":"FLOAT","inputs":{"A":[1],"B":[2]},"name":"mm0","op":"matmul","outputs":{"C":3}}],)"
         R"("tensors":[{"alignment":16,"data_type":"HALF","dim":[1,8,1],"is_virtual":false,"name":"a","reordering_type":"NONE","stride":)" +
         a_strides +
         R"(,"uid":1,"uid_by_user":false,"user_set":{"data_type":true,"dim":true,"stride":true}},)"
         R"({"alignment":16,"data_type":"HALF","dim":[1,1,2],"is_virtual":false,"name":"b","reordering_type":"NONE","stride":[2,2,1],"uid":2,"uid_by_user":false,"user_set":{"data_type":true,"dim":true,"stride":true}},)"
         R"({"alignment":16,"data_type":"HALF","dim":[1,8,2],"is_virtual":false,"name":"c","reordering_type":"NONE","stride":[16,2,1],"uid":3,"uid_by_user":false,"user_set":{"data_type":false,"dim":false,"stride":false}}],)"
         R"("version":1})";
}

// (2^64 + 5) / 7: seven of it wrap int64 arithmetic to 5, so A's span
// 1 + 7 * stride reads as 6 elements in unchecked arithmetic.
const std::string kWrappingStride = "2635249153387078803";

// What the fuzzer does, with `a_elements` HALF elements (a 1-D described host
// buffer) bound to A and whole buffers for B and C. The Status of the first step
// that refuses, or of execute.
Status plan_and_run(const std::string& json, std::int64_t a_elements, bool prepare_only = false) {
  auto parsed = Graph::deserialize(json);
  if (parsed.is_bad()) return parsed.status();
  Graph g = std::move(parsed.value());
  OPGRAPH_CHECK(g.validate());
  OPGRAPH_CHECK(g.create_execution_plan(kReferenceEngine, {}));
  std::vector<std::uint16_t> a(static_cast<std::size_t>(a_elements), 0x3c00), b(2, 0x3c00), c(16, 0);
  const std::int64_t a_dims[1] = {a_elements}, b_dims[1] = {2}, c_dims[1] = {16};
  VariantPack pack;
  pack.set(1, OperandBuffer::make(a.data(), std::span<const std::int64_t>(a_dims, 1), {}, DataType::HALF, MemoryKind::HOST))
      .set(2, OperandBuffer::make(b.data(), std::span<const std::int64_t>(b_dims, 1), {}, DataType::HALF, MemoryKind::HOST))
      .set(3, OperandBuffer::make(c.data(), std::span<const std::int64_t>(c_dims, 1), {}, DataType::HALF, MemoryKind::HOST));
  if (prepare_only) {
    VariantPack prepared;
    return g.prepare_variant_pack(pack, prepared);
  }
  OPGRAPH_CHECK(g.build_plans());
  return g.execute(pack);
}

TEST(FuzzExecuteRegressions, ControlTheHonestMatmulRuns) {
  // The same graph with packed strides and a whole buffer: the cases below fail only on the stride.
  Status s = plan_and_run(matmul_with_a_strides("[8,1,1]"), 8);
  EXPECT_TRUE(s.is_good()) << s.to_string();
}

// A fuzzer's find: span_elements once wrapped int64 on this stride, so a
// 6-element buffer "covered the declared bytes" and execute read A's row 7 at
// element 7 * stride — a segfault inside the library. The normalisation alone
// (prepare_variant_pack, no engine) must refuse the buffer: src/exec/.
TEST(FuzzExecuteRegressions, WrappingStrideSpanIsNotCoveredByASmallBuffer) {
  const std::string json = matmul_with_a_strides("[" + kWrappingStride + "," + kWrappingStride + ",1]");
  Status s = plan_and_run(json, 6, /*prepare_only=*/true);
  EXPECT_TRUE(s.is_bad()) << "a 6-element buffer was accepted for A, whose declaration spans 1 + 7 * "
                          << kWrappingStride << " elements";
}

// The same graph end to end on the reference engine: refused (by validate, the
// layout, the reference's checked span, or execute), never run.
TEST(FuzzExecuteRegressions, WrappingStrideNeverExecutesOnTheReference) {
  const std::string json = matmul_with_a_strides("[" + kWrappingStride + "," + kWrappingStride + ",1]");
  Status s = plan_and_run(json, 6);
  EXPECT_TRUE(s.is_bad()) << "execute ran A through a 6-element buffer";
}

// fuzz_graph_execute crash-ef5f8311 (and two more inputs with the same stack):
// fuzz/corpus/matmul.json with the node's "outputs" key dropped. validate()
// accepts a matmul that binds no C, and planning then crashes:
//   gemm_problem.cpp:157 runtime error: member call on null pointer of type 'opgraph::Tensor'
//   #0 gemm::analyze_gemm  src/engines/gemm/gemm_problem.cpp:157 (cur = n.output(...) is null)
//   #1 gemm::analyze_facts src/engines/gemm/gemm_engine.cpp:231
//   #2 FactsCache::get     src/plan/engine.cpp:49
//   #3 Graph::begin_planning src/api/graph.cpp:93
//   #4 Graph::create_execution_plan src/api/graph.cpp:167
// Owners: src/ir (validate should name the unbound output C) and src/engines/gemm
// (analyze_gemm should decline, not dereference). Until then planning crashes here.
// Any refusal passes: validate, planning, the build, or execute; never a run.
TEST(FuzzExecuteRegressions, MatmulWithoutItsOutputIsRefusedNotACrash) {
  const std::string json =
      R"({"context":{"compute_data_type":"FLOAT","intermediate_data_type":"NOT_SET","io_data_type":"HALF","name":"mm"},)"
      R"("nodes":[{"attributes":{},"compute_data_type":"FLOAT","inputs":{"A":[1],"B":[2]},"name":"mm0","op":"matmul"}],)"
      R"("tensors":[{"alignment":16,"data_type":"HALF","dim":[2,16,32],"is_virtual":false,"name":"a","reordering_type":"NONE","stride":[512,32,1],"uid":1,"uid_by_user":false,"user_set":{"data_type":true,"dim":true,"stride":true}},)"
      R"({"alignment":16,"data_type":"HALF","dim":[1,32,8],"is_virtual":false,"name":"b","reordering_type":"NONE","stride":[256,8,1],"uid":2,"uid_by_user":false,"user_set":{"data_type":true,"dim":true,"stride":true}},)"
      R"({"alignment":16,"data_type":"HALF","dim":[2,16,8],"is_virtual":false,"name":"c","reordering_type":"NONE","stride":[128,8,1],"uid":3,"uid_by_user":false,"user_set":{"data_type":false,"dim":false,"stride":false}}],)"
      R"("version":1})";
  auto parsed = Graph::deserialize(json);
  ASSERT_TRUE(parsed.is_good()) << parsed.status().to_string();
  Graph g = std::move(parsed.value());
  if (g.validate().is_bad()) return;  // refused at validate: the fix this test allows first
  Status s = g.create_execution_plan(kReferenceEngine, {});
  if (s.is_good()) s = g.build_plans();
  if (s.is_good()) {  // planned and built: execute must refuse (the reference's kernel has no C to write)
    std::vector<std::uint16_t> a(1024), b(256);
    VariantPack pack;
    pack.set(1, a.data()).set(2, b.data());
    s = g.execute(pack);
  }
  EXPECT_TRUE(s.is_bad()) << "a matmul with no output ran";
}

// The layers below validate, each on its own: validate() now refuses the stride
// (rule span_overflow), so these tests build the matmul with packed strides,
// validate it, and only then give A the wrapping strides — a graph whose
// declaration changed after validate, which neither layer may take on trust.
struct WrappedMatmul {
  OpGraph g;
  TensorPtr a, b, c;
  WrappedMatmul() {
    g.set_name("ref_wrap").set_compute_data_type(DataType::FLOAT);
    a = g.tensor({1, 8, 1}, DataType::HALF, "A");
    b = g.tensor({1, 1, 2}, DataType::HALF, "B");
    c = g.matmul(a, b);
    c->set_output(true).set_name("C").set_data_type(DataType::HALF);
    const Status v = g.validate();
    EXPECT_TRUE(v.is_good()) << v.to_string();
    const std::int64_t big = std::stoll(kWrappingStride);
    a->set_stride({big, big, 1});
  }
};

// src/exec/: the declared layout's span is checked arithmetic, so normalising a
// 6-element buffer against it is refused (or the layout itself is).
TEST(FuzzExecuteRegressions, DeclaredLayoutDoesNotWrapTheSpan) {
  WrappedMatmul m;
  auto layout = DeclaredLayout::compute(m.g);
  if (layout.is_bad()) {
    EXPECT_NE(layout.status().message().find("overflow"), std::string::npos) << layout.status().to_string();
    return;
  }
  std::vector<std::uint16_t> av(6), bv(2), cv(16);
  const std::int64_t a_dims[1] = {6}, b_dims[1] = {2}, c_dims[1] = {16};
  VariantPack caller, out;
  caller.set(m.a->get_uid(), OperandBuffer::make(av.data(), std::span<const std::int64_t>(a_dims, 1), {}, DataType::HALF, MemoryKind::HOST))
      .set(m.b->get_uid(), OperandBuffer::make(bv.data(), std::span<const std::int64_t>(b_dims, 1), {}, DataType::HALF, MemoryKind::HOST))
      .set(m.c->get_uid(), OperandBuffer::make(cv.data(), std::span<const std::int64_t>(c_dims, 1), {}, DataType::HALF, MemoryKind::HOST));
  Status s = VariantPack::normalize(caller, layout.value(), out);
  EXPECT_TRUE(s.is_bad()) << "a 6-element buffer covered A's declaration, which spans 1 + 7 * " << kWrappingStride;
}

// The reference engine's own arithmetic, checked too: reference::execute
// takes bare host pointers, so it cannot see buffer sizes, but it refuses a
// declaration whose span does not fit int64 before reading anything
// (INVALID_VALUE naming the tensor).
TEST(FuzzExecuteRegressions, ReferenceRefusesASpanThatOverflowsInt64) {
  WrappedMatmul m;
  std::vector<std::uint16_t> av(6), bv(2), cv(16);
  std::map<std::int64_t, reference::HostBuffer> bufs{
      {m.a->get_uid(), {av.data()}}, {m.b->get_uid(), {bv.data()}}, {m.c->get_uid(), {cv.data()}}};
  Status s = reference::execute(m.g, bufs);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VALUE) << s.to_string();
  EXPECT_NE(s.message().find("'A'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("overflows int64"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace opgraph
