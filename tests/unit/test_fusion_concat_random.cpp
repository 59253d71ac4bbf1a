// Unit tests of concat fusion on random concat programs (interpreted against eager) and of the
// compiled concat kernels: ConcatCompiled schedules, emits, compiles (g++) and runs the kernels,
// block by block, against eager. Hand-written cases: test_fusion_concat.cpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "asc_test_util.h"
#include "ascir/printer.h"
#include "concat_test_graphs.h"
#include "fusion/can_fuse.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "fusion/merge.h"
#include "fusion/printer.h"
#include "fusion/steps.h"
#include "fusion_check.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "pipeline/pipeline.h"
#include "support/error.h"

namespace af::fusion {
namespace {

using ascir::AscGraph;
using ascir::AscNode;
using testing::check_program;
using namespace concat_test;  // NOLINT(build/namespaces): the shared graphs and helpers

// ---- random concat programs ----

/// Builds the text of a random graph around concats: branches of elementwise ops (with second
/// inputs, broadcasts, a reduce producer) into each operand, consumers over the concat's space
/// (whole-space producers, values constant along the concat dim, transposed inputs, diamonds),
/// sometimes a reduce, a second concat or an intermediate graph output.
class RandomConcatGraph {
 public:
  RandomConcatGraph(unsigned seed, int64_t hint) : rng_(seed), hint_(hint) {}

  std::string build() {
    const size_t rank = 1 + pick(3);
    const size_t dim = pick(rank);
    std::vector<sym::Expr> base;
    for (size_t d = 0; d < rank; ++d) base.push_back(pick(4) == 0 ? s0_ : sym::Expr(1 + pick(4)));
    const size_t n = 1 + pick(3);
    std::vector<std::string> operands;
    sym::Expr total = 0;
    for (size_t i = 0; i < n; ++i) {
      std::vector<sym::Expr> shape = base;
      shape[dim] = pick(4) == 0 ? s0_ : sym::Expr(1 + pick(4));
      if (i > 0 && pick(5) == 0 && types_[operands[0]] == shape) {
        operands.push_back(operands[0]);  // the same value twice
      } else {
        operands.push_back(branch(shape));
      }
      total = total + types_[operands.back()][dim];
    }
    std::vector<sym::Expr> space = base;
    space[dim] = total;
    std::string cat = add("concat", join(operands), space, "{dim = " + std::to_string(dim) + "}");
    if (pick(4) == 0) outputs_.push_back(cat);
    std::string y = cat;
    for (size_t c = 0, m = pick(4); c < m; ++c) {
      y = consume(y, space, dim);
      if (pick(8) == 0) outputs_.push_back(y);
    }
    for (const std::string& o : operands)  // an operand also read whole by a consumer
      if (types_[o][dim] == sym::Expr(1) && pick(3) == 0)
        y = add("add", y + ", " + add("broadcast", o, space), space);
    if (pick(5) == 0) {  // a second concat along the same dim
      std::vector<sym::Expr> shape = space;
      shape[dim] = 2;
      std::vector<sym::Expr> out = space;
      out[dim] = space[dim] + 2;
      y = add("concat", y + ", " + input(shape), out, "{dim = " + std::to_string(dim) + "}");
      space = out;
      if (pick(2) == 0) y = add(unary(), y, space);
    }
    if (pick(5) == 0) {  // a reduce over one dim
      size_t r = pick(rank);
      std::vector<sym::Expr> out = space;
      out[r] = 1;
      y = add("reduce_sum", y, out, "{dims = [" + std::to_string(r) + "], keepdim = 1}");
    }
    outputs_.push_back(y);
    std::string text = "graph @r(s0 = " + std::to_string(hint_) + ") {\n" + body_ + "  return " +
                       join(outputs_) + "\n}\n";
    return text;
  }

 private:
  size_t pick(size_t n) { return rng_() % n; }

