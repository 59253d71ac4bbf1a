// ascendc_emu: Unified Buffer memory as a kernel sees it. A TPipe owns one core's UB and hands
// it out to queues (TQue, double-buffered tensors that move between pipeline stages) and
// scratch buffers (TBuf); tensors in UB are LocalTensors, tensors in global memory
// GlobalTensors. The pipe keeps every queue's slot states, so it can check the queue discipline
// (alloc -> EnQue -> DeQue -> free, each slot freed once) and, when the kernel ends, that every
// tensor was freed.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "emu_report.h"
#include "emu_sync.h"
#include "emu_types.h"

namespace AscendC {

/// Where a tensor lives: GM, or a logical UB position of the vector pipeline.
enum class TPosition : uint8_t {
  GM,
  VECIN,
  VECOUT,
  VECCALC,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  MAX
};

class TPipe;

namespace emu {

/// A queue slot's life: Free -> Allocated -> Enqueued -> Dequeued -> Free.
enum class SlotState : uint8_t { Free, Allocated, Enqueued, Dequeued };

/// One TQue or TBuf as its pipe records it: where its slots sit in UB and their states.
struct QueueState {
  bool is_buf = false;  // a TBuf: one buffer, no queue discipline
  TPosition pos = TPosition::VECIN;
  int32_t depth = 1;  // at most this many tensors enqueued at once
  uint32_t len = 0;   // bytes per slot, a multiple of 32
  uint32_t base = 0;  // UB offset of slot 0
  std::vector<SlotState> slots;
  std::deque<int> fifo;  // enqueued slots, oldest first
};

inline std::string bytes_text(uint64_t n) {
  return std::to_string(n) + " B";
}

}  // namespace emu

/// A tensor in the Unified Buffer: a typed view from a UB offset to the end of its buffer.
template <typename T>
class LocalTensor {
 public:
  LocalTensor() = default;

  /// The view `off` elements further on (same buffer).
  LocalTensor operator[](uint32_t off) const {
    LocalTensor t = *this;
    if (off > size_) {
      emu::report("LocalTensor::operator[]", "offset " + std::to_string(off) +
                                                 " is beyond the tensor's " +
                                                 std::to_string(size_) + " elements");
      off = size_;
    }
    t.data_ += off;
    t.offset_ += off * sizeof(T);
    t.size_ -= off;
    return t;
  }
  uint32_t GetSize() const { return size_; }
  T GetValue(uint32_t i) const {
    emu::scalar_access("LocalTensor::GetValue", offset_ + i * sizeof(T), sizeof(T), false);
    if (i < size_) return data_[i];
    emu::report("LocalTensor::GetValue",
                "index " + std::to_string(i) + " of " + std::to_string(size_) + " elements");
    return T();
  }
  void SetValue(uint32_t i, T v) const {
    emu::scalar_access("LocalTensor::SetValue", offset_ + i * sizeof(T), sizeof(T), true);
    if (i < size_)
      data_[i] = v;
    else
      emu::report("LocalTensor::SetValue",
                  "index " + std::to_string(i) + " of " + std::to_string(size_) + " elements");
  }
  /// The same bytes viewed as U.
  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t;
    t.emu_bind(reinterpret_cast<U*>(data_), offset_, size_ * sizeof(T) / sizeof(U), queue_, slot_);
    return t;
  }

  // The emulation's own accessors (not Ascend C API).
  void emu_bind(T* data, uint32_t offset, uint32_t size, emu::QueueState* q, int slot) {
    data_ = data, offset_ = offset, size_ = size, queue_ = q, slot_ = slot;
  }
  T* emu_data() const { return data_; }
  uint32_t emu_offset() const { return offset_; }
  bool emu_valid() const { return data_ != nullptr; }
  emu::QueueState* emu_queue() const { return queue_; }
  int emu_slot() const { return slot_; }

 private:
  T* data_ = nullptr;
  uint32_t offset_ = 0;  // bytes from the start of UB
  uint32_t size_ = 0;    // elements from here to the end of the buffer
  emu::QueueState* queue_ = nullptr;
  int slot_ = -1;
};

