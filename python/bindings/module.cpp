// autofuse._C: the nanobind bindings of the C++ core for the torch frontend (python/autofuse).
// compile() runs the pipeline on Graph IR text and returns a Program; Program.launch() runs one
// of its kernels on raw data pointers. No libtorch: tensors cross as integers (data_ptr()).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "backends/registry.h"
#include "fusion/dot.h"
#include "fusion/lower.h"
#include "fusion/printer.h"
#include "graph/op_registry.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "jit/cache.h"
#include "jit/runtime_headers.h"
#include "jit/toolchain_check.h"
#include "pipeline/flags.h"
#include "pipeline/pipeline.h"
#include "program.h"
#include "runtime/launch.h"
#include "runtime/openmp_team.h"
#include "runtime/tuning.h"
#include "support/dtype.h"
#include "support/error.h"
#include "target/host_cpu.h"

namespace nb = nanobind;

namespace {

/// The most kernel arguments / size symbols launch() passes without a heap allocation.
constexpr size_t kStackArgs = 64;

/// One step of a compiled program as Python reads it (Program.steps()): the values it computes,
/// reads and writes by their stable ids (graph::Node::id: the frontend's node order, whatever the
/// core's passes did to the graph's positions), the traffic at the size hints
/// (fusion::step_bytes; None when a size has no hint) and, for a kernel, its TilingCases.
struct Step {
  af::fusion::FusedNode::Kind kind;
  std::string name;          // "k3" for a kernel, the node's name for an opaque step
  std::vector<int> ops;      // ids of the Graph IR values the step computes
  std::vector<int> inputs;   // ids of those it reads (a kernel: in argument order)
  std::vector<int> outputs;  // ids of those it writes (a kernel: in argument order)
  int kernel = -1;           // the kernel's index (launch(k, ...)); -1 for an opaque step
  std::string reason;        // an opaque step: why the op is not in a kernel
  std::optional<int64_t> bytes_read, bytes_written, bytes_unfused;
  std::vector<std::string> tiling_cases;  // a kernel's TilingCases, index = tiling_key
};

/// Every step of the fused program, in execution order.
std::vector<Step> steps_of(const Program& p) {
  const auto& fg = p.prog.fused;
  auto ids = [&](const std::vector<int>& positions) {
    std::vector<int> out;
    for (int i : positions) out.push_back(fg.source.nodes.at(i).id);
    return out;
  };
  std::vector<Step> out;
  int k = 0;
  for (const auto& n : fg.nodes) {
    bool kernel = n.kind == af::fusion::FusedNode::Kind::Kernel;
    Step s{n.kind, n.name, ids(n.ops), ids(n.inputs), ids(n.outputs), kernel ? k++ : -1, n.reason};
    try {
      af::fusion::StepBytes b = af::fusion::step_bytes(fg, n);
      s.bytes_read = b.read, s.bytes_written = b.written, s.bytes_unfused = b.unfused;
    } catch (const af::CompileError&) {
      // A size without a hint: the traffic is unknown, the step is not.
    }
    if (kernel) s.tiling_cases = af::fusion::tiling_cases(n);
    out.push_back(std::move(s));
  }
  return out;
}

/// Kernel k of the program; IndexError when out of range.
const af::KernelHandle& kernel_at(const Program& p, int k) {
  if (k < 0 || k >= static_cast<int>(p.prog.kernels.size()))
    throw nb::index_error(("kernel index " + std::to_string(k) + " out of range (" +
                           std::to_string(p.prog.kernels.size()) + " kernels)")
                              .c_str());
  return p.prog.kernels[k];
}

/// A list or tuple of Python ints read without a heap allocation for up to kStackArgs values.
template <typename T>
class IntArgs {
 public:
  IntArgs(nb::handle seq, const char* what) {
    PyObject* o = seq.ptr();
    bool is_list = PyList_Check(o);
    if (!is_list && !PyTuple_Check(o))
      throw nb::type_error((std::string(what) + " must be a list or tuple of ints").c_str());
    size_ = static_cast<size_t>(is_list ? PyList_GET_SIZE(o) : PyTuple_GET_SIZE(o));
    if (size_ > kStackArgs) {
      heap_.resize(size_);
      data_ = heap_.data();
    }
    for (size_t i = 0; i < size_; ++i) {
      PyObject* item = is_list ? PyList_GET_ITEM(o, i) : PyTuple_GET_ITEM(o, i);
      long long v = PyLong_AsLongLong(item);
      if (v == -1 && PyErr_Occurred()) throw nb::python_error();
      data_[i] = static_cast<T>(v);
    }
  }
  size_t size() const { return size_; }
  const T* data() const { return data_; }

