// opgraph/dlpack.h — the DLPack ABI (v1.x) as opgraph reads it: DLTensor,
// DLManagedTensor and DLManagedTensorVersioned.
//
// Why not Debian's libdlpack-dev: it ships DLPack 0.6, which has neither the
// versioned managed tensor nor the fp8/fp4 type codes. These are the spec's
// struct layouts (a C ABI, so layout is the contract), written out here.
//
// Interplay with a real dlpack.h: include it BEFORE any opgraph header and
// opgraph uses its types (a v1 header, DLPACK_MAJOR_VERSION defined); with a
// pre-1.0 header only the versioned pieces are added. Including a dlpack.h AFTER
// this file is a redefinition error.
//
// opgraph never takes ownership: a managed tensor bound into a VariantPack is
// read for the call and its deleter is never called (the caller keeps it).
#pragma once

#include <cstdint>

#if !defined(DLPACK_MAJOR_VERSION)
#if !defined(DLPACK_VERSION)
extern "C" {
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  std::int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

typedef struct {
  std::uint8_t code;    // a DLDataTypeCode
  std::uint8_t bits;    // bits per lane
  std::uint16_t lanes;  // 1 for every tensor opgraph reads
} DLDataType;

typedef struct {
  void* data;                 // the allocation's address; the first element is at data + byte_offset
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;        // ndim extents
  std::int64_t* strides;      // ndim strides in ELEMENTS, or NULL: compact row-major
  std::uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;
}  // extern "C"
#endif  // !DLPACK_VERSION

extern "C" {
typedef struct {
  std::uint32_t major;
  std::uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  std::uint64_t flags;  // bit 0: read only, bit 1: is a copy, bit 2: sub-byte type padded
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
}  // extern "C"
#endif  // !DLPACK_MAJOR_VERSION

namespace opgraph {
// The versioned flags opgraph reads.
inline constexpr std::uint64_t kDLFlagReadOnly = 1ULL << 0;
inline constexpr std::uint64_t kDLFlagSubbytePadded = 1ULL << 2;
// The major version of the versioned ABI opgraph reads.
inline constexpr std::uint32_t kDLPackMajorRead = 1;
}  // namespace opgraph
