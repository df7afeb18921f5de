// tests/cudnn_gpu/gpu_harness.h — the harness of test_cudnn_gpu: one Case is a
// graph builder plus what cuDNN 9.14 on the H200 is expected to do with it.
//
// run_case() plans the graph for the device ({A, FALLBACK}), takes the first
// backend plan ("cudnn_eng<N>") that builds, runs it on device buffers (outputs
// poisoned with NaN / 0xFF first) and compares every output with the CPU
// reference engine run on the same fresh random inputs (a second graph built
// identically, planned without a device). Expectations:
//   RUNS     a cudnn plan must build and match the reference;
//   DECLINES no cudnn plan may be listed, planning must still succeed (the
//            reference plans), and a "cudnn: ..." planning note must carry
//            `decline_note` (cuDNN's status / reason, or the lowering's);
//   RUNS_OR_DECLINES  either (a cudnn plan listed) RUNS, or (none listed)
//            DECLINES: for a lowering whose fate is cuDNN's heuristics' answer,
//            which may differ between cuDNN versions;
// Inputs: uniform random values stored in each tensor's data type. Tolerances:
// floating outputs |got - want| <= atol + rtol * |want| (compared as the values
// their bits encode); integer outputs exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "opgraph/graph.h"
#include "runtime/device_buffer.h"
#include "runtime/loader.h"

namespace cudnn_gpu {

// The driver table with device 0's primary context current, or nullptr.
const opgraph::runtime::CudaDriverApi* driver();

// One device allocation through driver() (runtime/device_buffer.h), `bytes`
// rounded up to 4 (the poisoning memsets write 32-bit words) and at least 16.
// Empty (ptr() 0) when there is no device.
struct DevMem : opgraph::DeviceBuffer {
  explicit DevMem(std::size_t bytes);
};

using opgraph::Graph;
using opgraph::TensorPtr;

struct Io {
  std::vector<TensorPtr> inputs;   // filled with random values (by-value scalars excluded)
  std::vector<TensorPtr> outputs;  // compared
};

enum class Expect { RUNS, DECLINES, RUNS_OR_DECLINES };

struct Case {
  std::string name;
  std::function<Io(Graph&)> build;
  double atol = 1e-5, rtol = 1e-4;
  Expect expect = Expect::RUNS;
  std::string decline_note;  // DECLINES: a substring of the cudnn planning note
  // Value range per input name (uniform; integers take [lo, hi)). Default floating [-1, 1]
  // ([0.5, 1.5] for names containing "var"; FP8_E8M0 scales [2^-7, 2^7]), integers [0, 4).
  std::map<std::string, std::pair<double, double>> ranges;
};

// OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=1 (LoweringOptions::include_unverified,
// docs/environment.md): what the engine would do that has not been checked on the H200
// (nothing today; the cases print it).
bool unverified_included();
// A case of the transpose lowering beside a lone matmul. The engine lowers it (by
// default since 2026-12-02), and on the H200 cuDNN's heuristics (9.14 and 9.19, modes
// A and FALLBACK) offer no engine config for it: DECLINES naming cuDNN's heuristics.
Case transpose_case(Case c);

// What happened, one line for the table ("ran on cudnn_eng1[...]", "declined: ...").
struct Outcome {
  std::string name;
  std::string what;
};

// Runs one case with gtest assertions; returns the outcome line.
Outcome run_case(const Case& c);
// The second half of run_case: plan `bi` of `gd` (planned for the device, built;
// `iod` from c.build(gd)) runs on fresh random device inputs and every output is
// compared with the reference run on the same inputs.
Outcome run_and_compare(const Case& c, Graph& gd, const Io& iod, std::int64_t bi);

// Marks t an output named `name` of data type t (FLOAT by default).
TensorPtr out(TensorPtr t, const char* name, opgraph::DataType type = opgraph::DataType::FLOAT);

// The case lists (cases_core.cpp: matmul, pointwise, reduction, norms, conv;
// cases_ops.cpp: batchnorm blocks and tensor ops).
std::vector<Case> core_cases();
std::vector<Case> op_cases();

}  // namespace cudnn_gpu
