// Coverage of the oracle: every op record in the IR has a reference kernel
// (registered under the record, kernels.cpp), and
// the registry is the one place ops are listed (no duplicates, every group present).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engines/reference/ref_kernel.h"
#include "opgraph/op_spec.h"

using namespace opgraph;

TEST(ReferenceCoverage, EveryOpRecordHasAReferenceKernel) {
  std::size_t n = 0;
  for (const OpSpec* spec : all_op_specs()) {
    ++n;
    EXPECT_NE(reference::find_kernel(*spec), nullptr) << "op '" << spec->name << "' has no reference kernel";
    EXPECT_EQ(reference::find_kernel(spec->name), reference::find_kernel(*spec)) << spec->name;
  }
  EXPECT_EQ(n, 56u);  // 1 pointwise + 3 matmul + 11 tensor ops + 16 norm + 3 conv + 6 SDPA + 16 linear attention
  EXPECT_EQ(reference::find_kernel("no_such_op"), nullptr);
}

TEST(ReferenceCoverage, RegistryListsEachOpOnceAndEveryMechanism) {
  std::set<std::string> names;
  std::set<OpMechanism> mechanisms;
  for (const OpSpec* spec : all_op_specs()) {
    EXPECT_TRUE(names.insert(std::string(spec->name)).second) << "op '" << spec->name << "' registered twice";
    mechanisms.insert(spec->mechanism);
    EXPECT_EQ(find_op_spec(spec->name), spec);
    EXPECT_NE(spec->infer, nullptr) << spec->name;
    EXPECT_EQ(spec->backend_lowerable, spec->mechanism != OpMechanism::ENGINE_ONLY) << spec->name;
  }
  EXPECT_EQ(mechanisms.size(), 4u);
  for (const char* op : {"pointwise", "matmul", "reduction", "layernorm", "conv_fprop", "sdpa", "sdpa_mxfp8_backward",
                         "gdn", "gdp_summary_bwd", "rope_backward", "paged_cache_load", "moe_grouped_matmul_bwd"})
    EXPECT_NE(find_op_spec(op), nullptr) << op;
}
