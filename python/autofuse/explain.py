"""autofuse.explain(fn, *inputs): compile and run `fn` with autofuse and report what was fused.

The report lists, per compiled graph (forward and backward when fn's output requires grad),
each kernel with the ATen ops (FX node targets) and Graph IR ops it holds, the modules and
source lines they come from, the bytes it reads and writes against what eager moves for the
same ops, its TilingCases; every computing ATen op left to ATen with its reason (views and
aliases ATen runs in one line, not counted); every fusion the policy declined with its reason;
the graph breaks Dynamo made, with its reasons; and the counts (kernels, computing ATen ops
replaced). One count (op_counts, the rule ir_nodes.computes: views, aliases and tuple indexing
compute nothing and are not counted) feeds the text, the kernel table and the pictures' titles
and kernel labels. With a picture directory (the config's dump_dir / AUTOFUSE_DUMP, or
`picture_dir=`) it also draws each fused graph there, rendered to `.svg` and `.png` by Graphviz
`dot`: `<graph>.overview.*` with every kernel one node (its ops in the SVG tooltip),
`<graph>.fused.*` with every kernel a cluster of its ops, and per kernel `<graph>.<kernel>.svg`
with its ops, inputs and outputs; a directory that cannot be written is a warning, and the report
says the pictures were not written and why. With CompilerConfig(frontend="inductor") it returns
autofuse.inductor.InductorReport instead: Inductor's fusion groups, each an AscIR kernel or left
to Inductor's C++ with the reason (no pictures).

Bytes come from the core with each step (_C.Step: fusion::step_bytes, counted at the size hints
as the pictures count them).
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import shutil
import subprocess
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch.utils import _pytree as pytree

from .backend import GraphRecord, collect_records, fused_op_count, get_backend
from .config import CompilerConfig
from .ir_nodes import computes, dtype_name
from .log import logger

# Seconds one `dot` run may take before explain gives up on the picture.
DOT_TIMEOUT_S = 60.0


@dataclasses.dataclass
class KernelReport:
    """One generated kernel: the ops it computes and the memory traffic it saves."""

    name: str
    aten_ops: List[str]  # FX targets of the ATen ops it computes, in order
    node_names: List[str]  # Graph IR value names of all its ops
    extra: List[str]  # synthesized nodes (casts, broadcasts) inside it: "kind %name"
    ops: List[Tuple[str, str]] = dataclasses.field(default_factory=list)  # Graph IR (kind, name)
    bytes_read: Optional[int] = None  # its distinct inputs, at the size hints (None: a size has no hint)
    bytes_written: Optional[int] = None  # its outputs
    unfused_bytes: Optional[int] = None  # what eager moves for the same ops
    tiling_cases: List[str] = dataclasses.field(default_factory=list)  # index = tiling_key
    origins: List[str] = dataclasses.field(default_factory=list)  # modules its ops come from (node_origin)
    picture: str = ""  # its own picture (<graph>.<kernel>.svg, or .dot without Graphviz), once drawn

    @property
    def saved_bytes(self) -> Optional[int]:
        """Bytes of memory traffic the fusion saves (unfused - read - written), None if unknown."""
        if self.unfused_bytes is None or self.bytes_read is None or self.bytes_written is None:
            return None
        return self.unfused_bytes - self.bytes_read - self.bytes_written


@dataclasses.dataclass
class RejectedFusion:
    """A fusion the policy declined: producer -> consumer (Graph IR values, "%3"), or two
    sibling kernels reading a common input (named by their last ops)."""

    producer: str
    consumer: str
    reason: str
    sibling: bool = False

    def __str__(self) -> str:
        if self.sibling:
            return f"siblings {self.producer}, {self.consumer}: {self.reason}"
        return f"{self.producer} -> {self.consumer}: {self.reason}"


@dataclasses.dataclass
class GraphReport:
    """One compiled FX graph."""

    name: str
    tag: str
    kernels: List[KernelReport]
    left_out: List[Tuple[str, str, str]]  # computing ATen ops left to ATen: (ATen op, FX node name, reason)
    absorbed: List[Tuple[str, str]]  # (ATen op, FX node name) folded into kernels' broadcasts
    fx_ops: int
    fused_ops: int
    fallback: str
    rejected: List[RejectedFusion] = dataclasses.field(default_factory=list)
    compute_ops: int = 0  # ATen ops that compute (op_counts: fx_ops less views, aliases and getitem)
    fused_compute_ops: int = 0  # of those, the ones kernels compute
    aliases: List[Tuple[str, str, str]] = dataclasses.field(default_factory=list)  # views ATen runs, not counted
    graph_break: str = ""  # where and why Dynamo broke the graph after this one ("" when it did not)
    dot: str = ""  # the FusedGraph as Graphviz DOT ("" when the graph runs eagerly)
    overview_dot: str = ""  # the same with every kernel one node (readable for a whole model)
    kernel_dots: Dict[str, str] = dataclasses.field(default_factory=dict)  # kernel -> its own DOT
    pictures: Dict[str, str] = dataclasses.field(default_factory=dict)  # "dot"/"svg"/"png" -> path

    @property
    def fallbacks(self) -> List[Tuple[str, str, str]]:
        """The ATen ops left to ATen: (ATen op, FX node name, reason)."""
        return self.left_out


@dataclasses.dataclass
class GraphBreak:
    """A graph break Dynamo made: where in the user's code, why (Dynamo's reason, in full), and
    the graphs compiled from the code before it (GraphReport names)."""

    reason: str
    where: str  # "file.py:12 `print(x)`" ("" when Dynamo recorded no frame)
    graphs: List[str] = dataclasses.field(default_factory=list)

    @property
    def summary(self) -> str:
        """The reason's first line and its `Explanation:` line, without Dynamo's hints."""
        lines = [ln.strip() for ln in self.reason.splitlines() if ln.strip()]
        if not lines:
            return "(no reason given)"
        expl = next((ln[len("Explanation:"):].strip() for ln in lines if ln.startswith("Explanation:")), "")
        return f"{lines[0]}: {expl}" if expl else lines[0]

    def __str__(self) -> str:
        after = f"after {', '.join(self.graphs)}" if self.graphs else "graph break"
        return f"{after}{' at ' + self.where if self.where else ''}: {self.summary}"


@dataclasses.dataclass
class ExplainReport:
    """What autofuse did with a function: graphs, kernels, ops left to ATen and why."""

    graphs: List[GraphReport]
    output: Any = None
    breaks: List[GraphBreak] = dataclasses.field(default_factory=list)  # Dynamo's graph breaks
    disabled: str = ""  # why autofuse compiled nothing (enable_autofuse off), "" when on
    pictures_not_written: str = ""  # why the pictures asked for were not written ("" when they were)

    @property
    def num_kernels(self) -> int:
        return sum(len(g.kernels) for g in self.graphs)

    @property
    def fused_ops(self) -> int:
        return sum(g.fused_ops for g in self.graphs)

    @property
    def total_ops(self) -> int:
        return sum(g.fx_ops for g in self.graphs)

    @property
    def compute_ops(self) -> int:
        """ATen ops that compute something (not views, aliases or tuple indexing)."""
        return sum(g.compute_ops for g in self.graphs)

    @property
    def fused_compute_ops(self) -> int:
        return sum(g.fused_compute_ops for g in self.graphs)

    def __str__(self) -> str:
        tags = ", ".join(f"{g.name} ({g.tag})" for g in self.graphs)
        head = "autofuse explain: "
        if self.disabled:
            head += f"autofuse is disabled ({self.disabled}), every graph runs eagerly; "
        lines = [
            f"{head}{len(self.graphs)} graph(s) [{tags}], {self.num_kernels} kernel(s), "
            f"{self.fused_compute_ops} of {self.compute_ops} computing ATen ops replaced by kernels "
            f"(views and aliases not counted)"
        ]
        if self.breaks:
            lines.append(f"graph break(s): {len(self.breaks)}, Dynamo compiled the function in pieces:")
            lines.extend(f"  {b}" for b in self.breaks)
        for g in self.graphs:
            lines.extend(_graph_lines(g))
        if self.pictures_not_written:
            lines.append(f"pictures not written: {self.pictures_not_written}")
        return "\n".join(lines)


def human_bytes(n: Optional[int]) -> str:
    """'512 B', '1.5 KiB', '24.0 MiB' (the core's format, as the pictures print it); '-' unknown."""
    from . import _C

    return "-" if n is None else _C.human_bytes(n)


def _graph_lines(g: GraphReport) -> List[str]:
    head = (f"graph {g.name} ({g.tag}): {len(g.kernels)} kernel(s), {g.fused_compute_ops}/{g.compute_ops} "
            f"computing ATen ops fused, {g.compute_ops - g.fused_compute_ops} left to ATen")
    lines = [head + (f" -- runs eagerly: {g.fallback}" if g.fallback else "")]
    if g.kernels:  # "ATen ops" is op_counts' count per kernel: the column sums to the header's
        rows = [("kernel", "ATen ops", "IR ops", "read", "written", "unfused", "saved", "tiling cases")]
        for k in g.kernels:
            known = k.unfused_bytes and k.saved_bytes is not None
            saved = f"{100 * k.saved_bytes / k.unfused_bytes:.0f}%" if known else "-"
            rows.append((
                k.name, str(len(k.aten_ops)), str(len(k.ops)), human_bytes(k.bytes_read),
                human_bytes(k.bytes_written), human_bytes(k.unfused_bytes), saved, ", ".join(k.tiling_cases) or "-",
            ))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:-1], widths[1:-1])] + [r[-1]]
            lines.append("  " + "  ".join(cells).rstrip())
    for k in g.kernels:
        ops = ", ".join(k.aten_ops)
        if k.extra:
            ops += (" " if ops else "") + f"(+ {', '.join(k.extra)})"
        lines.append(f"  kernel {k.name}: {ops}")
        if k.origins:
            lines.append(f"    from: {'; '.join(k.origins)}")
        lines.append(f"    Graph IR: {', '.join(f'{kind} %{name}' for kind, name in k.ops)}")
        if k.picture:
            lines.append(f"    picture: {k.picture}")
    if g.absorbed:
        ops = ", ".join(f"{op} (%{node})" for op, node in g.absorbed)
        lines.append(f"  folded into kernel broadcasts: {ops}")
    if g.left_out:
        lines.append("  left to ATen:")
        lines.extend(f"    {op} (%{node}): {reason}" for op, node, reason in g.left_out)
    if g.aliases:
        kinds = collections.Counter(op for op, _node, _reason in g.aliases)
        lines.append(f"  views and aliases ATen runs (not counted): {len(g.aliases)} ("
                     + ", ".join(f"{op} x{n}" if n > 1 else op for op, n in kinds.most_common()) + ")")
    if g.rejected:
        lines.append("  rejected fusions:")
        lines.extend(f"    {r}" for r in g.rejected)
    if g.graph_break:
        lines.append(f"  graph break after it: {g.graph_break}")
    if g.pictures:
        files = [g.pictures[k] for k in ("overview svg", "svg", "png", "dot") if k in g.pictures]
        per_kernel = sum(1 for k in g.kernels if k.picture)
        lines.append("  pictures: " + ", ".join(files)
                     + (f"; {per_kernel} per kernel, listed with each kernel" if per_kernel else ""))
    return lines


