"""make bench-smoke: eager vs torch.compile (Inductor) vs autofuse (and its Inductor frontend,
"af-inductor": Inductor's fusion groups compiled by autofuse), side by side in one run,
with achieved bandwidth against a triad measured in the same run. Never part of `make test`.

Cases: an elementwise chain, LayerNorm (weight and bias), RMSNorm and softmax(-1), at a large
shape (4096 x 4096, fp32 and bf16; memory-bound, read against a STREAM triad timed in the
same interleaved rounds, counting compulsory bytes only) and a decode-like shape (1 row; read
against Inductor: Dynamo's per-call cost dominates there). Times are medians of interleaved
rounds (one call per sample); nothing here asserts a time. BENCH_ONLY=substring runs the
matching cases only.
"""
import dataclasses
import os
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from common import (Triad, interleaved_medians, max_abs_error, median_seconds, own_copy,  # noqa: E402
                    rounds_for, within_tolerance)

import autofuse  # noqa: E402
from autofuse.explain import graph_report  # noqa: E402

EPS = 1e-6
LARGE_TRIAD_TARGET = 0.70  # fraction of the triad a large case must reach


def elementwise(x, scale, bias):
    """sigmoid(x) * scale + bias: one broadcast elementwise chain."""
    return torch.sigmoid(x) * scale + bias


def layer_norm(x, w, b):
    """LayerNorm over the last dim with weight and bias."""
    return F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def rms_norm(x, w):
    """RMSNorm written out as the models write it."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def softmax(x):
    """Softmax over the last dim."""
    return torch.softmax(x, -1)


def rotary(x, cos, sin):
    """Rotary embedding over the last dim (rotate_half form): x * cos + cat(-x2, x1) * sin."""
    h = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., h:], x[..., :h]), -1) * sin


def _passthrough_backend(gm, example_inputs):
    """A torch.compile backend that compiles nothing: Dynamo's own per-call cost."""
    return gm.forward


@dataclasses.dataclass
class Op:
    """A benchmarked function: how to make its inputs and how many row vectors it reads."""

    name: str
    fn: Callable
    vectors: int  # per-column parameter vectors read once (weight, bias, scale)


OPS = {
    "elementwise": Op("sigmoid(x)*scale+bias", elementwise, 2),
    "layernorm": Op("LayerNorm(w,b)", layer_norm, 2),
    "rmsnorm": Op("RMSNorm(w)", rms_norm, 1),
    "softmax": Op("softmax(-1)", softmax, 0),
    "rotary": Op("rotary(cos,sin)", rotary, 2),
}


@dataclasses.dataclass
class Case:
    """One row of the table: an op at a shape and dtype."""

    op: Op
    rows: int
    cols: int
    dtype: torch.dtype

    @property
    def small(self) -> bool:
        return self.rows * self.cols * self.dtype.itemsize < (1 << 20)

    @property
    def label(self) -> str:
        dt = {torch.float32: "fp32", torch.bfloat16: "bf16"}[self.dtype]
        return f"{self.op.name} {self.rows}x{self.cols} {dt}"

    def inputs(self) -> Tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(0)
        x = torch.randn(self.rows, self.cols, generator=g).to(self.dtype)
        vecs = [(torch.randn(self.cols, generator=g) * 0.1 + (1.0 if i == 0 else 0.0)).to(self.dtype)
                for i in range(self.op.vectors)]
        return (x, *vecs)

    def compulsory_bytes(self) -> int:
        """Inputs read once and the output written once."""
        return (2 * self.rows + self.op.vectors) * self.cols * self.dtype.itemsize


@dataclasses.dataclass
class Result:
    """What one case measured."""

    case: Case
    times: Dict[str, float]  # medians
    fastest: Dict[str, float]  # the fastest sample of each: how much of the median is noise
    samples: int  # timed calls of each
    triad_gbps: float  # the triad timed interleaved with the backends (0 for small shapes)
    kernels: int
    graphs: List[str]
    err: Dict[str, float]
    ok: Dict[str, bool]

    def gbps(self) -> float:
        """Achieved bandwidth of autofuse counting compulsory bytes only."""
        return self.case.compulsory_bytes() / self.times["autofuse"] / 1e9

    def triad_fraction(self) -> Optional[float]:
        """autofuse's GB/s over the triad timed in the same rounds (large shapes only)."""
        return self.gbps() / self.triad_gbps if self.triad_gbps else None