 private:
  T stack_[kStackArgs];
  std::vector<T> heap_;
  T* data_ = stack_;
  size_t size_ = 0;
};

/// ValueError unless kernel `h` takes `n` size symbols.
void check_symbol_count(const af::KernelHandle& h, size_t n) {
  if (n != h.symbols.size())
    throw nb::value_error(("kernel " + h.name + " takes " + std::to_string(h.symbols.size()) +
                           " size symbols, got " + std::to_string(n))
                              .c_str());
}

/// Throws RuntimeError listing what an Ascend C kernel's launch broke of the device's rules
/// under ascendc_emu (the module's violation log, KernelHandle::violations_fn); nothing for a
/// CPU kernel or a clean launch.
void check_device_rules(const af::KernelHandle& h) {
  using TakeFn = int64_t (*)(char*, int64_t);
  auto take = reinterpret_cast<TakeFn>(h.violations_fn);
  if (!take) return;
  char text[2048];
  if (take(text, sizeof text) > 0)
    throw std::runtime_error("autofuse: Ascend C kernel " + h.name +
                             " broke the device's rules under ascendc_emu:\n" + text);
}

/// Throws IndexError when kernel h's gathers met an index outside its dim in the launch that
/// just ran (the lanes read row 0 instead; eager raises for such an index too).
void check_index_fault(const af::KernelHandle& h) {
  auto take = reinterpret_cast<int64_t (*)()>(h.index_fault_fn);
  if (!take) return;
  int64_t index = take();
  if (index != INT64_MIN)
    throw nb::index_error(("autofuse: kernel " + h.name + " gathered index " +
                           std::to_string(index) + ", out of bounds for its dim")
                              .c_str());
}

/// Throws RuntimeError("ZeroDivisionError") when kernel h's integer division met a zero divisor
/// in the launch that just ran (eager raises the same).
void check_zero_division(const af::KernelHandle& h) {
  auto take = reinterpret_cast<int (*)()>(h.zero_division_fn);
  if (take && take())
    throw std::runtime_error("ZeroDivisionError (autofuse: kernel " + h.name +
                             " divided an integer by zero)");
}

/// Raises what the launch of kernel h that just ran met (eager raises the same for the input).
void check_faults(const af::KernelHandle& h) {
  check_device_rules(h);
  check_index_fault(h);
  check_zero_division(h);
}

/// Runs kernel k: ptrs = data pointers of its inputs then outputs, syms = its size symbols.
void launch(const Program& p, int k, nb::handle ptrs, nb::handle syms, int nthreads) {
  const af::KernelHandle& h = kernel_at(p, k);
  if (!h.kernel_fn)
    throw nb::value_error(("kernel " + h.name + " is a " + h.target +
                           " kernel, not a host one (launch_cuda runs cuda kernels)")
                              .c_str());
  IntArgs<uintptr_t> addr(ptrs, "ptrs");
  IntArgs<int64_t> symbols(syms, "syms");
  if (addr.size() != static_cast<size_t>(h.num_inputs + h.num_outputs))
    throw nb::value_error(("kernel " + h.name + " takes " + std::to_string(h.num_inputs) +
                           " inputs and " + std::to_string(h.num_outputs) + " outputs, got " +
                           std::to_string(addr.size()) + " pointers")
                              .c_str());
  check_symbol_count(h, symbols.size());
  void* stack_args[kStackArgs];
  std::vector<void*> heap_args;
  void** args = stack_args;
  if (addr.size() > kStackArgs) {
    heap_args.resize(addr.size());
    args = heap_args.data();
  }
  for (size_t i = 0; i < addr.size(); ++i) args[i] = reinterpret_cast<void*>(addr.data()[i]);
  auto tiling = reinterpret_cast<af_tiling_fn>(h.tiling_fn);
  auto kernel = reinterpret_cast<af_kernel_fn>(h.kernel_fn);
  nb::gil_scoped_release release;
  if (!p.tuning) {
    af::runtime::launch(tiling, kernel, args, symbols.data(), nthreads, p.target);
    check_faults(h);
    return;
  }
  // Tuning: the choice this kernel used for the shape bucket before, else the stored one, else
  // measure it once.
  af::runtime::KernelTuningCache& seen = *p.tuned[k];
  std::optional<af::runtime::TuneChoice> c = seen.find(nthreads, symbols.data(), symbols.size());
  if (c) {
    p.tuning->note_hit();
  } else {
    std::string key =
        af::runtime::tuning_key(h.key, p.target, nthreads, symbols.data(), symbols.size());
    c = p.tuning->find(key);
    if (!c) {
      c = af::runtime::measure_tilings(tiling, kernel, args, symbols.data(), nthreads, p.target);
      p.tuning->put(key, *c);
    }
    seen.put(nthreads, symbols.data(), symbols.size(), *c);
  }
  af::runtime::launch_tuned(tiling, kernel, args, symbols.data(), *c, p.target);
  check_faults(h);
}

/// What kernel k's launch with `syms` and `nthreads` would use: the tiling function's block_dim
/// and tiling_key, the cores and tile budget it sees, and whether they come from the tuning
/// table ("tuned": a measured choice; "untuned": no table; "unmeasured": the table has no
/// choice for this shape bucket yet). Runs no kernel and measures nothing.
nb::dict tiling_of(const Program& p, int k, const std::vector<int64_t>& syms, int nthreads) {
  const af::KernelHandle& h = kernel_at(p, k);
  check_symbol_count(h, syms.size());
  nthreads = std::max(nthreads, 1);
  af::target::Target t = p.target;
  int cores = nthreads;
  std::string source = "untuned";
  if (p.tuning) {
    source = "unmeasured";
    std::string key = af::runtime::tuning_key(h.key, p.target, nthreads, syms.data(), syms.size());
    if (std::optional<af::runtime::TuneChoice> c = p.tuning->peek(key)) {
      cores = static_cast<int>(c->cores);
      t.ub_bytes = c->ub_bytes;
      source = "tuned";
    }
  }
  auto tiling = reinterpret_cast<af_tiling_fn>(h.tiling_fn);
  af_tiling_header hdr = af::runtime::plan_tiling(tiling, syms.data(), cores, t);
  nb::dict d;
  d["block_dim"] = hdr.block_dim;
  d["tiling_key"] = hdr.tiling_key;
  d["cores"] = cores;
  d["ub_bytes"] = t.ub_bytes;
  d["source"] = source;
  return d;
}

/// The tuning table of file `path`, shared by every program of the process that tunes into it.
std::shared_ptr<af::runtime::TuningTable> tuning_table(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<af::runtime::TuningTable>> tables;
  std::lock_guard<std::mutex> lock(mu);
  auto& t = tables[path];
  if (!t) t = std::make_shared<af::runtime::TuningTable>(path);
  return t;
}

/// A Graph IR type as the frontend hands it over: (dtype name, shape, strides, offset), sizes as
/// expression text (sym/expr.h).
using TypeArg =
    std::tuple<std::string, std::vector<std::string>, std::vector<std::string>, std::string>;
/// An attribute value as Python holds it; a list holds sizes as expression text.
using AttrArg = std::variant<int64_t, double, std::string, std::vector<std::string>>;
/// One node: (name, kind, operand indices, attributes, type or None for a value that is not one
/// tensor of an IR dtype, printed i64[]).
using NodeArg = std::tuple<std::string, std::string, std::vector<int>,
                           std::map<std::string, AttrArg>, std::optional<TypeArg>>;

/// Size symbols as the frontend hands them over: (name, hint).
using SymbolArgs = std::vector<std::pair<std::string, int64_t>>;

/// The Graph the frontend built, unverified; raises CompileError on a dtype the IR lacks or a
/// size that is not an expression.
af::graph::Graph graph_of(const std::string& name, const SymbolArgs& symbols,
                          const std::vector<NodeArg>& nodes, const std::vector<int>& outputs) {
  af::graph::Graph g;
  g.name = name;
  for (const auto& [sym, hint] : symbols) g.symbols.push_back({sym, hint});
  auto exprs = [](const std::vector<std::string>& texts) {
    std::vector<af::sym::Expr> out;
    for (const std::string& t : texts) out.push_back(af::sym::parse_expr(t));
    return out;
  };
  for (const auto& [node_name, kind, operands, attrs, type] : nodes) {
    af::graph::Node n{node_name, kind, operands, {}, {}};
    for (const auto& [key, value] : attrs)
      n.attrs[key] = std::visit(
          [&](const auto& v) -> af::Attr {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<std::string>>)
              return exprs(v);
            else
              return v;
          },
          value);
    if (type) {
      const auto& [dtype, shape, strides, offset] = *type;
      std::optional<af::DType> dt = af::parse_dtype(dtype);
      if (!dt) throw af::CompileError("node %" + node_name + ": unknown dtype " + dtype);
      n.type = {*dt, exprs(shape), exprs(strides), af::sym::parse_expr(offset)};
    } else {
      n.type = af::graph::TensorType::contiguous(af::DType::I64, {});
    }
    g.add(std::move(n));
  }
  g.outputs = outputs;
  return g;
}

