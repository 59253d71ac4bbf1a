"""Shared benchmark helpers: medians of repeated timings and a STREAM-style triad measured in
the same run, so every number is read against this machine's bandwidth right now."""
import statistics
import time

import torch


def median_seconds(fn, repeats: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def triad_gbps(n: int = 32 * 1024 * 1024, repeats: int = 15) -> float:
    """STREAM triad a = b + s*c with one ATen kernel (torch.add with alpha, out=): 3 arrays of n
    fp32 moved per run (STREAM counting: no write-allocate)."""
    b = torch.rand(n)
    c = torch.rand(n)
    a = torch.empty(n)
    t = median_seconds(lambda: torch.add(b, c, alpha=3.0, out=a), repeats)
    return 3 * n * 4 / t / 1e9
