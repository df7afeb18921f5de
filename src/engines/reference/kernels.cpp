// engines/reference/kernels.cpp — find_kernel: the seven group tables indexed by op record.
#include <stdexcept>
#include <vector>

#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

namespace {

const std::vector<KernelFn>& by_record() {
  static const std::vector<KernelFn> kByRecord = [] {
    using Table = std::span<const KernelRecord> (*)();
    static constexpr Table kTables[] = {pointwise_kernels, matmul_kernels, tensor_op_kernels, norm_kernels,
                                        conv_kernels,      sdpa_kernels,   linear_attention_kernels};
    std::vector<KernelFn> v(all_op_specs().size(), nullptr);
    for (Table table : kTables)
      for (const KernelRecord& r : table()) {
        if (r.op >= v.size()) throw std::logic_error("reference kernel registered for an op index outside the registry");
        if (v[r.op])
          throw std::logic_error("op '" + std::string(all_op_specs()[r.op]->name) + "' has two reference kernels");
        v[r.op] = r.fn;
      }
    return v;
  }();
  return kByRecord;
}

}  // namespace

KernelFn find_kernel(const OpSpec& op) { return by_record()[op_index(op)]; }

KernelFn find_kernel(std::string_view op) {
  const OpSpec* spec = find_op_spec(op);
  return spec ? find_kernel(*spec) : nullptr;
}

}  // namespace opgraph::reference
