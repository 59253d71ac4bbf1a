"""Inductor loop bodies -> AscIR kernels, built through the core's ascir::Builder (the Inductor
frontend's tracer).

An Inductor scheduler node (or a fused group of them) is a set of loop bodies over one
iteration space. `trace_group` runs each body under `AscTracer`, an ops handler that records
what the body computes as AscIR values over the kernel axes z0, z1, ... (one per loop variable)
in an `_C.AscBuilder`, which owns the kernels' rules: dtypes (f16/bf16 computed in f32, integer
lanes, bool results), broadcasting, one node per distinct value, and the final cut. Here:

- a load of a buffer becomes an input read at the strides and offset of its affine index (a
  stride of 0: the same along that axis); a load of a buffer the group itself wrote at the same
  index is the written value; a load by an index value is a gather;
- an op becomes the registry kind of docs/ir.md of the same name (Inductor's `truediv` and
  `bitwise_*` on bools renamed);
- a reduction reduces the node's reduction axes (welford_reduce becomes a mean and a sum of
  squared deviations); sum / index_expr(N) over a sum's N reduced elements is a reduce_mean;
- stores are kept for `finish` to store the buffers read after the group.

Anything else raises Unsupported with the reason: the node then stays with Inductor's C++
backend. Tracing only reads the nodes: it has no effect on the scheduler.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import sympy
import torch

from .. import _C
from ..ir_nodes import dtype_name
from .loop_space import LoopSpace
from .torch_internals import DefaultHandler, V, inductor_config
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
    """A traced value: a builder node (`node` >= 0), or what is not one yet: a size expression
    (`size`: index_expr of loop-invariant sizes), or a value of a dtype kernels do not compute
    (`buffer`: the buffer read; `const`: a constant's value)."""

    node: int = -1
    dtype: str = ""
    scalar: bool = False
    const: Any = 0
    size: Optional[sympy.Expr] = None
    buffer: str = ""


def expr_text(e: sympy.Expr) -> str:
    """A sympy size expression as sym/expr.h's text (what the builder parses)."""
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
    name = type(e).__name__
    calls = {"Max": "max", "Min": "min"}
    if name == "FloorDiv":
        return f"floordiv({expr_text(e.args[0])}, {expr_text(e.args[1])})"
    if name in ("Max", "Min") and len(e.args) >= 2:  # nested two at a time
        head, *rest = e.args
        out = expr_text(head)
        for a in rest:
            out = f"{calls[name]}({out}, {expr_text(a)})"
        return out
    raise Unsupported(f"size expression {e} ({name}) has no AscIR form")


class AscTracer(DefaultHandler):
    """The ops handler that records one group's loop bodies in an AscBuilder (module docstring)."""

    def __init__(self, space: LoopSpace, dtype_of: Callable[[str], torch.dtype]):
        self.space = space
        self.sizes = list(space.sizes)
        self.vars = list(space.axis_vars)
        self.dtype_of = dtype_of  # buffer name -> torch dtype
        self.b = _C.AscBuilder("k")
        for s in self.sizes:
            self.b.add_axis(expr_text(s))
        self.reduce_of: Dict[int, Tuple[str, int, Tuple[int, ...]]] = {}  # reduce -> (kind, input, axes)
        self.aranges: Dict[str, sympy.Expr] = {}  # an arange table's name -> its length
        self.indirect: Dict[sympy.Symbol, Tuple[Value, int]] = {}  # indirect_indexing -> (index, size)
        self.stored: Dict[str, Tuple[sympy.Expr, Value]] = {}  # buffer -> (index, value)
        self.reduce_axes: Tuple[int, ...] = ()  # the reduction axes of the body being traced
        self.symbols: Set[str] = {x.name for e in self.sizes for x in sympy.sympify(e).free_symbols}

    # --- values ------------------------------------------------------------------------
    def _call(self, method: str, *args: Any) -> Value:
        """A builder call as a Value; the builder's CompileError (a rule broken) as Unsupported."""
        try:
            v = getattr(self.b, method)(*args)
        except _C.CompileError as e:
            raise Unsupported(str(e)) from None
        return Value(v, self.b.dtype(v), self.b.is_scalar(v))

    def _node(self, v: Value, what: str) -> int:
        """`v`'s node; Unsupported for a value that is not one."""
        v = self._materialize(v)
        if v.node < 0:
            raise Unsupported(f"{what} of {v.dtype} values{f' read from {v.buffer}' if v.buffer else ''} "
                              f"(kernels compute f32, f16, bf16, bool, i64, i32)")
        return v.node

    def _scalar(self, value: Any, dtype: str) -> Value:
        return self._call("scalar", value, dtype)

    def _materialize(self, v: Value) -> Value:
        if v.size is not None:
            if v.size.free_symbols:
                raise Unsupported(f"the size {v.size} is used as a value (only as a mean's divisor)")
            return self._scalar(float(v.size), "f32")
        return v

    def _cast(self, v: Value, dtype: str, compute_types: bool = False) -> Value:
        if v.node < 0 and v.scalar and v.size is None:  # a narrow integer constant
            v = self._scalar(int(v.const), "i64")
        return self._call("cast", self._node(v, "cast"), dtype, compute_types)

    def _op(self, kind: str, args: Sequence[Any], name: str = "") -> Value:
        vals = [self._value(a) for a in args]
        if kind == "div" and len(vals) == 2 and vals[1].size is not None:
            mean = self._mean(vals[0], vals[1].size)
            if mean is not None:
                return mean
        return self._call("compute", kind, [self._node(v, name or kind) for v in vals], name or kind)

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
        expr = self.space.to_axes(expr)
        name = dtype_name(dtype)
        if name not in ("f32", "f16", "bf16", "i64", "i32"):
            raise Unsupported(f"index_expr of dtype {dtype} (kernels compute f32, f16, bf16, i64, i32)")
        kind = "f32" if dtype.is_floating_point else "i64"
        if expr.free_symbols & set(self.vars):
            if not self._is_affine(expr):  # abs(i - j), max(i, j): integer math over iotas
                return self._cast(self._index_value(expr), name)
            return self._cast(self._iota(expr, kind), name)
        if not expr.free_symbols:
            return self._scalar(int(expr) if kind == "i64" else float(expr), name if kind == "i64" else "f32")
        if kind == "i64":
            raise Unsupported(f"index_expr {expr} (a size as an integer value)")
        return Value(-1, "f32", True, size=expr)

    def _iota(self, expr: sympy.Expr, dtype: str) -> Value:
        """An index expression affine in the axes, as `dtype` (f32 or i64) values: a read of an
        arange table (runtime.arange) at that index, whose element i is i. One that decreases
        along an axis (a relative position j - i) is the difference of two such reads."""
        strides, offset = self._affine(expr, "index_expr")
        terms = [sympy.sympify(t) for t in (*strides, offset)]
        signs = [t.is_nonnegative for t in terms]
        if None in signs:
            raise Unsupported(f"index_expr {expr}: the sign of a stride is not known")
        up = sum(t * x for t, x, pos in zip(terms, [*self.vars, 1], signs) if pos)
        down = sum(-t * x for t, x, pos in zip(terms, [*self.vars, 1], signs) if not pos)
        if down == 0:
            return self._arange_read(expr, strides, offset, dtype)
        return self._op("sub", [self._iota(sympy.sympify(e), dtype) for e in (up, down)])

    def _is_affine(self, expr: sympy.Expr) -> bool:
        try:
            self._affine(expr, "index_expr")
            return True
        except Unsupported:
            return False

    def _index_value(self, expr: sympy.Expr) -> Value:
        """A loop-dependent index expression built of affine parts, abs, max and min, as i64
        values (the affine parts read the i64 arange table)."""
        if self._is_affine(expr):
            if not (sympy.sympify(expr).free_symbols & set(self.vars)):
                if not sympy.sympify(expr).is_Integer:
                    raise Unsupported(f"index_expr {expr} (a size as an integer value)")
                return self._scalar(int(expr), "i64")
            return self._iota(expr, "i64")
        name = type(expr).__name__
        kinds = {"Abs": "abs", "Max": "maximum", "Min": "minimum", "Add": "add", "Mul": "mul"}
        if name not in kinds:
            raise Unsupported(f"index_expr {expr}: {name} of loop indices")
        args = [self._index_value(a) for a in expr.args]
        out = args[0]
        for a in args[1:]:  # n-ary Add, Mul, Max, Min two at a time
            out = self._op(kinds[name], (out, a))
        return self._op("abs", (out,)) if name == "Abs" else out

    def _arange_read(self, expr: sympy.Expr, strides: List[sympy.Expr], offset: sympy.Expr, dtype: str) -> Value:
        length = offset + 1 + sum(s * (n - 1) for s, n in zip(strides, self.sizes))
        name = f"{ARANGE}{dtype}.{len(self.aranges)}"
        for known, n in self.aranges.items():
            if known.startswith(f"{ARANGE}{dtype}.") and sympy.simplify(n - length) == 0:
                name = known
        self.aranges[name] = sympy.expand(length)
        return self.load(name, expr)

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
        index = self.space.to_axes(index)
        gather = [x for x in index.free_symbols if x in self.indirect]
        if name in self.stored:
            idx, val = self.stored[name]
            if gather or sympy.simplify(self.space.to_axes(idx) - index) != 0:
                raise Unsupported(f"reads {name}, written in the same kernel, at another index")
            return val
        dtype = arange_dtype(name) if name.startswith(ARANGE) else dtype_name(self.dtype_of(name))
        at = None
        if gather:
            if len(gather) > 1:
                raise Unsupported(f"load of {name}: index {index} gathers by two values")
            at, bound = self.indirect[gather[0]]
            row = sympy.expand(sympy.diff(index, gather[0]))
            index = sympy.expand(index - row * gather[0])
            if gather[0] in index.free_symbols or not row.is_Integer or int(row) < 1:
                raise Unsupported(f"load of {name}: index {index} is not a row gather of constant stride")
        strides, offset = self._affine(index, f"load of {name}")
        try:
            data = self.b.data(name, dtype or "?", [expr_text(s) for s in strides], expr_text(offset))
        except _C.CompileError:  # not a node: the value's use fails with its own reason
            return Value(-1, dtype or str(self.dtype_of(name)).replace("torch.", ""), buffer=name)
        if at is None:
            return self._call("load", data)
        return self._call("gather", data, at.node, int(row), bound)

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
        strides, offset = self._affine(expr, "check_bounds")
        lo = offset + sum(sympy.Min(s, 0) * (n - 1) for s, n in zip(strides, self.sizes))
        hi = offset + sum(sympy.Max(s, 0) * (n - 1) for s, n in zip(strides, self.sizes))
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
            count = sympy.Integer(1)
            for a in self.reduce_axes:
                count = count * self.sizes[a]
            return mean, m2, Value(-1, "f32", True, size=count)
        if reduction_type == "any" and v.dtype != "bool":
            v = self.to_dtype(v, torch.bool)
        if reduction_type not in ("sum", "max", "min", "prod", "any"):
            raise Unsupported(f"the {reduction_type} reduction")
        return self._reduce(f"reduce_{reduction_type}", v)

    def _reduce(self, kind: str, v: Value, axes: Optional[Tuple[int, ...]] = None) -> Value:
        axes = self.reduce_axes if axes is None else axes
        if kind != "reduce_any" and v.dtype not in ("f32", "f16", "bf16") and v.size is None:
            raise Unsupported(f"{kind} over {v.dtype} values (integer reductions stay Inductor's)")
        r = self._call("reduce", kind, self._node(v, kind), list(axes))
        self.reduce_of[r.node] = (kind, self.b.inputs(r.node)[0], tuple(axes))
        return r

    def _mean(self, num: Value, count: sympy.Expr) -> Optional[Value]:
        """reduce_sum(x) / N over N reduced elements: reduce_mean(x); None when not that."""
        kind, x, axes = self.reduce_of.get(num.node, ("", -1, ()))
        if kind != "reduce_sum":
            return None
        n = sympy.Integer(1)
        for a in axes:
            n = n * self.sizes[a]
        if sympy.simplify(n - count) != 0:
            return None
        return self._reduce("reduce_mean", Value(x, self.b.dtype(x)), axes)

    def _affine(self, index: sympy.Expr, what: str) -> Tuple[List[sympy.Expr], sympy.Expr]:
        """(stride per kernel axis, offset) of an index affine in the loop variables."""
        index = self.space.to_axes(index)
        loop = set(self.vars)
        if any(not isinstance(a, (sympy.Symbol, sympy.Number, sympy.Add, sympy.Mul)) and a.free_symbols & loop
               for a in sympy.preorder_traversal(index)):  # a loop variable under // or %
            raise Unsupported(f"{what}: index {index} is not affine in the loop variables")
        strides = []
        for var in self.vars:
            c = sympy.expand(sympy.diff(index, var))
            if c.free_symbols & loop:
                raise Unsupported(f"{what}: index {index} is not affine in the loop variables")
            strides.append(c)
        offset = sympy.expand(index.subs({v: 0 for v in self.vars}))
        for e in [*strides, offset]:
            expr_text(e)  # Unsupported where a size has no AscIR form
            self.symbols |= {x.name for x in e.free_symbols}
        return strides, offset

    # --- the kernel --------------------------------------------------------------------
    def finish(self, outputs: Sequence[str]) -> List[str]:
        """Stores each buffer of `outputs` (written by the group and read after it), in that
        order; returns the kernel's inputs (the buffer per data index)."""
        for buf in outputs:
            index, v = self.stored[buf]
            strides, offset = self._affine(index, f"store of {buf}")
            node = self._node(v, f"the store of {buf}")
            try:
                self.b.store(buf, node, dtype_name(self.dtype_of(buf)) or "?", [expr_text(s) for s in strides],
                             expr_text(offset))
            except _C.CompileError as e:
                raise Unsupported(str(e)) from None
        return self.b.finish()[1]


@dataclasses.dataclass
class TracedGroup:
    """A fused group as an AscIR kernel: its builder and what the wrapper passes it."""

    builder: Any        # the _C.AscBuilder holding the kernel
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

    exprs = [e for n in nodes for e in n._body.indexing_from_args(loop_vars(n)).values()]
    space = LoopSpace(pvars, ranges, exprs)
    tracer = AscTracer(space, V.graph.get_dtype)
    for n in nodes:
        point, red = loop_vars(n)
        tracer.reduce_axes = tuple(a for v in red for a in space.axes_of[v])
        with V.set_ops_handler(tracer):
            n._body(point, red)
    outputs = [b for b in tracer.stored if b in keep]
    inputs = tracer.finish(outputs)
    return TracedGroup(tracer.b, inputs, outputs, sorted(tracer.symbols), tracer.aranges)
