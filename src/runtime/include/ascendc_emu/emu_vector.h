// ascendc_emu: the elementwise vector instructions, count form (`count` elements from each
// operand's start). Every operand is checked (emu_check.h) and its UB range recorded for the
// vector/scalar ordering (emu_sync.h); half and bfloat16_t compute in f32 and round on the
// store, as the emitted kernels compute anyway (they upcast before computing).
#pragma once
#include <cmath>
#include <type_traits>

#include "emu_check.h"
#include "emu_sync.h"

namespace AscendC {
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

/// Records that vector instruction `call` reads `count` elements of each source and writes
/// `dst_count` of dst (emu_sync.h).
template <typename T, typename... Src>
void vector_access(const char* call, const LocalTensor<T>& dst, uint64_t dst_count, uint64_t count,
                   const Src&... src) {
  (void)call;  // with no source (Duplicate, CreateVecIndex)
  (vector_reads(call, src.emu_offset(), src.emu_offset() + count * sizeof(*src.emu_data())), ...);
  vector_wrote(dst.emu_offset(), dst.emu_offset() + dst_count * sizeof(T));
}

/// dst[i] = f(srcs[i]...) for i < count, after the operand checks.
template <typename T, typename F, typename... Src>
void map(const char* call, const LocalTensor<T>& dst, int32_t count, F f, const Src&... src) {
  if (!check_operands(call, dst, count, src...)) return;
  vector_access(call, dst, count, count, src...);
  for (int32_t i = 0; i < count; ++i) dst.emu_data()[i] = T(f(compute_t<T>(src.emu_data()[i])...));
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
// Reciprocal and Rsqrt: their API docs give float results worse than 1e-4 relative error (half:
// 1e-3; high precision: Div and Sqrt) and say nothing of 0 (Rsqrt: x <= 0). The emulation gives
// them a 2^-12 relative error, and NaN where undefined, so that a kernel relying on them shows.
AF_EMU_UNARY(Rsqrt, x > 0 ? (1 / std::sqrt(x)) * (1 + 0x1p-12f) : decltype(x)(NAN))
AF_EMU_UNARY(Reciprocal, x != 0 ? (1 / x) * (1 + 0x1p-12f) : decltype(x)(NAN))
AF_EMU_UNARY(Relu, x > 0 || x != x ? x : decltype(x)(0))
#undef AF_EMU_UNARY

/// dst[i] = scalar.
template <typename T>
void Duplicate(const LocalTensor<T>& dst, T scalar, int32_t count) {
  emu::map("Duplicate", dst, count, [scalar]() { return emu::compute_t<T>(scalar); });
}

}  // namespace AscendC