/// The graph _C.compile takes: Graph IR text, or the frontend's records (name, symbols, nodes,
/// outputs: what print_graph takes), built without text.
using GraphInput =
    std::variant<std::string,
                 std::tuple<std::string, SymbolArgs, std::vector<NodeArg>, std::vector<int>>>;

Program* compile(const GraphInput& graph, const std::string& dump_dir, const std::string& cache_dir,
                 const std::string& cxx, bool enable_fusion, nb::handle log,
                 const std::string& flags, const std::string& tuning_file, const std::string& isa,
                 const std::string& sanitize, const std::string& target, const std::string& cann,
                 const std::string& soc) {
  af::CompileOptions opts =
      compile_options(dump_dir, cache_dir, cxx, log, isa, sanitize, target, cann, soc);
  opts.enable_fusion = enable_fusion;
  opts.fusion = af::parse_flags(flags);
  af::CompiledProgram prog;
  {
    nb::gil_scoped_release release;
    af::graph::Graph g;
    if (const auto* text = std::get_if<std::string>(&graph))
      g = af::graph::parse_graph(*text);
    else
      std::apply([&](const auto&... records) { g = graph_of(records...); }, std::get<1>(graph));
    prog = af::compile(g, opts);
  }
  return make_program(std::move(prog), opts, tuning_file);
}

