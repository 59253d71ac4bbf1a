"""The frontend's model of a Graph IR node (type, attributes, eager closure) and its printer.

The text follows docs/ir.md: `%NAME = KIND(%OPERANDS) {ATTRS} : DTYPE[SHAPE] strides [..]
offset E`, strides only when not row-major, offset only when non-zero, attributes sorted.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx

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


def contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    """Row-major strides of `shape` (the Graph IR's default layout)."""
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return tuple(strides)


@dataclasses.dataclass(frozen=True)
class TType:
    """A tensor type: dtype, static shape, strides (elements) and offset from its root storage."""

    dtype: torch.dtype
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    offset: int = 0

    @staticmethod
    def contiguous(dtype: torch.dtype, shape: Sequence[int]) -> "TType":
        shape = tuple(int(d) for d in shape)
        return TType(dtype, shape, contiguous_strides(shape))

    def is_contiguous(self) -> bool:
        return tuple(self.strides) == contiguous_strides(self.shape) and self.offset == 0

    def text(self) -> str:
        s = f"{DTYPE_NAMES[self.dtype]}[{', '.join(map(str, self.shape))}]"
        if tuple(self.strides) != contiguous_strides(self.shape):
            s += f" strides [{', '.join(map(str, self.strides))}]"
        if self.offset:
            s += f" offset {self.offset}"
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


def target_name(target: Any) -> str:
    """'aten.mm.default' for ATen overloads, 'module.name' for Python callables."""
    if isinstance(target, (torch._ops.OpOverload, torch._ops.HigherOrderOperator)):
        return str(target)
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or repr(target)
    return f"{mod.lstrip('_')}.{name}" if mod else name


def format_attr(v: Any) -> str:
    """An attribute value as the IR writes it: 3, 2.5, 1e-05, inf, "floor", [1, 4]."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)  # always has '.', 'e', 'inf' or 'nan'
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(str(int(x)) for x in v) + "]"
    raise TypeError(f"attribute value {v!r}")


def print_graph(name: str, nodes: List[GNode], returns: List[int]) -> str:
    """The Graph IR text of `nodes` returning node indices `returns`."""
    lines = [f"graph @{name}() {{"]
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


def _substitute(args: Any, slot_of: Callable[[torch.fx.Node], int]) -> Callable[[list], Any]:
    """A closure env -> args with every FX node replaced by env[slot_of(node)]."""

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
            return env[t.index]
        if isinstance(t, (list, tuple)):
            return type(t)(fill(x, env) for x in t)
        if isinstance(t, dict):
            return {k: fill(x, env) for k, x in t.items()}
        return t

    template = build(args)
    return lambda env: fill(template, env)


def make_call(node: torch.fx.Node, slot_of: Callable[[torch.fx.Node], int]) -> Callable[[list], Any]:
    """env -> node.target(*args, **kwargs) with every FX node argument read from env."""
    target = node.target
    args, kwargs = node.args, dict(node.kwargs)
    simple = all(not isinstance(a, (list, tuple, dict)) for a in args) and not any(
        isinstance(v, (torch.fx.Node, list, tuple, dict)) for v in kwargs.values()
    )
    if simple:  # the common case: a flat positional list, only some entries are nodes
        base = list(args)
        repl = [(i, slot_of(a)) for i, a in enumerate(args) if isinstance(a, torch.fx.Node)]

        def run(env: list) -> Any:
            a = base.copy()
            for i, s in repl:
                a[i] = env[s]
            return target(*a, **kwargs)

        return run
    get_args = _substitute(args, slot_of)
    get_kwargs = _substitute(kwargs, slot_of)
    return lambda env: target(*get_args(env), **get_kwargs(env))
