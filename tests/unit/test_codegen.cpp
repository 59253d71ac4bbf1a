// CPU emitter tests: hand-built AscGraphs are scheduled, emitted, compiled with g++ and the JIT's
// flags, loaded and run; results are compared with a scalar double-precision reference, and
// canaries after every output catch out-of-bounds writes.
#include <gtest/gtest.h>

#include <random>

#include "asc_test_util.h"

namespace af {
namespace {

using asc_test::AscBuilder;
using asc_test::close;
using asc_test::KernelLib;
using asc_test::schedule_and_emit;
using asc_test::test_target;

constexpr float kCanary = -12345.678f;

/// Deterministic inputs in [lo, hi] with a few special values mixed in.
std::vector<float> inputs(size_t n, float lo, float hi, unsigned seed, bool specials = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  if (specials) {
    const float sp[] = {0.0f, -0.0f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, 100.0f, -100.0f};
    for (size_t i = 0; i < n && i < 9; ++i) v[(i * 7919) % n] = sp[i];
  }
  return v;
}

/// A float buffer of n elements followed by `pad` canaries.
struct Out {
  explicit Out(size_t n, size_t pad = 64) : n(n), v(n + pad, kCanary) {}
  float* data() { return v.data(); }
  float operator[](size_t i) const { return v[i]; }
  void expect_canaries() const {
    for (size_t i = n; i < v.size(); ++i)
      ASSERT_EQ(std::memcmp(&v[i], &kCanary, 4), 0) << "write past the end at element " << i;
  }
  size_t n;
  std::vector<float> v;
};

float sigmoid_ref(double x) {
  return static_cast<float>(1.0 / (1.0 + std::exp(-x)));
}

TEST(CpuEmitter, SigmoidScaleBias3x1000) {
  AscBuilder b("ssb", {3, 1000});
  int x = b.contiguous_input();
  int m = b.op("mul", {b.op("sigmoid", {x}), b.scalar(1.5)});
  b.output(b.op("add", {m, b.scalar(-0.25)}));
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&b.g}, t), t);
  EXPECT_EQ(lib.source().kernels[0].num_inputs, 1);
  EXPECT_EQ(lib.source().kernels[0].num_outputs, 1);
  EXPECT_TRUE(lib.source().kernels[0].symbols.empty());
  auto in = inputs(3000, -30, 30, 1, true);
  Out out(3000);
  EXPECT_EQ(lib.run(0, {}, {in.data(), out.data()}), 1);  // 3000 elements: one block
  for (size_t i = 0; i < 3000; ++i) {
    double want = static_cast<double>(sigmoid_ref(in[i])) * 1.5 - 0.25;
    ASSERT_TRUE(close(out[i], want, 1e-5, 1e-6)) << i << ": x=" << in[i] << " got " << out[i];
  }
  out.expect_canaries();
}

TEST(CpuEmitter, RowBroadcastGammaBeta) {
  // x * gamma + beta with gamma, beta [1, N] (stride 0 on dim 0): N = 1000, 7 and 37.
  std::vector<AscBuilder> bs;
  const int64_t M = 5;
  const std::vector<int64_t> Ns = {1000, 7, 37};
  for (int64_t N : Ns) {
    AscBuilder b("gb" + std::to_string(N), {M, N});
    int x = b.contiguous_input();
    int g = b.input(DType::F32, {0, 1});
    int be = b.input(DType::F32, {0, 1});
    b.output(b.op("add", {b.op("mul", {x, b.broadcast(g)}), b.broadcast(be)}));
    bs.push_back(std::move(b));
  }
  auto t = test_target();
  std::vector<ascir::AscGraph*> gs;
  for (auto& b : bs) gs.push_back(&b.g);
  KernelLib lib(schedule_and_emit(gs, t), t);
  for (size_t k = 0; k < Ns.size(); ++k) {
    int64_t N = Ns[k];
    auto x = inputs(M * N, -3, 3, 2), g = inputs(N, -2, 2, 3), be = inputs(N, -1, 1, 4);
    Out out(M * N);
    lib.run(k, {}, {x.data(), g.data(), be.data(), out.data()});
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float want = x[i * N + j] * g[j] + be[j];
        ASSERT_EQ(out[i * N + j], want) << "N=" << N << " at " << i << "," << j;
      }
    out.expect_canaries();
  }
}

TEST(CpuEmitter, ColumnBroadcastAndScalarInput) {
  // out[i, j] = x[i, j] - y[i] (y: [M, 1], stride 0 on dim 1) + z (a [1, 1] tensor).
  const int64_t M = 9, N = 45;
  AscBuilder b("colb", {M, N});
  int x = b.contiguous_input();
  int y = b.input(DType::F32, {1, 0});
  int z = b.input(DType::F32, {0, 0});
  b.output(b.op("add", {b.op("sub", {x, b.broadcast(y)}), b.broadcast(z)}));
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&b.g}, t), t);
  auto xv = inputs(M * N, -3, 3, 5), yv = inputs(M, -2, 2, 6);
  float zv = 0.75f;
  Out out(M * N);
  lib.run(0, {}, {xv.data(), yv.data(), &zv, out.data()});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      ASSERT_EQ(out[i * N + j], (xv[i * N + j] - yv[i]) + zv) << i << "," << j;
  out.expect_canaries();
}

