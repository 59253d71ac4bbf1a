"""Inductor loop bodies -> AscIR kernels, built through the core's ascir::LoopNestBuilder (the
Inductor frontend's tracer).

An Inductor scheduler node (or a fused group of them) is a set of loop bodies over one
iteration space. `trace_group` runs each body under `AscTracer`, an ops handler that records
what the body computes in an `_C.LoopNestBuilder` over the group's loop variables and every index
its bodies use. The core owns the kernels' rules: the kernel axes (a loop variable split by
floordiv or modulo becomes digits), indices as strides and offsets, index values (iotas read
from arange tables), dtypes (f16/bf16 computed in f32, integer lanes, bool results),
broadcasting, one node per distinct value, and the final cut. Here:

- a load of a buffer is a read at its index; a load of a buffer the group itself wrote at the
  same index is the written value; a load by an index value is a row gather;
- an op becomes the registry kind of docs/ir.md of the same name (Inductor's `truediv` and
  `bitwise_*` on bools renamed);
- a reduction reduces the node's reduction axes (welford_reduce becomes a mean and a sum of
  squared deviations); sum / index_expr(N) over a sum's N reduced elements is a reduce_mean;
- stores are kept for `finish` to write the buffers read after the group.

Index expressions cross as sym text (`expr_text`). Anything the core cannot build raises
Unsupported with the reason: the node then stays with Inductor's C++ backend. Tracing only
reads the nodes: it has no effect on the scheduler.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import sympy
import torch

from .. import _C
from ..ir_nodes import dtype_name
from .torch_internals import DefaultHandler, FloorDiv, ModularIndexing, V, inductor_config
from .unsupported import Unsupported

# Inductor's op names that the registry spells otherwise (bitwise_* are traced on bools only).
_RENAMED = {"truediv": "div", "bitwise_and": "logical_and", "bitwise_or": "logical_or",
            "bitwise_xor": "logical_xor", "bitwise_not": "logical_not"}
# The name prefix of the arange tables an iota reads (a kernel input the wrapper passes as
# runtime.arange(length, dtype)): "arange.f32.0", "arange.i64.1", ...
ARANGE = "arange."


@functools.lru_cache(maxsize=None)
def _elementwise_kinds() -> frozenset:
    """The registry's elementwise kinds (autofuse._C.op_registry): the ops a kernel may compute."""
    return frozenset(k for k, (cls, _, _) in _C.op_registry().items() if cls == "elementwise")


def arange_dtype(table: str) -> str:
    """The AscIR dtype of arange table `table` ("arange.i64.0" -> "i64")."""
    return table.split(".")[1]


@dataclasses.dataclass(frozen=True)
class Value:
    """A traced value: a builder node (`node` >= 0), or what is not one yet: a size (`size`,
    sym text: index_expr of loop-invariant sizes), or a value of a dtype kernels do not compute
    (`buffer`: the buffer read; `const`: a constant's value)."""

    node: int = -1
    dtype: str = ""
    scalar: bool = False
    const: Any = 0
    size: Optional[str] = None
    buffer: str = ""


def expr_text(e: sympy.Expr) -> str:
    """A sympy index or size expression as sym/expr.h's text (what the core parses)."""
    e = sympy.sympify(e)
    if e.is_Integer:
        return str(int(e))
    if e.is_Symbol:
        return e.name
    if e.is_Add:
        return " + ".join(expr_text(a) for a in e.args)
    if e.is_Mul:
        return "*".join(f"({expr_text(a)})" if a.is_Add else expr_text(a) for a in e.args)
    if e.is_Pow and e.exp.is_Integer and int(e.exp) > 0:
        return "*".join([f"({expr_text(e.base)})"] * int(e.exp))
    name, args = type(e).__name__, [expr_text(a) for a in e.args]
    if name == "FloorDiv":
        return f"floordiv({args[0]}, {args[1]})"
    if name == "ModularIndexing":  # (x // d) % m
        return f"mod(floordiv({args[0]}, {args[1]}), {args[2]})"
    if name == "Abs":
        return f"max({args[0]}, -({args[0]}))"
    if name in ("Max", "Min") and len(args) >= 2:  # nested two at a time
        out = args[0]
        for a in args[1:]:
            out = f"{name.lower()}({out}, {a})"
        return out
    raise Unsupported(f"size expression {e} ({name}) has no AscIR form")