# The report ----------------------------------------------------------------------------------


def node_origin(fx: torch.fx.Node) -> str:
    """Where an FX node came from in the user's model: the innermost module's path and class
    (`layers.0.mlp (LlamaMLP)`) and, when Dynamo recorded it, the source line
    (`modeling_llama.py:158`); "" when the node carries neither."""
    parts = []
    stack = fx.meta.get("nn_module_stack") or {}
    if stack:
        path, cls = list(stack.values())[-1]
        path = re.sub(r"^[LG]\['[^']*'\]\.?", "", path)
        path = re.sub(r"\._modules\['([^']*)'\]", r".\1", path).lstrip(".")
        parts.append(f"{path or 'the model'} ({getattr(cls, '__name__', cls)})")
    trace = [ln.strip() for ln in (fx.meta.get("stack_trace") or "").splitlines() if ln.strip().startswith("File ")]
    m = re.match(r'File "([^"]+)", line (\d+)', trace[-1]) if trace else None
    if m:
        parts.append(f"{os.path.basename(m.group(1))}:{m.group(2)}")
    return " ".join(parts)


@dataclasses.dataclass
class OpCounts:
    """The one count of a graph's ATen ops that the report's text, its kernel table and the
    pictures' titles and kernel labels print (op_counts). Node indices address the translation's
    Graph IR nodes: each computing ATen op by the node holding its value."""

    total: int  # ATen ops of the graph that compute (ir_nodes.computes)
    kernels: Dict[str, List[int]]  # kernel name -> the computing ATen ops it computes
    left: List[int]  # the computing ATen ops left to ATen (or the frontend)
    aliases: List[int]  # views and aliases ATen runs: not counted

    @property
    def in_kernels(self) -> int:
        return sum(len(ops) for ops in self.kernels.values())

    def dot_args(self) -> Tuple[int, int, Dict[str, int]]:
        """The count as _C.Program.fused_dot / kernel_dot take it (fusion::DotFacts)."""
        return self.total, self.in_kernels, {k: len(ops) for k, ops in self.kernels.items()}


