// ir/data_type.cpp — data type names and widths.
#include <cctype>
#include <string>

#include "opgraph/data_type.h"

namespace opgraph {

std::string_view to_string(DataType t) noexcept {
  switch (t) {
    case DataType::NOT_SET: return "NOT_SET";
    case DataType::FLOAT: return "FLOAT";
    case DataType::DOUBLE: return "DOUBLE";
    case DataType::HALF: return "HALF";
    case DataType::BFLOAT16: return "BFLOAT16";
    case DataType::INT8: return "INT8";
    case DataType::UINT8: return "UINT8";
    case DataType::INT32: return "INT32";
    case DataType::INT64: return "INT64";
    case DataType::BOOLEAN: return "BOOLEAN";
    case DataType::FP8_E4M3: return "FP8_E4M3";
    case DataType::FP8_E5M2: return "FP8_E5M2";
    case DataType::FP8_E8M0: return "FP8_E8M0";
    case DataType::FP4_E2M1: return "FP4_E2M1";
  }
  return "NOT_SET";
}

std::optional<DataType> data_type_from_string(std::string_view s) noexcept {
  std::string up;
  for (char c : s) up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (up == "NOT_SET") return DataType::NOT_SET;
  for (DataType t : kAllDataTypes)
    if (to_string(t) == up) return t;
  // Common aliases (torch / numpy spellings).
  if (up == "FLOAT32") return DataType::FLOAT;
  if (up == "FLOAT64") return DataType::DOUBLE;
  if (up == "FLOAT16" || up == "FP16") return DataType::HALF;
  if (up == "BF16") return DataType::BFLOAT16;
  if (up == "BOOL") return DataType::BOOLEAN;
  return std::nullopt;
}

int bits_of(DataType t) noexcept {
  switch (t) {
    case DataType::NOT_SET: return 0;
    case DataType::DOUBLE: case DataType::INT64: return 64;
    case DataType::FLOAT: case DataType::INT32: return 32;
    case DataType::HALF: case DataType::BFLOAT16: return 16;
    case DataType::INT8: case DataType::UINT8: case DataType::BOOLEAN:
    case DataType::FP8_E4M3: case DataType::FP8_E5M2: case DataType::FP8_E8M0: return 8;
    case DataType::FP4_E2M1: return 4;
  }
  return 0;
}

bool is_floating(DataType t) noexcept {
  switch (t) {
    case DataType::FLOAT: case DataType::DOUBLE: case DataType::HALF: case DataType::BFLOAT16:
    case DataType::FP8_E4M3: case DataType::FP8_E5M2: case DataType::FP8_E8M0: case DataType::FP4_E2M1:
      return true;
    default: return false;
  }
}

bool is_integral(DataType t) noexcept {
  return t == DataType::INT8 || t == DataType::UINT8 || t == DataType::INT32 || t == DataType::INT64;
}

}  // namespace opgraph
