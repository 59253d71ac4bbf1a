// Unit tests of AUTOFUSE_FLAGS (pipeline/flags.h): every flag, the error messages, the printer's
// round trip, and that CompileOptions::fusion reaches the fusion pass.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fusion/fused_graph.h"
#include "graph/parser.h"
#include "pipeline/flags.h"
#include "pipeline/pipeline.h"
#include "support/error.h"

namespace af {
namespace {

using fusion::FusionOptions;

/// Every field of `o`, for whole-struct comparisons.
std::string fields(const FusionOptions& o) {
  return "enabled=" + std::to_string(o.enabled) + " max_nodes=" + std::to_string(o.max_nodes) +
         " max_inputs=" + std::to_string(o.max_inputs) + " reduce=" + std::to_string(o.reduce) +
         " concat=" + std::to_string(o.concat) +
         " max_reduce_epilogue=" + std::to_string(o.max_reduce_epilogue) +
         " recomputation_threshold=" + std::to_string(o.recomputation_threshold) +
         " emulate_precision_casts=" + std::to_string(o.emulate_precision_casts);
}

/// The FlagError message parse_flags(text) throws ("" when it throws none).
std::string error_of(const std::string& text) {
  try {
    parse_flags(text);
  } catch (const FlagError& e) {
    return e.what();
  }
  return "";
}

TEST(Flags, EmptyTextKeepsTheBase) {
  EXPECT_EQ(fields(parse_flags("")), fields(FusionOptions{}));
  EXPECT_EQ(fields(parse_flags(" ; ;; ")), fields(FusionOptions{}));
  FusionOptions base;
  base.max_nodes = 5;
  base.reduce = false;
  EXPECT_EQ(fields(parse_flags("", base)), fields(base));
}

TEST(Flags, EnableAutofuse) {
  EXPECT_FALSE(parse_flags("--enable_autofuse=false").enabled);
  EXPECT_TRUE(parse_flags("--enable_autofuse=true").enabled);
  FusionOptions off;
  off.enabled = false;
  EXPECT_TRUE(parse_flags("--enable_autofuse=true", off).enabled);
}

TEST(Flags, PassesDisableAndEnable) {
  FusionOptions o = parse_flags("--autofuse_disable_pass=reduce");
  EXPECT_FALSE(o.reduce);
  EXPECT_TRUE(o.concat);
  o = parse_flags("--autofuse_disable_pass=reduce,concat");
  EXPECT_FALSE(o.reduce);
  EXPECT_FALSE(o.concat);
  // Enabling turns a pass the base has off back on; elementwise/broadcast are accepted no-ops.
  FusionOptions off;
  off.reduce = off.concat = false;
  o = parse_flags("--autofuse_enable_pass=elementwise,broadcast,concat", off);
  EXPECT_FALSE(o.reduce);
  EXPECT_TRUE(o.concat);
  EXPECT_TRUE(parse_flags("--autofuse_enable_pass=reduce", off).reduce);
  // An empty list is no change (CANN's default).
  EXPECT_EQ(fields(parse_flags("--autofuse_enable_pass=;--autofuse_disable_pass=", off)),
            fields(off));
}

TEST(Flags, DisableWinsOverEnableWhateverTheOrder) {
  // CANN: a pass in both lists ends disabled.
  FusionOptions o = parse_flags(
      "--enable_autofuse=true;--autofuse_enable_pass=reduce,concat;--autofuse_disable_pass=concat");
  EXPECT_TRUE(o.reduce);
  EXPECT_FALSE(o.concat);
  o = parse_flags("--autofuse_disable_pass=concat;--autofuse_enable_pass=concat");
  EXPECT_FALSE(o.concat);
}

TEST(Flags, IntegerFlags) {
  FusionOptions o = parse_flags(
      "--max_fusion_size=2;--max_fusion_inputs=3;--recomputation_threshold=0;"
      "--max_reduce_epilogue=4");
  EXPECT_EQ(o.max_nodes, 2);
  EXPECT_EQ(o.max_inputs, 3);
  EXPECT_EQ(o.recomputation_threshold, 0);
  EXPECT_EQ(o.max_reduce_epilogue, 4);
  EXPECT_EQ(parse_flags("--recomputation_threshold=255").recomputation_threshold, 255);
  EXPECT_EQ(parse_flags("--max_reduce_epilogue=0").max_reduce_epilogue, 0);
  // A later item of the same flag wins.
  EXPECT_EQ(parse_flags("--max_fusion_size=8;--max_fusion_size=16").max_nodes, 16);
}

TEST(Flags, WhitespaceAndEmptyItemsAreTolerated) {
  FusionOptions o = parse_flags(
      "  --max_fusion_size = 7 ;; \t--autofuse_disable_pass= reduce , ,concat ;\n"
      "--enable_autofuse =false ;");
  EXPECT_EQ(o.max_nodes, 7);
  EXPECT_FALSE(o.reduce);
  EXPECT_FALSE(o.concat);
  EXPECT_FALSE(o.enabled);
}

TEST(Flags, UnknownFlagListsTheValidFlags) {
  std::string msg = error_of("--max_fusion_size=4;--max_fuse_size=4");
  EXPECT_NE(msg.find("AUTOFUSE_FLAGS: unknown flag \"--max_fuse_size\""), std::string::npos) << msg;
  for (const char* flag :
       {"--enable_autofuse=true|false",
        "--autofuse_enable_pass=", "--autofuse_disable_pass=", "--max_fusion_size=N",
        "--max_fusion_inputs=N", "--recomputation_threshold=N", "--max_reduce_epilogue=N"})
    EXPECT_NE(msg.find(flag), std::string::npos) << flag << " missing from: " << msg;
}

TEST(Flags, CannFlagsWeDoNotImplementAreNamedAsSuch) {
  std::string msg = error_of("--enable_autofuse=true;--autofuse_enable_pgo=true");
  EXPECT_NE(msg.find("--autofuse_enable_pgo is a CANN AutoFuse flag autofuse does not implement"),
            std::string::npos)
      << msg;
  msg = error_of("--autofuse_enable_pass=matmul");
  EXPECT_NE(msg.find("unknown pass \"matmul\" in --autofuse_enable_pass (a CANN AutoFuse pass"),
            std::string::npos)
      << msg;
}

TEST(Flags, ItemThatIsNoFlag) {
  std::string msg = error_of("max_fusion_size=4");
  EXPECT_NE(msg.find("\"max_fusion_size=4\" is not a flag"), std::string::npos) << msg;
  EXPECT_NE(msg.find("valid flags: --enable_autofuse"), std::string::npos) << msg;
}

TEST(Flags, MissingValue) {
  std::string msg = error_of("--max_fusion_size");
  EXPECT_EQ(msg,
            "AUTOFUSE_FLAGS: --max_fusion_size needs a value (--max_fusion_size=N, N an "
            "integer >= 1)");
  EXPECT_NE(error_of("--enable_autofuse").find("--enable_autofuse=true|false"), std::string::npos);
}

TEST(Flags, BadBoolValue) {
  EXPECT_EQ(error_of("--enable_autofuse=yes"),
            "AUTOFUSE_FLAGS: bad value \"yes\" for --enable_autofuse; valid values: true, false");
  EXPECT_NE(error_of("--enable_autofuse="), "");
  EXPECT_NE(error_of("--enable_autofuse=True"), "");
}

TEST(Flags, BadIntegerValues) {
  EXPECT_EQ(error_of("--max_fusion_size=0"),
            "AUTOFUSE_FLAGS: bad value \"0\" for --max_fusion_size; valid values: an integer >= 1");
  for (const char* v : {"", "-1", "2x", "x", "1.5", "99999999999999999999", "2147483648"})
    EXPECT_NE(error_of(std::string("--max_fusion_size=") + v).find("--max_fusion_size"),
              std::string::npos)
        << v;
  EXPECT_NE(error_of("--max_fusion_inputs=0").find("--max_fusion_inputs"), std::string::npos);
  EXPECT_EQ(error_of("--recomputation_threshold=256"),
            "AUTOFUSE_FLAGS: bad value \"256\" for --recomputation_threshold; valid values: an "
            "integer from 0 to 255");
  EXPECT_NE(error_of("--recomputation_threshold=-1"), "");
  EXPECT_NE(error_of("--max_reduce_epilogue=-1").find("--max_reduce_epilogue"), std::string::npos);
  EXPECT_EQ(parse_flags("--max_fusion_size=2147483647").max_nodes, 2147483647);
}

TEST(Flags, UnknownPassListsTheValidPasses) {
  EXPECT_EQ(error_of("--autofuse_disable_pass=reduc"),
            "AUTOFUSE_FLAGS: unknown pass \"reduc\" in --autofuse_disable_pass; valid passes: "
            "elementwise, broadcast, reduce, concat");
  EXPECT_NE(error_of("--autofuse_enable_pass=reduce,Concat").find("unknown pass \"Concat\""),
            std::string::npos);
}

TEST(Flags, ElementwiseAndBroadcastCannotBeDisabled) {
  for (const char* pass : {"elementwise", "broadcast"}) {
    std::string msg = error_of(std::string("--autofuse_disable_pass=") + pass);
    EXPECT_NE(msg.find(std::string("pass \"") + pass +
                       "\" cannot be disabled in --autofuse_disable_pass"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("--enable_autofuse=false"), std::string::npos) << msg;
  }
}

TEST(Flags, ErrorsNameTheirSource) {
  try {
    parse_flags("--max_fusion_size=0", {}, "CompilerConfig");
    FAIL() << "no FlagError";
  } catch (const FlagError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("CompilerConfig: bad value \"0\"", 0), 0u) << e.what();
  }
}

TEST(Flags, PrinterPrintsEverySetting) {
  EXPECT_EQ(to_flags_string(FusionOptions{}),
            "--enable_autofuse=true;--autofuse_enable_pass=elementwise,broadcast,reduce,concat;"
            "--max_fusion_size=64;--max_fusion_inputs=8;--recomputation_threshold=1;"
            "--max_reduce_epilogue=32;--emulate_precision_casts=false");
  FusionOptions o;
  o.reduce = false;
  o.enabled = false;
  EXPECT_EQ(to_flags_string(o),
            "--enable_autofuse=false;--autofuse_enable_pass=elementwise,broadcast,concat;"
            "--autofuse_disable_pass=reduce;--max_fusion_size=64;--max_fusion_inputs=8;"
            "--recomputation_threshold=1;--max_reduce_epilogue=32;--emulate_precision_casts=false");
}

TEST(Flags, PrinterRoundTrips) {
  FusionOptions odd;  // a base that differs from o in every field
  odd.enabled = false;
  odd.max_nodes = 99;
  odd.max_inputs = 99;
  odd.reduce = false;
  odd.concat = false;
  odd.max_reduce_epilogue = 99;
  odd.recomputation_threshold = 99;
  odd.emulate_precision_casts = true;
  for (int bits = 0; bits < 16; ++bits) {
    FusionOptions o;
    o.enabled = bits & 1;
    o.reduce = bits & 2;
    o.concat = bits & 4;
    o.max_nodes = 1 + bits;
    o.max_inputs = 2 + bits;
    o.recomputation_threshold = (bits % 8) * 30;
    o.max_reduce_epilogue = bits;
    o.emulate_precision_casts = (bits & 8) == 0;
    std::string text = to_flags_string(o);
    EXPECT_EQ(fields(parse_flags(text)), fields(o)) << text;
    EXPECT_EQ(fields(parse_flags(text, odd)), fields(o)) << text;
    EXPECT_EQ(to_flags_string(parse_flags(text)), text);
  }
}

TEST(Flags, PassNames) {
  EXPECT_EQ(fusion_pass_names(),
            (std::vector<std::string>{"elementwise", "broadcast", "reduce", "concat"}));
  EXPECT_EQ(enabled_passes(FusionOptions{}), fusion_pass_names());
  EXPECT_EQ(enabled_passes(parse_flags("--autofuse_disable_pass=reduce")),
            (std::vector<std::string>{"elementwise", "broadcast", "concat"}));
}

/// A chain of 6 elementwise ops on one input.
constexpr const char* kChain = R"(graph @chain() {
  %x = input() {index = 0} : f32[64]
  %0 = neg(%x) : f32[64]
  %1 = exp(%0) : f32[64]
  %2 = abs(%1) : f32[64]
  %3 = neg(%2) : f32[64]
  %4 = exp(%3) : f32[64]
  %5 = abs(%4) : f32[64]
  return %5
})";

