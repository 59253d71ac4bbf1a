"""Differential fuzzing of programs WITH torch.cat: autofuse vs eager.

Every case is a deterministic function of its seed: a cat of 2-4 operands along a random dim
(first, middle, last; written positive or negative) of a rank 1-4 result with odd sizes (1, 7,
13, 31, 33, ...: segment boundaries off the vector width), and a random straight-line program
around it:

- operands: inputs (f32 / bf16 / f16, so cats of mixed dtypes; contiguous, transposed, sliced
  with a step, expanded, offset views), slices `x[..., a:b]` / `x[:, a:b]` / `x.narrow(d, a, n)`
  of wider inputs, `-x[..., h:]` (rotate-half), the same input twice, elementwise chains over
  them with broadcast side inputs, reductions of a wider input, an op left to ATen, and cats
  of cats (along the same or another dim);
- sometimes every operand is a slice of one shared full-size value, in order (the producer is
  sliced into every segment) or rotated (each segment reads another segment's positions);
- sometimes a cat of bool predicates consumed by torch.where;
- after the cat: elementwise consumers with broadcast operands of a smaller rank (cos / sin of
  [S, D] against [B, H, S, D]) or full-size inputs, a second consumer, a transposed consumer, a
  consumer over a larger space (the value broadcast), a second cat of the result (cat of cats,
  also with a reduction of the result along the new cat dim), reductions over the cat dim or
  another dim (sum / mean / amax / amin / softmax, keepdim or not, broadcast back); the cat
  result itself often a graph output too.

About one seed in five is an integer case (test_random_graphs.int_case_dtype): its inputs are
integers (int64 / int32 mostly, int16 / int8 / uint8; small values or the whole range), its
chains integer math (test_random_graphs.INT_UNARY / INT_BINARY, Python int scalars), its cats
cats of integers (of mixed integer dtypes: promoted), its reductions sum / amax / amin (sum gives
int64), its predicates integer comparisons; now and then an operand is a float input, so the
cat and what follows it compute in the float dtype, and a softmax casts to float first.

The program is generated as Python source: a failure prints a self-contained reproducer.

Checks (as in the other two fuzzers): outputs equal eager at torch.testing.assert_close's default
tolerances (with test_random_graphs' allowance for f32 outputs computed from f16/bf16 values), or,
where they do not, are at least as close to a float64 run as eager
(test_random_reduce_graphs._assert_matches: reductions accumulate in another order, and a
1-ulp difference of SLEEF's exp, amplified by later ops, can exceed f32's rtol); eager's dtypes
and strides (or the traced meta strides).
Fallbacks are reported apart from mismatches (`check_case` returns them; the test fails on any):
a graph left to eager (compile error, translation, executor, no kernels), a kernel that failed at
run time, a concat computed outside a kernel, a reduce left outside a kernel without the
documented "no reduction schedule" reason.

    AUTOFUSE_FUZZ_CASES=N   number of cases (default 30; `make fuzz` runs 500)
    AUTOFUSE_FUZZ_SEED=S    first seed (default 0)
    python test_random_concat_graphs.py SEED          prints the case's reproducer
    python test_random_concat_graphs.py --sweep S N   runs seeds S..S+N-1, prints a summary
"""

import dataclasses
import math
import os
import random
from typing import Dict, List, Optional, Tuple

import pytest
import torch
import torch.nn.functional as F  # noqa: F401  (used by the generated programs)

import autofuse
from autofuse._C import StepKind
from helpers import check_fuzz_case_through_inductor, compile_fn, inductor_frontend, mixed_f64_tolerance, node_names
from test_random_graphs import BINARY as EW_BINARY
from test_random_graphs import INT_BINARY, INT_PREDICATE, INT_UNARY, INTS, PREDICATE, UNARY
from test_random_graphs import Case as EwCase
from test_random_graphs import _config, _fake_strides, _lowest_precision, _plant, define_program
from test_random_graphs import int_case_dtype, int_values
from test_random_reduce_graphs import BINARY as SMOOTH_BINARY
from test_random_reduce_graphs import UNARY as SMOOTH_UNARY
from test_random_reduce_graphs import _assert_matches, _exact, _reduce_placement, start_program

