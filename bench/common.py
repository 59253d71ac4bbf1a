"""Shared benchmark helpers: medians of repeated timings and a STREAM-style triad measured in
the same run, so every number is read against this machine's bandwidth right now; peak resident
memory per variant, one child process each."""
import functools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import types
from typing import Callable, Dict, List, Sequence, Tuple

import torch


def own_copy(fn: Callable) -> Callable:
    """fn with its own code object: Dynamo keeps its cache on the code object, so each compiled
    variant gets its own cache entries to check on every call, as in a program that uses one.
    The copy keeps fn's name, docstring and `__wrapped__` (functools.update_wrapper): a
    decorated forward's signature is read through them (Hugging Face's `generate` passes
    `logits_to_keep=1` only where inspect.signature(forward) names it, so a copy without them
    made every compiled prefill compute the logits of every prompt token)."""
    copy = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    return functools.update_wrapper(copy, fn)


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


def peak_resident_mib() -> float:
    """This process's peak resident memory (VmHWM: the high-water mark of its own address space;
    getrusage's ru_maxrss would carry over the forking parent's peak across exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report_peak_rss() -> None:
    """(a --memory-child process, at its end) Prints its peak RSS as the JSON line peak_rss reads."""
    print(json.dumps({"peak_mib": peak_resident_mib()}), flush=True)


def peak_rss(script: str, children: Dict[str, str], log: Callable[[str], None]) -> Dict[str, float]:
    """Per variant, the peak RSS (MiB) of one child process `script --memory-child ARG` (children:
    variant -> ARG; the child builds, compiles and runs that variant, then report_peak_rss), run
    one after another. Each child gets its own cold compile caches (BENCH_CACHE_DIR: a fresh
    temporary directory, removed after): the parent's first-call times must not find these
    compiles cached. nan where a child failed (its last stderr line goes to `log`)."""
    peaks = {}
    for v, arg in children.items():
        with tempfile.TemporaryDirectory(prefix="autofuse-bench-rss-") as cache:
            r = subprocess.run([sys.executable, script, "--memory-child", arg],
                               capture_output=True, text=True, env=dict(os.environ, BENCH_CACHE_DIR=cache))
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
        peaks[v] = json.loads(lines[-1])["peak_mib"] if r.returncode == 0 and lines else float("nan")
        if r.returncode != 0:
            log(f"memory {arg}: child failed: {r.stderr.strip().splitlines()[-1:]}")
    return peaks


# The memory table's short names of the variants.
SHORT = {"eager": "eager", "inductor": "ind", "inductor-frozen": "frozen", "autofuse": "af", "af-inductor": "af-ind"}


def memory_table(memory: Dict[Tuple[str, ...], Dict[str, float]], keys: Sequence[str],
                 variants: Sequence[str]) -> List[str]:
    """Markdown lines: per key tuple (its columns named `keys`), the peak RSS MiB of each of
    `variants` ('-' where one was not measured) and autofuse's over Inductor's and over
    Inductor-frozen's ('-' where absent)."""
    def ratio(peaks: Dict[str, float], den: str) -> str:
        return f"{peaks['autofuse'] / peaks[den]:.2f}x" if den in peaks and "autofuse" in peaks else "-"

    lines = [f"| {' | '.join(keys)} | peak RSS MiB ({' / '.join(SHORT.get(v, v) for v in variants)}) | "
             "af / ind | af / frozen |", "|" + "---|" * (len(keys) + 3)]
    for key, peaks in memory.items():
        mib = " / ".join(f"{peaks[v]:.0f}" if v in peaks else "-" for v in variants)
        lines.append(f"| {' | '.join(key)} | {mib} | {ratio(peaks, 'inductor')} | "
                     f"{ratio(peaks, 'inductor-frozen')} |")
    return lines
