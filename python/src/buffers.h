// python/src/buffers.h — one normalisation of a Python buffer object.
//
// execute() and tensor_like() both read caller buffers through normalize_buffer,
// so every accepted kind is handled in one place:
//   int                          a bare address (the declaration describes it)
//   __cuda_array_interface__     data, shape, strides (bytes -> elements), typestr
//   torch tensors, numpy arrays, any __dlpack__ producer   (nanobind's ndarray import)
//   __array_interface__          host arrays without DLPack
// Units: dims/strides in ELEMENTS; nbytes in bytes (-1 when unknown).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.h"

namespace opgraph::py {

enum class BufferDevice : std::uint8_t { UNKNOWN = 0, HOST, CUDA };

struct Buffer {
  void* data = nullptr;
  std::vector<std::int64_t> dims;     // empty: a bare address
  std::vector<std::int64_t> strides;  // elements
  DataType dtype = DataType::NOT_SET; // NOT_SET: unknown / not representable
  BufferDevice device = BufferDevice::UNKNOWN;
  std::int64_t nbytes = -1;
  int device_id = -1;                 // the device ordinal when the buffer says (DLPack), else -1
};

// `uid` names the operand in errors (the variant pack's key; -1: not a variant pack entry).
// fast: a torch tensor is read by data_ptr() and is_cuda alone (no dims/strides/dtype) —
// the execute hot path. Raises TypeError (unsupported object) naming the operand.
Buffer normalize_buffer(nb::handle v, std::int64_t uid, bool fast);
// Whether `v` is a torch.Tensor (false when torch was never imported).
bool is_torch_tensor(nb::handle v);

}  // namespace opgraph::py
