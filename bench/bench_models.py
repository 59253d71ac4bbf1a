"""make bench-models: real Hugging Face models, eager vs Inductor vs autofuse. Never part of
`make test`; nothing asserts a time.

Models (bench/models.py) are built from their `transformers` config classes with random weights:
BERT, GPT-2, Llama (grouped-query attention), the T5 encoder and ViT by default, 2 layers each,
batch 4 x sequence 128 (ViT: 2 images of 224x224), and two convolutional networks at full depth,
ResNet-50 and ConvNeXt-T (2 images of 224x224; their geomeans apart, "vision"); `--models` picks
others (qwen2, distilbert, opt are there to check that the compiler, not the benchmark,
improved). Configs:

  fp32     inference in fp32 (no_grad)
  bf16     inference with the model in bf16 (no_grad)
  train    one training step in fp32: forward, a scalar loss, backward (dropout is 0, so
           gradients are compared with eager's)
  small    fp32 inference at batch 1, sequence 32 (one image for ViT): the small shapes where
           per-op overhead dominates
  frozen   small, with Inductor told the parameters are constants (its `freezing`: weights
           constant-folded and prepacked, writes to them no longer seen) against autofuse's
           default (packed weights kept while no write reaches them)
  dynamic  fp32 inference compiled with dynamic=True over several sequence lengths: compiles
           and C++ compiles counted per length, each length timed against the static compile

Each (model, config) builds one model per variant (same weights), compiles it on the first call
(timed: compile seconds; autofuse's C++ compiles counted; caches cold: a fresh temporary
directory for autofuse's and Inductor's caches, BENCH_CACHE_DIR reuses one; before the first
case both compile a small module once, warm_up, so a process's one-time costs are not charged to
the first case's first compile), checks the outputs
(and gradients) against eager at the dtype's assert_close tolerance, then times the variants in
shuffled interleaved rounds (bench/common.py): the medians, and as the ratios the median of the
per-round ratios (common.paired_ratio). Printed and written to
build/bench/models.md (+ models.png, a bar chart): per model the medians, ratios, max error,
compile seconds, C++ compiles and eager-fallback graphs; per config the geomeans.

Peak resident memory (unless `--no-memory`): per (model, config), one child process per variant
(eager, Inductor, in `frozen` also Inductor with `freezing`, autofuse, af-inductor) builds the
model, compiles it as above and runs the config's call three times (dynamic: once per length),
then reports its VmHWM (peak RSS of its own address space, compile included); a table gives the
MiB and autofuse's peak over Inductor's (and over Inductor-frozen's).

`--breakdown` adds, per (model, config), where the time goes (bench/breakdown.py): profiles of
eager, Inductor and autofuse with torch.profiler, split into matmul-class ATen ops, other ATen ops,
fused kernels (ours by kernel, with the ATen ops inside; Inductor's by kernel name), executor
overhead and the Dynamo/AOTAutograd wrapper; and each matmul-class op's time under autofuse next
to eager's for the same calls.

Progress goes to stderr. BENCH_BUDGET_S: seconds of timing rounds per (model, config)
(default 20); BENCH_THREADS: torch's thread count; --models, --configs and --no-memory narrow a run.
"""
from __future__ import annotations

import argparse
import collections
import copy
import dataclasses
import itertools
import math
import os
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch

sys.path.insert(0, os.path.dirname(__file__))
from common import (interleaved_samples, memory_table, own_copy, paired_ratio, peak_rss,  # noqa: E402
                    report_peak_rss, rounds_for)

# Cold caches for autofuse and Inductor alike (before either is imported/configured).
_CACHE = os.environ.get("BENCH_CACHE_DIR") or tempfile.mkdtemp(prefix="autofuse-bench-models-")
os.environ["AUTOFUSE_CACHE_DIR"] = os.path.join(_CACHE, "autofuse")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_CACHE, "inductor")
import autofuse  # noqa: E402
import autofuse.inductor  # noqa: E402
import breakdown  # noqa: E402
import models  # noqa: E402

