// ascendc_emu: ReduceSum, ReduceMax and ReduceMin over a row in UB, count form: dst[0] is the
// result, `work` the device's scratch, sized as CANN 8 documents for Atlas A2
// (docs/ascendc-facts.md section 2). ReduceSum adds in the device's order: a binary tree inside
// each 256-byte repeat, then the repeats' sums one after another.
#pragma once
#include <cmath>

#include "emu_vector.h"

namespace AscendC {
namespace emu {

/// `n` rounded up to a multiple of `per`.
inline uint32_t round_up(uint32_t n, uint32_t per) {
  return (n + per - 1) / per * per;
}

/// The 256-byte repeats `count` elements of T take.
template <typename T>
uint32_t repeats_of(int32_t count) {
  constexpr uint32_t per = ONE_REPEAT_BYTES / sizeof(T);
  return (static_cast<uint32_t>(count) + per - 1) / per;
}

/// dst[0] = the fold of src[0..count) by f, after the operand checks (work: `work_count`);
/// false (reported) when a check fails.
template <typename T, typename F>
bool reduce(const char* call, const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<T>& work, int32_t count, uint32_t work_count, F f) {
  if (count < 1) {
    report(call, "count " + std::to_string(count) + " (at least 1)");
    return false;
  }
  if (!check_ub(call, "destination", dst, 1) || !check_ub(call, "source", src, count) ||
      !check_ub(call, "work", work, work_count) ||
      !check_overlap(call, work, src, work_count, count))
    return false;
  vector_access(call, dst, 1, count, src);
  compute_t<T> acc(src.emu_data()[0]);
  for (int32_t i = 1; i < count; ++i) acc = f(acc, compute_t<T>(src.emu_data()[i]));
  dst.emu_data()[0] = T(acc);
  return true;
}

}  // namespace emu

/// dst[0] = the sum of src[0..count); `work` holds one element per 256-byte repeat of src,
/// rounded up to a 32-byte block.
template <typename T>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
               int32_t count) {
  uint32_t need = emu::round_up(emu::repeats_of<T>(count), ONE_BLK_SIZE / sizeof(T));
  if (!emu::reduce("ReduceSum", dst, src, work, count, need, [](auto a, auto b) { return a + b; }))
    return;
  // The value, in the device's order (the fold above made the checks and reports).
  constexpr int32_t per = ONE_REPEAT_BYTES / sizeof(T);
  emu::compute_t<T> total(0);
  for (int32_t start = 0; start < count; start += per) {
    emu::compute_t<T> lane[per] = {};
    for (int32_t i = start; i < count && i < start + per; ++i)
      lane[i - start] = emu::compute_t<T>(src.emu_data()[i]);
    for (int32_t width = per / 2; width >= 1; width /= 2)
      for (int32_t i = 0; i < width; ++i) lane[i] = lane[i] + lane[i + width];
    total = start == 0 ? lane[0] : total + lane[0];
  }
  dst.emu_data()[0] = T(total);
}

namespace emu {

/// ReduceMax / ReduceMin: dst[0] = the fold of src by `pick` (a NaN wins); `work` holds two
/// elements per 256-byte repeat of src, rounded up to a 32-byte block.
template <typename T, typename Pick>
void reduce_extreme(const char* call, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                    const LocalTensor<T>& work, int32_t count, bool calIndex, Pick pick) {
  if (calIndex) report(call, "calIndex is not emulated");
  uint32_t need = round_up(2 * repeats_of<T>(count), ONE_BLK_SIZE / sizeof(T));
  reduce(call, dst, src, work, count, need,
         [pick](auto a, auto b) { return std::isnan(a) || pick(a, b) ? a : b; });
}

}  // namespace emu

/// dst[0] = the largest of src[0..count) (NaN if any is).
template <typename T>
void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
               int32_t count, bool calIndex = false) {
  emu::reduce_extreme("ReduceMax", dst, src, work, count, calIndex,
                      [](auto a, auto b) { return a > b; });
}

/// dst[0] = the smallest of src[0..count) (NaN if any is).
template <typename T>
void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
               int32_t count, bool calIndex = false) {
  emu::reduce_extreme("ReduceMin", dst, src, work, count, calIndex,
                      [](auto a, auto b) { return a < b; });
}

}  // namespace AscendC
