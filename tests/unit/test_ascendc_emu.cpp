// Unit tests of ascendc_emu (src/runtime/include/ascendc_emu): a well-formed double-buffered
// kernel runs over its blocks with no report and the right numbers; each device rule the
// emulation enforces is reported, naming the kernel, block, call and rule, when broken.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "ascendc_emu/kernel_operator.h"

using namespace AscendC;

namespace {

/// The violations of running body as kernel "k", block 0 of 1.
template <typename Body>
std::vector<std::string> violations_of(Body&& body) {
  emu::take_violations();
  emu::run_blocks("k", 1, [&](int64_t) { body(); });
  return emu::take_violations();
}

bool any_contains(const std::vector<std::string>& lines, const std::string& words) {
  for (const auto& l : lines)
    if (l.find(words) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

/// y = x * 2 + 1 over n floats: blocks split the rows of `tile` elements, tiles double-buffered,
/// the last tile of any length moved by DataCopyPad.
void affine_kernel(GM_ADDR x, GM_ADDR y, int64_t n, int64_t tile) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> out;
  pipe.InitBuffer(in, 2, tile * sizeof(float));
  pipe.InitBuffer(out, 2, tile * sizeof(float));
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), n);
  gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), n);
  int64_t tiles = (n + tile - 1) / tile;
  for (int64_t t = GetBlockIdx(); t < tiles; t += GetBlockNum()) {
    int64_t start = t * tile, len = std::min(tile, n - start);
    LocalTensor<float> a = in.AllocTensor<float>();
    if (len * sizeof(float) % ONE_BLK_SIZE == 0) {
      DataCopy(a, gx[start], len);
    } else {
      DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
      DataCopyPad(a, gx[start], p, DataCopyPadExtParams<float>{true, 0, 0, 0.0f});
    }
    in.EnQue(a);
    LocalTensor<float> b = in.DeQue<float>();
    LocalTensor<float> c = out.AllocTensor<float>();
    int32_t aligned = static_cast<int32_t>((len + 7) / 8 * 8);  // whole blocks, padding included
    Muls(c, b, 2.0f, aligned);
    Adds(c, c, 1.0f, aligned);
    in.FreeTensor(b);
    out.EnQue(c);
    LocalTensor<float> d = out.DeQue<float>();
    DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
    DataCopyPad(gy[start], d, p);
    out.FreeTensor(d);
  }
}

TEST(AscendcEmu, DoubleBufferedKernelRunsClean) {
  for (int64_t n : {1, 8, 77, 1000, 4096}) {
    std::vector<float> x(n), y(n, -7.0f);
    std::iota(x.begin(), x.end(), -3.0f);
    emu::take_violations();
    emu::run_blocks("affine", 4, [&](int64_t) {
      affine_kernel(reinterpret_cast<GM_ADDR>(x.data()), reinterpret_cast<GM_ADDR>(y.data()), n,
                    64);
    });
    auto v = emu::take_violations();
    EXPECT_TRUE(v.empty()) << joined(v);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * 2 + 1) << "n " << n << " i " << i;
  }
}

TEST(AscendcEmu, ReportsAnUnalignedDataCopy) {
  std::vector<float> x(16, 1.0f);
  auto v = violations_of([&] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 64);
    GlobalTensor<float> g;
    g.SetGlobalBuffer(x.data(), 16);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, g, 7);  // 28 B
    q.FreeTensor(t);
  });
  ASSERT_EQ(v.size(), 1u) << joined(v);
  EXPECT_EQ(v[0],
            "kernel k block 0: DataCopy(GM->UB): 28 B is not a multiple of 32 B (the device "
            "moves only whole blocks; use DataCopyPad)");
}

TEST(AscendcEmu, KeepsTheFirstThousandReports) {
  auto v = violations_of([] {
    for (int i = 0; i < 1500; ++i) emu::report("Call", "rule");
  });
  ASSERT_EQ(v.size(), 1001u);
  EXPECT_EQ(v.back(), "... and 500 more reports");
}

