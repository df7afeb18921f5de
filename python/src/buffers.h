// python/src/buffers.h — one normalisation of a Python buffer object.
//
// execute() and tensor_like() both read caller buffers through normalize_buffer,
// so every accepted kind is handled in one place:
//   int                          a bare address (the declaration describes it); must fit
//                                64 bits unsigned, else ValueError
//   __cuda_array_interface__     data, shape, strides (bytes -> elements), typestr, readonly
//   torch tensors, numpy arrays, any __dlpack__ producer, the buffer protocol (bytes,
//                                memoryview, ...)   (nanobind's ndarray import)
//   __array_interface__          host arrays without DLPack (data's readonly flag)
// Units: dims/strides in ELEMENTS; nbytes in bytes (-1 when unknown). Empty dims: an address
// the declaration describes (an int, or a contiguous torch tensor read by read_torch).
//
// What a buffer SAYS is recorded, not judged: its element type (or, when opgraph has no
// type for it, that it has one: `foreign_dtype`) and whether it is read-only. Judging it
// against the declaration is the variant pack's business (bind_plans.cpp).
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
  DataType dtype = DataType::NOT_SET; // NOT_SET: the buffer says no type, or one opgraph has none for
  std::string foreign_dtype;          // non-empty: the buffer's own type name, opgraph has no type for it
  BufferDevice device = BufferDevice::UNKNOWN;
  std::int64_t nbytes = -1;
  int device_id = -1;                 // the device ordinal when the buffer says (DLPack), else -1
  bool read_only = false;             // numpy writeable=False, a DLPack 1.x read-only tensor, bytes,
                                      // a read-only memoryview, an interface's readonly flag
  bool byte_geometry = false;         // dims/strides count bytes (torch's float4_e2m1fn_x2, two fp4
                                      // elements a byte): bound as uint8 storage
  // The element type the buffer claims, for messages ("" for a bare address).
  std::string dtype_name() const;
};

// Who a buffer is in errors: "workspace", "buffer", "variant pack entry for uid 3 (tensor 'q')".
struct BufferRole {
  const CoreGraph* graph = nullptr;  // names the tensor of `uid` when set
  std::int64_t uid = -1;             // < 0 with no graph: `what` alone
  const char* what = "buffer";
  std::string text() const;
};

// "uid 3 (tensor 'q')" (the tensor's name when the graph has one for the uid).
std::string operand_label(const CoreGraph& g, std::int64_t uid);

// An int as a 64-bit unsigned address; ValueError naming `who` for a negative or wider one.
void* address_of(nb::handle v, const BufferRole& who);

// Raises TypeError (unsupported or malformed object) or ValueError (an address outside
// 64 bits) naming `who`. A torch tensor is read through DLPack here; execute reads torch
// tensors with read_torch.
Buffer normalize_buffer(nb::handle v, const BufferRole& who);
// Whether `v` is a torch.Tensor (false when torch was never imported).
bool is_torch_tensor(nb::handle v);

// A torch tensor on the execute hot path (execute, prepare_variant_pack, the workspace),
// read with C-level calls on interned names and no DLPack capsule: data_ptr(), is_cuda,
// dtype, then
//   by_address (the declaration is row-major dense): is_contiguous() and nbytes. A
//     contiguous tensor comes back as an address with its bytes (dims empty, nbytes >= 0):
//     the caller checks them against the declared span (torch's nbytes is numel x element
//     size, the tensor's memory only when it is contiguous);
//   otherwise, or a tensor that is not contiguous: shape and stride() (dims/strides in
//     elements, nbytes -1), judged by the core like any strided buffer.
// torch's float4_e2m1fn_x2 counts bytes (element pairs) in its shape: byte_geometry is set.
// bytes_only (the workspace): only the address and bytes matter, so an 8-bit int type from
// the exchange table is taken as it is (torch's uint8 and its sub-byte uint1..7 have the
// same bytes) instead of reading tensor.dtype to tell them apart.
Buffer read_torch(nb::handle v, const BufferRole& who, bool by_address, bool bytes_only = false);

}  // namespace opgraph::py