/// The compute nodes (all but data/load/store/output/scalar) of each kernel compile() makes of
/// kChain with `opts`, in execution order.
std::vector<int> kernel_sizes_of_chain(const CompileOptions& opts) {
  CompiledProgram p = compile(graph::parse_graph(kChain), opts, Stage::Fuse);
  std::vector<int> sizes;
  for (const auto& step : p.fused.nodes) {
    if (step.kind != fusion::FusedNode::Kind::Kernel) continue;
    int n = 0;
    for (const auto& node : step.kernel.nodes)
      n += node.op != "data" && node.op != "load" && node.op != "store" && node.op != "output" &&
           node.op != "scalar";
    sizes.push_back(n);
  }
  return sizes;
}

TEST(Flags, CompileOptionsReachTheFusionPass) {
  CompileOptions opts;
  EXPECT_EQ(kernel_sizes_of_chain(opts), std::vector<int>{6});
  opts.fusion = parse_flags("--max_fusion_size=2");
  std::vector<int> sizes = kernel_sizes_of_chain(opts);
  EXPECT_GE(sizes.size(), 3u);
  for (int n : sizes) EXPECT_LE(n, 2);
  opts.fusion = parse_flags("--enable_autofuse=false");
  EXPECT_EQ(kernel_sizes_of_chain(opts), std::vector<int>(6, 1));
  // enable_fusion = false wins over the flags.
  opts.fusion = parse_flags("--enable_autofuse=true");
  opts.enable_fusion = false;
  EXPECT_EQ(kernel_sizes_of_chain(opts), std::vector<int>(6, 1));
}

