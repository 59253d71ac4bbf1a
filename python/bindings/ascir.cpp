// The bindings of AscIR kernels made outside the Graph IR pipeline (the Inductor frontend's):
// ascir/loop_nest_builder.h, which its tracer builds a group's kernel with (values are node ids,
// indices and sizes sym expression text, dtypes AscIR names); schedule_kernel, which schedules and
// prints one kernel once, when the frontend checks its group; compile_kernels, which compiles a
// graph's scheduled kernels as one program; and compile_ascir, the same from unscheduled AscIR
// text.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "ascir/builder.h"
#include "ascir/loop_nest_builder.h"
#include "ascir/printer.h"
#include "ascir/verifier.h"
#include "program.h"
#include "support/error.h"

namespace nb = nanobind;
using af::ascir::Builder;
using af::ascir::LoopNestBuilder;
using af::ascir::LoopSpace;

namespace {

af::DType dtype_of(const std::string& name) {
  std::optional<af::DType> t = af::parse_dtype(name);
  if (!t) throw af::CompileError("unknown dtype '" + name + "'");
  return *t;
}

af::sym::Expr expr(const std::string& text) {
  return af::sym::parse_expr(text);
}

std::vector<af::sym::Expr> exprs(const std::vector<std::string>& texts) {
  std::vector<af::sym::Expr> out;
  for (const std::string& t : texts) out.push_back(af::sym::parse_expr(t));
  return out;
}

/// One kernel scheduled for a target and printed alone (schedule_kernel): what the Inductor
/// frontend checks a group with and later compiles, with its graph's others, without
/// scheduling it again.
struct ScheduledKernel {
  af::fusion::FusedNode node;  // the kernel step, its loop nest scheduled
  std::string ascir;           // the kernel before scheduling, as text
  std::string source;          // the kernel printed alone
  std::string target;          // the backend that printed it ("cpu", "ascendc")
};

ScheduledKernel schedule_kernel(const Builder& b, const std::string& name, const std::string& isa,
                                const std::string& target, const std::string& cann,
                                const std::string& soc) {
  af::CompileOptions opts = compile_options("", "", "g++", nb::none(), isa, "", target, cann, soc);
  af::ascir::AscGraph g = b.finish();
  g.name = name;
  ScheduledKernel k;
  k.ascir = af::ascir::print(g);
  af::fusion::FusedGraph fused;
  k.node.kind = af::fusion::FusedNode::Kind::Kernel;
  k.node.name = name;
  k.node.kernel = std::move(g);
  fused.nodes.push_back(std::move(k.node));
  af::schedule_kernels(fused, opts.target);
  af::codegen::EmittedSource src = af::program_source(af::kernel_units(fused), opts, name);
  k.node = std::move(fused.nodes[0]);
  k.source = std::move(src.code);
  k.target = src.kernels.at(0).target;
  return k;
}

Program* compile_kernels(const std::vector<const ScheduledKernel*>& kernels,
                         const std::string& name, const std::string& dump_dir,
                         const std::string& cache_dir, const std::string& cxx, nb::handle log,
                         const std::string& tuning_file, const std::string& isa,
                         const std::string& sanitize, const std::string& target,
                         const std::string& cann, const std::string& soc) {
  af::CompileOptions opts =
      compile_options(dump_dir, cache_dir, cxx, log, isa, sanitize, target, cann, soc);
  af::fusion::FusedGraph fused;
  for (const ScheduledKernel* k : kernels) fused.nodes.push_back(k->node);
  af::CompiledProgram prog;
  {
    nb::gil_scoped_release release;
    prog = af::compile_scheduled(std::move(fused), opts, name);
  }
  return make_program(std::move(prog), opts, tuning_file);
}

Program* compile_ascir(const std::string& text, const std::string& name,
                       const std::string& dump_dir, const std::string& cache_dir,
                       const std::string& cxx, nb::handle log, const std::string& tuning_file,
                       const std::string& isa, const std::string& sanitize,
                       const std::string& target, const std::string& cann, const std::string& soc) {
  af::CompileOptions opts =
      compile_options(dump_dir, cache_dir, cxx, log, isa, sanitize, target, cann, soc);
  af::CompiledProgram prog;
  {
    nb::gil_scoped_release release;
    prog = af::compile_ascir(text, opts, name);
  }
  return make_program(std::move(prog), opts, tuning_file);
}

}  // namespace

