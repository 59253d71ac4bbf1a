"""Inductor loop bodies -> unscheduled AscIR text (the Inductor frontend's tracer).

An Inductor scheduler node (or a fused group of them) is a set of loop bodies over one
iteration space. `trace_group` runs each body under `AscTracer`, an ops handler that records
what the body computes as AscIR nodes over the kernel axes z0, z1, ... (one per loop variable):

- a load of a buffer becomes data + load with the strides and offset of its affine index (a
  stride of 0 is a broadcast: repeat 1 on that axis); a load of a buffer the group itself wrote
  at the same index is the written value;
- an op becomes the registry kind of docs/ir.md (explicit `broadcast`s align operands);
- a reduction reduces the node's reduction axes (welford_reduce becomes a mean and a sum of
  squared deviations); sum / index_expr(N) over a sum's N reduced elements is a reduce_mean;
- stores are kept for `finish` to emit for the buffers read after the group.

Anything else raises Unsupported with the reason: the node then stays with Inductor's C++
backend. Tracing only reads the nodes: it has no effect on the scheduler.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import sympy
import torch

from .loop_space import LoopSpace
from .torch_internals import DefaultHandler, V, inductor_config
from .unsupported import Unsupported

# torch dtype -> AscIR dtype name: what generated kernels read, compute and write.
_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.bool: "bool",
           torch.int64: "i64", torch.int32: "i32"}
_FLOAT = ("f32", "f16", "bf16")
_INT = ("i64", "i32")  # computed in int64 lanes; i32 results wrap at 32 bits (codegen)
_KERNEL_DTYPES = "f32, f16, bf16, bool, i64, i32"

# Inductor op -> AscIR kind, for the ops whose operands are floats (computed in f32).
_FLOAT_OPS = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "div": "div", "neg": "neg",
    "abs": "abs", "reciprocal": "reciprocal", "exp": "exp", "exp2": "exp2", "log": "log",
    "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "rsqrt": "rsqrt", "sigmoid": "sigmoid",
    "tanh": "tanh", "erf": "erf", "sin": "sin", "cos": "cos", "relu": "relu",
    "maximum": "maximum", "minimum": "minimum", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "round": "round", "sign": "sign", "pow": "pow", "eq": "eq", "ne": "ne",
    "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "isnan": "isnan", "isinf": "isinf",
}
# Ops on bool operands.
_BOOL_OPS = {
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "logical_not": "logical_not", "bitwise_and": "logical_and", "bitwise_or": "logical_or",
    "bitwise_xor": "logical_xor", "bitwise_not": "logical_not",
}
_BOOL_RESULT = {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf"}


@functools.lru_cache(maxsize=None)
def int_kinds() -> frozenset:
    """The kinds kernels also compute on the integer operands this frontend traces (i64, i32):
    the op registry's rows that accept both (autofuse._C.op_registry)."""
    from .. import _C

    return frozenset(k for k, (_, _, dtypes) in _C.op_registry().items() if {"i64", "i32"} <= set(dtypes))
# The name prefix of the arange tables an iota reads (a kernel input the wrapper passes as
# runtime.arange(length, dtype)): "arange.f32.0", "arange.i64.1", ...
ARANGE = "arange."


def arange_dtype(table: str) -> str:
    """The AscIR dtype of arange table `table` ("arange.i64.0" -> "i64")."""
    return table.split(".")[1]


# Inductor reduction type -> AscIR reduce kind.
_REDUCTIONS = {"sum": "reduce_sum", "max": "reduce_max", "min": "reduce_min",
               "prod": "reduce_prod", "any": "reduce_any"}


@dataclasses.dataclass(frozen=True)
class Value:
    """A traced value: an AscIR node over the kernel axes (`varies[a]`: its repeat on axis a is
    the axis size, else 1), a scalar node (no axes), or a size expression not yet a node
    (`size`: index_expr of loop-invariant sizes)."""

    node: str
    dtype: str
    varies: Tuple[bool, ...] = ()
    scalar: bool = False
    const: Any = 0.0  # a scalar's value (an int for an integer scalar)
    size: Optional[sympy.Expr] = None
    buffer: str = ""  # a value of a dtype kernels do not compute (no node): the buffer it is from