TEST(AscendcEmu, ReportsAUbOverflow) {
  auto v = violations_of([] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    TBuf<TPosition::VECCALC> b;
    EXPECT_TRUE(pipe.InitBuffer(b, 100000));
    EXPECT_FALSE(pipe.InitBuffer(q, 2, 50000));  // 100000 + 2 x 50016 > 184 KB
  });
  EXPECT_TRUE(any_contains(v,
                           "InitBuffer(TQue): 2 x 50016 B after 100000 B in use exceeds the "
                           "Unified Buffer (188416 B usable)"))
      << joined(v);
}

TEST(AscendcEmu, ReportsQueueDiscipline) {
  auto dequeue_first = violations_of([] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 64);
    LocalTensor<float> t = q.DeQue<float>();
    (void)t;
  });
  EXPECT_TRUE(
      any_contains(dequeue_first, "TQue::DeQue: no tensor is enqueued (DeQue without EnQue)"))
      << joined(dequeue_first);

  auto twice = violations_of([] {
    TPipe pipe;
    TQue<TPosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 2, 64);
    LocalTensor<float> t = q.AllocTensor<float>();
    q.FreeTensor(t);
    q.FreeTensor(t);
  });
  EXPECT_TRUE(any_contains(twice, "TQue::FreeTensor: the tensor is already free (freed twice)"))
      << joined(twice);

  auto never = violations_of([] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 64);
    (void)q.AllocTensor<float>();
  });
  EXPECT_TRUE(any_contains(never, "was never freed")) << joined(never);

  auto too_many = violations_of([] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 64);
    LocalTensor<float> a = q.AllocTensor<float>(), b = q.AllocTensor<float>();
    LocalTensor<float> c = q.AllocTensor<float>();
    EXPECT_FALSE(c.emu_valid());
    q.FreeTensor(a);
    q.FreeTensor(b);
  });
  EXPECT_TRUE(any_contains(too_many, "all 2 buffers of the queue are allocated"))
      << joined(too_many);
}

TEST(AscendcEmu, ReportsMoreThanEightQueueBuffersAtOnePosition) {
  auto v = violations_of([] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q[3];
    for (auto& one : q) pipe.InitBuffer(one, 3, 32);
  });
  EXPECT_TRUE(any_contains(v, "InitBuffer(TQue): 9 queue buffers at one TPosition (at most 8)"))
      << joined(v);
}

TEST(AscendcEmu, ReportsScalarAccessWithoutSync) {
  auto v = violations_of([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 512);
    LocalTensor<float> x = b.Get<float>(64), out = b.Get<float>()[64], work = b.Get<float>()[72];
    x.SetValue(5, 1.0f);
    Exp(x, x, 64);                // reads what SetValue wrote: no S_V
    ReduceSum(out, x, work, 64);  // so does this
    (void)out.GetValue(0);        // reads what ReduceSum wrote: no V_S
    const TEventID ev = pipe.FetchEventID<HardEvent::V_S>();
    SetFlag<HardEvent::V_S>(ev);
    WaitFlag<HardEvent::V_S>(ev);
    (void)out.GetValue(0);  // fine
    const TEventID sv = pipe.FetchEventID(HardEvent::S_V);
    WaitFlag<HardEvent::S_V>(sv);  // never set
    const TEventID kept = pipe.AllocEventID<HardEvent::V_S>();
    SetFlag<HardEvent::V_S>(kept);  // never waited for
    pipe.ReleaseEventID<HardEvent::V_S>(kept);
  });
  ASSERT_EQ(v.size(), 5u) << joined(v);
  EXPECT_NE(v[0].find("Exp: reads UB offset 20 the scalar unit wrote (SetValue) without "
                      "SetFlag/WaitFlag<HardEvent::S_V>"),
            std::string::npos);
  EXPECT_NE(v[1].find("ReduceSum: reads UB offset 20 the scalar unit"), std::string::npos);
  EXPECT_NE(v[2].find("LocalTensor::GetValue: UB offset 256 was written by a vector instruction "
                      "without SetFlag/WaitFlag<HardEvent::V_S>"),
            std::string::npos);
  EXPECT_NE(v[3].find("WaitFlag: event id 0 was not set"), std::string::npos);
  EXPECT_NE(v[4].find("SetFlag: event 3 id 0 was set and never waited for"), std::string::npos);
}

