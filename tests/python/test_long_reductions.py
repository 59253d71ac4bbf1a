"""Long reductions judged by float64: a compiled reduction's error against the same reduction
in float64 is at most twice eager's (docs/reliability.md, "long reductions").

Eager sums in a cascade (its error grows like log n); autofuse's kernels sum each tile of a row
(a lane adds at most 64 values) and join the tiles' partials pairwise (af_cascade on the CPU, a
four-level cascade and per-repeat trees on Ascend C), and var / std / BatchNorm statistics sum
their squared deviations in f64, as eager's Welford in double does. Before that, a sum of 10^8
values was 600x less accurate than eager's.

`make test` runs lengths up to ~10^7 on every host ISA (and the ascendc target, whose kernels
run in ascendc_emu, and the Inductor frontend on a few); AUTOFUSE_BIG_TESTS=1 (`make fuzz`)
adds lengths up to 10^9 (4 GB inputs).
"""

import os

import pytest
import torch

import autofuse
from helpers import compile_fn, kernel_targets, only_record

BIG = os.environ.get("AUTOFUSE_BIG_TESTS") == "1"
big = pytest.mark.skipif(not BIG, reason="inputs of 1-4 GB; AUTOFUSE_BIG_TESTS=1 (make fuzz)")

# An error under half an f32 ulp is the output's own rounding: "twice eager's" is measured from
# at least that, so a correctly rounded eager result (error 0 by luck) is no stricter a judge.
HALF_ULP = 2.0**-24


def rel_error(got, ref):
    """Largest relative error of `got` against float64 `ref` over its elements."""
    got = got.double()
    return ((got - ref).abs() / ref.abs().clamp_min(1e-300)).max().item()