def op_counts(rec: GraphRecord) -> OpCounts:
    """The ATen ops of one graph record, by where they run: each FX node that computes
    (ir_nodes.computes) once, in the step computing its value; views and aliases ATen runs apart.
    A graph run eagerly before translation (autofuse disabled, inputs on another device) has only
    its count (GraphRecord.compute_ops)."""
    tr = rec.translation
    if tr is None:
        return OpCounts(rec.compute_ops, {}, [], [])
    from . import _C

    home: Dict[torch.fx.Node, int] = {}  # FX node -> the Graph IR node holding its value (its last)
    for i, n in enumerate(tr.nodes):
        if n.fx is not None and n.fx.op == "call_function":
            home[n.fx] = i
    kernel_of = {o: st.name for st in rec.steps if st.kind == _C.StepKind.kernel for o in st.ops}
    counts = OpCounts(0, {st.name: [] for st in rec.steps if st.kind == _C.StepKind.kernel}, [], [])
    for fx, i in sorted(home.items(), key=lambda item: item[1]):
        k = kernel_of.get(i)
        if not computes(fx):
            if k is None:
                counts.aliases.append(i)
            continue
        counts.total += 1
        (counts.kernels[k] if k is not None else counts.left).append(i)
    return counts


def value_text(val: Any) -> str:
    """A value's type as the pictures print it: "f32[2, 8]" (torch's dtype name where the IR has
    none), "(f32[2, 8], f32[2])" for a tuple, else the Python type's name."""
    if isinstance(val, torch.Tensor):
        dtype = dtype_name(val.dtype) or str(val.dtype).replace("torch.", "")
        return f"{dtype}[{', '.join(str(d) for d in val.shape)}]"
    if isinstance(val, (tuple, list)):
        return "(" + ", ".join(value_text(v) for v in val) + ")"
    return "None" if val is None else type(val).__name__


