// DType: the element types autofuse knows, with their text names and C++ storage types.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace af {

/// An element type. Text names follow torch's short forms: f32, f16, bf16, f64, i8, u8, i16, i32,
/// i64, bool.
enum class DType : uint8_t { Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64 };

/// "f32", "bf16", ...
std::string_view dtype_name(DType t);
/// Inverse of dtype_name; nullopt for an unknown name.
std::optional<DType> parse_dtype(std::string_view name);
/// Bytes per element.
int dtype_size(DType t);
bool is_floating(DType t);
/// u8, i8, i16, i32, i64.
bool is_integer(DType t);
/// `v` converted to integer dtype `t` with two's complement wrap (torch's conversion of a
/// Python int operand to a narrow tensor's dtype: uint8 + 300 adds 44).
int64_t wrap_to(int64_t v, DType t);
/// f16 and bf16: stored narrow, computed in f32 inside kernels.
bool is_low_precision_float(DType t);
/// The C++ type used for storage in generated code ("float", "uint16_t", "uint8_t", ...).
std::string_view dtype_storage_cpp(DType t);
/// torch's name for the dtype ("float32" for torch.float32): the frontend's map from torch
/// dtypes to ours is built from this table (autofuse._C.dtypes()).
std::string_view dtype_torch_name(DType t);
/// Every DType, in table order.
std::vector<DType> all_dtypes();

}  // namespace af