/// AUTOFUSE_FLAGS `text` applied on top of `base` (flags text, "" = defaults) as a dict of the
/// effective settings plus "flags", their canonical text; raises FlagError naming `source`.
nb::dict parse_flags(const std::string& text, const std::string& base, const std::string& source) {
  af::fusion::FusionOptions o = af::parse_flags(text, af::parse_flags(base, {}, source), source);
  nb::dict d;
  d["enable_autofuse"] = o.enabled;
  d["passes"] = af::enabled_passes(o);
  d["max_fusion_size"] = o.max_nodes;
  d["max_fusion_inputs"] = o.max_inputs;
  d["recomputation_threshold"] = o.recomputation_threshold;
  d["max_reduce_epilogue"] = o.max_reduce_epilogue;
  d["emulate_precision_casts"] = o.emulate_precision_casts;
  d["flags"] = af::to_flags_string(o);
  return d;
}

/// explain's count of ATen ops as Python hands it to the pictures: (computing ATen ops, of them
/// in kernels, kernel name -> its own).
using AtenCounts = std::tuple<int, int, std::map<std::string, int>>;

af::fusion::DotFacts dot_facts(const std::optional<AtenCounts>& aten_ops,
                               const std::map<std::string, std::string>& value_types) {
  af::fusion::DotFacts facts;
  if (aten_ops)
    std::tie(facts.aten_ops, facts.aten_ops_in_kernels, facts.kernel_aten_ops) = *aten_ops;
  facts.value_types = value_types;
  return facts;
}

/// The Graph IR text of the graph the frontend built (the one Graph IR printer, graph/printer.h).
std::string print_graph(const std::string& name, const SymbolArgs& symbols,
                        const std::vector<NodeArg>& nodes, const std::vector<int>& outputs) {
  return af::graph::print(graph_of(name, symbols, nodes, outputs));
}

/// fusion::candidate_reason of the op the frontend would emit (the last of `nodes`, after the
/// values it reads).
std::optional<std::string> candidate_reason(const SymbolArgs& symbols,
                                            const std::vector<NodeArg>& nodes) {
  return af::fusion::candidate_reason(graph_of("candidate", symbols, nodes, {}));
}

/// Parses and verifies Graph IR text; returns it printed back (a frontend test hook).
std::string check_graph(const std::string& text) {
  af::graph::Graph g = af::graph::parse_graph(text);
  af::graph::verify(g);
  return af::graph::print(g);
}

/// af::global_stats() as a dict.
nb::dict stats() {
  af::CompileStats s = af::global_stats();
  nb::dict d;
  d["cxx_compiles"] = s.cxx_compiles;
  d["cache_hits"] = s.cache_hits;
  d["compile_seconds"] = s.compile_seconds;
  return d;
}

