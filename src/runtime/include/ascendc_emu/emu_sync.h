// ascendc_emu: the ordering between the vector unit and the scalar unit. On the device they run
// asynchronously: a scalar read (LocalTensor::GetValue) of UB a vector instruction wrote needs
// SetFlag/WaitFlag<HardEvent::V_S> between them, and a vector instruction reading UB the scalar
// unit wrote (SetValue) needs SetFlag/WaitFlag<HardEvent::S_V>. A block runs in order here, so
// the emulation tracks the UB ranges written since the last such wait and reports a read of one.
// (Queues order the copy and vector pipes themselves: EnQue/DeQue; those are not modelled.)
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "emu_report.h"

namespace AscendC {

/// Pipeline synchronisation events (producer_consumer).
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
/// Pipes, for PipeBarrier.
enum pipe_t { PIPE_S, PIPE_V, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };

namespace emu {

/// What one block has written and not yet waited for, per unit.
struct SyncState {
  std::set<std::pair<uint32_t, uint32_t>> vector_writes;  // UB [begin, end) since a V_S wait
  std::set<uint32_t> scalar_writes;                       // UB bytes since an S_V wait
  std::set<std::pair<int, int32_t>> flags;                // (event, id) set, not yet waited
};

inline SyncState& sync_state() {
  static thread_local SyncState s;
  return s;
}

/// The event IDs a block's pipe has handed out (TPipe::FetchEventID / AllocEventID) and those
/// allocated and not yet released, per event: SetFlag/WaitFlag take only handed-out IDs.
struct EventIds {
  std::set<std::pair<int, int32_t>> handed_out;
  std::set<std::pair<int, int32_t>> allocated;
};

inline EventIds& event_ids() {
  static thread_local EventIds e;
  return e;
}

/// Event IDs per event: 0 .. kEventIds - 1 (Atlas A2 and A3: 0-7, SetFlag/WaitFlag docs).
constexpr int32_t kEventIds = 8;

/// The smallest ID of `event` not allocated (-1: none left), handed out; `allocate` keeps it.
inline int32_t hand_out_event_id(int event, bool allocate, const char* call) {
  EventIds& e = event_ids();
  for (int32_t id = 0; id < kEventIds; ++id) {
    if (e.allocated.count({event, id})) continue;
    e.handed_out.insert({event, id});
    if (allocate) e.allocated.insert({event, id});
    return id;
  }
  report(call, "every event ID of the event is allocated (ReleaseEventID frees one)");
  return -1;
}

/// Whether `id` of `event` came from the pipe; reports `call` otherwise.
inline bool check_event_id(int event, int32_t id, const char* call) {
  if (event_ids().handed_out.count({event, id})) return true;
  report(call, "event ID " + std::to_string(id) +
                   " did not come from the pipe (TPipe::FetchEventID or AllocEventID: with "
                   "TPipe/TQue the pipe owns the IDs, a literal one may be in use)");
  return false;
}

/// A vector instruction wrote UB bytes [begin, end).
inline void vector_wrote(uint32_t begin, uint64_t end) {
  sync_state().vector_writes.insert({begin, static_cast<uint32_t>(end)});
}

/// A vector instruction `call` reads UB bytes [begin, end): reports scalar writes in them.
inline void vector_reads(const char* call, uint32_t begin, uint64_t end) {
  auto& w = sync_state().scalar_writes;
  auto it = w.lower_bound(begin);
  if (it != w.end() && *it < end)
    report(call, "reads UB offset " + std::to_string(*it) +
                     " the scalar unit wrote (SetValue) without SetFlag/WaitFlag<HardEvent::S_V>");
}

/// The scalar unit reads (GetValue) or writes (SetValue) the UB bytes at `at`.
inline void scalar_access(const char* call, uint32_t at, uint32_t bytes, bool write) {
  for (const auto& [b, e] : sync_state().vector_writes)
    if (at < e && b < at + bytes) {
      report(call,
             "UB offset " + std::to_string(at) +
                 " was written by a vector instruction without SetFlag/WaitFlag<HardEvent::V_S>");
      break;
    }
  if (write) sync_state().scalar_writes.insert(at);
}

}  // namespace emu

/// An event ID (the API's type).
using TEventID = int8_t;

template <HardEvent event>
inline void SetFlag(int32_t id) {
  emu::check_event_id(static_cast<int>(event), id, "SetFlag");
  emu::sync_state().flags.insert({static_cast<int>(event), id});
}

template <HardEvent event>
inline void WaitFlag(int32_t id) {
  emu::check_event_id(static_cast<int>(event), id, "WaitFlag");
  emu::SyncState& s = emu::sync_state();
  if (!s.flags.erase({static_cast<int>(event), id})) {
    emu::report("WaitFlag",
                "event id " + std::to_string(id) + " was not set (the device would wait forever)");
    return;
  }
  if (event == HardEvent::V_S) s.vector_writes.clear();
  if (event == HardEvent::S_V) s.scalar_writes.clear();
}

/// Orders everything before it in `pipe` with everything after; PIPE_ALL orders every unit.
template <pipe_t pipe>
inline void PipeBarrier() {
  if (pipe == PIPE_ALL) emu::sync_state() = {};
}

}  // namespace AscendC
