"""autofuse.explain(fn, *inputs): compile and run `fn` with autofuse and report what was fused.

The report lists, per compiled graph (forward and backward when fn's output requires grad),
each kernel with the ATen ops (FX node targets) and Graph IR ops it holds, the modules and
source lines they come from, the bytes it reads and writes against what eager moves for the
same ops, its TilingCases; every ATen op left to ATen with its reason; every fusion the policy
declined with its reason; and the counts (kernels, computing ATen ops replaced: views, aliases
and tuple indexing compute nothing and are not counted). With a picture directory (the config's
dump_dir / AUTOFUSE_DUMP, or `picture_dir=`) it also draws each fused graph there, rendered to
`.svg` and `.png` by Graphviz `dot`: `<graph>.overview.*` with every kernel one node (its ops in
the SVG tooltip), `<graph>.fused.*` with every kernel a cluster of its ops, and per kernel
`<graph>.<kernel>.svg` with its ops, inputs and outputs. With CompilerConfig(frontend="inductor")
it returns autofuse.inductor.InductorReport instead: Inductor's fusion groups, each an AscIR
kernel or left to Inductor's C++ with the reason (no pictures).

Bytes come from the core with each step (_C.Step: fusion::step_bytes, counted at the size hints
as the pictures count them).
"""

from __future__ import annotations

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
from .ir_nodes import is_alias
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
    left_out: List[Tuple[str, str, str]]  # (ATen op, FX node name, reason)
    absorbed: List[Tuple[str, str]]  # (ATen op, FX node name) folded into kernels' broadcasts
    fx_ops: int
    fused_ops: int
    fallback: str
    rejected: List[RejectedFusion] = dataclasses.field(default_factory=list)
    compute_ops: int = 0  # ATen ops that compute (fx_ops less views, aliases and getitem)
    fused_compute_ops: int = 0  # of those, the ones kernels compute
    dot: str = ""  # the FusedGraph as Graphviz DOT ("" when the graph runs eagerly)
    overview_dot: str = ""  # the same with every kernel one node (readable for a whole model)
    kernel_dots: Dict[str, str] = dataclasses.field(default_factory=dict)  # kernel -> its own DOT
    pictures: Dict[str, str] = dataclasses.field(default_factory=dict)  # "dot"/"svg"/"png" -> path

    @property
    def fallbacks(self) -> List[Tuple[str, str, str]]:
        """The ATen ops left to ATen: (ATen op, FX node name, reason)."""
        return self.left_out


@dataclasses.dataclass
class ExplainReport:
    """What autofuse did with a function: graphs, kernels, ops left to ATen and why."""

    graphs: List[GraphReport]
    output: Any = None

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
        lines = [
            f"autofuse explain: {len(self.graphs)} graph(s) [{tags}], {self.num_kernels} kernel(s), "
            f"{self.fused_compute_ops} of {self.compute_ops} computing ATen ops replaced by kernels "
            f"(views and aliases not counted)"
        ]
        for g in self.graphs:
            lines.extend(_graph_lines(g))
        return "\n".join(lines)


def human_bytes(n: Optional[int]) -> str:
    """'512 B', '1.5 KiB', '24.0 MiB' (the core's format, as the pictures print it); '-' unknown."""
    from . import _C

    return "-" if n is None else _C.human_bytes(n)


def _graph_lines(g: GraphReport) -> List[str]:
    head = (f"graph {g.name} ({g.tag}): {len(g.kernels)} kernel(s), {g.fused_compute_ops}/{g.compute_ops} "
            f"computing ATen ops fused")
    lines = [head + (f" -- runs eagerly: {g.fallback}" if g.fallback else "")]
    if g.kernels:
        rows = [("kernel", "ops", "read", "written", "unfused", "saved", "tiling cases")]
        for k in g.kernels:
            known = k.unfused_bytes and k.saved_bytes is not None
            saved = f"{100 * k.saved_bytes / k.unfused_bytes:.0f}%" if known else "-"
            rows.append((
                k.name, str(len(k.ops)), human_bytes(k.bytes_read), human_bytes(k.bytes_written),
                human_bytes(k.unfused_bytes), saved, ", ".join(k.tiling_cases) or "-",
            ))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:6], widths[1:6])] + [r[6]]
            lines.append("  " + "  ".join(cells).rstrip())
    for k in g.kernels:
        ops = ", ".join(k.aten_ops)
        if k.extra:
            ops += (" " if ops else "") + f"(+ {', '.join(k.extra)})"
        lines.append(f"  kernel {k.name}: {ops}")
        if k.origins:
            lines.append(f"    from: {'; '.join(k.origins)}")
        lines.append(f"    Graph IR: {', '.join(f'{kind} %{name}' for kind, name in k.ops)}")
    if g.absorbed:
        ops = ", ".join(f"{op} (%{node})" for op, node in g.absorbed)
        lines.append(f"  folded into kernel broadcasts: {ops}")
    if g.left_out:
        lines.append("  left to ATen:")
        lines.extend(f"    {op} (%{node}): {reason}" for op, node, reason in g.left_out)
    if g.rejected:
        lines.append("  rejected fusions:")
        lines.extend(f"    {r}" for r in g.rejected)
    if g.pictures:
        files = [g.pictures[k] for k in ("overview svg", "svg", "png", "dot") if k in g.pictures]
        lines.append("  pictures: " + ", ".join(files))
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


