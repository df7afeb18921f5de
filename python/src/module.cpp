// python/src/module.cpp — the extension module opgraph._C: registers each bind_*.cpp group.
#include "common.h"
#include "dtype_names.h"

NB_MODULE(_C, m) {
  using namespace opgraph::py;
  m.doc() = "opgraph native core (use the `opgraph` package, not this module)";
  bind_errors(m);
  bind_enums(m);
  bind_tensor(m);
  bind_specs(m);
  bind_handle(m);
  bind_buffers(m);
  bind_dtype_names(m);
  auto cls = bind_graph(m);
  bind_plans(m, cls);
}
