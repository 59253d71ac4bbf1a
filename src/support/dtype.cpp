#include "support/dtype.h"

#include <array>

namespace af {
namespace {
struct DTypeRow {
  DType type;
  const char* name;
  int size;
  const char* storage;
  const char* torch;  // torch's name (torch.float32), for the frontend
};
// One row per dtype: the single table every query reads.
constexpr std::array<DTypeRow, 10> kDTypes = {{
    {DType::Bool, "bool", 1, "uint8_t", "bool"},
    {DType::U8, "u8", 1, "uint8_t", "uint8"},
    {DType::I8, "i8", 1, "int8_t", "int8"},
    {DType::I16, "i16", 2, "int16_t", "int16"},
    {DType::I32, "i32", 4, "int32_t", "int32"},
    {DType::I64, "i64", 8, "int64_t", "int64"},
    {DType::F16, "f16", 2, "uint16_t", "float16"},
    {DType::BF16, "bf16", 2, "uint16_t", "bfloat16"},
    {DType::F32, "f32", 4, "float", "float32"},
    {DType::F64, "f64", 8, "double", "float64"},
}};
const DTypeRow& row(DType t) {
  return kDTypes[static_cast<size_t>(t)];
}
}  // namespace

std::string_view dtype_name(DType t) {
  return row(t).name;
}
int dtype_size(DType t) {
  return row(t).size;
}
std::string_view dtype_storage_cpp(DType t) {
  return row(t).storage;
}
std::string_view dtype_torch_name(DType t) {
  return row(t).torch;
}
std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (const auto& r : kDTypes) out.push_back(r.type);
  return out;
}
bool is_floating(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}
bool is_integer(DType t) {
  return t == DType::U8 || t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}
int64_t wrap_to(int64_t v, DType t) {
  switch (t) {
    case DType::U8: return static_cast<uint8_t>(v);
    case DType::I8: return static_cast<int8_t>(v);
    case DType::I16: return static_cast<int16_t>(v);
    case DType::I32: return static_cast<int32_t>(v);
    default: return v;
  }
}
bool is_low_precision_float(DType t) {
  return t == DType::F16 || t == DType::BF16;
}
std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& r : kDTypes)
    if (name == r.name) return r.type;
  return std::nullopt;
}

}  // namespace af