/// The ops computed in kernels and the reasons of the opaque steps of `text` lowered with `opts`.
std::pair<std::string, std::string> lowered(const char* text, const CompileOptions& opts) {
  CompiledProgram p = compile(graph::parse_graph(text), opts, Stage::Lower);
  std::string in_kernels, reasons;
  for (const auto& step : p.fused.nodes) {
    if (step.kind == fusion::FusedNode::Kind::Kernel) {
      for (const auto& node : step.kernel.nodes) in_kernels += node.op + " ";
    } else {
      reasons += step.reason + "\n";
    }
  }
  return {in_kernels, reasons};
}

TEST(Flags, DisabledReducePassLeavesReductionsToAten) {
  const char* text = R"(graph @r() {
  %x = input() {index = 0} : f32[4, 8]
  %0 = exp(%x) : f32[4, 8]
  %1 = reduce_sum(%0) {dims = [1], keepdim = 0} : f32[4]
  return %1
})";
  CompileOptions opts;
  auto [ops, reasons] = lowered(text, opts);
  EXPECT_NE(ops.find("reduce_sum"), std::string::npos) << ops;
  opts.fusion = parse_flags("--autofuse_disable_pass=reduce");
  std::tie(ops, reasons) = lowered(text, opts);
  EXPECT_EQ(ops.find("reduce_sum"), std::string::npos) << ops;
  EXPECT_NE(ops.find("exp"), std::string::npos) << ops;
  EXPECT_NE(reasons.find("--autofuse_disable_pass=reduce"), std::string::npos) << reasons;
}

}  // namespace
}  // namespace af