/// A tensor in global memory: a typed pointer and, when the kernel says it, its size.
template <typename T>
class GlobalTensor {
 public:
  void SetGlobalBuffer(__gm__ T* p, uint64_t size = 0) {
    data_ = emu::host_ptr(p), size_ = size, sized_ = size != 0;
  }
  GlobalTensor operator[](uint64_t off) const {
    GlobalTensor t = *this;
    t.data_ += off;
    if (sized_ && off > size_)
      emu::report("GlobalTensor::operator[]",
                  "offset " + std::to_string(off) + " is beyond " + std::to_string(size_));
    if (sized_) t.size_ = off > size_ ? 0 : size_ - off;
    return t;
  }
  uint64_t GetSize() const { return size_; }
  T GetValue(uint64_t i) const { return in_bounds("GlobalTensor::GetValue", i) ? data_[i] : T(); }
  void SetValue(uint64_t i, T v) const {
    if (in_bounds("GlobalTensor::SetValue", i)) data_[i] = v;
  }
  T* emu_data() const { return data_; }
  bool emu_sized() const { return sized_; }  // whether accesses are checked against GetSize()

 private:
  bool in_bounds(const char* call, uint64_t i) const {
    if (!sized_ || i < size_) return true;
    emu::report(call, "index " + std::to_string(i) + " of " + std::to_string(size_) + " elements");
    return false;
  }

  T* data_ = nullptr;
  uint64_t size_ = 0;
  bool sized_ = false;
};

/// A queue of `depth` tensors at position `pos`, its slots allocated by TPipe::InitBuffer.
template <TPosition pos, int32_t depth>
class TQue {
 public:
  /// A free slot as a tensor; reports when every slot is allocated.
  template <typename T>
  LocalTensor<T> AllocTensor();
  /// Hands an allocated tensor to the queue's consumer.
  template <typename T>
  void EnQue(const LocalTensor<T>& t);
  /// The oldest enqueued tensor; reports when none is enqueued.
  template <typename T>
  LocalTensor<T> DeQue();
  /// Returns an allocated or dequeued tensor's slot; reports a second free.
  template <typename T>
  void FreeTensor(const LocalTensor<T>& t);

  // The emulation's own binding (not Ascend C API).
  void emu_bind(TPipe* pipe, emu::QueueState* q) { pipe_ = pipe, q_ = q; }

 private:
  /// Slot `s` as a tensor.
  template <typename T>
  LocalTensor<T> slot_tensor(int s) const;
  /// The state of the slot `t` came from; nullptr (reported as `call`) when not this queue's.
  template <typename T>
  emu::SlotState* owned_slot(const char* call, const LocalTensor<T>& t) const;

  TPipe* pipe_ = nullptr;
  emu::QueueState* q_ = nullptr;
};

/// A scratch buffer at position `pos` (VECCALC): one region, no queue discipline.
template <TPosition pos>
class TBuf {
 public:
  /// The whole buffer, or its first `count` elements.
  template <typename T>
  LocalTensor<T> Get(uint32_t count = UINT32_MAX) const;
  void emu_bind(TPipe* pipe, emu::QueueState* q) { pipe_ = pipe, q_ = q; }

 private:
  TPipe* pipe_ = nullptr;
  emu::QueueState* q_ = nullptr;
};

/// One core's Unified Buffer, handed out by InitBuffer in 32-byte-aligned pieces. Checks the
/// capacity, the queue buffers per position and, when destroyed (the kernel's end), that every
/// queue slot was freed.
class TPipe {
 public:
  TPipe() : ub_(new uint8_t[AF_EMU_UB_BYTES + 64]) {}
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;
  ~TPipe() { Destroy(); }