CASES = int(os.environ.get("AUTOFUSE_FUZZ_CASES", "30"))
FIRST_SEED = int(os.environ.get("AUTOFUSE_FUZZ_SEED", "0"))

# Sizes of the non-cat dims and of the operands along the cat dim: 1, odd primes around the
# AVX2 / AVX-512 vector widths, 31 / 33 around 32, a few multiples of 8 for contrast.
SIZES = [1, 2, 3, 5, 7, 9, 13, 16, 31, 33]
SEG_SIZES = [1, 1, 2, 3, 5, 7, 8, 13, 17, 31, 33]
MAX_NUMEL = 60_000  # keeps rank-4 cases small (each case is a trace and a g++ compile)
FLOATS = ["torch.float32", "torch.float16", "torch.bfloat16", "torch.float64"]
MAIN_DTYPES = ["torch.float32"] * 5 + ["torch.bfloat16"] * 2 + ["torch.float16"] * 2 + ["torch.float64"]
REDUCTIONS = ["sum", "mean", "amax", "amin"]
# test_random_graphs' unary templates, exp-like ones of an argument in [-2, 2]: chains here are
# long, and exp / cos of a large exp result turn the 1-ulp differences between SLEEF's and eager's
# exp into ones far above f32's tolerances (seeds 367 and 909 before this).
EXP_LIKE = ["torch.exp({a})", "torch.exp2({a})", "torch.expm1({a})", "torch.pow(2.0, {a})"]
EW_UNARY = [t.replace("{a}", "(torch.tanh({a}) * 2)") if t in EXP_LIKE else t for t in UNARY]
# Binary templates that need a tensor {b} (Python numbers are not tensors).
SCALAR_UNFIT = ["maximum", "minimum", "where", "clamp({b}"]
# Integer cases: the share of cat operands that are float inputs (the cat is then a float).
FLOAT_OPERAND = 0.1
# Ops autofuse leaves to ATen (an operand computed outside the concat kernel).
ATEN = ["torch.cumsum({a}, dim=-1)", "torch.flip({a}, [-1])"]


def _reduction(r: random.Random, integer: bool) -> str:
    """A reduction of REDUCTIONS; of integers (mean takes floats only) sum in mean's place."""
    red = r.choice(REDUCTIONS)
    return "sum" if integer and red == "mean" else red


def _is_scalar(operand: str) -> bool:
    """Whether a generated operand is a Python number rather than a tensor name."""
    return operand[0].isdigit() or operand[0] == "-"


def _dim_text(r: random.Random, d: int, rank: int) -> int:
    """Dim d as torch code writes it: positive or negative."""
    return d - rank if r.random() < 0.5 else d


def _slice_text(r: random.Random, x: str, d: int, rank: int, a: int, b: int) -> str:
    """x[a:b] along dim d, written as `...` indexing, `:` indexing or narrow."""
    roll = r.random()
    if d == rank - 1 and roll < 0.6:
        return f"{x}[..., {a}:{b}]"
    if roll < 0.8:
        return f"{x}[{':, ' * d}{a}:{b}]"
    return f"{x}.narrow({_dim_text(r, d, rank)}, {a}, {b - a})"


