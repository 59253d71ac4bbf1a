"""make bench-dynamic: dynamic shapes (issue 4). Never part of `make test`; nothing asserts a time.

Part 1. The block of tests/python/test_dynamic_shapes.py (LayerNorm, GELU MLP whose nn.Linear
layers stay ATen, residual, softmax over the last dim; hidden BENCH_HIDDEN, default 512) over the 20
(batch, seq) shapes of tests/python/test_dynamic_shapes.py (the longest sequence 2039 instead
of 7919, see SHAPES), four ways:
  autofuse dynamic   torch.compile(dynamic=True): one compile (plus Dynamo's batch-1 one)
  autofuse static    torch.compile(dynamic=False), recompile limit raised: one compile per shape
  inductor dynamic   torch.compile(dynamic=True) with the default backend
  eager              for reference
Each variant has its own code object (its own Dynamo cache); all compiles happen in a warm-up
pass over the shapes, then every shape is timed with the variants interleaved round-robin, one
call per sample, and the median is kept. Printed: per shape, the medians and the
dynamic/static ratio; then the ratio on the median shape (by batch x seq) and the geomean over
shapes of dynamic/static and dynamic/Inductor.

Part 2. The per-call host cost of a one-kernel graph (sigmoid(x) * 2 + 1 on a tiny tensor):
`Program.launch` called directly (the nanobind binding, the kernel's generated tiling
function, the launch and the kernel itself on 64 floats), dynamic vs static, with the torch
thread count and with 1 thread; then the executor alone and the whole torch.compile call.

The autofuse JIT cache and Inductor's cache live in a fresh temporary directory
(BENCH_CACHE_DIR=path reuses one), so the compile counts and times printed are cold ones.
BENCH_SHAPES=N runs only the first N shapes; BENCH_HIDDEN sets the hidden size; BENCH_THREADS
sets torch's thread count (which autofuse kernels use too): on a busy machine a 2-thread parallel
region waits whenever one thread is descheduled, so BENCH_THREADS=1 gives steadier numbers.
BENCH_BUDGET_S sets the seconds of timing rounds in part 1 (default 90): more rounds, less noise.
"""
import contextlib
import math
import os
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, Iterator, List, Tuple

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from common import interleaved_medians, own_copy, rounds_for  # noqa: E402

# Cold caches for autofuse and Inductor alike (before either is imported/configured).
_CACHE = os.environ.get("BENCH_CACHE_DIR") or tempfile.mkdtemp(prefix="autofuse-bench-dynamic-")
os.environ["AUTOFUSE_CACHE_DIR"] = os.path.join(_CACHE, "autofuse")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_CACHE, "inductor")
import autofuse  # noqa: E402
from autofuse.executor import Executor  # noqa: E402

# The model of the acceptance test (one definition: the bench times what the test checks).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
from test_dynamic_shapes import Block  # noqa: E402

HIDDEN = int(os.environ.get("BENCH_HIDDEN", "512"))
# The shapes of tests/python/test_dynamic_shapes.py (batch 1 and 2, primes 7 and 7919, sizes not
# divisible by the vector width; the first one general, so Dynamo marks both sizes symbolic),
# except that the longest sequence is the prime 2039 rather than 7919: at hidden 512 a 7919-long
# sequence costs seconds per call in the ATen matmuls alone and would not fit the time budget.
SHAPES = [(2, 13), (1, 13), (3, 7), (1, 2039), (4, 2), (2, 7), (5, 33), (7, 100), (1, 2), (8, 17),
          (3, 9), (2, 127), (6, 5), (1, 64), (2, 3), (4, 4), (9, 11), (1, 31), (3, 255), (2, 2039)]
VARIANTS = ("autofuse dynamic", "autofuse static", "inductor dynamic", "eager")
# Seconds of timing rounds over all shapes (compiles come on top), BENCH_BUDGET_S to change.
TIME_BUDGET_S = float(os.environ.get("BENCH_BUDGET_S", "90"))


