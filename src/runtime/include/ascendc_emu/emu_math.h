// ascendc_emu: the advanced ("high-level") math API calls the emitter uses, count form with the
// caller's shared temporary buffer: Tanh, Erf, Sin, Cos and Power. Beyond the elementwise checks
// each enforces the documented constraints (docs/ascendc-facts.md section 1): the temporary
// buffer holds at least the op's minimum for f32 and overlaps neither operand, and (Tanh, Erf,
// Sin, Cos) source and destination do not overlap at all. Like CANN's implementations
// (highlevel_api/impl/math/*/*_common_impl.h, 8.1.RC1), Erf, Sin, Cos and Power size their
// working space by the buffer's GetSize() and split all of it between their intermediate
// values, so they write over the whole buffer, to the end of the tensor it views (a sub-tensor
// runs to the end of its TBuf): the emulation fills all of it with NaN after the call, and
// checks all of it against the operands. Tanh's one intermediate takes count elements. Values
// are libm's in the element's compute type: the device's own approximations cannot be known
// here.
#pragma once
#include <cmath>
#include <cstring>

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

/// The bytes of `tmp` an advanced call writes: all of it (`whole`: the call splits GetSize()
/// between its intermediates) or its first `count` f32 values.
inline uint64_t advanced_tmp_bytes(const LocalTensor<uint8_t>& tmp, bool whole, int32_t count) {
  const uint64_t part = static_cast<uint64_t>(count) * sizeof(float);
  return whole || part > tmp.GetSize() ? tmp.GetSize() : part;
}

/// The checks of an advanced unary/binary call: operands as for any vector call, `tmp` of at
/// least `tmp_min` bytes, the part of it the call writes (advanced_tmp_bytes) apart from every
/// operand, and (`apart`) each source apart from dst.
template <typename T, typename... Src>
bool check_advanced(const char* call, const LocalTensor<T>& dst, const LocalTensor<uint8_t>& tmp,
                    uint32_t tmp_min, bool whole, bool apart, int32_t count, const Src&... src) {
  if (!check_operands(call, dst, count, src...) ||
      !check_ub(call, "temporary buffer", tmp, tmp_min))
    return false;
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  const uint64_t used = advanced_tmp_bytes(tmp, whole, count) > tmp_min
                            ? advanced_tmp_bytes(tmp, whole, count)
                            : tmp_min;
  bool ok = check_apart(call, "temporary buffer and destination", tmp.emu_offset(), used,
                        dst.emu_offset(), bytes);
  ((ok = ok &&
         check_apart(call, "temporary buffer and a source", tmp.emu_offset(), used,
                     src.emu_offset(), bytes) &&
         (!apart || check_apart(call, "source and destination", src.emu_offset(), bytes,
                                dst.emu_offset(), bytes))),
   ...);
  return ok;
}

/// What the call leaves in its temporary buffer: NaN over the bytes it wrote.
inline void scribble_advanced_tmp(const LocalTensor<uint8_t>& tmp, bool whole, int32_t count) {
  std::memset(tmp.emu_data(), 0xFF, advanced_tmp_bytes(tmp, whole, count));
}

}  // namespace emu

// Minimum temporary bytes for f32 (docs/ascendc-facts.md section 1): 256 x K; WHOLE: the call
// writes all of its temporary buffer (file comment).
#define AF_EMU_ADVANCED_UNARY(NAME, TMP_MIN, WHOLE, EXPR)                                        \
  template <typename T, bool isReuseSource = false>                                              \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                                \
            const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount) {                    \
    const int32_t n = static_cast<int32_t>(calCount);                                            \
    if (!emu::check_advanced(#NAME, dst, sharedTmpBuffer, TMP_MIN, WHOLE, true, n, src)) return; \
    emu::vector_access(#NAME, dst, n, n, src);                                                   \
    for (int32_t i = 0; i < n; ++i) {                                                            \
      auto x = emu::compute_t<T>(src.emu_data()[i]);                                             \
      dst.emu_data()[i] = T(EXPR);                                                               \
    }                                                                                            \
    emu::scribble_advanced_tmp(sharedTmpBuffer, WHOLE, n);                                       \
  }
AF_EMU_ADVANCED_UNARY(Tanh, 256, false, std::tanh(x))
AF_EMU_ADVANCED_UNARY(Erf, 768, true, std::erf(x))
AF_EMU_ADVANCED_UNARY(Sin, 768, true, std::sin(x))
AF_EMU_ADVANCED_UNARY(Cos, 768, true, std::cos(x))
#undef AF_EMU_ADVANCED_UNARY

/// dst[i] = base[i] ^ exp[i] (tensor-tensor form: 1,280 temporary bytes for f32).
template <typename T, bool isReuseSource = false>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& base, const LocalTensor<T>& exp,
           const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount) {
  const int32_t n = static_cast<int32_t>(calCount);
  if (!emu::check_advanced("Power", dst, sharedTmpBuffer, 1280, true, false, n, base, exp)) return;
  emu::vector_access("Power", dst, n, n, base, exp);
  for (int32_t i = 0; i < n; ++i)
    dst.emu_data()[i] =
        T(std::pow(emu::compute_t<T>(base.emu_data()[i]), emu::compute_t<T>(exp.emu_data()[i])));
  emu::scribble_advanced_tmp(sharedTmpBuffer, true, n);
}

/// dst[i] = base ^ exp[i] (scalar-base form; 1,536 temporary bytes for f32, as the
/// tensor-scalar form documents).
template <typename T, bool isReuseSource = false>
void Power(const LocalTensor<T>& dst, T base, const LocalTensor<T>& exp,
           const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount) {
  const int32_t n = static_cast<int32_t>(calCount);
  if (!emu::check_advanced("Power", dst, sharedTmpBuffer, 1536, true, false, n, exp)) return;
  emu::vector_access("Power", dst, n, n, exp);
  for (int32_t i = 0; i < n; ++i)
    dst.emu_data()[i] = T(std::pow(emu::compute_t<T>(base), emu::compute_t<T>(exp.emu_data()[i])));
  emu::scribble_advanced_tmp(sharedTmpBuffer, true, n);
}

}  // namespace AscendC