def _compile_report(records) -> Tuple[int, List[str]]:
    """Number of autofuse kernels and one line per graph (kernels, fallbacks, ops left to ATen)."""
    kernels = 0
    lines = []
    for rec in records:
        rep = graph_report(rec)
        kernels += len(rep.kernels)
        line = f"{rep.name}: {len(rep.kernels)} kernel(s), {rep.fused_ops}/{rep.fx_ops} ATen ops fused"
        if rep.fallback:
            reason = rep.fallback if len(rep.fallback) <= 110 else rep.fallback[:107] + "..."
            line += f"; runs eagerly: {reason}"
        left = sorted({op.replace("aten.", "").replace(".default", "") for op, _n, _r in rep.left_out
                       if op != "operator.getitem"})
        if left and not rep.fallback:
            line += f"; left to ATen: {', '.join(left)}"
        lines.append(line)
    return kernels, lines


def _executor_alone(records, args, expected) -> Optional[Callable[[], object]]:
    """The autofuse executor of a single compiled graph called directly (no Dynamo), when its
    inputs are exactly `args` (checked against the expected output)."""
    if len(records) != 1 or records[0].runner is None:
        return None
    runner = records[0].runner
    try:
        out = runner(*args)
        if not (isinstance(out, (list, tuple)) and len(out) == 1 and torch.equal(out[0], expected)):
            return None
    except Exception:
        return None
    return lambda: runner(*args)


def run_case(case: Case, budget_s: float, triad: Triad) -> Result:
    """Compiles the case three ways (plus a no-op backend for small shapes), warms each up,
    checks the results and times all of them interleaved; large shapes time the triad in the
    same rounds, so '% of triad' reads both under the same load."""
    args = case.inputs()
    fn = case.op.fn
    torch._dynamo.reset()
    expected = fn(*args)
    inductor = torch.compile(own_copy(fn))
    af = torch.compile(own_copy(fn), backend="autofuse")
    # The Inductor frontend: Inductor's fusion groups, autofuse's kernels.
    af_ind = torch.compile(own_copy(fn), backend="autofuse", options={"frontend": "inductor"})
    with autofuse.collect_records() as records:
        got = af(*args)
    got_ind = inductor(*args)
    got_af_ind = af_ind(*args)
    kernels, graphs = _compile_report(records)
    err = {"autofuse": max_abs_error(got, expected), "inductor": max_abs_error(got_ind, expected),
           "af-inductor": max_abs_error(got_af_ind, expected)}
    ok = {"autofuse": within_tolerance(got, expected), "inductor": within_tolerance(got_ind, expected),
          "af-inductor": within_tolerance(got_af_ind, expected)}
    fns: Dict[str, Callable[[], object]] = {
        "eager": lambda: fn(*args),
        "inductor": lambda: inductor(*args),
        "autofuse": lambda: af(*args),
        "af-inductor": lambda: af_ind(*args),
    }
    if case.small:
        floor = torch.compile(own_copy(fn), backend=_passthrough_backend)
        fns["dynamo floor"] = lambda: floor(*args)
        alone = _executor_alone(records, args, got)
        if alone is not None:
            fns["executor alone"] = alone
    else:
        fns["triad"] = triad
    for f in fns.values():  # warm-up: compile everything, settle allocations
        f()
    # One call per sample: Dynamo-path calls have a heavy tail on a loaded machine (rare calls
    # of milliseconds), which a batch of calls per sample would turn into its mean.
    rounds = rounds_for(fns, budget_s, 400 if case.small else 5, 2000 if case.small else 41)
    times, fastest = interleaved_medians(fns, rounds, settle=1 if case.small else 0)
    triad_bw = triad.nbytes / times["triad"] / 1e9 if "triad" in times else 0.0
    return Result(case, times, fastest, rounds, triad_bw, kernels, graphs, err, ok)


def _fmt_time(t: float) -> str:
    """Seconds as ms or us."""
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"


