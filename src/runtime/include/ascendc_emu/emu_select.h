// ascendc_emu: Compare (a bit mask, one bit per element, least significant bit first), Select
// over such a mask, Gather by byte offsets, Brcb (an element to a 32-byte block) and
// CreateVecIndex.
#pragma once
#include "emu_math.h"  // check_apart
#include "emu_vector.h"

namespace AscendC {

/// Compare's predicate: src0 `mode` src1.
enum class CMPMODE { LT, GT, EQ, LE, GE, NE };
/// Select's operands: the mask's first bits for every repeat, a tensor and a scalar, two tensors.
enum class SELMODE { VSEL_CMPMASK_SPR, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

namespace emu {

/// Bit i of a Compare mask.
inline bool mask_bit(const LocalTensor<uint8_t>& mask, int32_t i) {
  return (mask.emu_data()[i / 8] >> (i % 8)) & 1;
}

}  // namespace emu

namespace emu {

/// x `mode` y.
template <typename V>
bool compares(V x, V y, CMPMODE mode) {
  return mode == CMPMODE::LT   ? x < y
         : mode == CMPMODE::GT ? x > y
         : mode == CMPMODE::EQ ? x == y
         : mode == CMPMODE::LE ? x <= y
         : mode == CMPMODE::GE ? x >= y
                               : x != y;
}

/// Bit i of dst = f(i) for i < count, after the checks of `call` (count covers whole 256-byte
/// repeats: the device computes nothing of a partial one).
template <typename T, typename F, typename... Src>
void compare_into(const char* call, const LocalTensor<uint8_t>& dst, int32_t count, F f,
                  const Src&... src) {
  if (count < 0 || count * sizeof(T) % ONE_REPEAT_BYTES != 0)
    return report(call, "count " + std::to_string(count) + " does not fill whole 256-byte repeats");
  bool ok = check_ub(call, "destination", dst, count / 8);
  ((ok = ok && check_ub(call, "source", src, count)), ...);
  if (!ok) return;
  vector_access(call, dst, count / 8, count, src...);
  for (int32_t i = 0; i < count; ++i) {
    uint8_t& byte = dst.emu_data()[i / 8];
    byte = static_cast<uint8_t>(f(i) ? byte | (1u << (i % 8)) : byte & ~(1u << (i % 8)));
  }
}

}  // namespace emu

/// Bit i of dst = a[i] `mode` b[i].
template <typename T>
void Compare(const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
             CMPMODE mode, int32_t count) {
  emu::compare_into<T>(
      "Compare", dst, count,
      [&](int32_t i) {
        return emu::compares(emu::compute_t<T>(a.emu_data()[i]), emu::compute_t<T>(b.emu_data()[i]),
                             mode);
      },
      a, b);
}

namespace emu {
/// Bit i of dst = a[i] `mode` scalar: CompareScalar / Compares, reported as `call`.
template <typename T>
void compare_scalar(const char* call, const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a,
                    T scalar, CMPMODE mode, int32_t count) {
  compare_into<T>(
      call, dst, count,
      [&](int32_t i) {
        return compares(compute_t<T>(a.emu_data()[i]), compute_t<T>(scalar), mode);
      },
      a);
}
}  // namespace emu

/// Bit i of dst = a[i] `mode` scalar: the count form's CANN 8.x name (9.x keeps it, deprecated).
template <typename T>
void CompareScalar(const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a, T scalar, CMPMODE mode,
                   int32_t count) {
  emu::compare_scalar("CompareScalar", dst, a, scalar, mode, count);
}

/// The same under its CANN 9.x name.
template <typename T>
void Compares(const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a, T scalar, CMPMODE mode,
              int32_t count) {
  emu::compare_scalar("Compares", dst, a, scalar, mode, count);
}

/// dst[i] = bit i of mask ? a[i] : b[i] (VSEL_TENSOR_TENSOR_MODE).
template <typename T>
void Select(const LocalTensor<T>& dst, const LocalTensor<uint8_t>& mask, const LocalTensor<T>& a,
            const LocalTensor<T>& b, SELMODE mode, int32_t count) {
  const char* call = "Select";
  if (mode != SELMODE::VSEL_TENSOR_TENSOR_MODE)
    return emu::report(call, "mode is not tensor-tensor");
  if (!emu::check_ub(call, "mask", mask, (count + 7) / 8) ||
      !emu::check_operands(call, dst, count, a, b))
    return;
  emu::vector_access(call, dst, count, count, a, b);
  emu::vector_reads(call, mask.emu_offset(), mask.emu_offset() + (count + 7) / 8);
  for (int32_t i = 0; i < count; ++i)
    dst.emu_data()[i] = emu::mask_bit(mask, i) ? a.emu_data()[i] : b.emu_data()[i];
}

/// dst[i] = bit i of mask ? a[i] : scalar (VSEL_TENSOR_SCALAR_MODE).
template <typename T>
void Select(const LocalTensor<T>& dst, const LocalTensor<uint8_t>& mask, const LocalTensor<T>& a,
            T scalar, SELMODE mode, int32_t count) {
  const char* call = "Select";
  if (mode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
    return emu::report(call, "mode is not tensor-scalar");
  if (!emu::check_ub(call, "mask", mask, (count + 7) / 8) ||
      !emu::check_operands(call, dst, count, a))
    return;
  emu::vector_access(call, dst, count, count, a);
  emu::vector_reads(call, mask.emu_offset(), mask.emu_offset() + (count + 7) / 8);
  for (int32_t i = 0; i < count; ++i)
    dst.emu_data()[i] = emu::mask_bit(mask, i) ? a.emu_data()[i] : scalar;
}

/// dst[i] = the T at byte src + srcBaseAddr + offsets[i], for i < count (each offset a multiple
/// of sizeof(T), the element inside src).
template <typename T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<uint32_t>& offsets, uint32_t srcBaseAddr, uint32_t count) {
  const char* call = "Gather";
  const int32_t n = static_cast<int32_t>(count);
  if (!emu::check_ub(call, "destination", dst, count) || !emu::check_ub(call, "source", src, 0) ||
      !emu::check_ub(call, "offsets", offsets, count))
    return;
  const uint64_t bytes = static_cast<uint64_t>(src.GetSize()) * sizeof(T);
  for (int32_t i = 0; i < n; ++i) {
    uint64_t at = uint64_t{srcBaseAddr} + offsets.emu_data()[i];
    if (at % sizeof(T) != 0 || at + sizeof(T) > bytes)
      return emu::report(call, "offset " + std::to_string(at) + " of element " + std::to_string(i) +
                                   " is not a " + std::to_string(sizeof(T)) +
                                   "-byte element of the source (" + std::to_string(bytes) + " B)");
  }
  emu::vector_access(call, dst, count, count, offsets);
  emu::vector_reads(call, src.emu_offset(), src.emu_offset() + bytes);
  for (int32_t i = 0; i < n; ++i)
    dst.emu_data()[i] = src.emu_data()[(srcBaseAddr + offsets.emu_data()[i]) / sizeof(T)];
}

/// dst[i] = firstValue + i, for i < count.
template <typename T>
void CreateVecIndex(const LocalTensor<T>& dst, T firstValue, uint32_t count) {
  emu::map("CreateVecIndex", dst, static_cast<int32_t>(count),
           [&, i = T(0)]() mutable { return static_cast<emu::compute_t<T>>(firstValue + i++); });
}

/// Brcb's destination strides, in 32-byte blocks.
struct BrcbRepeatParams {
  uint16_t dstBlkStride;
  uint16_t dstRepStride;
};

/// Per repeat r < repeatTime: each of src's 8 elements 8 r .. 8 r + 7 fills one 32-byte block of
/// dst (block b of repeat r at r * dstRepStride + b * dstBlkStride blocks). 2- and 4-byte types.
template <typename T>
void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint8_t repeatTime,
          const BrcbRepeatParams& p) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Brcb moves 2- and 4-byte elements");
  const char* call = "Brcb";
  constexpr uint32_t per_block = ONE_BLK_SIZE / sizeof(T);
  if (p.dstBlkStride == 0) return emu::report(call, "dstBlkStride 0 is undefined");
  const uint64_t last = repeatTime == 0 ? 0
                                        : (uint64_t{repeatTime} - 1) * p.dstRepStride +
                                              7 * uint64_t{p.dstBlkStride} + 1;
  if (!emu::check_ub(call, "source", src, 8u * repeatTime) ||
      !emu::check_ub(call, "destination", dst, last * per_block) ||
      !emu::check_apart(call, "source and destination", src.emu_offset(),
                        8u * repeatTime * sizeof(T), dst.emu_offset(), last * ONE_BLK_SIZE))
    return;
  emu::vector_access(call, dst, last * per_block, 8u * repeatTime, src);
  for (uint32_t r = 0; r < repeatTime; ++r)
    for (uint32_t b = 0; b < 8; ++b) {
      T v = src.emu_data()[8 * r + b];
      T* block = dst.emu_data() + (r * p.dstRepStride + b * p.dstBlkStride) * per_block;
      for (uint32_t i = 0; i < per_block; ++i) block[i] = v;
    }
}

}  // namespace AscendC