TEST(CpuEmitter, TransposedInputAndOutput) {
  const int64_t M = 13, N = 29;
  // k0: x is stored transposed (strides [1, M]); the output is row-major: x is gathered.
  AscBuilder a("tin", {M, N});
  int x = a.input(DType::F32, {1, M});
  int y = a.contiguous_input();
  a.output(a.op("add", {a.op("mul", {x, a.scalar(2.0)}), y}));
  // k1: row-major input, transposed output: the loop is reordered to the output's order.
  AscBuilder c("tout", {M, N});
  int u = c.contiguous_input();
  c.output(c.op("neg", {u}), DType::F32, {1, M});
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&a.g, &c.g}, t), t);
  auto xv = inputs(M * N, -3, 3, 7), yv = inputs(M * N, -3, 3, 8);
  Out o0(M * N), o1(M * N);
  lib.run(0, {}, {xv.data(), yv.data(), o0.data()});
  lib.run(1, {}, {yv.data(), o1.data()});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      ASSERT_EQ(o0[i * N + j], xv[j * M + i] * 2.0f + yv[i * N + j]) << i << "," << j;
      ASSERT_EQ(o1[j * M + i], -yv[i * N + j]) << i << "," << j;
    }
  o0.expect_canaries();
  o1.expect_canaries();
}

TEST(CpuEmitter, ShapesAndTails) {
  // (x + y) * x over shapes 1, 7, 1024, (2, 3, 5, 7), lanes - 1, lanes + 1 and 7919.
  auto t = test_target();
  int64_t lanes = schedule::vector_lanes(t);
  std::vector<std::vector<int64_t>> shapes = {{1},         {7},         {1024}, {2, 3, 5, 7},
                                              {lanes - 1}, {lanes + 1}, {7919}, {1, 1}};
  std::vector<AscBuilder> bs;
  for (size_t k = 0; k < shapes.size(); ++k) {
    std::vector<sym::Expr> sizes(shapes[k].begin(), shapes[k].end());
    AscBuilder b("sh" + std::to_string(k), sizes);
    int x = b.contiguous_input(), y = b.contiguous_input();
    b.output(b.op("mul", {b.op("add", {x, y}), x}));
    bs.push_back(std::move(b));
  }
  std::vector<ascir::AscGraph*> gs;
  for (auto& b : bs) gs.push_back(&b.g);
  KernelLib lib(schedule_and_emit(gs, t), t);
  for (size_t k = 0; k < shapes.size(); ++k) {
    int64_t n = 1;
    for (int64_t s : shapes[k]) n *= s;
    auto x = inputs(n, -4, 4, 10 + k), y = inputs(n, -4, 4, 20 + k);
    Out out(n);
    lib.run(k, {}, {x.data(), y.data(), out.data()});
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], (x[i] + y[i]) * x[i]) << "shape " << k;
    out.expect_canaries();
  }
}

TEST(CpuEmitter, SymbolicSizesOneKernelManyShapes) {
  sym::Expr s0 = sym::Expr::symbol("s0"), s1 = sym::Expr::symbol("s1");
  AscBuilder b("sym", {s0, s1});
  int x = b.contiguous_input();
  int g = b.input(DType::F32, {0, 1});
  b.output(b.op("mul", {x, b.broadcast(g)}));
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&b.g}, t), t);
  EXPECT_EQ(lib.source().kernels[0].symbols, (std::vector<std::string>{"s0", "s1"}));
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{
           {3, 1000}, {50, 7}, {1, 1}, {2, 33}, {0, 5}, {4, 0}}) {
    auto xv = inputs(M * N + 1, -3, 3, 30), gv = inputs(N + 1, -3, 3, 31);
    Out out(M * N);
    EXPECT_EQ(lib.run(0, {M, N}, {xv.data(), gv.data(), out.data()}), 1);
    for (int64_t i = 0; i < M * N; ++i) ASSERT_EQ(out[i], xv[i] * gv[i % N]) << M << "x" << N;
    out.expect_canaries();
  }
}

