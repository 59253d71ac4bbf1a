// ascendc_emu: the vector instructions, count form (`count` elements from each operand's
// start). Every operand is checked (emu_check.h); half and bfloat16_t compute in f32 and round
// on the store, as the emitted kernels compute anyway (they upcast before computing).
#pragma once
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "emu_check.h"

namespace AscendC {

/// How Cast rounds: CAST_NONE and CAST_RINT round to nearest even where the value changes.
enum class RoundMode {
  CAST_NONE,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD
};
/// Compare's predicate.
enum class CMPMODE { LT, GT, EQ, LE, GE, NE };
/// Select's operands: two tensors, or a tensor and a scalar.
enum class SELMODE { VSEL_CMPMASK_SPR, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
/// Pipeline synchronisation: one thread runs a block here, so these order nothing.
enum pipe_t { PIPE_S, PIPE_V, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };
enum class HardEvent {
  MTE2_V,
  V_MTE3,
  MTE3_V,
  V_S,
  S_V,
  MTE2_S,
  S_MTE3,
  MTE3_S,
  MTE3_MTE2,
  V_MTE2
};
template <pipe_t pipe>
inline void PipeBarrier() {}
template <HardEvent event>
inline void SetFlag(int32_t) {}
template <HardEvent event>
inline void WaitFlag(int32_t) {}

namespace emu {

/// What an element computes in: f32 for the 16-bit floats, itself otherwise.
template <typename T>
using compute_t =
    std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>, float, T>;

/// Whether `count` elements of dst and of each source may be touched (reports what is wrong).
template <typename T, typename... Src>
bool check_operands(const char* call, const LocalTensor<T>& dst, int32_t count, const Src&... src) {
  if (count < 0) {
    report(call, "negative count " + std::to_string(count));
    return false;
  }
  bool ok = check_ub(call, "destination", dst, count);
  ((ok = ok && check_ub(call, "source", src, count) && check_overlap(call, dst, src, count, count)),
   ...);
  return ok;
}

/// dst[i] = f(srcs[i]...) for i < count, after the operand checks.
template <typename T, typename F, typename... Src>
void map(const char* call, const LocalTensor<T>& dst, int32_t count, F f, const Src&... src) {
  if (!check_operands(call, dst, count, src...)) return;
  for (int32_t i = 0; i < count; ++i) dst.emu_data()[i] = T(f(compute_t<T>(src.emu_data()[i])...));
}

/// Bit i of a Compare mask (bytes, least significant bit first).
inline bool mask_bit(const LocalTensor<uint8_t>& mask, int32_t i) {
  return (mask.emu_data()[i / 8] >> (i % 8)) & 1;
}

}  // namespace emu

#define AF_EMU_BINARY(NAME, EXPR)                                                        \
  template <typename T>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, \
            int32_t count) {                                                             \
    emu::map(                                                                            \
        #NAME, dst, count, [](auto x, auto y) { return EXPR; }, a, b);                   \
  }
AF_EMU_BINARY(Add, x + y)
AF_EMU_BINARY(Sub, x - y)
AF_EMU_BINARY(Mul, x* y)
AF_EMU_BINARY(Div, x / y)
AF_EMU_BINARY(Max, std::isnan(x) || x > y ? x : y)
AF_EMU_BINARY(Min, std::isnan(x) || x < y ? x : y)
#undef AF_EMU_BINARY

#define AF_EMU_SCALAR(NAME, EXPR)                                                          \
  template <typename T>                                                                    \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, T scalar, int32_t count) { \
    emu::compute_t<T> s(scalar);                                                           \
    emu::map(                                                                              \
        #NAME, dst, count, [s](auto x) { return EXPR; }, a);                               \
  }
AF_EMU_SCALAR(Adds, x + s)
AF_EMU_SCALAR(Muls, x* s)
AF_EMU_SCALAR(Maxs, std::isnan(x) || x > s ? x : s)
AF_EMU_SCALAR(Mins, std::isnan(x) || x < s ? x : s)
#undef AF_EMU_SCALAR

#define AF_EMU_UNARY(NAME, EXPR)                                                 \
  template <typename T>                                                          \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, int32_t count) { \
    emu::map(                                                                    \
        #NAME, dst, count, [](auto x) { return EXPR; }, a);                      \
  }
AF_EMU_UNARY(Exp, std::exp(x))
AF_EMU_UNARY(Ln, std::log(x))
AF_EMU_UNARY(Abs, std::abs(x))
AF_EMU_UNARY(Sqrt, std::sqrt(x))
AF_EMU_UNARY(Rsqrt, 1 / std::sqrt(x))
AF_EMU_UNARY(Reciprocal, 1 / x)
AF_EMU_UNARY(Relu, x > 0 || x != x ? x : decltype(x)(0))
#undef AF_EMU_UNARY

/// dst[i] = scalar.
template <typename T>
void Duplicate(const LocalTensor<T>& dst, T scalar, int32_t count) {
  emu::map("Duplicate", dst, count, [scalar]() { return emu::compute_t<T>(scalar); });
}

/// dst[i] = src[i] converted to D, rounded as `mode` says where the value changes.
template <typename D, typename S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, RoundMode mode, int32_t count) {
  const char* call = "Cast";
  if (!emu::check_ub(call, "destination", dst, count) ||
      !emu::check_ub(call, "source", src, count) ||
      !emu::check_overlap(call, dst, src, count, count))
    return;
  for (int32_t i = 0; i < count; ++i) {
    auto v = emu::compute_t<S>(src.emu_data()[i]);
    if constexpr (std::is_integral_v<D> && !std::is_integral_v<S>) {
      double r = mode == RoundMode::CAST_FLOOR   ? std::floor(v)
                 : mode == RoundMode::CAST_CEIL  ? std::ceil(v)
                 : mode == RoundMode::CAST_ROUND ? std::round(v)
                 : mode == RoundMode::CAST_TRUNC ? std::trunc(v)
                                                 : std::nearbyint(v);
      dst.emu_data()[i] = static_cast<D>(r);
    } else {
      dst.emu_data()[i] = D(static_cast<emu::compute_t<D>>(v));
    }
  }
}

/// Bit i of dst (bytes, LSB first) = a[i] `mode` b[i]; count covers whole 256-byte repeats.
template <typename T>
void Compare(const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
             CMPMODE mode, int32_t count) {
  const char* call = "Compare";
  if (count * sizeof(T) % ONE_REPEAT_BYTES != 0)
    return emu::report(call,
                       "count " + std::to_string(count) + " does not fill whole 256-byte repeats");
  if (!emu::check_ub(call, "destination", dst, count / 8) ||
      !emu::check_ub(call, "source", a, count) || !emu::check_ub(call, "source", b, count))
    return;
  for (int32_t i = 0; i < count; ++i) {
    auto x = emu::compute_t<T>(a.emu_data()[i]), y = emu::compute_t<T>(b.emu_data()[i]);
    bool r = mode == CMPMODE::LT   ? x < y
             : mode == CMPMODE::GT ? x > y
             : mode == CMPMODE::EQ ? x == y
             : mode == CMPMODE::LE ? x <= y
             : mode == CMPMODE::GE ? x >= y
                                   : x != y;
    uint8_t& byte = dst.emu_data()[i / 8];
    byte = static_cast<uint8_t>(r ? byte | (1u << (i % 8)) : byte & ~(1u << (i % 8)));
  }
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
  for (int32_t i = 0; i < count; ++i)
    dst.emu_data()[i] = emu::mask_bit(mask, i) ? a.emu_data()[i] : scalar;
}

namespace emu {

/// dst[0] = fold of src[0..count) (in f32 for the 16-bit floats); `work` is the device's scratch.
template <typename T, typename F>
void reduce(const char* call, const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<T>& work, int32_t count, F f) {
  if (count < 1) return report(call, "count " + std::to_string(count) + " (at least 1)");
  if (!check_ub(call, "destination", dst, 1) || !check_ub(call, "source", src, count) ||
      !check_ub(call, "work", work, 1) || !check_overlap(call, work, src, work.GetSize(), count))
    return;
  compute_t<T> acc(src.emu_data()[0]);
  for (int32_t i = 1; i < count; ++i) acc = f(acc, compute_t<T>(src.emu_data()[i]));
  dst.emu_data()[0] = T(acc);
}

}  // namespace emu

template <typename T>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
               int32_t count) {
  emu::reduce("ReduceSum", dst, src, work, count, [](auto a, auto b) { return a + b; });
}

template <typename T>
void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
               int32_t count, bool calIndex = false) {
  if (calIndex) emu::report("ReduceMax", "calIndex is not emulated");
  emu::reduce("ReduceMax", dst, src, work, count,
              [](auto a, auto b) { return std::isnan(a) || a > b ? a : b; });
}

}  // namespace AscendC
