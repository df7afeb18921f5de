// tests/cudnn/cudnn_test_util.h — helpers for the cuDNN lowering tests: find a
// plan's records by type and read attributes back.
#pragma once

#include <gtest/gtest.h>

#include "engines/cudnn/lowering.h"
#include "opgraph/graph.h"

namespace cudnn_test {

using opgraph::engines::cudnn::AttrRecord;
using opgraph::engines::cudnn::DescriptorRecord;
using opgraph::engines::cudnn::LoweringPlan;

inline std::vector<const DescriptorRecord*> of_type(const LoweringPlan& p, cudnnBackendDescriptorType_t t) {
  std::vector<const DescriptorRecord*> out;
  for (const auto& r : p.records)
    if (r.type == t) out.push_back(&r);
  return out;
}

// The single int of attribute `n` (fails the test when absent).
inline std::int64_t int_of(const DescriptorRecord& r, cudnnBackendAttributeName_t n) {
  const AttrRecord* a = r.find(n);
  EXPECT_NE(a, nullptr) << r.label << " lacks attribute " << n;
  return a && !a->ints.empty() ? a->ints[0] : -999;
}

// The uid of the tensor record attribute `n` of `r` points at (-1 when unset).
inline std::int64_t uid_at(const LoweringPlan& p, const DescriptorRecord& r, cudnnBackendAttributeName_t n) {
  const AttrRecord* a = r.find(n);
  if (!a || a->refs.size() != 1) return -1;
  const DescriptorRecord& t = p.records[static_cast<std::size_t>(a->refs[0])];
  if (t.type != CUDNN_BACKEND_TENSOR_DESCRIPTOR) return -2;
  return int_of(t, CUDNN_ATTR_TENSOR_UNIQUE_ID);
}

}  // namespace cudnn_test