TEST(CpuEmitter, BlocksSplitLargeTensorsOnly) {
  // 1-D and a 2-D broadcast kernel; tiny tensors run as one block, large ones as `cores`.
  AscBuilder a("big1d", {sym::Expr::symbol("n")});
  int x = a.contiguous_input();
  a.output(a.op("relu", {x}));
  AscBuilder c("big2d", {sym::Expr::symbol("m"), sym::Expr::symbol("k")});
  int u = c.contiguous_input();
  int g = c.input(DType::F32, {0, 1});
  c.output(c.op("add", {u, c.broadcast(g)}));
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&a.g, &c.g}, t), t);
  for (int64_t n : {int64_t{1000}, int64_t{16000}, int64_t{100000}, int64_t{1234567}}) {
    auto xv = inputs(n, -1, 1, 40);
    for (int64_t cores : {1, 2, 3}) {
      for (int64_t ub : {int64_t{256 * 1024}, int64_t{4096}}) {
        Out out(n);
        int64_t bd = lib.run(0, {n}, {xv.data(), out.data()}, cores, ub);
        if (n < 32768) {
          EXPECT_EQ(bd, 1) << n;
        }
        if (n >= 100000) {
          EXPECT_EQ(bd, cores) << n;
        }
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], xv[i] > 0 ? xv[i] : 0.0f) << i;
        out.expect_canaries();
      }
    }
  }
  for (auto [M, K] : std::vector<std::pair<int64_t, int64_t>>{{300, 1000}, {4, 20000}, {1000, 3}}) {
    auto xv = inputs(M * K, -1, 1, 41), gv = inputs(K, -1, 1, 42);
    Out out(M * K);
    int64_t bd = lib.run(1, {K, M}, {xv.data(), gv.data(), out.data()}, 2, 64 * 1024);
    // Large tensors use both cores; [1000, 3] has only 3000 elements but 1000 short tiles, whose
    // per-tile cost the tiling model counts: it may split too.
    if (M * K >= 32768) EXPECT_EQ(bd, 2) << M << "x" << K;
    for (int64_t i = 0; i < M * K; ++i) ASSERT_EQ(out[i], xv[i] + gv[i % K]) << M << "x" << K;
    out.expect_canaries();
  }
}

TEST(CpuEmitter, LargeOutputsStreamAlignedOrNot) {
  // Outputs of >= 16 MiB take the non-temporal store path when a tile starts aligned; a
  // misaligned output falls back to ordinary stores. Both must give the same results.
  const int64_t n = (int64_t{1} << 22) + 3;
  AscBuilder b("big", {sym::Expr::symbol("n")});
  int x = b.contiguous_input();
  int y = b.op("mul", {b.op("add", {x, b.scalar(0.5)}), x});
  b.output(y);
  b.output(b.cast(y, DType::BF16), DType::BF16);
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&b.g}, t), t);
  EXPECT_NE(lib.source().code.find("af_stream_f32("), std::string::npos);
  EXPECT_NE(lib.source().code.find("af_stream_bf16("), std::string::npos);
  auto xv = inputs(n, -8, 8, 70);
  for (int shift : {0, 1}) {
    std::vector<float> o0(n + 64 + 16, kCanary);
    std::vector<uint16_t> o1(n + 64 + 32, 0xabcd);
    // 64-byte aligned starts (+shift elements to break the alignment).
    float* p0 = o0.data() + ((64 - reinterpret_cast<uintptr_t>(o0.data()) % 64) % 64) / 4 + shift;
    uint16_t* p1 = o1.data() + ((64 - reinterpret_cast<uintptr_t>(o1.data()) % 64) % 64) / 2;
    lib.run(0, {n}, {xv.data(), p0, p1}, 2);
    for (int64_t i = 0; i < n; ++i) {
      float want = (xv[i] + 0.5f) * xv[i];
      ASSERT_EQ(p0[i], want) << i;
      uint32_t w;
      std::memcpy(&w, &want, 4);
      ASSERT_EQ(p1[i], static_cast<uint16_t>((w + 0x7fffu + ((w >> 16) & 1u)) >> 16)) << i;
    }
    ASSERT_EQ(p0[n], kCanary);
    ASSERT_EQ(p1[n], 0xabcd);
  }
}

TEST(CpuEmitter, InputOffset) {
  // A view that starts 5 elements into its storage, and an output written with an offset.
  AscBuilder b("offs", {4, 10});
  int x = b.input(DType::F32, {10, 1}, 5);
  b.output(b.op("exp", {x}));
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&b.g}, t), t);
  auto xv = inputs(45, -3, 3, 50);
  Out out(40);
  lib.run(0, {}, {xv.data(), out.data()});
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(close(out[i], std::exp(double(xv[i + 5])), 2e-6, 0));
  out.expect_canaries();
}

