// ascendc_emu: moving data between global memory and the Unified Buffer. DataCopy moves whole
// 32-byte blocks (a length that is not one is reported and, as on the device, rounded down);
// DataCopyPad moves `blockCount` blocks of any byte length, each starting on a 32-byte boundary
// in UB, strides given as gaps (GM in bytes, UB in 32-byte blocks).
#pragma once
#include <cstring>

#include "emu_check.h"

namespace AscendC {

/// DataCopyPad's block layout: `blockCount` blocks of `blockLen` bytes; the gap after each block
/// in the source and the destination (bytes on the GM side, 32-byte blocks on the UB side).
struct DataCopyExtParams {
  uint16_t blockCount = 0;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

/// GM -> UB padding (DataCopyPad's docs): a block shorter than its 32-byte boundary is padded
/// to it; with no left or right padding asked the pad repeats the block's first element (isPad
/// or not), with right padding it is paddingValue when isPad, else undefined (left padding is
/// not emulated: it must be 0).
template <typename T>
struct DataCopyPadExtParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T();
};

namespace emu {

/// The byte count DataCopy moves for `count` elements: whole 32-byte blocks, reported if not.
template <typename T>
uint64_t copy_bytes(const char* call, uint32_t count) {
  uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  if (bytes % ONE_BLK_SIZE != 0)
    report(call, std::to_string(bytes) +
                     " B is not a multiple of 32 B (the device moves only whole blocks; "
                     "use DataCopyPad)");
  return bytes / ONE_BLK_SIZE * ONE_BLK_SIZE;
}

inline uint64_t round_block(uint64_t bytes) {
  return (bytes + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
}

/// Whether DataCopyPad parameters are in the device's range.
inline bool check_pad_params(const char* call, const DataCopyExtParams& p) {
  if (p.blockCount < 1 || p.blockCount > 4095 || p.blockLen < 1) {
    report(call, "blockCount " + std::to_string(p.blockCount) + " (1..4095) / blockLen " +
                     std::to_string(p.blockLen) + " (>= 1)");
    return false;
  }
  return true;
}

}  // namespace emu

template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
  const char* call = "DataCopy(GM->UB)";
  uint64_t bytes = emu::copy_bytes<T>(call, count);
  if (!emu::check_ub(call, "destination", dst, count) || !emu::check_gm(call, "source", src, count))
    return;
  std::memcpy(dst.emu_data(), src.emu_data(), bytes);
}

template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
  const char* call = "DataCopy(UB->GM)";
  uint64_t bytes = emu::copy_bytes<T>(call, count);
  if (!emu::check_ub(call, "source", src, count) || !emu::check_gm(call, "destination", dst, count))
    return;
  std::memcpy(dst.emu_data(), src.emu_data(), bytes);
}

template <typename T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
  const char* call = "DataCopy(UB->UB)";
  uint64_t bytes = emu::copy_bytes<T>(call, count);
  if (!emu::check_ub(call, "destination", dst, count) ||
      !emu::check_ub(call, "source", src, count) ||
      !emu::check_overlap(call, dst, src, count, count))
    return;
  std::memmove(dst.emu_data(), src.emu_data(), bytes);
}

template <typename T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad) {
  const char* call = "DataCopyPad(GM->UB)";
  if (!emu::check_pad_params(call, p)) return;
  if (pad.leftPadding != 0) emu::report(call, "left padding is not emulated");
  const uint64_t ub_step = emu::round_block(p.blockLen) + uint64_t{p.dstStride} * ONE_BLK_SIZE;
  const uint64_t gm_step = uint64_t{p.blockLen} + p.srcStride;
  const uint64_t ub_bytes = (p.blockCount - 1) * ub_step + emu::round_block(p.blockLen);
  const uint64_t gm_bytes = (p.blockCount - 1) * gm_step + p.blockLen;
  if (!emu::check_ub(call, "destination", dst, (ub_bytes + sizeof(T) - 1) / sizeof(T)) ||
      !emu::check_gm(call, "source", src, (gm_bytes + sizeof(T) - 1) / sizeof(T)))
    return;
  auto* out = reinterpret_cast<uint8_t*>(dst.emu_data());
  const auto* in = reinterpret_cast<const uint8_t*>(src.emu_data());
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    uint8_t* o = out + b * ub_step;
    std::memcpy(o, in + b * gm_step, p.blockLen);
    // The block's tail up to 32 bytes: its first element (no padding asked), paddingValue
    // (right padding, isPad), or bytes no kernel may rely on (NaN here).
    uint64_t tail = emu::round_block(p.blockLen) - p.blockLen;
    if (pad.rightPadding == 0 || pad.isPad) {
      T value = pad.paddingValue;
      if (pad.rightPadding == 0 && p.blockLen >= sizeof(T)) std::memcpy(&value, o, sizeof(T));
      for (uint64_t i = 0; i < tail / sizeof(T); ++i)
        std::memcpy(o + p.blockLen + i * sizeof(T), &value, sizeof(T));
    } else {
      std::memset(o + p.blockLen, 0xff, tail);
    }
  }
}

template <typename T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                 const DataCopyExtParams& p) {
  const char* call = "DataCopyPad(UB->GM)";
  if (!emu::check_pad_params(call, p)) return;
  const uint64_t ub_step = emu::round_block(p.blockLen) + uint64_t{p.srcStride} * ONE_BLK_SIZE;
  const uint64_t gm_step = uint64_t{p.blockLen} + p.dstStride;
  const uint64_t ub_bytes = (p.blockCount - 1) * ub_step + p.blockLen;
  const uint64_t gm_bytes = (p.blockCount - 1) * gm_step + p.blockLen;
  if (!emu::check_ub(call, "source", src, (ub_bytes + sizeof(T) - 1) / sizeof(T)) ||
      !emu::check_gm(call, "destination", dst, (gm_bytes + sizeof(T) - 1) / sizeof(T)))
    return;
  auto* out = reinterpret_cast<uint8_t*>(dst.emu_data());
  const auto* in = reinterpret_cast<const uint8_t*>(src.emu_data());
  for (uint32_t b = 0; b < p.blockCount; ++b)
    std::memcpy(out + b * gm_step, in + b * ub_step, p.blockLen);
}

}  // namespace AscendC
