// opgraph/data_type.h — element types, with cudnn-frontend's names.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace opgraph {

enum class DataType : std::uint8_t {
  NOT_SET = 0,
  FLOAT,
  DOUBLE,
  HALF,
  BFLOAT16,
  INT8,
  UINT8,
  INT32,
  INT64,
  BOOLEAN,
  FP8_E4M3,
  FP8_E5M2,
  FP8_E8M0,
  FP4_E2M1,
};

inline constexpr DataType kAllDataTypes[] = {
    DataType::FLOAT,   DataType::DOUBLE,   DataType::HALF,     DataType::BFLOAT16, DataType::INT8,
    DataType::UINT8,   DataType::INT32,    DataType::INT64,    DataType::BOOLEAN,  DataType::FP8_E4M3,
    DataType::FP8_E5M2, DataType::FP8_E8M0, DataType::FP4_E2M1};

std::string_view to_string(DataType t) noexcept;            // "FLOAT", "FP8_E4M3", ...
std::optional<DataType> data_type_from_string(std::string_view s) noexcept;  // also accepts lower case
int bits_of(DataType t) noexcept;                           // 4 for FP4_E2M1, 0 for NOT_SET
bool is_floating(DataType t) noexcept;                      // all fp types incl. fp8/fp4
bool is_integral(DataType t) noexcept;                      // int8/uint8/int32/int64 (not BOOLEAN)

}  // namespace opgraph
