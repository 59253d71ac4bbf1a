"""The torch.compile backend: Dynamo graph -> AOTAutograd (ATen, decomposed) -> autofuse.

    torch.compile(model, backend="autofuse")                      # defaults from the environment
    torch.compile(model, backend=autofuse.get_backend(CompilerConfig(cxx="clang++")))

Every forward/backward/inference graph AOTAutograd produces is translated to Graph IR
(fx_to_graph), compiled by the C++ pipeline (autofuse._C.compile) and run by the Executor. A
graph with nothing to fuse, or one the compiler rejects (CompileError, ToolchainError), runs
eagerly: autofuse never breaks a model, it only warns.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import time
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch._subclasses.fake_tensor import unset_fake_temporarily

from . import (aot_cache, aten_table, bias_epilogue, channels_last, constant_folding, decompositions, dumps,
               float_normalization, input_updates, packed_conv, pool_decompositions, scatter_decompositions,
               view_motion, weight_packs)
from .config import CompilerConfig
from .executor import Executor, ExecutorError
from .fx_to_graph import Translation, translate
from .ir_nodes import computes, is_alias
from .log import configure as configure_logging, logger
from .records import RecordLog


@dataclasses.dataclass
class GraphRecord:
    """What happened to one FX graph: for tests, explain() and benchmarks."""

    name: str
    tag: str  # "fw", "bw" or "inference"
    fx_code: str
    fused_text: str = ""
    steps: List[Any] = dataclasses.field(default_factory=list)  # the program's _C.Step records
    num_kernels: int = 0
    fx_ops: int = 0
    compute_ops: int = 0  # a graph run eagerly untranslated: its computing ATen ops (ir_nodes.computes)
    fallback: str = ""  # why the graph runs eagerly ("" when compiled)
    compile_seconds: float = 0.0
    cxx_compiles: int = 0
    cache_hits: int = 0
    translation: Optional[Translation] = None
    program: Any = None  # the compiled _C.Program: its fused graph and loaded kernels
    _runner: Optional["weakref.ref"] = dataclasses.field(default=None, repr=False)

    @property
    def graph_text(self) -> str:
        """The Graph IR text of the translation ("" when the graph was not translated)."""
        return self.translation.text if self.translation is not None else ""

    @property
    def runner(self) -> Optional[Callable]:
        """The Executor while torch keeps the compiled graph (None when the graph runs eagerly
        or torch has dropped it): a record never keeps the executor's buffers or packed weights
        alive (the program, kept, holds only code)."""
        return self._runner() if self._runner is not None else None

    @runner.setter
    def runner(self, value: Optional[Callable]) -> None:
        self._runner = weakref.ref(value) if value is not None else None


_log: RecordLog[GraphRecord] = RecordLog()
compiled_graphs, reset_records, collect_records = _log.compiled_graphs, _log.reset_records, _log.collect_records
_counter = itertools.count()


@functools.lru_cache(maxsize=None)
def decomposition_table() -> Dict[Any, Callable]:
    """Core ATen decompositions minus the ops autofuse maps whole to one registry kind and the
    matmul-class composites ATen runs whole (aten_table.KEPT_WHOLE: attention), plus a
    few decompositions into registry ops (aten_table.EXTRA_DECOMPOSED), the norms / softmax /
    var as elementwise + reduce chains (decompositions.py), slice / select scatters as
    concatenations (scatter_decompositions.py) and max pooling in inference as strided views
    and maximums (pool_decompositions.py)."""
    from torch._decomp import core_aten_decompositions, get_decompositions

    table = dict(core_aten_decompositions())
    table.update(get_decompositions(aten_table.EXTRA_DECOMPOSED))
    table.update(decompositions.reduction_decompositions())
    table.update(scatter_decompositions.scatter_decompositions())
    table.update(pool_decompositions.pool_decompositions())
    for op in aten_table.NATIVE_OPS + aten_table.KEPT_WHOLE:
        table.pop(op, None)
    return table


def _eager(gm: torch.fx.GraphModule) -> Callable:
    return make_boxed_func(gm.forward)


def _fallback(rec: GraphRecord, gm: torch.fx.GraphModule, why: str, warn: bool) -> Callable:
    rec.fallback = why
    if rec.translation is None:  # explain counts the ops of a graph never translated from `gm`
        rec.fx_ops = sum(1 for n in gm.graph.nodes if n.op == "call_function")
        rec.compute_ops = sum(1 for n in gm.graph.nodes if computes(n))
    _log.publish(rec)
    if warn:
        logger.warning("autofuse: graph %s runs eagerly: %s", rec.name, why)
    else:
        logger.info("autofuse: graph %s runs eagerly: %s", rec.name, why)
    return _eager(gm)


@dataclasses.dataclass(frozen=True)
class AotFacts:
    """What compiling a graph reads off AOTAutograd's metadata of it (TracingContext.fw_metadata):
    kept with a graph in AOTAutograd's cache (aot_cache.py), which rebuilds it without tracing."""

    static_inputs: Tuple[int, ...] = ()  # the forward's parameters and buffers (static_input_indices)
    data_updates: Tuple[int, ...] = ()  # inputs whose data alone the graph updates, by runtime index;
    # the graph's first outputs are the updated inputs (mutated_inp_runtime_indices), -1 for an
    # update of more than the data (metadata, storage)

    @staticmethod
    def of_current_graph() -> "AotFacts":
        """The facts of the graph AOTAutograd is compiling (empty outside a compile)."""
        ctx = torch._guards.TracingContext.try_get()
        meta = getattr(ctx, "fw_metadata", None)
        if meta is None:
            return AotFacts()
        updates = []
        for idx in list(getattr(meta, "mutated_inp_runtime_indices", None) or []):
            info = meta.input_info[idx]
            only_data = (info.mutates_data and not info.mutates_metadata
                         and not getattr(info, "mutates_storage_metadata", False))
            updates.append(idx if only_data else -1)
        return AotFacts(tuple(getattr(meta, "static_input_indices", None) or ()), tuple(updates))


