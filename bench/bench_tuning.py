"""make bench-tuning: measured tuning (CompilerConfig(tune=True)) against the tiling solver.
Never part of `make test`; nothing asserts a time.

The fused kernels of the bench-dynamic block, each as a one-kernel graph: LayerNorm over 512,
GELU over 2048, residual + softmax over 512. Each runs at the rows of the 20 (batch, seq) shapes
of bench_dynamic.SHAPES, plus larger row counts (BENCH_ROWS). The row count is marked dynamic
(torch._dynamo.mark_dynamic); the hidden size stays static, as in the block (its weights fix
it). Every kernel is compiled three times from the same source: twice plain (the tiling solver
picks the tiling at each call) and once with tune=True (the first call of each shape bucket
times the candidate tilings and stores the winner in a fresh tuning file).

Timing: the kernel launch itself (`Program.launch`: tiling + the kernel) of the three programs
on the same buffers (the executor's, kept alive), interleaved round-robin. The second plain
program is the A/A check: solver again / solver is the noise level of this run, including what
merely being another program object costs. Printed per case: the tiling each picks (cores,
tile budget, block_dim), the medians, tuned/solver and A/A; then the geomean and worst
tuned/solver against the A/A spread, and the cases where tuning chose another tiling.

BENCH_THREADS sets torch's thread count (the cores the kernels may use; default: torch's);
BENCH_ROWS=a,b,.. replaces the extra row counts.
"""
import os
import sys
import tempfile
import time
from typing import Callable, Dict, List, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from bench_dynamic import SHAPES, executor_args, geomean, load_line  # noqa: E402
from common import interleaved_medians, own_copy  # noqa: E402

_CACHE = tempfile.mkdtemp(prefix="autofuse-bench-tuning-")
os.environ["AUTOFUSE_CACHE_DIR"] = _CACHE
import autofuse  # noqa: E402

EXTRA_ROWS = [int(r) for r in os.environ.get("BENCH_ROWS", "8192,32768").split(",") if r]


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """LayerNorm with affine weight and bias."""
    return F.layer_norm(x, (x.shape[-1],), w, b)


def gelu(x: torch.Tensor) -> torch.Tensor:
    """Exact GELU."""
    return F.gelu(x)


