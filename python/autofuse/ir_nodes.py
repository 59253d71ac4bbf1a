"""The frontend's model of a Graph IR node (type, attributes, eager closure) and its printer.

The text follows docs/ir.md: `%NAME = KIND(%OPERANDS) {ATTRS} : DTYPE[SHAPE] strides [..]
offset E`, strides only when not row-major, offset only when non-zero, attributes sorted.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.fx

from . import aten_table
from .symbolic import Size, ir_text

DTYPE_NAMES: Dict[torch.dtype, str] = {
    torch.bool: "bool",
    torch.uint8: "u8",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float32: "f32",
    torch.float64: "f64",
}
DTYPES_BY_NAME: Dict[str, torch.dtype] = {v: k for k, v in DTYPE_NAMES.items()}

# The type printed for values that are not one static tensor (SymInts, tuples, other dtypes).
PLACEHOLDER_TYPE_TEXT = "i64[]"


def contiguous_strides(shape: Sequence[Size]) -> Tuple[Size, ...]:
    """Row-major strides of `shape` (the Graph IR's default layout; symbolic sizes allowed)."""
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return tuple(strides)


@dataclasses.dataclass(frozen=True)
class TType:
    """A tensor type: dtype, shape, strides (elements) and offset from its root storage. Sizes
    are ints, or sympy expressions over size symbols in a dynamic-shape graph."""

    dtype: torch.dtype
    shape: Tuple[Size, ...]
    strides: Tuple[Size, ...]
    offset: Size = 0

    @staticmethod
    def contiguous(dtype: torch.dtype, shape: Sequence[Size]) -> "TType":
        shape = tuple(shape)
        return TType(dtype, shape, contiguous_strides(shape))

    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in (*self.shape, *self.strides, self.offset))

    def is_contiguous(self) -> bool:
        return tuple(self.strides) == contiguous_strides(self.shape) and self.offset == 0

    def text(self) -> str:
        s = f"{DTYPE_NAMES[self.dtype]}[{', '.join(map(ir_text, self.shape))}]"
        if tuple(self.strides) != contiguous_strides(self.shape):
            s += f" strides [{', '.join(map(ir_text, self.strides))}]"
        if self.offset != 0:
            s += f" offset {ir_text(self.offset)}"
        return s


@dataclasses.dataclass
class GNode:
    """One Graph IR node as the frontend knows it."""

    name: str
    kind: str
    operands: List[int]
    attrs: Dict[str, Any]
    type: Optional[TType]  # None: not a static tensor of a known dtype
    run: Callable[[list], Any]  # computes the value eagerly from env (indexed by node index)
    fx: Optional[torch.fx.Node] = None  # the FX node this node computes (None: synthesized)
    origin: str = ""  # the ATen op (FX target) it comes from, for explain
    reason: str = ""  # why the frontend left it to ATen (kind "opaque")
    run_into: Optional[Callable[[list, Any], Any]] = None  # (env, out) -> the value, in `out`


def is_alias(fx: torch.fx.Node) -> bool:
    """Whether an FX call computes nothing: tuple indexing, or an ATen op whose schema returns
    an alias of an input without writing it (view, reshape, permute, expand, t, alias, ...)."""
    if fx.target is operator.getitem:
        return True
    schema = getattr(fx.target, "_schema", None)
    return schema is not None and not schema.is_mutable and any(r.alias_info is not None for r in schema.returns)


def target_name(target: Any) -> str:
    """'aten.mm.default' for ATen overloads, 'module.name' for Python callables."""
    if isinstance(target, (torch._ops.OpOverload, torch._ops.HigherOrderOperator)):
        return str(target)
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or repr(target)
    return f"{mod.lstrip('_')}.{name}" if mod else name


def float_text(v: float) -> str:
    """The shortest "%.*g" text reading back as exactly `v`, marked as a float ('.', 'e', inf,
    nan): the same text as the C++ printer (graph/attr.cpp), so the IR round-trips."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    for prec in range(1, 18):
        s = "%.*g" % (prec, v)
        if float(s) == v:
            break
    return s if ("." in s or "e" in s) else s + ".0"


def quote(s: str) -> str:
    """A double-quoted string with '"', '\\' and control characters escaped (as graph/attr.cpp)."""
    out = []
    for c in s:
        if c in "\"\\":
            out.append("\\" + c)
        elif c in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[c])
        elif ord(c) < 0x20:
            out.append("\\x%02x" % ord(c))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def format_attr(v: Any) -> str:
    """An attribute value as the IR writes it: 3, 2.5, 1e-05, inf, "floor", [1, 4]."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return float_text(v)
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(ir_text(x) for x in v) + "]"
    raise TypeError(f"attribute value {v!r}")


