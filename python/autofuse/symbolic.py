"""Symbolic sizes: torch SymInts -> Graph IR size expressions and back to Python at run time.

A dynamic-shape FX graph carries sizes as SymInts over shape-env symbols (s0, s77, ...). Types
keep them as sympy expressions (ints stay ints). They print as the Graph IR's `sym::Expr` text
(fully parenthesised; floordiv/mod/min/max calls), and compile to small Python functions the
executor evaluates per call from the symbol values it reads off the inputs.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import sympy
import torch
from torch.fx.experimental.symbolic_shapes import is_concrete_int
from torch.utils._sympy import functions as symfn

Size = Union[int, sympy.Expr]

_FLOORDIV = (symfn.FloorDiv,)
_MOD = (symfn.Mod, symfn.PythonMod, sympy.Mod)
_MAX = (symfn.Max, sympy.Max)
_MIN = (symfn.Min, sympy.Min)


class Unsupported(ValueError):
    """A size or index expression the core cannot express (rationals, unknown functions, ...)."""


def to_size(v: Any) -> Optional[Size]:
    """An int for a concrete size, a sympy expression for a SymInt, None otherwise."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, torch.SymInt):
        if is_concrete_int(v):
            return int(v)
        return simplify(v.node.expr)
    return None


def simplify(e: Any) -> Size:
    """An int when `e` is a constant, else the sympy expression."""
    if isinstance(e, int):
        return e
    e = sympy.sympify(e)
    if e.is_Integer:
        return int(e)
    return e


def free_symbols(sizes: Iterable[Size]) -> Set[sympy.Symbol]:
    out: Set[sympy.Symbol] = set()
    for s in sizes:
        if isinstance(s, sympy.Expr):
            out |= s.free_symbols
    return out


def _text(e: Any, fn: Dict[str, str]) -> str:
    if isinstance(e, (int, str)):  # a str is a symbol by name
        return str(e)
    if e.is_Integer:
        return str(int(e))
    if e.is_Symbol:
        return e.name
    if isinstance(e, sympy.Add):
        return "(" + " + ".join(_text(a, fn) for a in e.args) + ")"
    if isinstance(e, sympy.Mul):
        return "(" + "*".join(_text(a, fn) for a in e.args) + ")"
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) > 0:
        return "(" + "*".join([_text(e.base, fn)] * int(e.exp)) + ")"
    if isinstance(e, symfn.PowByNatural) and e.args[1].is_Integer and int(e.args[1]) > 0:
        return "(" + "*".join([_text(e.args[0], fn)] * int(e.args[1])) + ")"
    if isinstance(e, symfn.ModularIndexing):  # (x // d) % m
        x, d, m = (_text(a, fn) for a in e.args)
        return fn["mod"].format(fn["floordiv"].format(x, d), m)
    if isinstance(e, sympy.Abs):
        x = _text(e.args[0], fn)
        return fn["max"].format(x, f"-{x}")
    for types, name in ((_FLOORDIV, "floordiv"), (_MOD, "mod"), (_MAX, "max"), (_MIN, "min")):
        if isinstance(e, types):
            args = [_text(a, fn) for a in e.args]
            acc = args[0]
            for a in args[1:]:
                acc = fn[name].format(acc, a)
            return acc
    raise Unsupported(f"size expression {e} ({type(e).__name__})")


_IR = {"floordiv": "floordiv({}, {})", "mod": "mod({}, {})", "max": "max({}, {})", "min": "min({}, {})"}
_PY = {"floordiv": "({} // {})", "mod": "({} % {})", "max": "max({}, {})", "min": "min({}, {})"}


def ir_text(e: Size) -> str:
    """The core's text of a size or index expression (`sym::parse_expr` reads it)."""
    return _text(e, _IR)


def check(e: Size) -> bool:
    """Whether `e` prints as Graph IR text."""
    try:
        ir_text(e)
        return True
    except Unsupported:
        return False


def py_text(g: Any) -> str:
    """Python text of one size (an int expression) or of a list or tuple of sizes (a tuple
    display), over the symbols by name."""
    if isinstance(g, (list, tuple)):
        return "(" + "".join(_text(e, _PY) + ", " for e in g) + ")"
    return _text(g, _PY)