TEST(CpuEmitter, MultipleOutputsBoolAndWhere) {
  // out0 = where(x > y, x, y * 2) (f32), out1 = x > y (bool), out2 = isnan(x) | (x > y).
  AscBuilder b("multi", {37});
  int x = b.contiguous_input(), y = b.contiguous_input();
  int gt = b.op("gt", {x, y}, DType::Bool);
  b.output(b.op("where", {gt, x, b.op("mul", {y, b.scalar(2.0)})}));
  b.output(gt, DType::Bool);
  b.output(b.op("logical_or", {b.op("isnan", {x}, DType::Bool), gt}, DType::Bool), DType::Bool);
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&b.g}, t), t);
  auto xv = inputs(37, -2, 2, 60, true), yv = inputs(37, -2, 2, 61);
  Out o0(37);
  std::vector<uint8_t> o1(37 + 64, 0xab), o2(37 + 64, 0xab);
  lib.run(0, {}, {xv.data(), yv.data(), o0.data(), o1.data(), o2.data()});
  for (int i = 0; i < 37; ++i) {
    bool g = xv[i] > yv[i];
    float want = g ? xv[i] : yv[i] * 2.0f;
    ASSERT_TRUE(std::memcmp(&o0.v[i], &want, 4) == 0 || (std::isnan(want) && std::isnan(o0[i])));
    ASSERT_EQ(o1[i], g ? 1 : 0) << i;
    ASSERT_EQ(o2[i], (g || std::isnan(xv[i])) ? 1 : 0) << i;
  }
  for (size_t i = 37; i < o1.size(); ++i) ASSERT_TRUE(o1[i] == 0xab && o2[i] == 0xab);
  o0.expect_canaries();
}

TEST(CpuEmitter, KernelsWithTheSameCodeCompileOnce) {
  // Two layers' kernels differ only in names: the second forwards to the first; a kernel with
  // another constant keeps its own code. Each still computes its own result.
  auto build = [](const char* name, double scale) {
    AscBuilder b(name, {4, 100});
    int x = b.contiguous_input();
    b.output(b.op("mul", {b.op("sigmoid", {x}), b.scalar(scale)}));
    return b;
  };
  AscBuilder a = build("layer0", 1.5), c = build("layer1", 1.5), d = build("other", 2.5);
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&a.g, &c.g, &d.g}, t), t);
  const std::string& code = lib.source().code;
  const std::string second = lib.source().kernels[1].name, first = lib.source().kernels[0].name;
  EXPECT_NE(code.find("---- kernel " + second + ": the code of " + first + " ----"),
            std::string::npos)
      << code;
  EXPECT_EQ(code.find(": the code of", code.find("---- kernel " + lib.source().kernels[2].name)),
            std::string::npos);
  auto in = inputs(400, -5, 5, 3);
  for (size_t k = 0; k < 3; ++k) {
    Out out(400);
    lib.run(k, {}, {in.data(), out.data()});
    const double scale = k == 2 ? 2.5 : 1.5;
    for (size_t i = 0; i < 400; ++i)
      ASSERT_TRUE(close(out[i], sigmoid_ref(in[i]) * scale, 1e-5, 1e-6)) << k << " " << i;
    out.expect_canaries();
  }
}

TEST(CpuEmitter, ErrorsNameTheProblem) {
  AscBuilder b("bad", {8});
  b.output(b.op("exp", {b.contiguous_input(DType::I32)}), DType::I32);
  auto t = test_target();
  schedule::schedule_kernel(b.g, t);
  try {
    codegen::emit_cpu_source({&b.g}, t);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("i32"), std::string::npos) << e.what();
  }
  AscBuilder u("unscheduled", {8});
  u.output(u.op("exp", {u.contiguous_input()}));
  EXPECT_THROW(codegen::emit_cpu_source({&u.g}, t), CompileError);
}

TEST(CpuEmitter, CompileFlags) {
  target::Target t = target::Target().with_isa(target::Isa::Avx2);
  auto f = codegen::cpu_compile_flags(t);
  auto has = [&](const std::string& s) { return std::find(f.begin(), f.end(), s) != f.end(); };
  EXPECT_TRUE(has("-O3") && has("-ffp-contract=off") && has("-fno-fast-math") && has("-mavx2") &&
              has("-mfma") && has("-mf16c") && has("-shared") && has("-fPIC"));
  EXPECT_FALSE(has("-ffast-math"));
  t = t.with_isa(target::Isa::Avx512);
  f = codegen::cpu_compile_flags(t);
  EXPECT_TRUE(has("-mavx512f") && has("-mavx512bw") && has("-mavx512vl") && has("-mavx512dq"));
  EXPECT_FALSE(has("-mavx512bf16"));
  t.avx512_bf16 = true;
  f = codegen::cpu_compile_flags(t);
  EXPECT_TRUE(has("-mavx512bf16"));
  t = t.with_isa(target::Isa::Scalar);
  f = codegen::cpu_compile_flags(t);
  EXPECT_FALSE(has("-mavx2"));
  EXPECT_EQ(codegen::cpu_link_libs(t), std::vector<std::string>{"sleef"});
}

}  // namespace
}  // namespace af
