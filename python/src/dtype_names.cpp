// python/src/dtype_names.cpp — the spelling table (see dtype_names.h) and its Python view.
#include "dtype_names.h"

#include <algorithm>
#include <cctype>
#include <string>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace opgraph::py {
namespace {

constexpr std::uint8_t kTorchNumpy = kTorchName | kNumpyName;

constexpr DtypeName kNames[] = {
    {"float32", DataType::FLOAT, kTorchNumpy},
    {"f32", DataType::FLOAT, kAlias},
    {"fp32", DataType::FLOAT, kAlias},
    {"f4", DataType::FLOAT, kTypestr},
    {"float64", DataType::DOUBLE, kTorchNumpy},
    {"f64", DataType::DOUBLE, kAlias},
    {"f8", DataType::DOUBLE, kTypestr},
    {"float16", DataType::HALF, kTorchNumpy},
    {"f16", DataType::HALF, kAlias},
    {"fp16", DataType::HALF, kAlias},
    {"f2", DataType::HALF, kTypestr},
    {"bfloat16", DataType::BFLOAT16, kTorchName | kMlDtypesName},
    {"bf16", DataType::BFLOAT16, kAlias},
    {"int8", DataType::INT8, kTorchNumpy},
    {"i1", DataType::INT8, kTypestr},
    {"uint8", DataType::UINT8, kTorchNumpy},
    {"u1", DataType::UINT8, kTypestr},
    {"int32", DataType::INT32, kTorchNumpy},
    {"i4", DataType::INT32, kTypestr},
    {"int64", DataType::INT64, kTorchNumpy},
    {"i8", DataType::INT64, kTypestr},
    {"bool", DataType::BOOLEAN, kTorchNumpy},
    {"bool_", DataType::BOOLEAN, kAlias},
    {"b1", DataType::BOOLEAN, kTypestr},
    {"float8_e4m3fn", DataType::FP8_E4M3, kTorchName | kMlDtypesName},
    {"float8_e4m3", DataType::FP8_E4M3, kAlias},
    {"float8_e5m2", DataType::FP8_E5M2, kTorchName | kMlDtypesName},
    {"float8_e8m0fnu", DataType::FP8_E8M0, kTorchName | kMlDtypesName},
    {"float4_e2m1fn_x2", DataType::FP4_E2M1, kTorchName},
    {"float4_e2m1fn", DataType::FP4_E2M1, kMlDtypesName},
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string> kinds_of(std::uint8_t bits) {
  std::vector<std::string> out;
  if (bits & kTorchName) out.push_back("torch");
  if (bits & kNumpyName) out.push_back("numpy");
  if (bits & kMlDtypesName) out.push_back("ml_dtypes");
  if (bits & kAlias) out.push_back("alias");
  if (bits & kTypestr) out.push_back("typestr");
  return out;
}

}  // namespace

std::span<const DtypeName> dtype_names() { return kNames; }

DataType dtype_from(std::string_view name, DtypeSpelling kind) {
  for (const DtypeName& row : kNames)
    if ((row.spellings & kind) && row.name == name) return row.type;
  return DataType::NOT_SET;
}

void bind_dtype_names(nb::module_& m) {
  m.def(
      "_dtype_spellings",
      [] {
        using Row = std::tuple<std::string, DataType, std::vector<std::string>>;
        std::vector<Row> rows;
        rows.emplace_back(lower(to_string(DataType::NOT_SET)), DataType::NOT_SET, std::vector<std::string>{"canonical"});
        for (DataType t : kAllDataTypes) rows.emplace_back(lower(to_string(t)), t, std::vector<std::string>{"canonical"});
        for (const DtypeName& row : kNames) rows.emplace_back(std::string(row.name), row.type, kinds_of(row.spellings));
        return rows;
      },
      "Every spelling of every data_type the binding reads: (name, data_type, kinds), kinds among canonical "
      "(the C++ name in lower case), torch, numpy, ml_dtypes, alias, typestr (a numpy typestr without its "
      "byte order). opgraph._dtypes builds its tables from this list.");
}

}  // namespace opgraph::py
