// engines/linear_attention/la_rules.h — the support-rule helpers the family's
// analyses share (gdn_problem.cpp: gdn and gdn_summary; gdn_bwd.cpp: gdn_bwd): a
// named decline, the q/k/v row-layout rule and the dense-layout rule, the
// kernels' run-time type codes, and the kernel request of an entry. `op` prefixes the rule in messages ("" or
// "gdn_bwd: "); `rule` is the rule's name as the analysis numbers it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "opgraph/data_type.h"
#include "opgraph/status.h"
#include "opgraph/tensor.h"
#include "runtime/nvrtc_compiler.h"

namespace opgraph::linear_attention::rules {

// GRAPH_NOT_SUPPORTED: "engine linear_attention: <op><rule> <why>".
Status decline(std::string_view op, const char* rule, const std::string& why);
std::string type_name(DataType d);
bool one_of(DataType d, std::initializer_list<DataType> set);
// q, k, v [T, H, D]: the head dim contiguous, the token and head strides
// non-negative multiples of 8 elements (16 bytes: the kernels load 16-byte
// pieces), e.g. views of a fused qkv projection. The strides in *ts, *hs (0 on
// an axis of extent 1).
Status check_rows(std::string_view op, const char* rule, const std::string& node, const char* port, const Tensor& t,
                  std::int64_t* ts, std::int64_t* hs);
// Dense row-major as declared (`access`: how the kernels touch it, for the
// message); `row_pad` lets dim 0 carry a larger stride (a multiple of 16 bytes),
// returned in *row_stride.
Status check_packed(std::string_view op, const char* rule, const char* access, const std::string& node,
                    const char* port, const Tensor& t, bool row_pad = false, std::int64_t* row_stride = nullptr);
// The kernels' run-time element type code (gdn_params.cuh: kTypeBf16, kTypeF16, kTypeF32).
long long type_code(DataType d);
// The element type of each bound operand into *type: FLOAT, BFLOAT16 or HALF, or with `state`
// FLOAT or BFLOAT16; otherwise a decline naming `rule`, the node and the port.
struct TypedOperand {
  const char* port;
  TensorPtr t;  // null: not bound (skipped)
  DataType* type;
  bool state;
};
Status read_types(std::string_view op, const char* rule, const std::string& node,
                  std::initializer_list<TypedOperand> operands);
// q, k, v [T, H*, D] and cu_seqlens [N + 1] of node p.node into problem p (gdn's or gdn_bwd's): q/k/v BFLOAT16 or
// HALF, one type for the three (else a decline naming `type_rule`), K = V = D in {64, 128} (else `dim_rule`), and the
// extents every analysis keeps (io, d, t, hq, hk, hv, ho = max(hq, hv), n_seq, cu64).
template <class P>
Status read_qkv(std::string_view op, const char* type_rule, const char* dim_rule, const Tensor& q, const Tensor& k,
                const Tensor& v, const Tensor& cu, P& p) {
  p.io = q.get_data_type();
  if (!one_of(p.io, {DataType::BFLOAT16, DataType::HALF}) || k.get_data_type() != p.io || v.get_data_type() != p.io)
    return decline(op, type_rule, "node '" + p.node + "': q, k, v must all be BFLOAT16 or all HALF; got " +
                                      type_name(p.io) + ", " + type_name(k.get_data_type()) + ", " +
                                      type_name(v.get_data_type()));
  p.d = q.get_dim()[2];
  const std::int64_t vd = v.get_dim()[2];
  if (vd != p.d || (p.d != 64 && p.d != 128))
    return decline(op, dim_rule, "node '" + p.node + "': K = V in {64, 128} is served; got K = " +
                                     std::to_string(p.d) + ", V = " + std::to_string(vd));
  p.t = q.get_dim()[0];
  p.hq = q.get_dim()[1];
  p.hk = k.get_dim()[1];
  p.hv = v.get_dim()[1];
  p.ho = p.hq > p.hv ? p.hq : p.hv;
  p.n_seq = cu.get_dim()[0] - 1;
  p.cu64 = cu.get_data_type() == DataType::INT64;
  return Status::ok();
}
// The family's kernel `entry` of `source` (a file under the kernels' include root) specialised for
// head dim d and q/k/v type io: kernel name <entry>_d<d>_<bf16|f16>, defines GDN_D and GDN_IO.
runtime::KernelRequest kernel_request(long long d, DataType io, const char* entry, const char* source);

}  // namespace opgraph::linear_attention::rules
