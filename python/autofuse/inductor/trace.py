"""Inductor loop bodies -> AscIR kernels (the Inductor frontend's tracer).

An Inductor scheduler node (or a fused group of them) is a set of loop bodies over one
iteration space. `trace_group` runs each body under `AscTracer`, an ops handler that forwards
every call to the core's `_C.BodyOps` (src/inductor/body_ops.h), which holds what the calls
mean in AscIR and builds the kernel in an `ascir::LoopNestBuilder`: the kernel axes (a loop
variable split by floordiv or modulo becomes digits), indices as strides and offsets, index
values, loads of what the group wrote, gathers, welford and mean reductions, the dtype rule,
broadcasting, CSE and the final cut. Here only the crossing: values are the core's ids,
indices and sizes sym text (`symbolic.ir_text`), dtypes AscIR names.

Anything the core cannot build raises CompileError with the reason (an expression it cannot
read, symbolic.Unsupported): the node then stays with Inductor's C++ backend. Tracing only reads
the nodes: it has no effect on the scheduler.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import sympy
import torch

from .. import _C
from ..ir_nodes import dtype_name
from ..symbolic import ir_text
from .torch_internals import DefaultHandler, FloorDiv, ModularIndexing, V, inductor_config

class Value(int):
    """A traced value: its id in the core's BodyOps."""


def _dtype(dtype: torch.dtype) -> str:
    return dtype_name(dtype) or str(dtype).replace("torch.", "")


class AscTracer(DefaultHandler):
    """The ops handler that forwards one group's loop bodies to a BodyOps (module docstring);
    `symbols`: the group's size symbols by name (to read the core's sizes back)."""

    def __init__(self, ops: Any, symbols: Dict[str, sympy.Symbol]):
        self.ops = ops
        self.locals = {**symbols, "floordiv": FloorDiv, "mod": lambda a, m: ModularIndexing(a, 1, m),
                       "min": sympy.Min, "max": sympy.Max}

    def _id(self, a: Any) -> int:
        if isinstance(a, Value):
            return a
        if not isinstance(a, (bool, int, float)):
            raise _C.CompileError(f"operand {a!r} ({type(a).__name__}) is not a traced value")
        return self.ops.number(a)

    def _sympy(self, text: str) -> sympy.Expr:
        """The core's size text as a sympy expression over the graph's own symbols."""
        return sympy.sympify(text, locals=self.locals)

    def _default(self, name: str, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        if kwargs:
            raise _C.CompileError(f"op {name} has no AscIR kernel form")
        return Value(self.ops.op(name, [self._id(a) for a in args]))

    def constant(self, value: Any, dtype: torch.dtype) -> Value:
        return Value(self.ops.constant(value, _dtype(dtype)))

    def index_expr(self, expr: sympy.Expr, dtype: torch.dtype) -> Value:
        return Value(self.ops.index_expr(ir_text(expr), _dtype(dtype)))

    def to_dtype(self, x: Any, dtype: torch.dtype, src_dtype: Any = None, use_compute_types: bool = True) -> Value:
        return Value(self.ops.to_dtype(self._id(x), _dtype(dtype), use_compute_types))

    def load(self, name: str, index: sympy.Expr) -> Value:
        return Value(self.ops.load(name, _dtype(V.graph.get_dtype(name)), ir_text(index)))

    def indirect_indexing(self, index: Any, size: Any, check: bool = True, wrap_neg: bool = True) -> Any:
        """A symbol standing for the index value in the load/store indices that follow (a load
        by it is a gather, whose index the kernel checks)."""
        return sympy.Symbol(self.ops.indirect_indexing(self._id(index), ir_text(size), wrap_neg), integer=True)

    def check_bounds(self, expr: sympy.Expr, size: Any, lower: bool, upper: bool) -> None:
        """Inductor's bound check of an index it turned from a gather into affine indexing:
        proven here over the loop ranges (a gather's index is checked by the kernel)."""
        bounds = self.ops.bounds(ir_text(expr))
        if bounds is None:
            return
        lo, hi = (self._sympy(t) for t in bounds)
        known = V.graph.sizevars.statically_known_true
        if (lower and not known(sympy.Ge(lo, 0))) or (upper and not known(sympy.Lt(hi, size))):
            raise _C.CompileError(f"an index {expr} that Inductor checks against {size} at run time")

    def store(self, name: str, index: sympy.Expr, value: Any, mode: Any = None) -> None:
        self.ops.store(name, ir_text(index), self._id(value), "" if mode is None else str(mode))

    def store_reduction(self, name: str, index: sympy.Expr, value: Any) -> None:
        self.store(name, index, value)

    def reduction(self, dtype: torch.dtype, src_dtype: torch.dtype, reduction_type: str, value: Any) -> Any:
        out = [Value(v) for v in self.ops.reduction(reduction_type, self._id(value))]
        return out[0] if len(out) == 1 else tuple(out)


@dataclasses.dataclass
class TracedGroup:
    """A fused group as an AscIR kernel: its builder and what the wrapper passes it."""

    builder: Any        # the _C.LoopNestBuilder holding the kernel (BodyOps.kernel)
    inputs: List[str]   # buffer names, data index order
    outputs: List[str]  # buffer names, output index order
    symbols: List[str]  # the size symbols the kernel uses, sorted
    arange: Optional[sympy.Expr]  # the least length of the arange table it reads (None: none)
    kernel: Any = None  # the _C.ScheduledKernel, once the frontend has scheduled it


def group_ranges(nodes: Sequence[Any]) -> List[sympy.Expr]:
    """The loop ranges of a group: the longest node's (pointwise, then reduction). Every other
    node's ranges must be a prefix of them (a pointwise epilogue over the kept axes of a
    reduction): its variables are the first ones, and its values do not vary on the rest."""
    full = [[*n._sizes[0], *n._sizes[1]] for n in nodes]
    ranges = max(full, key=len)
    for r in full:
        if any(sympy.simplify(a - b) != 0 for a, b in zip(r, ranges)):
            raise _C.CompileError(f"the nodes' loop ranges differ ({list(ranges)} vs {r})")
    return list(ranges)


def trace_group(nodes: Sequence[Any], keep: Set[str]) -> TracedGroup:
    """Traces the SchedulerNodes of one group into a kernel; `keep`: the buffers the group
    writes that are read after it (stored), the others stay inside the kernel."""
    ranges = group_ranges(nodes)
    pvars = [sympy.Symbol(f"af_p{i}", integer=True, nonnegative=True) for i in range(len(ranges))]

    def loop_vars(n):
        np_, nr = len(n._sizes[0]), len(n._sizes[1])
        return pvars[:np_], pvars[np_:np_ + nr]

    exprs = [sympy.sympify(e) for n in nodes for e in n._body.indexing_from_args(loop_vars(n)).values()]
    symbols = {s.name: s for e in [*ranges, *exprs] for s in sympy.sympify(e).free_symbols}
    ops = _C.BodyOps([v.name for v in pvars], [ir_text(r) for r in ranges], [ir_text(e) for e in exprs],
                     bool(inductor_config.emulate_precision_casts))
    tracer = AscTracer(ops, symbols)
    for n in nodes:
        point, red = loop_vars(n)
        ops.set_reduction_vars([v.name for v in red])
        with V.set_ops_handler(tracer):
            n._body(point, red)
    outputs = [buf for buf in ops.stored() if buf in keep]
    inputs, used = ops.finish([(buf, _dtype(V.graph.get_dtype(buf))) for buf in outputs])
    length = ops.kernel.arange_length()
    return TracedGroup(ops.kernel, inputs, outputs, used, tracer._sympy(length) if length else None)