def f64_sum_in_chunks(x, dims=None):
    """x.double().sum(dims), a chunk of rows at a time (a 10^9-element input has no float64
    copy of its own)."""
    if x.numel() <= 1 << 27:
        return x.double().sum() if dims is None else x.double().sum(dims)
    assert dims is None or dims == 0
    total = None
    for c in torch.split(x, max(1, (1 << 26) // max(1, x[0].numel() if x.dim() > 1 else 1))):
        part = c.double().sum() if dims is None else c.double().sum(0)
        total = part if total is None else total + part
    return total


def judge(fn, args, config=None, ref=None):
    """(autofuse's error, eager's error) of fn(*args) against float64, asserting autofuse's is
    at most twice eager's (from half an ulp)."""
    torch._dynamo.reset()
    eager = fn(*args)
    if ref is None:
        ref = fn(*(a.double() for a in args))
    got = compile_fn(fn, config or autofuse.CompilerConfig(fallback_on_error=False))(*args)
    ours, theirs = rel_error(got, ref), rel_error(eager, ref)
    assert ours <= 2 * max(theirs, HALF_ULP), f"autofuse {ours:.3g} vs eager {theirs:.3g}"
    return ours, theirs


def _gen(seed):
    return torch.Generator().manual_seed(seed)


# (id, inputs, function): every reduce family at lengths where a sequential sum's error shows.
CASES = [
    ("sum_of_1e7_tenths", lambda: (torch.full((10**7,), 0.1),), lambda x: x.sum()),
    ("mean_of_1e7", lambda: (torch.rand(10**7, generator=_gen(1)),), lambda x: x.mean()),
    ("row_sums_4x2e6", lambda: (torch.rand(4, 2 * 10**6, generator=_gen(2)),), lambda x: x.sum(1)),
    ("column_sums_4e6x2", lambda: (torch.rand(4 * 10**6, 2, generator=_gen(3)),), lambda x: x.sum(0)),
    ("column_sums_2e5x64", lambda: (torch.rand(2 * 10**5, 64, generator=_gen(4)),), lambda x: x.sum(0)),
    ("column_means_middle_dim", lambda: (torch.rand(3, 10**6, 5, generator=_gen(5)),), lambda x: x.mean(1)),
    ("var_rows", lambda: (torch.randn(4, 10**6, generator=_gen(6)) + 3,), lambda x: torch.var(x, 1)),
    ("std_all", lambda: (torch.randn(4 * 10**6, generator=_gen(7)) + 3,), lambda x: torch.std(x)),
    ("var_mean_columns", lambda: (torch.randn(10**6, 3, generator=_gen(8)) + 3,),
     lambda x: torch.var_mean(x, 0)[0]),
    ("norm_rows", lambda: (torch.randn(2, 4 * 10**6, generator=_gen(9)),),
     lambda x: torch.linalg.vector_norm(x, dim=1)),
    ("softmax_long_rows", lambda: (torch.randn(2, 2 * 10**6, generator=_gen(10)),),
     lambda x: torch.softmax(x, -1)),
    ("logsumexp_rows", lambda: (torch.randn(2, 2 * 10**6, generator=_gen(11)),),
     lambda x: torch.logsumexp(x, -1)),
    ("mse_loss", lambda: (torch.rand(8 * 10**6, generator=_gen(12)), torch.rand(8 * 10**6, generator=_gen(13))),
     lambda a, b: torch.nn.functional.mse_loss(a, b)),
    # BatchNorm's statistics: a row over N, H and W around the kept channel (q loops).
    ("channel_sums_nchw", lambda: (torch.rand(16, 4, 256, 256, generator=_gen(14)),),
     lambda x: x.sum((0, 2, 3))),
    ("epilogue_scaled_sum", lambda: (torch.rand(4, 2 * 10**6, generator=_gen(15)),),
     lambda x: (x * 0.5 + 0.25).sum(1) * 2.0),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_long_reductions_are_as_accurate_as_eager(case):
    _, make, fn = case
    judge(fn, make())


# Every host ISA (and so every vector width and tail) on the families' representatives.
ISA_CASES = ["sum_of_1e7_tenths", "row_sums_4x2e6", "column_sums_4e6x2", "channel_sums_nchw", "var_rows"]


@pytest.mark.parametrize("isa", autofuse.host_isas())
@pytest.mark.parametrize("name", ISA_CASES)
def test_every_isa_is_as_accurate_as_eager(name, isa):
    _, make, fn = CASES[IDS.index(name)]
    judge(fn, make(), autofuse.CompilerConfig(isa=isa, fallback_on_error=False))


# Ascend C kernels (run in ascendc_emu: slower, so shorter): a row in UB (af_sum_tile's trees),
# rows streamed in tiles (the scalar cascade), columns (the four-level cascade of UB tiles).
ASCENDC_CASES = [
    ("whole_rows_in_ub", lambda: (torch.rand(64, 16000, generator=_gen(20)),), lambda x: x.sum(1)),
    ("streamed_rows", lambda: (torch.rand(2, 10**6, generator=_gen(21)),), lambda x: x.sum(1)),
    ("streamed_tenths", lambda: (torch.full((2 * 10**6,), 0.1),), lambda x: x.sum()),
    ("columns", lambda: (torch.rand(10**6, 3, generator=_gen(22)),), lambda x: x.sum(0)),
    ("columns_5000x3", lambda: (torch.rand(5000, 3, generator=_gen(23)),), lambda x: x.sum(0)),
    ("softmax", lambda: (torch.randn(2, 10**6, generator=_gen(24)),), lambda x: torch.softmax(x, -1)),
]


@pytest.mark.parametrize("case", ASCENDC_CASES, ids=[c[0] for c in ASCENDC_CASES])
def test_ascendc_reductions_are_as_accurate_as_eager(case):
    _, make, fn = case
    autofuse.reset_records()
    judge(fn, make(), autofuse.CompilerConfig(target="ascendc", fallback_on_error=False))
    targets = kernel_targets(only_record())
    assert targets and set(targets) == {"ascendc"}, f"kernels ran as {targets}, not Ascend C"


@pytest.mark.parametrize("name", ["sum_of_1e7_tenths", "column_sums_4e6x2", "softmax_long_rows", "var_rows"])
def test_inductor_frontend_is_as_accurate_as_eager(name):
    _, make, fn = CASES[IDS.index(name)]
    judge(fn, make(), autofuse.CompilerConfig(frontend="inductor", fallback_on_error=False))


# Up to 10^9 elements: the largest this machine's 24 GB hold with eager's result, ours and the
# inputs' float64 sums taken a chunk at a time.
@big
@pytest.mark.parametrize("isa", autofuse.host_isas())
def test_a_sum_of_1e9_tenths(isa):
    x = torch.full((10**9,), 0.1)
    ref = torch.tensor(float(torch.tensor(0.1)) * 10**9, dtype=torch.float64)
    judge(lambda x: x.sum(), (x,), autofuse.CompilerConfig(isa=isa, fallback_on_error=False), ref=ref)


@big
def test_a_sum_of_1e9_random_values():
    x = torch.rand(10**9, generator=_gen(30))
    judge(lambda x: x.sum(), (x,), ref=f64_sum_in_chunks(x))


@big
def test_column_sums_of_1e8_rows():
    x = torch.rand(10**8, 4, generator=_gen(31))
    judge(lambda x: x.sum(0), (x,), ref=f64_sum_in_chunks(x, 0))


@big
def test_row_sums_of_4x2e8():
    x = torch.rand(4, 2 * 10**8, generator=_gen(32))
    ref = torch.stack([f64_sum_in_chunks(r) for r in x])
    judge(lambda x: x.sum(1), (x,), ref=ref)


@big
def test_a_mean_of_3e8():
    x = torch.rand(3 * 10**8, generator=_gen(33))
    judge(lambda x: x.mean(), (x,), ref=f64_sum_in_chunks(x) / x.numel())