TEST(AscendcEmu, ReportsOperandRules) {
  auto v = violations_of([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 256);
    LocalTensor<float> t = b.Get<float>();  // 64 floats
    Adds(t[8], t, 1.0f, 16);                // [32, 96) vs [0, 64): partial overlap
    Exp(t, t, 65);                          // beyond the tensor
    Exp(t[3], t[3], 4);                     // UB offset 12: unaligned
    Exp(t, t, 64);                          // in place: fine
  });
  ASSERT_EQ(v.size(), 3u) << joined(v);
  EXPECT_NE(v[0].find("Adds: destination UB [32, 96) partly overlaps a source [0, 64)"),
            std::string::npos);
  EXPECT_NE(v[1].find("Exp: destination: 65 elements, the tensor holds 64"), std::string::npos);
  EXPECT_NE(v[2].find("Exp: destination starts at UB offset 12, not 32-byte aligned"),
            std::string::npos);
}

TEST(AscendcEmu, ReportsTheAdvancedMathCallsRules) {
  auto v = violations_of([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 2048);
    LocalTensor<float> t = b.Get<float>();  // 512 floats
    LocalTensor<uint8_t> tmp = t[256].ReinterpretCast<uint8_t>();
    Tanh(t[64], t, tmp, 64);  // fine: 1,024 temporary bytes
    Tanh(t, t, tmp, 64);      // in place: Tanh needs source and destination apart
    Erf(t[64], t, t[448].ReinterpretCast<uint8_t>(), 64);  // 256 temporary bytes, 768 needed
    Sin(t[128], t, t[64].ReinterpretCast<uint8_t>(), 64);  // temporary bytes over the dst
    Power(t[64], t, t[128], tmp, 64);  // tensor-tensor: 1,280 temporary bytes needed
  });
  ASSERT_EQ(v.size(), 4u) << joined(v);
  EXPECT_NE(v[0].find("Tanh: source and destination overlap"), std::string::npos) << v[0];
  EXPECT_NE(v[1].find("Erf: temporary buffer: 768 elements, the tensor holds 256"),
            std::string::npos)
      << v[1];
  EXPECT_NE(v[2].find("Sin: temporary buffer and destination overlap"), std::string::npos) << v[2];
  EXPECT_NE(v[3].find("Power: temporary buffer: 1280 elements, the tensor holds 1024"),
            std::string::npos)
      << v[3];
}

TEST(AscendcEmu, GathersByByteOffsetsAndReportsOnesOutside) {
  std::vector<float> got(8);
  auto v = violations_of([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<float> src = b.Get<float>();  // 64 floats: element i at byte 32 i (i < 8)
    LocalTensor<int32_t> offs = b.Get<int32_t>()[64];
    LocalTensor<float> dst = b.Get<float>()[128];
    for (uint32_t i = 0; i < 8; ++i) src.SetValue(i * 8, 10.f + i);
    {
      const TEventID e = pipe.FetchEventID<HardEvent::S_V>();
      SetFlag<HardEvent::S_V>(e);
      WaitFlag<HardEvent::S_V>(e);
    }
    CreateVecIndex(offs, 0, 8);
    Muls(offs, offs, 32, 8);
    Gather(dst, src, offs.ReinterpretCast<uint32_t>(), 0, 8);  // packs one per 32-byte block
    {
      const TEventID e = pipe.FetchEventID<HardEvent::V_S>();
      SetFlag<HardEvent::V_S>(e);
      WaitFlag<HardEvent::V_S>(e);
    }
    for (uint32_t i = 0; i < 8; ++i) got[i] = dst.GetValue(i);
    Gather(dst, src, offs.ReinterpretCast<uint32_t>(), 2, 8);    // not a 4-byte element
    Gather(dst, src, offs.ReinterpretCast<uint32_t>(), 800, 8);  // the last beyond the source
  });
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(got[i], 10.f + i);
  ASSERT_EQ(v.size(), 2u) << joined(v);
  EXPECT_NE(v[0].find("Gather: offset 2 of element 0 is not a 4-byte element"), std::string::npos)
      << v[0];
  EXPECT_NE(v[1].find("Gather: offset 1024 of element 7"), std::string::npos) << v[1];
}