def print_result(r: Result) -> None:
    """The block of lines for one case."""
    t = r.times
    af = t["autofuse"]
    print(f"\n{r.case.label}")
    print(f"  eager {_fmt_time(t['eager'])} | inductor {_fmt_time(t['inductor'])} | "
          f"autofuse {_fmt_time(af)} | af-inductor {_fmt_time(t['af-inductor'])}   "
          f"(medians, {r.samples} calls each, interleaved)")
    print(f"  autofuse vs eager {t['eager'] / af:.2f}x, vs inductor {t['inductor'] / af:.2f}x   "
          f"(fastest samples: " + ", ".join(f"{k} {_fmt_time(v)}" for k, v in r.fastest.items()) + ")")
    if "dynamo floor" in t:
        extra = f"dynamo floor (no-op backend) {_fmt_time(t['dynamo floor'])}"
        if "executor alone" in t:
            extra += (f", autofuse executor alone {_fmt_time(t['executor alone'])} "
                      f"({t['eager'] / t['executor alone']:.2f}x eager)")
        print(f"  {extra}")
    mib = r.case.compulsory_bytes() / (1 << 20)
    if r.case.small:
        print(f"  autofuse {r.gbps():.1f} GB/s over {mib:.2f} MiB compulsory "
              f"(cache-resident: not a bandwidth measure)")
    else:
        print(f"  autofuse {r.gbps():.1f} GB/s over {mib:.2f} MiB compulsory = "
              f"{100 * r.triad_fraction():.0f}% of the triad timed alongside ({r.triad_gbps:.1f} GB/s)")
    print(f"  autofuse kernels: {r.kernels}  [" + " | ".join(r.graphs) + "]")
    tol = {k: "ok" if v else "EXCEEDS assert_close tolerance" for k, v in r.ok.items()}
    print(f"  max abs error vs eager: autofuse {r.err['autofuse']:.3g} ({tol['autofuse']}), "
          f"inductor {r.err['inductor']:.3g} ({tol['inductor']}), "
          f"af-inductor {r.err['af-inductor']:.3g} ({tol['af-inductor']})")
    print(f"  {target_line(r)}")


def target_met(r: Result) -> bool:
    """Large shapes: at least as fast as Inductor and >= 70% of the triad timed alongside;
    small shapes: no slower than Inductor."""
    faster = r.times["autofuse"] <= r.times["inductor"]
    if r.case.small:
        return faster
    return faster and r.triad_fraction() >= LARGE_TRIAD_TARGET


def target_line(r: Result) -> str:
    """The per-case target verdict."""
    met = "MET" if target_met(r) else "NOT MET"
    if r.case.small:
        return f"target no slower than Inductor: {met}"
    return f"target >= Inductor and >= {100 * LARGE_TRIAD_TARGET:.0f}% of triad: {met}"


def cases() -> List[Case]:
    """The benchmark table (BENCH_ONLY=substr restricts it to matching labels)."""
    out = [Case(OPS["elementwise"], 4096, 4096, torch.float32),
           Case(OPS["elementwise"], 1, 1024, torch.float32)]
    for key in ("layernorm", "rmsnorm", "softmax"):
        out += [Case(OPS[key], 4096, 4096, torch.float32),
                Case(OPS[key], 4096, 4096, torch.bfloat16),
                Case(OPS[key], 1, 4096, torch.float32)]
    # Rotary embedding of 128-wide heads: rows = batch x heads x positions.
    out += [Case(OPS["rotary"], 131072, 128, torch.float32),
            Case(OPS["rotary"], 131072, 128, torch.bfloat16),
            Case(OPS["rotary"], 32, 128, torch.float32)]
    only = os.environ.get("BENCH_ONLY")
    return [c for c in out if not only or only.lower() in c.label.lower()]


def main() -> None:
    """Triad, every case (a block of lines each), the triad again, and a summary table."""
    start = time.perf_counter()
    threads = torch.get_num_threads()
    triad = Triad()

    def triad_gbps() -> float:
        return triad.nbytes / median_seconds(triad, 15) / 1e9

    print(f"threads: {threads}; STREAM triad (torch.add alpha, 3x128 MiB): {triad_gbps():.1f} GB/s "
          f"now; each large case times it again in its own rounds and reads '% of triad' against that")
    results = []
    with torch.no_grad():
        for case in cases():
            results.append(run_case(case, 1.0 if case.small else 4.0, triad))
            print_result(results[-1])
    print(f"\nSTREAM triad at the end: {triad_gbps():.1f} GB/s")
    print(f"\n{'case':<36}{'eager':>11}{'inductor':>11}{'autofuse':>11}{'af-ind.':>11}{'vs eager':>9}"
          f"{'vs ind.':>8}{'% triad':>8}{'kernels':>8}  target")
    for r in results:
        t = r.times
        pct = "-" if r.case.small else f"{100 * r.triad_fraction():.0f}%"
        cols = "".join(f"{_fmt_time(t[k]):>11}" for k in ("eager", "inductor", "autofuse", "af-inductor"))
        print(f"{r.case.label:<36}" + cols
              + f"{t['eager'] / t['autofuse']:>8.2f}x{t['inductor'] / t['autofuse']:>7.2f}x{pct:>8}"
              f"{r.kernels:>8}  {'MET' if target_met(r) else 'NOT MET'}")
    print(f"\ntotal bench time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
