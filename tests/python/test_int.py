"""Integers in the Graph IR frontend's kernels: the acceptance patterns of elementwise,
broadcast, reduce and concat, on int64/int32/int16/int8/uint8 tensors, fuse into exactly the
kernels their f32 versions give and match eager exactly (torch.equal, dtype included). Integer
values live in int64 lanes and a narrow result wraps to its width after every op, as eager's
does; Python int scalars convert to a narrow tensor's dtype with wrap-around, as in eager.

Then the semantics, each against eager: floor / trunc division, remainder and fmod with mixed
signs and INT_MIN-like values, division by zero (RuntimeError "ZeroDivisionError", like eager),
shifts by negative, zero, width-1, width and larger amounts, bitwise ops, wrap-around, out of
range Python scalars, casts, integer reductions' result dtypes, where and any/all; float
remainder / fmod on special values; and integer scalar math (one element) left to ATen."""

import pytest
import torch

import autofuse
import test_acceptance as elementwise
from autofuse.backend import fused_op_count
from helpers import compile_fn
from test_concat import rotary

INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]
INT_IDS = ["i64", "i32", "i16", "i8", "u8"]
ints = pytest.mark.parametrize("dtype", INTS, ids=INT_IDS)


def _compiled(fn, args):
    """(result, kernels per graph, records) of fn compiled by autofuse; every graph compiled."""
    torch._dynamo.reset()
    with autofuse.collect_records() as recs:
        got = compile_fn(fn)(*args)
    assert recs and all(r.fallback == "" for r in recs), [(r.name, r.fallback) for r in recs]
    return got, [r.num_kernels for r in recs], recs


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def assert_equal(got, expected):
    """Every output equal to eager's, dtype and shape included."""
    got, expected = _flat(got), _flat(expected)
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape, (k, g.dtype, e.dtype, g.shape, e.shape)
        assert torch.equal(g, e), f"output {k}:\ngot      {g}\nexpected {e}"


def check_exact(fn, *args):
    """fn compiled: every graph compiled, each output torch.equal to eager; returns the records."""
    expected = fn(*args)
    got, _, recs = _compiled(fn, args)
    assert_equal(got, expected)
    return recs


def randint(shape, dtype, low=None, high=None):
    """Integers of `dtype` spread over a range that makes sense for it (wrap-around included
    for the narrow ones) unless low/high are given."""
    if low is None:
        low, high = {torch.int64: (-1000, 1000), torch.int32: (-1000, 1000), torch.int16: (-300, 300),
                     torch.int8: (-100, 100), torch.uint8: (0, 250)}[dtype]
    return torch.randint(low, high, shape if isinstance(shape, tuple) else (shape,), dtype=dtype)


def nonzero(shape, dtype):
    """Divisors: nonzero, both signs where the dtype has them."""
    x = randint(shape, dtype, *((1, 9) if dtype == torch.uint8 else (-9, 9)))
    return torch.where(x == 0, torch.ones_like(x), x)


def together(*patterns):
    """One function computing every (fn, make_args) pattern on its own arguments (the patterns'
    arguments one after another; each pattern's shapes its own, so each keeps its kernels) and
    returning all their outputs; with the make_args of the concatenated arguments."""
    def fn(*args):
        out, k = [], 0
        for f, n in zip(fns, arities):
            out += _flat(f(*args[k:k + n]))
            k += n
        return tuple(out)

    def make_args(dt):
        args = [make(dt) for _, make in patterns]
        arities[:] = [len(a) for a in args]
        return [a for group in args for a in group]

    fns, arities = [f for f, _ in patterns], []
    fn.__name__ = "+".join(f.__name__ for f in fns)
    return fn, make_args


_KERNELS_F32 = {}


def _check_like_f32(fn, make_args, dtype):
    """fn on `dtype` arguments: equal to eager (exactly), and the same kernels as on f32
    arguments (the same values cast to float32; counted once per function), holding as many of
    the graph's ops."""
    torch.manual_seed(0)
    args = make_args(dtype)
    expected = fn(*args)
    got, kernels, recs = _compiled(fn, args)
    assert_equal(got, expected)
    if fn not in _KERNELS_F32:
        _, kernels32, recs32 = _compiled(fn, [a.float() if isinstance(a, torch.Tensor) else a for a in args])
        _KERNELS_F32[fn] = kernels32, [fused_op_count(r) for r in recs32]
    assert (kernels, [fused_op_count(r) for r in recs]) == _KERNELS_F32[fn], [r.fused_text for r in recs]