@dataclasses.dataclass(frozen=True)
class FxContext:
    """What the FX passes read besides the graph: the settings, the graph's role ("inference",
    "fw", "bw"), AOTAutograd's facts, the example inputs, and the weight inputs with whether
    their packs are kept across calls (_weight_inputs)."""

    config: CompilerConfig
    tag: str
    facts: AotFacts
    example_inputs: List[Any]
    weights: Any
    keep: bool
    device: torch.device  # where the graph's tensors live (_graph_device)

    @property
    def on_cpu(self) -> bool:
        return self.device.type == "cpu"


@dataclasses.dataclass(frozen=True)
class FxPass:
    """One rewrite of the ATen FX graph before its translation to Graph IR: `run` returns the
    graph rewritten (or the same one); `when` says whether it runs for a graph."""

    name: str
    run: Callable[[torch.fx.GraphModule, FxContext], torch.fx.GraphModule]
    when: Callable[[FxContext], bool] = lambda ctx: True


# The FX passes, in order; each dumps gN.fx.<name>.txt after it runs (AUTOFUSE_DUMP). They stay on
# the FX graph because each rewrites what only torch knows (ATen overloads and their meta values,
# the module's parameters, oneDNN's packed convolutions); docs/design.md "The pipeline".
FX_PASSES = (
    # A static KV cache's index_copy_ updated in place (inference graphs).
    FxPass("input_updates", lambda gm, c: input_updates.update_in_place(gm, c.facts.data_updates),
           lambda c: c.tag == "inference"),
    # bf16 convolutions and matmuls in fp32 where the CPU lacks bf16 arithmetic.
    FxPass("float_normalization", lambda gm, c: float_normalization.upcast_bf16(gm), lambda c: c.on_cpu),
    # Convolutions in oneDNN's faster layout (conv_layouts.py).
    FxPass("channels_last", lambda gm, c: channels_last.to_channels_last(
        gm, c.example_inputs, c.tag, c.weights if c.keep and packed_conv.available() else ()),
        lambda c: c.config.channels_last and c.on_cpu),
    # Subgraphs that read no input, computed once.
    FxPass("constant_folding", lambda gm, c: constant_folding.fold_constants(gm)),
    # bf16 linear biases moved into the consumer's kernel (oneDNN's bf16 bias add is slow).
    FxPass("bias_epilogue", lambda gm, c: bias_epilogue.move_bias_adds(gm), lambda c: c.on_cpu),
    # Reshapes and permutes moved past elementwise ops to the graph's boundary.
    FxPass("view_motion", lambda gm, c: view_motion.move_views(gm)),
    # Inference convolutions on kept oneDNN packs.
    FxPass("packed_conv", lambda gm, c: packed_conv.pack_convolutions(gm, c.weights), lambda c: c.keep),
)


def compile_graph(gm: torch.fx.GraphModule, example_inputs: List[Any], config: CompilerConfig, tag: str,
                  settings: Optional[Dict[str, Any]] = None, facts: Optional[AotFacts] = None) -> Callable:
    """Compiles one ATen FX graph; returns a boxed callable (the eager graph on any failure, and
    with --enable_autofuse=false). `settings`: config.fusion_settings(), computed when None;
    `facts`: AOTAutograd's facts of `gm`, read off the current compile when None."""
    facts = facts if facts is not None else AotFacts.of_current_graph()
    # AOTAutograd calls its compilers inside its FakeTensorMode: the tensors made here (the
    # executor's precomputed constants) must be real, or a step reading one fails at run time.
    with unset_fake_temporarily():
        return _compile_graph(gm, example_inputs, config, tag, settings, facts)