/// kind -> (class, arity, operand dtype names) for every registry row.
nb::dict op_registry() {
  static const char* kClass[] = {"input", "const",  "elementwise", "broadcast", "cast",
                                 "view",  "reduce", "concat",      "opaque"};
  nb::dict d;
  for (const auto& op : af::graph::all_ops()) {
    std::vector<std::string> dtypes;
    for (unsigned t = 0; t <= static_cast<unsigned>(af::DType::F64); ++t)
      if (op.operand_dtypes & (1u << t))
        dtypes.emplace_back(af::dtype_name(static_cast<af::DType>(t)));
    d[nb::str(op.name.data(), op.name.size())] =
        nb::make_tuple(kClass[static_cast<int>(op.cls)], op.arity, dtypes);
  }
  return d;
}

}  // namespace

af::CompileOptions compile_options(const std::string& dump_dir, const std::string& cache_dir,
                                   const std::string& cxx, nb::handle log, const std::string& isa,
                                   const std::string& sanitize, const std::string& target,
                                   const std::string& cann, const std::string& soc) {
  af::CompileOptions opts;
  opts.target = af::backends::configure_target(opts.target, target, {{"cann", cann}, {"soc", soc}});
  opts.sanitize = af::jit::Sanitizers::parse(sanitize);
  if (!isa.empty()) {
    af::target::Isa want = af::target::parse_isa(isa);
    if (!opts.target.supports_isa(want))
      throw af::CompileError("autofuse: isa '" + isa + "' does not run on this host (its best: " +
                             std::string(af::target::isa_name(opts.target.isa)) + ")");
    opts.target = opts.target.with_isa(want);
  }
  opts.dump_dir = dump_dir;
  opts.cache_dir = cache_dir;
  opts.cxx = cxx;
  if (log.is_valid() && !log.is_none()) {
    // The callable outlives compile() (the caller holds it); call it with the GIL held.
    opts.log = [log](const std::string& line) {
      nb::gil_scoped_acquire acquire;
      try {
        log(line);
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("autofuse log callback");
      }
    };
  }
  return opts;
}

Program* make_program(af::CompiledProgram prog, const af::CompileOptions& opts,
                      const std::string& tuning_file) {
  auto program = std::make_unique<Program>();
  program->target = opts.target;
  program->prog = std::move(prog);
  add_cuda_kernels(*program, opts);
  if (!tuning_file.empty()) {
    program->tuning = tuning_table(tuning_file);
    for (size_t i = 0; i < program->prog.kernels.size(); ++i)
      program->tuned.push_back(std::make_shared<af::runtime::KernelTuningCache>());
  }
  return program.release();
}

void bind_linear_rows(nb::module_& m);  // linear_rows.cpp
void bind_ascir(nb::module_& m);        // ascir.cpp
void bind_aten(nb::module_& m);         // aten.cpp
void bind_cuda(nb::module_& m);         // cuda.cpp

