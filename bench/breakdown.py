"""Where a model's time goes under eager, Inductor and autofuse (bench_models.py --breakdown).

Each variant runs CALLS calls under torch.profiler (shapes recorded), in ROUNDS rounds with the
variants in a fresh random order each round; the class split shows each variant's round of median
wall time (one profiled round on a shared machine is off by 10-20%). Every event on the calling thread is put in one class:
  matmul    matmul-class ATen ops (MATMUL_OPS) with everything they call (an addmm's bias copy)
  aten      other ATen ops (self time), listed by op
  kernels   fused kernels: ours (`autofuse::g0.k3 <ATen ops inside>`, executor.py labels them
            while a profiler records) and Inductor's (`cpp_fused_*`, with its kernel profiling on)
  executor  autofuse's run functions' own time (`autofuse::g0` less its children)
  wrapper   the rest of the wall time: Dynamo's guards, AOTAutograd's wrappers, the autograd
            engine, Python glue
Then the top kernels of autofuse next to the Inductor kernel over the most of the same ATen ops,
and each matmul-class call (by what it computes) under autofuse against eager's identical call,
measured in one profile that alternates autofuse and eager calls (matmul_pairs): the median over
neighbouring pairs of the ratio, because rounds of separate profiles minutes apart disagree by
10-40% on a shared 2-core machine where neighbouring calls see the same machine.
"""
from __future__ import annotations

import collections
import random
import re
import statistics
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch

# ATen ops whose time is matmul work (and their CPU flash attention).
MATMUL_OPS = {
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
    "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::scaled_dot_product_attention",
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward", "aten::_addmm_activation",
    "mkldnn::_linear_pointwise", "mkl::_mkl_linear",
}
CALLS = 5  # profiled calls per variant and round
ROUNDS = 5
PAIRS_BUDGET_S = 15.0  # seconds of neighbouring autofuse/eager pairs for the matmul comparison
MIN_PAIRS, MAX_PAIRS = 15, 60
_INDUCTOR_KERNEL = re.compile(r"cpp_fused_(.*?)(_\d+)?$")


def profiled_inductor(forward: Callable, module: torch.nn.Module, kw: dict, train: bool, ctx: Callable,
                      options: Optional[dict] = None) -> Callable:
    """An Inductor compile of forward with kernel profiling on (its kernels become profiler
    events) and `options`; compiled here, on a call that is not timed."""
    fn = torch.compile(forward, options={"cpp.enable_kernel_profile": True, **(options or {})})

    def call() -> torch.Tensor:
        with ctx():
            if train:
                for p in module.parameters():
                    p.grad = None
                out = fn(module, kw)
                out.float().square().mean().backward()
                return out
            return fn(module, kw)

    call()
    return call


def _classify(events: List) -> Tuple[Dict[str, float], Dict[str, float], Dict[str, float]]:
    """(class -> self µs summed, ATen op -> self µs of class aten, kernel -> self µs)."""
    classes: Dict[str, float] = collections.defaultdict(float)
    aten: Dict[str, float] = collections.defaultdict(float)
    kernels: Dict[str, float] = collections.defaultdict(float)
    for e in events:
        name, us = e.name, e.self_cpu_time_total
        parent, under_matmul = e.cpu_parent, False
        while parent is not None and not under_matmul:
            under_matmul = parent.name in MATMUL_OPS
            parent = parent.cpu_parent
        if name in MATMUL_OPS or under_matmul:
            classes["matmul"] += us
        elif name.startswith("autofuse::") and ".k" in name or _INDUCTOR_KERNEL.search(name):
            classes["kernels"] += us
            kernels[name] += us
        elif name.startswith("autofuse::"):
            classes["executor"] += us
        elif name.startswith("aten::"):
            classes["aten"] += us
            aten[name] += us
    return classes, aten, kernels


def _profile(fn: Callable[[], object]) -> Tuple[float, "torch.profiler.profile"]:
    """(wall µs per call, the profile) of CALLS calls of fn after two warm-up calls."""
    fn()
    fn()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        wall = (time.perf_counter() - t0) * 1e6 / CALLS
    return wall, prof