class Case:
    """One generated program: source text, input makers, the function."""

    def __init__(self, seed: int):
        r = start_program(self, seed)
        self.dtype = r.choice(MAIN_DTYPES)
        self.main = self.dtype  # for test_random_graphs._lowest_precision
        self.int_main = int_case_dtype(seed, "concat")  # None: a float case
        self.int_names = set()  # integer inputs and values (of an integer case)
        self.has_reduce = False  # the program reduces (for the sweep's summary)
        self.inputs_by_shape: Dict[Tuple[int, ...], List[str]] = {}
        rank = r.choice([1, 2, 2, 3, 3, 3, 4, 4])
        shape = [r.choice(SIZES) for _ in range(rank)]
        while math.prod(shape) * 40 > MAX_NUMEL and max(shape) > 1:
            shape[shape.index(max(shape))] //= 2
        dim = r.randrange(rank)
        self.shape = shape  # the cat's operands' shape outside the cat dim
        self.rank = rank

        roll = r.random()
        if roll < 0.2:
            cur, cur_shape = self._split_cat(shape, dim)
        elif roll < 0.28:
            cur, cur_shape = self._bool_cat(shape, dim)
        else:
            cur, cur_shape = self._cat(shape, dim, depth=0)
        cur, cur_shape = self._after(cur, cur_shape, dim)
        self.outs.insert(0, cur)
        seen, outs = set(), []
        for o in self.outs:
            if o not in seen:
                seen.add(o)
                outs.append(o)
        define_program(self, outs, f"concat fuzz case {seed}")

    # Inputs ---------------------------------------------------------------------------------

    def _input(self, shape: List[int], dtype: Optional[str] = None, layout: bool = True,
               integer: Optional[bool] = None) -> str:
        """A new input of `shape`: main dtype mostly, in one of several storage layouts; an
        integer one (integer: by default in an integer case) of the main integer dtype mostly."""
        r = self.r
        name = f"x{len(self.args)}"
        integer = bool(self.int_main) if integer is None else integer
        if dtype is None and integer:
            dtype = self.int_main if r.random() < 0.8 else r.choice(INTS)
        elif dtype is None:
            dtype = self.dtype if r.random() < 0.8 else r.choice(FLOATS)
        if dtype in INTS:
            self.int_names.add(name)

        def make(store):
            if dtype in INTS:
                return int_values(r, dtype, store)
            return EwCase._special(r, f"torch.randn({list(store)}, dtype={dtype})", store)

        roll = r.random() if layout and shape else 0.0
        if roll < 0.5:
            expr = make(shape)
        elif roll < 0.67 and len(shape) >= 2:  # transposed storage (reversed, or last two dims)
            if r.random() < 0.5:
                perm = list(range(len(shape)))[::-1]
            else:
                perm = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
            store = [shape[p] for p in perm]  # perm is its own inverse
            expr = f"{make(store)}.permute({perm})"
        elif roll < 0.8:  # sliced with a step along the last dim
            expr = f"{make(shape[:-1] + [shape[-1] * 2])}[..., ::2]"
        elif roll < 0.9 and any(s > 1 for s in shape):  # expanded: stride 0 along some dim
            d = r.choice([k for k, s in enumerate(shape) if s > 1])
            small = list(shape)
            small[d] = 1
            expr = f"{make(small)}.expand({list(shape)})"
        else:  # an offset view into a larger flat buffer
            n = math.prod(shape)
            off = r.randint(1, 5)
            expr = f"{make([n + off + 3])}[{off}:{off + n}].view({list(shape)})"
        self.input_lines.append(f"{name} = {expr}")
        self.args.append(name)
        self.inputs_by_shape.setdefault(tuple(shape), []).append(name)
        return name

    def _side(self, shape: List[int], integer: bool = False) -> str:
        """An operand broadcastable to `shape`: a smaller-rank suffix (cos/sin style), size-1
        dims, a same-shape input, or a Python scalar; integer: an integer one."""
        r = self.r
        roll = r.random()
        rank = len(shape)
        if roll < 0.15:
            return r.choice(["3", "-2", "7"] if integer else ["0.5", "2.0", "-1.25"])
        if roll < 0.45 and rank >= 2:
            return self._input(shape[r.randint(1, rank - 1):], integer=integer)
        if roll < 0.65:
            return self._input([1 if r.random() < 0.5 else s for s in shape], integer=integer)
        have = [n for n in self.inputs_by_shape.get(tuple(shape), []) if (n in self.int_names) is integer]
        if have and r.random() < 0.5:
            return r.choice(have)
        return self._input(shape, integer=integer)

    # Program pieces -------------------------------------------------------------------------

    def _emit(self, expr: str, like: Tuple[str, ...] = ()) -> str:
        """A new value `expr`; an integer one where `like` (the operands it is computed from, of
        an integer case) are all integers or Python ints."""
        name = f"v{self.counter}"
        self.counter += 1
        self.lines.append(f"{name} = {expr}")
        if like and all(n in self.int_names or (_is_scalar(n) and "." not in n) for n in like):
            self.int_names.add(name)
        return name

    def _chain(self, cur: str, shape: List[int], n: int, smooth: bool = False) -> str:
        """n elementwise ops from cur (same shape), their other operands broadcast side inputs.
        smooth: only the reduction fuzzer's continuous, bounded ops (after a reduction)."""
        r = self.r
        integer = cur in self.int_names  # integer math (no smoothness needed)
        unary, binary = (SMOOTH_UNARY, SMOOTH_BINARY) if smooth else (EW_UNARY, EW_BINARY)
        if integer:
            unary, binary = INT_UNARY, INT_BINARY
        for _ in range(n):
            if r.random() < 0.55:
                cur = self._emit(r.choice(unary).format(a=cur), like=(cur,))
            else:
                other = self._side(shape, integer)
                if _is_scalar(other):  # templates that take a Python number as {b}
                    ok = [t for t in binary if "{b}." not in t and not any(w in t for w in SCALAR_UNFIT)]
                    cur = self._emit(r.choice(ok).format(a=cur, b=other), like=(cur, other))
                    continue
                a, b = (cur, other) if r.random() < 0.7 else (other, cur)
                cur = self._emit(r.choice(binary).format(a=a, b=b), like=(a, b))
        return cur

    def _operand(self, shape: List[int], depth: int) -> str:
        """A value of exactly `shape` (any float dtype; an integer case's: an integer dtype
        mostly) for a cat operand."""
        r = self.r
        rank = len(shape)
        if self.int_main and r.random() < FLOAT_OPERAND:
            x = self._input(shape, integer=False)
            return self._chain(x, shape, r.choice([0, 1]))
        kind = r.choices(["input", "slice", "rotate", "same", "nested", "reduce", "aten"],
                         [5, 4, 1.5, 1, 1.5 if depth < 2 else 0, 1, 0.5])[0]
        if kind == "same":
            have = self.inputs_by_shape.get(tuple(shape))
            if have:
                x = r.choice(have)
                return self._chain(x, shape, r.choice([0, 0, 1, 2])) if r.random() < 0.5 else x
            kind = "input"
        if kind == "nested":
            dims = [d for d in range(rank) if shape[d] >= 2]
            if dims:
                return self._cat_split(shape, r.choice(dims), depth + 1)
            kind = "input"
        if kind == "reduce":  # reduce a new dim k of size m
            k = r.randint(0, rank)
            m = r.choice([2, 3, 7, 13])
            x = self._input(shape[:k] + [m] + shape[k:])
            red = _reduction(r, x in self.int_names)
            self.has_reduce = True
            cur = self._emit(f"{x}.{red}({_dim_text(r, k, rank + 1)})", like=(x,))
            return self._chain(cur, shape, r.choice([0, 1]), smooth=True)
        if kind == "aten":
            x = self._input(shape)
            return self._emit(r.choice(ATEN).format(a=x), like=(x,))
        if kind in ("slice", "rotate"):
            d = rank - 1 if r.random() < 0.6 else r.randrange(rank)
            if kind == "rotate":  # -x[..., h:] of an input twice as wide
                wide = list(shape)
                wide[d] = 2 * shape[d]
                x = self._input(wide)
                h = shape[d]
                a = h if r.random() < 0.5 else 0
                part = _slice_text(r, x, d, rank, a, a + h)
                cur = self._emit(f"-{part}", like=(x,))
                return self._chain(cur, shape, r.choice([0, 0, 1]))
            extra = r.choice([1, 2, 5, 9])
            wide = list(shape)
            wide[d] += extra
            x = self._input(wide)
            a = r.randint(0, extra)
            cur = self._emit(_slice_text(r, x, d, rank, a, a + shape[d]), like=(x,))
            return self._chain(cur, shape, r.choice([0, 1, 1, 2]))
        x = self._input(shape)
        return self._chain(x, shape, r.choice([0, 1, 1, 2, 3]))

    def _cat(self, shape: List[int], dim: int, depth: int) -> Tuple[str, List[int]]:
        """torch.cat of 2-4 operands of `shape` with random sizes along dim."""
        r = self.r
        sizes = [r.choice(SEG_SIZES) for _ in range(r.randint(2, 4))]
        ops = []
        for s in sizes:
            sh = list(shape)
            sh[dim] = s
            ops.append(self._operand(sh, depth))
        out = list(shape)
        out[dim] = sum(sizes)
        cat = f"torch.cat(({', '.join(ops)},), {_dim_text(r, dim, len(shape))})"
        return self._emit(cat, like=tuple(ops)), out

    def _cat_split(self, shape: List[int], dim: int, depth: int) -> str:
        """A value of `shape` made by a cat along dim of 2-3 pieces (a cat inside a cat)."""
        r = self.r
        n = min(shape[dim], r.randint(2, 3))
        cuts = sorted(r.sample(range(1, shape[dim]), n - 1))
        bounds = [0] + cuts + [shape[dim]]
        ops = []
        for a, b in zip(bounds, bounds[1:]):
            sh = list(shape)
            sh[dim] = b - a
            ops.append(self._operand(sh, depth))
        cat = f"torch.cat(({', '.join(ops)},), {_dim_text(r, dim, len(shape))})"
        return self._emit(cat, like=tuple(ops))

    def _split_cat(self, shape: List[int], dim: int) -> Tuple[str, List[int]]:
        """Every operand a slice of one shared value t along dim: in order (t's producer can be
        sliced into every segment), rotated (rotate_half), or at random offsets."""
        r = self.r
        rank = len(shape)
        total = r.choice([s for s in SEG_SIZES if s >= 2] + [16, 24, 64])
        full = list(shape)
        full[dim] = total
        x = self._input(full)
        t = self._chain(x, full, r.choice([1, 1, 2, 3]))
        mode = r.choice(["order", "order", "rotate", "random"])
        n = min(total, r.randint(2, 4))
        if mode == "random":
            parts = []
            for _ in range(n):
                a = r.randrange(total)
                b = r.randint(a + 1, total)
                parts.append((a, b))
        else:
            cuts = sorted(r.sample(range(1, total), n - 1))
            bounds = [0] + cuts + [total]
            parts = list(zip(bounds, bounds[1:]))
            if mode == "rotate":
                k = r.randrange(1, n)
                parts = parts[k:] + parts[:k]
        ops = []
        for a, b in parts:
            cur = self._emit(_slice_text(r, t, dim, rank, a, b), like=(t,))
            sh = list(shape)
            sh[dim] = b - a
            if r.random() < 0.3:
                cur = self._emit(f"-{cur}", like=(cur,))
            ops.append(self._chain(cur, sh, r.choice([0, 0, 1])))
        if r.random() < 0.3:
            self.outs.append(t)
        out = list(shape)
        out[dim] = sum(b - a for a, b in parts)
        if mode == "order" and r.random() < 0.4:  # rotary: x * cos + cat(...) * sin
            c = self._emit(f"torch.cat(({', '.join(ops)},), {_dim_text(r, dim, rank)})", like=tuple(ops))
            integer = c in self.int_names and x in self.int_names
            cos, sin = self._side(full, integer), self._side(full, integer)
            return self._emit(f"{x} * {cos} + {c} * {sin}", like=(x, cos, c, sin)), out
        cat = f"torch.cat(({', '.join(ops)},), {_dim_text(r, dim, rank)})"
        return self._emit(cat, like=tuple(ops)), out

    def _bool_cat(self, shape: List[int], dim: int) -> Tuple[str, List[int]]:
        """A cat of predicates, consumed by torch.where over two float values."""
        r = self.r
        ops, out = [], list(shape)
        out[dim] = 0
        for _ in range(r.randint(2, 3)):
            sh = list(shape)
            sh[dim] = r.choice(SEG_SIZES)
            out[dim] += sh[dim]
            a = self._operand(sh, 2)
            b = self._side(sh, a in self.int_names)
            if a in self.int_names:  # an integer comparison (b: an integer or a Python int)
                pred = r.choice([t for t in INT_PREDICATE if "{f}" not in t]).format(a=a, b=b)
            else:
                pred = r.choice(PREDICATE).format(a=a, b=a if _is_scalar(b) else b)
            ops.append(self._emit(pred))
        p = self._emit(f"torch.cat(({', '.join(ops)},), {_dim_text(r, dim, len(shape))})")
        if r.random() < 0.3:
            self.outs.append(p)
        a = self._input(out)
        b = self._side(out, a in self.int_names)
        return self._emit(f"torch.where({p}, {a}, {b})", like=(a, b)), out

    def _after(self, cur: str, shape: List[int], dim: int) -> Tuple[str, List[int]]:
        """Consumers of the cat: elementwise, transposed, a second cat, reductions."""
        r = self.r
        rank = len(shape)
        if r.random() < 0.4:
            self.outs.append(cur)  # the cat result is a graph output alongside its consumers
        cur = self._chain(cur, shape, r.choice([0, 1, 1, 2, 3]))
        if rank >= 2 and r.random() < 0.12:  # a transposed consumer
            a, b = r.sample(range(rank), 2)
            shape = list(shape)
            shape[a], shape[b] = shape[b], shape[a]
            side = self._side(shape, cur in self.int_names)
            cur = self._emit(f"{cur}.transpose({a}, {b}) * {side}", like=(cur, side))
        if r.random() < 0.2:  # a second consumer of the same value, also an output
            self.outs.append(self._chain(cur, shape, 1))
        if r.random() < 0.1:  # a consumer over a larger space (the value broadcast)
            big = [r.choice([2, 3])] + list(shape)
            x = self._input(big, integer=cur in self.int_names)
            cur = self._emit(f"{cur}.unsqueeze(0) * {x}", like=(cur, x))
            shape, rank, dim = big, rank + 1, dim + 1
        if r.random() < 0.25:  # a cat of the cat's consumer
            d2 = r.randrange(rank)
            roll = r.random()
            if roll < 0.3:
                other = self._emit(f"{cur} * {3 if cur in self.int_names else 0.5}", like=(cur,))
                new = list(shape)
                new[d2] *= 2
            elif roll < 0.45:  # with its own reduction along d2
                red = _reduction(r, cur in self.int_names)
                other = self._emit(f"{cur}.{red}({_dim_text(r, d2, rank)}, keepdim=True)", like=(cur,))
                self.has_reduce = True
                new = list(shape)
                new[d2] += 1
            else:
                sh = list(shape)
                sh[d2] = r.choice(SEG_SIZES)
                other = self._operand(sh, 1)
                new = list(shape)
                new[d2] += sh[d2]
            pair = (cur, other) if r.random() < 0.6 else (other, cur)
            cur = self._emit(f"torch.cat(({pair[0]}, {pair[1]}), {_dim_text(r, d2, rank)})", like=pair)
            shape = new
            if r.random() < 0.3:
                self.outs.append(cur)
            cur = self._chain(cur, shape, r.choice([0, 1, 2]))
        if r.random() < 0.35:
            cur = self._reduce(cur, shape, dim)
        return cur, shape

    def _reduce(self, cur: str, shape: List[int], dim: int) -> str:
        """A reduction over the cat dim or another one, broadcast back or consumed reduced."""
        r = self.r
        rank = len(shape)
        self.has_reduce = True
        d = dim if r.random() < 0.5 else r.randrange(rank)
        dt = _dim_text(r, d, rank)
        integer = cur in self.int_names
        if r.random() < 0.15:
            return self._emit(f"torch.softmax({cur}{'.float()' if integer else ''}, {dt})")
        red = _reduction(r, integer)
        keep = r.random() < 0.5
        rv = self._emit(f"{cur}.{red}({dt}, keepdim={keep})", like=(cur,))
        if keep and r.random() < 0.6:
            if r.random() < 0.5:
                return self._emit(f"{cur} - {rv}", like=(cur, rv))
            return self._emit(f"{cur} * torch.tanh({rv})")
        self.outs.append(cur)
        reduced = shape[:d] + ([1] if keep else []) + shape[d + 1:]
        return self._chain(rv, reduced, r.choice([0, 1]), smooth=True)

    # Running --------------------------------------------------------------------------------

    def inputs(self) -> List[torch.Tensor]:
        torch.manual_seed(self.seed)
        scope = {"torch": torch, "_plant": _plant}
        exec(self.make_source, scope)
        return [scope[a] for a in self.args]

    def repro(self) -> str:
        return f"# seed {self.seed}\n{self.make_source}\n{self.source}"


