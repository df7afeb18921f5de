// python/src/dtype_names.h — THE table of the spellings of opgraph's element types
// that Python code meets: torch.dtype names, numpy and ml_dtypes dtype names, short
// aliases, and numpy typestr codes (__array_interface__ / __cuda_array_interface__).
//
// One table for both sides of the binding: the C++ side reads a torch tensor's dtype
// and an interface's typestr through it (bind_buffers.cpp), and opgraph/_dtypes.py
// builds its name and typestr dicts from _C._dtype_spellings(), which lists this table
// after each type's canonical name (to_string(t) in lower case, spelled once, in the
// core). A spelling is added here and nowhere else.
//
// fp8 and fp4 have torch, ml_dtypes and alias spellings but no typestr: numpy has no
// such kinds (an ml_dtypes array's typestr is a void '<V1'), so a buffer of them comes
// through DLPack (its own type codes, opgraph/variant_pack.h data_type_of) or as uint8
// storage.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common.h"

namespace opgraph::py {

enum DtypeSpelling : std::uint8_t {
  kTorchName = 1,     // str(torch.dtype) without "torch."
  kNumpyName = 2,     // numpy.dtype(...).name
  kMlDtypesName = 4,  // numpy.dtype(ml_dtypes.X).name
  kAlias = 8,         // a short name opgraph accepts ("bf16", "fp32")
  kTypestr = 16,      // a numpy typestr without its byte-order character ("f4")
};

struct DtypeName {
  std::string_view name;
  DataType type;
  std::uint8_t spellings;  // DtypeSpelling bits
};

std::span<const DtypeName> dtype_names();

// The type a spelling of kind `kind` names, NOT_SET when the table has none.
DataType dtype_from(std::string_view name, DtypeSpelling kind);

// _C._dtype_spellings(): [(name, data_type, [kinds])], canonical names first.
void bind_dtype_names(nb::module_& m);

}  // namespace opgraph::py