  /// An event ID of `evt` free now, for an immediate SetFlag/WaitFlag pair (not kept).
  template <HardEvent evt>
  TEventID FetchEventID() {
    return static_cast<TEventID>(
        emu::hand_out_event_id(static_cast<int>(evt), false, "FetchEventID"));
  }
  TEventID FetchEventID(HardEvent evt) {
    return static_cast<TEventID>(
        emu::hand_out_event_id(static_cast<int>(evt), false, "FetchEventID"));
  }
  /// An event ID of `evt` kept until ReleaseEventID.
  template <HardEvent evt>
  TEventID AllocEventID() {
    return static_cast<TEventID>(
        emu::hand_out_event_id(static_cast<int>(evt), true, "AllocEventID"));
  }
  template <HardEvent evt>
  void ReleaseEventID(TEventID id) {
    if (!emu::event_ids().allocated.erase({static_cast<int>(evt), id}))
      emu::report("ReleaseEventID", "event ID " + std::to_string(id) + " is not allocated");
  }

  /// `num` slots of `len` bytes (rounded up to 32) for `que`: num = 2 double-buffers.
  template <TPosition pos, int32_t depth>
  bool InitBuffer(TQue<pos, depth>& que, uint8_t num, uint32_t len) {
    uint32_t& slots = buffers_[static_cast<int>(pos)];
    if (slots + num > MAX_BUFFERS_PER_POSITION)
      emu::report("InitBuffer(TQue)", std::to_string(slots + num) +
                                          " queue buffers at one TPosition (at most " +
                                          std::to_string(MAX_BUFFERS_PER_POSITION) + ")");
    emu::QueueState* q = carve("InitBuffer(TQue)", num, len);
    if (!q) return false;
    slots += num;
    q->pos = pos, q->depth = depth;
    que.emu_bind(this, q);
    return true;
  }
  /// `len` bytes (rounded up to 32) for scratch buffer `buf`.
  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
    emu::QueueState* q = carve("InitBuffer(TBuf)", 1, len);
    if (!q) return false;
    q->is_buf = true, q->pos = pos;
    buf.emu_bind(this, q);
    return true;
  }
  /// Ends the pipe: reports every queue slot still allocated, then forgets the queues.
  void Destroy() {
    for (const auto& q : queues_)
      for (size_t s = 0; s < q->slots.size(); ++s)
        if (!q->is_buf && q->slots[s] != emu::SlotState::Free)
          emu::report("TPipe::Destroy", "a tensor of a queue at UB offset " +
                                            std::to_string(q->base + s * q->len) +
                                            " was never freed (FreeTensor)");
    queues_.clear();
    used_ = 0;
    for (uint32_t& n : buffers_) n = 0;
  }

  // The emulation's own accounting (not Ascend C API).
  uint8_t* emu_ub() const {
    return ub_.get() + (64 - reinterpret_cast<uintptr_t>(ub_.get()) % 64) % 64;
  }
  uint32_t emu_used() const { return used_; }

 private:
  emu::QueueState* carve(const char* call, uint8_t num, uint32_t len) {
    uint32_t slot = (len + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
    uint64_t need = static_cast<uint64_t>(num) * slot;
    if (num == 0 || slot == 0) {
      emu::report(call, "needs at least one slot of at least one byte");
      return nullptr;
    }
    if (used_ + need > AF_EMU_UB_USABLE_BYTES) {
      emu::report(call, std::to_string(num) + " x " + emu::bytes_text(slot) + " after " +
                            emu::bytes_text(used_) + " in use exceeds the Unified Buffer (" +
                            emu::bytes_text(AF_EMU_UB_USABLE_BYTES) + " usable)");
      return nullptr;
    }
    auto q = std::make_unique<emu::QueueState>();
    q->len = slot, q->base = used_;
    q->slots.assign(num, emu::SlotState::Free);
    used_ += static_cast<uint32_t>(need);
    queues_.push_back(std::move(q));
    return queues_.back().get();
  }

  std::unique_ptr<uint8_t[]> ub_;
  uint32_t used_ = 0;
  uint32_t buffers_[static_cast<int>(TPosition::MAX) + 1] = {};
  std::vector<std::unique_ptr<emu::QueueState>> queues_;
};