@dataclasses.dataclass
class Outcome:
    """What a case's run did besides matching eager."""

    fallbacks: List[str]  # graphs / steps that ran eagerly although they should not have
    concat_kernels: int  # kernels holding a concat
    concat_alone: int  # of those, kernels computing nothing but concats (nothing joined)
    declined: List[str]  # the policy's reasons for declining fusions with a concat kernel


def _outcome(recs) -> Outcome:
    fallbacks, declined = [], []
    concat_kernels = concat_alone = 0
    for rec in recs:
        if rec.fallback:
            fallbacks.append(f"graph runs eagerly: {rec.fallback}")
            continue
        if rec.runner._broken:
            fallbacks.append("a kernel failed at run time")
        if rec.runner._warned:
            fallbacks.append("inputs differ from the compiled layout")
        tr = rec.translation
        kinds = {n.name: n.kind for n in tr.nodes}
        for st in rec.steps:
            ops = node_names(rec, st.ops)
            cats = [o for o in ops if kinds.get(o) == "concat"]
            if not cats:
                continue
            if st.kind != StepKind.kernel:
                fallbacks.append(f"concat {cats} in an opaque step: {st.reason}")
                continue
            concat_kernels += 1
            computing = [o for o in ops if kinds.get(o) not in ("concat", "cast")]
            concat_alone += not computing
        _in, _unsupported, problems = _reduce_placement([rec])
        fallbacks.extend(problems)
        declined.extend(x[2] for x in rec.program.rejected() if "concat" in x[2])
    return Outcome(fallbacks, concat_kernels, concat_alone, declined)


