"""A fusion group's iteration space as AscIR kernel axes, splitting loop variables that
Inductor indexes by floor division or modulo.

Inductor flattens dims into one loop variable where it can (a [B*H, S] view of a [B, S, H, D]
tensor is read as 16384*(x // 32) + 64*(x % 32) + ...). AscIR indexes are affine, so such a
variable x of range N becomes digits: with every divisor d of `x // d` and `(x // d) % m` (the
boundaries d and d*m), sorted 1 = b0 < b1 < ... < bk, each dividing the next and N, x is
sum_i b_i * digit_i with digit_i in [0, b_{i+1} / b_i) (the last one [0, N / bk)). Then x // d
and (x // d) % m are sums of digits, and the index is affine in the digits.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence, Tuple

import sympy

from .unsupported import Unsupported


def _kind(e: sympy.Basic) -> str:
    return type(e).__name__


class LoopSpace:
    """The kernel axes of loop variables `pvars` (ranges `ranges`) given every index expression
    of the group: `sizes` (the axes, most significant digit first per variable), `digits[v]`
    (the axes of variable v with their place values) and `to_axes` (an index in the axes)."""

    def __init__(self, pvars: Sequence[sympy.Symbol], ranges: Sequence[sympy.Expr],
                 exprs: Iterable[sympy.Expr]):
        bounds: Dict[sympy.Symbol, set] = {v: {sympy.Integer(1)} for v in pvars}
        for e in exprs:
            for sub in sympy.preorder_traversal(sympy.sympify(e)):
                k = _kind(sub)
                if k == "FloorDiv" and sub.args[0] in bounds:
                    bounds[sub.args[0]].add(sympy.sympify(sub.args[1]))
                elif k == "ModularIndexing" and sub.args[0] in bounds:
                    d, m = (sympy.sympify(a) for a in sub.args[1:])
                    bounds[sub.args[0]].update({d, d * m})
        self.sizes: List[sympy.Expr] = []
        self.axis_vars: List[sympy.Symbol] = []
        self.digits: Dict[sympy.Symbol, List[Tuple[int, sympy.Expr]]] = {}
        self.axes_of: Dict[sympy.Symbol, List[int]] = {}
        for v, n in zip(pvars, ranges):
            bs = sorted(bounds[v], key=lambda b: (not b.is_Integer, int(b) if b.is_Integer else 0))
            if any(not b.is_Integer for b in bs):
                raise Unsupported(f"loop variable of range {n} is divided by a size symbol")
            bs = [b for b in bs if sympy.simplify(b - n) != 0 and int(b) > 0]
            for lo, hi in zip(bs, bs[1:]):
                if int(hi) % int(lo):
                    raise Unsupported(f"loop variable of range {n} is split by {lo} and {hi}")
            top = sympy.simplify(n / bs[-1])
            if sympy.simplify(sympy.Mod(n, bs[-1])) != 0 or not (top.is_Integer or top.is_integer):
                raise Unsupported(f"loop variable of range {n} is split by {bs[-1]}, not a divisor")
            places = list(reversed(bs))  # most significant first
            sizes = [top] + [sympy.Integer(int(hi) // int(lo)) for lo, hi in zip(bs, bs[1:])][::-1]
            self.digits[v] = []
            self.axes_of[v] = []
            for place, size in zip(places, sizes):
                if size == 1:
                    continue
                a = len(self.sizes)
                self.sizes.append(size)
                self.axis_vars.append(sympy.Symbol(f"af_z{a}", integer=True, nonnegative=True))
                self.digits[v].append((a, place))
                self.axes_of[v].append(a)

    def _value(self, v: sympy.Symbol, d: sympy.Expr = sympy.Integer(1), m: sympy.Expr = None) -> sympy.Expr:
        """(v // d) % m (m None: no modulo) as a sum of v's digits."""
        out = sympy.Integer(0)
        for a, place in self.digits[v]:
            if int(place) >= int(d) and (m is None or int(place) < int(d) * int(m)):
                out += (place / d) * self.axis_vars[a]
        return out

    def to_axes(self, e: sympy.Expr) -> sympy.Expr:
        """Index `e` (in the loop variables) in the kernel axes; floor divisions and modulos of
        a variable by one of its boundaries become digits."""
        e = sympy.sympify(e)

        def fd(sub):
            return _kind(sub) == "FloorDiv" and sub.args[0] in self.digits

        def mi(sub):
            return _kind(sub) == "ModularIndexing" and sub.args[0] in self.digits

        e = e.replace(fd, lambda sub: self._value(sub.args[0], sympy.sympify(sub.args[1])))
        e = e.replace(mi, lambda sub: self._value(sub.args[0], *(sympy.sympify(a) for a in sub.args[1:])))
        return sympy.expand(e.subs({v: self._value(v) for v in self.digits}, simultaneous=True))