def _call_key(name: str, shapes: List[List[int]]) -> Optional[str]:
    """A matmul-class call named by what it computes, so the same product matches across ATen
    ops: `linear 512x768->3072` for addmm/mm (mat2 [K, N]) and oneDNN's linear (weight [N, K]),
    `bmm ...` and attention by their input shapes; None for wrappers (linear, matmul)."""
    if name in ("aten::addmm", "aten::mm") and len(shapes) >= 2:
        a, b = shapes[0:2] if name == "aten::mm" else shapes[1:3]  # mm.out: [a, b, out]
        return f"linear {a[0]}x{a[1]}->{b[1]}" if len(a) == 2 and len(b) == 2 else None
    if name in ("mkldnn::_linear_pointwise", "mkl::_mkl_linear") and len(shapes) >= 3 and shapes[0]:
        # oneDNN's packed weight keeps its [N, K] shape; MKL's pack is a blob, its third
        # argument the plain [N, K] weight.
        x, w = shapes[0], shapes[2] if name == "mkl::_mkl_linear" else shapes[1]
        rows = 1
        for d in x[:-1]:
            rows *= d
        n = w[0] if w else "?"
        return f"linear {rows}x{x[-1]}->{n}"
    if name in ("aten::bmm", "aten::baddbmm"):
        return f"{name[6:]} {shapes[0:2] if name == 'aten::bmm' else shapes[1:3]}"  # .out: + out
    if "scaled_dot_product" in name and "flash" in name:
        return f"{name[6:]} {shapes[:3]}"
    return None


def _outermost_matmuls(events: List) -> List:
    """The matmul-class events with a call key that no keyed matmul-class event encloses (eager's
    mm under linear -> matmul; autofuse's mm.out called by the executor)."""
    def keyed(e) -> bool:
        return e.name in MATMUL_OPS and _call_key(e.name, e.input_shapes) is not None

    out = []
    for e in events:
        if keyed(e):
            parent = e.cpu_parent
            while parent is not None and not keyed(parent):
                parent = parent.cpu_parent
            if parent is None:
                out.append(e)
    return out


def _label_of(e) -> Optional[str]:
    """The `bench::` record_function label enclosing e (None outside one)."""
    parent = e.cpu_parent
    while parent is not None and not parent.name.startswith("bench::"):
        parent = parent.cpu_parent
    return parent.name if parent is not None else None


def matmul_pairs(mine: Callable[[], object], eager: Callable[[], object], pairs: int) -> Dict[str, List[Tuple[int, float, float]]]:
    """Each matmul-class call of autofuse's `mine` against eager's identical call, in one profile
    that alternates the two (eager, autofuse, autofuse, eager, ...): per call key (_call_key),
    for each pair (calls per model call, autofuse µs, eager µs) summed over the pair's calls.
    Rounds of separate profiles minutes apart disagree by 10-40% on a shared 2-core machine;
    neighbouring calls see the same machine."""
    for fn in (mine, eager, mine, eager):
        fn()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        for i in range(pairs):
            for v in (("eager", "autofuse") if i % 2 else ("autofuse", "eager")):
                with torch.profiler.record_function(f"bench::{v}#{i}"):
                    (mine if v == "autofuse" else eager)()
    acc: Dict[str, Dict[int, Dict[str, List[float]]]] = collections.defaultdict(dict)
    for e in _outermost_matmuls(prof.events()):
        label = _label_of(e)
        if label is None:
            continue
        v, i = label[len("bench::"):].split("#")
        n_us = acc[_call_key(e.name, e.input_shapes)].setdefault(int(i), {}).setdefault(v, [0, 0.0])
        n_us[0] += 1
        n_us[1] += e.cpu_time_total
    return {k: [(d["autofuse"][0], d["autofuse"][1], d["eager"][1]) for d in per.values()
                if "autofuse" in d and "eager" in d and d["autofuse"][0] == d["eager"][0]]
            for k, per in acc.items()}