def value_types(rec: GraphRecord) -> Dict[str, str]:
    """The real types of the values the Graph IR prints as its placeholder i64[] (a node the
    frontend could not type: the tuple an op with several outputs returns), for the pictures."""
    tr = rec.translation
    if tr is None:
        return {}
    return {n.name: value_text(n.fx.meta.get("val")) for n in tr.nodes if n.type is None and n.fx is not None}


def graph_report(rec: GraphRecord) -> GraphReport:
    """The report of one graph record."""
    tr = rec.translation
    counts = op_counts(rec)
    if tr is None:
        return GraphReport(rec.name, rec.tag, [], [], [], rec.fx_ops, 0, rec.fallback, compute_ops=counts.total)
    from . import _C

    step_reason = {o: st.reason for st in rec.steps if st.kind != _C.StepKind.kernel for o in st.ops}

    def left(i: int) -> Tuple[str, str, str]:
        n = tr.nodes[i]
        if n.reason or i in step_reason:
            why = n.reason or step_reason[i]
        elif not rec.steps:
            why = "the graph runs eagerly"  # its reason is printed once, in the header
        elif n.kind == "const":
            why = "a constant, inlined into the kernels that read it"
        else:
            why = f"{n.kind} evaluated by the frontend"  # no step lists it
        return n.origin, n.name, why

    kernels: List[KernelReport] = []
    for st in rec.steps:
        if st.kind != _C.StepKind.kernel:
            continue
        nodes = [tr.nodes[o] for o in st.ops]
        counted = set(counts.kernels[st.name])
        origins = [node_origin(n.fx) for n in nodes if n.fx is not None]
        kernels.append(KernelReport(
            st.name, [n.origin for o, n in zip(st.ops, nodes) if o in counted], [n.name for n in nodes],
            [f"{n.kind} %{n.name}" for o, n in zip(st.ops, nodes) if o not in counted],
            [(n.kind, n.name) for n in nodes], st.bytes_read, st.bytes_written, st.bytes_unfused,
            list(st.tiling_cases), list(dict.fromkeys(o for o in origins if o)),
        ))
    program = rec.program
    rejected = [RejectedFusion(*r) for r in program.rejected()] if program is not None else []
    report = GraphReport(
        rec.name, rec.tag, kernels, [left(i) for i in counts.left], list(tr.absorbed), rec.fx_ops,
        fused_op_count(rec), rec.fallback, rejected, counts.total, counts.in_kernels,
        [left(i) for i in counts.aliases],
    )
    if program is not None:
        dot_args = dict(aten_ops=counts.dot_args(), value_types=value_types(rec))
        report.dot = program.fused_dot(**dot_args)
        report.overview_dot = program.fused_dot(overview=True, **dot_args)
        report.kernel_dots = {k.name: program.kernel_dot(k.name, **dot_args) for k in kernels}
    return report