TEST(AscendcEmu, BrcbSpreadsAnElementToABlock) {
  std::vector<float> got(16 * 8);
  auto v = violations_of([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 64 + 16 * 32);
    LocalTensor<float> src = b.Get<float>(), dst = b.Get<float>()[16];
    CreateVecIndex(src, 0.f, 16);
    Brcb(dst, src, 2, BrcbRepeatParams{1, 8});  // 2 repeats of 8 elements: 16 blocks
    {
      const TEventID e = pipe.FetchEventID<HardEvent::V_S>();
      SetFlag<HardEvent::V_S>(e);
      WaitFlag<HardEvent::V_S>(e);
    }
    for (uint32_t i = 0; i < 128; ++i) got[i] = dst.GetValue(i);
    Brcb(dst, src, 2, BrcbRepeatParams{0, 8});  // dstBlkStride 0
    Brcb(dst, src, 3, BrcbRepeatParams{1, 8});  // 24 blocks: beyond the buffer
  });
  for (uint32_t i = 0; i < 128; ++i) ASSERT_EQ(got[i], static_cast<float>(i / 8)) << i;
  ASSERT_EQ(v.size(), 2u) << joined(v);
  EXPECT_NE(v[0].find("Brcb: dstBlkStride 0 is undefined"), std::string::npos) << v[0];
  EXPECT_NE(v[1].find("Brcb: destination: 192 elements, the tensor holds 128"), std::string::npos)
      << v[1];
}

TEST(AscendcEmu, ReportsACopyBeyondItsGlobalBuffer) {
  std::vector<float> x(16, 1.0f);
  auto v = violations_of([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 128);
    GlobalTensor<float> g;
    g.SetGlobalBuffer(x.data(), 16);
    DataCopy(b.Get<float>(), g[8], 16);  // 8 left
    DataCopy(b.Get<float>(), g[16], 8);  // none left
    EXPECT_EQ(g.GetValue(16), 0.0f);     // reported, not read
  });
  ASSERT_EQ(v.size(), 3u) << joined(v);
  EXPECT_NE(v[2].find("GlobalTensor::GetValue: index 16 of 16 elements"), std::string::npos);
  EXPECT_NE(v[0].find("source: 16 elements beyond its global buffer of 8"), std::string::npos);
  EXPECT_NE(v[1].find("source: 8 elements beyond its global buffer of 0"), std::string::npos);
}