def check_case(seed: int) -> Outcome:
    """Runs case `seed` compiled and eagerly; raises AssertionError on a mismatch."""
    return check(Case(seed))


def check(case: Case) -> Outcome:
    """Runs `case` compiled and eagerly; raises AssertionError on a mismatch."""
    seed = case.seed
    args = case.inputs()
    expected = case.fn(*args)
    ctx = case.repro() + ("\n# compiled with CompilerConfig(emulate_precision_casts=True)" if _config(case) else "")
    with autofuse.collect_records() as recs:
        got = compile_fn(case.fn, _config(case))(*args)
    if inductor_frontend():  # AUTOFUSE_FRONTEND=inductor (make fuzz)
        check_fuzz_case_through_inductor(
            case.fn, args, got, expected, ctx,
            lambda k, g, e: _assert_matches(g, e, _exact(case, args)[k], _lowest_precision(case), ctx))
        return None
    low = _lowest_precision(case)
    exact = None
    for k, (g, e) in enumerate(zip(got, expected)):
        tol = {}
        if e.dtype == torch.float32 and low is not None:
            rtol = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2}[low]  # see test_random_graphs
            tol = dict(rtol=rtol, atol=rtol)
        tol = tol or mixed_f64_tolerance(case.repro(), e.dtype)
        try:
            torch.testing.assert_close(g, e, equal_nan=True, **tol)
        except AssertionError:
            exact = exact if exact is not None else _exact(case, args)
            _assert_matches(g, e, exact[k], low, f"output {k} (seed {seed})\n{ctx}")
        if e.numel() > 1 and g.stride() != e.stride():
            meta = _fake_strides(case.fn, args)[k]  # the layout torch.compile traces
            assert g.stride() == meta, (
                f"output {k}: strides {g.stride()} vs eager {e.stride()} (meta {meta})\n{ctx}")
    assert recs, f"no graph compiled\n{ctx}"
    return _outcome(recs)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + CASES))
