// ascendc_emu: Cast between the element types, with the round modes Atlas A2 has for each pair
// (docs/ascendc-facts.md section 6). A pair or mode the device lacks, or that the emulation does
// not compute, is reported and the call does nothing.
#pragma once
#include <cmath>
#include <type_traits>

#include "emu_vector.h"

namespace AscendC {

/// How Cast rounds: RINT to nearest even, ROUND half away from zero, NONE (float to half) as RINT.
enum class RoundMode {
  CAST_NONE,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD
};

namespace emu {

/// Whether Cast from S to D with `mode` is one Atlas A2 has and the emulation computes: f32 to
/// half (RINT, NONE) or bfloat16_t (RINT); half/bfloat16_t to f32 (NONE); f32 to int32_t or to
/// f32 (RINT, FLOOR, CEIL, ROUND, TRUNC); int32_t to f32 (NONE, RINT); uint8_t to half (NONE);
/// half to uint8_t (NONE and the five rounding modes).
template <typename D, typename S>
bool cast_supported(RoundMode mode) {
  using R = RoundMode;
  const bool to_integer = mode == R::CAST_RINT || mode == R::CAST_FLOOR || mode == R::CAST_CEIL ||
                          mode == R::CAST_ROUND || mode == R::CAST_TRUNC;
  if constexpr (std::is_same_v<S, float> && std::is_same_v<D, half>)
    return mode == R::CAST_RINT || mode == R::CAST_NONE;
  else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, bfloat16_t>)
    return mode == R::CAST_RINT;
  else if constexpr ((std::is_same_v<S, half> ||
                      std::is_same_v<S, bfloat16_t>)&&std::is_same_v<D, float>)
    return mode == R::CAST_NONE;
  else if constexpr (std::is_same_v<S, float> &&
                     (std::is_same_v<D, int32_t> || std::is_same_v<D, float>))
    return to_integer;
  else if constexpr (std::is_same_v<S, int32_t> && std::is_same_v<D, float>)
    return mode == R::CAST_NONE || mode == R::CAST_RINT;
  else if constexpr (std::is_same_v<S, uint8_t> && std::is_same_v<D, half>)
    return mode == R::CAST_NONE;
  else if constexpr (std::is_same_v<S, half> && std::is_same_v<D, uint8_t>)
    return mode == R::CAST_NONE || to_integer;
  else
    return false;
}

/// `v` rounded to an integral value as `mode` says.
inline double round_as(double v, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_FLOOR: return std::floor(v);
    case RoundMode::CAST_CEIL: return std::ceil(v);
    case RoundMode::CAST_ROUND: return std::round(v);
    case RoundMode::CAST_TRUNC: return std::trunc(v);
    default: return std::nearbyint(v);
  }
}

}  // namespace emu

/// dst[i] = src[i] converted to D, rounded as `mode` says.
template <typename D, typename S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, RoundMode mode, int32_t count) {
  const char* call = "Cast";
  if (!emu::cast_supported<D, S>(mode))
    return emu::report(call, "round mode " + std::to_string(static_cast<int>(mode)) +
                                 " for this type pair is not an Atlas A2 Cast the emulation "
                                 "computes");
  if (!emu::check_ub(call, "destination", dst, count) ||
      !emu::check_ub(call, "source", src, count) ||
      !emu::check_overlap(call, dst, src, count, count))
    return;
  emu::vector_access(call, dst, count, count, src);
  for (int32_t i = 0; i < count; ++i) {
    auto v = emu::compute_t<S>(src.emu_data()[i]);
    if constexpr (std::is_same_v<S, float> &&
                  (std::is_same_v<D, int32_t> || std::is_same_v<D, float>))
      dst.emu_data()[i] = static_cast<D>(emu::round_as(v, mode));
    else if constexpr (std::is_same_v<D, uint8_t>)  // saturating (the kernels cast only 0 and 1)
      dst.emu_data()[i] =
          static_cast<uint8_t>(std::fmin(255.0, std::fmax(0.0, emu::round_as(v, mode))));
    else
      dst.emu_data()[i] = D(static_cast<emu::compute_t<D>>(v));
  }
}

}  // namespace AscendC