CONFIGS = ("fp32", "bf16", "train", "small", "frozen", "dynamic")
# "af-inductor": autofuse's kernels for Inductor's fusion groups (the Inductor frontend), so the
# two fusion policies compare on the same codegen.
VARIANTS = ("eager", "inductor", "autofuse", "af-inductor")
DYNAMIC_SEQS = (64, 100, 128, 77, 32)  # the first two compile; the rest must not
DYNAMIC_BATCHES = (2, 3, 5, 4, 6)  # an image model's (batch 1 would specialize)
# The peak-memory children's variants (the frozen config adds "inductor-frozen").
MEMORY_VARIANTS = ("eager", "inductor", "inductor-frozen", "autofuse", "af-inductor")
BUDGET_S = float(os.environ.get("BENCH_BUDGET_S", "20"))
OUT_DIR = os.path.join(os.path.dirname(__file__), "..", "build", "bench")


def progress(msg: str) -> None:
    """One line of progress on stderr."""
    print(f"[bench-models {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def forward(m: torch.nn.Module, kw: Dict[str, torch.Tensor]) -> torch.Tensor:
    """The compiled entry point: the model's first output (last_hidden_state)."""
    return m(**kw)[0]


def loss_of(out: torch.Tensor) -> torch.Tensor:
    """The scalar training loss (outside the compiled region, as a user's loss usually is)."""
    return out.float().square().mean()


def train_step(fn: Callable, m: torch.nn.Module, kw: Dict[str, torch.Tensor]) -> torch.Tensor:
    """One step: gradients cleared, forward, loss, backward; returns the output."""
    for p in m.parameters():
        p.grad = None
    out = fn(m, kw)
    loss_of(out).backward()
    return out


@dataclasses.dataclass
class Case:
    """The measurements of one (model, config)."""

    model: str
    config: str
    medians: Dict[str, float] = dataclasses.field(default_factory=dict)  # variant -> seconds
    speedups: Dict[str, float] = dataclasses.field(default_factory=dict)  # variant -> paired ratio
    compile_s: Dict[str, float] = dataclasses.field(default_factory=dict)
    cxx_compiles: int = 0
    fallbacks: List[str] = dataclasses.field(default_factory=list)
    max_error: Dict[str, float] = dataclasses.field(default_factory=dict)  # variant -> vs eager
    mismatches: List[str] = dataclasses.field(default_factory=list)  # assert_close failures
    rounds: int = 0
    notes: List[str] = dataclasses.field(default_factory=list)
    breakdown: str = ""  # --breakdown's markdown
    groups: List = dataclasses.field(default_factory=list)  # the Inductor frontend's fusion groups

    def ratio(self, over: str, of: str = "autofuse") -> float:
        """`of`'s speed-up over `over` (>1: `of` is faster): the median of the per-round ratios
        (common.paired_ratio)."""
        return self.speedups[of][over]


def compare(case: Case, variant: str, what: str, got: torch.Tensor, expected: torch.Tensor,
            fp64: Optional[torch.Tensor] = None, tol: float = 1e-2) -> None:
    """Records the max error against eager and whether the result is accepted: by assert_close
    at its default tolerance, or else, given `fp64` (the model run in float64), by PyTorch's own
    accuracy check for compiled models (torch._dynamo.utils.same, as its benchmark suites use
    it: the RMSE against the fp64 result at most a small multiple of eager's, within `tol`).
    bf16: eager rounds every op's result to bf16 where a fused kernel keeps fp32 between ops, so
    eager is no closer to the true value than a compiled model; assert_close fails on every
    bf16 model for Inductor as for us. fp32 convolutional networks: a convolution run
    channels-last (Inductor's layout, and ours where it is faster) sums in another order than
    NCHW; over 50 layers that differs from eager beyond assert_close's 1e-5 (eager itself run
    channels-last does too), so eager is no closer to the true value either."""
    err = (got.double() - expected.double()).abs().max().item() if got.numel() else 0.0
    case.max_error[variant] = max(case.max_error.get(variant, 0.0), err)
    try:
        torch.testing.assert_close(got, expected)
        return
    except AssertionError as e:
        why = f"{str(e).splitlines()[0]} (max abs {err:.3g})"
    if fp64 is not None:
        if torch._dynamo.utils.same(expected, got, fp64_ref=fp64, tol=tol, log_error=lambda *a: None):
            return
        why = f"RMSE vs fp64 beyond eager's (max abs vs eager {err:.3g})"
    case.mismatches.append(f"{variant} {what}: {why}")


def float64_reference(model: torch.nn.Module, kw: Dict[str, torch.Tensor],
                      train: bool) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
    """The output of `model` run in float64 on `kw` (after one training step when `train`) and
    its parameters' gradients by name (train)."""
    ref = copy.deepcopy(model).double()
    kw64 = {k: (t.double() if t.is_floating_point() else t) for k, t in kw.items()}
    with torch.enable_grad() if train else torch.no_grad():
        out = train_step(forward, ref, kw64) if train else forward(ref, kw64)
    grads = {n: p.grad for n, p in ref.named_parameters() if p.grad is not None}
    return out.detach(), grads


def compiled_fn(variant: str, dynamic: bool, options: Optional[dict] = None) -> Callable:
    """forward compiled for `variant` (own code object: own Dynamo cache)."""
    if variant == "eager":
        return forward
    backend = "inductor" if variant == "inductor" else "autofuse"
    if variant == "af-inductor":
        options = {"frontend": "inductor"}
    return torch.compile(own_copy(forward), backend=backend, dynamic=dynamic, options=options)


def setup(name: str, config: str) -> Tuple[Dict[str, torch.nn.Module], Dict[str, torch.Tensor], torch.dtype]:
    """Per variant a model (same weights), the inputs, the dtype."""
    base, kw, dtype = setup_one(name, config)
    return {v: copy.deepcopy(base) for v in VARIANTS}, kw, dtype


def setup_one(name: str, config: str) -> Tuple[torch.nn.Module, Dict[str, torch.Tensor], torch.dtype]:
    """The model (seeded weights), the inputs, the dtype of one (model, config), not `dynamic`."""
    dtype = torch.bfloat16 if config == "bf16" else torch.float32
    base = models.build(name, dtype, train=config == "train")
    if config == "train":
        for p in base.parameters():
            p.requires_grad_(True)
    batch, seq = models.default_shape(name)
    if config in ("small", "frozen"):
        batch, seq = 1, 32
    kw = models.example_inputs(name, batch, seq)
    kw = {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in kw.items()}
    return base, kw, dtype


def run_case(name: str, config: str, with_breakdown: bool) -> Case:
    """Compiles, checks and times one (model, config) (not `dynamic`)."""
    case = Case(name, config)
    torch._dynamo.reset()
    mods, kw, _ = setup(name, config)
    train = config == "train"
    options = {"freezing": True} if config == "frozen" else None  # Inductor's
    fns = {v: compiled_fn(v, dynamic=False, options=options if v == "inductor" else None) for v in VARIANTS}
    ctx = torch.enable_grad if train else torch.no_grad

    def call(v: str) -> torch.Tensor:
        with ctx():
            return train_step(fns[v], mods[v], kw) if train else fns[v](mods[v], kw)

    expected = call("eager")
    # The float64 oracle: for bf16, and for the convolutional networks (their convolutions'
    # layouts change fp32 summation orders; compare()).
    fp64, fp64_grads, tol = None, {}, 1e-2 if config == "bf16" else 1e-4
    if config == "bf16" or models.family(name) == "vision":
        fp64, fp64_grads = float64_reference(mods["eager"], kw, train)
    for v in VARIANTS[1:]:
        progress(f"{name} {config}: compiling {v}")
        before = autofuse.stats()["cxx_compiles"]
        with autofuse.collect_records() as recs, autofuse.inductor.collect_records() as irecs:
            t0 = time.perf_counter()
            got = call(v)
            case.compile_s[v] = time.perf_counter() - t0
        if v == "autofuse":
            case.cxx_compiles = autofuse.stats()["cxx_compiles"] - before
            case.fallbacks = [f"{r.name}: {r.fallback}" for r in recs if r.fallback]
        if v == "af-inductor":
            case.groups = [g for r in irecs for g in r.groups]
            case.fallbacks += [f"{r.name} (af-inductor): {r.fallback}" for r in irecs if r.fallback]
        compare(case, v, "output", got, expected, fp64, tol)
        if train:
            for (pn, pe), pg in zip(mods["eager"].named_parameters(), mods[v].parameters()):
                if pe.grad is not None or pg.grad is not None:
                    if pe.grad is None or pg.grad is None:
                        case.mismatches.append(f"{v} grad {pn}: missing")
                    else:
                        compare(case, v, f"grad {pn}", pg.grad, pe.grad, fp64_grads.get(pn), tol)
    progress(f"{name} {config}: timing")
    timed = {v: (lambda v=v: call(v)) for v in VARIANTS}
    case.rounds = rounds_for(timed, BUDGET_S, 5, 400)
    samples = interleaved_samples(timed, case.rounds, warmup=2)
    case.medians = {v: statistics.median(ts) for v, ts in samples.items()}
    case.speedups = {of: {v: paired_ratio(samples, v, of) for v in VARIANTS} for of in ("autofuse", "af-inductor")}
    if with_breakdown:
        progress(f"{name} {config}: profiling")
        prof_fns = dict(timed, inductor=breakdown.profiled_inductor(forward, mods["inductor"], kw, train, ctx, options))
        case.breakdown = breakdown.report(f"{name} {config}", prof_fns)
    return case


def run_dynamic(name: str) -> Case:
    """dynamic=True over DYNAMIC_SEQS (an image model: DYNAMIC_BATCHES): compiles counted per
    length; each length timed against autofuse's static compile, Inductor dynamic and eager."""
    case = Case(name, "dynamic")
    torch._dynamo.reset()
    torch._dynamo.config.recompile_limit = 4 * len(DYNAMIC_SEQS)
    base = models.build(name, torch.float32, train=False)
    mods = {v: copy.deepcopy(base) for v in VARIANTS + ("autofuse static",)}
    fns = {v: compiled_fn(v, dynamic=True) for v in VARIANTS}
    fns["autofuse static"] = compiled_fn("autofuse", dynamic=False)
    image = not models.ALL_MODELS[name].vocab
    shapes = dynamic_shapes(name)
    per_len = []
    for i, (batch, seq) in enumerate(shapes):
        kw = models.example_inputs(name, batch, seq, seed=i + 1)
        label = f"batch {batch}" if image else f"seq {seq}"
        with torch.no_grad():
            expected = forward(mods["eager"], kw)
            before = autofuse.stats()["cxx_compiles"]
            with autofuse.collect_records() as recs:
                t0 = time.perf_counter()
                got = fns["autofuse"](mods["autofuse"], kw)
                secs = time.perf_counter() - t0
            cxx = autofuse.stats()["cxx_compiles"] - before
            case.fallbacks += [f"{label} {r.name}: {r.fallback}" for r in recs if r.fallback]
            compare(case, "autofuse", f"output {label}", got, expected)
            for v in ("inductor", "autofuse static", "af-inductor"):
                t0 = time.perf_counter()
                compare(case, v, f"output {label}", fns[v](mods[v], kw), expected)
                if i == 0:
                    case.compile_s[v] = time.perf_counter() - t0
        if i == 0:
            case.compile_s["autofuse"] = secs
        case.cxx_compiles += cxx
        progress(f"{name} dynamic {label}: {len(recs)} graph(s) compiled, {cxx} C++ compile(s)")
        if i >= 2 and (recs or cxx):
            case.mismatches.append(f"{label}: {len(recs)} graph(s) recompiled, {cxx} C++ compile(s)")
        timed = {v: (lambda v=v, kw=kw: no_grad(fns[v], mods[v], kw)) for v in fns}
        samples = interleaved_samples(timed, rounds_for(timed, BUDGET_S / len(shapes), 5, 200), warmup=1)
        med = {v: statistics.median(ts) for v, ts in samples.items()}
        per_len.append((med, {of: {v: paired_ratio(samples, v, of) for v in fns} for of in ("autofuse", "af-inductor")}))
        case.notes.append(f"{label}: " + ", ".join(f"{v} {fmt(t)}" for v, t in med.items())
                          + f"; dynamic time / static time {1 / per_len[-1][1]['autofuse']['autofuse static']:.3f}")
    case.medians = {v: geomean([m[v] for m, _ in per_len]) for v in fns}
    case.speedups = {of: {v: geomean([r[of][v] for _, r in per_len]) for v in fns} for of in ("autofuse", "af-inductor")}
    case.notes.append(f"geomean dynamic time / static time {1 / case.speedups['autofuse']['autofuse static']:.3f}"
                      " (target <= 1.10)")
    return case


def dynamic_shapes(name: str) -> List[Tuple[int, int]]:
    """The (batch, seq) the dynamic config runs in turn: DYNAMIC_SEQS at the default batch, or
    for an image model (its sequence is fixed by the image size) DYNAMIC_BATCHES."""
    batch, _ = models.default_shape(name)
    if not models.ALL_MODELS[name].vocab:
        return [(b, 0) for b in DYNAMIC_BATCHES]
    return [(batch, s) for s in DYNAMIC_SEQS]


def peak_rss_child(name: str, config: str, variant: str) -> None:
    """(child process) Builds `name` as `config` does, compiles it for `variant` as run_case
    (dynamic: run_dynamic) does, runs the config's call three times (dynamic: once per length)
    and prints its peak RSS in MiB."""
    if config == "dynamic":
        torch._dynamo.config.recompile_limit = 4 * len(DYNAMIC_SEQS)
        model = models.build(name, torch.float32, train=False)
        fn = compiled_fn(variant, dynamic=True)
        for i, (batch, seq) in enumerate(dynamic_shapes(name)):
            no_grad(fn, model, models.example_inputs(name, batch, seq, seed=i + 1))
    else:
        model, kw, _ = setup_one(name, config)
        frozen = variant == "inductor-frozen" or (variant == "inductor" and config == "frozen")
        fn = compiled_fn("inductor" if variant == "inductor-frozen" else variant, dynamic=False,
                         options={"freezing": True} if frozen else None)
        train = config == "train"
        for _ in range(3):
            with torch.enable_grad() if train else torch.no_grad():
                train_step(fn, model, kw) if train else fn(model, kw)
    report_peak_rss()


def peak_rss_variants(name: str, config: str) -> Dict[str, float]:
    """Per variant (MEMORY_VARIANTS; Inductor-frozen only in the frozen config) the peak RSS
    (MiB) of a child process running (name, config) (peak_rss_child)."""
    variants = [v for v in MEMORY_VARIANTS if v != "inductor-frozen" or config == "frozen"]
    return peak_rss(__file__, {v: f"{name},{config},{v}" for v in variants}, progress)


def warm_up() -> None:
    """Compiles a small module with Inductor and autofuse, static and dynamic (two shapes), with
    and without autograd, so that what the first compile of a process pays once (imports,
    Dynamo's and sympy's caches, Inductor's C++ toolchain probe, autofuse's precompiled header)
    is not charged to whichever variant of the first case compiles first."""
    lin = torch.nn.Linear(16, 16)
    for backend, options in (("inductor", None), ("autofuse", None), ("autofuse", {"frontend": "inductor"})):
        for dynamic in (False, True):
            fn = torch.compile(own_copy(lambda m, x: torch.nn.functional.gelu(m(x)).softmax(-1) * x),
                               backend=backend, dynamic=dynamic, options=options)
            for rows in (8, 12):
                fn(lin, torch.randn(rows, 16)).sum().backward()
                with torch.no_grad():
                    fn(lin, torch.randn(rows, 16))
    torch._dynamo.reset()


def no_grad(fn: Callable, m: torch.nn.Module, kw: Dict[str, torch.Tensor]) -> torch.Tensor:
    """fn(m, kw) without autograd."""
    with torch.no_grad():
        return fn(m, kw)


def fmt(t: float) -> str:
    """Seconds as ms."""
    return f"{t * 1e3:.2f} ms"


def geomean(xs: List[float]) -> float:
    """Geometric mean (nan for none)."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def group_share(groups: List) -> str:
    """'52/60 nodes (87%)': Inductor's pointwise/reduction scheduler nodes (in its fusion
    groups) that became AscIR kernels; '-' when there are none."""
    if not groups:
        return "-"
    k, n = sum(len(g.nodes) for g in groups if g.kernel), sum(len(g.nodes) for g in groups)
    return f"{k}/{n} nodes ({100.0 * k / max(n, 1):.0f}%)"


def table(cases: List[Case], memory: Optional[Dict[Tuple[str, str], Dict[str, float]]] = None) -> str:
    """The results as markdown: one row per case, the geomeans per config, the peak memory per
    (model, config)."""
    lines = ["| model | config | eager | Inductor | autofuse | vs eager | vs Inductor | af-inductor | vs eager | "
             "vs Inductor | AscIR groups | max err (af / af-ind) | compile s (ind / af / af-ind) | C++ | fallbacks | checks |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cases:
        checks = "ok" if not c.mismatches else f"{len(c.mismatches)} FAIL"
        lines.append(
            f"| {c.model} | {c.config} | {fmt(c.medians['eager'])} | {fmt(c.medians['inductor'])} | "
            f"{fmt(c.medians['autofuse'])} | {c.ratio('eager'):.3f}x | {c.ratio('inductor'):.3f}x | "
            f"{fmt(c.medians['af-inductor'])} | {c.ratio('eager', 'af-inductor'):.3f}x | "
            f"{c.ratio('inductor', 'af-inductor'):.3f}x | {group_share(c.groups)} | "
            f"{c.max_error.get('autofuse', 0):.2g} / {c.max_error.get('af-inductor', 0):.2g} | "
            f"{c.compile_s.get('inductor', 0):.1f} / {c.compile_s.get('autofuse', 0):.1f} / "
            f"{c.compile_s.get('af-inductor', 0):.1f} | {c.cxx_compiles} | {len(c.fallbacks)} | {checks} |")
    lines += ["", "| config | models | cases | autofuse / eager | autofuse / Inductor | worst vs Inductor | "
              "af-inductor / eager | af-inductor / Inductor | AscIR groups |",
              "|---|---|---|---|---|---|---|---|---|"]
    for config, fam in itertools.product(CONFIGS, ("language", "vision")):
        cs = [c for c in cases if c.config == config and models.family(c.model) == fam]
        if cs:
            worst = min(cs, key=lambda c: c.ratio("inductor"))
            lines.append(f"| {config} | {fam} | {len(cs)} | {geomean([c.ratio('eager') for c in cs]):.3f}x | "
                         f"{geomean([c.ratio('inductor') for c in cs]):.3f}x | "
                         f"{worst.model} {worst.ratio('inductor'):.3f}x | "
                         f"{geomean([c.ratio('eager', 'af-inductor') for c in cs]):.3f}x | "
                         f"{geomean([c.ratio('inductor', 'af-inductor') for c in cs]):.3f}x | "
                         f"{group_share([g for c in cs for g in c.groups])} |")
    if memory:
        lines += [""] + memory_table(memory, ("model", "config"), MEMORY_VARIANTS)
    groups = [g for c in cases for g in c.groups]
    reasons = collections.Counter(g.reason for g in groups if not g.kernel)
    lines += ["", f"Inductor frontend: {group_share(groups)} of Inductor's pointwise/reduction nodes became "
              f"AscIR kernels (in {sum(g.kernel for g in groups)} of {len(groups)} fusion groups); the groups "
              f"left to Inductor's C++, by reason:"]
    lines += [f"- {k} x {why}" for why, k in reasons.most_common()]
    details = [f"- {c.model} {c.config}: {m}" for c in cases for m in c.fallbacks + c.mismatches + c.notes]
    text = "\n".join(lines + ([""] + details if details else [])) + "\n"
    return text + "".join("\n" + c.breakdown for c in cases if c.breakdown)


def chart(cases: List[Case], path: str) -> None:
    """Speed-up over eager of Inductor and autofuse, one panel per config."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = [c for c in CONFIGS if any(x.config == c for x in cases)]
    fig, axes = plt.subplots(1, len(configs), figsize=(4 * len(configs), 3.6), squeeze=False)
    for ax, config in zip(axes[0], configs):
        cs = [c for c in cases if c.config == config]
        xs = range(len(cs))
        ax.bar([x - 0.27 for x in xs], [c.ratio("eager") / c.ratio("inductor") for c in cs], 0.27, label="Inductor")
        ax.bar(list(xs), [c.ratio("eager") for c in cs], 0.27, label="autofuse")
        ax.bar([x + 0.27 for x in xs], [c.ratio("eager", "af-inductor") for c in cs], 0.27, label="af-inductor")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(list(xs), [c.model for c in cs], rotation=30)
        ax.set_title(config)
        ax.set_ylabel("speed-up over eager")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join([*models.MODELS, *models.VISION_MODELS]),
                    help=f"any of {','.join(models.ALL_MODELS)}")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"any of {','.join(CONFIGS)}")
    ap.add_argument("--breakdown", action="store_true", help="profile where each case's time goes")
    ap.add_argument("--no-memory", action="store_true", help="skip the per-variant peak RSS processes")
    ap.add_argument("--out", default=OUT_DIR, help="directory for models.md and models.png")
    ap.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if os.environ.get("BENCH_THREADS"):
        torch.set_num_threads(int(os.environ["BENCH_THREADS"]))
    if args.memory_child:
        name, config, variant = args.memory_child.split(",")
        peak_rss_child(name, config, variant)
        return
    names = [n for n in args.models.split(",") if n]
    configs = [c for c in args.configs.split(",") if c]
    unknown = [n for n in names if n not in models.ALL_MODELS] + [c for c in configs if c not in CONFIGS]
    if unknown:
        sys.exit(f"unknown model(s)/config(s): {unknown}")
    progress(f"{len(names)} model(s) x {len(configs)} config(s), torch threads {torch.get_num_threads()}, "
             f"caches under {_CACHE}")
    progress("warming up both compilers (not timed)")
    warm_up()
    cases = []
    memory: Dict[Tuple[str, str], Dict[str, float]] = {}
    for config in configs:
        for name in names:
            if not args.no_memory:
                progress(f"{name} {config}: peak memory, one process per variant")
                memory[(name, config)] = peak_rss_variants(name, config)
                progress(f"{name} {config}: peak MiB "
                         + ", ".join(f"{v} {m:.0f}" for v, m in memory[(name, config)].items()))
            case = run_dynamic(name) if config == "dynamic" else run_case(name, config, args.breakdown)
            cases.append(case)
            progress(f"{name} {config}: autofuse {case.ratio('eager'):.3f}x eager, "
                     f"{case.ratio('inductor'):.3f}x Inductor; af-inductor {case.ratio('eager', 'af-inductor'):.3f}x "
                     f"eager, {case.ratio('inductor', 'af-inductor'):.3f}x Inductor, {group_share(case.groups)} AscIR")
    text = table(cases, memory)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "models.md"), "w") as f:
        f.write(f"torch {torch.__version__}, {torch.get_num_threads()} threads, load {os.getloadavg()[0]:.1f}\n\n")
        f.write(text)
    chart(cases, os.path.join(args.out, "models.png"))
    progress(f"wrote {os.path.join(args.out, 'models.md')} and models.png")


if __name__ == "__main__":
    main()
