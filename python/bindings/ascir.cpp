// The bindings of AscIR kernels made outside the Graph IR pipeline (the Inductor frontend's):
// inductor/body_ops.h, which its tracer forwards a group's loop-body ops to (values are ids,
// indices and sizes sym expression text, dtypes AscIR names), building the kernel in an
// ascir/loop_nest_builder.h; schedule_kernel, which schedules and
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
#include "inductor/body_ops.h"
#include "inductor/group_parts.h"
#include "program.h"
#include "support/error.h"

namespace nb = nanobind;
using af::ascir::Builder;
using af::ascir::LoopNestBuilder;
using af::ascir::LoopSpace;

namespace {

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
                      "One kernel's AscGraph built a value at a time (ascir/builder.h).")
      .def(
          "finish",
          [](const Builder& b) {
            std::vector<std::string> inputs;
            af::ascir::AscGraph g = b.finish(&inputs);
            return std::make_tuple(af::ascir::print(g), inputs, g.size_symbols());
          },
          "(the kernel's AscIR text, printed by the core; each data index's input name; the "
          "size symbols it uses).");
  nb::class_<LoopNestBuilder, Builder>(
      m, "LoopNestBuilder",
      "An AscBuilder over a loop nest's kernel axes (ascir/loop_nest_builder.h).")
      .def(
          "arange_length",
          [](const LoopNestBuilder& b) {
            return b.arange_length() ? b.arange_length()->str() : std::string();
          },
          "The least length of the arange table it reads (input ARANGE), as sym text; \"\" "
          "where it reads none.")
      .def_ro_static("ARANGE", &LoopNestBuilder::kArange);

  using af::inductor::BodyOps;
  nb::class_<BodyOps>(m, "BodyOps",
                      "Inductor's loop-body ops as AscIR (inductor/body_ops.h): values are ids, "
                      "indices and sizes sym text, dtypes AscIR names (torch's for others).")
      .def(
          "__init__",
          [](BodyOps* self, const std::vector<std::string>& vars,
             const std::vector<std::string>& ranges, const std::vector<std::string>& indices,
             bool emulate_precision_casts) {
            new (self) BodyOps(LoopSpace(vars, exprs(ranges), exprs(indices)), vars,
                               emulate_precision_casts);
          },
          nb::arg("vars"), nb::arg("ranges"), nb::arg("indices"),
          nb::arg("emulate_precision_casts") = false,
          "Loop variables `vars` of extents `ranges`, `indices` every index of the bodies.")
      .def_prop_ro("kernel", &BodyOps::kernel, nb::rv_policy::reference_internal)
      .def("set_reduction_vars", &BodyOps::set_reduction_vars, nb::arg("vars"))
      .def(
          "number",
          [](BodyOps& o, nb::handle v) {
            if (PyFloat_Check(v.ptr())) return o.number(nb::cast<double>(v), false);
            return o.number(nb::cast<int64_t>(nb::int_(v)), PyBool_Check(v.ptr()));
          },
          nb::arg("value"), "A literal operand (bool, int or float).")
      .def(
          "constant",
          [](BodyOps& o, nb::handle v, const std::string& dtype) {
            if (PyFloat_Check(v.ptr())) return o.constant(nb::cast<double>(v), dtype);
            return o.constant(nb::cast<int64_t>(nb::int_(v)), dtype);
          },
          nb::arg("value"), nb::arg("dtype"))
      .def(
          "index_expr",
          [](BodyOps& o, const std::string& index, const std::string& dtype) {
            return o.index_expr(expr(index), dtype);
          },
          nb::arg("index"), nb::arg("dtype"))
      .def("to_dtype", &BodyOps::to_dtype, nb::arg("x"), nb::arg("dtype"), nb::arg("compute_types"))
      .def("op", &BodyOps::op, nb::arg("name"), nb::arg("args"))
      .def(
          "load",
          [](BodyOps& o, const std::string& buffer, const std::string& dtype,
             const std::string& index) { return o.load(buffer, dtype, expr(index)); },
          nb::arg("buffer"), nb::arg("dtype"), nb::arg("index"))
      .def(
          "indirect_indexing",
          [](BodyOps& o, int x, const std::string& size, bool wrap_neg) {
            return o.indirect_indexing(x, expr(size), wrap_neg);
          },
          nb::arg("x"), nb::arg("size"), nb::arg("wrap_neg"))
      .def(
          "bounds",
          [](const BodyOps& o, const std::string& index) -> nb::object {
            auto b = o.bounds(expr(index));
            if (!b) return nb::none();
            return nb::make_tuple(b->first.str(), b->second.str());
          },
          nb::arg("index"), "(lowest, highest) of an affine index; None for a gather's.")
      .def(
          "store",
          [](BodyOps& o, const std::string& buffer, const std::string& index, int x,
             const std::string& mode) { o.store(buffer, expr(index), x, mode); },
          nb::arg("buffer"), nb::arg("index"), nb::arg("x"), nb::arg("mode") = "")
      .def("reduction", &BodyOps::reduction, nb::arg("type"), nb::arg("x"))
      .def("stored", &BodyOps::stored)
      .def(
          "finish",
          [](BodyOps& o, const std::vector<std::pair<std::string, std::string>>& outputs) {
            std::vector<std::string> inputs;
            af::ascir::AscGraph g = o.finish(outputs, &inputs);
            return std::make_pair(inputs, g.size_symbols());
          },
          nb::arg("outputs"),
          "Writes the stored buffers `outputs` ((name, dtype), in order): (each data index's "
          "buffer, the size symbols the kernel uses).");

  m.def(
      "split_group",
      [](const std::vector<std::tuple<std::vector<std::string>, std::vector<std::string>, bool>>&
             nodes) {
        std::vector<af::inductor::GroupNode> in;
        for (const auto& [reads, writes, traceable] : nodes)
          in.push_back({reads, writes, traceable});
        std::vector<std::pair<std::vector<int>, bool>> out;
        for (const auto& p : af::inductor::split_group(in)) out.emplace_back(p.nodes, p.traceable);
        return out;
      },
      nb::arg("nodes"),
      "A failed Inductor group's nodes ((reads, writes, traceable) each) as dependency-ordered "
      "parts: (node indices, traceable) (inductor/group_parts.h).");

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