def matmul_table(by_key: Dict[str, List[Tuple[int, float, float]]], pairs: int) -> Tuple[List[str], float]:
    """The per-call comparison as markdown rows and the ratio of all matched calls: per key the
    median over pairs of autofuse µs / eager µs; overall the median over pairs of the summed
    times (a pair where a key is missing on one side does not count)."""
    both = {k: v for k, v in by_key.items() if len(v) == pairs}
    lines = [f"| matmul-class call | calls | autofuse ms | eager ms | autofuse / eager (median of {pairs} neighbouring pairs) |",
             "|---|---|---|---|---|"]
    for k, ps in sorted(both.items(), key=lambda kv: -statistics.median(p[2] for p in kv[1])):
        a, e = statistics.median(p[1] for p in ps), statistics.median(p[2] for p in ps)
        lines.append(f"| {k} | {ps[0][0]} | {a / 1e3:.2f} | {e / 1e3:.2f} | {statistics.median(p[1] / p[2] for p in ps):.3f} |")
    overall = float("nan")
    if both:
        totals = [(sum(both[k][i][1] for k in both), sum(both[k][i][2] for k in both)) for i in range(pairs)]
        overall = statistics.median(a / e for a, e in totals)
        lines.append(f"| all matched matmul calls | | {statistics.median(a for a, _ in totals) / 1e3:.2f} | "
                     f"{statistics.median(e for _, e in totals) / 1e3:.2f} | {overall:.3f} |")
    unmatched = sorted(k for k in by_key if k not in both)
    if unmatched:
        lines += ["", "matmul calls without an identical call on the other side in every pair: " + "; ".join(unmatched)]
    return lines, overall


def _ops_of(kernel: str) -> List[str]:
    """The ATen op names a kernel label carries (`autofuse::g0.k3 add+gelu` -> [add, gelu])."""
    return [o for o in kernel.split(" ", 1)[-1].split("+") if o not in ("clone", "view", "_to_copy")]


def report(title: str, fns: Dict[str, Callable[[], object]]) -> str:
    """The breakdown of one case as markdown text (fns: variant -> one call)."""
    rounds: Dict[str, list] = {v: [] for v in fns}
    for _ in range(ROUNDS):
        order = list(fns)
        random.shuffle(order)
        for v in order:
            wall, prof = _profile(fns[v])
            rounds[v].append((wall, _classify(prof.events())))
    per, split = {}, {}
    for v in fns:
        wall, cls = sorted(rounds[v], key=lambda r: r[0])[len(rounds[v]) // 2]
        per[v], split[v] = (wall, None), cls
    ms = lambda us: f"{us / 1e3 / CALLS:.2f}"  # noqa: E731 (µs over CALLS calls -> ms per call)
    lines = [f"### {title}: where the time goes (ms per call; {CALLS} profiled calls, median of {ROUNDS} rounds)", "",
             "| class | " + " | ".join(per) + " |", "|---|" + "---|" * len(per)]
    for cls in ("matmul", "aten", "kernels", "executor"):
        lines.append(f"| {cls} | " + " | ".join(ms(split[v][0].get(cls, 0.0)) for v in per) + " |")
    wrapper = {v: per[v][0] * CALLS - sum(split[v][0].values()) for v in per}
    lines.append("| wrapper | " + " | ".join(ms(wrapper[v]) for v in per) + " |")
    lines.append("| wall | " + " | ".join(f"{per[v][0] / 1e3:.2f}" for v in per) + " |")

    aten = split["autofuse"][1]
    top = sorted(aten.items(), key=lambda kv: -kv[1])[:8]
    lines += ["", "other ATen ops under autofuse: " + ", ".join(f"{k[6:]} {ms(us)}" for k, us in top)]
    ours = sorted(split["autofuse"][2].items(), key=lambda kv: -kv[1])[:10]
    theirs = split.get("inductor", ({}, {}, {}))[2]
    lines += ["", "| autofuse kernel | ms | Inductor kernel over the same ops | ms |", "|---|---|---|---|"]
    for k, us in ours:
        ops = _ops_of(k)
        best = max(theirs.items(), key=lambda kv: (sum(o in kv[0] for o in ops), kv[1]), default=None)
        if best is not None and sum(o in best[0] for o in ops) == 0:
            best = None
        match = f"{best[0]} | {ms(best[1])}" if best else "- | -"
        lines.append(f"| {k} | {ms(us)} | {match} |")

    t0 = time.perf_counter()
    fns["autofuse"]()
    fns["eager"]()
    pairs = max(MIN_PAIRS, min(MAX_PAIRS, int(PAIRS_BUDGET_S / (time.perf_counter() - t0))))
    rows, _ = matmul_table(matmul_pairs(fns["autofuse"], fns["eager"], pairs), pairs)
    lines += [""] + rows
    return "\n".join(lines) + "\n"
