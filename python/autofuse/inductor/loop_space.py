"""A fusion group's iteration space as AscIR kernel axes, splitting loop variables that
Inductor indexes by floor division or modulo.

Inductor flattens dims into one loop variable where it can (a [B*H, S] view of a [B, S, H, D]
tensor is read as 16384*(x // 32) + 64*(x % 32) + ...). AscIR indexes are affine, so such a
variable x of range N becomes digits: with every divisor d of `x // d` and `(x // d) % m` (the
boundaries d and d*m), sorted 1 = b0 < b1 < ... < bk, each dividing the next and N, x is
sum_i b_i * digit_i with digit_i in [0, b_{i+1} / b_i) (the last one [0, N / bk)). Then x // d
and (x // d) % m are sums of digits, and the index is affine in the digits. Boundaries may be
size symbols (x % s0 over a range of 2*s0) as long as each provably divides the next.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence, Tuple

import sympy

from .unsupported import Unsupported


def _kind(e: sympy.Basic) -> str:
    return type(e).__name__


def _divides(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Whether b / a is provably an integer (sizes are positive integer symbols)."""
    return bool(sympy.simplify(b / a).is_integer)


def _chain(bounds: set, n: sympy.Expr) -> List[sympy.Expr]:
    """The boundaries below n as a divisibility chain 1 = b0 | b1 | ... | bk | n; Unsupported
    when they are not one."""
    below = [b for b in bounds if sympy.simplify(b - n) != 0]
    out = sorted(below, key=lambda b: sum(_divides(c, b) for c in below))  # by how many divide it
    for lo, hi in zip(out, [*out[1:], n]):
        if not _divides(lo, hi):
            raise Unsupported(f"loop variable of range {n} is split by {lo} and {hi}, not a chain of divisors")
    return out


def _position(chain: List[sympy.Expr], b) -> int:
    """The place of boundary b in the chain (len(chain) for the range itself / None)."""
    for i, c in enumerate(chain):
        if c is not None and b is not None and sympy.simplify(c - b) == 0:
            return i
    return len(chain) - (1 if chain and chain[-1] is None else 0)


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
        self.digits: Dict[sympy.Symbol, List[Tuple[int, sympy.Expr]]] = {}  # (axis, place value)
        self.axes_of: Dict[sympy.Symbol, List[int]] = {}
        self._chain: Dict[sympy.Symbol, List[sympy.Expr]] = {}  # v's boundaries, ascending
        for v, n in zip(pvars, ranges):
            chain = _chain(bounds[v], n)
            self.digits[v] = []
            self.axes_of[v] = []
            for place, upper in reversed(list(zip(chain, [*chain[1:], n]))):  # most significant first
                size = sympy.simplify(upper / place)
                if size == 1:
                    continue
                a = len(self.sizes)
                self.sizes.append(size)
                self.axis_vars.append(sympy.Symbol(f"af_z{a}", integer=True, nonnegative=True))
                self.digits[v].append((a, place))
                self.axes_of[v].append(a)
            self._chain[v] = chain

    def _value(self, v: sympy.Symbol, d: sympy.Expr = sympy.Integer(1), m: sympy.Expr = None) -> sympy.Expr:
        """(v // d) % m (m None: no modulo) as a sum of v's digits: the digits whose place is at
        or above d in the chain and below d*m."""
        chain = self._chain[v]
        lo = _position(chain, d)
        hi = len(chain) if m is None else _position(chain + [None], d * m)
        out = sympy.Integer(0)
        for a, place in self.digits[v]:
            if lo <= _position(chain, place) < hi:
                out += sympy.simplify(place / d) * self.axis_vars[a]
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