def call_block(m: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The compiled entry point: Dynamo inlines m.forward."""
    return m(x)


def fmt(t: float) -> str:
    """Seconds as ms or us."""
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"


def geomean(xs: List[float]) -> float:
    """Geometric mean."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


@contextlib.contextmanager
def counting() -> Iterator[Dict[str, float]]:
    """Wall seconds and autofuse C++ compilations inside the block (filled in on exit)."""
    out: Dict[str, float] = {}
    before, t0 = autofuse.stats()["cxx_compiles"], time.perf_counter()
    yield out
    out["seconds"] = time.perf_counter() - t0
    out["cxx_compiles"] = autofuse.stats()["cxx_compiles"] - before


def model_bench(shapes: List[Tuple[int, int]]) -> None:
    """Part 1: the block over the shapes, four ways."""
    torch.manual_seed(0)
    model = Block(HIDDEN).eval()
    torch._dynamo.reset()
    autofuse.reset_records()
    torch._dynamo.config.recompile_limit = 4 * len(shapes)  # the static variant: one per shape
    compiled = {
        "autofuse dynamic": torch.compile(own_copy(call_block), backend="autofuse", dynamic=True),
        "autofuse static": torch.compile(own_copy(call_block), backend="autofuse", dynamic=False),
        "inductor dynamic": torch.compile(own_copy(call_block), dynamic=True),
        "eager": call_block,
    }
    # Each variant gets its own copy of every input: a dynamic=False compile that met the tensor
    # object a dynamic=True compile had seen traced its sizes as symbols (measured: the "static"
    # graphs had size symbols), so shared inputs made the static variant partly dynamic.
    inputs = {s: torch.randn(*s, HIDDEN, generator=torch.Generator().manual_seed(i))
              for i, s in enumerate(shapes)}
    inputs = {s: {v: x.clone() for v in VARIANTS} for s, x in inputs.items()}

    # Warm-up pass: every compile happens here, counted per variant; results checked.
    compile_cost = {v: {"seconds": 0.0, "cxx_compiles": 0} for v in VARIANTS[:3]}
    worst = {v: 0.0 for v in VARIANTS[:3]}
    for shape, xs in inputs.items():
        expected = model(xs["eager"])
        for v in VARIANTS[:3]:
            with counting() as c:
                got = compiled[v](model, xs[v])
            for key in c:
                compile_cost[v][key] += c[key]
            worst[v] = max(worst[v], (got.double() - expected.double()).abs().max().item())
            torch.testing.assert_close(got, expected, msg=lambda m: f"{v} {shape}: {m}")
    fell_back = [f"{r.name}: {r.fallback}" for r in autofuse.compiled_graphs() if r.fallback]
    if fell_back:  # timing eager code under autofuse's name would be meaningless
        sys.exit("autofuse graphs ran eagerly, not benchmarking:\n" + "\n".join(fell_back))
    print(f"hidden {HIDDEN}, {len(shapes)} shapes, torch threads {torch.get_num_threads()}")
    print(f"first pass over all shapes, compiles included (caches under {_CACHE}):")
    for v, c in compile_cost.items():
        cx = f", {c['cxx_compiles']} autofuse C++ compile(s)" if v.startswith("autofuse") else ""
        print(f"  {v:<17} {c['seconds']:7.1f} s{cx}; max abs error vs eager {worst[v]:.2g}")

    # Timing: per shape, the variants interleaved; rounds sized from the per-shape budget.
    eager_once = {}
    for shape, xs in inputs.items():
        t0 = time.perf_counter()
        model(xs["eager"])
        eager_once[shape] = time.perf_counter() - t0
    total = sum(eager_once.values())
    rows = []
    print(f"\n{'(batch, seq)':<14}" + "".join(f"{v:>18}" for v in VARIANTS)
          + f"{'dyn/static':>11}{'dyn/ind':>9}{'calls':>7}")
    for shape, xs in inputs.items():
        fns = {v: (lambda f=compiled[v], x=xs[v]: f(model, x)) for v in VARIANTS}
        # Half the budget in equal shares (small shapes are the noisy ones: many short calls),
        # half in proportion to the shape's eager time.
        budget = TIME_BUDGET_S / 2 * (1 / len(inputs) + eager_once[shape] / total)
        rounds = rounds_for(fns, budget, 5, 2000)
        med, _ = interleaved_medians(fns, rounds, warmup=1, settle=0)
        rows.append((shape, med))
        print(f"{str(shape):<14}" + "".join(f"{fmt(med[v]):>18}" for v in VARIANTS)
              + f"{med['autofuse dynamic'] / med['autofuse static']:>10.3f}x"
              f"{med['autofuse dynamic'] / med['inductor dynamic']:>8.3f}x{rounds:>7}")

    by_size = sorted(rows, key=lambda r: (r[0][0] * r[0][1], r[0]))
    mshape, mmed = by_size[len(by_size) // 2]
    ds = [m["autofuse dynamic"] / m["autofuse static"] for _, m in rows]
    di = [m["autofuse dynamic"] / m["inductor dynamic"] for _, m in rows]
    de = [m["autofuse dynamic"] / m["eager"] for _, m in rows]
    print(f"\nmedian shape (by batch x seq) {mshape}: autofuse dynamic / static = "
          f"{mmed['autofuse dynamic'] / mmed['autofuse static']:.3f}  (target <= 1.10)")
    print(f"geomean over {len(rows)} shapes: autofuse dynamic / static = {geomean(ds):.3f}; "
          f"autofuse dynamic / Inductor dynamic = {geomean(di):.3f} (target <= 1.00); "
          f"autofuse dynamic / eager = {geomean(de):.3f}")

    # Where the dynamic/static gap of the median shape goes: the executors called directly
    # (their ATen matmuls included) next to the compiled calls, in the same rounds; the
    # difference is Dynamo's and AOTAutograd's per-call work.
    xs = inputs[mshape]
    fns = {}
    for v in VARIANTS[:2]:
        runner, args = executor_args(lambda: compiled[v](model, xs[v]))
        fns[v] = lambda f=compiled[v], x=xs[v]: f(model, x)
        fns[v + " executor"] = lambda r=runner, a=args: no_grad_call(r, a)
    med, _ = interleaved_medians(fns, rounds_for(fns, 6.0, 30, 2000), warmup=3)
    d, s = med["autofuse dynamic executor"], med["autofuse static executor"]
    print(f"median shape {mshape}, autofuse executor alone (no Dynamo): dynamic {fmt(d)}, static "
          f"{fmt(s)} ({d / s:.3f}x); Dynamo + AOTAutograd per call: dynamic "
          f"{fmt(med['autofuse dynamic'] - d)}, static {fmt(med['autofuse static'] - s)}")


def _per_call(fn: Callable[[], object], calls: int = 2000, batches: int = 25) -> float:
    """Median seconds per call over `batches` batches of `calls` back-to-back calls."""
    for _ in range(calls):
        fn()
    per = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per.append((time.perf_counter() - t0) / calls)
    return statistics.median(per)


def no_grad_call(fn: Callable, args: tuple) -> object:
    """fn(*args) without autograd recording, as AOTAutograd runs a compiled forward."""
    with torch.no_grad():
        return fn(*args)


def executor_args(call: Callable[[], object]) -> Tuple[Executor, tuple]:
    """Runs call() and returns the autofuse Executor it reached last and the arguments that
    executor got (with dynamic shapes AOTAutograd passes size symbols besides the tensors)."""
    seen = []
    original = Executor.__call__

    def spy(self, *args):
        seen.append((self, args))
        return original(self, *args)

    Executor.__call__ = spy
    try:
        call()
    finally:
        Executor.__call__ = original
    assert seen, "the call reached no autofuse executor (did the graph fall back to eager?)"
    return seen[-1]


def _one_kernel(x: torch.Tensor) -> torch.Tensor:
    """One elementwise kernel."""
    return torch.sigmoid(x) * 2.0 + 1.0


def host_cost_bench() -> None:
    """Part 2: the per-call host cost of tiling + launch for a one-kernel graph."""
    print("\nper-call host cost, one-kernel graph sigmoid(x)*2+1 on a 4x16 fp32 tensor "
          "(median of 25 batches of 2000 back-to-back calls):")
    nthreads = torch.get_num_threads()
    for dynamic in (True, False):
        torch._dynamo.reset()
        autofuse.reset_records()
        x = torch.randn(4, 16)
        fn = torch.compile(own_copy(_one_kernel), backend="autofuse", dynamic=dynamic)
        with torch.no_grad():
            fn(torch.randn(5, 16) if dynamic else x)  # dynamic: compile against another shape
            runner, args = executor_args(lambda: fn(x))
        program = runner.program
        tr = next(r.translation for r in autofuse.compiled_graphs() if r.runner is runner)
        assert program.num_kernels() == 1, program.fused_text()
        values = tr.read_symbols(args) if tr.read_symbols is not None else ()
        syms = [values[tr.symbols.index(s)] for s in program.kernel_symbols(0)]
        out = torch.empty_like(x)
        ptrs = [x.data_ptr(), out.data_ptr()]
        program.launch(0, ptrs, syms, nthreads)
        torch.testing.assert_close(out, _one_kernel(x))
        kind = f"{'dynamic' if dynamic else 'static '} ({len(syms)} size symbol(s))"
        launch_n = _per_call(lambda: program.launch(0, ptrs, syms, nthreads))
        launch_1 = _per_call(lambda: program.launch(0, ptrs, syms, 1))
        alone = _per_call(lambda: runner(*args))
        with torch.no_grad():
            whole = _per_call(lambda: fn(x), calls=500, batches=15)
        print(f"  {kind}: Program.launch {launch_n * 1e6:.2f} us ({nthreads} threads), "
              f"{launch_1 * 1e6:.2f} us (1 thread)  [target <= 5 us]; executor alone "
              f"{alone * 1e6:.1f} us; torch.compile call {whole * 1e6:.1f} us")


def load_line() -> str:
    """The 1-minute load average against the cores: timings under load are scheduler noise."""
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    busy = "  (busy machine: multi-threaded timings include waits for a descheduled thread)"
    return f"load average {load:.1f} on {cores} cores" + (busy if load > cores else "")


def main() -> None:
    """Both parts, with the total time."""
    start = time.perf_counter()
    if os.environ.get("BENCH_THREADS"):
        torch.set_num_threads(int(os.environ["BENCH_THREADS"]))
    print(load_line())
    n = int(os.environ.get("BENCH_SHAPES", len(SHAPES)))
    with torch.no_grad():
        model_bench(SHAPES[:n])
    host_cost_bench()
    print(f"\n{load_line()}; total bench time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