void bind_ascir(nb::module_& m) {
  nb::class_<Builder>(m, "AscBuilder",
                      "One kernel's AscGraph built a value at a time (ascir/builder.h): values "
                      "are node ids; dtypes follow the kernels' rule (f16/bf16 compute in f32).")
      .def(
          "scalar",
          [](Builder& b, nb::handle value, const std::string& dtype) {
            af::Attr v = PyFloat_Check(value.ptr()) ? af::Attr(nb::cast<double>(value))
                                                    : af::Attr(nb::cast<int64_t>(nb::int_(value)));
            return b.scalar(v, dtype_of(dtype));
          },
          nb::arg("value"), nb::arg("dtype"), "A constant of `dtype` (a Python number).")
      .def(
          "cast",
          [](Builder& b, int x, const std::string& dtype, bool compute_types) {
            return b.cast(x, dtype_of(dtype), compute_types);
          },
          nb::arg("x"), nb::arg("dtype"), nb::arg("compute_types") = false)
      .def("compute", &Builder::compute, nb::arg("kind"), nb::arg("operands"), nb::arg("name") = "",
           "Elementwise op `kind` of the registry over `operands`.")
      .def("reduce", &Builder::reduce, nb::arg("kind"), nb::arg("x"), nb::arg("axes"),
           nb::arg("name") = "")
      .def(
          "finish",
          [](const Builder& b) {
            std::vector<std::string> inputs;
            af::ascir::AscGraph g = b.finish(&inputs);
            return std::make_tuple(af::ascir::print(g), inputs, g.size_symbols());
          },
          "(the kernel's AscIR text, printed by the core; each data index's input name; the "
          "size symbols it uses).")
      .def("dtype",
           [](const Builder& b, int v) { return std::string(dtype_name(b.node(v).out.dtype)); })
      .def("is_scalar", &Builder::is_scalar);

  nb::class_<LoopNestBuilder, Builder>(
      m, "LoopNestBuilder",
      "An AscBuilder over a loop nest's kernel axes (ascir/loop_nest_builder.h): reads, writes "
      "and index values by index expressions (sym text) in the loop variables.")
      .def(
          "__init__",
          [](LoopNestBuilder* self, const std::string& name, const std::vector<std::string>& vars,
             const std::vector<std::string>& ranges, const std::vector<std::string>& indices) {
            new (self) LoopNestBuilder(name, LoopSpace(vars, exprs(ranges), exprs(indices)));
          },
          nb::arg("name"), nb::arg("vars"), nb::arg("ranges"), nb::arg("indices"),
          "Loop variables `vars` of extents `ranges`, `indices` every index of the nest.")
      .def(
          "axes_of",
          [](const LoopNestBuilder& b, const std::string& v) { return b.space().axes_of(v); },
          nb::arg("var"), "The kernel axes of loop variable `var`.")
      .def(
          "read",
          [](LoopNestBuilder& b, const std::string& name, const std::string& dtype,
             const std::string& index) { return b.read(name, dtype_of(dtype), expr(index)); },
          nb::arg("name"), nb::arg("dtype"), nb::arg("index"),
          "Input `name` at `index`; -1 for a dtype values may not have.")
      .def(
          "gather_rows",
          [](LoopNestBuilder& b, const std::string& name, const std::string& dtype,
             const std::string& index, const std::string& row_symbol, int at, int64_t bound) {
            return b.gather(name, dtype_of(dtype), expr(index), row_symbol, at, bound);
          },
          nb::arg("name"), nb::arg("dtype"), nb::arg("index"), nb::arg("row_symbol"), nb::arg("at"),
          nb::arg("bound"), "Rows of input `name` picked by value `at`.")
      .def(
          "index_value",
          [](LoopNestBuilder& b, const std::string& index, const std::string& dtype) {
            return b.index_value(expr(index), dtype_of(dtype));
          },
          nb::arg("index"), nb::arg("dtype"), "The value of `index` at every loop point.")
      .def(
          "write",
          [](LoopNestBuilder& b, const std::string& name, int x, const std::string& dtype,
             const std::string& index) { b.write(name, x, dtype_of(dtype), expr(index)); },
          nb::arg("name"), nb::arg("x"), nb::arg("dtype"), nb::arg("index"))
      .def(
          "same_index",
          [](const LoopNestBuilder& b, const std::string& x, const std::string& y) {
            return b.same_index(expr(x), expr(y));
          },
          nb::arg("a"), nb::arg("b"))
      .def(
          "bounds",
          [](const LoopNestBuilder& b, const std::string& index) {
            auto [lo, hi] = b.bounds(expr(index));
            return std::make_pair(lo.str(), hi.str());
          },
          nb::arg("index"), "(lowest, highest) value of an affine index over the loops.")
      .def(
          "count",
          [](const LoopNestBuilder& b, const std::vector<int>& axes) {
            return b.count(axes).str();
          },
          nb::arg("axes"))
      .def(
          "mean_of",
          [](LoopNestBuilder& b, int sum, const std::string& count) {
            return b.mean_of(sum, expr(count));
          },
          nb::arg("sum"), nb::arg("count"))
      .def("aranges", [](const LoopNestBuilder& b) {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& [name, n] : b.aranges()) out.emplace_back(name, n.str());
        return out;
      });

  nb::class_<ScheduledKernel>(m, "ScheduledKernel",
                              "One kernel scheduled and printed alone (schedule_kernel).")
      .def_prop_ro("name", [](const ScheduledKernel& k) { return k.node.name; })
      .def_ro("ascir", &ScheduledKernel::ascir, "The kernel before scheduling, as AscIR text.")
      .def_ro("source", &ScheduledKernel::source, "The kernel printed alone.")
      .def_ro("target", &ScheduledKernel::target, "What printed it: \"cpu\" or \"ascendc\".")
      .def(
          "bytes_moved",
          [](const ScheduledKernel& k, const af::sym::Bindings& hints) {
            return k.node.kernel.bytes_moved(hints);
          },
          nb::arg("hints"), "Bytes its inputs and outputs move at `hints` (symbol -> value).");
  m.def("schedule_kernel", &schedule_kernel, nb::arg("builder"), nb::arg("name"),
        nb::arg("isa") = "", nb::arg("target") = "", nb::arg("cann") = "", nb::arg("soc") = "",
        "The builder's kernel named `name`, verified, scheduled for the target and printed "
        "(no C++ compile): a ScheduledKernel for compile_kernels. Options as compile(). Raises "
        "CompileError.");
  m.def("compile_kernels", &compile_kernels, nb::arg("kernels"), nb::arg("name") = "ascir",
        nb::arg("dump_dir") = "", nb::arg("cache_dir") = "", nb::arg("cxx") = "g++",
        nb::arg("log") = nb::none(), nb::arg("tuning_file") = "", nb::arg("isa") = "",
        nb::arg("sanitize") = "", nb::arg("target") = "", nb::arg("cann") = "", nb::arg("soc") = "",
        nb::rv_policy::take_ownership,
        "Compiles ScheduledKernels (scheduled with the same target options) as one Program, a "
        "kernel each in list order, without scheduling them again. Options as compile(). "
        "Raises CompileError or ToolchainError.");
  m.def("compile_ascir", &compile_ascir, nb::arg("ascir_text"), nb::arg("name") = "ascir",
        nb::arg("dump_dir") = "", nb::arg("cache_dir") = "", nb::arg("cxx") = "g++",
        nb::arg("log") = nb::none(), nb::arg("tuning_file") = "", nb::arg("isa") = "",
        nb::arg("sanitize") = "", nb::arg("target") = "", nb::arg("cann") = "", nb::arg("soc") = "",
        nb::rv_policy::take_ownership,
        "Compiles unscheduled AscIR text (one or more `ascgraph`s, fused elsewhere) from "
        "Schedule on: a Program with a kernel per ascgraph, in text order. Options as "
        "compile(). Raises CompileError or ToolchainError.");
}