def compute_op_counts(rec: GraphRecord) -> Tuple[int, int]:
    """(ATen ops of the graph that compute, how many of them kernels compute)."""
    tr = rec.translation
    if tr is None:
        return 0, 0
    from . import _C

    computing = [i for i, n in enumerate(tr.nodes)
                 if n.fx is not None and n.fx.op == "call_function" and not is_alias(n.fx)]
    in_kernels = {o for st in rec.steps if st.kind == _C.StepKind.kernel for o in st.ops}
    return len({tr.nodes[i].fx for i in computing}), len({tr.nodes[i].fx for i in computing if i in in_kernels})


def graph_report(rec: GraphRecord) -> GraphReport:
    """The report of one graph record."""
    tr = rec.translation
    kernels: List[KernelReport] = []
    left: List[Tuple[str, str, str]] = []
    if tr is None or not rec.steps:
        if tr is not None:
            for n in tr.nodes:
                if n.fx is not None and n.fx.op == "call_function":
                    # The graph's fallback reason is printed once, in the header.
                    left.append((n.origin, n.name, n.reason or "the graph runs eagerly"))
        return GraphReport(rec.name, rec.tag, [], left, [], rec.fx_ops, 0, rec.fallback,
                           compute_ops=compute_op_counts(rec)[0])
    from . import _C

    program = rec.program
    in_kernel = set()
    for st in rec.steps:
        nodes = [tr.nodes[o] for o in st.ops]
        if st.kind == _C.StepKind.kernel:
            aten = [n.origin for n in nodes if n.fx is not None]
            extra = [f"{n.kind} %{n.name}" for n in nodes if n.fx is None]
            origins = [node_origin(n.fx) for n in nodes if n.fx is not None]
            kernels.append(KernelReport(
                st.name, aten, [n.name for n in nodes], extra, [(n.kind, n.name) for n in nodes],
                st.bytes_read, st.bytes_written, st.bytes_unfused, list(st.tiling_cases),
                list(dict.fromkeys(o for o in origins if o)),
            ))
            in_kernel.update(n.name for n in nodes)
            continue
        for n in nodes:
            if n.fx is not None and n.fx.op == "call_function":
                left.append((n.origin, n.name, n.reason or st.reason))
    seen = {name for _, name, _ in left} | in_kernel
    for n in tr.nodes:  # ops no step lists (evaluated by the frontend, e.g. constants)
        if n.fx is not None and n.fx.op == "call_function" and n.name not in seen:
            why = "a constant, inlined into the kernels that read it" if n.kind == "const" else None
            left.append((n.origin, n.name, n.reason or why or f"{n.kind} evaluated by the frontend"))
    rejected = [RejectedFusion(*r) for r in program.rejected()] if program is not None else []
    return GraphReport(
        rec.name, rec.tag, kernels, left, list(tr.absorbed), rec.fx_ops, fused_op_count(rec), rec.fallback,
        rejected, *compute_op_counts(rec), dot=program.fused_dot() if program is not None else "",
        overview_dot=program.fused_dot(overview=True) if program is not None else "",
        kernel_dots={k.name: program.kernel_dot(k.name) for k in kernels} if program is not None else {},
    )


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
    out, records = _run(fn, inputs, kwargs, config, backward, collect_records)
    report = ExplainReport([graph_report(r) for r in records], out)
    directory = picture_dir or config.dump_dir
    if directory:
        for g in report.graphs:
            if g.dot:
                g.pictures = write_picture(g.name, g.dot, directory)
                overview = write_picture(g.name, g.overview_dot, directory, "overview")
                g.pictures.update({f"overview {k}": v for k, v in overview.items()})
                for k, dot in g.kernel_dots.items():  # SVG only: one per kernel adds up
                    svg = write_picture(g.name, dot, directory, k, formats=("svg",))
                    g.pictures.update({f"{k} {fmt}": path for fmt, path in svg.items()})
    if print_report:
        print(report)
    return report


def _run(fn: Callable, inputs: Sequence[Any], kwargs: Dict[str, Any], config: CompilerConfig,
         backward: Optional[bool], collector: Callable) -> Tuple[Any, List[Any]]:
    """(fn's output, the records `collector` gathered): fn compiled with `config` and run, and
    its backward too when the output requires grad (or `backward` says so)."""
    compiled = torch.compile(fn, backend=get_backend(config))
    with collector() as records:
        out = compiled(*inputs, **kwargs)
        grads = [t for t in _tensors(out) if t.requires_grad]
        if grads if backward is None else backward:
            _backward_keeping_grads(grads, fn, inputs)
    return out, list(records)


def _explain_inductor(fn: Callable, inputs: Sequence[Any], config: CompilerConfig, print_report: bool,
                      backward: Optional[bool], kwargs: Dict[str, Any]):
    """explain() for the Inductor frontend: an autofuse.inductor.InductorReport (each Inductor
    fusion group, whether it became an AscIR kernel or why not, its bytes, AscIR and source)."""
    from .inductor import InductorReport, collect_records as collect_inductor

    out, records = _run(fn, inputs, kwargs, config, backward, collect_inductor)
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