# The patterns: each (fn, make_args(dtype)). One compiled function per test and dtype computes
# a group of them (together()): a C++ JIT per graph is what the file's time is made of.

# Elementwise and broadcast -------------------------------------------------------------------


def div_mod_clamp_where(x, a, b):
    """Floor division, remainder, clamp and where with per-column vectors (a nonzero)."""
    return torch.where(x > b, torch.clamp(x // a, 2, 50) * 3 - b, (x % a) * b + 1)


def _with_columns(shape):
    return lambda dt: [randint(shape, dt), nonzero(shape[-1], dt), randint(shape[-1], dt)]


ELEMENTWISE = together((elementwise.affine, _with_columns((2, 3, 5, 7))),
                       (div_mod_clamp_where, _with_columns((3, 1000))))


@ints
def test_elementwise_and_broadcast(dtype):
    _check_like_f32(*ELEMENTWISE, dtype)


# Reductions ---------------------------------------------------------------------------------


def sub_row_max(x):
    return x - x.amax(-1, keepdim=True)


def weighted_row_sum(x, w):
    return (x * w).sum(-1)


def small_prod(p):
    return p.prod(-1) + 1


def outer_dims_and_row_min(y):
    """Sums and a max over outer and middle dims, a sum around a kept dim, a row min feeding a
    broadcast consumer."""
    return (y.sum(0) * 2, y.amax(1) - 1, torch.relu(y - y.sum((0, 2), keepdim=True)),
            (y - y.amin(-1, keepdim=True)) * 2)


REDUCTIONS = together((sub_row_max, lambda dt: [randint((8, 1000), dt)]),
                      (weighted_row_sum, lambda dt: [randint((6, 500), dt), randint(500, dt)]),
                      (small_prod, lambda dt: [randint((40, 5), dt, *((0, 6) if dt == torch.uint8 else (-5, 6)))]),
                      (outer_dims_and_row_min, lambda dt: [randint((5, 6, 40), dt)]))


@ints
def test_reductions(dtype):
    _check_like_f32(*REDUCTIONS, dtype)


# Concat -------------------------------------------------------------------------------------


def scaled_segments(a, b):
    return torch.cat((a * 2, b + 1), -1) * 3


CONCATS = together((rotary, lambda dt: [randint(s, dt) for s in [(2, 4, 16, 64), (16, 64), (16, 64)]]),
                   (scaled_segments, lambda dt: [randint(s, dt) for s in [(5, 7), (5, 13)]]))


@ints
def test_concat(dtype):
    _check_like_f32(*CONCATS, dtype)


@ints
def test_bitwise_chain_is_one_kernel(dtype):
    """No float version: and / or / xor / not over the dtype's whole range, with Python ints
    (converted with wrap-around), and shifts by a per-column vector: one kernel holding every
    op."""
    def fn(x, a, s):
        return ((x & a) | (~x ^ 5)) + (x << s) - (x >> s), x ^ a, (x | -2) & 300, ~x & 0x55

    torch.manual_seed(0)
    info = torch.iinfo(dtype)
    x = torch.randint(info.min, info.max, (3, 1000), dtype=dtype)
    a = torch.randint(info.min, info.max, (1000,), dtype=dtype)
    x[0, :5] = torch.tensor([info.min, info.max, 0, -1 if info.min else 255, 1], dtype=dtype)
    s = randint(1000, dtype, 0, 8)
    (rec,) = check_exact(fn, x, a, s)
    assert rec.num_kernels == 1, rec.fused_text
    assert fused_op_count(rec) == rec.fx_ops, rec.fused_text


# Semantics ----------------------------------------------------------------------------------


def _edge_values(dtype):
    """Values around zero and at the ends of the dtype."""
    info = torch.iinfo(dtype)
    small = [0, 1, 2, 3, 7, 100] + ([-1, -2, -3, -7, -100] if info.min < 0 else [200, 254])
    return sorted({info.min, info.min + 1, info.max - 1, info.max, *(v for v in small if info.min <= v <= info.max)})


def _pairs(dtype):
    """Every (a, b) pair of edge values with b nonzero, as two flat tensors."""
    vals = _edge_values(dtype)
    a, b = zip(*[(a, b) for a in vals for b in vals if b != 0])
    return torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype)


@ints
def test_division_remainder_fmod(dtype):
    """Floor and trunc division, remainder and fmod of every pair of edge values: mixed signs,
    INT_MIN and -1 (INT_MIN // -1 wraps to INT_MIN, as eager's); Python int divisors of both
    signs (converted to the dtype with wrap-around, as eager). Eager's trunc division of INT_MIN
    by -1 traps (SIGFPE) for int64 and int32: that pair is left out of the trunc operands there."""
    a, b = _pairs(dtype)
    keep = ~((a == torch.iinfo(dtype).min) & (b == -1)) if dtype in (torch.int64, torch.int32) else a == a
    ta, tb = a[keep], b[keep]

    def fn(a, b, ta, tb):
        return (a // b, a % b, torch.fmod(a, b), torch.div(ta, tb, rounding_mode="trunc"),
                a // -3, a % -7)

    check_exact(fn, a, b, ta, tb)


DIVISIONS = {
    "floor": (torch.int64, lambda a, b: a // b + 1),
    "trunc": (torch.int32, lambda a, b: torch.div(a, b, rounding_mode="trunc") + 1),
    "remainder": (torch.int8, lambda a, b: a % b + 1),
    "fmod": (torch.uint8, lambda a, b: torch.fmod(a, b) + 1),
}


@pytest.mark.parametrize("op", list(DIVISIONS))
def test_division_by_zero_raises(op):
    """A zero divisor raises RuntimeError("ZeroDivisionError") as eager does, and the compiled
    function keeps working afterwards; a Python 0 divisor raises too."""
    dtype, fn = DIVISIONS[op]
    a = torch.arange(0, 40, dtype=dtype).view(4, 10) - (0 if dtype == torch.uint8 else 20)
    good = torch.arange(1, 11, dtype=dtype)
    bad = good.clone()
    bad[7] = 0
    other = good.flip(0) if dtype == torch.uint8 else -good
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, bad)
    torch._dynamo.reset()
    with autofuse.collect_records() as recs:
        compiled = compile_fn(fn)
        assert_equal(compiled(a, good), fn(a, good))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            compiled(a, bad)
        assert_equal(compiled(a, good), fn(a, good))
        assert_equal(compiled(a, other), fn(a, other))
    assert len(recs) == 1 and recs[0].fallback == "", [(r.name, r.fallback) for r in recs]
    assert recs[0].num_kernels == 1, recs[0].fused_text

    by_python_zero = lambda a: fn(a * 2, 0)  # noqa: E731
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        by_python_zero(a)
    torch._dynamo.reset()
    with autofuse.collect_records() as recs:
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            compile_fn(by_python_zero)(a)
    assert len(recs) == 1 and recs[0].fallback == "", [(r.name, r.fallback) for r in recs]


@ints
def test_shifts(dtype):
    """Shift amounts negative (where the dtype has them), 0, 1, width-1, width and larger, as
    tensors (each edge value by each amount) and as Python ints."""
    bits = torch.iinfo(dtype).bits
    amounts = [0, 1, bits - 1, bits, bits + 1, 2 * bits + 3, torch.iinfo(dtype).max]
    if dtype != torch.uint8:
        amounts += [-1, -bits, torch.iinfo(dtype).min]
    vals = _edge_values(dtype) + [0b0101_0110]
    a = torch.tensor([v for v in vals for _ in amounts], dtype=dtype)
    s = torch.tensor([k for _ in vals for k in amounts], dtype=dtype)

    def fn(a, s):
        return a << s, a >> s, a << 3, a >> 1, a << (bits - 1), a >> bits

    check_exact(fn, a, s)


def _narrow_args():
    torch.manual_seed(0)
    return (torch.randint(-128, 128, (4, 64), dtype=torch.int8), torch.randint(0, 256, (4, 64), dtype=torch.uint8),
            torch.randint(0, 256, (64,), dtype=torch.uint8), torch.randint(-32768, 32768, (4, 64), dtype=torch.int16),
            torch.full((64,), 2**31 - 5, dtype=torch.int32))


def test_narrow_overflow_wraps():
    """Narrow results wrap to their width after every op, as eager's: int8 * int8, uint8 minus
    a bigger one, int16 and int32 adds past their max, negation and abs of the minimum."""
    def fn(i8, u8, u8b, i16, i32):
        return (i8 * i8 * 3 - i8, u8 - u8b, u8 * u8b + 200, i16 + i16 + 30000, torch.abs(-i8), -u8, i32 + i32 + 7,
                (i8 + 100) // 3)

    check_exact(fn, *_narrow_args())


def test_narrow_min_max_sign_relu():
    """maximum, minimum, sign, relu and clamp of narrow values that wrapped first."""
    def fn(i8, u8, u8b, i16, i32):
        return (torch.maximum(i8 * 3, i8) - torch.minimum(u8, u8b), torch.sign(i8 * 2) * 100, torch.relu(i16 - 30000),
                torch.clamp_min(i8 + 100, -50), torch.clamp(i32 + i32, -5, 2**30))

    check_exact(fn, *_narrow_args())


def test_python_scalars_out_of_range():
    """A Python int converts to the narrow tensor's dtype with wrap-around (as eager): uint8 +
    300 adds 44, int8 > 1000 compares with -24, clamp(uint8, -100, 100) clamps to [156, 100]."""
    u8 = torch.tensor([[0, 1, 43, 44, 100, 155, 156, 200, 211, 212, 255]], dtype=torch.uint8)
    i8 = torch.tensor([[-128, -25, -24, -23, 0, 100, 127]], dtype=torch.int8)

    def fn(u8, i8):
        return (u8 + 300, u8 - 300, u8 * 1000, i8 > 1000, i8 == 1000, i8 <= -1000, i8 * 1000,
                torch.clamp(u8, -100, 100), torch.clamp_min(u8, -1), i8 + 2**40, u8 < -1)

    check_exact(fn, u8, i8)


def test_casts():
    """Every integer dtype to f32, to bool and to the next integer width (a ring over the
    widths); int8 to f64, f16 and bf16; floats (in range, both signs, fractions) and bools to
    every integer dtype."""
    torch.manual_seed(0)
    xs = [torch.cat([torch.tensor(_edge_values(t), dtype=t), randint((20,), t)]).view(1, -1) for t in INTS]
    f = torch.rand(2, 40) * 200 - 100
    f[0, :7] = torch.tensor([0.0, -0.0, 0.5, 99.9, -99.5, -100.0, -0.7])

    def fn(f, *xs):
        out = []
        for k, x in enumerate(xs):
            out += [x.to(torch.float32), x.bool(), x.to(INTS[(k + 1) % len(INTS)]) * 1]
        out += [xs[3].double(), xs[3].half(), xs[3].bfloat16()]
        for t in INTS:
            g = f.abs() if t == torch.uint8 else f
            out += [g.to(t) * 1]
        return (*out, f.double().to(torch.int64), f.half().to(torch.int8), (f > 0).to(torch.uint8))

    check_exact(fn, f, *xs)


def test_int_reductions_dtypes():
    """sum of bool and of int32 gives int64 (as eager), with dtype=int32 the total wraps;
    sum / prod / amax / amin of narrow ints."""
    torch.manual_seed(0)
    b = torch.rand(6, 300) > 0.3
    x = torch.full((6, 300), 2**30, dtype=torch.int32) + torch.randint(-5, 5, (6, 300), dtype=torch.int32)
    i8 = torch.randint(-128, 128, (6, 300), dtype=torch.int8)

    def fn(b, x, i8):
        return (b.sum(-1), x.sum(-1), x.sum(-1, dtype=torch.int32), (x * 2).sum(0), i8.sum(-1),
                i8.sum(-1, dtype=torch.int8), i8.prod(0), i8.amax(-1), i8.amin(0), (i8 + 1).sum(-1, dtype=torch.int16))

    check_exact(fn, b, x, i8)


def test_where_with_int_branches():
    """A float condition built from ints (and bool bitwise ops on it), int branches of
    different dtypes (promoted) and a Python int branch."""
    torch.manual_seed(0)
    x = torch.randint(-50, 50, (5, 40), dtype=torch.int32)
    y = torch.randint(-100, 100, (40,), dtype=torch.int8)
    u = torch.randint(0, 256, (5, 40), dtype=torch.uint8)

    def fn(x, y, u):
        cond = x.float() / 3 > y.float() * 0.25
        return (torch.where(cond, x, y), torch.where(cond, y, 7), torch.where(x > 0, u, y),
                torch.where((cond & (u > 9)) | ~cond, u, 44), torch.where(cond ^ (x < 0), x.to(torch.int64), y) * 3)

    check_exact(fn, x, y, u)


def test_any_all():
    xs = []
    for dtype in INTS:
        x = randint((6, 50), dtype)
        x[0], x[1, ::2], x[2] = 0, 0, 3
        xs.append(x)

    def fn(*xs):
        return [r for x in xs for r in (x.any(-1), x.all(-1), (x - 3).any(0), x.all())]

    check_exact(fn, *xs)


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", FLOATS, ids=["f32", "f64", "f16", "bf16"])
def test_float_remainder_fmod(dtype):
    """Special values (negative zero, infinities, NaN, zero divisors) and mixed signs against
    eager: exact for f32 / f64 (signs of zeros included), to f16 / bf16's tolerance. Python
    float divisors not exact in f16 / bf16 (-0.7, 0.3): eager's remainder and fmod round the
    scalar to the tensor's dtype first (like add / sub, unlike mul / div)."""
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([0.0, -0.0, 1.0, -1.0, 5.5, -5.5, 7.25, -7.25, 3.0, -3.0, 1e4, -1e4, 0.1, inf, -inf, nan],
                     dtype=dtype)
    b = torch.tensor([0.0, -0.0, 2.0, -2.0, 0.75, -0.75, 3.0, -3.0, 1e-3, inf, -inf, nan], dtype=dtype)
    torch.manual_seed(0)
    r = (torch.randn(200) * 20).to(dtype)

    def fn(a, b, r):
        aa, bb = a[:, None], b[None, :]
        return (torch.remainder(aa, bb), torch.fmod(aa, bb), r % 2.5, torch.fmod(r, -1.5),
                torch.remainder(r, r.flip(0)), r % -0.7, torch.fmod(r, 0.3))

    expected = fn(a, b, r)
    got, kernels, recs = _compiled(fn, [a, b, r])
    assert sum(kernels) >= 1, recs[0].fused_text
    exact = dtype in (torch.float32, torch.float64)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape
        if exact:
            torch.testing.assert_close(g, e, equal_nan=True, rtol=0, atol=0, msg=lambda m: f"output {k}: {m}")
            assert torch.equal(g.signbit() | g.isnan(), e.signbit() | e.isnan()), (k, g, e)
        else:
            torch.testing.assert_close(g, e, equal_nan=True, msg=lambda m: f"output {k}: {m}")


# Integer scalar math ------------------------------------------------------------------------


def test_integer_scalar_math_stays_aten():
    """A rank-0 integer op (a step counter) is not worth a kernel: it stays an ATen op of the
    compiled graph while the tensor math next to it fuses."""
    x, n, k = torch.randn(4, 8), torch.tensor(3), torch.tensor(5, dtype=torch.int32)
    recs = check_exact(lambda x, n, k: (x * 2, n + 1, k * n - 2), x, n, k)
    (rec,) = recs
    assert rec.num_kernels == 1, rec.fused_text
    assert 'opaque(%arg1_1) {target = "aten.add.Tensor"} : i64[]' in rec.graph_text, rec.graph_text
    assert 'target = "aten.mul.Tensor"} : i64[]' in rec.graph_text, rec.graph_text
    assert "kernel @k0(%arg0_1) " in rec.fused_text, rec.fused_text


def test_batchnorm_num_batches_tracked():
    """BatchNorm in training: num_batches_tracked + 1 stays ATen, the statistics compile, and
    the buffers end where eager's do."""
    torch.manual_seed(0)
    bn, ref = torch.nn.BatchNorm2d(6), torch.nn.BatchNorm2d(6)
    x = torch.randn(4, 6, 5, 5)
    torch._dynamo.reset()
    with torch.no_grad(), autofuse.collect_records() as recs:
        got = compile_fn(bn)(x)
        expected = ref(x)
    torch.testing.assert_close(got, expected)
    assert torch.equal(bn.num_batches_tracked, ref.num_batches_tracked) and bn.num_batches_tracked.item() == 1
    torch.testing.assert_close(bn.running_mean, ref.running_mean)
    torch.testing.assert_close(bn.running_var, ref.running_var)
    (rec,) = recs
    assert rec.fallback == "" and rec.num_kernels == 1, (rec.fallback, rec.fused_text)
    counter = [line.strip() for line in rec.graph_text.splitlines() if ": i64[]" in line and "input()" not in line]
    assert counter == ['%add = opaque(%arg1_1) {target = "aten.add.Tensor"} : i64[]'], rec.graph_text