def py_sizes(sizes: Sequence[Size], symbols: Sequence[str]) -> Callable[[Tuple[int, ...]], Tuple[int, ...]]:
    """A function (the tuple of all symbol values, in `symbols` order) -> the tuple of the
    values of `sizes`, in one generated frame."""
    unpack = f"    {', '.join(symbols)}, = s\n" if symbols else ""
    scope = {"max": max, "min": min}
    exec(f"def sizes(s):\n{unpack}    return {py_text(tuple(sizes))}\n", scope)  # noqa: S102 (our own text)
    return scope["sizes"]


def hint_of(sym: sympy.Symbol, shape_env: Any) -> Optional[int]:
    """The value a symbol had when the graph was captured (None for unbacked symbols)."""
    for attr in ("backed_var_to_val", "var_to_val"):
        table = getattr(shape_env, attr, None)
        if table is not None and sym in table:
            v = table[sym]
            if isinstance(v, (int, sympy.Integer)):
                return int(v)
            return None
    return None


class SymbolSources:
    """Where each size symbol's value comes from at run time: a SymInt placeholder, or a size or
    stride of an input tensor. Built from the graph's placeholders."""

    def __init__(self, placeholders: List[torch.fx.Node]):
        self.sources: Dict[sympy.Symbol, Tuple[int, str, int]] = {}  # sym -> (arg, kind, dim)
        self.shape_env = None
        for pos, node in enumerate(placeholders):
            val = node.meta.get("val")
            if isinstance(val, torch.SymInt):
                self._note(val, pos, "int", 0)
            elif isinstance(val, torch.Tensor):
                for d, s in enumerate(val.shape):
                    self._note(s, pos, "size", d)
                for d, s in enumerate(val.stride()):
                    self._note(s, pos, "stride", d)
        # Only symbols with a hint can be declared in a graph header.
        self.sources = {s: src for s, src in self.sources.items() if hint_of(s, self.shape_env) is not None}

    def _note(self, v: Any, pos: int, kind: str, dim: int) -> None:
        if not isinstance(v, torch.SymInt) or is_concrete_int(v):
            return
        self.shape_env = self.shape_env or v.node.shape_env
        e = v.node.expr
        if isinstance(e, sympy.Symbol) and e not in self.sources:
            self.sources[e] = (pos, kind, dim)

    def bindable(self, e: Size) -> bool:
        """Whether `e` only uses symbols known at run time (and prints as Graph IR)."""
        if isinstance(e, int):
            return True
        return e.free_symbols <= set(self.sources) and check(e)

    def hints(self) -> Dict[sympy.Symbol, int]:
        """Symbol -> its value when the graph was captured."""
        return {s: hint_of(s, self.shape_env) for s in self.sources}

    def reader(self, symbols: Sequence[sympy.Symbol]) -> "SymbolReader":
        """Reads the values of `symbols` from the call's arguments."""
        parts = []
        for s in symbols:
            pos, kind, dim = self.sources[s]
            parts.append({"int": f"int({{a}}[{pos}])", "size": f"{{a}}[{pos}].shape[{dim}]",
                          "stride": f"{{a}}[{pos}].stride({dim})"}[kind])
        return SymbolReader("(" + "".join(p + ", " for p in parts) + ")",
                            {str(s): self.sources[s] for s in symbols})


class SymbolReader:
    """args -> the tuple of the size symbols' values, read off the call's arguments; `expr`
    prints the same read over a named argument list (the executor's run function inlines it)."""

    def __init__(self, template: str, sources: Dict[str, Tuple[int, str, int]]):
        self._template = template  # a tuple display over `{a}`
        self.sources = sources  # symbol name -> (argument position, "int" / "size" / "stride", dim)
        self._fn = eval("lambda a: " + self.expr("a"))  # noqa: S307 (our own generated text)

    def expr(self, args: str) -> str:
        """The read as a Python expression over the argument list named `args`."""
        return self._template.format(a=args)

    def __call__(self, args: Sequence[Any]) -> Tuple[int, ...]:
        return self._fn(args)