def test_random_concat_graph(seed: int) -> None:
    out = check_case(seed)
    if out is None:  # the Inductor frontend: checked in check_case
        return
    assert not out.fallbacks, f"{out.fallbacks}\n{Case(seed).repro()}"
    assert out.concat_kernels > 0, f"no kernel holds a concat\n{Case(seed).repro()}"


def _sweep(first: int, count: int) -> None:
    """Runs seeds first..first+count-1 (each in a fresh Dynamo state) and prints each failure,
    each fallback and a summary."""
    import collections
    import re
    import tempfile
    import traceback

    os.environ.setdefault("AUTOFUSE_CACHE_DIR", tempfile.mkdtemp(prefix="autofuse-concat-fuzz-"))
    failed, fell, declined = [], collections.Counter(), collections.Counter()
    kernels = alone = reducing = 0
    for seed in range(first, first + count):
        torch._dynamo.reset()
        autofuse.reset_records()
        try:
            out = check_case(seed)
        except Exception as e:  # noqa: BLE001  (a crash is a finding like a mismatch)
            failed.append(seed)
            text = "".join(traceback.format_exception_only(type(e), e))
            print(f"FAIL seed {seed}: {text}", flush=True)
            continue
        for f in out.fallbacks:
            fell[f.split(":")[0] if "graph runs eagerly" not in f else f[:160]] += 1
            print(f"FALLBACK seed {seed}: {f}", flush=True)
        kernels += out.concat_kernels
        alone += out.concat_alone
        reducing += Case(seed).has_reduce
        for why in out.declined:  # the reason's kind: names, shapes and indices left out
            why = re.sub(r"\[[^\]]*\]", "[..]", re.sub(r"%\w+", "%V", why))
            declined[re.sub(r"segment \d+", "segment I", why)] += 1
    print(f"\n{count} seeds from {first} ({reducing} passing ones reduce): {len(failed)} failed {failed}")
    print(f"fallbacks: {sum(fell.values())}: {dict(fell)}")
    print(f"concat kernels: {kernels}, of which nothing but concats: {alone}")
    print("declined fusions with a concat kernel:")
    for why, n in declined.most_common():
        print(f"  {n:4d}  {why}")


if __name__ == "__main__":
    import sys

    if sys.argv[1] == "--sweep":
        _sweep(int(sys.argv[2]), int(sys.argv[3]))
    else:
        print(Case(int(sys.argv[1])).repro())