def _compile_graph(gm: torch.fx.GraphModule, example_inputs: List[Any], config: CompilerConfig, tag: str,
                   settings: Optional[Dict[str, Any]], facts: AotFacts) -> Callable:
    configure_logging()
    n = next(_counter)
    name = f"g{n}" if tag != "bw" else f"g{n}_bw"
    rec = GraphRecord(name=name, tag=tag, fx_code=gm.code)
    dump_dir = dumps.usable_dir(config.dump_dir)  # "" (after a warning) when it cannot be written
    if dump_dir:
        dumps.write(dump_dir, f"{name}.fx.txt", gm.print_readable(print_output=False))
    settings = settings if settings is not None else config.fusion_settings()
    if not settings["enable_autofuse"]:
        return _fallback(rec, gm, "autofuse is off (--enable_autofuse=false)", False)
    device, why = _graph_device(example_inputs, config)
    if why:
        return _fallback(rec, gm, why, False)
    try:
        weights, keep = _weight_inputs(config, tag, gm, facts) if device.type == "cpu" else ([], False)
        ctx = FxContext(config, tag, facts, example_inputs, weights, keep, device)
        for fx_pass in FX_PASSES:
            if fx_pass.when(ctx):
                gm = fx_pass.run(gm, ctx)
                if dump_dir:
                    dumps.write(dump_dir, f"{name}.fx.{fx_pass.name}.txt", gm.print_readable(print_output=False))
        tr = translate(gm, name, weights, keep)
    except Exception as e:  # a frontend bug must not break the model
        return _fallback(rec, gm, f"translation to Graph IR failed: {type(e).__name__}: {e}", True)
    rec.translation = tr
    rec.fx_ops = tr.fx_ops
    if tr.fusible == 0:
        return _fallback(rec, gm, no_fusion_reason(tr), False)

    from . import _C

    before = _C.stats()
    start = time.perf_counter()
    options = config.compile_options()
    if device.type == "cuda":
        options["target"] = "cuda"
    try:
        program = _C.compile(
            tr.graph,
            dump_dir=dump_dir,
            enable_fusion=config.enable_fusion,
            flags=settings["flags"],
            log=lambda line: logger.debug("%s: %s", name, line),
            **options,
        )
    except (_C.CompileError, _C.ToolchainError) as e:
        if not config.fallback_on_error:
            raise
        kind = "toolchain error" if isinstance(e, _C.ToolchainError) else "compile error"
        return _fallback(rec, gm, f"{kind}: {e}", True)
    rec.compile_seconds = time.perf_counter() - start
    after = _C.stats()
    rec.cxx_compiles = after["cxx_compiles"] - before["cxx_compiles"]
    rec.cache_hits = after["cache_hits"] - before["cache_hits"]
    rec.program = program
    rec.fused_text = program.fused_text()
    rec.steps = program.steps()
    rec.num_kernels = program.num_kernels()
    if rec.num_kernels == 0:
        return _fallback(rec, gm, "the compiler made no kernels", False)
    try:
        runner = Executor(tr, program, gm.forward, name, device)
    except (ExecutorError, KeyError) as e:
        if not config.fallback_on_error:
            raise
        return _fallback(rec, gm, f"executor: {e}", True)
    rec.runner = runner
    dumps.write(dump_dir, f"{name}.run.py", runner.source)
    _log.publish(rec)
    logger.info(
        "autofuse: graph %s: %d kernel(s) for %d of %d ATen ops in %.3f s (%d C++ compile(s), %d cache hit(s))",
        name, rec.num_kernels, fused_op_count(rec), rec.fx_ops, rec.compile_seconds,
        rec.cxx_compiles, rec.cache_hits)
    return make_boxed_func(runner)


def _graph_device(example_inputs: List[Any], config: CompilerConfig) -> Tuple[torch.device, str]:
    """(the device of the graph's tensors, "" or why autofuse leaves the graph to eager): CPU
    graphs compile for the configured target, except cuda, whose kernels read device memory;
    graphs on one CUDA device compile for the cuda target where this process can run its
    kernels (a CUDA driver, a device and NVRTC); other devices and mixed ones stay eager."""
    devices = {a.device for a in example_inputs if isinstance(a, torch.Tensor)}
    types = {d.type for d in devices}
    cpu = torch.device("cpu")
    if types <= {"cpu"}:
        if config.target == "cuda":
            return cpu, "the cuda target compiles graphs of CUDA tensors; this one's are on the CPU"
        return cpu, ""
    if types != {"cuda"} or len(devices) != 1:
        names = sorted(str(d) for d in devices)
        return cpu, f"inputs on {names} (autofuse compiles graphs on the CPU or on one CUDA device)"
    from . import _C

    device = next(iter(devices))
    why = _C.cuda_unavailable()
    if why:
        return device, f"inputs on {device}, and the cuda target cannot run here: {why}"
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device, ""


