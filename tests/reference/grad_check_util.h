// tests/reference/grad_check_util.h — helpers for the norm/rope/conv reference tests:
// run a forward case once (inputs + outputs kept), take central finite differences of
// L = sum(W ⊙ output) against any of its inputs, and compare a backward op's output
// with them. Graphs are built in DOUBLE so the FD step survives rounding.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "harness.h"

namespace opgraph::gradcheck {

using harness::Array;
using harness::Dims;
using harness::Values;

struct Forward {
  OpGraph g;
  Values in;   // generated inputs
  Values out;  // reference outputs
};

// Builds, validates and runs `c` on the reference; a failure is a gtest failure.
inline Forward run_forward(const harness::Case& c) {
  Forward f;
  Status s = harness::build(c, f.g);
  EXPECT_TRUE(s.is_good()) << s.to_string();
  f.in = harness::make_inputs(c, f.g);
  auto r = harness::run_reference(f.g, f.in);
  EXPECT_TRUE(r.is_good()) << r.status().to_string();
  if (r.is_good()) f.out = *r;
  return f;
}

// Expects `analytic` to match the FD gradient of L = sum(weights ⊙ outputs) wrt input `wrt`.
inline void expect_matches_fd(const Forward& f, const Values& weights, std::string_view wrt, const Array& analytic,
                              harness::Tolerance tol, const std::string& what) {
  auto fd = harness::fd_gradient(f.g, f.in, wrt, weights);
  ASSERT_TRUE(fd.is_good()) << fd.status().to_string();
  ASSERT_EQ(fd->dims, analytic.dims) << what;
  double max_abs = 0.0;
  for (double v : fd->v) max_abs = std::max(max_abs, std::abs(v));
  EXPECT_GT(max_abs, 1e-3) << what << ": the gradient must not vanish (a test that cannot fail)";
  std::string m = harness::compare(what, f.g, {{std::string(wrt), *fd}}, {{std::string(wrt), analytic}},
                                   {{std::string(wrt), tol}});
  EXPECT_EQ(m, "") << what;
}

// A DOUBLE graph input / a DOUBLE graph output named `name`.
inline TensorPtr in64(OpGraph& g, Dims d, const std::string& name) { return g.tensor(std::move(d), DataType::DOUBLE, name); }
inline void out64(const TensorPtr& t, const std::string& name) {
  t->set_output(true).set_name(name).set_data_type(DataType::DOUBLE);
}

}  // namespace opgraph::gradcheck