  static std::string join(const std::vector<std::string>& xs) {
    std::string s;
    for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  /// A unary op that keeps values small (chains of exp would overflow to inf).
  std::string unary() {
    const char* ops[] = {"neg", "tanh", "relu", "abs", "sigmoid"};
    return ops[pick(5)];
  }

  std::string add(const std::string& kind, const std::string& args,
                  const std::vector<sym::Expr>& shape, const std::string& attrs = "",
                  const std::string& layout = "") {
    std::string name = "%v" + std::to_string(next_++);
    body_ += "  " + name + " = " + kind + "(" + args + ")" + (attrs.empty() ? "" : " " + attrs) +
             " : f32" + sym::str(shape) + layout + "\n";
    types_[name] = shape;
    return name;
  }

  /// A fresh input of `shape`, sometimes laid out with its dims reversed.
  std::string input(const std::vector<sym::Expr>& shape) {
    std::string layout;
    if (shape.size() > 1 && pick(4) == 0) {
      std::vector<sym::Expr> strides(shape.size());
      sym::Expr s = 1;
      for (size_t d = 0; d < shape.size(); ++d) {
        strides[d] = s;
        s = s * shape[d];
      }
      layout = " strides " + sym::str(strides);
    }
    return add("input", "", shape, "{index = " + std::to_string(inputs_++) + "}", layout);
  }

  /// `shape` with a random dim (or `keep`'s complement) set to 1, broadcast back to `shape`.
  std::string broadcast_of(const std::vector<sym::Expr>& shape, int one_dim) {
    std::vector<sym::Expr> small = shape;
    small[static_cast<size_t>(one_dim >= 0 ? one_dim : static_cast<int>(pick(shape.size())))] = 1;
    return add("broadcast", input(small), shape);
  }

  /// A slice [1, 1 + shape[d]) along a random dim d of constant size of a fresh bigger input (a
  /// view), or a fresh input when every dim is symbolic.
  std::string slice_of(const std::vector<sym::Expr>& shape) {
    size_t d = pick(shape.size());
    if (!shape[d].is_const()) return input(shape);
    std::vector<sym::Expr> big = shape;
    big[d] = shape[d] + 2;
    std::string x = add("input", "", big, "{index = " + std::to_string(inputs_++) + "}");
    std::vector<sym::Expr> strides = graph::contiguous_strides(big);
    std::string layout = " strides " + sym::str(strides) + " offset " + strides[d].str();
    return add("slice", x, shape,
               "{dim = " + std::to_string(d) + ", end = " + (shape[d] + 1).str() +
                   ", start = 1, step = 1}",
               layout);
  }

  /// A value of `shape` computed by a short chain of ops.
  std::string branch(const std::vector<sym::Expr>& shape) {
    std::string x = pick(4) == 0 ? slice_of(shape) : input(shape);
    for (size_t i = 0, m = pick(4); i < m; ++i) {
      switch (pick(5)) {
        case 0: x = add(unary(), x, shape); break;
        case 1: x = add("add", x + ", " + input(shape), shape); break;
        case 2: x = add("mul", x + ", " + constant(), shape); break;
        case 3: x = add("mul", x + ", " + broadcast_of(shape, -1), shape); break;
        default: {  // a reduce producer over one more trailing dim
          std::vector<sym::Expr> big = shape;
          big.push_back(3);
          std::string r = add("reduce_sum", input(big), shape,
                              "{dims = [" + std::to_string(shape.size()) + "], keepdim = 0}");
          x = add("sub", x + ", " + r, shape);
        }
      }
      if (pick(6) == 0) outputs_.push_back(x);
    }
    return x;
  }

  /// One consumer of `y` over the concat's `space`.
  std::string consume(const std::string& y, const std::vector<sym::Expr>& space, size_t dim) {
    switch (pick(5)) {
      case 0: return add(unary(), y, space);
      case 1: {  // a fresh input, or one an earlier consumer read (siblings)
        if (shared_.empty() || pick(2) == 0) shared_.push_back(input(space));
        return add("sub", y + ", " + shared_[pick(shared_.size())], space);
      }
      case 2: return add("mul", add("exp", input(space), space) + ", " + y, space);
      case 3: return add("add", y + ", " + broadcast_of(space, static_cast<int>(dim)), space);
      default: return add("maximum", y + ", " + add(unary(), y, space), space);
    }
  }

  std::string constant() {
    if (const_.empty()) {
      const_ = "%half";
      body_ = "  %half = const() {value = 0.5} : f32[]\n" + body_;
    }
    return const_;
  }

  std::mt19937 rng_;
  sym::Expr s0_ = sym::Expr::symbol("s0");
  std::string body_, const_;
  int64_t hint_;
  std::vector<std::string> outputs_, shared_;
  std::map<std::string, std::vector<sym::Expr>> types_;
  int next_ = 0, inputs_ = 0;
};

TEST(ConcatFuse, RandomProgramsMatchEager) {
  int concat_kernels = 0, merged = 0;
  for (unsigned seed = 0; seed < 300; ++seed) {
    std::string text = RandomConcatGraph(seed, 1 + seed % 3).build();
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + text);
    graph::Graph g = parse(text);
    FusedGraph lowered = lower(g);
    check_program(lowered, seed);
    FusedGraph out = fuse(lowered);
    SCOPED_TRACE(print(out));
    check_program(out, seed);
    for (const FusedNode* k : kernels(out)) {
      concat_kernels += k->is_concat() ? 1 : 0;
      merged += k->is_concat() && k->ops.size() > 1 ? 1 : 0;
    }
    FusionOptions tight;
    tight.max_nodes = 3;
    tight.max_inputs = 3;
    check_program(fuse(lowered, tight), seed);
    FusionOptions off;
    off.concat = false;
    check_program(fuse(lower(g, off), off), seed);
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("random concat programs: %d concat kernels, %d with fused ops\n", concat_kernels,
              merged);
  EXPECT_GT(merged * 2, concat_kernels);  // most concat kernels take in other ops
}

// ---- compiled: the emitted C++ of concat kernels against eager ----

/// Every kernel step of `programs` scheduled and emitted into one source (kernels renamed
/// p<i>_kN), compiled, and run block by block (every block of every segment, with `cores`
/// cores) on the eager reference's values of its inputs; each output must match eager and
/// nothing may be written past its end.
void check_compiled(std::vector<FusedGraph> programs, int64_t cores) {
  constexpr float kCanary = -12345.0f;  // fills each output and kPad elements after it
  constexpr size_t kPad = 64;
  const target::Target t = asc_test::test_target();
  std::vector<codegen::KernelUnit> units;
  std::vector<std::pair<size_t, const FusedNode*>> steps;  // (program, kernel step) per unit
  for (size_t p = 0; p < programs.size(); ++p) {
    FusedGraph& fg = programs[p];
    for (FusedNode& n : fg.nodes) {
      if (n.kind != FusedNode::Kind::Kernel) continue;
      n.name = "p" + std::to_string(p) + "_" + n.name;
      n.kernel.name = n.name;
      for (size_t s = 0; s < n.segments.size(); ++s)
        n.segments[s].name = n.segments[s].kernel.name = n.name + ".s" + std::to_string(s);
    }
    schedule_kernels(fg, t);
  }
  for (size_t p = 0; p < programs.size(); ++p) {
    for (codegen::KernelUnit& u : kernel_units(programs[p])) units.push_back(std::move(u));
    for (const FusedNode* k : kernels(programs[p])) steps.emplace_back(p, k);
  }
  asc_test::KernelLib lib(codegen::emit_cpu_source(units, t), t);
  ASSERT_EQ(lib.source().kernels.size(), steps.size());
  for (size_t u = 0; u < steps.size(); ++u) {
    const FusedGraph& fg = programs[steps[u].first];
    const FusedNode& step = *steps[u].second;
    const codegen::EmittedKernel& ek = lib.source().kernels[u];
    SCOPED_TRACE(ek.name + " of\n" + print(fg));
    const sym::Bindings b = fg.source.hints();
    auto want = testing::run_reference(fg.source, 7);
    // Each argument: float storage laid out like the value (outputs filled with a canary).
    std::vector<std::vector<float>> store;
    std::vector<void*> args;
    for (int v : step.inputs) {
      const testing::Buffer& x = want[v];
      store.emplace_back(x.storage->begin(), x.storage->end());
      args.push_back(store.back().data() + x.offset);
    }
    for (int v : step.outputs) {
      testing::Buffer o = testing::alloc(fg.source.nodes[v].type, b);
      store.emplace_back(o.storage->size() + kPad, kCanary);
    }
    for (size_t i = step.inputs.size(); i < store.size(); ++i) args.push_back(store[i].data());
    std::vector<int64_t> symbols;
    for (const std::string& name : ek.symbols) symbols.push_back(b.at(name));
    auto tiling = reinterpret_cast<af_tiling_fn>(lib.symbol(ek.name + "_tiling"));
    auto kernel = reinterpret_cast<af_kernel_fn>(lib.symbol(ek.name + "_kernel"));
    ASSERT_TRUE(tiling && kernel) << ek.name;
    alignas(64) unsigned char td[AF_MAX_TILING_DATA_BYTES];
    af_target target{cores, 256 * 1024, 32, 32};
    tiling(symbols.data(), &target, td);
    af_tiling_header h;
    std::memcpy(&h, td, sizeof h);
    EXPECT_GE(h.block_dim, static_cast<int64_t>(std::max<size_t>(step.segments.size(), 1)));
    for (int64_t blk = h.block_dim; blk-- > 0;) kernel(args.data(), td, blk);
    for (size_t j = 0; j < step.outputs.size(); ++j) {
      const testing::Buffer& w = want[step.outputs[j]];
      const std::vector<float>& got = store[step.inputs.size() + j];
      for (size_t i = got.size() - kPad; i < got.size(); ++i)
        ASSERT_EQ(got[i], kCanary)
            << "write past the end of %" << fg.source.nodes[step.outputs[j]].name;
      for (int64_t f = 0; f < w.numel(); ++f) {
        auto idx = testing::unflatten(f, w.shape);
        int64_t a = w.offset;
        for (size_t d = 0; d < idx.size(); ++d) a += idx[d] * w.strides[d];
        ASSERT_TRUE(asc_test::close(got.at(a), w.at(idx), 1e-5, 1e-5))
            << "%" << fg.source.nodes[step.outputs[j]].name << " element " << f << ": got "
            << got.at(a) << ", want " << w.at(idx);
      }
    }
  }
}

TEST(ConcatCompiled, FusedKernelsMatchEager) {
  std::vector<FusedGraph> programs;
  for (const char* text : {kBranches, kRotary, kMiddleTransposed, kThreeSegments, kReduceProducer,
                           kWholeSpaceProducer})
    programs.push_back(fused(text));
  // Odd segment widths (no vector boundary at a segment start) and segments of several blocks.
  programs.push_back(fused(R"(graph @big(s0 = 64) {
  %a = input() {index = 0} : f32[s0, 7]
  %b = input() {index = 1} : f32[s0, 1213]
  %c = input() {index = 2} : f32[s0, 601]
  %ea = exp(%a) : f32[s0, 7]
  %sb = sigmoid(%b) : f32[s0, 1213]
  %cat = concat(%ea, %sb, %c) {dim = 1} : f32[s0, 1821]
  %y = tanh(%cat) : f32[s0, 1821]
  return %y
})"));
  // An operand empty along the concat dim: its segment has no element to write.
  programs.push_back(fused(R"(graph @empty() {
  %a = input() {index = 0} : f32[4, 3]
  %z = input() {index = 1} : f32[4, 0]
  %ea = exp(%a) : f32[4, 3]
  %cat = concat(%z, %ea, %z) {dim = 1} : f32[4, 3]
  %t = tanh(%cat) : f32[4, 3]
  return %t
})"));
  for (unsigned seed = 0; seed < 24; ++seed)
    programs.push_back(fuse(lower(parse(RandomConcatGraph(seed, 1 + seed % 3).build()))));
  check_compiled(programs, 4);
  check_compiled({fused(kBranches), fused(kRotary)}, 1);
}

}  // namespace
}  // namespace af::fusion
