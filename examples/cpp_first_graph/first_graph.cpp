// The README's first example ("A first graph (C++)"), a standalone program built two ways
// so it never rots: by ctest inside the build (examples/CMakeLists.txt) and, by
// scripts/test.sh, against the INSTALLED package (CMakeLists.txt beside this file).
#include <cstdio>
#include <opgraph/graph.h>
using namespace opgraph;

int main() {
  Graph g;                                              // the op graph plus planning
  g.set_name("mlp_up").set_io_data_type(DataType::BFLOAT16).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({1, 128, 4096}, DataType::BFLOAT16, "x");   // [batch, M, K]
  auto w = g.tensor({1, 4096, 14336}, DataType::BFLOAT16, "w");  // [batch, K, N]
  auto y = g.matmul(x, w, Attributes().set_name("up"));
  y->set_output(true).set_name("y");
  if (Status s = g.validate(); s.is_bad()) {            // shape inference + every op's rules
    std::fprintf(stderr, "%s\n", s.to_string().c_str());  // names op, node, port, tensor, rule
    return 1;
  }
  std::printf("y dims = %lld x %lld x %lld\n", (long long)y->get_dim()[0],
              (long long)y->get_dim()[1], (long long)y->get_dim()[2]);
  std::printf("%s\n", g.serialize().value().c_str());  // canonical JSON; g.key() hashes it
  if (Status s = g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}); s.is_bad()) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 1;
  }
  std::printf("%lld plan(s), first: %s\n", (long long)g.get_execution_plan_count(),
              g.get_plan_name_at_index(0).value().c_str());  // e.g. reference[] without a GPU
}