class AscTracer(DefaultHandler):
    """The ops handler that records one group's loop bodies in a LoopNestBuilder (module
    docstring); `symbols`: the group's size symbols by name (to read the core's sizes back)."""

    def __init__(self, b: Any, loop_vars: Set[sympy.Symbol], symbols: Dict[str, sympy.Symbol],
                 dtype_of: Callable[[str], torch.dtype]):
        self.b = b
        self.loop_vars = loop_vars
        self.locals = {**symbols, "floordiv": FloorDiv, "mod": lambda a, m: ModularIndexing(a, 1, m),
                       "min": sympy.Min, "max": sympy.Max}
        self.dtype_of = dtype_of  # buffer name -> torch dtype
        self.indirect: Dict[sympy.Symbol, Tuple[Value, int]] = {}  # indirect_indexing -> (index, size)
        self.stored: Dict[str, Tuple[sympy.Expr, Value]] = {}  # buffer -> (index, value)
        self.reduce_axes: Tuple[int, ...] = ()  # the reduction axes of the body being traced

    # --- values ------------------------------------------------------------------------
    def _call(self, method: str, *args: Any) -> Any:
        """A builder call; the builder's CompileError (a rule broken) as Unsupported."""
        try:
            return getattr(self.b, method)(*args)
        except _C.CompileError as e:
            raise Unsupported(str(e)) from None

    def _v(self, node: int) -> Value:
        return Value(node, self.b.dtype(node), self.b.is_scalar(node))

    def _sympy(self, text: str) -> sympy.Expr:
        """The core's size text as a sympy expression over the graph's own symbols."""
        return sympy.sympify(text, locals=self.locals)

    def _node(self, v: Value, what: str) -> int:
        """`v`'s node; Unsupported for a value that is not one."""
        v = self._materialize(v)
        if v.node < 0:
            raise Unsupported(f"{what} of {v.dtype} values{f' read from {v.buffer}' if v.buffer else ''} "
                              f"(kernels compute f32, f16, bf16, bool, i64, i32)")
        return v.node

    def _scalar(self, value: Any, dtype: str) -> Value:
        return self._v(self._call("scalar", value, dtype))

    def _materialize(self, v: Value) -> Value:
        if v.size is not None:
            if not v.size.lstrip("-").isdigit():
                raise Unsupported(f"the size {v.size} is used as a value (only as a mean's divisor)")
            return self._scalar(float(v.size), "f32")
        return v

    def _cast(self, v: Value, dtype: str, compute_types: bool = False) -> Value:
        if v.node < 0 and v.scalar and v.size is None:  # a narrow integer constant
            v = self._scalar(int(v.const), "i64")
        return self._v(self._call("cast", self._node(v, "cast"), dtype, compute_types))

    def _op(self, kind: str, args: Sequence[Any], name: str = "") -> Value:
        vals = [self._value(a) for a in args]
        if kind == "div" and len(vals) == 2 and vals[1].size is not None and vals[0].node >= 0:
            mean = self.b.mean_of(vals[0].node, vals[1].size)  # sum(x) / N over N elements
            if mean >= 0:
                return self._v(mean)
        return self._v(self._call("compute", kind, [self._node(v, name or kind) for v in vals], name or kind))

    # --- the ops handler ---------------------------------------------------------------
    def _default(self, name: str, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        if name == "square":
            return self._op("mul", (args[0], args[0]))
        if name == "fma":
            return self._op("add", (self._op("mul", args[:2]), args[2]))
        kind = _RENAMED.get(name, name)
        if kind not in _elementwise_kinds() or kwargs:
            raise Unsupported(f"op {name} has no AscIR kernel form")
        if kind == "where":
            return self._where(*args)
        return self._op(kind, args, name)

    def _where(self, cond: Any, a: Any, b: Any) -> Value:
        c = self._value(cond)
        if c.dtype != "bool":
            c = self.to_dtype(c, torch.bool)
        return self._op("where", (c, a, b))

    def _value(self, a: Any) -> Value:
        if isinstance(a, Value):
            return a
        if isinstance(a, bool):
            return self._scalar(int(a), "bool")
        if isinstance(a, int):
            return self._scalar(a, "i64")
        if isinstance(a, float):
            return self._scalar(a, "f32")
        raise Unsupported(f"operand {a!r} ({type(a).__name__}) is not a traced value")

    def constant(self, value: Any, dtype: torch.dtype) -> Value:
        if dtype == torch.bool:
            return self._scalar(int(bool(value)), "bool")
        if dtype.is_floating_point:
            return self._scalar(float(value), "f32")
        name = dtype_name(dtype) or str(dtype)
        if name in ("i64", "i32"):
            return self._scalar(int(value), name)
        # A narrow integer: a node only once cast to a kernel dtype (to_dtype) or used by an op.
        return Value(-1, name, True, const=int(value))

    def index_expr(self, expr: sympy.Expr, dtype: torch.dtype) -> Value:
        expr = sympy.sympify(expr)
        if dtype.is_floating_point and not expr.is_Integer and not expr.free_symbols & self.loop_vars:
            return Value(-1, "f32", True, size=expr_text(expr))  # a size: a mean's divisor
        return self._v(self._call("index_value", expr_text(expr), dtype_name(dtype) or str(dtype)))

    def to_dtype(self, x: Any, dtype: torch.dtype, src_dtype: Optional[torch.dtype] = None,
                 use_compute_types: bool = True) -> Value:
        v = self._value(x)
        name = dtype_name(dtype) or str(dtype)
        if v.size is not None and dtype.is_floating_point:
            return v
        if dtype == torch.bool and v.dtype not in ("bool", "i64", "i32") and not v.scalar:
            return self._op("ne", (self._cast(v, "f32"), 0.0))
        compute_types = use_compute_types and not inductor_config.emulate_precision_casts
        return self._cast(v, name, compute_types)

    def load(self, name: str, index: sympy.Expr) -> Value:
        index = sympy.sympify(index)
        gather = [x for x in index.free_symbols if x in self.indirect]
        if name in self.stored:
            idx, val = self.stored[name]
            if gather or not self._call("same_index", expr_text(idx), expr_text(index)):
                raise Unsupported(f"reads {name}, written in the same kernel, at another index")
            return val
        dtype = dtype_name(self.dtype_of(name))
        if dtype is None:  # not a node: the value's use fails with its own reason
            return Value(-1, str(self.dtype_of(name)).replace("torch.", ""), buffer=name)
        if len(gather) > 1:
            raise Unsupported(f"load of {name}: index {index} gathers by two values")
        if gather:
            at, bound = self.indirect[gather[0]]
            node = self._call("gather_rows", name, dtype, expr_text(index), gather[0].name, at.node, bound)
        else:
            node = self._call("read", name, dtype, expr_text(index))
        return self._v(node) if node >= 0 else Value(-1, dtype, buffer=name)

    def indirect_indexing(self, index: Any, size: Any, check: bool = True, wrap_neg: bool = True) -> Any:
        """A symbol standing for the index value in the load/store indices that follow: a load
        by it is a gather; kernels check the index against the dim's size (an index outside
        raises IndexError after the kernel), after wrapping a negative one when `wrap_neg`."""
        v = self._materialize(self._value(index))
        if v.dtype not in ("i64", "i32") or v.node < 0:
            raise Unsupported(f"indirect indexing by {v.dtype} values{f' of {v.buffer}' if v.buffer else ''}")
        size = sympy.sympify(size)
        if not size.is_Integer or int(size) < 1:
            raise Unsupported(f"indirect indexing into a dim of size {size} (not a constant)")
        if v.scalar:
            raise Unsupported("indirect indexing by a constant")
        if wrap_neg:  # index + size where negative
            v = self._where(self._op("lt", (v, 0)), self._op("add", (v, int(size))), v)
        sym = sympy.Symbol(f"af_gather{len(self.indirect)}", integer=True)
        self.indirect[sym] = (self._cast(v, "i64"), int(size))
        return sym

    def check_bounds(self, expr: sympy.Expr, size: Any, lower: bool, upper: bool) -> None:
        """Inductor's bound check of an index it turned from a gather into affine indexing:
        proven here over the loop ranges (a gather's index is checked by the kernel)."""
        if set(sympy.sympify(expr).free_symbols) & set(self.indirect):
            return  # the gather checks its index
        lo, hi = (self._sympy(t) for t in self._call("bounds", expr_text(expr)))
        known = V.graph.sizevars.statically_known_true
        if (lower and not known(sympy.Ge(lo, 0))) or (upper and not known(sympy.Lt(hi, size))):
            raise Unsupported(f"an index {expr} that Inductor checks against {size} at run time")

    def store(self, name: str, index: sympy.Expr, value: Any, mode: Any = None) -> None:
        if mode is not None:
            raise Unsupported(f"a store with mode {mode} into {name} (a scatter-accumulate)")
        self._record_store(name, index, self._value(value))

    def store_reduction(self, name: str, index: sympy.Expr, value: Any) -> None:
        self._record_store(name, index, self._value(value))

    def _record_store(self, name: str, index: sympy.Expr, v: Value) -> None:
        if name in self.stored:
            raise Unsupported(f"{name} is written twice in one kernel")
        if set(sympy.sympify(index).free_symbols) & set(self.indirect):
            raise Unsupported(f"a store into {name} by an index value (a scatter)")
        self.stored[name] = (sympy.sympify(index), self._materialize(v))

    def reduction(self, dtype: torch.dtype, src_dtype: torch.dtype, reduction_type: str, value: Any) -> Any:
        if not self.reduce_axes:
            raise Unsupported(f"a {reduction_type} reduction outside a reduction loop")
        v = self._value(value)
        if reduction_type == "welford_reduce":
            mean = self._reduce("reduce_mean", v)
            dev = self._op("sub", (self._cast(v, "f32"), mean), "welford.dev")
            m2 = self._reduce("reduce_sum", self._op("mul", (dev, dev), "welford.sq"))
            return mean, m2, Value(-1, "f32", True, size=self.b.count(list(self.reduce_axes)))
        if reduction_type == "any" and v.dtype != "bool":
            v = self.to_dtype(v, torch.bool)
        if reduction_type not in ("sum", "max", "min", "prod", "any"):
            raise Unsupported(f"the {reduction_type} reduction")
        return self._reduce(f"reduce_{reduction_type}", v)

    def _reduce(self, kind: str, v: Value) -> Value:
        if kind != "reduce_any" and v.dtype not in ("f32", "f16", "bf16") and v.size is None:
            raise Unsupported(f"{kind} over {v.dtype} values (integer reductions stay Inductor's)")
        return self._v(self._call("reduce", kind, self._node(v, kind), list(self.reduce_axes)))

    # --- the kernel --------------------------------------------------------------------
    def finish(self, outputs: Sequence[str]) -> Tuple[List[str], List[str]]:
        """Writes each buffer of `outputs` (written by the group and read after it), in that
        order; returns the kernel's inputs (the buffer per data index) and size symbols."""
        for buf in outputs:
            index, v = self.stored[buf]
            node = self._node(v, f"the store of {buf}")
            self._call("write", buf, node, dtype_name(self.dtype_of(buf)) or "?", expr_text(index))
        _, inputs, symbols = self._call("finish")
        return inputs, symbols


@dataclasses.dataclass
class TracedGroup:
    """A fused group as an AscIR kernel: its builder and what the wrapper passes it."""

    builder: Any        # the _C.LoopNestBuilder holding the kernel
    inputs: List[str]   # buffer names, data index order
    outputs: List[str]  # buffer names, output index order
    symbols: List[str]  # the size symbols the kernel uses, sorted
    aranges: Dict[str, sympy.Expr]  # the arange tables among `inputs` -> their lengths
    kernel: Any = None  # the _C.ScheduledKernel, once the frontend has scheduled it


def group_ranges(nodes: Sequence[Any]) -> List[sympy.Expr]:
    """The loop ranges of a group: the longest node's (pointwise, then reduction). Every other
    node's ranges must be a prefix of them (a pointwise epilogue over the kept axes of a
    reduction): its variables are the first ones, and its values do not vary on the rest."""
    full = [[*n._sizes[0], *n._sizes[1]] for n in nodes]
    ranges = max(full, key=len)
    for r in full:
        if any(sympy.simplify(a - b) != 0 for a, b in zip(r, ranges)):
            raise Unsupported(f"the nodes' loop ranges differ ({list(ranges)} vs {r})")
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
    try:
        b = _C.LoopNestBuilder("k", [v.name for v in pvars], [expr_text(r) for r in ranges],
                               [expr_text(e) for e in exprs])
    except _C.CompileError as e:
        raise Unsupported(str(e)) from None
    tracer = AscTracer(b, set(pvars), symbols, V.graph.get_dtype)
    for n in nodes:
        point, red = loop_vars(n)
        tracer.reduce_axes = tuple(a for v in red for a in b.axes_of(v.name))
        with V.set_ops_handler(tracer):
            n._body(point, red)
    outputs = [buf for buf in tracer.stored if buf in keep]
    inputs, used = tracer.finish(outputs)
    return TracedGroup(b, inputs, outputs, used, {n: tracer._sympy(t) for n, t in b.aranges()})
