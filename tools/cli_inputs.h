// tools/cli_inputs.h — host buffers with valid random inputs for `opgraph run`.
//
// Every non-virtual tensor that is not passed by value gets a host buffer of the
// bytes its declared dims/strides span (cli_layout.h, checked arithmetic; the
// caller checks the total against --max-bytes first). Inputs are filled from a
// fixed seed, values drawn one at a time in row-major order (nothing staged but a
// cu_seqlens tensor's cut points):
//   floating  uniform in [-1, 1] (then rounded by the store to the dtype); for the
//             delta-rule ops a contractive recurrence, as models feed it: a log-domain
//             gate "g" in [-1, 0) (linear: [e^-1, 1)) unless safe_gate, "beta" in (0, 1)
//             unless use_beta_sigmoid, "q" / "k" in +-1/sqrt(last extent) unless
//             use_qk_l2norm
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

#include "cli_layout.h"
#include "opgraph/op_graph.h"

namespace opgraph::cli {

struct HostTensor {
  TensorPtr tensor;
  std::vector<unsigned char> bytes;
  bool is_input = false;  // no producer in the graph
};

// One HostTensor per layout.buffers entry (same order), inputs filled from `seed`.
std::vector<HostTensor> make_buffers(const OpGraph& g, const BufferLayout& layout, std::uint64_t seed);

}  // namespace opgraph::cli