template <TPosition pos, int32_t depth>
template <typename T>
LocalTensor<T> TQue<pos, depth>::slot_tensor(int s) const {
  LocalTensor<T> t;
  uint32_t off = q_->base + static_cast<uint32_t>(s) * q_->len;
  t.emu_bind(reinterpret_cast<T*>(pipe_->emu_ub() + off), off, q_->len / sizeof(T), q_, s);
  return t;
}

template <TPosition pos, int32_t depth>
template <typename T>
emu::SlotState* TQue<pos, depth>::owned_slot(const char* call, const LocalTensor<T>& t) const {
  if (q_ && t.emu_queue() == q_ && t.emu_slot() >= 0) return &q_->slots[t.emu_slot()];
  emu::report(call, "the tensor was not allocated from this queue");
  return nullptr;
}

template <TPosition pos, int32_t depth>
template <typename T>
LocalTensor<T> TQue<pos, depth>::AllocTensor() {
  if (!q_) {
    emu::report("TQue::AllocTensor", "the queue has no buffer (InitBuffer failed or missing)");
    return {};
  }
  for (size_t s = 0; s < q_->slots.size(); ++s) {
    if (q_->slots[s] != emu::SlotState::Free) continue;
    q_->slots[s] = emu::SlotState::Allocated;
    return slot_tensor<T>(static_cast<int>(s));
  }
  emu::report("TQue::AllocTensor", "all " + std::to_string(q_->slots.size()) +
                                       " buffers of the queue are allocated (not freed)");
  return {};
}

template <TPosition pos, int32_t depth>
template <typename T>
void TQue<pos, depth>::EnQue(const LocalTensor<T>& t) {
  emu::SlotState* s = owned_slot("TQue::EnQue", t);
  if (!s) return;
  if (*s != emu::SlotState::Allocated) {
    emu::report("TQue::EnQue", "the tensor is not freshly allocated (enqueued twice or freed)");
    return;
  }
  if (static_cast<int32_t>(q_->fifo.size()) >= depth)
    emu::report("TQue::EnQue",
                "more than the queue depth " + std::to_string(depth) + " tensors enqueued at once");
  *s = emu::SlotState::Enqueued;
  q_->fifo.push_back(t.emu_slot());
}

template <TPosition pos, int32_t depth>
template <typename T>
LocalTensor<T> TQue<pos, depth>::DeQue() {
  if (!q_ || q_->fifo.empty()) {
    emu::report("TQue::DeQue", "no tensor is enqueued (DeQue without EnQue)");
    return {};
  }
  int s = q_->fifo.front();
  q_->fifo.pop_front();
  q_->slots[s] = emu::SlotState::Dequeued;
  return slot_tensor<T>(s);
}

template <TPosition pos, int32_t depth>
template <typename T>
void TQue<pos, depth>::FreeTensor(const LocalTensor<T>& t) {
  emu::SlotState* s = owned_slot("TQue::FreeTensor", t);
  if (!s) return;
  if (*s == emu::SlotState::Free) {
    emu::report("TQue::FreeTensor", "the tensor is already free (freed twice)");
    return;
  }
  if (*s == emu::SlotState::Enqueued) {
    emu::report("TQue::FreeTensor", "the tensor is still enqueued (free it after DeQue)");
    return;
  }
  *s = emu::SlotState::Free;
}

template <TPosition pos>
template <typename T>
LocalTensor<T> TBuf<pos>::Get(uint32_t count) const {
  LocalTensor<T> t;
  if (!q_) {
    emu::report("TBuf::Get", "the buffer has no memory (InitBuffer failed or missing)");
    return t;
  }
  uint32_t have = q_->len / sizeof(T);
  if (count != UINT32_MAX && count > have)
    emu::report("TBuf::Get",
                std::to_string(count) + " elements from a buffer of " + std::to_string(have));
  t.emu_bind(reinterpret_cast<T*>(pipe_->emu_ub() + q_->base), q_->base,
             count == UINT32_MAX || count > have ? have : count, nullptr, -1);
  return t;
}

}  // namespace AscendC
