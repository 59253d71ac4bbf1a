"""AutofuseScheduling: Inductor's CPU Scheduling with each fusion group traced into AscIR.

Inductor's own CppScheduling decides fusion (can_fuse_*, group_fn, loop ordering: inherited
unchanged). At codegen, each group (a SchedulerNode or a fused group of them) is traced into
an AscIR kernel (trace.py) and checked through autofuse's Schedule and Codegen; if both succeed
the group's buffers are allocated and the wrapper calls the AscIR kernel (runtime.py), else
CppScheduling generates the group as usual and the reason is recorded. Nothing touches the
scheduler before a group is accepted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Dict, List, Optional, Tuple

from .. import _C
from ..symbolic import Unsupported
from . import runtime
from .torch_internals import CppScheduling, V
from .trace import TracedGroup, trace_group

@dataclasses.dataclass
class GroupRecord:
    """One Inductor fusion group: whether it became an AscIR kernel, and why not."""

    name: str                 # the AscIR kernel's name (af_<hash of its AscIR>), else Inductor's
    nodes: List[str]          # Inductor's scheduler node names
    origins: List[str]        # the ATen ops the group computes
    kind: str                 # "pointwise" or "reduction"
    kernel: bool              # became an AscIR kernel
    reason: str = ""          # why it stayed with Inductor
    ascir: str = ""
    inputs: List[str] = dataclasses.field(default_factory=list)
    outputs: List[str] = dataclasses.field(default_factory=list)
    bytes_moved: Optional[int] = None  # read + written at the size hints
    source: str = ""          # the generated kernel source (C++ or Ascend C)
    target: str = ""          # what the kernel was printed as: "cpu" (C++) or "ascendc"
    split: str = ""           # a node of a group that failed as a whole: the group's reason


class Session:
    """What one Inductor graph compile needs from autofuse: options and the group records."""

    def __init__(self, options: Dict[str, str], schedule):
        self.options = options    # compile_kernels keyword arguments (json-able)
        self.schedule = schedule  # (AscBuilder, name) -> _C.ScheduledKernel; raises CompileError
        self.groups: List[GroupRecord] = []
        self.defined: set = set()  # kernels the wrapper defines
        self.kept: List[Tuple[str, str]] = []  # the keys of the kernels handed to runtime.keep


def _origins(nodes) -> List[str]:
    out: List[str] = []
    for n in nodes:
        for o in sorted(getattr(n.node, "origins", ()) or (), key=lambda o: o.name):
            t = str(getattr(o, "target", o.name))
            if t not in out:
                out.append(t)
    return out


def _parts(nodes, bad) -> List[Tuple[List[Any], bool]]:
    """A failed group's nodes as (nodes, traceable) parts in an order that keeps every
    dependency (the core's split_group); `bad`: the names of nodes that cannot be kernels."""
    desc = [([d.name for d in n.read_writes.reads], [b.get_name() for b in n.get_outputs()], n.get_name() not in bad)
            for n in nodes]
    return [([nodes[i] for i in part], ok) for part, ok in _C.split_group(desc)]


def _reason(e: Exception) -> str:
    return str(e) if isinstance(e, (_C.CompileError, Unsupported)) else f"{type(e).__name__}: {e}"


def _bytes_moved(group: TracedGroup) -> Optional[int]:
    """Bytes the group's kernel reads and writes at the size hints (the core's count); None
    when a size has no hint."""
    hints = {s: int(V.graph.sizevars.optimization_hint(_sym(s), fallback=-1)) for s in group.symbols}
    return None if any(h < 0 for h in hints.values()) else group.kernel.bytes_moved(hints)


def make_scheduling(session: Session) -> type:
    """The Scheduling class Inductor instantiates per graph, bound to `session`."""

    class AutofuseScheduling(CppScheduling):
        def codegen_node(self, node) -> None:
            """The group as one AscIR kernel; failing that, its nodes in parts (_parts): each
            run of nodes that trace alone tried as one kernel (else node by node), each other
            node Inductor's C++ with its reason."""
            nodes = node.get_nodes()
            why = self._try(nodes)
            if why is None:
                return None
            if len(nodes) == 1:
                return self._cpp(node, nodes, why)
            alone = {n.get_name(): self._reason_alone(n) for n in nodes}
            for part, ok in _parts(nodes, {k for k, r in alone.items() if r is not None}):
                if not ok:
                    self._cpp(part[0], part, alone[part[0].get_name()], split=why)
                elif self._try(part, split=why) is not None:
                    for n in part:
                        sub_why = self._try([n], split=why)
                        if sub_why is not None:
                            self._cpp(n, [n], sub_why, split=why)
            return None

        def _try(self, nodes, split: str = "") -> Optional[str]:
            """Traces `nodes` into one AscIR kernel and emits its call: None, or why not
            (then nothing was touched)."""
            rec = self._record(nodes[0], nodes)
            rec.split = split
            try:
                group, removed = self._trace(nodes, rec)
            except Exception as e:  # CompileError (with its reason), or a tracer bug: not ours
                return _reason(e)
            session.groups.append(rec)
            self._emit(rec, group, nodes, removed)
            return None

        def _reason_alone(self, n) -> Optional[str]:
            """Why node `n` cannot be an AscIR kernel by itself; None when it can."""
            try:
                self._trace([n], self._record(n, [n]))
            except Exception as e:
                return _reason(e)
            return None

        def _cpp(self, node, nodes, why: str, split: str = "") -> None:
            """`node` (its SchedulerNodes `nodes`) generated by Inductor's C++ backend."""
            rec = self._record(node, nodes)
            rec.reason, rec.split = why, split
            session.groups.append(rec)
            super().codegen_node(node)

        def _record(self, node, nodes) -> GroupRecord:
            kind = "reduction" if any(n.is_reduction() for n in nodes) else "pointwise"
            return GroupRecord(name=node.get_name(), nodes=[n.get_name() for n in nodes],
                               origins=_origins(nodes), kind=kind, kernel=False)

        def _trace(self, nodes, rec: GroupRecord):
            if V.graph.cpp_wrapper:
                raise _C.CompileError("Inductor's C++ wrapper (cpp_wrapper, AOTInductor): the calls are Python")
            if any(n.is_template() or n.is_extern() for n in nodes):
                raise _C.CompileError("a template or extern kernel")
            scheduler = V.graph.scheduler
            names = {n.get_name() for n in nodes}
            written = [b.get_name() for n in nodes for b in n.get_outputs()]
            keep = {b for b in written if not scheduler.can_buffer_be_removed_through_fusion(b, names)
                    or b in V.graph.get_output_names()}
            group = trace_group(nodes, keep)
            # Named after its text, so the same group compiles to the same source (one JIT
            # cache entry) in every compile and process.
            rec.name = "af_" + hashlib.sha1(group.builder.finish()[0].encode()).hexdigest()[:12]
            try:  # scheduled and printed once: compile_pending compiles this very kernel
                group.kernel = session.schedule(group.builder, rec.name)
            except _C.CompileError as e:
                raise _C.CompileError(f"autofuse cannot compile its AscIR: {str(e).splitlines()[0]}") from None
            rec.ascir, rec.source, rec.target = group.kernel.ascir, group.kernel.source, group.kernel.target
            return group, [b for b in written if b not in keep]

        def _emit(self, rec: GroupRecord, group: TracedGroup, nodes, removed: List[str]) -> None:
            self.flush()  # the C++ kernels Inductor grouped before this one run first
            for n in nodes:
                n.mark_run()
            for b in removed:
                V.graph.removed_buffers.add(b)
            real = V.graph.scheduler.mutation_real_name
            wrapper = V.graph.wrapper_code
            ins = [f"arange({wrapper.codegen_python_sizevar(group.arange)})" if b == _C.LoopNestBuilder.ARANGE
                   else real.get(b, b) for b in group.inputs]
            outs = [real.get(b, b) for b in group.outputs]
            symbols = group.symbols
            wrapper.add_import_once("from autofuse.inductor.runtime import AscKernel, arange")
            session.kept.append(runtime.keep(group.kernel, session.options))
            body = f"AscKernel({rec.name!r}, r'''\n{rec.ascir}''', {json.dumps(session.options)!r}, {symbols!r})"
            if rec.name not in session.defined:  # an identical group earlier in the graph
                session.defined.add(rec.name)
                wrapper.define_kernel(rec.name, body, gpu=False)
            sizes = ", ".join(wrapper.codegen_python_sizevar(_sym(s)) for s in symbols)
            wrapper.writeline(f"{rec.name}.run(({''.join(a + ', ' for a in ins)}), "
                              f"({''.join(a + ', ' for a in outs)}), ({sizes}{',' if symbols else ''}))")
            rec.kernel = True
            rec.inputs, rec.outputs = ins, outs
            rec.bytes_moved = _bytes_moved(group)
            # Buffers whose last use this was are freed at the scheduler's next flush, as after
            # Inductor's own C++ kernels (freeing here would free what a group's later node reads).

    return AutofuseScheduling


def _sym(name: str):
    import sympy

    return sympy.Symbol(name, integer=True, positive=True)