TEST(AscendcEmu, ComputesCastsCompareSelectAndReductions) {
  std::vector<std::string> v = violations_of([] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> f, h, m, w;
    pipe.InitBuffer(f, 64 * 4 * 2);
    pipe.InitBuffer(h, 64 * 2);
    pipe.InitBuffer(m, 32);
    pipe.InitBuffer(w, 64);
    LocalTensor<float> x = f.Get<float>(64), y = f.Get<float>()[64];
    LocalTensor<bfloat16_t> xb = h.Get<bfloat16_t>();
    for (int i = 0; i < 64; ++i) x.SetValue(i, 1.0f + i / 512.0f);
    {
      const TEventID e = pipe.FetchEventID<HardEvent::S_V>();
      SetFlag<HardEvent::S_V>(e);
      WaitFlag<HardEvent::S_V>(e);
    }
    Cast(xb, x, RoundMode::CAST_RINT, 64);
    {
      const TEventID e = pipe.FetchEventID<HardEvent::V_S>();
      SetFlag<HardEvent::V_S>(e);
      WaitFlag<HardEvent::V_S>(e);
    }
    EXPECT_EQ(float(xb.GetValue(1)), 1.0f);        // 1 + 2^-9: a quarter ulp, down
    EXPECT_EQ(float(xb.GetValue(2)), 1.0f);        // 1 + 2^-8: a tie, to even
    EXPECT_EQ(float(xb.GetValue(3)), 1.0078125f);  // 1 + 3 x 2^-9: up
    Cast(y, xb, RoundMode::CAST_NONE, 64);
    LocalTensor<uint8_t> mask = m.Get<uint8_t>();
    Compare(mask, x, y, CMPMODE::EQ, 64);
    Select(y, mask, x, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
    {
      const TEventID e = pipe.FetchEventID<HardEvent::V_S>();
      SetFlag<HardEvent::V_S>(e);
      WaitFlag<HardEvent::V_S>(e);
    }
    EXPECT_EQ(y.GetValue(0), 1.0f);   // exact in bf16: kept
    EXPECT_EQ(y.GetValue(1), -1.0f);  // rounded: replaced
    LocalTensor<float> out = w.Get<float>(8), work = w.Get<float>()[8];
    ReduceSum(out, x, work, 64);
    {
      const TEventID e = pipe.FetchEventID<HardEvent::V_S>();
      SetFlag<HardEvent::V_S>(e);
      WaitFlag<HardEvent::V_S>(e);
    }
    EXPECT_FLOAT_EQ(out.GetValue(0), 64.0f + 63.0f * 64.0f / 2 / 512.0f);
    ReduceMax(out, x, work, 64);
    {
      const TEventID e = pipe.FetchEventID<HardEvent::V_S>();
      SetFlag<HardEvent::V_S>(e);
      WaitFlag<HardEvent::V_S>(e);
    }
    EXPECT_EQ(out.GetValue(0), 1.0f + 63 / 512.0f);
    Cast(xb, x, RoundMode::CAST_NONE, 64);  // float -> bfloat16_t has no CAST_NONE on A2
  });
  ASSERT_EQ(v.size(), 1u) << joined(v);
  EXPECT_NE(v[0].find("Cast: round mode 0 for this type pair is not an Atlas A2 Cast"),
            std::string::npos);
  EXPECT_EQ(emu::f32_to_f16(65520.0f), 0x7c00);  // rounds to inf
  EXPECT_EQ(emu::f32_to_f16(5.96e-8f), 0x0001);  // the smallest subnormal
  EXPECT_EQ(emu::f16_to_f32(0x3c01), 1.0009765625f);
}

TEST(AscendcEmu, DataCopyPadHonoursStridesAndPadding) {
  // Two rows of 3 floats out of a 2 x 5 GM matrix: GM gap 8 B, UB rows 32 B apart, padded.
  std::vector<float> gm = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, back(10, 0.0f);
  auto v = violations_of([&] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 64);
    GlobalTensor<float> g, o;
    g.SetGlobalBuffer(gm.data(), 10);
    o.SetGlobalBuffer(back.data(), 10);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopyPad(t, g, {2, 12, 8, 0, 0}, DataCopyPadExtParams<float>{true, 0, 5, -1.0f});
    EXPECT_EQ(t.GetValue(0), 1.0f);
    EXPECT_EQ(t.GetValue(3), -1.0f);
    EXPECT_EQ(t.GetValue(8), 6.0f);
    EXPECT_EQ(t.GetValue(10), 8.0f);
    DataCopyPad(o, t, {2, 12, 0, 8, 0});
    // No padding asked: the pad repeats each block's first element (DataCopyPad's docs), isPad
    // or not.
    DataCopyPad(t, g, {2, 12, 8, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    EXPECT_EQ(t.GetValue(3), 1.0f);
    EXPECT_EQ(t.GetValue(7), 1.0f);
    EXPECT_EQ(t.GetValue(11), 6.0f);
    q.FreeTensor(t);
  });
  EXPECT_TRUE(v.empty()) << joined(v);
  EXPECT_EQ(back, (std::vector<float>{1, 2, 3, 0, 0, 6, 7, 8, 0, 0}));
}

}  // namespace

