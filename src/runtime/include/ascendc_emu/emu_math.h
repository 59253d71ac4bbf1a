// ascendc_emu: the advanced ("high-level") math API calls the emitter uses, count form with the
// caller's shared temporary buffer: Tanh, Erf, Sin, Cos and Power. Beyond the elementwise checks
// each enforces the documented constraints (docs/ascendc-facts.md section 1): the temporary
// buffer holds at least the op's minimum for f32 and overlaps neither operand, and (Tanh, Erf,
// Sin, Cos) source and destination do not overlap at all. Values are libm's in the element's
// compute type: the device's own approximations cannot be known here.
#pragma once
#include <cmath>

#include "emu_vector.h"

namespace AscendC {
namespace emu {

/// Whether the ranges of a and b (n_a, n_b bytes) are apart; reports `what` otherwise.
inline bool check_apart(const char* call, const char* what, uint32_t a, uint64_t n_a, uint32_t b,
                        uint64_t n_b) {
  if (a + n_a <= b || b + n_b <= a) return true;
  report(call, std::string(what) + " overlap (the API requires separate buffers)");
  return false;
}

/// The checks of an advanced unary/binary call: operands as for any vector call, `tmp` of at
/// least `tmp_min` bytes apart from every operand, and (`apart`) each source apart from dst.
template <typename T, typename... Src>
bool check_advanced(const char* call, const LocalTensor<T>& dst, const LocalTensor<uint8_t>& tmp,
                    uint32_t tmp_min, bool apart, int32_t count, const Src&... src) {
  if (!check_operands(call, dst, count, src...) ||
      !check_ub(call, "temporary buffer", tmp, tmp_min))
    return false;
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  bool ok = check_apart(call, "temporary buffer and destination", tmp.emu_offset(), tmp_min,
                        dst.emu_offset(), bytes);
  ((ok = ok &&
         check_apart(call, "temporary buffer and a source", tmp.emu_offset(), tmp_min,
                     src.emu_offset(), bytes) &&
         (!apart || check_apart(call, "source and destination", src.emu_offset(), bytes,
                                dst.emu_offset(), bytes))),
   ...);
  return ok;
}

}  // namespace emu

// Minimum temporary bytes for f32 (docs/ascendc-facts.md section 1): 256 x K.
#define AF_EMU_ADVANCED_UNARY(NAME, TMP_MIN, EXPR)                                        \
  template <typename T, bool isReuseSource = false>                                       \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                         \
            const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount) {             \
    const int32_t n = static_cast<int32_t>(calCount);                                     \
    if (!emu::check_advanced(#NAME, dst, sharedTmpBuffer, TMP_MIN, true, n, src)) return; \
    emu::vector_access(#NAME, dst, n, n, src);                                            \
    for (int32_t i = 0; i < n; ++i) {                                                     \
      auto x = emu::compute_t<T>(src.emu_data()[i]);                                      \
      dst.emu_data()[i] = T(EXPR);                                                        \
    }                                                                                     \
  }
AF_EMU_ADVANCED_UNARY(Tanh, 256, std::tanh(x))
AF_EMU_ADVANCED_UNARY(Erf, 768, std::erf(x))
AF_EMU_ADVANCED_UNARY(Sin, 768, std::sin(x))
AF_EMU_ADVANCED_UNARY(Cos, 768, std::cos(x))
#undef AF_EMU_ADVANCED_UNARY

/// dst[i] = base[i] ^ exp[i] (tensor-tensor form: 1,280 temporary bytes for f32).
template <typename T, bool isReuseSource = false>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& base, const LocalTensor<T>& exp,
           const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount) {
  const int32_t n = static_cast<int32_t>(calCount);
  if (!emu::check_advanced("Power", dst, sharedTmpBuffer, 1280, false, n, base, exp)) return;
  emu::vector_access("Power", dst, n, n, base, exp);
  for (int32_t i = 0; i < n; ++i)
    dst.emu_data()[i] =
        T(std::pow(emu::compute_t<T>(base.emu_data()[i]), emu::compute_t<T>(exp.emu_data()[i])));
}

/// dst[i] = base ^ exp[i] (scalar-base form; 1,536 temporary bytes for f32, as the
/// tensor-scalar form documents).
template <typename T, bool isReuseSource = false>
void Power(const LocalTensor<T>& dst, T base, const LocalTensor<T>& exp,
           const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount) {
  const int32_t n = static_cast<int32_t>(calCount);
  if (!emu::check_advanced("Power", dst, sharedTmpBuffer, 1536, false, n, exp)) return;
  emu::vector_access("Power", dst, n, n, exp);
  for (int32_t i = 0; i < n; ++i)
    dst.emu_data()[i] = T(std::pow(emu::compute_t<T>(base), emu::compute_t<T>(exp.emu_data()[i])));
}

}  // namespace AscendC
