"""Shared benchmark helpers: medians of repeated timings and a STREAM-style triad measured in
the same run, so every number is read against this machine's bandwidth right now."""
import random
import statistics
import time
import types
from typing import Callable, Dict, List, Tuple

import torch


def own_copy(fn: Callable) -> Callable:
    """fn with its own code object: Dynamo keeps its cache on the code object, so each compiled
    variant gets its own cache entries to check on every call, as in a program that uses one."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def median_seconds(fn: Callable[[], object], repeats: int, warmup: int = 3) -> float:
    """Median wall time of `repeats` calls of fn() after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved_samples(fns: Dict[str, Callable[[], object]], rounds: int, inner: int = 1,
                        warmup: int = 2, settle: int = 0) -> Dict[str, List[float]]:
    """Seconds per call of each fn in each round, timed round-robin: every round times `inner`
    calls of each fn in turn, so a burst of load from other processes on a shared machine hits
    all of them alike instead of whichever happened to be running; the order is shuffled every
    round (a fixed seed), so no fn owns a position or a predecessor: what a call leaves in the
    caches (a model's weights read, or evicted) shapes the next call's time, and a rotation
    would still put each fn after the same other fn in most rounds. `settle` untimed calls
    precede each timed block, so what the previous fn left behind (OpenMP workers still
    spinning after their parallel region) is not charged to the next one. Sample i of every fn
    comes from round i (see paired_ratio)."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples: Dict[str, List[float]] = {name: [] for name in fns}
    order = list(fns.items())
    shuffle = random.Random(0).shuffle
    for r in range(rounds):
        shuffle(order)
        for name, fn in order:
            for _ in range(settle):
                fn()
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - t0) / inner)
    return samples


def interleaved_medians(fns: Dict[str, Callable[[], object]], rounds: int, inner: int = 1,
                        warmup: int = 2, settle: int = 0) -> Tuple[Dict[str, float], Dict[str, float]]:
    """(median, fastest) seconds per call of each fn over interleaved_samples' rounds."""
    samples = interleaved_samples(fns, rounds, inner, warmup, settle)
    medians = {name: statistics.median(ts) for name, ts in samples.items()}
    return medians, {name: min(ts) for name, ts in samples.items()}


def paired_ratio(samples: Dict[str, List[float]], num: str, den: str) -> float:
    """The median over rounds of num's time over den's in the same round. The speed of a shared
    machine drifts by tens of percent over minutes; the calls of one round run within a second
    of each other, so a per-round ratio cancels the drift that a ratio of two medians keeps."""
    return statistics.median(a / b for a, b in zip(samples[num], samples[den]))


def rounds_for(fns: Dict[str, Callable[[], object]], budget_s: float, lo: int, hi: int) -> int:
    """How many interleaved rounds of one call each fit in `budget_s`, clamped to [lo, hi];
    estimated from one (already warm) call of each fn."""
    per_round = 0.0
    for fn in fns.values():
        t0 = time.perf_counter()
        fn()
        per_round += time.perf_counter() - t0
    return max(lo, min(hi, int(budget_s / max(per_round, 1e-9))))


class Triad:
    """STREAM triad a = b + s*c with one ATen kernel (torch.add with alpha, out=) over arrays of
    n fp32 allocated once; calling it runs the triad once."""

    def __init__(self, n: int = 32 * 1024 * 1024):
        self.b = torch.rand(n)
        self.c = torch.rand(n)
        self.a = torch.empty(n)
        self.nbytes = 3 * n * 4  # STREAM counting: no write-allocate

    def __call__(self) -> None:
        torch.add(self.b, self.c, alpha=3.0, out=self.a)


def triad_gbps(n: int = 32 * 1024 * 1024, repeats: int = 15) -> float:
    """GB/s of the STREAM triad over 3 arrays of n fp32 (median of `repeats` runs)."""
    triad = Triad(n)
    return triad.nbytes / median_seconds(triad, repeats) / 1e9


def max_abs_error(got: torch.Tensor, expected: torch.Tensor) -> float:
    """max |got - expected| computed in float64 (0.0 for empty tensors)."""
    if got.numel() == 0:
        return 0.0
    return (got.double() - expected.double()).abs().max().item()


def within_tolerance(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether torch.testing.assert_close accepts got with its default tolerances for the dtype."""
    try:
        torch.testing.assert_close(got, expected)
        return True
    except AssertionError:
        return False