def residual_softmax(x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """Softmax of a residual sum over the last dim."""
    return torch.softmax(x + r, -1)


# name -> (function, hidden size, extra inputs of shape (hidden,) or like x)
KERNELS = {
    "layernorm-512": (layer_norm, 512, ("vec", "vec")),
    "gelu-2048": (gelu, 2048, ()),
    "residual-softmax-512": (residual_softmax, 512, ("like",)),
}


class LaunchRecorder:
    """Stands in for a Program inside an executor: forwards everything, records the last launch."""

    def __init__(self, program):
        self.program, self.last = program, None

    def launch(self, k, ptrs, syms, nthreads):
        self.last = (k, list(ptrs), list(syms), nthreads)
        return self.program.launch(k, ptrs, syms, nthreads)

    def __getattr__(self, name):
        return getattr(self.program, name)


def recorded_launch(fn: Callable, args: Tuple[torch.Tensor, ...]) -> Tuple[object, tuple, object]:
    """(the Program of the graph fn runs, its one kernel's launch arguments (k, ptrs, syms,
    nthreads), the result, which keeps the recorded output pointer valid)."""
    runner, rargs = executor_args(lambda: fn(*args))
    assert runner.program.num_kernels() == 1, runner.program.fused_text()
    rec = LaunchRecorder(runner.program)
    runner.program = rec
    runner.regenerate()  # the run function binds Program.launch when printed
    try:
        out = runner(*rargs)
    finally:
        runner.program = rec.program
        runner.regenerate()
    return rec.program, rec.last, out


def cases() -> List[Tuple[str, int]]:
    """(kernel, rows) pairs: the 20 shapes' rows (deduplicated, ascending) plus EXTRA_ROWS."""
    rows = sorted({b * s for b, s in SHAPES} | set(EXTRA_ROWS))
    return [(name, r) for name in KERNELS for r in rows]


def fmt_tiling(t: dict) -> str:
    """'2c 256K b16' (cores, tile budget, block_dim)."""
    return f"{t['cores']}c {t['ub_bytes'] // 1024}K b{t['block_dim']}"


def main() -> None:
    """Compiles, tunes, times; prints per case and the summary."""
    start = time.perf_counter()
    if os.environ.get("BENCH_THREADS"):
        torch.set_num_threads(int(os.environ["BENCH_THREADS"]))
    print(load_line())
    print(f"torch threads {torch.get_num_threads()}; caches and tuning file under {_CACHE}")
    solver_cfg = autofuse.CompilerConfig(cache_dir=_CACHE)
    tuned_cfg = autofuse.CompilerConfig(cache_dir=_CACHE, tune=True)
    compiled: Dict[str, Dict[str, Callable]] = {}
    for name, (fn, _, _) in KERNELS.items():
        compiled[name] = {
            "solver": torch.compile(own_copy(fn), backend=autofuse.get_backend(solver_cfg)),
            "solver again": torch.compile(own_copy(fn), backend=autofuse.get_backend(solver_cfg)),
            "tuned": torch.compile(own_copy(fn), backend=autofuse.get_backend(tuned_cfg)),
        }
    print(f"\n{'kernel':<22}{'rows':>7}{'solver tiling':>16}{'tuned tiling':>16}{'solver':>11}"
          f"{'tuned':>11}{'tuned/solver':>14}{'A/A':>8}")
    ratios, aa = [], []
    for name, rows in cases():
        fn, hidden, extra = KERNELS[name]
        gen = torch.Generator().manual_seed(rows)
        x = torch.randn(1, rows, hidden, generator=gen)
        args = (x,) + tuple(torch.randn(hidden, generator=gen) if e == "vec" else torch.randn_like(x)
                            for e in extra)
        for a in args:
            if a.dim() == 3:
                torch._dynamo.mark_dynamic(a, 1)  # rows symbolic: one compile for every row count
        with torch.no_grad():
            expected = fn(*args)
            programs = {}
            for variant in ("solver", "solver again", "tuned"):
                got = compiled[name][variant](*args)  # compiles once; the tuned one measures here
                torch.testing.assert_close(got, expected)
                programs[variant], launch_args, out = recorded_launch(compiled[name][variant], args)
        # Both launch the same kernel (one source, one module) on the same buffers, so only
        # the tiling differs (buffer placement alone can move a memory-bound kernel by 10%+).
        k, ptrs, syms, nthreads = launch_args
        tilings = {v: p.tiling(k, syms, nthreads) for v, p in programs.items()}
        fns = {v: (lambda p=p: p.launch(k, ptrs, syms, nthreads)) for v, p in programs.items()}
        one = min(timeit_once(f) for f in fns.values())
        inner = max(1, min(1000, int(2e-4 / max(one, 1e-7))))  # samples of ~0.2 ms
        rounds = max(15, min(200, int(1.5 / (3 * inner * max(one, 1e-7)))))
        med, _ = interleaved_medians(fns, rounds, inner=inner, warmup=2)
        r = med["tuned"] / med["solver"]
        a = med["solver again"] / med["solver"]
        same = {key: v for key, v in tilings["tuned"].items() if key != "source"} == \
            {key: v for key, v in tilings["solver"].items() if key != "source"}
        ratios.append((r, same))
        aa.append(a)
        print(f"{name:<22}{rows:>7}{fmt_tiling(tilings['solver']):>16}{fmt_tiling(tilings['tuned']):>16}"
              f"{med['solver'] * 1e6:>9.1f}us{med['tuned'] * 1e6:>9.1f}us{r:>13.3f}x{a:>7.3f}x")
    band = max(max(aa), 1 / min(aa))
    all_r = [r for r, _ in ratios]
    changed = [r for r, same in ratios if not same]
    worse = [r for r in all_r if r > band]
    print(f"\ngeomean tuned/solver {geomean(all_r):.3f} (below 1: tuning gains); best "
          f"{min(all_r):.3f}, worst {max(all_r):.3f}")
    print(f"noise (A/A, solver vs a second untuned program): geomean {geomean(aa):.3f}, spread "
          f"{1 / min(aa):.3f}-{max(aa):.3f}; cases where tuned is slower than the solver beyond "
          f"that spread: {len(worse)} of {len(ratios)}")
    print(f"tuning chose another tiling than the solver in {len(changed)} of {len(ratios)} cases"
          + (f": geomean tuned/solver {geomean(changed):.3f}, worst {max(changed):.3f}" if changed else ""))
    print(f"\n{load_line()}; total bench time {time.perf_counter() - start:.0f} s")


def timeit_once(fn: Callable[[], object]) -> float:
    """Seconds of one call (warm)."""
    fn()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
