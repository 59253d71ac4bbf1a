// ascendc_emu: the operand rules every UB-reading API call checks: a valid tensor, a 32-byte
// aligned start, the elements it touches inside the tensor, and a destination that overlaps a
// source only when both start at the same address.
#pragma once
#include <string>

#include "emu_memory.h"

namespace AscendC {
namespace emu {

/// Whether `count` elements of UB tensor `t` may be touched by `call`; reports what is wrong.
template <typename T>
bool check_ub(const char* call, const char* role, const LocalTensor<T>& t, uint64_t count) {
  if (!t.emu_valid()) {
    report(call, std::string(role) + " is not a tensor (failed allocation or DeQue)");
    return false;
  }
  if (t.emu_offset() % ONE_BLK_SIZE != 0) {
    report(call, std::string(role) + " starts at UB offset " + std::to_string(t.emu_offset()) +
                     ", not 32-byte aligned");
    return false;
  }
  if (count > t.GetSize()) {
    report(call, std::string(role) + ": " + std::to_string(count) + " elements, the tensor holds " +
                     std::to_string(t.GetSize()));
    return false;
  }
  return true;
}

/// Whether `count` elements of GM tensor `g` are inside the size it was given (if any).
template <typename T>
bool check_gm(const char* call, const char* role, const GlobalTensor<T>& g, uint64_t count) {
  if (g.emu_data() == nullptr) {
    report(call, std::string(role) + " has no global buffer (SetGlobalBuffer)");
    return false;
  }
  if (g.emu_sized() && count > g.GetSize()) {
    report(call, std::string(role) + ": " + std::to_string(count) +
                     " elements beyond its global buffer of " + std::to_string(g.GetSize()));
    return false;
  }
  return true;
}

/// Whether destination bytes [d, d + dn) and source bytes [s, s + sn) of UB are identical or
/// apart.
inline bool check_overlap(const char* call, uint32_t d, uint64_t dn, uint32_t s, uint64_t sn) {
  if (d == s || d + dn <= s || s + sn <= d) return true;
  report(call, "destination UB [" + std::to_string(d) + ", " + std::to_string(d + dn) +
                   ") partly overlaps a source [" + std::to_string(s) + ", " +
                   std::to_string(s + sn) + ")");
  return false;
}

template <typename D, typename S>
bool check_overlap(const char* call, const LocalTensor<D>& dst, const LocalTensor<S>& src,
                   uint64_t dst_count, uint64_t src_count) {
  return check_overlap(call, dst.emu_offset(), dst_count * sizeof(D), src.emu_offset(),
                       src_count * sizeof(S));
}

}  // namespace emu
}  // namespace AscendC