def _weight_inputs(config: CompilerConfig, tag: str, gm: torch.fx.GraphModule,
                   facts: AotFacts) -> Tuple[List[int], bool]:
    """(the input positions of `gm` that hold parameters or buffers, whose linear layers and
    convolutions may run on packed weights (packed_linear.py, packed_conv.py), whether packs are
    kept across calls). The positions: AOTAutograd's static inputs of the forward; in a backward
    graph the forward's static inputs it saved, which keep their forward names (`primals_3`).
    Packs are kept in an inference graph outside torch.distributed (weight_packs.sees_every_write).
    No positions when packing is off."""
    if not config.pack_weights:
        return [], False
    keep = tag == "inference" and weight_packs.sees_every_write()
    static = list(facts.static_inputs)
    if tag == "bw":
        names = {f"primals_{i + 1}" for i in static}
        static = [k for k, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder") if n.name in names]
    return static, keep


def fused_op_count(rec: GraphRecord) -> int:
    """Number of FX (ATen) ops of the graph computed inside generated kernels."""
    tr = rec.translation
    if tr is None:
        return 0
    from . import _C

    count = len(tr.absorbed)  # expands folded into their users' broadcasts
    for st in rec.steps:
        if st.kind == _C.StepKind.kernel:
            count += sum(1 for o in st.ops if tr.nodes[o].fx is not None)
    return count


def no_fusion_reason(tr: Translation) -> str:
    """Why a graph has no fusible op: the frontend's reasons for its ops (most frequent first,
    at most three), e.g. "no fusible ops (3 ops: dtype i16 is not supported by generated
    kernels (neg); ...)"."""
    reasons = collections.Counter(n.reason for n in tr.nodes if n.kind == "opaque" and n.fx is not None
                                  and n.fx.op == "call_function" and n.reason and not is_alias(n.fx))
    if not reasons:
        return "no fusible ops (the graph computes nothing: views and aliases only)"
    parts = [f"{why} (x{k})" if k > 1 else why for why, k in reasons.most_common(3)]
    more, count = len(reasons) - 3, sum(reasons.values())
    return (f"no fusible ops ({count} op{'s' if count != 1 else ''}: {'; '.join(parts)}"
            f"{f'; {more} more' if more > 0 else ''})")


def get_backend(config: Optional[CompilerConfig] = None) -> Callable:
    """A torch.compile backend with explicit options (TorchAir style). Raises ValueError on a bad
    setting (CompilerConfig.validate), before any compile."""
    config = config or CompilerConfig()
    configure_logging()
    config.validate()  # a bad option, AUTOFUSE_* variable or flag fails here, not per graph
    settings = config.fusion_settings()
    if config.frontend == "inductor":
        from .inductor import compile_graph as inductor_compile

        return functools.partial(inductor_compile, config=config)
    kwargs = dict(config=config, settings=settings)
    compiler = aot_autograd(
        # compilers whose results AOTAutograd's cache can keep (aot_cache.py: inference graphs)
        fw_compiler=aot_cache.keeping(compile_graph, "fw", **kwargs),
        bw_compiler=aot_cache.keeping(compile_graph, "bw", **kwargs),
        inference_compiler=aot_cache.keeping(compile_graph, "inference", **kwargs),
        decompositions=decomposition_table(),
        # Inductor's forward/backward split: it saves base tensors rather than their views and
        # recomputes cheap elementwise work in the backward, so the forward returns fewer
        # tensors and AOTAutograd regenerates fewer output aliases per call.
        partition_fn=min_cut_rematerialization_partition,
    )

    def backend(gm: torch.fx.GraphModule, example_inputs: List[Any]) -> Callable:
        with aot_cache.cache_scope(compile_graph, kwargs):  # a warm start skips AOTAutograd's tracing
            return compiler(gm, example_inputs)

    return backend


def autofuse_backend(gm: torch.fx.GraphModule, example_inputs: List[Any], mode: Optional[str] = None,
                     options: Optional[Dict[str, Any]] = None) -> Callable:
    """The `backend="autofuse"` entry point: options from the environment, then torch.compile's
    `mode=` and `options=` (CompilerConfig.from_compile_args)."""
    return get_backend(CompilerConfig.from_compile_args(mode, options))(gm, example_inputs)