namespace {

TEST(AscendcEmu, ReportsAnEventIdNotFromThePipe) {
  auto v = violations_of([] {
    TPipe pipe;
    SetFlag<HardEvent::V_S>(0);  // a literal: the pipe may have handed it to a queue
    WaitFlag<HardEvent::V_S>(0);
  });
  ASSERT_EQ(v.size(), 2u) << joined(v);
  EXPECT_NE(v[0].find("SetFlag: event ID 0 did not come from the pipe"), std::string::npos) << v[0];
}

TEST(AscendcEmu, AdvancedMathWritesAllOfItsTemporaryBuffer) {
  // Erf splits all of its temporary buffer's GetSize() between its intermediates (CANN's
  // erf_common_impl.h): a sub-tensor of a TBuf runs to the TBuf's end, so a tile after it is
  // written over; a TBuf of its own is not.
  std::vector<float> after_carved, after_own;
  auto v = violations_of([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> calc, own;
    pipe.InitBuffer(calc, 5 * 256 * 4);
    pipe.InitBuffer(own, 3 * 256 * 4);
    LocalTensor<float> x = calc.Get<float>(), d = calc.Get<float>()[256];
    LocalTensor<float> kept = calc.Get<float>()[4 * 256];
    Duplicate(x, 0.5f, 256);
    Duplicate(kept, 3.0f, 256);
    Erf(d, x, calc.Get<float>()[2 * 256].ReinterpretCast<uint8_t>(), 256);
    after_carved.assign(kept.emu_data(), kept.emu_data() + 256);
    Duplicate(kept, 3.0f, 256);
    Erf(d, x, own.Get<uint8_t>(), 256);
    after_own.assign(kept.emu_data(), kept.emu_data() + 256);
    EXPECT_FLOAT_EQ(d.emu_data()[0], std::erf(0.5f));
  });
  EXPECT_TRUE(v.empty()) << joined(v);
  EXPECT_TRUE(std::isnan(after_carved[0]) && std::isnan(after_carved[255]));
  EXPECT_EQ(after_own[0], 3.0f);
}

TEST(AscendcEmu, ReciprocalAndRsqrtAreApproximateAndUndefinedAtZero) {
  // Their API docs give float results outside 1e-4 relative error and send high precision to
  // Div and Sqrt; the emulation computes them 2^-12 off, and NaN where they are undefined.
  std::vector<float> r, q;
  auto v = violations_of([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4 * 64 * 4);
    LocalTensor<float> x = b.Get<float>(), y = b.Get<float>()[64], z = b.Get<float>()[128];
    Duplicate(x, 4.0f, 64);
    Duplicate(z, 0.0f, 64);
    Reciprocal(y, x, 64);
    r = {y.emu_data()[0]};
    Rsqrt(y, x, 64);
    r.push_back(y.emu_data()[0]);
    Reciprocal(y, z, 64);
    q = {y.emu_data()[0]};
    Rsqrt(y, z, 64);
    q.push_back(y.emu_data()[0]);
  });
  EXPECT_TRUE(v.empty()) << joined(v);
  EXPECT_NE(r[0], 0.25f);
  EXPECT_NEAR(r[0], 0.25f, 0.25f * 1e-3f);
  EXPECT_GT(std::fabs(r[0] - 0.25f), 0.25f * 1e-4f);
  EXPECT_NEAR(r[1], 0.5f, 0.5f * 1e-3f);
  EXPECT_TRUE(std::isnan(q[0]) && std::isnan(q[1]));
}

}  // namespace
