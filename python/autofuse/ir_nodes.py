"""The frontend's model of a Graph IR node (type, attributes, eager closure).

The Graph IR text (docs/ir.md) is printed by the core's one printer (graph/printer.h):
graph_records() is the graph as the core takes it (_C.compile), sizes as expression text;
graph_text() has the core print it.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.fx

from . import aten_table
from .symbolic import Size, ir_text


@functools.lru_cache(maxsize=None)
def _dtype_table() -> Dict[torch.dtype, str]:
    """torch dtype -> IR name, from the core's one dtype table (support/dtype.h)."""
    from . import _C

    return {getattr(torch, torch_name): name for name, torch_name, _size in _C.dtypes()}


def dtype_name(dtype: Any) -> Optional[str]:
    """The IR's name of a torch dtype ("f32", "bf16"); None for a dtype the IR lacks."""
    return _dtype_table().get(dtype)


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

    def record(self) -> Tuple[str, List[str], List[str], str]:
        """(dtype, shape, strides, offset) as _C.print_graph takes a type (sizes as text)."""
        return (dtype_name(self.dtype), [ir_text(d) for d in self.shape], [ir_text(d) for d in self.strides],
                ir_text(self.offset))


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


def computes(fx: torch.fx.Node) -> bool:
    """Whether an FX node is an ATen op that computes something, the one rule of what explain and
    the pictures count as an ATen op: a call that is not an alias (is_alias: views, reshapes,
    permutes, expands, tuple indexing)."""
    return fx.op == "call_function" and not is_alias(fx)


def target_name(target: Any) -> str:
    """'aten.mm.default' for ATen overloads, 'module.name' for Python callables."""
    if isinstance(target, (torch._ops.OpOverload, torch._ops.HigherOrderOperator)):
        return str(target)
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or repr(target)
    return f"{mod.lstrip('_')}.{name}" if mod else name


def attr_record(v: Any) -> Any:
    """An attribute value as _C.print_graph takes it: int, float, str, or sizes as text."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (list, tuple)):
        return [ir_text(x) for x in v]
    if isinstance(v, (int, float, str)):
        return v
    raise TypeError(f"attribute value {v!r}")


GraphRecords = Tuple[str, List[Tuple[str, int]], List[Tuple[Any, ...]], List[int]]


def graph_records(name: str, nodes: List[GNode], returns: List[int],
                  symbols: Sequence[Tuple[str, int]] = ()) -> GraphRecords:
    """The graph of `nodes` returning node indices `returns` as the core takes it (_C.compile,
    _C.print_graph): (name, the size symbols with their hints, a record per node, returns). A
    node without a type (not one tensor of an IR dtype) is i64[]."""
    records = [(n.name, n.kind, list(n.operands), {k: attr_record(v) for k, v in n.attrs.items()},
                n.type.record() if n.type is not None else None) for n in nodes]
    return name, list(symbols), records, list(returns)


def graph_text(graph: GraphRecords) -> str:
    """The Graph IR text of `graph` (graph_records), printed by the core. Raises
    _C.CompileError on a size that is not an expression."""
    from . import _C

    return _C.print_graph(*graph)


class _Slot:
    """A hole in an argument template: the value of env[index]."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class _Container:
    """A list, tuple or dict of an argument template that holds a hole: rebuilt per call."""

    __slots__ = ("kind", "items")

    def __init__(self, kind: type, items: Any):
        self.kind, self.items = kind, items


# How an eager closure reads one FX argument: an env index, or a function env -> the value (a
# size the closure computes from the symbol values rather than from another node's slot).
ArgRead = Union[int, Callable[[list], Any]]


def _read(r: ArgRead) -> Callable[[list], Any]:
    """env -> the argument `r` reads."""
    if isinstance(r, int):
        return lambda env: env[r]
    return r


def _has_node(a: Any) -> bool:
    """Whether argument `a` is or holds an FX node."""
    if isinstance(a, torch.fx.Node):
        return True
    if isinstance(a, (list, tuple)):
        return any(_has_node(x) for x in a)
    if isinstance(a, dict):
        return any(_has_node(x) for x in a.values())
    return False


def _substitute(args: Any, slot_of: Callable[[torch.fx.Node], ArgRead]) -> Callable[[list], Any]:
    """A closure env -> args with every FX node replaced by what slot_of(node) reads. Parts
    without a node (a convolution's stride list) are shared constants, not rebuilt per call."""

    def build(a: Any) -> Any:
        if isinstance(a, torch.fx.Node):
            return _Slot(slot_of(a))
        if not _has_node(a):
            return a
        if isinstance(a, dict):
            return _Container(dict, {k: build(x) for k, x in a.items()})
        return _Container(type(a), [build(x) for x in a])

    def fill(t: Any, env: list) -> Any:
        if isinstance(t, _Slot):
            return env[t.index] if isinstance(t.index, int) else t.index(env)
        if not isinstance(t, _Container):
            return t
        if t.kind is dict:
            return {k: fill(x, env) for k, x in t.items.items()}
        return t.kind(fill(x, env) for x in t.items)

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
    simple = all(isinstance(a, torch.fx.Node) or not _has_node(a) for a in args) and not any(
        _has_node(v) for v in kwargs.values()
    )
    if simple:  # the common case: positional entries that are nodes or constants
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