def expr_text(e: sympy.Expr) -> str:
    """A sympy size expression as AscIR size text (sym/expr.h's grammar)."""
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
    """The ops handler that records one group's loop bodies as AscIR nodes (module docstring)."""

    def __init__(self, space: LoopSpace, dtype_of):
        self.space = space
        self.sizes = list(space.sizes)
        self.vars = list(space.axis_vars)
        self.dtype_of = dtype_of  # buffer name -> torch dtype
        self.lines: List[Tuple[str, Tuple[str, ...], str]] = []  # (name, inputs, text) per node
        self.memo: Dict[str, Value] = {}  # a node's text without its name -> the node (CSE)
        self.narrowed: Dict[str, Value] = {}  # an f32 -> f16/bf16 cast -> the f32 value it rounds
        self.reduce_of: Dict[str, Tuple[str, Value, Tuple[int, ...]]] = {}  # reduce -> (kind, input, axes)
        self.names: Set[str] = set()
        self.buffer_of: Dict[str, str] = {}  # data node -> the buffer it reads
        self.aranges: Dict[str, sympy.Expr] = {}  # an arange table's name -> its length
        self.data: Dict[Tuple[str, Tuple[str, ...], str], Value] = {}  # an affine load -> its value
        self.tables: Dict[Tuple[str, Tuple[str, ...], str], str] = {}  # the same -> its data node
        self.indirect: Dict[sympy.Symbol, Tuple[Value, int]] = {}  # indirect_indexing -> (index, size)
        self.stored: Dict[str, Tuple[sympy.Expr, Value]] = {}  # buffer -> (index, value)
        self.reduce_axes: Tuple[int, ...] = ()  # the reduction axes of the body being traced
        self.symbols: Set[str] = {x.name for e in self.sizes for x in sympy.sympify(e).free_symbols}

    # --- nodes -------------------------------------------------------------------------
    def _name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c in "_." else "_" for c in base) or "v"
        for k in itertools.count():
            name = base if k == 0 else f"{base}.{k}"
            if name not in self.names:
                self.names.add(name)
                return name
        raise AssertionError

    def _all_axes(self) -> str:
        return ", ".join(f"z{i}" for i in range(len(self.sizes)))

    def _tensor(self, dtype: str, varies: Sequence[bool]) -> str:
        """` : dtype [axes] repeats [..] strides [..]` of a dense local value."""
        reps = [self.sizes[a] if v else sympy.Integer(1) for a, v in enumerate(varies)]
        strides, acc = [], sympy.Integer(1)
        for r, v in reversed(list(zip(reps, varies))):
            strides.append(acc if v else sympy.Integer(0))
            acc = acc * r
        strides.reverse()
        return (f" : {dtype} [{self._all_axes()}] repeats [{', '.join(map(expr_text, reps))}]"
                f" strides [{', '.join(map(expr_text, strides))}]")

    def _node(self, base: str, op: str, inputs: Sequence[Value], dtype: str, varies: Sequence[bool],
              attrs: str = "") -> Value:
        for v in inputs:
            if not v.node:
                raise Unsupported(f"{op} of {v.dtype} values{f' read from {v.buffer}' if v.buffer else ''} "
                                  f"(kernels compute {_KERNEL_DTYPES})")
        args = ", ".join(f"%{v.node}" for v in inputs)
        attrs = f" {{{attrs}}}" if attrs else ""
        rest = f"{op}({args}){attrs} sched [{self._all_axes()}]{self._tensor(dtype, varies)}"
        if rest in self.memo:  # Inductor's bodies recompute loads and ops: one node each
            return self.memo[rest]
        name = self._name(base)
        self.lines.append((name, tuple(v.node for v in inputs), f"  %{name} = {rest}"))
        self.memo[rest] = Value(name, dtype, tuple(varies))
        return self.memo[rest]

    def _scalar(self, value: Any, dtype: str) -> Value:
        if dtype in _INT:
            value = int(value)
            text = str(value)
        else:
            value = float(value)
            text = ("1" if value else "0") if dtype == "bool" else repr(value)
        rest = f"scalar() {{value = {text}}} sched [{self._all_axes()}] : {dtype} [] repeats [] strides []"
        if rest not in self.memo:
            name = self._name("c")
            self.lines.append((name, (), f"  %{name} = {rest}"))
            self.memo[rest] = Value(name, dtype, (), scalar=True, const=value)
        return self.memo[rest]

    def _materialize(self, v: Value) -> Value:
        if v.size is not None:
            if v.size.free_symbols:
                raise Unsupported(f"the size {v.size} is used as a value (only as a mean's divisor)")
            return self._scalar(float(v.size), "f32")
        return v

    def _broadcast(self, v: Value, varies: Sequence[bool]) -> Value:
        v = self._materialize(v)
        if v.scalar or tuple(v.varies) == tuple(varies):
            return v
        return self._node(v.node + ".b", "broadcast", [v], v.dtype, varies)

    def _cast(self, v: Value, dtype: str, compute_types: bool = False) -> Value:
        v = self._materialize(v)
        if v.dtype == dtype:
            return v
        if v.scalar:
            if dtype in _INT and not math.isfinite(v.const):
                raise Unsupported(f"the constant {v.const} cast to {dtype}")
            return self._scalar(bool(v.const) if dtype == "bool" else v.const, dtype)
        if dtype == "f32" and v.node in self.narrowed:
            # A rounding to f16/bf16 "in compute types" widened again is the f32 value itself,
            # as in Inductor's CPU kernels (their to_dtype convert cache, unless
            # emulate_precision_casts); an explicit rounding (use_compute_types=False) stays.
            return self.narrowed[v.node]
        out = self._node(f"{v.node}.{dtype}", "cast", [v], dtype, v.varies)
        if compute_types and v.dtype == "f32" and dtype in ("f16", "bf16") and not inductor_config.emulate_precision_casts:
            self.narrowed[out.node] = v
        return out

    # --- the ops handler ---------------------------------------------------------------
    def _default(self, name: str, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        if name in _FLOAT_OPS:
            return self._elementwise(name, _FLOAT_OPS[name], args, float_operands=True)
        if name in _BOOL_OPS:
            return self._elementwise(name, _BOOL_OPS[name], args, float_operands=False)
        if name == "where":
            return self._where(*args)
        if name == "square":
            return self._elementwise("mul", "mul", (args[0], args[0]), float_operands=True)
        if name == "fma":
            return self._elementwise("add", "add", (self._elementwise("mul", "mul", args[:2], True), args[2]), True)
        ints = sorted({a.dtype for a in args if isinstance(a, Value) and a.dtype not in (*_FLOAT, "bool")})
        if ints:
            raise Unsupported(f"{name} on {', '.join(ints)} values (no integer kernel form)")
        raise Unsupported(f"op {name} has no AscIR kernel form")

    def _elementwise(self, inductor_name: str, kind: str, args: Sequence[Any], float_operands: bool) -> Value:
        vals = [self._value(a) for a in args]
        if float_operands and all(v.dtype in _INT for v in vals):
            if kind not in int_kinds():
                raise Unsupported(f"{inductor_name} on {', '.join(v.dtype for v in vals)} values "
                                  f"(no integer kernel form)")
            dtype = "i64" if any(v.dtype == "i64" for v in vals) else "i32"
            vals = [self._cast(v, dtype) for v in vals]
            varies = _union(len(self.sizes), vals)
            vals = [self._broadcast(v, varies) for v in vals]
            return self._node(inductor_name, kind, vals, "bool" if kind in _BOOL_RESULT else dtype, varies)
        if float_operands:
            if any(v.dtype not in _FLOAT and not v.scalar for v in vals):
                raise Unsupported(f"{inductor_name} on {', '.join(v.dtype for v in vals)} values "
                                  f"(kernels compute it on floats, or on i64/i32 alone)")
            if kind == "div" and len(vals) == 2 and vals[1].size is not None:
                mean = self._mean(vals[0], vals[1].size)
                if mean is not None:
                    return mean
            vals = [self._cast(v, "f32") for v in vals]
        elif any(v.dtype != "bool" for v in vals):
            raise Unsupported(f"{inductor_name} on {', '.join(v.dtype for v in vals)} values")
        varies = _union(len(self.sizes), vals)
        vals = [self._broadcast(v, varies) for v in vals]
        dtype = "bool" if kind in _BOOL_RESULT or not float_operands else "f32"
        return self._node(inductor_name, kind, vals, dtype, varies)

    def _where(self, cond: Any, a: Any, b: Any) -> Value:
        c, x, y = (self._value(v) for v in (cond, a, b))
        if c.dtype != "bool":
            c = self.to_dtype(c, torch.bool)
        if x.dtype == "bool" or y.dtype == "bool":
            raise Unsupported("where over bool values")
        if x.dtype in _INT and y.dtype in _INT:
            dtype = "i64" if "i64" in (x.dtype, y.dtype) else "i32"
        elif x.dtype in _INT and not x.scalar or y.dtype in _INT and not y.scalar:
            raise Unsupported(f"where over {x.dtype} and {y.dtype} values")
        else:
            dtype = "f32"
        x, y = self._cast(x, dtype), self._cast(y, dtype)
        varies = _union(len(self.sizes), [c, x, y])
        return self._node("where", "where", [self._broadcast(v, varies) for v in (c, x, y)], dtype, varies)

    def _value(self, a: Any) -> Value:
        if isinstance(a, Value):
            return a
        if isinstance(a, bool):
            return self._scalar(a, "bool")
        if isinstance(a, int):
            return self._scalar(a, "i64")
        if isinstance(a, float):
            return self._scalar(a, "f32")
        raise Unsupported(f"operand {a!r} ({type(a).__name__}) is not a traced value")

    def constant(self, value: Any, dtype: torch.dtype) -> Value:
        if dtype == torch.bool:
            return self._scalar(float(bool(value)), "bool")
        if dtype.is_floating_point:
            return self._scalar(float(value), "f32")
        if dtype in _DTYPES:
            return self._scalar(int(value), _DTYPES[dtype])
        # A narrow integer: a node only once cast to a kernel dtype (to_dtype) or used by an op.
        return Value("", str(dtype).replace("torch.", ""), (), scalar=True, const=int(value))

    def index_expr(self, expr: sympy.Expr, dtype: torch.dtype) -> Value:
        expr = self.space.to_axes(expr)
        if dtype not in (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32):
            raise Unsupported(f"index_expr of dtype {dtype} (kernels compute {_KERNEL_DTYPES})")
        kind = "f32" if dtype.is_floating_point else "i64"
        if expr.free_symbols & set(self.vars):
            if not self._is_affine(expr):  # abs(i - j), max(i, j): integer math over iotas
                return self._cast(self._index_value(expr), _DTYPES[dtype])
            return self._cast(self._iota(expr, kind), _DTYPES[dtype])
        if not expr.free_symbols:
            return self._scalar(expr, _DTYPES[dtype] if kind == "i64" else "f32")
        if kind == "i64":
            raise Unsupported(f"index_expr {expr} (a size as an integer value)")
        return Value("", "f32", (), size=expr)

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
        parts = [self._iota(sympy.sympify(e), dtype) for e in (up, down)]
        return self._elementwise("sub", "sub", parts, True)

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
            out = self._elementwise(kinds[name], kinds[name], (out, a), True)
        return self._elementwise("abs", "abs", (out,), True) if name == "Abs" else out

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
        if dtype not in _DTYPES:
            raise Unsupported(f"a cast to {dtype}")
        if v.size is not None and dtype.is_floating_point:
            return v
        if dtype == torch.bool and v.dtype in _INT:
            return self._cast(v, "bool")
        if dtype == torch.bool and v.dtype != "bool":
            zero = self._scalar(0.0, "f32")
            v = self._cast(v, "f32")
            return self._node("ne", "ne", [v, zero], "bool", v.varies) if not v.scalar else self._cast(v, "bool")
        return self._cast(v, _DTYPES[dtype], compute_types=use_compute_types)

    def load(self, name: str, index: sympy.Expr) -> Value:
        index = self.space.to_axes(index)
        gather = [x for x in index.free_symbols if x in self.indirect]
        if name in self.stored:
            idx, val = self.stored[name]
            if gather or sympy.simplify(self.space.to_axes(idx) - index) != 0:
                raise Unsupported(f"reads {name}, written in the same kernel, at another index")
            return val
        if name.startswith(ARANGE):
            dtype = next(t for t, n in _DTYPES.items() if n == arange_dtype(name))
        else:
            dtype = self.dtype_of(name)
        if dtype not in _DTYPES:
            # Not a node: the value's use fails with its own reason.
            return Value("", str(dtype).replace("torch.", ""), buffer=name)
        at, attrs = None, ""
        if gather:
            if len(gather) > 1:
                raise Unsupported(f"load of {name}: index {index} gathers by two values")
            at, bound = self.indirect[gather[0]]
            row = sympy.expand(sympy.diff(index, gather[0]))
            index = sympy.expand(index - row * gather[0])
            if gather[0] in index.free_symbols or not row.is_Integer or int(row) < 1:
                raise Unsupported(f"load of {name}: index {index} is not a row gather of constant stride")
            attrs = f"index_stride = {int(row)}, index_bound = {bound}"
        strides, offset = self._affine(index, f"load of {name}")
        varies = tuple(s != 0 for s in strides)
        key = (name, tuple(map(str, strides)), str(offset))
        if at is None and key in self.data:
            return self.data[key]
        if key in self.tables:
            d = self.tables[key]
        else:
            d = self.tables[key] = self._name(f"{name}.data")
            reps = [self.sizes[a] if v else sympy.Integer(1) for a, v in enumerate(varies)]
            off = f" offset {expr_text(offset)}" if offset != 0 else ""
            self.lines.append((d, (), f"  %{d} = data() {{index = @}} sched [{self._all_axes()}] : {_DTYPES[dtype]}"
                                  f" [{self._all_axes()}] repeats [{', '.join(map(expr_text, reps))}]"
                                  f" strides [{', '.join(map(expr_text, strides))}]{off}"))
            self.buffer_of[d] = name
        data = Value(d, _DTYPES[dtype])
        if at is None:
            v = self.data[key] = self._node(f"{name}.load", "load", [data], _DTYPES[dtype], varies)
            return v
        varies = tuple(_union(len(self.sizes), [at, Value("", "", varies)]))
        return self._node(f"{name}.gather", "load", [data, at], _DTYPES[dtype], varies, attrs)

    def indirect_indexing(self, index: Any, size: Any, check: bool = True, wrap_neg: bool = True) -> Any:
        """A symbol standing for the index value in the load/store indices that follow: a load
        by it is a gather (AscIR load(%data, %index)); kernels check the index against the
        dim's size (an index outside raises IndexError after the kernel), after wrapping a
        negative one when `wrap_neg`."""
        v = self._materialize(self._value(index))
        if v.dtype not in _INT or not v.node:
            raise Unsupported(f"indirect indexing by {v.dtype} values{f' of {v.buffer}' if v.buffer else ''}")
        size = sympy.sympify(size)
        if not size.is_Integer or int(size) < 1:
            raise Unsupported(f"indirect indexing into a dim of size {size} (not a constant)")
        if v.scalar:
            raise Unsupported("indirect indexing by a constant")
        if wrap_neg:  # index + size where negative
            neg = self._elementwise("lt", "lt", (v, 0), True)
            v = self._where(neg, self._elementwise("add", "add", (v, int(size)), True), v)
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
        dtype = self.dtype_of(name)
        if dtype not in _DTYPES:
            raise Unsupported(f"writes {name} of dtype {dtype} (kernels compute {_KERNEL_DTYPES})")
        if set(sympy.sympify(index).free_symbols) & set(self.indirect):
            raise Unsupported(f"a store into {name} by an index value (a scatter)")
        self.stored[name] = (sympy.sympify(index), self._materialize(v))

    def reduction(self, dtype: torch.dtype, src_dtype: torch.dtype, reduction_type: str, value: Any) -> Any:
        if not self.reduce_axes:
            raise Unsupported(f"a {reduction_type} reduction outside a reduction loop")
        v = self._value(value)
        if reduction_type == "welford_reduce":
            mean = self._reduce("reduce_mean", v)
            x = self._cast(v, "f32")
            varies = _union(len(self.sizes), [x])
            dev = self._node("welford.dev", "sub", [self._broadcast(x, varies), self._broadcast(mean, varies)], "f32", varies)
            sq = self._node("welford.sq", "mul", [dev, dev], "f32", varies)
            m2 = self._reduce("reduce_sum", sq)
            count = sympy.Integer(1)
            for a in self.reduce_axes:
                count = count * self.sizes[a]
            return mean, m2, Value("", "f32", (), size=count)
        if reduction_type not in _REDUCTIONS:
            raise Unsupported(f"the {reduction_type} reduction")
        kind = _REDUCTIONS[reduction_type]
        if kind == "reduce_any":
            if v.dtype != "bool":
                v = self.to_dtype(v, torch.bool)
        return self._reduce(kind, v)

    def _reduce(self, kind: str, v: Value) -> Value:
        v = self._materialize(v)
        if kind != "reduce_any":
            if v.dtype not in _FLOAT:
                raise Unsupported(f"{kind} over {v.dtype} values")
            v = self._cast(v, "f32")
        full = list(v.varies) if not v.scalar else [False] * len(self.sizes)
        for a in self.reduce_axes:
            full[a] = True
        x = self._broadcast(v, full)
        out = list(full)
        for a in self.reduce_axes:
            out[a] = False
        r = self._node(kind, kind, [x], x.dtype, out)
        self.reduce_of[r.node] = (kind, x, tuple(self.reduce_axes))
        return r

    def _mean(self, num: Value, count: sympy.Expr) -> Optional[Value]:
        """reduce_sum(x) / N over N reduced elements: reduce_mean(x); None when not that."""
        kind, x, axes = self.reduce_of.get(num.node, ("", None, ()))
        if kind != "reduce_sum":
            return None
        n = sympy.Integer(1)
        for a in axes:
            n = n * self.sizes[a]
        if sympy.simplify(n - count) != 0:
            return None
        saved = self.reduce_axes
        self.reduce_axes = axes
        try:
            return self._reduce("reduce_mean", x)
        finally:
            self.reduce_axes = saved

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
    def finish(self, name: str, outputs: Sequence[str]) -> Tuple[str, List[str]]:
        """(the ascgraph text, its inputs: the buffer per data index). The text has a store +
        output for each buffer of `outputs` (written by the group and read after it), in that
        order, and only the nodes they need."""
        stores: List[str] = []
        live: Set[str] = set()  # the nodes the stores need
        for k, buf in enumerate(outputs):
            index, v = self.stored[buf]
            strides, offset = self._affine(index, f"store of {buf}")
            want = [s != 0 for s in strides]
            if not v.scalar and any(var and not w for var, w in zip(v.varies, want)):
                raise Unsupported(f"the value stored to {buf} varies along an axis its index does not")
            v = self._cast(self._broadcast(v, want), _DTYPES[self.dtype_of(buf)])
            axes = [a for a in range(len(self.sizes)) if want[a]]
            t = (f" : {v.dtype} [{', '.join(f'z{a}' for a in axes)}]"
                 f" repeats [{', '.join(expr_text(self.sizes[a]) for a in axes)}]"
                 f" strides [{', '.join(expr_text(strides[a]) for a in axes)}]")
            t += f" offset {expr_text(offset)}" if offset != 0 else ""
            s = self._name(f"{buf}.store")
            stores.append(f"  %{s} = store(%{v.node}) sched [{self._all_axes()}]{t}")
            stores.append(f"  %{self._name(buf + '.out')} = output(%{s}) {{index = {k}}} sched [{self._all_axes()}]{t}")
            live.add(v.node)
        for node, ins, _ in reversed(self.lines):
            if node in live:
                live.update(ins)
        body, inputs = [], []
        for node, _, text in self.lines:
            if node in live:
                if node in self.buffer_of:
                    text = text.replace("{index = @}", f"{{index = {len(inputs)}}}")
                    inputs.append(self.buffer_of[node])
                body.append(text)
        axes = [f"  axis z{i} : {expr_text(s)}" for i, s in enumerate(self.sizes)]
        return "\n".join([f"ascgraph @{name} {{", *axes, *body, *stores, "}"]) + "\n", inputs


def _union(n: int, vals: Sequence[Value]) -> List[bool]:
    out = [False] * n
    for v in vals:
        if not v.scalar and v.size is None:
            out = [a or b for a, b in zip(out, v.varies)]
    return out


@dataclasses.dataclass
class TracedGroup:
    """A fused group as an AscIR kernel: its text and what the wrapper passes it."""

    text: str
    inputs: List[str]   # buffer names, data index order
    outputs: List[str]  # buffer names, output index order
    symbols: List[str]  # the size symbols the text uses, sorted
    aranges: Dict[str, sympy.Expr]  # the arange tables among `inputs` -> their lengths


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


def trace_group(name: str, nodes: Sequence[Any], keep: Set[str]) -> TracedGroup:
    """Traces the SchedulerNodes of one group into kernel `name`; `keep`: the buffers the group
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
    text, inputs = tracer.finish(name, outputs)
    return TracedGroup(text, inputs, outputs, sorted(tracer.symbols), tracer.aranges)