# The picture ---------------------------------------------------------------------------------


def write_picture(name: str, dot_text: str, directory: str, kind: str = "fused",
                  formats: Sequence[str] = ("svg", "png")) -> Dict[str, str]:
    """Writes `<name>.<kind>.dot` into `directory` and renders it with Graphviz `dot` to each of
    `formats` (in SVG, tooltips show each node's IR). Returns the paths written by format. Without
    `dot` on PATH, or when it fails or times out, logs a warning and returns only the DOT file:
    a picture never fails the report."""
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, f"{name}.{kind}")
    with open(base + ".dot", "w") as f:
        f.write(dot_text)
    written = {"dot": base + ".dot"}
    exe = shutil.which("dot")
    if exe is None:
        logger.warning(
            "autofuse explain: Graphviz `dot` is not on PATH, so %s.dot is not rendered to SVG/PNG; "
            "install the Debian package `graphviz` (apt-get install graphviz)", base)
        return written
    for fmt in formats:
        out = f"{base}.{fmt}"
        try:
            subprocess.run([exe, f"-T{fmt}", "-o", out, base + ".dot"], check=True, capture_output=True,
                           timeout=DOT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            logger.warning("autofuse explain: `dot -T%s` on %s.dot took over %.0f s; no %s picture",
                           fmt, base, DOT_TIMEOUT_S, fmt)
            continue
        except (subprocess.CalledProcessError, OSError) as e:
            err = getattr(e, "stderr", b"") or b""
            logger.warning("autofuse explain: `dot -T%s` failed on %s.dot: %s", fmt, base,
                           err.decode(errors="replace").strip() or e)
            continue
        written[fmt] = out
    return written


def explain(
    fn: Callable,
    *inputs: Any,
    config: Optional[CompilerConfig] = None,
    print_report: bool = False,
    picture_dir: Optional[str] = None,
    backward: Optional[bool] = None,
    **kwargs: Any,
) -> ExplainReport:
    """Compiles `fn` with autofuse, runs it on `inputs` and reports what was fused.

    The report's `output` holds fn's result. Compilation goes through Dynamo, so a function
    compiled before with the same backend object is not recompiled; explain uses a new backend
    every call. When the output requires grad (a training step; `backward=` forces it either
    way) explain also runs a backward of it, so the report holds the backward graphs too; the
    gradients of fn's parameters and inputs are left as they were. Pictures of the fused graphs
    go to `picture_dir`, else to the config's dump_dir (AUTOFUSE_DUMP); with neither none are
    drawn.
    """
    config = config or CompilerConfig()
    if config.frontend == "inductor":
        return _explain_inductor(fn, inputs, config, print_report, backward, kwargs)
    out, records, breaks = _run(fn, inputs, kwargs, config, backward, collect_records)
    report = ExplainReport([graph_report(r) for r in records], out, breaks, _disabled(config))
    for b in breaks:
        for g in report.graphs:
            if g.name in b.graphs:
                g.graph_break = f"{b.where}: {b.summary}" if b.where else b.summary
    directory = picture_dir or config.dump_dir
    if directory:
        what = "picture_dir" if picture_dir else "dump_dir (AUTOFUSE_DUMP)"
        try:
            _draw(report, directory)
        except OSError as e:  # the report matters more than its pictures
            report.pictures_not_written = f"{what} {directory!r} is unusable: {e}"
            logger.warning("autofuse explain: %s %r is unusable (%s); the report is returned without pictures",
                           what, directory, e)
    if print_report:
        print(report)
    return report


def _draw(report: ExplainReport, directory: str) -> None:
    """Draws each compiled graph's pictures into `directory` (GraphReport.pictures and each
    KernelReport.picture say what was written). Raises OSError when the directory cannot be
    made or written."""
    for g in report.graphs:
        if not g.dot:
            continue
        g.pictures = write_picture(g.name, g.dot, directory)
        overview = write_picture(g.name, g.overview_dot, directory, "overview")
        g.pictures.update({f"overview {k}": v for k, v in overview.items()})
        for k in g.kernels:  # SVG only: one per kernel adds up
            svg = write_picture(g.name, g.kernel_dots[k.name], directory, k.name, formats=("svg",))
            g.pictures.update({f"{k.name} {fmt}": path for fmt, path in svg.items()})
            k.picture = svg.get("svg", svg["dot"])


def _disabled(config: CompilerConfig) -> str:
    """Why autofuse compiles nothing under `config` (its enable_autofuse setting off), or ""."""
    if config.fusion_settings()["enable_autofuse"]:
        return ""
    if config.enable_autofuse is False:
        return "CompilerConfig(enable_autofuse=False)"
    return "--enable_autofuse=false in AUTOFUSE_FLAGS"


def _run(fn: Callable, inputs: Sequence[Any], kwargs: Dict[str, Any], config: CompilerConfig,
         backward: Optional[bool], collector: Callable) -> Tuple[Any, List[Any], List[GraphBreak]]:
    """(fn's output, the records `collector` gathered, Dynamo's graph breaks): fn compiled with
    `config` and run, and its backward too when the output requires grad (or `backward` says
    so). A graph break is read where Dynamo hands the graph before it to the backend (its
    compile_subgraph_reason, as torch._dynamo.explain reads it)."""
    backend = get_backend(config)
    breaks: List[GraphBreak] = []

    def capture(gm: torch.fx.GraphModule, example_inputs: List[Any]) -> Callable:
        with collect_records() as made:  # the graphs (forward or inference) compiled from gm
            compiled_gm = backend(gm, example_inputs)
        why = getattr(gm, "compile_subgraph_reason", None)
        if why is not None and why.graph_break:
            breaks.append(GraphBreak(why.reason, _frame_text(why.user_stack), [r.name for r in made]))
        return compiled_gm

    compiled = torch.compile(fn, backend=capture)
    # traced afresh, not loaded from AOTAutograd's cache (aot_cache.py), whose graphs keep no
    # module paths for the report
    with collector() as records, torch._functorch.config.patch(enable_autograd_cache=False):
        out = compiled(*inputs, **kwargs)
        grads = [t for t in _tensors(out) if t.requires_grad]
        if grads if backward is None else backward:
            _backward_keeping_grads(grads, fn, inputs)
    return out, list(records), breaks


def _frame_text(stack: Sequence[Any]) -> str:
    """'file.py:12 `print(x)`' for the innermost frame of a user stack (traceback.FrameSummary)."""
    if not stack:
        return ""
    frame = stack[-1]
    line = (frame.line or "").strip()
    return f"{os.path.basename(frame.filename)}:{frame.lineno}" + (f" `{line}`" if line else "")


def _explain_inductor(fn: Callable, inputs: Sequence[Any], config: CompilerConfig, print_report: bool,
                      backward: Optional[bool], kwargs: Dict[str, Any]):
    """explain() for the Inductor frontend: an autofuse.inductor.InductorReport (each Inductor
    fusion group, whether it became an AscIR kernel or why not, its bytes, AscIR and source)."""
    from .inductor import InductorReport, collect_records as collect_inductor

    out, records, _breaks = _run(fn, inputs, kwargs, config, backward, collect_inductor)
    report = InductorReport(records, out)
    if print_report:
        print(report)
    return report


def _tensors(value: Any) -> List[torch.Tensor]:
    """The tensors in a (nested) output: torch's pytree leaves (a ModelOutput is a node)."""
    return [t for t in pytree.tree_leaves(value) if isinstance(t, torch.Tensor)]


def _backward_keeping_grads(outputs: List[torch.Tensor], fn: Callable, inputs: Sequence[Any]) -> None:
    """Backward of `outputs` (all-ones gradients) that leaves every `.grad` of fn's parameters
    and of the input tensors as it found it."""
    if not outputs:
        raise ValueError("explain(backward=True): no output of fn requires grad")
    leaves = list(fn.parameters()) if isinstance(fn, torch.nn.Module) else []
    leaves += [t for t in _tensors(list(inputs)) if t.requires_grad and t.is_leaf]
    saved = [t.grad for t in leaves]
    torch.autograd.backward(outputs, [torch.ones_like(t) for t in outputs])
    for t, g in zip(leaves, saved):
        t.grad = g
