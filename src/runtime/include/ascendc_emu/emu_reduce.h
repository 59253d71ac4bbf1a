// ascendc_emu: ReduceSum, ReduceMax and ReduceMin over a row in UB, count form: dst[0] is the
// result, `work` the device's scratch, sized as CANN 8 documents for Atlas A2
// (docs/ascendc-facts.md section 2); WholeReduceSum, one sum per repeat (mask-count form).
// Sums add in the device's documented order: a binary tree of adjacent pairs inside each
// 256-byte repeat (CANN's ReduceSum page: data0 + data1, data2 + data3, ...), then, for
// ReduceSum's count form on Atlas A2 ("method 2"), the repeats' sums one after another.
#pragma once
#include <cmath>

#include "emu_vector.h"

namespace AscendC {
namespace emu {

/// `n` rounded up to a multiple of `per`.
inline uint32_t round_up(uint32_t n, uint32_t per) {
  return (n + per - 1) / per * per;
}

/// The sum of lane[0..per) by a binary tree of adjacent pairs (per a power of two); lanes past
/// a repeat's elements hold 0.
template <typename C, int32_t per>
C repeat_tree_sum(C (&lane)[per]) {
  for (int32_t width = per / 2; width >= 1; width /= 2)
    for (int32_t i = 0; i < width; ++i) lane[i] = lane[2 * i] + lane[2 * i + 1];
  return lane[0];
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
    const emu::compute_t<T> sum = emu::repeat_tree_sum(lane);
    total = start == 0 ? sum : total + sum;
  }
  dst.emu_data()[0] = T(total);
}

/// WholeReduceSum, mask-count form: dst[r * dstRepStride] = the sum of the first `mask`
/// elements of repeat r of src (repeat r at src[r * srcRepStride blocks]), for r < repeatTimes,
/// each by the repeat's binary tree. The device's rules: repeatTimes in [0, 255], mask in
/// [1, elements per repeat], src 32-byte aligned, dst aligned to its element (it is written one
/// element per repeat, docs/ascendc-facts.md section 2). Only srcBlkStride 1 is emulated.
template <typename T>
void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t mask,
                    int32_t repeatTimes, int32_t dstRepStride, int32_t srcBlkStride,
                    int32_t srcRepStride) {
  const char* call = "WholeReduceSum";
  constexpr int32_t per = ONE_REPEAT_BYTES / sizeof(T);
  constexpr int32_t per_block = ONE_BLK_SIZE / sizeof(T);
  if (repeatTimes < 0 || repeatTimes > 255)
    return emu::report(call, "repeatTimes " + std::to_string(repeatTimes) + " (0 to 255)");
  if (mask < 1 || mask > per)
    return emu::report(call, "mask " + std::to_string(mask) + " (1 to " + std::to_string(per) +
                                 " elements a repeat)");
  if (srcBlkStride != 1) return emu::report(call, "srcBlkStride other than 1 is not emulated");
  if (dstRepStride < 0 || srcRepStride < 0) return emu::report(call, "a negative stride");
  if (repeatTimes == 0) return;
  const uint64_t src_count = uint64_t(repeatTimes - 1) * srcRepStride * per_block + mask;
  const uint64_t dst_count = uint64_t(repeatTimes - 1) * dstRepStride + 1;
  if (!dst.emu_valid()) return emu::report(call, "destination is not a tensor");
  if (dst.emu_offset() % sizeof(T) != 0)
    return emu::report(call, "destination not aligned to its element");
  if (dst_count > dst.GetSize())
    return emu::report(call, "destination: " + std::to_string(dst_count) +
                                 " elements, the tensor holds " + std::to_string(dst.GetSize()));
  if (!emu::check_ub(call, "source", src, src_count) ||
      !emu::check_overlap(call, dst, src, dst_count, src_count))
    return;
  emu::vector_access(call, dst, dst_count, src_count, src);
  for (int32_t r = 0; r < repeatTimes; ++r) {
    emu::compute_t<T> lane[per] = {};
    const T* in = src.emu_data() + uint64_t(r) * srcRepStride * per_block;
    for (int32_t i = 0; i < mask; ++i) lane[i] = emu::compute_t<T>(in[i]);
    dst.emu_data()[uint64_t(r) * dstRepStride] = T(emu::repeat_tree_sum(lane));
  }
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