def print_graph(name: str, nodes: List[GNode], returns: List[int], symbols: Sequence[Tuple[str, int]] = ()) -> str:
    """The Graph IR text of `nodes` returning node indices `returns`; `symbols` are the size
    symbols with their hints."""
    header = ", ".join(f"{s} = {h}" for s, h in symbols)
    lines = [f"graph @{name}({header}) {{"]
    for n in nodes:
        ops = ", ".join("%" + nodes[o].name for o in n.operands)
        line = f"  %{n.name} = {n.kind}({ops})"
        if n.attrs:
            attrs = ", ".join(f"{k} = {format_attr(n.attrs[k])}" for k in sorted(n.attrs))
            line += " {" + attrs + "}"
        line += " : " + (n.type.text() if n.type is not None else PLACEHOLDER_TYPE_TEXT)
        lines.append(line)
    lines.append("  return " + ", ".join("%" + nodes[r].name for r in returns))
    lines.append("}")
    return "\n".join(lines) + "\n"


class _Slot:
    """A hole in an argument template: the value of env[index]."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


# How an eager closure reads one FX argument: an env index, or a function env -> the value (a
# size the closure computes from the symbol values rather than from another node's slot).
ArgRead = Union[int, Callable[[list], Any]]


def _read(r: ArgRead) -> Callable[[list], Any]:
    """env -> the argument `r` reads."""
    if isinstance(r, int):
        return lambda env: env[r]
    return r


def _substitute(args: Any, slot_of: Callable[[torch.fx.Node], ArgRead]) -> Callable[[list], Any]:
    """A closure env -> args with every FX node replaced by what slot_of(node) reads."""

    def build(a: Any) -> Any:
        if isinstance(a, torch.fx.Node):
            return _Slot(slot_of(a))
        if isinstance(a, (list, tuple)):
            return type(a)(build(x) for x in a)
        if isinstance(a, dict):
            return {k: build(x) for k, x in a.items()}
        return a

    def fill(t: Any, env: list) -> Any:
        if isinstance(t, _Slot):
            return env[t.index] if isinstance(t.index, int) else t.index(env)
        if isinstance(t, (list, tuple)):
            return type(t)(fill(x, env) for x in t)
        if isinstance(t, dict):
            return {k: fill(x, env) for k, x in t.items()}
        return t

    template = build(args)
    return lambda env: fill(template, env)


def make_call(node: torch.fx.Node, slot_of: Callable[[torch.fx.Node], ArgRead],
              out_op: Any = None) -> Callable[..., Any]:
    """env -> node.target(*args, **kwargs) with every FX node argument read as slot_of says
    (ArgRead); given `out_op`, the target's out= overload, (env, out) -> out_op(*args, **kwargs,
    out=out)."""
    # An ATen overload is called through its C++ callable: OpOverload.__call__ only forwards
    # to it, one Python frame per eager step per call.
    op = aten_table.EAGER_EQUIVALENTS.get(node.target, node.target) if out_op is None else out_op
    target = op._op if isinstance(op, torch._ops.OpOverload) else op
    args, kwargs = node.args, dict(node.kwargs)
    simple = all(not isinstance(a, (list, tuple, dict)) for a in args) and not any(
        isinstance(v, (torch.fx.Node, list, tuple, dict)) for v in kwargs.values()
    )
    if simple:  # the common case: a flat positional list, only some entries are nodes
        base = list(args)
        repl = [(i, _read(slot_of(a))) for i, a in enumerate(args) if isinstance(a, torch.fx.Node)]

        def run(env: list) -> Any:
            a = base.copy()
            for i, r in repl:
                a[i] = r(env)
            return target(*a, **kwargs)

        def run_into(env: list, out: Any) -> Any:
            a = base.copy()
            for i, r in repl:
                a[i] = r(env)
            return target(*a, **kwargs, out=out)

        return run if out_op is None else run_into
    get_args = _substitute(args, slot_of)
    get_kwargs = _substitute(kwargs, slot_of)
    if out_op is not None:
        return lambda env, out: target(*get_args(env), **get_kwargs(env), out=out)
    return lambda env: target(*get_args(env), **get_kwargs(env))
