// ascir::Builder: the dtype rule, broadcasting, CSE, the finishing cut and its reasons.
#include <gtest/gtest.h>

#include "ascir/builder.h"
#include "ascir/parser.h"
#include "ascir/printer.h"
#include "support/error.h"

namespace af::ascir {
namespace {

// y[i, j] = sigmoid(x[i, j] (bf16) + b[j]) * 2, stored as bf16: the bf16 load widens to f32,
// b broadcasts along z0, the constant stays a scalar, the store rounds; the repeated add is
// one node and the unused load is cut.
TEST(AscirBuilder, ElementwiseKernel) {
  Builder b("k");
  b.add_axis(sym::Expr::symbol("s0"));
  b.add_axis(64);
  int x = b.load(b.data("x", DType::BF16, {64, 1}, 0));
  int bias = b.load(b.data("b", DType::F32, {0, 1}, 0));
  int unused = b.load(b.data("u", DType::F32, {64, 1}, 0));
  (void)unused;
  int sum = b.compute("add", {x, bias});
  EXPECT_EQ(b.compute("add", {x, bias}), sum);  // CSE
  EXPECT_EQ(b.node(sum).out.dtype, DType::F32);
  EXPECT_EQ(b.varies(bias), (std::vector<bool>{false, true}));
  int y = b.compute("mul", {b.compute("sigmoid", {sum}), b.scalar(int64_t{2}, DType::I64)});
  b.store("y", y, DType::BF16, {64, 1}, 0);
  std::vector<std::string> inputs;
  AscGraph g = b.finish(&inputs);
  EXPECT_EQ(inputs, (std::vector<std::string>{"x", "b"}));
  EXPECT_EQ(print(g), R"(ascgraph @k {
  axis z0 : s0
  axis z1 : 64
  %x.data = data() {index = 0} sched [z0, z1] : bf16 [z0, z1] repeats [s0, 64] strides [64, 1]
  %x.load = load(%x.data) sched [z0, z1] : bf16 [z0, z1] repeats [s0, 64] strides [64, 1]
  %b.data = data() {index = 1} sched [z0, z1] : f32 [z0, z1] repeats [1, 64] strides [0, 1]
  %b.load = load(%b.data) sched [z0, z1] : f32 [z0, z1] repeats [1, 64] strides [0, 1]
  %x.load.f32 = cast(%x.load) sched [z0, z1] : f32 [z0, z1] repeats [s0, 64] strides [64, 1]
  %b.load.b = broadcast(%b.load) sched [z0, z1] : f32 [z0, z1] repeats [s0, 64] strides [64, 1]
  %add = add(%x.load.f32, %b.load.b) sched [z0, z1] : f32 [z0, z1] repeats [s0, 64] strides [64, 1]
  %sigmoid = sigmoid(%add) sched [z0, z1] : f32 [z0, z1] repeats [s0, 64] strides [64, 1]
  %c.2 = scalar() {value = 2.0} sched [z0, z1] : f32 [] repeats [] strides []
  %mul = mul(%sigmoid, %c.2) sched [z0, z1] : f32 [z0, z1] repeats [s0, 64] strides [64, 1]
  %y.bf16 = cast(%mul) sched [z0, z1] : bf16 [z0, z1] repeats [s0, 64] strides [64, 1]
  %y.store = store(%y.bf16) sched [z0, z1] : bf16 [z0, z1] repeats [s0, 64] strides [64, 1]
  %y.out = output(%y.store) {index = 0} sched [z0, z1] : bf16 [z0, z1] repeats [s0, 64] strides [64, 1]
}
)");
  EXPECT_EQ(print(parse_asc_graph(print(g))), print(g));
}

// Integers stay in their lanes where the registry has an integer form; comparisons give bool;
// a rounding in compute types widened again is the f32 value; reductions widen to f32.
TEST(AscirBuilder, DtypeRule) {
  Builder b("k");
  b.add_axis(8);
  b.add_axis(16);
  int i = b.load(b.data("i", DType::I32, {16, 1}, 0));
  int j = b.load(b.data("j", DType::I64, {0, 1}, 0));
  int sum = b.compute("add", {i, j});
  EXPECT_EQ(b.node(sum).out.dtype, DType::I64);
  EXPECT_EQ(b.node(b.compute("lt", {i, b.scalar(int64_t{3}, DType::I64)})).out.dtype, DType::Bool);
  EXPECT_THROW(b.compute("sigmoid", {i}), CompileError);  // float only: no integer form
  int f = b.load(b.data("f", DType::F32, {16, 1}, 0));
  EXPECT_THROW(b.compute("add", {f, i}), CompileError);  // a non-scalar int beside a float
  int narrow = b.cast(f, DType::BF16, /*compute_types=*/true);
  EXPECT_EQ(b.cast(narrow, DType::F32), f);
  int rounded = b.cast(f, DType::BF16);
  EXPECT_NE(b.cast(rounded, DType::F32), f);
  int h = b.load(b.data("h", DType::F16, {16, 1}, 0));
  int r = b.reduce("reduce_sum", h, {1});
  EXPECT_EQ(b.node(r).out.dtype, DType::F32);
  EXPECT_EQ(b.varies(r), (std::vector<bool>{true, false}));
  EXPECT_THROW(b.reduce("reduce_any", f, {1}), CompileError);  // bool only
  try {
    b.store("out", j, DType::I64, {1, 0}, 0);  // j varies along z1, the output does not
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("varies along an axis its index does not"),
              std::string::npos);
  }
}

// A gather reads rows of a table by an index value; where takes a bool condition.
TEST(AscirBuilder, GatherAndWhere) {
  Builder b("k");
  b.add_axis(4);
  b.add_axis(32);
  int idx = b.load(b.data("idx", DType::I64, {1, 0}, 0));
  int rows = b.gather(b.data("table", DType::F32, {0, 1}, 0), idx, 32, 100);
  EXPECT_EQ(b.varies(rows), (std::vector<bool>{true, true}));
  EXPECT_EQ(std::get<int64_t>(b.node(rows).attrs.at("index_bound")), 100);
  int pos = b.compute("gt", {rows, b.scalar(0.0, DType::F32)});
  int w = b.compute("where", {pos, rows, b.scalar(int64_t{0}, DType::I64)});
  EXPECT_EQ(b.node(w).out.dtype, DType::F32);
  EXPECT_THROW(b.compute("where", {rows, rows, rows}), CompileError);  // not a bool condition
  b.store("y", w, DType::F32, {32, 1}, 0);
  std::vector<std::string> inputs;
  AscGraph g = b.finish(&inputs);
  EXPECT_EQ(inputs, (std::vector<std::string>{"idx", "table"}));
  EXPECT_EQ(g.nodes.back().op, "output");
}

}  // namespace
}  // namespace af::ascir
