"""autofuse.explain(fn, *inputs): compile and run `fn` with autofuse and report what was fused.

The report lists, per compiled graph, each kernel with the ATen ops (FX node targets) it holds,
every ATen op left to ATen with its reason, and the counts (kernels, ATen ops replaced).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, List, Optional, Tuple

import torch

from .backend import GraphRecord, collect_records, fused_op_count, get_backend
from .config import CompilerConfig


@dataclasses.dataclass
class KernelReport:
    """One generated kernel: its name and the ATen ops it computes (FX targets, in order)."""

    name: str
    aten_ops: List[str]
    node_names: List[str]
    extra: List[str]  # synthesized nodes (casts, broadcasts, layout views) inside it


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

    def __str__(self) -> str:
        lines = [
            f"autofuse explain: {len(self.graphs)} graph(s), {self.num_kernels} kernel(s), "
            f"{self.fused_ops} of {self.total_ops} ATen ops replaced by kernels"
        ]
        for g in self.graphs:
            head = f"graph {g.name} ({g.tag}): {len(g.kernels)} kernel(s), {g.fused_ops}/{g.fx_ops} ATen ops fused"
            lines.append(head + (f" -- runs eagerly: {g.fallback}" if g.fallback else ""))
            for k in g.kernels:
                extra = f" (+ {', '.join(k.extra)})" if k.extra else ""
                lines.append(f"  kernel {k.name}: {', '.join(k.aten_ops)}{extra}")
            if g.absorbed:
                ops = ", ".join(f"{op} (%{node})" for op, node in g.absorbed)
                lines.append(f"  folded into kernel broadcasts: {ops}")
            if g.left_out:
                lines.append("  left to ATen:")
                for op, node, reason in g.left_out:
                    lines.append(f"    {op} (%{node}): {reason}")
        return "\n".join(lines)


def graph_report(rec: GraphRecord) -> GraphReport:
    """The report of one graph record."""
    tr = rec.translation
    kernels: List[KernelReport] = []
    left: List[Tuple[str, str, str]] = []
    if tr is None or not rec.steps:
        if tr is not None:
            for n in tr.nodes:
                if n.fx is not None and n.fx.op == "call_function":
                    left.append((n.origin, n.name, n.reason or rec.fallback))
        return GraphReport(rec.name, rec.tag, [], left, [], rec.fx_ops, 0, rec.fallback)
    in_kernel = set()
    for kind, name, ops, _ins, _outs, _k, reason in rec.steps:
        nodes = [tr.nodes[tr.index[o]] for o in ops]
        if kind == "kernel":
            aten = [n.origin for n in nodes if n.fx is not None]
            extra = [f"{n.kind} %{n.name}" for n in nodes if n.fx is None]
            kernels.append(KernelReport(name, aten, [n.name for n in nodes], extra))
            in_kernel.update(n.name for n in nodes)
            continue
        for n in nodes:
            if n.fx is not None and n.fx.op == "call_function":
                left.append((n.origin, n.name, n.reason or reason))
    seen = {name for _, name, _ in left} | in_kernel
    for n in tr.nodes:  # ops no step lists (evaluated by the frontend, e.g. constants)
        if n.fx is not None and n.fx.op == "call_function" and n.name not in seen:
            why = "a constant, inlined into the kernels that read it" if n.kind == "const" else None
            left.append((n.origin, n.name, n.reason or why or f"{n.kind} evaluated by the frontend"))
    return GraphReport(
        rec.name, rec.tag, kernels, left, list(tr.absorbed), rec.fx_ops, fused_op_count(rec), rec.fallback
    )


def explain(
    fn: Callable,
    *inputs: Any,
    config: Optional[CompilerConfig] = None,
    print_report: bool = False,
    **kwargs: Any,
) -> ExplainReport:
    """Compiles `fn` with autofuse, runs it on `inputs` and reports what was fused.

    The report's `output` holds fn's result. Compilation goes through Dynamo, so a function
    compiled before with the same backend object is not recompiled; explain uses a new backend
    every call.
    """
    compiled = torch.compile(fn, backend=get_backend(config or CompilerConfig()))
    with collect_records() as records:
        out = compiled(*inputs, **kwargs)
    report = ExplainReport([graph_report(r) for r in records], out)
    if print_report:
        print(report)
    return report
