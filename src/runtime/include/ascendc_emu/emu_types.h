// ascendc_emu: the keywords, scalar types and constants of the Ascend C subset autofuse emits,
// for g++ on the CPU. Our own clean-room emulation (docs/ascendc.md), not CANN's.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

// Device keywords: nothing on the CPU. GM_ADDR is a kernel argument in global memory. Under
// AF_EMU_GM_ADDRESS_SPACE (clang only: make check-cann's address-space pass) __gm__ is an
// address space of its own, as on the device, so a cast that drops it does not compile.
#define __aicore__
#define __global__
#ifdef AF_EMU_GM_ADDRESS_SPACE
#define __gm__ __attribute__((address_space(1)))
#else
#define __gm__
#endif
#define GM_ADDR __gm__ uint8_t*

// Unified Buffer per vector core, Atlas A2 (arch 2201): 192 KB, of which the API keeps the top
// 8 KB as its own scratch (Select's tensor-scalar mode, mask staging), so TPipe::InitBuffer may
// hand out 184 KB (TOTAL_VEC_LOCAL_SIZE; docs/ascendc-facts.md section 8).
#ifndef AF_EMU_UB_BYTES
#define AF_EMU_UB_BYTES 196608
#endif
#ifndef AF_EMU_UB_USABLE_BYTES
#define AF_EMU_UB_USABLE_BYTES 188416
#endif

namespace AscendC {
namespace emu {
/// A host pointer as a kernel's GM argument (the launcher's side: no address space on the CPU).
inline GM_ADDR gm_addr(const void* p) {
  return reinterpret_cast<GM_ADDR>(reinterpret_cast<uintptr_t>(p));
}
/// The host memory behind a GM pointer.
template <typename T>
T* host_ptr(__gm__ T* p) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(p));
}
}  // namespace emu

constexpr uint32_t ONE_BLK_SIZE = 32;       // a UB data block: the unit of alignment and strides
constexpr uint32_t ONE_REPEAT_BYTES = 256;  // one vector repeat: 8 data blocks
constexpr uint32_t MAX_BUFFERS_PER_POSITION = 8;  // TQue slots (InitBuffer's num) per TPosition

namespace emu {

/// IEEE binary16 <-> f32, round to nearest even (NaN stays NaN).
inline uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (mag < 0x38800000u) {  // subnormal or zero in f16: scale by 2^24 and round
    float a;
    std::memcpy(&a, &mag, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  uint32_t r = mag + 0xfffu + ((mag >> 13) & 1u) - (112u << 23);
  return static_cast<uint16_t>(sign | (r >> 13));
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  float out;
  if (e == 0) {
    out = std::ldexp(static_cast<float>(m), -24);
    return sign ? -out : out;
  }
  uint32_t x = sign | (e == 31 ? (0xffu << 23) | (m << 13) : ((e + 112u) << 23) | (m << 13));
  std::memcpy(&out, &x, 4);
  return out;
}

/// bfloat16 <-> f32, round to nearest even (NaN stays NaN).
inline uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_to_f32(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float out;
  std::memcpy(&out, &x, 4);
  return out;
}

}  // namespace emu
}  // namespace AscendC

/// The device's half: 16 bits in memory, converted through f32 for arithmetic.
struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f) : bits(AscendC::emu::f32_to_f16(f)) {}  // NOLINT: implicit, as on the device
  operator float() const { return AscendC::emu::f16_to_f32(bits); }
};

/// The device's bfloat16_t: 16 bits in memory, converted through f32 for arithmetic.
struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float f) : bits(AscendC::emu::f32_to_bf16(f)) {}  // NOLINT: implicit
  operator float() const { return AscendC::emu::bf16_to_f32(bits); }
};

namespace AscendC {
/// A bf16 scalar as float: the API's own conversion (8.x kernel_utils.h, 9.x
/// kernel_scalar_convert.h), which device code uses rather than a cast.
inline float ToFloat(const bfloat16_t& v) {
  return emu::bf16_to_f32(v.bits);
}
}  // namespace AscendC