NB_MODULE(_C, m) {
  m.doc() = "autofuse C++ core: Graph IR text -> fused, compiled CPU kernels";
  bind_linear_rows(m);
  bind_ascir(m);
  bind_aten(m);
  bind_cuda(m);
  // Programs live in Dynamo's caches until interpreter exit; that is not a leak worth a warning.
  nb::set_leak_warnings(false);
#ifdef AUTOFUSE_VERSION
  m.attr("version") = AUTOFUSE_VERSION;
#else
  m.attr("version") = "unknown";
#endif

  static nb::exception<af::CompileError> compile_error(m, "CompileError");
  static nb::exception<af::ToolchainError> toolchain_error(m, "ToolchainError");
  // A bad AUTOFUSE_FLAGS / CompilerConfig setting: a ValueError, never an eager fallback.
  static nb::exception<af::FlagError> flag_error(m, "FlagError", PyExc_ValueError);
  // A malformed graph text is a compile error to Python.
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* payload) {
        try {
          std::rethrow_exception(p);
        } catch (const af::ParseError& e) {
          PyErr_SetString(static_cast<PyObject*>(payload), e.what());
        }
      },
      compile_error.ptr());

  nb::enum_<af::fusion::FusedNode::Kind>(m, "StepKind", "What runs a step.")
      .value("kernel", af::fusion::FusedNode::Kind::Kernel, "a generated kernel")
      .value("opaque", af::fusion::FusedNode::Kind::Opaque,
             "the frontend (ATen, a view, an input)");
  nb::class_<Step>(m, "Step", "One step of a compiled program (Program.steps()).")
      .def_ro("kind", &Step::kind)
      .def_ro("name", &Step::name)
      .def_ro("ops", &Step::ops, "Ids of the Graph IR values the step computes.")
      .def_ro("inputs", &Step::inputs, "Value ids read (a kernel: in argument order).")
      .def_ro("outputs", &Step::outputs, "Value ids written (a kernel: in argument order).")
      .def_ro("kernel", &Step::kernel, "The kernel index launch() takes; -1 for an opaque step.")
      .def_ro("reason", &Step::reason, "An opaque step: why its op is not in a kernel.")
      .def_ro("bytes_read", &Step::bytes_read, "Bytes read at the size hints (None: unknown).")
      .def_ro("bytes_written", &Step::bytes_written, "Bytes written at the size hints.")
      .def_ro("bytes_unfused", &Step::bytes_unfused,
              "Bytes eager moves for the same ops (fusion::step_bytes).")
      .def_ro("tiling_cases", &Step::tiling_cases, "A kernel's TilingCases (index = tiling_key).")
      .def("__repr__", [](const Step& s) {
        return "Step(" + s.name + ", " + std::to_string(s.ops.size()) + " op(s))";
      });
  m.def(
      "dtypes",
      [] {
        std::vector<std::tuple<std::string, std::string, int>> out;
        for (af::DType t : af::all_dtypes())
          out.emplace_back(af::dtype_name(t), af::dtype_torch_name(t), af::dtype_size(t));
        return out;
      },
      "The element types the IR names: (IR name, torch's name, bytes) per dtype "
      "(support/dtype.h).");
  m.def("human_bytes", &af::fusion::human_bytes, nb::arg("n"),
        "`n` bytes as explain and the pictures print them: '512 B', '1.5 KiB', '24.0 MiB'.");

  nb::class_<Program>(m, "Program", "A compiled Graph IR program: fused steps and loaded kernels.")
      .def(
          "fused_text", [](const Program& p) { return af::fusion::print(p.prog.fused); },
          "The FusedGraph as text.")
      .def(
          "fused_dot",
          [](const Program& p, bool overview, const std::optional<AtenCounts>& aten_ops,
             const std::map<std::string, std::string>& value_types) {
            return af::fusion::print_dot(
                p.prog.fused,
                overview ? af::fusion::DotDetail::Overview : af::fusion::DotDetail::Full,
                dot_facts(aten_ops, value_types));
          },
          nb::arg("overview") = false, nb::arg("aten_ops") = nb::none(),
          nb::arg("value_types") = std::map<std::string, std::string>{},
          "The FusedGraph as Graphviz DOT (fusion/dot.h); overview: one node per kernel. "
          "aten_ops: explain's count (ATen ops that compute, of them in kernels, per kernel "
          "name its own) for the title and kernel labels; value_types: value name -> type "
          "text for values Graph IR types as the placeholder i64[] (fusion::DotFacts).")
      .def(
          "kernel_dot",
          [](const Program& p, const std::string& kernel, const std::optional<AtenCounts>& aten_ops,
             const std::map<std::string, std::string>& value_types) {
            return af::fusion::print_kernel_dot(p.prog.fused, kernel,
                                                dot_facts(aten_ops, value_types));
          },
          nb::arg("kernel"), nb::arg("aten_ops") = nb::none(),
          nb::arg("value_types") = std::map<std::string, std::string>{},
          "One kernel (\"k3\") as Graphviz DOT: its ops, inputs and outputs (aten_ops, "
          "value_types: as fused_dot).")
      .def(
          "rejected",
          [](const Program& p) {
            std::vector<std::tuple<std::string, std::string, std::string, bool>> out;
            for (const auto& r : p.prog.fused.rejected)
              out.emplace_back(r.producer, r.consumer, r.reason, r.sibling);
            return out;
          },
          "Fusions the policy declined: (producer, consumer, reason, sibling).")
      .def(
          "source", [](const Program& p) { return p.prog.source; }, "The generated C++ source.")
      .def("steps", &steps_of, "The Steps in execution order.")
      .def("num_kernels", [](const Program& p) { return p.prog.kernels.size(); })
      .def(
          "tuning_stats",
          [](const Program& p) {
            nb::dict d;
            d["file"] = p.tuning ? p.tuning->path() : std::string();
            d["measured"] = p.tuning ? p.tuning->measured() : 0;
            d["hits"] = p.tuning ? p.tuning->hits() : 0;
            return d;
          },
          "Tuning counters of the table this program uses: choices measured and found (the "
          "table is shared by the programs of a process that use the same file).")
      .def(
          "package",
          [](const Program& p, const std::string& name, const std::string& target) {
            af::target::Target t = p.target.device.target == target
                                       ? p.target
                                       : af::backends::configure_target(p.target, target);
            const af::codegen::Backend& backend = af::backends::find_backend(target);
            std::vector<af::codegen::KernelUnit> taken;
            std::map<std::string, std::string> skipped;
            for (const af::codegen::KernelUnit& u : af::kernel_units(p.prog.fused)) {
              std::string why = backend.reason(u, t);
              if (why.empty())
                taken.push_back(u);
              else
                skipped[u.name] = why;
            }
            af::codegen::Package pkg;
            if (!taken.empty()) pkg = backend.package(taken, t, name);
            return std::make_tuple(pkg.files, skipped, pkg.kernel_names);
          },
          nb::arg("name"), nb::arg("target"),
          "(files, skipped, kernel names): the package of the kernels `target`'s backend can "
          "print, for its own toolchain (file name -> text; ascendc: codegen/ascendc/emitter.h "
          "ascendc_package), for each other kernel why not, and each printed kernel's C name "
          "(step name -> name). Raises CompileError for a target with no package format.")
      .def(
          "kernel_target", [](const Program& p, int k) { return kernel_at(p, k).target; },
          nb::arg("k"), "The registered target whose backend printed kernel k (\"cpu\", ...).")
      .def(
          "kernel_symbols", [](const Program& p, int k) { return kernel_at(p, k).symbols; },
          nb::arg("k"), "The size symbols kernel k takes at launch, in order.")
      .def(
          "kernel_io",
          [](const Program& p, int k) {
            const auto& h = kernel_at(p, k);
            return std::make_tuple(h.num_inputs, h.num_outputs);
          },
          nb::arg("k"), "(num_inputs, num_outputs) of kernel k.")
      .def("tiling", &tiling_of, nb::arg("k"), nb::arg("syms"), nb::arg("nthreads"),
           "What a launch of kernel k would use: {block_dim, tiling_key, cores, ub_bytes, "
           "source} (source: 'tuned', 'untuned' or 'unmeasured'); runs and measures nothing.")
      .def("launch", &launch, nb::arg("k"), nb::arg("ptrs"), nb::arg("syms"), nb::arg("nthreads"),
           "Runs kernel k on data pointers (inputs then outputs) with size symbol values.")
      .def("launch_cuda", &launch_cuda, nb::arg("k"), nb::arg("ptrs"), nb::arg("syms"),
           nb::arg("device"), nb::arg("stream"),
           "Runs cuda kernel k on device pointers (inputs then outputs) with size symbol values, "
           "on CUDA device `device`'s stream `stream` (a CUstream address; torch's current "
           "stream), asynchronously. Raises ToolchainError or CompileError.");

  m.def("compile", &compile, nb::arg("graph"), nb::arg("dump_dir") = "", nb::arg("cache_dir") = "",
        nb::arg("cxx") = "g++", nb::arg("enable_fusion") = true, nb::arg("log") = nb::none(),
        nb::arg("flags") = "", nb::arg("tuning_file") = "", nb::arg("isa") = "",
        nb::arg("sanitize") = "", nb::arg("target") = "", nb::arg("cann") = "", nb::arg("soc") = "",
        nb::rv_policy::take_ownership,
        "Compiles `graph` (the frontend's records, (name, symbols, nodes, outputs) as "
        "print_graph takes them, built without text; or Graph IR text, parsed) with "
        "AUTOFUSE_FLAGS `flags`; with a `tuning_file` "
        "its kernels launch with measured tilings (runtime/tuning.h); `isa` (avx512, avx2, "
        "scalar; \"\" = the host's best) picks the kernels' vector ISA; `sanitize` "
        "(\"address,undefined\") builds them with those sanitizers; `target` (cpu, ascendc; \"\" = "
        "cpu) what they become; `cann` (8, 9; \"\" = what both accept) the CANN release whose "
        "Ascend C API spelling the ascendc target uses, `soc` (Ascend910B1, ...; \"\" = "
        "Ascend910B1) the NPU its tiling is for. Raises CompileError, "
        "ToolchainError or FlagError.");
  m.def(
      "parse_sanitize",
      [](const std::string& text) { return af::jit::Sanitizers::parse(text).to_string(); },
      nb::arg("text"),
      "AUTOFUSE_SANITIZE text (\"address,undefined\") in canonical form; raises FlagError on an "
      "unknown sanitizer.");
  m.def("parse_flags", &parse_flags, nb::arg("text"), nb::arg("base") = "",
        nb::arg("source") = "AUTOFUSE_FLAGS",
        "AUTOFUSE_FLAGS text applied on top of `base` (flags text): a dict of the settings "
        "(enable_autofuse, passes, max_fusion_size, max_fusion_inputs, recomputation_threshold, "
        "max_reduce_epilogue, emulate_precision_casts) and 'flags', their canonical text; raises "
        "FlagError.");
  m.def(
      "tuning_file",
      [](const std::string& cache_dir) {
        std::string dir = af::jit::ensure_private_dir(
            cache_dir.empty() ? af::jit::default_cache_dir() : cache_dir);
        return dir + "/tuning.txt";
      },
      nb::arg("cache_dir") = "",
      "The tuning table's path in JIT cache dir `cache_dir` (\"\" = the default), created 0700.");
  m.def(
      "check_toolchain",
      [](const std::string& cxx, const std::string& cache_dir) {
        std::vector<std::tuple<std::string, bool, std::string, std::string>> out;
        for (const auto& f : af::jit::check_toolchain(cxx, cache_dir))
          out.emplace_back(f.what, f.ok, f.found, f.fix);
        return out;
      },
      nb::arg("cxx"), nb::arg("cache_dir") = "",
      "What a kernel compile needs (compiler, runtime headers, SLEEF, cache dir): a list of "
      "(what, ok, found, fix).");
  m.def(
      "runtime_include_dir", [] { return af::jit::runtime_include_dir(); },
      "The directory of the kernels' runtime headers this process compiles with; raises "
      "ToolchainError when neither the installed package nor the source tree has them.");
  m.def(
      "joins_openmp", [] { return af::runtime::find_loaded_openmp() != nullptr; },
      "Whether kernels run on the OpenMP team of a runtime this process has loaded (torch's), "
      "rather than on autofuse's own thread pool.");
  m.def("print_graph", &print_graph, nb::arg("name"), nb::arg("symbols"), nb::arg("nodes"),
        nb::arg("outputs"),
        "Graph IR text of a graph given as nodes (name, kind, operand indices, attrs, type or "
        "None; a type is (dtype, shape, strides, offset) with sizes as expression text); "
        "symbols are (name, hint). Raises CompileError.");
  m.def("candidate_reason", &candidate_reason, nb::arg("symbols"), nb::arg("nodes"),
        "Why the last of `nodes` (as print_graph takes them), an op after the values it reads, "
        "cannot be a generated kernel's node (a broken Graph IR rule or a dtype or op kernels "
        "lack); None when it can. Raises CompileError on a record print_graph rejects.");
  m.def("check_graph", &check_graph, nb::arg("graph_text"),
        "Parses and verifies Graph IR text, returns it printed; raises CompileError.");
  m.def("stats", &stats,
        "Process-wide compile counters: cxx_compiles, cache_hits, compile_seconds.");
  m.def(
      "host_cpu",
      [] {
        const af::target::HostCpu& cpu = af::target::HostCpu::probe();
        std::map<std::string, std::variant<bool, std::string>> out;
        for (af::target::CpuFeature f : af::target::all_cpu_features())
          out[std::string(af::target::cpu_feature_name(f))] = cpu.has(f);
        out["vendor"] = cpu.vendor;
        return out;
      },
      "The host CPU as the core probed it (src/target/host_cpu.h): each feature by torch's name "
      "(avx2, avx512_f, avx512_bf16, amx_bf16, avx_ne_convert, ...) -> bool, and vendor -> "
      "cpuid's vendor id.");
  m.def(
      "targets",
      [] {
        std::vector<
            std::tuple<std::string, std::string, std::map<std::string, std::vector<std::string>>>>
            out;
        for (const af::codegen::Backend* b : af::backends::all_backends()) {
          std::map<std::string, std::vector<std::string>> options;
          for (const af::codegen::TargetOption& o : b->options()) options[o.name] = o.choices;
          out.emplace_back(std::string(b->name()), std::string(b->summary()), options);
        }
        return out;
      },
      "The registered targets, cpu first: (name, summary, option -> the values it takes).");
  m.def("op_registry", &op_registry, "kind -> (class, arity, operand dtype names).");
  m.def(
      "host_isas",
      [] {
        const af::target::Target host = af::target::Target::host_cpu();
        std::vector<std::string> out;
        const auto& isas = af::target::all_isas();
        for (auto it = isas.rbegin(); it != isas.rend(); ++it)
          if (host.supports_isa(*it)) out.emplace_back(af::target::isa_name(*it));
        return out;
      },
      "The kernel ISAs this host runs, widest first (compile()'s `isa`).");
}
