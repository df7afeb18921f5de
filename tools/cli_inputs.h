// tools/cli_inputs.h — host buffers with valid random inputs for `opgraph run`.
//
// Every non-virtual tensor that is not passed by value gets a host buffer sized
// to its declared dims/strides (elements). Inputs are filled from a fixed seed:
//   floating  uniform in [-1, 1] (then rounded by the store to the dtype)
//   boolean   0 or 1
//   integer   by the port it feeds, so index and length tensors are VALID:
//     a ragged offset of tensor T [B, ...]   b * prod(T.dims[1:]) (a packed layout)
//     "cu_seqlens" [N+1]                      a random partition of the node's token
//                                             count (first input's dim 0): 0 < ... < T
//     "state_indices" [N]                     i mod (initial_state's dim 0)
//     "SEQ_LEN_Q" / "SEQ_LEN_KV"              random in [1, S], S = Q's / K's dim 2
//     anything else                           random in [0, 3]
// The integer rules are this table, keyed by port name; an op whose index inputs
// need another rule adds a row here.
#pragma once

#include <cstdint>
#include <vector>

#include "opgraph/op_graph.h"

namespace opgraph::cli {

struct HostTensor {
  TensorPtr tensor;
  std::vector<unsigned char> bytes;
  bool is_input = false;  // no producer in the graph
};

// Elements a strided tensor spans: 1 + sum((dim - 1) * stride), 0 if any dim is 0.
std::int64_t span_elements(const Tensor& t);
std::vector<HostTensor> make_buffers(const OpGraph& g, std::uint64_t seed);

}  // namespace opgraph::cli
